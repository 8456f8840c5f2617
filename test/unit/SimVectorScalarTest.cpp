//===- SimVectorScalarTest.cpp - Vector/Scalar/GpSimd instruction semantics ===//
//
// activation (every function, scale, bias from a per-partition tile or an
// immediate), tensor_tensor (every ALU op), tensor_scalar with the reverse
// flags, tensor_reduce, tensor_copy casts and memset, each against a plain
// reference loop.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"

#include <cmath>
#include <functional>
#include <random>

using namespace trnc;
using namespace trnc::test;

namespace {

/// Input i is an f32 [P, F] tile loaded into SBUF partitions 0..P at byte
/// offset slot(i). The instruction under test runs between the loads and a
/// final DMA of `result` (any dtype) to an f32 output.
uint64_t slot(int i) { return uint64_t(i) * 8192; }

struct Input {
  int P, F;
  std::vector<float> data;
};

std::vector<float> runOp(const Instruction &op, std::vector<Input> inputs,
                         const AccessPattern &result) {
  Builder b;
  std::vector<void *> ptrs;
  for (size_t i = 0; i < inputs.size(); ++i) {
    Input &in = inputs[i];
    uint32_t r = b.input(DType::F32, in.P * in.F * 4);
    b.dma(sbuf(DType::F32, 0, in.P, slot(int(i)), {uint32_t(in.F)}),
          hbm(r, DType::F32, 0, in.P, in.F, {uint32_t(in.F)}));
    ptrs.push_back(in.data.data());
  }
  b.add(op);
  uint64_t n = result.numElements();
  uint32_t out = b.output(DType::F32, n * 4);
  uint32_t F = uint32_t(result.freeElements());
  b.dma(hbm(out, DType::F32, 0, result.partitionCount, F, {F}), result);
  std::vector<float> y(n, -123.0f);
  REQUIRE(run(b.p, ptrs, {y.data()}) == "");
  return y;
}

std::vector<float> randomData(size_t n, float lo, float hi, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (float &x : v)
    x = dist(rng);
  return v;
}

double refAct(ActFunc f, double x) {
  switch (f) {
  case ActFunc::Copy: return x;
  case ActFunc::Relu: return x > 0 ? x : 0;
  case ActFunc::Exp: return std::exp(x);
  case ActFunc::Log: return std::log(x);
  case ActFunc::Tanh: return std::tanh(x);
  case ActFunc::Sigmoid: return 1 / (1 + std::exp(-x));
  case ActFunc::Gelu: return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0)));
  case ActFunc::GeluTanh:
    return 0.5 * x *
           (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
  case ActFunc::Silu: return x / (1 + std::exp(-x));
  case ActFunc::Sqrt: return std::sqrt(x);
  case ActFunc::Rsqrt: return 1 / std::sqrt(x);
  case ActFunc::Reciprocal: return 1 / x;
  case ActFunc::Square: return x * x;
  case ActFunc::Abs: return std::fabs(x);
  case ActFunc::Sign: return x > 0 ? 1 : (x < 0 ? -1 : 0); // +0 for -0 and NaN
  case ActFunc::Erf: return std::erf(x);
  case ActFunc::Sin: return std::sin(x);
  case ActFunc::Softplus: return std::log1p(std::exp(x));
  case ActFunc::Cos: return std::cos(x);
  case ActFunc::Expm1: return std::expm1(x);
  case ActFunc::Log1p: return std::log1p(x);
  case ActFunc::Mish: return x * std::tanh(std::log1p(std::exp(x)));
  case ActFunc::Floor: return std::floor(x);
  case ActFunc::Ceil: return std::ceil(x);
  case ActFunc::Round: return std::nearbyint(x);
  case ActFunc::Trunc: return std::trunc(x);
  case ActFunc::IsNan: return std::isnan(x);
  case ActFunc::IsInf: return std::isinf(x);
  // d/dx of Gelu and Silu above, derived independently of the simulator's
  // formulas: Phi(x) + x phi(x), and s + x s (1 - s).
  case ActFunc::GeluDx:
    return 0.5 * std::erfc(-x / std::sqrt(2.0)) +
           x * std::exp(-x * x / 2) / std::sqrt(2 * M_PI);
  case ActFunc::SiluDx: {
    double s = 1 / (1 + std::exp(-x));
    return s + x * s * (1 - s);
  }
  }
  return 0;
}

