//===- LayerNormImporters.cpp - layer norm forward and backward ----------===//
//
// aten.native_layer_norm and aten.native_layer_norm_backward, expanded here
// into trn reductions and elementwise ops. They reach the importer whole
// (decompositions.py keeps them) for the reason batch norm does
// (BatchNormImporters.cpp): tracing PyTorch's decomposition of each one
// under AOTAutograd (~18 ATen nodes forward, ~15 backward) was the largest
// cost of trnc's own rules in a transformer's first compile (coat_tiny's
// training step: 59 layer norms, ~1,900 traced nodes). The ops built here
// are the ones that decomposition produced, in the same order:
//   - forward (torch/_refs native_layer_norm, _normalize): the corrected
//     two-pass var_mean of decomp_reductions.py over the normalized dims
//     (m = mean(x); c = x - m; mean = m + sum(c) / N;
//      var = (sum(c^2) - sum(c)^2 / N) / N), rstd = rsqrt(var + eps),
//     out = (x - mean) * rstd (* weight) (+ bias);
//   - backward (torch/_decomp native_layer_norm_backward):
//     x_hat = (x - mean) * rstd, g' = grad * weight,
//     d_input = (rstd / N) * (g' * N - sum(g') - x_hat * sum(g' * x_hat)),
//     d_weight = sum over the outer dims of grad * x_hat, d_bias of grad.
// Everything is computed in fp32 (ATen's computation dtype for 16-bit
// inputs); the graph importer converts each result to its meta dtype.
//
//===----------------------------------------------------------------------===//
#include "NodeContext.h"
#include "NormStatistics.h"

#include "dialects/Trn/TrnOps.h"

#include <limits>

using namespace mlir;

