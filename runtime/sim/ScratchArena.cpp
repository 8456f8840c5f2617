//===- ScratchArena.cpp - Scratch HBM regions: one packed arena -----------===//
//
// See ScratchArena.h. Only dma_copy writes "purely" (its destination is
// not read); every other operand of every opcode counts as a read, which
// covers accumulating and data-addressed (dma_indirect) accesses.
//
//===----------------------------------------------------------------------===//

#include "sim/ScratchArena.h"

#include <cstring>

namespace trnc::sim {

bool ScratchArena::bind(const Program &program, ExecContext &ctx) {
  size_t n = program.regions.size();
  used = program.scratchArenaBytes();
  // The next run reuses the memory unless it needs more.
  if (!memory || used > capacity) {
    memory.reset(static_cast<uint8_t *>(std::malloc(used ? used : 1)));
    capacity = memory ? used : 0;
    if (!memory)
      return false;
  }
  size.assign(n, 0);
  valid.assign(n, 0);
  base.assign(n, nullptr);
  for (size_t i = 0; i < n; ++i) {
    const Region &r = program.regions[i];
    if (r.kind != Region::Kind::Scratch)
      continue;
    base[i] = ctx.regions[i] = memory.get() + r.arenaOffset;
    size[i] = r.bytes;
  }
  return true;
}

void ScratchArena::zeroRest(size_t region) {
  std::memset(base[region] + valid[region], 0, size[region] - valid[region]);
  valid[region] = size[region];
}

void ScratchArena::access(const isa::AccessPattern &ap, bool pureWrite,
                          const ExecContext &ctx) {
  if (ap.mem != isa::MemKind::HBM || !base[ap.region])
    return;
  size_t r = ap.region;
  if (valid[r] == size[r])
    return;
  if (pureWrite) {
    // One contiguous run of bytes starting inside the valid prefix extends it.
    View v = ctx.view(ap);
    int64_t stride[1 + 2 * isa::kMaxFreeDims];
    uint64_t count[1 + 2 * isa::kMaxFreeDims];
    unsigned nd = mergeDims(v, 0, stride, count);
    uint64_t begin = uint64_t(v.base - base[r]);
    if (nd == 1 && (stride[0] == int64_t(v.elemBytes) || count[0] == 1) &&
        begin <= valid[r]) {
      valid[r] = std::max(valid[r], begin + count[0] * v.elemBytes);
      return;
    }
  }
  zeroRest(r);
}

void ScratchArena::beforeExecute(const isa::Instruction &inst,
                                 const ExecContext &ctx) {
  // Reads first: a dma_copy within one region reads before it writes.
  access(inst.src0, false, ctx);
  access(inst.src1, false, ctx);
  access(inst.src2, false, ctx);
  // dma_copy and collective write every element of dst (the hook fills
  // all outputBytes).
  access(inst.dst,
         inst.opcode == isa::Opcode::DmaCopy ||
             inst.opcode == isa::Opcode::Collective,
         ctx);
}

} // namespace trnc::sim