bool positiveOnly(ActFunc f) {
  return f == ActFunc::Log || f == ActFunc::Sqrt || f == ActFunc::Rsqrt ||
         f == ActFunc::Reciprocal || f == ActFunc::Log1p;
}

double refAlu(AluOp op, double a, double b) {
  switch (op) {
  case AluOp::Bypass: return a;
  case AluOp::Add: return a + b;
  case AluOp::Subtract: return a - b;
  case AluOp::Multiply: return a * b;
  case AluOp::Divide: return a / b;
  case AluOp::Max: return std::max(a, b);
  case AluOp::Min: return std::min(a, b);
  case AluOp::Pow: return std::pow(a, b);
  case AluOp::IsEqual: return a == b;
  case AluOp::NotEqual: return a != b;
  case AluOp::IsGt: return a > b;
  case AluOp::IsGe: return a >= b;
  case AluOp::IsLt: return a < b;
  case AluOp::IsLe: return a <= b;
  case AluOp::LogicalAnd: return a != 0 && b != 0;
  case AluOp::LogicalOr: return a != 0 || b != 0;
  case AluOp::LogicalXor: return (a != 0) != (b != 0);
  case AluOp::BitwiseAnd: return int32_t(a) & int32_t(b);
  case AluOp::BitwiseOr: return int32_t(a) | int32_t(b);
  case AluOp::BitwiseXor: return int32_t(a) ^ int32_t(b);
  case AluOp::Remainder: return a - b * std::floor(a / b);
  case AluOp::Fmod: return std::fmod(a, b);
  case AluOp::FloorDivide: return std::floor(a / b);
  }
  return 0;
}

void requireClose(float got, double ref, double rel = 2e-6) {
  INFO("got " << got << " expected " << ref);
  REQUIRE(std::fabs(got - ref) <= rel * std::fabs(ref) + 1e-6);
}

} // namespace

TEST_CASE("activation functions with scale and bias", "[sim][act]") {
  const int P = 8, F = 40;
  for (unsigned fi = 0; fi < kNumActFuncs; ++fi) {
    ActFunc f = ActFunc(fi);
    DYNAMIC_SECTION(actFuncName(f)) {
      bool pos = positiveOnly(f);
      Input x{P, F, randomData(P * F, pos ? 0.5f : -3.0f, 3.0f, fi)};
      Input bias{P, 1, randomData(P, pos ? 0.0f : -1.0f, 1.0f, 100 + fi)};
      for (bool tileBias : {true, false}) {
        Instruction op = make(Opcode::Activation, Engine::Scalar);
        op.op0 = uint8_t(f);
        op.imm0 = 0.75f;
        op.imm1 = 0.25f;
        op.src0 = sbuf(DType::F32, 0, P, slot(0), {F});
        if (tileBias)
          op.src1 = sbuf(DType::F32, 0, P, slot(1), {1});
        op.dst = sbuf(DType::F32, 0, P, slot(2), {4, 10});
        std::vector<float> y = runOp(op, {x, bias}, op.dst);
        for (int p = 0; p < P; ++p)
          for (int i = 0; i < F; ++i) {
            double bv = tileBias ? bias.data[p] : 0.25;
            double ref = refAct(f, double(x.data[p * F + i]) * 0.75 + bv);
            requireClose(y[p * F + i], ref, 1e-5);
          }
      }
    }
  }
}

