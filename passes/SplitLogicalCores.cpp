//===- SplitLogicalCores.cpp - one program over two physical cores (LNC=2) -===//
//
// `trnc-pipeline-split-logical-cores` (docs/distributed.md, "LNC=2"): after
// tiling and forwarding, before the list scheduler. `@main` is cloned into
// `@main_core1`; each copy keeps the instructions its physical core needs,
// so that ListSchedule, Allocate and ScheduleSemaphores run on each core's
// function unchanged (SBUF and PSUM are per core).
//
//  - Which core writes what. Only DMAs write HBM. The transfers into one
//    HBM buffer are ranked by the first element they write; the first half
//    of the ranks goes to core 0, the rest to core 1 (a buffer written by
//    one transfer: core 0). Row tiles are written in row order, so each op
//    of a chain splits its output rows the same way and a core mostly reads
//    the rows it wrote.
//  - Halving. An instruction elementwise along its free dims (copies,
//    activation, tensor_tensor/scalar, copy_predicated, memset, and
//    reductions of the innermost dim) can be cut in two halves of its free
//    elements (the outermost free dim of more than one element, halved in
//    every operand; per-partition [P, 1] operands stay whole). So can a
//    matmul over its output columns: half of the moving operand's columns
//    and of the PSUM output each, the stationary operand read whole by both
//    halves (a weight gradient dW = dY^T X of one row tile: each core
//    computes and stores half of dW's columns). Cut are (1) a buffer
//    written by one transfer (a weight or bias gradient, or a [2, 128, C]
//    tiled [128, 2, C]), which would stay on core 0, when its store and
//    every on-chip producer of the operands the cut halves (not of those
//    read whole, which both cores then compute) are halvable, a producer
//    writing into one half only staying whole with that half's core (a
//    sum over rows' matmul into its block's PSUM column, ColumnSums.h,
//    the copy out cut by blocks); chains that
//    load what another chain stores are tried together first, so each
//    core reads back the columns it wrote. Before that, elementwise chains
//    that load HBM the other core writes (or store what it reads) are cut
//    over their partitions instead where this removes a barrier for less
//    on-chip time than the barrier costs (rows an earlier op split by row
//    tiles, read back two rows per partition: partitions 0..63 are the
//    first core's rows), one chain at a time, then those left together.
//    And (2) on-chip instructions both cores would run (the copy out of
//    PSUM of an x^T built from every row block of x), consumers first. A
//    cut is kept only if some pair's halves then run on different cores
//    and no barrier is added (each costs both cores about 2 us); a pair
//    whose halves share their cores is put back together at the end.
//  - Balancing. A single-transfer store left whole moves to core 1, in
//    program order, while core 0's estimated busy time (the simulator's
//    cost formulas) exceeds core 1's, if the gap shrinks and no barrier
//    is added.
//  - One core when splitting cannot pay. A lower bound of each version's
//    time (per core its busiest engine's estimated work, the transfers
//    shared by the DMA queues; the split adds three barrier fixed costs per
//    barrier, as tryHalves counts them): when the split's is no less than
//    the whole program's on one core, every cut is undone and core 1 gets
//    nothing. A convolution net at a small image size, split over its
//    batch, had both cores load every weight and dozens of barriers, and
//    ran slower than one core.
//  - Which core needs what. An instruction is needed by a core if a
//    transfer that core writes depends on it through on-chip tiles (read
//    after write on overlapping bytes, back to the last writer that wrote
//    every byte read, fillsFootprint: a strided write's box has gaps; an
//    accumulating matmul and copy_predicated also read their destination).
//    Shared producers (a streamed B tile, the identity of the transposes)
//    are therefore in both copies: each core
//    loads and computes its own (SBUF is per core), which is the honest
//    cost. An instruction no transfer needs stays on core 0.
//  - Barriers. Walking the original program order, an instruction that
//    touches HBM bytes (read after write, write after read or write after
//    write) that the other core touched since the last barrier gets a
//    barrier just before it, in both copies: `nisa.peer_signal` (the
//    semaphore pass makes it wait for every earlier transfer of its core)
//    then `nisa.peer_wait` for the peer's signal. Both cores pass barriers
//    1, 2, ... in the same order and the list scheduler keeps every
//    transfer on its side of them, so they cannot deadlock. Chains split
//    the same way need none. An HBM access is its element runs (rows x
//    runs, isa/StridedRuns.h), as the simulator's race checker sees it:
//    the two cores' column halves of the same rows, or interleaved rows,
//    do not overlap.
//
// Collectives: a rank is the logical core (LowerCollective computes the
// group's link span with ranks of two physical cores), so each collective
// is issued once, whole, by core 0 (the verifier allows them nowhere
// else): it is never halved nor moved to core 1. The barrier rule above
// orders it after core 1's writes of its input and before core 1's reads
// of its result (the peer signal waits for the collective queue too).
//
// Every HBM scratch buffer is tagged `trnc.scratch` (its index) in both
// copies, so the emitter maps both to one region (HBM is shared). The
// module gets `trnc.lnc = 2`, each function `trnc.core`.
//
//===----------------------------------------------------------------------===//
#include "passes/Footprint.h"
#include "passes/Passes.h"
#include "passes/TargetModel.h"

#include "dialects/Nisa/NisaToIsa.h"
#include "isa/Isa.h"
#include "isa/StridedRuns.h"
#include "sim/CostModel.h"

#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/MapVector.h"

#include <algorithm>
#include <deque>
#include <numeric>
#include <optional>

namespace trnc {
#define GEN_PASS_DEF_SPLITLOGICALCORES
#include "passes/Passes.h.inc"
} // namespace trnc

using namespace mlir;
using namespace trnc;
using namespace trnc::nisa;

