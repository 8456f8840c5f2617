//===- LowerReduction.cpp - trn.reduce_{sum,max,min,prod} -> tiled nisa --===//
//
// One lowering for the four reductions; only the ALU op differs.
// The input is viewed as [kept..., reduced...] (strides permuted, no copy).
// Kept dims walk partitions (one kept element per partition row); reduced
// dims are cut into free-axis chunks, folded per partition by a
// BlockedReduction (blocked partial sums reduced as a tree, so a long sum
// rounds O(log n) times per element, not O(n): BlockedReduction.h).
//
// A sum over the outer dim of a row-major tensor (the bias gradient over the
// batch) instead runs on the Tensor Engine (ColumnSums.h: X[R, C] tiles as
// the stationary operand, a column of ones as the moving one, in PSUM),
// which reads X rows contiguously rather than gathering columns. When there
// are fewer rows than partitions and folding them moves no more transfers
// (a position embedding's gradient summed over a batch of 2 or 4), the kept
// elements are spread over all partitions instead and the few rows folded
// on Vector in fp32: each row moves as [128, up to 2048] tiles, where the
// Tensor Engine form would move R partitions x 512 columns per instruction. The same fold
// serves any other reduction over fewer rows than partitions that lies
// between kept dims with a contiguous innermost one (an amax over a pooling
// stride, a mean over channels of an NCHW map), where one kept element per
// partition would gather its rows element by element.
//
//===----------------------------------------------------------------------===//
#include "passes/Tile/BlockedReduction.h"
#include "passes/Tile/ColumnSums.h"
#include "passes/Tile/LoweringContext.h"
#include "passes/Tile/TileLoops.h"

#include "dialects/Trn/TrnOps.h"

#include <algorithm>
#include <limits>

#define DEBUG_TYPE "trnc-tile-lower-to-nisa"

using namespace mlir;
using namespace trnc;
using namespace trnc::tile;

namespace {
/// Stores an fp32 [P, 1] (or [1, N]) SBUF/PSUM tile to HBM buffer `dst`
/// (of `dstType`) with the cast on the Scalar engine when needed.
void storeResult(LoweringContext &ctx, Location loc, Value acc, Value dst,
                 Type dstType, nisa::AccessPatternAttr dstAp) {
  auto type = cast<nisa::TileType>(acc.getType());
  Value out = acc;
  if (type.getElementType() != dstType ||
      type.getSpace() == nisa::MemorySpace::psum) {
    out = ctx.allocSbuf(loc, type.getPartitions(), type.getFreeSize(), dstType);
    ctx.copyOnScalar(loc, out, ctx.tileAp(out), acc, ctx.tileAp(acc));
  }
  ctx.dma(loc, dst, dstAp, out, ctx.tileAp(out));
}

/// sum over r of X[r, c] for a [R, C] view with C contiguous, on the Tensor
/// Engine, in blocks of up to 512 columns, each stored once its rows are
/// summed: the [128, cn] tiles of X as stationary operands (ColumnSums.h)
/// when there are enough of them to pay for the store, else a column of
/// ones as the stationary operand, each matmul adding up to 128 rows of the
/// block into one PSUM row.
void lowerOuterSumOnTensorEngine(LoweringContext &ctx, Location loc,
                                 const HbmView &x, int64_t rows,
                                 int64_t rowStride, int64_t cols,
                                 const HbmView &dst, int64_t dstStride) {
  Type elt = x.elementType(), f32 = ctx.b.getF32Type();
  int64_t tk = std::min<int64_t>(ctx.machine.matmulMaxK, ctx.partitions());
  int64_t tn = ctx.machine.matmulMaxN;
  Value ones = ctx.allocSbuf(loc, std::min(tk, rows), 1, elt);
  ctx.memset(loc, ones, ctx.tileAp(ones), 1.0);
  bool columns = columnSumsPay((rows + tk - 1) / tk, elt);
  for (int64_t c0 = 0; c0 < cols; c0 += tn) {
    int64_t cn = std::min(tn, cols - c0);
    ColumnSumShape shape = columnSumShape(ctx, cn);
    Value acc = columns ? ctx.allocTile(loc, nisa::MemorySpace::psum,
                                        shape.partitions, shape.blocks, f32)
                        : ctx.allocTile(loc, nisa::MemorySpace::psum, 1, cn, f32);
    for (int64_t r0 = 0; r0 < rows; r0 += tk) {
      int64_t rp = std::min(tk, rows - r0);
      Value t = ctx.allocSbuf(loc, rp, cn, elt);
      ctx.dma(loc, t, ctx.tileAp(t), x.root,
              ctx.ap(x.offset + r0 * rowStride + c0, {rowStride, 1}, {rp, cn}));
      if (columns)
        addColumnSums(ctx, loc, acc, t, cn, /*c0=*/0, rp, cn, ones,
                      /*accumulate=*/r0 > 0);
      else
        ctx.matmul(loc, acc, ctx.tileAp(acc), ones, ctx.tileAp(ones, rp, 1), t,
                   ctx.tileAp(t), /*accumulate=*/r0 > 0);
    }
    if (columns)
      storeColumnSums(ctx, loc, acc, cn, dst.root, dst.offset + c0 * dstStride,
                      dstStride, dst.elementType());
    else
      storeResult(ctx, loc, acc, dst.root, dst.elementType(),
                  ctx.ap(dst.offset + c0 * dstStride,
                         {cn * dstStride, dstStride}, {1, cn}));
  }
}

/// X[r, kept...] folded over its R rows (R < partitions, each row at
/// `rowStride` from the last) with `alu`, for a kept space walked jointly
/// with the destination: tiles of the kept elements on every partition, one
/// load per row (in fp32), one Vector instruction per row after the first.
void lowerFewRowsOnVector(LoweringContext &ctx, Location loc, nisa::AluOp alu,
                          Value inRoot, const JointSpace &keptSpace,
                          int64_t rows, int64_t rowStride, const HbmView &dst) {
  Type f32 = ctx.b.getF32Type();
  emitTileLoops(ctx.b, loc, keptSpace, ctx.partitions(), ctx.maxFree({f32}),
                {inRoot, dst.root},
                [&](const TileTask &task, ArrayRef<Value> roots) {
                  int64_t p = task.partitions, f = task.freeElements;
                  Value acc = ctx.allocSbuf(loc, p, f, f32);
                  for (int64_t r = 0; r < rows; ++r) {
                    Value t = r == 0 ? acc : ctx.allocSbuf(loc, p, f, f32);
                    ctx.dma(loc, t, ctx.tileAp(t), roots[0],
                            ctx.ap(task.offsets[0] + r * rowStride,
                                   task.strides[0], task.counts));
                    if (r > 0)
                      ctx.tensorTensor(loc, alu, acc, ctx.tileAp(acc), acc,
                                       ctx.tileAp(acc), t, ctx.tileAp(t));
                  }
                  storeResult(ctx, loc, acc, roots[1], dst.elementType(),
                              ctx.ap(task.offsets[1], task.strides[1],
                                     task.counts));
                });
}
} // namespace

