//===- TensorWarmup.h - the Tensor Engine's warm-up and start-up -*- C++ -*-===//
//
// A matmul's time depends on the matmuls before it (HARDWARE.md "Other
// documented behaviour"): trn2/trn3 throttle the array to ~50% when it
// starts and ramp to full over ~3 us, re-engaging once utilisation stayed
// below 50% for ~3 us; an idle array pays ~64 cycles of start-up latency.
// This is that state, per Tensor Engine, as the simulator's timing
// (sim/Timing.cpp) and the list scheduler's estimate both use it, so the
// schedule is chosen with the costs it will be simulated with.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "isa/Isa.h"
#include "machine/MachineModel.h"

namespace trnc::sim {

class TensorWarmup {
public:
  /// The time (ns) of matmul `inst` starting at `startNs`, after the
  /// matmuls this state has seen (in start order); records it.
  double matmulNs(const MachineModel &model, const isa::Instruction &inst,
                  double startNs);

private:
  bool anyMatmul = false;
  double prevMatmulStart = 0, prevMatmulEnd = 0, prevMatmulBusy = 0;
  bool rampStarted = false;
  double rampStartNs = 0;
  double lowUtilisationNs = 0;
};

} // namespace trnc::sim