TEST_CASE("tensor_tensor ALU ops on Vector and GpSimd", "[sim][tt]") {
  const int P = 5, F = 33;
  Input a{P, F, randomData(P * F, 0.5f, 4.0f, 1)};
  Input c{P, F, randomData(P * F, 0.5f, 4.0f, 2)};
  for (int i = 0; i < P * F; i += 3) // some equal pairs for the comparisons
    c.data[i] = a.data[i];
  for (unsigned oi = 0; oi < kNumAluOps; ++oi) {
    AluOp alu = AluOp(oi);
    DYNAMIC_SECTION(aluOpName(alu)) {
      Instruction op = make(Opcode::TensorTensor,
                            oi % 2 ? Engine::GpSimd : Engine::Vector);
      op.op0 = uint8_t(alu);
      op.src0 = sbuf(DType::F32, 0, P, slot(0), {F});
      op.src1 = sbuf(DType::F32, 0, P, slot(1), {3, 11});
      op.dst = sbuf(DType::F32, 0, P, slot(2), {F});
      std::vector<float> y = runOp(op, {a, c}, op.dst);
      for (int i = 0; i < P * F; ++i)
        requireClose(y[i], refAlu(alu, a.data[i], c.data[i]), 1e-6);
    }
  }
}

TEST_CASE("tensor_tensor broadcasts a 0-stride source and writes bf16",
          "[sim][tt]") {
  const int P = 4, F = 16;
  Input a{P, F, randomData(P * F, -2, 2, 5)};
  Input row{P, 1, {1.0f, 2.0f, 3.0f, 4.0f}};
  Instruction op = make(Opcode::TensorTensor, Engine::Vector);
  op.op0 = uint8_t(AluOp::Multiply);
  op.src0 = sbuf(DType::F32, 0, P, slot(0), {F});
  op.src1 = sbuf(DType::F32, 0, P, slot(1), {F}, {0}); // [P, 1] -> [P, F]
  op.dst = sbuf(DType::BF16, 0, P, slot(2), {F});
  std::vector<float> y = runOp(op, {a, row}, op.dst);
  for (int p = 0; p < P; ++p)
    for (int i = 0; i < F; ++i)
      REQUIRE(y[p * F + i] == roundBf16(a.data[p * F + i] * row.data[p]));
}

TEST_CASE("tensor_scalar with reverse flags", "[sim][ts]") {
  const int P = 3, F = 20;
  Input x{P, F, randomData(P * F, 1.0f, 5.0f, 9)};
  struct Case {
    AluOp op0, op1;
    uint8_t flags;
    Engine engine;
  } cases[] = {
      {AluOp::Subtract, AluOp::Divide, 0, Engine::Vector},
      {AluOp::Subtract, AluOp::Divide, kFlagReverse0, Engine::Scalar},
      {AluOp::Subtract, AluOp::Divide, kFlagReverse1, Engine::GpSimd},
      {AluOp::Subtract, AluOp::Divide, kFlagReverse0 | kFlagReverse1,
       Engine::Vector},
      {AluOp::Multiply, AluOp::Bypass, kFlagReverse1, Engine::Vector},
      {AluOp::Pow, AluOp::Max, kFlagReverse0, Engine::Vector},
  };
  for (const Case &c : cases) {
    Instruction op = make(Opcode::TensorScalar, c.engine);
    op.op0 = uint8_t(c.op0);
    op.op1 = uint8_t(c.op1);
    op.flags = c.flags;
    op.imm0 = 2.0f;
    op.imm1 = 3.0f;
    op.src0 = sbuf(DType::F32, 0, P, slot(0), {F});
    op.dst = sbuf(DType::F32, 0, P, slot(1), {F});
    std::vector<float> y = runOp(op, {x}, op.dst);
    for (int i = 0; i < P * F; ++i) {
      double v = x.data[i];
      v = (c.flags & kFlagReverse0) ? refAlu(c.op0, 2.0, v) : refAlu(c.op0, v, 2.0);
      if (c.op1 != AluOp::Bypass)
        v = (c.flags & kFlagReverse1) ? refAlu(c.op1, 3.0, v)
                                      : refAlu(c.op1, v, 3.0);
      requireClose(y[i], v, 1e-6);
    }
  }
}

