//===- LowerConv.cpp - trn.conv2d on the Tensor or Vector engine ----------===//
//
//   out[b, g*og + o, y, x] = sum_{c < cg, i, j}
//       W[g*og + o, c, i, j] * in[b, g*cg + c, y*s + i*d, x*s + j*d]
//
// Five loop nests compute it; the one with the fewest instructions is
// emitted (conv2dPlan), since a nest that suits one shape is pathological
// for another:
//
// - channel GEMM (implicit GEMM): one matmul per input-channel chunk (<=
//   128, the contraction on partitions) and kernel position (i, j) per
//   output tile, all accumulating into one PSUM tile. The moving tiles are
//   access patterns into one SBUF slab per chunk holding the input rows the
//   output tile reads (im2col as an access pattern, never materialised;
//   one DMA per chunk, not per kernel position). The stationary weight
//   tiles of one (group, output-channel chunk) are loaded once and reused
//   over the batch and every output tile when they fit a quarter of SBUF,
//   as contiguous rows: transposed per kernel position on the Tensor
//   Engine, or read in place when the weight is an input gradient's
//   transposed one (WeightLayout). Suits many channels and a small kernel.
// - packed GEMM: the same with every kernel position of several input
//   channels in one contraction chunk (K = channels x kh x kw <= 128), for
//   few channels (a 7x7 stem over RGB: 2 matmuls per output tile, not 49).
// - position GEMM: the contraction runs over kernel positions (up to 128 of
//   them on partitions) for one input channel at a time, and the free axis
//   holds (batch, y, x) of a small output. A weight gradient is such a
//   convolution (its "kernel" is the output gradient's whole map, its output
//   the kernel window): the channel GEMM would issue one matmul with K =
//   batch per map position (65536 matmuls for a 64->64 3x3 layer at 32x32),
//   accumulating them one by one in PSUM; here a 128-position chunk is one
//   matmul (16 for batch 2 at 32x32 per input channel), which is also far
//   closer to float64 (blocked instead of sequential sums).
// - depthwise on the Vector engine (one output channel per group, several
//   groups): groups on partitions, one multiply-accumulate of the shifted
//   window by the per-partition weight per kernel position and input
//   channel, instead of one matmul with K = M = 1 per group.
// - depthwise dot on the Vector engine (one output channel per group, a
//   large kernel and a small output: a depthwise weight gradient): per
//   output position a product of the window and the weights, summed per
//   kernel row and then over the rows.
//
// Zero padding, lhs dilation (zeros between input elements, the input
// gradient of a strided convolution) and reads past the end are resolved
// first by copying the input into a zeroed HBM scratch of exactly the
// extent the windows read, so no loop nest ever clips a pattern.
//
//===----------------------------------------------------------------------===//
#include "passes/Tile/LoweringContext.h"
#include "passes/Tile/TileLoops.h"
#include "passes/Tile/MatmulBlocking.h"

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


/// One convolution's operands and loop bounds (the result's view is `out`,
/// `x` the input as the windows read it).
struct ConvGeom {
  bool flip; // the kernel read reversed (a transposed convolution)
  HbmView x, w, out;
  int64_t n, oh, ow, groups, cg, og, kh, kw;
  ArrayRef<int64_t> s, d;
  Type elt, outElt;
  int64_t tm, tk, tn;

  int64_t wIndexI(int64_t i) const { return flip ? kh - 1 - i : i; }
  int64_t wIndexJ(int64_t j) const { return flip ? kw - 1 - j : j; }
};

/// The window in[b, c0 + p * pstride, (y0 + y)*s + i*d, (x0 + x)*s + j*d]
/// for p < parts, y < r, x < cl, as a fresh SBUF tile [parts, r * cl], read
/// from `xRoot` (the input's buffer, or a batch loop's window of it).
Value loadWindow(LoweringContext &ctx, Location loc, const ConvGeom &g,
                 Value xRoot, int64_t b, int64_t c0, int64_t pstride,
                 int64_t parts, int64_t y0, int64_t x0, int64_t i, int64_t j,
                 int64_t r, int64_t cl) {
  const HbmView &x = g.x;
  Value t = ctx.allocSbuf(loc, parts, r * cl, g.elt);
  ctx.load(loc, t, xRoot,
           ctx.ap(x.offset + b * x.strides[0] + c0 * x.strides[1] +
                      (y0 * g.s[0] + i * g.d[0]) * x.strides[2] +
                      (x0 * g.s[1] + j * g.d[1]) * x.strides[3],
                  {pstride * x.strides[1], g.s[0] * x.strides[2],
                   g.s[1] * x.strides[3]},
                  {parts, r, cl}));
  return t;
}

