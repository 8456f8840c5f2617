//===- TilePlacement.cpp - SBUF/PSUM addresses by liveness ----------------===//
//
// See TilePlacement.h.
//
//===----------------------------------------------------------------------===//
#include "passes/TilePlacement.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace trnc;
using namespace trnc::nisa;

static int64_t alignUp(int64_t v, int64_t a) { return (v + a - 1) / a * a; }

void TileArena::expire(int64_t now) {
  llvm::erase_if(live, [&](PlacedTile *t) { return t->last < now; });
}

void TileArena::reset(bool policy) {
  live.clear();
  cursor = 0;
  bestFit = policy;
}

std::optional<int64_t> TileArena::place(int64_t size, bool fromTop) {
  llvm::sort(live, [](PlacedTile *a, PlacedTile *b) {
    return a->address < b->address;
  });
  if (fromTop && !bank)
    if (std::optional<int64_t> a = searchDown(size))
      return a;
  if (bestFit)
    return searchBest(size);
  if (std::optional<int64_t> a = search(size, cursor))
    return a;
  return search(size, 0);
}

void TileArena::insert(PlacedTile *t, bool fromTop) {
  live.push_back(t);
  if (fromTop)
    return;
  cursor = t->address + t->size;
  if (cursor >= capacity)
    cursor = 0;
}

ArrayRef<PlacedTile *> TileArena::liveTiles() {
  llvm::sort(live, [](PlacedTile *a, PlacedTile *b) {
    return a->address < b->address;
  });
  return live;
}

/// First fit at or after `from`: candidate addresses are `from` and the end
/// of every live tile, each rounded up to a legal start.
std::optional<int64_t> TileArena::search(int64_t size, int64_t from) {
  auto tryAt = [&](int64_t addr) -> std::optional<int64_t> {
    addr = legalStart(alignUp(addr, kTileAlignment), size);
    if (addr < from || addr + size > capacity)
      return std::nullopt;
    for (PlacedTile *t : live)
      if (addr < t->address + t->size && t->address < addr + size)
        return std::nullopt;
    return addr;
  };
  if (std::optional<int64_t> a = tryAt(from))
    return a;
  for (PlacedTile *t : live)
    if (t->address + t->size >= from)
      if (std::optional<int64_t> a = tryAt(t->address + t->size))
        return a;
  return std::nullopt;
}

/// The tightest fit: of the gaps between the live tiles (sorted by address)
/// that hold the tile at their first legal start, the one leaving the least
/// room. One pass over the live tiles.
std::optional<int64_t> TileArena::searchBest(int64_t size) {
  std::optional<int64_t> best;
  int64_t bestSlack = 0;
  auto tryGap = [&](int64_t begin, int64_t end) {
    int64_t addr = legalStart(alignUp(begin, kTileAlignment), size);
    if (addr + size > end)
      return;
    if (!best || end - addr - size < bestSlack) {
      best = addr;
      bestSlack = end - addr - size;
    }
  };
  int64_t end = 0;
  for (PlacedTile *t : live) {
    tryGap(end, t->address);
    end = std::max(end, t->address + t->size);
  }
  tryGap(end, capacity);
  return best;
}

/// The highest fit: candidate ends are the capacity and the start of every
/// live tile, each start rounded down to the alignment.
std::optional<int64_t> TileArena::searchDown(int64_t size) {
  auto fits = [&](int64_t addr) {
    if (addr < 0)
      return false;
    for (PlacedTile *t : live)
      if (addr < t->address + t->size && t->address < addr + size)
        return false;
    return true;
  };
  std::optional<int64_t> best;
  auto consider = [&](int64_t end) {
    int64_t addr = (end - size) / kTileAlignment * kTileAlignment;
    if ((!best || addr > *best) && fits(addr))
      best = addr;
  };
  consider(capacity);
  for (PlacedTile *t : live)
    consider(t->address);
  return best;
}

/// In banked memory (PSUM), a tile that fits a bank must not cross a bank
/// boundary and a bigger one starts on a boundary.
int64_t TileArena::legalStart(int64_t addr, int64_t size) const {
  if (!bank)
    return addr;
  int64_t offset = addr % bank;
  if (size > bank ? offset != 0 : offset + size > bank)
    return alignUp(addr, bank);
  return addr;
}

bool TilePlacement::isPsum(const PlacedTile &t) {
  return cast<TileType>(t.op.getType()).getSpace() == MemorySpace::psum;
}

TileArena &TilePlacement::arenaOf(const PlacedTile &t) {
  return isPsum(t) ? psum : sbuf;
}

bool TilePlacement::run(func::FuncOp func, bool bestFit) {
  // Live ranges over the instruction order.
  llvm::DenseMap<Operation *, size_t> tileIndex;
  func.walk([&](AllocOp op) {
    tileIndex[op] = placed.size();
    auto type = cast<TileType>(op.getType());
    placed.push_back(
        {op, -1, -1, alignUp(type.getPartitionBytes(), kTileAlignment)});
  });
  int64_t index = 0;
  func.walk([&](InstructionOpInterface inst) {
    for (Value v : inst->getOperands())
      if (auto alloc = v.getDefiningOp<AllocOp>()) {
        PlacedTile &t = placed[tileIndex.lookup(alloc)];
        if (t.first < 0)
          t.first = index;
        t.last = index;
      }
    ++index;
  });

  // Place in order of first use; ties keep program order (the tiles sit in
  // one array in program order, so comparing their addresses is stable).
  SmallVector<PlacedTile *> order;
  for (PlacedTile &t : placed)
    if (t.first >= 0)
      order.push_back(&t);
  llvm::sort(order, [](PlacedTile *a, PlacedTile *b) {
    return a->first != b->first ? a->first < b->first : a < b;
  });
  return placeAll(order, /*bestFit=*/false) ||
         (bestFit && placeAll(order, /*bestFit=*/true));
}

bool TilePlacement::placeAll(ArrayRef<PlacedTile *> order, bool bestFit) {
  sbuf.reset(bestFit);
  psum.reset(bestFit);
  for (PlacedTile *t : order) {
    TileArena &arena = arenaOf(*t);
    arena.expire(t->first);
    bool longLived = t->last - t->first > kLongLived;
    std::optional<int64_t> addr = arena.place(t->size, longLived);
    if (!addr) {
      failedTile = t;
      return false;
    }
    t->address = *addr;
    arena.insert(t, longLived);
  }
  failedTile = nullptr;
  return true;
}
