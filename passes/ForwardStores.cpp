//===- ForwardStores.cpp - keep tiles on chip between ops -----------------===//
//
// `trnc-fuse-forward-stores`: the per-op lowerings hand every intermediate
// tensor from one op to the next through HBM: op A stores tile k, op B loads
// the same bytes into a fresh tile. When the load reads exactly what one
// store wrote (same buffer, same access pattern, same element types, so no
// DMA cast), op B can read A's tile directly. This pass
//   1. forwards such loads: every use of the loaded tile becomes a use of
//      the stored tile, and the load goes;
//   2. stores from the tile what an HBM -> HBM copy would read back from
//      the bytes the tile was stored to (a value materialised in scratch,
//      then copied into its output);
//   3. deletes stores into HBM scratch (nisa.dram_alloc) that nothing reads
//      any more, and scratch buffers nothing touches.
// Elementwise chains of one shape are tiled identically, so their
// intermediates never reach HBM: the fusion of elementwise producers and
// consumers, done on the tiles themselves.
//
// Conditions: both tiles are written whole (the DMAs cover the whole tile),
// the stored tile is not written after the store and the loaded tile is
// written only by the load (so the two can be one buffer), and no other
// write to the HBM bytes falls between store and load. Keeping a tile from
// the store to the load makes it live longer: a forward is taken only while
// the tiles live at every point stay within `memory-share` of SBUF/PSUM
// (counted over program order, as the allocator does), so the program
// always still fits.
//
//===----------------------------------------------------------------------===//
#include "passes/Footprint.h"
#include "passes/Passes.h"
#include "passes/TargetModel.h"
#include "passes/TilePlacement.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "trnc-fuse-forward-stores"

namespace trnc {
#define GEN_PASS_DEF_FORWARDSTORES
#include "passes/Passes.h.inc"
} // namespace trnc

using namespace mlir;
using namespace trnc;
using namespace trnc::nisa;

