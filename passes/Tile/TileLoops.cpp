//===- TileLoops.cpp - a group's tiles as scf.for loops over one body ------===//
//
// The search for repeats in a task list (nestTileTasks) and the loop a
// repeat becomes (TileLoopScope). See TileLoops.h.
//
//===----------------------------------------------------------------------===//
#include "passes/Tile/TileLoops.h"

#include "dialects/Nisa/NisaOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace trnc::tile;

namespace {

/// Longest stretch of tasks one loop iteration may hold: the tiles of one
/// row of a group's space (its free-axis chunks) repeat at most this often
/// in practice; bounding it bounds the search (positions x stretches).
constexpr int64_t kMaxStretch = 1024;

bool sameShape(const TileTask &a, const TileTask &b) {
  return a.partitions == b.partitions && a.freeElements == b.freeElements &&
         a.counts == b.counts && a.strides == b.strides;
}

/// How a view moves from repeat to repeat of a stretch: `step` elements
/// each, and, with a period P, back by P steps every P repeats, the first
/// repeat `phase` repeats into the period (nisa.hbm_window's offset).
struct Walk {
  SmallVector<int64_t> steps, periods, phases;

  int64_t moved(size_t v, int64_t n) const {
    return trnc::nisa::windowOffset(n, steps[v], periods[v], phases[v]);
  }
};

/// Whether repeat `n` of the stretch [at, at + len) is repeat 0 with each
/// view moved as `walk` says.
bool repeats(ArrayRef<TileTask> tasks, int64_t at, int64_t len, int64_t n,
             const Walk &walk) {
  for (int64_t j = 0; j < len; ++j) {
    const TileTask &a = tasks[at + j], &b = tasks[at + n * len + j];
    if (!sameShape(a, b))
      return false;
    for (size_t v = 0; v < walk.steps.size(); ++v)
      if (b.offsets[v] != a.offsets[v] + walk.moved(v, n))
        return false;
  }
  return true;
}

/// Repeat `n` of the stretch failed to match: a view that came back q < n
/// steps before where repeat 0 had it wraps with period n + q and phase q
/// (the stretch started q repeats into the period); if, with those, every
/// view is where it should be, `walk` takes them. A hoistable view takes
/// none: as a nest, its tiles are loaded once, in the outer loop's first
/// iteration, and reused.
bool wrapsAt(ArrayRef<TileTask> tasks, int64_t at, int64_t len, int64_t n,
             ArrayRef<bool> hoistable, Walk &walk) {
  Walk trial = walk;
  bool wrapped = false;
  for (size_t v = 0; v < walk.steps.size(); ++v) {
    int64_t step = walk.steps[v];
    if (walk.periods[v] || step == 0 || hoistable[v])
      continue;
    int64_t back = tasks[at].offsets[v] - tasks[at + n * len].offsets[v];
    if (back % step != 0 || back / step < 0 || back / step >= n)
      continue;
    trial.periods[v] = n + back / step;
    trial.phases[v] = back / step;
    wrapped = true;
  }
  if (!wrapped || !repeats(tasks, at, len, n, trial))
    return false;
  walk = std::move(trial);
  return true;
}

struct Nester {
  ArrayRef<TileTask> tasks;
  ArrayRef<bool> hoistable;

  std::vector<TileNestNode> nest(int64_t lo, int64_t hi,
                                 ArrayRef<bool> pinned) {
    std::vector<TileNestNode> nodes;
    int64_t at = lo;
    while (at < hi) {
      int64_t bestCover = 0, bestLen = 0;
      Walk best;
      int64_t maxLen = std::min(kMaxStretch, (hi - at) / 2);
      for (int64_t len = 1; len <= maxLen && bestCover < hi - at; ++len) {
        const TileTask &a = tasks[at], &b = tasks[at + len];
        if (!sameShape(a, b))
          continue;
        SmallVector<int64_t> steps;
        bool ok = true;
        for (size_t v = 0; v < a.offsets.size(); ++v) {
          steps.push_back(b.offsets[v] - a.offsets[v]);
          ok &= !pinned[v] || steps.back() == 0;
        }
        if (!ok || llvm::all_of(steps, [](int64_t s) { return s == 0; }))
          continue; // a loop must move some view (else it recomputes a tile)
        Walk walk{steps, SmallVector<int64_t>(steps.size(), 0),
                  SmallVector<int64_t>(steps.size(), 0)};
        int64_t n = 1;
        while (at + (n + 1) * len <= hi &&
               (repeats(tasks, at, len, n, walk) ||
                wrapsAt(tasks, at, len, n, hoistable, walk)))
          ++n;
        if (n >= 2 && n * len > bestCover) {
          bestCover = n * len;
          bestLen = len;
          best = std::move(walk);
        }
      }
      if (bestCover == 0) {
        TileNestNode leaf;
        leaf.task = at++;
        nodes.push_back(std::move(leaf));
        continue;
      }
      TileNestNode loop;
      loop.trips = bestCover / bestLen;
      loop.stretch = bestLen;
      // A reused view that stays put in this loop is loaded outside it (in
      // its first iteration); no loop inside may move it.
      SmallVector<bool> inner(pinned.begin(), pinned.end());
      for (size_t v = 0; v < inner.size(); ++v)
        inner[v] = inner[v] || (hoistable[v] && best.steps[v] == 0);
      loop.steps = std::move(best.steps);
      loop.periods = std::move(best.periods);
      loop.phases = std::move(best.phases);
      loop.body = nest(at, at + bestLen, inner);
      nodes.push_back(std::move(loop));
      at += bestCover;
    }
    return nodes;
  }
};

} // namespace

