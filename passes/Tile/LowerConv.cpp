//===- LowerConv.cpp - trn.conv2d -> implicit GEMM on the Tensor Engine ---===//
//
// A convolution is a sum of matrix products, one per kernel position (i, j)
// and input-channel chunk (<= 128, the contraction on partitions):
//
//   out[o, (y, x)] += W[o, c, i, j]^T-tile  @  in[c, y*s + i*d, x*s + j*d]
//
// The moving tile of each product is read straight from HBM by one DMA
// whose pattern is the shifted, strided window (im2col as an access
// pattern, never materialised); every product of one output tile
// accumulates into the same PSUM tile, which is then cast on the Scalar
// engine and stored. The stationary weight tiles of one (group, output
// channel chunk) are loaded once and reused over the batch and every output
// tile when they fit a quarter of SBUF.
//
// Zero padding, lhs dilation (zeros between input elements, the input
// gradient of a strided convolution) and reads past the end are resolved
// first by copying the input into a zeroed HBM scratch of exactly the
// extent the windows read, so the main loop never clips a pattern.
//
//===----------------------------------------------------------------------===//
#include "passes/Tile/LoweringContext.h"

#include "dialects/Trn/TrnOps.h"

#define DEBUG_TYPE "trnc-tile-lower-to-nisa"

using namespace mlir;
using namespace trnc;
using namespace trnc::tile;

namespace {

int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }
int64_t eltBytes(Type t) { return (t.getIntOrFloatBitWidth() + 7) / 8; }

/// Fills a contiguous HBM view with zeros: one memset tile, stored as
/// [partitions, free] blocks of the flat range.
void zeroFill(LoweringContext &ctx, Location loc, const HbmView &dst) {
  int64_t total = dst.numElements();
  int64_t free = std::min<int64_t>(ctx.maxFree({dst.elementType()}), total);
  int64_t parts = std::min<int64_t>(ctx.partitions(), ceilDiv(total, free));
  Value zeros = ctx.allocSbuf(loc, parts, free, dst.elementType());
  ctx.memset(loc, zeros, ctx.tileAp(zeros), 0.0);
  for (int64_t at = 0; at < total;) {
    int64_t rows = std::min(parts, (total - at) / free), cols = free;
    if (rows == 0) // the last partial row
      rows = 1, cols = total - at;
    ctx.dma(loc, dst.root, ctx.ap(dst.offset + at, {cols, 1}, {rows, cols}),
            zeros, ctx.tileAp(zeros, rows, cols));
    at += rows * cols;
  }
}

/// Input elements [first, last) of one spatial axis land inside a window
/// extent `extent` at pad + i * lhsDil.
std::pair<int64_t, int64_t> validRange(int64_t size, int64_t pad,
                                       int64_t lhsDil, int64_t extent) {
  int64_t first = pad < 0 ? ceilDiv(-pad, lhsDil) : 0;
  int64_t lastPos = extent - 1 - pad;
  int64_t last = lastPos < 0 ? 0 : std::min(size, lastPos / lhsDil + 1);
  return {first, std::max(first, last)};
}

/// The input as the windows read it: itself when no padding, dilation or
/// overrun is involved, else a zeroed scratch holding its valid part.
HbmView paddedInput(LoweringContext &ctx, Location loc, const HbmView &x,
                    trn::Conv2dOp conv, int64_t extentH, int64_t extentW) {
  ArrayRef<int64_t> pad = conv.getPadding(), ld = conv.getLhsDilation();
  bool direct = pad[0] == 0 && pad[1] == 0 && ld[0] == 1 && ld[1] == 1 &&
                extentH <= x.shape[2] && extentW <= x.shape[3];
  if (direct)
    return x;
  auto type = RankedTensorType::get({x.shape[0], x.shape[1], extentH, extentW},
                                    x.elementType());
  HbmView scratch = ctx.allocScratch(loc, type);
  zeroFill(ctx, loc, scratch);
  auto [h0, h1] = validRange(x.shape[2], pad[0], ld[0], extentH);
  auto [w0, w1] = validRange(x.shape[3], pad[1], ld[1], extentW);
  if (h1 == h0 || w1 == w0 || x.shape[0] == 0 || x.shape[1] == 0)
    return scratch;
  HbmView dst{scratch.root,
              (pad[0] + h0 * ld[0]) * extentW + pad[1] + w0 * ld[1],
              {x.shape[0], x.shape[1], h1 - h0, w1 - w0},
              {scratch.strides[0], scratch.strides[1], ld[0] * extentW, ld[1]}};
  HbmView src{x.root, x.offset + h0 * x.strides[2] + w0 * x.strides[3],
              dst.shape, x.strides};
  emitCopy(ctx, loc, dst, src);
  return scratch;
}

} // namespace

