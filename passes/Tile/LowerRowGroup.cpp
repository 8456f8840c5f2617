//===- LowerRowGroup.cpp - rows and their reductions as one loop ----------===//
//
// A row group is the part of a graph that works on the rows of one [K..., N]
// space: elementwise ops on [K..., N] values ("full", also through a
// reshape that keeps the rows: [B*T, V] viewed [B, T, V]) and on per-row values
// of shape [K...] or [K..., 1] ("row"), reductions over the row
// (reduce_sum/max/min over the last dim: full -> row), the reshapes and
// broadcasts between them (row -> full along N), and sums over the rows
// (reduce_sum over every dim but the last: full -> [N], or of a row value to
// a scalar). Layer norm forward and backward (with its weight and bias
// gradients), RMS norm, the cross-entropy loss and its gradient are each one
// group: per tile of 128 rows every input is loaded once, a whole row sits in
// one partition, the row reductions are Vector folds into [P, 1] tiles that
// later ops read broadcast (stride 0) along the row, the sums over rows
// accumulate on the Tensor Engine in PSUM across the tiles (ColumnSums.h),
// and only values read outside the group are stored. The first tile is
// emitted alone (it starts the PSUM sums and loads what every tile shares),
// the others as tile loops where they repeat (TileLoops.h).
//
// The groups are formed on trn (RowGroupFormation.cpp) and arrive here as
// `trn.fusion_group "rows"` regions. When a group does not fit SBUF (its
// rows are too long for the tiles it keeps live) or its rows do not walk
// one partition dim, it falls back to lowering each member on its own, in
// order.
//
//===----------------------------------------------------------------------===//
#include "passes/Tile/BlockedReduction.h"
#include "passes/Tile/ColumnSums.h"
#include "passes/Tile/ElementwiseSteps.h"
#include "passes/Tile/LowerRowGroup.h"
#include "passes/Tile/TileLoops.h"
#include "passes/Tile/RowSpace.h"

#include "dialects/Trn/TrnOps.h"

#include "llvm/ADT/DenseMap.h"


#define DEBUG_TYPE "trnc-tile-lower-to-nisa"

using namespace mlir;
using namespace trnc;
using namespace trnc::tile;

namespace {
using Ap = nisa::AccessPatternAttr;

int64_t eltBytes(Type t) { return (t.getIntOrFloatBitWidth() + 7) / 8; }

/// A tile of a row group in one task: [P, N] (full) or [P, 1] (row).
struct RowTileValue {
  Value tile;
  bool full = false;
};

/// An input of the group (a value computed before it), with the load type.
struct External {
  Value value;
  Type loadType;
  HbmView kept;          // its [K...] walk
  int64_t rowStride = 0; // along N; 0 when read as one value per row
  bool full = false;     // a [P, N] load
  bool invariant = false; // the same tile for every task
};

/// The plan of one group, then its emission.
class RowGroupLowering {
public:
  RowGroupLowering(LoweringContext &ctx, const RowGroup &group)
      : ctx(ctx), group(group), space{group.fullShape},
        members(group.ops.begin(), group.ops.end()), loc(group.point()->getLoc()) {}

