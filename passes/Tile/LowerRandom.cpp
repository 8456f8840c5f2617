//===- LowerRandom.cpp - trn.random -> GpSimd random -----------------------===//
//
// The seed (a 2-word i32 graph input) is loaded once into every partition
// by one DMA of stride-0 rows: the random instruction reads its key from
// its own partitions (Isa.h Random). The result is then walked as tiles
// together with a contiguous "logical index" view, as for trn.iota: within
// a tile, element (p, f) has logical index base + rowStride * p + f, which
// becomes the instruction's counter, so every element's value depends on
// (seed, index) only and the tiling never shows. Each tile is generated in
// the result's element type (exact there, Isa.h) and stored by a DMA.
//
//===----------------------------------------------------------------------===//
#include "passes/Tile/LoweringContext.h"

#include "dialects/Trn/TrnOps.h"

using namespace mlir;
using namespace trnc;
using namespace trnc::tile;

namespace {

/// Whether the free dims of `task`'s view `v` walk consecutive elements
/// (counts[0] is the partition dim).
bool consecutiveFree(const TileTask &task, unsigned v) {
  int64_t expect = 1;
  for (size_t d = task.counts.size(); d-- > 1;) {
    if (task.counts[d] != 1 && task.strides[v][d] != expect)
      return false;
    expect *= task.counts[d];
  }
  return true;
}

} // namespace

LogicalResult trnc::tile::lowerRandom(LoweringContext &ctx, Operation *o) {
  auto op = cast<trn::RandomOp>(o);
  Location loc = op.getLoc();
  auto seedIt = ctx.views.find(op.getSeed());
  if (seedIt == ctx.views.end())
    return op.emitOpError("seed has no lowered HBM view");
  const HbmView seed = seedIt->second; // a copy: the insertion below may rehash
  HbmView dst = ctx.destination(loc, op.getResult());
  ctx.views[op.getResult()] = dst;
  if (dst.numElements() == 0)
    return success();

  // The key in every partition: P rows of the same two words.
  int64_t parts = ctx.partitions();
  Type i32 = ctx.b.getI32Type();
  Value key = ctx.allocSbuf(loc, parts, 2, i32);
  ctx.dma(loc, key, ctx.tileAp(key), seed.root,
          ctx.ap(seed.offset, {0, seed.strides[0]}, {parts, 2}));

  HbmView index{dst.root, 0, dst.shape, contiguousStrides(dst.shape)};
  JointSpace space = JointSpace::build({&dst, &index});
  Type elt = dst.elementType();
  auto gpsimd = nisa::EngineAttr::get(ctx.b.getContext(), nisa::Engine::gpsimd);
  LogicalResult result = success();
  forEachTile(space, parts, ctx.maxFree({elt}), [&](const TileTask &task) {
    if (failed(result))
      return;
    if (!consecutiveFree(task, 1)) { // forEachTile chunks only the outermost free dim
      result = op.emitOpError("a tile's free walk is not consecutive in the "
                              "logical index");
      return;
    }
    int64_t p = task.partitions, f = task.freeElements;
    Value t = ctx.allocSbuf(loc, p, f, elt);
    ctx.b.create<nisa::RandomOp>(
        loc, t, ctx.tileAp(t), key, ctx.tileAp(key, p, 2),
        ctx.b.getI64IntegerAttr(task.offsets[1]),
        ctx.b.getI32IntegerAttr(p > 1 ? task.strides[1][0] : 0),
        ctx.b.getI32IntegerAttr(1), gpsimd, DenseI64ArrayAttr(),
        IntegerAttr());
    ctx.dma(loc, dst.root, ctx.ap(task.offsets[0], task.strides[0], task.counts),
            t, ctx.tileAp(t));
  });
  return result;
}
