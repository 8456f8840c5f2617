//===- ElementwiseSteps.h - one elementwise trn op as tile instructions -*- C++ -*-===//
//
// The per-tile instructions of an elementwise trn op, shared by the two
// fusion groups that compute on tiles: elementwise groups (one shape,
// LowerElementwise.cpp) and row groups (rows with their reductions,
// LowerRowGroup.cpp). Each operand tile comes with its own access pattern,
// so a [P, 1] per-row value can be read broadcast along a [P, N] row
// (stride 0) without being widened first.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "passes/Tile/EngineBalance.h"
#include "passes/Tile/LoweringContext.h"

#include "llvm/ADT/SmallPtrSet.h"

#include <functional>
#include <memory>
#include <optional>

namespace trnc::tile {

/// The instructions computing one tile: `ins` are the operand tiles read
/// through `inAps`, `out` the result tile written through `outAp`.
using TileCompute = std::function<void(
    mlir::Location, llvm::ArrayRef<mlir::Value> ins,
    llvm::ArrayRef<nisa::AccessPatternAttr> inAps, mlir::Value out,
    nisa::AccessPatternAttr outAp)>;

/// A step that is one tensor_scalar: (x op0 imm0) op1 imm1, `reverse`
/// swapping an op's operands (imm op x).
struct ScalarOps {
  nisa::AluOp op0;
  double imm0;
  bool reverse0 = false;
  nisa::AluOp op1 = nisa::AluOp::bypass;
  double imm1 = 0.0;
  bool reverse1 = false;
};

/// A step that is one activation: func(x * scale + bias).
struct ActivationForm {
  nisa::ActFunc func;
  double scale = 1.0, bias = 0.0;
};

/// One op of a group: the operands it reads as tiles (an immediate
/// constant dropped) and the instructions computing its tile. A null
/// compute is a cast (the DMA casts an input; a tensor_copy a group value).
struct ElementwiseStep {
  mlir::Operation *op = nullptr;
  llvm::SmallVector<mlir::Value> operands;
  TileCompute compute;
  /// One instruction that reads every operand before writing: the result
  /// may overwrite an operand's tile (select, leaky_relu, threshold_backward
  /// write the result before reading all operands).
  bool inPlaceSafe = false;
  /// Set when the step is one tensor_scalar / one activation (foldSteps
  /// merges such steps).
  std::optional<ScalarOps> scalarOps;
  std::optional<ActivationForm> activation;
  /// Computed inside its only reader's instruction (foldSteps): no tile.
  bool folded = false;
};

/// The step of an elementwise op (isElementwiseOp); an error on the op when
/// it has no tile lowering.
mlir::FailureOr<ElementwiseStep> elementwiseStep(LoweringContext &ctx,
                                                 mlir::Operation *op);

/// Merges steps whose result is read once, by the next instruction, into
/// it, so a chain of immediate arithmetic costs one instruction per engine
/// hop rather than one per op (a GELU gradient: 11 ops -> 7 instructions):
///  - tensor_scalar into tensor_scalar: the two-op form (x op0 a) op1 b;
///  - x * a, x + a, x - a, x * a + b into an activation: func(x * a + b);
///  - exp(y) into a multiply by c > 0: exp(y + ln c).
/// `foldable(v)` says v (a step's fp32 result) is read only by the one step
/// reading it here, as a [P, F] tile of its own shape, and is stored nowhere.
/// The producer is marked `folded`; the reader reads the producer's operand.
void foldSteps(LoweringContext &ctx, llvm::MutableArrayRef<ElementwiseStep> steps,
               llvm::function_ref<bool(mlir::Value)> foldable);

/// Ops that may share a group: elementwise, but not fills (a memset per tile
/// of their own) and not threshold_backward (it masks its input in place).
bool isGroupableElementwise(mlir::Operation *op);

/// An elementwise group's steps, inputs and outputs, and the instructions of
/// one of its tiles (LowerElementwise.cpp): shared by the elementwise groups
/// and the matmul epilogues (MatmulEpilogue.cpp).
struct ElementwiseGroupPlan {
  llvm::SmallPtrSet<mlir::Operation *, 16> members;
  llvm::SmallVector<ElementwiseStep> steps;
  /// Inputs from outside, one per (value, load type): a convert of an input
  /// is that input loaded with the cast.
  llvm::SmallVector<std::pair<mlir::Value, mlir::Type>> sources;
  llvm::DenseMap<std::pair<mlir::Value, mlir::Type>, unsigned> sourceIndex;
  /// Results read outside the group (or returned).
  llvm::SmallVector<mlir::Value> outputs;
  /// Casts whose result is their operand's tile (no instruction), and the
  /// values whose tile is in another type than theirs (a cast's, fused).
  llvm::DenseSet<mlir::Value> sameTile;
  llvm::DenseMap<mlir::Value, mlir::Type> tileType;
  /// Inputs read in more than one type, loaded once in their own (their
  /// casts are computed on chip).
  llvm::DenseSet<mlir::Value> ownType;

  static mlir::FailureOr<ElementwiseGroupPlan>
  build(LoweringContext &ctx, llvm::ArrayRef<mlir::Operation *> ops);
  bool internal(mlir::Value v) const;
  /// The type `step` reads outside operand `v` in.
  mlir::Type loadType(const ElementwiseStep &step, mlir::Value v) const;
  /// Element types of the group's tiles (for tile sizing).
  llvm::SmallVector<mlir::Type> tileTypes() const;
  /// Tiles one task keeps live at once: its loads, and the group values
  /// between definition and last use.
  int64_t liveTiles() const;
  /// Computes one task on [p, f] tiles, `loaded[i]` holding source i (read
  /// through `loadedAps[i]` when given: a compact broadcast tile's stride-0
  /// pattern); returns the outputs' tiles, each a loaded tile or a whole
  /// [p, f] tile. Its instructions are marked free to move between engines
  /// (EngineBalance.h: the `unroll` phase places them).
  llvm::SmallVector<mlir::Value>
  computeTile(LoweringContext &ctx, mlir::Location loc, int64_t p, int64_t f,
              llvm::ArrayRef<mlir::Value> loaded,
              llvm::ArrayRef<nisa::AccessPatternAttr> loadedAps = {}) const;
};

/// The operands `op` reads as tiles: a binary ALU op with one constant
/// operand reads only the other (the constant is its immediate).
llvm::SmallVector<mlir::Value> tileOperandsOf(mlir::Operation *op);

} // namespace trnc::tile