std::vector<TileNestNode> trnc::tile::nestTileTasks(ArrayRef<TileTask> tasks,
                                                    ArrayRef<bool> hoistable) {
  if (tasks.empty())
    return {};
  Nester nester{tasks, hoistable};
  SmallVector<bool> none(tasks.front().offsets.size(), false);
  return nester.nest(0, tasks.size(), none);
}

Operation *trnc::tile::cloneIteration(OpBuilder &b, scf::ForOp loop,
                                     int64_t index, ValueRange carried,
                                     function_ref<void(Operation *)> onClone) {
  IRMapping map;
  map.map(loop.getInductionVar(),
          b.create<arith::ConstantIndexOp>(loop.getLoc(), index).getResult());
  map.map(loop.getRegionIterArgs(), carried);
  for (Operation &op : loop.getBody()->without_terminator()) {
    Operation *copy = b.clone(op, map);
    if (onClone)
      onClone(copy);
  }
  return b.clone(*loop.getBody()->getTerminator(), map);
}

bool trnc::tile::insideTileLoop(OpBuilder &b) {
  Block *block = b.getInsertionBlock();
  return block && isa_and_nonnull<scf::ForOp>(block->getParentOp());
}

TileLoopScope::TileLoopScope(OpBuilder &b, Location loc, int64_t trips,
                             ArrayRef<int64_t> steps, ArrayRef<Value> roots,
                             ArrayRef<int64_t> periods,
                             ArrayRef<int64_t> phases, int64_t ahead)
    : b(b), saved(b.saveInsertionPoint()) {
  Value lb = b.create<arith::ConstantIndexOp>(loc, 0);
  Value ub = b.create<arith::ConstantIndexOp>(loc, trips);
  Value one = b.create<arith::ConstantIndexOp>(loc, 1);
  auto loop = b.create<scf::ForOp>(loc, lb, ub, one);
  b.setInsertionPoint(loop.getBody()->getTerminator());
  // The builder's position after the loop, once the body is emitted.
  saved = OpBuilder::InsertPoint(loop->getBlock(),
                                 std::next(Block::iterator(loop)));
  Value iv = loop.getInductionVar();
  for (auto [v, root] : llvm::enumerate(roots)) {
    int64_t step = steps[v], period = v < periods.size() ? periods[v] : 0;
    if (step == 0) {
      windows.push_back(root);
      continue;
    }
    auto window = b.create<nisa::HbmWindowOp>(loc, root, iv, step);
    if (period) {
      window.setPeriodAttr(b.getI64IntegerAttr(period));
      if (int64_t phase = (phases[v] + ahead) % period)
        window.setPhaseAttr(b.getI64IntegerAttr(phase));
    }
    windows.push_back(window.getResult());
  }
}

TileLoopScope::~TileLoopScope() { b.restoreInsertionPoint(saved); }

void trnc::tile::emitTileNest(
    OpBuilder &b, Location loc, ArrayRef<TileNestNode> nodes,
    ArrayRef<Value> roots, function_ref<void(int64_t, ArrayRef<Value>)> leaf) {
  for (const TileNestNode &node : nodes) {
    if (!node.isLoop()) {
      leaf(node.task, roots);
      continue;
    }
    TileLoopScope loop(b, loc, node.trips, node.steps, roots, node.periods,
                       node.phases);
    emitTileNest(b, loc, node.body, loop.roots(), leaf);
  }
}

static void emitPeeled(
    OpBuilder &b, Location loc, ArrayRef<TileNestNode> nodes,
    ArrayRef<Value> roots, int64_t offset,
    function_ref<void(int64_t, ArrayRef<Value>)> leaf,
    function_ref<void()> enter, function_ref<void()> exit) {
  for (const TileNestNode &node : nodes) {
    if (!node.isLoop()) {
      leaf(node.task + offset, roots);
      continue;
    }
    emitPeeled(b, loc, node.body, roots, offset, leaf, enter, exit);
    if (node.trips == 2) {
      emitPeeled(b, loc, node.body, roots, offset + node.stretch, leaf, enter,
                 exit);
      continue;
    }
    // Iterations 1.. : the body is iteration 1's tiles, the windows at the
    // induction variable moving on from there.
    enter();
    {
      TileLoopScope loop(b, loc, node.trips - 1, node.steps, roots,
                         node.periods, node.phases, /*ahead=*/1);
      emitPeeled(b, loc, node.body, loop.roots(), offset + node.stretch, leaf,
                 enter, exit);
    }
    exit();
  }
}