/// Stores `res` [parts, r * cl] at out[b, c0 + p, y0 + y, x0 + x] through
/// `outRoot` (the result's buffer, or a batch loop's window of it).
void storeOutput(LoweringContext &ctx, Location loc, const ConvGeom &g,
                 Value outRoot, Value res, int64_t b, int64_t c0, int64_t parts,
                 int64_t y0, int64_t x0, int64_t r, int64_t cl) {
  const HbmView &out = g.out;
  ctx.dma(loc, outRoot,
          ctx.ap(out.offset + b * out.strides[0] + c0 * out.strides[1] +
                     y0 * out.strides[2] + x0 * out.strides[3],
                 {out.strides[1], out.strides[2], out.strides[3]},
                 {parts, r, cl}),
          res, ctx.tileAp(res));
}

/// The channel GEMM's output tile: `rows` output rows of `cols` columns.
std::pair<int64_t, int64_t> channelGemmTile(const ConvGeom &g) {
  int64_t cols = std::min(g.ow, g.tn), rows = std::min(g.oh, g.tn / cols);
  return {rows, cols};
}

/// The input rows and columns every kernel position of an output tile of
/// r x cl reads (the channel GEMM's slab).
std::pair<int64_t, int64_t> slabExtent(const ConvGeom &g, int64_t r,
                                       int64_t cl) {
  return {(r - 1) * g.s[0] + (g.kh - 1) * g.d[0] + 1,
          (cl - 1) * g.s[1] + (g.kw - 1) * g.d[1] + 1};
}

/// Whether the channel GEMM reads its moving tiles out of one SBUF slab per
/// (output tile, input-channel chunk) instead of one DMA per product: when
/// the products' windows overlap or skip elements (several kernel
/// positions, or a stride), and the slab is small (a sixteenth of a
/// partition).
bool channelGemmSlabs(LoweringContext &ctx, const ConvGeom &g) {
  if (g.kh * g.kw == 1 && g.s[0] == 1 && g.s[1] == 1)
    return false; // the window is the slab
  auto [rows, cols] = channelGemmTile(g);
  auto [slabRows, slabCols] = slabExtent(g, rows, cols);
  return slabRows * slabCols * eltBytes(g.elt) <=
         int64_t(ctx.machine.sbufPartitionBytes / 16);
}

/// Chunks of kernel positions for the position GEMM: whole kernel rows
/// (as many as fit `tk` partitions) when a row fits, else row segments.
struct PositionChunks {
  int64_t rowsPer, cols, count;
};
PositionChunks positionChunks(const ConvGeom &g) {
  if (g.kw <= g.tk)
    return {g.tk / g.kw, g.kw, ceilDiv(g.kh, g.tk / g.kw)};
  return {1, g.tk, g.kh * ceilDiv(g.kw, g.tk)};
}

int64_t vectorTileFree(LoweringContext &ctx) {
  return ctx.maxFree({ctx.b.getF32Type()});
}

enum class ConvNest { ChannelGemm, PackedGemm, PositionGemm, Depthwise, DepthwiseDot };

/// The loop nest with the fewest instructions (DMAs, matmuls, vector ops)
/// for this convolution, and that count.
std::pair<ConvNest, int64_t> conv2dPlan(LoweringContext &ctx,
                                        const ConvGeom &g) {
  int64_t oTiles = ceilDiv(g.og, g.tm), cTiles = ceilDiv(g.cg, g.tk);
  int64_t products = g.kh * g.kw * cTiles;
  auto [rows, cols] = channelGemmTile(g);
  int64_t outTiles = ceilDiv(g.oh, rows) * ceilDiv(g.ow, cols);
  // Weights loaded once (or per product), then a matmul per product, a DMA
  // per input-channel chunk (a slab) or per product, and a cast and a store
  // per output tile.
  int64_t windows = channelGemmSlabs(ctx, g) ? cTiles : products;
  int64_t channel = g.groups * oTiles *
                    (products + g.n * outTiles * (products + windows + 2));
  std::pair<ConvNest, int64_t> best{ConvNest::ChannelGemm, channel};
  int64_t taps = g.kh * g.kw;
  if (!g.flip && taps > 1 && taps <= g.tk) {
    int64_t chunks = ceilDiv(g.cg, g.tk / taps);
    int64_t packed =
        g.groups * oTiles * (chunks + g.n * outTiles * (2 * chunks + 2));
    if (packed < best.second)
      best = {ConvNest::PackedGemm, packed};
  }
  int64_t spatial = g.oh * g.ow;
  if (!g.flip && spatial <= g.tn) {
    int64_t blocks = ceilDiv(g.n, g.tn / spatial);
    int64_t position = g.groups * oTiles * blocks *
                       (3 * g.cg * positionChunks(g).count + 2);
    if (position < best.second)
      best = {ConvNest::PositionGemm, position};
  }
  if (g.og == 1 && g.groups > 1) {
    int64_t free = vectorTileFree(ctx);
    int64_t vcols = std::min(g.ow, free), vrows = std::min(g.oh, free / vcols);
    int64_t tiles = ceilDiv(g.oh, vrows) * ceilDiv(g.ow, vcols);
    int64_t depthwise = ceilDiv(g.groups, ctx.partitions()) *
                        (1 + g.n * tiles * (3 * g.cg * g.kh * g.kw + 2));
    if (depthwise < best.second)
      best = {ConvNest::Depthwise, depthwise};
    if (!g.flip && g.kw <= free) {
      int64_t chunks = ceilDiv(g.kh, free / g.kw);
      int64_t dot = ceilDiv(g.groups, ctx.partitions()) * g.n *
                    (g.cg * chunks * (2 + 4 * g.oh * g.ow) + 2);
      if (dot < best.second)
        best = {ConvNest::DepthwiseDot, dot};
    }
  }
  return best;
}

