//===- BatchNormImporters.cpp - batch norm forward and backward ----------===//
//
// aten._native_batch_norm_legit_functional (training: batch statistics and
// the running-stat update), aten._native_batch_norm_legit_no_training (eval:
// running statistics) and aten.native_batch_norm_backward, expanded here
// into trn reductions and elementwise ops. They reach the importer whole
// (decompositions.py keeps them) because tracing PyTorch's decomposition of
// each op into ~30 ATen nodes under AOTAutograd cost more than the rest of
// a batch-norm network's trace (densenet121's training step: 9,400 nodes,
// about half the Python compile time); the ops built here are the same ones
// that decomposition produced:
//   - statistics: the corrected two-pass var_mean of decomp_reductions.py
//     (m = mean(x); c = x - m; mean = m + sum(c) / N;
//      var = (sum(c^2) - sum(c)^2 / N) / N);
//   - forward: (x - mean) * rsqrt(var + eps) * weight + bias (eval:
//     (x - running_mean) / sqrt(running_var + eps)), the running stats
//     momentum * stat + (1 - momentum) * running (the variance unbiased);
//   - backward: PyTorch's native_batch_norm_backward decomposition
//     (torch/_decomp/decompositions.py), per channel sums of grad and
//     grad * (x - mean).
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

/// The shape of one batch-norm node: input [N, C, ...], statistics over
/// every dim but 1.
struct Channels {
  SmallVector<int64_t> shape;  // the input's
  SmallVector<int64_t> kept;   // [1, C, 1, ...]
  SmallVector<int64_t> dims;   // the reduced dims
  int64_t count = 1;           // elements per channel
  Type f32;
};

FailureOr<Channels> channelsOf(NodeContext &ctx, Value input) {
  RankedTensorType t = typeOf(input);
  if (t.getRank() < 2)
    return ctx.invalid("batch norm expects an input of rank >= 2 ([N, C, ...]), got " +
                       formatShape(t.getShape()));
  Channels c;
  c.shape.assign(t.getShape().begin(), t.getShape().end());
  for (int64_t i = 0; i < t.getRank(); ++i) {
    c.kept.push_back(i == 1 ? c.shape[1] : 1);
    if (i != 1) {
      c.dims.push_back(i);
      c.count *= c.shape[i];
    }
  }
  c.f32 = ctx.builder.getF32Type();
  if (c.count == 0)
    return ctx.unsupported("batch norm over an empty batch or map");
  return c;
}

/// A per-channel tensor (`[C]`, any float dtype) in fp32 after a shape check.
FailureOr<Value> channelVector(NodeContext &ctx, const Channels &c, unsigned pos,
                               StringRef name) {
  FailureOr<Value> v = ctx.tensor(pos, name);
  if (failed(v))
    return failure();
  if (typeOf(*v).getShape() != ArrayRef<int64_t>{c.shape[1]})
    return ctx.invalid("batch norm's " + name + " has shape " +
                       formatShape(typeOf(*v).getShape()) + ", expected [" +
                       std::to_string(c.shape[1]) + "]");
  return ctx.convert(*v, c.f32);
}

/// An optional per-channel tensor: a null Value when the argument is None.
FailureOr<Value> optionalChannelVector(NodeContext &ctx, const Channels &c,
                                       unsigned pos, StringRef name) {
  const Arg *a = ctx.arg(pos, name);
  if (!a || a->kind == Arg::Kind::None)
    return Value();
  return channelVector(ctx, c, pos, name);
}

/// `v` ([C]) broadcast over the input's shape.
Value spread(NodeContext &ctx, const Channels &c, Value v) {
  return ctx.broadcast(ctx.reshape(v, c.kept), c.shape);
}

/// Sum over every dim but 1: [C].
Value channelSum(NodeContext &ctx, const Channels &c, Value v) {
  return ctx.create<trn::ReduceSumOp>(RankedTensorType::get({c.shape[1]}, c.f32), v,
                                      ctx.builder.getDenseI64ArrayAttr(c.dims));
}

/// The batch mean and biased variance ([C] each), by the corrected two-pass
/// algorithm of decomp_reductions.py's var_mean.
std::pair<Value, Value> batchStatistics(NodeContext &ctx, const Channels &c, Value x) {
  return twoPassMeanVar(
      ctx, x, c.count, [&](Value v) { return channelSum(ctx, c, v); },
      [&](Value v) { return spread(ctx, c, v); });
}

