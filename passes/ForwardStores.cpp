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
//
// It runs on the tile loops, before they are unrolled: store and load are
// in one block, the function's or one loop body's, so in a loop body
// (trnc-fuse-tile-loops put a producer's iteration and its consumer's in
// one) the tile goes from the producer to the consumer within the
// iteration, and the scratch between the two loops, stored by every
// iteration, goes. An HBM buffer in a loop body is a chain of
// nisa.hbm_window of a root buffer; two accesses address the same bytes
// when they have the same root, the same windows (induction variable,
// step, period and phase; a window at a constant index is an offset) and
// the same access pattern. A loop's first (last) iterations that load
// (store) what straight-line instructions before (after) it store (load)
// are peeled out of it first, so that hand-over is between straight-line
// instructions. A tile one loop stores and another loads is not handed
// over: keeping every iteration's tile from one loop to the next is what
// fusing the loops avoids (and, measured, slower than reloading it).
//
// Conditions: both tiles are written whole (the DMAs cover the whole tile),
// the stored tile belongs to the block (an iteration's own tile, not one
// shared by all iterations), it is not written after the store, and the
// loaded tile is written only by the load (so the two can be one buffer);
// no other write to the HBM bytes falls between store and load. Keeping a
// tile from the store to the load makes it live longer: a forward is taken
// only while the tiles live at every point stay within `memory-share` of
// SBUF/PSUM, counted over program order with each loop body once (a tile
// used in a loop lives through the whole loop), so the program still fits.
//
//===----------------------------------------------------------------------===//
#include "passes/Footprint.h"
#include "passes/Passes.h"
#include "passes/TargetModel.h"
#include "passes/TilePlacement.h"
#include "passes/Tile/DeferredProducts.h"
#include "passes/Tile/TileLoops.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

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

/// Whether what `store` wrote can stand for what `load` reads, the bytes
/// being the same: no DMA casts on either side, and for a load into a tile,
/// both tiles of one type and moved whole.
bool fits(DmaCopyOp store, DmaCopyOp load) {
  Value stored = store.getSrc0();
  Type elt = cast<TileType>(stored.getType()).getElementType();
  auto eltOf = [](Value hbm) {
    return cast<MemRefType>(hbm.getType()).getElementType();
  };
  if (eltOf(store.getDst()) != elt || eltOf(load.getSrc0()) != elt)
    return false;
  Value loaded = load.getDst();
  if (!isa<TileType>(loaded.getType()))
    return eltOf(loaded) == elt;
  return stored.getType() == loaded.getType() &&
         coversTile(stored, store.getSrc0Ap()) &&
         coversTile(loaded, load.getDstAp());
}

/// An HBM buffer as a block sees it: a root buffer moved on by the windows
/// (induction variable, step) it is reached through, and by `offset`
/// elements for windows at a constant index (a peeled iteration's).
struct HbmRef {
  /// A window at an induction variable: (variable, step, period, phase).
  using Window = std::tuple<const void *, int64_t, int64_t, int64_t>;
  Value root;
  SmallVector<Window, 2> windows;
  int64_t offset = 0;

  explicit HbmRef(Value buffer) {
    while (auto window = buffer.getDefiningOp<HbmWindowOp>()) {
      if (std::optional<int64_t> index = getConstantIntValue(window.getIndex()))
        offset += window.offsetAt(*index);
      else
        windows.push_back({window.getIndex().getAsOpaquePointer(),
                           static_cast<int64_t>(window.getStep()),
                           static_cast<int64_t>(window.getPeriod().value_or(0)),
                           static_cast<int64_t>(window.getPhase().value_or(0))});
      buffer = window.getSource();
    }
    root = buffer;
    llvm::sort(windows);
  }
  /// This reference in iteration `j` of the loop of `iv`, if it moves with
  /// that loop.
  std::optional<HbmRef> at(Value iv, int64_t j) const {
    auto it = llvm::find_if(windows, [&](const Window &w) {
      return std::get<0>(w) == iv.getAsOpaquePointer();
    });
    if (it == windows.end())
      return std::nullopt;
    auto [var, step, period, phase] = *it;
    HbmRef r = *this;
    r.offset += windowOffset(j, step, period, phase);
    r.windows.erase(r.windows.begin() + (it - windows.begin()));
    return r;
  }
  /// Whether the two move alike: their offsets then compare.
  bool sameWindows(const HbmRef &o) const {
    return root == o.root && windows == o.windows;
  }
};

