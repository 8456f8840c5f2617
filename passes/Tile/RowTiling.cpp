//===- RowTiling.cpp - rows along one dim, one row per partition ----------===//
//
// The kept dims of both views are walked jointly (merged where possible), one
// kept element per partition, as tile loops; see RowTiling.h.
//
//===----------------------------------------------------------------------===//
#include "passes/Tile/RowTiling.h"
#include "passes/Tile/TileLoops.h"

using namespace trnc::tile;

namespace {
/// `v` without dimension `dim`.
HbmView dropDim(const HbmView &v, int64_t dim) {
  HbmView r{v.root, v.offset, {}, {}};
  for (size_t d = 0; d < v.shape.size(); ++d)
    if ((int64_t)d != dim) {
      r.shape.push_back(v.shape[d]);
      r.strides.push_back(v.strides[d]);
    }
  return r;
}
} // namespace

void trnc::tile::emitRowTiles(
    mlir::OpBuilder &b, mlir::Location loc, const HbmView &in,
    const HbmView &out, int64_t dim, int64_t maxPartitions,
    llvm::function_ref<void(const RowTile &, mlir::Value, mlir::Value)> fn) {
  HbmView keptIn = dropDim(in, dim), keptOut = dropDim(out, dim);
  JointSpace kept = JointSpace::build({&keptIn, &keptOut});
  emitTileLoops(b, loc, kept, maxPartitions, /*maxFree=*/1, {in.root, out.root},
                [&](const TileTask &task, llvm::ArrayRef<mlir::Value> roots) {
                  RowTile t;
                  t.partitions = task.partitions;
                  t.inOffset = task.offsets[0];
                  t.outOffset = task.offsets[1];
                  t.inPartStride = task.strides[0].empty() ? 0 : task.strides[0][0];
                  t.outPartStride =
                      task.strides[1].empty() ? 0 : task.strides[1][0];
                  fn(t, roots[0], roots[1]);
                });
}
