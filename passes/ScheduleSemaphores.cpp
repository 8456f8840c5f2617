//===- ScheduleSemaphores.cpp - cross-engine waits and signals ------------===//
//
// `trnc-schedule-semaphores`: program order is a valid sequential order;
// each engine runs its own instructions in that order, so only hazards
// between engines need semaphores. Every instruction signals the semaphore
// of its engine (id = engine number), so instruction p of engine E has
// completed once semaphore E reaches p + 1. An instruction that conflicts
// with an earlier instruction of another engine (read after write, write
// after read, write after write on overlapping bytes) waits for the latest
// such instruction of each engine: at most one wait per other engine.
//
// Speed (~50k instructions): per engine we keep the footprints of its
// instructions and a vector clock of what each engine already knows to be
// complete (its own earlier waits, transitively through the producers it
// waited for). A backward scan of engine E's instructions stops at the
// first conflict, at what is already known complete, or after kScanWindow
// instructions; in the last case it conservatively waits for the oldest
// instruction scanned, which covers anything older because E completes in
// order. A wait implied by another chosen wait (that producer itself waited
// for it) is dropped. Every wait points backwards in program order, so no
// deadlock.
//
//===----------------------------------------------------------------------===//
#include "passes/Passes.h"

#include "llvm/Support/Debug.h"

#include <array>

#define DEBUG_TYPE "trnc-schedule-semaphores"

namespace trnc {
#define GEN_PASS_DEF_SCHEDULE
#include "passes/Passes.h.inc"
} // namespace trnc

using namespace mlir;
using namespace trnc;
using namespace trnc::nisa;

namespace {

constexpr unsigned kNumEngines = 5;
constexpr unsigned kNumDmaQueues = 16;
/// Instructions of one engine examined per hazard query before falling back
/// to a conservative wait; bounds the pass to O(n * engines * window).
constexpr int64_t kScanWindow = 256;

/// The memory an access touches. On chip: a space, a partition range and a
/// byte range inside each partition (conservative: the pattern's extent).
/// HBM: the buffer and an element range.
struct Footprint {
  const void *resource; // HBM: the memref value; on chip: nullptr
  int space;            // MemorySpace for tiles, 0 for HBM
  int64_t partBegin, partEnd;
  int64_t begin, end; // half-open
  bool isWrite;

  bool conflicts(const Footprint &o) const {
    return (isWrite || o.isWrite) && resource == o.resource &&
           space == o.space && partBegin < o.partEnd && o.partBegin < partEnd &&
           begin < o.end && o.begin < end;
  }
};

using Clock = std::array<int64_t, kNumEngines>; // per engine: positions done

struct Record {
  SmallVector<Footprint, 3> footprints;
  Clock known; // what was complete once this instruction finished
};

int64_t elementBytes(Type t) { return (t.getIntOrFloatBitWidth() + 7) / 8; }

/// The footprint of one access; fails (with a diagnostic) on a tile that has
/// no address yet.
FailureOr<Footprint> footprintOf(Operation *op, const Access &a) {
  ElementExtent extent = getElementExtent(a.pattern);
  auto tile = dyn_cast<TileType>(a.buffer.getType());
  if (!tile)
    return Footprint{a.buffer.getAsOpaquePointer(), 0, 0, 1, extent.min,
                     extent.max + 1, a.isWrite};
  auto alloc = a.buffer.getDefiningOp<AllocOp>();
  if (!alloc || !alloc.getAddress())
    return op->emitOpError("operand tile has no address; run "
                           "trnc-allocate-memory first");
  int64_t free = tile.getFreeSize(), eb = elementBytes(tile.getElementType());
  ArrayRef<int64_t> strides = a.pattern.getStrides(),
                    counts = a.pattern.getCounts();
  int64_t lo = a.pattern.getOffset() % free, hi = lo;
  for (size_t i = 1; i < counts.size(); ++i) {
    int64_t span = strides[i] * (counts[i] - 1);
    (span < 0 ? lo : hi) += span;
  }
  int64_t part = a.pattern.getOffset() / free;
  int64_t addr = *alloc.getAddress();
  return Footprint{nullptr,
                   static_cast<int>(tile.getSpace()),
                   part,
                   part + counts[0],
                   addr + lo * eb,
                   addr + (hi + 1) * eb,
                   a.isWrite};
}

struct SchedulePass : public trnc::impl::ScheduleBase<SchedulePass> {
  using ScheduleBase::ScheduleBase;

