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

void SlotMax::reset(int64_t slots) {
  n = slots;
  best.assign(4 * std::max<int64_t>(n, 1), 0);
  tag.assign(best.size(), 0);
}

void SlotMax::raise(size_t node, int64_t lo, int64_t hi, int64_t begin,
                    int64_t end, double v) {
  if (end <= lo || hi <= begin)
    return;
  best[node] = std::max(best[node], v);
  if (begin <= lo && hi <= end) {
    tag[node] = std::max(tag[node], v);
    return;
  }
  int64_t mid = (lo + hi) / 2;
  raise(2 * node, lo, mid, begin, end, v);
  raise(2 * node + 1, mid, hi, begin, end, v);
}

double SlotMax::max(size_t node, int64_t lo, int64_t hi, int64_t begin,
                    int64_t end) const {
  if (end <= lo || hi <= begin)
    return 0;
  if (begin <= lo && hi <= end)
    return best[node];
  int64_t mid = (lo + hi) / 2;
  return std::max({tag[node], max(2 * node, lo, mid, begin, end),
                   max(2 * node + 1, mid, hi, begin, end)});
}

void TileArena::expire(int64_t now) {
  llvm::erase_if(live, [&](PlacedTile *t) { return t->last < now; });
}

void TileArena::retract(PlacedTile *t, int64_t cursorBefore) {
  llvm::erase(live, t);
  cursor = cursorBefore;
}

void TileArena::release(PlacedTile *t, double freedNs) {
  llvm::erase(live, t);
  freedAt.raise(t->address / kTileAlignment,
                (t->address + t->size) / kTileAlignment, freedNs);
}

double TileArena::freedBy(int64_t addr, int64_t size) const {
  return freedAt.max(addr / kTileAlignment,
                     (addr + size + kTileAlignment - 1) / kTileAlignment);
}

void TileArena::reset(bool policy, bool aware) {
  live.clear();
  cursor = 0;
  bestFit = policy;
  timeAware = aware;
  if (timeAware)
    freedAt.reset(capacity / kTileAlignment);
}

std::optional<int64_t> TileArena::place(int64_t size, bool fromTop,
                                        double readyNs) {
  if (fromTop && !bank)
    if (std::optional<int64_t> a = searchDown(size))
      return a;
  if (bestFit)
    return searchBest(size);
  if (timeAware)
    return searchCoolest(size, readyNs);
  if (std::optional<int64_t> a = search(size, cursor))
    return a;
  return search(size, 0);
}

void TileArena::insert(PlacedTile *t, bool fromTop) {
  live.insert(llvm::lower_bound(live, t,
                                [](PlacedTile *a, PlacedTile *b) {
                                  return a->address < b->address;
                                }),
              t);
  if (fromTop)
    return;
  cursor = t->address + t->size;
  if (cursor >= capacity)
    cursor = 0;
}

bool TileArena::hasRoom(int64_t size) const {
  int64_t end = 0;
  auto holds = [&](int64_t begin, int64_t gapEnd) {
    return legalStart(alignUp(begin, kTileAlignment), size) + size <= gapEnd;
  };
  for (PlacedTile *t : live) {
    if (holds(end, t->address))
      return true;
    end = std::max(end, t->address + t->size);
  }
  return holds(end, capacity);
}

int64_t TileArena::liveBytes() const {
  int64_t bytes = 0;
  for (PlacedTile *t : live)
    bytes += t->size;
  return bytes;
}

int64_t TileArena::largestGap() const {
  int64_t end = 0, gap = 0;
  for (PlacedTile *t : live) {
    gap = std::max(gap, t->address - end);
    end = std::max(end, t->address + t->size);
  }
  return std::max(gap, capacity - end);
}

