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
//   (causal: the chunks crossing the diagonal copied out and masked to -inf
//    by affine_select; key chunks wholly above it are never computed)
//   m'    = max(m, max_c rowmax(S_c))   Vector   [r, 1]
//   P     = exp(scale * S - scale*m')   Scalar   SBUF [r, block] in v's type
//   O_b   = sum_kb P^T_kb . V_kb     Tensor   PSUM [r, Ev] (P^T by transposes)
//   f     = exp(scale*m - scale*m')  (FlashAttention's online softmax)
//   s     = s * f + rowsum(P),  O = O * f + O_b  (fp32 SBUF)
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
//===----------------------------------------------------------------------===//
#include "passes/Tile/LoweringContext.h"

#include "dialects/Trn/TrnOps.h"

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

/// One head's [rows, cols] matrix of a [N, H, rows, cols] view.
struct Matrix {
  Value root;
  int64_t offset = 0, rowStride = 0, colStride = 0;
  int64_t rows = 0, cols = 0;
  Type elt;
};

Matrix headMatrix(const HbmView &v, int64_t n, int64_t h) {
  return Matrix{v.root,       v.offset + n * v.strides[0] + h * v.strides[1],
                v.strides[2], v.strides[3],
                v.shape[2],   v.shape[3],
                v.elementType()};
}

/// A block of a transposed operand: tile[0:parts, offset:offset + width].
struct Block {
  Value tile;
  int64_t offset = 0, parts = 0;
};

class AttentionEmitter {
public:
  AttentionEmitter(LoweringContext &ctx, Location loc, Type elt, double scale,
                   bool causal)
      : ctx(ctx), loc(loc), elt(elt), scale(scale), causal(causal) {}

  void forwardHead(const Matrix &q, const Matrix &k, const Matrix &v,
                   const Matrix &out, const Matrix &lse);
  void backwardHead(const Matrix &dout, const Matrix &q, const Matrix &k,
                    const Matrix &v, const Matrix &out, const Matrix &lse,
                    const Matrix &dq, const Matrix &dk, const Matrix &dv);

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
  /// PSUM -> SBUF, alternating Scalar and Vector.
  void evacuate(Value dst, nisa::AccessPatternAttr dstAp, Value src,
                nisa::AccessPatternAttr srcAp) {
    if (nextOnVector)
      ctx.copyOnVector(loc, dst, dstAp, src, srcAp);
    else
      ctx.copyOnScalar(loc, dst, dstAp, src, srcAp);
    nextOnVector = !nextOnVector;
  }
  Value loadRows(const Matrix &m, int64_t r0, int64_t rows);
  void store(const Matrix &m, int64_t r0, Value tile);
  /// [r, 1] fp32 of a [1, L] (per-row scalar) matrix's columns r0..r0+r.
  Value loadColumn(const Matrix &m, int64_t r0, int64_t r);
  void storeColumn(const Matrix &m, int64_t r0, Value tile);
  /// Row tiles [<= P rows, cols] of consecutive rows -> one [cols, rows] tile.
  Value transposeRows(ArrayRef<Value> rows, int64_t cols);
  /// The 128-column blocks of src[0:r, c0:c0 + width], transposed.
  SmallVector<Block> transposeColumns(Value src, int64_t r, int64_t c0,
                                      int64_t width);
  /// Per key chunk of a query block: the scores, masked where causal.
  struct Chunk {
    int64_t c0 = 0, width = 0;
    Value scores; // PSUM, or SBUF fp32 when masked
  };
  SmallVector<Chunk> scores(Value qT, Value kT, int64_t q0, int64_t r,
                            int64_t begin, int64_t end);
  /// [r, 1] fp32 row max over the chunks' scores.
  Value rowMax(ArrayRef<Chunk> chunks, int64_t r);
  int64_t keysFor(int64_t q0, int64_t r, int64_t s) const {
    return causal ? std::min(s, q0 + r) : s;
  }

  LoweringContext &ctx;
  Location loc;
  Type elt;
  double scale;
  bool causal;
  bool nextOnVector = false;
};

Value AttentionEmitter::loadRows(const Matrix &m, int64_t r0, int64_t rows) {
  Value t = ctx.allocSbuf(loc, rows, m.cols, m.elt);
  ctx.dma(loc, t, ctx.tileAp(t), m.root,
          ctx.ap(m.offset + r0 * m.rowStride, {m.rowStride, m.colStride},
                 {rows, m.cols}));
  return t;
}

