//===- LowerAttention.cpp - trn.attention(_grad) as one group each --------===//
//
// Attention lowered as one fusion group per (batch, head): q, k, v (and in
// the gradient dout, out, lse) are read from HBM once, the results written
// once; the [L, S] scores, probabilities and their gradients live only in
// PSUM and SBUF, one block of <= 128 query rows at a time.
//
// Forward, per block of r query rows (queries on partitions, keys free): a
// row of up to four PSUM banks (2048 keys) is one softmax block, a longer
// row is walked in blocks of two banks (1024 keys; kRowBanks, kBlockBanks):
//   S_c   = Q^T . K^T[:, c]          Tensor   PSUM [r, <=512] per key chunk c
//   (causal: the chunk crossing the diagonal gets a -1e30 mask added by
//    an identity matmul, kMasked; key chunks wholly above it are never computed)
//   m'    = max(m, max_c rowmax(S_c))   Vector   [r, 1]
//   P     = exp(scale * S - scale*m')   Scalar   SBUF [r, block] in v's type
//   [O_b | s_b] = sum_kb P^T_kb . [V_kb | 1]   Tensor   PSUM [r, Ev + 1]
//                 (P^T by transposes; V's column of ones sums P's rows)
//   f     = exp(scale*m - scale*m')  (FlashAttention's online softmax)
//   [O | s] = [O | s] * f + [O_b | s_b]  (fp32 SBUF)
//   out   = O / s, lse = log s + scale*m
// A row of one block needs no rescaling: O stays in PSUM. Any
// key count is lowered while K^T and the K, V rows of a head fit in SBUF
// beside the working tiles (residentBytes; attention_ops.eligible mirrors it).
//
// Gradient (FlashAttention-2's recomputation from lse), per query block:
//   D     = rowsum(dout * out);  P_c = exp(scale * S_c - lse)
//   dP_c  = dout^T . V^T[:, c]            dS_c = P_c * (dP_c - D)
//   dV_kb += P_c,kb^T dout  and  dK_kb += dS_c,kb^T Q   (fp32 SBUF sums)
//   dQ    += dS_c,kb^T^T . K_kb           (PSUM, over the whole row)
// then dq = scale * dQ; after the last block dk = scale * dK, dv = dV. The
// key chunks are independent given lse and D, so they are scored one at a
// time: any S whose resident tiles fit SBUF is lowered (residentBytes, as the
// forward). Results
// are written sequence-major ([N, T, H, E], as the fused CPU kernel's out).
//
// Operands whose head dim is contiguous (the usual [.., seq, head] rows)
// are loaded as rows and transposed on the Tensor Engine; PSUM is copied
// out alternately on the Scalar and Vector engines.
//
// The groups of heads after the first (every batch element, every group of
// heads) are tile loops (TileLoops.h) over one group, each operand and
// result walked through a window moving a group per iteration.
//
//===----------------------------------------------------------------------===//
#include "passes/Tile/LoweringContext.h"
#include "passes/Tile/TileLoops.h"

#include "dialects/Trn/TrnOps.h"

#include "llvm/ADT/APFloat.h"

#include <functional>
#include <limits>

using namespace mlir;
using namespace trnc;
using namespace trnc::tile;

namespace {

/// PSUM banks (of eight) of scores a row of one forward softmax block may
/// take (no rescaling), and those of each block of a longer row: two let the
/// next block's scores fill free banks while this one's exp and P V run.
/// Measured (bf16, 4096 and 8192 keys, trn2): two-bank blocks 4-12% faster
/// than four and 3-8% faster than one; at 2048 keys one block is as fast as
/// any split and the fewest instructions.
constexpr int64_t kRowBanks = 4, kBlockBanks = 2;
/// SBUF bytes per partition kept for the working tiles of one query block
/// (scores, probabilities, transposes, outputs, double buffering) beside the
/// resident keys and values.
constexpr int64_t kWorkingBytes = 64 * 1024;
/// The causal mask added to a diagonal block of scores: finite, so that the
/// zeros of the identity that adds it on the Tensor Engine stay zeros (0 *
/// -inf is NaN), and far below any score, so exp of it is 0.
constexpr double kMasked = -1e30;

/// The element type of the mask and of the identity that adds it: the
/// operands' when kMasked is finite in it (fp32, bf16), else bf16 (same
/// Tensor Engine rate). fp16 ends at 65504: there kMasked would be -inf, and
/// every score the product touches NaN.
Type maskType(Builder &b, Type elt) {
  bool lost = false;
  llvm::APFloat masked(kMasked);
  masked.convert(cast<FloatType>(elt).getFloatSemantics(),
                 llvm::APFloat::rmNearestTiesToEven, &lost);
  return masked.isFinite() ? elt : b.getBF16Type();
}

/// Columns of -D that dO's rows carry in the gradient's folded dP - D (and
/// of ones in V's): one in fp32, hi and lo in a 16-bit type (backwardGroup).
int64_t foldColumns(int64_t eltBytes) { return eltBytes < 4 ? 2 : 1; }
int64_t foldColumns(Type elt) {
  return foldColumns(elt.getIntOrFloatBitWidth() / 8);
}

/// `count` heads (h0, h0 + 1, ..) of one batch element of an attention
/// operand or result: head g's element (row i, column c) is at offset +
/// g * headStride + i * rowStride + c * colStride.
struct Heads {
  Value root;
  int64_t offset = 0, rowStride = 0, headStride = 0, colStride = 0;
  int64_t rows = 0, cols = 0, count = 0;
  Type elt;
  /// Free elements per head of the tiles holding them on chip: cols, or
  /// more when an extra column rides along (the gradient's -D).
  int64_t pitch = 0;
  int64_t tilePitch() const { return pitch ? pitch : cols; }
  /// Free elements of a tile holding one row of every head.
  int64_t width() const { return count * tilePitch(); }
};

/// Heads [h0, h0 + count) of batch element `n` of a 4-D view whose row and
/// head dims are `rowDim` and `headDim` (the last dim is the columns).
Heads headsOf(const HbmView &v, int64_t n, int64_t h0, int64_t count,
              unsigned rowDim, unsigned headDim) {
  int64_t offset = v.offset + n * v.strides[0] + h0 * v.strides[headDim];
  return Heads{v.root,       offset,         v.strides[rowDim],
               v.strides[headDim], v.strides[3], v.shape[rowDim],
               v.shape[3],   count,          v.elementType()};
}

/// Of a [N, H, rows, cols] view (the operands).
Heads headMajor(const HbmView &v, int64_t n, int64_t h0, int64_t count) {
  return headsOf(v, n, h0, count, /*rowDim=*/2, /*headDim=*/1);
}

/// Of a sequence-major [N, T, H, C] view (the results).
Heads seqMajor(const HbmView &v, int64_t n, int64_t h0, int64_t count) {
  return headsOf(v, n, h0, count, /*rowDim=*/1, /*headDim=*/2);
}

/// Of the lse view [N, H, L]: one fp32 column per head.
Heads lseHeads(const HbmView &v, int64_t n, int64_t h0, int64_t count) {
  return Heads{v.root, v.offset + n * v.strides[0] + h0 * v.strides[1],
               v.strides[2], v.strides[1], 1, v.shape[2], 1, count,
               v.elementType()};
}

/// A [parts, width] window of a tile starting at free offset `offset`: a
/// block of a transposed operand, one head's rows of a group's tile.
struct Block {
  Value tile;
  int64_t offset = 0, parts = 0;
};

/// One fp32 value per partition: column `at` of a [P, count] tile.
struct Column {
  Value tile;
  int64_t at = 0;
};

class AttentionEmitter {
public:
  AttentionEmitter(LoweringContext &ctx, Location loc, Type elt, double scale,
                   bool causal)
      : ctx(ctx), loc(loc), elt(elt), scale(scale), causal(causal),
        copyStream(ctx.nextCopyStream++) {}

