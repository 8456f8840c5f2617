//===- Timing.h - Simulated time of one run ----------------------*- C++ -*-===//
//
// The stateful half of the timed model (the formulas are in CostModel.h):
// the Tensor Engine's start-up latency and warm-up throttle, the 16 DMA
// queues (DmaQueues.h: each serialises its transfers; transfers moving
// bytes at once share the core's DMA/HBM bandwidth fairly, re-rated as they
// start and end), and the Profile being accumulated (matmul FLOPs by the
// dtype whose rate they run at, for MFU/HFU per dtype). At LNC=2 it times
// both physical cores: a Tensor Engine state each, 16 DMA queues each, one
// HBM bandwidth shared, the peaks of the profile those of the pair. The engine loop
// (Simulator.cpp) decides *when* an instruction may start; this class says
// when it ends and records it (a DMA's end once time reaches it). O(1) per
// instruction (O(queues) per DMA event), no per-element work.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "isa/Isa.h"
#include "machine/MachineModel.h"
#include "sim/DmaQueues.h"
#include "sim/Profile.h"
#include "sim/TensorWarmup.h"

#include <array>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

namespace trnc::sim {

using isa::kNumDmaQueues;

/// When an instruction ran: issue (its engine reached it), start, end; end
/// is also when its signal is raised.
struct Timed {
  double issueNs = 0, startNs = 0, endNs = 0;
};

/// The Tensor Engine's peak FLOP/s at `dtype`: the rate of a full-size,
/// contiguous matmul (K, M, N at the target's limits, both operands `dtype`)
/// as the cost model (CostModel.h) times it, so the peak of every dtype
/// follows the cost model (bf16/fp16: 128*128*2*clock; fp32: a quarter).
double matmulPeakFlopsPerSecond(const MachineModel &model, isa::DType dtype);

/// True when a matmul's FLOPs are the model's work and count in MFU (all of
/// them count in HFU). Every matmul the ISA has today is; Tensor Engine
/// transposes (identity matmuls) will not be.
bool countsInMfu(const isa::Instruction &inst);

/// Sorted, disjoint union of intervals (empty ones dropped); its total
/// length; the length of the intersection of two such unions.
std::vector<std::pair<double, double>>
mergeIntervals(std::vector<std::pair<double, double>> intervals);
double unionLength(const std::vector<std::pair<double, double>> &merged);
double overlapLength(const std::vector<std::pair<double, double>> &a,
                     const std::vector<std::pair<double, double>> &b);

class TimingModel {
public:
  /// `profile` may be null (timing still drives the order of execution).
  /// `trackOverlap` (a program with collectives) keeps every compute
  /// instruction's interval to measure how much communication it hides.
  /// `lnc`: the physical cores the program spans (1 or 2).
  TimingModel(const MachineModel &model, bool recordTrace, Profile *profile,
              bool trackOverlap = false, unsigned lnc = 1);

  /// A compute-engine instruction (Tensor/Vector/Scalar/GpSimd) of physical
  /// core `core` that its engine reached at `issueNs` and whose waits were
  /// met at `startNs`.
  Timed compute(unsigned core, isa::Engine engine, uint32_t index,
                const isa::Instruction &inst, double issueNs, double startNs);
  /// A DMA the Dma stream of `core` dispatched to its queue at `dispatchNs`.
  /// A Nop ends at once (its times are returned); a transfer ends later,
  /// found by advancing: nextDmaEventNs / advanceDmaTo / takeDmaCompletions.
  std::optional<Timed> dma(unsigned core, uint32_t index,
                           const isa::Instruction &inst, double issueNs,
                           double dispatchNs);
  /// A barrier's signal to the peer core (a Nop flagged kFlagSignalPeer on
  /// any engine): the engine only issues it; the peer's semaphore rises
  /// MachineModel::barrierNs() later (the returned end).
  Timed signalPeer(unsigned core, isa::Engine engine, uint32_t index,
                   const isa::Instruction &inst, double issueNs,
                   double startNs);
  /// When the next DMA transfer changes phase or ends (infinity: none).
  double nextDmaEventNs() const { return dmaQueues.nextEventNs(); }
  /// Advances the DMA queues to `ns`, recording the transfers that end.
  void advanceDmaTo(double ns);
  /// The transfers that ended since the last call, in end order.
  std::vector<DmaDone> takeDmaCompletions();

  /// Fill the profile's totals (call once, after the last instruction).
  void finish();

private:
  /// The dtype whose peak a matmul runs at: of its two operand dtypes, the
  /// one with the lower peak (a bf16 x fp32 matmul runs at the fp32 rate).
  isa::DType rateDType(const isa::Instruction &inst) const;
  void recordMatmul(const isa::Instruction &inst, double flops);
  /// `traceSlot`: a trace record reserved earlier to fill (a DMA's, whose
  /// end is known after later instructions were recorded).
  void record(unsigned core, isa::Engine engine, uint32_t index,
              const isa::Instruction &inst, const Timed &t, double waitNs,
              uint64_t bytes, double flops, size_t traceSlot = ~size_t(0),
              bool busy = true);

  const MachineModel &model;
  bool recordTrace;
  bool trackOverlap;
  Profile *profile;
  double endNs = 0; // latest end of any instruction
  std::array<double, isa::kNumDTypes> peakByDType{}; // matmulPeakFlopsPerSecond

  // Each physical core's Tensor Engine: previous matmul, and the warm-up
  // throttle's state.
  std::vector<TensorWarmup> tensor;
  /// Engine profile of `engine` on physical core `core`.
  EngineProfile &engineProfile(unsigned core, isa::Engine engine);

  // DMA queues sharing the core's bandwidth, the transfers that ended and
  // not yet taken, and all transfer intervals (for the DMA busy time, a
  // union across queues).
  DmaQueues dmaQueues;
  std::vector<DmaDone> dmaDone;
  std::vector<std::pair<double, double>> dmaIntervals; // every core's
  std::vector<std::vector<std::pair<double, double>>> dmaIntervalsByCore;
  // Collective intervals and compute-engine busy intervals (with
  // dmaIntervals: the share of communication the core's other work hides).
  std::vector<std::pair<double, double>> collectiveIntervals;
  std::vector<std::pair<double, double>> computeIntervals;
};

} // namespace trnc::sim
