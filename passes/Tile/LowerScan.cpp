//===- LowerScan.cpp - trn.cumsum / trn.cumprod -> tensor_scan ------------===//
//
// Rows along the scanned dim sit one per partition (RowTiling.h), the row on
// the free axis, cut into chunks of one SBUF tile. Each chunk is scanned by
// the Vector engine's tensor_scan into fp32; from the second chunk on, the
// previous chunk's last column (broadcast with a stride-0 free pattern) is
// combined in with one tensor_tensor of the same op: the carry.
//
//===----------------------------------------------------------------------===//
#include "passes/Tile/LoweringContext.h"
#include "passes/Tile/RowTiling.h"

#include "dialects/Trn/TrnOps.h"

using namespace mlir;
using namespace trnc;
using namespace trnc::tile;

LogicalResult trnc::tile::lowerScan(LoweringContext &ctx, Operation *op) {
  nisa::AluOp alu = isa<trn::CumprodOp>(op) ? nisa::AluOp::multiply
                                            : nisa::AluOp::add;
  Value input = op->getOperand(0), result = op->getResult(0);
  int64_t dim = cast<IntegerAttr>(op->getAttr("dim")).getInt();
  Location loc = op->getLoc();
  auto it = ctx.views.find(input);
  if (it == ctx.views.end())
    return op->emitOpError("operand has no lowered HBM view");
  const HbmView in = it->second;
  HbmView dst = ctx.destination(loc, result);
  ctx.views[result] = dst;
  if (in.numElements() == 0)
    return success(); // nothing to write
  if (in.shape.empty()) { // 0-d: the scan is the identity
    emitCopy(ctx, loc, dst, in);
    return success();
  }

  Type f32 = ctx.b.getF32Type();
  int64_t n = in.shape[dim], chunk = ctx.maxFree({in.elementType(), f32});
  int64_t inStride = in.strides[dim], outStride = dst.strides[dim];
  emitRowTiles(ctx.b, loc, in, dst, dim, ctx.partitions(),
               [&](const RowTile &t, Value inRoot, Value outRoot) {
    int64_t p = t.partitions;
    Value prev;
    int64_t prevLen = 0;
    for (int64_t c0 = 0; c0 < n; c0 += chunk) {
      int64_t cn = std::min(chunk, n - c0);
      Value x = ctx.allocSbuf(loc, p, cn, in.elementType());
      ctx.dma(loc, x, ctx.tileAp(x), inRoot,
              ctx.ap(t.inOffset + c0 * inStride, {t.inPartStride, inStride},
                     {p, cn}));
      Value s = ctx.allocSbuf(loc, p, cn, f32);
      ctx.b.create<nisa::TensorScanOp>(
          loc, nisa::AluOpAttr::get(ctx.b.getContext(), alu), s,
          ctx.tileAp(s), x, ctx.tileAp(x),
          nisa::EngineAttr::get(ctx.b.getContext(), nisa::Engine::vector),
          DenseI64ArrayAttr(), IntegerAttr());
      if (prev) {
        // The carry: prev[p, prevLen - 1] broadcast along the chunk.
        auto carryAp = ctx.ap(prevLen - 1, {prevLen, 0}, {p, cn});
        ctx.tensorTensor(loc, alu, s, ctx.tileAp(s), s, ctx.tileAp(s), prev,
                         carryAp);
      }
      Value stored = s;
      if (dst.elementType() != f32) {
        stored = ctx.allocSbuf(loc, p, cn, dst.elementType());
        ctx.copyOnScalar(loc, stored, ctx.tileAp(stored), s, ctx.tileAp(s));
      }
      ctx.dma(loc, outRoot,
              ctx.ap(t.outOffset + c0 * outStride, {t.outPartStride, outStride},
                     {p, cn}),
              stored, ctx.tileAp(stored));
      prev = s;
      prevLen = cn;
    }
  });
  return success();
}
