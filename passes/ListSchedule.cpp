//===- ListSchedule.cpp - reorder instructions so engines and DMA overlap --===//
//
// `trnc-pipeline-list-schedule`: the lowerings emit each op's tiles as
// load, compute, store, one tile after the other, and each engine runs its
// stream in order. In that order a load of tile i+1 sits behind the store of
// tile i in the DMA stream, the store waits for tile i's compute, and so no
// load ever overlaps compute. This pass picks a new program order by list
// scheduling over the dependence graph with the simulator's own cost
// formulas (sim/CostModel.h), the way a software pipeliner would, but over
// the unrolled stream:
//
//  - Dependences: read/write, write/read and write/write on overlapping
//    bytes (Footprint.h; tiles are their own resources before allocation,
//    so only true dependences exist and the allocator later gives hoisted
//    tiles fresh addresses).
//  - Resources: the four compute engines, each in order; the DMA stream,
//    which dispatches in order onto 16 queues (a transfer takes the queue
//    that frees first; the semaphore pass assigns the real queues).
//  - Choice: each resource's next instruction is the highest-priority one
//    whose inputs are ready when the resource is free, else the one ready
//    first; the resource that can start soonest goes next. The priority is
//    the index, which keeps the lowering's intent (reuse distance) and its
//    memory footprint. A graph of up to kCriticalPathTrialLimit
//    instructions is scheduled a second time with transfers taken by their
//    longest path to the end (bottom level: a load feeding a long chain
//    goes before short ones), and the faster estimate wins (a [1024]^3
//    matmul: 40.6 -> 37.5 us; on the GPT step's big graphs index order is
//    the faster and the second schedule would cost a second of compile).
//    A collective goes first once its input is ready (it only waits on its
//    own queue; started late it would be exposed communication). A core's
//    half of a graph split over two logical cores is also scheduled with a
//    shallower prefetch (kSplitCorePrefetchShare), the faster estimate kept.
//  - Engines: an instruction several engines can run with the same result
//    (copies, memsets, tensor_tensor, tensor_scalar; GpSimd never touches
//    PSUM, Scalar's ALU only multiplies and adds) goes, once its inputs are
//    ready, to the engine that would finish it first.
//  - Memory: a tile is live from its first to its last access in the new
//    order, as the allocator will see it. The lowest-index instruction not
//    yet scheduled (the frontier) may always go: program order is always
//    possible. Any other instruction runs ahead of program order, and the
//    tiles it makes live are "ahead" until the frontier reaches their first
//    access in program order. It may go only while the ahead tiles stay
//    within a budget (a share of SBUF / PSUM: the prefetch depth) and, with
//    the most bytes program order itself keeps live between the frontier
//    and it, within 75% of the memory: so the new order never needs more than
//    program order's live bytes plus the ahead ones (hoisting a later row
//    tile's loads cannot starve the current tile's working set). A transfer
//    farther ahead than that 75% could hold (program order makes more bytes
//    live between the frontier and it) may fill only half the budget: the
//    rest stays for the instructions in between. Without that, loads ran
//    ~13 row tiles ahead in an AdamW step, their tiles held the budget, and
//    the next row tiles' compute, which needs new tiles too, could only run
//    at the frontier, one dependent instruction at a time.
//  - Placement: each tile gets its SBUF/PSUM address when the schedule
//    first touches it (TileArena, TilePlacement.h, time-aware: preferably
//    bytes freed before the instruction starts, else those freed first, and
//    the instruction waits for them, as the semaphores will make it), and
//    frees it at its last access. A tile that will live long (its last
//    access in program order is far past the frontier: a hoisted load of a
//    later layer's weights) is placed from the top of SBUF down, so that
//    scattered small tiles do not leave the working tiles without a gap. An
//    instruction whose new tiles find no gap waits; when the frontier's
//    find none, the schedule fails.
//  - Repair: when the frontier's tiles find no gap (fragmentation), the
//    schedule goes back to a checkpoint of its state and redoes the stretch
//    (schedule()); a schedule whose frontier still finds no gap is redone
//    placing small tiles apart.
//  - Scratch: each nisa.dram_alloc records when, in the kept order's
//    estimated timeline, its first access starts and its last ends
//    (kEstimatedLiveAttr), so that trnc-pack-scratch gives a buffer's bytes
//    to another only once they are estimated free.
//  - Depth: every schedule is computed at three prefetch budgets
//    (kPrefetchShares of memory-share) and the fastest estimate kept.
//  - Safety: the new order, with its addresses, is kept only if it is
//    estimated faster than program order; otherwise the original order is
//    restored (and the allocator places its tiles). The schedule never changes what is computed, only
//    the order of independent instructions.
//
//===----------------------------------------------------------------------===//
#include "passes/Footprint.h"
#include "passes/Passes.h"
#include "passes/TargetModel.h"
#include "passes/TilePlacement.h"
#include "passes/Tile/DeferredProducts.h"

#include "dialects/Nisa/NisaToIsa.h"
#include "sim/Collectives.h"
#include "sim/CostModel.h"
#include "sim/TensorWarmup.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/Support/Debug.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MathExtras.h"

#include <array>
#include <cmath>
#include <limits>
#include <memory>
#include <queue>

#define DEBUG_TYPE "trnc-pipeline-list-schedule"

namespace trnc {
#define GEN_PASS_DEF_LISTSCHEDULE
#include "passes/Passes.h.inc"
} // namespace trnc

using namespace mlir;
using namespace trnc;
using namespace trnc::nisa;

