//===- MatmulImporters.cpp - mm and addmm ---------------------------------===//
//
// aten.mm -> trn.matmul; aten.addmm -> beta * bias + alpha * (a @ b) with
// the bias broadcast explicitly. Operands are converted to the result dtype
// first (trn.matmul needs one element type).
//
//===----------------------------------------------------------------------===//
#include "NodeContext.h"

#include "dialects/Trn/TrnOps.h"

using namespace mlir;

namespace trnc::import {
namespace {

/// a @ b for two 2-D tensors, in the result dtype.
FailureOr<Value> matmul(NodeContext &ctx, Value a, Value b) {
  auto at = cast<RankedTensorType>(a.getType());
  auto bt = cast<RankedTensorType>(b.getType());
  if (at.getRank() != 2 || bt.getRank() != 2)
    return ctx.invalid("expects 2-D operands, got " +
                       formatShape(at.getShape()) + " and " +
                       formatShape(bt.getShape()));
  if (at.getDimSize(1) != bt.getDimSize(0))
    return ctx.invalid("contraction sizes differ: " +
                       formatShape(at.getShape()) + " @ " +
                       formatShape(bt.getShape()));
  Type et = ctx.resultElementType();
  auto type = RankedTensorType::get({at.getDimSize(0), bt.getDimSize(1)}, et);
  return ctx.create<trn::MatmulOp>(type, ctx.convert(a, et),
                                   ctx.convert(b, et));
}

FailureOr<Value> importMm(NodeContext &ctx) {
  FailureOr<Value> a = ctx.tensor(0, "self"), b = ctx.tensor(1, "mat2");
  if (failed(a) || failed(b))
    return failure();
  return matmul(ctx, *a, *b);
}

FailureOr<Value> importAddmm(NodeContext &ctx) {
  FailureOr<Value> bias = ctx.tensor(0, "self");
  FailureOr<Value> a = ctx.tensor(1, "mat1"), b = ctx.tensor(2, "mat2");
  FailureOr<double> beta = ctx.scalar(kKeywordOnly, "beta", 1.0);
  FailureOr<double> alpha = ctx.scalar(kKeywordOnly, "alpha", 1.0);
  if (failed(bias) || failed(a) || failed(b) || failed(beta) || failed(alpha))
    return failure();
  FailureOr<Value> product = matmul(ctx, *a, *b);
  if (failed(product))
    return failure();
  Value scaled = ctx.mulScalar(*product, *alpha);
  // ATen ignores the bias when beta == 0 (NaN and inf in it do not leak).
  if (*beta == 0.0)
    return scaled;
  FailureOr<SmallVector<Value>> ops = ctx.elementwiseOperands({scaled, *bias});
  if (failed(ops))
    return failure();
  if ((*ops)[0].getType() != scaled.getType())
    return ctx.invalid("bias of shape " +
                       formatShape(cast<RankedTensorType>(bias->getType())
                                       .getShape()) +
                       " does not broadcast to the product's shape");
  Value biasTerm = ctx.mulScalar((*ops)[1], *beta);
  return ctx.create<trn::AddOp>(scaled.getType(), scaled, biasTerm);
}

} // namespace

void registerMatmulImporters(OpRegistry &r) {
  r.add("aten.mm.default", importMm);
  r.add("aten.addmm.default", importAddmm);
}

} // namespace trnc::import
