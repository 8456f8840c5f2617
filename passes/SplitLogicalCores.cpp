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
//    the rows it wrote. Collectives run on core 0 (the verifier's rule).
//  - Which core needs what. An instruction is needed by a core if a
//    transfer that core writes depends on it through on-chip tiles (read
//    after write on overlapping bytes, back to the last writer that covers
//    the bytes read; an accumulating matmul and copy_predicated also read
//    their destination). Shared producers (a streamed B tile, the
//    identity of the transposes) are therefore in both copies: each core
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
//    the same way need none.
//
// Every HBM scratch buffer is tagged `trnc.scratch` (its index) in both
// copies, so the emitter maps both to one region (HBM is shared). The
// module gets `trnc.lnc = 2`, each function `trnc.core`.
//
//===----------------------------------------------------------------------===//
#include "passes/Footprint.h"
#include "passes/Passes.h"

#include "isa/Isa.h"

#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/DenseMap.h"

#include <algorithm>

namespace trnc {
#define GEN_PASS_DEF_SPLITLOGICALCORES
#include "passes/Passes.h.inc"
} // namespace trnc

using namespace mlir;
using namespace trnc;
using namespace trnc::nisa;

namespace {

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

/// Whether `f` (a TileBytes::Relative footprint) is in HBM.
bool inHbm(const Footprint &f) {
  return llvm::isa<MemRefType>(Value::getFromOpaquePointer(f.resource).getType());
}

bool covers(const Footprint &outer, const Footprint &inner) {
  return outer.partBegin <= inner.partBegin && inner.partEnd <= outer.partEnd &&
         outer.begin <= inner.begin && inner.end <= outer.end;
}

struct SplitLogicalCoresPass
    : public trnc::impl::SplitLogicalCoresBase<SplitLogicalCoresPass> {
  using SplitLogicalCoresBase::SplitLogicalCoresBase;

  void runOnOperation() override;

private:
  LogicalResult collect(func::FuncOp main);
  void assignWriters();
  void propagateNeeds();
  void placeBarriers();
  void split(func::FuncOp main);

  SmallVector<Operation *> insts; // program order
  std::vector<SmallVector<Footprint, 3>> footprints;
  std::vector<unsigned> cores; // per instruction: the cores that run it
  std::vector<unsigned> barrierBefore; // instruction indices, ascending
};

LogicalResult SplitLogicalCoresPass::collect(func::FuncOp main) {
  for (Operation &op : main.getBody().front()) {
    auto inst = dyn_cast<InstructionOpInterface>(op);
    if (!inst)
      continue;
    if (llvm::isa<NopOp, PeerSignalOp, PeerWaitOp>(op))
      return op.emitOpError("the split over logical cores runs before "
                            "semaphore scheduling");
    SmallVector<Footprint, 3> fps;
    for (const Access &a : inst.getAccesses()) {
      FailureOr<Footprint> fp = footprintOf(&op, a, TileBytes::Relative);
      if (failed(fp))
        return failure();
      fps.push_back(*fp);
    }
    insts.push_back(&op);
    footprints.push_back(std::move(fps));
  }
  cores.assign(insts.size(), 0);
  return success();
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
    if (const Footprint *f = hbmWrite(i); f && !llvm::isa<CollectiveOp>(insts[i]))
      starts[f->resource].push_back(f->begin);
  for (auto &[buffer, list] : starts) {
    llvm::sort(list);
    list.erase(std::unique(list.begin(), list.end()), list.end());
  }
  for (unsigned i = 0; i < insts.size(); ++i) {
    const Footprint *f = hbmWrite(i);
    if (!f)
      continue;
    if (llvm::isa<CollectiveOp>(insts[i])) {
      cores[i] = kCore0;
      continue;
    }
    ArrayRef<int64_t> list = starts[f->resource];
    size_t rank = llvm::lower_bound(list, f->begin) - list.begin();
    cores[i] = 2 * rank >= list.size() && list.size() > 1 ? kCore1 : kCore0;
  }
}

void SplitLogicalCoresPass::propagateNeeds() {
  // preds[i]: the earlier instructions whose tile writes instruction i reads.
  std::vector<SmallVector<unsigned, 4>> preds(insts.size());
  DenseMap<const void *, SmallVector<unsigned>> writers; // per tile
  for (unsigned i = 0; i < insts.size(); ++i) {
    for (const Footprint &f : footprints[i]) {
      if (inHbm(f) || (f.isWrite && !readsDestination(insts[i])))
        continue;
      auto it = writers.find(f.resource);
      if (it == writers.end())
        continue;
      for (unsigned w : llvm::reverse(it->second)) {
        const Footprint *wf = nullptr;
        for (const Footprint &g : footprints[w])
          if (g.isWrite && g.resource == f.resource)
            wf = &g;
        if (!wf || !wf->overlaps(f))
          continue;
        if (!llvm::is_contained(preds[i], w))
          preds[i].push_back(w);
        if (covers(*wf, f) && !readsDestination(insts[w]))
          break; // the bytes read are this writer's, not older ones
      }
    }
    for (const Footprint &f : footprints[i])
      if (f.isWrite && !inHbm(f))
        writers[f.resource].push_back(i);
  }
  for (unsigned i = insts.size(); i-- > 0;) {
    if (!cores[i])
      cores[i] = kCore0; // no transfer needs it: core 0, as at LNC=1
    for (unsigned p : preds[i])
      cores[p] |= cores[i];
  }
}

void SplitLogicalCoresPass::placeBarriers() {
  struct Touch {
    int64_t begin, end;
    bool isWrite;
    unsigned cores;
  };
  // HBM bytes touched since the last barrier, per buffer.
  DenseMap<const void *, SmallVector<Touch>> since;
  for (unsigned i = 0; i < insts.size(); ++i) {
    bool conflict = false;
    for (const Footprint &f : footprints[i]) {
      if (!inHbm(f))
        continue;
      auto it = since.find(f.resource);
      if (it == since.end())
        continue;
      conflict |= llvm::any_of(it->second, [&](const Touch &t) {
        return (t.isWrite || f.isWrite) && t.begin < f.end && f.begin < t.end &&
               acrossCores(t.cores, cores[i]);
      });
    }
    if (conflict) {
      barrierBefore.push_back(i);
      since.clear();
    }
    for (const Footprint &f : footprints[i])
      if (inHbm(f))
        since[f.resource].push_back({f.begin, f.end, f.isWrite, cores[i]});
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
  auto main = module.lookupSymbol<func::FuncOp>("main");
  if (!main || main.getBody().getBlocks().size() != 1) {
    module.emitError("the split over logical cores needs a func.func @main "
                     "of one block");
    return signalPassFailure();
  }
  insts.clear();
  footprints.clear();
  barrierBefore.clear();
  if (failed(collect(main)))
    return signalPassFailure();
  assignWriters();
  propagateNeeds();
  placeBarriers();
  split(main);
  module->setAttr("trnc.lnc", Builder(module).getI64IntegerAttr(2));
}

} // namespace