  /// Lowers the group, or returns false when it cannot be one loop (then
  /// nothing was emitted).
  FailureOr<bool> run();

private:
  Role role(Operation *op) { return roleOf(op, space); }
  bool internal(Value v) {
    Operation *def = v.getDefiningOp();
    return def && members.count(def);
  }
  /// The member a value is an alias of (itself when it is computed).
  Value rootOf(Value v) {
    while (Operation *def = v.getDefiningOp()) {
      if (!members.count(def) || role(def) != Role::alias)
        break;
      v = def->getOperand(0);
    }
    return v;
  }
  /// Operand values a member reads as tiles (none for a step folded into
  /// its reader, whose instruction reads the step's operand instead).
  SmallVector<Value> tileOperands(Operation *op) {
    if (role(op) == Role::elementwise) {
      const ElementwiseStep &step = steps.find(op)->second;
      return step.folded ? SmallVector<Value>() : step.operands;
    }
    return {op->getOperand(0)};
  }
  bool folded(Operation *op) {
    auto step = steps.find(op);
    return step != steps.end() && step->second.folded;
  }
  /// The [K...] walk of a full or row view (its last dim dropped when it
  /// is N or 1); a reshape of the full space is walked as [K..., N]
  /// (nullopt when its strides do not allow that).
  std::optional<HbmView> keptView(const HbmView &in) {
    std::optional<HbmView> full(in);
    if (in.shape.size() >= 2 && ArrayRef(in.shape) != ArrayRef(space.full) &&
        in.shape.back() == space.n())
      full = reshapeView(in, space.full);
    if (!full)
      return std::nullopt;
    const HbmView &v = *full;
    HbmView k{v.root, v.offset, {}, {}};
    size_t rank = space.kept().size();
    k.shape.assign(v.shape.begin(), v.shape.begin() + rank);
    k.strides.assign(v.strides.begin(), v.strides.begin() + rank);
    return k;
  }
  /// The type a member value's tile holds.
  Type tileType(Value v) {
    auto it = fusedType.find(v);
    return it != fusedType.end() ? it->second : eltOf(v);
  }
  LogicalResult plan();
  /// Whether the rows' joint walk can be cut into tasks of many rows each:
  /// one dim, or runs of at least half the partitions along the innermost
  /// (forEachPartitionRun).
  bool walkable(const JointSpace &rows) {
    return rows.shape.size() == 1 ||
           (rows.shape.size() >= 2 &&
            rows.shape.back() >= ctx.partitions() / 2);
  }
  /// The [K...] walks of the externals, then of the outputs (where they
  /// will be written).
  SmallVector<HbmView> keptViews();
  bool fits();
  /// Whether member `i` (`op`) may write its result over operand `v`'s
  /// tile: one instruction, v's last reader, same [P, N] tile type, a tile
  /// of its own (not an output, not shared with a cast, not kept for all
  /// tasks).
  bool reusable(size_t i, Operation *op, Value v);
  void emit();
  /// Loads `e`'s rows for a task of `p` partitions from `root` (its buffer,
  /// or a tile loop's window of it).
  Value load(External &e, Value root, int64_t p, int64_t offset,
             int64_t partStride);
  Ap readAp(const RowTileValue &t, bool asFull, int64_t p);

  LoweringContext &ctx;
  const RowGroup &group;
  RowSpace space;
  llvm::DenseSet<Operation *> members;
  Location loc;

