//===- FormFusionGroups.cpp - the trnc-form-fusion-groups pass ------------===//
//
// Wraps the trn ops one tile loop computes in `trn.fusion_group` regions.
// The function is walked in program order, as the tile lowering then lowers
// it; an op is "done" once it sits at its final place (alone, or inside a
// group). At each op not done yet:
//   - the last member of a row group (formRowGroups, formed over the whole
//     body first) closes that group: its members move into a region there,
//     and the views of members met before it move after it;
//   - a matmul takes its epilogue (epilogueMembers) into a region at the
//     matmul;
//   - an elementwise op starts an elementwise group (elementwiseGroup) at
//     its place, into which later ops of its shape move.
// A group may read a value computed after its place when that value is a
// view of a done value (the view op moves up: views cost nothing) or, for a
// group larger than a partition, a small elementwise producer (an
// optimizer's per-step scalars, a per-row statistic), which forms its own
// group just before. Every trn op is pure, so these moves are legal when
// operands stay above their readers, which "done" guarantees.
//
//===----------------------------------------------------------------------===//
#include "passes/Passes.h"
#include "passes/TargetModel.h"
#include "passes/Tile/ElementwiseSteps.h"
#include "passes/Tile/GroupFormation.h"

#include "dialects/Trn/TrnOps.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"

namespace trnc {
#define GEN_PASS_DEF_FORMFUSIONGROUPS
#include "passes/Passes.h.inc"
} // namespace trnc

using namespace mlir;
using namespace trnc;
using namespace trnc::tile;

namespace {

class GroupFormer {
public:
  GroupFormer(Block &body, const MachineModel &machine)
      : partitions(machine.numPartitions),
        rowGroups(formRowGroups(body, machine)) {
    sinkLateReaders(rowGroups);
    for (const RowGroup &g : rowGroups) {
      rowMember.insert(g.ops.begin(), g.ops.end());
      rowGroupAt[g.point()] = &g;
    }
  }

  void run(Block &body) {
    SmallVector<Operation *> ops;
    for (Operation &op : body.without_terminator())
      ops.push_back(&op);
    for (Operation *op : ops) {
      if (auto it = rowGroupAt.find(op); it != rowGroupAt.end()) {
        formRows(*it->second);
        continue;
      }
      if (!rowMember.contains(op))
        form(op, op);
    }
  }

private:
  bool taken(Operation *op) {
    return done.contains(op) || rowMember.contains(op);
  }

  /// `op` stays (or moves) right before `before`, alone.
  void place(Operation *op, Operation *before) {
    if (op != before)
      op->moveBefore(before);
    done.insert(op);
  }

  /// Whether `v` is computed before `before`, moving the view ops it is
  /// built from there when their source is.
  bool resolve(Value v, Operation *before) {
    Operation *def = v.getDefiningOp();
    if (!def || done.contains(def))
      return true;
    if (!isViewOp(def) || rowMember.contains(def) ||
        !resolve(def->getOperand(0), before))
      return false;
    place(def, before);
    return true;
  }

  /// resolve(), or (when `limit` > 0) forms the producer of `v` (of at most
  /// `limit` elements: a view or elementwise op) and what it needs right
  /// before `before`.
  bool available(Value v, int64_t limit, Operation *before) {
    if (resolve(v, before))
      return true;
    Operation *def = v.getDefiningOp();
    if (limit <= 0 || !def || taken(def))
      return false;
    SmallVector<Value> ins;
    if (isViewOp(def))
      ins.push_back(def->getOperand(0));
    else if (isElementwiseOp(def) && !isImmediateOnly(def) &&
             cast<RankedTensorType>(v.getType()).getNumElements() <= limit)
      ins = tileOperandsOf(def);
    else
      return false;
    for (Value in : ins) {
      bool ok = available(in, limit, before);
      if (done.contains(def)) // it joined the group of its operand
        return resolve(v, before);
      if (!ok)
        return false;
    }
    form(def, before);
    return resolve(v, before);
  }

