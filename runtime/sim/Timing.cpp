//===- Timing.cpp - Start-up latency, warm-up throttle, DMA queues ---------===//
//
// See Timing.h. Times are doubles in ns from the start of the run; cycle
// counts are converted at the executing engine's clock.
//
//===----------------------------------------------------------------------===//

#include "sim/Timing.h"

#include "sim/Collectives.h"
#include "sim/CostModel.h"

#include <algorithm>
#include <cmath>

namespace trnc::sim {

using namespace isa;

double matmulPeakFlopsPerSecond(const MachineModel &model, DType dtype) {
  auto operand = [&](uint32_t freeSize) {
    AccessPattern ap;
    ap.mem = MemKind::SBUF;
    ap.dtype = dtype;
    ap.partitionCount = uint16_t(model.matmulMaxK);
    ap.numDims = 1;
    ap.count[0] = freeSize;
    ap.stride[0] = 1;
    return ap;
  };
  Instruction full;
  full.opcode = Opcode::Matmul;
  full.engine = Engine::Tensor;
  full.src0 = operand(model.matmulMaxM);
  full.src1 = operand(model.matmulMaxN);
  double cycles = double(matmulCycles(model, full));
  return cycles > 0 ? matmulFlops(full) / cycles * model.tensorClockGHz * 1e9 : 0;
}

bool countsInMfu(const Instruction &inst) {
  // A transpose (a matmul against the identity) is layout, not model math:
  // its FLOPs count in HFU only.
  return inst.opcode == Opcode::Matmul && !(inst.flags & kFlagTranspose);
}

std::vector<std::pair<double, double>>
mergeIntervals(std::vector<std::pair<double, double>> v) {
  std::sort(v.begin(), v.end());
  std::vector<std::pair<double, double>> out;
  for (auto [s, e] : v) {
    if (e <= s)
      continue;
    if (!out.empty() && s <= out.back().second)
      out.back().second = std::max(out.back().second, e);
    else
      out.push_back({s, e});
  }
  return out;
}

double unionLength(const std::vector<std::pair<double, double>> &merged) {
  double n = 0;
  for (auto [s, e] : merged)
    n += e - s;
  return n;
}

double overlapLength(const std::vector<std::pair<double, double>> &a,
                     const std::vector<std::pair<double, double>> &b) {
  double n = 0;
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    double lo = std::max(a[i].first, b[j].first);
    double hi = std::min(a[i].second, b[j].second);
    if (hi > lo)
      n += hi - lo;
    (a[i].second < b[j].second ? i : j)++;
  }
  return n;
}

TimingModel::TimingModel(const MachineModel &model, bool recordTrace,
                         Profile *profile, bool trackOverlap, unsigned lnc)
    : model(model), recordTrace(recordTrace), trackOverlap(trackOverlap),
      profile(profile),
      // Each physical core has its own DMA engines; HBM traffic of the
      // logical core shares its cores' HBM shares (MachineModel).
      dmaQueues(model.dmaFixedNs, model.dmaCoreBytesPerSecond() * 1e-9,
                std::min(lnc * model.dmaCoreBytesPerSecond(),
                         model.hbmLogicalCoreBytesPerSecond(lnc)) *
                    1e-9,
                lnc),
      tensor(lnc), dmaIntervalsByCore(lnc) {
  for (unsigned d = 0; d < kNumDTypes; ++d)
    peakByDType[d] = matmulPeakFlopsPerSecond(model, DType(d));
  if (profile) {
    *profile = Profile();
    profile->target = model.name;
    profile->lnc = lnc;
    profile->peerEngines.resize(lnc - 1);
    profile->dmaQueues.resize(lnc * kNumDmaQueues);
    // MFU/HFU/MBU of a logical core: against its physical cores' peaks.
    profile->peakFlopsPerSecond = lnc * peakByDType[size_t(DType::BF16)];
    for (unsigned d = 0; d < kNumDTypes; ++d)
      profile->matmulByDType[d].peakFlopsPerSecond = lnc * peakByDType[d];
    profile->peakHbmBytesPerSecond = model.hbmLogicalCoreBytesPerSecond(lnc);
  }
}

EngineProfile &TimingModel::engineProfile(unsigned core, Engine engine) {
  return core ? profile->peerEngines[core - 1][size_t(engine)]
              : profile->engines[size_t(engine)];
}

DType TimingModel::rateDType(const Instruction &inst) const {
  DType a = inst.src0.dtype, b = inst.src1.dtype;
  return peakByDType[size_t(b)] < peakByDType[size_t(a)] ? b : a;
}