/// A matmul operand: an SBUF tile and the [k partitions, free] window of it
/// the matmul reads (several kernel positions may share one tile).
struct TileOperand {
  Value tile;
  nisa::AccessPatternAttr ap;
};

/// Whether the `products` stationary tiles of one output-channel chunk stay
/// resident in SBUF (a quarter of it) for the whole chunk.
bool weightsResident(LoweringContext &ctx, const ConvGeom &g,
                     int64_t products) {
  return products * g.tm * eltBytes(g.elt) <=
         (int64_t)ctx.machine.sbufPartitionBytes / 4;
}

/// The output-tiled implicit GEMM of the channel and packed nests: per
/// (group, output-channel chunk) the `products` stationary tiles
/// (weight(oc, mt, p, resident)) are loaded once when they fit a quarter
/// of SBUF (`resident`); per output tile each product's moving tile
/// (window(xRoot, gi, b, y0, x0, r, cl, p)) accumulates into one PSUM tile,
/// which is cast on the Scalar engine and stored. The batch elements after
/// the first are a tile loop (TileLoops.h).
template <typename Weight, typename Window>
void tiledGemm(LoweringContext &ctx, Location loc, const ConvGeom &g,
               int64_t products, Weight weight, Window window) {
  Type f32 = ctx.b.getF32Type();
  bool keep = weightsResident(ctx, g, products);
  int64_t rows, cols; // plain locals: the batch lambda below captures them
  std::tie(rows, cols) = channelGemmTile(g);
  for (int64_t gi = 0; gi < g.groups; ++gi)
    for (int64_t o0 = 0; o0 < g.og; o0 += g.tm) {
      int64_t mt = std::min(g.tm, g.og - o0), oc = gi * g.og + o0;
      SmallVector<TileOperand> weights;
      if (keep)
        for (int64_t p = 0; p < products; ++p)
          weights.push_back(weight(oc, mt, p, /*resident=*/true));
      // One batch element's output tiles, its input read through xRoot and
      // its result written through outRoot.
      auto image = [&](int64_t b, Value xRoot, Value outRoot) {
        for (int64_t y0 = 0; y0 < g.oh; y0 += rows)
          for (int64_t x0 = 0; x0 < g.ow; x0 += cols) {
            int64_t r = std::min(rows, g.oh - y0), cl = std::min(cols, g.ow - x0);
            Value psum =
                ctx.allocTile(loc, nisa::MemorySpace::psum, mt, r * cl, f32);
            for (int64_t p = 0; p < products; ++p) {
              TileOperand stat =
                  keep ? weights[p] : weight(oc, mt, p, /*resident=*/false);
              TileOperand mov = window(xRoot, gi, b, y0, x0, r, cl, p);
              ctx.matmul(loc, psum, ctx.tileAp(psum), stat.tile, stat.ap,
                         mov.tile, mov.ap, /*accumulate=*/p > 0);
            }
            Value res = ctx.allocSbuf(loc, mt, r * cl, g.outElt);
            ctx.copyOnScalar(loc, res, ctx.tileAp(res), psum,
                             ctx.tileAp(psum));
            storeOutput(ctx, loc, g, outRoot, res, b, oc, mt, y0, x0, r, cl);
          }
      };
      // The first image loads what the others share (a transposed weight
      // block); the others are a tile loop over the batch, the input and
      // the result windows moving one image per iteration.
      if (g.n > 0)
        image(0, g.x.root, g.out.root);
      if (g.n < 3) {
        for (int64_t b = 1; b < g.n; ++b)
          image(b, g.x.root, g.out.root);
        continue;
      }
      TileLoopScope loop(ctx.b, loc, g.n - 1,
                         {g.x.strides[0], g.out.strides[0]},
                         {g.x.root, g.out.root});
      image(1, loop.roots()[0], loop.roots()[1]);
    }
}