namespace {

/// The share of the prefetch budget a transfer may fill when it is far
/// ahead: program order makes more than the placeable share of the memory
/// live between the frontier and it (a later row tile's loads, a later
/// layer's weights). Near transfers and compute may fill the whole budget.
/// Measured on the bf16 GPT step's graphs, simulated (estimated): at 1.0
/// (no limit) AdamW 2.49 ms (2.41), forward 6.44 (6.43), backward 12.4
/// (12.33); at 0.5: 1.53 (1.53), 6.08 (6.06), 12.1 (12.13). Estimates for
/// AdamW: 1.53-1.54 ms at any share from 0.375 to 0.75, 2.20 ms at 0.875.
constexpr double kFarPrefetchShare = 0.5;

/// The prefetch depths every schedule is tried at, as shares of
/// `memory-share`; the fastest estimate is kept. Greedy list scheduling is
/// not monotonic in its budget: a deeper prefetch can take the DMA stream
/// and SBUF from a nearer consumer. Estimated (simulated within ~0.3%) on
/// the bf16 GPT step's backward at memory-share 0.75, 0.6, 0.45, 0.375:
/// 10943, 10693, 10782, 10938 us; its forward's best is 0.375 (5437 us,
/// 0.75 needs local repairs), AdamW's 0.6 (1517 against 1519 us), the demo
/// step's graphs' 0.375 (forward 181.0 against 192.1 us, backward 297.2
/// against 312.9 us). Each share is a schedule more to compute: ~0.6 s on
/// the 112k-instruction backward.
constexpr double kPrefetchShares[] = {1.0, 0.8, 0.5};

/// A core's half of a graph split over two logical cores (LNC=2: it holds
/// the cross-core barriers) is also scheduled with its prefetch budget at
/// this share of `memory-share`, and the faster estimate kept. The two
/// cores' transfers share the pair's HBM bandwidth, which a core's schedule
/// does not see: its deep prefetch delays the other core's urgent loads.
/// bf16 GPT step at lnc=2, simulated: forward 3319.3 -> 3107.4 us, backward
/// 6052.8 -> 5978.6 us (the lnc=1 graphs, with no barrier, are unchanged).
constexpr double kSplitCorePrefetchShare = 2.0 / 3.0;

/// Graphs up to this many instructions are also scheduled by critical path
/// (a second schedule; bigger ones keep program-order priority, which on the
/// GPT step's graphs is also the faster).
constexpr size_t kCriticalPathTrialLimit = 20000;

/// When a schedule's frontier finds no gap, it is retried with tiles
/// smaller than this (per-row statistics, constants) placed from the top of
/// SBUF down with the long-lived ones: scattered among the working tiles
/// by the cursor, they can leave no gap for a [128, 8192] fp32 tile (the
/// GPT step's backward). Not always: on its forward that costs 1 ms.
constexpr int64_t kSmallTileBytes = 1024;

/// The fewest instructions between two checkpoints of a schedule.
constexpr unsigned kMinCheckpointInterval = 64;

/// Tensor, Vector, Scalar, GpSimd (isa::Engine order), then the DMA stream.
constexpr unsigned kNumResources = 5;
constexpr unsigned kDmaResource = static_cast<unsigned>(isa::Engine::Dma);

struct Node {
  Operation *op;
  unsigned resource = 0;     // the engine chosen (program's until chosen)
  unsigned programEngine = 0; // the engine the lowering chose
  double durationNs = 0;    // compute: engine time; DMA: data phase only
  /// Time on each compute engine that may run it (negative: may not).
  std::array<double, kDmaResource> engineNs{-1, -1, -1, -1};
  isa::Instruction inst;    // for DMA bandwidth at dispatch
  bool costed = false;      // `inst` describes the op
  SmallVector<unsigned, 4> succs;
  unsigned pendingPreds = 0;
  double readyNs = 0;
  SmallVector<unsigned, 3> tiles; // distinct tiles it touches
};

struct TileState {
  int64_t bytes = 0; // aligned, per partition (PSUM: whole banks)
  bool psum = false;
  int64_t placeBytes = 0; // aligned, per partition, as placed
  unsigned accesses = 0, remaining = 0;
  unsigned first = 0, last = 0; // accessing nodes, in program order
  bool live = false;
  bool ahead = false; // live before the frontier reached `first`
};

/// The most bytes live at any point of an index range, in O(log n) (a
/// segment tree over the program order's live bytes per instruction).
class RangeMax {
public:
  void build(ArrayRef<int64_t> values) {
    n = values.size();
    tree.assign(2 * n, 0);
    for (size_t i = 0; i < n; ++i)
      tree[n + i] = values[i];
    for (size_t i = n; i-- > 1;)
      tree[i] = std::max(tree[2 * i], tree[2 * i + 1]);
  }
  /// max over [lo, hi] (inclusive).
  int64_t query(size_t lo, size_t hi) const {
    int64_t best = 0;
    for (lo += n, hi += n + 1; lo < hi; lo /= 2, hi /= 2) {
      if (lo & 1)
        best = std::max(best, tree[lo++]);
      if (hi & 1)
        best = std::max(best, tree[--hi]);
    }
    return best;
  }

private:
  size_t n = 0;
  std::vector<int64_t> tree;
};

using Waiting = std::priority_queue<std::pair<double, unsigned>,
                                    std::vector<std::pair<double, unsigned>>,
                                    std::greater<>>;
using Released =
    std::priority_queue<std::pair<double, unsigned>,
                        std::vector<std::pair<double, unsigned>>,
                        std::greater<>>;

/// Per resource: instructions whose predecessors are all scheduled, not yet
/// ready at the resource's current time (by ready time), and ready ones that
/// make no new tile live / that do (by program index); ready collectives go
/// before both (`urgent`): communication starts as soon as its data is
/// there, so it overlaps the compute that follows (as a collective stream
/// would), instead of waiting behind every earlier-indexed transfer.
struct ResourceQueues {
  Waiting waiting;
  Released releasedFree, releasedAlloc, urgent;
};

/// The compute engines that may run `op` with the same result: the
/// program's own, then the ISA's equivalents (nisa::equivalentEngines).
SmallVector<unsigned, 3> allowedEngines(Operation *op, unsigned programEngine) {
  SmallVector<unsigned, 3> engines{programEngine};
  for (Engine e : equivalentEngines(op))
    if (!llvm::is_contained(engines, static_cast<unsigned>(e)))
      engines.push_back(static_cast<unsigned>(e));
  return engines;
}

/// Which ready instruction a resource takes first.
enum class Priority {
  ProgramOrder, // the lowest index: the lowering's order and footprint
  CriticalPath, // transfers: the longest path to the end (bottom level),
                // so loads feeding long chains go first; engines: index
};

/// An order, with the engines and tile addresses it was timed with.
struct Schedule {
  SmallVector<unsigned> order; // node indices; empty when tiles did not fit
  std::vector<unsigned> engines;
  std::vector<int64_t> addresses; // per tile id
  std::vector<int> queues;        // per node: its DMA queue (-1: none)
  /// Per node: its estimated start and end (ns).
  std::vector<std::pair<double, double>> times;
  double makespanNs = 0;
  std::string failure; // why the order is empty
  unsigned rollbacks = 0; // local repairs (see schedule())
};

/// The scheduler's state that changes as a schedule goes, apart from the
/// nodes' own progress and the tiles' placement (a checkpoint copies it).
struct SchedulingProgress {
  std::array<double, kNumResources> freeAt{};
  // Work already given to each compute engine and not yet started.
  std::array<double, kNumResources> queuedNs{};
  std::array<double, isa::kNumDmaQueues> laneFree{};
  // Per node the DMA queue its transfer took.
  std::vector<int> queueOf;
  // The Tensor Engine's warm-up throttle and start-up latency: a matmul's
  // time depends on those before it, as in the simulator.
  sim::TensorWarmup tensorWarmup;
  std::array<int64_t, 2> liveBytes{}; // [sbuf, psum]
  std::array<int64_t, 2> aheadBytes{};
  /// The lowest-index node not scheduled yet, and which are.
  unsigned frontier = 0;
  std::vector<bool> scheduled;
  /// Ahead tiles by their first access in program order (min-heap).
  std::priority_queue<std::pair<unsigned, unsigned>,
                      std::vector<std::pair<unsigned, unsigned>>,
                      std::greater<>>
      aheadTiles;
  std::vector<TileState> tiles;
  double makespan = 0;
  unsigned startedCount = 0;
};

/// What a schedule's progress restores from (a local repair).
struct Checkpoint {
  struct NodeProgress {
    unsigned resource, pendingPreds;
    double durationNs, readyNs;
  };
  std::vector<NodeProgress> nodes;
  SchedulingProgress progress;
  std::array<TileArena, 2> arenas;
  std::vector<PlacedTile> placedTiles;
  std::array<ResourceQueues, kNumResources> queues;
  size_t orderSize;
};

class ListScheduler : private SchedulingProgress {
public:
  ListScheduler(func::FuncOp func, const MachineModel &model)
      : func(func), model(model),
        arenas{TileArena(model.sbufPartitionBytes, 0),
               TileArena(model.psumPartitionBytes, model.psumBankBytes)} {}

