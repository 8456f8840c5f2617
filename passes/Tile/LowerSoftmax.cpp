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
//   log_softmax: out = copy (x, bias = -m) - log s    Scalar, Vector
//
// The Scalar engine's per-partition bias operand (HARDWARE.md, activation)
// subtracts the row max inside the exponential, so no shifted copy is
// written. Rows longer than one tile are refused (no silent fallback).
//
//===----------------------------------------------------------------------===//
#include "passes/Tile/LoweringContext.h"
#include "passes/Tile/RowTiling.h"

#include "dialects/Trn/TrnOps.h"

using namespace mlir;
using namespace trnc;
using namespace trnc::tile;

namespace {
/// dst = func(src + bias[p]) with a per-partition fp32 [P, 1] bias tile.
void activationWithBias(LoweringContext &ctx, Location loc,
                        nisa::ActFunc func, Value dst, Value src, Value bias) {
  ctx.b.create<nisa::ActivationOp>(
      loc, nisa::ActFuncAttr::get(ctx.b.getContext(), func), dst,
      ctx.tileAp(dst), src, ctx.tileAp(src), bias, ctx.tileAp(bias),
      ctx.b.getF32FloatAttr(1.0), ctx.b.getF32FloatAttr(0.0),
      DenseI64ArrayAttr(), IntegerAttr());
}
} // namespace

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
  int64_t maxFree = ctx.maxFree({in.elementType(), f32});
  if (n > maxFree)
    return op->emitOpError("softmax rows of ")
           << n << " elements exceed one SBUF tile (" << maxFree
           << "); longer rows are not supported yet";
  int64_t inStride = in.strides[dim], outStride = dst.strides[dim];
  bool log = softmax.getLog();

  forEachRowTile(in, dst, dim, ctx.partitions(), [&](const RowTile &task) {
    int64_t p = task.partitions;
    Value x = ctx.allocSbuf(loc, p, n, in.elementType());
    ctx.dma(loc, x, ctx.tileAp(x), in.root,
            ctx.ap(task.inOffset, {task.inPartStride, inStride}, {p, n}));
    Value m = ctx.allocSbuf(loc, p, 1, f32);
    ctx.tensorReduce(loc, nisa::AluOp::max, m, ctx.tileAp(m), x,
                     ctx.tileAp(x));
    Value negM = ctx.allocSbuf(loc, p, 1, f32);
    ctx.tensorScalar(loc, negM, ctx.tileAp(negM), m, ctx.tileAp(m),
                     nisa::AluOp::multiply, -1.0);
    Value e = ctx.allocSbuf(loc, p, n, f32);
    activationWithBias(ctx, loc, nisa::ActFunc::exp, e, x, negM);
    Value s = ctx.allocSbuf(loc, p, 1, f32);
    ctx.tensorReduce(loc, nisa::AluOp::add, s, ctx.tileAp(s), e,
                     ctx.tileAp(e));
    Value out = ctx.allocSbuf(loc, p, n, f32);
    if (log) {
      // (x - m) - log s, in that order as eager does: folding m + log s
      // into one bias would round at the magnitude of m.
      Value logS = ctx.allocSbuf(loc, p, 1, f32);
      ctx.activation(loc, nisa::ActFunc::log, logS, ctx.tileAp(logS), s,
                     ctx.tileAp(s));
      activationWithBias(ctx, loc, nisa::ActFunc::copy, out, x, negM);
      ctx.tensorTensor(loc, nisa::AluOp::subtract, out, ctx.tileAp(out), out,
                       ctx.tileAp(out), logS, ctx.ap(0, {1, 0}, {p, n}));
    } else {
      ctx.tensorTensor(loc, nisa::AluOp::divide, out, ctx.tileAp(out), e,
                       ctx.tileAp(e), s, ctx.ap(0, {1, 0}, {p, n}));
    }
    Value stored = out;
    if (dst.elementType() != f32) {
      stored = ctx.allocSbuf(loc, p, n, dst.elementType());
      ctx.copyOnScalar(loc, stored, ctx.tileAp(stored), out, ctx.tileAp(out));
    }
    ctx.dma(loc, dst.root,
            ctx.ap(task.outOffset, {task.outPartStride, outStride}, {p, n}),
            stored, ctx.tileAp(stored));
  });
  return success();
}