/// How the channel GEMM brings W[oc + m, c0 + c, i, j] on chip as its
/// stationary [c, m] tiles (c on partitions: the contraction).
enum class WeightLayout {
  /// One DMA per product straight into [c, m]: contiguous runs when m is
  /// (a 1x1 kernel's transposed weight), else single elements.
  PerProduct,
  /// Per input-channel chunk one DMA of rows [c, (m, i, j)], contiguous for
  /// each c (the transposed weight of an input gradient); each product
  /// reads its kernel position's columns at stride kh * kw.
  ChannelRows,
  /// Per input-channel chunk one DMA of rows [m, (c, i, j)], contiguous for
  /// each m (a weight in its natural layout); each kernel position's
  /// [m, c] columns are transposed to [c, m] on the Tensor Engine.
  OutputRows,
};

/// The layout with the cheapest estimated load (MatmulBlocking.h's
/// estimate) for resident weights whose kernel positions are contiguous.
WeightLayout channelWeightLayout(LoweringContext &ctx, const ConvGeom &g) {
  const HbmView &w = g.w;
  int64_t taps = g.kh * g.kw;
  bool tapsContiguous = (g.kw == 1 || w.strides[3] == 1) &&
                        (g.kh == 1 || w.strides[2] == g.kw);
  if (!tapsContiguous || w.strides[0] == 1 ||
      !weightsResident(ctx, g, taps * ceilDiv(g.cg, g.tk)))
    return WeightLayout::PerProduct;
  if (w.strides[0] == taps)
    return WeightLayout::ChannelRows;
  int64_t cc = std::min(g.tk, g.cg), mt = std::min(g.tm, g.og);
  if (w.strides[1] == taps &&
      transposedRowsBeatGather(ctx.machine, eltBytes(g.elt), cc, mt,
                               cc * taps * eltBytes(g.elt), taps))
    return WeightLayout::OutputRows;
  return WeightLayout::PerProduct;
}

/// Transposes the [m, c] columns of each kernel position t of `rows`
/// ([mt, (c, t)] at stride `taps`) on the Tensor Engine, a PSUM bank of
/// kernel positions at a time: returns [cc, (t, m)] in the weight's type.
Value transposeKernelPositions(LoweringContext &ctx, Location loc,
                               const ConvGeom &g, Value rows, int64_t mt,
                               int64_t cc, int64_t taps) {
  Value ident = ctx.identity(loc, g.elt);
  Value out = ctx.allocSbuf(loc, cc, taps * mt, g.elt);
  int64_t perBank = std::max<int64_t>(
      1, std::min<int64_t>(g.tn, ctx.machine.psumBankBytes / 4) / mt);
  bool onVector = false;
  for (int64_t t0 = 0; t0 < taps; t0 += perBank) {
    int64_t n = std::min(perBank, taps - t0);
    Value ps = ctx.allocTile(loc, nisa::MemorySpace::psum, cc, n * mt,
                             ctx.b.getF32Type());
    for (int64_t k = 0; k < n; ++k)
      ctx.matmul(loc, ps, ctx.ap(k * mt, {n * mt, 1}, {cc, mt}), rows,
                 ctx.ap(t0 + k, {cc * taps, taps}, {mt, cc}), ident,
                 ctx.tileAp(ident, mt, mt), /*accumulate=*/false,
                 /*transpose=*/true);
    auto dstAp = ctx.ap(t0 * mt, {taps * mt, 1}, {cc, n * mt});
    if (onVector)
      ctx.copyOnVector(loc, out, dstAp, ps, ctx.tileAp(ps));
    else
      ctx.copyOnScalar(loc, out, dstAp, ps, ctx.tileAp(ps));
    onVector = !onVector;
  }
  return out;
}