TEST_CASE("tensor_scalar with a per-partition operand0", "[sim][ts]") {
  // src1 [P, 1]: op0's operand is partition p's value (imm0 ignored), in
  // either operand order; op1 keeps its immediate.
  const int P = 4, F = 24;
  Input x{P, F, randomData(P * F, 1.0f, 5.0f, 11)};
  Input row{P, 1, {0.5f, 2.0f, -3.0f, 8.0f}};
  for (bool reverse : {false, true}) {
    Instruction op = make(Opcode::TensorScalar, Engine::Vector);
    op.op0 = uint8_t(AluOp::Subtract);
    op.op1 = uint8_t(AluOp::Multiply);
    op.flags = reverse ? kFlagReverse0 : 0;
    op.imm0 = 100.0f;
    op.imm1 = 3.0f;
    op.src0 = sbuf(DType::F32, 0, P, slot(0), {F});
    op.src1 = sbuf(DType::F32, 0, P, slot(1), {1});
    op.dst = sbuf(DType::BF16, 0, P, slot(2), {2, 12});
    std::vector<float> y = runOp(op, {x, row}, op.dst);
    for (int p = 0; p < P; ++p)
      for (int i = 0; i < F; ++i) {
        float v = x.data[p * F + i], s = row.data[p];
        REQUIRE(y[p * F + i] == roundBf16((reverse ? s - v : v - s) * 3.0f));
      }
  }
}

TEST_CASE("tensor_scalar with per-partition operands for both operators",
          "[sim][ts]") {
  // src1 [P, 1] is op0's operand, src2 [P, 1] op1's (imm0 and imm1
  // ignored), each in either order: a norm's (x - mean) * rstd in one
  // instruction; or an immediate op0 with a per-partition op1.
  const int P = 4, F = 24;
  Input x{P, F, randomData(P * F, 1.0f, 5.0f, 11)};
  Input mean{P, 1, {0.5f, 2.0f, -3.0f, 8.0f}};
  Input rstd{P, 1, {1.5f, -0.25f, 4.0f, 0.125f}};
  for (bool withSrc1 : {true, false})
    for (bool reverse1 : {false, true}) {
      Instruction op = make(Opcode::TensorScalar, Engine::Vector);
      op.op0 = uint8_t(AluOp::Subtract);
      op.op1 = uint8_t(AluOp::Divide);
      op.flags = reverse1 ? kFlagReverse1 : 0;
      op.imm0 = withSrc1 ? 100.0f : 1.0f;
      op.imm1 = 1000.0f;
      op.src0 = sbuf(DType::F32, 0, P, slot(0), {F});
      if (withSrc1)
        op.src1 = sbuf(DType::F32, 0, P, slot(1), {1});
      op.src2 = sbuf(DType::F32, 0, P, slot(2), {1});
      op.dst = sbuf(DType::F32, 0, P, slot(3), {F});
      std::vector<float> y = runOp(op, {x, mean, rstd}, op.dst);
      for (int p = 0; p < P; ++p)
        for (int i = 0; i < F; ++i) {
          float v = x.data[p * F + i] - (withSrc1 ? mean.data[p] : 1.0f);
          float r = rstd.data[p];
          REQUIRE(y[p * F + i] == (reverse1 ? r / v : v / r));
        }
    }
}

