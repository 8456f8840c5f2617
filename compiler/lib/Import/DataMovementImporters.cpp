//===- DataMovementImporters.cpp - slices, flips and concatenation --------===//
//
// aten.slice.Tensor / select.int / flip -> trn.slice (a strided window, a
// view in the lowering); aten.cat -> trn.concat (DMA copies); arange ->
// trn.iota and tril/triu -> trn.triangle (GpSimd iota / affine_select). Composite
// data movement (split, chunk, stack, roll, pad, repeat, tile) reaches these
// through trnc's decomposition rules (python/trnc/decompositions.py).
//
//===----------------------------------------------------------------------===//
#include "NodeContext.h"

#include "dialects/Trn/TrnOps.h"

#include <cmath>
#include <limits>

using namespace mlir;

namespace trnc::import {
namespace {

/// trn.slice of `x` with per-dim starts and steps to `shape`.
Value slice(NodeContext &ctx, Value x, ArrayRef<int64_t> starts,
            ArrayRef<int64_t> steps, ArrayRef<int64_t> shape) {
  auto type = RankedTensorType::get(shape, typeOf(x).getElementType());
  if (type == typeOf(x) && llvm::all_of(starts, [](int64_t s) { return s == 0; }) &&
      llvm::all_of(steps, [](int64_t s) { return s == 1; }))
    return x;
  return ctx.create<trn::SliceOp>(type, x, ctx.builder.getDenseI64ArrayAttr(starts),
                                  ctx.builder.getDenseI64ArrayAttr(steps));
}

/// Python slice bound: negative counts from the end, then clamped.
int64_t clampBound(int64_t v, int64_t size) {
  if (v < 0)
    v += size;
  return std::clamp<int64_t>(v, 0, size);
}

/// slice.Tensor(self, dim=0, start=None, end=None, step=1).
FailureOr<Value> importSlice(NodeContext &ctx) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  FailureOr<Value> x = ctx.tensor(0, "self");
  FailureOr<int64_t> dim = ctx.integer(1, "dim", 0);
  FailureOr<int64_t> start = ctx.integer(2, "start", 0);
  FailureOr<int64_t> end = ctx.integer(3, "end", kMax);
  FailureOr<int64_t> step = ctx.integer(4, "step", 1);
  if (failed(x) || failed(dim) || failed(start) || failed(end) || failed(step))
    return failure();
  SmallVector<int64_t> shape(typeOf(*x).getShape());
  FailureOr<int64_t> d = ctx.normalizeDim(*dim, shape.size());
  if (failed(d))
    return failure();
  if (*step <= 0)
    return ctx.invalid("slice step must be positive, got " +
                       std::to_string(*step));
  int64_t size = shape[*d];
  int64_t lo = clampBound(*start, size);
  int64_t hi = std::max(lo, clampBound(*end, size));
  SmallVector<int64_t> starts(shape.size(), 0), steps(shape.size(), 1);
  starts[*d] = lo;
  steps[*d] = *step;
  shape[*d] = (hi - lo + *step - 1) / *step;
  return slice(ctx, *x, starts, steps, shape);
}

/// select.int(self, dim, index): a size-1 slice with the dim dropped.
FailureOr<Value> importSelect(NodeContext &ctx) {
  FailureOr<Value> x = ctx.tensor(0, "self");
  FailureOr<int64_t> dim = ctx.integer(1, "dim");
  FailureOr<int64_t> index = ctx.integer(2, "index");
  if (failed(x) || failed(dim) || failed(index))
    return failure();
  SmallVector<int64_t> shape(typeOf(*x).getShape());
  FailureOr<int64_t> d = ctx.normalizeDim(*dim, shape.size());
  if (failed(d))
    return failure();
  if (shape.empty())
    return ctx.invalid("select() cannot be applied to a 0-dim tensor");
  int64_t i = *index < 0 ? *index + shape[*d] : *index;
  if (i < 0 || i >= shape[*d])
    return ctx.invalid("index " + std::to_string(*index) +
                       " out of range for dim of size " +
                       std::to_string(shape[*d]));
  SmallVector<int64_t> starts(shape.size(), 0), steps(shape.size(), 1);
  starts[*d] = i;
  shape[*d] = 1;
  Value s = slice(ctx, *x, starts, steps, shape);
  shape.erase(shape.begin() + *d);
  return ctx.reshape(s, shape);
}

/// flip(self, dims): each listed dim walks backwards (step -1).
FailureOr<Value> importFlip(NodeContext &ctx) {
  FailureOr<Value> x = ctx.tensor(0, "self");
  FailureOr<SmallVector<int64_t>> dims = ctx.intList(1, "dims");
  if (failed(x) || failed(dims))
    return failure();
  ArrayRef<int64_t> shape = typeOf(*x).getShape();
  SmallVector<int64_t> starts(shape.size(), 0), steps(shape.size(), 1);
  for (int64_t dim : *dims) {
    FailureOr<int64_t> d = ctx.normalizeDim(dim, shape.size());
    if (failed(d))
      return failure();
    if (shape.empty())
      continue;
    if (steps[*d] == -1)
      return ctx.invalid("dim " + std::to_string(*d) + " appears twice");
    steps[*d] = -1;
    starts[*d] = std::max<int64_t>(shape[*d] - 1, 0);
  }
  return slice(ctx, *x, starts, steps, shape);
}

/// cat(tensors, dim=0): operands converted to the result dtype; 1-D empty
/// tensors are skipped, as ATen does.
FailureOr<Value> importCat(NodeContext &ctx) {
  FailureOr<SmallVector<Value>> tensors = ctx.tensorList(0, "tensors");
  FailureOr<int64_t> dim = ctx.integer(1, "dim", 0);
  if (failed(tensors) || failed(dim))
    return failure();
  int64_t rank = ctx.resultType().getRank();
  FailureOr<int64_t> d = ctx.normalizeDim(*dim, rank);
  if (failed(d))
    return failure();
  if (rank == 0)
    return ctx.invalid("cat of 0-dim tensors");
  SmallVector<Value> inputs;
  for (Value t : *tensors) {
    RankedTensorType type = typeOf(t);
    if (type.getRank() == 1 && type.getDimSize(0) == 0 && rank != 1)
      continue;
    if (type.getNumElements() == 0)
      continue;
    inputs.push_back(ctx.convert(t, ctx.resultElementType()));
  }
  if (inputs.empty())
    return ctx.full(ctx.resultType(), 0.0);
  if (inputs.size() == 1)
    return inputs.front();
  return ctx.create<trn::ConcatOp>(ctx.resultType(), inputs,
                                   ctx.builder.getI64IntegerAttr(*d));
}

/// arange.default(end) / arange.start(start, end) / arange.start_step(start,
/// end, step): the length comes from the node's meta (ATen's rounding).
FailureOr<Value> importArange(NodeContext &ctx) {
  bool endOnly = ctx.node.target == "aten.arange.default";
  FailureOr<double> start = endOnly ? FailureOr<double>(0.0)
                                    : ctx.scalar(0, "start");
  FailureOr<double> step = ctx.scalar(endOnly ? kKeywordOnly : 2, "step", 1.0);
  if (failed(start) || failed(step))
    return failure();
  if (ctx.resultType().getRank() != 1)
    return ctx.invalid("arange must produce a 1-D tensor");
  // An integer arange computes in its own type: ATen casts start and step
  // to it (truncation) before start + step * i.
  double first = *start, delta = *step;
  if (!isa<FloatType>(ctx.resultElementType())) {
    first = std::trunc(first);
    delta = std::trunc(delta);
  }
  return ctx.create<trn::IotaOp>(ctx.resultType(),
                                 ctx.builder.getF64FloatAttr(first),
                                 ctx.builder.getF64FloatAttr(delta));
}

/// tril / triu (self, diagonal=0).
template <bool Upper>
FailureOr<Value> importTriangle(NodeContext &ctx) {
  FailureOr<Value> x = ctx.tensor(0, "self");
  FailureOr<int64_t> diagonal = ctx.integer(1, "diagonal", 0);
  if (failed(x) || failed(diagonal))
    return failure();
  if (typeOf(*x).getRank() < 2)
    return ctx.invalid(std::string(Upper ? "triu" : "tril") +
                       " needs a tensor of at least 2 dims");
  return ctx.create<trn::TriangleOp>(typeOf(*x), *x,
                                     ctx.builder.getI64IntegerAttr(*diagonal),
                                     ctx.builder.getBoolAttr(Upper));
}

} // namespace

void registerDataMovementImporters(OpRegistry &r) {
  r.add("aten.slice.Tensor", importSlice);
  r.add("aten.select.int", importSelect);
  r.add("aten.flip.default", importFlip);
  r.add("aten.cat.default", importCat);
  for (const char *target : {"aten.arange.default", "aten.arange.start",
                             "aten.arange.start_step"})
    r.add(target, importArange);
  r.add("aten.tril.default", importTriangle<false>);
  r.add("aten.triu.default", importTriangle<true>);
}

} // namespace trnc::import
