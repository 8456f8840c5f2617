//===- MatmulEpilogue.h - elementwise consumers of a matmul -*- C++ -*-===//
//
// A matmul's epilogue: the elementwise ops after it that read its result
// (directly or through a [..., N] reshape) and values already lowered, e.g.
// a bias add, a GELU, a residual add, a GELU's gradient. They are computed
// on each [m, n] output tile right after it leaves PSUM, so the matmul's
// result reaches HBM only when something else reads it.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "passes/Tile/ElementwiseSteps.h"

#include "dialects/Trn/TrnOps.h"

#include <optional>

namespace trnc::tile {

struct MatmulEpilogue {
  ElementwiseGroupPlan plan;
  /// The matmul's result and its reshapes the epilogue reads.
  llvm::DenseSet<mlir::Value> resultViews;
  /// Whether anything outside the epilogue reads the result.
  bool storesResult = false;
  /// [M, N] views of the plan's sources (unused for result views) and of
  /// its outputs' destinations.
  llvm::SmallVector<HbmView> sourceViews, outputViews;
};

/// The plan of `mm`'s epilogue `ops` (epilogueMembers, GroupFormation.h),
/// or none when they cannot run on its output tiles (SBUF, an input or
/// output layout with no [M, N] walk). Allocates the outputs' destinations.
std::optional<MatmulEpilogue>
planMatmulEpilogue(LoweringContext &ctx, trn::MatmulOp mm,
                   llvm::ArrayRef<mlir::Operation *> ops);

} // namespace trnc::tile
