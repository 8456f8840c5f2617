//===- SimDmaTest.cpp - dma_copy semantics and HBM region binding ---------===//
//
// Strided and transposing copies, casts, 0-stride broadcasts, exact
// same-dtype copies, scratch and constant regions, checked against plain
// reference loops.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"

#include <numeric>
#include <random>

using namespace trnc;
using namespace trnc::test;

TEST_CASE("dma round trip HBM -> SBUF -> HBM", "[sim][dma]") {
  Builder b;
  const int P = 128, F = 64;
  uint32_t in = b.input(DType::F32, P * F * 4);
  uint32_t out = b.output(DType::F32, P * F * 4);
  b.dma(sbuf(DType::F32, 0, P, 1024, {F}), hbm(in, DType::F32, 0, P, F, {F}));
  b.dma(hbm(out, DType::F32, 0, P, F, {F}), sbuf(DType::F32, 0, P, 1024, {F}));
  std::vector<float> x(P * F), y(P * F, -1.0f);
  std::iota(x.begin(), x.end(), 0.5f);
  RunStats stats;
  REQUIRE(run(b.p, {x.data()}, {y.data()}, &stats) == "");
  CHECK(y == x);
  CHECK(stats.instructions[size_t(Engine::Dma)] == 2);
}

TEST_CASE("dma with strides transposes a tile", "[sim][dma]") {
  // src: HBM [R=6, C=10] row-major; dst SBUF [10 partitions, 6] = src^T.
  Builder b;
  const int R = 6, C = 10;
  uint32_t in = b.input(DType::F32, R * C * 4);
  uint32_t out = b.output(DType::F32, R * C * 4);
  // Row c of the walk starts at element c and steps by C.
  b.dma(sbuf(DType::F32, 0, C, 0, {R}), hbm(in, DType::F32, 0, C, 1, {R}, {C}));
  // Write back with a 2-d free pattern: [C parts] x [2, 3] over 6 elements.
  b.dma(hbm(out, DType::F32, 0, C, R, {2, 3}), sbuf(DType::F32, 0, C, 0, {2, 3}));
  std::vector<float> x(R * C), y(R * C);
  std::iota(x.begin(), x.end(), 1.0f);
  REQUIRE(run(b.p, {x.data()}, {y.data()}) == "");
  for (int c = 0; c < C; ++c)
    for (int r = 0; r < R; ++r)
      REQUIRE(y[c * R + r] == x[r * C + c]);
}

TEST_CASE("dma reverses with a negative stride", "[sim][dma]") {
  Builder b;
  const int N = 37;
  uint32_t in = b.input(DType::F32, N * 4);
  uint32_t out = b.output(DType::F32, N * 4);
  b.dma(sbuf(DType::F32, 3, 1, 0, {N}),
        hbm(in, DType::F32, (N - 1) * 4, 1, 0, {N}, {-1}));
  b.dma(hbm(out, DType::F32, 0, 1, 0, {N}), sbuf(DType::F32, 3, 1, 0, {N}));
  std::vector<float> x(N), y(N);
  std::iota(x.begin(), x.end(), 0.0f);
  REQUIRE(run(b.p, {x.data()}, {y.data()}) == "");
  for (int i = 0; i < N; ++i)
    REQUIRE(y[i] == x[N - 1 - i]);
}

TEST_CASE("dma casts f32 -> bf16 -> f16 -> f32", "[sim][dma]") {
  Builder b;
  const int P = 4, F = 300;
  uint32_t in = b.input(DType::F32, P * F * 4);
  uint32_t out = b.output(DType::F32, P * F * 4);
  b.dma(sbuf(DType::BF16, 0, P, 0, {F}), hbm(in, DType::F32, 0, P, F, {F}));
  b.dma(sbuf(DType::F16, 0, P, 4096, {F}), sbuf(DType::BF16, 0, P, 0, {F}));
  b.dma(hbm(out, DType::F32, 0, P, F, {F}), sbuf(DType::F16, 0, P, 4096, {F}));
  std::mt19937 rng(3);
  std::normal_distribution<float> dist(0.0f, 10.0f);
  std::vector<float> x(P * F), y(P * F);
  for (float &v : x)
    v = dist(rng);
  REQUIRE(run(b.p, {x.data()}, {y.data()}) == "");
  for (int i = 0; i < P * F; ++i)
    REQUIRE(y[i] == sim::f16ToF32(sim::f32ToF16(roundBf16(x[i]))));
}

