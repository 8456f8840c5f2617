//===- DmaSemantics.cpp - dma_copy and the shared pattern-to-pattern copy --===//
//
// A copy walks both patterns in row-major order (partition dim outermost).
// Same dtype: raw bytes, memmove per run when both runs are contiguous (no
// rounding through fp32, so i32 stays exact). Different dtypes: through fp32
// chunks, which is the engines' cast-on-read/cast-on-write behaviour;
// integer to integer element by element, exactly (narrowing saturates).
// tensor_copy on the compute engines reuses the same routine.
//
//===----------------------------------------------------------------------===//

#include "sim/DTypes.h"
#include "sim/Exec.h"

#include <algorithm>
#include <cstring>

namespace trnc::sim {
namespace {

uint64_t totalElements(const View &v) { return v.partitions() * v.freeElements(); }

void copyPattern(ExecContext &ctx, const View &dst, const View &src) {
  Walker d(dst, 0), s(src, 0);
  uint64_t left = totalElements(dst);
  if (dst.dtype == src.dtype) {
    const unsigned eb = dst.elemBytes;
    while (left) {
      uint64_t k = std::min(d.runLeft(), s.runLeft());
      if (d.runStride() == int64_t(eb) && s.runStride() == int64_t(eb)) {
        std::memmove(d.ptr(), s.ptr(), k * eb);
      } else {
        uint8_t *dp = d.ptr();
        const uint8_t *sp = s.ptr();
        for (uint64_t i = 0; i < k; ++i)
          std::memmove(dp + int64_t(i) * d.runStride(),
                       sp + int64_t(i) * s.runStride(), eb);
      }
      d.advance(k);
      s.advance(k);
      left -= k;
    }
    return;
  }
  if (isa::isIntegerDType(dst.dtype) && isa::isIntegerDType(src.dtype)) {
    // int64 <-> int32 <-> u8/bool exactly, never through fp32 (Isa.h, DType).
    for (; left; --left) {
      storeInteger(d.ptr(), dst.dtype, loadInteger(s.ptr(), src.dtype));
      d.advance(1);
      s.advance(1);
    }
    return;
  }
  float *buf = ctx.buf0.data();
  while (left) {
    size_t k = size_t(std::min<uint64_t>(left, kChunk));
    s.load(buf, k);
    d.store(buf, k);
    left -= k;
  }
}

} // namespace

void execDmaCopy(ExecContext &ctx, const isa::Instruction &inst) {
  copyPattern(ctx, ctx.view(inst.dst), ctx.view(inst.src0));
}

void execTensorCopy(ExecContext &ctx, const isa::Instruction &inst) {
  // Partitions and free elements agree (verified), so the flat walk pairs
  // element i of partition p with element i of partition p.
  copyPattern(ctx, ctx.view(inst.dst), ctx.view(inst.src0));
}

} // namespace trnc::sim