/// The channel GEMM: product p is input-channel chunk c0 (<= tk channels on
/// partitions) and kernel position (i, j), the chunk outermost.
void lowerChannelGemm(LoweringContext &ctx, Location loc, const ConvGeom &g) {
  const HbmView &w = g.w, &x = g.x;
  int64_t cTiles = ceilDiv(g.cg, g.tk), taps = g.kh * g.kw;
  auto product = [&](int64_t p) {
    int64_t c0 = (p / taps) * g.tk;
    return std::make_tuple((p % taps) / g.kw, p % g.kw, c0,
                           std::min(g.tk, g.cg - c0));
  };
  WeightLayout layout = channelWeightLayout(ctx, g);
  // The rows of the current output-channel chunk, per input-channel chunk.
  int64_t rowsOc = -1;
  SmallVector<Value> rowBlocks;
  // Stationary W[oc + m, c0 + c, i, j] as [c, m].
  auto weight = [&](int64_t oc, int64_t mt, int64_t p, bool resident) {
    auto [i, j, c0, cc] = product(p);
    int64_t tap = g.wIndexI(i) * g.kw + g.wIndexJ(j);
    int64_t base = w.offset + oc * w.strides[0] + c0 * w.strides[1];
    if (!resident || layout == WeightLayout::PerProduct) {
      Value t = ctx.allocSbuf(loc, cc, mt, g.elt);
      ctx.dma(loc, t, ctx.tileAp(t), w.root,
              ctx.ap(base + g.wIndexI(i) * w.strides[2] +
                         g.wIndexJ(j) * w.strides[3],
                     {w.strides[1], w.strides[0]}, {cc, mt}));
      return TileOperand{t, ctx.tileAp(t)};
    }
    if (rowsOc != oc)
      rowsOc = oc, rowBlocks.assign(cTiles, Value());
    Value &block = rowBlocks[c0 / g.tk];
    if (layout == WeightLayout::ChannelRows) {
      if (!block) {
        block = ctx.allocSbuf(loc, cc, mt * taps, g.elt);
        ctx.dma(loc, block, ctx.tileAp(block), w.root,
                ctx.ap(base, {w.strides[1], 1}, {cc, mt * taps}));
      }
      return TileOperand{block, ctx.ap(tap, {mt * taps, taps}, {cc, mt})};
    }
    if (!block) {
      Value rows = ctx.allocSbuf(loc, mt, cc * taps, g.elt);
      ctx.dma(loc, rows, ctx.tileAp(rows), w.root,
              ctx.ap(base, {w.strides[0], 1}, {mt, cc * taps}));
      block = transposeKernelPositions(ctx, loc, g, rows, mt, cc, taps);
    }
    return TileOperand{block, ctx.ap(tap * mt, {taps * mt, 1}, {cc, mt})};
  };
  // Moving tiles: with slabs, the input rows an output tile reads, per
  // input-channel chunk, come in by one DMA [cc, slabRows * slabCols] (one
  // run per partition when the tile spans the input's width) and each
  // product reads its shifted, strided window from SBUF (im2col as an
  // access pattern); products run chunk by chunk, so one slab is live at a
  // time. Else one DMA per product of its window.
  bool slabs = channelGemmSlabs(ctx, g);
  std::tuple<int64_t, int64_t, int64_t, int64_t, int64_t> slabKey{-1, 0, 0, 0, 0};
  Value slab;
  auto window = [&](Value xRoot, int64_t gi, int64_t b, int64_t y0,
                    int64_t x0, int64_t r, int64_t cl, int64_t p) {
    auto [i, j, c0, cc] = product(p);
    if (!slabs) {
      Value t = loadWindow(ctx, loc, g, xRoot, b, gi * g.cg + c0, 1, cc, y0,
                           x0, i, j, r, cl);
      return TileOperand{t, ctx.tileAp(t)};
    }
    auto [slabRows, slabCols] = slabExtent(g, r, cl);
    std::tuple<int64_t, int64_t, int64_t, int64_t, int64_t> key{gi, b, y0, x0,
                                                                c0};
    // A slab of another block (a batch loop's body, closed since) is not
    // reused: its key names the body's image, not one here.
    if (key != slabKey || slab.getParentBlock() != ctx.b.getInsertionBlock()) {
      slabKey = key;
      slab = ctx.allocSbuf(loc, cc, slabRows * slabCols, g.elt);
      ctx.dma(loc, slab, ctx.tileAp(slab), xRoot,
              ctx.ap(x.offset + b * x.strides[0] +
                         (gi * g.cg + c0) * x.strides[1] +
                         y0 * g.s[0] * x.strides[2] +
                         x0 * g.s[1] * x.strides[3],
                     {x.strides[1], x.strides[2], x.strides[3]},
                     {cc, slabRows, slabCols}));
    }
    return TileOperand{slab, ctx.ap(i * g.d[0] * slabCols + j * g.d[1],
                                    {slabRows * slabCols, g.s[0] * slabCols,
                                     g.s[1]},
                                    {cc, r, cl})};
  };
  tiledGemm(ctx, loc, g, g.kh * g.kw * cTiles, weight, window);
}