  void forwardGroup(const Heads &q, const Heads &k, const Heads &v,
                    const Heads &out, const Heads &lse);
  void backwardGroup(const Heads &dout, const Heads &q, const Heads &k,
                     const Heads &v, const Heads &out, const Heads &lse,
                     const Heads &dq, const Heads &dk, const Heads &dv);

  /// Key chunk width: one fp32 PSUM bank.
  int64_t chunk() const { return ctx.machine.psumBankBytes / 4; }
  /// Keys per softmax block of a forward row of `keys`: a block's chunks
  /// stay in PSUM until its row max is known.
  int64_t blockKeys(int64_t keys) const {
    return keys <= kRowBanks * chunk() ? keys : kBlockBanks * chunk();
  }
  int64_t parts() const { return ctx.partitions(); }

private:
  Value psum(int64_t p, int64_t f) {
    return ctx.allocTile(loc, nisa::MemorySpace::psum, p, f, ctx.b.getF32Type());
  }
  Value f32Tile(int64_t p, int64_t f) {
    return ctx.allocSbuf(loc, p, f, ctx.b.getF32Type());
  }
  nisa::AccessPatternAttr window(Value tile, int64_t offset, int64_t p,
                                 int64_t f) {
    auto t = cast<nisa::TileType>(tile.getType());
    return ctx.ap(offset, {t.getFreeSize(), 1}, {p, f});
  }
  nisa::AccessPatternAttr window(const Block &b, int64_t f) {
    return window(b.tile, b.offset, b.parts, f);
  }
  nisa::AccessPatternAttr column(const Column &c, int64_t r) {
    return window(c.tile, c.at, r, 1);
  }
  /// [r, f] of a per-row value broadcast along f free elements.
  nisa::AccessPatternAttr broadcast(const Column &c, int64_t r, int64_t f) {
    auto t = cast<nisa::TileType>(c.tile.getType());
    return ctx.ap(c.at, {t.getFreeSize(), 0}, {r, f});
  }
  /// dst = func(src * scale + bias[p]) with the bias a column of a tile.
  void activation(nisa::ActFunc func, Value dst, nisa::AccessPatternAttr dstAp,
                  Value src, nisa::AccessPatternAttr srcAp, const Column &bias,
                  int64_t r, double s) {
    ctx.b.create<nisa::ActivationOp>(
        loc, nisa::ActFuncAttr::get(ctx.b.getContext(), func), dst, dstAp, src,
        srcAp, bias.tile, column(bias, r), ctx.b.getF32FloatAttr(s),
        ctx.b.getF32FloatAttr(0.0), DenseI64ArrayAttr(), IntegerAttr());
  }
  /// PSUM -> SBUF, alternating Scalar and Vector; with onlyVector, as
  /// x - 0 (exact, NaN included), which of the engines reading PSUM only
  /// Vector runs, so the list scheduler keeps it there.
  void evacuate(Value dst, nisa::AccessPatternAttr dstAp, Value src,
                nisa::AccessPatternAttr srcAp) {
    if (onlyVector) {
      ctx.tensorScalar(loc, dst, dstAp, src, srcAp, nisa::AluOp::subtract, 0.0);
      return;
    }
    ctx.copyAlternating(loc, dst, dstAp, src, srcAp, copyStream);
  }

  /// Rows r0..r0+rows of every head of `m`: [rows, m.width()], one DMA.
  Value loadRows(const Heads &m, int64_t r0, int64_t rows);
  void storeRows(const Heads &m, int64_t r0, Value tile);
  /// All rows of every head of `m` as 128-row blocks side by side: block b
  /// (rows b * P..) at free offset b * m.width(); one DMA of the whole
  /// blocks, one of a partial last block.
  Value loadBlocks(const Heads &m);
  void storeBlocks(const Heads &m, Value tile);
  /// Head h's block b of such a tile.
  Block blockOf(const Heads &m, Value tile, int64_t b, int64_t h) {
    return {tile, b * m.width() + h * m.tilePitch(),
            std::min(parts(), m.rows - b * parts())};
  }
  /// Blocks [<= P rows, cols] of consecutive rows -> one [cols, rows] tile.
  Value transposeBlocks(ArrayRef<Block> blocks, int64_t cols);
  /// The 128-column blocks of src[0:r, c0:c0 + width], transposed.
  SmallVector<Block> transposeColumns(Value src, int64_t r, int64_t c0,
                                      int64_t width);
  /// Scores of query rows q0..q0+r (qT: a [E, r] window) against keys
  /// begin..end, [r, end - begin] in PSUM (one matmul per bank); with
  /// `masked`, the causal mask added on the Tensor Engine where the keys
  /// reach the diagonal.
  Value scores(const Block &qT, Value kT, int64_t q0, int64_t r, int64_t begin,
               int64_t end, bool masked);
  /// Width of the causal diagonal block of query rows q0..q0+r among keys
  /// begin..end (keys q0.. of it), 0 when no key there is masked.
  int64_t diagonal(int64_t q0, int64_t r, int64_t begin, int64_t end) const {
    int64_t w = std::min(end, q0 + r) - q0;
    return causal && w >= 2 && q0 >= begin ? w : 0;
  }
  /// One head's softmax row times V into `result` (a [r, ev] window),
  /// its row sum and -scale * max into the columns for the lse.
  void attendRow(const Block &qT, Value kT, const Heads &v, Value vTile,
                 int64_t h,
                 int64_t q0, int64_t r, int64_t keys, const Block &result,
                 const Column &sum, const Column &bias);
  int64_t keysFor(int64_t q0, int64_t r, int64_t s) const {
    return causal ? std::min(s, q0 + r) : s;
  }

