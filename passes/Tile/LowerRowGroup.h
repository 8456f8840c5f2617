//===- LowerRowGroup.h - rows and their reductions as one loop -*- C++ -*-===//
//
// Row groups (LowerRowGroup.cpp): the ops of one [K..., N] row space (full
// and per-row elementwise ops, reductions over the row, sums over the rows)
// lowered as one loop over tiles of rows, each row whole in one partition.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "passes/Tile/GroupFormation.h"
#include "passes/Tile/LoweringContext.h"

namespace trnc::tile {

/// Lowers `group` at its point as one loop; when it cannot be one (SBUF, a
/// row space that is not one partition walk) lowers each member with
/// `lowerOne` instead, in program order.
mlir::LogicalResult
lowerRowGroup(LoweringContext &ctx, const RowGroup &group,
              llvm::function_ref<mlir::LogicalResult(mlir::Operation *)> lowerOne);

} // namespace trnc::tile
