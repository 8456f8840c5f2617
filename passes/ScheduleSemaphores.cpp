//===- ScheduleSemaphores.cpp - cross-engine waits and signals ------------===//
//
// `trnc-schedule-semaphores`: program order is a valid sequential order.
// Ordering happens between "ordered agents" (isa/Isa.h): each compute
// engine, and each of the 16 DMA queues. An agent completes its own
// instructions in order and signals its own semaphore (compute: engine id;
// DMA queue q: kDmaQueueSemaphoreBase + q), so its k-th instruction is
// complete once that semaphore reaches k + 1. The DMA stream only *issues*
// in order: a DMA waits for conflicting DMAs on other queues like for any
// other agent. An instruction that conflicts with an earlier instruction of
// another agent (read after write, write after read, write after write on
// overlapping bytes) waits for the latest such instruction of that agent.
//
// Queues: a DMA that conflicts with earlier, not-yet-known-complete DMAs
// goes on the queue of the most recent of them (the queue orders the pair
// for free and the DMA stream does not stall on a wait); any other DMA goes
// on the next queue round-robin, to overlap transfers.
//
// Waits beyond isa::kMaxWaits go on wait-only `nisa.nop`s inserted just
// before the instruction on its engine (in order, so equivalent). Nops
// signal nothing and cost no time in the simulator (they only ever stand
// in for the extra wait slots of the next instruction).
//
// Cross-core barriers (LNC=2, SplitLogicalCores.cpp): a `nisa.peer_signal`
// waits for the last transfer of every DMA queue of its core (HBM is the
// only memory the cores share), then raises the peer's barrier semaphore; a
// `nisa.peer_wait` waits for its barrier's count. Neither is a queue's
// instruction: they signal no queue semaphore.
//
// Speed (~50k instructions): per agent we keep the footprints of its
// instructions and a vector clock of what each agent already knows to be
// complete (its own earlier waits, transitively through the producers it
// waited for; a DMA also knows whatever earlier DMAs of the stream waited
// for, since it issues after them). A backward scan of agent A's
// instructions stops at the first conflict, at what is already known
// complete, or after kScanWindow instructions; in the last case it
// conservatively waits for the oldest instruction scanned, which covers
// anything older because A completes in order. A wait implied by another
// chosen wait (that producer itself waited for it) is dropped. Every wait
// points backwards in program order, so no deadlock.
//
//===----------------------------------------------------------------------===//
#include "passes/Footprint.h"
#include "passes/Passes.h"

#include "isa/Isa.h"

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

constexpr unsigned kNumAgents = isa::kNumOrderedAgents;
constexpr unsigned kFirstQueueAgent = isa::orderedAgent(isa::Engine::Dma, 0);
/// Instructions of one agent examined per hazard query before falling back
/// to a conservative wait; bounds the pass to O(n * agents * window).
constexpr int64_t kScanWindow = 256;

using Clock = std::array<int64_t, kNumAgents>; // per agent: positions done

void join(Clock &into, const Clock &other) {
  for (unsigned a = 0; a < kNumAgents; ++a)
    into[a] = std::max(into[a], other[a]);
}

struct Record {
  SmallVector<Footprint, 3> footprints;
  Clock known;   // what was complete once this instruction finished
  int64_t order; // position in program order
};

bool conflicts(ArrayRef<Footprint> a, ArrayRef<Footprint> b) {
  return llvm::any_of(a, [&](const Footprint &f) {
    return llvm::any_of(b, [&](const Footprint &g) { return f.conflicts(g); });
  });
}

struct SchedulePass : public trnc::impl::ScheduleBase<SchedulePass> {
  using ScheduleBase::ScheduleBase;

  void runOnOperation() override;

private:
  /// The latest instruction of `agent` at or after `floor` that conflicts
  /// with `fps` (or the oldest one scanned, when the window runs out), or -1.
  int64_t latestConflict(unsigned agent, int64_t floor,
                         ArrayRef<Footprint> fps);
  unsigned chooseQueue(ArrayRef<Footprint> fps);
  LogicalResult schedule(InstructionOpInterface inst);
  void scheduleBarrier(Operation *op);
  /// Sets `waits` on `op`; those that do not fit go on nops just before.
  void placeWaits(Operation *op, Engine engine, SmallVector<int64_t, 8> waits);

