//===- LowerMatmul.cpp - trn.matmul -> Tensor Engine tiles ----------------===//
//
// C[M, N] = A[M, K] @ B[K, N] as Tensor Engine matmuls of at most [tileK
// contraction partitions] x [tileM stationary] x [tileN moving] (one fp32
// PSUM bank), each (m, n) tile accumulating its K tiles in PSUM, copied
// to SBUF in C's type (taking turns on Scalar and Vector) and stored by DMA.
//
// Both operands need the contraction on partitions: A^T[k, m] (stationary)
// and B[k, n] (moving). An operand whose free dim is contiguous in HBM is
// loaded by one DMA per tile. One whose contraction dim is the contiguous
// one (a row-major A; the W^T of x @ W^T) is loaded as contiguous rows of
// up to the DMA saturation size and transposed in 128 x 128 blocks on the
// Tensor Engine: a matmul with the rows block as stationary operand and an
// identity as moving operand leaves the block transposed in PSUM (exact in
// fp32), copied to SBUF in the operand's type. Those matmuls carry the
// `transpose` attribute (counted in HFU, not MFU).
//
// MatmulBlocking.cpp picks the loop order: a block of A^T resident while B
// streams past it (each B tile used by every m tile of the block right
// after its load), or a block of B resident while the m tiles sweep past
// it; or, for contractions too long to keep resident, both streamed per
// (m, n) tile. A batched (rank-3) matmul runs the plan per batch. Each
// result's store is emitted after the next tile's loads and matmuls, so the
// in-order DMA stream does not hold those loads behind it.
//
// With an epilogue (MatmulEpilogue.h) each tile copied out of PSUM goes on
// through the epilogue's elementwise ops (its other inputs loaded per tile,
// a bias row once per column block), and only the epilogue's outputs, and
// the result when something else reads it, are stored.
//
// The tiles a plan sweeps (row tiles past a resident B block, column tiles
// past a resident A block or streamed) are emitted as an scf.for over one
// tile (emitIterations, TileLoops.h) once what a tile leaves for the next
// (stores, a deferred epilogue) repeats: those values are the loop's
// iter_args, a software-pipelined loop that unrolls to the same stream.
// The blocks (and a streamed product's row tiles) are swept the same way,
// around those loops: an inner loop's windows are windows of the outer
// one's. A body that reuses a bias row kept from before stays out of any
// loop over columns (the row is its own column's).
//
//===----------------------------------------------------------------------===//
#include "passes/Tile/LoweringContext.h"
#include "passes/Tile/MatmulBlocking.h"
#include "passes/Tile/MatmulEpilogue.h"
#include "passes/Tile/TileLoops.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

#include "dialects/Trn/TrnOps.h"

using namespace mlir;
using namespace trnc;
using namespace trnc::tile;

namespace {

int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

int64_t partitionsOf(Value tile) {
  return cast<nisa::TileType>(tile.getType()).getPartitions();
}

/// X[K, F] in HBM, brought on chip as [k partitions, f free] tiles.
struct KMajorOperand {
  Value root;
  int64_t offset = 0, strideK = 0, strideF = 0;
  Type elt;
  bool transpose = false;
};

/// Emits one 2-D product under a plan.
class MatrixProductEmitter {
public:
  MatrixProductEmitter(LoweringContext &ctx, Location loc,
                       const MatmulPlan &plan, const MatmulEpilogue *epilogue)
      : ctx(ctx), loc(loc), plan(plan), epilogue(epilogue),
        copyStream(ctx.nextCopyStream++) {}

  void emit(const KMajorOperand &a, const KMajorOperand &b, const HbmView &c,
            int64_t m, int64_t k, int64_t n);

private:
  using TileFn = function_ref<void(int64_t index, Value tile)>;

  void forEachKTile(const KMajorOperand &x, int64_t k0, int64_t k1,
                    int64_t f0, int64_t w, TileFn fn);
  SmallVector<Value> loadKTiles(const KMajorOperand &x, int64_t k0,
                                int64_t k1, int64_t f0, int64_t w);
  Value psumTile(int64_t parts, int64_t free) {
    return ctx.allocTile(loc, nisa::MemorySpace::psum, parts, free,
                         ctx.b.getF32Type());
  }
  void copyFromPsum(Value dst, nisa::AccessPatternAttr dstAp, Value psum);
  void retire(Value psum, const HbmView &c, int64_t m0, int64_t n0);
  /// The epilogue's inputs from HBM for the result tile C[m0:, n0:] (`mt`
  /// x `nt`), by plan source; null for the result itself.
  SmallVector<Value> loadEpilogueSources(int64_t m0, int64_t n0, int64_t mt,
                                         int64_t nt);
  /// The epilogue on the result tile C[m0:, n0:] (`out`, C's type) from
  /// its loaded sources: queues the stores of its outputs.
  void applyEpilogue(Value out, int64_t m0, int64_t n0,
                     SmallVector<Value> loaded);
  /// Applies the epilogues of the tiles retired before (deferred so that the
  /// next tile's PSUM copy-out is not queued behind them on its engine).
  void applyDeferred();
  void flushStores();

