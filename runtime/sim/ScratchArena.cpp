//===- ScratchArena.cpp - Scratch HBM regions, zeroed lazily -------------===//
//
// See ScratchArena.h. Only dma_copy writes "purely" (its destination is
// not read); every other operand of every opcode counts as a read, which
// covers accumulating and data-addressed (dma_indirect) accesses.
//
//===----------------------------------------------------------------------===//

#include "sim/ScratchArena.h"

#include <algorithm>
#include <cstring>

namespace trnc::sim {

bool ScratchArena::bind(const Program &program, ExecContext &ctx) {
  constexpr size_t kAlign = 64;
  size_t n = program.regions.size();
  std::vector<size_t> offsets(n);
  used = 0;
  for (size_t i = 0; i < n; ++i)
    if (program.regions[i].kind == Region::Kind::Scratch) {
      offsets[i] = used;
      used += (program.regions[i].bytes + kAlign - 1) / kAlign * kAlign;
    }
  // calloc: fresh memory is zero (its pages come lazily from the OS). The
  // next run reuses it unless it needs more.
  bool fresh = !memory || used > capacity;
  if (fresh) {
    memory.reset(static_cast<uint8_t *>(std::calloc(used ? used : 1, 1)));
    capacity = memory ? used : 0;
    if (!memory)
      return false;
  }
  size.assign(n, 0);
  valid.assign(n, 0);
  base.assign(n, nullptr);
  for (size_t i = 0; i < n; ++i) {
    if (program.regions[i].kind != Region::Kind::Scratch)
      continue;
    base[i] = ctx.regions[i] = memory.get() + offsets[i];
    size[i] = program.regions[i].bytes;
    valid[i] = fresh ? size[i] : 0;
  }
  return true;
}

void ScratchArena::zeroRest(size_t region) {
  std::memset(base[region] + valid[region], 0, size[region] - valid[region]);
  valid[region] = size[region];
}

void ScratchArena::access(const isa::AccessPattern &ap, bool pureWrite,
                          const ExecContext &ctx) {
  if (ap.mem != isa::MemKind::HBM || valid[ap.region] == size[ap.region])
    return;
  if (pureWrite) {
    // One contiguous run of bytes starting inside the valid prefix extends it.
    View v = ctx.view(ap);
    int64_t stride[1 + 2 * isa::kMaxFreeDims];
    uint64_t count[1 + 2 * isa::kMaxFreeDims];
    unsigned nd = mergeDims(v, 0, stride, count);
    uint64_t begin = uint64_t(v.base - base[ap.region]);
    if (nd == 1 && (stride[0] == int64_t(v.elemBytes) || count[0] == 1) &&
        begin <= valid[ap.region]) {
      valid[ap.region] =
          std::max(valid[ap.region], begin + count[0] * v.elemBytes);
      return;
    }
  }
  zeroRest(ap.region);
}

void ScratchArena::beforeExecute(const isa::Instruction &inst,
                                 const ExecContext &ctx) {
  // Reads first: a dma_copy within one region reads before it writes.
  access(inst.src0, false, ctx);
  access(inst.src1, false, ctx);
  access(inst.dst, inst.opcode == isa::Opcode::DmaCopy, ctx);
}

} // namespace trnc::sim