  /// Builds the graph; false when the function holds ops this pass does not
  /// know how to move (it then leaves the function alone).
  bool build();
  /// Schedules with `budget` (share of each on-chip memory) and `priority`;
  /// the order is empty when the tiles do not fit. `segregateSmall`: small
  /// tiles are placed top-down (kSmallTileBytes). Every `checkpointEvery`
  /// instructions (0: never) the state is saved for a local repair.
  Schedule schedule(double budget, Priority priority, bool segregateSmall,
                    unsigned checkpointEvery);
  /// The estimated length of the current program order.
  double originalMakespan();
  /// Puts the ops in the schedule's order, on its engines, at its addresses.
  void apply(const Schedule &schedule);
  /// Restores program order on the program's own engines.
  void restoreProgramOrder();
  /// Per node, program order's estimated start and end (originalMakespan).
  const std::vector<std::pair<double, double>> &programOrderTimes() const {
    return programTimes;
  }
  /// Records on each nisa.dram_alloc the estimated time its first access
  /// starts and its last ends, `kEstimatedLiveAttr` (trnc-pack-scratch
  /// shares bytes only between buffers whose times do not overlap).
  void annotateScratch(const std::vector<std::pair<double, double>> &times);
  size_t size() const { return nodes.size(); }

private:
  void addDependences();
  double dmaDurationNs(const Node &n, unsigned active) const;
  int64_t newLiveBytes(const Node &n, bool psum) const;
  /// Whether node `id` may go now without overfilling memory (see the
  /// file comment) and its new tiles find room; the frontier always may.
  bool fits(unsigned id);
  /// Places the tiles node `id` makes live, for a start at `readyNs`;
  /// returns how long the start must wait for their bytes to be freed, or
  /// nullopt when one finds no gap. `commit`: keep them (else a trial).
  std::optional<double> placeNewTiles(unsigned id, double readyNs,
                                      bool commit);
  /// Program order's live bytes per instruction, per memory space.
  void measureProgramLiveness();
  /// Each node's longest path to the end (`bottomLevel`), for the
  /// critical-path priority.
  void measureBottomLevels();
  void start(unsigned id, double startNs);
  /// Fresh scheduling state: nothing started, live tiles capped at `budget`;
  /// `placing`: tiles get addresses as they go live.
  void reset(double budget, bool placing);
  /// The scheduling state with `queues` and the order's length, and back.
  Checkpoint save(const std::array<ResourceQueues, kNumResources> &queues,
                  size_t orderSize) const;
  void restore(const Checkpoint &c,
               std::array<ResourceQueues, kNumResources> &queues);
  /// The prefetch budget (bytes of ahead tiles) at `share` of each memory.
  void setBudget(double share);

  func::FuncOp func;
  const MachineModel &model;
  std::vector<Node> nodes;
  /// Per node: when the current schedule (or program order, after
  /// originalMakespan) starts and ends it.
  std::vector<std::pair<double, double>> timeOf;
  std::vector<std::pair<double, double>> programTimes;
  std::vector<TileState> tileStates;
  DenseMap<Value, unsigned> tileIds;
  std::vector<AllocOp> tileOps; // by tile id
  std::vector<Footprint> footprints; // flattened, per node
  std::vector<unsigned> footprintBegin;