void TimingModel::recordMatmul(const Instruction &inst, double flops) {
  if (!profile)
    return;
  MatmulDTypeProfile &m = profile->matmulByDType[size_t(rateDType(inst))];
  ++m.instructions;
  m.tensorFlops += flops;
  profile->tensorFlops += flops;
  if (countsInMfu(inst)) {
    m.usefulFlops += flops;
    profile->usefulMatmulFlops += flops;
  }
}

Timed TimingModel::compute(unsigned core, Engine engine, uint32_t index,
                           const Instruction &inst, double issueNs,
                           double startNs) {
  Timed t{issueNs, startNs, startNs};
  double flops = 0;
  if (inst.opcode == Opcode::Matmul) {
    t.endNs = startNs + tensor[core].matmulNs(model, inst, startNs);
    flops = matmulFlops(inst);
    recordMatmul(inst, flops);
  } else {
    t.endNs = startNs + double(vectorLikeCycles(model, inst)) /
                            engineClockGHz(model, engine);
  }
  record(core, engine, index, inst, t, startNs - issueNs, 0, flops);
  return t;
}

Timed TimingModel::signalPeer(unsigned core, Engine engine, uint32_t index,
                              const Instruction &inst, double issueNs,
                              double startNs) {
  // The barrier cost: no cited figure, one DMA fixed cost (MachineModel::
  // barrierNs). The engine is not held: only the peer's signal waits.
  Timed t{issueNs, startNs, startNs + model.barrierNs()};
  record(core, engine, index, inst, t, startNs - issueNs, 0, 0, ~size_t(0),
         /*busy=*/false);
  return t;
}

std::optional<Timed> TimingModel::dma(unsigned core, uint32_t index,
                                      const Instruction &inst, double issueNs,
                                      double dispatchNs) {
  // Each queue serialises its transfers; a transfer costs the fixed ~1.3 us
  // then moves its bytes at what it reaches alone (engines x per-engine GB/s
  // x size efficiency) within a max-min fair share of the core's DMA (and
  // HBM) bandwidth among the transfers moving bytes at the same time,
  // re-rated as they start and end (DmaQueues.h).
  if (!isDmaTransfer(inst.opcode)) { // a Nop on the Dma stream: no transfer
    Timed t{issueNs, dispatchNs, dispatchNs};
    record(core, Engine::Dma, index, inst, t, dispatchNs - issueNs, 0, 0);
    return t;
  }
  advanceDmaTo(dispatchNs);
  unsigned q = inst.dmaQueue % kNumDmaQueues;
  unsigned profileQueue = core * kNumDmaQueues + q;
  uint64_t bytes = dmaBytes(inst);
  DmaTransfer t;
  t.inst = &inst;
  t.core = uint8_t(core);
  t.index = index;
  t.issueNs = issueNs;
  t.dispatchNs = dispatchNs;
  t.bytes = bytes;
  t.aloneBytesPerNs = dmaAloneBytesPerNs(model, inst);
  t.hbmSides = uint8_t(dmaHbmSides(inst));
  if (profile && recordTrace) {
    t.traceSlot = profile->trace.size();
    profile->trace.emplace_back();
  }
  if (inst.opcode == Opcode::Collective) {
    // The ring model (Collectives.h) on its own queue. The links and the
    // CC-cores that drive them are not the core's DMA queues' bandwidth, so
    // a collective takes no share of other transfers' bandwidth.
    t.fixedDurationNs = collectiveNs(model, inst);
    dmaQueues.dispatch(q, t);
    if (profile) {
      DmaQueueProfile &qp = profile->dmaQueues[profileQueue];
      ++qp.transfers;
      qp.bytes += bytes;
      ++profile->collectives;
      profile->collectiveBytes += bytes;
    }
    return std::nullopt;
  }
  dmaQueues.dispatch(q, t);
  if (profile) {
    DmaQueueProfile &qp = profile->dmaQueues[profileQueue];
    ++qp.transfers;
    qp.bytes += bytes;
    profile->dmaBytes += bytes;
    profile->hbmBytes += dmaHbmBytes(inst);
    unsigned bucket = bytes ? unsigned(std::log2(double(bytes))) : 0;
    ++profile->dmaSizeHistogram[std::min<size_t>(
        bucket, profile->dmaSizeHistogram.size() - 1)];
  }
  return std::nullopt;
}

