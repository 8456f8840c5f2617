//===- PackScratch.cpp - HBM scratch offsets by liveness ------------------===//
//
// `trnc-pack-scratch`: gives every `nisa.dram_alloc` an `offset` in the
// program's one scratch arena, so that buffers never live at the same time
// share bytes (the bf16 GPT step's backward: 46 buffers, 359 MB end to end,
// 76 MB packed; most are dead long before the last is written).
//
// A buffer is live from the first to the last instruction that touches it,
// in program order, which is a valid sequential order of the streams: two
// buffers whose ranges are disjoint may share bytes, and the semaphore
// pass, which sees scratch at its arena bytes (Footprint.h), makes the
// later buffer's first access wait for the earlier one's last on any other
// engine or queue. Every such wait points backwards in program order.
//
// At LNC=2 (SplitLogicalCores.cpp) @main and @main_core1 run concurrently
// and address one arena (their buffers matched by `trnc.scratch`). Program
// positions of different cores are not comparable; only the barriers
// (`nisa.peer_wait`, the same count in both functions) order them. Two
// buffers may share bytes when every use of one comes before a barrier
// that every use of the other follows, or when one core alone uses both and
// their ranges on it are disjoint.
//
// On one core, bytes pass to a new buffer only when the old one's last
// access is estimated to have ended before the new one's first starts: the
// DMA stream issues in order, so a first transfer waiting for one still in
// flight would hold back every later transfer. The estimate is the list
// scheduler's timeline (kEstimatedLiveAttr on each nisa.dram_alloc, Passes.h);
// for a buffer without one (a spill's, or when the scheduler did not run),
// the old buffer's last use must be `reuse-distance` instructions before the
// new one's first. A buffer a collective touches keeps its own bytes.
//
// Placement is first fit in order of first use: the lowest 64-byte-aligned
// offset that overlaps no placed buffer whose live range meets this one.
//
//===----------------------------------------------------------------------===//
#include "passes/Passes.h"

#include "isa/Isa.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/Support/Debug.h"

#include <algorithm>
#include <limits>
#include <optional>

#define DEBUG_TYPE "trnc-pack-scratch"

namespace trnc {
#define GEN_PASS_DEF_PACKSCRATCH
#include "passes/Passes.h.inc"
} // namespace trnc

using namespace mlir;
using namespace trnc;
using namespace trnc::nisa;

namespace {

constexpr int64_t kNone = -1;

/// Where one core touches a buffer: program positions and barrier epochs.
struct CoreUse {
  int64_t first = kNone, last = kNone; // instruction positions on that core
  int64_t firstEpoch = 0, lastEpoch = 0;
  /// The list scheduler's estimate of when its first access starts and its
  /// last ends, in ns (kEstimatedLiveAttr), if it made one.
  std::optional<std::pair<int64_t, int64_t>> estimated;
  bool used() const { return first != kNone; }
};

/// One scratch buffer: its dram_allocs (one per core that declares it).
struct Buffer {
  SmallVector<DramAllocOp, 2> ops;
  uint64_t bytes = 0;
  CoreUse cores[2];
  int64_t offset = 0;
  /// A collective reads or writes it (see interfere).
  bool communicated = false;

