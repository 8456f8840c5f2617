//===- EngineBalance.h - spread a group's instructions over the engines -*- C++ -*-===//
//
// Vector, Scalar and GpSimd can each run some of the same instructions
// (copies, fills, tensor_tensor, tensor_scalar; Scalar's ALU only
// multiplies and adds, GpSimd never touches PSUM). A fusion group lowered
// with every ALU op on Vector leaves the other two idle; EngineBalance
// places each such instruction, in program order, on the engine where it
// would end first. The lowerings only mark their groups' instructions (a
// loop body is one iteration: its engines cannot be chosen per tile there);
// the `unroll` phase places them once the loops are unrolled
// (placeEngineGroups), modelling what the simulator does with the program:
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

namespace trnc::tile {

/// Where the builder's next instruction goes, so that the instructions
/// emitted between two marks can be marked: `begin` is the first op after
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

/// What a lowering marks on the instructions it emits, for the `unroll`
/// phase to place them on engines once the tile loops are unrolled
/// (placeEngineGroups): every instruction of a fusion group carries the
/// group's id; those whose engine is free to choose (a group's computation
/// on its tiles) are also marked free; after an instruction marked barrier
/// (the end of a row group's task that cannot overlap the next), the
/// group's next instructions start from idle engines.
constexpr llvm::StringLiteral kEngineGroupAttr = "trnc.engine_group";
constexpr llvm::StringLiteral kEngineFreeAttr = "trnc.engine_free";
constexpr llvm::StringLiteral kEngineBarrierAttr = "trnc.engine_barrier";
/// A PSUM -> SBUF copy of a matmul's or an attention's that alternates
/// between Scalar and Vector with the other copies of its stream (the
/// attribute's value; LoweringContext::copyAlternating), so that neither
/// engine limits the drain: the `unroll` phase gives a stream's copies
/// Scalar, Vector, Scalar, ... in program order. A loop body, emitted once,
/// cannot alternate from one iteration to the next; unrolled, it does, as
/// a tile-by-tile emission would have.
constexpr llvm::StringLiteral kEngineAlternateAttr = "trnc.engine_alternate";

/// Marks every instruction in [from, to) (and in the bodies of tile loops
/// there) as one of group `id`.
void markEngineGroup(mlir::Block::iterator from, mlir::Block::iterator to,
                     int64_t id);
/// Marks every instruction in [from, to) free to move between engines.
void markEngineFree(mlir::Block::iterator from, mlir::Block::iterator to);
/// Marks the last instruction of [from, to) a barrier (none: no mark).
void markEngineBarrier(mlir::Block::iterator from, mlir::Block::iterator to);

/// Gives every copy of `block` marked alternating (straight-line: the
/// loops unrolled) its engine: per stream, Scalar first, then Vector, then
/// Scalar..., in program order. Drops the marks.
void placeAlternatingCopies(mlir::Block &block);

/// Places the marked instructions of `block` (straight-line: the loops
/// unrolled) group by group, in program order, as each group's lowering
/// would have placed them tile after tile: a group's account starts at its
/// first free instruction, free instructions go where they would end
/// first, the others only advance their engine's clock. Drops the marks.
void placeEngineGroups(mlir::Block &block, const MachineModel &machine);

} // namespace trnc::tile
