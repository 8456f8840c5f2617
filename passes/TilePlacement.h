//===- TilePlacement.h - SBUF/PSUM addresses by liveness ---------*- C++ -*-===//
//
// The placement algorithm of `trnc-allocate-memory`, as a function the list
// scheduler can also run (to check that a new instruction order still fits
// before committing to it). A tile is live from the first to the last
// instruction that touches it, in program order; tiles whose ranges overlap
// never share bytes. First fit from a rotating cursor (a just-freed slot is
// not handed straight to the next tile, which keeps double buffering free of
// false dependencies); PSUM tiles stay inside 2 KiB banks. A long-lived SBUF
// tile (live over more than kLongLived instructions: a per-channel
// statistic kept to the end of a graph) is placed from the top of SBUF
// down instead, so that dozens of them do not end up scattered by the
// cursor over the whole partition, leaving no gap for a large tile.
// When that leaves no gap for some tile (an order that interleaves large
// tiles of different lifetimes), placement starts over with best fit: each
// tile in the smallest gap that holds it, which packs tighter at the cost of
// reusing a just-freed slot sooner.
//
// The list scheduler places tiles as it schedules (an arena per memory,
// time-aware): a tile written where earlier tiles lived must wait for their
// last access, so of the gaps that fit, it takes (in cursor order) one whose
// bytes were all freed before its first instruction starts, else the one
// freed earliest. The cursor alone keeps reuse far apart in instructions,
// not in time: in a reordered stream a tile freed many instructions ago may
// still be read by a slow engine.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "dialects/Nisa/NisaOps.h"
#include "machine/MachineModel.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/MathExtras.h"

#include <optional>
#include <vector>

namespace trnc {

/// The share of each memory a schedule may fill with live tiles (the list
/// scheduler's bound on program order's live tiles plus the ones it hoists;
/// the rest is slack for fragmentation: tiles are placed as they go live,
/// not packed, and at 0.85 the GPT step's backward leaves its frontier
/// without a gap). The tile lowering sizes big groups' tiles against it.
constexpr double kPlaceableShare = 0.75;

/// Byte alignment of every tile inside a partition.
constexpr int64_t kTileAlignment = 64;
/// Bytes per partition a tile of `type` takes once placed (aligned).
inline int64_t placedBytes(nisa::TileType type) {
  return int64_t(llvm::alignTo(type.getPartitionBytes(), kTileAlignment));
}
/// A live range longer than this many instructions is placed top-down.
constexpr int64_t kLongLived = 1024;

/// The largest value over ranges of slots after "raise to at least v" range
/// updates (a segment tree whose tags are never pushed down).
class SlotMax {
public:
  void reset(int64_t slots);
  void raise(int64_t begin, int64_t end, double v) { raise(1, 0, n, begin, end, v); }
  double max(int64_t begin, int64_t end) const { return max(1, 0, n, begin, end); }

private:
  void raise(size_t node, int64_t lo, int64_t hi, int64_t begin, int64_t end, double v);
  double max(size_t node, int64_t lo, int64_t hi, int64_t begin, int64_t end) const;
  int64_t n = 0;
  std::vector<double> best, tag; // subtree max incl. tags; own tag
};

/// One tile to place: its live range over instruction indices.
struct PlacedTile {
  mutable nisa::AllocOp op; // mutable: MLIR op handles have non-const accessors
  int64_t first = -1, last = -1; // inclusive; -1 when unused
  int64_t size = 0;              // aligned bytes per partition
  int64_t address = -1;
};

/// The placed, still-live tiles of one memory space.
class TileArena {
public:
  TileArena(int64_t capacity, int64_t bank) : capacity(capacity), bank(bank) {}

  /// Forgets every tile; `bestFit` or `timeAware` choose the placement
  /// policy (else first fit from the cursor).
  void reset(bool bestFit, bool timeAware = false);