  LoweringContext &ctx;
  Location loc;
  Type elt;
  double scale;
  bool causal;
  /// Its PSUM copies' stream (LoweringContext::copyAlternating).
  int64_t copyStream;
  /// Every evacuation on Vector (the gradient: its exps fill Scalar).
  bool onlyVector = false;
  /// [P, P] of maskType(elt): kMasked above the diagonal, 0 on and below it.
  Value mask;
};

Value AttentionEmitter::loadRows(const Heads &m, int64_t r0, int64_t rows) {
  Value t = ctx.allocSbuf(loc, rows, m.width(), m.elt);
  ctx.dma(loc, t, ctx.ap(0, {m.width(), m.tilePitch(), 1}, {rows, m.count, m.cols}),
          m.root,
          ctx.ap(m.offset + r0 * m.rowStride,
                 {m.rowStride, m.headStride, m.colStride},
                 {rows, m.count, m.cols}));
  return t;
}

void AttentionEmitter::storeRows(const Heads &m, int64_t r0, Value tile) {
  int64_t rows = cast<nisa::TileType>(tile.getType()).getPartitions();
  ctx.dma(loc, m.root,
          ctx.ap(m.offset + r0 * m.rowStride,
                 {m.rowStride, m.headStride, m.colStride},
                 {rows, m.count, m.cols}),
          tile, ctx.tileAp(tile, rows, m.width()));
}

Value AttentionEmitter::loadBlocks(const Heads &m) {
  const int64_t p = parts(), w = m.width(), full = m.rows / p,
                tail = m.rows % p, blocks = full + (tail ? 1 : 0);
  Value t = ctx.allocSbuf(loc, std::min(p, m.rows), blocks * w, m.elt);
  if (full)
    ctx.dma(loc, t,
            ctx.ap(0, {blocks * w, w, m.tilePitch(), 1},
                   {p, full, m.count, m.cols}),
            m.root,
            ctx.ap(m.offset,
                   {m.rowStride, p * m.rowStride, m.headStride, m.colStride},
                   {p, full, m.count, m.cols}));
  if (tail)
    ctx.dma(loc, t,
            ctx.ap(full * w, {blocks * w, m.tilePitch(), 1},
                   {tail, m.count, m.cols}),
            m.root,
            ctx.ap(m.offset + full * p * m.rowStride,
                   {m.rowStride, m.headStride, m.colStride},
                   {tail, m.count, m.cols}));
  return t;
}

void AttentionEmitter::storeBlocks(const Heads &m, Value t) {
  const int64_t p = parts(), w = m.width(), full = m.rows / p,
                tail = m.rows % p, blocks = full + (tail ? 1 : 0);
  if (full)
    ctx.dma(loc, m.root,
            ctx.ap(m.offset,
                   {m.rowStride, p * m.rowStride, m.headStride, m.colStride},
                   {p, full, m.count, m.cols}),
            t, ctx.ap(0, {blocks * w, w, 1}, {p, full, w}));
  if (tail)
    ctx.dma(loc, m.root,
            ctx.ap(m.offset + full * p * m.rowStride,
                   {m.rowStride, m.headStride, m.colStride},
                   {tail, m.count, m.cols}),
            t, ctx.ap(full * w, {blocks * w, 1}, {tail, w}));
}

Value AttentionEmitter::transposeBlocks(ArrayRef<Block> blocks, int64_t cols) {
  int64_t total = 0;
  for (const Block &b : blocks)
    total += b.parts;
  Value out = ctx.allocSbuf(loc, cols, total, elt);
  Value ident = ctx.identity(loc, elt);
  int64_t done = 0;
  for (size_t i = 0; i < blocks.size();) {
    // As many blocks as fill one PSUM bank of `cols` partitions.
    int64_t width = 0;
    size_t j = i;
    while (j < blocks.size() && width + blocks[j].parts <= chunk())
      width += blocks[j++].parts;
    Value ps = psum(cols, width);
    int64_t at = 0;
    for (; i < j; ++i) {
      int64_t p = blocks[i].parts;
      ctx.matmul(loc, ps, window(ps, at, cols, p), blocks[i].tile,
                 window(blocks[i], cols), ident, ctx.tileAp(ident, p, p),
                 /*accumulate=*/false, /*transpose=*/true);
      at += p;
    }
    evacuate(out, window(out, done, cols, width), ps, ctx.tileAp(ps));
    done += width;
  }
  return out;
}

SmallVector<Block> AttentionEmitter::transposeColumns(Value src, int64_t r,
                                                      int64_t c0,
                                                      int64_t width) {
  SmallVector<Block> blocks;
  Value ident = ctx.identity(loc, elt);
  const int64_t p = parts(), perBank = std::max<int64_t>(1, chunk() / r);
  for (int64_t k0 = c0; k0 < c0 + width;) {
    // Full 128-column blocks share a bank; a partial last block goes alone.
    int64_t left = c0 + width - k0;
    int64_t kw = std::min(p, left);
    int64_t group = kw < p ? 1 : std::min(perBank, left / p);
    Value ps = psum(kw, group * r);
    for (int64_t g = 0; g < group; ++g)
      ctx.matmul(loc, ps, window(ps, g * r, kw, r), src,
                 window(src, k0 + g * p, r, kw), ident, ctx.tileAp(ident, r, r),
                 /*accumulate=*/false, /*transpose=*/true);
    Value t = ctx.allocSbuf(loc, kw, group * r, elt);
    evacuate(t, ctx.tileAp(t), ps, ctx.tileAp(ps));
    for (int64_t g = 0; g < group; ++g)
      blocks.push_back({t, g * r, kw});
    k0 += group * kw;
  }
  return blocks;
}

Value AttentionEmitter::scores(const Block &qT, Value kT, int64_t q0,
                               int64_t r, int64_t begin, int64_t end,
                               bool masked) {
  const int64_t e = qT.parts;
  Value ps = psum(r, end - begin);
  for (int64_t c0 = begin; c0 < end; c0 += chunk()) {
    int64_t cw = std::min(chunk(), end - c0);
    ctx.matmul(loc, ps, window(ps, c0 - begin, r, cw), qT.tile, window(qT, r),
               kT, window(kT, c0, e, cw), /*accumulate=*/false);
  }
  // Key j is masked for query row q0 + p when j > q0 + p: keys q0 + 1 ..
  // q0 + r - 1, which lie in one chunk (q0 and the chunks are multiples of
  // P). Adding mask[0:r, 0:w] to keys q0.. is the product I^T . mask.
  int64_t w = diagonal(q0, r, begin, end);
  if (!masked || !w)
    return ps;
  Type maskElt = maskType(ctx.b, elt);
  if (!mask) {
    int64_t p = parts();
    Value zeros = ctx.allocSbuf(loc, p, p, maskElt);
    ctx.memset(loc, zeros, ctx.tileAp(zeros), 0.0);
    // Keep where p - f >= 0 (on and below the diagonal), else kMasked.
    mask = ctx.allocSbuf(loc, p, p, maskElt);
    ctx.b.create<nisa::AffineSelectOp>(
        loc, nisa::AluOpAttr::get(ctx.b.getContext(), nisa::AluOp::is_ge),
        mask, ctx.tileAp(mask), zeros, ctx.tileAp(zeros),
        ctx.b.getF32FloatAttr(0.0), ctx.b.getI32IntegerAttr(1),
        ctx.b.getI32IntegerAttr(-1), ctx.b.getF32FloatAttr(kMasked),
        nisa::EngineAttr::get(ctx.b.getContext(), nisa::Engine::gpsimd),
        DenseI64ArrayAttr(), IntegerAttr());
  }
  Value ident = ctx.identity(loc, maskElt);
  ctx.matmul(loc, ps, window(ps, q0 - begin, r, w), ident,
             ctx.tileAp(ident, r, r), mask, ctx.tileAp(mask, r, w),
             /*accumulate=*/true);
  return ps;
}

void AttentionEmitter::attendRow(const Block &qT, Value kT, const Heads &v,
                                 Value vTile, int64_t h, int64_t q0, int64_t r,
                                 int64_t keys, const Block &result,
                                 const Column &sumCol, const Column &biasCol) {
  const int64_t p = parts(), ev = v.cols;
  // V's rows carry a column of ones (forwardGroup): P [V | 1] sums P's rows
  // in its last column, so the row sum rides in the output's accumulator.
  const int64_t ow = ev + 1;
  assert(v.tilePitch() == ow && "V without its column of ones");
  // The running state: row max m (its -scale * m as the exp bias) and,
  // past the first block, the fp32 output and row sum in SBUF. The last
  // block leaves its bias in the lse columns.
  Value m, acc, o;
  const int64_t block = blockKeys(keys);
  for (int64_t b0 = 0; b0 < keys; b0 += block) {
    int64_t bw = std::min(block, keys - b0);
    bool first = b0 == 0, last = b0 + bw >= keys;
    // The mask goes in before the row max (a masked score must not be it).
    Value sc = scores(qT, kT, q0, r, b0, b0 + bw, /*masked=*/true);
    Value blockMax = f32Tile(r, 1), newMax = blockMax;
    ctx.tensorReduce(loc, nisa::AluOp::max, blockMax, ctx.tileAp(blockMax), sc,
                     ctx.tileAp(sc));
    if (!first) {
      newMax = f32Tile(r, 1);
      ctx.tensorTensor(loc, nisa::AluOp::max, newMax, ctx.tileAp(newMax), m,
                       ctx.tileAp(m), blockMax, ctx.tileAp(blockMax));
    }
    Column newBias = last ? biasCol : Column{f32Tile(r, 1), 0};
    ctx.tensorScalar(loc, newBias.tile, column(newBias, r), newMax,
                     ctx.tileAp(newMax), nisa::AluOp::multiply, -scale);
    Value probs = ctx.allocSbuf(loc, r, bw, elt);
    activation(nisa::ActFunc::exp, probs, ctx.tileAp(probs), sc,
               ctx.tileAp(sc), newBias, r, scale);
    o = psum(r, ow);
    SmallVector<Block> pT = transposeColumns(probs, r, 0, bw);
    for (auto [kb, blk] : llvm::enumerate(pT)) {
      Block vb = blockOf(v, vTile, b0 / p + kb, h);
      ctx.matmul(loc, o, ctx.tileAp(o), blk.tile, window(blk, r), vb.tile,
                 window(vb.tile, vb.offset, blk.parts, ow),
                 /*accumulate=*/kb > 0);
    }
    if (first) {
      if (!last) { // more blocks follow: the output sum moves to SBUF
        acc = f32Tile(r, ow);
        evacuate(acc, ctx.tileAp(acc), o, ctx.tileAp(o));
      }
    } else {
      // Rescale what the earlier blocks summed by exp(scale * (m - m_new)).
      Value factor = f32Tile(r, 1);
      activation(nisa::ActFunc::exp, factor, ctx.tileAp(factor), m,
                 ctx.tileAp(m), newBias, r, scale);
      ctx.tensorTensor(loc, nisa::AluOp::multiply, acc, ctx.tileAp(acc), acc,
                       ctx.tileAp(acc), factor, ctx.ap(0, {1, 0}, {r, ow}));
      ctx.tensorTensor(loc, nisa::AluOp::add, acc, ctx.tileAp(acc), acc,
                       ctx.tileAp(acc), o, ctx.tileAp(o));
    }
    m = newMax;
  }
  Value total = acc ? acc : o;
  // The row sum, for the division and the lse.
  ctx.copyOnVector(loc, sumCol.tile, column(sumCol, r), total,
                   window(total, ev, r, 1));
  ctx.tensorTensor(loc, nisa::AluOp::divide, result.tile, window(result, ev),
                   total, window(total, 0, r, ev), sumCol.tile,
                   broadcast(sumCol, r, ev));
}

void AttentionEmitter::forwardGroup(const Heads &q, const Heads &k,
                                    const Heads &v, const Heads &out,
                                    const Heads &lse) {
  const int64_t p = parts(), s = k.rows, e = q.cols, ev = v.cols,
                g = q.count, kBlocks = (s + p - 1) / p;
  // The group's keys and values, and each head's K^T, stay resident.
  // Each head's V rows carry a column of ones, so that P V also sums P's
  // rows on the Tensor Engine (one more moving column per matmul; Ev <= 128,
  // attention_ops.MAX_HEAD): a Vector reduction over each block of
  // probabilities fewer (bf16 GPT forward: 512 reductions of [128, <= 1024]
  // per layer; forward 5520.3 -> 5417.1 us, Vector and Scalar, which bound
  // the attention, each ~490 us per layer).
  Heads vAug = v;
  vAug.pitch = ev + 1;
  Value kTile = loadBlocks(k), vTile = loadBlocks(vAug);
  ctx.memset(loc, vTile,
             ctx.ap(ev, {kBlocks * vAug.width(), vAug.width(), ev + 1},
                    {std::min(p, s), kBlocks, g}),
             1.0);
  SmallVector<Value> kT;
  for (int64_t h = 0; h < g; ++h) {
    SmallVector<Block> blocks;
    for (int64_t b = 0; b < kBlocks; ++b)
      blocks.push_back(blockOf(k, kTile, b, h));
    kT.push_back(transposeBlocks(blocks, e));
  }
  for (int64_t q0 = 0; q0 < q.rows; q0 += p) {
    int64_t r = std::min(p, q.rows - q0), keys = keysFor(q0, r, s);
    Value qTile = loadRows(q, q0, r);
    Value result = ctx.allocSbuf(loc, r, g * ev, out.elt);
    // Per head: the row sum and -scale * max, for lse = log sum - bias.
    Value sums = f32Tile(r, g), biases = f32Tile(r, g);
    for (int64_t h = 0; h < g; ++h) {
      Value qT = transposeBlocks({Block{qTile, h * e, r}}, e);
      attendRow(Block{qT, 0, e}, kT[h], vAug, vTile, h, q0, r, keys,
                Block{result, h * ev, r}, Column{sums, h}, Column{biases, h});
    }
    storeRows(out, q0, result);
    Value logSum = f32Tile(r, g), l = f32Tile(r, g);
    ctx.activation(loc, nisa::ActFunc::log, logSum, ctx.tileAp(logSum), sums,
                   ctx.tileAp(sums));
    ctx.tensorTensor(loc, nisa::AluOp::subtract, l, ctx.tileAp(l), logSum,
                     ctx.tileAp(logSum), biases, ctx.tileAp(biases));
    // Stored as columns (4-byte descriptors, off the critical path) rather
    // than transposed to rows: the transpose's fp32 identity, a constant,
    // is hoisted by the list scheduler to the top of SBUF for the whole
    // graph, where it can leave another op's big tiles no gap.
    ctx.dma(loc, lse.root,
            ctx.ap(lse.offset + q0 * lse.rowStride,
                   {lse.rowStride, lse.headStride}, {r, g}),
            l, ctx.tileAp(l));
  }
}

void AttentionEmitter::backwardGroup(const Heads &dout, const Heads &q,
                                     const Heads &k, const Heads &v,
                                     const Heads &out, const Heads &lse,
                                     const Heads &dq, const Heads &dk,
                                     const Heads &dv) {
  const int64_t p = parts(), s = k.rows, e = q.cols, ev = v.cols, g = q.count,
                kBlocks = (s + p - 1) / p;
  // dP - D folded into the dP matmul: each head's dO rows carry -D and its
  // V rows 1 in extra columns, so dO^T and V^T have extra contraction rows
  // and dP' = [dO | -D] [V | 1]^T lands in PSUM shifted. -D in dO's type:
  // one column in fp32; in a 16-bit type two, hi = -D rounded and lo = -D -
  // hi (foldColumns), as one column would round -D to 8 (bf16) or 11 (fp16)
  // bits, an error of |D| 2^-9 in every dS = P (dP - D) of the row however
  // much dP - D cancels (bf16 dq 5x eager's error vs float64). Needs
  // Ev + columns <= P; otherwise the shift is a Scalar copy with -D as bias.
  const int64_t fc = foldColumns(elt);
  const bool fold = ev + fc <= p;
  // Scalar runs every exp; the list scheduler, placing each copy on the
  // engine that would finish it first, put the evacuations there too while
  // Vector waited in order on a multiply (1104 vs 937 us for the GPT
  // block's 64 heads): they go to Vector.
  onlyVector = true;
  Heads vAug = v, doutAug = dout;
  if (fold)
    vAug.pitch = doutAug.pitch = ev + fc;
  const int64_t evT = fold ? ev + fc : ev; // rows of dO^T and V^T
  // Resident for the group: K and V rows, the dK and dV results; per query
  // block the Q and dO rows, -lse and -D of every head, and the dq result.
  // K and V one tile per 128-key block (a DMA each for the group's heads):
  // these loads depend only on saved activations, so the list scheduler
  // hoists them far ahead, and small tiles there leave the big working
  // tiles of the ops before (a vocabulary-wide loss) their gaps.
  SmallVector<Value> kTiles, vTiles;
  for (int64_t b = 0; b < kBlocks; ++b) {
    int64_t rows = std::min(p, s - b * p);
    kTiles.push_back(loadRows(k, b * p, rows));
    vTiles.push_back(loadRows(vAug, b * p, rows));
    if (fold)
      ctx.memset(loc, vTiles.back(),
                 fc == 1 ? ctx.ap(ev, {vAug.width(), evT}, {rows, g})
                         : ctx.ap(ev, {vAug.width(), evT, 1}, {rows, g, fc}),
                 1.0);
  }
  auto keyBlock = [&](ArrayRef<Value> tiles, const Heads &m, int64_t b,
                      int64_t h) {
    return Block{tiles[b], h * m.tilePitch(), std::min(p, s - b * p)};
  };
  Value dkTile = ctx.allocSbuf(loc, std::min(p, s), kBlocks * g * e, dk.elt);
  Value dvTile = ctx.allocSbuf(loc, std::min(p, s), kBlocks * g * ev, dv.elt);
  struct QueryBlock {
    int64_t q0, r, keys;
    Value qTile, doTile, negL, negD, dqTile;
  };
  SmallVector<QueryBlock> qbs;
  for (int64_t q0 = 0; q0 < q.rows; q0 += p) {
    QueryBlock qb{q0, std::min(p, q.rows - q0), 0, {}, {}, {}, {}, {}};
    const int64_t r = qb.r;
    qb.keys = keysFor(q0, r, s);
    qb.qTile = loadRows(q, q0, r);
    qb.doTile = loadRows(doutAug, q0, r);
    // -D = -rowsum(dout * out) of every head: dO's extra column, or the
    // bias of dP - D.
    Value oTile = loadRows(out, q0, r), prod = f32Tile(r, g * ev),
          d = f32Tile(r, g);
    auto heads3d = [&](int64_t pitch) {
      return ctx.ap(0, {g * pitch, pitch, 1}, {r, g, ev});
    };
    ctx.tensorTensor(loc, nisa::AluOp::multiply, prod, heads3d(ev), qb.doTile,
                     heads3d(evT), oTile, heads3d(ev));
    ctx.tensorReduce(loc, nisa::AluOp::add, d, ctx.tileAp(d), prod,
                     heads3d(ev));
    if (fold && fc == 1) {
      ctx.tensorScalar(loc, qb.doTile, ctx.ap(ev, {g * evT, evT}, {r, g}), d,
                       ctx.tileAp(d), nisa::AluOp::multiply, -1.0);
    } else if (fold) {
      // hi = -D rounded to dO's type; lo = -D - hi (exact in fp32), rounded.
      Value negD = f32Tile(r, g);
      ctx.tensorScalar(loc, negD, ctx.tileAp(negD), d, ctx.tileAp(d),
                       nisa::AluOp::multiply, -1.0);
      auto hi = ctx.ap(ev, {g * evT, evT}, {r, g}),
           lo = ctx.ap(ev + 1, {g * evT, evT}, {r, g});
      ctx.copyOnVector(loc, qb.doTile, hi, negD, ctx.tileAp(negD));
      ctx.tensorTensor(loc, nisa::AluOp::subtract, qb.doTile, lo, negD,
                       ctx.tileAp(negD), qb.doTile, hi);
    } else {
      qb.negD = f32Tile(r, g);
      ctx.tensorScalar(loc, qb.negD, ctx.tileAp(qb.negD), d, ctx.tileAp(d),
                       nisa::AluOp::multiply, -1.0);
    }
    // -lse, one column per head: loaded as columns (4-byte descriptors, but
    // off the critical path: lse is a saved activation) rather than rows and
    // a transpose, whose fp32 identity, a constant, the list scheduler would
    // hoist to the top of SBUF beside the loss's 32 KiB tiles.
    Value lseCols = f32Tile(r, g);
    ctx.dma(loc, lseCols, ctx.tileAp(lseCols), lse.root,
            ctx.ap(lse.offset + q0 * lse.rowStride,
                   {lse.rowStride, lse.headStride}, {r, g}));
    qb.negL = f32Tile(r, g);
    ctx.tensorScalar(loc, qb.negL, ctx.tileAp(qb.negL), lseCols,
                     ctx.tileAp(lseCols), nisa::AluOp::multiply, -1.0);
    qb.dqTile = ctx.allocSbuf(loc, r, g * e, dq.elt);
    qbs.push_back(qb);
  }

  // dK and dV of a window of key blocks accumulate in PSUM (one bank each)
  // over the query blocks; dQ of a query block over the window's keys.
  const int64_t windowBlocks = std::max<int64_t>(1, chunk() / std::max(e, ev));
  const bool oneWindow = kBlocks <= windowBlocks;
  for (int64_t h = 0; h < g; ++h) {
    SmallVector<Block> kBlk, vBlk;
    for (int64_t b = 0; b < kBlocks; ++b) {
      kBlk.push_back(keyBlock(kTiles, k, b, h));
      vBlk.push_back(keyBlock(vTiles, vAug, b, h));
    }
    Value kT = transposeBlocks(kBlk, e), vT = transposeBlocks(vBlk, evT);
    // Q^T and dO^T of the head over all query blocks (four to a bank).
    SmallVector<Block> qBlk, doBlk;
    for (const QueryBlock &qb : qbs) {
      qBlk.push_back(Block{qb.qTile, h * e, qb.r});
      doBlk.push_back(Block{qb.doTile, h * evT, qb.r});
    }
    Value qTAll = transposeBlocks(qBlk, e),
          doTAll = transposeBlocks(doBlk, evT);
    SmallVector<Block> qT, doT;
    SmallVector<Value> dqSum;
    for (const QueryBlock &qb : qbs) {
      qT.push_back(Block{qTAll, qb.q0, e});
      doT.push_back(Block{doTAll, qb.q0, evT});
      if (!oneWindow) {
        dqSum.push_back(f32Tile(qb.r, e));
        ctx.memset(loc, dqSum.back(), ctx.tileAp(dqSum.back()), 0.0);
      }
    }
    for (int64_t w0 = 0; w0 < kBlocks; w0 += windowBlocks) {
      const int64_t nw = std::min(windowBlocks, kBlocks - w0),
                    wBegin = w0 * p, wEnd = std::min(s, (w0 + nw) * p);
      Value dkPs = psum(p, nw * e), dvPs = psum(p, nw * ev);
      // Rows of each key block some query reached: the first reach is the
      // widest (later query blocks reach further), so it starts the sum.
      SmallVector<int64_t> touched(nw, 0);
      for (auto [qi, qb] : llvm::enumerate(qbs)) {
        const int64_t r = qb.r, end = std::min(qb.keys, wEnd);
        if (end <= wBegin)
          continue;
        Value dqPs = psum(r, e);
        bool firstDq = true;
        // One key chunk at a time: its scores are used up before the next's
        // are computed.
        for (int64_t c0 = wBegin; c0 < end; c0 += chunk()) {
          int64_t cw = std::min(chunk(), end - c0);
          Value sc = scores(qT[qi], kT, qb.q0, r, c0, c0 + cw,
                            /*masked=*/false);
          Value probs = ctx.allocSbuf(loc, r, cw, elt);
          activation(nisa::ActFunc::exp, probs, ctx.tileAp(probs), sc,
                     ctx.tileAp(sc), Column{qb.negL, h}, r, scale);
          // P is exact from lse, so the causal mask zeroes it after the exp
          // (on GpSimd, idle here) rather than adding to S on the Tensor
          // Engine, the gradient's busiest.
          if (int64_t w = diagonal(qb.q0, r, c0, c0 + cw)) {
            auto diag = window(probs, qb.q0 - c0, r, w);
            ctx.b.create<nisa::AffineSelectOp>(
                loc,
                nisa::AluOpAttr::get(ctx.b.getContext(), nisa::AluOp::is_ge),
                probs, diag, probs, diag, ctx.b.getF32FloatAttr(0.0),
                ctx.b.getI32IntegerAttr(1), ctx.b.getI32IntegerAttr(-1),
                ctx.b.getF32FloatAttr(0.0),
                nisa::EngineAttr::get(ctx.b.getContext(), nisa::Engine::gpsimd),
                DenseI64ArrayAttr(), IntegerAttr());
          }
          Value dp = psum(r, cw);
          ctx.matmul(loc, dp, ctx.tileAp(dp), doT[qi].tile, window(doT[qi], r),
                     vT, window(vT, c0, evT, cw), /*accumulate=*/false);
          Value shifted = dp, ds = ctx.allocSbuf(loc, r, cw, elt);
          if (!fold) {
            shifted = f32Tile(r, cw);
            activation(nisa::ActFunc::copy, shifted, ctx.tileAp(shifted), dp,
                       ctx.tileAp(dp), Column{qb.negD, h}, r, 1.0);
          }
          ctx.tensorTensor(loc, nisa::AluOp::multiply, ds, ctx.tileAp(ds),
                           shifted, ctx.tileAp(shifted), probs,
                           ctx.tileAp(probs));
          SmallVector<Block> dsT = transposeColumns(ds, r, 0, cw);
          for (auto [i, blk] : llvm::enumerate(dsT)) {
            int64_t kb = c0 / p + i, j = kb - w0, kw = blk.parts, at = i * p;
            assert((!touched[j] || kw <= touched[j]) && "a later reach is wider");
            ctx.matmul(loc, dvPs, window(dvPs, j * ev, kw, ev), probs,
                       window(probs, at, r, kw), qb.doTile,
                       window(qb.doTile, h * evT, r, ev), touched[j] > 0);
            ctx.matmul(loc, dkPs, window(dkPs, j * e, kw, e), ds,
                       window(ds, at, r, kw), qb.qTile,
                       window(qb.qTile, h * e, r, e), touched[j] > 0);
            touched[j] = std::max(touched[j], kw);
            ctx.matmul(loc, dqPs, ctx.tileAp(dqPs), blk.tile, window(blk, r),
                       kBlk[kb].tile, window(kBlk[kb].tile, kBlk[kb].offset, kw, e),
                       /*accumulate=*/!firstDq);
            firstDq = false;
          }
        }
        if (oneWindow)
          ctx.tensorScalar(loc, qb.dqTile, window(qb.dqTile, h * e, r, e),
                           dqPs, ctx.tileAp(dqPs), nisa::AluOp::multiply,
                           scale);
        else
          ctx.tensorTensor(loc, nisa::AluOp::add, dqSum[qi],
                           ctx.tileAp(dqSum[qi]), dqSum[qi],
                           ctx.tileAp(dqSum[qi]), dqPs, ctx.tileAp(dqPs));
      }
      // The window's dk = scale * dK and dv = dV into the group's tiles: a
      // run of fully reached blocks in one instruction each, rows no query
      // reaches (causal, L < S) zero.
      const int64_t dkW = g * e, dvW = g * ev;
      auto evacuateBlocks = [&](int64_t j0, int64_t nb, int64_t rows) {
        ctx.tensorScalar(loc, dkTile,
                         ctx.ap((w0 + j0) * dkW + h * e,
                                {kBlocks * dkW, dkW, 1}, {rows, nb, e}),
                         dkPs, ctx.ap(j0 * e, {nw * e, e, 1}, {rows, nb, e}),
                         nisa::AluOp::multiply, scale);
        ctx.copyOnVector(loc, dvTile,
                         ctx.ap((w0 + j0) * dvW + h * ev,
                                {kBlocks * dvW, dvW, 1}, {rows, nb, ev}),
                         dvPs,
                         ctx.ap(j0 * ev, {nw * ev, ev, 1}, {rows, nb, ev}));
      };
      for (int64_t j = 0; j < nw;) {
        int64_t run = 0;
        while (j + run < nw && touched[j + run] == p)
          ++run;
        if (run) {
          evacuateBlocks(j, run, p);
          j += run;
          continue;
        }
        // Zero the block (engines start at partition 0), then the rows some
        // query reached.
        int64_t rows = std::min(p, s - (w0 + j) * p), done = touched[j];
        ctx.memset(loc, dkTile,
                   ctx.ap((w0 + j) * dkW + h * e, {kBlocks * dkW, 1}, {rows, e}),
                   0.0);
        ctx.memset(loc, dvTile,
                   ctx.ap((w0 + j) * dvW + h * ev, {kBlocks * dvW, 1},
                          {rows, ev}),
                   0.0);
        if (done)
          evacuateBlocks(j, 1, done);
        ++j;
      }
    }
    if (!oneWindow)
      for (auto [qi, qb] : llvm::enumerate(qbs))
        ctx.tensorScalar(loc, qb.dqTile, window(qb.dqTile, h * e, qb.r, e),
                         dqSum[qi], ctx.tileAp(dqSum[qi]),
                         nisa::AluOp::multiply, scale);
  }
  for (const QueryBlock &qb : qbs)
    storeRows(dq, qb.q0, qb.dqTile);
  storeBlocks(dk, dkTile);
  storeBlocks(dv, dvTile);
}

/// SBUF bytes per partition `heads` heads of one batch element keep
/// resident (attention_ops.resident_bytes mirrors this for one head), in
/// the inputs' type. Forward: each head's K^T [E, S] and the [<= 128, E]
/// row blocks of K and V. Gradient: the K and V rows (V with its extra
/// columns, foldColumns) and the dK, dV results of every head, per query
/// block its Q and dO rows (dO with -D), dq result and the fp32 -lse and -D;
/// beside them one head's K^T, V^T, Q^T and dO^T at a time.
int64_t residentBytes(int64_t l, int64_t s, int64_t e, int64_t ev,
                      int64_t eltBytes, int64_t p, bool forward,
                      int64_t heads) {
  int64_t kBlocks = (s + p - 1) / p, qBlocks = (l + p - 1) / p;
  if (forward) // V's rows with their column of ones (forwardGroup)
    return heads * (s * eltBytes + kBlocks * (e + ev + 1) * eltBytes);
  const int64_t fc = foldColumns(eltBytes);
  return heads * (kBlocks * (2 * (e + ev) + fc) * eltBytes +
                  qBlocks * ((2 * e + ev + fc) * eltBytes + 8)) +
         2 * (s + l) * eltBytes;
}

/// Heads lowered together: as many as keep their resident tiles within a
/// quarter of the budget (the next groups' loads and transposes overlap this
/// one's work), at least one, split evenly. Measured on the GPT block's 64
/// heads of T 1024 (trn2): the whole budget (16 heads forward and gradient)
/// 638 / 1084 us, half (16 / 8) 638 / 937, a quarter (8 / 4) 634 / 899, an
/// eighth (4 / 2) 731 / 1174.
int64_t headGroup(int64_t heads, int64_t budget,
                  llvm::function_ref<int64_t(int64_t)> resident) {
  int64_t most = 1;
  while (most < heads && resident(most + 1) <= budget / 4)
    ++most;
  int64_t groups = (heads + most - 1) / most;
  return (heads + groups - 1) / groups;
}

/// Checks what the lowering needs of the target; the budget of resident
/// bytes per partition.
FailureOr<int64_t> checkLimits(LoweringContext &ctx, Operation *op, Type elt,
                               int64_t e, int64_t ev, int64_t l, int64_t s,
                               bool forward) {
  int64_t p = ctx.partitions();
  if (e > p || ev > p)
    return op->emitOpError("attention head sizes above ")
           << p << " partitions are not supported (E = " << e
           << ", Ev = " << ev << ")";
  int64_t need = residentBytes(l, s, e, ev, elt.getIntOrFloatBitWidth() / 8, p,
                               forward, 1);
  int64_t budget =
      static_cast<int64_t>(ctx.machine.sbufPartitionBytes) - kWorkingBytes;
  if (need > budget)
    return op->emitOpError("attention over ")
           << s << " keys keeps " << need
           << " bytes per partition of keys and values in SBUF, above the "
           << budget << " the target leaves beside the working tiles; the "
           << "rule routes those to the unfused decomposition";
  return budget;
}

/// Where a gradient result `r` can be written in place: when its only use,
/// through transposes and reshapes, is an input of a trn.concat (dq, dk, dv
/// of a packed qkv projection's split), the view of `r` inside that concat's
/// destination (made now and kept as the concat's view), so lowerConcat
/// finds the input already in its window and copies nothing.
std::optional<HbmView> concatWindow(LoweringContext &ctx, Location loc,
                                    Value r) {
  SmallVector<Operation *> chain;
  Value cur = r;
  while (cur.hasOneUse()) {
    Operation *user = *cur.getUsers().begin();
    if (isa<trn::TransposeOp, trn::ReshapeOp>(user)) {
      chain.push_back(user);
      cur = user->getResult(0);
      continue;
    }
    auto cat = dyn_cast<trn::ConcatOp>(user);
    if (!cat)
      return std::nullopt;
    int64_t dim = cat.getDim(), at = 0;
    for (Value in : cat.getInputs()) {
      if (in == cur)
        break;
      at += cast<RankedTensorType>(in.getType()).getShape()[dim];
    }
    auto it = ctx.views.find(cat.getResult());
    if (it == ctx.views.end())
      it = ctx.views
               .try_emplace(cat.getResult(),
                            ctx.destination(loc, cat.getResult()))
               .first;
    ArrayRef<int64_t> shape = cast<RankedTensorType>(cur.getType()).getShape();
    SmallVector<int64_t> starts(shape.size(), 0), steps(shape.size(), 1);
    starts[dim] = at;
    HbmView w = sliceView(it->second, starts, steps, shape);
    // Undo the view ops, last first.
    for (Operation *op : llvm::reverse(chain)) {
      auto from = cast<RankedTensorType>(op->getOperand(0).getType());
      if (auto t = dyn_cast<trn::TransposeOp>(op)) {
        ArrayRef<int64_t> perm = t.getPermutation();
        SmallVector<int64_t> inverse(perm.size());
        for (auto [i, d] : llvm::enumerate(perm))
          inverse[d] = i;
        w = transposeView(w, inverse);
      } else {
        std::optional<HbmView> back = reshapeView(w, from.getShape());
        if (!back)
          return std::nullopt;
        w = *back;
      }
    }
    return w;
  }
  return std::nullopt;
}

/// The Heads of one operand or result for heads [h0, h0 + g) of batch
/// element n.
using HeadsOf = std::function<Heads(int64_t n, int64_t h0, int64_t g)>;

/// Calls fn(the heads of every view) for each group of heads of each batch
/// element. The first group is emitted as it is (it builds what every group
/// shares: the identity, the causal mask); the others as tile loops where
/// they repeat (the same head count, each view a constant step further on),
/// their views walked through the loops' windows.
void forEachHeadGroup(LoweringContext &ctx, Location loc, int64_t batch,
                      int64_t heads, int64_t group, ArrayRef<HeadsOf> views,
                      function_ref<void(ArrayRef<Heads>)> fn) {
  SmallVector<SmallVector<Heads>> groups;
  SmallVector<TileTask> tasks;
  for (int64_t n = 0; n < batch; ++n)
    for (int64_t h0 = 0; h0 < heads; h0 += group) {
      int64_t g = std::min(group, heads - h0);
      SmallVector<Heads> hs;
      TileTask task;
      task.partitions = g;
      task.counts = {g};
      for (const HeadsOf &view : views) {
        hs.push_back(view(n, h0, g));
        task.offsets.push_back(hs.back().offset);
        task.strides.emplace_back();
      }
      groups.push_back(std::move(hs));
      tasks.push_back(std::move(task));
    }
  if (groups.empty())
    return;
  fn(groups.front());
  SmallVector<Value> roots;
  for (const Heads &h : groups.front())
    roots.push_back(h.root);
  ArrayRef<TileTask> rest = ArrayRef<TileTask>(tasks).drop_front();
  SmallVector<bool> none(views.size(), false);
  emitTileNest(ctx.b, loc, nestTileTasks(rest, none), roots,
               [&](int64_t t, ArrayRef<Value> buffers) {
                 SmallVector<Heads> hs = groups[t + 1];
                 for (auto [h, buffer] : llvm::zip(hs, buffers))
                   h.root = buffer;
                 fn(hs);
               });
}

} // namespace