  /// Forms the group `op` starts (or places it alone) before `before`.
  void form(Operation *op, Operation *before) {
    if (done.contains(op))
      return;
    if (isViewOp(op)) {
      if (!resolve(op->getResult(0), before))
        deferredViews.push_back(op); // a view of a row group member
      return;
    }
    if (auto mm = dyn_cast<trn::MatmulOp>(op)) {
      SmallVector<Operation *> epilogue = epilogueMembers(
          mm, [&](Operation *o) { return taken(o); },
          [&](Value v) { return resolve(v, before); });
      if (epilogue.empty())
        return place(op, before);
      // The reshapes of the result the epilogue reads come along.
      llvm::SetVector<Operation *> views;
      for (Operation *m : epilogue)
        for (Value v : m->getOperands())
          for (auto r = v.getDefiningOp<trn::ReshapeOp>(); r && !done.contains(r);
               r = r.getInput().getDefiningOp<trn::ReshapeOp>())
            views.insert(r);
      SmallVector<Operation *> members{op};
      SmallVector<Operation *> sortedViews(views.begin(), views.end());
      llvm::sort(sortedViews, [](Operation *a, Operation *b) {
        return a->isBeforeInBlock(b);
      });
      members.append(sortedViews);
      members.append(epilogue);
      wrap("matmul", members, before);
      return;
    }
    if (isElementwiseOp(op) && !isImmediateOnly(op)) {
      SmallVector<Operation *> group = elementwiseGroup(
          op, partitions, [&](Operation *o) { return taken(o); },
          [&](Value v, int64_t limit) { return available(v, limit, before); });
      if (group.size() == 1)
        return place(op, before);
      wrap("elementwise", group, before);
      return;
    }
    place(op, before);
  }

  void formRows(const RowGroup &g) {
    trn::FusionGroupOp group = wrap("rows", g.ops, g.point(), g.fullShape);
    // Views of members read after the group (the lowering derived them
    // once the group was stored) move after it.
    Operation *last = group;
    SmallVector<Operation *> pending = std::move(deferredViews);
    deferredViews.clear();
    for (Operation *v : pending) {
      if (!resolve(v->getOperand(0), last->getNextNode())) {
        deferredViews.push_back(v);
        continue;
      }
      v->moveAfter(last);
      done.insert(v);
      last = v;
    }
  }

  /// Places the producers of `v` not done yet (and not `members`) before
  /// `before`.
  void hoist(Value v, Operation *before,
             const llvm::SmallPtrSetImpl<Operation *> &members) {
    Operation *def = v.getDefiningOp();
    if (!def || done.contains(def) || members.contains(def))
      return;
    for (Value in : def->getOperands())
      hoist(in, before, members);
    place(def, before);
  }

  /// Moves `ops` (in this order) into a new fusion group before `before`;
  /// their results read outside become the group's results.
  trn::FusionGroupOp wrap(StringRef kind, ArrayRef<Operation *> ops,
                          Operation *before,
                          ArrayRef<int64_t> rowSpace = {}) {
    llvm::SmallPtrSet<Operation *, 16> set(ops.begin(), ops.end());
    // Operands not read as tiles (a fill read as an immediate, through its
    // broadcast or cast) were not asked for: they move up too.
    for (Operation *op : ops)
      for (Value v : op->getOperands())
        hoist(v, before, set);
    SmallVector<Value> yields;
    for (Operation *op : ops)
      for (Value r : op->getResults())
        if (llvm::any_of(r.getUsers(),
                         [&](Operation *u) { return !set.contains(u); }))
          yields.push_back(r);
    OpBuilder b(before);
    auto group = b.create<trn::FusionGroupOp>(
        ops.front()->getLoc(), ValueRange(yields).getTypes(),
        b.getStringAttr(kind),
        rowSpace.empty() ? DenseI64ArrayAttr() : b.getDenseI64ArrayAttr(rowSpace));
    Block *block = new Block;
    group.getBody().push_back(block);
    for (Operation *op : ops) {
      op->moveBefore(block, block->end());
      done.insert(op);
    }
    b.setInsertionPointToEnd(block);
    b.create<trn::YieldOp>(ops.back()->getLoc(), yields);
    for (auto [i, v] : llvm::enumerate(yields))
      v.replaceUsesWithIf(group.getResult(i), [&](OpOperand &use) {
        return use.getOwner()->getParentOp() != group;
      });
    done.insert(group);
    return group;
  }

  int64_t partitions;
  SmallVector<RowGroup> rowGroups;
  llvm::DenseMap<Operation *, const RowGroup *> rowGroupAt;
  llvm::DenseSet<Operation *> rowMember;
  llvm::DenseSet<Operation *> done;
  SmallVector<Operation *> deferredViews;
};

struct FormFusionGroupsPass
    : public trnc::impl::FormFusionGroupsBase<FormFusionGroupsPass> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal())
      return;
    std::optional<MachineModel> machine = targetModel(func, target);
    if (!machine)
      return signalPassFailure();
    if (!func.getBody().hasOneBlock()) {
      func.emitOpError("must have a single block");
      return signalPassFailure();
    }
    Block &body = func.getBody().front();
    if (!body.getOps<trn::FusionGroupOp>().empty())
      return; // formed already
    GroupFormer(body, *machine).run(body);
  }
};

} // namespace
