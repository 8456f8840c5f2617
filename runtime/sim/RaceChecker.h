//===- RaceChecker.h - Happens-before race detection for simulated runs -*- C++ -*-===//
//
// An ExecutionObserver that proves a run's semaphores order every pair of
// conflicting accesses. The simulator executes one interleaving; the checker
// asks whether *any* interleaving the semaphores allow could reorder two
// instructions on different engines that touch the same bytes (at least one
// writing). Such a pair is a race: on hardware, or in the timed model, the
// result would depend on timing.
//
// Happens-before is tracked with vector clocks, one per ordered agent
// (isa/Isa.h: each compute engine, each DMA queue): program order within an
// agent; the DMA stream's issue order (a DMA starts after the waits of the
// DMAs issued before it, not after their completion); and a wait satisfied
// by semaphore s reaching v joins the clock of the signal that s >= v
// proves happened (with several signallers of s, only what the count
// proves). Two DMAs on different queues are as unordered as two engines. Accesses
// are footprints (on chip: memory space, partition range, byte range within
// each partition, the pattern's extent as the compiler's scheduler computes
// it; HBM: the region's byte runs the pattern touches, rows x runs rather
// than one range, isa/StridedRuns.h, so two column halves of the same rows
// do not overlap; scratch regions at their bytes of the one arena they
// share, so a packed region reused before its previous tenant is done races) kept in per-space segment maps, superseded by later
// covering accesses and pruned once every engine still running has them in
// its past, so the cost stays near-linear in the program length. At LNC=2
// the agents, semaphores, SBUF and PSUM are per physical core and HBM is
// shared: a write on one core and an access of the same bytes on the other
// that no barrier orders is a race like any other.
//
// It also checks that no instruction reads HBM scratch bytes that nothing
// wrote before in the run (dma_copy and collectives; dma_indirect's pattern
// is conservative): scratch is undefined until written, and a packed
// region's bytes held another region's data (trnc-pack-scratch).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "sim/ExecutionObserver.h"

#include <memory>

namespace trnc {

struct RaceCheckerOptions {
  /// Races listed in the error message; the total is always given.
  unsigned maxReported = 10;
};

class RaceChecker : public ExecutionObserver {
public:
  explicit RaceChecker(RaceCheckerOptions options = {});
  ~RaceChecker() override;

  void onStart(const Program &program) override;
  void onExecute(unsigned core, isa::Engine engine, size_t index,
                 const isa::Instruction &inst) override;
  void onSignal(unsigned core, isa::Engine engine, size_t index,
                unsigned semaphoreCore, uint8_t semaphore,
                uint32_t value) override;
  /// Fails with the list of races (capped) and their count, and of reads
  /// of unwritten scratch, if any.
  llvm::Error onFinish() override;

  /// Distinct racing instruction pairs found so far in this run.
  size_t numRaces() const;
  /// Most access records alive at once during the run (for cost measurements).
  size_t peakLiveAccesses() const;

private:
  struct Impl;
  std::unique_ptr<Impl> impl;
};

} // namespace trnc
