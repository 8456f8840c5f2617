//===- TileLoops.h - a group's tiles as scf.for loops over one body -*- C++ -*-===//
//
// forEachTile lists a group's tiles one by one. Most of that list repeats:
// the same tile shape, each HBM view a constant number of elements further
// on. nestTileTasks finds those repeats and returns them as a loop nest, so
// the tile phase emits one iteration of each loop (scf.for, the HBM views
// walked through nisa.hbm_window) instead of every tile;
// trnc-unroll-tile-loops (passes/UnrollTileLoops.cpp) unrolls it later.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "passes/Tile/HbmView.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

#include <vector>

namespace trnc::tile {

/// Whether the builder emits into a tile loop's body (whose values do not
/// outlive the loop).
bool insideTileLoop(mlir::OpBuilder &b);

/// A leaf (one task, emitted as it is) or a loop of `trips` iterations of
/// `body`, in which view v moves `steps[v]` elements per iteration, and
/// where `periods[v]` is not 0, back by that many steps every `periods[v]`
/// iterations, the first `phases[v]` iterations into the period (a table
/// broadcast over the batch, walked with the batch's rows: nisa.hbm_window).
struct TileNestNode {
  int64_t task = -1; // leaf: index into the task list; loop: -1
  int64_t trips = 0;
  int64_t stretch = 0; // tasks per iteration
  llvm::SmallVector<int64_t> steps;
  llvm::SmallVector<int64_t> periods, phases;
  std::vector<TileNestNode> body; // std::vector: of its own (incomplete) type

  bool isLoop() const { return task < 0; }
};

/// Covers `tasks` (in order) with leaves and loops: a loop is a run of two or
/// more repeats of a stretch of tasks, each repeat the previous one with
/// every task of the same shape and each view's offset moved by the same
/// step (or, for a view that comes back to its first offset after P
/// repeats, moved by the same step modulo P repeats). At each position the loop covering the most tasks is taken (the
/// shortest stretch among equals); loops nest. A `hoistable` view is one
/// whose tiles a body may reuse from outside its loop (a bias row loaded
/// once, in the loop's first iteration, emitted before it:
/// emitPeeledTileNest): inside a loop whose step for it is 0, no inner loop
/// may move it.
std::vector<TileNestNode> nestTileTasks(llvm::ArrayRef<TileTask> tasks,
                                              llvm::ArrayRef<bool> hoistable);

/// Opens an `scf.for` of `trips` iterations at the builder's position and
/// moves the builder into its body; the destructor puts it back after the
/// loop. In the body, `roots()[v]` is the buffer view v is walked through:
/// a nisa.hbm_window of `roots[v]` at the induction variable when the view
/// moves (`steps[v]` != 0), `roots[v]` itself otherwise; with `periods[v]`
/// (if given and not 0) the window's period and `phases[v]` + `ahead` its
/// phase (`ahead`: a loop over a nest's iterations 1.., its first one
/// peeled).
class TileLoopScope {
public:
  TileLoopScope(mlir::OpBuilder &b, mlir::Location loc, int64_t trips,
                llvm::ArrayRef<int64_t> steps, llvm::ArrayRef<mlir::Value> roots,
                llvm::ArrayRef<int64_t> periods = {},
                llvm::ArrayRef<int64_t> phases = {}, int64_t ahead = 0);
  ~TileLoopScope();
  TileLoopScope(const TileLoopScope &) = delete;
  TileLoopScope &operator=(const TileLoopScope &) = delete;

  llvm::ArrayRef<mlir::Value> roots() const { return windows; }

private:
  mlir::OpBuilder &b;
  mlir::OpBuilder::InsertPoint saved;
  llvm::SmallVector<mlir::Value> windows;
};

/// Emits `nodes` at the builder's position: each leaf by `leaf(task, roots)`,
/// each loop as an scf.for (TileLoopScope) whose body is emitted the same
/// way with the body's roots.
void emitTileNest(
    mlir::OpBuilder &b, mlir::Location loc,
    llvm::ArrayRef<TileNestNode> nodes, llvm::ArrayRef<mlir::Value> roots,
    llvm::function_ref<void(int64_t, llvm::ArrayRef<mlir::Value>)> leaf);

/// emitTileNest, each loop's first iteration emitted as it is, before a
/// loop over the others (or followed by a second copy, for a loop of two
/// iterations): what later iterations reuse (a bias row, a per-row
/// statistic, each loaded at its first use) is then loaded in the order the
/// tiles come, outside the loop. `leaf` gets the task's index in the list
/// the nest was built from; `enter()` runs before a loop is opened and
/// `exit()` after it is closed.
void emitPeeledTileNest(
    mlir::OpBuilder &b, mlir::Location loc,
    llvm::ArrayRef<TileNestNode> nodes, llvm::ArrayRef<mlir::Value> roots,
    llvm::function_ref<void(int64_t, llvm::ArrayRef<mlir::Value>)> leaf,
    llvm::function_ref<void()> enter, llvm::function_ref<void()> exit);

/// forEachTile emitted as loops: `fn(task, roots)` emits one tile of
/// `space`, its views read and written through `roots[v]` (view v's buffer,
/// or a loop's window of it). For lowerings whose tiles share nothing
/// across tiles but what they allocate before.
void emitTileLoops(
    mlir::OpBuilder &b, mlir::Location loc, const JointSpace &space,
    int64_t maxPartitions, int64_t maxFree, llvm::ArrayRef<mlir::Value> roots,
    llvm::function_ref<void(const TileTask &, llvm::ArrayRef<mlir::Value>)> fn);

/// Clones iteration `index` of `loop` at `b`, its iter_args being
/// `carried`: the body's ops (each passed to `onClone`, if given), then its
/// yield, which is returned for the caller to read and erase. Unrolling
/// (trnc-unroll-tile-loops) and loop fusion (trnc-fuse-tile-loops, peeling
/// the iterations a producer runs ahead) are made of these.
mlir::Operation *
cloneIteration(mlir::OpBuilder &b, mlir::scf::ForOp loop, int64_t index,
               mlir::ValueRange carried,
               llvm::function_ref<void(mlir::Operation *)> onClone = nullptr);

/// A tile loop's trip count: its constant upper bound, if it runs from 0
/// by 1.
std::optional<int64_t> tripCount(mlir::scf::ForOp loop);

/// Peels `loop` (from 0 by 1 to a constant bound): its first `front`
/// iterations run before it and its last `back` after it, as straight-line
/// copies, the loop keeping those in between (its windows of the induction
/// variable moved `front` iterations on). A loop left with no iteration is
/// erased. Loop fusion's producer running ahead and the hand-over of tiles
/// between a loop and the straight-line instructions around it
/// (trnc-fuse-forward-stores) are made of these.
mlir::LogicalResult peelIterations(mlir::scf::ForOp loop, int64_t front,
                                   int64_t back);

} // namespace trnc::tile