void trnc::tile::emitPeeledTileNest(
    OpBuilder &b, Location loc, ArrayRef<TileNestNode> nodes,
    ArrayRef<Value> roots, function_ref<void(int64_t, ArrayRef<Value>)> leaf,
    function_ref<void()> enter, function_ref<void()> exit) {
  emitPeeled(b, loc, nodes, roots, /*offset=*/0, leaf, enter, exit);
}

void trnc::tile::emitTileLoops(
    OpBuilder &b, Location loc, const JointSpace &space, int64_t maxPartitions,
    int64_t maxFree, ArrayRef<Value> roots,
    function_ref<void(const TileTask &, ArrayRef<Value>)> fn) {
  SmallVector<TileTask> tasks;
  forEachTile(space, maxPartitions, maxFree,
              [&](const TileTask &task) { tasks.push_back(task); });
  SmallVector<bool> none(roots.size(), false);
  emitTileNest(b, loc, nestTileTasks(tasks, none), roots,
               [&](int64_t t, ArrayRef<Value> r) { fn(tasks[t], r); });
}

/// Moves every access made through `window` (directly or through windows of
/// it) `delta` elements on.
static LogicalResult shiftThrough(Operation *window, int64_t delta) {
  for (OpOperand &use : window->getUses()) {
    if (isa<trnc::nisa::HbmWindowOp>(use.getOwner())) {
      if (failed(shiftThrough(use.getOwner(), delta)))
        return failure();
      continue;
    }
    if (failed(trnc::nisa::shiftAccessOffset(use.getOwner(),
                                             use.getOperandNumber(), delta)))
      return failure();
  }
  return success();
}

/// Makes iteration i of `window`'s loop see what iteration i + `iterations`
/// saw: its accesses move by the window's offset there, and a periodic
/// window starts that many iterations further into its period.
static LogicalResult advance(trnc::nisa::HbmWindowOp window,
                             int64_t iterations) {
  auto step = static_cast<int64_t>(window.getStep());
  std::optional<uint64_t> period = window.getPeriod();
  if (!period)
    return shiftThrough(window, iterations * step);
  // With phase p, the offset at i + k is the offset with phase
  // next = (p + k) mod P at i, plus (next - p) * step.
  auto phase = static_cast<int64_t>(window.getPhase().value_or(0));
  int64_t next = (phase + iterations) % static_cast<int64_t>(*period);
  OpBuilder b(window);
  if (next)
    window.setPhaseAttr(b.getI64IntegerAttr(next));
  else
    window.removePhaseAttr();
  return shiftThrough(window, (next - phase) * step);
}

std::optional<int64_t> trnc::tile::tripCount(scf::ForOp loop) {
  std::optional<int64_t> lb = getConstantIntValue(loop.getLowerBound());
  std::optional<int64_t> ub = getConstantIntValue(loop.getUpperBound());
  std::optional<int64_t> step = getConstantIntValue(loop.getStep());
  if (!lb || !ub || !step || *lb != 0 || *step != 1)
    return std::nullopt;
  return *ub;
}

LogicalResult trnc::tile::peelIterations(scf::ForOp loop, int64_t front,
                                         int64_t back) {
  std::optional<int64_t> ub = tripCount(loop);
  if (!ub || front < 0 || back < 0 || front + back > *ub)
    return loop.emitOpError("cannot peel ")
           << front << " + " << back << " iterations off this loop";
  if (front + back == 0)
    return success();
  OpBuilder b(loop);
  SmallVector<Value> carried(loop.getInitArgs());
  auto runCopies = [&](int64_t from, int64_t to, int64_t index0) {
    for (int64_t i = from; i < to; ++i) {
      Operation *yield = cloneIteration(b, loop, i - index0, carried);
      carried.assign(yield->operand_begin(), yield->operand_end());
      yield->erase();
    }
  };
  runCopies(0, front, 0);
  int64_t trips = *ub - front - back;
  if (trips == 0) {
    runCopies(front, *ub, 0);
    loop.replaceAllUsesWith(carried);
    loop.erase();
    return success();
  }
  // The loop now runs iterations [front, ub - back) as [0, trips).
  loop.getInitArgsMutable().assign(carried);
  loop.setUpperBound(
      b.create<arith::ConstantIndexOp>(loop.getLoc(), trips).getResult());
  if (front) {
    SmallVector<trnc::nisa::HbmWindowOp> windows;
    loop.getBody()->walk([&](trnc::nisa::HbmWindowOp window) {
      if (window.getIndex() == loop.getInductionVar())
        windows.push_back(window);
    });
    for (trnc::nisa::HbmWindowOp window : windows)
      if (failed(advance(window, front)))
        return failure();
  }
  if (!back)
    return success();
  // What used the loop's results uses the last copy's.
  SmallVector<OpOperand *> uses;
  for (OpResult result : loop.getResults())
    for (OpOperand &use : result.getUses())
      uses.push_back(&use);
  b.setInsertionPointAfter(loop);
  carried.assign(loop.result_begin(), loop.result_end());
  runCopies(*ub - back, *ub, front);
  for (OpOperand *use : uses)
    use->set(carried[cast<OpResult>(use->get()).getResultNumber()]);
  return success();
}