LogicalResult trnc::tile::lowerAttention(LoweringContext &ctx, Operation *op) {
  Location loc = op->getLoc();
  auto viewOf = [&](Value v) -> FailureOr<HbmView> {
    auto it = ctx.views.find(v);
    if (it == ctx.views.end())
      return op->emitOpError("operand has no lowered HBM view");
    return it->second;
  };
  auto result = [&](Value r) {
    HbmView d = ctx.destination(loc, r);
    ctx.views[r] = d;
    return d;
  };
  const int64_t p = ctx.partitions();
  if (auto fwd = dyn_cast<trn::AttentionOp>(op)) {
    FailureOr<HbmView> q = viewOf(fwd.getQ()), k = viewOf(fwd.getK()),
                       v = viewOf(fwd.getV());
    if (failed(q) || failed(k) || failed(v))
      return failure();
    HbmView out = result(fwd.getOut()), lse = result(fwd.getLse());
    const int64_t e = q->shape[3], ev = v->shape[3], l = q->shape[2],
                  s = k->shape[2], eltBytes =
                      q->elementType().getIntOrFloatBitWidth() / 8;
    FailureOr<int64_t> budget =
        checkLimits(ctx, op, q->elementType(), e, ev, l, s, /*forward=*/true);
    if (failed(budget))
      return failure();
    if (q->numElements() == 0 || s == 0)
      return op->emitOpError("attention over an empty sequence is unsupported");
    AttentionEmitter em(ctx, loc, q->elementType(),
                        fwd.getScale().convertToDouble(), fwd.getCausal());
    const int64_t heads = q->shape[1];
    int64_t group = headGroup(heads, *budget, [&](int64_t g) {
      return residentBytes(l, s, e, ev, eltBytes, p, /*forward=*/true, g);
    });
    auto major = [](const HbmView &x) -> HeadsOf {
      return [x](int64_t n, int64_t h0, int64_t g) { return headMajor(x, n, h0, g); };
    };
    HeadsOf views[] = {
        major(*q), major(*k), major(*v),
        [&](int64_t n, int64_t h0, int64_t g) { return seqMajor(out, n, h0, g); },
        [&](int64_t n, int64_t h0, int64_t g) { return lseHeads(lse, n, h0, g); }};
    forEachHeadGroup(ctx, loc, q->shape[0], heads, group, views,
                     [&](ArrayRef<Heads> h) {
                       em.forwardGroup(h[0], h[1], h[2], h[3], h[4]);
                     });
    return success();
  }
  auto grad = cast<trn::AttentionGradOp>(op);
  SmallVector<HbmView> in;
  for (Value v : {grad.getDout(), grad.getQ(), grad.getK(), grad.getV(),
                  grad.getOut(), grad.getLse()}) {
    FailureOr<HbmView> view = viewOf(v);
    if (failed(view))
      return failure();
    in.push_back(*view);
  }
  // A result feeding a concat (the gradient of a split qkv) goes straight
  // into its window of the concat's destination.
  auto gradResult = [&](Value r) {
    if (std::optional<HbmView> w = concatWindow(ctx, loc, r)) {
      ctx.views[r] = *w;
      return *w;
    }
    return result(r);
  };
  HbmView dq = gradResult(grad.getDq()), dk = gradResult(grad.getDk()),
          dv = gradResult(grad.getDv());
  const int64_t e = in[1].shape[3], ev = in[3].shape[3], l = in[1].shape[2],
                s = in[2].shape[2],
                eltBytes = in[1].elementType().getIntOrFloatBitWidth() / 8;
  FailureOr<int64_t> budget = checkLimits(ctx, op, in[1].elementType(), e, ev,
                                          l, s, /*forward=*/false);
  if (failed(budget))
    return failure();
  if (in[1].numElements() == 0 || s == 0)
    return op->emitOpError("attention over an empty sequence is unsupported");
  AttentionEmitter em(ctx, loc, in[1].elementType(),
                      grad.getScale().convertToDouble(), grad.getCausal());
  const int64_t heads = in[1].shape[1];
  int64_t group = headGroup(heads, *budget, [&](int64_t g) {
    return residentBytes(l, s, e, ev, eltBytes, p, /*forward=*/false, g);
  });
  auto major = [](const HbmView &x) -> HeadsOf {
    return [x](int64_t n, int64_t h0, int64_t g) { return headMajor(x, n, h0, g); };
  };
  auto sequence = [](const HbmView &x) -> HeadsOf {
    return [x](int64_t n, int64_t h0, int64_t g) { return seqMajor(x, n, h0, g); };
  };
  HeadsOf views[] = {
      major(in[0]), major(in[1]), major(in[2]), major(in[3]), major(in[4]),
      [&](int64_t n, int64_t h0, int64_t g) { return lseHeads(in[5], n, h0, g); },
      sequence(dq), sequence(dk), sequence(dv)};
  forEachHeadGroup(ctx, loc, in[1].shape[0], heads, group, views,
                   [&](ArrayRef<Heads> h) {
                     em.backwardGroup(h[0], h[1], h[2], h[3], h[4], h[5], h[6],
                                      h[7], h[8]);
                   });
  return success();
}
