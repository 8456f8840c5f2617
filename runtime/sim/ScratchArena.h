//===- ScratchArena.h - Scratch HBM regions, zeroed lazily ---------*- C++ -*-===//
//
// A program's scratch regions live in one 64-byte-aligned allocation that a
// Simulator keeps across runs. Every run must see them zeroed, but most
// scratch bytes are written (by a DMA, in order) before anything reads
// them, so zeroing tens of MiB up front each run is mostly wasted memory
// traffic. Instead each region tracks the prefix of its bytes this run has
// written contiguously from its start; just before an instruction reads a
// region, or writes it anywhere but at the end of that prefix, the stale
// rest is zeroed. Reads therefore see exactly what an up-front zeroing
// would have given.
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
  /// Lay out `program`'s scratch regions and start a run: ctx.regions[r]
  /// of each scratch region r is set. False when out of memory.
  bool bind(const Program &program, ExecContext &ctx);
  /// Call before `inst` executes (after bind).
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
  // Per region: its bytes, and the prefix written this run (== size when
  // the region is valid throughout, and for regions that are not scratch).
  std::vector<uint64_t> size, valid;
  std::vector<uint8_t *> base;
};

} // namespace trnc::sim