TEST_CASE("dma broadcasts with 0 strides", "[sim][dma]") {
  Builder b;
  const int P = 16, F = 8;
  uint32_t in = b.input(DType::F32, F * 4);
  uint32_t out = b.output(DType::F32, P * F * 2 * 4);
  // One HBM row to 16 partitions (partition stride 0), each element twice
  // (a 0-stride innermost dim).
  b.dma(sbuf(DType::F32, 16, P, 0, {F, 2}),
        hbm(in, DType::F32, 0, P, 0, {F, 2}, {1, 0}));
  b.dma(hbm(out, DType::F32, 0, P, F * 2, {F * 2}),
        sbuf(DType::F32, 16, P, 0, {F * 2}));
  std::vector<float> x(F), y(P * F * 2);
  std::iota(x.begin(), x.end(), 10.0f);
  REQUIRE(run(b.p, {x.data()}, {y.data()}) == "");
  for (int p = 0; p < P; ++p)
    for (int f = 0; f < F; ++f)
      for (int r = 0; r < 2; ++r)
        REQUIRE(y[(p * F + f) * 2 + r] == x[f]);
}

TEST_CASE("same-dtype dma is bit exact (i32 beyond 2^24)", "[sim][dma]") {
  Builder b;
  const int N = 64;
  uint32_t in = b.input(DType::I32, N * 4);
  uint32_t out = b.output(DType::I32, N * 4);
  b.dma(sbuf(DType::I32, 0, 8, 0, {8}), hbm(in, DType::I32, 0, 8, 8, {8}));
  // Strided (every other element) on both sides through a second tile.
  b.dma(sbuf(DType::I32, 0, 8, 512, {8}, {2}), sbuf(DType::I32, 0, 8, 0, {8}));
  b.dma(hbm(out, DType::I32, 0, 8, 8, {8}), sbuf(DType::I32, 0, 8, 512, {8}, {2}));
  std::vector<int32_t> x(N), y(N);
  for (int i = 0; i < N; ++i)
    x[i] = (1 << 30) + 2 * i + 1;
  REQUIRE(run(b.p, {x.data()}, {y.data()}) == "");
  CHECK(y == x);
}

TEST_CASE("scratch regions start zeroed and constants are readable",
          "[sim][dma]") {
  Builder b;
  uint32_t scratch = b.region(Region::Kind::Scratch, DType::F32, 64);
  uint32_t cst = b.region(Region::Kind::Constant, DType::F32, 16);
  std::vector<float> c = {1.5f, -2.0f, 3.25f, 8.0f};
  b.p.regions[cst].data.resize(16);
  std::memcpy(b.p.regions[cst].data.data(), c.data(), 16);
  uint32_t out = b.output(DType::F32, 32);
  b.dma(hbm(out, DType::F32, 0, 1, 0, {4}), hbm(scratch, DType::F32, 8, 1, 0, {4}));
  b.dma(hbm(scratch, DType::F32, 0, 1, 0, {4}), hbm(cst, DType::F32, 0, 1, 0, {4}));
  b.dma(hbm(out, DType::F32, 16, 1, 0, {4}), hbm(scratch, DType::F32, 0, 1, 0, {4}));
  std::vector<float> y(8, 99.0f);
  Simulator sim(*lookupMachineModel("trn2"));
  for (int rep = 0; rep < 2; ++rep) { // scratch is zeroed on every run
    REQUIRE(errorText(sim.run(b.p, {}, {y.data()})) == "");
    CHECK(y == std::vector<float>{0, 0, 0, 0, 1.5f, -2.0f, 3.25f, 8.0f});
  }
}

TEST_CASE("run checks the caller's buffers and the target", "[sim]") {
  Builder b;
  uint32_t in = b.input(DType::F32, 16);
  uint32_t out = b.output(DType::F32, 16);
  b.dma(hbm(out, DType::F32, 0, 1, 0, {4}), hbm(in, DType::F32, 0, 1, 0, {4}));
  float x[4] = {}, y[4] = {};
  CHECK(contains(run(b.p, {}, {y}), "takes 1 inputs, 0 given"));
  CHECK(contains(run(b.p, {x}, {y, y}), "produces 1 outputs, 2 given"));
  CHECK(contains(run(b.p, {nullptr}, {y}), "input 0 is a null pointer"));
  Simulator trn1(*lookupMachineModel("trn1"));
  CHECK(contains(errorText(trn1.run(b.p, {x}, {y})),
                 "targets trn2 but this simulator models trn1"));
}
