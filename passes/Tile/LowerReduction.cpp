//===- LowerReduction.cpp - trn.reduce_{sum,max,min,prod} -> tiled nisa --===//
//
// One lowering for the four reductions; only the ALU op differs.
// The input is viewed as [kept..., reduced...] (strides permuted, no copy).
// Kept dims walk partitions (one kept element per partition row); reduced
// dims are cut into free-axis chunks. The Vector engine's tensor_reduce
// folds a group sequentially in fp32, so one long fold would lose accuracy
// linearly in its length (eager's CPU sums are cascaded/pairwise). Instead
// each chunk of a sum is reduced in blocks of kBlock elements (one grouped
// tensor_reduce: [P, f/kBlock, kBlock] -> [P, f/kBlock] partial sums) into
// an fp32 [P, n] partials tile, and the partials are reduced as a
// kBlock-ary tree; a partials tile that fills up is folded into an fp32
// accumulator. Each element passes through O(kBlock * log_kBlock(n))
// roundings instead of O(n), reading the same elements (plus one small
// reduce per level). max/min/prod reduce one group per chunk, the chunk
// results in one more reduce.
//
// A sum over the outer dim of a row-major tensor (the bias gradient over the
// batch) instead runs on the Tensor Engine: ones[R, 1]^T @ X[R, C] in PSUM,
// which reads X rows contiguously rather than gathering columns.
//
//===----------------------------------------------------------------------===//
#include "passes/Tile/LoweringContext.h"

#include "dialects/Trn/TrnOps.h"

#include <algorithm>
#include <limits>

#define DEBUG_TYPE "trnc-tile-lower-to-nisa"

using namespace mlir;
using namespace trnc;
using namespace trnc::tile;

namespace {
/// Stores an fp32 [P, 1] (or [1, N]) SBUF/PSUM tile to `dst` with the cast
/// to the output type on the Scalar engine when needed.
void storeResult(LoweringContext &ctx, Location loc, Value acc,
                 const HbmView &dst, nisa::AccessPatternAttr dstAp) {
  auto type = cast<nisa::TileType>(acc.getType());
  Value out = acc;
  if (type.getElementType() != dst.elementType() ||
      type.getSpace() == nisa::MemorySpace::psum) {
    out = ctx.allocSbuf(loc, type.getPartitions(), type.getFreeSize(),
                        dst.elementType());
    ctx.copyOnScalar(loc, out, ctx.tileAp(out), acc, ctx.tileAp(acc));
  }
  ctx.dma(loc, dst.root, dstAp, out, ctx.tileAp(out));
}

/// sum over r of X[r, c] for a [R, C] view with C contiguous, on the Tensor
/// Engine: the stationary operand is a column of ones, so each matmul adds
/// up to 128 rows of a 512-wide column block into one PSUM row.
void lowerOuterSumOnTensorEngine(LoweringContext &ctx, Location loc,
                                 const HbmView &x, int64_t rows,
                                 int64_t rowStride, int64_t cols,
                                 const HbmView &dst, int64_t dstStride) {
  Type elt = x.elementType();
  int64_t tk = std::min<int64_t>(ctx.machine.matmulMaxK, ctx.partitions());
  int64_t tn = ctx.machine.matmulMaxN;
  Value ones = ctx.allocSbuf(loc, std::min(tk, rows), 1, elt);
  ctx.memset(loc, ones, ctx.tileAp(ones), 1.0);
  for (int64_t c0 = 0; c0 < cols; c0 += tn) {
    int64_t cn = std::min(tn, cols - c0);
    Value psum = ctx.allocTile(loc, nisa::MemorySpace::psum, 1, cn,
                               ctx.b.getF32Type());
    for (int64_t r0 = 0; r0 < rows; r0 += tk) {
      int64_t rp = std::min(tk, rows - r0);
      Value t = ctx.allocSbuf(loc, rp, cn, elt);
      ctx.dma(loc, t, ctx.tileAp(t), x.root,
              ctx.ap(x.offset + r0 * rowStride + c0, {rowStride, 1}, {rp, cn}));
      ctx.matmul(loc, psum, ctx.tileAp(psum), ones, ctx.tileAp(ones, rp, 1), t,
                 ctx.tileAp(t), /*accumulate=*/r0 > 0);
    }
    storeResult(ctx, loc, psum, dst,
                ctx.ap(dst.offset + c0 * dstStride, {cn * dstStride, dstStride},
                       {1, cn}));
  }
}
} // namespace

namespace {
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

namespace {
/// Elements one tensor_reduce group of a sum folds sequentially. 32 keeps a
/// 2048-wide chunk at 32 + 64 sequential roundings (two levels) instead of
/// 2048. max/min are exact in any order and a product's relative error
/// grows with its length in any order: they fold a whole chunk per group.
constexpr int64_t kBlock = 32;

int64_t blockSize(nisa::AluOp alu) {
  return alu == nisa::AluOp::add ? kBlock
                                 : std::numeric_limits<int64_t>::max();
}

/// Groups (the last one possibly short) of f elements.
int64_t blockCount(int64_t f, int64_t block) {
  return f / block + (f % block ? 1 : 0);
}

/// An fp32 [P, 1] reduction of free-axis chunks, blocked (see the header).
class BlockedReduction {
public:
  /// `maxPartials`: columns per partials tile; `totalBlocks`: the blocks all
  /// add() calls will bring. A tile takes no more columns than remain, so a
  /// reduction of one block is a single tensor_reduce into [P, 1].
  BlockedReduction(LoweringContext &ctx, Location loc, nisa::AluOp alu,
                   int64_t parts, int64_t maxPartials, int64_t totalBlocks)
      : ctx(ctx), loc(loc), alu(alu), block(blockSize(alu)), parts(parts),
        maxPartials(maxPartials), remaining(totalBlocks) {}