LogicalResult trnc::tile::lowerConv2d(LoweringContext &ctx, Operation *op) {
  auto conv = cast<trn::Conv2dOp>(op);
  Location loc = op->getLoc();
  auto inIt = ctx.views.find(conv.getInput());
  auto wIt = ctx.views.find(conv.getWeight());
  if (inIt == ctx.views.end() || wIt == ctx.views.end())
    return op->emitOpError("operand has no lowered HBM view");
  // Copies: inserting the result's view below may grow the DenseMap and
  // invalidate both iterators.
  const HbmView w = wIt->second, in = inIt->second;
  HbmView out = ctx.destination(loc, conv.getResult());
  ctx.views[conv.getResult()] = out;

  int64_t n = out.shape[0], o = out.shape[1], oh = out.shape[2],
          ow = out.shape[3];
  int64_t groups = conv.getGroups(), cg = w.shape[1], og = o / groups;
  int64_t kh = w.shape[2], kw = w.shape[3];
  ArrayRef<int64_t> s = conv.getStride(), d = conv.getDilation();
  if (n == 0 || o == 0 || oh == 0 || ow == 0)
    return success();
  if (cg == 0 || kh == 0 || kw == 0)
    return op->emitOpError("conv_empty: an empty contraction (no input "
                           "channels or an empty kernel) is unsupported");
  const HbmView x = paddedInput(ctx, loc, in, conv,
                                (oh - 1) * s[0] + (kh - 1) * d[0] + 1,
                                (ow - 1) * s[1] + (kw - 1) * d[1] + 1);

  Type elt = x.elementType(), outElt = out.elementType();
  Type f32 = ctx.b.getF32Type();
  int64_t tm = std::min<int64_t>(ctx.machine.matmulMaxM, ctx.partitions());
  int64_t tk = std::min<int64_t>(ctx.machine.matmulMaxK, ctx.partitions());
  int64_t tn = ctx.machine.matmulMaxN;
  int64_t cTiles = ceilDiv(cg, tk);
  int64_t products = kh * kw * cTiles;
  bool keepWeights = products * tm * eltBytes(elt) <=
                     (int64_t)ctx.machine.sbufPartitionBytes / 4;
  // An output tile: `rows` output rows of `cols` columns (<= tn elements).
  int64_t cols = std::min(ow, tn), rows = std::min(oh, tn / cols);

  for (int64_t g = 0; g < groups; ++g) {
    for (int64_t o0 = 0; o0 < og; o0 += tm) {
      int64_t mt = std::min(tm, og - o0);
      // Stationary W[g*og + o0 + m, c0 + c, i, j] as [c, m].
      auto loadWeight = [&](int64_t p) {
        int64_t i = p / (kw * cTiles), j = (p / cTiles) % kw,
                c0 = (p % cTiles) * tk, cc = std::min(tk, cg - c0);
        int64_t wi = conv.getFlip() ? kh - 1 - i : i;
        int64_t wj = conv.getFlip() ? kw - 1 - j : j;
        Value t = ctx.allocSbuf(loc, cc, mt, elt);
        ctx.dma(loc, t, ctx.tileAp(t), w.root,
                ctx.ap(w.offset + (g * og + o0) * w.strides[0] +
                           c0 * w.strides[1] + wi * w.strides[2] +
                           wj * w.strides[3],
                       {w.strides[1], w.strides[0]}, {cc, mt}));
        return t;
      };
      SmallVector<Value> weights;
      if (keepWeights)
        for (int64_t p = 0; p < products; ++p)
          weights.push_back(loadWeight(p));

      for (int64_t b = 0; b < n; ++b)
        for (int64_t y0 = 0; y0 < oh; y0 += rows)
          for (int64_t x0 = 0; x0 < ow; x0 += cols) {
            int64_t r = std::min(rows, oh - y0), cl = std::min(cols, ow - x0);
            Value psum =
                ctx.allocTile(loc, nisa::MemorySpace::psum, mt, r * cl, f32);
            for (int64_t p = 0; p < products; ++p) {
              int64_t i = p / (kw * cTiles), j = (p / cTiles) % kw,
                      c0 = (p % cTiles) * tk, cc = std::min(tk, cg - c0);
              Value stat = keepWeights ? weights[p] : loadWeight(p);
              Value mov = ctx.allocSbuf(loc, cc, r * cl, elt);
              ctx.dma(loc, mov, ctx.tileAp(mov), x.root,
                      ctx.ap(x.offset + b * x.strides[0] +
                                 (g * cg + c0) * x.strides[1] +
                                 (y0 * s[0] + i * d[0]) * x.strides[2] +
                                 (x0 * s[1] + j * d[1]) * x.strides[3],
                             {x.strides[1], s[0] * x.strides[2],
                              s[1] * x.strides[3]},
                             {cc, r, cl}));
              ctx.matmul(loc, psum, ctx.tileAp(psum), stat, ctx.tileAp(stat),
                         mov, ctx.tileAp(mov), /*accumulate=*/p > 0);
            }
            Value res = ctx.allocSbuf(loc, mt, r * cl, outElt);
            ctx.copyOnScalar(loc, res, ctx.tileAp(res), psum,
                             ctx.tileAp(psum));
            ctx.dma(loc, out.root,
                    ctx.ap(out.offset + b * out.strides[0] +
                               (g * og + o0) * out.strides[1] +
                               y0 * out.strides[2] + x0 * out.strides[3],
                           {out.strides[1], out.strides[2], out.strides[3]},
                           {mt, r, cl}),
                    res, ctx.tileAp(res));
          }
    }
  }
  return success();
}
