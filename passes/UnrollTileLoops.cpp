//===- UnrollTileLoops.cpp - tile loops into straight-line instructions ---===//
//
// `trnc-unroll-tile-loops`: the tile phase emits a group's tiles as scf.for
// loops whose body is one iteration (passes/Tile/TileLoops.h), HBM buffers
// walked through nisa.hbm_window. The later phases (the list scheduler,
// allocation, semaphores) work on the instruction stream, so this
// pass unrolls each loop nest, folds the windows into the instructions'
// access patterns, and then chooses the engines the lowerings left to it
// (EngineBalance.h): a matmul's or an attention's PSUM copies take turns
// on Scalar and Vector, and in the fusion groups an instruction that
// Vector, Scalar or GpSimd could run goes where it would end first in
// program order, so consecutive iterations spread over the engines, which
// one body, emitted once, cannot.
//
//===----------------------------------------------------------------------===//
#include "passes/Passes.h"
#include "passes/TargetModel.h"
#include "passes/Tile/EngineBalance.h"
#include "passes/Tile/TileLoops.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Matchers.h"

namespace trnc {
#define GEN_PASS_DEF_UNROLLTILELOOPS
#include "passes/Passes.h.inc"
} // namespace trnc

using namespace mlir;
using namespace trnc;

namespace {

/// Replaces `loop` by its iterations in order, inner loops unrolled where
/// they stand. Iter_args (tiles a software-pipelined body carries to the
/// next iteration) become the values the previous iteration yielded; the
/// loop's results, the last iteration's. Fails on a loop whose bounds are
/// not constants (the tile phase emits none).
LogicalResult unroll(scf::ForOp loop) {
  std::optional<int64_t> lb = getConstantIntValue(loop.getLowerBound());
  std::optional<int64_t> ub = getConstantIntValue(loop.getUpperBound());
  std::optional<int64_t> step = getConstantIntValue(loop.getStep());
  if (!lb || !ub || !step || *step <= 0)
    return loop.emitOpError("a tile loop needs constant bounds and a "
                            "positive step");
  OpBuilder b(loop);
  SmallVector<Value> carried(loop.getInitArgs());
  for (int64_t i = *lb; i < *ub; i += *step) {
    SmallVector<scf::ForOp> inner;
    // The yield is kept until the inner loops are gone (their results,
    // yielded, are replaced as they are unrolled), then read and dropped.
    Operation *yield =
        tile::cloneIteration(b, loop, i, carried, [&](Operation *copy) {
          if (auto nested = dyn_cast<scf::ForOp>(copy))
            inner.push_back(nested);
        });
    for (scf::ForOp nested : inner)
      if (failed(unroll(nested)))
        return failure();
    carried.assign(yield->operand_begin(), yield->operand_end());
    yield->erase();
  }
  loop.replaceAllUsesWith(carried);
  loop.erase();
  return success();
}

/// Folds every nisa.hbm_window of `func` (their indices constants now) into
/// the patterns of the instructions using it. Later windows first: a window
/// of a window then points at the outer one before that one is folded.
LogicalResult foldWindows(func::FuncOp func) {
  SmallVector<nisa::HbmWindowOp> windows;
  func.walk([&](nisa::HbmWindowOp w) { windows.push_back(w); });
  for (nisa::HbmWindowOp w : llvm::reverse(windows)) {
    std::optional<int64_t> index = getConstantIntValue(w.getIndex());
    if (!index)
      return w.emitOpError("index is not a constant after unrolling");
    int64_t delta = w.offsetAt(*index);
    for (OpOperand &use : llvm::make_early_inc_range(w->getUses())) {
      Operation *user = use.getOwner();
      if (auto outer = dyn_cast<nisa::HbmWindowOp>(user))
        return outer.emitOpError("window of a window not yet folded");
      if (failed(nisa::shiftAccessOffset(user, use.getOperandNumber(), delta)))
        return failure();
      use.set(w.getSource());
    }
    w.erase();
  }
  return success();
}

} // namespace

LogicalResult trnc::requireUnrolled(Operation *root, StringRef pass) {
  Operation *loop = nullptr;
  root->walk<WalkOrder::PreOrder>([&](Operation *op) {
    if (isa<scf::ForOp, nisa::HbmWindowOp>(op)) {
      loop = op;
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  if (!loop)
    return success();
  return loop->emitOpError()
         << (isa<scf::ForOp>(loop) ? "is a tile loop; " : "is a tile loop's window; ")
         << pass << " works on instructions: run trnc-unroll-tile-loops first";
}

namespace {

struct UnrollTileLoopsPass
    : public trnc::impl::UnrollTileLoopsBase<UnrollTileLoopsPass> {
  using UnrollTileLoopsBase::UnrollTileLoopsBase;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    std::optional<MachineModel> model = targetModel(func, target);
    if (!model)
      return signalPassFailure();
    if (func.isExternal())
      return;
    SmallVector<scf::ForOp> loops;
    for (Operation &op : func.getBody().front())
      if (auto loop = dyn_cast<scf::ForOp>(op))
        loops.push_back(loop);
    for (scf::ForOp loop : loops)
      if (failed(unroll(loop)))
        return signalPassFailure();
    if (failed(foldWindows(func)))
      return signalPassFailure();
    // The induction constants the windows were folded from.
    func.walk([](arith::ConstantOp c) {
      if (c->use_empty())
        c->erase();
    });
    // The PSUM copies that take turns, then the fusion groups' engines,
    // tile after tile (EngineBalance.h).
    tile::placeAlternatingCopies(func.getBody().front());
    tile::placeEngineGroups(func.getBody().front(), *model);
  }
};

} // namespace