/// The packed GEMM (no flip; kh * kw <= tk): as the channel GEMM, but
/// product q holds every kernel position of floor(tk / (kh * kw)) input
/// channels on partitions, [(c, i, j), m], so a 7x7 stem over 3 channels is
/// 2 matmuls (K = 98 and 49) per output tile, not 49 with K = 3.
void lowerPackedGemm(LoweringContext &ctx, Location loc, const ConvGeom &g) {
  const HbmView &x = g.x, &w = g.w;
  ArrayRef<int64_t> s = g.s, d = g.d;
  int64_t taps = g.kh * g.kw, per = g.tk / taps;
  auto channels = [&](int64_t q) {
    return std::make_pair(q * per, std::min(per, g.cg - q * per));
  };
  auto weight = [&](int64_t oc, int64_t mt, int64_t q, bool) {
    auto [c0, cc] = channels(q);
    Value t = ctx.allocSbuf(loc, cc * taps, mt, g.elt);
    ctx.dma(loc, t, ctx.tileAp(t), w.root,
            ctx.ap(w.offset + oc * w.strides[0] + c0 * w.strides[1],
                   {w.strides[1], w.strides[2], w.strides[3], w.strides[0]},
                   {cc, g.kh, g.kw, mt}));
    return TileOperand{t, ctx.tileAp(t)};
  };
  auto window = [&](Value xRoot, int64_t gi, int64_t b, int64_t y0,
                    int64_t x0, int64_t r, int64_t cl, int64_t q) {
    auto [c0, cc] = channels(q);
    Value t = ctx.allocSbuf(loc, cc * taps, r * cl, g.elt);
    ctx.load(loc, t, xRoot,
             ctx.ap(x.offset + b * x.strides[0] +
                        (gi * g.cg + c0) * x.strides[1] +
                        y0 * s[0] * x.strides[2] + x0 * s[1] * x.strides[3],
                    {x.strides[1], d[0] * x.strides[2], d[1] * x.strides[3],
                     s[0] * x.strides[2], s[1] * x.strides[3]},
                    {cc, g.kh, g.kw, r, cl}));
    return TileOperand{t, ctx.tileAp(t)};
  };
  tiledGemm(ctx, loc, g, ceilDiv(g.cg, per), weight, window);
}

/// The position GEMM (no flip; oh * ow <= tn): per (group, output-channel
/// chunk, batch block) one PSUM tile [o, (b, y, x)] accumulates, over input
/// channels c and kernel-position chunks P, stationary W[o, c, P] as [P, o]
/// times moving in[b, c, y*s + P] as [P, (b, y, x)].
void lowerPositionGemm(LoweringContext &ctx, Location loc, const ConvGeom &g) {
  const HbmView &x = g.x, &w = g.w, &out = g.out;
  ArrayRef<int64_t> s = g.s, d = g.d;
  Type f32 = ctx.b.getF32Type();
  int64_t spatial = g.oh * g.ow, perBlock = g.tn / spatial;
  PositionChunks pc = positionChunks(g);
  for (int64_t gi = 0; gi < g.groups; ++gi)
    for (int64_t o0 = 0; o0 < g.og; o0 += g.tm) {
      int64_t mt = std::min(g.tm, g.og - o0), oc = gi * g.og + o0;
      for (int64_t b0 = 0; b0 < g.n; b0 += perBlock) {
        int64_t nb = std::min(perBlock, g.n - b0);
        Value psum = ctx.allocTile(loc, nisa::MemorySpace::psum, mt,
                                   nb * spatial, f32);
        bool first = true;
        for (int64_t c = 0; c < g.cg; ++c)
          for (int64_t q = 0; q < pc.count; ++q) {
            // Chunk q: kernel rows [i0, i0 + rows), columns [j0, j0 + cols).
            int64_t i0, j0, rows, cols;
            if (pc.cols == g.kw) {
              i0 = q * pc.rowsPer, j0 = 0, cols = g.kw;
              rows = std::min(pc.rowsPer, g.kh - i0);
            } else {
              int64_t segs = ceilDiv(g.kw, g.tk);
              i0 = q / segs, j0 = (q % segs) * g.tk, rows = 1;
              cols = std::min(g.tk, g.kw - j0);
            }
            Value stat = ctx.allocSbuf(loc, rows * cols, mt, g.elt);
            ctx.dma(loc, stat, ctx.tileAp(stat), w.root,
                    ctx.ap(w.offset + oc * w.strides[0] + c * w.strides[1] +
                               i0 * w.strides[2] + j0 * w.strides[3],
                           {w.strides[2], w.strides[3], w.strides[0]},
                           {rows, cols, mt}));
            Value mov = ctx.allocSbuf(loc, rows * cols, nb * spatial, g.elt);
            ctx.dma(loc, mov, ctx.tileAp(mov), x.root,
                    ctx.ap(x.offset + b0 * x.strides[0] +
                               (gi * g.cg + c) * x.strides[1] +
                               i0 * d[0] * x.strides[2] +
                               j0 * d[1] * x.strides[3],
                           {d[0] * x.strides[2], d[1] * x.strides[3],
                            x.strides[0], s[0] * x.strides[2],
                            s[1] * x.strides[3]},
                           {rows, cols, nb, g.oh, g.ow}));
            ctx.matmul(loc, psum, ctx.tileAp(psum), stat, ctx.tileAp(stat),
                       mov, ctx.tileAp(mov), /*accumulate=*/!first);
            first = false;
          }
        Value res = ctx.allocSbuf(loc, mt, nb * spatial, g.outElt);
        ctx.copyOnScalar(loc, res, ctx.tileAp(res), psum, ctx.tileAp(psum));
        ctx.dma(loc, out.root,
                ctx.ap(out.offset + b0 * out.strides[0] + oc * out.strides[1],
                       {out.strides[1], out.strides[0], out.strides[2],
                        out.strides[3]},
                       {mt, nb, g.oh, g.ow}),
                res, ctx.tileAp(res));
      }
    }
}

