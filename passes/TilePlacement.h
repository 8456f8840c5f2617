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
//===----------------------------------------------------------------------===//
#pragma once

#include "dialects/Nisa/NisaOps.h"
#include "machine/MachineModel.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/SmallVector.h"

#include <optional>

namespace trnc {

/// Byte alignment of every tile inside a partition.
constexpr int64_t kTileAlignment = 64;
/// A live range longer than this many instructions is placed top-down.
constexpr int64_t kLongLived = 1024;

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

  /// Forgets every tile; `bestFit` chooses the placement policy.
  void reset(bool bestFit);

  /// Drops tiles whose live range ended before instruction `now`.
  void expire(int64_t now);
  /// Finds an address for `size` bytes; nullopt when no gap fits.
  /// `fromTop`: the highest gap that fits (unbanked memory only).
  std::optional<int64_t> place(int64_t size, bool fromTop = false);
  /// `fromTop`: placed by place(size, true), which leaves the cursor alone.
  void insert(PlacedTile *t, bool fromTop = false);
  /// Live tiles by address.
  llvm::ArrayRef<PlacedTile *> liveTiles();
  int64_t getCapacity() const { return capacity; }

private:
  std::optional<int64_t> search(int64_t size, int64_t from);
  std::optional<int64_t> searchDown(int64_t size);
  std::optional<int64_t> searchBest(int64_t size);
  int64_t legalStart(int64_t addr, int64_t size) const;

  int64_t capacity, bank;
  bool bestFit = false;
  int64_t cursor = 0;
  llvm::SmallVector<PlacedTile *> live;
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

  llvm::ArrayRef<PlacedTile> tiles() const { return placed; }
  PlacedTile *failed() const { return failedTile; }
  TileArena &arenaOf(const PlacedTile &t);
  static bool isPsum(const PlacedTile &t);

private:
  /// One placement of the tiles in `order` under a policy.
  bool placeAll(llvm::ArrayRef<PlacedTile *> order, bool bestFit);

  llvm::SmallVector<PlacedTile> placed;
  TileArena sbuf, psum;
  PlacedTile *failedTile = nullptr;
};

} // namespace trnc