  bool used() const { return cores[0].used() || cores[1].used(); }
  int64_t firstEpoch() const {
    int64_t e = std::numeric_limits<int64_t>::max();
    for (const CoreUse &c : cores)
      if (c.used())
        e = std::min(e, c.firstEpoch);
    return e;
  }
  int64_t lastEpoch() const {
    int64_t e = 0;
    for (const CoreUse &c : cores)
      if (c.used())
        e = std::max(e, c.lastEpoch);
    return e;
  }
  /// The only core using it, or -1.
  int soleCore() const {
    if (cores[0].used() != cores[1].used())
      return cores[0].used() ? 0 : 1;
    return -1;
  }
};

/// Whether a and b may be live at once (and so must not share bytes), or
/// sharing them would make a transfer wait for one still in flight (see
/// the file comment).
bool interfere(const Buffer &a, const Buffer &b, int64_t distance) {
  if (!a.used() || !b.used())
    return false;
  // A collective runs for many instructions' time on its own queue, behind
  // the others (exposed communication is what its placement hides): bytes
  // shared with it would hold compute back until it is done.
  if (a.communicated || b.communicated)
    return true;
  if (a.lastEpoch() < b.firstEpoch() || b.lastEpoch() < a.firstEpoch())
    return false; // a barrier lies between every use of one and the other
  int core = a.soleCore();
  if (core >= 0 && core == b.soleCore()) {
    const CoreUse &x = a.cores[core], &y = b.cores[core];
    if (!(x.last < y.first || y.last < x.first))
      return true; // live at once in program order
    const CoreUse &early = x.last < y.first ? x : y;
    const CoreUse &late = x.last < y.first ? y : x;
    // The later buffer's first transfer will wait for the earlier one's
    // last access: cheap only if that access is already done by then.
    if (early.estimated && late.estimated)
      return early.estimated->second > late.estimated->first;
    return early.last + distance >= late.first;
  }
  return true;
}

uint64_t alignUp(uint64_t bytes) {
  return (bytes + isa::kScratchAlignment - 1) / isa::kScratchAlignment *
         isa::kScratchAlignment;
}

struct PackScratchPass : public trnc::impl::PackScratchBase<PackScratchPass> {
  using PackScratchBase::PackScratchBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (failed(requireUnrolled(module, getArgument())))
      return signalPassFailure();
    // LNC=2: the two physical cores' functions share one arena; otherwise
    // each function is a program of its own.
    auto lnc = module->getAttrOfType<IntegerAttr>("trnc.lnc");
    if (lnc && lnc.getInt() == 2) {
      auto main = module.lookupSymbol<func::FuncOp>("main");
      auto peer = module.lookupSymbol<func::FuncOp>("main_core1");
      if (!main || !peer) {
        module.emitError("trnc.lnc = 2 needs @main and @main_core1");
        return signalPassFailure();
      }
      pack({main, peer});
      return;
    }
    for (auto func : module.getOps<func::FuncOp>())
      if (!func.isExternal())
        pack({func});
  }

private:
  /// Packs the scratch of one program: physical core c's function is
  /// cores[c].
  void pack(ArrayRef<func::FuncOp> cores) {
    // Buffers in declaration order: core 0's, then core 1's untagged ones
    // (a spill on core 1); a tagged one of core 1 joins core 0's.
    llvm::MapVector<Operation *, Buffer> buffers; // keyed by the first op
    DenseMap<int64_t, Operation *> byTag;
    DenseMap<Value, Buffer *> bufferOf;
    for (size_t core = 0; core < cores.size(); ++core)
      func::FuncOp(cores[core]).walk([&](DramAllocOp op) {
        auto tag = op->getAttrOfType<IntegerAttr>("trnc.scratch");
        Operation *key = op;
        if (tag) {
          auto [it, inserted] = byTag.try_emplace(tag.getInt(), op);
          key = it->second;
        }
        Buffer &buffer = buffers[key];
        buffer.ops.push_back(op);
        if (auto live = op->getAttrOfType<DenseI64ArrayAttr>(kEstimatedLiveAttr)) {
          if (live.size() == 2)
            buffer.cores[core].estimated = {live[0], live[1]};
          op->removeAttr(kEstimatedLiveAttr);
        }
        MemRefType type = op.getType();
        buffer.bytes = type.getNumElements() *
                       ((type.getElementTypeBitWidth() + 7) / 8);
      });
    for (auto &[key, buffer] : buffers)
      for (DramAllocOp op : buffer.ops)
        bufferOf[op.getResult()] = &buffer;

    for (size_t core = 0; core < cores.size(); ++core) {
      int64_t position = 0, epoch = 0;
      func::FuncOp func = cores[core];
      func.walk([&](Operation *op) {
        if (llvm::isa<PeerWaitOp>(op))
          ++epoch;
        if (!llvm::isa<InstructionOpInterface>(op))
          return;
        for (Value v : op->getOperands()) {
          Buffer *buffer = bufferOf.lookup(v);
          if (!buffer)
            continue;
          buffer->communicated |= llvm::isa<CollectiveOp>(op);
          CoreUse &use = buffer->cores[core];
          if (!use.used()) {
            use.first = position;
            use.firstEpoch = epoch;
          }
          use.last = position;
          use.lastEpoch = epoch;
        }
        ++position;
      });
    }

    // First fit, in order of first use (epoch, then position).
    SmallVector<Buffer *> order;
    for (auto &[key, buffer] : buffers)
      order.push_back(&buffer);
    auto start = [](const Buffer *b) {
      int64_t position = std::numeric_limits<int64_t>::max();
      for (const CoreUse &c : b->cores)
        if (c.used() && c.firstEpoch == b->firstEpoch())
          position = std::min(position, c.first);
      return std::make_pair(b->used() ? b->firstEpoch() : 0, position);
    };
    std::stable_sort(order.begin(), order.end(),
                     [&](Buffer *a, Buffer *b) { return start(a) < start(b); });
    SmallVector<Buffer *> placed;
    for (Buffer *buffer : order) {
      SmallVector<std::pair<uint64_t, uint64_t>> taken; // [offset, end)
      for (Buffer *other : placed)
        if (interfere(*buffer, *other, reuseDistance))
          taken.push_back({uint64_t(other->offset),
                           uint64_t(other->offset) + alignUp(other->bytes)});
      llvm::sort(taken);
      uint64_t at = 0, size = alignUp(buffer->bytes);
      for (auto [begin, end] : taken) {
        if (begin >= at + size)
          break;
        at = std::max(at, end);
      }
      buffer->offset = int64_t(at);
      placed.push_back(buffer);
    }

    Builder b(&getContext());
    for (auto &[key, buffer] : buffers)
      for (DramAllocOp op : buffer.ops)
        op.setOffsetAttr(b.getI64IntegerAttr(buffer.offset));
    LLVM_DEBUG(llvm::dbgs() << buffers.size() << " scratch buffers placed\n");
  }
};

} // namespace
