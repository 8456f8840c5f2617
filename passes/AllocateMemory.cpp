//===- AllocateMemory.cpp - SBUF/PSUM address planning by liveness --------===//
//
// `trnc-allocate-memory`: gives every `nisa.alloc` a byte `address` inside
// each partition. A tile is live from the first to the last instruction that
// touches it (program order); two tiles whose ranges overlap never share
// bytes. Placement is first fit over the free gaps, but the search starts
// at a rotating cursor (the end of the previous placement) and wraps around:
// a just-freed slot is not handed straight to the next tile, so the DMA that
// fills tile i+1 need not wait for the compute still reading tile i (double
// buffering). PSUM tiles stay inside 2 KiB banks (one matmul accumulation
// group per bank); a tile bigger than a bank takes whole consecutive banks.
// When nothing fits, the error names the alloc and a note prints the memory
// map of every live buffer (the mlir-aie habit).
//
//===----------------------------------------------------------------------===//
#include "passes/Passes.h"

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

/// Byte alignment of every tile inside a partition: keeps tiles on SBUF
/// access granules and makes addresses easy to read in dumps.
constexpr int64_t kAlignment = 64;

int64_t alignUp(int64_t v, int64_t a) { return (v + a - 1) / a * a; }

/// One tile to place: its live range over instruction indices.
struct Tile {
  AllocOp op;
  int64_t first = -1, last = -1; // inclusive; -1 when unused
  int64_t size = 0;              // aligned bytes per partition
  int64_t address = -1;
};

/// The placed, still-live tiles of one memory space.
class Arena {
public:
  Arena(int64_t capacity, int64_t bank) : capacity(capacity), bank(bank) {}

  /// Drops tiles whose live range ended before instruction `now`.
  void expire(int64_t now) {
    llvm::erase_if(live, [&](Tile *t) { return t->last < now; });
  }

  /// Finds an address for `size` bytes; nullopt when no gap fits.
  std::optional<int64_t> place(int64_t size) {
    llvm::sort(live, [](Tile *a, Tile *b) { return a->address < b->address; });
    if (std::optional<int64_t> a = search(size, cursor))
      return a;
    return search(size, 0);
  }

  void insert(Tile *t) {
    live.push_back(t);
    cursor = t->address + t->size;
    if (cursor >= capacity)
      cursor = 0;
  }

  ArrayRef<Tile *> liveTiles() {
    llvm::sort(live, [](Tile *a, Tile *b) { return a->address < b->address; });
    return live;
  }
  int64_t getCapacity() const { return capacity; }

private:
  /// First fit at or after `from`: candidate addresses are `from` and the
  /// end of every live tile, each rounded up to a legal start.
  std::optional<int64_t> search(int64_t size, int64_t from) {
    auto tryAt = [&](int64_t addr) -> std::optional<int64_t> {
      addr = legalStart(alignUp(addr, kAlignment), size);
      if (addr < from || addr + size > capacity)
        return std::nullopt;
      for (Tile *t : live)
        if (addr < t->address + t->size && t->address < addr + size)
          return std::nullopt;
      return addr;
    };
    if (std::optional<int64_t> a = tryAt(from))
      return a;
    for (Tile *t : live)
      if (t->address + t->size >= from)
        if (std::optional<int64_t> a = tryAt(t->address + t->size))
          return a;
    return std::nullopt;
  }

  /// In banked memory (PSUM), a tile that fits a bank must not cross a bank
  /// boundary and a bigger one starts on a boundary.
  int64_t legalStart(int64_t addr, int64_t size) const {
    if (!bank)
      return addr;
    int64_t offset = addr % bank;
    if (size > bank ? offset != 0 : offset + size > bank)
      return alignUp(addr, bank);
    return addr;
  }

  int64_t capacity, bank;
  int64_t cursor = 0;
  SmallVector<Tile *> live;
};

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
  void reportOverflow(Tile &tile, Arena &arena, StringRef space);
};

void AllocatePass::reportOverflow(Tile &tile, Arena &arena, StringRef space) {
  InFlightDiagnostic diag =
      tile.op.emitOpError("does not fit in ")
      << space << ": needs " << tile.size << " bytes per partition at "
      << "instruction " << tile.first << ", " << arena.getCapacity()
      << " bytes per partition in total";
  Diagnostic &note = diag.attachNote(tile.op.getLoc());
  int64_t used = 0;
  for (Tile *t : arena.liveTiles())
    used += t->size;
  note << "memory map of " << space << " (" << used << " of "
       << arena.getCapacity() << " bytes per partition live):";
  for (Tile *t : arena.liveTiles()) {
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
  std::optional<MachineModel> model = lookupMachineModel(target);
  if (!model) {
    func.emitError("unknown target '") << target << "'";
    return signalPassFailure();
  }

  // Live ranges over the instruction order.
  SmallVector<Tile> tiles;
  llvm::DenseMap<Operation *, size_t> tileIndex;
  func.walk([&](AllocOp op) {
    tileIndex[op] = tiles.size();
    auto type = cast<TileType>(op.getType());
    tiles.push_back({op, -1, -1, alignUp(type.getPartitionBytes(), kAlignment)});
  });
  int64_t index = 0;
  func.walk([&](InstructionOpInterface inst) {
    for (Value v : inst->getOperands())
      if (auto alloc = v.getDefiningOp<AllocOp>()) {
        Tile &t = tiles[tileIndex.lookup(alloc)];
        if (t.first < 0)
          t.first = index;
        t.last = index;
      }
    ++index;
  });

  // Place in order of first use; ties keep program order (the tiles sit in
  // one array in program order, so comparing their addresses is stable).
  SmallVector<Tile *> order;
  for (Tile &t : tiles)
    if (t.first >= 0)
      order.push_back(&t);
  llvm::sort(order, [](Tile *a, Tile *b) {
    return a->first != b->first ? a->first < b->first : a < b;
  });

  Arena sbuf(model->sbufPartitionBytes, 0);
  Arena psum(model->psumPartitionBytes, model->psumBankBytes);
  for (Tile *t : order) {
    bool isPsum =
        cast<TileType>(t->op.getType()).getSpace() == MemorySpace::psum;
    Arena &arena = isPsum ? psum : sbuf;
    arena.expire(t->first);
    std::optional<int64_t> addr = arena.place(t->size);
    if (!addr)
      return reportOverflow(*t, arena, isPsum ? "PSUM" : "SBUF");
    t->address = *addr;
    arena.insert(t);
    LLVM_DEBUG(llvm::dbgs() << "tile " << t->op.getType() << " live "
                            << t->first << ".." << t->last << " at "
                            << t->address << "\n");
  }

  // Tiles no instruction touches still get a (harmless) address.
  Builder b(&getContext());
  for (Tile &t : tiles)
    t.op.setAddressAttr(b.getI64IntegerAttr(t.address < 0 ? 0 : t.address));
}

} // namespace
