//===- Footprint.h - the bytes an instruction operand touches ----*- C++ -*-===//
//
// Shared by the passes that order instructions: the list scheduler (before
// allocation: a tile is its own resource, bytes relative to its start) and
// semaphore scheduling (after allocation: all tiles of a memory space share
// one address space, bytes at the tile's address).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "dialects/Nisa/NisaOps.h"

#include "mlir/Support/LogicalResult.h"

#include <utility>
#include <vector>

namespace trnc {

/// The memory an access touches. On chip: a space, a partition range and a
/// byte range inside each partition (conservative: the pattern's extent).
/// HBM: the buffer and an element range; in TileBytes::Allocated mode a
/// scratch buffer with an arena offset (trnc-pack-scratch) is a byte range
/// of the one arena they all share, so buffers sharing bytes conflict.
struct Footprint {
  const void *resource; // HBM: the memref or the scratch arena; on chip:
                        // the tile, or nullptr
  int space;            // MemorySpace for tiles, 0 for HBM
  int64_t partBegin, partEnd;
  int64_t begin, end; // half-open
  bool isWrite;
  /// The write of an idempotent dma_scatter: every such write stores equal
  /// bytes, so two of them do not conflict.
  bool idempotent = false;

  bool overlaps(const Footprint &o) const {
    return resource == o.resource && space == o.space &&
           partBegin < o.partEnd && o.partBegin < partEnd && begin < o.end &&
           o.begin < end;
  }
  /// A hazard: overlapping bytes, at least one side writes (and not two
  /// idempotent writes).
  bool conflicts(const Footprint &o) const {
    return (isWrite || o.isWrite) && !(idempotent && o.idempotent) &&
           overlaps(o);
  }
};

/// How tile (and scratch) footprints are placed.
enum class TileBytes {
  /// Relative to the tile (the resource is the tile value); no address needed.
  Relative,
  /// At the tile's allocated address (resource nullptr: one address space
  /// per memory space); fails with a diagnostic on a tile without address.
  /// Scratch with an arena offset is placed there too.
  Allocated,
};

/// The footprint of `access`, an operand of `op`.
mlir::FailureOr<Footprint> footprintOf(mlir::Operation *op,
                                       const nisa::Access &access,
                                       TileBytes mode);

/// Whether `access` (a tile operand) touches every byte of the box its
/// footprint `f` spans: false for a strided pattern with gaps (a column of
/// ones every 65 elements), whose box covers bytes it never writes. Only a
/// write that fills its box may stand for all older writes of the bytes a
/// later read takes from inside it.
bool fillsFootprint(const nisa::Access &access, const Footprint &f);

/// The element runs [begin, end) an HBM access pattern touches, rows x runs
/// (isa/StridedRuns.h, at most isa::kMaxHbmRuns; not included here, its
/// namespace `isa` would hide llvm::isa in files using namespace trnc):
/// finer than the footprint's [begin, end), and what the simulator's race
/// checker sees, so the LNC=2 split's barrier rule uses it (two cores'
/// column halves of the same rows do not conflict).
std::vector<std::pair<int64_t, int64_t>> hbmRunsOf(nisa::AccessPatternAttr pattern);

} // namespace trnc
