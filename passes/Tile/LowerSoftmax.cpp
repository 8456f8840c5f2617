//===- LowerSoftmax.cpp - trn.softmax -> fused nisa ----------------------===//
//
// Numerically stable (log-)softmax, one pass over each row. The input is
// viewed as [kept..., dim] (strides permuted, no copy): kept elements walk
// partitions, the softmax dim is the free axis, so a whole row sits in one
// partition of one SBUF tile:
//
//   m  = tensor_reduce max (row)                 Vector  [P, 1]
//   e  = activation exp (x, bias = -m)           Scalar  [P, N] (fp32)
//   s  = tensor_reduce add (e)                   Vector  [P, 1]
//   softmax:     out = e / s  (s broadcast)      Vector
//   log_softmax: out = (x + -m) - log s           Vector/GpSimd (two
//                tensor_scalars, each with a per-partition operand)
//
// The Scalar engine's per-partition bias operand (HARDWARE.md, activation)
// subtracts the row max inside the exponential, so the exponential needs
// no shifted copy of the row. log_softmax reads e only for its sum, so e (and the shifted
// row) go a column chunk at a time, their sums into columns of one tile
// summed once: its row task holds x and out whole, not a whole fp32 e,
// which lets the list scheduler start rows while a vocabulary-wide
// product still runs (-2.4% on the bf16 GPT forward). A row stays whole
// in SBUF: three fp32 row tiles per task in half
// of a partition (maxSoftmaxRow: 8192 on trn1, more on trn2/trn3); longer
// rows are refused (no silent fallback; the Python rule decomposes them).
//
//===----------------------------------------------------------------------===//
#include "passes/Tile/LoweringContext.h"
#include "passes/Tile/RowTiling.h"

#include "dialects/Trn/TrnOps.h"

using namespace mlir;
using namespace trnc;
using namespace trnc::tile;


/// Columns of fp32 exponentials a log_softmax row keeps at once (8 KiB a
/// partition). Measured on the bf16 GPT forward's 8192-wide vocabulary
/// (trn2, simulated): 512, 1024, 2048 and 4096 columns gave 6003.5,
/// 6039.6, 6000.1 and 6031.0 us; a whole row, 6145.8.
constexpr int64_t kLogSoftmaxChunk = 2048;

/// out = (x - m) - log(sum(exp(x - m))) for `p` rows of `n` (x [p, n],
/// negM = -m [p, 1], out [p, n] in the result's type), the exponentials and
/// the shifted row a column chunk at a time (fp32 [p, <= kLogSoftmaxChunk],
/// a fresh tile per chunk and use; why: the file comment).
static void logSoftmaxRows(LoweringContext &ctx, Location loc, Value x,
                           Value negM, Value out, int64_t p, int64_t n) {
  Type f32 = ctx.b.getF32Type();
  const int64_t chunk = std::min(n, kLogSoftmaxChunk);
  const int64_t chunks = (n + chunk - 1) / chunk;
  auto columns = [&](int64_t c) {
    return std::pair{c * chunk, std::min(chunk, n - c * chunk)};
  };
  Value s = ctx.allocSbuf(loc, p, 1, f32);
  Value partial = chunks > 1 ? ctx.allocSbuf(loc, p, chunks, f32) : s;
  for (int64_t c = 0; c < chunks; ++c) {
    auto [c0, w] = columns(c);
    Value e = ctx.allocSbuf(loc, p, w, f32);
    ctx.activation(loc, nisa::ActFunc::exp, e, ctx.tileAp(e), x,
                   ctx.ap(c0, {n, 1}, {p, w}), negM);
    ctx.tensorReduce(loc, nisa::AluOp::add, partial,
                     ctx.ap(c, {chunks, 1}, {p, 1}), e, ctx.tileAp(e));
  }
  if (chunks > 1)
    ctx.tensorReduce(loc, nisa::AluOp::add, s, ctx.tileAp(s), partial,
                     ctx.tileAp(partial));
  // (x - m) - log s, in that order as eager does: folding m + log s
  // into one bias would round at the magnitude of m.
  Value logS = ctx.allocSbuf(loc, p, 1, f32);
  ctx.activation(loc, nisa::ActFunc::log, logS, ctx.tileAp(logS), s,
                 ctx.tileAp(s));
  for (int64_t c = 0; c < chunks; ++c) {
    auto [c0, w] = columns(c);
    // The shift off the Scalar Engine, which runs the exponentials (a
    // per-partition tensor_scalar, which Vector or GpSimd takes): the
    // vocabulary loss's rows finish sooner (bf16 GPT forward 6000.1 ->
    // 5982.1 us, simulated).
    Value shifted = ctx.allocSbuf(loc, p, w, f32);
    ctx.tensorTensor(loc, nisa::AluOp::add, shifted, ctx.tileAp(shifted), x,
                     ctx.ap(c0, {n, 1}, {p, w}), negM,
                     ctx.ap(0, {1, 0}, {p, w}));
    ctx.tensorTensor(loc, nisa::AluOp::subtract, out,
                     ctx.ap(c0, {n, 1}, {p, w}), shifted,
                     ctx.tileAp(shifted), logS, ctx.ap(0, {1, 0}, {p, w}));
  }
}

