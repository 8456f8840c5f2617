//===- RowSpace.h - the [K..., N] row space of a row group ------*- C++ -*-===//
//
// Shared by row-group formation (RowGroupFormation.cpp) and lowering
// (LowerRowGroup.cpp): a group's [K..., N] space and the role an op plays
// in it.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Operation.h"
#include "llvm/ADT/SmallVector.h"

namespace trnc::tile {

inline llvm::ArrayRef<int64_t> shapeOf(mlir::Value v) {
  return mlir::cast<mlir::RankedTensorType>(v.getType()).getShape();
}

inline mlir::Type eltOf(mlir::Value v) {
  return mlir::cast<mlir::RankedTensorType>(v.getType()).getElementType();
}

/// The [K..., N] space of a group.
struct RowSpace {
  llvm::SmallVector<int64_t> full; // [K..., N]
  llvm::ArrayRef<int64_t> kept() const { return llvm::ArrayRef(full).drop_back(); }
  int64_t n() const { return full.back(); }

  bool isExactFull(mlir::Value v) const { return shapeOf(v) == llvm::ArrayRef(full); }
  /// [K..., N], or a row-major reshape of it that keeps the rows (a
  /// [B*T, V] gradient viewed [B, T, V]): elementwise ops on it are the
  /// same row by row.
  bool isFull(mlir::Value v) const {
    llvm::ArrayRef<int64_t> s = shapeOf(v);
    if (s == llvm::ArrayRef(full))
      return true;
    int64_t a = 1, b = 1;
    for (int64_t d : s)
      a *= d;
    for (int64_t d : full)
      b *= d;
    return s.size() >= 2 && s.back() == n() && a == b;
  }
  /// [K...] or [K..., 1]: one value per row.
  bool isRow(mlir::Value v) const {
    llvm::ArrayRef<int64_t> s = shapeOf(v);
    if (s == kept())
      return true;
    return s.size() == full.size() && s.drop_back() == kept() && s.back() == 1;
  }
};

/// An op's part in a row group: an elementwise op on full rows or per-row
/// values, a reduction over the row (full -> row), a sum over the rows
/// (full -> [N], or row -> scalar), or a view between them.
enum class Role { none, elementwise, reduceRow, sumRows, alias };

/// What `op` would be in a group over `space` (none: not a member).
Role roleOf(mlir::Operation *op, const RowSpace &space);

} // namespace trnc::tile