  /// One iteration of a tile loop: emits tile i's (sweep: the tile at
  /// element i's) work with the operands' buffers as given (their own, or a
  /// loop's windows of them).
  using IterationFn =
      function_ref<void(int64_t i, const KMajorOperand &a,
                        const KMajorOperand &b, const HbmView &c)>;
  /// Emits iterations 0..count-1 of `body`: iteration 0 as it is, then the
  /// others as one scf.for whose body is iteration 1, A and B walked
  /// through windows moving `stepA`, `stepB` elements per iteration and C
  /// one moving `dm` rows and `dn` columns (TileLoops.h). A tile's store is emitted after the next
  /// tile's matmuls (flushStores), so the stores iteration i leaves pending
  /// are carried into iteration i + 1 as the loop's iter_args. Falls back
  /// to emitting every iteration when the loop would not be exact: an
  /// epilogue (its bias rows are shared across iterations), operands
  /// sharing a buffer, or iterations whose pending stores differ.
  void emitIterations(int64_t count, const KMajorOperand &a, int64_t stepA,
                      const KMajorOperand &b, int64_t stepB, const HbmView &c,
                      int64_t dm, int64_t dn, IterationFn body);
  /// The tiles at 0, tile, 2 tile... of `extent`: the full ones as
  /// emitIterations (A, B and C moving as given per tile), then the
  /// narrower last one. `fn(at, a, b, c)` emits the tile at `at`.
  void sweep(int64_t extent, int64_t tile, const KMajorOperand &a,
             int64_t stepA, const KMajorOperand &b, int64_t stepB,
             const HbmView &c, int64_t dm, int64_t dn, IterationFn fn) {
    int64_t full = extent / tile;
    emitIterations(full, a, stepA, b, stepB, c, dm, dn,
                   [&](int64_t i, const KMajorOperand &a,
                       const KMajorOperand &b,
                       const HbmView &c) { fn(i * tile, a, b, c); });
    if (full * tile < extent)
      fn(full * tile, a, b, c);
  }
  /// Iterations first..count-1 as one loop after iteration first - 1 was
  /// emitted (Emitted); else nothing is emitted: NotYet when a later first
  /// iteration may do (the state a tile leaves has not settled), Never when
  /// none will (the body loads a row the later tiles would share).
  enum class LoopAttempt { Emitted, NotYet, Never };
  LoopAttempt tryLoop(int64_t first, int64_t count, const KMajorOperand &a,
               const KMajorOperand &b, const HbmView &c, int64_t dm,
               int64_t dn, ArrayRef<std::pair<Value, int64_t>> moves,
               IterationFn body);

  void stationaryResident(const KMajorOperand &a, const KMajorOperand &b,
                          const HbmView &c, int64_t m, int64_t k, int64_t n);
  void movingResident(const KMajorOperand &a, const KMajorOperand &b,
                      const HbmView &c, int64_t m, int64_t k, int64_t n);
  void streamed(const KMajorOperand &a, const KMajorOperand &b,
                const HbmView &c, int64_t m, int64_t k, int64_t n);