/// Depthwise on the Vector engine (og == 1): groups on partitions; per
/// output tile, acc = sum over (c, i, j) of the shifted window times the
/// weight column W[g, c, i, j] (a stride-0 broadcast of one element per
/// partition), in float32.
void lowerDepthwise(LoweringContext &ctx, Location loc, const ConvGeom &g) {
  const HbmView &w = g.w;
  Type f32 = ctx.b.getF32Type();
  int64_t free = vectorTileFree(ctx);
  int64_t cols = std::min(g.ow, free), rows = std::min(g.oh, free / cols);
  int64_t taps = g.cg * g.kh * g.kw;
  for (int64_t g0 = 0; g0 < g.groups; g0 += ctx.partitions()) {
    int64_t gc = std::min(ctx.partitions(), g.groups - g0);
    // W[g0 + p, c, i, j] as [p, (c, i, j)].
    Value wt = ctx.allocSbuf(loc, gc, taps, g.elt);
    ctx.dma(loc, wt, ctx.tileAp(wt), w.root,
            ctx.ap(w.offset + g0 * w.strides[0],
                   {w.strides[0], w.strides[1], w.strides[2], w.strides[3]},
                   {gc, g.cg, g.kh, g.kw}));
    for (int64_t b = 0; b < g.n; ++b)
      for (int64_t y0 = 0; y0 < g.oh; y0 += rows)
        for (int64_t x0 = 0; x0 < g.ow; x0 += cols) {
          int64_t r = std::min(rows, g.oh - y0), cl = std::min(cols, g.ow - x0);
          Value acc = ctx.allocSbuf(loc, gc, r * cl, f32);
          Value prod = ctx.allocSbuf(loc, gc, r * cl, f32);
          for (int64_t c = 0; c < g.cg; ++c)
            for (int64_t i = 0; i < g.kh; ++i)
              for (int64_t j = 0; j < g.kw; ++j) {
                Value mov = loadWindow(ctx, loc, g, g.x.root, b, g0 * g.cg + c, g.cg, gc,
                                       y0, x0, i, j, r, cl);
                int64_t tap = (c * g.kh + g.wIndexI(i)) * g.kw + g.wIndexJ(j);
                auto column = ctx.ap(tap, {taps, 0}, {gc, r * cl});
                bool firstTap = c == 0 && i == 0 && j == 0;
                Value dst = firstTap ? acc : prod;
                ctx.tensorTensor(loc, nisa::AluOp::multiply, dst, ctx.tileAp(dst),
                                 mov, ctx.tileAp(mov), wt, column);
                if (!firstTap)
                  ctx.tensorTensor(loc, nisa::AluOp::add, acc, ctx.tileAp(acc),
                                   acc, ctx.tileAp(acc), prod,
                                   ctx.tileAp(prod));
              }
          Value res = acc;
          if (g.outElt != f32) {
            res = ctx.allocSbuf(loc, gc, r * cl, g.outElt);
            ctx.copyOnVector(loc, res, ctx.tileAp(res), acc, ctx.tileAp(acc));
          }
          storeOutput(ctx, loc, g, g.out.root, res, b, g0, gc, y0, x0, r, cl);
        }
  }
}

