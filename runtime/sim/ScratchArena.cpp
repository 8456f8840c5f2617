//===- ScratchArena.cpp - Scratch HBM regions: lazily zeroed, packed ------===//
//
// See ScratchArena.h. Only dma_copy writes "purely" (its destination is
// not read); every other operand of every opcode counts as a read, which
// covers accumulating and data-addressed (dma_indirect) accesses. Packing
// is first fit in order of first use, which for the compiler's
// produce-then-consume regions keeps the live set small.
//
//===----------------------------------------------------------------------===//

#include "sim/ScratchArena.h"

#include "llvm/Support/xxhash.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <numeric>

namespace trnc::sim {

namespace {

constexpr size_t kAlign = 64;
constexpr uint64_t kNever = std::numeric_limits<uint64_t>::max();

size_t aligned(uint64_t bytes) { return (bytes + kAlign - 1) / kAlign * kAlign; }

/// Identifies a program and execution mode: its instruction streams and
/// region layout (the execution order depends on nothing else).
uint64_t programKey(const Program &program, bool timed) {
  uint64_t key = timed ? 1 : 2;
  auto mix = [&](const void *p, size_t n) {
    key = llvm::xxh3_64bits(
              llvm::ArrayRef<uint8_t>(static_cast<const uint8_t *>(p), n)) ^
          (key * 0x9E3779B97F4A7C15ull);
  };
  for (unsigned c = 0; c < program.lnc(); ++c) // every physical core's
    for (const auto &stream : program.coreStreams(c)) {
      uint64_t n = stream.size();
      mix(&n, sizeof n);
      for (const isa::Instruction &inst : stream) {
        uint8_t word[isa::kInstructionBytes];
        isa::encode(inst, word); // the canonical bytes (no struct padding)
        mix(word, sizeof word);
      }
    }
  for (const Region &r : program.regions) {
    uint64_t desc[3] = {uint64_t(r.kind), r.index, r.bytes};
    mix(desc, sizeof desc);
  }
  return key;
}

} // namespace

bool ScratchArena::bind(const Program &program, bool timed, ExecContext &ctx) {
  size_t n = program.regions.size();
  runKey = programKey(program, timed);
  packed = nullptr;
  for (const Packing &p : packings)
    if (p.key == runKey && p.offsets.size() == n)
      packed = &p;
  std::vector<size_t> offsets(n);
  used = 0;
  if (packed) {
    offsets = packed->offsets;
    used = packed->bytes;
  } else {
    for (size_t i = 0; i < n; ++i)
      if (program.regions[i].kind == Region::Kind::Scratch) {
        offsets[i] = used;
        used += aligned(program.regions[i].bytes);
      }
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
  first.assign(n, kNever);
  last.assign(n, 0);
  seq = 0;
  outOfOrder = false;
  for (size_t i = 0; i < n; ++i) {
    if (program.regions[i].kind != Region::Kind::Scratch)
      continue;
    base[i] = ctx.regions[i] = memory.get() + offsets[i];
    size[i] = program.regions[i].bytes;
    // Packed regions share bytes within the run: never assume them zero.
    valid[i] = fresh && !packed ? size[i] : 0;
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
  if (packed) {
    if (seq < packed->first[r] || seq > packed->last[r])
      outOfOrder = true;
  } else {
    first[r] = std::min(first[r], seq);
    last[r] = seq;
  }
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
  // dma_copy and collective write every element of dst (the hook fills
  // all outputBytes).
  access(inst.dst,
         inst.opcode == isa::Opcode::DmaCopy ||
             inst.opcode == isa::Opcode::Collective,
         ctx);
  ++seq;
}

void ScratchArena::recordPacking() {
  size_t n = base.size();
  Packing p;
  p.key = runKey;
  p.offsets.assign(n, 0);
  p.first = first;
  p.last = last;
  std::vector<size_t> order;
  for (size_t i = 0; i < n; ++i)
    if (base[i] && first[i] != kNever)
      order.push_back(i);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return first[a] < first[b]; });
  // Live blocks (offset, end, last use), kept sorted by offset.
  struct Block {
    size_t offset, end;
    uint64_t last;
  };
  std::vector<Block> live;
  for (size_t r : order) {
    live.erase(std::remove_if(live.begin(), live.end(),
                              [&](const Block &b) { return b.last < first[r]; }),
               live.end());
    size_t bytes = aligned(size[r]), at = 0;
    for (const Block &b : live) {
      if (b.offset >= at + bytes)
        break;
      at = std::max(at, b.end);
    }
    live.push_back({at, at + bytes, last[r]});
    std::sort(live.begin(), live.end(),
              [](const Block &a, const Block &b) { return a.offset < b.offset; });
    p.offsets[r] = at;
    p.bytes = std::max(p.bytes, at + bytes);
  }
  // Regions this run never touched keep offset 0: no instruction uses them
  // (in this execution order), and an access would fail the check.
  for (size_t i = 0; i < n; ++i)
    if (base[i] && first[i] == kNever) {
      p.first[i] = kNever;
      p.last[i] = 0;
    }
  // Keep the latest two: a caller runs one program timed and untimed.
  if (packings.size() >= 2)
    packings.erase(packings.begin());
  packings.push_back(std::move(p));
}

llvm::Error ScratchArena::finishRun() {
  if (!packed) {
    recordPacking();
    return llvm::Error::success();
  }
  if (!outOfOrder)
    return llvm::Error::success();
  // Cannot happen while the execution order depends only on the program
  // and the mode; if it ever does, say so rather than compute on.
  uint64_t key = runKey;
  packings.erase(std::remove_if(packings.begin(), packings.end(),
                                [&](const Packing &q) { return q.key == key; }),
                 packings.end());
  packed = nullptr;
  return llvm::createStringError(
      llvm::inconvertibleErrorCode(),
      "internal error: this run's execution order differs from the one its "
      "packed scratch layout was recorded for; results are not valid");
}

} // namespace trnc::sim