  SmallVector<External> externals;
  llvm::DenseMap<std::pair<Value, Type>, unsigned> externalIndex;
  SmallVector<Value> outputs;       // stored per task (full or row)
  SmallVector<HbmView> outputViews; // their destinations
  SmallVector<Operation *> sums;    // sumRows members
  /// A convert whose operand's tile is computed straight in its type.
  llvm::DenseMap<Value, Type> fusedType;
  /// Widening converts whose result is their operand's tile (no copy).
  llvm::DenseSet<Value> widened;
  llvm::DenseMap<Operation *, ElementwiseStep> steps;
  /// The last member reading each value (its root, through aliases);
  /// outputs are read after the group.
  llvm::DenseMap<Value, size_t> lastUse;
  /// Bytes per partition one task keeps live at its peak (fits()).
  int64_t taskBytes = 0;
  /// A reshaped view of the rows whose strides do not walk them.
  bool unwalkable = false;
};

LogicalResult RowGroupLowering::plan() {
  for (auto [i, op] : llvm::enumerate(group.ops))
    for (Value v : role(op) == Role::alias ? SmallVector<Value>{op->getOperand(0)}
                                           : tileOperands(op))
      lastUse[rootOf(v)] = i;
  for (Operation *op : group.ops) {
    Role r = role(op);
    if (r == Role::alias || folded(op))
      continue;
    bool isCast = isa<trn::ConvertOp>(op);
    for (Value v : tileOperands(op)) {
      if (internal(v))
        continue;
      Type loadType = isCast ? eltOf(op->getResult(0)) : eltOf(v);
      if (externalIndex.count({v, loadType}))
        continue;
      if (!ctx.resolveView(v))
        return op->emitOpError("operand has no lowered HBM view");
      const HbmView &view = ctx.views.find(v)->second;
      std::optional<HbmView> kept = keptView(view);
      if (!kept) {
        unwalkable = true;
        kept = view;
      }
      External e{v, loadType, *kept, 0, false, false};
      if (space.isFull(v)) {
        e.rowStride = view.strides.back();
        e.full = e.rowStride != 0 || space.n() == 1;
      } else if (!space.isRow(v)) {
        return op->emitOpError("row group operand of unexpected shape");
      }
      e.invariant = llvm::all_of(e.kept.strides, [](int64_t s) { return s == 0; });
      externalIndex[{v, loadType}] = externals.size();
      externals.push_back(e);
    }
    if (r == Role::sumRows) {
      sums.push_back(op);
      continue;
    }
    // A result read outside (itself or through an alias) is stored.
    Value res = op->getResult(0);
    std::function<bool(Value)> readOutside = [&](Value v) {
      for (Operation *u : v.getUsers()) {
        if (!members.count(u))
          return true;
        if (role(u) == Role::alias && readOutside(u->getResult(0)))
          return true;
      }
      return false;
    };
    if (readOutside(res))
      outputs.push_back(res);
    // convert(f32 value) whose only reader is the convert: the engines
    // compute in fp32 and round on output, so writing the convert's type
    // directly is the same value.
    if (auto cvt = dyn_cast<trn::ConvertOp>(op)) {
      Value in = cvt.getOperand();
      Operation *def = in.getDefiningOp();
      if (internal(in) && in.hasOneUse() && eltOf(in).isF32() &&
          isa<FloatType>(eltOf(res)) && role(def) == Role::elementwise &&
          !isa<trn::ConvertOp>(def))
        fusedType[in] = eltOf(res);
      // convert(bf16 value) to f32 read only inside: the engines read the
      // narrow tile and compute in fp32, so the widened value is that tile.
      auto from = dyn_cast<FloatType>(eltOf(in));
      if (internal(in) && role(def) == Role::elementwise && from &&
          from.getWidth() == 16 && eltOf(res).isF32() &&
          !llvm::is_contained(outputs, res) && !fusedType.count(in)) {
        widened.insert(res);
        fusedType[res] = from;
      }
    }
  }
  for (Value v : outputs)
    lastUse[v] = SIZE_MAX;
  return success();
}

bool RowGroupLowering::reusable(size_t i, Operation *op, Value v) {
  auto step = steps.find(op);
  Value res = op->getResult(0), r = rootOf(v);
  if (step == steps.end() || !step->second.inPlaceSafe || !space.isFull(res) ||
      !space.isFull(r) || lastUse.lookup(r) != i)
    return false;
  if (internal(r)) {
    auto producer = steps.find(r.getDefiningOp());
    return producer != steps.end() && producer->second.compute &&
           !fusedType.count(r) && tileType(r) == tileType(res);
  }
  auto e = externalIndex.find({v, eltOf(v)});
  if (e == externalIndex.end())
    return false;
  const External &ext = externals[e->second];
  return ext.full && !ext.invariant && ext.loadType == tileType(res);
}

SmallVector<HbmView> RowGroupLowering::keptViews() {
  SmallVector<HbmView> kept;
  for (const External &e : externals)
    kept.push_back(e.kept);
  for (Value v : outputs) {
    auto dest = ctx.resultDest.find(v);
    ArrayRef<int64_t> shape = shapeOf(v);
    HbmView dst = dest != ctx.resultDest.end()
                      ? dest->second
                      : HbmView{Value(), 0, SmallVector<int64_t>(shape),
                                contiguousStrides(shape)};
    std::optional<HbmView> k = keptView(dst);
    unwalkable |= !k;
    kept.push_back(k ? *k : dst);
  }
  return kept;
}

/// Whether the tiles one task keeps live fit two thirds of a partition
/// (room for the next task's first loads: a cross-entropy gradient over a
/// vocabulary of 8192 keeps 112 KiB live): loads live from first to last
/// use, invariant loads throughout.
bool RowGroupLowering::fits() {
  auto bytesOf = [&](Value v) -> int64_t {
    return space.isFull(v) ? space.n() * eltBytes(tileType(v)) : 4;
  };
  int64_t invariantBytes = 0;
  for (const External &e : externals)
    if (e.invariant && e.full)
      invariantBytes += space.n() * eltBytes(e.loadType);
  llvm::DenseMap<Value, int64_t> live;
  int64_t peak = 0;
  for (auto [index, groupOp] : llvm::enumerate(group.ops)) {
    size_t i = index;
    Operation *op = groupOp; // plain locals: the lambda below captures them
    if (folded(op))
      continue;
    SmallVector<Value> reads = role(op) == Role::alias
                                   ? SmallVector<Value>{op->getOperand(0)}
                                   : tileOperands(op);
    for (Value v : reads)
      if (!internal(v) && !live.count(v) && space.isFull(v))
        live[v] = bytesOf(v);
    bool inPlace =
        llvm::any_of(reads, [&](Value v) { return reusable(i, op, v); });
    if (role(op) != Role::alias && role(op) != Role::sumRows)
      live[op->getResult(0)] = inPlace ? 0 : bytesOf(op->getResult(0));
    int64_t now = invariantBytes;
    for (auto &[v, b] : live)
      now += b;
    peak = std::max(peak, now);
    SmallVector<Value> dead;
    for (auto &[v, b] : live)
      if (lastUse.lookup(rootOf(v)) <= i)
        dead.push_back(v);
    for (Value v : dead)
      live.erase(v);
  }
  taskBytes = peak;
  // The sums' accumulators live in PSUM for the whole loop: at most half of
  // it (4 bytes per block of 128 columns: 64 Ki columns a bank).
  int64_t psumBytes = 0;
  for (Operation *op : sums)
    psumBytes += 4 * columnSumShape(ctx, space.isFull(op->getOperand(0))
                                             ? space.n()
                                             : 1)
                         .blocks;
  return peak <= (int64_t)ctx.machine.sbufPartitionBytes * 2 / 3 &&
         psumBytes <= (int64_t)ctx.machine.psumPartitionBytes / 2;
}

Value RowGroupLowering::load(External &e, Value root, int64_t p,
                             int64_t offset, int64_t partStride) {
  int64_t f = e.full ? space.n() : 1;
  int64_t rowStride = e.full ? e.rowStride : 1;
  const HbmView &view = ctx.views.find(e.value)->second;
  // int64 reaches chip only as int32 (Isa.h DType).
  bool viaI32 = view.elementType().isInteger(64) &&
                !e.loadType.isInteger(64) && !e.loadType.isInteger(32);
  Value t = ctx.allocSbuf(loc, p, f, viaI32 ? ctx.b.getI32Type() : e.loadType);
  ctx.load(loc, t, root, ctx.ap(offset, {partStride, rowStride}, {p, f}));
  if (viaI32) {
    Value c = ctx.allocSbuf(loc, p, f, e.loadType);
    ctx.copyOnVector(loc, c, ctx.tileAp(c), t, ctx.tileAp(t));
    t = c;
  }
  return t;
}

Ap RowGroupLowering::readAp(const RowTileValue &t, bool asFull, int64_t p) {
  auto type = cast<nisa::TileType>(t.tile.getType());
  if (asFull && !t.full) // one value per row, read along the row
    return ctx.ap(0, {type.getFreeSize(), 0}, {p, space.n()});
  return ctx.tileAp(t.tile, p, t.full ? space.n() : 1);
}

void RowGroupLowering::emit() {
  EmitMark groupStart(ctx.b); // the group's instructions, for their engines
  int64_t n = space.n();
  Type f32 = ctx.b.getF32Type();
  // Sums over rows: one PSUM accumulator per sum, across the tasks, and a
  // column of ones per operand type (the moving operand).
  struct SumAcc {
    Operation *op;
    int64_t width;
    Value psum;
  };
  SmallVector<SumAcc> accs;
  llvm::DenseMap<Type, Value> ones;
  int64_t parts = ctx.partitions();
  for (Operation *op : sums) {
    Value in = op->getOperand(0);
    int64_t width = space.isFull(in) ? n : 1;
    ColumnSumShape shape = columnSumShape(ctx, width);
    accs.push_back({op, width,
                    ctx.allocTile(loc, nisa::MemorySpace::psum,
                                  shape.partitions, shape.blocks, f32)});
    Type elt = tileType(in);
    if (!ones.count(elt)) {
      Value one = ctx.allocSbuf(loc, parts, 1, elt);
      ctx.memset(loc, one, ctx.tileAp(one), 1.0);
      ones[elt] = one;
    }
  }
  for (Value v : outputs) {
    outputViews.push_back(ctx.destination(loc, v));
    ctx.views[v] = outputViews.back();
  }
  SmallVector<HbmView> walks = keptViews();
  SmallVector<const HbmView *> ptrs;
  for (const HbmView &v : walks)
    ptrs.push_back(&v);
  JointSpace kept = JointSpace::build(ptrs);

  llvm::DenseMap<unsigned, Value> invariantTiles;
  bool firstTask = true;
  // Tasks overlap only when two fit in the SBUF a group may use.
  bool serial = 2 * taskBytes > (int64_t)ctx.machine.sbufPartitionBytes * 2 / 3;
  // One task, its buffers read through `roots` (one per view of `kept`).
  auto emitTask = [&](const TileTask &task, ArrayRef<Value> roots) {
    EmitMark mark(ctx.b);
    int64_t p = task.partitions;
    auto partStride = [&](unsigned v) {
      return task.strides[v].empty() ? 0 : task.strides[v][0];
    };
    llvm::DenseMap<Value, RowTileValue> tileOf;
    llvm::DenseMap<unsigned, Value> loaded;
    auto external = [&](Value v, Type loadType) -> RowTileValue {
      unsigned i = externalIndex.lookup({v, loadType});
      External &e = externals[i];
      // An invariant tile is kept from the first task (outside the loops);
      // one a loop body has to load again stays in that body.
      auto &cache =
          e.invariant && !insideTileLoop(ctx.b) ? invariantTiles : loaded;
      if (e.invariant) {
        auto kept = invariantTiles.find(i);
        if (kept != invariantTiles.end() &&
            cast<nisa::TileType>(kept->second.getType()).getPartitions() >= p)
          return {kept->second, e.full};
      }
      auto it = cache.find(i);
      if (it == cache.end() ||
          cast<nisa::TileType>(it->second.getType()).getPartitions() < p)
        it = cache.insert_or_assign(
                     i, load(e, roots[i], p, task.offsets[i], partStride(i)))
                 .first;
      return {it->second, e.full};
    };
    auto operandTile = [&](Operation *op, Value v) -> RowTileValue {
      if (internal(v))
        return tileOf.lookup(v);
      Type loadType = isa<trn::ConvertOp>(op) ? eltOf(op->getResult(0)) : eltOf(v);
      return external(v, loadType);
    };
    // A [P, N] tile of a value that may be one per row (a reduction's input).
    auto asFullTile = [&](RowTileValue t, Type elt) {
      if (t.full)
        return t.tile;
      Value w = ctx.allocSbuf(loc, p, n, elt);
      ctx.copyOnVector(loc, w, ctx.tileAp(w), t.tile, readAp(t, true, p));
      return w;
    };

    for (auto [index, groupOp] : llvm::enumerate(group.ops)) {
      size_t i = index;
      Operation *op = groupOp; // plain locals: lambdas below capture them
      Value res = op->getResult(0);
      Location opLoc = op->getLoc();
      switch (role(op)) {
      case Role::alias: {
        RowTileValue t = tileOf.lookup(rootOf(op->getOperand(0)));
        tileOf[res] = t; // a broadcast reads the [P, 1] tile along the row
        break;
      }
      case Role::elementwise: {
        ElementwiseStep *step = &steps.find(op)->second;
        if (step->folded)
          break; // computed by its reader's instruction
        bool full = space.isFull(res);
        SmallVector<Value> ins;
        SmallVector<Ap> aps;
        for (Value v : step->operands) {
          RowTileValue t = operandTile(op, v);
          ins.push_back(t.tile);
          aps.push_back(readAp(t, full, p));
        }
        if (!step->compute) { // a cast
          Value in = step->operands[0];
          if (!internal(in) || fusedType.count(in) || widened.count(res)) {
            tileOf[res] = operandTile(op, in); // loaded or computed in type
            break;
          }
        }
        Value out;
        for (auto [k, v] : llvm::enumerate(step->operands))
          if (!out && step->compute && reusable(i, op, v))
            out = ins[k]; // v's last reader: overwrite its tile
        if (!out)
          out = ctx.allocSbuf(opLoc, p, full ? n : 1, tileType(res));
        Ap outAp = ctx.tileAp(out);
        if (step->compute)
          step->compute(opLoc, ins, aps, out, outAp);
        else
          ctx.copyOnVector(opLoc, out, outAp, ins[0], aps[0]);
        tileOf[res] = {out, full};
        break;
      }
      case Role::reduceRow: {
        Value in = op->getOperand(0);
        RowTileValue t = operandTile(op, in);
        Value x = asFullTile(t, eltOf(in));
        nisa::AluOp alu = isa<trn::ReduceMaxOp>(op)   ? nisa::AluOp::max
                          : isa<trn::ReduceMinOp>(op) ? nisa::AluOp::min
                                                      : nisa::AluOp::add;
        BlockedReduction red(ctx, opLoc, alu, p, n,
                             reductionBlockCount(n, reductionBlockSize(alu)));
        red.add(x, n);
        Value r = red.finish();
        if (!eltOf(res).isF32()) {
          Value c = ctx.allocSbuf(opLoc, p, 1, eltOf(res));
          ctx.copyOnVector(opLoc, c, ctx.tileAp(c), r, ctx.tileAp(r, p, 1));
          r = c;
        }
        tileOf[res] = {r, false};
        break;
      }
      case Role::sumRows: {
        Value in = op->getOperand(0);
        RowTileValue t = operandTile(op, in);
        Type elt = cast<nisa::TileType>(t.tile.getType()).getElementType();
        SumAcc &acc = *llvm::find_if(accs, [&](SumAcc &a) { return a.op == op; });
        Value x = acc.width == 1 ? t.tile : asFullTile(t, elt);
        Value one = ones.lookup(elt);
        int64_t xFree = cast<nisa::TileType>(x.getType()).getFreeSize();
        addColumnSums(ctx, opLoc, acc.psum, x, xFree, /*c0=*/0, p, acc.width,
                      one, /*accumulate=*/!firstTask);
        break;
      }
      case Role::none:
        break;
      }
    }
    for (auto [i, v] : llvm::enumerate(outputs)) {
      RowTileValue t = tileOf.lookup(v);
      unsigned view = externals.size() + i;
      const HbmView &dst = outputViews[i];
      bool full = space.isFull(v);
      Value tile = full ? asFullTile(t, tileType(v)) : t.tile;
      int64_t f = full ? n : 1;
      int64_t rowStride = full ? dst.strides.back() : 1;
      ctx.dma(loc, roots[view],
              ctx.ap(task.offsets[view], {partStride(view), rowStride}, {p, f}),
              tile, ctx.tileAp(tile, p, f));
    }
    // The task's engines are chosen once the loops are unrolled
    // (EngineBalance.h); a task that cannot overlap the next ends with a
    // barrier.
    markEngineFree(mark.begin(), ctx.b.getInsertionPoint());
    if (serial)
      markEngineBarrier(mark.begin(), ctx.b.getInsertionPoint());
  };
  SmallVector<TileTask> tasks;
  auto collect = [&](const TileTask &task) { tasks.push_back(task); };
  if (kept.shape.size() == 1)
    forEachTile(kept, ctx.partitions(), /*maxFree=*/1, collect);
  else
    forEachPartitionRun(kept, ctx.partitions(), collect);
  SmallVector<Value> roots; // the buffer of each view of `kept`
  for (const External &e : externals)
    roots.push_back(ctx.views.find(e.value)->second.root);
  for (const HbmView &dst : outputViews)
    roots.push_back(dst.root);
  // The first task starts the sums over rows in PSUM (the others
  // accumulate) and loads the invariant tiles: it is emitted alone, the
  // others as loops where they repeat.
  if (!tasks.empty()) {
    emitTask(tasks.front(), roots);
    firstTask = false;
    ArrayRef<TileTask> rest = ArrayRef<TileTask>(tasks).drop_front();
    SmallVector<bool> hoistable;
    for (unsigned v = 0; v < walks.size(); ++v)
      hoistable.push_back(v < externals.size() && externals[v].invariant);
    emitTileNest(
        ctx.b, loc, nestTileTasks(rest, hoistable), roots,
        [&](int64_t t, ArrayRef<Value> roots) { emitTask(rest[t], roots); });
  }

  // The sums over rows: PSUM -> SBUF (with the cast) -> HBM.
  for (SumAcc &acc : accs) {
    Value res = acc.op->getResult(0);
    HbmView dst = ctx.destination(loc, res);
    ctx.views[res] = dst;
    storeColumnSums(ctx, loc, acc.psum, acc.width, dst.root, dst.offset,
                    dst.strides.empty() ? 1 : dst.strides[0], eltOf(res));
  }
  markEngineGroup(groupStart.begin(), ctx.b.getInsertionPoint(),
                  ctx.nextEngineGroup++);
}

FailureOr<bool> RowGroupLowering::run() {
  SmallVector<ElementwiseStep> ordered;
  for (Operation *op : group.ops) {
    if (role(op) != Role::elementwise)
      continue;
    FailureOr<ElementwiseStep> step = elementwiseStep(ctx, op);
    if (failed(step))
      return failure();
    ordered.push_back(std::move(*step));
  }
  // An fp32 step read only by the next member's instruction is folded into
  // it (a norm's x * rstd - mean * rstd chain, a loss's scaled exp).
  foldSteps(ctx, ordered, [&](Value v) {
    Operation *def = v.getDefiningOp();
    return def && members.count(def) && role(def) == Role::elementwise &&
           v.hasOneUse() && eltOf(v).isF32();
  });
  for (ElementwiseStep &step : ordered)
    steps.try_emplace(step.op, std::move(step));
  // Planning emits nothing (operand views derive without instructions).
  if (failed(plan()))
    return failure();
  SmallVector<HbmView> walks = keptViews();
  SmallVector<const HbmView *> ptrs;
  for (const HbmView &v : walks)
    ptrs.push_back(&v);
  if (unwalkable || !walkable(JointSpace::build(ptrs)) || !fits())
    return false;
  emit();
  return true;
}
} // namespace