namespace {

/// How an instruction is cut in two halves: over the outermost free dim of
/// more than one element (each half computes half of every partition's
/// elements; a matmul: half of its output columns), or over its partitions
/// (each half computes every element of half of the partitions: no faster
/// on a compute engine, whose time is per partition, but the halves' rows
/// in HBM can then match how an earlier op split them).
enum class Cut { Columns, Partitions };

/// Core sets as bit masks: bit c = physical core c.
constexpr unsigned kCore0 = 1, kCore1 = 2;

/// Whether two core sets hold two different cores (one instruction of each
/// would run unordered unless a barrier orders them).
bool acrossCores(unsigned a, unsigned b) {
  return ((a & kCore0) && (b & kCore1)) || ((a & kCore1) && (b & kCore0));
}

/// Whether `op` reads the tile bytes it writes (so earlier writers of them
/// feed it).
bool readsDestination(Operation *op) {
  if (auto matmul = dyn_cast<MatmulOp>(op))
    return matmul.getAccumulate();
  return llvm::isa<CopyPredicatedOp>(op);
}

/// Whether `f` (a TileBytes::Relative footprint) is in HBM: tiles have a
/// memory space, HBM none.
bool inHbm(const Footprint &f) { return f.space == 0; }

/// Lists per instruction, packed (compressed sparse rows): list i is
/// items[offsets[i], offsets[i + 1]).
struct PackedLists {
  std::vector<unsigned> offsets{0}, items;
  ArrayRef<unsigned> operator[](unsigned i) const {
    return ArrayRef(items).slice(offsets[i], offsets[i + 1] - offsets[i]);
  }
  size_t size() const { return offsets.size() - 1; }
  bool empty() const { return size() == 0; }
  void clear() {
    offsets.assign(1, 0);
    items.clear();
  }
  /// Closes the list being appended to (the next index's).
  void close() { offsets.push_back(items.size()); }
  /// The lists of every `j` holding `i`, for each i of `n`, in ascending j.
  static PackedLists transpose(const PackedLists &lists, size_t n) {
    PackedLists t;
    t.offsets.assign(n + 1, 0);
    for (unsigned i : lists.items)
      ++t.offsets[i + 1];
    std::partial_sum(t.offsets.begin(), t.offsets.end(), t.offsets.begin());
    t.items.resize(lists.items.size());
    std::vector<unsigned> next(t.offsets.begin(), t.offsets.end() - 1);
    for (unsigned j = 0; j < lists.size(); ++j)
      for (unsigned i : lists[j])
        t.items[next[i]++] = j;
    return t;
  }
};

bool covers(const Footprint &outer, const Footprint &inner) {
  return outer.partBegin <= inner.partBegin && inner.partEnd <= outer.partEnd &&
         outer.begin <= inner.begin && inner.end <= outer.end;
}

/// An instruction's duration by the simulator's cost formulas (a DMA alone
/// on its queue: fixed cost, then its bytes), 0 if it has no cost form, and
/// the engine it runs on.
struct InstCost {
  double ns = 0;
  isa::Engine engine = isa::Engine::Dma;
};
InstCost estimate(const MachineModel &m, Operation *op) {
  isa::Instruction inst;
  if (!nisa::describeForCost(op, inst))
    return {};
  if (inst.opcode == isa::Opcode::Collective)
    return {0, inst.engine};
  if (isa::isDmaTransfer(inst.opcode))
    return {m.dmaFixedNs +
                double(sim::dmaBytes(inst)) / sim::dmaAloneBytesPerNs(m, inst),
            inst.engine};
  uint64_t cycles = inst.opcode == isa::Opcode::Matmul
                        ? sim::matmulCycles(m, inst)
                        : sim::vectorLikeCycles(m, inst);
  return {double(cycles) / sim::engineClockGHz(m, inst.engine), inst.engine};
}

struct SplitLogicalCoresPass
    : public trnc::impl::SplitLogicalCoresBase<SplitLogicalCoresPass> {
  using SplitLogicalCoresBase::SplitLogicalCoresBase;

  void runOnOperation() override;

private:
  /// An instruction cut in two halves of its free elements.
  struct Halves {
    Operation *first, *second;
    SmallVector<NamedAttribute, 3> whole; // `first`'s patterns before the cut
  };

  LogicalResult collect(func::FuncOp main);
  /// `op`'s entry in infoStore (made if it has none), kNoInfo if `op` is
  /// not an instruction.
  FailureOr<unsigned> infoIndex(Operation &op);
  static constexpr unsigned kNoInfo = ~0u;
  void computePreds();
  void assignWriters();
  void propagateNeeds();
  void placeBarriers();
  /// collect .. placeBarriers on the program as it is now.
  LogicalResult analyze(func::FuncOp main);
  /// Whether the halves of on-chip instruction `i` (which writes no HBM)
  /// could run on different cores: the cores its readers need from each
  /// half, as analyze() would find them once `i` is cut (a reader's walk
  /// back over the tile's writers stops at a newer writer that hides what
  /// it reads, TileWrite::hides, the second half included). Readers' own
  /// cores come from later instructions, which the cut does not change.
  /// When both halves need the same cores, tryHalves would undo the cut.
  bool halvesMaySplit(unsigned i);
  /// Whether instruction `p`, a producer of `i`, feeds an operand that
  /// `i`'s halves cut (not one both halves read whole: a matmul's
  /// stationary operand, a per-partition [P, 1] operand).
  bool feedsCutOperand(unsigned p, unsigned i, Cut how) const;
  /// Per single-transfer store: it and the producers of the operands its
  /// chain's halves cut, if every one of them is halvable.
  SmallVector<SmallVector<Operation *>> halvableChains(Cut how);
  /// Groups of two or more of `chains` joined through HBM (one loads what
  /// another stores), each group's instructions in program order.
  SmallVector<SmallVector<Operation *>>
  joinedThroughHbm(ArrayRef<SmallVector<Operation *>> chains) const;
  void halve(Operation *op, Cut how);
  void rejoin(Halves &pair);
  /// Halves `ops` (those not cut yet) and keeps the cut if some pair's
  /// halves run on different cores and the barrier count stays at most
  /// `barriers`, or below it if `fewer` (then lowered to the new count);
  /// else undoes it.
  FailureOr<bool> tryHalves(func::FuncOp main, ArrayRef<Operation *> ops,
                            size_t &barriers, Cut how = Cut::Columns,
                            bool fewer = false);
  LogicalResult halveSingleTransfers(func::FuncOp main);
  /// Cuts the instructions of `shared` (on chip, run by both cores,
  /// consumers first) whose halves would run on different cores without a
  /// barrier more: in rounds of cuts that cannot change each other's
  /// judgement, each round tried together (one analysis), one at a time if
  /// together they add a barrier.
  LogicalResult cutShared(func::FuncOp main, ArrayRef<Operation *> shared,
                          size_t &barriers);
  LogicalResult balanceSingleTransfers(func::FuncOp main);
  /// The estimated busy time of each core's instructions, core 0 minus core 1.
  double imbalanceNs() const;
  /// A lower bound of the program's time as assigned (or, `oneCore`, with
  /// every instruction once on core 0 and no barrier): per core its
  /// busiest engine's instructions back to back, the DMA queues sharing
  /// the transfers, plus each barrier at three times its fixed cost (as in
  /// tryHalves); the larger of the two cores.
  double boundNs(bool oneCore) const;
  /// Undoes every kept cut and leaves the whole program on core 0.
  LogicalResult keepOnOneCore(func::FuncOp main);
  void split(func::FuncOp main);

  SmallVector<Operation *> insts; // program order
  // Per instruction (its InstInfo's): its footprints, and per footprint its
  // access pattern (for its HBM runs).
  std::vector<ArrayRef<Footprint>> footprints;
  std::vector<ArrayRef<AccessPatternAttr>> patterns;
  // Per instruction and footprint: the tile's dense index (kNoTile: HBM).
  std::vector<ArrayRef<unsigned>> tilesOf;
  std::vector<ArrayRef<char>> fillsOf; // per instruction and footprint
  static constexpr unsigned kNoTile = ~0u;
  DenseMap<const void *, unsigned> tileIds; // per tile, kept across analyses
  std::vector<char> readsDest; // per instruction: readsDestination
  // HBM element runs per access pattern (uniqued, so kept across analyses;
  // boxed: a reference must survive the map growing).
  DenseMap<AccessPatternAttr, std::shared_ptr<std::vector<isa::Run>>> runsCache;
  const std::vector<isa::Run> &runsOf(AccessPatternAttr ap);
  // preds[i]: the earlier instructions whose tile writes instruction i reads.
  PackedLists preds;
  // Per tile index, the instructions writing it, ascending, with what
  // they write (computePreds).
  struct TileWrite {
    unsigned inst;
    bool readsDest;
    bool fills; // the write fills its footprint's box (fillsFootprint)
    const Footprint *write;
    /// Whether `read` takes its bytes from this write and no older one:
    /// the write fills a box covering the read and does not itself read
    /// the bytes it overwrites.
    bool hides(const Footprint &read) const {
      return fills && !readsDest && covers(*write, read);
    }
  };
  std::vector<SmallVector<TileWrite, 4>> tileWriters;
  // readers[i]: the instructions whose preds hold i (built on demand from
  // preds; empty when stale).
  PackedLists readers;
  std::vector<unsigned> cores; // per instruction: the cores that run it
  std::vector<unsigned> barrierBefore; // instruction indices, ascending
  SmallVector<Halves> halves;
  DenseSet<Operation *> cut; // instructions cut in halves (their first)
  // Stores of single-transfer buffers moved from core 0 to core 1.
  DenseSet<Operation *> onCore1;
  std::optional<MachineModel> model;
  std::vector<double> costNs; // per instruction: the simulator's estimate
  std::vector<isa::Engine> engines; // per instruction
  // What collect() derives per instruction (its estimate, footprints and
  // access patterns), kept across analyses: tryHalves re-analyzes the whole
  // function once per candidate, so recomputing it all was most of the
  // pass's time. An instruction's entry goes when halving or rejoining
  // changes (or erases) it.
  struct InstInfo {
    InstCost cost;
    SmallVector<Footprint, 3> footprints;
    SmallVector<AccessPatternAttr, 3> patterns;
    SmallVector<unsigned, 3> tiles;
    SmallVector<char, 3> fills; // per footprint: fillsFootprint
    bool readsDest = false;
  };
  // Entries never move (the analysis keeps references to them); an
  // instruction's index in the map goes when it changes.
  std::deque<InstInfo> infoStore;
  DenseMap<Operation *, unsigned> infoCache;
  std::vector<unsigned> infoOf; // per instruction: its infoStore index
  // Instructions changed, created or erased since the last collect: the
  // previous analysis's entry for them (or for an op now at the address of
  // an erased one) is not to be reused.
  DenseSet<Operation *> dirty;
  // Cut pairs kept with their halves on different cores.
  SmallVector<Halves> keptHalves;
  // For `report`.
  struct {
    unsigned analyses = 0, sharedCut = 0, sharedSkipped = 0;
  } work;
};

/// `ap` cut to half `h` (0 or 1) of its elements in row-major order:
/// Columns, the outermost free dim of more than one element, halved (every
/// free dim before it has one element, so the order is kept); Partitions,
/// the partition dim. None if that dim is odd or there is none.
std::optional<AccessPatternAttr> halfOf(AccessPatternAttr ap, unsigned h,
                                        unsigned *dim = nullptr,
                                        Cut how = Cut::Columns) {
  ArrayRef<int64_t> counts = ap.getCounts();
  for (unsigned d = how == Cut::Partitions ? 0 : 1;
       d < (how == Cut::Partitions ? 1u : counts.size()); ++d) {
    if (counts[d] == 1)
      continue;
    if (counts[d] % 2)
      return std::nullopt;
    SmallVector<int64_t> halved(counts);
    halved[d] /= 2;
    if (dim)
      *dim = d;
    return AccessPatternAttr::get(ap.getContext(),
                                  ap.getOffset() + h * halved[d] * ap.getStrides()[d],
                                  ap.getStrides(), halved);
  }
  return std::nullopt;
}

int64_t freeElements(AccessPatternAttr ap) {
  return ap.getNumElements() / ap.getCounts()[0];
}

/// Whether a compute engine may run `n` partitions from partition `p`
/// (start_partition, the verifier's rule: n > 64 start at 0; 32 < n <= 64
/// at 0 or 64; n <= 32 at a multiple of 32).
bool startPartitionOk(int64_t p, int64_t n) {
  return n > 64 ? p == 0 : n > 32 ? (p == 0 || p == 64) : p % 32 == 0;
}

/// The names of `op`'s patterns that its partition halves cut (every one
/// present: per-partition operands are cut too), or none.
std::optional<SmallVector<StringRef, 3>> partitionHalvablePatterns(Operation *op) {
  if (!llvm::isa<DmaCopyOp, ActivationOp, TensorTensorOp, TensorScalarOp,
                 TensorCopyOp, CopyPredicatedOp, MemsetOp, TensorReduceOp>(op))
    return std::nullopt;
  auto dst = op->getAttrOfType<AccessPatternAttr>("dst_ap");
  bool compute = !llvm::isa<DmaCopyOp>(op);
  SmallVector<StringRef, 3> names;
  for (StringRef name : kAccessPatternNames) {
    auto ap = op->getAttrOfType<AccessPatternAttr>(name);
    if (!ap)
      continue;
    int64_t rows = ap.getCounts()[0];
    if (rows != dst.getCounts()[0] || rows % 2 || rows < 2)
      return std::nullopt;
    auto tile = dyn_cast<TileType>(op->getOperand(names.size()).getType());
    if (compute && tile) {
      int64_t start = ap.getOffset() / tile.getFreeSize(), half = rows / 2;
      if (!startPartitionOk(start, half) || !startPartitionOk(start + half, half))
        return std::nullopt;
    }
    names.push_back(name);
  }
  return names;
}

/// The names of `op`'s patterns that its halves cut (the others, a
/// per-partition [P, 1] operand, stay whole), or none if `op` cannot be
/// cut in halves that each compute their half of the elements.
std::optional<SmallVector<StringRef, 3>> halvablePatterns(Operation *op,
                                                          Cut how = Cut::Columns) {
  if (how == Cut::Partitions)
    return partitionHalvablePatterns(op);
  if (auto matmul = dyn_cast<MatmulOp>(op)) {
    // Half of the moving operand's columns gives half of the output's
    // (row-major order on both sides); the stationary operand stays whole,
    // read by both halves. A transpose's moving operand is its identity.
    AccessPatternAttr dst = matmul.getDstAp(), moving = matmul.getSrc1Ap();
    if (matmul.getTranspose() || freeElements(dst) != freeElements(moving) ||
        !halfOf(dst, 0) || !halfOf(moving, 0))
      return std::nullopt;
    return SmallVector<StringRef, 3>{"dst_ap", "src1_ap"};
  }
  bool reduce = llvm::isa<TensorReduceOp>(op);
  if (!llvm::isa<DmaCopyOp, ActivationOp, TensorTensorOp, TensorScalarOp,
                 TensorCopyOp, CopyPredicatedOp, MemsetOp, TensorReduceOp>(op))
    return std::nullopt;
  // Elementwise: every cut pattern walks the dst's elements. A reduction
  // walks src0's, reducing its innermost dim into dst.
  auto dst = op->getAttrOfType<AccessPatternAttr>("dst_ap");
  auto src0 = op->getAttrOfType<AccessPatternAttr>("src0_ap");
  int64_t elements = freeElements(dst);
  if (reduce)
    elements = freeElements(src0);
  SmallVector<StringRef, 3> names;
  for (StringRef name : kAccessPatternNames) {
    auto ap = op->getAttrOfType<AccessPatternAttr>(name);
    if (!ap)
      continue;
    if (ap.getCounts()[0] != dst.getCounts()[0])
      return std::nullopt; // rows of the two sides do not pair up
    int64_t want = reduce && name == "dst_ap"
                       ? elements / src0.getCounts().back()
                       : elements;
    if (freeElements(ap) != want) {
      if ((name == "src1_ap" || name == "src2_ap") && freeElements(ap) == 1 &&
          llvm::isa<ActivationOp, TensorScalarOp>(op))
        continue; // one value per partition, for both halves
      return std::nullopt;
    }
    unsigned dim = 0;
    if (!halfOf(ap, 0, &dim))
      return std::nullopt;
    if (reduce && name == "src0_ap" && dim + 1 == ap.getCounts().size())
      return std::nullopt; // would cut the reduced dim
    names.push_back(name);
  }
  return names;
}

LogicalResult SplitLogicalCoresPass::collect(func::FuncOp main) {
  costNs.clear();
  engines.clear();
  readsDest.clear();
  tilesOf.clear();
  fillsOf.clear();
  // The block is mostly the previous analysis's instructions in the same
  // order: walk both, and look an instruction up only where they differ.
  SmallVector<Operation *> before;
  std::swap(before, insts);
  std::vector<unsigned> beforeInfo;
  std::swap(beforeInfo, infoOf);
  size_t k = 0;
  auto isDirty = [&](Operation *op) { return !dirty.empty() && dirty.contains(op); };
  for (Operation &op : main.getBody().front()) {
    if (llvm::isa<AllocOp, DramAllocOp>(op))
      continue; // most of the ops that are not instructions
    while (k < before.size() && isDirty(before[k]))
      ++k;
    unsigned index;
    if (k < before.size() && before[k] == &op && !isDirty(&op)) {
      index = beforeInfo[k++];
    } else {
      FailureOr<unsigned> found = infoIndex(op);
      if (failed(found))
        return failure();
      if (*found == kNoInfo)
        continue; // not an instruction
      index = *found;
    }
    const InstInfo &info = infoStore[index];
    infoOf.push_back(index);
    insts.push_back(&op);
    footprints.push_back(info.footprints);
    patterns.push_back(info.patterns);
    tilesOf.push_back(info.tiles);
    fillsOf.push_back(info.fills);
    costNs.push_back(info.cost.ns);
    engines.push_back(info.cost.engine);
    readsDest.push_back(info.readsDest);
  }
  dirty.clear();
  cores.assign(insts.size(), 0);
  return success();
}

FailureOr<unsigned> SplitLogicalCoresPass::infoIndex(Operation &op) {
  auto inst = dyn_cast<InstructionOpInterface>(op);
  if (!inst)
    return kNoInfo;
  if (llvm::isa<NopOp, PeerSignalOp, PeerWaitOp>(op))
    return op.emitOpError("the split over logical cores runs before "
                          "semaphore scheduling");
  auto [entry, fresh] = infoCache.try_emplace(&op, infoStore.size());
  if (fresh) {
    InstInfo info;
    for (const Access &a : inst.getAccesses()) {
      FailureOr<Footprint> fp = footprintOf(&op, a, TileBytes::Relative);
      if (failed(fp)) {
        infoCache.erase(&op);
        return failure();
      }
      info.footprints.push_back(*fp);
      info.patterns.push_back(a.pattern);
      info.fills.push_back(fillsFootprint(a, *fp));
      info.tiles.push_back(inHbm(*fp) ? kNoTile
                                      : tileIds.try_emplace(fp->resource, tileIds.size())
                                            .first->second);
    }
    info.cost = estimate(*model, &op);
    info.readsDest = readsDestination(&op);
    infoStore.push_back(std::move(info));
  }
  return entry->second;
}

void SplitLogicalCoresPass::assignWriters() {
  // Per HBM buffer, the first elements its transfers write.
  DenseMap<const void *, SmallVector<int64_t>> starts;
  auto hbmWrite = [&](unsigned i) -> const Footprint * {
    for (const Footprint &f : footprints[i])
      if (f.isWrite && inHbm(f))
        return &f;
    return nullptr;
  };
  for (unsigned i = 0; i < insts.size(); ++i)
    if (const Footprint *f = hbmWrite(i))
      starts[f->resource].push_back(f->begin);
  for (auto &[buffer, list] : starts) {
    llvm::sort(list);
    list.erase(std::unique(list.begin(), list.end()), list.end());
  }
  for (unsigned i = 0; i < insts.size(); ++i) {
    const Footprint *f = hbmWrite(i);
    if (!f)
      continue;
    ArrayRef<int64_t> list = starts[f->resource];
    size_t rank = llvm::lower_bound(list, f->begin) - list.begin();
    cores[i] = 2 * rank >= list.size() && list.size() > 1 ? kCore1 : kCore0;
    if (onCore1.contains(insts[i]))
      cores[i] = kCore1;
    if (llvm::isa<CollectiveOp>(insts[i]))
      cores[i] = kCore0; // the logical core's one issue of it
  }
}

void SplitLogicalCoresPass::computePreds() {
  preds.clear();
  readers.clear();
  std::vector<SmallVector<TileWrite, 4>> &writers = tileWriters;
  for (auto &list : writers)
    list.clear();
  writers.resize(tileIds.size());
  for (unsigned i = 0; i < insts.size(); ++i) {
    for (auto [f, tile] : llvm::zip(footprints[i], tilesOf[i])) {
      if (tile == kNoTile || (f.isWrite && !readsDest[i]))
        continue;
      for (const TileWrite &w : llvm::reverse(writers[tile])) {
        if (!w.write->overlaps(f))
          continue;
        if (!llvm::is_contained(ArrayRef(preds.items).drop_front(preds.offsets[i]), w.inst))
          preds.items.push_back(w.inst);
        if (w.hides(f))
          break; // the bytes read are this writer's, not older ones
      }
    }
    preds.close();
    // Its last write of each tile (one per instruction: its destination).
    for (auto [f, tile, fills] : llvm::zip(footprints[i], tilesOf[i], fillsOf[i]))
      if (f.isWrite && tile != kNoTile) {
        SmallVector<TileWrite, 4> &list = writers[tile];
        if (!list.empty() && list.back().inst == i) {
          list.back().write = &f;
          list.back().fills = fills;
        } else {
          list.push_back({i, bool(readsDest[i]), bool(fills), &f});
        }
      }
  }
}

bool SplitLogicalCoresPass::feedsCutOperand(unsigned p, unsigned i,
                                            Cut how) const {
  std::optional<SmallVector<StringRef, 3>> names = halvablePatterns(insts[i], how);
  if (!names)
    return true;
  // footprints[i] follow getAccesses: dst, src0, src1, src2, those present.
  auto inst = cast<InstructionOpInterface>(insts[i]);
  auto writes = [&](const Footprint &read) {
    return llvm::any_of(footprints[p], [&](const Footprint &w) {
      return w.isWrite && w.overlaps(read);
    });
  };
  for (auto [access, read] : llvm::zip(inst.getAccesses(), footprints[i])) {
    StringRef name = kAccessPatternNames[access.slot];
    if ((read.isWrite && !readsDestination(insts[i])) ||
        !llvm::is_contained(*names, name) || !writes(read))
      continue;
    // A producer writing into one half only (a column sum's matmul into its
    // block of a PSUM tile whose copy out is cut by blocks) stays whole,
    // with that half's core; one writing both halves is cut with it.
    unsigned halvesWritten = 0;
    for (unsigned h : {0u, 1u}) {
      Access half = access;
      half.pattern = *halfOf(access.pattern, h, nullptr, how);
      FailureOr<Footprint> fp = footprintOf(insts[i], half, TileBytes::Relative);
      halvesWritten += failed(fp) || writes(*fp);
    }
    if (halvesWritten == 2)
      return true;
  }
  return false;
}

bool SplitLogicalCoresPass::halvesMaySplit(unsigned i) {
  if (readers.empty())
    readers = PackedLists::transpose(preds, insts.size());
  Operation *op = insts[i];
  // The halves' writes, cut as halve() cuts them.
  std::optional<Footprint> half[2];
  bool halfFills[2] = {false, false};
  for (const Access &a : cast<InstructionOpInterface>(op).getAccesses()) {
    if (!a.isWrite)
      continue;
    for (unsigned h : {0u, 1u}) {
      std::optional<AccessPatternAttr> ap = halfOf(a.pattern, h);
      if (!ap)
        return true;
      Access cutAccess = a;
      cutAccess.pattern = *ap;
      FailureOr<Footprint> fp = footprintOf(op, cutAccess, TileBytes::Relative);
      if (failed(fp))
        return true;
      half[h] = *fp;
      halfFills[h] = fillsFootprint(cutAccess, *fp);
    }
  }
  if (!half[0] || inHbm(*half[0]))
    return true;
  const void *tile = half[0]->resource;
  ArrayRef<TileWrite> writers = tileWriters[tileIds.lookup(tile)];
  auto byInst = [](const TileWrite &w, unsigned i) { return w.inst < i; };
  unsigned need[2] = {0, 0};
  for (unsigned j : readers[i]) {
    for (const Footprint &f : footprints[j]) {
      if (f.resource != tile || (f.isWrite && !readsDest[j]))
        continue;
      // Writers between the cut instruction and the reader, newest first.
      auto first = std::lower_bound(writers.begin(), writers.end(), i + 1, byInst),
           last = std::lower_bound(writers.begin(), writers.end(), j, byInst);
      bool reached = std::none_of(first, last,
                                  [&](const TileWrite &w) { return w.hides(f); });
      if (!reached)
        continue;
      if (half[1]->overlaps(f)) {
        need[1] |= cores[j];
        if (TileWrite{i, bool(readsDest[i]), halfFills[1], &*half[1]}.hides(f))
          continue;
      }
      if (half[0]->overlaps(f))
        need[0] |= cores[j];
    }
  }
  for (unsigned &n : need)
    if (!n)
      n = kCore0; // no transfer needs it: core 0
  return need[0] != need[1];
}

SmallVector<SmallVector<Operation *>>
SplitLogicalCoresPass::halvableChains(Cut how) {
  DenseMap<const void *, unsigned> transfers; // per HBM buffer
  for (const auto &fps : footprints)
    for (const Footprint &f : fps)
      if (f.isWrite && inHbm(f))
        ++transfers[f.resource];
  SmallVector<SmallVector<Operation *>> chains;
  for (unsigned s = 0; s < insts.size(); ++s) {
    bool singleStore = llvm::any_of(footprints[s], [&](const Footprint &f) {
      return f.isWrite && inHbm(f) && transfers[f.resource] == 1;
    });
    if (!singleStore)
      continue;
    SmallVector<unsigned> chain{s}, work{s};
    DenseSet<unsigned> seen{s};
    bool halvable = true;
    while (halvable && !work.empty()) {
      unsigned i = work.pop_back_val();
      halvable = halvablePatterns(insts[i], how).has_value();
      for (unsigned p : preds[i])
        if (feedsCutOperand(p, i, how) && seen.insert(p).second) {
          chain.push_back(p);
          work.push_back(p);
        }
    }
    if (!halvable)
      continue;
    llvm::sort(chain);
    chains.emplace_back();
    for (unsigned i : chain)
      chains.back().push_back(insts[i]);
  }
  return chains;
}

SmallVector<SmallVector<Operation *>> SplitLogicalCoresPass::joinedThroughHbm(
    ArrayRef<SmallVector<Operation *>> chains) const {
  DenseMap<Operation *, unsigned> position;
  for (unsigned i = 0; i < insts.size(); ++i)
    position[insts[i]] = i;
  std::vector<unsigned> parent(chains.size());
  std::iota(parent.begin(), parent.end(), 0u);
  auto root = [&](unsigned c) {
    while (parent[c] != c)
      c = parent[c] = parent[parent[c]];
    return c;
  };
  auto hbmAccesses = [&](unsigned c, bool writes, auto &&visit) {
    for (Operation *op : chains[c])
      for (const Footprint &f : footprints[position.lookup(op)])
        if (f.isWrite == writes && inHbm(f))
          visit(f.resource);
  };
  DenseMap<const void *, unsigned> storedBy;
  for (unsigned c = 0; c < chains.size(); ++c)
    hbmAccesses(c, true, [&](const void *buffer) { storedBy[buffer] = c; });
  for (unsigned c = 0; c < chains.size(); ++c)
    hbmAccesses(c, false, [&](const void *buffer) {
      auto it = storedBy.find(buffer);
      if (it != storedBy.end())
        parent[root(it->second)] = root(c);
    });
  llvm::MapVector<unsigned, SmallVector<unsigned>> groups;
  for (unsigned c = 0; c < chains.size(); ++c)
    groups[root(c)].push_back(c);
  SmallVector<SmallVector<Operation *>> joined;
  for (auto &[top, members] : groups) {
    if (members.size() < 2)
      continue;
    SmallVector<unsigned> order;
    for (unsigned c : members)
      for (Operation *op : chains[c])
        order.push_back(position.lookup(op));
    llvm::sort(order);
    order.erase(std::unique(order.begin(), order.end()), order.end());
    joined.emplace_back();
    for (unsigned i : order)
      joined.back().push_back(insts[i]);
  }
  return joined;
}

void SplitLogicalCoresPass::halve(Operation *op, Cut how) {
  SmallVector<StringRef, 3> names = *halvablePatterns(op, how);
  OpBuilder b(op->getContext());
  b.setInsertionPointAfter(op);
  Operation *second = b.clone(*op);
  Halves pair{op, second, {}};
  for (StringRef name : names) {
    auto ap = op->getAttrOfType<AccessPatternAttr>(name);
    pair.whole.push_back(b.getNamedAttr(name, ap));
    op->setAttr(name, *halfOf(ap, 0, nullptr, how));
    second->setAttr(name, *halfOf(ap, 1, nullptr, how));
  }
  infoCache.erase(op);
  dirty.insert(op);
  dirty.insert(second);
  halves.push_back(std::move(pair));
}

void SplitLogicalCoresPass::rejoin(Halves &pair) {
  for (NamedAttribute whole : pair.whole)
    pair.first->setAttr(whole.getName(), whole.getValue());
  infoCache.erase(pair.first);
  infoCache.erase(pair.second);
  dirty.insert(pair.first);
  dirty.insert(pair.second);
  pair.second->erase();
}

LogicalResult SplitLogicalCoresPass::analyze(func::FuncOp main) {
  ++work.analyses;
  footprints.clear();
  patterns.clear();
  barrierBefore.clear();
  if (failed(collect(main)))
    return failure();
  computePreds();
  assignWriters();
  propagateNeeds();
  placeBarriers();
  return success();
}

FailureOr<bool> SplitLogicalCoresPass::tryHalves(func::FuncOp main,
                                                 ArrayRef<Operation *> ops,
                                                 size_t &barriers, Cut how,
                                                 bool fewer) {
  size_t before = halves.size();
  for (Operation *op : ops)
    if (cut.insert(op).second)
      halve(op, how);
  if (halves.size() == before)
    return false;
  if (failed(analyze(main)))
    return failure();
  DenseMap<Operation *, unsigned> coresOf; // of the new halves
  for (const Halves &h : ArrayRef(halves).drop_front(before))
    coresOf[h.first] = coresOf[h.second] = 0;
  for (unsigned i = 0; i < insts.size(); ++i)
    if (auto it = coresOf.find(insts[i]); it != coresOf.end())
      it->second = cores[i];
  bool splits = llvm::any_of(ArrayRef(halves).drop_front(before), [&](const Halves &h) {
    return coresOf[h.first] != coresOf[h.second];
  });
  bool keep = splits && (fewer ? barrierBefore.size() < barriers
                                : barrierBefore.size() <= barriers);
  if (keep && how == Cut::Partitions) {
    // Partition halves keep each compute instruction's time (it is per
    // partition): each core spends half of the chain's on-chip time more
    // than with column halves. Worth it only for less than the barriers it
    // saves, each estimated at three times the barrier's fixed cost (its
    // signal, then the wait for the peer and for the core's DMA queues to
    // drain: on the small GPT's backward, two barriers fewer for 7.5 us
    // more on-chip work per core left the step's time unchanged).
    double onChipNs = 0;
    for (unsigned i = 0; i < insts.size(); ++i)
      if (cut.contains(insts[i]) && llvm::is_contained(ops, insts[i]) &&
          !llvm::isa<DmaCopyOp>(insts[i]))
        onChipNs += costNs[i];
    keep = onChipNs / 2 <
           double(barriers - barrierBefore.size()) * 3 * model->barrierNs();
  }
  if (keep) {
    barriers = barrierBefore.size();
    return true;
  }
  // No work moves to the other core, or a barrier more: undo.
  while (halves.size() > before) {
    cut.erase(halves.back().first);
    rejoin(halves.back());
    halves.pop_back();
  }
  return false;
}

LogicalResult SplitLogicalCoresPass::cutShared(func::FuncOp main,
                                               ArrayRef<Operation *> shared,
                                               size_t &barriers) {
  SmallVector<Operation *> pending(shared);
  while (!pending.empty()) {
    // The analysis is of the program as it is. In a round, an instruction
    // is judged only if no cut chosen earlier in the round can change what
    // halvesMaySplit reads: its readers' cores, and its tile's writers. A
    // cut changes the cores of the instructions it reads from, transitively
    // (its cone), and of the older writers of its tile (a reader of both
    // halves walks past them) and theirs.
    DenseMap<Operation *, unsigned> position;
    for (unsigned i = 0; i < insts.size(); ++i)
      position[insts[i]] = i;
    if (readers.empty())
      readers = PackedLists::transpose(preds, insts.size());
    std::vector<char> touched(insts.size(), 0);
    DenseSet<unsigned> touchedTiles;
    auto touchCone = [&](unsigned root) {
      SmallVector<unsigned> stack{root};
      while (!stack.empty()) {
        unsigned k = stack.pop_back_val();
        if (touched[k])
          continue;
        touched[k] = 1;
        for (unsigned p : preds[k])
          stack.push_back(p);
      }
    };
    SmallVector<Operation *> batch, later;
    for (Operation *op : pending) {
      unsigned i = position.lookup(op), tile = kNoTile;
      for (auto [f, t] : llvm::zip(footprints[i], tilesOf[i]))
        if (f.isWrite)
          tile = t;
      if (touched[i] || touchedTiles.contains(tile) ||
          llvm::any_of(readers[i], [&](unsigned r) { return touched[r]; })) {
        later.push_back(op);
        continue;
      }
      if (!halvesMaySplit(i)) {
        ++work.sharedSkipped;
        continue;
      }
      batch.push_back(op);
      touchCone(i);
      touchedTiles.insert(tile);
      for (const TileWrite &w : tileWriters[tile])
        if (w.inst < i)
          touchCone(w.inst);
    }
    pending = std::move(later);
    if (batch.empty())
      continue;
    FailureOr<bool> kept = tryHalves(main, batch, barriers);
    if (failed(kept))
      return failure();
    if (*kept) {
      work.sharedCut += batch.size();
      continue; // the analysis is of the program with the halves
    }
    // Together they add a barrier: one at a time, each kept only without.
    for (Operation *op : batch) {
      if (failed(analyze(main)))
        return failure();
      if (!halvesMaySplit(llvm::find(insts, op) - insts.begin())) {
        ++work.sharedSkipped;
        continue;
      }
      FailureOr<bool> one = tryHalves(main, op, barriers);
      if (failed(one))
        return failure();
      work.sharedCut += *one;
    }
    if (failed(analyze(main)))
      return failure();
  }
  return success();
}

LogicalResult SplitLogicalCoresPass::halveSingleTransfers(func::FuncOp main) {
  cut.clear();
  if (failed(analyze(main)))
    return failure();
  size_t barriers = barrierBefore.size();
  // Chains cut over their partitions where that removes a barrier: rows
  // an earlier op split between the cores (row tiles 0..127 and
  // 128..255), here tiled two rows per partition, so that a cut over the
  // columns would have each core read the other's rows.
  // Only a chain that loads HBM the other core writes, or stores HBM the
  // other core reads, can lose a barrier (judged once, on the program
  // before these cuts). Tried one by one, then those left all together
  // (two copies of one buffer meet at the same barrier).
  DenseMap<const void *, unsigned> writerCores, readerCores; // per HBM buffer
  DenseMap<Operation *, unsigned> position;
  for (unsigned i = 0; i < insts.size(); ++i) {
    position[insts[i]] = i;
    for (const Footprint &f : footprints[i])
      if (inHbm(f))
        (f.isWrite ? writerCores : readerCores)[f.resource] |= cores[i];
  }
  SmallVector<SmallVector<Operation *>> crossing;
  for (SmallVector<Operation *> &chain : halvableChains(Cut::Partitions)) {
    unsigned storeCores = cores[position.lookup(chain.back())];
    if (llvm::any_of(chain, [&](Operation *op) {
          return llvm::any_of(footprints[position.lookup(op)], [&](const Footprint &f) {
            return inHbm(f) &&
                   acrossCores(storeCores, (f.isWrite ? readerCores : writerCores)
                                               .lookup(f.resource));
          });
        }))
      crossing.push_back(std::move(chain));
  }
  SmallVector<Operation *> left;
  for (ArrayRef<Operation *> chain : crossing) {
    FailureOr<bool> kept =
        tryHalves(main, chain, barriers, Cut::Partitions, /*fewer=*/true);
    if (failed(kept))
      return failure();
    if (!*kept)
      llvm::append_range(left, chain);
  }
  llvm::sort(left, [&](Operation *a, Operation *b) {
    return position.lookup(a) < position.lookup(b);
  });
  left.erase(std::unique(left.begin(), left.end()), left.end());
  if (failed(tryHalves(main, left, barriers, Cut::Partitions, /*fewer=*/true)))
    return failure();
  if (failed(analyze(main)))
    return failure();
  // Then over their columns: chains joined through HBM first (a
  // column-split weight gradient and the op that reads it back, each core
  // reading the columns it wrote), then each chain alone.
  SmallVector<SmallVector<Operation *>> chains = halvableChains(Cut::Columns);
  for (ArrayRef<Operation *> group : joinedThroughHbm(chains))
    if (failed(tryHalves(main, group, barriers)))
      return failure();
  for (ArrayRef<Operation *> chain : chains)
    if (failed(tryHalves(main, chain, barriers)))
      return failure();
  // On-chip instructions both cores run, each needing one half: the copy
  // out of PSUM of a transposed operand whose row blocks feed the two
  // cores' matmuls, then (consumers first) the transposes and loads behind
  // it. Halving them leaves each core its own rows.
  if (failed(analyze(main)))
    return failure();
  SmallVector<Operation *> shared;
  for (unsigned i = insts.size(); i-- > 0;)
    if (cores[i] == (kCore0 | kCore1) &&
        llvm::none_of(footprints[i], [](const Footprint &f) { return f.isWrite && inHbm(f); }) &&
        halvablePatterns(insts[i]))
      shared.push_back(insts[i]);
  if (failed(cutShared(main, shared, barriers)))
    return failure();
  // Pairs whose halves run on the same cores are put back together.
  if (failed(analyze(main)))
    return failure();
  DenseMap<Operation *, unsigned> coresOf;
  for (unsigned i = 0; i < insts.size(); ++i)
    coresOf[insts[i]] = cores[i];
  // A half may itself have been cut later (a second half is not in `cut`:
  // a later phase can halve it again), so the latest cuts go first, and a
  // pair whose second half was kept cut stays cut: rejoining it would erase
  // that half. keptHalves is thus latest first, the order to undo them in.
  DenseSet<Operation *> keptFirsts;
  for (Halves &pair : llvm::reverse(halves))
    if (coresOf[pair.first] == coresOf[pair.second] &&
        !keptFirsts.contains(pair.second)) {
      rejoin(pair);
    } else {
      keptFirsts.insert(pair.first);
      keptHalves.push_back(std::move(pair));
    }
  halves.clear();
  return analyze(main);
}

double SplitLogicalCoresPass::boundNs(bool oneCore) const {
  double busy[2][isa::kNumEngines] = {};
  for (unsigned i = 0; i < insts.size(); ++i)
    for (unsigned c = 0; c < 2; ++c)
      if (oneCore ? c == 0 : (cores[i] & (c ? kCore1 : kCore0)) != 0)
        busy[c][unsigned(engines[i])] += costNs[i];
  double bound = 0;
  for (auto &core : busy) {
    core[unsigned(isa::Engine::Dma)] /= double(model->dmaQueuesPerEngine);
    bound = std::max(bound, *std::max_element(core, core + isa::kNumEngines));
  }
  if (!oneCore)
    bound += double(barrierBefore.size()) * 3 * model->barrierNs();
  return bound;
}

LogicalResult SplitLogicalCoresPass::keepOnOneCore(func::FuncOp main) {
  for (Halves &pair : keptHalves) // latest cut first (halveSingleTransfers)
    rejoin(pair);
  keptHalves.clear();
  onCore1.clear();
  if (failed(analyze(main)))
    return failure();
  cores.assign(insts.size(), kCore0);
  barrierBefore.clear();
  return success();
}

double SplitLogicalCoresPass::imbalanceNs() const {
  double d = 0;
  for (unsigned i = 0; i < insts.size(); ++i)
    d += ((cores[i] & kCore0) ? costNs[i] : 0) - ((cores[i] & kCore1) ? costNs[i] : 0);
  return d;
}

LogicalResult SplitLogicalCoresPass::balanceSingleTransfers(func::FuncOp main) {
  onCore1.clear();
  if (failed(analyze(main)))
    return failure();
  size_t barriers = barrierBefore.size();
  double imbalance = imbalanceNs();
  DenseMap<const void *, unsigned> transfers; // per HBM buffer
  for (const auto &fps : footprints)
    for (const Footprint &f : fps)
      if (f.isWrite && inHbm(f))
        ++transfers[f.resource];
  SmallVector<Operation *> stores;
  for (unsigned i = 0; i < insts.size(); ++i)
    if (cores[i] == kCore0 && !llvm::isa<CollectiveOp>(insts[i]) &&
        llvm::any_of(footprints[i], [&](const Footprint &f) {
          return f.isWrite && inHbm(f) && transfers[f.resource] == 1;
        }))
      stores.push_back(insts[i]);
  for (Operation *store : stores) {
    if (imbalance <= 0)
      break;
    onCore1.insert(store);
    if (failed(analyze(main)))
      return failure();
    double now = imbalanceNs();
    if (barrierBefore.size() <= barriers && std::abs(now) < std::abs(imbalance)) {
      imbalance = now;
      barriers = barrierBefore.size();
      continue;
    }
    onCore1.erase(store);
  }
  return analyze(main);
}

void SplitLogicalCoresPass::propagateNeeds() {
  for (unsigned i = insts.size(); i-- > 0;) {
    if (!cores[i])
      cores[i] = kCore0; // no transfer needs it: core 0, as at LNC=1
    for (unsigned p : preds[i])
      cores[p] |= cores[i];
  }
}

const std::vector<isa::Run> &
SplitLogicalCoresPass::runsOf(AccessPatternAttr ap) {
  auto it = runsCache.find(ap);
  if (it == runsCache.end())
    it = runsCache
             .try_emplace(ap, std::make_shared<std::vector<isa::Run>>(hbmRunsOf(ap)))
             .first;
  return *it->second;
}

void SplitLogicalCoresPass::placeBarriers() {
  struct Touch {
    unsigned inst, footprint;
    unsigned cores;
  };
  // HBM accesses since the last barrier, per buffer. Their element runs, as
  // the simulator's race checker sees them (rows x runs): two cores' column
  // halves of the same rows, or interleaved rows, need no barrier. Reads
  // and writes apart: a read conflicts only with writes.
  struct Touches {
    SmallVector<Touch> reads, writes;
  };
  DenseMap<const void *, Touches> since;
  auto conflicts = [&](const Touch &t, unsigned i, unsigned k) {
    const Footprint &f = footprints[i][k], &g = footprints[t.inst][t.footprint];
    return (g.isWrite || f.isWrite) && acrossCores(t.cores, cores[i]) &&
           g.begin < f.end && f.begin < g.end &&
           isa::runsOverlap(runsOf(patterns[t.inst][t.footprint]),
                            runsOf(patterns[i][k]));
  };
  for (unsigned i = 0; i < insts.size(); ++i) {
    bool conflict = false;
    for (unsigned k = 0; k < footprints[i].size(); ++k) {
      const Footprint &f = footprints[i][k];
      if (!inHbm(f))
        continue;
      auto it = since.find(f.resource);
      if (it == since.end())
        continue;
      auto against = [&](ArrayRef<Touch> touches) {
        return llvm::any_of(touches, [&](const Touch &t) { return conflicts(t, i, k); });
      };
      conflict = conflict || against(it->second.writes) ||
                 (f.isWrite && against(it->second.reads));
    }
    if (conflict) {
      barrierBefore.push_back(i);
      since.clear();
    }
    for (auto [k, f] : llvm::enumerate(footprints[i]))
      if (inHbm(f)) {
        Touches &touches = since[f.resource];
        (f.isWrite ? touches.writes : touches.reads).push_back({i, unsigned(k), cores[i]});
      }
  }
}

void SplitLogicalCoresPass::split(func::FuncOp main) {
  OpBuilder b(main);
  b.setInsertionPointAfter(main);
  auto peer = cast<func::FuncOp>(b.clone(*main));
  peer.setSymName("main_core1");
  main->setAttr("trnc.core", b.getI64IntegerAttr(0));
  peer->setAttr("trnc.core", b.getI64IntegerAttr(1));

  // The clone has the same ops in the same order.
  SmallVector<Operation *> peerInsts;
  int64_t scratch = 0;
  for (auto [op, copy] : llvm::zip(main.getBody().front().getOperations(),
                                   peer.getBody().front().getOperations())) {
    if (llvm::isa<DramAllocOp>(op)) {
      op.setAttr("trnc.scratch", b.getI64IntegerAttr(scratch));
      copy.setAttr("trnc.scratch", b.getI64IntegerAttr(scratch++));
    }
    if (llvm::isa<InstructionOpInterface>(copy))
      peerInsts.push_back(&copy);
  }
  const int64_t semaphore = isa::kFirstBarrierSemaphore;
  for (auto [k, i] : llvm::enumerate(barrierBefore))
    for (Operation *at : {insts[i], peerInsts[i]}) {
      OpBuilder here(at);
      here.create<PeerSignalOp>(at->getLoc(), semaphore, DenseI64ArrayAttr(),
                                IntegerAttr());
      here.create<PeerWaitOp>(at->getLoc(), semaphore, int64_t(k + 1),
                              DenseI64ArrayAttr(), IntegerAttr());
    }
  for (unsigned i = 0; i < insts.size(); ++i) {
    if (!(cores[i] & kCore0))
      insts[i]->erase();
    if (!(cores[i] & kCore1))
      peerInsts[i]->erase();
  }
  // Tiles a core no longer touches.
  for (func::FuncOp f : {main, peer})
    for (AllocOp alloc : llvm::make_early_inc_range(f.getBody().getOps<AllocOp>()))
      if (alloc->use_empty())
        alloc->erase();
}

void SplitLogicalCoresPass::runOnOperation() {
  ModuleOp module = getOperation();
  if (module->hasAttr("trnc.lnc")) {
    module.emitError("the module is already split over logical cores");
    return signalPassFailure();
  }
  if (failed(requireUnrolled(module, getArgument())))
    return signalPassFailure();
  auto main = module.lookupSymbol<func::FuncOp>("main");
  if (!main || main.getBody().getBlocks().size() != 1) {
    module.emitError("the split over logical cores needs a func.func @main "
                     "of one block");
    return signalPassFailure();
  }
  model = targetModel(module, "");
  if (!model)
    return signalPassFailure();
  halves.clear();
  keptHalves.clear();
  onCore1.clear();
  work = {};
  infoCache.clear(); // a previous module's operations' addresses may recur
  infoStore.clear();
  infoOf.clear();
  insts.clear();
  dirty.clear();
  tileIds.clear();
  runsCache.clear();
  if (failed(halveSingleTransfers(main)) ||
      failed(balanceSingleTransfers(main)))
    return signalPassFailure();
  // A split that cannot beat one core (both cores repeating most of the
  // work: a weight-bound convolution net split over its batch, each core
  // loading every weight) is not made; core 1 stays idle.
  bool oneCore = !alwaysSplit &&
                 boundNs(/*oneCore=*/false) >= boundNs(/*oneCore=*/true);
  if (oneCore && failed(keepOnOneCore(main)))
    return signalPassFailure();
  if (report)
    main.emitRemark() << "split over logical cores: " << work.analyses
                      << " whole-program analyses; of the instructions both "
                         "cores run, "
                      << work.sharedCut << " cut, " << work.sharedSkipped
                      << " not tried (each half needed by the same cores)"
                      << (oneCore ? "; kept on one core" : "");
  split(main);
  module->setAttr("trnc.lnc", Builder(module).getI64IntegerAttr(2));
}

} // namespace