/// (x - mean) * invstd * weight + bias, every operand [C] but x.
Value normalize(NodeContext &ctx, const Channels &c, Value x, Value mean, Value invstd,
                Value weight, Value bias) {
  Value out = ctx.binary<trn::MulOp>(ctx.binary<trn::SubOp>(x, spread(ctx, c, mean)),
                                 spread(ctx, c, invstd));
  if (weight)
    out = ctx.binary<trn::MulOp>(out, spread(ctx, c, weight));
  if (bias)
    out = ctx.binary<trn::AddOp>(out, spread(ctx, c, bias));
  return out;
}

/// momentum * stat + (1 - momentum) * running.
Value runningUpdate(NodeContext &ctx, Value stat, Value running, double momentum) {
  return ctx.binary<trn::AddOp>(ctx.mulScalar(stat, momentum),
                            ctx.mulScalar(running, 1.0 - momentum));
}

/// The leading (input, weight?, bias?, running_mean, running_var) arguments
/// both forward ops share; the input in fp32.
struct ForwardArgs {
  Channels c;
  Value x, weight, bias, runningMean, runningVar;
};

FailureOr<ForwardArgs> forwardArgs(NodeContext &ctx) {
  FailureOr<Value> in = ctx.tensor(0, "input");
  if (failed(in))
    return failure();
  FailureOr<Channels> c = channelsOf(ctx, *in);
  if (failed(c))
    return failure();
  FailureOr<Value> weight = optionalChannelVector(ctx, *c, 1, "weight");
  FailureOr<Value> bias = optionalChannelVector(ctx, *c, 2, "bias");
  FailureOr<Value> rm = channelVector(ctx, *c, 3, "running_mean");
  FailureOr<Value> rv = channelVector(ctx, *c, 4, "running_var");
  if (failed(weight) || failed(bias) || failed(rm) || failed(rv))
    return failure();
  return ForwardArgs{*c, ctx.convert(*in, c->f32), *weight, *bias, *rm, *rv};
}

/// _native_batch_norm_legit_functional(input, weight?, bias?, running_mean,
/// running_var, training, momentum, eps) -> (out, save_mean, save_rstd,
/// new_running_mean, new_running_var).
FailureOr<SmallVector<Value>> importBatchNormFunctional(NodeContext &ctx) {
  FailureOr<ForwardArgs> a = forwardArgs(ctx);
  if (failed(a))
    return failure();
  FailureOr<bool> training = ctx.boolean(5, "training");
  FailureOr<double> momentum = ctx.scalar(6, "momentum");
  FailureOr<double> eps = ctx.scalar(7, "eps");
  if (failed(training) || failed(momentum) || failed(eps))
    return failure();
  if (!*training) // AOTAutograd emits _no_training for eval; refuse rather than guess
    return ctx.unsupported("_native_batch_norm_legit_functional with training=False");
  const Channels &c = a->c;
  auto [mean, var] = batchStatistics(ctx, c, a->x);
  Value rstd = ctx.create<trn::RsqrtOp>(var.getType(), ctx.addScalar(var, *eps));
  Value out = normalize(ctx, c, a->x, mean, rstd, a->weight, a->bias);
  double n = double(c.count);
  Value unbiased = ctx.mulScalar(var, n > 1 ? n / (n - 1) : std::numeric_limits<double>::infinity());
  return SmallVector<Value>{out, mean, rstd, runningUpdate(ctx, mean, a->runningMean, *momentum),
                            runningUpdate(ctx, unbiased, a->runningVar, *momentum)};
}

/// _native_batch_norm_legit_no_training(input, weight?, bias?, running_mean,
/// running_var, momentum, eps) -> (out, save_mean, save_rstd); the saved
/// statistics are empty ([0]), as on CPU.
FailureOr<SmallVector<Value>> importBatchNormNoTraining(NodeContext &ctx) {
  FailureOr<ForwardArgs> a = forwardArgs(ctx);
  FailureOr<double> eps = failed(a) ? FailureOr<double>(failure()) : ctx.scalar(6, "eps");
  if (failed(eps))
    return failure();
  Value rv = a->runningVar;
  Value std = ctx.create<trn::SqrtOp>(rv.getType(), ctx.addScalar(rv, *eps));
  Value invstd = ctx.create<trn::ReciprocalOp>(std.getType(), std);
  Value out = normalize(ctx, a->c, a->x, a->runningMean, invstd, a->weight, a->bias);
  SmallVector<Value> results{out};
  for (unsigned i = 1; i < 3; ++i) {
    RankedTensorType t = ctx.resultTypes().size() > i ? ctx.resultTypes()[i] : nullptr;
    results.push_back(t ? ctx.full(t, 0.0) : Value());
  }
  return results;
}

