//===- ElementwiseImporters.cpp - arithmetic, activations, casts ----------===//
//
// ATen elementwise ops -> trn.{add,sub,mul,add_scalar,mul_scalar,relu,
// threshold_backward,convert}; the rest of the elementwise math is in
// MathImporters.cpp. Tensor operands are converted to the node's
// result dtype and broadcast to their common shape first; a Python scalar
// operand (and `alpha`) folds into a *_scalar op.
//
//===----------------------------------------------------------------------===//
#include "BoolAsInt.h"
#include "NodeContext.h"

#include "dialects/Trn/TrnOps.h"

using namespace mlir;

namespace trnc::import {
namespace {

/// The `self` operand in the result dtype.
FailureOr<Value> self(NodeContext &ctx) {
  FailureOr<Value> v = ctx.tensor(0, "self");
  if (failed(v))
    return failure();
  return ctx.convert(*v, ctx.resultElementType());
}

/// True when argument `pos` is a Python scalar rather than a tensor.
bool isScalarArg(NodeContext &ctx, unsigned pos, StringRef name) {
  const Arg *a = ctx.arg(pos, name);
  return a && a->isNumber();
}

/// lhs +/- rhs for two tensors, after conversion and broadcasting.
template <typename OpTy>
FailureOr<Value> binary(NodeContext &ctx, Value lhs, Value rhs,
                        double rhsScale = 1.0) {
  FailureOr<SmallVector<Value>> ops = ctx.elementwiseOperands({lhs, rhs});
  if (failed(ops))
    return failure();
  Value r = ctx.mulScalar((*ops)[1], rhsScale);
  return ctx.create<OpTy>((*ops)[0].getType(), (*ops)[0], r);
}

/// self + sign * alpha * other, for add/sub .Tensor and .Scalar.
FailureOr<Value> addSub(NodeContext &ctx, double sign, unsigned alphaPos) {
  // A Python scalar as `self` (`2 - t` traces to sub.Tensor(2, t)).
  if (isScalarArg(ctx, 0, "self") && !isScalarArg(ctx, 1, "other")) {
    FailureOr<double> alpha = ctx.scalar(alphaPos, "alpha", 1.0);
    FailureOr<Value> other = ctx.tensor(1, "other");
    if (failed(alpha) || failed(other))
      return failure();
    double lhs = *ctx.scalar(0, "self");
    // In the result dtype first: `0.3 + alpha * bool_mask` is float (phimoe).
    Value o = ctx.convert(*other, ctx.resultElementType());
    return ctx.addScalar(ctx.mulScalar(o, sign * *alpha), lhs);
  }
  FailureOr<Value> x = self(ctx);
  FailureOr<double> alpha = ctx.scalar(alphaPos, "alpha", 1.0);
  if (failed(x) || failed(alpha))
    return failure();
  if (isScalarArg(ctx, 1, "other")) {
    double other = *ctx.scalar(1, "other");
    return ctx.addScalar(*x, sign * *alpha * other);
  }
  FailureOr<Value> other = ctx.tensor(1, "other");
  if (failed(other))
    return failure();
  if (sign > 0)
    return binary<trn::AddOp>(ctx, *x, *other, *alpha);
  return binary<trn::SubOp>(ctx, *x, *other, *alpha);
}

FailureOr<Value> importAddTensor(NodeContext &ctx) {
  return addSub(ctx, 1.0, kKeywordOnly);
}
FailureOr<Value> importSubTensor(NodeContext &ctx) {
  return addSub(ctx, -1.0, kKeywordOnly);
}
FailureOr<Value> importAddScalar(NodeContext &ctx) {
  return addSub(ctx, 1.0, 2);
}
FailureOr<Value> importSubScalar(NodeContext &ctx) {
  return addSub(ctx, -1.0, 2);
}

/// other - alpha * self (rsub.Scalar has a positional alpha, rsub.Tensor a
/// keyword-only one).
FailureOr<Value> rsub(NodeContext &ctx, unsigned alphaPos) {
  FailureOr<Value> x = self(ctx);
  FailureOr<double> alpha = ctx.scalar(alphaPos, "alpha", 1.0);
  if (failed(x) || failed(alpha))
    return failure();
  if (isScalarArg(ctx, 1, "other"))
    return ctx.addScalar(ctx.mulScalar(*x, -*alpha), *ctx.scalar(1, "other"));
  FailureOr<Value> other = ctx.tensor(1, "other");
  if (failed(other))
    return failure();
  return binary<trn::SubOp>(ctx, *other, *x, *alpha);
}

FailureOr<Value> importRsubScalar(NodeContext &ctx) { return rsub(ctx, 2); }
FailureOr<Value> importRsubTensor(NodeContext &ctx) {
  return rsub(ctx, kKeywordOnly);
}

FailureOr<Value> importMul(NodeContext &ctx) {
  FailureOr<Value> x = self(ctx);
  if (failed(x))
    return failure();
  if (isScalarArg(ctx, 1, "other"))
    return ctx.mulScalar(*x, *ctx.scalar(1, "other"));
  FailureOr<Value> other = ctx.tensor(1, "other");
  if (failed(other))
    return failure();
  return binary<trn::MulOp>(ctx, *x, *other);
}

FailureOr<Value> importNeg(NodeContext &ctx) {
  FailureOr<Value> x = self(ctx);
  if (failed(x))
    return failure();
  return ctx.create<trn::MulScalarOp>(x->getType(), *x,
                                      ctx.builder.getF64FloatAttr(-1.0));
}

FailureOr<Value> importRelu(NodeContext &ctx) {
  FailureOr<Value> x = self(ctx);
  if (failed(x))
    return failure();
  return ctx.create<trn::ReluOp>(x->getType(), *x);
}

FailureOr<Value> importThresholdBackward(NodeContext &ctx) {
  FailureOr<Value> grad = ctx.tensor(0, "grad_output");
  FailureOr<Value> input = ctx.tensor(1, "self");
  FailureOr<double> threshold = ctx.scalar(2, "threshold");
  if (failed(grad) || failed(input) || failed(threshold))
    return failure();
  FailureOr<SmallVector<Value>> ops = ctx.elementwiseOperands({*grad, *input});
  if (failed(ops))
    return failure();
  return ctx.create<trn::ThresholdBackwardOp>(
      (*ops)[0].getType(), (*ops)[0], (*ops)[1],
      ctx.builder.getF64FloatAttr(*threshold));
}

/// _to_copy / convert_element_type: the result dtype comes from `meta`
/// (which agrees with the `dtype` argument); device, layout and
/// memory_format do not change the value.
FailureOr<Value> importConvert(NodeContext &ctx) {
  FailureOr<Value> x = ctx.tensor(0, "self");
  if (failed(x))
    return failure();
  return ctx.convert(*x, ctx.resultElementType());
}

} // namespace

void registerMathImporters(OpRegistry &r); // MathImporters.cpp

void registerElementwiseImporters(OpRegistry &r) {
  registerMathImporters(r);
  r.add("aten.add.Tensor", boolAsInt<importAddTensor>);
  r.add("aten.sub.Tensor", importSubTensor);
  r.add("aten.add.Scalar", importAddScalar);
  r.add("aten.sub.Scalar", importSubScalar);
  r.add("aten.rsub.Scalar", importRsubScalar);
  r.add("aten.rsub.Tensor", importRsubTensor);
  r.add("aten.mul.Tensor", boolAsInt<importMul>);
  r.add("aten.mul.Scalar", importMul);
  r.add("aten.neg.default", importNeg);
  r.add("aten.relu.default", importRelu);
  r.add("aten.threshold_backward.default", importThresholdBackward);
  r.add("aten._to_copy.default", importConvert);
  r.add("prims.convert_element_type.default", importConvert);
}

} // namespace trnc::import
