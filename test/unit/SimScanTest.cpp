//===- SimScanTest.cpp - tensor_scan semantics and operand rules ----------===//
//
// tensor_scan (Isa.h TensorScan) against a reference loop for every scan op,
// over two free dims (the scan restarts at each innermost row) and a row
// longer than the simulator's streaming chunk; the verifier's op and shape
// rules.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"

#include <random>

using namespace trnc;
using namespace trnc::test;

namespace {

std::string verify(const Program &p) { return errorText(verifyProgram(p)); }

/// Loads `x` ([P, F] f32) into SBUF at offset 0, runs `op` (which reads it
/// there and writes an f32 [P, F] tile at `dstOffset`) and returns dst.
std::vector<float> runScan(Instruction op, int P, int F,
                           std::vector<float> x, uint64_t dstOffset) {
  Program p = f32TileProgram(op, P, F, dstOffset);
  std::vector<float> y(P * F, -123.0f);
  REQUIRE(run(p, {x.data()}, {y.data()}) == "");
  return y;
}

double refOp(AluOp op, double a, double b) {
  switch (op) {
  case AluOp::Multiply: return a * b;
  case AluOp::Max: return std::max(a, b);
  case AluOp::Min: return std::min(a, b);
  default: return a + b;
  }
}

std::vector<float> randomData(size_t n, float lo, float hi, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (float &x : v)
    x = dist(rng);
  return v;
}

} // namespace

TEST_CASE("tensor_scan restarts at every innermost row", "[sim][scan]") {
  const int P = 5, A = 3, R = 7;
  std::vector<float> x = randomData(P * A * R, 0.5f, 1.5f, 21);
  for (AluOp alu : {AluOp::Add, AluOp::Multiply, AluOp::Max, AluOp::Min}) {
    Instruction op = make(Opcode::TensorScan, Engine::Vector);
    op.op0 = uint8_t(alu);
    op.src0 = sbuf(DType::F32, 0, P, 0, {A, R});
    op.dst = sbuf(DType::F32, 0, P, 4096, {A, R});
    std::vector<float> y = runScan(op, P, A * R, x, 4096);
    for (int row = 0; row < P * A; ++row) {
      double acc = 0;
      for (int r = 0; r < R; ++r) {
        double v = x[row * R + r];
        acc = r == 0 ? v : refOp(alu, acc, v);
        REQUIRE(std::abs(y[row * R + r] - acc) <= 1e-5 * (1 + std::abs(acc)));
      }
    }
  }
}

TEST_CASE("tensor_scan over a row longer than one streaming chunk",
          "[sim][scan]") {
  const int P = 2, F = 3000; // > sim::kChunk
  std::vector<float> x = randomData(P * F, -1.0f, 1.0f, 22);
  Instruction op = make(Opcode::TensorScan, Engine::Vector);
  op.op0 = uint8_t(AluOp::Add);
  op.src0 = sbuf(DType::F32, 0, P, 0, {F});
  op.dst = sbuf(DType::F32, 0, P, 16384, {F});
  std::vector<float> y = runScan(op, P, F, x, 16384);
  for (int p = 0; p < P; ++p) {
    float acc = 0; // fp32, in order: the simulator's own arithmetic
    for (int i = 0; i < F; ++i) {
      acc += x[p * F + i];
      REQUIRE(y[p * F + i] == acc);
    }
  }
}

TEST_CASE("tensor_scan operand rules", "[verify][scan]") {
  Instruction op = make(Opcode::TensorScan, Engine::Vector);
  op.op0 = uint8_t(AluOp::Add);
  op.src0 = sbuf(DType::F32, 0, 4, 0, {10});
  op.dst = sbuf(DType::F32, 0, 4, 256, {10});
  Builder ok;
  ok.raw(op);
  CHECK(verify(ok.p) == "");

  Instruction sub = op;
  sub.op0 = uint8_t(AluOp::Subtract);
  Builder b1;
  b1.raw(sub);
  CHECK(contains(verify(b1.p), "tensor_scan needs add, multiply, max or min"));

  Instruction shape = op;
  shape.dst = sbuf(DType::F32, 0, 4, 256, {9});
  Builder b2;
  b2.raw(shape);
  CHECK(verify(b2.p) != "");

  Instruction engine = op;
  engine.engine = Engine::GpSimd;
  Builder b3;
  b3.raw(engine);
  CHECK(contains(verify(b3.p), "cannot run on the"));
}
