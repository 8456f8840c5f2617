//===- MatmulEpilogue.cpp - elementwise consumers of a matmul ------------===//
//
// Formation of a matmul's epilogue (MatmulEpilogue.h): scanning forward
// from the matmul like an elementwise group, an op is a candidate when it is
// elementwise over the epilogue's shape S (the [M, N] result or a reshape of
// it with the same last dim) and reads only the result, candidates, and
// values already lowered whose view is expressible as [M, N]; the members
// are the candidates connected to an op reading the result (a GELU
// gradient's chain over the saved activation joins the product it is
// multiplied with). Ops are pure, so computing them at the matmul is legal.
// LowerMatmul.cpp computes the plan on each output tile.
//
//===----------------------------------------------------------------------===//
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

std::optional<MatmulEpilogue>
trnc::tile::formMatmulEpilogue(LoweringContext &ctx, trn::MatmulOp mm,
                               function_ref<bool(Operation *)> taken) {
  Value c = mm.getResult();
  ArrayRef<int64_t> cShape = shapeOf(c);
  if (cShape.size() != 2)
    return std::nullopt;
  int64_t m = cShape[0], n = cShape[1];
  SmallVector<int64_t> mn{m, n};

  MatmulEpilogue epi;
  // The result and its row-major reshapes to [..., N].
  SmallVector<Value> work{c};
  while (!work.empty()) {
    Value v = work.pop_back_val();
    epi.resultViews.insert(v);
    for (Operation *u : v.getUsers())
      if (auto r = dyn_cast<trn::ReshapeOp>(u)) {
        ArrayRef<int64_t> s = r.getType().getShape();
        if (!s.empty() && s.back() == n && product(s) == m * n)
          work.push_back(r.getResult());
      }
  }

  // Candidates: every later elementwise op of the epilogue's shape whose
  // operands are candidates, the result, or values already lowered.
  llvm::SmallPtrSet<Operation *, 16> candidates;
  SmallVector<Operation *> order;
  SmallVector<int64_t> shape; // S, set by the first op reading the result
  constexpr int kLookahead = 256;
  int seen = 0;
  for (Operation *op = mm->getNextNode();
       op && !op->hasTrait<OpTrait::IsTerminator>() && seen < kLookahead;
       op = op->getNextNode(), ++seen) {
    if (!isGroupableElementwise(op) || taken(op) ||
        ctx.rowGrouped.contains(op))
      continue;
    ArrayRef<int64_t> s = shapeOf(op->getResult(0));
    bool readsResult = llvm::any_of(tileOperandsOf(op), [&](Value v) {
      return epi.resultViews.contains(v) && shapeOf(v) == s;
    });
    if (shape.empty() && !readsResult)
      continue; // nothing before the first reader of the result joins
    if (!shape.empty() ? s != ArrayRef(shape)
                       : s.empty() || s.back() != n || product(s) != m * n)
      continue;
    bool available = true;
    for (Value v : tileOperandsOf(op)) {
      Operation *def = v.getDefiningOp();
      if ((def && candidates.contains(def)) ||
          (epi.resultViews.contains(v) && shapeOf(v) == s))
        continue;
      available &= !epi.resultViews.contains(v) && ctx.resolveView(v) &&
                   reshapeView(ctx.views.find(v)->second, mn).has_value();
    }
    if (!available)
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
                     [&](Value v) { return epi.resultViews.contains(v); }))
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
  for (Operation *op : order)
    if (members.contains(op))
      epi.ops.push_back(op);
  if (epi.ops.empty())
    return std::nullopt;

  FailureOr<ElementwiseGroupPlan> plan = ElementwiseGroupPlan::build(ctx, epi.ops);
  if (failed(plan))
    return std::nullopt;
  epi.plan = std::move(*plan);
  // Its tiles live beside the matmul's resident block and streamed tiles
  // (MatmulBlocking keeps half a partition for those): an epilogue may
  // take an eighth.
  if (epi.plan.liveTiles() * int64_t(ctx.machine.matmulMaxN) * 4 >
      int64_t(ctx.machine.sbufPartitionBytes / 8))
    return std::nullopt;
  // Outputs written where their layout allows an [M, N] walk (always, for
  // scratch; a function result with other strides keeps the ops apart).
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
