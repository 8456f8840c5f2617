//===- ScratchArena.h - Scratch HBM regions: one packed arena -*- C++ -*-===//
//
// A program's scratch regions live in one 64-byte-aligned arena that a
// Simulator keeps across runs, each at the offset the compiler gave it
// (Region::arenaOffset, trnc-pack-scratch): regions never live at once
// share bytes, so the arena is about the size of the live scratch, not the
// sum of every intermediate.
//
// A region's contents are undefined until the program writes them; the
// simulator makes them zero, so that a run is deterministic whatever ran
// before in the same bytes. Most scratch bytes are written (by a DMA, in
// order) before anything reads them, so zeroing whole regions each run is
// mostly wasted memory traffic. Instead each region tracks the prefix of
// its bytes this run has written contiguously from its start; just before
// an instruction reads a region, or writes it anywhere but at the end of
// that prefix, the stale rest is zeroed. Reads therefore see exactly what
// an up-front zeroing at the region's first access would have given. That
// is correct only because accesses run in an order the semaphores allow:
// the region that last used the bytes is done with them (the race checker,
// which sees regions at their arena bytes, proves it).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "artifact/Program.h"
#include "sim/Exec.h"

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <vector>

namespace trnc::sim {

class ScratchArena {
public:
  /// Bind `program`'s scratch regions (ctx.regions[r] of each scratch
  /// region r) and start a run. False when out of memory.
  bool bind(const Program &program, ExecContext &ctx);
  /// Call before each instruction executes, in execution order.
  void beforeExecute(const isa::Instruction &inst, const ExecContext &ctx);
  /// Bytes the last bind laid out.
  size_t bytes() const { return used; }

private:
  void access(const isa::AccessPattern &ap, bool pureWrite,
              const ExecContext &ctx);
  void zeroRest(size_t region);

  struct FreeDeleter {
    void operator()(uint8_t *p) const { std::free(p); }
  };
  std::unique_ptr<uint8_t[], FreeDeleter> memory;
  size_t capacity = 0, used = 0;
  // Per region of the current run: its bytes, the prefix written this run
  // (== size for regions that are not scratch), and its host address.
  std::vector<uint64_t> size, valid;
  std::vector<uint8_t *> base;
};

} // namespace trnc::sim
