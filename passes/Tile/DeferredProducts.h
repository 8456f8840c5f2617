//===- DeferredProducts.h - weight gradients the scheduler may run later -*- C++ -*-===//
//
// A backward graph computes, per layer, the gradient of the layer's input
// (the next layer's backward waits for it) and of its weight (a result that
// nothing else reads). The lowering emits them in the order AOTAutograd
// does, often the weight gradient first, and program order is the list
// scheduler's priority. So the lowering marks each weight gradient's
// instructions, and the instruction where its data-gradient neighbour's
// work ends, and the list scheduler (ListSchedule.cpp) also tries the order
// with each marked run moved there (one with no data gradient after it
// spread over the rest of the program), keeping it only when it is
// estimated faster. Moved in the graph instead, the bf16 GPT step's
// backward gained 79 us and the demo's lost 9 us: whether it pays depends
// on the graph.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "mlir/IR/Block.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"

namespace trnc::tile {

/// On every instruction of a weight gradient: the id of its anchor.
constexpr llvm::StringLiteral kDeferUntilAttr = "trnc.defer_until";
/// On the first instruction lowered at or after an anchor op: the ids
/// anchored there (DenseI64ArrayAttr). A weight gradient whose anchor
/// carries no instruction may run at the end.
constexpr llvm::StringLiteral kDeferAnchorAttr = "trnc.defer_anchor";

struct Deferrals {
  /// A weight gradient (a trn.matmul, a fusion group of one, or a sum
  /// over the rows of a matrix, a bias gradient, whose values reach only
  /// the function's results, through views) -> its id.
  llvm::DenseMap<mlir::Operation *, int64_t> products;
  /// The views and casts of a weight gradient's values (their own ops in
  /// the body) -> its id: they move with it.
  llvm::DenseMap<mlir::Operation *, int64_t> chain;
  /// The op after the next product that is not a weight gradient (the next
  /// data gradient: a matmul, conv2d, attention or attention_grad) -> the
  /// ids of the weight gradients before it. Weight gradients with no such
  /// product after them have no anchor op (the end).
  llvm::DenseMap<mlir::Operation *, llvm::SmallVector<int64_t>> anchors;
};

/// The weight gradients of a function body of trn ops and fusion groups;
/// none when it has no other product.
Deferrals planDeferrals(mlir::Block &body);

/// Marks the instructions in [from, to) (loop bodies included) as weight
/// gradient `id`'s, but those `shared` says later lowerings also read.
void markDeferred(mlir::Block::iterator from, mlir::Block::iterator to,
                  int64_t id, llvm::function_ref<bool(mlir::Operation *)> shared);

/// Marks the first instruction in [from, to) as the anchor of `ids`;
/// false when the range has none.
bool markAnchor(mlir::Block::iterator from, mlir::Block::iterator to,
                llvm::ArrayRef<int64_t> ids);

/// Before `op` (an instruction) is erased by a later pass: the weight
/// gradients anchored on it are anchored on the next instruction instead
/// (else they would run at the end).
void handOverAnchor(mlir::Operation *op);

} // namespace trnc::tile
