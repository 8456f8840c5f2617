//===- Profile.h - What a timed simulation reports ----------------*- C++ -*-===//
//
// The result of a timed run: total simulated time, per-engine busy time and
// utilisation, Tensor Engine FLOPs by matmul dtype (HFU/MFU against the
// per-core peak of each dtype), bytes
// moved and memory-bandwidth utilisation, semaphore waits, the DMA size
// histogram, and optionally one record per executed instruction (for traces).
// Filled by the Simulator (sim/Timing*.cpp); consumed by the trace writer,
// the human summary, the Python API and the benchmarks.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "isa/Isa.h"

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace trnc {

/// One executed instruction in simulated time (nanoseconds from the start).
struct InstructionRecord {
  uint8_t core = 0;           // physical core (LNC=2: 0 or 1)
  isa::Engine engine = isa::Engine::Vector;
  uint16_t dmaQueue = 0;      // DMA only
  uint32_t index = 0;         // position in its engine's stream
  isa::Opcode opcode = isa::Opcode::Nop;
  uint32_t sourceIndex = isa::kNoSource;
  double issueNs = 0;         // when its engine reached it (before waits)
  double startNs = 0;         // after waits and engine/queue availability
  double endNs = 0;
  uint64_t bytes = 0;         // DMA bytes moved
  double flops = 0;           // Tensor Engine FLOPs
};

struct EngineProfile {
  uint64_t instructions = 0;
  double busyNs = 0;          // sum of instruction durations
  double semaphoreWaitNs = 0; // time blocked on semaphore waits
  double utilisation = 0;     // busyNs / totalNs
};

/// Tensor Engine work of the matmuls that run at one dtype's rate (see
/// TimingModel: a matmul runs at the rate of its slower operand dtype).
struct MatmulDTypeProfile {
  uint64_t instructions = 0;
  double tensorFlops = 0;        // every matmul FLOP (counts in HFU)
  double usefulFlops = 0;        // the model's matmul FLOPs (count in MFU)
  double peakFlopsPerSecond = 0; // the core's Tensor Engine peak at this dtype
};

struct DmaQueueProfile {
  uint64_t transfers = 0;
  uint64_t bytes = 0;
  double busyNs = 0;
};

struct Profile {
  std::string target;
  /// Physical cores the program ran on (its LNC degree). At 2 the peaks
  /// below (FLOP/s, HBM bytes/s) are the pair's, twice one core's, and
  /// totalNs is the later core's finish.
  unsigned lnc = 1;
  double totalNs = 0;
  /// Physical core 0's engines (the whole program at LNC=1).
  std::array<EngineProfile, isa::kNumEngines> engines{};
  /// At LNC=2, physical core 1's engines (one entry); empty at LNC=1.
  std::vector<std::array<EngineProfile, isa::kNumEngines>> peerEngines;
  /// One per queue: core 0's 16, then (LNC=2) core 1's 16.
  std::vector<DmaQueueProfile> dmaQueues;

  // Tensor Engine. HFU counts all Tensor Engine work (incl. transposes via
  // identity matmuls); MFU only useful matmul FLOPs. Each dtype's FLOPs are
  // divided by that dtype's peak (fp32 runs at a quarter of bf16):
  //   MFU = sum_d (usefulFlops_d / peak_d) / totalNs,
  // the share of the run the Tensor Engine would need at its peak for that
  // work (usefulAtPeakNs); HFU likewise with tensorFlops_d (tensorAtPeakNs).
  double tensorFlops = 0;        // sums over matmulByDType
  double usefulMatmulFlops = 0;
  double peakFlopsPerSecond = 0; // the bf16 peak 128*128*2*clock (nominal)
  /// By isa::DType; peakFlopsPerSecond is filled for every dtype, the
  /// counts only for the dtypes matmuls ran at.
  std::array<MatmulDTypeProfile, isa::kNumDTypes> matmulByDType{};
  double tensorAtPeakNs = 0;
  double usefulAtPeakNs = 0;
  double hfu = 0;
  double mfu = 0;

  // Memory traffic.
  uint64_t dmaBytes = 0;       // all DMA bytes
  uint64_t hbmBytes = 0;       // DMA bytes read from or written to HBM
  double peakHbmBytesPerSecond = 0; // per core share of the chip's HBM bandwidth
  double mbu = 0;              // hbm bytes / (totalNs * peak)

  double semaphoreWaitNs = 0;  // summed over engines

  // Collectives (sim/Collectives.h), all on isa::kCollectiveQueue.
  uint64_t collectives = 0;
  uint64_t collectiveBytes = 0; // the larger side of each
  double collectiveNs = 0;      // union of their intervals
  /// The part of collectiveNs during which a compute engine or another DMA
  /// transfer was busy (communication hidden behind the core's other
  /// work); the rest is exposed.
  double collectiveOverlapNs = 0;
  double exposedCollectiveNs() const { return collectiveNs - collectiveOverlapNs; }
  /// DMA transfers by size: bucket i counts transfers of [2^i, 2^(i+1)) bytes.
  std::array<uint64_t, 40> dmaSizeHistogram{};

  /// One record per executed instruction, when RunOptions::recordTrace.
  std::vector<InstructionRecord> trace;
};

} // namespace trnc
