//===- BoolAsInt.h - bool arithmetic computed in int32 ------------*- C++ -*-===//
//
// torch's arithmetic on bool tensors (add, mul, maximum, ...) gives bool.
// The elementwise importers compute it in int32; the graph driver's final
// convert to i1 stores x != 0.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "NodeContext.h"

namespace trnc::import {

/// Runs `inner` with a bool result computed as int32: the driver's final
/// convert to i1 stores x != 0, which makes add/max or, mul/min and (torch's
/// arithmetic on bools).
template <Importer inner>
mlir::FailureOr<mlir::Value> boolAsInt(NodeContext &ctx) {
  mlir::RankedTensorType t = ctx.resultType();
  if (t.getElementType().isInteger(1))
    ctx.setResultType(t.clone(ctx.builder.getI32Type()));
  return inner(ctx);
}

} // namespace trnc::import
