//===- EngineBalance.cpp - spread a group's instructions over the engines -===//
//
// The marks the lowerings set, and the greedy placement of each marked
// group's instructions by the simulator's costs, once the loops are unrolled.
//
//===----------------------------------------------------------------------===//
#include "passes/Tile/EngineBalance.h"

#include "dialects/Nisa/NisaOps.h"
#include "dialects/Nisa/NisaToIsa.h"
#include "sim/CostModel.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

#include <algorithm>
#include <array>
#include <memory>

using namespace mlir;
using namespace trnc;
using namespace trnc::nisa;
using namespace trnc::tile;

namespace {

/// One fusion group's account: each engine runs its stream in order, an
/// instruction starts once its engine is free and its operand tiles are
/// written, and takes the simulator's own cost.
class EngineBalance {
public:
  EngineBalance(const MachineModel &machine, const DenseSet<Value> &pinned)
      : machine(machine), pinned(pinned) {}

  /// Accounts `op` on its engine, or (`move`) first places it where it
  /// would end first.
  void visit(Operation &op, bool move);

  /// The next instructions start only after every engine is free: the
  /// group's next task cannot overlap this one (its tiles do not fit SBUF
  /// beside this one's), so its chain's latency, not the engines' sum of
  /// work, is what a choice must shorten.
  void barrier() {
    double all = *std::max_element(freeAtNs.begin(), freeAtNs.end());
    freeAtNs.fill(all);
  }

private:
  /// `op`'s time on `engine` (0 for DMA and unknowns).
  double costNs(Operation &op, unsigned engine);

  const MachineModel &machine;
  /// Destinations of predicated copies: their writers stay where they are.
  const DenseSet<Value> &pinned;
  /// When each engine is free, and when each tile's last write ends.
  std::array<double, 4> freeAtNs{};
  DenseMap<Value, double> readyAtNs;
};

double EngineBalance::costNs(Operation &op, unsigned engine) {
  isa::Instruction inst;
  if (!describeForCost(&op, inst) || isa::isDmaTransfer(inst.opcode) ||
      engine >= freeAtNs.size())
    return 0.0;
  inst.engine = static_cast<isa::Engine>(engine);
  uint64_t cycles = inst.opcode == isa::Opcode::Matmul
                        ? sim::matmulCycles(machine, inst)
                        : sim::vectorLikeCycles(machine, inst);
  return double(cycles) / sim::engineClockGHz(machine, inst.engine);
}

void EngineBalance::visit(Operation &op, bool move) {
  auto inst = dyn_cast<InstructionOpInterface>(op);
  if (!inst || op.getNumOperands() == 0)
    return;
  unsigned own = static_cast<unsigned>(inst.getExecutionEngine());
  Value dst = op.getOperand(0);
  if (own >= freeAtNs.size()) {
    readyAtNs.erase(dst); // a load: its data's time is not modelled
    return;
  }
  // Each engine runs its stream in order: the instruction starts when its
  // engine is free and its operands are written.
  double ready = 0.0;
  for (Value v : op.getOperands().drop_front())
    ready = std::max(ready, readyAtNs.lookup(v));
  auto endOn = [&](unsigned e) {
    return std::max(freeAtNs[e], ready) + costNs(op, e);
  };
  unsigned best = own;
  double bestEnd = endOn(own);
  bool movable = move && op.hasAttr("engine") && !pinned.contains(dst);
  if (movable)
    for (Engine alternative : equivalentEngines(&op)) {
      unsigned e = static_cast<unsigned>(alternative);
      double end = endOn(e);
      if (end < bestEnd) {
        best = e;
        bestEnd = end;
      }
    }
  if (best != own)
    op.setAttr("engine",
               EngineAttr::get(op.getContext(), static_cast<Engine>(best)));
  freeAtNs[best] = bestEnd;
  readyAtNs[dst] = std::max(readyAtNs.lookup(dst), bestEnd);
}

} // namespace

void trnc::tile::placeAlternatingCopies(Block &block) {
  DenseMap<int64_t, bool> nextOnVector; // per stream; Scalar first
  for (Operation &op : block) {
    auto stream = op.getAttrOfType<IntegerAttr>(kEngineAlternateAttr);
    if (!stream)
      continue;
    op.removeAttr(kEngineAlternateAttr);
    bool &vector = nextOnVector[stream.getInt()];
    op.setAttr("engine", EngineAttr::get(op.getContext(), vector
                                                              ? Engine::vector
                                                              : Engine::scalar));
    vector = !vector;
  }
}

static void markRange(Block::iterator from, Block::iterator to,
                      function_ref<void(Operation *)> mark) {
  for (Operation &op : llvm::make_range(from, to))
    op.walk([&](InstructionOpInterface inst) { mark(inst); });
}

void trnc::tile::markEngineGroup(Block::iterator from, Block::iterator to,
                                 int64_t id) {
  markRange(from, to, [&](Operation *op) {
    op->setAttr(kEngineGroupAttr,
                IntegerAttr::get(IntegerType::get(op->getContext(), 64), id));
  });
}

void trnc::tile::markEngineFree(Block::iterator from, Block::iterator to) {
  markRange(from, to, [](Operation *op) {
    op->setAttr(kEngineFreeAttr, UnitAttr::get(op->getContext()));
  });
}

void trnc::tile::markEngineBarrier(Block::iterator from, Block::iterator to) {
  for (Operation &op : llvm::reverse(llvm::make_range(from, to)))
    if (llvm::isa<InstructionOpInterface>(op)) {
      op.setAttr(kEngineBarrierAttr, UnitAttr::get(op.getContext()));
      return;
    }
}

void trnc::tile::placeEngineGroups(Block &block, const MachineModel &machine) {
  // Per group: its account, once its first free instruction has come (the
  // lowering's account began with the first tile's computation).
  DenseMap<int64_t, std::unique_ptr<EngineBalance>> groups;
  // A predicated copy reads its destination, which the IR records only as
  // a write: the instruction writing that tile first stays on the copy's
  // engine, so program order on one engine keeps the two in order.
  DenseSet<Value> predicated;
  for (Operation &op : block)
    if (auto cp = dyn_cast<CopyPredicatedOp>(op))
      predicated.insert(cp.getDst());
  for (Operation &op : block) {
    auto id = op.getAttrOfType<IntegerAttr>(kEngineGroupAttr);
    if (!id)
      continue;
    bool free = op.hasAttr(kEngineFreeAttr), barrier = op.hasAttr(kEngineBarrierAttr);
    op.removeAttr(kEngineGroupAttr);
    op.removeAttr(kEngineFreeAttr);
    op.removeAttr(kEngineBarrierAttr);
    std::unique_ptr<EngineBalance> &balance = groups[id.getInt()];
    if (!balance) {
      if (!free)
        continue;
      balance = std::make_unique<EngineBalance>(machine, predicated);
    }
    balance->visit(op, free);
    if (barrier)
      balance->barrier();
  }
}
