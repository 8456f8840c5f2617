//===- ReductionImporters.cpp - reductions and softmax --------------------===//
//
// aten.{sum,amax,amin,prod,max,min} -> trn.reduce_{sum,max,min,prod} over
// sorted, unique, non-negative dims, then trn.reshape for keepdim. An empty
// or absent dim list reduces over every dim, as in ATen. The input is
// converted to the result dtype first (`dtype=` casts before reducing).
// mean, var and var_mean are composites of those (sum, sub, mul, scale);
// _softmax and _log_softmax map to the fused trn.softmax; cumsum and cumprod
// to trn.cumsum / trn.cumprod.
//
//===----------------------------------------------------------------------===//
#include "NodeContext.h"

#include "dialects/Trn/TrnOps.h"

#include "llvm/ADT/STLExtras.h"

#include <limits>
#include <type_traits>

using namespace mlir;

namespace trnc::import {
namespace {

/// The element type a reduction computes in: the result's when it is a
/// float, else fp32 (integer and bool reductions are exact while partial
/// results stay within 2^24; the importer's caller converts the result back).
Type computeType(NodeContext &ctx) {
  Type t = ctx.resultElementType();
  return isa<FloatType>(t) ? t : Type(ctx.builder.getF32Type());
}

/// `v` in the compute type. int64 goes through int32 first: tiles hold no
/// int64, and the DMA only narrows i64 -> i32 (docs/decompositions.md).
Value toCompute(NodeContext &ctx, Value v) {
  Type elt = cast<RankedTensorType>(v.getType()).getElementType();
  if (elt.isInteger(64))
    v = ctx.convert(v, ctx.builder.getI32Type());
  return ctx.convert(v, computeType(ctx));
}

/// The dims to reduce as a mask over `rank` (all of them when `requested`
/// is empty).
FailureOr<SmallVector<bool>> reducedMask(NodeContext &ctx,
                                         ArrayRef<int64_t> requested,
                                         int64_t rank) {
  SmallVector<bool> reduce(rank, requested.empty());
  for (int64_t d : requested) {
    FailureOr<int64_t> nd = ctx.normalizeDim(d, rank);
    if (failed(nd))
      return failure();
    if (rank == 0)
      continue; // reducing a 0-d tensor over dim 0 or -1 is the identity
    if (reduce[*nd]) {
      (void)ctx.invalid("dimension " + std::to_string(*nd) +
                        " appears twice in the dim list");
      return failure();
    }
    reduce[*nd] = true;
  }
  return reduce;
}

/// The value of a reduction over no elements (sum 0, prod 1; ATen refuses
/// max/min there, so theirs is never read).
template <typename OpTy> double emptyValue() {
  return std::is_same_v<OpTy, trn::ReduceProdOp> ? 1.0 : 0.0;
}

/// A result computed in fp32 for an int64 node goes back through int32
/// (the DMA widens i32 -> i64; nothing converts fp32 -> i64 directly).
Value fromCompute(NodeContext &ctx, Value v) {
  if (ctx.resultElementType().isInteger(64))
    return ctx.convert(v, ctx.builder.getI32Type());
  return v;
}

/// OpTy over the masked dims of `in`, reshaped for keepdim.
template <typename OpTy>
Value reduce(NodeContext &ctx, Value in, ArrayRef<bool> mask, bool keepdim) {
  auto type = cast<RankedTensorType>(in.getType());
  if (type.getNumElements() == 0) { // nothing to reduce: a constant
    SmallVector<int64_t> shape;
    for (int64_t i = 0; i < type.getRank(); ++i)
      if (!mask[i] || keepdim)
        shape.push_back(mask[i] ? 1 : type.getDimSize(i));
    return ctx.full(type.clone(shape), emptyValue<OpTy>());
  }
  SmallVector<int64_t> dims, kept, keptDims;
  for (int64_t i = 0; i < type.getRank(); ++i) {
    if (mask[i])
      dims.push_back(i);
    else
      kept.push_back(type.getDimSize(i));
    keptDims.push_back(mask[i] ? 1 : type.getDimSize(i));
  }
  if (dims.empty())
    return in;
  Value r = ctx.create<OpTy>(type.clone(kept), in,
                             ctx.builder.getDenseI64ArrayAttr(dims));
  return keepdim ? ctx.reshape(r, keptDims) : r;
}

/// Number of elements a reduction over `mask` folds into one result.
int64_t reducedCount(Value in, ArrayRef<bool> mask) {
  auto type = cast<RankedTensorType>(in.getType());
  int64_t n = 1;
  for (int64_t i = 0; i < type.getRank(); ++i)
    if (mask[i])
      n *= type.getDimSize(i);
  return n;
}

/// `self` in the result dtype and the mask of `dims` (absent: every dim).
struct Reduction {
  Value in;
  SmallVector<bool> mask;
  bool keepdim = false;
};

FailureOr<Reduction> reductionArgs(NodeContext &ctx, unsigned dimPos,
                                   unsigned keepdimPos) {
  FailureOr<Value> x = ctx.tensor(0, "self");
  if (failed(x))
    return failure();
  SmallVector<int64_t> dims;
  bool keepdim = false;
  if (dimPos != kKeywordOnly) {
    FailureOr<SmallVector<int64_t>> d =
        ctx.intList(dimPos, "dim", SmallVector<int64_t>{});
    FailureOr<bool> k = ctx.boolean(keepdimPos, "keepdim", false);
    if (failed(d) || failed(k))
      return failure();
    dims = *d;
    keepdim = *k;
  }
  Value in = toCompute(ctx, *x);
  int64_t rank = cast<RankedTensorType>(in.getType()).getRank();
  FailureOr<SmallVector<bool>> mask = reducedMask(ctx, dims, rank);
  if (failed(mask))
    return failure();
  return Reduction{in, *mask, keepdim};
}

/// aten.<op>.dim_IntList / .default style: (self, dim=[], keepdim=False).
template <typename OpTy, unsigned DimPos = 1>
FailureOr<Value> importReduce(NodeContext &ctx) {
  FailureOr<Reduction> r = reductionArgs(ctx, DimPos, DimPos + 1);
  if (failed(r))
    return failure();
  return fromCompute(ctx, reduce<OpTy>(ctx, r->in, r->mask, r->keepdim));
}

/// Over every dim: aten.sum.default, prod.default, max.default, min.default.
template <typename OpTy> FailureOr<Value> importReduceAll(NodeContext &ctx) {
  FailureOr<Reduction> r = reductionArgs(ctx, kKeywordOnly, kKeywordOnly);
  if (failed(r))
    return failure();
  return fromCompute(ctx, reduce<OpTy>(ctx, r->in, r->mask, false));
}

/// prod.dim_int(self, int dim, bool keepdim, *, dtype).
FailureOr<Value> importProdDim(NodeContext &ctx) {
  return importReduce<trn::ReduceProdOp>(ctx);
}

/// sum / count.
Value mean(NodeContext &ctx, const Reduction &r) {
  Value s = reduce<trn::ReduceSumOp>(ctx, r.in, r.mask, r.keepdim);
  return ctx.mulScalar(s, 1.0 / double(reducedCount(r.in, r.mask)));
}

FailureOr<Value> importMean(NodeContext &ctx) {
  FailureOr<Reduction> r = reductionArgs(ctx, 1, 2);
  if (failed(r))
    return failure();
  return mean(ctx, *r);
}

FailureOr<Value> importMeanAll(NodeContext &ctx) {
  FailureOr<Reduction> r = reductionArgs(ctx, kKeywordOnly, kKeywordOnly);
  if (failed(r))
    return failure();
  return mean(ctx, *r);
}

/// (var, mean) for var.correction / var_mean.correction:
/// sum((x - mean)^2) / (N - correction), the two-pass form (no cancellation).
FailureOr<std::pair<Value, Value>> varMean(NodeContext &ctx) {
  FailureOr<Reduction> r = reductionArgs(ctx, 1, kKeywordOnly);
  FailureOr<double> correction = ctx.scalar(kKeywordOnly, "correction", 1.0);
  FailureOr<bool> keepdim = ctx.boolean(kKeywordOnly, "keepdim", false);
  if (failed(r) || failed(correction) || failed(keepdim))
    return failure();
  Reduction kept = *r;
  kept.keepdim = true;
  Value m = mean(ctx, kept);
  auto inType = cast<RankedTensorType>(r->in.getType());
  Value centred = ctx.create<trn::SubOp>(
      inType, r->in, ctx.broadcast(m, inType.getShape()));
  Value sq = ctx.create<trn::MulOp>(inType, centred, centred);
  Value ss = reduce<trn::ReduceSumOp>(ctx, sq, r->mask, *keepdim);
  double denom = double(reducedCount(r->in, r->mask)) - *correction;
  Value var = ctx.mulScalar(ss, denom > 0 ? 1.0 / denom
                                          : std::numeric_limits<double>::infinity());
  if (!*keepdim)
    m = ctx.reshape(m, cast<RankedTensorType>(var.getType()).getShape());
  return std::make_pair(var, m);
}

FailureOr<Value> importVar(NodeContext &ctx) {
  FailureOr<std::pair<Value, Value>> vm = varMean(ctx);
  if (failed(vm))
    return failure();
  return vm->first;
}

FailureOr<SmallVector<Value>> importVarMean(NodeContext &ctx) {
  FailureOr<std::pair<Value, Value>> vm = varMean(ctx);
  if (failed(vm))
    return failure();
  return SmallVector<Value>{vm->first, vm->second};
}

/// _softmax / _log_softmax (self, dim, half_to_float).
template <bool Log> FailureOr<Value> importSoftmax(NodeContext &ctx) {
  FailureOr<Value> x = ctx.tensor(0, "self");
  FailureOr<int64_t> dim = ctx.integer(1, "dim");
  if (failed(x) || failed(dim))
    return failure();
  Value in = ctx.convert(*x, ctx.resultElementType());
  auto type = cast<RankedTensorType>(in.getType());
  FailureOr<int64_t> d = ctx.normalizeDim(*dim, type.getRank());
  if (failed(d))
    return failure();
  if (type.getRank() == 0) // one element: softmax 1, log_softmax 0
    return ctx.full(type, Log ? 0.0 : 1.0);
  if (type.getNumElements() == 0)
    return in;
  auto op = ctx.builder.create<trn::SoftmaxOp>(ctx.loc, type, in, *d, Log);
  return op.getResult();
}

/// any / all: max / min of `x != 0` (a cast to bool, then to fp32 0/1).
template <typename OpTy> FailureOr<Value> importAnyAll(NodeContext &ctx) {
  const Arg *dim = ctx.arg(1, "dim");
  bool hasDim = dim && dim->kind != Arg::Kind::None;
  FailureOr<Reduction> r = hasDim ? reductionArgs(ctx, 1, 2)
                                  : reductionArgs(ctx, kKeywordOnly, kKeywordOnly);
  if (failed(r))
    return failure();
  Value nonzero = ctx.convert(r->in, ctx.builder.getI1Type());
  Value in = ctx.convert(nonzero, ctx.builder.getF32Type());
  return reduce<OpTy>(ctx, in, r->mask, r->keepdim);
}

/// cumsum / cumprod (self, dim, *, dtype): dtype casts before scanning.
template <typename OpTy> FailureOr<Value> importScan(NodeContext &ctx) {
  FailureOr<Value> x = ctx.tensor(0, "self");
  FailureOr<int64_t> dim = ctx.integer(1, "dim");
  if (failed(x) || failed(dim))
    return failure();
  Value in = toCompute(ctx, *x);
  auto type = cast<RankedTensorType>(in.getType());
  FailureOr<int64_t> d = ctx.normalizeDim(*dim, type.getRank());
  if (failed(d))
    return failure();
  if (type.getRank() == 0 || type.getNumElements() == 0)
    return fromCompute(ctx, in);
  return fromCompute(ctx, ctx.create<OpTy>(type, in, *d));
}

} // namespace

void registerReductionImporters(OpRegistry &r) {
  r.add("aten.sum.dim_IntList", importReduce<trn::ReduceSumOp>);
  r.add("aten.sum.default", importReduceAll<trn::ReduceSumOp>);
  r.add("aten.amax.default", importReduce<trn::ReduceMaxOp>);
  r.add("aten.amin.default", importReduce<trn::ReduceMinOp>);
  r.add("aten.max.default", importReduceAll<trn::ReduceMaxOp>);
  r.add("aten.min.default", importReduceAll<trn::ReduceMinOp>);
  r.add("aten.prod.dim_int", importProdDim);
  r.add("aten.prod.default", importReduceAll<trn::ReduceProdOp>);
  r.add("aten.mean.dim", importMean);
  r.add("aten.mean.default", importMeanAll);
  r.add("aten.var.correction", importVar);
  r.addMulti("aten.var_mean.correction", importVarMean);
  r.add("aten._softmax.default", importSoftmax<false>);
  r.add("aten._log_softmax.default", importSoftmax<true>);
  r.add("aten.cumsum.default", importScan<trn::CumsumOp>);
  for (const char *overload : {"default", "dim", "dims"}) {
    r.add(std::string("aten.any.") + overload, importAnyAll<trn::ReduceMaxOp>);
    r.add(std::string("aten.all.") + overload, importAnyAll<trn::ReduceMinOp>);
  }
  r.add("aten.cumprod.default", importScan<trn::CumprodOp>);
}

} // namespace trnc::import
