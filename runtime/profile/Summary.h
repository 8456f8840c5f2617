//===- Summary.h - A short human summary of a simulated run ------*- C++ -*-===//
//
// What a user reads first: total simulated time, per-engine busy time and
// utilisation, Tensor Engine FLOPs with HFU/MFU against the peak of each
// matmul dtype, bytes moved and MBU, the peak SBUF/PSUM bytes live,
// semaphore waits, the DMA size histogram, where the time went (instruction
// kinds, source ops), the busiest engine and a verdict on what bounds the run.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "artifact/Program.h"
#include "sim/Profile.h"

#include <string>

namespace trnc::profile {

/// Thresholds of the verdict. Source: AWS Neuron performance guide (via
/// HARDWARE.md "Reference results"): "compute-bound" means an engine is
/// >= 90% busy; memory-bound kernels reach >= 60% of memory bandwidth.
constexpr double kComputeBoundUtilisation = 0.90;
constexpr double kMemoryBoundBandwidth = 0.60;

struct Verdict {
  enum class Kind { ComputeBound, MemoryBound, LatencyBound };
  Kind kind = Kind::LatencyBound;
  /// The compute engine with the highest utilisation (Tensor on ties).
  isa::Engine busiestEngine = isa::Engine::Tensor;
  double busiestUtilisation = 0;
  /// One sentence: the verdict, the numbers behind it and the rule.
  std::string reason;
};

/// "compute-bound", "memory-bound", "latency-bound".
const char *verdictName(Verdict::Kind kind);

/// Compute-bound when a compute engine (Tensor/Vector/Scalar/GpSimd) is
/// >= 90% busy, else memory-bound when MBU >= 60%, else latency-bound
/// (fixed costs, semaphore waits and dependency chains dominate).
Verdict classify(const Profile &profile);

/// The multi-line summary (ends with a newline). The per-instruction parts
/// (time by instruction kind, top source ops) need Profile::trace records.
std::string summarize(const Program &program, const Profile &profile);

} // namespace trnc::profile
