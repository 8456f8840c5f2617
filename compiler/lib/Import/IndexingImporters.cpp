//===- IndexingImporters.cpp - trnc.gather_rows / trnc.scatter_rows -------===//
//
// The two indexed row movements every indexing operator decomposes to
// (python/trnc/indirect_ops.py; decomp_indexing.py builds embedding,
// index_select, gather, scatter, index_put, nll_loss on them) ->
// trn.gather_rows / trn.scatter_rows, lowered to DmaIndirect
// (passes/Tile/LowerIndirect.cpp). int64 tables move as int32 (the
// project's int64 rule, docs/decompositions.md "dtypes"); the index keeps
// its dtype (the lowering's DMA narrows an int64 index to int32).
//
//===----------------------------------------------------------------------===//
#include "NodeContext.h"

#include "dialects/Trn/TrnOps.h"

using namespace mlir;

namespace trnc::import {
namespace {

/// The table (or base) as a 2-D tensor of a type DmaIndirect moves: int64
/// becomes int32 (the caller converts the result back).
FailureOr<Value> rowsOperand(NodeContext &ctx, unsigned pos, StringRef name) {
  FailureOr<Value> t = ctx.tensor(pos, name);
  if (failed(t))
    return failure();
  if (typeOf(*t).getRank() != 2)
    return ctx.invalid(name + " must be 2-D [N, D], got " +
                       formatShape(typeOf(*t).getShape()));
  if (typeOf(*t).getElementType().isInteger(64))
    return ctx.convert(*t, ctx.builder.getI32Type());
  return *t;
}

FailureOr<Value> indexOperand(NodeContext &ctx, unsigned pos) {
  FailureOr<Value> i = ctx.tensor(pos, "index");
  if (failed(i))
    return failure();
  RankedTensorType t = typeOf(*i);
  if (t.getRank() != 1)
    return ctx.invalid("index must be 1-D, got " + formatShape(t.getShape()));
  if (!t.getElementType().isInteger(32) && !t.getElementType().isInteger(64))
    return ctx.invalid("index must be int32 or int64");
  return *i;
}

/// gather_rows(table[N, D], index[M]) -> [M, D].
FailureOr<Value> importGatherRows(NodeContext &ctx) {
  FailureOr<Value> table = rowsOperand(ctx, 0, "table");
  FailureOr<Value> index = indexOperand(ctx, 1);
  if (failed(table) || failed(index))
    return failure();
  auto type = RankedTensorType::get(
      {typeOf(*index).getDimSize(0), typeOf(*table).getDimSize(1)},
      typeOf(*table).getElementType());
  return ctx.create<trn::GatherRowsOp>(type, *table, *index);
}

/// scatter_rows(base[N, D], index[M], src[M, D], accumulate) -> [N, D].
FailureOr<Value> importScatterRows(NodeContext &ctx) {
  FailureOr<Value> base = rowsOperand(ctx, 0, "base");
  FailureOr<Value> index = indexOperand(ctx, 1);
  FailureOr<Value> src = rowsOperand(ctx, 2, "src");
  FailureOr<bool> accumulate = ctx.boolean(3, "accumulate");
  if (failed(base) || failed(index) || failed(src) || failed(accumulate))
    return failure();
  Value s = ctx.convert(*src, typeOf(*base).getElementType());
  if (typeOf(s).getDimSize(0) != typeOf(*index).getDimSize(0) ||
      typeOf(s).getDimSize(1) != typeOf(*base).getDimSize(1))
    return ctx.invalid("src must be [M, D] = [" +
                       std::to_string(typeOf(*index).getDimSize(0)) + ", " +
                       std::to_string(typeOf(*base).getDimSize(1)) + "], got " +
                       formatShape(typeOf(s).getShape()));
  return ctx.create<trn::ScatterRowsOp>(typeOf(*base), *base, *index, s,
                                        *accumulate ? ctx.builder.getUnitAttr()
                                                    : UnitAttr());
}

} // namespace

void registerIndexingImporters(OpRegistry &r) {
  r.add("trnc.gather_rows.default", importGatherRows);
  r.add("trnc.scatter_rows.default", importScatterRows);
}

} // namespace trnc::import