  LoweringContext &ctx;
  Location loc;
  const MatmulPlan &plan;
  const MatmulEpilogue *epilogue;
  /// Its PSUM copies' stream (LoweringContext::copyAlternating).
  int64_t copyStream;
  /// Tiles copied out of PSUM (or computed from them) whose store is not
  /// emitted yet: `dst` is an [M, N] view.
  struct PendingStore {
    Value tile;
    HbmView dst;
    int64_t m0, n0;
  };
  SmallVector<PendingStore> pending;
  /// Result tiles whose epilogue is not emitted yet.
  struct DeferredTile {
    Value out;
    int64_t m0, n0;
    SmallVector<Value> loaded;
  };
  SmallVector<DeferredTile> deferred;
  /// Epilogue inputs that are the same for every row tile (a bias row),
  /// by (source, n0, rows).
  DenseMap<std::tuple<unsigned, int64_t, int64_t>, Value> rowInvariant;
  /// While the body of a loop over column tiles is emitted: set when the
  /// body reuses a row of rowInvariant, which holds the row of the body's
  /// own column only, not of every iteration's (tryLoop then gives up).
  bool inColumnLoop = false, reusedRowInColumnLoop = false;
  /// While a loop body is emitted: the window each moving buffer is read
  /// and written through (emitIterations).
  DenseMap<Value, Value> windowOf;
  Value rootOf(Value root) const {
    Value w = windowOf.lookup(root);
    return w ? w : root;
  }
};

/// Calls fn(i, tile) for the k tiles i = 0.. of X[k0:k1, f0:f0+w] in
/// order, each a fresh [<= tileK, w] SBUF tile of X's type, as soon as it
/// is complete.
void MatrixProductEmitter::forEachKTile(const KMajorOperand &x, int64_t k0,
                                        int64_t k1, int64_t f0, int64_t w,
                                        TileFn fn) {
  const int64_t tk = plan.tileK;
  if (!x.transpose) {
    for (int64_t kt = k0; kt < k1; kt += tk) {
      int64_t kk = std::min(tk, k1 - kt);
      Value t = ctx.allocSbuf(loc, kk, w, x.elt);
      ctx.dma(loc, t, ctx.tileAp(t), x.root,
              ctx.ap(x.offset + kt * x.strideK + f0 * x.strideF,
                     {x.strideK, x.strideF}, {kk, w}));
      fn((kt - k0) / tk, t);
    }
    return;
  }
  // Rows of X^T (f on partitions, k contiguous), transposed in blocks of
  // [<= tileK rows, <= tileK k] into one PSUM bank of <= tileN columns.
  Value ident = ctx.identity(loc, x.elt);
  SmallVector<Value> outs(ceilDiv(k1 - k0, tk));
  for (int64_t p0 = 0; p0 < w; p0 += plan.tileN) {
    int64_t pw = std::min(plan.tileN, w - p0);
    for (int64_t c0 = k0; c0 < k1; c0 += plan.rowChunk) {
      int64_t cw = std::min(plan.rowChunk, k1 - c0);
      SmallVector<Value> rows;
      for (int64_t g0 = 0; g0 < pw; g0 += tk) {
        int64_t fr = std::min(tk, pw - g0);
        Value r = ctx.allocSbuf(loc, fr, cw, x.elt);
        ctx.dma(loc, r, ctx.tileAp(r), x.root,
                ctx.ap(x.offset + c0 * x.strideK + (f0 + p0 + g0) * x.strideF,
                       {x.strideF, x.strideK}, {fr, cw}));
        rows.push_back(r);
      }
      for (int64_t kt = c0; kt < c0 + cw; kt += tk) {
        int64_t kk = std::min(tk, c0 + cw - kt), i = (kt - k0) / tk;
        if (!outs[i])
          outs[i] = ctx.allocSbuf(loc, kk, w, x.elt);
        Value ps = psumTile(kk, pw);
        for (auto [g, r] : llvm::enumerate(rows)) {
          int64_t fr = partitionsOf(r);
          ctx.matmul(loc, ps, ctx.ap(g * tk, {pw, 1}, {kk, fr}), r,
                     ctx.ap(kt - c0, {cw, 1}, {fr, kk}), ident,
                     ctx.tileAp(ident, fr, fr), /*accumulate=*/false,
                     /*transpose=*/true);
        }
        copyFromPsum(outs[i], ctx.ap(p0, {w, 1}, {kk, pw}), ps);
        if (p0 + pw == w)
          fn(i, outs[i]);
      }
    }
  }
}

SmallVector<Value> MatrixProductEmitter::loadKTiles(const KMajorOperand &x,
                                                    int64_t k0, int64_t k1,
                                                    int64_t f0, int64_t w) {
  SmallVector<Value> tiles(ceilDiv(k1 - k0, plan.tileK));
  forEachKTile(x, k0, k1, f0, w, [&](int64_t i, Value t) { tiles[i] = t; });
  return tiles;
}

/// PSUM -> SBUF, alternating Scalar and Vector so neither limits the drain.
void MatrixProductEmitter::copyFromPsum(Value dst,
                                        nisa::AccessPatternAttr dstAp,
                                        Value psum) {
  ctx.copyAlternating(loc, dst, dstAp, psum, ctx.tileAp(psum), copyStream);
}

/// Copies an accumulated PSUM tile (C[m0:, n0:]) to SBUF in C's type right
/// away (freeing its bank); its store waits for flushStores().
void MatrixProductEmitter::retire(Value psum, const HbmView &c, int64_t m0,
                                  int64_t n0) {
  auto type = cast<nisa::TileType>(psum.getType());
  Value out = ctx.allocSbuf(loc, type.getPartitions(), type.getFreeSize(),
                            c.elementType());
  copyFromPsum(out, ctx.tileAp(out), psum);
  if (!epilogue || epilogue->storesResult)
    pending.push_back({out, c, m0, n0});
  if (!epilogue)
    return;
  // In program order each engine, and the DMA stream, runs in turn: an
  // epilogue emitted right after its copy-out would put the next tile's
  // copy-out (which frees the PSUM bank the matmuls wait for) behind the
  // whole epilogue chain, and its input loads behind the stores of the
  // previous tile's epilogue. So its inputs are loaded now and it is
  // computed one tile later.
  SmallVector<Value> loaded = loadEpilogueSources(
      m0, n0, type.getPartitions(), type.getFreeSize());
  applyDeferred();
  deferred.push_back({out, m0, n0, std::move(loaded)});
}

void MatrixProductEmitter::applyDeferred() {
  for (DeferredTile &t : deferred)
    applyEpilogue(t.out, t.m0, t.n0, std::move(t.loaded));
  deferred.clear();
}

void MatrixProductEmitter::applyEpilogue(Value out, int64_t m0, int64_t n0,
                                         SmallVector<Value> loaded) {
  auto type = cast<nisa::TileType>(out.getType());
  int64_t mt = type.getPartitions(), nt = type.getFreeSize();
  for (auto [i, source] : llvm::enumerate(epilogue->plan.sources)) {
    auto [v, loadType] = source;
    if (!epilogue->resultViews.contains(v))
      continue;
    Value t = out; // the tile itself
    // A widening float cast is free: the engines read the narrow tile and
    // compute in fp32.
    bool widening = isa<FloatType>(type.getElementType()) && loadType.isF32() &&
                    type.getElementType().getIntOrFloatBitWidth() < 32;
    if (loadType != type.getElementType() && !widening) {
      t = ctx.allocSbuf(loc, mt, nt, loadType);
      ctx.copyOnVector(loc, t, ctx.tileAp(t), out, ctx.tileAp(out));
    }
    loaded[i] = t;
  }
  SmallVector<Value> outs =
      epilogue->plan.computeTile(ctx, loc, mt, nt, loaded);
  for (auto [j, t] : llvm::enumerate(outs))
    pending.push_back({t, epilogue->outputViews[j], m0, n0});
}

SmallVector<Value> MatrixProductEmitter::loadEpilogueSources(int64_t m0,
                                                             int64_t n0,
                                                             int64_t mt,
                                                             int64_t nt) {
  SmallVector<Value> loaded;
  for (auto [i, source] : llvm::enumerate(epilogue->plan.sources)) {
    auto [v, loadType] = source;
    if (epilogue->resultViews.contains(v)) {
      loaded.push_back(Value());
      continue;
    }
    const HbmView &x = epilogue->sourceViews[i];
    // A row broadcast along M is loaded once per column block while its
    // row fits 16 KiB per partition (all blocks stay live).
    bool invariant =
        x.strides[0] == 0 &&
        x.shape[1] * int64_t((loadType.getIntOrFloatBitWidth() + 7) / 8) <=
            16 * 1024;
    auto key = std::make_tuple(unsigned(i), n0, mt);
    if (invariant)
      if (Value t = rowInvariant.lookup(key)) {
        reusedRowInColumnLoop |= inColumnLoop;
        loaded.push_back(t);
        continue;
      }
    Value t = ctx.allocSbuf(loc, mt, nt, loadType);
    ctx.dma(loc, t, ctx.tileAp(t), rootOf(x.root),
            ctx.ap(x.offset + m0 * x.strides[0] + n0 * x.strides[1],
                   {x.strides[0], x.strides[1]}, {mt, nt}));
    if (invariant)
      rowInvariant[key] = t;
    loaded.push_back(t);
  }
  return loaded;
}

/// Emits the stores of the retired tiles. Called after the next tile's
/// loads and matmuls, so that in the in-order DMA stream those loads are not
/// queued behind stores that wait for this tile's copy-out.
void MatrixProductEmitter::flushStores() {
  for (const PendingStore &p : pending) {
    auto type = cast<nisa::TileType>(p.tile.getType());
    const HbmView &c = p.dst;
    ctx.dma(loc, rootOf(c.root),
            ctx.ap(c.offset + p.m0 * c.strides[0] + p.n0 * c.strides[1],
                   {c.strides[0], c.strides[1]},
                   {type.getPartitions(), type.getFreeSize()}),
            p.tile, ctx.tileAp(p.tile));
  }
  pending.clear();
}

void MatrixProductEmitter::stationaryResident(const KMajorOperand &a,
                                              const KMajorOperand &b,
                                              const HbmView &c, int64_t m,
                                              int64_t k, int64_t n) {
  // The blocks of A's rows, each resident while B streams past it: a loop
  // over blocks around the loop over column tiles.
  auto rowBlock = [&](int64_t mb0, const KMajorOperand &a,
                      const KMajorOperand &b, const HbmView &c) {
    int64_t mw = std::min(plan.block, m - mb0);
    SmallVector<Value> at = loadKTiles(a, 0, k, mb0, mw);
    // B streams past the resident block, a column tile at a time.
    auto columnTile = [&](int64_t n0, const KMajorOperand &, const KMajorOperand &b,
                          const HbmView &c) {
      int64_t nt = std::min(plan.tileN, n - n0);
      SmallVector<Value> psums;
      for (int64_t mi = 0; mi < mw; mi += plan.tileM)
        psums.push_back(psumTile(std::min(plan.tileM, mw - mi), nt));
      forEachKTile(b, 0, k, n0, nt, [&](int64_t i, Value bt) {
        int64_t kk = partitionsOf(bt);
        for (auto [j, ps] : llvm::enumerate(psums))
          ctx.matmul(loc, ps, ctx.tileAp(ps), at[i],
                     ctx.ap(j * plan.tileM, {mw, 1}, {kk, partitionsOf(ps)}),
                     bt, ctx.tileAp(bt), /*accumulate=*/i > 0);
      });
      flushStores();
      for (auto [j, ps] : llvm::enumerate(psums))
        retire(ps, c, mb0 + j * plan.tileM, n0);
    };
    sweep(n, plan.tileN, a, 0, b, plan.tileN * b.strideF, c, 0, plan.tileN,
          columnTile);
  };
  sweep(m, plan.block, a, plan.block * a.strideF, b, 0, c, plan.block, 0,
        rowBlock);
}

void MatrixProductEmitter::movingResident(const KMajorOperand &a,
                                          const KMajorOperand &b,
                                          const HbmView &c, int64_t m,
                                          int64_t k, int64_t n) {
  // The blocks of B's columns, each resident while A's row tiles sweep
  // past it: a loop over blocks around the loop over row tiles.
  auto columnBlock = [&](int64_t nb0, const KMajorOperand &a,
                         const KMajorOperand &b, const HbmView &c) {
    int64_t nw = std::min(plan.block, n - nb0);
    SmallVector<Value> bt = loadKTiles(b, 0, k, nb0, nw);
    // The row tiles of A sweep past the resident block of B.
    auto rowTile = [&](int64_t m0, const KMajorOperand &a,
                       const KMajorOperand &, const HbmView &c) {
      int64_t mt = std::min(plan.tileM, m - m0);
      SmallVector<Value> at = loadKTiles(a, 0, k, m0, mt);
      for (int64_t n0 = nb0; n0 < nb0 + nw; n0 += plan.tileN) {
        int64_t nt = std::min(plan.tileN, nb0 + nw - n0);
        Value ps = psumTile(mt, nt);
        for (auto [i, t] : llvm::enumerate(at)) {
          int64_t kk = partitionsOf(t);
          ctx.matmul(loc, ps, ctx.tileAp(ps), t, ctx.tileAp(t), bt[i],
                     ctx.ap(n0 - nb0, {nw, 1}, {kk, nt}),
                     /*accumulate=*/i > 0);
        }
        flushStores();
        retire(ps, c, m0, n0);
      }
    };
    sweep(m, plan.tileM, a, plan.tileM * a.strideF, b, 0, c, plan.tileM, 0,
          rowTile);
  };
  sweep(n, plan.block, a, 0, b, plan.block * b.strideF, c, 0, plan.block,
        columnBlock);
}

void MatrixProductEmitter::streamed(const KMajorOperand &a,
                                    const KMajorOperand &b, const HbmView &c,
                                    int64_t m, int64_t k, int64_t n) {
  // A row tile at a time (a loop over them around the loop over column
  // tiles), both operands streamed in K chunks.
  auto rowTile = [&](int64_t m0, const KMajorOperand &a,
                     const KMajorOperand &b, const HbmView &c) {
    int64_t mt = std::min(plan.tileM, m - m0);
    auto outputTile = [&](int64_t n0, const KMajorOperand &a,
                          const KMajorOperand &b, const HbmView &c) {
      int64_t nt = std::min(plan.tileN, n - n0);
      Value ps = psumTile(mt, nt);
      for (int64_t c0 = 0; c0 < k; c0 += plan.kChunk) {
        int64_t c1 = std::min(k, c0 + plan.kChunk);
        SmallVector<Value> at = loadKTiles(a, c0, c1, m0, mt);
        forEachKTile(b, c0, c1, n0, nt, [&](int64_t i, Value bt) {
          ctx.matmul(loc, ps, ctx.tileAp(ps), at[i], ctx.tileAp(at[i]), bt,
                     ctx.tileAp(bt), /*accumulate=*/c0 > 0 || i > 0);
        });
      }
      flushStores();
      retire(ps, c, m0, n0);
    };
    sweep(n, plan.tileN, a, 0, b, plan.tileN * b.strideF, c, 0, plan.tileN,
          outputTile);
  };
  sweep(m, plan.tileM, a, plan.tileM * a.strideF, b, 0, c, plan.tileM, 0,
        rowTile);
}

void MatrixProductEmitter::emitIterations(int64_t count,
                                          const KMajorOperand &a, int64_t stepA,
                                          const KMajorOperand &b, int64_t stepB,
                                          const HbmView &c, int64_t dm,
                                          int64_t dn, IterationFn body) {
  auto unrolled = [&](int64_t from) {
    for (int64_t i = from; i < count; ++i)
      body(i, a, b, c);
  };
  // Each buffer the tiles walk, with the elements it moves per iteration:
  // A, B, C, and the epilogue's [M, N] inputs and outputs. A buffer walked
  // through two views that move differently would need two windows.
  SmallVector<std::pair<Value, int64_t>> moves{
      {a.root, stepA}, {b.root, stepB},
      {c.root, dm * c.strides[0] + dn * c.strides[1]}};
  if (epilogue) {
    for (auto [i, x] : llvm::enumerate(epilogue->sourceViews))
      if (!epilogue->resultViews.contains(epilogue->plan.sources[i].first))
        moves.push_back({x.root, dm * x.strides[0] + dn * x.strides[1]});
    for (const HbmView &x : epilogue->outputViews)
      moves.push_back({x.root, dm * x.strides[0] + dn * x.strides[1]});
  }
  llvm::DenseMap<Value, int64_t> stepOf;
  bool shared = false;
  for (auto [root, step] : moves) {
    auto [it, fresh] = stepOf.try_emplace(root, step);
    shared |= !fresh && it->second != step;
  }
  if (count < 3 || shared)
    return unrolled(0);
  // The first iterations run as they are until what one leaves for the
  // next (pending stores, a deferred epilogue) is what every later one
  // leaves: with an epilogue, iteration 0 leaves a deferred tile and no
  // store yet, iteration 1 both.
  body(0, a, b, c);
  for (int64_t first = 1; count - first >= 2; ++first) {
    LoopAttempt attempt = tryLoop(first, count, a, b, c, dm, dn, moves, body);
    if (attempt == LoopAttempt::Emitted)
      return;
    if (attempt == LoopAttempt::Never)
      return unrolled(first);
    body(first, a, b, c);
  }
  unrolled(count - 1);
}

MatrixProductEmitter::LoopAttempt MatrixProductEmitter::tryLoop(
    int64_t first, int64_t count, const KMajorOperand &a,
    const KMajorOperand &b, const HbmView &c, int64_t dm, int64_t dn,
    ArrayRef<std::pair<Value, int64_t>> moves, IterationFn body) {
  // Iteration first - 1 left stores pending and (with an epilogue) a tile
  // whose epilogue is deferred; every loop iteration takes those of the
  // previous one over as its iter_args (written through its own windows at
  // iteration first - 1's positions) and leaves its own, one step on.
  SmallVector<PendingStore> entryPending = pending;
  SmallVector<DeferredTile> entryDeferred = deferred;
  auto carriedValues = [&]() {
    SmallVector<Value> values;
    for (const PendingStore &p : pending)
      values.push_back(p.tile);
    for (const DeferredTile &t : deferred) {
      values.push_back(t.out);
      for (Value v : t.loaded)
        if (v)
          values.push_back(v);
    }
    return values;
  };
  SmallVector<Value> inits = carriedValues();
  OpBuilder &bld = ctx.b;
  Value lb = bld.create<arith::ConstantIndexOp>(loc, 0);
  Value ub = bld.create<arith::ConstantIndexOp>(loc, count - first);
  Value one = bld.create<arith::ConstantIndexOp>(loc, 1);
  auto loop = bld.create<scf::ForOp>(loc, lb, ub, one, inits);
  OpBuilder::InsertPoint after = bld.saveInsertionPoint();
  bld.setInsertionPointToStart(loop.getBody());
  // A loop inside another's body moves the outer loop's windows further:
  // its windows are windows of those, and the outer ones come back after.
  DenseMap<Value, Value> outerWindows = windowOf;
  for (auto [root, step] : moves) // in this order: the IR is deterministic
    if (step != 0 && windowOf.lookup(root) == outerWindows.lookup(root)) {
      Value source = rootOf(root);
      windowOf[root] = bld.create<nisa::HbmWindowOp>(
          loc, source, loop.getInductionVar(), step);
    }
  auto windowed = [&](const KMajorOperand &x) {
    KMajorOperand w = x;
    w.root = rootOf(x.root);
    return w;
  };
  auto args = loop.getRegionIterArgs().begin();
  pending.clear();
  for (const PendingStore &p : entryPending)
    pending.push_back({*args++, p.dst, p.m0, p.n0});
  deferred.clear();
  for (const DeferredTile &t : entryDeferred) {
    DeferredTile d{*args++, t.m0, t.n0, {}};
    for (Value v : t.loaded)
      d.loaded.push_back(v ? Value(*args++) : Value());
    deferred.push_back(std::move(d));
  }
  auto invariantBefore = rowInvariant;
  // A kept row reused in a body inside any loop over columns (this one or
  // one around it) would be the body's column's in every iteration.
  const bool outerInColumnLoop = inColumnLoop,
             outerReused = reusedRowInColumnLoop;
  inColumnLoop = outerInColumnLoop || dn != 0;
  reusedRowInColumnLoop = false;
  // C's stores and the epilogue's loads and stores find their windows in
  // windowOf (the pending stores keep C's own view).
  body(first, windowed(a), windowed(b), c);
  windowOf = std::move(outerWindows);
  const bool reused = reusedRowInColumnLoop;
  inColumnLoop = outerInColumnLoop;
  reusedRowInColumnLoop = outerReused || (reused && outerInColumnLoop);
  // Exact only if the body left what iteration first - 1 did, one step on,
  // loaded no row the later tiles share (it would be the body's own) and
  // reused none loaded before (a column loop would repeat its row).
  bool same = !reused && pending.size() == entryPending.size() &&
              deferred.size() == entryDeferred.size() &&
              rowInvariant.size() == invariantBefore.size();
  for (size_t i = 0; same && i < pending.size(); ++i)
    same = pending[i].tile.getType() == entryPending[i].tile.getType() &&
           pending[i].dst.root == entryPending[i].dst.root &&
           pending[i].m0 == entryPending[i].m0 + dm &&
           pending[i].n0 == entryPending[i].n0 + dn;
  for (size_t i = 0; same && i < deferred.size(); ++i) {
    const DeferredTile &t = deferred[i], &e = entryDeferred[i];
    same = t.out.getType() == e.out.getType() && t.m0 == e.m0 + dm &&
           t.n0 == e.n0 + dn && t.loaded.size() == e.loaded.size();
    for (size_t j = 0; same && j < t.loaded.size(); ++j)
      same = bool(t.loaded[j]) == bool(e.loaded[j]) &&
             (!t.loaded[j] ||
              t.loaded[j].getType() == e.loaded[j].getType());
  }
  SmallVector<Value> yielded = carriedValues();
  bld.create<scf::YieldOp>(loc, yielded);
  bld.restoreInsertionPoint(after);
  if (!same) {
    loop.erase();
    for (Value bound : {one, ub, lb})
      bound.getDefiningOp()->erase();
    // A body that loads or reuses a shared row: so will every later tile's.
    bool loadedShared =
        rowInvariant.size() > invariantBefore.size() || reused;
    pending = std::move(entryPending);
    deferred = std::move(entryDeferred);
    rowInvariant = std::move(invariantBefore); // drop the erased body's
    return loadedShared ? LoopAttempt::Never : LoopAttempt::NotYet;
  }
  // After the loop: the last iteration's, on the buffers themselves.
  int64_t last = count - 1 - first; // steps from the body's iteration on
  auto results = loop.getResults().begin();
  SmallVector<PendingStore> lastPending;
  for (const PendingStore &p : pending)
    lastPending.push_back(
        {*results++, p.dst, p.m0 + last * dm, p.n0 + last * dn});
  SmallVector<DeferredTile> lastDeferred;
  for (const DeferredTile &t : deferred) {
    DeferredTile d{*results++, t.m0 + last * dm, t.n0 + last * dn, {}};
    for (Value v : t.loaded)
      d.loaded.push_back(v ? Value(*results++) : Value());
    lastDeferred.push_back(std::move(d));
  }
  pending = std::move(lastPending);
  deferred = std::move(lastDeferred);
  return LoopAttempt::Emitted;
}

void MatrixProductEmitter::emit(const KMajorOperand &a, const KMajorOperand &b,
                                const HbmView &c, int64_t m, int64_t k,
                                int64_t n) {
  switch (plan.order) {
  case MatmulOrder::StationaryResident:
    stationaryResident(a, b, c, m, k, n);
    break;
  case MatmulOrder::MovingResident:
    movingResident(a, b, c, m, k, n);
    break;
  case MatmulOrder::Streamed:
    streamed(a, b, c, m, k, n);
    break;
  }
  applyDeferred();
  flushStores();
}

int64_t elementBytes(Type t) { return (t.getIntOrFloatBitWidth() + 7) / 8; }

/// Batch `i` of a rank-3 view as a rank-2 view.
HbmView batchSlice(const HbmView &v, int64_t i) {
  return HbmView{v.root, v.offset + i * v.strides[0],
                 {v.shape[1], v.shape[2]}, {v.strides[1], v.strides[2]}};
}

} // namespace

