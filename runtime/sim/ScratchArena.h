//===- ScratchArena.h - Scratch HBM regions: lazily zeroed, packed -*- C++ -*-===//
//
// A program's scratch regions live in one 64-byte-aligned allocation that a
// Simulator keeps across runs.
//
// Zeroing: every run must see scratch zeroed, but most scratch bytes are
// written (by a DMA, in order) before anything reads them, so zeroing tens
// of MiB up front each run is mostly wasted memory traffic. Instead each
// region tracks the prefix of its bytes this run has written contiguously
// from its start; just before an instruction reads a region, or writes it
// anywhere but at the end of that prefix, the stale rest is zeroed. Reads
// therefore see exactly what an up-front zeroing would have given.
//
// Packing: the compiler gives every intermediate its own region (the GPT
// backward: 179 regions, 65 MB), so a run streams through far more memory
// than is live at once, and the host's caches miss on every DMA. The order
// in which the simulator executes a program is a function of the program
// and of the timed/untimed choice alone (never of data), so the first run
// in each mode records when each scratch region is first and last touched,
// and later runs of that same program (keyed by a hash of its instructions
// and regions) in that mode place regions whose lifetimes do not overlap at
// the same addresses. Lazy zeroing keeps the semantics: a region's bytes
// are stale until this run writes or zeroes them, whoever used them before.
// Every access of a packed run is checked against the recorded lifetimes;
// a mismatch fails the run (and drops the packing) instead of computing
// with clobbered data.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "artifact/Program.h"
#include "sim/Exec.h"

#include "llvm/Support/Error.h"

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <vector>

namespace trnc::sim {

class ScratchArena {
public:
  /// Lay out `program`'s scratch regions and start a run (`timed` selects
  /// the packing recorded for that execution order): ctx.regions[r] of each
  /// scratch region r is set. False when out of memory.
  bool bind(const Program &program, bool timed, ExecContext &ctx);
  /// Call before each instruction executes, in execution order.
  void beforeExecute(const isa::Instruction &inst, const ExecContext &ctx);
  /// Call after the run's last instruction: records the packing after a
  /// first run; fails if a packed run left its recorded lifetimes.
  llvm::Error finishRun();
  /// Bytes the last bind laid out.
  size_t bytes() const { return used; }

private:
  void access(const isa::AccessPattern &ap, bool pureWrite,
              const ExecContext &ctx);
  void zeroRest(size_t region);
  void recordPacking();

  struct FreeDeleter {
    void operator()(uint8_t *p) const { std::free(p); }
  };
  std::unique_ptr<uint8_t[], FreeDeleter> memory;
  size_t capacity = 0, used = 0;
  // Per region of the current run: its bytes, the prefix written this run
  // (== size when valid throughout, and for regions that are not scratch),
  // its host address, and the first / last instruction (execution order)
  // that touched it.
  std::vector<uint64_t> size, valid;
  std::vector<uint8_t *> base;
  std::vector<uint64_t> first, last;
  uint64_t seq = 0;

  // Packings, one per (program hash, timed): region offsets and total bytes.
  struct Packing {
    uint64_t key = 0;
    std::vector<size_t> offsets;
    std::vector<uint64_t> first, last;
    size_t bytes = 0;
  };
  std::vector<Packing> packings; // at most one per mode
  uint64_t runKey = 0;
  const Packing *packed = nullptr; // this run's, or null (recording)
  bool outOfOrder = false;
};

} // namespace trnc::sim