  /// Folds the first `f` free elements of tile `t` ([parts, >= f]).
  void add(Value t, int64_t f) {
    int64_t groups = f / block, tail = f % block;
    int64_t need = blockCount(f, block);
    if (partials && used + need > capacity)
      flush();
    if (!partials) {
      capacity = std::max(need, std::min(maxPartials, remaining));
      partials = ctx.allocSbuf(loc, parts, capacity, ctx.b.getF32Type());
      used = 0;
    }
    remaining -= need;
    int64_t tFree = cast<nisa::TileType>(t.getType()).getFreeSize();
    if (groups)
      ctx.tensorReduce(loc, alu, partials, column(used, groups), t,
                       ctx.ap(0, {tFree, block, 1}, {parts, groups, block}));
    if (tail)
      ctx.tensorReduce(loc, alu, partials, column(used + groups, 1), t,
                       ctx.ap(groups * block, {tFree, 1}, {parts, tail}));
    used += need;
  }

  /// The fp32 [parts, 1] result (at least one add() must have run).
  Value finish() {
    flush();
    return acc;
  }

private:
  nisa::AccessPatternAttr column(int64_t first, int64_t n) {
    return ctx.ap(first, {capacity, 1}, {parts, n});
  }

  /// Reduces the partials tile to one value per partition (a block-ary
  /// tree) and folds it into the accumulator.
  void flush() {
    if (!partials)
      return;
    Value level = partials;
    int64_t n = used, stride = capacity;
    while (n > 1) {
      int64_t groups = n / block, tail = n % block;
      int64_t next = groups + (tail ? 1 : 0);
      Value out = ctx.allocSbuf(loc, parts, next, ctx.b.getF32Type());
      if (groups)
        ctx.tensorReduce(loc, alu, out, ctx.ap(0, {next, 1}, {parts, groups}),
                         level,
                         ctx.ap(0, {stride, block, 1}, {parts, groups, block}));
      if (tail)
        ctx.tensorReduce(loc, alu, out, ctx.ap(groups, {next, 1}, {parts, 1}),
                         level, ctx.ap(groups * block, {stride, 1}, {parts, tail}));
      level = out;
      n = next;
      stride = next;
    }
    if (!acc) {
      acc = level;
    } else {
      Value sum = ctx.allocSbuf(loc, parts, 1, ctx.b.getF32Type());
      ctx.tensorTensor(loc, alu, sum, ctx.tileAp(sum), acc, ctx.tileAp(acc),
                       level, ctx.ap(0, {stride, 1}, {parts, 1}));
      acc = sum;
    }
    partials = Value();
    used = 0;
  }

  LoweringContext &ctx;
  Location loc;
  nisa::AluOp alu;
  int64_t block, parts, maxPartials;
  int64_t remaining; // blocks still to come
  int64_t capacity = 0; // columns of the current partials tile
  Value partials;       // fp32 [parts, capacity]; `used` columns hold partials
  int64_t used = 0;
  Value acc; // fp32 [parts, 1] (or a [parts, stride] leading column)
};
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

  if (alu == nisa::AluOp::add && keptSpace.shape.size() == 1 &&
      reduced.shape.size() == 1 &&
      keptSpace.strides[0][0] == 1 && reduced.strides[0][0] != 1) {
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
  int64_t totalBlocks = 0, block = blockSize(alu);
  forEachFreeChunk(reduced.shape, reduced.strides[0], maxFree,
                   [&](int64_t, ArrayRef<int64_t>, ArrayRef<int64_t> counts) {
                     int64_t f = 1;
                     for (int64_t c : counts)
                       f *= c;
                     totalBlocks += blockCount(f, block);
                   });
  // One kept element per partition (free size 1 over the kept space).
  forEachTile(keptSpace, ctx.partitions(), /*maxFree=*/1,
              [&](const TileTask &task) {
                int64_t p = task.partitions;
                BlockedReduction red(ctx, loc, alu, p, maxFree, totalBlocks);
                forEachFreeChunk(
                    reduced.shape, reduced.strides[0], maxFree,
                    [&](int64_t off, ArrayRef<int64_t> strides,
                        ArrayRef<int64_t> counts) {
                      int64_t f = 1;
                      for (int64_t c : counts)
                        f *= c;
                      SmallVector<int64_t> s{task.strides[0][0]}, cnt{p};
                      s.append(strides.begin(), strides.end());
                      cnt.append(counts.begin(), counts.end());
                      Value t = ctx.allocSbuf(loc, p, f, in.elementType());
                      ctx.dma(loc, t, ctx.tileAp(t), in.root,
                              ctx.ap(task.offsets[0] + off, s, cnt));
                      red.add(t, f);
                    });
                storeResult(ctx, loc, red.finish(), dst,
                            ctx.ap(task.offsets[1], task.strides[1],
                                   task.counts));
              });
  return success();
}
