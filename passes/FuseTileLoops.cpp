//===- FuseTileLoops.cpp - fuse a consumer's tile loop into its producer's -===//
//
// `trnc-fuse-tile-loops`: the tile phase lowers each fusion group on its own,
// so a group that consumes another's result walks its tiles in a loop of its
// own after the producer's loop: every tile of the producer is computed and
// stored before the consumer loads the first. Where the two loops walk the
// tensor the same way (a layer norm's 128-row tiles and the matmul that
// reads them as its rows), this pass fuses them into one loop whose body is
// the producer's iteration, then the consumer's: the consumer's tile i is
// loaded right after the producer stored it, so `trnc-fuse-forward-stores`
// hands it over on chip (a forward held for a few instructions, not a
// whole loop, stays within its share of SBUF), and the two groups' engines
// work side by side.
//
// Legal when
//   - the producer has as many iterations as the consumer, or up to
//     `max-shift` more (a matmul with an epilogue peels two tiles off its
//     loop, a row group one): it then runs that many iterations ahead, the
//     extra ones before the fused loop;
//   - the consumer does not use the producer's results (its tiles flow
//     through HBM);
//   - each top-level instruction between the loops (the consumer's
//     prologue: its resident operands, its first tiles) moves above the
//     producer's iterations after those it runs ahead: it uses none of the
//     producer's results, touches nothing those iterations write and writes
//     nothing they read, and depends on no instruction that moves below;
//     or else below the fused loop: the consumer uses none of its results,
//     and it touches nothing the consumer's iterations write and writes
//     nothing they read (a row group's weight sums stored after its loop,
//     when the sums of a tied embedding's gradient over its rows join it);
//   - no iteration i of the consumer touches bytes an iteration j > i +
//     shift of the producer accesses, one side writing (the order fusion
//     swaps);
//   - the fused loop fits `memory-share` of an SBUF partition: the tiles
//     either body uses from outside (resident through the loop) plus the
//     most of its own the iteration holds at once, in program order
//     (fusedSbufBytes). Otherwise the list scheduler finds no placement and
//     keeps program order (a cross-entropy gradient chained with both
//     column blocks of a product holding its weight: 2x slower).
// Footprints are per iteration: an HBM window of the loop's induction
// variable shifts its access by index * step; any other access (a tile
// defined outside, a nested loop's window, a periodic window) counts as
// the whole buffer in every iteration.
//
// Not fused: a producer whose iteration stores the tile the previous one
// computed (a matmul's software pipeline), so that its last store must
// follow the fused loop; measured slower (docs/lowering.md, "fuse").
//
//===----------------------------------------------------------------------===//
#include "passes/Footprint.h"
#include "passes/Passes.h"
#include "passes/TargetModel.h"
#include "passes/TilePlacement.h"
#include "passes/Tile/TileLoops.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"

#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "trnc-fuse-tile-loops"

namespace trnc {
#define GEN_PASS_DEF_FUSETILELOOPS
#include "passes/Passes.h.inc"
} // namespace trnc

using namespace mlir;
using namespace trnc;
using namespace trnc::nisa;

namespace {

constexpr int64_t kWhole = std::numeric_limits<int64_t>::max() / 4;

/// One access of a loop body: its footprint in iteration 0 and how far it
/// moves per iteration (elements; 0 for an access that stays put).
struct LoopAccess {
  Footprint fp;
  int64_t shift = 0;

  Footprint at(int64_t iteration) const {
    Footprint f = fp;
    if (shift && f.end != kWhole) {
      f.begin += iteration * shift;
      f.end += iteration * shift;
    }
    return f;
  }
};

/// The footprint of a whole buffer (an HBM memref or a tile).
Footprint wholeBuffer(Value buffer, bool isWrite) {
  return Footprint{buffer.getAsOpaquePointer(),
                   isa<TileType>(buffer.getType())
                       ? static_cast<int>(cast<TileType>(buffer.getType()).getSpace())
                       : 0,
                   0, kWhole, 0, kWhole, isWrite};
}

/// What the instructions of an op (a loop or one instruction) access, per
/// iteration of `loop` (null: the op runs once).
class Accesses {
public:
  /// Collects the accesses of `op`; false if one has no footprint.
  bool collect(Operation *op, scf::ForOp loop) {
    bool ok = true;
    op->walk([&](Operation *nested) {
      auto inst = dyn_cast<InstructionOpInterface>(nested);
      if (!inst)
        return;
      for (const Access &a : inst.getAccesses())
        if (!add(nested, a, loop))
          ok = false;
    });
    return ok;
  }

