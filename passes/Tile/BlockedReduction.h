//===- BlockedReduction.h - accurate per-partition folds on Vector -*- C++ -*-===//
//
// The Vector engine's tensor_reduce folds a group sequentially in fp32, so
// one long fold loses accuracy linearly in its length (eager's CPU sums are
// cascaded/pairwise). A BlockedReduction reduces each free-axis chunk of a
// sum in blocks of kBlock elements (one grouped tensor_reduce: [P, f/kBlock,
// kBlock] -> [P, f/kBlock] partial sums) into an fp32 [P, n] partials tile,
// and the partials as a kBlock-ary tree; a partials tile that fills up is
// folded into an fp32 accumulator. Each element passes through
// O(kBlock * log_kBlock(n)) roundings instead of O(n). max/min/prod fold a
// whole chunk per group (exact in any order, or no better in another).
// Used by the reductions (LowerReduction.cpp) and the row groups
// (LowerRowGroup.cpp).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "passes/Tile/LoweringContext.h"

namespace trnc::tile {

/// Elements one tensor_reduce group of `alu` folds sequentially.
int64_t reductionBlockSize(nisa::AluOp alu);

/// Groups (the last one possibly short) of f elements.
inline int64_t reductionBlockCount(int64_t f, int64_t block) {
  return f / block + (f % block ? 1 : 0);
}

/// An fp32 [P, 1] reduction of free-axis chunks, blocked (see the header).
class BlockedReduction {
public:
  /// `maxPartials`: columns per partials tile; `totalBlocks`: the blocks all
  /// add() calls will bring. A tile takes no more columns than remain, so a
  /// reduction of one block is a single tensor_reduce into [P, 1].
  BlockedReduction(LoweringContext &ctx, mlir::Location loc, nisa::AluOp alu,
                   int64_t parts, int64_t maxPartials, int64_t totalBlocks)
      : ctx(ctx), loc(loc), alu(alu), block(reductionBlockSize(alu)),
        parts(parts), maxPartials(maxPartials), remaining(totalBlocks) {}

  /// Folds the first `f` free elements of tile `t` ([parts, >= f]).
  void add(mlir::Value t, int64_t f);

  /// The fp32 [parts, 1] result (at least one add() must have run).
  mlir::Value finish();

private:
  nisa::AccessPatternAttr column(int64_t first, int64_t n);
  /// Reduces the partials tile to one value per partition (a block-ary
  /// tree) and folds it into the accumulator.
  void flush();

  LoweringContext &ctx;
  mlir::Location loc;
  nisa::AluOp alu;
  int64_t block, parts, maxPartials;
  int64_t remaining; // blocks still to come
  int64_t capacity = 0; // columns of the current partials tile
  mlir::Value partials; // fp32 [parts, capacity]; `used` columns hold partials
  int64_t used = 0;
  mlir::Value acc; // fp32 [parts, 1] (or a [parts, stride] leading column)
};

} // namespace trnc::tile
