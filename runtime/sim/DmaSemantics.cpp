//===- DmaSemantics.cpp - dma_copy and the shared pattern-to-pattern copy --===//
//
// A copy walks both patterns in row-major order (partition dim outermost).
// Same dtype: raw bytes, memmove per run when both runs are contiguous (no
// rounding through fp32, so i32 stays exact). Different dtypes: through fp32
// chunks, which is the engines' cast-on-read/cast-on-write behaviour;
// integer to integer element by element, exactly (narrowing saturates).
// tensor_copy on the compute engines reuses the same routine.
// Fast path for same-dtype copies whose patterns do not overlap: both are
// refined to one common list of dims (a dim split where the other pattern
// splits it), and the two innermost are copied as rows (memcpy) or, when
// strided (transposes, broadcasts), in cache blocks of typed elements
// (4-byte transposes as SSE 4 x 4 tiles). Elements move as raw bits.
// Without overlap every order gives the row-major walk's bytes.
//
//===----------------------------------------------------------------------===//

#include "sim/DTypes.h"
#include "sim/Exec.h"

#include <algorithm>
#include <cstring>
#include <xmmintrin.h>
#include <utility>

namespace trnc::sim {
namespace {

uint64_t totalElements(const View &v) { return v.partitions() * v.freeElements(); }

constexpr unsigned kMaxDims = 2 * (1 + isa::kMaxFreeDims);

/// A dst/src pair of patterns over one common list of dims (outermost first).
struct CommonDims {
  unsigned nd = 0;
  uint64_t count[kMaxDims];
  int64_t dst[kMaxDims], src[kMaxDims]; // strides in bytes
};

/// Refine the merged dims of `d` and `s` to common dims; false when their
/// counts do not divide each other (then the walkers pair the elements).
bool commonDims(const View &d, const View &s, CommonDims &out) {
  int64_t ds[kMaxDims], ss[kMaxDims];
  uint64_t dc[kMaxDims], sc[kMaxDims];
  unsigned dn = mergeDims(d, 0, ds, dc), sn = mergeDims(s, 0, ss, sc);
  unsigned i = 0, j = 0;
  while (i < dn && j < sn) {
    if (out.nd == kMaxDims)
      return false;
    uint64_t n = std::min(dc[i], sc[j]);
    if (dc[i] % n || sc[j] % n)
      return false;
    // The outer n of the larger dim pairs with the whole smaller one.
    dc[i] /= n;
    sc[j] /= n;
    out.count[out.nd] = n;
    out.dst[out.nd] = ds[i] * int64_t(dc[i]);
    out.src[out.nd] = ss[j] * int64_t(sc[j]);
    ++out.nd;
    i += dc[i] == 1;
    j += sc[j] == 1;
  }
  return i == dn && j == sn;
}

/// [lo, hi) bytes a view touches.
std::pair<uintptr_t, uintptr_t> extent(const View &v) {
  uintptr_t lo = reinterpret_cast<uintptr_t>(v.base), hi = lo;
  for (unsigned d = 0; d < v.numDims; ++d) {
    int64_t span = v.strideBytes[d] * int64_t(v.count[d] - 1);
    (span < 0 ? lo : hi) += span;
  }
  return {lo, hi + v.elemBytes};
}

template <typename T> void copyElement(uint8_t *d, const uint8_t *s) {
  T v;
  std::memcpy(&v, s, sizeof(T));
  std::memcpy(d, &v, sizeof(T));
}

/// dst[r][c] = src[r][c] for 4-byte elements where dst rows (stride dr) and
/// src columns (stride sc) are contiguous: 4 x 4 tiles moved through SSE
/// registers (_MM_TRANSPOSE4_PS), the ragged edges one by one.
void transpose4(uint8_t *d, int64_t dr, const uint8_t *s, int64_t sc,
                uint64_t rows, uint64_t cols) {
  auto at = [&](uint64_t r, uint64_t c) {
    copyElement<uint32_t>(d + int64_t(r) * dr + int64_t(c) * 4,
                          s + int64_t(r) * 4 + int64_t(c) * sc);
  };
  uint64_t r4 = rows / 4 * 4, c4 = cols / 4 * 4;
  for (uint64_t r = 0; r < r4; r += 4) {
    for (uint64_t c = 0; c < c4; c += 4) {
      const uint8_t *sp = s + int64_t(r) * 4 + int64_t(c) * sc;
      __m128 a = _mm_loadu_ps(reinterpret_cast<const float *>(sp));
      __m128 b = _mm_loadu_ps(reinterpret_cast<const float *>(sp + sc));
      __m128 e = _mm_loadu_ps(reinterpret_cast<const float *>(sp + 2 * sc));
      __m128 f = _mm_loadu_ps(reinterpret_cast<const float *>(sp + 3 * sc));
      _MM_TRANSPOSE4_PS(a, b, e, f);
      uint8_t *dp = d + int64_t(r) * dr + int64_t(c) * 4;
      _mm_storeu_ps(reinterpret_cast<float *>(dp), a);
      _mm_storeu_ps(reinterpret_cast<float *>(dp + dr), b);
      _mm_storeu_ps(reinterpret_cast<float *>(dp + 2 * dr), e);
      _mm_storeu_ps(reinterpret_cast<float *>(dp + 3 * dr), f);
    }
    for (uint64_t i = r; i < r + 4; ++i)
      for (uint64_t c = c4; c < cols; ++c)
        at(i, c);
  }
  for (uint64_t r = r4; r < rows; ++r)
    for (uint64_t c = 0; c < cols; ++c)
      at(r, c);
}

/// dst[r][c] = src[r][c] for R x C elements of T (strides in bytes).
template <typename T>
void copy2D(uint8_t *d, int64_t dr, int64_t dc, const uint8_t *s, int64_t sr,
            int64_t sc, uint64_t rows, uint64_t cols) {
  constexpr int64_t eb = sizeof(T);
  if (dc == eb && sc == eb) {
    for (uint64_t r = 0; r < rows; ++r)
      std::memcpy(d + int64_t(r) * dr, s + int64_t(r) * sr, cols * eb);
    return;
  }
  if constexpr (sizeof(T) == 4) {
    if (dc == eb && sr == eb) // dst rows and src columns contiguous
      return transpose4(d, dr, s, sc, rows, cols);
    if (dr == eb && sc == eb) // the same, walking columns as rows
      return transpose4(d, dc, s, sr, cols, rows);
  }
  if (sc == 0 && dc == eb) { // each row one repeated element
    for (uint64_t r = 0; r < rows; ++r) {
      T v;
      std::memcpy(&v, s + int64_t(r) * sr, sizeof(T));
      uint8_t *dp = d + int64_t(r) * dr;
      for (uint64_t c = 0; c < cols; ++c)
        std::memcpy(dp + c * sizeof(T), &v, sizeof(T));
    }
    return;
  }
  // Blocks of 16 x 16: a transpose then reuses every cache line it loads.
  constexpr uint64_t kBlock = 16;
  for (uint64_t r0 = 0; r0 < rows; r0 += kBlock) {
    uint64_t r1 = std::min(rows, r0 + kBlock);
    for (uint64_t c0 = 0; c0 < cols; c0 += kBlock) {
      uint64_t c1 = std::min(cols, c0 + kBlock);
      for (uint64_t r = r0; r < r1; ++r) {
        uint8_t *dp = d + int64_t(r) * dr;
        const uint8_t *sp = s + int64_t(r) * sr;
        for (uint64_t c = c0; c < c1; ++c)
          copyElement<T>(dp + int64_t(c) * dc, sp + int64_t(c) * sc);
      }
    }
  }
}

template <typename T>
void copyDims(const CommonDims &cd, unsigned dim, uint8_t *d,
              const uint8_t *s) {
  if (dim + 2 == cd.nd)
    return copy2D<T>(d, cd.dst[dim], cd.dst[dim + 1], s, cd.src[dim],
                     cd.src[dim + 1], cd.count[dim], cd.count[dim + 1]);
  for (uint64_t i = 0; i < cd.count[dim]; ++i)
    copyDims<T>(cd, dim + 1, d + int64_t(i) * cd.dst[dim],
                s + int64_t(i) * cd.src[dim]);
}

/// The fast path; false when it does not apply.
bool copyDisjoint(const View &dst, const View &src) {
  if (totalElements(dst) == 0)
    return true;
  auto [dlo, dhi] = extent(dst);
  auto [slo, shi] = extent(src);
  if (dlo < shi && slo < dhi)
    return false;
  CommonDims cd;
  if (!commonDims(dst, src, cd))
    return false;
  if (cd.nd == 1) { // as [1, n]
    cd.count[1] = cd.count[0];
    cd.dst[1] = cd.dst[0];
    cd.src[1] = cd.src[0];
    cd.count[0] = 1;
    cd.dst[0] = cd.src[0] = 0;
    cd.nd = 2;
  }
  switch (dst.elemBytes) {
  case 1: copyDims<uint8_t>(cd, 0, dst.base, src.base); return true;
  case 2: copyDims<uint16_t>(cd, 0, dst.base, src.base); return true;
  case 4: copyDims<uint32_t>(cd, 0, dst.base, src.base); return true;
  case 8: copyDims<uint64_t>(cd, 0, dst.base, src.base); return true;
  default: return false;
  }
}

void copyPattern(ExecContext &ctx, const View &dst, const View &src) {
  if (dst.dtype == src.dtype && copyDisjoint(dst, src))
    return;
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
