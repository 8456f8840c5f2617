//===- Collectives.h - The host side of a collective instruction -*- C++ -*-===//
//
// A Collective instruction (isa/Isa.h) moves data between the ranks of a
// replica group. Each rank is one process simulating its own NeuronCore, so
// the simulator cannot do that alone: when it executes a collective it
// hands the instruction's bytes to a CollectiveHook that the host
// implements (the Python binding does it with torch.distributed through the
// user's process group, python/trnc/distributed.py), then continues. The
// hook runs synchronously at the instruction's start in the engine loop's
// deterministic order; every rank runs the same program, so every rank
// reaches its collectives in the same order, which the process groups need.
// Timing (when the queue's semaphore is raised) is the ring model of
// collectiveNs below, independent of how long the host took.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "isa/Isa.h"
#include "machine/MachineModel.h"

#include "llvm/Support/Error.h"

#include <cstdint>

namespace trnc {

/// One collective as the host sees it: plain contiguous bytes.
struct CollectiveCall {
  uint32_t id = 0; // the collective's id in its graph (Isa.h: freeCoef)
  isa::CollectiveKind kind = isa::CollectiveKind::AllReduce;
  isa::ReduceOp reduce = isa::ReduceOp::None;
  uint32_t groupSize = 1;
  isa::DType dtype = isa::DType::F32;
  const uint8_t *input = nullptr;
  uint64_t inputBytes = 0;
  uint8_t *output = nullptr; // written by the hook: outputBytes bytes
  uint64_t outputBytes = 0;
};

/// Implemented by the host; an error fails the run with its message.
class CollectiveHook {
public:
  virtual ~CollectiveHook();
  virtual llvm::Error run(const CollectiveCall &call) = 0;
};

namespace sim {

/// Simulated duration of a collective instruction on `model`: the ring
/// algorithm over the group's widest link (Isa.h span flags). With n ranks,
/// S the bytes of the larger side and a ring step moving S/n bytes:
///   all_reduce      2(n-1) steps (reduce-scatter, then all-gather)
///   all_gather,
///   reduce_scatter,
///   all_to_all      (n-1) steps
///   broadcast       (n-1) hops of latency, then S at link bandwidth
/// each step costing the link's hop latency + (S/n) / link bandwidth.
/// A group of one rank is a local copy (DMA fixed cost + S at the core's
/// DMA bandwidth). Constants: MachineModel "Collectives".
double collectiveNs(const MachineModel &model, const isa::Instruction &inst);

/// Hop latency (ns) and bandwidth (bytes/ns) of the link a collective with
/// `flags` (its span) uses.
double collectiveHopNs(const MachineModel &model, uint8_t flags);
double collectiveBytesPerNs(const MachineModel &model, uint8_t flags);

} // namespace sim
} // namespace trnc
