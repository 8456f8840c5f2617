//===- LowerIndirect.cpp - trn.gather_rows / trn.scatter_rows -> dma_indirect //
//
// Rows move by DmaIndirect (Isa.h): an index tile of up to 128 rows is
// loaded HBM -> SBUF (an int64 index narrowed to int32 by that dma_copy),
// then one indirect DMA per chunk of the row width moves P rows at once.
//
// gather_rows: per 128-row block and width chunk, dma_gather table -> SBUF
//   tile (zeros for out-of-range indices), then dma_copy tile -> result.
// scatter_rows: result = copy of base (tiled copy), then per block and
//   chunk, load the src rows into SBUF and dma_scatter them into the result
//   (accumulate adds in fp32). All scatters write the whole table, so
//   trnc-schedule-semaphores orders them after the base copy and each other
//   (WAW): blocks apply in order and last-writer-wins / duplicate sums hold.
//   Scatters whose duplicates write equal rows (the touched-rows path's
//   copies of base rows and of the rounded sums) are `idempotent`: no order
//   among themselves, so their transfers overlap.
//   A bf16/f16 accumulate sums in fp32 and rounds once (the contract: "sums
//   in fp32, then cast"): with at most as many indices as rows, only the
//   touched rows go through an fp32 table (~M rows of traffic, see
//   lowerScatter: a tied embedding's gradient at the end of a backward
//   graph); with more, the whole base goes through an fp32 copy.
//
// Tables of more than 65535 rows (an HBM pattern's row count is 16-bit)
// are cut into row ranges with the index shifted per range (tensor_scalar
// subtract on the index tile): a scatter simply drops the rows outside its
// range; a gather takes each later range's rows where index >= its start
// (copy_predicated on Vector).
//
//===----------------------------------------------------------------------===//
#include "passes/Tile/LoweringContext.h"
#include "passes/Tile/TileLoops.h"

#include "dialects/Trn/TrnOps.h"

using namespace mlir;
using namespace trnc;
using namespace trnc::tile;

namespace {

/// Rows one HBM pattern can span (AccessPattern::partitionCount, 16-bit).
constexpr int64_t kMaxTableRows = 65535;

/// One block of up to 128 indices, loaded and shifted per table range.
struct IndexBlock {
  int64_t first = 0; // first index position (m)
  int64_t rows = 0;  // P
  Value tile;        // i32 [128, 1]
};

class IndirectLowering {
public:
  IndirectLowering(LoweringContext &ctx, Location loc, const HbmView &index)
      : ctx(ctx), loc(loc), index(index) {}

  /// Calls fn(block) for each block of up to 128 indices.
  void forEachBlock(llvm::function_ref<void(const IndexBlock &)> fn) {
    int64_t M = index.shape[0], P = ctx.partitions();
    for (int64_t m0 = 0; m0 < M; m0 += P)
      fn(loadBlock(index.root, m0));
  }

  /// Loads the block of indices from position m0, through `root` (the
  /// index's buffer, or a tile loop's window of it).
  IndexBlock loadBlock(Value root, int64_t m0) {
    int64_t M = index.shape[0], P = ctx.partitions();
    IndexBlock blk{m0, std::min(P, M - m0),
                   ctx.allocSbuf(loc, P, 1, ctx.b.getI32Type())};
    ctx.dma(loc, blk.tile, ctx.tileAp(blk.tile, blk.rows, 1), root,
            ctx.ap(index.offset + m0 * index.strides[0],
                   {index.strides[0], 1}, {blk.rows, 1}));
    return blk;
  }

  /// The index tile for table rows [r0, r0 + n): the block's own tile for
  /// the first range, else a shifted copy (index - r0, exact in fp32 for
  /// indices below 2^24).
  Value shiftedIndex(const IndexBlock &blk, int64_t r0) {
    if (r0 == 0)
      return blk.tile;
    Value t = ctx.allocSbuf(loc, ctx.partitions(), 1, ctx.b.getI32Type());
    ctx.tensorScalar(loc, t, ctx.tileAp(t, blk.rows, 1), blk.tile,
                     ctx.tileAp(blk.tile, blk.rows, 1),
                     nisa::AluOp::subtract, double(r0));
    return t;
  }

  /// Calls fn(c0, w) for each chunk of a row of `width` elements.
  void forEachChunk(int64_t width, int64_t maxFree,
                    llvm::function_ref<void(int64_t, int64_t)> fn) {
    for (int64_t c0 = 0; c0 < width; c0 += maxFree)
      fn(c0, std::min(maxFree, width - c0));
  }

