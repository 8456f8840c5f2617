//===- ConvImporters.cpp - convolution, its backward, average pooling -----===//
//
// Everything here becomes trn.conv2d (implicit GEMM on the Tensor Engine):
//   - aten.convolution (conv1d as conv2d with H = 1; transposed convolution
//     as a convolution of the lhs-dilated input with the flipped weight);
//   - aten.convolution_backward: the input gradient is the transposed
//     convolution of the output gradient, the weight gradient a convolution
//     of input^T with grad^T (batch and channels exchanged, stride and
//     dilation exchanged), the bias gradient a sum;
//   - aten.avg_pool2d and its backward: a depthwise convolution with a
//     kernel of ones, divided by kh*kw, divisor_override or (ceil_mode,
//     count_include_pad=False) a per-window count computed on the device.
//
//===----------------------------------------------------------------------===//
#include "NodeContext.h"

#include "dialects/Trn/TrnOps.h"

using namespace mlir;

namespace trnc::import {
namespace {

/// The spatial parameters of one 2-D convolution.
struct ConvParams {
  SmallVector<int64_t> stride{1, 1}, padding{0, 0}, dilation{1, 1},
      lhsDilation{1, 1};
  int64_t groups = 1;
  bool flip = false;
};

/// trn.conv2d producing `resultShape` ([N, O, OH, OW]).
Value conv2d(NodeContext &ctx, Value in, Value weight,
             ArrayRef<int64_t> resultShape, const ConvParams &p) {
  Type et = ctx.resultElementType();
  auto type = RankedTensorType::get(resultShape, et);
  auto attr = [&](ArrayRef<int64_t> v) {
    return ctx.builder.getDenseI64ArrayAttr(v);
  };
  return ctx.create<trn::Conv2dOp>(
      type, ctx.convert(in, et), ctx.convert(weight, et), attr(p.stride),
      attr(p.padding), attr(p.dilation), attr(p.lhsDilation),
      ctx.builder.getI64IntegerAttr(p.groups), ctx.builder.getBoolAttr(p.flip));
}

/// [A, B/g, ...] grouped as g blocks along A -> [B, A/g, ...]: the weight of
/// the transposed convolution (in/out channels exchanged within each group).
Value swapGroupedChannels(NodeContext &ctx, Value w, int64_t groups) {
  ArrayRef<int64_t> s = typeOf(w).getShape();
  int64_t ag = s[0] / groups, bg = s[1];
  if (groups == 1)
    return ctx.transpose(w, {1, 0, 2, 3});
  Value v = ctx.reshape(w, {groups, ag, bg, s[2], s[3]});
  v = ctx.transpose(v, {0, 2, 1, 3, 4});
  return ctx.reshape(v, {groups * bg, ag, s[2], s[3]});
}

/// Reads the (stride, padding, dilation) lists of a `spatial`-D convolution
/// as 2-D parameters (a 1-D one gets H-axis values 1, 0, 1).
LogicalResult readSpatial(NodeContext &ctx, unsigned pos, int64_t spatial,
                          ConvParams &p) {
  FailureOr<SmallVector<int64_t>> stride = ctx.intList(pos, "stride");
  FailureOr<SmallVector<int64_t>> padding = ctx.intList(pos + 1, "padding");
  FailureOr<SmallVector<int64_t>> dilation = ctx.intList(pos + 2, "dilation");
  if (failed(stride) || failed(padding) || failed(dilation))
    return failure();
  auto expand = [&](SmallVector<int64_t> v, int64_t unit,
                    SmallVector<int64_t> &out) {
    if (v.size() == 1)
      v.assign(spatial, v[0]);
    if ((int64_t)v.size() != spatial)
      return false;
    out = spatial == 1 ? SmallVector<int64_t>{unit, v[0]} : v;
    return true;
  };
  if (!expand(*stride, 1, p.stride) || !expand(*padding, 0, p.padding) ||
      !expand(*dilation, 1, p.dilation))
    return ctx.invalid("stride/padding/dilation do not match the " +
                       std::to_string(spatial) + "-D convolution");
  return success();
}

/// A rank-3 (conv1d) tensor as rank 4 with H = 1.
Value as2d(NodeContext &ctx, Value v) {
  ArrayRef<int64_t> s = typeOf(v).getShape();
  return s.size() == 4 ? v : ctx.reshape(v, {s[0], s[1], 1, s[2]});
}
SmallVector<int64_t> shape2d(ArrayRef<int64_t> s) {
  return s.size() == 4 ? SmallVector<int64_t>(s)
                       : SmallVector<int64_t>{s[0], s[1], 1, s[2]};
}

/// Rejects what trn.conv2d does not cover; returns the spatial rank.
FailureOr<int64_t> checkConv(NodeContext &ctx, Value in, Value weight) {
  if (!isa<FloatType>(typeOf(in).getElementType()))
    return ctx.unsupported("integer convolution: the Tensor Engine multiplies "
                           "floating-point operands only");
  int64_t rank = typeOf(in).getRank();
  if (rank != 3 && rank != 4)
    return ctx.unsupported("only conv1d and conv2d lower (input rank " +
                           std::to_string(rank) + ")");
  if (typeOf(weight).getRank() != rank)
    return ctx.invalid("weight rank differs from the input's");
  ArrayRef<int64_t> ws = typeOf(weight).getShape();
  if (ws[1] == 0 || llvm::is_contained(ws.drop_front(2), 0))
    return ctx.unsupported("an empty kernel or no input channels");
  return rank - 2;
}

/// The conv_transpose / input-gradient parameters from forward ones.
ConvParams transposed(const ConvParams &fwd, ArrayRef<int64_t> kernel) {
  ConvParams p;
  p.lhsDilation = fwd.stride;
  p.dilation = fwd.dilation;
  p.groups = fwd.groups;
  p.flip = true;
  for (int i = 0; i < 2; ++i)
    p.padding[i] = fwd.dilation[i] * (kernel[i] - 1) - fwd.padding[i];
  return p;
}

Value addBias(NodeContext &ctx, Value out, Value bias) {
  int64_t o = typeOf(bias).getDimSize(0);
  Value b = ctx.convert(ctx.reshape(bias, {1, o, 1, 1}), typeOf(out).getElementType());
  b = ctx.broadcast(b, typeOf(out).getShape());
  return ctx.create<trn::AddOp>(out.getType(), out, b);
}

FailureOr<Value> importConvolution(NodeContext &ctx) {
  FailureOr<Value> in = ctx.tensor(0, "input"), w = ctx.tensor(1, "weight");
  if (failed(in) || failed(w))
    return failure();
  FailureOr<int64_t> spatial = checkConv(ctx, *in, *w);
  ConvParams p;
  FailureOr<bool> isTransposed = ctx.boolean(6, "transposed");
  FailureOr<int64_t> groups = ctx.integer(8, "groups");
  if (failed(spatial) || failed(readSpatial(ctx, 3, *spatial, p)) ||
      failed(isTransposed) || failed(groups))
    return failure();
  p.groups = *groups;
  Value x = as2d(ctx, *in), weight = as2d(ctx, *w);
  SmallVector<int64_t> outShape = shape2d(ctx.resultShape());
  if (*isTransposed) {
    ArrayRef<int64_t> ws = typeOf(weight).getShape();
    p = transposed(p, ws.drop_front(2));
    weight = swapGroupedChannels(ctx, weight, p.groups);
  }
  Value out = conv2d(ctx, x, weight, outShape, p);
  const Arg *biasArg = ctx.arg(2, "bias");
  if (biasArg && biasArg->isTensor()) {
    FailureOr<Value> bias = ctx.tensor(2, "bias");
    if (failed(bias))
      return failure();
    out = addBias(ctx, out, *bias);
  }
  return ctx.reshape(out, ctx.resultShape());
}

FailureOr<SmallVector<Value>> importConvolutionBackward(NodeContext &ctx) {
  FailureOr<Value> grad = ctx.tensor(0, "grad_output");
  FailureOr<Value> in = ctx.tensor(1, "input"), w = ctx.tensor(2, "weight");
  if (failed(grad) || failed(in) || failed(w))
    return failure();
  FailureOr<int64_t> spatial = checkConv(ctx, *in, *w);
  ConvParams fwd;
  FailureOr<bool> isTransposed = ctx.boolean(7, "transposed");
  FailureOr<int64_t> groups = ctx.integer(9, "groups");
  if (failed(spatial) || failed(readSpatial(ctx, 4, *spatial, fwd)) ||
      failed(isTransposed) || failed(groups))
    return failure();
  if (*isTransposed)
    return ctx.unsupported("the backward of a transposed convolution");
  fwd.groups = *groups;
  Value dy = as2d(ctx, *grad), x = as2d(ctx, *in), weight = as2d(ctx, *w);
  ArrayRef<int64_t> xs = typeOf(x).getShape(), ws = typeOf(weight).getShape(),
                    ys = typeOf(dy).getShape();
  ArrayRef<RankedTensorType> types = ctx.resultTypes();
  SmallVector<Value> results(types.size());
  int64_t g = fwd.groups, n = xs[0], cg = ws[1], o = ws[0];

  if (types.size() > 0 && types[0]) { // grad_input
    Value wt = swapGroupedChannels(ctx, weight, g);
    ConvParams p = transposed(fwd, ws.drop_front(2));
    Value gi = conv2d(ctx, dy, wt, xs, p);
    results[0] = ctx.reshape(gi, types[0].getShape());
  }
  if (types.size() > 1 && types[1]) { // grad_weight
    // x'[c, j*N + n] = x[n, j*cg + c]; dy' = dy^T [O, N, OH, OW] in g groups.
    Value xt = ctx.reshape(x, {n, g, cg, xs[2], xs[3]});
    xt = ctx.transpose(xt, {2, 1, 0, 3, 4});
    xt = ctx.reshape(xt, {cg, g * n, xs[2], xs[3]});
    Value dyt = ctx.transpose(dy, {1, 0, 2, 3});
    ConvParams p;
    p.stride = fwd.dilation;
    p.dilation = fwd.stride;
    p.padding = fwd.padding;
    p.groups = g;
    Value gw = conv2d(ctx, xt, dyt, {cg, o, ws[2], ws[3]}, p);
    gw = ctx.transpose(gw, {1, 0, 2, 3});
    results[1] = ctx.reshape(gw, types[1].getShape());
  }
  if (types.size() > 2 && types[2]) { // grad_bias
    Type et = types[2].getElementType();
    results[2] = ctx.create<trn::ReduceSumOp>(
        RankedTensorType::get({ys[1]}, et), ctx.convert(dy, et),
        ctx.builder.getDenseI64ArrayAttr({0, 2, 3}));
  }
  return results;
}

/// avg_pool2d's arguments: a depthwise convolution with a kernel of ones,
/// divided by a constant or by a per-window count.
struct Pool {
  ConvParams conv;
  SmallVector<int64_t> kernel;
  std::optional<int64_t> divisor; // divisor_override
  bool countPad = true, ceil = false;
};

FailureOr<Pool> poolArgs(NodeContext &ctx, unsigned pos, Value in) {
  FailureOr<SmallVector<int64_t>> k = ctx.intList(pos, "kernel_size");
  FailureOr<SmallVector<int64_t>> s =
      ctx.intList(pos + 1, "stride", SmallVector<int64_t>{});
  FailureOr<SmallVector<int64_t>> pad =
      ctx.intList(pos + 2, "padding", SmallVector<int64_t>{0});
  FailureOr<bool> ceil = ctx.boolean(pos + 3, "ceil_mode", false);
  FailureOr<bool> countPad = ctx.boolean(pos + 4, "count_include_pad", true);
  if (failed(k) || failed(s) || failed(pad) || failed(ceil) || failed(countPad))
    return failure();
  if (!isa<FloatType>(typeOf(in).getElementType()))
    return ctx.unsupported("integer avg_pool2d (the convolution it lowers to "
                           "is floating point)");
  auto two = [](SmallVector<int64_t> v) {
    return v.size() == 1 ? SmallVector<int64_t>{v[0], v[0]} : v;
  };
  Pool p;
  p.kernel = two(*k);
  p.conv.stride = s->empty() ? p.kernel : two(*s);
  p.conv.padding = two(*pad);
  p.ceil = *ceil;
  p.countPad = *countPad;
  if (p.kernel.size() != 2 || p.conv.stride.size() != 2 ||
      p.conv.padding.size() != 2)
    return ctx.invalid("kernel_size/stride/padding must have 1 or 2 values");
  const Arg *div = ctx.arg(pos + 5, "divisor_override");
  if (div && div->kind != Arg::Kind::None) {
    FailureOr<int64_t> d = ctx.integer(pos + 5, "divisor_override");
    if (failed(d))
      return failure();
    p.divisor = *d;
  }
  int64_t rank = typeOf(in).getRank();
  if (rank != 3 && rank != 4)
    return ctx.invalid("avg_pool2d expects a 3-D or 4-D input");
  p.conv.groups = typeOf(in).getDimSize(rank - 3);
  return p;
}

/// A 3-D [C, H, W] pooling tensor as [1, C, H, W].
Value asBatched(NodeContext &ctx, Value v) {
  ArrayRef<int64_t> s = typeOf(v).getShape();
  return s.size() == 4 ? v : ctx.reshape(v, {1, s[0], s[1], s[2]});
}

/// Divides each window's sum (`v`, [N, C, OH, OW]) by kh*kw or
/// divisor_override, or (ceil_mode windows clipped at the padded border,
/// count_include_pad=False) by the number of elements each window counts,
/// itself computed as a convolution of ones with a kernel of ones.
Value divideByCount(NodeContext &ctx, const Pool &p, ArrayRef<int64_t> inShape,
                    Value v) {
  ArrayRef<int64_t> shape = typeOf(v).getShape();
  Type et = ctx.resultElementType();
  auto ty = [&](ArrayRef<int64_t> s) { return RankedTensorType::get(s, et); };
  if (p.divisor || (p.countPad && !p.ceil))
    return ctx.mulScalar(v, 1.0 / (p.divisor ? *p.divisor
                                             : p.kernel[0] * p.kernel[1]));
  ConvParams c;
  c.stride = p.conv.stride;
  int64_t h = inShape[2], w = inShape[3];
  if (p.countPad) // windows count the padding, not what lies past it
    h += 2 * p.conv.padding[0], w += 2 * p.conv.padding[1];
  else
    c.padding = p.conv.padding;
  Value ones = ctx.full(ty({1, 1, h, w}), 1.0);
  Value kernel = ctx.full(ty({1, 1, p.kernel[0], p.kernel[1]}), 1.0);
  Value count = conv2d(ctx, ones, kernel, {1, 1, shape[2], shape[3]}, c);
  return ctx.create<trn::DivOp>(v.getType(), v, ctx.broadcast(count, shape));
}

Value onesKernel(NodeContext &ctx, const Pool &p) {
  return ctx.full(RankedTensorType::get({p.conv.groups, 1, p.kernel[0],
                                         p.kernel[1]},
                                        ctx.resultElementType()),
                  1.0);
}

FailureOr<Value> importAvgPool2d(NodeContext &ctx) {
  FailureOr<Value> in = ctx.tensor(0, "self");
  if (failed(in))
    return failure();
  FailureOr<Pool> p = poolArgs(ctx, 1, *in);
  if (failed(p))
    return failure();
  Value x = asBatched(ctx, *in);
  SmallVector<int64_t> outShape(typeOf(x).getShape().take_front(2));
  ArrayRef<int64_t> rs = ctx.resultShape();
  outShape.append(rs.end() - 2, rs.end());
  Value sum = conv2d(ctx, x, onesKernel(ctx, *p), outShape, p->conv);
  return ctx.reshape(divideByCount(ctx, *p, typeOf(x).getShape(), sum), rs);
}

FailureOr<Value> importAvgPool2dBackward(NodeContext &ctx) {
  FailureOr<Value> grad = ctx.tensor(0, "grad_output");
  FailureOr<Value> in = ctx.tensor(1, "self");
  if (failed(grad) || failed(in))
    return failure();
  FailureOr<Pool> p = poolArgs(ctx, 2, *in);
  if (failed(p))
    return failure();
  Value dy = ctx.convert(asBatched(ctx, *grad), ctx.resultElementType());
  ArrayRef<int64_t> inShape = typeOf(asBatched(ctx, *in)).getShape();
  Value scaled = divideByCount(ctx, *p, inShape, dy);
  ConvParams t = transposed(p->conv, p->kernel);
  return ctx.reshape(conv2d(ctx, scaled, onesKernel(ctx, *p), inShape, t),
                     ctx.resultShape());
}

} // namespace

void registerConvImporters(OpRegistry &r) {
  r.add("aten.convolution.default", importConvolution);
  r.addMulti("aten.convolution_backward.default", importConvolutionBackward);
  r.add("aten.avg_pool2d.default", importAvgPool2d);
  r.add("aten.avg_pool2d_backward.default", importAvgPool2dBackward);
}

} // namespace trnc::import
