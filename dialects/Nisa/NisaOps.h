//===- NisaOps.h - nisa operations and the instruction interface --*- C++ -*-===//
#pragma once

#include "dialects/Nisa/NisaDialect.h"

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SmallVector.h"

namespace trnc::nisa {

/// One operand of an instruction: a buffer (tile or HBM memref) and the
/// pattern of elements the instruction touches in it.
struct Access {
  mlir::Value buffer;
  AccessPatternAttr pattern;
  bool isWrite = false;
  /// Which operand of the instruction word: 0 dst, 1 src0, 2 src1, 3 src2.
  unsigned slot = 0;
};

/// The pattern attributes of an instruction's operands, in operand order
/// (the instruction word's dst, src0, src1, src2).
inline constexpr const char *kAccessPatternNames[] = {"dst_ap", "src0_ap",
                                                      "src1_ap", "src2_ap"};

/// Inclusive range of linear element indices an access pattern touches.
struct ElementExtent {
  int64_t min = 0;
  int64_t max = 0;
};
ElementExtent getElementExtent(AccessPatternAttr ap);

/// For an access pattern on a tile: first partition, partition count and the
/// elements per partition it walks.
struct TileAccessShape {
  int64_t partitionStart = 0;
  int64_t partitions = 1;
  int64_t freeElements = 1;
};
TileAccessShape getTileAccessShape(TileType tile, AccessPatternAttr ap);

/// Number of elements in `type` (a tile or a 1-D memref).
int64_t getBufferElements(mlir::Type type);

namespace detail {
Engine getExecutionEngine(mlir::Operation *op);
llvm::SmallVector<Access, 3> getAccesses(mlir::Operation *op);
} // namespace detail

} // namespace trnc::nisa

#include "dialects/Nisa/NisaInterfaces.h.inc"

#define GET_OP_CLASSES
#include "dialects/Nisa/NisaOps.h.inc"

namespace trnc::nisa {

/// The compute engines that may run `op` with the same result (the ISA's
/// rules for copies, fills and ALU ops: GpSimd never touches PSUM, Scalar's
/// ALU only bypasses, adds and multiplies); empty for an op whose engine is
/// fixed. The list scheduler and the lowering's engine balance both ask.
llvm::SmallVector<Engine, 3> equivalentEngines(mlir::Operation *op);

/// Adds `delta` elements to the offset of the pattern through which the
/// instruction `op` accesses its operand `operandNumber` (dst, src0, src1 in
/// operand order): how a folded nisa.hbm_window moves an access.
mlir::LogicalResult shiftAccessOffset(mlir::Operation *op,
                                      unsigned operandNumber, int64_t delta);

/// How far a nisa.hbm_window moves its source at `index`: `index * step`,
/// or with a `period` P (0: none) and `phase` p, `((index + p) mod P - p) *
/// step`. The tile phase finds periodic views with the same formula.
int64_t windowOffset(int64_t index, int64_t step, int64_t period,
                     int64_t phase);

} // namespace trnc::nisa
