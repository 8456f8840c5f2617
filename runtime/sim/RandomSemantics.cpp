//===- RandomSemantics.cpp - the GpSimd random instruction -----------------===//
//
// dst[p, f] = uniform [0, 1) (Isa.h Random): element (p, f) takes the first
// word x of Philox-4x32-10 (Philox.h) at counter n = base + partitionCoef * p
// + freeCoef * f, base = imm0 * 2^24 + imm1, under the key read from the
// seed tile src0[p, 0..1]. x keeps its top m bits, m the significand width
// of dst's dtype, so the value k * 2^-m is exact there and below 1. Values
// depend only on (seed, n), so tiling and execution order never change them.
//
//===----------------------------------------------------------------------===//
#include "sim/Exec.h"
#include "sim/Philox.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace trnc::sim {
namespace {

/// Significand bits (with the implicit one) of a floating dtype.
unsigned significandBits(isa::DType t) {
  switch (t) {
  case isa::DType::BF16: return 8;
  case isa::DType::F16: return 11;
  default: return 24;
  }
}

} // namespace

void execRandom(ExecContext &ctx, const isa::Instruction &inst) {
  View d = ctx.view(inst.dst), s = ctx.view(inst.src0);
  Walker wd(d, 0), seed(s, 1);
  float *x = ctx.buf0.data();
  unsigned m = significandBits(inst.dst.dtype);
  float scale = std::ldexp(1.0f, -int(m));
  uint64_t base = uint64_t(inst.imm0) * (uint64_t(1) << 24) + uint64_t(inst.imm1);
  uint64_t free = d.freeElements();
  for (uint64_t p = 0; p < d.partitions(); ++p) {
    // The key: the two raw i32 words of the seed tile's partition p (not
    // through fp32, which would round seeds above 2^24).
    PhiloxKey key{};
    seed.setPartition(p);
    for (uint32_t &word : key) {
      int32_t w;
      std::memcpy(&w, seed.ptr(), sizeof w);
      word = uint32_t(w);
      seed.advance(1);
    }
    for (uint64_t f0 = 0; f0 < free; f0 += kChunk) {
      size_t n = size_t(std::min<uint64_t>(kChunk, free - f0));
      for (size_t i = 0; i < n; ++i) {
        uint64_t c = base + uint64_t(int64_t(inst.partitionCoef) * int64_t(p)) +
                     uint64_t(int64_t(inst.freeCoef) * int64_t(f0 + i));
        PhiloxCounter out =
            philox4x32({uint32_t(c), uint32_t(c >> 32), 0u, 0u}, key);
        x[i] = float(out[0] >> (32 - m)) * scale;
      }
      wd.store(x, n);
    }
  }
}

} // namespace trnc::sim