  std::array<std::vector<Record>, kNumAgents> streams;
  // What each agent's next instruction knows to be complete (positions + 1,
  // i.e. semaphore values), starting from nothing; `dmaIssue`: what the DMA
  // stream's next instruction knows, whatever its queue.
  std::array<Clock, kNumAgents> agentKnows{};
  Clock dmaIssue{};
  unsigned nextQueue = 0;
  bool collectiveQueueReserved = false;
  int64_t order = 0, fallbacks = 0, nops = 0;
};

int64_t SchedulePass::latestConflict(unsigned agent, int64_t floor,
                                     ArrayRef<Footprint> fps) {
  const std::vector<Record> &stream = streams[agent];
  int64_t stop =
      std::max<int64_t>(floor, (int64_t)stream.size() - kScanWindow);
  for (int64_t p = (int64_t)stream.size() - 1; p >= floor; --p) {
    if (p < stop) {
      ++fallbacks; // window exhausted: cover everything older
      return p;
    }
    if (conflicts(fps, stream[p].footprints))
      return p;
  }
  return -1;
}

unsigned SchedulePass::chooseQueue(ArrayRef<Footprint> fps) {
  int64_t bestOrder = -1;
  unsigned best = 0;
  // A program with collectives keeps their queue to them (Isa.h
  // kCollectiveQueue is the last one).
  unsigned queues = isa::kNumDmaQueues - (collectiveQueueReserved ? 1 : 0);
  for (unsigned q = 0; q < queues; ++q) {
    unsigned agent = kFirstQueueAgent + q;
    int64_t p = latestConflict(agent, dmaIssue[agent], fps);
    if (p >= 0 && streams[agent][p].order > bestOrder) {
      bestOrder = streams[agent][p].order;
      best = q;
    }
  }
  if (bestOrder >= 0)
    return best;
  return nextQueue++ % queues;
}

LogicalResult SchedulePass::schedule(InstructionOpInterface inst) {
  Operation *op = inst.getOperation();
  Builder b(&getContext());
  Record rec;
  rec.order = order++;
  for (const Access &a : inst.getAccesses()) {
    FailureOr<Footprint> fp = footprintOf(op, a, TileBytes::Allocated);
    if (failed(fp))
      return failure();
    rec.footprints.push_back(*fp);
  }

  auto engine = static_cast<isa::Engine>(inst.getExecutionEngine());
  unsigned queue = 0;
  // Every DMA transfer (dma_copy, dma_gather, dma_scatter) has a `queue`;
  // a collective keeps its own (Isa.h kCollectiveQueue).
  if (llvm::isa<DmaCopyOp, DmaGatherOp, DmaScatterOp>(op)) {
    // The list scheduler's queue (the one it timed the transfer on) stays.
    if (auto chosen = op->getAttrOfType<IntegerAttr>("queue"))
      queue = unsigned(chosen.getInt());
    else
      queue = chooseQueue(rec.footprints);
    op->setAttr("queue", b.getI64IntegerAttr(queue));
  } else if (auto collective = dyn_cast<CollectiveOp>(op)) {
    queue = unsigned(collective.getQueue());
  }
  unsigned self = isa::orderedAgent(engine, queue);
  Clock known = agentKnows[self];
  if (engine == isa::Engine::Dma)
    join(known, dmaIssue);
  Clock learned{}; // what the chosen waits teach
  SmallVector<std::pair<unsigned, int64_t>, 8> chosen;
  for (unsigned other = 0; other < kNumAgents; ++other) {
    if (other == self)
      continue;
    int64_t waitFor = latestConflict(other, known[other], rec.footprints);
    if (waitFor < 0)
      continue;
    chosen.push_back({other, waitFor});
    // Waiting for it teaches us everything it knew.
    Clock theirs = streams[other][waitFor].known;
    theirs[other] = std::max(theirs[other], waitFor + 1);
    join(known, theirs);
    join(learned, theirs);
  }
  if (engine == isa::Engine::Dma)
    join(dmaIssue, learned); // later DMAs issue after these waits were met

  // Drop a wait another chosen producer already waited for (transitively).
  SmallVector<int64_t, 8> waits;
  for (auto [a, pos] : chosen) {
    bool implied = llvm::any_of(chosen, [&, a = a, pos = pos](auto other) {
      return other.first != a &&
             streams[other.first][other.second].known[a] > pos;
    });
    if (!implied) {
      waits.push_back(isa::agentSemaphore(a));
      waits.push_back(pos + 1);
    }
  }

  known[self] = streams[self].size() + 1;
  rec.known = known;
  agentKnows[self] = known;
  streams[self].push_back(std::move(rec));

  placeWaits(op, inst.getExecutionEngine(), std::move(waits));
  op->setAttr("signal", b.getI64IntegerAttr(isa::agentSemaphore(self)));
  return success();
}

