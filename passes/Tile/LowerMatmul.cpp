//===- LowerMatmul.cpp - trn.matmul -> Tensor Engine tiles ----------------===//
//
// C[M, N] = A[M, K] @ B[K, N] in tiles of M <= 128 (stationary free size),
// K <= 128 (contraction = partitions) and N <= 512 (moving free size, one
// fp32 PSUM bank). Each (m, n) tile accumulates its K tiles in one PSUM
// tile, is copied to SBUF with the cast to C's type on the Scalar engine,
// and is stored by DMA.
//
// The stationary tile is A^T[k, m]: it is loaded by a DMA whose HBM pattern
// walks A transposed (partitions step over A's columns). That is free of
// extra instructions and contiguous when A is itself a transposed view (the
// x^T of a weight gradient); for row-major A the DMA gathers. The strip of
// stationary tiles of one m block is loaded once and reused over every n
// tile when it fits a quarter of SBUF; operands otherwise stream per tile.
// A batched (rank-3) matmul is a loop of these products over batch views.
//
//===----------------------------------------------------------------------===//
#include "passes/Tile/LoweringContext.h"

#include "dialects/Trn/TrnOps.h"

#define DEBUG_TYPE "trnc-tile-lower-to-nisa"

using namespace mlir;
using namespace trnc;
using namespace trnc::tile;

static int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

/// The 2-D product c = a @ b of three rank-2 views.
static LogicalResult lowerMatrixProduct(LoweringContext &ctx, Operation *op,
                                        const HbmView &a, const HbmView &bv,
                                        const HbmView &c) {
  Location loc = op->getLoc();
  int64_t m = a.shape[0], k = a.shape[1], n = bv.shape[1];
  Type elt = a.elementType(), outElt = c.elementType();
  Type f32 = ctx.b.getF32Type();
  int64_t tm = std::min<int64_t>(ctx.machine.matmulMaxM, ctx.partitions());
  int64_t tk = std::min<int64_t>(ctx.machine.matmulMaxK, ctx.partitions());
  int64_t tn = ctx.machine.matmulMaxN;
  if (m == 0 || n == 0)
    return success();
  if (k == 0)
    return op->emitOpError("matmul_k: a contraction of size 0 is unsupported");

  int64_t kTiles = ceilDiv(k, tk);
  int64_t eltBytes = (elt.getIntOrFloatBitWidth() + 7) / 8;
  bool keepStrip = kTiles * tm * eltBytes <=
                   (int64_t)ctx.machine.sbufPartitionBytes / 4;

  for (int64_t m0 = 0; m0 < m; m0 += tm) {
    int64_t mt = std::min(tm, m - m0);
    auto loadStationary = [&](int64_t kt) {
      int64_t k0 = kt * tk, kk = std::min(tk, k - k0);
      Value t = ctx.allocSbuf(loc, kk, mt, elt);
      ctx.dma(loc, t, ctx.tileAp(t), a.root,
              ctx.ap(a.offset + m0 * a.strides[0] + k0 * a.strides[1],
                     {a.strides[1], a.strides[0]}, {kk, mt}));
      return t;
    };
    SmallVector<Value> strip;
    if (keepStrip)
      for (int64_t kt = 0; kt < kTiles; ++kt)
        strip.push_back(loadStationary(kt));

    for (int64_t n0 = 0; n0 < n; n0 += tn) {
      int64_t nt = std::min(tn, n - n0);
      Value psum = ctx.allocTile(loc, nisa::MemorySpace::psum, mt, nt, f32);
      for (int64_t kt = 0; kt < kTiles; ++kt) {
        int64_t k0 = kt * tk, kk = std::min(tk, k - k0);
        Value stat = keepStrip ? strip[kt] : loadStationary(kt);
        Value mov = ctx.allocSbuf(loc, kk, nt, elt);
        ctx.dma(loc, mov, ctx.tileAp(mov), bv.root,
                ctx.ap(bv.offset + k0 * bv.strides[0] + n0 * bv.strides[1],
                       {bv.strides[0], bv.strides[1]}, {kk, nt}));
        ctx.matmul(loc, psum, ctx.tileAp(psum), stat, ctx.tileAp(stat), mov,
                   ctx.tileAp(mov), /*accumulate=*/kt > 0);
      }
      Value out = ctx.allocSbuf(loc, mt, nt, outElt);
      ctx.copyOnScalar(loc, out, ctx.tileAp(out), psum, ctx.tileAp(psum));
      ctx.dma(loc, c.root,
              ctx.ap(c.offset + m0 * c.strides[0] + n0 * c.strides[1],
                     {c.strides[0], c.strides[1]}, {mt, nt}),
              out, ctx.tileAp(out));
    }
  }
  return success();
}

/// Batch `i` of a rank-3 view as a rank-2 view.
static HbmView batchSlice(const HbmView &v, int64_t i) {
  return HbmView{v.root, v.offset + i * v.strides[0],
                 {v.shape[1], v.shape[2]}, {v.strides[1], v.strides[2]}};
}

LogicalResult trnc::tile::lowerMatmul(LoweringContext &ctx, Operation *op) {
  auto mm = cast<trn::MatmulOp>(op);
  auto lhsIt = ctx.views.find(mm.getLhs()), rhsIt = ctx.views.find(mm.getRhs());
  if (lhsIt == ctx.views.end() || rhsIt == ctx.views.end())
    return op->emitOpError("operand has no lowered HBM view");
  const HbmView a = lhsIt->second, b = rhsIt->second;
  HbmView c = ctx.destination(op->getLoc(), mm.getResult());
  ctx.views[mm.getResult()] = c;
  if (a.shape.size() == 2)
    return lowerMatrixProduct(ctx, op, a, b, c);
  for (int64_t i = 0; i < a.shape[0]; ++i)
    if (failed(lowerMatrixProduct(ctx, op, batchSlice(a, i), batchSlice(b, i),
                                  batchSlice(c, i))))
      return failure();
  return success();
}
