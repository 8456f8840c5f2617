//===- EngineBalance.cpp - spread a group's instructions over the engines -===//
//
// The engines an instruction may run on (the ISA's rules, as the list
// scheduler states them) and the greedy placement by simulated busy time.
//
//===----------------------------------------------------------------------===//
#include "passes/Tile/EngineBalance.h"

#include "dialects/Nisa/NisaOps.h"
#include "dialects/Nisa/NisaToIsa.h"
#include "sim/CostModel.h"

#include "llvm/ADT/DenseSet.h"

#include <algorithm>

using namespace mlir;
using namespace trnc;
using namespace trnc::nisa;
using trnc::tile::EngineBalance;


double EngineBalance::costNs(Operation &op, unsigned engine) {
  isa::Instruction inst;
  if (!describeForCost(&op, inst) || isa::isDmaTransfer(inst.opcode) ||
      engine >= busyNs.size())
    return 0.0;
  inst.engine = static_cast<isa::Engine>(engine);
  uint64_t cycles = inst.opcode == isa::Opcode::Matmul
                        ? sim::matmulCycles(machine, inst)
                        : sim::vectorLikeCycles(machine, inst);
  return double(cycles) / sim::engineClockGHz(machine, inst.engine);
}

void EngineBalance::visit(Block::iterator from, Block::iterator to,
                          bool move) {
  // A predicated copy reads its destination, which the IR records only as
  // a write: the instruction writing that tile first stays on the copy's
  // engine, so program order on one engine keeps the two in order.
  llvm::DenseSet<Value> predicatedDsts;
  for (Operation &op : llvm::make_range(from, to))
    if (auto cp = dyn_cast<CopyPredicatedOp>(op))
      predicatedDsts.insert(cp.getDst());
  for (Operation &op : llvm::make_range(from, to)) {
    seen = &op;
    auto inst = dyn_cast<InstructionOpInterface>(op);
    if (!inst || op.getNumOperands() == 0)
      continue;
    unsigned own = static_cast<unsigned>(inst.getExecutionEngine());
    Value dst = op.getOperand(0);
    if (own >= freeAtNs.size()) {
      readyAtNs.erase(dst); // a load: its data's time is not modelled
      continue;
    }
    // Each engine runs its stream in order: the instruction starts when
    // its engine is free and its operands are written.
    double ready = 0.0;
    for (Value v : op.getOperands().drop_front())
      ready = std::max(ready, readyAtNs.lookup(v));
    auto endOn = [&](unsigned e) {
      return std::max(freeAtNs[e], ready) + costNs(op, e);
    };
    unsigned best = own;
    double bestEnd = endOn(own);
    bool movable = move && op.hasAttr("engine") && !predicatedDsts.contains(dst);
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
    busyNs[best] += costNs(op, best);
    freeAtNs[best] = bestEnd;
    readyAtNs[dst] = std::max(readyAtNs.lookup(dst), bestEnd);
  }
}

void EngineBalance::placeSince(OpBuilder &b, const EmitMark &mark) {
  if (seen && seen->getBlock() == mark.block && seen != mark.last)
    visit(std::next(Block::iterator(seen)), mark.begin(), /*move=*/false);
  place(mark.begin(), b.getInsertionPoint());
}

void EngineBalance::barrier() {
  double all = *std::max_element(freeAtNs.begin(), freeAtNs.end());
  freeAtNs.fill(all);
}
