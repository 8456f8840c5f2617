//===- RandomTest.cpp - the GpSimd random instruction (Isa.h Random) -------===//
//
// Philox-4x32-10 against Random123's known-answer vectors; the instruction
// against a reference loop over the counter n = base + cp * p + cf * f;
// determinism, seed sensitivity, tiling independence, the moments of the
// uniform distribution, exactness in bf16/f16; the verifier's rules.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"
#include "sim/Philox.h"

#include <cmath>
#include <cstring>
#include <set>

using namespace trnc;
using namespace trnc::test;

namespace {

std::string verify(const Program &p) { return errorText(verifyProgram(p)); }

struct Tile {
  int P, F;          // the instruction's dst: P partitions x F elements
  int32_t pc, fc;    // partitionCoef, freeCoef
  uint64_t base;     // the counter base (imm0 * 2^24 + imm1)
};

/// Runs one random instruction per tile (in order, each writing its own
/// [P, F] f32 output), the seed loaded into every partition by one DMA of
/// stride-0 rows; returns the outputs one after another.
std::vector<float> runTiles(std::array<int32_t, 2> seed,
                            const std::vector<Tile> &tiles,
                            DType dt = DType::F32) {
  Builder b;
  uint32_t in = b.input(DType::I32, 8);
  b.dma(sbuf(DType::I32, 0, 128, 0, {2}), hbm(in, DType::I32, 0, 128, 0, {2}));
  size_t total = 0;
  for (const Tile &t : tiles) {
    Instruction op = make(Opcode::Random, Engine::GpSimd);
    op.dst = sbuf(dt, 0, uint16_t(t.P), 1024, {uint32_t(t.F)});
    op.src0 = sbuf(DType::I32, 0, uint16_t(t.P), 0, {2});
    op.partitionCoef = t.pc;
    op.freeCoef = t.fc;
    op.imm0 = float(t.base >> 24);
    op.imm1 = float(t.base & 0xffffff);
    b.add(op);
    uint32_t out = b.output(DType::F32, uint64_t(t.P) * t.F * 4);
    b.dma(hbm(out, DType::F32, 0, uint16_t(t.P), t.F, {uint32_t(t.F)}),
          sbuf(dt, 0, uint16_t(t.P), 1024, {uint32_t(t.F)}));
    total += size_t(t.P) * t.F;
  }
  std::vector<float> y(total, -1.0f);
  std::vector<void *> outs;
  size_t at = 0;
  for (const Tile &t : tiles) {
    outs.push_back(y.data() + at);
    at += size_t(t.P) * t.F;
  }
  REQUIRE(verify(b.p) == "");
  REQUIRE(run(b.p, {seed.data()}, outs) == "");
  return y;
}

/// The Isa.h formula for one element.
float reference(std::array<int32_t, 2> seed, uint64_t n, unsigned m = 24) {
  sim::PhiloxCounter out = sim::philox4x32(
      {uint32_t(n), uint32_t(n >> 32), 0u, 0u},
      {uint32_t(seed[0]), uint32_t(seed[1])});
  return float(out[0] >> (32 - m)) * std::ldexp(1.0f, -int(m));
}

} // namespace

TEST_CASE("philox4x32-10 matches Random123's known-answer vectors",
          "[sim][random]") {
  // Random123 tests/kat_vectors, the three "philox4x32 10" lines.
  using sim::philox4x32;
  CHECK(philox4x32({0, 0, 0, 0}, {0, 0}) ==
        sim::PhiloxCounter{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8});
  CHECK(philox4x32({~0u, ~0u, ~0u, ~0u}, {~0u, ~0u}) ==
        sim::PhiloxCounter{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd});
  CHECK(philox4x32({0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344},
                   {0xa4093822, 0x299f31d0}) ==
        sim::PhiloxCounter{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1});
}

TEST_CASE("random writes Philox of base + cp * p + cf * f", "[sim][random]") {
  std::array<int32_t, 2> seed{int32_t(0x9e3779b9), -7};
  // A row longer than the streaming chunk, a large base, negative coefs.
  for (Tile t : {Tile{5, 2500, 2500, 1, (uint64_t(3) << 24) + 17},
                 Tile{7, 9, -9, 1, 1000}}) {
    std::vector<float> y = runTiles(seed, {t});
    for (int p = 0; p < t.P; ++p)
      for (int f = 0; f < t.F; ++f) {
        uint64_t n = t.base + uint64_t(int64_t(t.pc) * p + int64_t(t.fc) * f);
        REQUIRE(y[p * t.F + f] == reference(seed, n));
      }
  }
}