  /// A hazard between this op's iteration `i` and `other`'s iteration `j`.
  bool conflicts(const Accesses &other, int64_t i, int64_t j) const {
    for (const LoopAccess &a : list)
      for (const LoopAccess &b : other.list)
        if (a.fp.resource == b.fp.resource && a.at(i).conflicts(b.at(j)))
          return true;
    return false;
  }

  SmallVector<LoopAccess> list;

private:
  bool add(Operation *inst, const Access &a, scf::ForOp loop) {
    Value buffer = a.buffer;
    if (isa<TileType>(buffer.getType())) {
      if (loop && loop.getRegion().isAncestor(buffer.getParentRegion())) {
        // A tile allocated inside the loop is the iteration's own; a
        // carried one is, conservatively, the init the prologue wrote.
        auto arg = dyn_cast<BlockArgument>(buffer);
        if (!arg || arg.getOwner() != loop.getBody())
          return true;
        buffer = loop.getTiedLoopInit(arg)->get();
      }
      list.push_back({wholeBuffer(buffer, a.isWrite), 0});
      return true;
    }
    // HBM: a window of the loop's induction variable moves with it; any
    // other window (of an inner loop) is its whole root buffer.
    int64_t shift = 0;
    bool whole = false;
    while (auto window = buffer.getDefiningOp<HbmWindowOp>()) {
      if (loop && window.getIndex() == loop.getInductionVar() && !shift &&
          !window.getPeriod())
        shift = window.getStep();
      else
        whole = true;
      buffer = window.getSource();
    }
    if (whole) {
      list.push_back({wholeBuffer(buffer, a.isWrite), 0});
      return true;
    }
    FailureOr<Footprint> fp = footprintOf(inst, a, TileBytes::Relative);
    if (failed(fp))
      return false;
    fp->resource = buffer.getAsOpaquePointer();
    list.push_back({*fp, shift});
    return true;
  }
};

/// Whether `consumer` reads bytes `producer` writes (in any iterations).
bool readsFrom(const Accesses &consumer, const Accesses &producer) {
  for (const LoopAccess &w : producer.list)
    if (w.fp.isWrite)
      for (const LoopAccess &r : consumer.list)
        if (!r.fp.isWrite && r.fp.resource == w.fp.resource)
          return true;
  return false;
}

/// Fuses `consumer` into `producer`, the producer `shift` iterations ahead:
/// its first `shift` iterations run first, then the ops between the loops
/// that go above (`above`), then one loop runs the producer's iteration
/// k + shift and the consumer's k, carrying both loops' values, where the
/// consumer was, then the ops between that go below (`below`).
FailureOr<scf::ForOp> fuse(scf::ForOp producer, scf::ForOp consumer,
                           int64_t shift, ArrayRef<Operation *> above,
                           ArrayRef<Operation *> below) {
  // What is left of the producer's loop is its iteration k + shift at k.
  if (failed(tile::peelIterations(producer, shift, 0)))
    return failure();
  for (Operation *op : above)
    op->moveBefore(producer);
  OpBuilder b(consumer);
  SmallVector<Value> inits(producer.getInitArgs());
  llvm::append_range(inits, consumer.getInitArgs());
  auto fused = b.create<scf::ForOp>(consumer.getLoc(), consumer.getLowerBound(),
                                    consumer.getUpperBound(), consumer.getStep(),
                                    inits);
  Block *body = fused.getBody();
  if (!body->empty() && body->back().hasTrait<OpTrait::IsTerminator>())
    body->back().erase();
  OpBuilder inner = OpBuilder::atBlockEnd(body);
  SmallVector<Value> yields;
  size_t carried = 0;
  for (scf::ForOp loop : {producer, consumer}) {
    IRMapping map;
    map.map(loop.getInductionVar(), fused.getInductionVar());
    for (BlockArgument arg : loop.getRegionIterArgs())
      map.map(arg, fused.getRegionIterArgs()[carried++]);
    for (Operation &op : loop.getBody()->without_terminator())
      inner.clone(op, map);
    for (Value v : loop.getBody()->getTerminator()->getOperands())
      yields.push_back(map.lookupOrDefault(v));
  }
  inner.create<scf::YieldOp>(consumer.getLoc(), yields);
  for (Operation *op : below)
    op->moveBefore(consumer);
  unsigned n = producer.getNumResults();
  producer.replaceAllUsesWith(fused.getResults().take_front(n));
  consumer.replaceAllUsesWith(fused.getResults().drop_front(n));
  producer.erase();
  consumer.erase();
  return fused;
}

/// Splits the ops between a producer and its consumer (in program order)
/// into those that go above the producer's iterations after its first
/// `shift` and those that go below the fused loop; false if one can go
/// nowhere. An op goes above unless it uses the producer's results,
/// touches what those iterations write or writes what they read, or
/// depends (SSA value or bytes) on an op that goes below; then it goes
/// below, which it may if the consumer uses none of its results and it
/// neither touches what the consumer's iterations write nor writes what
/// they read. So a row group's weight sums, stored after its row loop, go
/// below a tied embedding's sums over those rows, which join the loop.
bool placeBetween(scf::ForOp producer, const Accesses &producerAcc,
                  int64_t producerTrip, int64_t shift, scf::ForOp consumer,
                  const Accesses &consumerAcc, int64_t trip,
                  ArrayRef<Operation *> between, ArrayRef<Accesses> betweenAcc,
                  SmallVectorImpl<Operation *> &above,
                  SmallVectorImpl<Operation *> &below) {
  Block *block = consumer->getBlock();
  DenseSet<Operation *> belowSet;
  Accesses belowAcc;
  // Whether `op` reads a value defined by `def` or by an op in `defs`.
  auto readsFromOps = [&](Operation *op, Operation *def,
                          const DenseSet<Operation *> &defs) {
    WalkResult r = op->walk([&](Operation *nested) {
      for (Value v : nested->getOperands()) {
        Operation *d = v.getDefiningOp();
        Operation *top = d ? block->findAncestorOpInBlock(*d) : nullptr;
        if (top && (top == def || defs.contains(top)))
          return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    return r.wasInterrupted();
  };
  for (auto [op, acc] : llvm::zip(between, betweenAcc)) {
    bool goesBelow = readsFromOps(op, producer, belowSet) ||
                     acc.conflicts(belowAcc, 0, 0);
    for (int64_t j = shift; j < producerTrip && !goesBelow; ++j)
      goesBelow = acc.conflicts(producerAcc, 0, j);
    if (!goesBelow) {
      above.push_back(op);
      continue;
    }
    if (readsFromOps(consumer, op, {}))
      return false;
    for (int64_t i = 0; i < trip; ++i)
      if (consumerAcc.conflicts(acc, i, 0))
        return false;
    below.push_back(op);
    belowSet.insert(op);
    llvm::append_range(belowAcc.list, acc.list);
  }
  return true;
}

/// SBUF bytes per partition the loop fusing `producer` and `consumer` holds
/// at its peak: the tiles either body uses but does not define (resident
/// through every iteration: a matmul's weights, carried tiles), plus the
/// most of its own tiles the fused iteration holds at once, each live from
/// its definition to its last access in program order (the producer's body,
/// then the consumer's), rounded as the allocator places them.
int64_t fusedSbufBytes(scf::ForOp producer, scf::ForOp consumer) {
  auto bytesOf = [](Value v) -> int64_t {
    auto tile = dyn_cast<TileType>(v.getType());
    if (!tile || tile.getSpace() != MemorySpace::sbuf)
      return 0;
    return placedBytes(tile);
  };
  auto local = [&](Value v) {
    Operation *def = v.getDefiningOp();
    if (!def) // a block argument: the two loops' own are carried (resident)
      def = cast<BlockArgument>(v).getOwner()->getParentOp();
    return (producer->isProperAncestor(def) || consumer->isProperAncestor(def));
  };
  llvm::SetVector<Value> resident;
  llvm::MapVector<Value, std::pair<int64_t, int64_t>> span; // first, last
  int64_t position = 0;
  for (scf::ForOp loop : {producer, consumer})
    loop.getBody()->walk<WalkOrder::PreOrder>([&](Operation *op) {
      ++position;
      for (Value v : op->getOperands())
        if (bytesOf(v) > 0) {
          if (!local(v))
            resident.insert(v);
          else
            span[v].second = position;
        }
      for (Value v : op->getResults())
        if (bytesOf(v) > 0)
          span[v] = {position, position};
    });
  std::vector<int64_t> delta(position + 2, 0);
  for (auto &[tile, firstLast] : span) {
    delta[firstLast.first] += bytesOf(tile);
    delta[firstLast.second + 1] -= bytesOf(tile);
  }
  int64_t live = 0, peak = 0;
  for (int64_t d : delta)
    peak = std::max(peak, live += d);
  for (Value v : resident)
    peak += bytesOf(v);
  return peak;
}

struct FuseTileLoopsPass
    : public trnc::impl::FuseTileLoopsBase<FuseTileLoopsPass> {
  using Base::Base;

  void runOnOperation() override;

  /// Fuses `consumer` into the nearest loop before it whose writes it
  /// reads, if legal and if the fused loop fits its share of SBUF; the
  /// fused loop, or null.
  scf::ForOp tryFuse(scf::ForOp consumer);

  int64_t sbufBudget = 0; // bytes per partition a fused loop may hold
};

scf::ForOp FuseTileLoopsPass::tryFuse(scf::ForOp consumer) {
  std::optional<int64_t> trip = tile::tripCount(consumer);
  if (!trip || *trip <= 0)
    return {};
  Accesses consumerAcc;
  if (!consumerAcc.collect(consumer, consumer))
    return {};
  // Walk back over the ops between the two loops, collecting them.
  SmallVector<Operation *> between;
  SmallVector<Accesses> betweenAcc;
  for (Operation *op = consumer->getPrevNode(); op; op = op->getPrevNode()) {
    auto producer = dyn_cast<scf::ForOp>(op);
    Accesses producerAcc;
    if (producer && !producerAcc.collect(producer, producer))
      return {};
    if (!producer || !readsFrom(consumerAcc, producerAcc)) {
      // Not the producer: it stays between (a loop or an instruction).
      between.push_back(op);
      if (!betweenAcc.emplace_back().collect(op, nullptr))
        return {};
      continue;
    }
    // The producer may have more iterations than the consumer (a matmul
    // with an epilogue peels two tiles off its loop, a row group one): it
    // then runs that many iterations ahead.
    std::optional<int64_t> producerTrip = tile::tripCount(producer);
    if (!producerTrip || *producerTrip < *trip ||
        *producerTrip - *trip > maxShift)
      return {};
    int64_t shift = *producerTrip - *trip;
    // The consumer must not need the producer's results (SSA values).
    for (Operation *user : producer->getUsers())
      if (consumer->isAncestor(user))
        return {};
    // Iteration i of the consumer then runs before iterations j > i + shift
    // of the producer.
    for (int64_t i = 0; i < *trip; ++i)
      for (int64_t j = i + shift + 1; j < *producerTrip; ++j)
        if (consumerAcc.conflicts(producerAcc, i, j))
          return {};
    // A loop whose tiles do not fit is not formed: the list scheduler would
    // find no placement and keep program order.
    if (int64_t bytes = fusedSbufBytes(producer, consumer); bytes > sbufBudget) {
      LLVM_DEBUG(llvm::dbgs() << "not fused: " << bytes << " bytes of SBUF per partition > "
                              << sbufBudget << "\n");
      return {};
    }
    std::reverse(between.begin(), between.end());
    std::reverse(betweenAcc.begin(), betweenAcc.end());
    SmallVector<Operation *> above, below;
    if (!placeBetween(producer, producerAcc, *producerTrip, shift, consumer,
                      consumerAcc, *trip, between, betweenAcc, above, below))
      return {};
    FailureOr<scf::ForOp> fused = fuse(producer, consumer, shift, above, below);
    if (failed(fused)) {
      signalPassFailure();
      return {};
    }
    return *fused;
  }
  return {};
}

void FuseTileLoopsPass::runOnOperation() {
  func::FuncOp func = getOperation();
  std::optional<MachineModel> model = targetModel(func, target);
  if (!model)
    return signalPassFailure();
  sbufBudget = int64_t(memoryShare * model->sbufPartitionBytes);
  if (func.isExternal())
    return;
  // In program order, each loop joins its producer; a fused loop is then a
  // producer the next consumer may join, so a chain becomes one loop.
  [[maybe_unused]] int64_t fused = 0; // for the debug output
  SmallVector<scf::ForOp> loops;
  for (Operation &op : func.getBody().front())
    if (auto loop = dyn_cast<scf::ForOp>(op))
      loops.push_back(loop);
  for (scf::ForOp loop : loops)
    if (tryFuse(loop))
      ++fused;
  LLVM_DEBUG(llvm::dbgs() << func.getName() << ": " << fused
                          << " loops fused into their producers\n");
}

} // namespace