int64_t trnc::tile::maxSoftmaxRow(const MachineModel &machine) {
  return static_cast<int64_t>(machine.sbufPartitionBytes) / (2 * 3 * 4);
}

LogicalResult trnc::tile::lowerSoftmax(LoweringContext &ctx, Operation *op) {
  auto softmax = cast<trn::SoftmaxOp>(op);
  Location loc = op->getLoc();
  auto it = ctx.views.find(softmax.getInput());
  if (it == ctx.views.end())
    return op->emitOpError("operand has no lowered HBM view");
  const HbmView in = it->second;
  HbmView dst = ctx.destination(loc, softmax.getResult());
  ctx.views[softmax.getResult()] = dst;
  if (in.numElements() == 0)
    return op->emitOpError("softmax over an empty tensor is unsupported");

  int64_t dim = softmax.getDim();
  int64_t n = in.shape[dim];
  Type f32 = ctx.b.getF32Type();
  int64_t maxRow = maxSoftmaxRow(ctx.machine);
  if (n > maxRow)
    return op->emitOpError("softmax rows of ")
           << n << " elements exceed the on-chip row limit (" << maxRow
           << " for this target); longer rows are not supported yet";
  int64_t inStride = in.strides[dim], outStride = dst.strides[dim];
  bool log = softmax.getLog();

  emitRowTiles(ctx.b, loc, in, dst, dim, ctx.partitions(),
               [&](const RowTile &task, Value inRoot, Value outRoot) {
    int64_t p = task.partitions;
    Value x = ctx.allocSbuf(loc, p, n, in.elementType());
    ctx.dma(loc, x, ctx.tileAp(x), inRoot,
            ctx.ap(task.inOffset, {task.inPartStride, inStride}, {p, n}));
    Value m = ctx.allocSbuf(loc, p, 1, f32);
    ctx.tensorReduce(loc, nisa::AluOp::max, m, ctx.tileAp(m), x,
                     ctx.tileAp(x));
    Value negM = ctx.allocSbuf(loc, p, 1, f32);
    ctx.tensorScalar(loc, negM, ctx.tileAp(negM), m, ctx.tileAp(m),
                     nisa::AluOp::multiply, -1.0);
    // The last instruction writes the result's type (the engines cast on
    // output): a softmax row needs x, e (fp32) and out; a log_softmax row
    // x, out and e a chunk at a time.
    Value out;
    if (log) {
      out = ctx.allocSbuf(loc, p, n, dst.elementType());
      logSoftmaxRows(ctx, loc, x, negM, out, p, n);
    } else {
      Value e = ctx.allocSbuf(loc, p, n, f32);
      ctx.activation(loc, nisa::ActFunc::exp, e, ctx.tileAp(e), x,
                     ctx.tileAp(x), negM);
      Value s = ctx.allocSbuf(loc, p, 1, f32);
      ctx.tensorReduce(loc, nisa::AluOp::add, s, ctx.tileAp(s), e,
                       ctx.tileAp(e));
      out = ctx.allocSbuf(loc, p, n, dst.elementType());
      ctx.tensorTensor(loc, nisa::AluOp::divide, out, ctx.tileAp(out), e,
                       ctx.tileAp(e), s, ctx.ap(0, {1, 0}, {p, n}));
    }
    ctx.dma(loc, outRoot,
            ctx.ap(task.outOffset, {task.outPartStride, outStride}, {p, n}),
            out, ctx.tileAp(out));
  });
  return success();
}