TEST_CASE("random is deterministic, seed-sensitive and tiling-independent",
          "[sim][random]") {
  std::array<int32_t, 2> s1{12345, 0}, s2{12346, 0}, s3{12345, 1};
  Tile whole{8, 16, 16, 1, 0};
  std::vector<float> a = runTiles(s1, {whole});
  CHECK(runTiles(s1, {whole}) == a);
  for (auto other : {s2, s3}) {
    std::vector<float> b = runTiles(other, {whole});
    int same = 0;
    for (size_t i = 0; i < a.size(); ++i)
      same += a[i] == b[i];
    CHECK(same < 4); // 128 draws from 2^24 values
  }
  // The same 8 x 16 tensor as four tiles: two row blocks x two column
  // blocks, each tile's counter base at its origin.
  std::vector<Tile> quarters;
  for (int r0 : {0, 4})
    for (int c0 : {0, 8})
      quarters.push_back({4, 8, 16, 1, uint64_t(r0 * 16 + c0)});
  std::vector<float> q = runTiles(s1, quarters);
  std::set<float> distinct;
  for (int t = 0; t < 4; ++t) {
    int r0 = quarters[t].base / 16, c0 = quarters[t].base % 16;
    for (int p = 0; p < 4; ++p)
      for (int f = 0; f < 8; ++f) {
        float v = q[t * 32 + p * 8 + f];
        REQUIRE(v == a[(r0 + p) * 16 + c0 + f]);
        distinct.insert(v);
      }
  }
  CHECK(distinct.size() == 128); // counters distinct across tiles
}

TEST_CASE("random is uniform on [0, 1)", "[sim][random]") {
  std::vector<float> y = runTiles({7, 11}, {Tile{128, 512, 512, 1, 0}});
  double sum = 0, sq = 0, lo = 1, hi = 0;
  int below[4] = {0, 0, 0, 0};
  for (float v : y) {
    REQUIRE(v >= 0.0f);
    REQUIRE(v < 1.0f);
    sum += v;
    sq += double(v) * v;
    lo = std::min<double>(lo, v);
    hi = std::max<double>(hi, v);
    ++below[std::min(3, int(v * 4))];
  }
  double n = double(y.size()), mean = sum / n, var = sq / n - mean * mean;
  // Standard errors: mean sqrt(1/12/n) ~ 0.0011, variance ~ 0.0003; quarter
  // counts sqrt(n * 3/16) ~ 111. Bounds at about 5 standard errors.
  CHECK(std::abs(mean - 0.5) < 0.006);
  CHECK(std::abs(var - 1.0 / 12) < 0.0016);
  for (int k : below)
    CHECK(std::abs(k - n / 4) < 560);
  CHECK(lo < 0.001);
  CHECK(hi > 0.999);
}

TEST_CASE("random is exact in bf16 and f16", "[sim][random]") {
  std::array<int32_t, 2> seed{99, 1};
  for (auto [dt, m] : {std::pair{DType::BF16, 8u}, std::pair{DType::F16, 11u}}) {
    std::vector<float> y = runTiles(seed, {Tile{16, 64, 64, 1, 5}}, dt);
    for (int i = 0; i < 16 * 64; ++i) {
      REQUIRE(y[i] == reference(seed, 5 + i, m));
      REQUIRE(y[i] < 1.0f);
    }
  }
}

TEST_CASE("random operand rules", "[verify][random]") {
  auto program = [](Instruction i) {
    Builder b;
    b.add(i);
    return verify(b.p);
  };
  Instruction ok = make(Opcode::Random, Engine::GpSimd);
  ok.dst = sbuf(DType::F32, 0, 4, 64, {8});
  ok.src0 = sbuf(DType::I32, 0, 4, 0, {2});
  ok.imm0 = 1.0f;
  ok.imm1 = 16777215.0f;
  CHECK(program(ok) == "");
  Instruction vector = ok;
  vector.engine = Engine::Vector;
  CHECK(contains(program(vector), "cannot run on the vector engine"));
  Instruction intDst = ok;
  intDst.dst.dtype = DType::I32;
  CHECK(contains(program(intDst), "must be f32, bf16 or f16"));
  Instruction floatSeed = ok;
  floatSeed.src0.dtype = DType::F32;
  CHECK(contains(program(floatSeed), "seed src0 must be i32"));
  Instruction oneWord = ok;
  oneWord.src0 = sbuf(DType::I32, 0, 4, 0, {1});
  CHECK(contains(program(oneWord), "[4, 2] tile"));
  Instruction fewer = ok;
  fewer.src0 = sbuf(DType::I32, 0, 2, 0, {2});
  CHECK(contains(program(fewer), "[4, 2] tile"));
  Instruction noSeed = ok;
  noSeed.src0 = AccessPattern();
  CHECK(contains(program(noSeed), "requires src0"));
  for (float bad : {0.5f, -1.0f, 16777216.0f}) {
    Instruction base = ok;
    base.imm1 = bad;
    CHECK(contains(program(base), "integers in [0, 2^24)"));
  }
}