/// Whether `a` through `ap` and `b` through `bp` address the same elements
/// in the same order.
bool sameBytes(const HbmRef &a, AccessPatternAttr ap, const HbmRef &b,
               AccessPatternAttr bp) {
  return a.sameWindows(b) && ap.getOffset() + a.offset == bp.getOffset() + b.offset &&
         ap.getStrides() == bp.getStrides() && ap.getCounts() == bp.getCounts();
}

/// A tile stored to HBM, or HBM loaded into a tile or copied on: the DMAs
/// a hand-over replaces.
bool isStore(DmaCopyOp dma) {
  return isa<TileType>(dma.getSrc0().getType()) &&
         !isa<TileType>(dma.getDst().getType());
}
bool isLoad(DmaCopyOp dma) { return !isa<TileType>(dma.getSrc0().getType()); }

/// Peels the first iterations of a loop whose loads read what a
/// straight-line store before the loop wrote, and the last iterations whose
/// stores a straight-line load after the loop reads (a matmul's row tiles
/// emitted one by one, then a softmax's loop over them): those iterations
/// become straight-line instructions too, where the hand-over below can
/// take the tile. Matching bytes and tiles (`fits`) decide; the
/// hand-over's other conditions (nothing writing the bytes in between, room
/// on chip) are checked after.
LogicalResult peelAtStraightLineHandOvers(func::FuncOp func) {
  SmallVector<scf::ForOp> loops;
  func.walk([&](scf::ForOp loop) { loops.push_back(loop); });
  // Each block's straight-line stores and loads, by HBM root (the copies
  // peeling adds are not listed: a hand-over to them is not looked for).
  struct Dmas {
    DenseMap<Value, SmallVector<std::pair<DmaCopyOp, HbmRef>>> stores, loads;
  };
  DenseMap<Block *, Dmas> dmasOf;
  auto dmas = [&](Block *block) -> Dmas & {
    auto [it, fresh] = dmasOf.try_emplace(block);
    if (fresh)
      for (DmaCopyOp dma : block->getOps<DmaCopyOp>()) {
        if (isStore(dma)) {
          HbmRef ref(dma.getDst());
          it->second.stores[ref.root].push_back({dma, ref});
        } else if (isLoad(dma)) {
          HbmRef ref(dma.getSrc0());
          it->second.loads[ref.root].push_back({dma, ref});
        }
      }
    return it->second;
  };
  for (scf::ForOp loop : loops) {
    std::optional<int64_t> trips = tile::tripCount(loop);
    if (!trips)
      continue;
    SmallVector<DmaCopyOp> loads, stores;
    for (DmaCopyOp dma : loop.getBody()->getOps<DmaCopyOp>())
      (isStore(dma) ? stores : loads).push_back(dma);
    Dmas &outside = dmas(loop->getBlock());
    Value iv = loop.getInductionVar();
    // Whether the HBM side of `inside` in iteration j is the HBM side of a
    // straight-line store before the loop (inside loads) or load after it
    // (inside stores) whose tile fits.
    auto handsOver = [&](ArrayRef<DmaCopyOp> inside, int64_t j) {
      for (DmaCopyOp in : inside) {
        bool store = isStore(in);
        Value buffer = store ? in.getDst() : in.getSrc0();
        std::optional<HbmRef> ref = HbmRef(buffer).at(iv, j);
        if (!ref)
          continue;
        AccessPatternAttr ap = store ? in.getDstAp() : in.getSrc0Ap();
        auto &byRoot = store ? outside.loads : outside.stores;
        auto candidates = byRoot.find(ref->root);
        if (candidates == byRoot.end())
          continue;
        for (auto &[out, outRef] : candidates->second) {
          if (store == out->isBeforeInBlock(loop))
            continue;
          AccessPatternAttr otherAp = store ? out.getSrc0Ap() : out.getDstAp();
          if (sameBytes(*ref, ap, outRef, otherAp) &&
              (store ? fits(in, out) : fits(out, in)))
            return true;
        }
      }
      return false;
    };
    int64_t front = 0, back = 0;
    while (front < *trips && handsOver(loads, front))
      ++front;
    while (front + back < *trips && handsOver(stores, *trips - 1 - back))
      ++back;
    if (failed(tile::peelIterations(loop, front, back)))
      return failure();
  }
  return success();
}