namespace {

/// Range add, range max over instruction positions.
class MaxTree {
public:
  explicit MaxTree(size_t n) : size(1) {
    while (size < std::max<size_t>(n, 1))
      size *= 2;
    maxv.assign(2 * size, 0);
    add.assign(2 * size, 0);
  }
  void rangeAdd(size_t lo, size_t hi, int64_t v) { update(1, 0, size, lo, hi, v); }
  int64_t rangeMax(size_t lo, size_t hi) { return query(1, 0, size, lo, hi); }

private:
  void update(size_t node, size_t nlo, size_t nhi, size_t lo, size_t hi,
              int64_t v) {
    if (hi <= nlo || nhi <= lo)
      return;
    if (lo <= nlo && nhi <= hi) {
      maxv[node] += v;
      add[node] += v;
      return;
    }
    size_t mid = (nlo + nhi) / 2;
    update(2 * node, nlo, mid, lo, hi, v);
    update(2 * node + 1, mid, nhi, lo, hi, v);
    maxv[node] = add[node] + std::max(maxv[2 * node], maxv[2 * node + 1]);
  }
  int64_t query(size_t node, size_t nlo, size_t nhi, size_t lo, size_t hi) {
    if (hi <= nlo || nhi <= lo)
      return INT64_MIN / 4;
    if (lo <= nlo && nhi <= hi)
      return maxv[node];
    size_t mid = (nlo + nhi) / 2;
    return add[node] + std::max(query(2 * node, nlo, mid, lo, hi),
                                query(2 * node + 1, mid, nhi, lo, hi));
  }
  size_t size;
  std::vector<int64_t> maxv, add;
};

/// The whole-tile pattern [partitions, free] from partition 0.
bool coversTile(Value tile, AccessPatternAttr ap) {
  auto type = cast<TileType>(tile.getType());
  return ap.getOffset() == 0 &&
         ap.getCounts() ==
             ArrayRef<int64_t>{type.getPartitions(), type.getFreeSize()} &&
         ap.getStrides() == ArrayRef<int64_t>{type.getFreeSize(), 1};
}

struct TileInfo {
  SmallVector<int64_t, 2> writes; // positions
  int64_t first = -1, last = -1;  // positions of first and last access
};

struct ForwardStoresPass
    : public trnc::impl::ForwardStoresBase<ForwardStoresPass> {
  using Base::Base;

  void runOnOperation() override;
};

void ForwardStoresPass::runOnOperation() {
  func::FuncOp func = getOperation();
  std::optional<MachineModel> model = targetModel(getOperation(), target);
  if (!model)
    return signalPassFailure();
  if (func.isExternal() || !func.getBody().hasOneBlock())
    return;
  if (failed(requireUnrolled(func, getArgument())))
    return signalPassFailure();

  // Positions, tile accesses and HBM writes in program order.
  SmallVector<Operation *> insts;
  llvm::MapVector<Value, TileInfo> tiles;
  DenseMap<Value, SmallVector<std::pair<int64_t, Footprint>>> hbmWrites;
  for (Operation &op : func.getBody().front()) {
    auto inst = dyn_cast<InstructionOpInterface>(op);
    if (!inst)
      continue;
    int64_t pos = insts.size();
    insts.push_back(&op);
    for (const Access &a : inst.getAccesses()) {
      if (isa<TileType>(a.buffer.getType())) {
        TileInfo &t = tiles[a.buffer];
        if (t.first < 0)
          t.first = pos;
        t.last = pos;
        if (a.isWrite)
          t.writes.push_back(pos);
      } else if (a.isWrite) {
        FailureOr<Footprint> fp = footprintOf(&op, a, TileBytes::Relative);
        if (failed(fp))
          return signalPassFailure();
        hbmWrites[a.buffer].push_back({pos, *fp});
      }
    }
  }

  // Live bytes per position, per memory space, as the allocator counts them.
  auto bytesOf = [](Value tile) {
    auto type = cast<TileType>(tile.getType());
    return (type.getPartitionBytes() + kTileAlignment - 1) / kTileAlignment *
           kTileAlignment;
  };
  auto isPsum = [](Value tile) {
    return cast<TileType>(tile.getType()).getSpace() == MemorySpace::psum;
  };
  MaxTree sbufLive(insts.size()), psumLive(insts.size());
  for (auto &[tile, info] : tiles)
    (isPsum(tile) ? psumLive : sbufLive)
        .rangeAdd(info.first, info.last + 1, bytesOf(tile));
  int64_t budget[2] = {int64_t(memoryShare * model->sbufPartitionBytes),
                       int64_t(memoryShare * model->psumPartitionBytes)};

  // The latest write to each HBM buffer at or before `pos` overlapping `fp`.
  auto latestWrite = [&](Value buffer, const Footprint &fp,
                         int64_t pos) -> int64_t {
    auto it = hbmWrites.find(buffer);
    if (it == hbmWrites.end())
      return -1;
    for (auto w = it->second.rbegin(); w != it->second.rend(); ++w)
      if (w->first < pos && w->second.overlaps(fp))
        return w->first;
    return -1;
  };

  // Extends `stored`'s live range from the store at `s` to `pos`, if the
  // tiles live in between leave room for it.
  auto keepLive = [&](Value stored, int64_t s, int64_t pos) {
    MaxTree &live = isPsum(stored) ? psumLive : sbufLive;
    int64_t bytes = bytesOf(stored);
    if (s + 1 < pos &&
        live.rangeMax(s + 1, pos) + bytes > budget[isPsum(stored)])
      return false;
    if (s + 1 < pos)
      live.rangeAdd(s + 1, pos, bytes);
    return true;
  };

  // The store (a tile into HBM) that wrote exactly the HBM bytes `dma` at
  // `pos` reads, with nothing writing them in between; null if none.
  auto storeRead = [&](DmaCopyOp dma, int64_t pos) -> std::pair<DmaCopyOp, int64_t> {
    Value hbm = dma.getSrc0();
    FailureOr<Footprint> fp = footprintOf(
        dma, Access{hbm, dma.getSrc0Ap(), false}, TileBytes::Relative);
    if (failed(fp))
      return {};
    int64_t s = latestWrite(hbm, *fp, pos);
    auto store = s >= 0 ? dyn_cast<DmaCopyOp>(insts[s]) : DmaCopyOp();
    if (!store || store.getDst() != hbm ||
        store.getDstAp() != dma.getSrc0Ap() ||
        !isa<TileType>(store.getSrc0().getType()))
      return {};
    return {store, s};
  };

  int64_t forwarded = 0, copies = 0;
  for (int64_t pos = 0; pos < (int64_t)insts.size(); ++pos) {
    auto load = dyn_cast<DmaCopyOp>(insts[pos]);
    if (!load || isa<TileType>(load.getSrc0().getType()))
      continue;
    auto [store, s] = storeRead(load, pos);
    if (!store)
      continue;
    Value hbm = load.getSrc0(), stored = store.getSrc0();
    Type elt = cast<TileType>(stored.getType()).getElementType();
    if (cast<MemRefType>(hbm.getType()).getElementType() != elt)
      continue;
    if (!isa<TileType>(load.getDst().getType())) {
      // An HBM -> HBM copy of exactly what a tile stored (same pattern, no
      // cast): stored from the tile instead, so the tile's store, if
      // nothing else reads its bytes, goes with the dead stores below.
      TileInfo &st = tiles[stored];
      if (cast<MemRefType>(load.getDst().getType()).getElementType() != elt ||
          st.writes.empty() || st.writes.back() > s || !keepLive(stored, s, pos))
        continue;
      st.last = std::max(st.last, pos);
      load.getSrc0Mutable().assign(stored);
      load.setSrc0ApAttr(store.getSrc0Ap());
      ++copies;
      continue;
    }
    Value loaded = load.getDst();
    if (stored.getType() != loaded.getType() ||
        !coversTile(stored, store.getSrc0Ap()) ||
        !coversTile(loaded, load.getDstAp()))
      continue;
    TileInfo &st = tiles[stored], &ld = tiles[loaded];
    if (st.writes.empty() || st.writes.back() > s || ld.writes.size() != 1 ||
        ld.first != pos || !loaded.getDefiningOp<AllocOp>())
      continue;
    // The stored tile now also lives from the store to the load.
    if (!keepLive(stored, s, pos))
      continue;
    st.last = std::max(st.last, ld.last);
    Operation *alloc = loaded.getDefiningOp();
    loaded.replaceAllUsesWith(stored);
    load->erase();
    insts[pos] = nullptr;
    alloc->erase();
    ++forwarded;
  }

  // Stores into scratch nothing reads, and scratch nothing touches.
  int64_t deadStores = 0;
  SmallVector<DramAllocOp> scratch(func.getOps<DramAllocOp>());
  for (DramAllocOp buffer : scratch) {
    bool read = llvm::any_of(buffer->getUses(), [](OpOperand &use) {
      auto inst = dyn_cast<InstructionOpInterface>(use.getOwner());
      if (!inst)
        return true;
      for (const Access &a : inst.getAccesses())
        if (a.buffer == use.get() && !a.isWrite)
          return true;
      return false;
    });
    if (read)
      continue;
    for (Operation *user : llvm::make_early_inc_range(buffer->getUsers())) {
      user->erase();
      ++deadStores;
    }
    buffer->erase();
  }
  LLVM_DEBUG(llvm::dbgs() << func.getName() << ": " << forwarded
                          << " loads forwarded, " << copies
                          << " copies stored from tiles, " << deadStores
                          << " dead stores\n");
}

} // namespace