  /// Drops tiles whose live range ended before instruction `now`.
  void expire(int64_t now);
  /// Drops tile `t`, whose last access ends at `freedNs` (time-aware).
  void release(PlacedTile *t, double freedNs);
  /// Undoes a trial insert(t) made when the cursor was at `cursorBefore`.
  void retract(PlacedTile *t, int64_t cursorBefore);
  int64_t getCursor() const { return cursor; }
  /// When the bytes [addr, addr + size) were last freed (time-aware).
  double freedBy(int64_t addr, int64_t size) const;
  /// Finds an address for `size` bytes; nullopt when no gap fits.
  /// `fromTop`: the highest gap that fits (unbanked memory only). `readyNs`:
  /// when the tile's first instruction starts (time-aware placement).
  std::optional<int64_t> place(int64_t size, bool fromTop = false,
                               double readyNs = 0);
  /// Whether some gap holds `size` bytes (any policy would place them).
  bool hasRoom(int64_t size) const;
  /// The bytes live tiles hold, and the largest gap between them (for
  /// diagnostics: a tile that finds no gap in a memory with room to spare
  /// met fragmentation).
  int64_t liveBytes() const;
  int64_t largestGap() const;
  /// `fromTop`: placed by place(size, true), which leaves the cursor alone.
  void insert(PlacedTile *t, bool fromTop = false);
  /// Live tiles by address.
  llvm::ArrayRef<PlacedTile *> liveTiles() const { return live; }
  int64_t getCapacity() const { return capacity; }
  /// `addr`, or the next address a tile of `size` may start at (PSUM: a
  /// tile that fits a bank stays inside one; a bigger one starts a bank).
  int64_t legalStart(int64_t addr, int64_t size) const;

private:
  std::optional<int64_t> search(int64_t size, int64_t from);
  std::optional<int64_t> searchDown(int64_t size);
  std::optional<int64_t> searchBest(int64_t size);
  std::optional<int64_t> searchCoolest(int64_t size, double readyNs);

  int64_t capacity, bank;
  bool bestFit = false;
  int64_t cursor = 0;
  llvm::SmallVector<PlacedTile *> live; // by address
  bool timeAware = false;
  SlotMax freedAt; // per 64-byte slot: when its last tile's last access ends
};

/// The placement of every nisa.alloc of one function.
class TilePlacement {
public:
  TilePlacement(const MachineModel &model)
      : sbuf(model.sbufPartitionBytes, 0),
        psum(model.psumPartitionBytes, model.psumBankBytes) {}

  /// Places every tile of `func`; false when one does not fit (then
  /// `failed()` is that tile and `arenaOf(*failed())` its memory map).
  /// `bestFit`: whether best fit may follow a failed first fit.
  bool run(mlir::func::FuncOp func, bool bestFit = true);
  /// Checks the addresses the tiles of `func` already carry (placed by the
  /// list scheduler): every used tile has one, inside its memory, legal for
  /// PSUM banks, and no two tiles live at once share a byte. On failure,
  /// `failed()` is the first offending tile and `conflict()` the tile it
  /// overlaps (null when it lacks an address or leaves the memory).
  bool check(mlir::func::FuncOp func);
  const PlacedTile *conflict() const { return conflictTile; }

  llvm::ArrayRef<PlacedTile> tiles() const { return placed; }
  PlacedTile *failed() const { return failedTile; }
  TileArena &arenaOf(const PlacedTile &t);
  static bool isPsum(const PlacedTile &t);

private:
  /// Live ranges of every tile of `func`, and the used ones by first use.
  llvm::SmallVector<PlacedTile *> collect(mlir::func::FuncOp func);
  /// One placement of the tiles in `order` under a policy.
  bool placeAll(llvm::ArrayRef<PlacedTile *> order, bool bestFit);

  llvm::SmallVector<PlacedTile> placed;
  TileArena sbuf, psum;
  PlacedTile *failedTile = nullptr;
  const PlacedTile *conflictTile = nullptr;
};

} // namespace trnc