/// The group's ops in the order the loop computes them: each add_scalar or
/// mul_scalar read by one op moves to just before that reader (a chain of
/// them stays together; every op still follows what it reads). Computed
/// early, its operand's tile could be overwritten in place before the
/// reader runs (a layer norm gradient's N * g * w, read by the subtraction
/// of sum(g * w) after g * w * xhat overwrote g * w), which keeps the pair
/// from being one tensor_scalar (NisaCanonicalize.cpp); beside its reader
/// it is (bf16 GPT backward 11083.1 -> 11028.1 us: one fp32 pass fewer per
/// row tile of each layer norm gradient).
static RowGroup scalarOpsBesideReaders(const RowGroup &group) {
  RowGroup ordered = group;
  SmallVector<Operation *> &ops = ordered.ops;
  for (size_t i = ops.size(); i-- > 0;) {
    Operation *op = ops[i];
    if (!isa<trn::AddScalarOp, trn::MulScalarOp>(op) || !op->hasOneUse())
      continue;
    auto reader = llvm::find(ops, *op->getUsers().begin());
    auto self = ops.begin() + i;
    if (reader == ops.end() || reader < self)
      continue;
    std::rotate(self, self + 1, reader); // op now just before its reader
  }
  return ordered;
}

LogicalResult trnc::tile::lowerRowGroup(
    LoweringContext &ctx, const RowGroup &group,
    function_ref<LogicalResult(Operation *)> lowerOne) {
  FailureOr<bool> lowered =
      RowGroupLowering(ctx, scalarOpsBesideReaders(group)).run();
  if (failed(lowered))
    return failure();
  if (*lowered) {
    // Aliases read outside derive from the stored values they alias.
    for (Operation *op : group.ops)
      if (isViewOp(op))
        ctx.resolveView(op->getResult(0));
    return success();
  }
  // Not one loop: each member on its own, in program order, here.
  for (Operation *op : group.ops)
    if (failed(lowerOne(op)))
      return failure();
  return success();
}