void TimingModel::advanceDmaTo(double ns) {
  size_t first = dmaDone.size();
  dmaQueues.advanceTo(ns, dmaDone);
  for (size_t i = first; i < dmaDone.size(); ++i) {
    const DmaDone &d = dmaDone[i];
    const DmaTransfer &t = d.transfer;
    Timed timed{t.issueNs, d.startNs, d.endNs};
    (t.inst->opcode == Opcode::Collective ? collectiveIntervals : dmaIntervals)
        .push_back({d.startNs, d.endNs});
    dmaIntervalsByCore[t.core].push_back({d.startNs, d.endNs});
    if (profile)
      profile->dmaQueues[t.core * kNumDmaQueues + t.inst->dmaQueue % kNumDmaQueues]
          .busyNs += d.endNs - d.startNs;
    // The Dma stream waited on semaphores until dispatch; the wait for the
    // queue is not a semaphore wait.
    record(t.core, Engine::Dma, t.index, *t.inst, timed,
           t.dispatchNs - t.issueNs, t.bytes, 0, t.traceSlot);
  }
}

std::vector<DmaDone> TimingModel::takeDmaCompletions() {
  std::vector<DmaDone> out;
  out.swap(dmaDone);
  return out;
}

void TimingModel::record(unsigned core, Engine engine, uint32_t index,
                         const Instruction &inst, const Timed &t,
                         double waitNs, uint64_t bytes, double flops,
                         size_t traceSlot, bool busy) {
  endNs = std::max(endNs, t.endNs);
  if (!profile)
    return;
  EngineProfile &ep = engineProfile(core, engine);
  ++ep.instructions;
  ep.semaphoreWaitNs += waitNs;
  if (engine != Engine::Dma && busy) {
    ep.busyNs += t.endNs - t.startNs;
    if (trackOverlap)
      computeIntervals.push_back({t.startNs, t.endNs});
  }
  if (!recordTrace)
    return;
  InstructionRecord r;
  r.core = uint8_t(core);
  r.engine = engine;
  r.dmaQueue = engine == Engine::Dma ? inst.dmaQueue : 0;
  r.index = index;
  r.opcode = inst.opcode;
  r.sourceIndex = inst.sourceIndex;
  r.issueNs = t.issueNs;
  r.startNs = t.startNs;
  r.endNs = t.endNs;
  r.bytes = bytes;
  r.flops = flops;
  if (traceSlot < profile->trace.size())
    profile->trace[traceSlot] = r;
  else
    profile->trace.push_back(r);
}

void TimingModel::finish() {
  if (!profile)
    return;
  Profile &p = *profile;
  p.totalNs = endNs;
  // DMA busy time: the union of each core's transfers' intervals across its
  // queues (collectives included: core 0 issues them).
  for (unsigned c = 0; c < dmaIntervalsByCore.size(); ++c)
    engineProfile(c, Engine::Dma).busyNs =
        unionLength(mergeIntervals(dmaIntervalsByCore[c]));
  // Collective time, and the part of it the core was busy with other work.
  std::vector<std::pair<double, double>> comm =
      mergeIntervals(collectiveIntervals);
  p.collectiveNs = unionLength(comm);
  // Hidden = while the core did other work: a compute engine or another
  // DMA transfer was busy (the step would not be shorter without it).
  if (!comm.empty()) {
    std::vector<std::pair<double, double>> work = computeIntervals;
    work.insert(work.end(), dmaIntervals.begin(), dmaIntervals.end());
    p.collectiveOverlapNs = overlapLength(comm, mergeIntervals(std::move(work)));
  }
  p.semaphoreWaitNs = 0;
  // Each physical core's engines over the whole run (the later core's end).
  for (unsigned c = 0; c < dmaIntervalsByCore.size(); ++c)
    for (unsigned e = 0; e < kNumEngines; ++e) {
      EngineProfile &ep = engineProfile(c, Engine(e));
      ep.utilisation = endNs > 0 ? ep.busyNs / endNs : 0;
      p.semaphoreWaitNs += ep.semaphoreWaitNs;
    }
  // Each dtype's FLOPs at its own peak: the Tensor Engine time they need.
  p.tensorAtPeakNs = p.usefulAtPeakNs = 0;
  for (const MatmulDTypeProfile &m : p.matmulByDType)
    if (m.peakFlopsPerSecond > 0) {
      p.tensorAtPeakNs += m.tensorFlops / m.peakFlopsPerSecond * 1e9;
      p.usefulAtPeakNs += m.usefulFlops / m.peakFlopsPerSecond * 1e9;
    }
  if (endNs > 0) {
    p.hfu = p.tensorAtPeakNs / endNs;
    p.mfu = p.usefulAtPeakNs / endNs;
    p.mbu = double(p.hbmBytes) / (endNs * 1e-9 * p.peakHbmBytesPerSecond);
  }
}

} // namespace trnc::sim
