//===- MathImporters.cpp - unary math, binary ALU ops, comparisons, where -===//
//
// ATen elementwise math -> trn ops, mostly by table: unary ops (one trn op
// per ATen op), binary arithmetic (operands converted to the node's result
// dtype), comparisons and logical ops (operands promoted to a common dtype
// as torch does; the result is i1), where, clamp, leaky_relu, gelu, round,
// division with rounding modes, and the backward of gelu and silu. A Python scalar operand becomes a 0-d
// `trn.full` broadcast to the shape; the lowering turns it into an
// instruction immediate.
//
//===----------------------------------------------------------------------===//
#include "BoolAsInt.h"
#include "NodeContext.h"

#include "dialects/Trn/TrnOps.h"

using namespace mlir;

namespace trnc::import {
namespace {

//===--- dtypes and operands ----------------------------------------------===//

/// bool < integer < float (torch's type categories).
int category(Type t) {
  if (t.isInteger(1))
    return 0;
  return isa<IntegerType>(t) ? 1 : 2;
}

/// torch.result_type of two tensor element types.
Type promote(Type a, Type b) {
  if (a == b)
    return a;
  if (category(a) != category(b))
    return category(a) > category(b) ? a : b;
  Builder builder(a.getContext());
  if (category(a) == 1)
    return a.getIntOrFloatBitWidth() >= b.getIntOrFloatBitWidth() ? a : b;
  // bf16 with f16 -> f32; otherwise the wider.
  if (a.getIntOrFloatBitWidth() == b.getIntOrFloatBitWidth())
    return builder.getF32Type();
  return a.getIntOrFloatBitWidth() > b.getIntOrFloatBitWidth() ? a : b;
}

/// Element type of a Python scalar when it decides the result category.
Type scalarType(const Arg &a, MLIRContext *m) {
  Builder b(m);
  if (a.kind == Arg::Kind::Float)
    return b.getF32Type();
  return a.kind == Arg::Kind::Bool ? Type(b.getI1Type()) : b.getI64Type();
}

bool isScalar(NodeContext &ctx, unsigned pos, StringRef name) {
  const Arg *a = ctx.arg(pos, name);
  return a && a->isNumber();
}

Type typeOfArg(NodeContext &ctx, unsigned pos, StringRef name) {
  const Arg *a = ctx.arg(pos, name);
  if (a && a->isNumber())
    return {};
  FailureOr<Value> v = ctx.tensor(pos, name);
  return failed(v) ? Type() : cast<RankedTensorType>(v->getType()).getElementType();
}

/// torch.result_type of two arguments (tensor or Python scalar): a scalar
/// only matters when its category is higher than the tensor's.
Type promoteArgs(NodeContext &ctx, unsigned p0, StringRef n0, unsigned p1,
                 StringRef n1) {
  MLIRContext *m = ctx.builder.getContext();
  Type a = typeOfArg(ctx, p0, n0), b = typeOfArg(ctx, p1, n1);
  if (a && b)
    return promote(a, b);
  Type t = a ? a : b;
  Type s = scalarType(*ctx.arg(a ? p1 : p0, a ? n1 : n0), m);
  if (!t)
    return s;
  return category(s) > category(t) ? s : t;
}

/// Argument `pos` as a tensor of element type `elt`: a Python scalar is a
/// 0-d `trn.full`.
FailureOr<Value> operand(NodeContext &ctx, unsigned pos, StringRef name,
                         Type elt) {
  const Arg *a = ctx.arg(pos, name);
  if (a && a->isNumber())
    return ctx.full(RankedTensorType::get({}, elt), a->asDouble());
  FailureOr<Value> v = ctx.tensor(pos, name);
  if (failed(v))
    return failure();
  return ctx.convert(*v, elt);
}

/// Both operands in `elt`, broadcast to their common shape.
FailureOr<std::pair<Value, Value>> operands(NodeContext &ctx, Type elt,
                                            unsigned p0 = 0,
                                            StringRef n0 = "self",
                                            unsigned p1 = 1,
                                            StringRef n1 = "other") {
  FailureOr<Value> a = operand(ctx, p0, n0, elt);
  FailureOr<Value> b = operand(ctx, p1, n1, elt);
  if (failed(a) || failed(b))
    return failure();
  SmallVector<ArrayRef<int64_t>> shapes = {
      cast<RankedTensorType>(a->getType()).getShape(),
      cast<RankedTensorType>(b->getType()).getShape()};
  std::optional<SmallVector<int64_t>> shape = broadcastShapes(shapes);
  if (!shape)
    return ctx.invalid("operand shapes " + formatShape(shapes[0]) + " and " +
                       formatShape(shapes[1]) + " do not broadcast");
  return std::make_pair(ctx.broadcast(*a, *shape), ctx.broadcast(*b, *shape));
}

//===--- importers ----------------------------------------------------------===//

/// self in the result dtype, then OpTy.
template <typename OpTy> FailureOr<Value> unary(NodeContext &ctx) {
  FailureOr<Value> x = ctx.tensor(0, "self");
  if (failed(x))
    return failure();
  Value v = ctx.convert(*x, ctx.resultElementType());
  return ctx.create<OpTy>(v.getType(), v);
}

/// isnan/isinf on floats: i1 result; an integer or bool is never NaN/inf.
template <typename OpTy> FailureOr<Value> predicate(NodeContext &ctx) {
  FailureOr<Value> x = ctx.tensor(0, "self");
  if (failed(x))
    return failure();
  auto t = cast<RankedTensorType>(x->getType());
  if (category(t.getElementType()) != 2)
    return ctx.full(ctx.resultType(), 0.0);
  return ctx.create<OpTy>(t.clone(ctx.builder.getI1Type()), *x);
}

FailureOr<Value> importLogicalNot(NodeContext &ctx) {
  FailureOr<Value> x = ctx.tensor(0, "self");
  if (failed(x))
    return failure();
  auto t = cast<RankedTensorType>(x->getType());
  return ctx.create<trn::LogicalNotOp>(t.clone(ctx.builder.getI1Type()), *x);
}

/// Binary op computed in the node's result dtype (self/other, either may be
/// a Python scalar).
template <typename OpTy>
FailureOr<Value> binaryIn(NodeContext &ctx, Type elt, unsigned p0 = 0,
                          StringRef n0 = "self", unsigned p1 = 1,
                          StringRef n1 = "other") {
  auto ops = operands(ctx, elt, p0, n0, p1, n1);
  if (failed(ops))
    return failure();
  return ctx.create<OpTy>(ops->first.getType(), ops->first, ops->second);
}

template <typename OpTy> FailureOr<Value> binary(NodeContext &ctx) {
  return binaryIn<OpTy>(ctx, ctx.resultElementType());
}

/// Comparisons and logical ops: operands promoted to their common dtype,
/// i1 result.
template <typename OpTy> FailureOr<Value> compare(NodeContext &ctx) {
  Type elt = promoteArgs(ctx, 0, "self", 1, "other");
  if (!elt)
    return failure();
  auto ops = operands(ctx, elt);
  if (failed(ops))
    return failure();
  auto t = cast<RankedTensorType>(ops->first.getType());
  return ctx.create<OpTy>(t.clone(ctx.builder.getI1Type()), ops->first,
                          ops->second);
}

/// pow.Tensor_Scalar / pow.Tensor_Tensor / pow.Scalar (self is a scalar).
FailureOr<Value> importPow(NodeContext &ctx) {
  return binaryIn<trn::PowOp>(ctx, ctx.resultElementType(), 0, "self", 1,
                              "exponent");
}

/// div.Tensor / div.Scalar (true division) and the *_mode overloads.
FailureOr<Value> importDiv(NodeContext &ctx) {
  const Arg *mode = ctx.arg(2, "rounding_mode");
  std::string m = mode && mode->kind != Arg::Kind::None ? mode->text : "";
  if (!m.empty() && m != "trunc" && m != "floor")
    return ctx.invalid("unknown rounding_mode '" + m + "'");
  Type elt = ctx.resultElementType();
  if (m == "floor")
    return binaryIn<trn::FloorDivOp>(ctx, elt);
  FailureOr<Value> q = binaryIn<trn::DivOp>(ctx, elt);
  if (failed(q) || m != "trunc" || category(elt) != 2)
    return q; // on integers trn.div truncates already
  return ctx.create<trn::TruncOp>(q->getType(), *q);
}

FailureOr<Value> importWhere(NodeContext &ctx) {
  FailureOr<Value> cond = ctx.tensor(0, "condition");
  if (failed(cond))
    return failure();
  Type elt = ctx.resultElementType();
  FailureOr<Value> a = operand(ctx, 1, "self", elt);
  FailureOr<Value> b = operand(ctx, 2, "other", elt);
  if (failed(a) || failed(b))
    return failure();
  Value c = ctx.convert(*cond, ctx.builder.getI1Type());
  SmallVector<ArrayRef<int64_t>> shapes;
  for (Value v : {c, *a, *b})
    shapes.push_back(cast<RankedTensorType>(v.getType()).getShape());
  std::optional<SmallVector<int64_t>> shape = broadcastShapes(shapes);
  if (!shape)
    return ctx.invalid("where operands do not broadcast");
  Value ab = ctx.broadcast(*a, *shape);
  return ctx.create<trn::SelectOp>(ab.getType(), ctx.broadcast(c, *shape), ab,
                                   ctx.broadcast(*b, *shape));
}

/// clamp(self, min=None, max=None) with scalar bounds.
FailureOr<Value> importClamp(NodeContext &ctx) {
  FailureOr<Value> x = ctx.tensor(0, "self");
  if (failed(x))
    return failure();
  Value v = ctx.convert(*x, ctx.resultElementType());
  FloatAttr bound[2];
  for (unsigned i = 0; i < 2; ++i) {
    const Arg *a = ctx.arg(i + 1, i ? "max" : "min");
    if (!a || a->kind == Arg::Kind::None)
      continue;
    if (!a->isNumber())
      return ctx.invalid("clamp bound is not a number");
    bound[i] = ctx.builder.getF64FloatAttr(a->asDouble());
  }
  return ctx.create<trn::ClampOp>(v.getType(), v, bound[0], bound[1]);
}

/// clamp.Tensor: maximum with min, then minimum with max (either absent).
FailureOr<Value> importClampTensor(NodeContext &ctx) {
  FailureOr<Value> x = ctx.tensor(0, "self");
  if (failed(x))
    return failure();
  Type elt = ctx.resultElementType();
  Value v = ctx.convert(*x, elt);
  for (unsigned i = 0; i < 2; ++i) {
    const Arg *a = ctx.arg(i + 1, i ? "max" : "min");
    if (!a || a->kind == Arg::Kind::None)
      continue;
    FailureOr<Value> bound = operand(ctx, i + 1, i ? "max" : "min", elt);
    if (failed(bound))
      return failure();
    SmallVector<ArrayRef<int64_t>> shapes = {
        cast<RankedTensorType>(v.getType()).getShape(),
        cast<RankedTensorType>(bound->getType()).getShape()};
    std::optional<SmallVector<int64_t>> shape = broadcastShapes(shapes);
    if (!shape)
      return ctx.invalid("clamp bounds do not broadcast");
    Value l = ctx.broadcast(v, *shape), r = ctx.broadcast(*bound, *shape);
    v = i ? ctx.create<trn::MinimumOp>(l.getType(), l, r)
          : ctx.create<trn::MaximumOp>(l.getType(), l, r);
  }
  return v;
}

FailureOr<Value> importLeakyRelu(NodeContext &ctx) {
  FailureOr<Value> x = ctx.tensor(0, "self");
  FailureOr<double> slope = ctx.scalar(1, "negative_slope", 0.01);
  if (failed(x) || failed(slope))
    return failure();
  Value v = ctx.convert(*x, ctx.resultElementType());
  return ctx.create<trn::LeakyReluOp>(v.getType(), v,
                                      ctx.builder.getF64FloatAttr(*slope));
}

FailureOr<Value> importGelu(NodeContext &ctx) {
  const Arg *a = ctx.arg(kKeywordOnly, "approximate");
  std::string approx = a && a->kind != Arg::Kind::None ? a->text : "none";
  if (approx == "tanh")
    return unary<trn::GeluTanhOp>(ctx);
  if (approx != "none")
    return ctx.invalid("unknown gelu approximation '" + approx + "'");
  return unary<trn::GeluOp>(ctx);
}

//===--- activation backward: grad * f'(x) ---------------------------------===//

/// grad and x broadcast together, in fp32 when the result is a 16-bit float
/// (torch's opmath: eager's kernels and its decompositions round once, at
/// the end).
FailureOr<SmallVector<Value>> backwardOperands(NodeContext &ctx) {
  FailureOr<Value> grad = ctx.tensor(0, "grad_output"), x = ctx.tensor(1, "self");
  if (failed(grad) || failed(x))
    return failure();
  FailureOr<SmallVector<Value>> ops = ctx.elementwiseOperands({*grad, *x});
  if (failed(ops))
    return failure();
  Type t = ctx.resultElementType();
  if (t.getIntOrFloatBitWidth() == 16)
    for (Value &v : *ops)
      v = ctx.convert(v, ctx.builder.getF32Type());
  return ops;
}

/// gelu_backward, silu_backward: grad * f'(x), f' one Scalar-engine
/// activation (NKI's gelu_dx and silu_dx) instead of the 7-10 elementwise
/// ops of torch's decomposition, most of them Vector/GpSimd work.
template <typename DxOp> FailureOr<Value> activationBackward(NodeContext &ctx) {
  FailureOr<SmallVector<Value>> ops = backwardOperands(ctx);
  if (failed(ops))
    return failure();
  Value grad = (*ops)[0], x = (*ops)[1];
  Value dx = ctx.create<DxOp>(x.getType(), x);
  return ctx.convert(ctx.binary<trn::MulOp>(grad, dx), ctx.resultElementType());
}

/// gelu_backward's tanh form has no one-activation derivative: torch's
/// formula (torch/_decomp/decompositions.py), op for op.
FailureOr<Value> geluTanhBackward(NodeContext &ctx) {
  FailureOr<SmallVector<Value>> ops = backwardOperands(ctx);
  if (failed(ops))
    return failure();
  Value grad = (*ops)[0], x = (*ops)[1];
  const double kBeta = 0.79788456080286535588, kKappa = 0.044715;
  Value xSq = ctx.binary<trn::MulOp>(x, x);
  Value xCube = ctx.binary<trn::MulOp>(xSq, x);
  Value inner = ctx.mulScalar(
      ctx.binary<trn::AddOp>(x, ctx.mulScalar(xCube, kKappa)), kBeta);
  Value t = ctx.create<trn::TanhOp>(inner.getType(), inner);
  Value left = ctx.mulScalar(x, 0.5);
  Value leftDerivative = ctx.mulScalar(ctx.addScalar(t, 1.0), 0.5);
  Value tanhDerivative =
      ctx.addScalar(ctx.mulScalar(ctx.binary<trn::MulOp>(t, t), -1.0), 1.0);
  Value innerDerivative =
      ctx.mulScalar(ctx.addScalar(ctx.mulScalar(xSq, 3 * kKappa), 1.0), kBeta);
  Value rightDerivative = ctx.binary<trn::MulOp>(
      ctx.binary<trn::MulOp>(left, tanhDerivative), innerDerivative);
  Value dx = ctx.binary<trn::AddOp>(leftDerivative, rightDerivative);
  return ctx.convert(ctx.binary<trn::MulOp>(grad, dx), ctx.resultElementType());
}

FailureOr<Value> importGeluBackward(NodeContext &ctx) {
  const Arg *a = ctx.arg(kKeywordOnly, "approximate");
  std::string approx = a && a->kind != Arg::Kind::None ? a->text : "none";
  if (approx == "tanh")
    return geluTanhBackward(ctx);
  if (approx != "none")
    return ctx.invalid("unknown gelu approximation '" + approx + "'");
  return activationBackward<trn::GeluDxOp>(ctx);
}

/// floor/ceil/round/trunc on integers are the identity (torch keeps the
/// dtype).
template <typename OpTy> FailureOr<Value> rounding(NodeContext &ctx) {
  FailureOr<Value> x = ctx.tensor(0, "self");
  if (failed(x))
    return failure();
  if (category(cast<RankedTensorType>(x->getType()).getElementType()) != 2)
    return *x;
  return unary<OpTy>(ctx);
}

/// round.default, and round.decimals with decimals = 0.
FailureOr<Value> importRound(NodeContext &ctx) {
  FailureOr<int64_t> decimals = ctx.integer(kKeywordOnly, "decimals", 0);
  if (failed(decimals))
    return failure();
  if (*decimals != 0)
    return ctx.unsupported("round with decimals != 0 has no lowering");
  return rounding<trn::RoundOp>(ctx);
}

} // namespace

void registerMathImporters(OpRegistry &r) {
  r.add("aten.exp.default", unary<trn::ExpOp>);
  r.add("aten.expm1.default", unary<trn::Expm1Op>);
  r.add("aten.log.default", unary<trn::LogOp>);
  r.add("aten.log1p.default", unary<trn::Log1pOp>);
  r.add("aten.sqrt.default", unary<trn::SqrtOp>);
  r.add("aten.rsqrt.default", unary<trn::RsqrtOp>);
  r.add("aten.reciprocal.default", unary<trn::ReciprocalOp>);
  r.add("aten.sin.default", unary<trn::SinOp>);
  r.add("aten.cos.default", unary<trn::CosOp>);
  r.add("aten.tanh.default", unary<trn::TanhOp>);
  r.add("aten.sigmoid.default", unary<trn::SigmoidOp>);
  r.add("aten.silu.default", unary<trn::SiluOp>);
  r.add("aten.mish.default", unary<trn::MishOp>);
  r.add("aten.erf.default", unary<trn::ErfOp>);
  r.add("aten.abs.default", boolAsInt<unary<trn::AbsOp>>);
  r.add("aten.sign.default", boolAsInt<unary<trn::SignOp>>);
  r.add("aten.sgn.default", boolAsInt<unary<trn::SignOp>>);
  r.add("aten.bitwise_not.default", unary<trn::BitwiseNotOp>);
  r.add("aten.floor.default", rounding<trn::FloorOp>);
  r.add("aten.ceil.default", rounding<trn::CeilOp>);
  r.add("aten.trunc.default", rounding<trn::TruncOp>);
  r.add("aten.round.default", rounding<trn::RoundOp>);
  r.add("aten.round.decimals", importRound);
  r.add("aten.gelu.default", importGelu);
  r.add("aten.gelu_backward.default", importGeluBackward);
  r.add("aten.silu_backward.default", activationBackward<trn::SiluDxOp>);
  r.add("aten.leaky_relu.default", importLeakyRelu);
  r.add("aten.isnan.default", predicate<trn::IsNanOp>);
  r.add("aten.isinf.default", predicate<trn::IsInfOp>);
  r.add("aten.logical_not.default", importLogicalNot);

  r.add("aten.div.Tensor", importDiv);
  r.add("aten.div.Scalar", importDiv);
  r.add("aten.div.Tensor_mode", importDiv);
  r.add("aten.div.Scalar_mode", importDiv);
  r.add("aten.pow.Tensor_Scalar", importPow);
  r.add("aten.pow.Tensor_Tensor", importPow);
  r.add("aten.pow.Scalar", importPow);
  r.add("aten.maximum.default", boolAsInt<binary<trn::MaximumOp>>);
  r.add("aten.minimum.default", boolAsInt<binary<trn::MinimumOp>>);
  for (const char *o : {"Tensor", "Scalar", "Scalar_Tensor"})
    r.add(std::string("aten.remainder.") + o, binary<trn::RemainderOp>);
  r.add("aten.fmod.Tensor", binary<trn::FmodOp>);
  r.add("aten.fmod.Scalar", binary<trn::FmodOp>);
  for (const char *o : {"Tensor", "Scalar"}) {
    std::string s = std::string(".") + o;
    r.add("aten.bitwise_and" + s, binary<trn::BitwiseAndOp>);
    r.add("aten.bitwise_or" + s, binary<trn::BitwiseOrOp>);
    r.add("aten.bitwise_xor" + s, binary<trn::BitwiseXorOp>);
    r.add("aten.eq" + s, compare<trn::EqOp>);
    r.add("aten.ne" + s, compare<trn::NeOp>);
    r.add("aten.lt" + s, compare<trn::LtOp>);
    r.add("aten.le" + s, compare<trn::LeOp>);
    r.add("aten.gt" + s, compare<trn::GtOp>);
    r.add("aten.ge" + s, compare<trn::GeOp>);
  }
  r.add("aten.logical_and.default", compare<trn::LogicalAndOp>);
  r.add("aten.logical_or.default", compare<trn::LogicalOrOp>);
  r.add("aten.logical_xor.default", compare<trn::LogicalXorOp>);
  r.add("aten.where.self", importWhere);
  r.add("aten.clamp.default", importClamp);
  r.add("aten.clamp.Tensor", importClampTensor);
}

} // namespace trnc::import