void AttentionEmitter::store(const Matrix &m, int64_t r0, Value tile) {
  auto t = cast<nisa::TileType>(tile.getType());
  ctx.dma(loc, m.root,
          ctx.ap(m.offset + r0 * m.rowStride, {m.rowStride, m.colStride},
                 {t.getPartitions(), t.getFreeSize()}),
          tile, ctx.tileAp(tile));
}

Value AttentionEmitter::loadColumn(const Matrix &m, int64_t r0, int64_t r) {
  Value t = f32Tile(r, 1);
  ctx.dma(loc, t, ctx.tileAp(t), m.root,
          ctx.ap(m.offset + r0 * m.colStride, {m.colStride, 1}, {r, 1}));
  return t;
}

void AttentionEmitter::storeColumn(const Matrix &m, int64_t r0, Value tile) {
  int64_t r = cast<nisa::TileType>(tile.getType()).getPartitions();
  ctx.dma(loc, m.root,
          ctx.ap(m.offset + r0 * m.colStride, {m.colStride, 1}, {r, 1}), tile,
          ctx.tileAp(tile));
}

Value AttentionEmitter::transposeRows(ArrayRef<Value> rows, int64_t cols) {
  int64_t total = 0;
  for (Value r : rows)
    total += cast<nisa::TileType>(r.getType()).getPartitions();
  Value out = ctx.allocSbuf(loc, cols, total, elt);
  Value ident = ctx.identity(loc, elt);
  int64_t done = 0;
  for (size_t i = 0; i < rows.size();) {
    // As many row tiles as fill one PSUM bank of `cols` partitions.
    int64_t width = 0;
    size_t j = i;
    while (j < rows.size()) {
      int64_t p = cast<nisa::TileType>(rows[j].getType()).getPartitions();
      if (width + p > chunk())
        break;
      width += p;
      ++j;
    }
    Value ps = psum(cols, width);
    int64_t at = 0;
    for (; i < j; ++i) {
      int64_t p = cast<nisa::TileType>(rows[i].getType()).getPartitions();
      ctx.matmul(loc, ps, window(ps, at, cols, p), rows[i],
                 ctx.tileAp(rows[i], p, cols), ident,
                 ctx.tileAp(ident, p, p), /*accumulate=*/false,
                 /*transpose=*/true);
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

SmallVector<AttentionEmitter::Chunk>
AttentionEmitter::scores(Value qT, Value kT, int64_t q0, int64_t r,
                         int64_t begin, int64_t end) {
  SmallVector<Chunk> chunks;
  int64_t e = cast<nisa::TileType>(qT.getType()).getPartitions();
  for (int64_t c0 = begin; c0 < end; c0 += chunk()) {
    int64_t cw = std::min(chunk(), end - c0);
    Value ps = psum(r, cw);
    ctx.matmul(loc, ps, ctx.tileAp(ps), qT, ctx.tileAp(qT), kT,
               window(kT, c0, e, cw), /*accumulate=*/false);
    Chunk c{c0, cw, ps};
    // Key j of this chunk is masked for query row q0 + p when j > q0 + p.
    if (causal && c0 + cw - 1 > q0) {
      Value copy = f32Tile(r, cw), masked = f32Tile(r, cw);
      ctx.copyOnScalar(loc, copy, ctx.tileAp(copy), ps, ctx.tileAp(ps));
      // Keep where (q0 - c0) + p - f >= 0.
      ctx.b.create<nisa::AffineSelectOp>(
          loc,
          nisa::AluOpAttr::get(ctx.b.getContext(), nisa::AluOp::is_ge),
          masked, ctx.tileAp(masked), copy, ctx.tileAp(copy),
          ctx.b.getF32FloatAttr(static_cast<float>(q0 - c0)),
          ctx.b.getI32IntegerAttr(1), ctx.b.getI32IntegerAttr(-1),
          ctx.b.getF32FloatAttr(-std::numeric_limits<float>::infinity()),
          nisa::EngineAttr::get(ctx.b.getContext(), nisa::Engine::gpsimd),
          DenseI64ArrayAttr(), IntegerAttr());
      c.scores = masked;
    }
    chunks.push_back(c);
  }
  return chunks;
}

Value AttentionEmitter::rowMax(ArrayRef<Chunk> chunks, int64_t r) {
  Value m = f32Tile(r, 1);
  if (chunks.size() == 1) {
    ctx.tensorReduce(loc, nisa::AluOp::max, m, ctx.tileAp(m), chunks[0].scores,
                     ctx.tileAp(chunks[0].scores));
    return m;
  }
  int64_t nc = chunks.size();
  Value partial = f32Tile(r, nc);
  for (auto [i, c] : llvm::enumerate(chunks))
    ctx.tensorReduce(loc, nisa::AluOp::max, partial, window(partial, i, r, 1),
                     c.scores, ctx.tileAp(c.scores));
  ctx.tensorReduce(loc, nisa::AluOp::max, m, ctx.tileAp(m), partial,
                   ctx.tileAp(partial));
  return m;
}

void AttentionEmitter::forwardHead(const Matrix &q, const Matrix &k,
                                   const Matrix &v, const Matrix &out,
                                   const Matrix &lse) {
  const int64_t p = parts(), s = k.rows, ev = v.cols;
  SmallVector<Value> kRows, vRows;
  for (int64_t k0 = 0; k0 < s; k0 += p) {
    kRows.push_back(loadRows(k, k0, std::min(p, s - k0)));
    vRows.push_back(loadRows(v, k0, std::min(p, s - k0)));
  }
  Value kT = transposeRows(kRows, k.cols);
  // [r, 1] of a per-row scalar, broadcast along `ev` free elements.
  auto perRow = [&](int64_t r) { return ctx.ap(0, {1, 0}, {r, ev}); };
  for (int64_t q0 = 0; q0 < q.rows; q0 += p) {
    int64_t r = std::min(p, q.rows - q0), keys = keysFor(q0, r, s);
    Value qT = transposeRows({loadRows(q, q0, r)}, q.cols);
    // The running state: row max m (its -scale * m as the exp bias), row sum
    // and, past the first block, the fp32 output sum in SBUF.
    Value m, negScaledMax, sum, acc, o;
    const int64_t block = blockKeys(keys);
    for (int64_t b0 = 0; b0 < keys; b0 += block) {
      int64_t bw = std::min(block, keys - b0);
      SmallVector<Chunk> chunks = scores(qT, kT, q0, r, b0, b0 + bw);
      Value blockMax = rowMax(chunks, r), newMax = blockMax;
      if (b0 > 0) {
        newMax = f32Tile(r, 1);
        ctx.tensorTensor(loc, nisa::AluOp::max, newMax, ctx.tileAp(newMax), m,
                         ctx.tileAp(m), blockMax, ctx.tileAp(blockMax));
      }
      Value newBias = f32Tile(r, 1);
      ctx.tensorScalar(loc, newBias, ctx.tileAp(newBias), newMax,
                       ctx.tileAp(newMax), nisa::AluOp::multiply, -scale);
      Value probs = ctx.allocSbuf(loc, r, bw, elt);
      for (const Chunk &c : chunks)
        ctx.activation(loc, nisa::ActFunc::exp, probs,
                       window(probs, c.c0 - b0, r, c.width), c.scores,
                       ctx.tileAp(c.scores), newBias, scale);
      Value blockSum = f32Tile(r, 1);
      ctx.tensorReduce(loc, nisa::AluOp::add, blockSum, ctx.tileAp(blockSum),
                       probs, ctx.tileAp(probs));

      o = psum(r, ev);
      SmallVector<Block> pT = transposeColumns(probs, r, 0, bw);
      for (auto [kb, blk] : llvm::enumerate(pT)) {
        Value vBlock = vRows[b0 / p + kb];
        ctx.matmul(loc, o, ctx.tileAp(o), blk.tile,
                   window(blk.tile, blk.offset, blk.parts, r), vBlock,
                   ctx.tileAp(vBlock, blk.parts, ev), /*accumulate=*/kb > 0);
      }
      if (b0 == 0) {
        sum = blockSum;
        if (bw < keys) { // more blocks follow: the output sum moves to SBUF
          acc = f32Tile(r, ev);
          evacuate(acc, ctx.tileAp(acc), o, ctx.tileAp(o));
        }
      } else {
        // Rescale what the earlier blocks summed by exp(scale * (m - m_new)).
        Value factor = f32Tile(r, 1), scaled = f32Tile(r, 1);
        ctx.activation(loc, nisa::ActFunc::exp, factor, ctx.tileAp(factor), m,
                       ctx.tileAp(m), newBias, scale);
        ctx.tensorTensor(loc, nisa::AluOp::multiply, scaled, ctx.tileAp(scaled),
                         sum, ctx.tileAp(sum), factor, ctx.tileAp(factor));
        sum = f32Tile(r, 1);
        ctx.tensorTensor(loc, nisa::AluOp::add, sum, ctx.tileAp(sum), scaled,
                         ctx.tileAp(scaled), blockSum, ctx.tileAp(blockSum));
        ctx.tensorTensor(loc, nisa::AluOp::multiply, acc, ctx.tileAp(acc), acc,
                         ctx.tileAp(acc), factor, perRow(r));
        ctx.tensorTensor(loc, nisa::AluOp::add, acc, ctx.tileAp(acc), acc,
                         ctx.tileAp(acc), o, ctx.tileAp(o));
      }
      m = newMax;
      negScaledMax = newBias;
    }
    Value total = acc ? acc : o;
    Value result = ctx.allocSbuf(loc, r, ev, out.elt);
    ctx.tensorTensor(loc, nisa::AluOp::divide, result, ctx.tileAp(result),
                     total, ctx.tileAp(total), sum, perRow(r));
    store(out, q0, result);

    Value logSum = f32Tile(r, 1), l = f32Tile(r, 1);
    ctx.activation(loc, nisa::ActFunc::log, logSum, ctx.tileAp(logSum), sum,
                   ctx.tileAp(sum));
    ctx.tensorTensor(loc, nisa::AluOp::subtract, l, ctx.tileAp(l), logSum,
                     ctx.tileAp(logSum), negScaledMax,
                     ctx.tileAp(negScaledMax));
    storeColumn(lse, q0, l);
  }
}

void AttentionEmitter::backwardHead(const Matrix &dout, const Matrix &q,
                                    const Matrix &k, const Matrix &v,
                                    const Matrix &out, const Matrix &lse,
                                    const Matrix &dq, const Matrix &dk,
                                    const Matrix &dv) {
  const int64_t p = parts(), s = k.rows, e = q.cols, ev = v.cols;
  SmallVector<Value> kRows, vRows, dkSum, dvSum;
  for (int64_t k0 = 0; k0 < s; k0 += p) {
    int64_t kw = std::min(p, s - k0);
    kRows.push_back(loadRows(k, k0, kw));
    vRows.push_back(loadRows(v, k0, kw));
    dkSum.push_back(f32Tile(kw, e));
    dvSum.push_back(f32Tile(kw, ev));
    ctx.memset(loc, dkSum.back(), ctx.tileAp(dkSum.back()), 0.0);
    ctx.memset(loc, dvSum.back(), ctx.tileAp(dvSum.back()), 0.0);
  }
  Value kT = transposeRows(kRows, e), vT = transposeRows(vRows, ev);
  // sum[0:kw] += ps (a causal row may reach only part of a key block).
  auto accumulate = [&](Value sum, Value ps) {
    auto t = cast<nisa::TileType>(ps.getType());
    auto window = ctx.tileAp(sum, t.getPartitions(), t.getFreeSize());
    ctx.tensorTensor(loc, nisa::AluOp::add, sum, window, sum, window, ps,
                     ctx.tileAp(ps));
  };

  for (int64_t q0 = 0; q0 < q.rows; q0 += p) {
    int64_t r = std::min(p, q.rows - q0), keys = keysFor(q0, r, s);
    Value qRows = loadRows(q, q0, r), doRows = loadRows(dout, q0, r);
    Value qT = transposeRows({qRows}, e), doT = transposeRows({doRows}, ev);
    // D = rowsum(dout * out), negated to serve as an activation bias.
    Value prod = f32Tile(r, ev), d = f32Tile(r, 1), negD = f32Tile(r, 1);
    Value oRows = loadRows(out, q0, r);
    ctx.tensorTensor(loc, nisa::AluOp::multiply, prod, ctx.tileAp(prod),
                     doRows, ctx.tileAp(doRows), oRows, ctx.tileAp(oRows));
    ctx.tensorReduce(loc, nisa::AluOp::add, d, ctx.tileAp(d), prod,
                     ctx.tileAp(prod));
    ctx.tensorScalar(loc, negD, ctx.tileAp(negD), d, ctx.tileAp(d),
                     nisa::AluOp::multiply, -1.0);
    Value l = loadColumn(lse, q0, r), negL = f32Tile(r, 1);
    ctx.tensorScalar(loc, negL, ctx.tileAp(negL), l, ctx.tileAp(l),
                     nisa::AluOp::multiply, -1.0);

    Value dqPs = psum(r, e);
    int64_t kb = 0;
    // One key chunk at a time: its scores are used up before the next's are
    // computed, so PSUM holds one chunk whatever the key count.
    for (int64_t c0 = 0; c0 < keys; c0 += chunk()) {
      Chunk c = scores(qT, kT, q0, r, c0, std::min(keys, c0 + chunk()))[0];
      Value probs = ctx.allocSbuf(loc, r, c.width, elt);
      ctx.activation(loc, nisa::ActFunc::exp, probs, ctx.tileAp(probs),
                     c.scores, ctx.tileAp(c.scores), negL, scale);
      Value dp = psum(r, c.width);
      ctx.matmul(loc, dp, ctx.tileAp(dp), doT, ctx.tileAp(doT), vT,
                 window(vT, c.c0, ev, c.width), /*accumulate=*/false);
      Value shifted = f32Tile(r, c.width), ds = ctx.allocSbuf(loc, r, c.width, elt);
      ctx.activation(loc, nisa::ActFunc::copy, shifted, ctx.tileAp(shifted),
                     dp, ctx.tileAp(dp), negD);
      ctx.tensorTensor(loc, nisa::AluOp::multiply, ds, ctx.tileAp(ds), shifted,
                       ctx.tileAp(shifted), probs, ctx.tileAp(probs));
      SmallVector<Block> dsT = transposeColumns(ds, r, 0, c.width);
      for (auto [i, blk] : llvm::enumerate(dsT)) {
        int64_t kw = blk.parts, at = i * p;
        Value dvPs = psum(kw, ev), dkPs = psum(kw, e);
        ctx.matmul(loc, dvPs, ctx.tileAp(dvPs), probs, window(probs, at, r, kw),
                   doRows, ctx.tileAp(doRows), /*accumulate=*/false);
        accumulate(dvSum[kb], dvPs);
        ctx.matmul(loc, dkPs, ctx.tileAp(dkPs), ds, window(ds, at, r, kw),
                   qRows, ctx.tileAp(qRows), /*accumulate=*/false);
        accumulate(dkSum[kb], dkPs);
        ctx.matmul(loc, dqPs, ctx.tileAp(dqPs), blk.tile,
                   window(blk.tile, blk.offset, kw, r), kRows[kb],
                   ctx.tileAp(kRows[kb], kw, e), /*accumulate=*/kb > 0);
        ++kb;
      }
    }
    Value dqTile = ctx.allocSbuf(loc, r, e, dq.elt);
    ctx.activation(loc, nisa::ActFunc::copy, dqTile, ctx.tileAp(dqTile), dqPs,
                   ctx.tileAp(dqPs), scale);
    store(dq, q0, dqTile);
  }
  for (size_t i = 0; i < kRows.size(); ++i) {
    int64_t k0 = i * p;
    Value dkTile = ctx.allocSbuf(loc, cast<nisa::TileType>(dkSum[i].getType())
                                          .getPartitions(),
                                 e, dk.elt);
    ctx.activation(loc, nisa::ActFunc::copy, dkTile, ctx.tileAp(dkTile),
                   dkSum[i], ctx.tileAp(dkSum[i]), scale);
    store(dk, k0, dkTile);
    Value dvTile = ctx.allocSbuf(loc, cast<nisa::TileType>(dvSum[i].getType())
                                          .getPartitions(),
                                 ev, dv.elt);
    ctx.copyOnVector(loc, dvTile, ctx.tileAp(dvTile), dvSum[i],
                     ctx.tileAp(dvSum[i]));
    store(dv, k0, dvTile);
  }
}

/// One head's [rows, cols] matrix of a sequence-major [N, T, H, C] view
/// (attention's results).
Matrix seqMajorMatrix(const HbmView &v, int64_t n, int64_t h) {
  return Matrix{v.root,       v.offset + n * v.strides[0] + h * v.strides[2],
                v.strides[1], v.strides[3],
                v.shape[1],   v.shape[3],
                v.elementType()};
}

/// The lse view [N, H, L] as the matrix of one head: 1 row of L columns.
Matrix lseMatrix(const HbmView &v, int64_t n, int64_t h) {
  return Matrix{v.root, v.offset + n * v.strides[0] + h * v.strides[1],
                0,      v.strides[2],
                1,      v.shape[2],
                v.elementType()};
}

/// SBUF bytes per partition the keys and values of one head take while they
/// stay resident (attention_ops.resident_bytes mirrors this): K^T [E, S] and
/// the [<= 128, E] row blocks of K and V, in the inputs' type; the gradient
/// adds V^T [Ev, S] and the fp32 dK, dV sums of every key block.
int64_t residentBytes(int64_t s, int64_t e, int64_t ev, int64_t eltBytes,
                      int64_t p, bool forward) {
  int64_t blocks = (s + p - 1) / p, rows = blocks * (e + ev) * eltBytes;
  if (forward)
    return s * eltBytes + rows;
  return 2 * s * eltBytes + rows + blocks * (e + ev) * 4;
}

/// Checks what the lowering needs of the target.
LogicalResult checkLimits(LoweringContext &ctx, Operation *op, Type elt,
                          int64_t e, int64_t ev, int64_t s, bool forward) {
  int64_t p = ctx.partitions();
  if (e > p || ev > p)
    return op->emitOpError("attention head sizes above ")
           << p << " partitions are not supported (E = " << e
           << ", Ev = " << ev << ")";
  int64_t need = residentBytes(s, e, ev, elt.getIntOrFloatBitWidth() / 8, p,
                               forward);
  int64_t budget =
      static_cast<int64_t>(ctx.machine.sbufPartitionBytes) - kWorkingBytes;
  if (need > budget)
    return op->emitOpError("attention over ")
           << s << " keys keeps " << need
           << " bytes per partition of keys and values in SBUF, above the "
           << budget << " the target leaves beside the working tiles; the "
           << "rule routes those to the unfused decomposition";
  return success();
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
  if (auto fwd = dyn_cast<trn::AttentionOp>(op)) {
    FailureOr<HbmView> q = viewOf(fwd.getQ()), k = viewOf(fwd.getK()),
                       v = viewOf(fwd.getV());
    if (failed(q) || failed(k) || failed(v))
      return failure();
    HbmView out = result(fwd.getOut()), lse = result(fwd.getLse());
    if (failed(checkLimits(ctx, op, q->elementType(), q->shape[3],
                           v->shape[3], k->shape[2], /*forward=*/true)))
      return failure();
    if (q->numElements() == 0 || k->shape[2] == 0)
      return op->emitOpError("attention over an empty sequence is unsupported");
    AttentionEmitter em(ctx, loc, q->elementType(),
                        fwd.getScale().convertToDouble(), fwd.getCausal());
    for (int64_t n = 0; n < q->shape[0]; ++n)
      for (int64_t h = 0; h < q->shape[1]; ++h)
        em.forwardHead(headMatrix(*q, n, h), headMatrix(*k, n, h),
                       headMatrix(*v, n, h), seqMajorMatrix(out, n, h),
                       lseMatrix(lse, n, h));
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
  HbmView dq = result(grad.getDq()), dk = result(grad.getDk()),
          dv = result(grad.getDv());
  if (failed(checkLimits(ctx, op, in[1].elementType(), in[1].shape[3],
                         in[3].shape[3], in[2].shape[2], /*forward=*/false)))
    return failure();
  if (in[1].numElements() == 0 || in[2].shape[2] == 0)
    return op->emitOpError("attention over an empty sequence is unsupported");
  AttentionEmitter em(ctx, loc, in[1].elementType(),
                      grad.getScale().convertToDouble(), grad.getCausal());
  for (int64_t n = 0; n < in[1].shape[0]; ++n)
    for (int64_t h = 0; h < in[1].shape[1]; ++h)
      em.backwardHead(headMatrix(in[0], n, h), headMatrix(in[1], n, h),
                      headMatrix(in[2], n, h), headMatrix(in[3], n, h),
                      headMatrix(in[4], n, h), lseMatrix(in[5], n, h),
                      seqMajorMatrix(dq, n, h), seqMajorMatrix(dk, n, h),
                      seqMajorMatrix(dv, n, h));
  return success();
}