/// Program positions: the function's instructions in order, each loop body
/// once; an op holding a region spans the positions of what it holds.
class Positions {
public:
  explicit Positions(Block &block) { number(block); }

  /// The span of `op`: [lo, hi].
  std::pair<int64_t, int64_t> span(Operation *op) const {
    return spans.lookup(op);
  }
  int64_t of(Operation *inst) const { return spans.lookup(inst).first; }
  int64_t size() const { return count; }

  /// The span of `user`'s ancestor in `block`: what using a value defined
  /// in `block` from `user` keeps it live over.
  std::pair<int64_t, int64_t> spanIn(Operation *user, Block *block) const {
    Operation *op = block->findAncestorOpInBlock(*user);
    return op ? span(op) : span(user);
  }

private:
  void number(Block &block) {
    for (Operation &op : block) {
      int64_t lo = count;
      if (isa<InstructionOpInterface>(op))
        ++count;
      for (Region &region : op.getRegions())
        for (Block &inner : region)
          number(inner);
      // A terminator or other bookkeeping op sits at the last instruction
      // before it.
      int64_t hi = std::max<int64_t>(count - 1, 0);
      spans[&op] = {std::min(lo, hi), hi};
    }
  }
  DenseMap<Operation *, std::pair<int64_t, int64_t>> spans;
  int64_t count = 0;
};

struct TileInfo {
  SmallVector<int64_t, 2> writes; // positions
  int64_t first = -1, last = -1;  // positions of first and last access

  void touch(int64_t lo, int64_t hi) {
    first = first < 0 ? lo : std::min(first, lo);
    last = std::max(last, hi);
  }
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
  if (failed(peelAtStraightLineHandOvers(func)))
    return signalPassFailure();

  // Tile accesses by position; a tile used inside a loop of its block lives
  // through the whole loop, a loop's carried tile through its body, a
  // loop's result from the loop's end.
  Positions positions(func.getBody().front());
  llvm::MapVector<Value, TileInfo> tiles;
  SmallVector<DmaCopyOp> loads;
  auto isTile = [](Value v) { return isa<TileType>(v.getType()); };
  func.walk([&](Operation *op) {
    if (auto loop = dyn_cast<scf::ForOp>(op)) {
      auto [lo, hi] = positions.span(loop);
      for (BlockArgument arg : loop.getRegionIterArgs())
        if (isTile(arg)) {
          tiles[arg].touch(lo, hi);
          tiles[arg].writes.push_back(lo);
        }
      for (Value result : loop.getResults())
        if (isTile(result)) {
          tiles[result].touch(hi, hi);
          tiles[result].writes.push_back(hi);
        }
    }
    auto inst = dyn_cast<InstructionOpInterface>(op);
    if (!inst) {
      // A carried tile's init, a yielded tile: used over the loop.
      for (Value v : op->getOperands())
        if (isTile(v)) {
          auto [lo, hi] = positions.spanIn(op, v.getParentBlock());
          tiles[v].touch(lo, hi);
        }
      return;
    }
    for (const Access &a : inst.getAccesses()) {
      if (!isTile(a.buffer))
        continue;
      Value tile = a.buffer;
      auto [lo, hi] = positions.spanIn(op, tile.getParentBlock());
      TileInfo &t = tiles[tile];
      t.touch(lo, hi);
      if (a.isWrite)
        t.writes.push_back(hi);
    }
    if (auto dma = dyn_cast<DmaCopyOp>(op); dma && isLoad(dma))
      loads.push_back(dma);
  });