void SchedulePass::placeWaits(Operation *op, Engine engine,
                              SmallVector<int64_t, 8> waits) {
  Builder b(&getContext());
  // Waits that do not fit go on nops just before, on the same engine.
  size_t slots = 2 * isa::kMaxWaits;
  while (waits.size() > slots) {
    size_t n = std::min(slots, waits.size() - slots);
    OpBuilder builder(op);
    builder.create<NopOp>(
        op->getLoc(), engine,
        b.getDenseI64ArrayAttr(ArrayRef<int64_t>(waits).take_front(n)),
        IntegerAttr());
    waits.erase(waits.begin(), waits.begin() + n);
    ++nops;
  }
  if (!waits.empty())
    op->setAttr("waits", b.getDenseI64ArrayAttr(waits));
  else
    op->removeAttr("waits");
}

void SchedulePass::scheduleBarrier(Operation *op) {
  SmallVector<int64_t, 8> waits;
  if (auto wait = dyn_cast<PeerWaitOp>(op)) {
    waits = {int64_t(wait.getSemaphore()), int64_t(wait.getCount())};
    placeWaits(op, Engine::dma, std::move(waits));
    return;
  }
  auto signal = cast<PeerSignalOp>(op);
  // Every transfer issued so far is complete before the peer is told.
  Clock learned{};
  for (unsigned q = 0; q < isa::kNumDmaQueues; ++q) {
    unsigned agent = kFirstQueueAgent + q;
    int64_t issued = streams[agent].size();
    if (issued <= dmaIssue[agent])
      continue;
    waits.push_back(isa::agentSemaphore(agent));
    waits.push_back(issued);
    Clock theirs = streams[agent].back().known;
    theirs[agent] = issued;
    join(learned, theirs);
  }
  join(dmaIssue, learned); // later transfers issue after these waits
  placeWaits(op, Engine::dma, std::move(waits));
  op->setAttr("signal", Builder(op).getI64IntegerAttr(signal.getSemaphore()));
}

void SchedulePass::runOnOperation() {
  if (failed(requireUnrolled(getOperation(), getArgument())))
    return signalPassFailure();
  // Scheduling is recomputed from scratch: earlier wait-only nops go.
  for (std::vector<Record> &stream : streams)
    stream.clear();
  agentKnows = {};
  dmaIssue = {};
  nextQueue = 0;
  order = fallbacks = nops = 0;
  SmallVector<InstructionOpInterface> insts;
  collectiveQueueReserved = false;
  getOperation().walk([&](InstructionOpInterface inst) {
    if (llvm::isa<NopOp>(inst.getOperation()))
      inst->erase();
    else
      insts.push_back(inst);
    collectiveQueueReserved |= llvm::isa<CollectiveOp>(inst.getOperation());
  });
  for (InstructionOpInterface inst : insts)
    if (llvm::isa<PeerSignalOp, PeerWaitOp>(inst.getOperation()))
      scheduleBarrier(inst);
    else if (failed(schedule(inst)))
      return signalPassFailure();
  LLVM_DEBUG(llvm::dbgs() << "scan-window fallbacks: " << fallbacks
                          << ", wait-only nops: " << nops << "\n");
}

} // namespace
