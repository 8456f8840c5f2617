//===- ReductionImporters.cpp - sums --------------------------------------===//
//
// aten.sum.{dim_IntList,default} -> trn.reduce_sum over sorted, unique,
// non-negative dims, then trn.reshape for keepdim. An empty or absent dim
// list sums over every dim, as in ATen. The input is converted to the result
// dtype first (`dtype=` casts before summing).
//
//===----------------------------------------------------------------------===//
#include "NodeContext.h"

#include "dialects/Trn/TrnOps.h"

#include "llvm/ADT/STLExtras.h"

using namespace mlir;

namespace trnc::import {
namespace {

FailureOr<Value> sum(NodeContext &ctx, ArrayRef<int64_t> requested,
                     bool keepdim) {
  FailureOr<Value> x = ctx.tensor(0, "self");
  if (failed(x))
    return failure();
  Value in = ctx.convert(*x, ctx.resultElementType());
  auto type = cast<RankedTensorType>(in.getType());
  int64_t rank = type.getRank();

  SmallVector<bool> reduce(rank, requested.empty());
  for (int64_t d : requested) {
    FailureOr<int64_t> nd = ctx.normalizeDim(d, rank);
    if (failed(nd))
      return failure();
    if (rank == 0)
      continue; // summing a 0-d tensor over dim 0 or -1 is the identity
    if (reduce[*nd])
      return ctx.invalid("dimension " + std::to_string(*nd) +
                         " appears twice in the dim list");
    reduce[*nd] = true;
  }

  SmallVector<int64_t> dims, kept, keptDims;
  for (int64_t i = 0; i < rank; ++i) {
    if (reduce[i])
      dims.push_back(i);
    else
      kept.push_back(type.getDimSize(i));
    keptDims.push_back(reduce[i] ? 1 : type.getDimSize(i));
  }
  if (dims.empty())
    return in;
  Value r = ctx.create<trn::ReduceSumOp>(type.clone(kept), in,
                                         ctx.builder.getDenseI64ArrayAttr(dims));
  return keepdim ? ctx.reshape(r, keptDims) : r;
}

FailureOr<Value> importSumDims(NodeContext &ctx) {
  FailureOr<SmallVector<int64_t>> dims =
      ctx.intList(1, "dim", SmallVector<int64_t>{});
  FailureOr<bool> keepdim = ctx.boolean(2, "keepdim", false);
  if (failed(dims) || failed(keepdim))
    return failure();
  return sum(ctx, *dims, *keepdim);
}

FailureOr<Value> importSumAll(NodeContext &ctx) {
  return sum(ctx, {}, /*keepdim=*/false);
}

} // namespace

void registerReductionImporters(OpRegistry &r) {
  r.add("aten.sum.dim_IntList", importSumDims);
  r.add("aten.sum.default", importSumAll);
}

} // namespace trnc::import
