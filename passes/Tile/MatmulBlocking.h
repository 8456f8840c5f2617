//===- MatmulBlocking.h - loop order, block sizes and operand layout -*- C++ -*-===//
//
// The planner of the matmul lowering (LowerMatmul.cpp): for C[M, N] =
// A[M, K] @ B[K, N] on a target, which operand stays resident in SBUF (a
// block of A^T swept over N, or a block of B swept over M), how large the
// resident block is, and how each operand reaches its [k partitions, free]
// layout: a direct DMA, or contiguous rows transposed on the Tensor Engine.
// Every size comes from the MachineModel; every choice from an estimate of
// HBM time plus Tensor Engine transpose time (the simulator's own DMA
// efficiency curve, sim/CostModel.h). Pure arithmetic: no IR.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "machine/MachineModel.h"

#include <cstdint>

namespace trnc::tile {

/// One operand as the engine wants it: X[K, F], k on partitions once in
/// SBUF (A^T for the stationary operand, B for the moving one). Strides in
/// elements of the HBM view.
struct MatmulOperand {
  int64_t k = 0, f = 0;
  int64_t strideK = 0, strideF = 0;
};

struct MatmulProblem {
  int64_t m = 0, k = 0, n = 0;
  int64_t eltBytes = 4; // A and B
  int64_t outBytes = 4; // C
  MatmulOperand a;      // A^T [K, M]
  MatmulOperand b;      // B [K, N]
};

enum class MatmulOrder {
  /// A^T [K, blockM] resident; B streamed in [tileK, tileN] tiles, each used
  /// by every m tile of the block right after its load; n swept inside.
  StationaryResident,
  /// B [K, blockN] resident; per m tile A^T [K, tileM] is loaded once and
  /// used for every n tile of the block.
  MovingResident,
  /// Nothing resident (K too long for a resident [K, 128] strip): per
  /// (m, n) tile, chunks of kChunk rows of both operands.
  Streamed,
};

struct MatmulPlan {
  MatmulOrder order = MatmulOrder::Streamed;
  // Instruction tile limits (target): contraction, stationary free size,
  // moving free size (one fp32 PSUM bank).
  int64_t tileK = 128, tileM = 128, tileN = 512;
  /// StationaryResident: rows of A per block (a multiple of tileM, at most
  /// half the PSUM banks' worth of m tiles, so the next n tile accumulates
  /// while the previous one is copied out). MovingResident: columns of B
  /// per block (a multiple of tileN). Streamed: unused.
  int64_t block = 0;
  /// Streamed: contraction rows per chunk (a multiple of tileK).
  int64_t kChunk = 0;
  /// Load contiguous rows and transpose 128 x 128 blocks on the Tensor
  /// Engine (else one DMA per [k, f] tile).
  bool transposeA = false, transposeB = false;
  /// k elements per contiguous row load that feeds the transposes (a
  /// multiple of tileK; rows of >= the DMA saturation size where K allows).
  int64_t rowChunk = 128;
  /// Estimates behind the choice (also printed by debug output).
  double hbmBytes = 0;
  int64_t transposes = 0;
  double costNs = 0;
};

/// The plan for `p` on `machine`.
MatmulPlan planMatmul(const MachineModel &machine, const MatmulProblem &p);

/// Bytes per ns of one HBM transfer whose descriptors are `runBytes` long,
/// spread over the DMA engines (the simulator's efficiency curve,
/// sim/CostModel.h), capped by the core's HBM share.
double dmaBytesPerNs(const MachineModel &machine, int64_t runBytes);

/// Whether `count` operand blocks [k partitions, f] whose HBM runs are
/// single elements (neither dim contiguous) are cheaper brought on chip as
/// rows of `rowBytes` contiguous bytes with f on partitions, each block
/// then transposed on the Tensor Engine (the convolution lowering's
/// weights: LowerConv.cpp). The same estimate as the matmul plan's.
bool transposedRowsBeatGather(const MachineModel &machine, int64_t eltBytes,
                              int64_t k, int64_t f, int64_t rowBytes,
                              int64_t count);

/// SBUF bytes per partition a plan's resident block may take: half of SBUF,
/// the rest left to streamed tiles so the allocator can double-buffer them.
int64_t residentBudgetBytes(const MachineModel &machine);

} // namespace trnc::tile
