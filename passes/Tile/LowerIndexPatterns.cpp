//===- LowerIndexPatterns.cpp - trn.iota / trn.triangle -> GpSimd ---------===//
//
// trn.iota: the result is walked as tiles together with a contiguous
// "logical index" view, so each tile's index is base + rowStride * p + f;
// one GpSimd iota writes start + step * index into an fp32 tile (an int32
// tile for integer results: the engine's store converts) and a DMA stores
// it (casting to the result type; int64 widened from int32).
// trn.triangle (tril/triu): per matrix of the leading dims, [rows <= 128,
// cols <= maxFree] tiles are loaded, one GpSimd affine_select keeps the
// elements on the kept side of the diagonal (column - row compared with
// the diagonal, both offset by the tile's origin) and writes 0 elsewhere.
//
//===----------------------------------------------------------------------===//
#include "passes/Tile/LoweringContext.h"

#include "dialects/Trn/TrnOps.h"

using namespace mlir;
using namespace trnc;
using namespace trnc::tile;

namespace {

nisa::EngineAttr gpsimd(OpBuilder &b) {
  return nisa::EngineAttr::get(b.getContext(), nisa::Engine::gpsimd);
}

LogicalResult lowerIota(LoweringContext &ctx, trn::IotaOp op) {
  Location loc = op.getLoc();
  HbmView dst = ctx.destination(loc, op.getResult());
  ctx.views[op.getResult()] = dst;
  // The logical index of every element: a contiguous view of the same shape.
  HbmView index{dst.root, 0, dst.shape, contiguousStrides(dst.shape)};
  JointSpace space = JointSpace::build({&dst, &index});
  double start = op.getStart().convertToDouble();
  double step = op.getStep().convertToDouble();
  Type f32 = ctx.b.getF32Type();
  Type tileType = isa<FloatType>(dst.elementType()) ? f32 : dst.elementType();
  forEachTile(space, ctx.partitions(), ctx.maxFree({f32, dst.elementType()}),
              [&](const TileTask &task) {
                int64_t p = task.partitions, f = task.freeElements;
                Value t = ctx.allocSbuf(loc, p, f, tileType);
                // Within a tile of the contiguous index view the free walk
                // is consecutive indices; rows are strides[1][0] apart.
                int64_t base = task.offsets[1];
                ctx.b.create<nisa::IotaOp>(
                    loc, t, ctx.tileAp(t),
                    ctx.b.getF32FloatAttr(start + step * double(base)),
                    ctx.b.getF32FloatAttr(step),
                    ctx.b.getI32IntegerAttr(task.strides[1][0]),
                    ctx.b.getI32IntegerAttr(1), gpsimd(ctx.b),
                    DenseI64ArrayAttr(), IntegerAttr());
                ctx.dma(loc, dst.root,
                        ctx.ap(task.offsets[0], task.strides[0], task.counts),
                        t, ctx.tileAp(t));
              });
  return success();
}

LogicalResult lowerTriangle(LoweringContext &ctx, trn::TriangleOp op) {
  Location loc = op.getLoc();
  auto it = ctx.views.find(op.getInput());
  if (it == ctx.views.end())
    return op.emitOpError("operand has no lowered HBM view");
  const HbmView src = it->second; // a copy: the insertion below may rehash
  HbmView dst = ctx.destination(loc, op.getResult());
  ctx.views[op.getResult()] = dst;
  int64_t rank = dst.shape.size();
  int64_t rows = dst.shape[rank - 2], cols = dst.shape[rank - 1];
  if (dst.numElements() == 0)
    return success();
  Type elt = dst.elementType();
  int64_t maxFree = ctx.maxFree({elt, src.elementType()});
  int64_t diagonal = op.getDiagonal();
  nisa::AluOp keep = op.getUpper() ? nisa::AluOp::is_ge : nisa::AluOp::is_le;

  SmallVector<int64_t> idx(rank - 2, 0); // odometer over the leading dims
  while (true) {
    int64_t srcBase = src.offset, dstBase = dst.offset;
    for (int64_t d = 0; d < rank - 2; ++d) {
      srcBase += idx[d] * src.strides[d];
      dstBase += idx[d] * dst.strides[d];
    }
    for (int64_t r0 = 0; r0 < rows; r0 += ctx.partitions()) {
      int64_t p = std::min(ctx.partitions(), rows - r0);
      for (int64_t c0 = 0; c0 < cols; c0 += maxFree) {
        int64_t f = std::min(maxFree, cols - c0);
        auto hbmAp = [&](const HbmView &v, int64_t base) {
          return ctx.ap(base + r0 * v.strides[rank - 2] +
                            c0 * v.strides[rank - 1],
                        {v.strides[rank - 2], v.strides[rank - 1]}, {p, f});
        };
        Value in = ctx.allocSbuf(loc, p, f, src.elementType());
        ctx.dma(loc, in, ctx.tileAp(in), src.root, hbmAp(src, srcBase));
        Value out = ctx.allocSbuf(loc, p, f, elt);
        // (c0 + f) - (r0 + p) - diagonal <keep> 0.
        ctx.b.create<nisa::AffineSelectOp>(
            loc, nisa::AluOpAttr::get(ctx.b.getContext(), keep), out,
            ctx.tileAp(out), in, ctx.tileAp(in),
            ctx.b.getF32FloatAttr(double(c0 - r0 - diagonal)),
            ctx.b.getI32IntegerAttr(-1), ctx.b.getI32IntegerAttr(1),
            ctx.b.getF32FloatAttr(0.0), gpsimd(ctx.b), DenseI64ArrayAttr(),
            IntegerAttr());
        ctx.dma(loc, dst.root, hbmAp(dst, dstBase), out, ctx.tileAp(out));
      }
    }
    int64_t d = rank - 3;
    while (d >= 0 && ++idx[d] == dst.shape[d])
      idx[d--] = 0;
    if (d < 0)
      break;
  }
  return success();
}

} // namespace

LogicalResult trnc::tile::lowerIndexPattern(LoweringContext &ctx,
                                            Operation *op) {
  if (auto iota = dyn_cast<trn::IotaOp>(op))
    return lowerIota(ctx, iota);
  return lowerTriangle(ctx, cast<trn::TriangleOp>(op));
}