/// Depthwise with a large kernel and a small output on the Vector engine
/// (og == 1; a depthwise weight gradient): groups on partitions; per output
/// position, input channel c and chunk of kernel rows, the window times
/// W[g, c, rows, :] is summed per kernel row, then over the rows (blocked
/// sums, not one sequential sum over the map), and added into the output.
void lowerDepthwiseDot(LoweringContext &ctx, Location loc, const ConvGeom &g) {
  const HbmView &x = g.x, &w = g.w;
  ArrayRef<int64_t> s = g.s, d = g.d;
  Type f32 = ctx.b.getF32Type();
  int64_t rowsPer = vectorTileFree(ctx) / g.kw, spatial = g.oh * g.ow;
  for (int64_t g0 = 0; g0 < g.groups; g0 += ctx.partitions()) {
    int64_t gc = std::min(ctx.partitions(), g.groups - g0);
    for (int64_t b = 0; b < g.n; ++b) {
      Value acc = ctx.allocSbuf(loc, gc, spatial, f32);
      Value part = ctx.allocSbuf(loc, gc, spatial, f32);
      bool first = true;
      for (int64_t c = 0; c < g.cg; ++c)
        for (int64_t i0 = 0; i0 < g.kh; i0 += rowsPer) {
          int64_t rows = std::min(rowsPer, g.kh - i0), len = rows * g.kw;
          Value wt = ctx.allocSbuf(loc, gc, len, g.elt);
          ctx.dma(loc, wt, ctx.tileAp(wt), w.root,
                  ctx.ap(w.offset + g0 * w.strides[0] + c * w.strides[1] +
                             i0 * w.strides[2],
                         {w.strides[0], w.strides[2], w.strides[3]},
                         {gc, rows, g.kw}));
          // Into `acc` directly for the first (c, chunk), else into `part`.
          Value sums = first ? acc : part;
          for (int64_t y = 0; y < g.oh; ++y)
            for (int64_t xo = 0; xo < g.ow; ++xo) {
              Value mov = ctx.allocSbuf(loc, gc, len, g.elt);
              ctx.dma(loc, mov, ctx.tileAp(mov), x.root,
                      ctx.ap(x.offset + b * x.strides[0] +
                                 (g0 * g.cg + c) * x.strides[1] +
                                 (y * s[0] + i0 * d[0]) * x.strides[2] +
                                 xo * s[1] * x.strides[3],
                             {g.cg * x.strides[1], d[0] * x.strides[2],
                              d[1] * x.strides[3]},
                             {gc, rows, g.kw}));
              Value prod = ctx.allocSbuf(loc, gc, len, f32);
              ctx.tensorTensor(loc, nisa::AluOp::multiply, prod, ctx.tileAp(prod),
                               mov, ctx.tileAp(mov), wt, ctx.tileAp(wt));
              Value rowSums = ctx.allocSbuf(loc, gc, rows, f32);
              ctx.tensorReduce(loc, nisa::AluOp::add, rowSums,
                               ctx.tileAp(rowSums), prod,
                               ctx.ap(0, {len, g.kw, 1}, {gc, rows, g.kw}));
              ctx.tensorReduce(loc, nisa::AluOp::add, sums,
                               ctx.ap(y * g.ow + xo, {spatial, 1}, {gc, 1}),
                               rowSums, ctx.tileAp(rowSums));
            }
          if (!first)
            ctx.tensorTensor(loc, nisa::AluOp::add, acc, ctx.tileAp(acc), acc,
                             ctx.tileAp(acc), part, ctx.tileAp(part));
          first = false;
        }
      Value res = acc;
      if (g.outElt != f32) {
        res = ctx.allocSbuf(loc, gc, spatial, g.outElt);
        ctx.copyOnVector(loc, res, ctx.tileAp(res), acc, ctx.tileAp(acc));
      }
      storeOutput(ctx, loc, g, g.out.root, res, b, g0, gc, 0, 0, g.oh, g.ow);
    }
  }
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
  int64_t groups = conv.getGroups(), cg = w.shape[1];
  int64_t kh = w.shape[2], kw = w.shape[3];
  ArrayRef<int64_t> s = conv.getStride(), d = conv.getDilation();
  if (n == 0 || o == 0 || oh == 0 || ow == 0)
    return success();
  if (cg == 0 || kh == 0 || kw == 0)
    return op->emitOpError("conv_empty: an empty contraction (no input "
                           "channels or an empty kernel) is unsupported");
  ConvGeom g{conv.getFlip(),
             paddedInput(ctx, loc, in, conv, (oh - 1) * s[0] + (kh - 1) * d[0] + 1,
                         (ow - 1) * s[1] + (kw - 1) * d[1] + 1),
             w,
             out,
             n,
             oh,
             ow,
             groups,
             cg,
             o / groups,
             kh,
             kw,
             s,
             d,
             in.elementType(),
             out.elementType(),
             std::min<int64_t>(ctx.machine.matmulMaxM, ctx.partitions()),
             std::min<int64_t>(ctx.machine.matmulMaxK, ctx.partitions()),
             ctx.machine.matmulMaxN};
  switch (conv2dPlan(ctx, g).first) {
  case ConvNest::ChannelGemm:
    lowerChannelGemm(ctx, loc, g);
    break;
  case ConvNest::PackedGemm:
    lowerPackedGemm(ctx, loc, g);
    break;
  case ConvNest::PositionGemm:
    lowerPositionGemm(ctx, loc, g);
    break;
  case ConvNest::Depthwise:
    lowerDepthwise(ctx, loc, g);
    break;
  case ConvNest::DepthwiseDot:
    lowerDepthwiseDot(ctx, loc, g);
    break;
  }
  return success();
}
