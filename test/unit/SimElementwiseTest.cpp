//===- SimElementwiseTest.cpp - torch-exact corners of the elementwise ops ===//
//
// The semantics choices that make trnc match torch, each against values
// torch gives: NaN propagation of max/min/relu, round half to even, the
// signs of remainder and fmod, floor division, bitwise ops on negative
// ints, copy_predicated, and the integer/bool dtypes (int64 narrowing,
// bool writes as x != 0).
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"

#include <cmath>
#include <limits>

using namespace trnc;
using namespace trnc::test;

namespace {

const float kNan = std::numeric_limits<float>::quiet_NaN();
const float kInf = std::numeric_limits<float>::infinity();

/// Runs `op` over [1, n] f32 inputs a (and b) in SBUF, returns dst as f32.
std::vector<float> run1(Instruction op, std::vector<float> a,
                        std::vector<float> b = {}) {
  Builder bld;
  uint32_t n = uint32_t(a.size());
  std::vector<void *> ptrs;
  std::vector<std::vector<float> *> ins = {&a};
  if (!b.empty())
    ins.push_back(&b);
  for (size_t i = 0; i < ins.size(); ++i) {
    uint32_t r = bld.input(DType::F32, n * 4);
    bld.dma(sbuf(DType::F32, 0, 1, i * 4096, {n}), hbm(r, DType::F32, 0, 1, n, {n}));
    ptrs.push_back(ins[i]->data());
  }
  op.src0 = sbuf(DType::F32, 0, 1, 0, {n});
  if (!b.empty())
    op.src1 = sbuf(DType::F32, 0, 1, 4096, {n});
  op.dst = sbuf(DType::F32, 0, 1, 8192, {n});
  bld.add(op);
  uint32_t out = bld.output(DType::F32, n * 4);
  bld.dma(hbm(out, DType::F32, 0, 1, n, {n}), op.dst);
  std::vector<float> y(n, -123.0f);
  REQUIRE(run(bld.p, ptrs, {y.data()}) == "");
  return y;
}

std::vector<float> alu(AluOp o, std::vector<float> a, std::vector<float> b) {
  Instruction op = make(Opcode::TensorTensor, Engine::Vector);
  op.op0 = uint8_t(o);
  return run1(op, std::move(a), std::move(b));
}

std::vector<float> act(ActFunc f, std::vector<float> a) {
  Instruction op = make(Opcode::Activation, Engine::Scalar);
  op.op0 = uint8_t(f);
  op.imm0 = 1.0f;
  return run1(op, std::move(a));
}

void requireSame(const std::vector<float> &got, const std::vector<float> &want) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    INFO("element " << i << ": got " << got[i] << " want " << want[i]);
    if (std::isnan(want[i]))
      REQUIRE(std::isnan(got[i]));
    else
      REQUIRE(got[i] == want[i]);
  }
}

} // namespace

TEST_CASE("max, min and relu propagate NaN as torch", "[sim][elementwise]") {
  requireSame(alu(AluOp::Max, {kNan, 1, 2}, {1, kNan, 3}), {kNan, kNan, 3});
  requireSame(alu(AluOp::Min, {kNan, 1, 2}, {1, kNan, 3}), {kNan, kNan, 2});
  requireSame(act(ActFunc::Relu, {kNan, -1, 2}), {kNan, 0, 2});
}

TEST_CASE("round is half to even; floor/ceil/trunc", "[sim][elementwise]") {
  std::vector<float> x = {0.5f, 1.5f, 2.5f, -0.5f, -1.5f, -2.7f};
  requireSame(act(ActFunc::Round, x), {0, 2, 2, -0.0f, -2, -3});
  requireSame(act(ActFunc::Floor, x), {0, 1, 2, -1, -2, -3});
  requireSame(act(ActFunc::Ceil, x), {1, 2, 3, -0.0f, -1, -2});
  requireSame(act(ActFunc::Trunc, x), {0, 1, 2, -0.0f, -1, -2});
  requireSame(act(ActFunc::IsNan, {kNan, kInf, 1}), {1, 0, 0});
  requireSame(act(ActFunc::IsInf, {kNan, -kInf, 1}), {0, 1, 0});
}

TEST_CASE("remainder, fmod and floor_divide signs", "[sim][elementwise]") {
  // torch.remainder(-7, 3) = 2, fmod(-7, 3) = -1, -7 // 3 = -3.
  std::vector<float> a = {-7, 7, -7, 7, 5.5f}, b = {3, -3, -3, 3, 2};
  requireSame(alu(AluOp::Remainder, a, b), {2, -2, -1, 1, 1.5f});
  requireSame(alu(AluOp::Fmod, a, b), {-1, 1, -1, 1, 1.5f});
  requireSame(alu(AluOp::FloorDivide, a, b), {-3, -3, 2, 2, 2});
}

TEST_CASE("bitwise and logical_xor", "[sim][elementwise]") {
  std::vector<float> a = {-6, 5, 0, 12}, b = {3, -2, 7, 10};
  requireSame(alu(AluOp::BitwiseAnd, a, b), {2, 4, 0, 8});
  requireSame(alu(AluOp::BitwiseOr, a, b), {-5, -1, 7, 14});
  requireSame(alu(AluOp::BitwiseXor, a, b), {-7, -5, 7, 6});
  requireSame(alu(AluOp::LogicalXor, {0, 1, 2, 0}, {0, 0, 3, 4}), {0, 1, 0, 1});
}