namespace trnc::import {
namespace {

/// The shape of one layer-norm node: input [outer..., inner...], statistics
/// over the trailing normalized_shape dims.
struct Rows {
  SmallVector<int64_t> shape;      // the input's
  SmallVector<int64_t> inner;      // normalized_shape
  SmallVector<int64_t> kept;       // [outer..., 1, ...]: the statistics' shape
  SmallVector<int64_t> outer;      // [outer...]: a reduction's result
  SmallVector<int64_t> innerDims;  // the normalized dims
  SmallVector<int64_t> outerDims;  // the others
  int64_t count = 1;               // elements per row (N)
  Type f32;
};

FailureOr<Rows> rowsOf(NodeContext &ctx, Value input, unsigned shapePos) {
  FailureOr<SmallVector<int64_t>> normalized = ctx.intList(shapePos, "normalized_shape");
  if (failed(normalized))
    return failure();
  RankedTensorType t = typeOf(input);
  int64_t k = static_cast<int64_t>(normalized->size());
  int64_t axis = t.getRank() - k;
  if (k < 1 || axis < 0 ||
      ArrayRef<int64_t>(t.getShape()).drop_front(axis) != ArrayRef<int64_t>(*normalized))
    return ctx.invalid("layer norm's normalized_shape " + formatShape(*normalized) +
                       " is not the trailing shape of its input " + formatShape(t.getShape()));
  Rows r;
  r.shape.assign(t.getShape().begin(), t.getShape().end());
  r.inner = *normalized;
  for (int64_t i = 0; i < t.getRank(); ++i) {
    if (i < axis) {
      r.kept.push_back(r.shape[i]);
      r.outer.push_back(r.shape[i]);
      r.outerDims.push_back(i);
    } else {
      r.kept.push_back(1);
      r.innerDims.push_back(i);
      r.count *= r.shape[i];
    }
  }
  r.f32 = ctx.builder.getF32Type();
  return r;
}

/// An optional normalized_shape-shaped tensor (weight, bias) in fp32; a null
/// Value when the argument is None.
FailureOr<Value> optionalAffine(NodeContext &ctx, const Rows &r, unsigned pos, StringRef name) {
  const Arg *a = ctx.arg(pos, name);
  if (!a || a->kind == Arg::Kind::None)
    return Value();
  FailureOr<Value> v = ctx.tensor(pos, name);
  if (failed(v))
    return failure();
  if (typeOf(*v).getShape() != ArrayRef<int64_t>(r.inner))
    return ctx.invalid("layer norm's " + name + " has shape " + formatShape(typeOf(*v).getShape()) +
                       ", expected " + formatShape(r.inner));
  return ctx.convert(*v, r.f32);
}

/// A statistic (mean, rstd: [outer..., 1, ...], any float dtype) in fp32.
FailureOr<Value> statistic(NodeContext &ctx, const Rows &r, unsigned pos, StringRef name) {
  FailureOr<Value> v = ctx.tensor(pos, name);
  if (failed(v))
    return failure();
  int64_t rows = 1;
  for (int64_t d : r.outer)
    rows *= d;
  if (typeOf(*v).getNumElements() != rows)
    return ctx.invalid("layer norm's " + name + " has shape " + formatShape(typeOf(*v).getShape()) +
                       ", expected " + formatShape(r.kept));
  return ctx.convert(ctx.reshape(*v, r.kept), r.f32);
}

/// sum(v) over `dims`, the reduced dims kept as 1 when keepdim (as
/// aten.sum.dim_IntList's importer builds it: reduce, then reshape).
Value sum(NodeContext &ctx, Value v, ArrayRef<int64_t> dims, ArrayRef<int64_t> reduced,
          ArrayRef<int64_t> keptShape) {
  Value s = ctx.create<trn::ReduceSumOp>(typeOf(v).clone(reduced), v,
                                         ctx.builder.getDenseI64ArrayAttr(dims));
  return ctx.reshape(s, keptShape);
}

Value rowSum(NodeContext &ctx, const Rows &r, Value v) {
  return sum(ctx, v, r.innerDims, r.outer, r.kept);
}

Value spread(NodeContext &ctx, const Rows &r, Value v) { return ctx.broadcast(v, r.shape); }

/// native_layer_norm(input, normalized_shape, weight?, bias?, eps)
/// -> (out, mean, rstd).
FailureOr<SmallVector<Value>> importLayerNorm(NodeContext &ctx) {
  FailureOr<Value> in = ctx.tensor(0, "input");
  if (failed(in))
    return failure();
  FailureOr<Rows> rows = rowsOf(ctx, *in, 1);
  if (failed(rows))
    return failure();
  const Rows &r = *rows;
  FailureOr<Value> weight = optionalAffine(ctx, r, 2, "weight");
  FailureOr<Value> bias = optionalAffine(ctx, r, 3, "bias");
  FailureOr<double> eps = ctx.scalar(4, "eps");
  if (failed(weight) || failed(bias) || failed(eps))
    return failure();
  if (typeOf(*in).getNumElements() == 0) {
    // No rows, or empty rows: an empty output; statistics of no elements are
    // NaN (var_mean's 0 / 0), as eager's.
    ArrayRef<RankedTensorType> types = ctx.resultTypes();
    if (types.size() != 3 || !types[0] || !types[1] || !types[2])
      return ctx.invalid("native_layer_norm has three results");
    double nan = std::numeric_limits<double>::quiet_NaN();
    return SmallVector<Value>{ctx.full(types[0], 0.0), ctx.full(types[1], nan),
                              ctx.full(types[2], nan)};
  }
  Value x = ctx.convert(*in, r.f32);
  // decomp_reductions.py's var_mean (correction 0, keepdim).
  auto [mean, var] = twoPassMeanVar(
      ctx, x, r.count, [&](Value v) { return rowSum(ctx, r, v); },
      [&](Value v) { return spread(ctx, r, v); });
  // torch/_refs _normalize and native_layer_norm.
  Value rstd = ctx.create<trn::RsqrtOp>(var.getType(), ctx.addScalar(var, *eps));
  Value out = ctx.binary<trn::MulOp>(ctx.binary<trn::SubOp>(x, spread(ctx, r, mean)),
                                 spread(ctx, r, rstd));
  if (*weight)
    out = ctx.binary<trn::MulOp>(out, spread(ctx, r, *weight));
  if (*bias)
    out = ctx.binary<trn::AddOp>(out, spread(ctx, r, *bias));
  return SmallVector<Value>{out, mean, rstd};
}

/// native_layer_norm_backward(grad_out, input, normalized_shape, mean, rstd,
/// weight?, bias?, output_mask) -> (grad_input?, grad_weight?, grad_bias?).
FailureOr<SmallVector<Value>> importLayerNormBackward(NodeContext &ctx) {
  FailureOr<Value> grad = ctx.tensor(0, "grad_out");
  FailureOr<Value> in = ctx.tensor(1, "input");
  if (failed(grad) || failed(in))
    return failure();
  FailureOr<Rows> rows = rowsOf(ctx, *in, 2);
  if (failed(rows))
    return failure();
  const Rows &r = *rows;
  if (typeOf(*grad).getShape() != ArrayRef<int64_t>(r.shape))
    return ctx.invalid("native_layer_norm_backward's grad_out has shape " +
                       formatShape(typeOf(*grad).getShape()) + ", its input " + formatShape(r.shape));
  FailureOr<Value> mean = statistic(ctx, r, 3, "mean");
  FailureOr<Value> rstd = statistic(ctx, r, 4, "rstd");
  FailureOr<Value> weight = optionalAffine(ctx, r, 5, "weight");
  if (failed(mean) || failed(rstd) || failed(weight))
    return failure();
  Value g = ctx.convert(*grad, r.f32);
  Value x = ctx.convert(*in, r.f32);
  double n = double(r.count);
  Value xHat = ctx.binary<trn::MulOp>(ctx.binary<trn::SubOp>(x, spread(ctx, r, *mean)),
                                  spread(ctx, r, *rstd));

  ArrayRef<RankedTensorType> types = ctx.resultTypes();
  auto wanted = [&](unsigned i) { return types.size() > i && types[i]; };
  SmallVector<Value> results(3);
  if (typeOf(*in).getNumElements() == 0) { // the decomposition's new_zeros
    for (unsigned i = 0; i < 3; ++i)
      if (wanted(i))
        results[i] = ctx.full(types[i], 0.0);
    return results;
  }
  if (wanted(0)) {
    Value gx = *weight ? ctx.binary<trn::MulOp>(g, spread(ctx, r, *weight)) : g;
    Value a = ctx.mulScalar(gx, n);
    Value b = rowSum(ctx, r, gx);
    Value c2 = rowSum(ctx, r, ctx.binary<trn::MulOp>(gx, xHat));
    Value c3 = ctx.binary<trn::MulOp>(xHat, spread(ctx, r, c2));
    Value inner = ctx.binary<trn::SubOp>(ctx.binary<trn::SubOp>(a, spread(ctx, r, b)), c3);
    // rstd / N: aten.div.Tensor by a number (MathImporters' importDiv).
    Value scale = ctx.binary<trn::DivOp>(
        *rstd, ctx.broadcast(ctx.full(RankedTensorType::get({}, r.f32), n), r.kept));
    results[0] = ctx.binary<trn::MulOp>(spread(ctx, r, scale), inner);
  }
  // Over the outer dims, not kept; with none, the per-element products.
  auto outerSum = [&](Value v) {
    if (r.outerDims.empty())
      return v;
    return sum(ctx, v, r.outerDims, r.inner, r.inner);
  };
  if (wanted(1) && *weight)
    results[1] = outerSum(ctx.binary<trn::MulOp>(g, xHat));
  const Arg *bias = ctx.arg(6, "bias");
  if (wanted(2) && bias && bias->kind != Arg::Kind::None)
    results[2] = outerSum(g);
  return results;
}

} // namespace

void registerLayerNormImporters(OpRegistry &r) {
  r.addMulti("aten.native_layer_norm.default", importLayerNorm);
  r.addMulti("aten.native_layer_norm_backward.default", importLayerNormBackward);
}

} // namespace trnc::import