  /// The HBM pattern of rows [r0, r0 + n), columns [c0, c0 + w) of `t`.
  nisa::AccessPatternAttr rowsAp(const HbmView &t, int64_t r0, int64_t n,
                                 int64_t c0, int64_t w) {
    return ctx.ap(t.offset + r0 * t.strides[0] + c0 * t.strides[1],
                  {t.strides[0], t.strides[1]}, {n, w});
  }

  LoweringContext &ctx;
  Location loc;
  HbmView index;
};

LogicalResult lowerGather(LoweringContext &ctx, trn::GatherRowsOp op,
                          const HbmView &table, const HbmView &index) {
  Location loc = op.getLoc();
  HbmView out = ctx.destination(loc, op.getResult());
  ctx.views[op.getResult()] = out;
  int64_t N = table.shape[0], D = table.shape[1];
  if (D == 0 || index.shape[0] == 0)
    return success();
  Type elt = table.elementType();
  int64_t maxFree = ctx.maxFree({elt});
  IndirectLowering low(ctx, loc, index);
  low.forEachBlock([&](const IndexBlock &blk) {
    low.forEachChunk(D, maxFree, [&](int64_t c0, int64_t w) {
      Value rows = ctx.allocSbuf(loc, ctx.partitions(), maxFree, elt);
      auto rowsAp = ctx.tileAp(rows, blk.rows, w);
      if (N == 0)
        ctx.memset(loc, rows, rowsAp, 0.0); // every index is out of range
      for (int64_t r0 = 0; r0 < N; r0 += kMaxTableRows) {
        int64_t n = std::min(kMaxTableRows, N - r0);
        Value idx = low.shiftedIndex(blk, r0);
        auto idxAp = ctx.tileAp(idx, blk.rows, 1);
        if (r0 == 0) {
          ctx.dmaGather(loc, rows, rowsAp, table.root,
                        low.rowsAp(table, r0, n, c0, w), idx, idxAp);
          continue;
        }
        // Later ranges: gather into a second tile and take its rows where
        // index >= r0 (a later range overwrites those past its end; past N
        // the last range's zeros stay), exact for every dtype.
        Value part = ctx.allocSbuf(loc, ctx.partitions(), maxFree, elt);
        auto partAp = ctx.tileAp(part, blk.rows, w);
        ctx.dmaGather(loc, part, partAp, table.root,
                      low.rowsAp(table, r0, n, c0, w), idx, idxAp);
        Value take = ctx.allocSbuf(loc, ctx.partitions(), 1, ctx.b.getI32Type());
        ctx.tensorScalar(loc, take, ctx.tileAp(take, blk.rows, 1), blk.tile,
                         ctx.tileAp(blk.tile, blk.rows, 1), nisa::AluOp::is_ge,
                         double(r0));
        // The [P, 1] predicate broadcast along the row (free stride 0).
        ctx.copyPredicated(loc, rows, rowsAp, take, ctx.ap(0, {1, 0}, {blk.rows, w}),
                           part, partAp);
      }
      ctx.dma(loc, out.root, low.rowsAp(out, blk.first, blk.rows, c0, w),
              rows, rowsAp);
    });
  });
  return success();
}

/// Whether `a` and `b` name the same elements (a scatter written in place
/// into its base: nothing to copy).
bool sameView(const HbmView &a, const HbmView &b) {
  return a.root == b.root && a.offset == b.offset && a.shape == b.shape &&
         a.strides == b.strides;
}

/// A 16-bit accumulate of at most as many indices as rows sums only the
/// rows it touches in fp32 (lowerScatter).
bool sumsTouchedRows(trn::ScatterRowsOp op) {
  auto base = cast<RankedTensorType>(op.getBase().getType());
  Type elt = base.getElementType();
  int64_t M = cast<RankedTensorType>(op.getIndex().getType()).getDimSize(0);
  return op.getAccumulate() && (elt.isBF16() || elt.isF16()) && M > 0 &&
         M <= base.getDimSize(0) && base.getDimSize(1) > 0;
}

/// Calls fn(blk, c0, w, r0, n, idx) per block, row chunk and table range:
/// idx the block's index shifted into rows [r0, r0 + n).
void forEachPiece(IndirectLowering &low, ArrayRef<IndexBlock> blocks,
                  int64_t N, int64_t D, int64_t maxFree,
                  llvm::function_ref<void(const IndexBlock &, int64_t, int64_t,
                                          int64_t, int64_t, Value)>
                      fn) {
  for (const IndexBlock &blk : blocks)
    low.forEachChunk(D, maxFree, [&](int64_t c0, int64_t w) {
      for (int64_t r0 = 0; r0 < N; r0 += kMaxTableRows)
        fn(blk, c0, w, r0, std::min(kMaxTableRows, N - r0),
           low.shiftedIndex(blk, r0));
    });
}

/// Two SBUF tiles taken in turn (double buffering): the load into one waits
/// until the instruction reading the other's previous contents has, so
/// that loads run at most one ahead of a chain of scatters that consumes
/// them one at a time, and the first arrives at full bandwidth instead of
/// sharing it with all the others (a scatter-add's blocks: ~20 us of the
/// GPT step's tail).
class TilePair {
public:
  TilePair(LoweringContext &ctx, Location loc, int64_t free, Type elt) {
    for (Value &t : tiles)
      t = ctx.allocSbuf(loc, ctx.partitions(), free, elt);
  }
  Value next() { return tiles[turn++ % 2]; }

private:
  Value tiles[2];
  unsigned turn = 0;
};

/// Loads src's rows of `blk`, columns [c0, c0 + w), into `rows` (through
/// `srcRoot`: src's buffer or a tile loop's window of it) and scatters them
/// into `target` (N rows), one DMA per range of at most kMaxTableRows rows.
void scatterChunk(LoweringContext &ctx, Location loc, IndirectLowering &low,
                  const IndexBlock &blk, const HbmView &src, Value srcRoot,
                  const HbmView &target, int64_t N, int64_t c0, int64_t w,
                  Value rows, LoweringContext::ScatterMode mode) {
  auto rowsAp = ctx.tileAp(rows, blk.rows, w);
  ctx.dma(loc, rows, rowsAp, srcRoot,
          low.rowsAp(src, blk.first, blk.rows, c0, w));
  for (int64_t r0 = 0; r0 < N; r0 += kMaxTableRows) {
    int64_t n = std::min(kMaxTableRows, N - r0);
    Value idx = low.shiftedIndex(blk, r0);
    ctx.dmaScatter(loc, target.root, low.rowsAp(target, r0, n, c0, w), rows,
                   rowsAp, idx, ctx.tileAp(idx, blk.rows, 1), mode);
  }
}

/// A 16-bit scatter-add's touched-rows state: its result buffer, its fp32
/// row sums table and its index blocks (startTouchedRows).
struct TouchedRows {
  HbmView out, acc;
  SmallVector<IndexBlock> blocks;
};

/// Steps 0 and 1 of lowerScatter's touched-rows path (they read only base
/// and index): result = base, S[index[m]] = base[index[m]] (out-of-range
/// rows gather as zeros and scatter nowhere; duplicates write the same row).
TouchedRows startTouchedRows(LoweringContext &ctx, trn::ScatterRowsOp op,
                             const HbmView &base, IndirectLowering &low) {
  Location loc = op.getLoc();
  TouchedRows prep;
  prep.out = ctx.destination(loc, op.getResult());
  int64_t N = base.shape[0], D = base.shape[1];
  Type elt = base.elementType(), f32 = ctx.b.getF32Type();
  if (!sameView(prep.out, base))
    emitCopy(ctx, loc, prep.out, base);
  prep.acc = ctx.allocScratch(loc, RankedTensorType::get(base.shape, f32));
  int64_t maxFree = ctx.maxFree({f32});
  low.forEachBlock([&](const IndexBlock &blk) { prep.blocks.push_back(blk); });
  forEachPiece(low, prep.blocks, N, D, maxFree,
               [&](const IndexBlock &blk, int64_t c0, int64_t w, int64_t r0,
                   int64_t n, Value idx) {
                 auto idxAp = ctx.tileAp(idx, blk.rows, 1);
                 Value rows =
                     ctx.allocSbuf(loc, ctx.partitions(), maxFree, elt);
                 auto rowsAp = ctx.tileAp(rows, blk.rows, w);
                 ctx.dmaGather(loc, rows, rowsAp, base.root,
                               low.rowsAp(base, r0, n, c0, w), idx, idxAp);
                 ctx.dmaScatter(loc, prep.acc.root,
                                low.rowsAp(prep.acc, r0, n, c0, w), rows,
                                rowsAp, idx, idxAp,
                                LoweringContext::ScatterMode::Idempotent);
               });
  return prep;
}

/// The point just after the last operation lowered so far (in the builder's
/// block) that touches one of `roots` or a window of one, or that defines a
/// root: work reading only those buffers can go there rather than after
/// everything lowered since. Block start if none does (graph inputs).
Block::iterator afterLastUse(OpBuilder &b, ArrayRef<Value> roots) {
  Block *block = b.getInsertionBlock();
  Block::iterator end = b.getInsertionPoint();
  Operation *last = nullptr;
  auto consider = [&](Operation *op) {
    Operation *a = op ? block->findAncestorOpInBlock(*op) : nullptr;
    if (!a || (end != block->end() && !a->isBeforeInBlock(&*end)))
      return;
    if (!last || last->isBeforeInBlock(a))
      last = a;
  };
  SmallVector<Value> work(roots.begin(), roots.end());
  while (!work.empty()) {
    Value v = work.pop_back_val();
    consider(v.getDefiningOp());
    for (Operation *user : v.getUsers()) {
      consider(user);
      if (isa<nisa::HbmWindowOp>(user))
        work.push_back(user->getResult(0));
    }
  }
  return last ? std::next(Block::iterator(last)) : block->begin();
}

/// Step 2 of lowerScatter's touched-rows path: S[index[m]] += src[m], in
/// index order. Blocks alike (whole blocks of 128 indices, one chunk of the
/// row, one table range) are a tile loop after the first, its index and
/// src windows moving a block per iteration, so that `fuse` can join it to
/// the loop that writes src (a layer norm gradient's rows, which the tied
/// embedding's gradient adds up): each block is then added while the next
/// rows are computed, not after all of them (bf16 GPT backward: the tail
/// after the last layer norm gradient 230 -> 174 us). Not at lnc=2: the
/// scatters' whole-table footprints keep the chain on one core, and
/// joined to the row loop they would take its rows from that core on chip
/// (SplitLogicalCores computes what a core's transfers need), which then
/// computes most of the rows (backward at lnc=2 6167 -> 6235 us).
/// Otherwise each block is emitted, its src rows loaded into two tiles in
/// turn (TilePair).
void addTouchedRows(LoweringContext &ctx, Location loc, IndirectLowering &low,
                    ArrayRef<IndexBlock> blocks, const HbmView &src,
                    const HbmView &acc, int64_t maxFree) {
  int64_t N = acc.shape[0], D = acc.shape[1], P = ctx.partitions();
  Type elt = src.elementType();
  bool alike = ctx.lnc == 1 && blocks.size() >= 3 && D <= maxFree &&
               N <= kMaxTableRows &&
               llvm::all_of(blocks, [&](const IndexBlock &b) { return b.rows == P; });
  if (!alike) {
    TilePair srcTiles(ctx, loc, maxFree, elt);
    for (const IndexBlock &blk : blocks)
      low.forEachChunk(D, maxFree, [&](int64_t c0, int64_t w) {
        scatterChunk(ctx, loc, low, blk, src, src.root, acc, N, c0, w,
                     srcTiles.next(), LoweringContext::ScatterMode::Accumulate);
      });
    return;
  }
  auto addBlock = [&](const IndexBlock &blk, Value srcRoot) {
    scatterChunk(ctx, loc, low, blk, src, srcRoot, acc, N, 0, D,
                 ctx.allocSbuf(loc, P, maxFree, elt),
                 LoweringContext::ScatterMode::Accumulate);
  };
  addBlock(blocks.front(), src.root);
  // In the loop, each block's indices are loaded again (an SSA tile of
  // the start cannot be indexed by the iteration).
  TileLoopScope loop(ctx.b, loc, int64_t(blocks.size()) - 1,
                     {P * low.index.strides[0], P * src.strides[0]},
                     {low.index.root, src.root});
  addBlock(low.loadBlock(loop.roots()[0], P), loop.roots()[1]);
}

/// A 16-bit accumulate of M <= N indices goes through an fp32 table S
/// ([N, D] of scratch) of which only the touched rows are read or written:
///   0. result = base, 1. S[index[m]] = base[index[m]] (startTouchedRows);
///   2. S[index[m]] += src[m], in index order;
///   3. result[index[m]] = S[index[m]] rounded (gather, cast on chip,
///      scatter: duplicates write the same row).
/// Each touched row is base's plus the fp32 sum of its src rows in index
/// order, rounded once: the bits of the whole-table path, for ~M rows of
/// traffic instead of two copies of N rows, of which only steps 2 and 3
/// wait for src. Steps 0 and 1 go right after the last instruction so far
/// touching base or index: a tied embedding's gradient adds the token
/// rows to the LM head's weight gradient, written early in a backward
/// graph, and the rows it starts from need not wait, at the graph's end,
/// for the last layer's gradient (src).
LogicalResult lowerScatter(LoweringContext &ctx, trn::ScatterRowsOp op,
                           const HbmView &base, const HbmView &index,
                           const HbmView &src) {
  Location loc = op.getLoc();
  if (sumsTouchedRows(op)) {
    IndirectLowering low(ctx, loc, index);
    TouchedRows prep;
    {
      OpBuilder::InsertionGuard early(ctx.b);
      ctx.b.setInsertionPoint(ctx.b.getInsertionBlock(),
                              afterLastUse(ctx.b, {base.root, index.root}));
      prep = startTouchedRows(ctx, op, base, low);
    }
    ctx.views[op.getResult()] = prep.out;
    int64_t N = base.shape[0], D = base.shape[1];
    Type elt = base.elementType(), f32 = ctx.b.getF32Type();
    int64_t maxFree = ctx.maxFree({f32});
    ArrayRef<IndexBlock> blocks = prep.blocks;
    // 2. S[index[m]] += src[m], in index order.
    addTouchedRows(ctx, loc, low, blocks, src, prep.acc, maxFree);
    // 3. result[index[m]] = S[index[m]] rounded on chip (duplicates write
    // the same row), so the scatters move 16-bit rows.
    int64_t P = ctx.partitions();
    TilePair sumTiles(ctx, loc, maxFree, f32);
    forEachPiece(low, blocks, N, D, maxFree,
                 [&](const IndexBlock &blk, int64_t c0, int64_t w, int64_t r0,
                     int64_t n, Value idx) {
                   auto idxAp = ctx.tileAp(idx, blk.rows, 1);
                   Value sums = sumTiles.next();
                   auto sumsAp = ctx.tileAp(sums, blk.rows, w);
                   ctx.dmaGather(loc, sums, sumsAp, prep.acc.root,
                                 low.rowsAp(prep.acc, r0, n, c0, w), idx,
                                 idxAp);
                   Value rows = ctx.allocSbuf(loc, P, maxFree, elt);
                   auto rowsAp = ctx.tileAp(rows, blk.rows, w);
                   ctx.copyOnVector(loc, rows, rowsAp, sums, sumsAp);
                   ctx.dmaScatter(loc, prep.out.root,
                                  low.rowsAp(prep.out, r0, n, c0, w), rows,
                                  rowsAp, idx, idxAp,
                                  LoweringContext::ScatterMode::Idempotent);
                 });
    return success();
  }

  HbmView out = ctx.destination(loc, op.getResult());
  ctx.views[op.getResult()] = out;
  int64_t N = base.shape[0], D = base.shape[1];
  Type elt = base.elementType();
  // More indices than rows: a bf16/f16 accumulate sums in an fp32 copy of
  // the whole table and rounds it once at the end.
  bool viaF32 = op.getAccumulate() && (elt.isBF16() || elt.isF16());
  HbmView target = out;
  if (viaF32)
    target = ctx.allocScratch(
        loc, RankedTensorType::get(base.shape, ctx.b.getF32Type()));
  if (N > 0 && D > 0 && !sameView(target, base))
    emitCopy(ctx, loc, target, base);
  if (N > 0 && D > 0 && index.shape[0] > 0) {
    int64_t maxFree = ctx.maxFree({elt, target.elementType()});
    IndirectLowering low(ctx, loc, index);
    low.forEachBlock([&](const IndexBlock &blk) {
      low.forEachChunk(D, maxFree, [&](int64_t c0, int64_t w) {
        scatterChunk(ctx, loc, low, blk, src, src.root, target, N, c0, w,
                     ctx.allocSbuf(loc, ctx.partitions(), maxFree, elt),
                     op.getAccumulate() ? LoweringContext::ScatterMode::Accumulate
                                        : LoweringContext::ScatterMode::Store);
      });
    });
  }
  if (viaF32 && N > 0 && D > 0)
    emitCopy(ctx, loc, out, target);
  return success();
}

} // namespace

LogicalResult trnc::tile::lowerIndirect(LoweringContext &ctx, Operation *op) {
  SmallVector<HbmView, 3> views;
  for (Value v : op->getOperands()) {
    auto it = ctx.views.find(v);
    if (it == ctx.views.end())
      return op->emitOpError("operand has no lowered HBM view");
    views.push_back(it->second);
  }
  if (auto g = dyn_cast<trn::GatherRowsOp>(op))
    return lowerGather(ctx, g, views[0], views[1]);
  return lowerScatter(ctx, cast<trn::ScatterRowsOp>(op), views[0], views[1],
                      views[2]);
}
