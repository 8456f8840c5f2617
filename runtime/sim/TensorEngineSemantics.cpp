//===- TensorEngineSemantics.cpp - matmul on the Tensor Engine ------------===//
//
// dst[m, n] (+)= sum_k src0[k, m] * src1[k, n]: partition index is k for the
// sources (stationary src0 [K, M], moving src1 [K, N]) and m for the PSUM
// destination [M, N], which accumulates in fp32. Without kFlagAccumulate the
// result overwrites dst (first write of an accumulation group).
//
// The arithmetic is one BLAS sgemm (OpenBLAS, a well-kept library, instead of
// a hand-written kernel: simulating a graph should cost about what running it
// eagerly costs). fp32 operands whose rows are contiguous are handed to BLAS
// in place (the partition stride is the leading dimension); other dtypes and
// layouts are converted to fp32 once per instruction. Inputs are rounded to
// their dtype before the product and the sums are fp32, like the hardware.
// BLAS runs on the calling thread: a matmul is one <= 128 x 512 tile, too
// small to gain from OpenBLAS's threads, whose hand-offs (and, on a busy
// machine, their spinning against the caller's own threads) cost more than
// the product. OpenBLAS splits M and N, never K, across threads, so the
// sums, and the results, are the same bits either way.
//
// A transpose (kFlagTranspose) on a target whose Tensor Engine transposes
// bit-exactly (NeuronCore-v3 on) writes dst[m, n] = src0[n, m] as read in
// fp32, without multiplying, so NaN/Inf stay where they are; elsewhere it is
// the product with the identity like any matmul.
//
//===----------------------------------------------------------------------===//

#include "sim/Exec.h"

#include <cblas.h>

namespace trnc::sim {

namespace {

/// Row stride in fp32 elements when every partition of `v` is one contiguous
/// fp32 row of its free elements; 0 otherwise.
int64_t contiguousF32RowStride(const View &v) {
  if (v.dtype != isa::DType::F32 || v.strideBytes[0] % 4 != 0)
    return 0;
  int64_t expected = 4;
  for (unsigned d = v.numDims; d-- > 1;) {
    if (v.count[d] != 1 && v.strideBytes[d] != expected)
      return 0;
    expected *= static_cast<int64_t>(v.count[d]);
  }
  if (v.partitions() > 1 && v.strideBytes[0] < expected)
    return 0;
  return v.partitions() > 1 ? v.strideBytes[0] / 4
                            : static_cast<int64_t>(v.freeElements());
}

/// An fp32 [rows, cols] matrix over `v`: in place when possible, else a copy
/// into `scratch` (loaded when `load`).
struct Matrix {
  float *data;
  int64_t ld;
  bool inPlace;
};

Matrix bind(const View &v, std::vector<float> &scratch, bool load) {
  const size_t rows = v.partitions(), cols = v.freeElements();
  if (int64_t ld = contiguousF32RowStride(v))
    return {reinterpret_cast<float *>(v.base), ld, true};
  scratch.resize(rows * cols);
  if (load) {
    Walker w(v, 1);
    for (size_t r = 0; r < rows; ++r) {
      w.setPartition(r);
      w.load(scratch.data() + r * cols, cols);
    }
  }
  return {scratch.data(), static_cast<int64_t>(cols), false};
}

} // namespace

void execMatmul(ExecContext &ctx, const isa::Instruction &inst) {
  static const bool singleThreaded = (openblas_set_num_threads(1), true);
  (void)singleThreaded;
  View a = ctx.view(inst.src0), b = ctx.view(inst.src1), d = ctx.view(inst.dst);
  const size_t K = a.partitions(), M = a.freeElements(), N = b.freeElements();
  const bool accumulate = inst.flags & isa::kFlagAccumulate;

  if ((inst.flags & isa::kFlagTranspose) && ctx.exactTranspose) {
    // src0 [K partitions, M] -> dst [M partitions, N = K] (verified N == K).
    Matrix T = bind(a, ctx.matA, /*load=*/true);
    ctx.matC.resize(M * K);
    for (size_t k = 0; k < K; ++k)
      for (size_t m = 0; m < M; ++m)
        ctx.matC[m * K + k] = T.data[k * T.ld + m];
    Walker wd(d, 1);
    for (size_t m = 0; m < M; ++m) {
      wd.setPartition(m);
      wd.store(ctx.matC.data() + m * K, K);
    }
    return;
  }

  Matrix A = bind(a, ctx.matA, /*load=*/true);
  Matrix B = bind(b, ctx.matB, /*load=*/true);
  Matrix C = bind(d, ctx.matC, /*load=*/accumulate);

  // C[M, N] = A[K, M]^T * B[K, N] (+ C).
  cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, static_cast<int>(M),
              static_cast<int>(N), static_cast<int>(K), 1.0f, A.data,
              static_cast<int>(A.ld), B.data, static_cast<int>(B.ld),
              accumulate ? 1.0f : 0.0f, C.data, static_cast<int>(C.ld));

  if (!C.inPlace) {
    Walker wd(d, 1);
    for (size_t m = 0; m < M; ++m) {
      wd.setPartition(m);
      wd.store(C.data + m * N, N);
    }
  }
}

} // namespace trnc::sim
