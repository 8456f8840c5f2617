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
//   trnc-schedule-semaphores puts them on the queue of the base copy (WAW):
//   blocks apply in order and last-writer-wins / duplicate sums hold. A
//   bf16/f16 accumulate goes through an fp32 copy of base so duplicates sum
//   in fp32 and round once (the contract: "sums in fp32, then cast").
//
// Tables of more than 65535 rows (an HBM pattern's row count is 16-bit)
// are cut into row ranges with the index shifted per range (tensor_scalar
// subtract on the index tile): a scatter simply drops the rows outside its
// range; a gather takes each later range's rows where index >= its start
// (copy_predicated on Vector).
//
//===----------------------------------------------------------------------===//
#include "passes/Tile/LoweringContext.h"

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
    for (int64_t m0 = 0; m0 < M; m0 += P) {
      IndexBlock blk{m0, std::min(P, M - m0),
                     ctx.allocSbuf(loc, P, 1, ctx.b.getI32Type())};
      ctx.dma(loc, blk.tile, ctx.tileAp(blk.tile, blk.rows, 1), index.root,
              ctx.ap(index.offset + m0 * index.strides[0],
                     {index.strides[0], 1}, {blk.rows, 1}));
      fn(blk);
    }
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

LogicalResult lowerScatter(LoweringContext &ctx, trn::ScatterRowsOp op,
                           const HbmView &base, const HbmView &index,
                           const HbmView &src) {
  Location loc = op.getLoc();
  HbmView out = ctx.destination(loc, op.getResult());
  ctx.views[op.getResult()] = out;
  int64_t N = base.shape[0], D = base.shape[1];
  Type elt = base.elementType();
  // bf16/f16 sums: accumulate into an fp32 copy, round once at the end.
  bool viaF32 = op.getAccumulate() && (elt.isBF16() || elt.isF16());
  HbmView target = out;
  if (viaF32)
    target = ctx.allocScratch(
        loc, RankedTensorType::get(base.shape, ctx.b.getF32Type()));
  if (N > 0 && D > 0)
    emitCopy(ctx, loc, target, base);
  if (N > 0 && D > 0 && index.shape[0] > 0) {
    int64_t maxFree = ctx.maxFree({elt, target.elementType()});
    IndirectLowering low(ctx, loc, index);
    low.forEachBlock([&](const IndexBlock &blk) {
      low.forEachChunk(D, maxFree, [&](int64_t c0, int64_t w) {
        Value rows = ctx.allocSbuf(loc, ctx.partitions(), maxFree, elt);
        auto rowsAp = ctx.tileAp(rows, blk.rows, w);
        ctx.dma(loc, rows, rowsAp, src.root,
                low.rowsAp(src, blk.first, blk.rows, c0, w));
        for (int64_t r0 = 0; r0 < N; r0 += kMaxTableRows) {
          int64_t n = std::min(kMaxTableRows, N - r0);
          Value idx = low.shiftedIndex(blk, r0);
          ctx.dmaScatter(loc, target.root, low.rowsAp(target, r0, n, c0, w),
                         rows, rowsAp, idx, ctx.tileAp(idx, blk.rows, 1),
                         op.getAccumulate());
        }
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