/// native_batch_norm_backward(grad_out, input, weight?, running_mean?,
/// running_var?, save_mean?, save_invstd?, train, eps, output_mask)
/// -> (grad_input?, grad_weight?, grad_bias?).
FailureOr<SmallVector<Value>> importBatchNormBackward(NodeContext &ctx) {
  FailureOr<Value> grad = ctx.tensor(0, "grad_out");
  FailureOr<Value> in = ctx.tensor(1, "input");
  if (failed(grad) || failed(in))
    return failure();
  FailureOr<Channels> c = channelsOf(ctx, *in);
  if (failed(c))
    return failure();
  if (typeOf(*grad).getShape() != typeOf(*in).getShape())
    return ctx.invalid("native_batch_norm_backward's grad_out has shape " +
                       formatShape(typeOf(*grad).getShape()) + ", its input " +
                       formatShape(typeOf(*in).getShape()));
  FailureOr<Value> weight = optionalChannelVector(ctx, *c, 2, "weight");
  FailureOr<bool> train = ctx.boolean(7, "train");
  FailureOr<double> eps = ctx.scalar(8, "eps");
  if (failed(weight) || failed(train) || failed(eps))
    return failure();
  // train: the forward's saved statistics; eval: the running ones.
  FailureOr<Value> mean = *train ? channelVector(ctx, *c, 5, "save_mean")
                                 : channelVector(ctx, *c, 3, "running_mean");
  FailureOr<Value> invstd = *train ? channelVector(ctx, *c, 6, "save_invstd")
                                   : channelVector(ctx, *c, 4, "running_var");
  if (failed(mean) || failed(invstd))
    return failure();
  if (!*train)
    invstd = ctx.create<trn::RsqrtOp>(invstd->getType(), ctx.addScalar(*invstd, *eps));

  Value g = ctx.convert(*grad, c->f32);
  Value centred = ctx.binary<trn::SubOp>(ctx.convert(*in, c->f32), spread(ctx, *c, *mean));
  Value gradSum = channelSum(ctx, *c, g);
  Value dot = channelSum(ctx, *c, ctx.binary<trn::MulOp>(g, centred));
  double norm = 1.0 / double(c->count);
  Value gradScale = *weight ? ctx.binary<trn::MulOp>(*invstd, *weight) : *invstd;

  ArrayRef<RankedTensorType> types = ctx.resultTypes();
  auto wanted = [&](unsigned i) { return types.size() > i && types[i]; };
  SmallVector<Value> results(3);
  if (wanted(0)) {
    Value gi;
    if (*train) {
      Value projScale = ctx.binary<trn::MulOp>(ctx.mulScalar(dot, norm),
                                           ctx.binary<trn::MulOp>(*invstd, *invstd));
      Value proj = ctx.binary<trn::MulOp>(centred, spread(ctx, *c, projScale));
      gi = ctx.binary<trn::SubOp>(ctx.binary<trn::SubOp>(g, proj),
                              spread(ctx, *c, ctx.mulScalar(gradSum, norm)));
      gi = ctx.binary<trn::MulOp>(gi, spread(ctx, *c, gradScale));
    } else {
      gi = ctx.binary<trn::MulOp>(g, spread(ctx, *c, gradScale));
    }
    results[0] = gi;
  }
  if (wanted(1))
    results[1] = ctx.binary<trn::MulOp>(dot, *invstd);
  if (wanted(2))
    results[2] = gradSum;
  return results;
}

} // namespace

void registerBatchNormImporters(OpRegistry &r) {
  r.addMulti("aten._native_batch_norm_legit_functional.default", importBatchNormFunctional);
  r.addMulti("aten._native_batch_norm_legit_no_training.default", importBatchNormNoTraining);
  r.addMulti("aten.native_batch_norm_backward.default", importBatchNormBackward);
}

} // namespace trnc::import
