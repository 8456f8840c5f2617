//===- EngineBalance.h - spread a group's instructions over the engines -*- C++ -*-===//
//
// Vector, Scalar and GpSimd can each run some of the same instructions
// (copies, fills, tensor_tensor, tensor_scalar; Scalar's ALU only
// multiplies and adds, GpSimd never touches PSUM). A fusion group lowered
// with every ALU op on Vector leaves the other two idle; EngineBalance
// places each such instruction, in program order, on the engine where it
// would end first, modelling what the simulator does with the program:
// each engine runs its stream in order, an instruction starts once its
// engine is free and its operand tiles are written, and takes the
// simulator's own cost (sim/CostModel.h, as the list scheduler asks it).
// In order, an engine given both the first and the last op of a tile's
// chain would serialise the tiles; this model sees that and does not.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "machine/MachineModel.h"

#include "mlir/IR/Block.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"

#include <array>

namespace trnc::tile {

/// Where the builder's next instruction goes, so that the instructions
/// emitted between two marks can be placed: `begin` is the first op after
/// the mark (the builder inserts before its insertion point).
struct EmitMark {
  explicit EmitMark(mlir::OpBuilder &b)
      : block(b.getInsertionBlock()),
        last(b.getInsertionPoint() == block->begin()
                 ? nullptr
                 : &*std::prev(b.getInsertionPoint())) {}
  mlir::Block *block;
  mlir::Operation *last; // the op before the insertion point (null: none)
  mlir::Block::iterator begin() const {
    return last ? std::next(mlir::Block::iterator(last)) : block->begin();
  }
};

class EngineBalance {
public:
  explicit EngineBalance(const MachineModel &machine) : machine(machine) {}

  /// Places the instructions of [from, to) (one block) in order: an
  /// instruction with a choice goes to the engine where it would end first;
  /// every instruction advances its engine's clock.
  void place(mlir::Block::iterator from, mlir::Block::iterator to) {
    visit(from, to, /*move=*/true);
  }

  /// Places the instructions emitted since `mark`, after adding the time of
  /// those emitted between the previous call's and `mark` (the group's
  /// loads, a matmul's PSUM copies) to their own engines.
  void placeSince(mlir::OpBuilder &b, const EmitMark &mark);

  /// The next instructions start only after every engine is free: the
  /// group's next task cannot overlap this one (its tiles do not fit SBUF
  /// beside this one's), so its chain's latency, not the engines' sum of
  /// work, is what a choice must shorten.
  void barrier();

  /// Busy time (ns) given to each engine so far, by isa::Engine.
  const std::array<double, 4> &busy() const { return busyNs; }

private:
  /// Adds `op`'s time on `engine`; returns it (0 for DMA and unknowns).
  double costNs(mlir::Operation &op, unsigned engine);
  void visit(mlir::Block::iterator from, mlir::Block::iterator to, bool move);

  const MachineModel &machine;
  std::array<double, 4> busyNs{};
  /// The in-order model: when each engine is free, and when each tile's
  /// last write ends.
  std::array<double, 4> freeAtNs{};
  llvm::DenseMap<mlir::Value, double> readyAtNs;
  mlir::Operation *seen = nullptr; // the last op placed or accounted
};

} // namespace trnc::tile
