//===- CreationImporters.cpp - constant-filled tensors --------------------===//
//
// aten.{full,zeros,ones,*_like,new_*,scalar_tensor} -> trn.full. The shape
// comes from the size argument (or the `self` operand of the *_like forms),
// the dtype from the node's meta; dtype/device/layout keywords need no op.
//
//===----------------------------------------------------------------------===//
#include "NodeContext.h"

#include "dialects/Trn/TrnOps.h"

using namespace mlir;

namespace trnc::import {
namespace {

/// A tensor of shape `size` filled with `value`, in the result dtype.
Value fill(NodeContext &ctx, ArrayRef<int64_t> size, double value) {
  return ctx.full(RankedTensorType::get(size, ctx.resultElementType()), value);
}

/// full / zeros / ones / new_* : the size is argument `sizePos`; the fill
/// value is argument `valuePos`, or `constant` when valuePos is kKeywordOnly.
FailureOr<Value> fromSize(NodeContext &ctx, unsigned sizePos,
                          unsigned valuePos, double constant) {
  FailureOr<SmallVector<int64_t>> size = ctx.intList(sizePos, "size");
  FailureOr<double> value = valuePos == kKeywordOnly
                                ? FailureOr<double>(constant)
                                : ctx.scalar(valuePos, "fill_value");
  if (failed(size) || failed(value))
    return failure();
  for (int64_t d : *size)
    if (d < 0)
      return ctx.invalid("negative size in " + formatShape(*size));
  return fill(ctx, *size, *value);
}

/// *_like: the shape of `self`.
FailureOr<Value> like(NodeContext &ctx, unsigned valuePos, double constant) {
  FailureOr<Value> self = ctx.tensor(0, "self");
  FailureOr<double> value = valuePos == kKeywordOnly
                                ? FailureOr<double>(constant)
                                : ctx.scalar(valuePos, "fill_value");
  if (failed(self) || failed(value))
    return failure();
  return fill(ctx, cast<RankedTensorType>(self->getType()).getShape(), *value);
}

FailureOr<Value> importFull(NodeContext &ctx) {
  return fromSize(ctx, 0, 1, 0.0);
}
FailureOr<Value> importZeros(NodeContext &ctx) {
  return fromSize(ctx, 0, kKeywordOnly, 0.0);
}
FailureOr<Value> importOnes(NodeContext &ctx) {
  return fromSize(ctx, 0, kKeywordOnly, 1.0);
}
FailureOr<Value> importNewFull(NodeContext &ctx) {
  return fromSize(ctx, 1, 2, 0.0);
}
FailureOr<Value> importNewZeros(NodeContext &ctx) {
  return fromSize(ctx, 1, kKeywordOnly, 0.0);
}
FailureOr<Value> importNewOnes(NodeContext &ctx) {
  return fromSize(ctx, 1, kKeywordOnly, 1.0);
}
FailureOr<Value> importFullLike(NodeContext &ctx) { return like(ctx, 1, 0.0); }
FailureOr<Value> importZerosLike(NodeContext &ctx) {
  return like(ctx, kKeywordOnly, 0.0);
}
FailureOr<Value> importOnesLike(NodeContext &ctx) {
  return like(ctx, kKeywordOnly, 1.0);
}

FailureOr<Value> importScalarTensor(NodeContext &ctx) {
  FailureOr<double> value = ctx.scalar(0, "s");
  if (failed(value))
    return failure();
  return fill(ctx, {}, *value);
}

} // namespace

void registerRandomImporters(OpRegistry &r); // RandomImporters.cpp

void registerCreationImporters(OpRegistry &r) {
  registerRandomImporters(r);
  r.add("aten.full.default", importFull);
  r.add("aten.zeros.default", importZeros);
  r.add("aten.ones.default", importOnes);
  r.add("aten.new_full.default", importNewFull);
  r.add("aten.new_zeros.default", importNewZeros);
  r.add("aten.new_ones.default", importNewOnes);
  r.add("aten.full_like.default", importFullLike);
  r.add("aten.zeros_like.default", importZerosLike);
  r.add("aten.ones_like.default", importOnesLike);
  r.add("aten.scalar_tensor.default", importScalarTensor);
}

} // namespace trnc::import
