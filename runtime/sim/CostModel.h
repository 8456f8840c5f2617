//===- CostModel.h - Per-instruction costs of the timed simulator -*- C++ -*-===//
//
// Pure functions from (machine model, instruction) to engine cycles, DMA
// bytes and bandwidths: the formulas of HARDWARE.md "Instructions", with the
// constants of MachineModel. O(1) per instruction: they read the access
// patterns' shapes, never the data. Stateful effects live in
// sim/TensorWarmup.h (matmul start-up latency, the warm-up throttle) and
// sim/Timing.cpp (DMA queues and bandwidth sharing).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "isa/Isa.h"
#include "machine/MachineModel.h"

#include <cstdint>

namespace trnc::sim {

/// Clock of a compute engine in GHz (cycles per ns).
double engineClockGHz(const MachineModel &m, isa::Engine e);

/// Cycles a matmul occupies the Tensor Engine at full rate, without start-up
/// latency or throttle: max(min(64, M), N), x4 when an input is fp32, x2
/// when the moving operand's innermost stride exceeds 16 bytes.
uint64_t matmulCycles(const MachineModel &m, const isa::Instruction &inst);

/// 2 * K * M * N for a matmul, 0 otherwise.
double matmulFlops(const isa::Instruction &inst);

/// Cycles a Vector/Scalar/GpSimd instruction occupies its engine:
/// accessOverhead + max(minInterval, work * strideFactor / lanesPerCycle),
/// where `work` is the NKI ISA formula in elements per partition (N, 2N,
/// N/2, ...) and lanesPerCycle the engine's elements per cycle over the
/// partitions (1 on trn1, up to 4 on trn2/trn3 Vector).
uint64_t vectorLikeCycles(const MachineModel &m, const isa::Instruction &inst);

/// Bytes a DMA moves (the larger of the read and written sides).
uint64_t dmaBytes(const isa::Instruction &inst);
/// Bytes it reads from or writes to HBM (both sides count).
uint64_t dmaHbmBytes(const isa::Instruction &inst);
/// How many of its sides are HBM (2: an HBM -> HBM copy, whose rate counts
/// twice against the HBM bandwidth).
unsigned dmaHbmSides(const isa::Instruction &inst);
/// Contiguous bytes per descriptor: the shorter of the two sides' contiguous
/// runs (an SBUF/PSUM run never crosses a partition).
uint64_t dmaRowBytes(const isa::Instruction &inst);
/// Size efficiency of descriptors of `rowBytes` (see MachineModel.h).
double dmaEfficiency(const MachineModel &m, uint64_t rowBytes);
/// Bandwidth (bytes/ns) one transfer reaches alone: one DMA engine per
/// descriptor up to all of them, times the size efficiency.
double dmaAloneBytesPerNs(const MachineModel &m, const isa::Instruction &inst);
/// Bandwidth (bytes/ns) all concurrent transfers share: the core's DMA
/// engines, and for transfers touching HBM also the core's HBM share.
double dmaSharedCapBytesPerNs(const MachineModel &m,
                              const isa::Instruction &inst);

} // namespace trnc::sim