TEST_CASE("tensor_reduce over the innermost free dim", "[sim][reduce]") {
  const int P = 6, A = 3, R = 10;
  Input x{P, A * R, randomData(P * A * R, -5.0f, 5.0f, 11)};
  for (AluOp alu : {AluOp::Add, AluOp::Max, AluOp::Min, AluOp::Multiply}) {
    Instruction op = make(Opcode::TensorReduce, Engine::Vector);
    op.op0 = uint8_t(alu);
    op.src0 = sbuf(DType::F32, 0, P, slot(0), {A, R});
    op.dst = sbuf(DType::F32, 0, P, slot(1), {A});
    std::vector<float> y = runOp(op, {x}, op.dst);
    for (int p = 0; p < P; ++p)
      for (int a = 0; a < A; ++a) {
        double acc = x.data[(p * A + a) * R];
        for (int r = 1; r < R; ++r)
          acc = refAlu(alu, acc, x.data[(p * A + a) * R + r]);
        requireClose(y[p * A + a], acc, 1e-5);
      }
  }
  // One free dim reduces to [P, 1]; a long row crosses chunk boundaries.
  const int L = 10000;
  Input big{2, L, randomData(2 * L, 0.0f, 1.0f, 12)};
  Instruction op = make(Opcode::TensorReduce, Engine::Vector);
  op.op0 = uint8_t(AluOp::Add);
  op.src0 = sbuf(DType::F32, 0, 2, slot(0), {L});
  op.dst = sbuf(DType::F32, 0, 2, slot(0) + L * 4, {1});
  std::vector<float> y = runOp(op, {big}, op.dst);
  for (int p = 0; p < 2; ++p) {
    double ref = 0;
    for (int i = 0; i < L; ++i)
      ref += big.data[p * L + i];
    requireClose(y[p], ref, 1e-4);
  }
}

TEST_CASE("tensor_copy casts to bf16 with round-to-nearest-even", "[sim][copy]") {
  const int P = 2, F = 6;
  // Exact ties and near-ties around 1.0 in bf16.
  Input x{P, F,
          {1.0f + 0x1p-8f, 1.0f + 3 * 0x1p-8f, 1.0f + 0x1p-9f, -1.0f - 0x1p-8f,
           3.14159265f, 1e-3f, 65504.0f, -0.0f, 1.0f + 0x1p-8f + 0x1p-20f,
           2.0f, 100.5f, -7.25f}};
  for (Engine e : {Engine::Vector, Engine::Scalar, Engine::GpSimd}) {
    Instruction op = make(Opcode::TensorCopy, e);
    op.src0 = sbuf(DType::F32, 0, P, slot(0), {F});
    op.dst = sbuf(DType::BF16, 0, P, slot(1), {F});
    std::vector<float> y = runOp(op, {x}, op.dst);
    for (int i = 0; i < P * F; ++i)
      REQUIRE(y[i] == roundBf16(x.data[i]));
  }
}

TEST_CASE("memset fills only its pattern", "[sim][memset]") {
  const int P = 4, F = 12;
  Input x{P, F, randomData(P * F, -1.0f, 1.0f, 13)};
  for (Engine e : {Engine::Vector, Engine::GpSimd}) {
    Instruction op = make(Opcode::Memset, e);
    op.imm0 = 1.5f;
    // Partitions 1..3, every other element of the first 8.
    op.dst = sbuf(DType::F32, 1, 2, slot(0) + 4, {4}, {2});
    std::vector<float> y = runOp(op, {x}, sbuf(DType::F32, 0, P, slot(0), {F}));
    for (int p = 0; p < P; ++p)
      for (int i = 0; i < F; ++i) {
        bool hit = p >= 1 && p < 3 && i >= 1 && i < 9 && (i - 1) % 2 == 0;
        REQUIRE(y[p * F + i] == (hit ? 1.5f : x.data[p * F + i]));
      }
  }
  // bf16 memset rounds the immediate.
  Instruction op = make(Opcode::Memset, Engine::Vector);
  op.imm0 = 1.0f + 3 * 0x1p-8f;
  op.dst = sbuf(DType::BF16, 0, 2, 0, {8});
  std::vector<float> y = runOp(op, {}, op.dst);
  for (float v : y)
    REQUIRE(v == 1.0f + 0x1p-6f);
}
