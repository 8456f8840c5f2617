//===- TransposeMatmulTest.cpp - the matmul transpose flag -----------------===//
//
// kFlagTranspose (isa/Isa.h) marks a Tensor Engine transpose: a matmul whose
// moving operand is an identity. It leaves dst = src0^T, bit-exactly on trn2
// (NaN/Inf stay put) and as the product on trn1 (0 * Inf = NaN spreads),
// survives encode/decode, is refused by the verifier with accumulate or a
// non-square moving operand, counts in HFU but not in MFU, and is marked in
// the trace.
//
//===----------------------------------------------------------------------===//

#include "TimingTestUtil.h"

#include "profile/ChromeTrace.h"

#include <array>
#include <cmath>

using namespace trnc;
using namespace trnc::test;

namespace {

/// Loads X [P=rows, F=cols] f32 and a [rows, rows] identity, transposes X
/// with one flagged matmul into PSUM [cols, rows] and stores it.
Program transposeProgram(int rows, int cols, uint8_t extraFlags = 0,
                         const char *target = "trn2") {
  Builder b;
  b.p.target = target;
  uint32_t ix = b.input(DType::F32, rows * cols * 4);
  uint32_t iid = b.input(DType::F32, rows * rows * 4);
  uint32_t out = b.output(DType::F32, rows * cols * 4);
  AccessPattern x = sbuf(DType::F32, 0, rows, 0, {uint32_t(cols)});
  AccessPattern id = sbuf(DType::F32, 0, rows, 4096, {uint32_t(rows)});
  b.dma(x, hbm(ix, DType::F32, 0, rows, cols, {uint32_t(cols)}));
  b.dma(id, hbm(iid, DType::F32, 0, rows, rows, {uint32_t(rows)}));
  Instruction mm = make(Opcode::Matmul, Engine::Tensor);
  mm.dst = psum(DType::F32, 0, cols, 0, {uint32_t(rows)});
  mm.src0 = x;
  mm.src1 = id;
  mm.flags = kFlagTranspose | extraFlags;
  b.add(mm);
  b.dma(hbm(out, DType::F32, 0, cols, rows, {uint32_t(rows)}), mm.dst);
  return b.p;
}

std::vector<float> identity(int n) {
  std::vector<float> id(n * n, 0.0f);
  for (int i = 0; i < n; ++i)
    id[i * n + i] = 1.0f;
  return id;
}

} // namespace

TEST_CASE("a transpose matmul leaves src0 transposed in PSUM", "[sim][matmul]") {
  const int rows = 48, cols = 100;
  std::vector<float> x(rows * cols), y(rows * cols, -1.0f);
  for (size_t i = 0; i < x.size(); ++i)
    x[i] = float(i) * 0.25f - 300.0f; // exact in fp32: the transpose is exact
  std::vector<float> id = identity(rows);
  REQUIRE(run(transposeProgram(rows, cols), {x.data(), id.data()}, {y.data()}) == "");
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) {
      INFO("r=" << r << " c=" << c);
      REQUIRE(y[c * rows + r] == x[r * cols + c]);
    }
}

TEST_CASE("transposes move Inf and NaN exactly from NeuronCore-v3 on",
          "[sim][matmul]") {
  const int rows = 8, cols = 4;
  std::vector<float> x(rows * cols, 1.5f), id = identity(rows);
  x[2 * cols + 1] = INFINITY;
  x[5 * cols + 3] = NAN;
  std::vector<float> y(rows * cols);
  REQUIRE(run(transposeProgram(rows, cols), {x.data(), id.data()}, {y.data()}) == "");
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) {
      float got = y[c * rows + r], want = x[r * cols + c];
      INFO("r=" << r << " c=" << c);
      CHECK((std::isnan(want) ? std::isnan(got) : got == want));
    }
  // trn1's Tensor Engine multiplies by the identity: 0 * Inf = NaN poisons
  // the rest of the Inf's row of the result (NKI ISA reference,
  // nc_transpose); the Inf itself stays Inf.
  REQUIRE(run(transposeProgram(rows, cols, 0, "trn1"), {x.data(), id.data()},
              {y.data()}) == "");
  for (int r = 0; r < rows; ++r)
    CHECK((r == 2 ? std::isinf(y[1 * rows + r]) : std::isnan(y[1 * rows + r])));
}

TEST_CASE("the transpose flag survives encode/decode", "[isa]") {
  Instruction mm = matmul(128);
  mm.flags = kFlagTranspose;
  std::array<uint8_t, kInstructionBytes> word{};
  encode(mm, word.data());
  CHECK(decode(word.data()).flags == kFlagTranspose);
}

TEST_CASE("the verifier checks transpose matmuls", "[verify]") {
  CHECK(errorText(verifyProgram(transposeProgram(48, 100))) == "");
  CHECK(contains(errorText(verifyProgram(transposeProgram(48, 100, kFlagAccumulate))),
                 "transpose matmul cannot accumulate"));
  // A moving operand that is not [K, K].
  Builder b;
  Instruction mm = matmul(512);
  mm.flags = kFlagTranspose;
  b.raw(mm);
  CHECK(contains(errorText(verifyProgram(b.p)),
                 "transpose matmul: src1 must be a [K, K] identity, has K=128 and N=512"));
  // The flag is a matmul flag only.
  Builder v;
  Instruction act = activation(128);
  act.flags = kFlagTranspose;
  v.raw(act);
  CHECK(contains(errorText(verifyProgram(v.p)), "flags 0x10 not valid for activation"));
}

TEST_CASE("transposes count in HFU, not in MFU", "[timing]") {
  Builder b;
  b.p.target = "trn1";
  Instruction t = matmul(128);
  t.flags = kFlagTranspose;
  b.raw(t);
  b.raw(matmul(512, DType::BF16, 2048));
  Profile p = runTimed(b.p);
  CHECK(p.tensorFlops == 2.0 * 128 * 128 * (128 + 512));
  CHECK(p.usefulMatmulFlops == 2.0 * 128 * 128 * 512);
  CHECK_NS(p.mfu / p.hfu, 512.0 / (128 + 512));
  // The trace marks the transpose slice, and only it.
  std::string trace = profile::writeChromeTrace(b.p, p);
  size_t first = trace.find("\"transpose\":true");
  CHECK(first != std::string::npos);
  CHECK(trace.find("\"transpose\":true", first + 1) == std::string::npos);
}
