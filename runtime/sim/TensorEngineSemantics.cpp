//===- TensorEngineSemantics.cpp - matmul on the Tensor Engine ------------===//
//
// dst[m, n] (+)= sum_k src0[k, m] * src1[k, n]: partition index is k for the
// sources (stationary src0 [K, M], moving src1 [K, N]) and m for the PSUM
// destination [M, N], which accumulates in fp32. Both tiles are converted to
// fp32 once, then a blocked kernel loops m, k, n with n innermost so the
// compiler vectorises the row update. Without kFlagAccumulate the result
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

  // Block n so one C row block and the matching B columns stay in L1.
  constexpr size_t kBlockN = 128;
  for (size_t n0 = 0; n0 < N; n0 += kBlockN) {
    const size_t n1 = std::min(N, n0 + kBlockN);
    for (size_t m = 0; m < M; ++m) {
      float *__restrict c = C + m * N;
      for (size_t k = 0; k < K; ++k) {
        const float s = A[k * M + m];
        const float *__restrict row = B + k * N;
        for (size_t n = n0; n < n1; ++n)
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