TEST_CASE("copy_predicated keeps dst where the predicate is 0",
          "[sim][elementwise]") {
  Builder bld;
  const uint32_t n = 4;
  std::vector<float> pred = {1, 0, 2, 0}, src = {10, kInf, 30, kNan},
                     init = {-1, -2, -3, -4};
  std::vector<void *> ptrs;
  for (int i = 0; i < 3; ++i) {
    uint32_t r = bld.input(DType::F32, n * 4);
    bld.dma(sbuf(DType::F32, 0, 1, i * 4096, {n}), hbm(r, DType::F32, 0, 1, n, {n}));
  }
  ptrs = {pred.data(), src.data(), init.data()};
  Instruction op = make(Opcode::CopyPredicated, Engine::Vector);
  op.src0 = sbuf(DType::F32, 0, 1, 0, {n});
  op.src1 = sbuf(DType::F32, 0, 1, 4096, {n});
  op.dst = sbuf(DType::F32, 0, 1, 8192, {n});
  bld.add(op);
  uint32_t out = bld.output(DType::F32, n * 4);
  bld.dma(hbm(out, DType::F32, 0, 1, n, {n}), op.dst);
  std::vector<float> y(n);
  REQUIRE(run(bld.p, ptrs, {y.data()}) == "");
  requireSame(y, {10, -2, 30, -4});
}

TEST_CASE("int64 narrows saturating and bool stores x != 0",
          "[sim][elementwise][dtype]") {
  Builder bld;
  const uint32_t n = 4;
  std::vector<int64_t> in = {5, -(int64_t(1) << 40), (int64_t(1) << 40), 16777217};
  uint32_t r = bld.input(DType::I64, n * 8);
  bld.dma(sbuf(DType::I32, 0, 1, 0, {n}), hbm(r, DType::I64, 0, 1, n, {n}));
  uint32_t o64 = bld.output(DType::I64, n * 8);
  bld.dma(hbm(o64, DType::I64, 0, 1, n, {n}), sbuf(DType::I32, 0, 1, 0, {n}));
  std::vector<float> f = {0.0f, -0.0f, kNan, 0.25f};
  uint32_t rf = bld.input(DType::F32, n * 4);
  bld.dma(sbuf(DType::Bool, 0, 1, 4096, {n}), hbm(rf, DType::F32, 0, 1, n, {n}));
  uint32_t ob = bld.output(DType::Bool, n);
  bld.dma(hbm(ob, DType::Bool, 0, 1, n, {n}), sbuf(DType::Bool, 0, 1, 4096, {n}));
  std::vector<int64_t> y(n);
  std::vector<uint8_t> yb(n, 7);
  REQUIRE(run(bld.p, {in.data(), f.data()}, {y.data(), yb.data()}) == "");
  CHECK(y == std::vector<int64_t>{5, INT32_MIN, INT32_MAX, 16777217});
  CHECK(yb == std::vector<uint8_t>{0, 0, 1, 1});
}

TEST_CASE("the verifier keeps i64 on the HBM side of a DMA",
          "[verify][dtype]") {
  Builder bld;
  uint32_t r = bld.input(DType::I64, 32);
  bld.dma(sbuf(DType::F32, 0, 1, 0, {4}), hbm(r, DType::I64, 0, 1, 4, {4}));
  std::vector<int64_t> in(4);
  CHECK(run(bld.p, {in.data()}, {}) != "");
}

TEST_CASE("signed zeros, NaN and infinities at the edges match eager", "[sim][elementwise]") {
  // issue 12, defect 7: the activation's zero bias turned -0.0 into +0.0.
  auto signOf = [](ActFunc f, float x) { return std::signbit(act(f, {x})[0]); };
  for (ActFunc f : {ActFunc::Relu, ActFunc::Floor, ActFunc::Ceil, ActFunc::Tanh, ActFunc::Sin,
                    ActFunc::Copy, ActFunc::Trunc, ActFunc::Round})
    CHECK(signOf(f, -0.0f));
  CHECK(act(ActFunc::Reciprocal, {-0.0f})[0] == -kInf);
  CHECK(act(ActFunc::Rsqrt, {-0.0f})[0] == -kInf);
  // torch.sign: +0 for -0.0 and for NaN.
  std::vector<float> sign = act(ActFunc::Sign, {-0.0f, kNan, -2, 3});
  CHECK((sign[0] == 0 && !std::signbit(sign[0])));
  CHECK((sign[1] == 0 && !std::signbit(sign[1])));
  CHECK((sign[2] == -1 && sign[3] == 1));
  // torch.nn.functional.gelu (erf form): +inf at +inf, NaN at -inf.
  std::vector<float> gelu = act(ActFunc::Gelu, {kInf, -kInf, 1});
  CHECK((gelu[0] == kInf && std::isnan(gelu[1])));
  CHECK(std::fabs(gelu[2] - 0.8413447f) < 1e-5f);
  requireSame(act(ActFunc::Relu, {kNan, -1, 2, -0.0f}), {kNan, 0, 2, -0.0f});
}