  // Scheduling state (besides SchedulingProgress's).
  // Queues transfers may take (the last is the collectives' when there are
  // any).
  unsigned lanes = isa::kNumDmaQueues;
  std::array<int64_t, 2> budgetBytes{}; // for ahead tiles
  std::array<int64_t, 2> capacityBytes{};
  std::array<RangeMax, 2> programLive;
  /// Per memory, the bytes of the tiles program order makes live before
  /// each instruction (prefix sums over first accesses, one entry more).
  std::array<std::vector<int64_t>, 2> programAllocated;
  std::vector<Node> working;
  std::vector<double> bottomLevel;
  std::vector<double> priority; // per node: lower goes first among ready ones
  // Placement (when `placing`): one arena per memory, a placed tile per
  // tile id (its live range in the new order's indices).
  bool placing = false;
  bool segregateSmall = false;
  std::array<TileArena, 2> arenas;
  std::vector<PlacedTile> placedTiles;
};

bool ListScheduler::build() {
  Block &body = func.getBody().front();
  // Allocations first (in their order): every instruction may then move.
  Operation *firstInst = nullptr;
  for (Operation &op : body) {
    if (llvm::isa<AllocOp, DramAllocOp>(op) || op.hasTrait<OpTrait::IsTerminator>())
      continue;
    if (!llvm::isa<InstructionOpInterface>(op))
      return false;
    if (!firstInst)
      firstInst = &op;
  }
  if (!firstInst)
    return false;
  SmallVector<Operation *> allocs;
  for (Operation &op : body)
    if (llvm::isa<AllocOp, DramAllocOp>(op))
      allocs.push_back(&op);
  for (Operation *op : allocs)
    op->moveBefore(firstInst);

  for (Operation &op : body) {
    auto inst = dyn_cast<InstructionOpInterface>(op);
    if (!inst)
      continue;
    Node n;
    n.op = &op;
    n.resource = static_cast<unsigned>(inst.getExecutionEngine());
    n.costed = describeForCost(&op, n.inst);
    n.programEngine = n.resource;
    if (n.costed && n.resource != kDmaResource) {
      for (unsigned e : allowedEngines(&op, n.resource)) {
        isa::Instruction on = n.inst;
        on.engine = static_cast<isa::Engine>(e);
        uint64_t cycles = on.opcode == isa::Opcode::Matmul
                              ? sim::matmulCycles(model, on)
                              : sim::vectorLikeCycles(model, on);
        n.engineNs[e] = double(cycles) / sim::engineClockGHz(model, on.engine);
      }
      n.durationNs = n.engineNs[n.resource];
    }
    footprintBegin.push_back(footprints.size());
    for (const Access &a : inst.getAccesses()) {
      FailureOr<Footprint> fp = footprintOf(&op, a, TileBytes::Relative);
      if (failed(fp))
        return false;
      footprints.push_back(*fp);
      if (!llvm::isa<TileType>(a.buffer.getType()))
        continue;
      auto [it, inserted] = tileIds.try_emplace(a.buffer, tileStates.size());
      if (inserted) {
        auto type = cast<TileType>(a.buffer.getType());
        TileState t;
        t.bytes = placedBytes(type);
        t.psum = type.getSpace() == MemorySpace::psum;
        t.placeBytes = t.bytes;
        tileOps.push_back(a.buffer.getDefiningOp<AllocOp>());
        // PSUM tiles may not cross a bank, and a dozen small accumulators
        // spread over the 8 banks leave none free for a full one: count
        // each PSUM tile as the whole banks it touches.
        if (t.psum)
          t.bytes = llvm::alignTo(t.bytes, model.psumBankBytes);
        tileStates.push_back(t);
      }
      if (!llvm::is_contained(n.tiles, it->second)) {
        n.tiles.push_back(it->second);
        TileState &t = tileStates[it->second];
        if (t.accesses++ == 0)
          t.first = nodes.size();
        t.last = nodes.size();
      }
    }
    nodes.push_back(std::move(n));
  }
  footprintBegin.push_back(footprints.size());
  if (llvm::any_of(nodes,
                   [](const Node &n) { return llvm::isa<CollectiveOp>(n.op); }))
    lanes = isa::kNumDmaQueues - 1;
  addDependences();
  measureProgramLiveness();
  return true;
}

void ListScheduler::addDependences() {
  struct Accesses {
    std::vector<std::pair<unsigned, unsigned>> reads, writes; // node, fp
  };
  DenseMap<const void *, Accesses> byResource;
  std::vector<unsigned> lastEdgeTo(nodes.size(), ~0u);
  std::optional<unsigned> lastFence;
  std::vector<unsigned> sinceFence; // transfers since it
  for (unsigned i = 0; i < nodes.size(); ++i) {
    auto edge = [&](unsigned from) {
      if (from == i || lastEdgeTo[from] == i)
        return;
      lastEdgeTo[from] = i;
      nodes[from].succs.push_back(i);
      ++nodes[i].pendingPreds;
    };
    for (unsigned f = footprintBegin[i]; f < footprintBegin[i + 1]; ++f) {
      const Footprint &fp = footprints[f];
      Accesses &acc = byResource[fp.resource];
      for (auto [node, g] : acc.writes)
        if (fp.conflicts(footprints[g])) // g writes
          edge(node);
      if (fp.isWrite)
        for (auto [node, g] : acc.reads)
          if (fp.overlaps(footprints[g]))
            edge(node);
    }
    for (unsigned f = footprintBegin[i]; f < footprintBegin[i + 1]; ++f) {
      Accesses &acc = byResource[footprints[f].resource];
      (footprints[f].isWrite ? acc.writes : acc.reads).push_back({i, f});
    }
    // A cross-core barrier's halves (LNC=2) fence the transfers: each stays
    // on its side, so both cores pass their barriers in the same order
    // (SplitLogicalCores.cpp).
    if (nodes[i].resource == kDmaResource) {
      if (llvm::isa<PeerSignalOp, PeerWaitOp>(nodes[i].op)) {
        for (unsigned t : sinceFence)
          edge(t);
        sinceFence.clear();
      } else if (lastFence) {
        edge(*lastFence);
      }
      sinceFence.push_back(i);
      if (llvm::isa<PeerSignalOp, PeerWaitOp>(nodes[i].op))
        lastFence = i;
    }
  }
}

double ListScheduler::dmaDurationNs(const Node &n, unsigned active) const {
  // The simulator's DMA model (sim/Timing.cpp): fixed cost, then bytes at the
  // transfer's own rate capped by an equal share of the core's bandwidth.
  if (!n.costed || !isa::isDmaTransfer(n.inst.opcode))
    return 0;
  if (n.inst.opcode == isa::Opcode::Collective) // its ring model instead
    return sim::collectiveNs(model, n.inst);
  double bw = std::min(sim::dmaAloneBytesPerNs(model, n.inst),
                       sim::dmaSharedCapBytesPerNs(model, n.inst) / active);
  return model.dmaFixedNs + double(sim::dmaBytes(n.inst)) / bw;
}

int64_t ListScheduler::newLiveBytes(const Node &n, bool psum) const {
  int64_t bytes = 0;
  for (unsigned t : n.tiles)
    if (!tiles[t].live && tiles[t].psum == psum)
      bytes += tiles[t].bytes;
  return bytes;
}

void ListScheduler::measureProgramLiveness() {
  for (bool psum : {false, true}) {
    std::vector<int64_t> delta(nodes.size() + 1, 0);
    for (const TileState &t : tileStates)
      if (t.accesses && t.psum == psum) {
        delta[t.first] += t.bytes;
        delta[t.last + 1] -= t.bytes;
      }
    std::vector<int64_t> live(nodes.size());
    int64_t sum = 0;
    for (size_t i = 0; i < nodes.size(); ++i)
      live[i] = sum += delta[i];
    programLive[psum].build(live);
    std::vector<int64_t> &allocated = programAllocated[psum];
    allocated.assign(nodes.size() + 1, 0);
    for (const TileState &t : tileStates)
      if (t.accesses && t.psum == psum)
        allocated[t.first + 1] += t.bytes;
    for (size_t i = 0; i < nodes.size(); ++i)
      allocated[i + 1] += allocated[i];
  }
}

bool ListScheduler::fits(unsigned id) {
  if (id == frontier)
    return true;
  for (bool psum : {false, true}) {
    int64_t add = 0;
    for (unsigned t : working[id].tiles)
      if (!tiles[t].live && tiles[t].psum == psum && tiles[t].first > frontier)
        add += tiles[t].bytes;
    if (!add)
      continue;
    int64_t ahead = aheadBytes[psum] + add;
    // A transfer that far ahead fills only part of the budget.
    const std::vector<int64_t> &allocated = programAllocated[psum];
    bool far = working[id].resource == kDmaResource &&
               allocated[id + 1] - allocated[frontier + 1] >
                   capacityBytes[psum];
    int64_t budget = far ? int64_t(kFarPrefetchShare * budgetBytes[psum])
                         : budgetBytes[psum];
    if (ahead > budget ||
        programLive[psum].query(frontier, id) + ahead > capacityBytes[psum])
      return false;
  }
  return !placing || placeNewTiles(id, 0, /*commit=*/false).has_value();
}

std::optional<double> ListScheduler::placeNewTiles(unsigned id, double readyNs,
                                                   bool commit) {
  if (!placing)
    return 0.0;
  struct Trial {
    TileArena *arena;
    PlacedTile *tile;
    int64_t cursorBefore;
  };
  // A trial of one new tile per memory only asks whether a gap holds it.
  if (!commit) {
    unsigned newTiles[2] = {0, 0};
    for (unsigned t : working[id].tiles)
      newTiles[tiles[t].psum] += !tiles[t].live;
    if (newTiles[0] <= 1 && newTiles[1] <= 1) {
      for (unsigned t : working[id].tiles)
        if (!tiles[t].live && !arenas[tiles[t].psum].hasRoom(tiles[t].placeBytes))
          return std::nullopt;
      return 0.0;
    }
  }
  SmallVector<Trial, 3> placedNow;
  std::optional<double> wait = 0.0;
  for (unsigned t : working[id].tiles) {
    const TileState &s = tiles[t];
    if (s.live)
      continue;
    TileArena &arena = arenas[s.psum];
    PlacedTile &p = placedTiles[t];
    // Long-lived in the new order: kept long by the program, or hoisted far
    // ahead of its use (a later layer's weights): placed top-down, out of
    // the way of the working tiles.
    bool longLived =
        s.last - frontier > kLongLived ||
        (segregateSmall && p.size < kSmallTileBytes);
    std::optional<int64_t> addr = arena.place(p.size, longLived, readyNs);
    if (!addr) {
      wait = std::nullopt;
      break;
    }
    p.address = *addr;
    *wait = std::max(*wait, arena.freedBy(*addr, p.size) - readyNs);
    placedNow.push_back({&arena, &p, arena.getCursor()});
    arena.insert(&p, longLived);
  }
  if (!wait || !commit)
    for (const Trial &trial : llvm::reverse(placedNow))
      trial.arena->retract(trial.tile, trial.cursorBefore);
  return wait;
}

void ListScheduler::start(unsigned id, double startNs) {
  Node &n = working[id];
  double finish;
  // Its new tiles' addresses; it waits until their bytes are free.
  std::optional<double> wait = placeNewTiles(id, startNs, /*commit=*/true);
  assert(wait && "list scheduler: a scheduled tile found no gap");
  startNs += std::max(0.0, *wait);
  unsigned position = startedCount++;
  if (n.resource == kDmaResource) {
    // In-order dispatch; the transfer runs on the queue that frees first.
    freeAt[kDmaResource] = startNs;
    auto lane = std::min_element(laneFree.begin(), laneFree.begin() + lanes);
    double begin = std::max(startNs, *lane);
    queueOf[id] = lane - laneFree.begin();
    unsigned active = 1;
    for (unsigned q = 0; q < lanes; ++q)
      active += laneFree[q] > begin;
    finish = begin + dmaDurationNs(n, active);
    *lane = finish;
  } else {
    double duration = n.durationNs;
    if (n.costed && n.inst.opcode == isa::Opcode::Matmul)
      duration = tensorWarmup.matmulNs(model, n.inst, startNs);
    finish = startNs + duration;
    freeAt[n.resource] = finish;
    queuedNs[n.resource] = std::max(0.0, queuedNs[n.resource] - n.durationNs);
  }
  makespan = std::max(makespan, finish);
  timeOf[id] = {startNs, finish};
  for (unsigned t : n.tiles) {
    TileState &s = tiles[t];
    if (!s.live) {
      s.live = true;
      liveBytes[s.psum] += s.bytes;
      placedTiles[t].first = position;
      if (id != frontier && s.first > frontier) {
        s.ahead = true;
        aheadBytes[s.psum] += s.bytes;
        aheadTiles.push({s.first, t});
      }
    }
    if (--s.remaining == 0) {
      s.live = false;
      liveBytes[s.psum] -= s.bytes;
      placedTiles[t].last = position;
      if (placing)
        arenas[s.psum].release(&placedTiles[t], finish);
      if (s.ahead) {
        s.ahead = false;
        aheadBytes[s.psum] -= s.bytes;
      }
    }
  }
  // Advance the frontier; tiles whose first access it passed are no longer
  // ahead (program order holds them live from here on too).
  scheduled[id] = true;
  while (frontier < scheduled.size() && scheduled[frontier])
    ++frontier;
  while (!aheadTiles.empty() && aheadTiles.top().first <= frontier) {
    TileState &s = tiles[aheadTiles.top().second];
    aheadTiles.pop();
    if (s.ahead) {
      s.ahead = false;
      aheadBytes[s.psum] -= s.bytes;
    }
  }
  for (unsigned s : n.succs)
    working[s].readyNs = std::max(working[s].readyNs, finish);
}

void ListScheduler::reset(double budget, bool place) {
  working = nodes;
  tiles = tileStates;
  for (TileState &t : tiles)
    t.remaining = t.accesses;
  freeAt.fill(0);
  queuedNs.fill(0);
  tensorWarmup = {};
  laneFree.fill(0);
  queueOf.assign(working.size(), -1);
  timeOf.assign(working.size(), {0.0, 0.0});
  liveBytes = {0, 0};
  aheadBytes = {0, 0};
  aheadTiles = {};
  frontier = 0;
  scheduled.assign(working.size(), false);
  capacityBytes = {int64_t(kPlaceableShare * model.sbufPartitionBytes),
                   int64_t(kPlaceableShare * model.psumPartitionBytes)};
  budgetBytes = {int64_t(budget * model.sbufPartitionBytes),
                 int64_t(budget * model.psumPartitionBytes)};
  makespan = 0;
  startedCount = 0;
  placing = place;
  for (TileArena &arena : arenas)
    arena.reset(/*bestFit=*/false, /*timeAware=*/true);
  placedTiles.clear();
  for (unsigned t = 0; t < tiles.size(); ++t)
    placedTiles.push_back({tileOps[t], -1, -1, tiles[t].placeBytes});
}

void ListScheduler::setBudget(double share) {
  budgetBytes = {int64_t(share * model.sbufPartitionBytes),
                 int64_t(share * model.psumPartitionBytes)};
}

Checkpoint
ListScheduler::save(const std::array<ResourceQueues, kNumResources> &queues,
                    size_t orderSize) const {
  Checkpoint c{{}, *this, arenas, placedTiles, queues, orderSize};
  c.nodes.reserve(working.size());
  for (const Node &n : working)
    c.nodes.push_back({n.resource, n.pendingPreds, n.durationNs, n.readyNs});
  return c;
}

void ListScheduler::restore(const Checkpoint &c,
                            std::array<ResourceQueues, kNumResources> &queues) {
  for (auto [n, p] : llvm::zip_equal(working, c.nodes)) {
    n.resource = p.resource;
    n.pendingPreds = p.pendingPreds;
    n.durationNs = p.durationNs;
    n.readyNs = p.readyNs;
  }
  static_cast<SchedulingProgress &>(*this) = c.progress;
  // The arenas hold pointers into placedTiles: its contents are copied
  // back into the same storage (same size), so they stay valid.
  std::copy(c.placedTiles.begin(), c.placedTiles.end(), placedTiles.begin());
  arenas = c.arenas;
  queues = c.queues;
}

/// Pops the entries of nodes already scheduled (the frontier, taken out of
/// order) off the tops of `q`'s queues.
static void dropScheduled(ResourceQueues &q, const std::vector<bool> &done) {
  while (!q.waiting.empty() && done[q.waiting.top().second])
    q.waiting.pop();
  for (Released *r : {&q.releasedFree, &q.releasedAlloc, &q.urgent})
    while (!r->empty() && done[r->top().second])
      r->pop();
}

void ListScheduler::measureBottomLevels() {
  // Each node's longest path to the end (its own time included): the
  // critical-path priority.
  bottomLevel.assign(nodes.size(), 0);
  for (unsigned i = nodes.size(); i-- > 0;) {
    double own = nodes[i].resource == kDmaResource ? dmaDurationNs(nodes[i], 1)
                                                     : nodes[i].durationNs;
    double below = 0;
    for (unsigned s : nodes[i].succs)
      below = std::max(below, bottomLevel[s]);
    bottomLevel[i] = own + below;
  }
}

Schedule ListScheduler::schedule(double budget, Priority kind,
                                 bool segregate, unsigned checkpointEvery) {
  reset(budget, /*placing=*/true);
  segregateSmall = segregate;
  // Local repair: the state is saved every `checkpointEvery` instructions
  // (the last two saves are kept). When the frontier's tiles find no gap,
  // the schedule goes back to the newer save and redoes the stretch up to
  // the failure with small tiles placed apart (kSmallTileBytes), then to
  // the older one with half the prefetch budget as well, before giving up:
  // fragmentation met late in a graph then costs a local repair, not the
  // whole schedule (the GPT step's forward, with its logits' matmul
  // reordered, failed 250 instructions before its end and its fallback
  // schedule was 2% slower).
  std::optional<Checkpoint> older, newer;
  unsigned rollbacks = 0, throttledUntil = 0, depth = 0;
  if (kind == Priority::CriticalPath && bottomLevel.empty())
    measureBottomLevels();
  priority.resize(working.size());
  for (unsigned i = 0; i < working.size(); ++i)
    priority[i] = kind == Priority::CriticalPath &&
                          working[i].resource == kDmaResource
                      ? -bottomLevel[i]
                      : double(i);

  std::array<ResourceQueues, kNumResources> queues;
  auto push = [&](unsigned id) {
    Node &n = working[id];
    // Engine choice: the one that would finish it first (program's on ties).
    double bestEnd = -1;
    for (unsigned e = 0; e < kDmaResource; ++e) {
      if (n.engineNs[e] < 0)
        continue;
      double end =
          std::max(freeAt[e] + queuedNs[e], n.readyNs) + n.engineNs[e];
      if (bestEnd < 0 || end < bestEnd ||
          (end == bestEnd && e == n.programEngine)) {
        bestEnd = end;
        n.resource = e;
        n.durationNs = n.engineNs[e];
      }
    }
    if (n.resource != kDmaResource)
      queuedNs[n.resource] += n.durationNs;
    queues[n.resource].waiting.push({n.readyNs, id});
  };
  for (unsigned i = 0; i < working.size(); ++i)
    if (working[i].pendingPreds == 0)
      push(i);

  SmallVector<unsigned> order;
  order.reserve(working.size());
  if (checkpointEvery)
    newer = save(queues, 0);
  while (order.size() < working.size()) {
    // Each resource's candidate and when it could start.
    struct Choice {
      unsigned resource, id;
      double startNs;
      int from; // 0 waiting, 1 releasedFree, 2 releasedAlloc, 3 urgent,
                // 4 the frontier (left in its queue, dropped when reached)
    };
    std::optional<Choice> best, forced;
    auto better = [&](const Choice &a, const std::optional<Choice> &b) {
      return !b || a.startNs < b->startNs ||
             (a.startNs == b->startNs && priority[a.id] < priority[b->id]);
    };
    for (unsigned r = 0; r < kNumResources; ++r) {
      ResourceQueues &q = queues[r];
      dropScheduled(q, scheduled);
      double t = freeAt[r];
      while (!q.waiting.empty() && q.waiting.top().first <= t) {
        unsigned id = q.waiting.top().second;
        q.waiting.pop();
        if (scheduled[id])
          continue;
        bool allocates = newLiveBytes(working[id], false) ||
                         newLiveBytes(working[id], true);
        if (llvm::isa<CollectiveOp>(working[id].op))
          q.urgent.push({double(id), id}); // HBM only: never allocates a tile
        else
          (allocates ? q.releasedAlloc : q.releasedFree).push({priority[id], id});
      }
      std::optional<Choice> c;
      if (!q.urgent.empty())
        c = Choice{r, q.urgent.top().second, t, 3};
      else if (!q.releasedFree.empty())
        c = Choice{r, q.releasedFree.top().second, t, 1};
      if (!q.releasedAlloc.empty() && (!c || c->from != 3)) {
        unsigned id = q.releasedAlloc.top().second;
        if (fits(id)) {
          if (!c || priority[id] < priority[c->id])
            c = Choice{r, id, t, 2};
        } else if (!forced || id < forced->id) {
          forced = Choice{r, id, t, 2};
        }
      }
      if (!c && !q.waiting.empty()) {
        auto [ready, id] = q.waiting.top();
        Choice w{r, id, std::max(t, ready), 0};
        if (fits(id))
          c = w;
        else if (!forced || id < forced->id)
          forced = w;
      }
      if (c && better(*c, best))
        best = c;
    }
    // The frontier may always go (it may sit in a queue behind candidates
    // the memory rule holds back); on a tie the choice above stands (a
    // ready collective goes first).
    const Node &f = working[frontier];
    Choice atFrontier{f.resource, frontier,
                      std::max(freeAt[f.resource], f.readyNs), 4};
    if (!best || atFrontier.startNs < best->startNs)
      best = atFrontier;
    if (!best)
      best = forced; // every resource blocked by the budget: progress
    assert(best && "list scheduler: dependence cycle");
    bool stuck = best->id == frontier &&
                 !placeNewTiles(frontier, best->startNs, /*commit=*/false);
    if (stuck && depth < 2 && newer) {
      // Back to a checkpoint, hoisting less up to here.
      const Checkpoint &c = *(depth == 1 && older ? older : newer);
      ++depth;
      ++rollbacks;
      throttledUntil = std::max(throttledUntil, frontier + 1);
      restore(c, queues);
      order.resize(c.orderSize);
      segregateSmall = true;
      if (depth == 2) {
        setBudget(budget / 2);
        if (older) { // the newer one is past the state restored
          newer = std::move(older);
          older.reset();
        }
      }
      continue;
    }
    if (stuck) {
      // Fragmented: program order's own tiles find no gap.
      Schedule failed;
      llvm::raw_string_ostream os(failed.failure);
      os << "no gap for the tiles of instruction " << frontier << " ("
         << working[frontier].op->getName() << ", " << order.size()
         << " scheduled):";
      for (unsigned t : working[frontier].tiles)
        if (!tiles[t].live)
          os << " " << placedTiles[t].size << " B";
      const TileArena &arena = arenas[0];
      os << " per partition; SBUF holds " << arena.liveBytes()
         << " B live, largest gap " << arena.largestGap() << " B";
      return failed;
    }
    ResourceQueues &q = queues[best->resource];
    (best->from == 0   ? (void)q.waiting.pop()
     : best->from == 1 ? q.releasedFree.pop()
     : best->from == 2 ? q.releasedAlloc.pop()
     : best->from == 3 ? q.urgent.pop()
                       : void()); // the frontier's entry: dropped later
    start(best->id, best->startNs);
    order.push_back(best->id);
    for (unsigned s : working[best->id].succs)
      if (--working[s].pendingPreds == 0)
        push(s);
    if (depth && frontier >= throttledUntil) {
      depth = 0; // repaired: the run's own budget and placement again
      setBudget(budget);
      segregateSmall = segregate;
    }
    if (!depth && checkpointEvery && order.size() % checkpointEvery == 0) {
      older = std::move(newer);
      newer = save(queues, order.size());
    }
  }
  Schedule result;
  result.order = std::move(order);
  result.makespanNs = makespan;
  result.rollbacks = rollbacks;
  for (const Node &n : working)
    result.engines.push_back(n.resource);
  for (const PlacedTile &t : placedTiles)
    result.addresses.push_back(t.address);
  result.queues = queueOf;
  result.times = timeOf;
  return result;
}

double ListScheduler::originalMakespan() {
  // Program order as the schedule: each instruction starts when its
  // resource is free and its inputs are ready.
  reset(/*budget=*/1.0, /*placing=*/false);
  for (unsigned i = 0; i < working.size(); ++i)
    start(i, std::max(freeAt[working[i].resource], working[i].readyNs));
  programTimes = timeOf;
  return makespan;
}

void ListScheduler::annotateScratch(
    const std::vector<std::pair<double, double>> &times) {
  llvm::MapVector<Value, std::pair<double, double>> live;
  for (unsigned id = 0; id < nodes.size(); ++id)
    for (Value v : nodes[id].op->getOperands())
      if (v.getDefiningOp<DramAllocOp>()) {
        auto [it, fresh] = live.try_emplace(v, times[id]);
        it->second.first = std::min(it->second.first, times[id].first);
        it->second.second = std::max(it->second.second, times[id].second);
      }
  Builder b(func.getContext());
  for (auto &[v, t] : live)
    v.getDefiningOp()->setAttr(
        kEstimatedLiveAttr,
        b.getDenseI64ArrayAttr({int64_t(std::floor(t.first)),
                                int64_t(std::ceil(t.second))}));
}

void ListScheduler::apply(const Schedule &schedule) {
  Operation *terminator = func.getBody().front().getTerminator();
  MLIRContext *ctx = func.getContext();
  Builder b(ctx);
  for (unsigned id : schedule.order) {
    Operation *op = nodes[id].op;
    op->moveBefore(terminator);
    unsigned engine = schedule.engines[id];
    if (llvm::isa<DmaCopyOp, DmaGatherOp, DmaScatterOp>(op) &&
        schedule.queues[id] >= 0)
      op->setAttr("queue", b.getI64IntegerAttr(schedule.queues[id]));
    if (engine != kDmaResource && op->hasAttr("engine"))
      op->setAttr("engine",
                  EngineAttr::get(ctx, static_cast<Engine>(engine)));
  }
  for (unsigned t = 0; t < tileOps.size(); ++t)
    tileOps[t].setAddressAttr(b.getI64IntegerAttr(schedule.addresses[t]));
}

void ListScheduler::restoreProgramOrder() {
  Operation *terminator = func.getBody().front().getTerminator();
  MLIRContext *ctx = func.getContext();
  for (const Node &n : nodes) {
    n.op->moveBefore(terminator);
    if (n.programEngine != kDmaResource && n.op->hasAttr("engine"))
      n.op->setAttr("engine", EngineAttr::get(
                                  ctx, static_cast<Engine>(n.programEngine)));
  }
}

/// How moveWeightGradients moved the marked instructions.
struct MovedWeightGradients {
  unsigned anchored = 0; // moved before their anchors
  unsigned spread = 0;   // spread over the stretch after the last data gradient
  unsigned over = 0;     // the instructions of that stretch
  bool any() const { return anchored + spread > 0; }
};

/// Moves each instruction the lowering marked as a weight gradient's
/// (tile::kDeferUntilAttr) before the instruction marked as its anchor,
/// keeping their order. Those with no anchor (no data gradient after them:
/// the first layer's weight gradients, after which only norm and embedding
/// gradients remain) are spread evenly, by instruction count, over the
/// instructions from the first of them to the end: moved behind all of them,
/// a product's loads would wait in the DMA stream behind every transfer of
/// that Vector- and DMA-bound stretch while the Tensor Engine idles; left in
/// place, they hold that stretch back. The bf16 GPT step's backward: 10631
/// -> 10518 us simulated (the c_attn weight gradient of layer 0 beside the
/// last layer norm's gradient and the embedding's).
MovedWeightGradients moveWeightGradients(func::FuncOp func) {
  Block &block = func.getBody().front();
  Operation *end = block.getTerminator();
  DenseMap<int64_t, Operation *> anchorOf;
  SmallVector<Operation *> marked;
  for (Operation &op : block) {
    if (auto ids = op.getAttrOfType<DenseI64ArrayAttr>(tile::kDeferAnchorAttr))
      for (int64_t id : ids.asArrayRef())
        anchorOf.try_emplace(id, &op);
    if (op.hasAttr(tile::kDeferUntilAttr))
      marked.push_back(&op);
  }
  MovedWeightGradients moved;
  SmallVector<Operation *> last; // no anchor
  for (Operation *op : marked) {
    int64_t id = op->getAttrOfType<IntegerAttr>(tile::kDeferUntilAttr).getInt();
    if (Operation *anchor = anchorOf.lookup(id)) {
      op->moveBefore(anchor);
      ++moved.anchored;
    } else {
      last.push_back(op);
    }
  }
  if (last.empty())
    return moved;
  // The instructions from the first of them on, and for each of them how
  // many of those it came after (it may read what they wrote: a transpose
  // the weight gradient shares with a later lowering is not marked).
  llvm::DenseSet<Operation *> isLast(last.begin(), last.end());
  SmallVector<Operation *> host;
  SmallVector<size_t> after;
  for (Operation *op = last.front(); op != end; op = op->getNextNode()) {
    if (isLast.contains(op))
      after.push_back(host.size());
    else
      host.push_back(op); // allocations are above every instruction (build())
  }
  // The k-th of n goes before host instruction k * h / n, or later: in
  // order, and never before an instruction it came after.
  size_t n = last.size(), h = host.size();
  for (size_t k = 0; k < n; ++k) {
    size_t at = std::max(k * h / n, after[k]);
    last[k]->moveBefore(at < h ? host[at] : end);
  }
  moved.spread = n;
  moved.over = h;
  return moved;
}

void dropDeferralMarks(func::FuncOp func) {
  for (Operation &op : func.getBody().front()) {
    op.removeAttr(tile::kDeferUntilAttr);
    op.removeAttr(tile::kDeferAnchorAttr);
  }
}

struct ListSchedulePass
    : public trnc::impl::ListScheduleBase<ListSchedulePass> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    std::optional<MachineModel> model = targetModel(getOperation(), target);
    if (!model)
      return signalPassFailure();
    if (func.isExternal() || !func.getBody().hasOneBlock())
      return;
    if (failed(requireUnrolled(func, getArgument())))
      return signalPassFailure();
    ListScheduler scheduler(func, *model);
    if (!scheduler.build())
      return;
    double before = scheduler.originalMakespan();
    // Program-order priority first; on a graph small enough for a second
    // schedule to cost little, also the critical path's. Per priority, the
    // prefetch depths of kPrefetchShares; a core of a split graph also a
    // shallower one (kSplitCorePrefetchShare). The fastest estimate wins.
    std::optional<Schedule> best;
    unsigned checkpointEvery =
        checkpoints ? std::max<unsigned>(kMinCheckpointInterval,
                                         llvm::divideCeil(scheduler.size(), checkpoints))
                    : 0;
    std::string trials; // for `report`
    llvm::raw_string_ostream log(trials);
    double bestIndexBudget = memoryShare;
    ListScheduler *owner = &scheduler; // the scheduler `best` is of
    // Logs a schedule and keeps it if it is the fastest yet; whether kept.
    auto consider = [&](Schedule s, ListScheduler *from) {
      if (s.order.empty()) {
        log << s.failure;
        return false;
      }
      log << llvm::formatv("{0:F0} ns", s.makespanNs).str();
      if (s.rollbacks)
        log << " (" << s.rollbacks << " local repairs)";
      if (best && s.makespanNs >= best->makespanNs)
        return false;
      best = std::move(s);
      owner = from;
      return true;
    };
    for (Priority priority : {Priority::ProgramOrder, Priority::CriticalPath}) {
      if (priority == Priority::CriticalPath &&
          scheduler.size() > kCriticalPathTrialLimit)
        break;
      // Each prefetch depth of kPrefetchShares; at each, when fragmented
      // (the frontier's tiles find no gap, even after local repairs), small
      // tiles out of the way.
      for (double share : kPrefetchShares) {
        double budget = memoryShare * share;
        for (bool segregate : {false, true}) {
          Schedule s = scheduler.schedule(budget, priority, segregate,
                                          checkpointEvery);
          log << "; " << (priority == Priority::CriticalPath ? "critical path" : "index")
              << " priority, budget " << llvm::formatv("{0:F2}", budget).str()
              << (segregate ? ", small tiles apart" : "") << ": ";
          bool scheduled = !s.order.empty();
          if (consider(std::move(s), &scheduler) &&
              priority == Priority::ProgramOrder)
            bestIndexBudget = budget;
          if (scheduled)
            break;
        }
      }
    }
    bool splitCores = false;
    func.walk([&](Operation *op) {
      splitCores |= llvm::isa<PeerSignalOp, PeerWaitOp>(op);
    });
    if (splitCores) {
      double budget = memoryShare * kSplitCorePrefetchShare;
      Schedule s = scheduler.schedule(budget, Priority::ProgramOrder,
                                      /*segregateSmall=*/false, checkpointEvery);
      log << "; index priority, budget "
          << llvm::formatv("{0:F2}", budget).str() << " (a split core): ";
      consider(std::move(s), &scheduler);
    }
    // The weight gradients moved where the lowering marked them
    // (DeferredProducts.h), scheduled again at the best index-priority
    // depth, kept if faster. Not in a split core's half: the barriers order
    // its transfers with the other core's.
    std::unique_ptr<ListScheduler> moved;
    MovedWeightGradients gradients;
    if (!splitCores && (gradients = moveWeightGradients(func)).any()) {
      moved = std::make_unique<ListScheduler>(func, *model);
      if (moved->build()) {
        Schedule s = moved->schedule(bestIndexBudget, Priority::ProgramOrder,
                                     /*segregateSmall=*/false, checkpointEvery);
        log << "; weight gradients moved (" << gradients.anchored
            << " instructions to their anchors, " << gradients.spread
            << " spread over the last " << gradients.over
            << "), budget " << llvm::formatv("{0:F2}", bestIndexBudget).str()
            << ": ";
        consider(std::move(s), moved.get());
      }
    }
    dropDeferralMarks(func);
    bool kept = best && best->makespanNs < before;
    if (report)
      func.emitRemark() << "list schedule: program order "
                        << llvm::formatv("{0:F0} ns", before).str() << trials
                        << (kept ? llvm::formatv("; kept {0:F0} ns", best->makespanNs).str()
                                 : std::string("; kept program order"));
    if (kept) {
      // The order and the addresses it was timed with: the allocator checks
      // them instead of placing again.
      owner->apply(*best);
      owner->annotateScratch(best->times);
      LLVM_DEBUG(llvm::dbgs() << func.getName() << ": estimated " << before
                              << " ns -> " << best->makespanNs << " ns\n");
      return;
    }
    scheduler.restoreProgramOrder();
    scheduler.annotateScratch(scheduler.programOrderTimes());
    LLVM_DEBUG(llvm::dbgs() << func.getName() << ": program order kept ("
                            << before << " ns)\n");
  }
};

} // namespace
