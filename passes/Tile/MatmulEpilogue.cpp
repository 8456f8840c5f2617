//===- MatmulEpilogue.cpp - elementwise consumers of a matmul ------------===//
//
// A matmul's epilogue. Formation (epilogueMembers, over trn ops): scanning
// forward from the matmul like an elementwise group, an op is a candidate
// when it is elementwise over the epilogue's shape S (the [M, N] result or a
// reshape of it with the same last dim) and reads only the result,
// candidates, and values available before the matmul; the members are the
// candidates connected to an op reading the result (a GELU gradient's chain
// over the saved activation joins the product it is multiplied with). Ops
// are pure, so computing them at the matmul is legal.
// Planning (planMatmulEpilogue, in the tile lowering): the members' tile
// plan, the [M, N] views of their HBM inputs and outputs; LowerMatmul.cpp
// computes the plan on each output tile.
//
//===----------------------------------------------------------------------===//
#include "passes/Tile/GroupFormation.h"
#include "passes/Tile/MatmulEpilogue.h"

using namespace mlir;
using namespace trnc;
using namespace trnc::tile;

namespace {
ArrayRef<int64_t> shapeOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getShape();
}

int64_t product(ArrayRef<int64_t> s) {
  int64_t n = 1;
  for (int64_t d : s)
    n *= d;
  return n;
}
} // namespace

namespace {
/// The matmul's result and its row-major reshapes to [..., N].
llvm::DenseSet<Value> resultViewsOf(trn::MatmulOp mm) {
  Value c = mm.getResult();
  ArrayRef<int64_t> cShape = shapeOf(c);
  int64_t m = cShape[0], n = cShape[1];
  llvm::DenseSet<Value> views;
  SmallVector<Value> work{c};
  while (!work.empty()) {
    Value v = work.pop_back_val();
    views.insert(v);
    for (Operation *u : v.getUsers())
      if (auto r = dyn_cast<trn::ReshapeOp>(u)) {
        ArrayRef<int64_t> s = r.getType().getShape();
        if (!s.empty() && s.back() == n && product(s) == m * n)
          work.push_back(r.getResult());
      }
  }
  return views;
}
} // namespace

SmallVector<Operation *>
trnc::tile::epilogueMembers(trn::MatmulOp mm,
                            function_ref<bool(Operation *)> taken,
                            function_ref<bool(Value)> available) {
  ArrayRef<int64_t> cShape = shapeOf(mm.getResult());
  if (cShape.size() != 2)
    return {};
  int64_t m = cShape[0], n = cShape[1];
  llvm::DenseSet<Value> resultViews = resultViewsOf(mm);

  // Candidates: every later elementwise op of the epilogue's shape whose
  // operands are candidates, the result, or values available.
  llvm::SmallPtrSet<Operation *, 16> candidates;
  SmallVector<Operation *> order;
  SmallVector<int64_t> shape; // S, set by the first op reading the result
  constexpr int kLookahead = 256;
  int seen = 0;
  for (Operation *op = mm->getNextNode();
       op && !op->hasTrait<OpTrait::IsTerminator>() && seen < kLookahead;
       op = op->getNextNode(), ++seen) {
    if (!isGroupableElementwise(op) || taken(op))
      continue;
    ArrayRef<int64_t> s = shapeOf(op->getResult(0));
    bool readsResult = llvm::any_of(tileOperandsOf(op), [&](Value v) {
      return resultViews.contains(v) && shapeOf(v) == s;
    });
    if (shape.empty() && !readsResult)
      continue; // nothing before the first reader of the result joins
    if (!shape.empty() ? s != ArrayRef(shape)
                       : s.empty() || s.back() != n || product(s) != m * n)
      continue;
    bool ok = true;
    for (Value v : tileOperandsOf(op)) {
      Operation *def = v.getDefiningOp();
      if ((def && candidates.contains(def)) ||
          (resultViews.contains(v) && shapeOf(v) == s))
        continue;
      ok &= !resultViews.contains(v) && available(v);
    }
    if (!ok)
      continue;
    if (shape.empty())
      shape.assign(s.begin(), s.end());
    candidates.insert(op);
    order.push_back(op);
  }
  // Members: the candidates connected (through def-use among candidates) to
  // an op reading the result; the rest would only ride along.
  llvm::SmallPtrSet<Operation *, 16> members;
  SmallVector<Operation *> frontier;
  for (Operation *op : order)
    if (llvm::any_of(tileOperandsOf(op),
                     [&](Value v) { return resultViews.contains(v); }))
      frontier.push_back(op);
  while (!frontier.empty()) {
    Operation *op = frontier.pop_back_val();
    if (!members.insert(op).second)
      continue;
    for (Value v : op->getOperands())
      if (Operation *def = v.getDefiningOp(); def && candidates.contains(def))
        frontier.push_back(def);
    for (Operation *u : op->getUsers())
      if (candidates.contains(u))
        frontier.push_back(u);
  }
  SmallVector<Operation *> ops;
  for (Operation *op : order)
    if (members.contains(op))
      ops.push_back(op);
  return ops;
}

std::optional<MatmulEpilogue>
trnc::tile::planMatmulEpilogue(LoweringContext &ctx, trn::MatmulOp mm,
                               ArrayRef<Operation *> ops) {
  ArrayRef<int64_t> cShape = shapeOf(mm.getResult());
  if (cShape.size() != 2 || ops.empty())
    return std::nullopt;
  SmallVector<int64_t> mn{cShape[0], cShape[1]};
  MatmulEpilogue epi;
  epi.resultViews = resultViewsOf(mm);
  llvm::SmallPtrSet<Operation *, 16> members(ops.begin(), ops.end());
  FailureOr<ElementwiseGroupPlan> plan = ElementwiseGroupPlan::build(ctx, ops);
  if (failed(plan))
    return std::nullopt;
  epi.plan = std::move(*plan);
  // Its tiles live beside the matmul's resident block and streamed tiles
  // (MatmulBlocking keeps half a partition for those): an epilogue may
  // take an eighth.
  if (epi.plan.liveTiles() * int64_t(ctx.machine.matmulMaxN) * 4 >
      int64_t(ctx.machine.sbufPartitionBytes / 8))
    return std::nullopt;
  // Inputs read through an [M, N] walk, and outputs written where their
  // layout allows one (always, for scratch; a function result with other
  // strides keeps the ops apart).
  for (auto [v, type] : epi.plan.sources)
    if (!epi.resultViews.contains(v) &&
        (!ctx.resolveView(v) || !reshapeView(ctx.views.find(v)->second, mn)))
      return std::nullopt;
  for (Value r : epi.plan.outputs) {
    auto dest = ctx.resultDest.find(r);
    if (dest != ctx.resultDest.end() && !reshapeView(dest->second, mn))
      return std::nullopt;
  }
  for (auto [v, type] : epi.plan.sources)
    epi.sourceViews.push_back(epi.resultViews.contains(v)
                                  ? HbmView{}
                                  : *reshapeView(ctx.views.find(v)->second, mn));
  for (Value r : epi.plan.outputs) {
    HbmView dst = ctx.destination(mm.getLoc(), r);
    ctx.views[r] = dst;
    epi.outputViews.push_back(*reshapeView(dst, mn));
  }
  // The result itself is stored when read by anything else.
  for (Value v : epi.resultViews)
    for (Operation *u : v.getUsers())
      if (!members.contains(u) &&
          !(isa<trn::ReshapeOp>(u) && epi.resultViews.contains(u->getResult(0))))
        epi.storesResult = true;
  return epi;
}
