//===- ColumnSums.h - sums over rows on the Tensor Engine --------*- C++ -*-===//
//
// A sum over the rows of row tiles (a bias's or a layer norm weight's
// gradient: [R, C] -> [C]) accumulates on the Tensor Engine in PSUM. Each
// tile is the stationary operand and a column of ones the moving one,
// tile[K, 128 columns]^T @ ones[K, 1], so each block of 128 columns sums
// into one PSUM column, column c at partition c % 128 of block c / 128. A
// matmul costs max(min(64, M), N) cycles (HARDWARE.md "Instructions"): 64
// per block of 128 columns this way, where ones^T @ tile streams the columns
// as the moving operand, 128 (x4 for fp32 inputs either way). Used by the
// reductions (LowerReduction.cpp) and the row groups (LowerRowGroup.cpp).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "passes/Tile/LoweringContext.h"

namespace trnc::tile {

/// The accumulator of a sum over rows of `width` columns: fp32 [min(P,
/// width), blocks of P columns].
struct ColumnSumShape {
  int64_t partitions, blocks;
};
ColumnSumShape columnSumShape(const LoweringContext &ctx, int64_t width);

/// Whether summing `rowTiles` tiles of rows of `elementType` this way beats
/// ones^T @ tile: the Tensor Engine saves about half its cycles per tile
/// (x4 in fp32), the store writes one element per descriptor (~1 ns each,
/// against a contiguous row); break-even near 3 tiles in bf16, 1 in fp32,
/// taken with a margin (a sum over 2 rows of 32768 columns stored 36 us
/// this way; such few-row sums now fold on Vector, LowerReduction.cpp).
bool columnSumsPay(int64_t rowTiles, mlir::Type elementType);

/// Adds the `rows` rows of columns [c0, c0 + width) of tile `x` (its free
/// size `xFree`) into PSUM accumulator `acc` (columnSumShape(width));
/// `ones` is a [>= rows, 1] tile of x's type. The first tile of a sum
/// passes accumulate = false.
void addColumnSums(LoweringContext &ctx, mlir::Location loc, mlir::Value acc,
                   mlir::Value x, int64_t xFree, int64_t c0, int64_t rows,
                   int64_t width, mlir::Value ones, bool accumulate);

/// Stores accumulator `acc` of `width` columns to `dst` from `offset`,
/// `stride` elements apart, cast to `dstType` on the Scalar engine: the
/// full blocks in one transfer, a last partial block in another.
void storeColumnSums(LoweringContext &ctx, mlir::Location loc, mlir::Value acc,
                     int64_t width, mlir::Value dst, int64_t offset,
                     int64_t stride, mlir::Type dstType);

} // namespace trnc::tile
