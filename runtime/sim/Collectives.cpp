//===- Collectives.cpp - Collective instructions: host call and ring cost --===//
//
// See Collectives.h. The host call resolves the instruction's HBM patterns
// (contiguous runs, checked by the verifier) to pointers; the cost is the
// textbook ring algorithm (Thakur, Rabenseifner and Gropp, "Optimization
// of Collective Communication Operations in MPICH", IJHPCA 2005) with the
// link constants of MachineModel.
//
//===----------------------------------------------------------------------===//

#include "sim/Collectives.h"

#include "sim/Exec.h"

#include <algorithm>

namespace trnc {

CollectiveHook::~CollectiveHook() = default;

namespace sim {

using namespace isa;

double collectiveHopNs(const MachineModel &m, uint8_t flags) {
  if (flags & kFlagSpanCluster)
    return m.efaHopNs;
  if (flags & kFlagSpanInstance)
    return m.neuronLinkHopNs;
  return m.dmaFixedNs;
}

double collectiveBytesPerNs(const MachineModel &m, uint8_t flags) {
  double gbps = (flags & kFlagSpanCluster)    ? m.efaChipGBps()
                : (flags & kFlagSpanInstance) ? m.neuronLinkRingGBps()
                                              : m.dmaEngines * m.dmaEngineGBps;
  return gbps; // GB/s == bytes/ns
}

double collectiveNs(const MachineModel &m, const Instruction &inst) {
  double n = std::max(1, inst.partitionCoef);
  uint64_t bytes = std::max(inst.dst.numElements(), inst.src0.numElements()) *
                   dtypeBytes(inst.dst.dtype);
  double hop = collectiveHopNs(m, inst.flags);
  double bw = collectiveBytesPerNs(m, inst.flags);
  if (n <= 1) // a group of one: a local copy from src0 to dst
    return m.dmaFixedNs + double(bytes) / (m.dmaEngines * m.dmaEngineGBps);
  double step = hop + double(bytes) / n / bw;
  switch (CollectiveKind(inst.op0)) {
  case CollectiveKind::AllReduce:
    return 2 * (n - 1) * step;
  case CollectiveKind::AllGather:
  case CollectiveKind::ReduceScatter:
  case CollectiveKind::AllToAll:
    return (n - 1) * step;
  case CollectiveKind::Broadcast:
    return (n - 1) * hop + double(bytes) / bw;
  }
  return 0;
}

CollectiveCall describeCollective(const sim::ExecContext &ctx,
                                  const isa::Instruction &inst) {
  CollectiveCall call;
  call.id = uint32_t(inst.freeCoef);
  call.kind = CollectiveKind(inst.op0);
  call.reduce = ReduceOp(inst.op1);
  call.groupSize = uint32_t(inst.partitionCoef);
  call.dtype = inst.dst.dtype;
  unsigned eb = isa::dtypeBytes(inst.dst.dtype);
  call.input = ctx.regions[inst.src0.region] + inst.src0.offset;
  call.inputBytes = inst.src0.numElements() * eb;
  call.output = ctx.regions[inst.dst.region] + inst.dst.offset;
  call.outputBytes = inst.dst.numElements() * eb;
  return call;
}

} // namespace sim
} // namespace trnc
