//===- GroupFormation.h - which trn ops one tile loop computes -*- C++ -*-===//
//
// The formation rules of fusion groups, over trn ops only (no HBM, no
// tiles): trnc-form-fusion-groups (passes/FormFusionGroups.cpp) applies them
// in program order and wraps each group in a `trn.fusion_group`; the tile
// lowering then computes each group as one loop.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "dialects/Trn/TrnOps.h"
#include "machine/MachineModel.h"

#include "mlir/IR/Block.h"

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

/// A row group: the ops of one [K..., N] row space (elementwise ops on
/// full rows and per-row values, reductions over the row, sums over the
/// rows, the views between them).
struct RowGroup {
  /// Members in program order; the group is placed at the last one.
  llvm::SmallVector<mlir::Operation *> ops;
  mlir::Operation *point() const { return ops.back(); }
  /// The [K..., N] space: rows K, each of N elements.
  llvm::SmallVector<int64_t> fullShape;
  /// Ops outside the group that read a member between the seed and the
  /// point and are read only after the point (the casts of a layer norm
  /// gradient's weight sums, before the residual add that joins it): they
  /// move after the point (sinkLateReaders), in program order.
  llvm::SmallVector<mlir::Operation *> sink;
};

/// The row groups of a function body (RowGroupFormation.cpp), disjoint,
/// each legal to compute at its point once its `sink` ops are moved after
/// it (nothing else outside reads a member before it).
llvm::SmallVector<RowGroup> formRowGroups(mlir::Block &body,
                                          const MachineModel &machine);

/// Moves each group's `sink` ops right after its point.
void sinkLateReaders(llvm::ArrayRef<RowGroup> groups);

} // namespace trnc::tile