/// First fit at or after `from`: the lowest legal start in the first gap
/// between live tiles (sorted by address) that holds the tile. O(live).
std::optional<int64_t> TileArena::search(int64_t size, int64_t from) {
  int64_t end = 0;
  auto tryGap = [&](int64_t begin, int64_t gapEnd) -> std::optional<int64_t> {
    if (gapEnd <= from)
      return std::nullopt;
    int64_t addr =
        legalStart(alignUp(std::max(begin, from), kTileAlignment), size);
    if (addr + size <= gapEnd)
      return addr;
    return std::nullopt;
  };
  for (PlacedTile *t : live) {
    if (std::optional<int64_t> a = tryGap(end, t->address))
      return a;
    end = std::max(end, t->address + t->size);
  }
  return tryGap(end, capacity);
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

/// Time-aware fit: candidates are each gap's lowest and highest legal
/// start; of those that fit, the first in cursor order whose bytes were all
/// freed by `readyNs`, else the one whose bytes were freed earliest.
std::optional<int64_t> TileArena::searchCoolest(int64_t size, double readyNs) {
  std::optional<int64_t> best;
  double bestWait = 0;
  int64_t bestDistance = 0;
  auto consider = [&](int64_t addr, int64_t gapBegin, int64_t gapEnd) {
    if (addr < gapBegin || addr + size > gapEnd ||
        legalStart(addr, size) != addr)
      return;
    double wait = std::max(0.0, freedBy(addr, size) - readyNs);
    int64_t distance = (addr - cursor + capacity) % capacity;
    if (!best || wait < bestWait ||
        (wait == bestWait && distance < bestDistance)) {
      best = addr;
      bestWait = wait;
      bestDistance = distance;
    }
  };
  auto tryGap = [&](int64_t begin, int64_t end) {
    consider(legalStart(alignUp(begin, kTileAlignment), size), begin, end);
    int64_t high = (end - size) / kTileAlignment * kTileAlignment;
    if (bank && size <= bank) // the highest start inside one bank
      high = std::min(high, (end - 1) / bank * bank + bank - size);
    consider(high, begin, end);
    if (cursor > begin && cursor < end) // first fit's own choice
      consider(legalStart(alignUp(cursor, kTileAlignment), size), begin, end);
  };
  int64_t end = 0;
  for (PlacedTile *t : live) {
    tryGap(end, t->address);
    end = std::max(end, t->address + t->size);
  }
  tryGap(end, capacity);
  return best;
}

/// The highest fit: the highest aligned start in the highest gap between
/// live tiles (sorted by address) that holds the tile. O(live).
std::optional<int64_t> TileArena::searchDown(int64_t size) {
  int64_t gapEnd = capacity;
  for (size_t i = live.size() + 1; i-- > 0;) {
    int64_t begin = i == 0 ? 0 : live[i - 1]->address + live[i - 1]->size;
    int64_t addr = (gapEnd - size) / kTileAlignment * kTileAlignment;
    if (addr >= begin && addr >= 0)
      return addr;
    if (i > 0)
      gapEnd = std::min(gapEnd, live[i - 1]->address);
  }
  return std::nullopt;
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

SmallVector<PlacedTile *> TilePlacement::collect(func::FuncOp func) {
  // Live ranges over the instruction order.
  placed.clear();
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
  return order;
}

bool TilePlacement::run(func::FuncOp func, bool bestFit) {
  SmallVector<PlacedTile *> order = collect(func);
  return placeAll(order, /*bestFit=*/false) ||
         (bestFit && placeAll(order, /*bestFit=*/true));
}

bool TilePlacement::check(func::FuncOp func) {
  SmallVector<PlacedTile *> order = collect(func);
  failedTile = nullptr;
  conflictTile = nullptr;
  for (PlacedTile *t : order) {
    std::optional<uint64_t> address = t->op.getAddress();
    if (!address) {
      failedTile = t;
      return false;
    }
    t->address = *address;
  }
  sbuf.reset(false);
  psum.reset(false);
  for (PlacedTile *t : order) {
    TileArena &arena = arenaOf(*t);
    arena.expire(t->first);
    if (t->address + t->size > arena.getCapacity() ||
        arena.legalStart(t->address, t->size) != t->address) {
      failedTile = t;
      return false;
    }
    for (PlacedTile *other : arena.liveTiles())
      if (t->address < other->address + other->size &&
          other->address < t->address + t->size) {
        failedTile = t;
        conflictTile = other;
        return false;
      }
    arena.insert(t);
  }
  return true;
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