namespace {
/// Kept elements per partition from which folding a few rows on Vector beats
/// gathering each kept element's rows into one partition (one load per row
/// against one descriptor per element).
constexpr int64_t kMinFoldedKeptPerPartition = 2;

/// The ALU op that combines two partial results of a trn reduction.
nisa::AluOp combiningOp(Operation *op) {
  if (isa<trn::ReduceMaxOp>(op))
    return nisa::AluOp::max;
  if (isa<trn::ReduceMinOp>(op))
    return nisa::AluOp::min;
  if (isa<trn::ReduceProdOp>(op))
    return nisa::AluOp::multiply;
  return nisa::AluOp::add;
}
} // namespace

LogicalResult trnc::tile::lowerReduce(LoweringContext &ctx, Operation *op) {
  nisa::AluOp alu = combiningOp(op);
  Value input = op->getOperand(0), result = op->getResult(0);
  Location loc = op->getLoc();
  auto it = ctx.views.find(input);
  if (it == ctx.views.end())
    return op->emitOpError("operand has no lowered HBM view");
  const HbmView in = it->second;
  HbmView dst = ctx.destination(loc, result);
  ctx.views[result] = dst;

  // Kept dims walked jointly by input and output; reduced dims by the input.
  ArrayRef<int64_t> dims =
      cast<DenseI64ArrayAttr>(op->getAttr("dims")).asArrayRef();
  HbmView kept{in.root, in.offset, {}, {}};
  JointSpace reduced;
  reduced.offsets = {0};
  reduced.strides.resize(1);
  for (size_t d = 0; d < in.shape.size(); ++d) {
    bool isReduced = llvm::is_contained(dims, (int64_t)d);
    (isReduced ? reduced.shape : kept.shape).push_back(in.shape[d]);
    (isReduced ? reduced.strides[0] : kept.strides).push_back(in.strides[d]);
  }
  reduced.merge();
  if (in.numElements() == 0 || dst.numElements() == 0)
    return op->emitOpError("a reduction over an empty tensor is unsupported");
  if (reduced.shape.empty()) { // only size-1 dims reduced: a copy
    emitCopy(ctx, loc, dst, kept);
    return success();
  }
  JointSpace keptSpace = JointSpace::build({&kept, &dst});

  // Few rows (one reduced dim, not the innermost, of fewer elements than
  // partitions) over a kept space whose innermost dim is contiguous: kept
  // elements on partitions and along the free axis, the rows folded on
  // Vector. Else each partition would hold one kept element and gather its
  // few reduced elements one by one: Hiera's q pooling (amax over a stride of
  // 4 between 96-wide head rows) was 384 [128, 4] element gathers, 2.25 ms
  // simulated, and 12.6 us this way; a mean over 96 channels of [8, 96, 32,
  // 32] 1.44 ms. Only a handful of kept elements (a few per partition) is
  // cheaper gathered. A sum over the outer dim of a 2D view goes to the
  // Tensor Engine (below) unless its rows are long.
  int64_t keptElements = dst.numElements();
  bool outerSum = alu == nisa::AluOp::add && keptSpace.shape.size() == 1 &&
                  reduced.shape.size() == 1 &&
                  keptSpace.strides[0][0] == 1 && reduced.strides[0][0] != 1;
  // An outer sum folds on Vector when that moves no more transfers than
  // the Tensor Engine form, which loads and stores per block of 512
  // columns (and pays 4x for fp32 matmuls): a position embedding's
  // gradient over a batch of 2 ([2, 32768] f32) is 3 transfers and one add
  // this way, 128 transfers and 64 matmuls that way.
  int64_t rows = reduced.shape[0]; // not empty: handled above as a copy
  int64_t foldTransfers =
      rows * llvm::divideCeil(keptElements, ctx.partitions() *
                                                ctx.maxFree({ctx.b.getF32Type()}));
  int64_t tensorEngineTransfers =
      2 * llvm::divideCeil(keptElements, ctx.machine.matmulMaxN);
  if (reduced.shape.size() == 1 && reduced.strides[0][0] != 1 &&
      rows < ctx.partitions() &&
      isa<FloatType>(in.elementType()) && !keptSpace.shape.empty() &&
      keptSpace.strides[0].back() == 1 &&
      (keptElements >= ctx.partitions() * ctx.machine.matmulMaxN ||
       (outerSum ? keptElements >= ctx.partitions() &&
                       foldTransfers <= tensorEngineTransfers
                 : keptElements >= kMinFoldedKeptPerPartition * ctx.partitions()))) {
    lowerFewRowsOnVector(ctx, loc, alu, in.root, keptSpace, reduced.shape[0],
                         reduced.strides[0][0], dst);
    return success();
  }

  if (outerSum) {
    HbmView x{in.root, keptSpace.offsets[0], {}, {}};
    HbmView out = dst;
    out.offset = keptSpace.offsets[1];
    lowerOuterSumOnTensorEngine(ctx, loc, x, reduced.shape[0],
                                reduced.strides[0][0], keptSpace.shape[0], out,
                                keptSpace.strides[1][0]);
    return success();
  }

  Type f32 = ctx.b.getF32Type();
  int64_t maxFree = ctx.maxFree({in.elementType(), f32});
  int64_t totalBlocks = 0, block = reductionBlockSize(alu);
  forEachFreeChunk(reduced.shape, reduced.strides[0], maxFree,
                   [&](int64_t, ArrayRef<int64_t>, ArrayRef<int64_t> counts) {
                     int64_t f = 1;
                     for (int64_t c : counts)
                       f *= c;
                     totalBlocks += reductionBlockCount(f, block);
                   });
  // One kept element per partition (free size 1 over the kept space).
  emitTileLoops(
      ctx.b, loc, keptSpace, ctx.partitions(), /*maxFree=*/1,
      {in.root, dst.root}, [&](const TileTask &task, ArrayRef<Value> roots) {
        int64_t p = task.partitions;
        BlockedReduction red(ctx, loc, alu, p, maxFree, totalBlocks);
        forEachFreeChunk(reduced.shape, reduced.strides[0], maxFree,
                         [&](int64_t off, ArrayRef<int64_t> strides,
                             ArrayRef<int64_t> counts) {
                           int64_t f = 1;
                           for (int64_t c : counts)
                             f *= c;
                           SmallVector<int64_t> s{task.strides[0][0]}, cnt{p};
                           s.append(strides.begin(), strides.end());
                           cnt.append(counts.begin(), counts.end());
                           Value t = ctx.allocSbuf(loc, p, f, in.elementType());
                           ctx.dma(loc, t, ctx.tileAp(t), roots[0],
                                   ctx.ap(task.offsets[0] + off, s, cnt));
                           red.add(t, f);
                         });
        storeResult(ctx, loc, red.finish(), roots[1], dst.elementType(),
                    ctx.ap(task.offsets[1], task.strides[1], task.counts));
      });
  return success();
}
