//===- TimingTestUtil.h - Helpers of the timed-simulator tests ----*- C++ -*-===//
//
// Run a program timed and get its Profile; compare simulated times to the
// hand-computed formulas (relative 1e-9: the model is exact arithmetic on
// doubles, so "equal" means equal up to rounding).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "TestUtil.h"

#include <algorithm>
#include <cmath>

namespace trnc::test {

#define CHECK_NS(actual, expected)                                             \
  do {                                                                         \
    double a_ = (actual), e_ = (expected);                                     \
    INFO(#actual " = " << a_ << ", expected " << e_);                          \
    CHECK(std::abs(a_ - e_) <= 1e-9 * std::max(1.0, std::abs(e_)));           \
  } while (0)

/// Run `p` timed (with trace) on a fresh simulator of its target.
inline Profile runTimed(const Program &p, std::vector<void *> inputs = {},
                        std::vector<void *> outputs = {},
                        std::string *error = nullptr) {
  Simulator sim(*lookupMachineModel(p.target));
  RunOptions options;
  options.recordTrace = true;
  Profile profile;
  std::string err = errorText(sim.run(p, inputs, outputs, options, &profile));
  if (error)
    *error = err;
  else
    REQUIRE(err == "");
  return profile;
}

inline double durationNs(const InstructionRecord &r) { return r.endNs - r.startNs; }

/// A bf16 (or `dt`) matmul psum[128, n] = sbuf[128, 128]^T @ sbuf[128, n].
inline Instruction matmul(uint32_t n, DType dt = DType::BF16, uint64_t psumOffset = 0) {
  Instruction mm = make(Opcode::Matmul, Engine::Tensor);
  mm.src0 = sbuf(dt, 0, 128, 0, {128});
  mm.src1 = sbuf(dt, 0, 128, 1024, {n});
  mm.dst = psum(DType::F32, 0, 128, psumOffset, {n});
  return mm;
}

/// An activation (copy) of n fp32 (or `dt`) elements per partition on Scalar.
inline Instruction activation(uint32_t n, DType dt = DType::F32) {
  Instruction act = make(Opcode::Activation, Engine::Scalar);
  act.op0 = uint8_t(ActFunc::Copy);
  act.imm0 = 1.0f;
  act.src0 = sbuf(dt, 0, 128, 0, {n});
  act.dst = sbuf(dt, 0, 128, 64 * 1024, {n});
  return act;
}

} // namespace trnc::test