LogicalResult trnc::tile::lowerMatmul(LoweringContext &ctx, Operation *op,
                                      const MatmulEpilogue *epilogue) {
  auto mm = cast<trn::MatmulOp>(op);
  auto lhsIt = ctx.views.find(mm.getLhs()), rhsIt = ctx.views.find(mm.getRhs());
  if (lhsIt == ctx.views.end() || rhsIt == ctx.views.end())
    return op->emitOpError("operand has no lowered HBM view");
  const HbmView a = lhsIt->second, b = rhsIt->second;
  HbmView c = ctx.destination(op->getLoc(), mm.getResult());
  ctx.views[mm.getResult()] = c;
  const bool batched = a.shape.size() == 3;
  const int64_t batches = batched ? a.shape[0] : 1;
  auto slice = [&](const HbmView &v, int64_t i) {
    return batched ? batchSlice(v, i) : v;
  };
  HbmView a0 = slice(a, 0), b0 = slice(b, 0);
  int64_t m = a0.shape[0], k = a0.shape[1], n = b0.shape[1];
  if (batches == 0 || m == 0 || n == 0)
    return success();
  if (k == 0)
    return op->emitOpError("matmul_k: a contraction of size 0 is unsupported");

  MatmulProblem problem;
  problem.m = m;
  problem.k = k;
  problem.n = n;
  problem.eltBytes = elementBytes(a.elementType());
  problem.outBytes = elementBytes(c.elementType());
  problem.a = {k, m, a0.strides[1], a0.strides[0]};
  problem.b = {k, n, b0.strides[0], b0.strides[1]};
  MatmulPlan plan = planMatmul(ctx.machine, problem);

  MatrixProductEmitter emitter(ctx, op->getLoc(), plan, epilogue);
  EmitMark start(ctx.b); // with an epilogue: one group for the engines
  for (int64_t i = 0; i < batches; ++i) {
    HbmView ai = slice(a, i), bi = slice(b, i), ci = slice(c, i);
    KMajorOperand at{ai.root, ai.offset, ai.strides[1], ai.strides[0],
                     ai.elementType(), plan.transposeA};
    KMajorOperand bk{bi.root, bi.offset, bi.strides[0], bi.strides[1],
                     bi.elementType(), plan.transposeB};
    emitter.emit(at, bk, ci, m, k, n);
  }
  // The epilogue's computation is free to move between engines
  // (ElementwiseGroupPlan::computeTile); the rest is accounted where it is.
  if (epilogue)
    markEngineGroup(start.begin(), ctx.b.getInsertionPoint(),
                    ctx.nextEngineGroup++);
  return success();
}
