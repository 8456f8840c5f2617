//===- Footprint.cpp - the bytes an instruction operand touches -----------===//
//
// See Footprint.h.
//
//===----------------------------------------------------------------------===//
#include "passes/Footprint.h"

#include "isa/StridedRuns.h"

using namespace mlir;
using namespace trnc;
using namespace trnc::nisa;

/// The resource of every packed scratch buffer's footprint.
static const char kScratchArena = 0;

static int64_t elementBytes(Type t) { return (t.getIntOrFloatBitWidth() + 7) / 8; }

/// The bytes of `a`, without the idempotent mark.
static FailureOr<Footprint> bytesOf(Operation *op, const Access &a,
                                    TileBytes mode) {
  ElementExtent extent = getElementExtent(a.pattern);
  auto tile = dyn_cast<TileType>(a.buffer.getType());
  if (!tile) {
    // Packed scratch (trnc-pack-scratch): bytes of the one shared arena.
    auto scratch = a.buffer.getDefiningOp<DramAllocOp>();
    if (mode == TileBytes::Allocated && scratch && scratch.getOffset()) {
      int64_t eb = elementBytes(
          cast<MemRefType>(a.buffer.getType()).getElementType());
      int64_t base = *scratch.getOffset();
      return Footprint{&kScratchArena, 0, 0, 1, base + extent.min * eb,
                       base + (extent.max + 1) * eb, a.isWrite};
    }
    return Footprint{a.buffer.getAsOpaquePointer(), 0, 0, 1, extent.min,
                     extent.max + 1, a.isWrite};
  }
  const void *resource = a.buffer.getAsOpaquePointer();
  int64_t addr = 0;
  if (mode == TileBytes::Allocated) {
    auto alloc = a.buffer.getDefiningOp<AllocOp>();
    if (!alloc || !alloc.getAddress())
      return op->emitOpError("operand tile has no address; run "
                             "trnc-allocate-memory first");
    addr = *alloc.getAddress();
    resource = nullptr;
  }
  int64_t free = tile.getFreeSize(), eb = elementBytes(tile.getElementType());
  ArrayRef<int64_t> strides = a.pattern.getStrides(),
                    counts = a.pattern.getCounts();
  int64_t lo = a.pattern.getOffset() % free, hi = lo;
  for (size_t i = 1; i < counts.size(); ++i) {
    int64_t span = strides[i] * (counts[i] - 1);
    (span < 0 ? lo : hi) += span;
  }
  int64_t part = a.pattern.getOffset() / free;
  return Footprint{resource,
                   static_cast<int>(tile.getSpace()),
                   part,
                   part + counts[0],
                   addr + lo * eb,
                   addr + (hi + 1) * eb,
                   a.isWrite};
}

bool trnc::fillsFootprint(const Access &a, const Footprint &f) {
  auto tile = dyn_cast<TileType>(a.buffer.getType());
  if (!tile)
    return false;
  ArrayRef<int64_t> strides = a.pattern.getStrides(),
                    counts = a.pattern.getCounts();
  for (size_t i = 1; i < counts.size(); ++i)
    if (counts[i] > 1 && strides[i] == 0)
      return false; // repeats elements: fewer distinct ones than counted
  int64_t free = a.pattern.getNumElements() / counts[0];
  return f.end - f.begin == free * elementBytes(tile.getElementType());
}

FailureOr<Footprint> trnc::footprintOf(Operation *op, const Access &a,
                                       TileBytes mode) {
  FailureOr<Footprint> fp = bytesOf(op, a, mode);
  if (succeeded(fp) && a.isWrite)
    if (auto scatter = dyn_cast<DmaScatterOp>(op))
      fp->idempotent = scatter.getIdempotent();
  return fp;
}

std::vector<std::pair<int64_t, int64_t>> trnc::hbmRunsOf(AccessPatternAttr ap) {
  std::vector<isa::Run> runs;
  ArrayRef<int64_t> strides = ap.getStrides(), counts = ap.getCounts();
  isa::stridedRuns(ap.getOffset(), strides.data(), counts.data(),
                   strides.size(), isa::kMaxHbmRuns, runs);
  return runs;
}
