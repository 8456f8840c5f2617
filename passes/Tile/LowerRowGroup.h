//===- LowerRowGroup.h - rows and their reductions as one loop -*- C++ -*-===//
//
// Row groups (LowerRowGroup.cpp): the ops of one [K..., N] row space (full
// and per-row elementwise ops, reductions over the row, sums over the rows)
// lowered as one loop over tiles of rows, each row whole in one partition.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "passes/Tile/LoweringContext.h"

#include "mlir/IR/Block.h"

namespace trnc::tile {

struct RowGroup {
  /// Members in program order; the group is lowered at the last one.
  llvm::SmallVector<mlir::Operation *> ops;
  mlir::Operation *point = nullptr;
  /// The [K..., N] space: rows K, each of N elements.
  llvm::SmallVector<int64_t> fullShape;
};

/// The row groups of a function body, disjoint, each legal to lower at its
/// point (nothing outside reads a member before it).
llvm::SmallVector<RowGroup> formRowGroups(mlir::Block &body,
                                          const MachineModel &machine);

/// Lowers `group` at its point as one loop; when it cannot be one (SBUF, a
/// row space that is not one partition walk) lowers each member with
/// `lowerOne` instead, in program order.
mlir::LogicalResult
lowerRowGroup(LoweringContext &ctx, const RowGroup &group,
              llvm::function_ref<mlir::LogicalResult(mlir::Operation *)> lowerOne);

} // namespace trnc::tile