  // Live bytes per position, per memory space, as the allocator counts them.
  auto bytesOf = [](Value tile) {
    return placedBytes(cast<TileType>(tile.getType()));
  };
  auto isPsum = [](Value tile) {
    return cast<TileType>(tile.getType()).getSpace() == MemorySpace::psum;
  };
  MaxTree sbufLive(positions.size()), psumLive(positions.size());
  for (auto &[tile, info] : tiles)
    (isPsum(tile) ? psumLive : sbufLive)
        .rangeAdd(info.first, info.last + 1, bytesOf(tile));
  int64_t budget[2] = {int64_t(memoryShare * model->sbufPartitionBytes),
                       int64_t(memoryShare * model->psumPartitionBytes)};

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

  // The ops of each block writing each HBM root, in order: an instruction,
  // or a loop writing the root anywhere inside.
  DenseMap<Block *, DenseMap<Value, SmallVector<Operation *>>> writersOf;
  auto writers = [&](Block *block, Value root) -> ArrayRef<Operation *> {
    auto [it, fresh] = writersOf.try_emplace(block);
    if (fresh)
      for (Operation &op : *block) {
        llvm::SmallSetVector<Value, 4> roots;
        op.walk([&](InstructionOpInterface inst) {
          for (const Access &a : inst.getAccesses())
            if (a.isWrite && !isTile(a.buffer))
              roots.insert(HbmRef(a.buffer).root);
        });
        for (Value r : roots)
          it->second[r].push_back(&op);
      }
    auto found = it->second.find(root);
    return found == it->second.end() ? ArrayRef<Operation *>()
                                     : ArrayRef<Operation *>(found->second);
  };

  // The store (a tile into HBM) earlier in `load`'s block that wrote exactly
  // the HBM bytes `load` reads, with nothing writing them in between; null
  // if none. Only the block is searched: in a loop body, the store of the
  // same iteration.
  auto storeRead = [&](DmaCopyOp load) -> DmaCopyOp {
    HbmRef ref(load.getSrc0());
    Access read{load.getSrc0(), load.getSrc0Ap(), false};
    FailureOr<Footprint> readFp = footprintOf(load, read, TileBytes::Relative);
    if (failed(readFp))
      return {};
    ArrayRef<Operation *> list = writers(load->getBlock(), ref.root);
    // The writers before the load, latest first.
    auto end = llvm::partition_point(list, [&](Operation *op) {
      return op->isBeforeInBlock(load);
    });
    for (Operation *op : llvm::reverse(ArrayRef<Operation *>(list.begin(), end))) {
      // A nested loop writing the root ends the search.
      if (op->getNumRegions())
        return {};
      auto inst = dyn_cast<InstructionOpInterface>(op);
      if (!inst)
        continue;
      for (const Access &a : inst.getAccesses()) {
        if (!a.isWrite || isTile(a.buffer))
          continue;
        HbmRef written(a.buffer);
        if (written.root != ref.root)
          continue;
        auto store = dyn_cast<DmaCopyOp>(op);
        if (store && a.buffer == store.getDst() && isTile(store.getSrc0()) &&
            sameBytes(written, store.getDstAp(), ref, load.getSrc0Ap()))
          return store;
        // Another write of the root: through other windows, or of bytes
        // overlapping those read, it ends the search.
        if (!written.sameWindows(ref))
          return {};
        FailureOr<Footprint> fp = footprintOf(op, a, TileBytes::Relative);
        if (failed(fp) || (fp->begin + written.offset < readFp->end + ref.offset &&
                           readFp->begin + ref.offset < fp->end + written.offset))
          return {};
      }
    }
    return {};
  };

