//===- AllocateMemory.cpp - SBUF/PSUM address planning by liveness --------===//
//
// `trnc-allocate-memory`: gives every `nisa.alloc` a byte `address` inside
// each partition. A tile is live from the first to the last instruction that
// touches it (program order); two tiles whose ranges overlap never share
// bytes. Placement is first fit over the free gaps, but the search starts
// at a rotating cursor (the end of the previous placement) and wraps around:
// a just-freed slot is not handed straight to the next tile, so the DMA that
// fills tile i+1 need not wait for the compute still reading tile i (double
// buffering). A tile live over more than kLongLived instructions is placed
// from the top down instead (TilePlacement.h). PSUM tiles stay inside 2 KiB
// banks (one matmul accumulation group per bank); a tile bigger than a bank
// takes whole consecutive banks.
// When an SBUF tile finds no room, a tile live across that point but idle
// there is spilled: stored to HBM scratch and loaded back into a fresh tile
// before its next access (SpillTiles.h), and placement starts over. When
// nothing can be spilled (every live tile is an operand of that
// instruction, or the tile is in PSUM), the error names the alloc and a note
// prints the memory map of every live buffer (the mlir-aie habit). The placement itself is
// TilePlacement.cpp, shared with the list scheduler.
//
// When every tile an instruction touches already has an address (the list
// scheduler placed them as it ordered the stream, and timed the order with
// them), those addresses are checked instead (inside the memory, legal in
// PSUM banks, no two tiles live at once sharing a byte) and kept; an
// invalid one is an error naming both tiles.
//
//===----------------------------------------------------------------------===//
#include "passes/Passes.h"
#include "passes/TargetModel.h"
#include "passes/SpillTiles.h"
#include "passes/TilePlacement.h"

#include "machine/MachineModel.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/Debug.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>

#define DEBUG_TYPE "trnc-allocate-memory"

namespace trnc {
#define GEN_PASS_DEF_ALLOCATE
#include "passes/Passes.h.inc"
} // namespace trnc

using namespace mlir;
using namespace trnc;
using namespace trnc::nisa;

namespace {

/// Spills per function before an overflow is reported (each one re-runs
/// the placement).
constexpr unsigned kMaxSpills = 4096;

/// "file:line:col" of the first file location inside `loc`.
std::string describeLocation(Location loc) {
  std::string text;
  loc->walk([&](Location l) {
    if (auto file = dyn_cast<FileLineColLoc>(l)) {
      text = (file.getFilename().getValue() + ":" + Twine(file.getLine()) + ":" +
              Twine(file.getColumn()))
                 .str();
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  if (text.empty()) {
    llvm::raw_string_ostream os(text);
    os << loc;
  }
  return text;
}

struct AllocatePass : public trnc::impl::AllocateBase<AllocatePass> {
  using AllocateBase::AllocateBase;

  void runOnOperation() override;

private:
  void reportOverflow(PlacedTile tile, TileArena &arena,
                      StringRef space);
};

void AllocatePass::reportOverflow(PlacedTile tile, TileArena &arena,
                                  StringRef space) {
  InFlightDiagnostic diag =
      tile.op.emitOpError("does not fit in ")
      << space << ": needs " << tile.size << " bytes per partition at "
      << "instruction " << tile.first << ", " << arena.getCapacity()
      << " bytes per partition in total";
  Diagnostic &note = diag.attachNote(tile.op.getLoc());
  int64_t used = 0;
  for (PlacedTile *t : arena.liveTiles())
    used += t->size;
  note << "memory map of " << space << " (" << used << " of "
       << arena.getCapacity() << " bytes per partition live):";
  for (PlacedTile *t : arena.liveTiles()) {
    std::string line;
    llvm::raw_string_ostream os(line);
    os << "\n  [" << t->address << ", " << t->address + t->size << ") "
       << t->size << " B  " << t->op.getType() << " live " << t->first << ".."
       << t->last << " at " << describeLocation(t->op.getLoc());
    note << os.str();
  }
  signalPassFailure();
}

void AllocatePass::runOnOperation() {
  func::FuncOp func = getOperation();
  std::optional<MachineModel> model = targetModel(getOperation(), target);
  if (!model || failed(requireUnrolled(func, getArgument())))
    return signalPassFailure();
  TilePlacement placement(*model);
  bool placed = true;
  func.walk([&](InstructionOpInterface inst) {
    for (Value v : inst->getOperands())
      if (auto alloc = v.getDefiningOp<AllocOp>(); alloc && !alloc.getAddress())
        placed = false;
  });
  Builder b(&getContext());
  if (placed) {
    if (placement.check(func)) {
      func.walk([&](AllocOp op) { // unused tiles: any address
        if (!op.getAddress())
          op.setAddressAttr(b.getI64IntegerAttr(0));
      });
      return;
    }
    const PlacedTile &t = *placement.failed();
    InFlightDiagnostic diag = t.op.emitOpError("address ")
                              << *t.op.getAddress() << " is invalid: ";
    if (const PlacedTile *other = placement.conflict())
      diag << "it overlaps the tile at address " << *other->op.getAddress()
           << " (live " << other->first << ".." << other->last
           << ") while both are live (" << t.first << ".." << t.last << ")";
    else
      diag << "the tile (" << t.size << " bytes per partition) leaves "
           << (TilePlacement::isPsum(t) ? "PSUM" : "SBUF")
           << " or crosses a PSUM bank";
    if (const PlacedTile *other = placement.conflict())
      diag.attachNote(other->op.getLoc()) << "the other tile";
    return signalPassFailure();
  }
  // When an SBUF tile finds no room, a tile live across its first
  // instruction but idle there goes through HBM (SpillTiles.h), and the
  // placement starts over.
  unsigned spills = 0;
  while (!placement.run(func)) {
    const PlacedTile &t = *placement.failed();
    if (TilePlacement::isPsum(t) || spills == kMaxSpills ||
        !spillAcross(func, t.first))
      return reportOverflow(t, placement.arenaOf(t),
                            TilePlacement::isPsum(t) ? "PSUM" : "SBUF");
    ++spills;
  }
  LLVM_DEBUG(if (spills) llvm::dbgs()
             << func.getName() << ": " << spills << " tiles spilled\n");
  // Tiles no instruction touches still get a (harmless) address.
  for (const PlacedTile &t : placement.tiles()) {
    LLVM_DEBUG(llvm::dbgs() << "tile " << t.op.getType() << " live " << t.first
                            << ".." << t.last << " at " << t.address << "\n");
    AllocOp op = t.op;
    op.setAddressAttr(b.getI64IntegerAttr(t.address < 0 ? 0 : t.address));
  }
}

} // namespace
