//===- DeferredProducts.cpp - weight gradients the scheduler may run later ===//
//
// See DeferredProducts.h.
//
//===----------------------------------------------------------------------===//
#include "passes/Tile/DeferredProducts.h"
#include "passes/Tile/LoweringContext.h"

#include "dialects/Nisa/NisaOps.h"
#include "dialects/Trn/TrnOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;
using namespace trnc;

namespace {

/// Whether every reader of `v` is the return or a view or cast whose value
/// is again read only by views, casts and the return; those are added to
/// `chain`.
bool reachesOnlyResults(Value v, llvm::SetVector<Operation *> &chain) {
  return llvm::all_of(v.getUsers(), [&](Operation *user) {
    if (isa<func::ReturnOp>(user))
      return true;
    if (!(tile::isViewOp(user) || isa<trn::ConvertOp>(user)) ||
        !reachesOnlyResults(user->getResult(0), chain))
      return false;
    chain.insert(user);
    return true;
  });
}

/// The matmul a top-level op computes: itself, or a matmul fusion group's.
trn::MatmulOp productOf(Operation *op) {
  if (auto mm = dyn_cast<trn::MatmulOp>(op))
    return mm;
  if (auto group = dyn_cast<trn::FusionGroupOp>(op))
    if (group.getKind() == "matmul")
      return dyn_cast<trn::MatmulOp>(group.members().front());
  return {};
}

/// A sum over the rows (a bias gradient: the output gradient summed over
/// the tokens), lowered as its own loop.
bool isRowSum(Operation *op) {
  auto sum = dyn_cast<trn::ReduceSumOp>(op);
  return sum && sum.getDims().size() == 1 && sum.getDims()[0] == 0 &&
         cast<RankedTensorType>(sum.getInput().getType()).getRank() == 2;
}

bool isProduct(Operation *op) {
  return productOf(op) ||
         isa<trn::Conv2dOp, trn::AttentionOp, trn::AttentionGradOp>(op);
}

} // namespace

tile::Deferrals tile::planDeferrals(Block &body) {
  Deferrals plan;
  Operation *end = body.getTerminator();
  for (Operation &op : body.without_terminator()) {
    llvm::SetVector<Operation *> chain;
    if ((!productOf(&op) && !isRowSum(&op)) || op.getNumResults() == 0 ||
        !llvm::all_of(op.getResults(),
                      [&](Value v) { return reachesOnlyResults(v, chain); }) ||
        llvm::any_of(chain, [&](Operation *view) {
          return view->getBlock() != &body; // inside a group: not its own op
        }))
      continue;
    int64_t id = int64_t(plan.products.size());
    plan.products[&op] = id;
    // Its views and casts move with it: lowered, a cast or a reshape
    // strides cannot express reads the product back from HBM.
    for (Operation *view : chain)
      plan.chain[view] = id;
  }
  // A function with no other product (an inference graph's lone matmul)
  // has nothing to move them past.
  bool dataGradient = llvm::any_of(body.without_terminator(), [&](Operation &op) {
    return isProduct(&op) && !plan.products.count(&op);
  });
  if (!dataGradient) {
    plan.products.clear();
    plan.chain.clear();
    return plan;
  }
  for (auto [op, id] : plan.products) {
    Operation *next = op->getNextNode();
    while (next != end && (!isProduct(next) || plan.products.count(next)))
      next = next->getNextNode();
    if (next != end && next->getNextNode() != end)
      plan.anchors[next->getNextNode()].push_back(id);
  }
  for (auto &[op, ids] : plan.anchors)
    llvm::sort(ids);
  return plan;
}

static void forEachInstruction(Block::iterator from, Block::iterator to,
                               function_ref<WalkResult(Operation *)> fn) {
  for (Operation &op : llvm::make_range(from, to))
    if (op.walk([&](nisa::InstructionOpInterface inst) {
              return fn(inst);
            }).wasInterrupted())
      return;
}

void tile::markDeferred(Block::iterator from, Block::iterator to, int64_t id,
                        function_ref<bool(Operation *)> shared) {
  forEachInstruction(from, to, [&](Operation *op) {
    if (!shared(op))
      op->setAttr(kDeferUntilAttr,
                  Builder(op->getContext()).getI64IntegerAttr(id));
    return WalkResult::advance();
  });
}

bool tile::markAnchor(Block::iterator from, Block::iterator to,
                      ArrayRef<int64_t> ids) {
  bool marked = false;
  forEachInstruction(from, to, [&](Operation *op) {
    op->setAttr(kDeferAnchorAttr,
                Builder(op->getContext()).getDenseI64ArrayAttr(ids));
    marked = true;
    return WalkResult::interrupt();
  });
  return marked;
}

void tile::handOverAnchor(Operation *op) {
  auto ids = op->getAttrOfType<DenseI64ArrayAttr>(kDeferAnchorAttr);
  if (!ids)
    return;
  op->removeAttr(kDeferAnchorAttr);
  // The next instruction in program order: after `op` in its block (or in
  // a loop after it), else after the loop holding it.
  for (Operation *at = op; at && !isa<func::FuncOp>(at); at = at->getParentOp()) {
    for (Operation *next = at->getNextNode(); next; next = next->getNextNode()) {
      Operation *found = nullptr;
      next->walk([&](nisa::InstructionOpInterface inst) {
        found = inst;
        return WalkResult::interrupt();
      });
      if (!found)
        continue;
      SmallVector<int64_t> merged(ids.asArrayRef());
      if (auto own = found->getAttrOfType<DenseI64ArrayAttr>(kDeferAnchorAttr))
        llvm::append_range(merged, own.asArrayRef());
      llvm::sort(merged);
      found->setAttr(kDeferAnchorAttr,
                     Builder(op->getContext()).getDenseI64ArrayAttr(merged));
      return;
    }
  }
}
