//===- SpillTiles.cpp - SBUF tiles through HBM when they do not fit -------===//
//
// See SpillTiles.h. The store and the load move the whole tile, [partitions,
// free] against a row-major HBM scratch of the same element type; the
// semaphore pass later orders them with the instructions around them like
// any other DMA (a read of the tile before the store, the load before the
// next reader).
//
//===----------------------------------------------------------------------===//
#include "passes/SpillTiles.h"

#include "dialects/Nisa/NisaOps.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "trnc-allocate-memory"

using namespace mlir;
using namespace trnc;
using namespace trnc::nisa;

namespace {
struct Accesses {
  mutable AllocOp tile; // mutable: MLIR op handles have non-const accessors
  SmallVector<int64_t> at; // instruction indices, ascending, unique
};
} // namespace

bool trnc::spillAcross(func::FuncOp func, int64_t at) {
  SmallVector<Operation *> insts;
  llvm::DenseMap<Operation *, size_t> indexOf;
  SmallVector<Accesses> tiles;
  func.walk([&](InstructionOpInterface inst) {
    int64_t index = insts.size();
    insts.push_back(inst);
    for (Value v : inst->getOperands()) {
      auto alloc = v.getDefiningOp<AllocOp>();
      if (!alloc ||
          cast<TileType>(alloc.getType()).getSpace() != MemorySpace::sbuf)
        continue;
      auto [it, fresh] = indexOf.try_emplace(alloc, tiles.size());
      if (fresh)
        tiles.push_back({alloc, {}});
      SmallVector<int64_t> &list = tiles[it->second].at;
      if (list.empty() || list.back() != index)
        list.push_back(index);
    }
  });
  if (at < 0 || at >= int64_t(insts.size()))
    return false;

  // The victim: live across `at`, untouched by it, next needed last.
  const Accesses *victim = nullptr;
  int64_t before = -1, after = -1;
  for (const Accesses &t : tiles) {
    if (t.at.front() >= at || t.at.back() <= at)
      continue;
    auto next = llvm::upper_bound(t.at, at);
    if (*std::prev(next) == at)
      continue; // the instruction itself needs it
    int64_t size = cast<TileType>(t.tile.getType()).getPartitionBytes();
    if (!victim || *next > after ||
        (*next == after &&
         size > cast<TileType>(victim->tile.getType()).getPartitionBytes())) {
      victim = &t;
      before = *std::prev(next);
      after = *next;
    }
  }
  if (!victim)
    return false;

  AllocOp tile = victim->tile;
  auto type = cast<TileType>(tile.getType());
  Location loc = tile.getLoc();
  MLIRContext *ctx = func.getContext();
  auto pattern = AccessPatternAttr::get(
      ctx, 0, {type.getFreeSize(), 1}, {type.getPartitions(), type.getFreeSize()});
  OpBuilder b(insts[before]);
  b.setInsertionPointAfter(insts[before]);
  Value scratch = b.create<DramAllocOp>(
      loc, MemRefType::get({type.getPartitions() * type.getFreeSize()},
                           type.getElementType()),
      /*offset=*/IntegerAttr());
  b.create<DmaCopyOp>(loc, scratch, pattern, tile, pattern, IntegerAttr(),
                      DenseI64ArrayAttr(), IntegerAttr());
  b.setInsertionPoint(insts[after]);
  Value reloaded = b.create<AllocOp>(loc, type, IntegerAttr());
  b.create<DmaCopyOp>(loc, reloaded, pattern, scratch, pattern, IntegerAttr(),
                      DenseI64ArrayAttr(), IntegerAttr());
  for (int64_t i : victim->at)
    if (i >= after)
      insts[i]->replaceUsesOfWith(tile, reloaded);
  LLVM_DEBUG(llvm::dbgs() << "spilled " << type << " across instruction " << at
                          << " (accessed at " << before << ", then " << after
                          << ")\n");
  return true;
}
