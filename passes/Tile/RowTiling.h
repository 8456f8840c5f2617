//===- RowTiling.h - rows along one dim, one row per partition -*- C++ -*-===//
//
// Softmax and scans work on whole rows along one dimension: the input and
// output are viewed as [kept..., dim] (strides permuted, no copy), kept
// elements walk partitions and the row is the free axis.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "passes/Tile/HbmView.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/STLFunctionalExtras.h"

namespace trnc::tile {

/// Up to `maxPartitions` rows: row r of the tile starts at
/// offset + r * partStride in each view; elements along the row are
/// `dimStride` apart.
struct RowTile {
  int64_t partitions = 1;
  int64_t inOffset = 0, inPartStride = 0;
  int64_t outOffset = 0, outPartStride = 0;
};

/// Emits the rows of `in` and `out` (same shape) along `dim`, in tiles, as
/// tile loops (TileLoops.h) where the tiles repeat: `fn(tile, inRoot,
/// outRoot)` emits one, reading and writing through those buffers (the
/// views' own, or a loop's windows of them).
void emitRowTiles(
    mlir::OpBuilder &b, mlir::Location loc, const HbmView &in,
    const HbmView &out, int64_t dim, int64_t maxPartitions,
    llvm::function_ref<void(const RowTile &, mlir::Value, mlir::Value)> fn);

} // namespace trnc::tile