  void runOnOperation() override;
};

void SchedulePass::runOnOperation() {
  std::array<std::vector<Record>, kNumEngines> streams;
  // What each engine's next instruction knows to be complete (positions
  // + 1, i.e. semaphore values), starting from nothing.
  std::array<Clock, kNumEngines> engineKnows{};
  Builder b(&getContext());
  unsigned nextQueue = 0;
  int64_t fallbacks = 0;

  WalkResult walk = getOperation().walk([&](InstructionOpInterface inst) {
    Operation *op = inst.getOperation();
    unsigned engine = static_cast<unsigned>(inst.getExecutionEngine());
    Record rec;
    for (const Access &a : inst.getAccesses()) {
      FailureOr<Footprint> fp = footprintOf(op, a);
      if (failed(fp))
        return WalkResult::interrupt();
      rec.footprints.push_back(*fp);
    }

    Clock &known = engineKnows[engine];
    SmallVector<std::pair<unsigned, int64_t>, kNumEngines> chosen;
    for (unsigned other = 0; other < kNumEngines; ++other) {
      if (other == engine)
        continue;
      const std::vector<Record> &stream = streams[other];
      int64_t stop = std::max<int64_t>(known[other],
                                       (int64_t)stream.size() - kScanWindow);
      int64_t waitFor = -1; // position whose completion we need
      for (int64_t p = (int64_t)stream.size() - 1; p >= known[other]; --p) {
        if (p < stop) {
          waitFor = p; // window exhausted: cover everything older
          ++fallbacks;
          break;
        }
        bool hit = llvm::any_of(rec.footprints, [&](const Footprint &f) {
          return llvm::any_of(stream[p].footprints,
                              [&](const Footprint &g) { return f.conflicts(g); });
        });
        if (hit) {
          waitFor = p;
          break;
        }
      }
      if (waitFor < 0)
        continue;
      chosen.push_back({other, waitFor});
      // Waiting for it teaches us everything it knew.
      const Clock &theirs = stream[waitFor].known;
      for (unsigned e = 0; e < kNumEngines; ++e)
        known[e] = std::max(known[e], theirs[e]);
      known[other] = std::max(known[other], waitFor + 1);
    }

    // Drop a wait another chosen producer already waited for (transitively).
    SmallVector<int64_t, 2 * kNumEngines> waits;
    for (auto [e, pos] : chosen) {
      bool implied = llvm::any_of(chosen, [&, e = e, pos = pos](auto other) {
        return other.first != e &&
               streams[other.first][other.second].known[e] > pos;
      });
      if (!implied) {
        waits.push_back(e);
        waits.push_back(pos + 1);
      }
    }

    known[engine] = streams[engine].size() + 1;
    rec.known = known;
    streams[engine].push_back(std::move(rec));

    if (!waits.empty())
      op->setAttr("waits", b.getDenseI64ArrayAttr(waits));
    else
      op->removeAttr("waits");
    op->setAttr("signal", b.getI64IntegerAttr(engine));
    if (auto dma = dyn_cast<DmaCopyOp>(op))
      dma.setQueueAttr(b.getI64IntegerAttr(nextQueue++ % kNumDmaQueues));
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return signalPassFailure();
  LLVM_DEBUG(llvm::dbgs() << "scan-window fallbacks: " << fallbacks << "\n");
}

} // namespace