  int64_t forwarded = 0, copies = 0;
  for (DmaCopyOp load : loads) {
    DmaCopyOp store = storeRead(load);
    if (!store)
      continue;
    Block *block = load->getBlock();
    Value stored = store.getSrc0();
    if (stored.getParentBlock() != block)
      continue;
    if (!fits(store, load))
      continue;
    int64_t s = positions.of(store), pos = positions.of(load);
    TileInfo &st = tiles[stored];
    if (st.writes.empty() || *llvm::max_element(st.writes) > s)
      continue;
    if (!isTile(load.getDst())) {
      // An HBM -> HBM copy of exactly what a tile stored (same pattern, no
      // cast): stored from the tile instead, so the tile's store, if
      // nothing else reads its bytes, goes with the dead stores below.
      if (!keepLive(stored, s, pos))
        continue;
      st.last = std::max(st.last, pos);
      load.getSrc0Mutable().assign(stored);
      load.setSrc0ApAttr(store.getSrc0Ap());
      ++copies;
      continue;
    }
    Value loaded = load.getDst();
    TileInfo &ld = tiles[loaded];
    auto alloc = loaded.getDefiningOp<AllocOp>();
    if (ld.writes.size() != 1 || ld.first != pos || !alloc ||
        alloc->getBlock() != block)
      continue;
    // The stored tile now also lives from the store to the load.
    if (!keepLive(stored, s, pos))
      continue;
    st.last = std::max(st.last, ld.last);
    loaded.replaceAllUsesWith(stored);
    tile::handOverAnchor(load);
    load->erase();
    alloc->erase();
    ++forwarded;
  }

  // Stores into scratch nothing reads, and scratch nothing touches: every
  // user, through windows, writes.
  int64_t deadStores = 0;
  SmallVector<DramAllocOp> scratch(func.getOps<DramAllocOp>());
  for (DramAllocOp buffer : scratch) {
    SmallVector<Operation *> writers, windows;
    bool read = false;
    SmallVector<Value> worklist{buffer.getResult()};
    while (!worklist.empty() && !read) {
      Value v = worklist.pop_back_val();
      for (OpOperand &use : v.getUses()) {
        Operation *user = use.getOwner();
        if (auto window = dyn_cast<HbmWindowOp>(user)) {
          windows.push_back(window);
          worklist.push_back(window.getResult());
          continue;
        }
        auto inst = dyn_cast<InstructionOpInterface>(user);
        if (!inst || llvm::any_of(inst.getAccesses(), [&](const Access &a) {
              return a.buffer == use.get() && !a.isWrite;
            })) {
          read = true;
          break;
        }
        writers.push_back(user);
      }
    }
    if (read)
      continue;
    llvm::sort(writers);
    writers.erase(llvm::unique(writers), writers.end());
    for (Operation *writer : writers) {
      tile::handOverAnchor(writer);
      writer->erase();
    }
    deadStores += writers.size();
    for (Operation *window : llvm::reverse(windows))
      window->erase();
    buffer->erase();
  }
  // The windows the forwarded loads read through.
  SmallVector<HbmWindowOp> unused;
  func.walk<WalkOrder::PostOrder>([&](HbmWindowOp window) {
    unused.push_back(window);
  });
  for (HbmWindowOp window : llvm::reverse(unused))
    if (window->use_empty())
      window->erase();
  LLVM_DEBUG(llvm::dbgs() << func.getName() << ": " << forwarded
                          << " loads forwarded, " << copies
                          << " copies stored from tiles, " << deadStores
                          << " dead stores\n");
}

} // namespace
