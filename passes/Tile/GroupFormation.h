//===- GroupFormation.h - which trn ops one tile loop computes -*- C++ -*-===//
//
// The formation rules of fusion groups, over trn ops only (no HBM, no
// tiles): trnc-form-fusion-groups (passes/FormFusionGroups.cpp) applies them
// in program order and wraps each group in a `trn.fusion_group`; the tile
// lowering then computes each group as one loop. Row groups are formed by
// formRowGroups (LowerRowGroup.h).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "dialects/Trn/TrnOps.h"

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"

namespace trnc::tile {

/// The elementwise group starting at `first` (LowerElementwise.cpp): `first`
/// and the ops of its shape in its block connected to it (by def-use or by
/// reading the same value), not `taken` (in a group already, or claimed by
/// a row group), each of whose operands is a member or `available(v,
/// limit)`: computed before the group, or (when `limit` > 0) a producer of
/// at most `limit` elements the caller moves ahead of the group (an
/// optimizer's per-step scalars, a per-row statistic broadcast along the
/// rows). A fill or threshold_backward stays alone. `partitions`: the
/// target's partition count (a group larger than that may ask for
/// producers to be moved).
llvm::SmallVector<mlir::Operation *>
elementwiseGroup(mlir::Operation *first, int64_t partitions,
                 llvm::function_ref<bool(mlir::Operation *)> taken,
                 llvm::function_ref<bool(mlir::Value, int64_t)> available);

/// The epilogue of a 2-D matmul (MatmulEpilogue.cpp): the later elementwise
/// ops over its [M, N] result (or a reshape of it with the same last dim)
/// that read only the result, each other and `available` values, connected
/// to an op reading the result; not `taken`. In program order; empty when
/// there is none.
llvm::SmallVector<mlir::Operation *>
epilogueMembers(trn::MatmulOp mm,
                llvm::function_ref<bool(mlir::Operation *)> taken,
                llvm::function_ref<bool(mlir::Value)> available);

} // namespace trnc::tile
