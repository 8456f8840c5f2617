//===- TrnIndexingOps.cpp - verifiers of trn.gather_rows/scatter_rows -----===//
//
// Shape rules of the indexed row movements (TrnIndexingOps.td): a 2-D table
// or base [N, D], a 1-D integer index [M], rows of the same width D.
//
//===----------------------------------------------------------------------===//
#include "dialects/Trn/TrnOps.h"

using namespace mlir;
using namespace trnc::trn;

/// A 2-D [N, D] table and a 1-D index: what both ops share.
static LogicalResult verifyTableAndIndex(Operation *op, Value table,
                                         Value index) {
  auto t = cast<RankedTensorType>(table.getType());
  auto i = cast<RankedTensorType>(index.getType());
  if (t.getRank() != 2)
    return op->emitOpError("table must be 2-D [N, D], got rank ")
           << t.getRank();
  if (i.getRank() != 1)
    return op->emitOpError("index must be 1-D, got rank ") << i.getRank();
  return success();
}

LogicalResult GatherRowsOp::verify() {
  if (failed(verifyTableAndIndex(*this, getTable(), getIndex())))
    return failure();
  auto t = cast<RankedTensorType>(getTable().getType());
  auto i = cast<RankedTensorType>(getIndex().getType());
  auto r = cast<RankedTensorType>(getResult().getType());
  if (r.getElementType() != t.getElementType())
    return emitOpError("result element type must be the table's");
  if (r.getRank() != 2 || r.getDimSize(0) != i.getDimSize(0) ||
      r.getDimSize(1) != t.getDimSize(1))
    return emitOpError("result must be [")
           << i.getDimSize(0) << ", " << t.getDimSize(1) << "] (M x D)";
  return success();
}

LogicalResult ScatterRowsOp::verify() {
  if (failed(verifyTableAndIndex(*this, getBase(), getIndex())))
    return failure();
  auto b = cast<RankedTensorType>(getBase().getType());
  auto i = cast<RankedTensorType>(getIndex().getType());
  auto s = cast<RankedTensorType>(getSrc().getType());
  if (getResult().getType() != b)
    return emitOpError("result type must be the base's");
  if (s.getElementType() != b.getElementType())
    return emitOpError("src element type must be the base's");
  if (s.getRank() != 2 || s.getDimSize(0) != i.getDimSize(0) ||
      s.getDimSize(1) != b.getDimSize(1))
    return emitOpError("src must be [")
           << i.getDimSize(0) << ", " << b.getDimSize(1) << "] (M x D)";
  return success();
}
