//===- TensorEngineSemantics.cpp - matmul on the Tensor Engine ------------===//
//
// dst[m, n] (+)= sum_k src0[k, m] * src1[k, n]: partition index is k for the
// sources (stationary src0 [K, M], moving src1 [K, N]) and m for the PSUM
// destination [M, N], which accumulates in fp32. Both tiles are converted to
// fp32 once, then a blocked kernel loops m (four rows at a time), k, n with
// n innermost so the compiler vectorises the row update. Without kFlagAccumulate the result
// overwrites dst (first write of an accumulation group).
//
//===----------------------------------------------------------------------===//

#include "sim/Exec.h"

#include <algorithm>

namespace trnc::sim {

void execMatmul(ExecContext &ctx, const isa::Instruction &inst) {
  View a = ctx.view(inst.src0), b = ctx.view(inst.src1), d = ctx.view(inst.dst);
  const size_t K = a.partitions(), M = a.freeElements(), N = b.freeElements();
  ctx.matA.resize(K * M);
  ctx.matB.resize(K * N);
  ctx.matC.resize(M * N);
  float *A = ctx.matA.data(), *B = ctx.matB.data(), *C = ctx.matC.data();

  Walker wa(a, 1), wb(b, 1), wd(d, 1);
  for (size_t k = 0; k < K; ++k) {
    wa.setPartition(k);
    wa.load(A + k * M, M);
    wb.setPartition(k);
    wb.load(B + k * N, N);
  }
  if (inst.flags & isa::kFlagAccumulate) {
    for (size_t m = 0; m < M; ++m) {
      wd.setPartition(m);
      wd.load(C + m * N, N);
    }
  } else {
    std::fill(C, C + M * N, 0.0f);
  }

  // Block n so a C row block and the matching B columns stay in L1, and
  // update four C rows per pass so each B element loaded feeds four FMAs.
  constexpr size_t kBlockN = 128;
  for (size_t n0 = 0; n0 < N; n0 += kBlockN) {
    const size_t len = std::min(N, n0 + kBlockN) - n0;
    size_t m = 0;
    for (; m + 4 <= M; m += 4) {
      float *__restrict c0 = C + m * N + n0;
      float *__restrict c1 = c0 + N;
      float *__restrict c2 = c1 + N;
      float *__restrict c3 = c2 + N;
      for (size_t k = 0; k < K; ++k) {
        const float *a = A + k * M + m;
        const float a0 = a[0], a1 = a[1], a2 = a[2], a3 = a[3];
        const float *__restrict row = B + k * N + n0;
        for (size_t n = 0; n < len; ++n) {
          const float bv = row[n];
          c0[n] += a0 * bv;
          c1[n] += a1 * bv;
          c2[n] += a2 * bv;
          c3[n] += a3 * bv;
        }
      }
    }
    for (; m < M; ++m) {
      float *__restrict c = C + m * N + n0;
      for (size_t k = 0; k < K; ++k) {
        const float s = A[k * M + m];
        const float *__restrict row = B + k * N + n0;
        for (size_t n = 0; n < len; ++n)
          c[n] += s * row[n];
      }
    }
  }

  for (size_t m = 0; m < M; ++m) {
    wd.setPartition(m);
    wd.store(C + m * N, N);
  }
}

} // namespace trnc::sim
