//===- SimTensorTest.cpp - matmul on the Tensor Engine ----------------------===//
//
// dst[m, n] (+)= sum_k src0[k, m] * src1[k, n] in fp32 and bf16, with
// accumulation on and off, against a double-precision reference loop.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"

#include <cmath>
#include <random>

using namespace trnc;
using namespace trnc::test;

namespace {

struct MatmulCase {
  int K, M, N;
  DType dt;
};

/// Inputs: A [K, M] and B [K, N] as f32 in HBM; loads them to SBUF in `dt`,
/// runs `passes` matmuls (the first overwrites, later ones accumulate when
/// `accumulate`), and writes PSUM [M, N] back.
std::vector<float> runMatmul(const MatmulCase &c, const std::vector<float> &A,
                             const std::vector<float> &B, int passes,
                             bool accumulate) {
  Builder b;
  uint32_t ia = b.input(DType::F32, c.K * c.M * 4);
  uint32_t ib = b.input(DType::F32, c.K * c.N * 4);
  uint32_t out = b.output(DType::F32, c.M * c.N * 4);
  uint32_t ebytes = dtypeBytes(c.dt);
  AccessPattern sa = sbuf(c.dt, 0, c.K, 0, {uint32_t(c.M)});
  AccessPattern sb = sbuf(c.dt, 0, c.K, c.M * ebytes, {uint32_t(c.N)});
  b.dma(sa, hbm(ia, DType::F32, 0, c.K, c.M, {uint32_t(c.M)}));
  b.dma(sb, hbm(ib, DType::F32, 0, c.K, c.N, {uint32_t(c.N)}));
  AccessPattern dst = psum(DType::F32, 0, c.M, 2048, {uint32_t(c.N)});
  for (int pass = 0; pass < passes; ++pass) {
    Instruction mm = make(Opcode::Matmul, Engine::Tensor);
    mm.dst = dst;
    mm.src0 = sa;
    mm.src1 = sb;
    mm.flags = (accumulate && pass > 0) ? kFlagAccumulate : 0;
    b.add(mm);
  }
  b.dma(hbm(out, DType::F32, 0, c.M, c.N, {uint32_t(c.N)}), dst);
  std::vector<float> y(c.M * c.N, -7.0f);
  REQUIRE(run(b.p, {(void *)A.data(), (void *)B.data()}, {y.data()}) == "");
  return y;
}

void checkMatmul(const MatmulCase &c, int passes, bool accumulate) {
  std::mt19937 rng(c.K * 131 + c.M * 7 + c.N);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> A(c.K * c.M), B(c.K * c.N);
  for (float &v : A)
    v = dist(rng);
  for (float &v : B)
    v = dist(rng);
  std::vector<float> y = runMatmul(c, A, B, passes, accumulate);
  auto q = [&](float v) { return c.dt == DType::BF16 ? roundBf16(v) : v; };
  double scale = accumulate ? passes : 1;
  for (int m = 0; m < c.M; ++m)
    for (int n = 0; n < c.N; ++n) {
      double ref = 0;
      for (int k = 0; k < c.K; ++k)
        ref += double(q(A[k * c.M + m])) * double(q(B[k * c.N + n]));
      ref *= scale;
      INFO("m=" << m << " n=" << n);
      REQUIRE(std::fabs(y[m * c.N + n] - ref) <= 1e-4 * (1 + std::fabs(ref)) * c.K);
    }
}

} // namespace

TEST_CASE("matmul fp32", "[sim][matmul]") {
  checkMatmul({64, 32, 100, DType::F32}, 1, false);
  checkMatmul({128, 128, 512, DType::F32}, 1, false);
  checkMatmul({1, 1, 1, DType::F32}, 1, false);
}

TEST_CASE("matmul bf16 inputs accumulate in fp32", "[sim][matmul]") {
  checkMatmul({96, 17, 200, DType::BF16}, 1, false);
}

TEST_CASE("matmul accumulate flag adds into PSUM", "[sim][matmul]") {
  checkMatmul({32, 16, 48, DType::F32}, 3, true);
  // Without the flag every pass overwrites: the result is one product.
  checkMatmul({32, 16, 48, DType::BF16}, 3, false);
}

TEST_CASE("matmul reads strided operands", "[sim][matmul]") {
  // src0 [K=4, M=3] stored with stride 2 (every other element); src1 with a
  // 2-d free pattern [2, 3] -> N = 6; dst in PSUM bank 1 at an offset.
  Builder b;
  const int K = 4, M = 3, N = 6;
  uint32_t ia = b.input(DType::F32, K * 2 * M * 4);
  uint32_t ib = b.input(DType::F32, K * N * 4);
  uint32_t out = b.output(DType::F32, M * N * 4);
  AccessPattern sa = sbuf(DType::F32, 32, K, 100 * 4, {uint32_t(M)}, {2});
  AccessPattern sb = sbuf(DType::F32, 32, K, 0, {2, 3});
  b.dma(sbuf(DType::F32, 32, K, 100 * 4, {uint32_t(2 * M)}),
        hbm(ia, DType::F32, 0, K, 2 * M, {uint32_t(2 * M)}));
  b.dma(sb, hbm(ib, DType::F32, 0, K, N, {2, 3}));
  Instruction mm = make(Opcode::Matmul, Engine::Tensor);
  mm.dst = psum(DType::F32, 64, M, 2048 + 64, {uint32_t(N)});
  mm.src0 = sa;
  mm.src1 = sb;
  b.add(mm);
  b.dma(hbm(out, DType::F32, 0, M, N, {uint32_t(N)}), mm.dst);
  std::vector<float> A(K * 2 * M), B(K * N), y(M * N);
  for (size_t i = 0; i < A.size(); ++i)
    A[i] = float(i % 5) - 2.0f;
  for (size_t i = 0; i < B.size(); ++i)
    B[i] = float(i % 7) * 0.5f;
  REQUIRE(run(b.p, {A.data(), B.data()}, {y.data()}) == "");
  for (int m = 0; m < M; ++m)
    for (int n = 0; n < N; ++n) {
      float ref = 0;
      for (int k = 0; k < K; ++k)
        ref += A[k * 2 * M + 2 * m] * B[k * N + n];
      REQUIRE(y[m * N + n] == ref);
    }
}
