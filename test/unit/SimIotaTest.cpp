//===- SimIotaTest.cpp - iota and affine_select semantics and rules -------===//
//
// iota and affine_select (Isa.h) against reference loops over the partition
// index and the row-major free index (two free dims, and a row longer than
// the simulator's streaming chunk); their encoding fields; the verifier's
// engine, operand and predicate rules.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"

#include <random>

using namespace trnc;
using namespace trnc::test;

namespace {

std::string verify(const Program &p) { return errorText(verifyProgram(p)); }

/// Runs `op` after loading x ([P, F] f32) into SBUF at 0; op writes an f32
/// [P, F] tile at byte `dstOffset`, which is returned.
std::vector<float> runOn(Instruction op, int P, int F, std::vector<float> x,
                         uint64_t dstOffset) {
  Program p = f32TileProgram(op, P, F, dstOffset);
  std::vector<float> y(P * F, -123.0f);
  REQUIRE(verify(p) == "");
  REQUIRE(run(p, {x.data()}, {y.data()}) == "");
  return y;
}

} // namespace

TEST_CASE("iota writes base + scale * (cp * p + cf * f)", "[sim][iota]") {
  for (auto [P, A, B] : {std::tuple{7, 3, 5}, std::tuple{3, 1, 2500}}) {
    int F = A * B;
    Instruction op = make(Opcode::Iota, Engine::GpSimd);
    op.dst = sbuf(DType::F32, 0, P, 16384, {uint32_t(A), uint32_t(B)});
    op.imm0 = 2.5f;
    op.imm1 = -0.5f;
    op.partitionCoef = F + 3;
    op.freeCoef = 2;
    std::vector<float> y = runOn(op, P, F, std::vector<float>(P * F, 0.0f), 16384);
    for (int p = 0; p < P; ++p)
      for (int f = 0; f < F; ++f)
        REQUIRE(y[p * F + f] == 2.5f - 0.5f * float((F + 3) * p + 2 * f));
  }
}

TEST_CASE("affine_select keeps src0 where the predicate holds", "[sim][iota]") {
  const int P = 6, F = 9;
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> dist(-1, 1);
  std::vector<float> x(P * F);
  for (float &v : x)
    v = dist(rng);
  for (AluOp cmp : {AluOp::IsLe, AluOp::IsGe, AluOp::IsEqual, AluOp::NotEqual,
                    AluOp::IsLt, AluOp::IsGt}) {
    Instruction op = make(Opcode::AffineSelect, Engine::GpSimd);
    op.op0 = uint8_t(cmp);
    op.dst = sbuf(DType::F32, 0, P, 4096, {F});
    op.src0 = sbuf(DType::F32, 0, P, 0, {F});
    op.imm0 = 7.0f; // fill
    op.imm1 = -2.0f;
    op.partitionCoef = -1;
    op.freeCoef = 1;
    std::vector<float> y = runOn(op, P, F, x, 4096);
    for (int p = 0; p < P; ++p)
      for (int f = 0; f < F; ++f) {
        int a = -2 - p + f;
        bool keep = cmp == AluOp::IsLe   ? a <= 0
                    : cmp == AluOp::IsGe ? a >= 0
                    : cmp == AluOp::IsEqual ? a == 0
                    : cmp == AluOp::NotEqual ? a != 0
                    : cmp == AluOp::IsLt ? a < 0
                                         : a > 0;
        REQUIRE(y[p * F + f] == (keep ? x[p * F + f] : 7.0f));
      }
  }
}

TEST_CASE("iota and affine_select operand rules", "[verify][iota]") {
  auto program = [](Instruction i) {
    Builder b;
    b.add(i);
    return verify(b.p);
  };
  Instruction iota = make(Opcode::Iota, Engine::GpSimd);
  iota.dst = sbuf(DType::F32, 0, 4, 0, {8});
  CHECK(program(iota) == "");
  Instruction onVector = iota;
  onVector.engine = Engine::Vector;
  CHECK(contains(program(onVector), "cannot run on the vector engine"));

  Instruction sel = make(Opcode::AffineSelect, Engine::GpSimd);
  sel.op0 = uint8_t(AluOp::IsLe);
  sel.dst = sbuf(DType::F32, 0, 4, 0, {8});
  sel.src0 = sbuf(DType::F32, 0, 4, 64, {8});
  CHECK(program(sel) == "");
  Instruction add = sel;
  add.op0 = uint8_t(AluOp::Add);
  CHECK(contains(program(add), "must be a comparison"));
  Instruction shape = sel;
  shape.src0 = sbuf(DType::F32, 0, 4, 64, {7});
  CHECK(contains(program(shape), "free elements"));
  Instruction noSrc = sel;
  noSrc.src0 = AccessPattern();
  CHECK(contains(program(noSrc), "requires src0"));
}
