//===- TensorWarmup.cpp - the Tensor Engine's warm-up and start-up --------===//
//
// See TensorWarmup.h.
//
//===----------------------------------------------------------------------===//
#include "sim/TensorWarmup.h"

#include "sim/CostModel.h"

#include <algorithm>

using namespace trnc;
using namespace trnc::sim;

double TensorWarmup::matmulNs(const MachineModel &model,
                              const isa::Instruction &inst, double startNs) {
  // Warm-up throttle (trn2/trn3): the rate starts at ~50% and ramps linearly
  // to full over ~3 us from the first matmul after (re-)engagement; the cap
  // re-engages once the Tensor Engine's utilisation, measured matmul to
  // matmul (busy / start-to-start), has stayed below 50% for ~3 us.
  // Source: HARDWARE.md "Other documented behaviour". The rate is sampled at
  // each matmul's start (O(1); a matmul is at most ~1 us long).
  double fraction = 1.0;
  if (model.tensorWarmupThrottle) {
    if (anyMatmul) {
      double window = startNs - prevMatmulStart;
      if (window > 0 &&
          prevMatmulBusy / window < model.warmupReengageUtilisation)
        lowUtilisationNs += window;
      else
        lowUtilisationNs = 0;
      if (lowUtilisationNs >= model.warmupReengageNs) {
        rampStarted = false;
        lowUtilisationNs = 0;
      }
    }
    if (!rampStarted) {
      rampStarted = true;
      rampStartNs = startNs;
    }
    double progress = std::min(1.0, (startNs - rampStartNs) / model.warmupRampNs);
    fraction = model.warmupStartFraction +
               (1.0 - model.warmupStartFraction) * progress;
  }
  double cycles = double(matmulCycles(model, inst)) / fraction;
  // Start-up latency when the array was idle before this matmul (HARDWARE.md:
  // ~64 cycles); back-to-back matmuls pipeline it away.
  if (!anyMatmul || startNs > prevMatmulEnd)
    cycles += model.matmulStartupCycles;
  double ns = cycles / model.tensorClockGHz;
  anyMatmul = true;
  prevMatmulStart = startNs;
  prevMatmulEnd = startNs + ns;
  prevMatmulBusy = ns;
  return ns;
}
