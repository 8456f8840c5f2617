//===- MatmulUtilisationTest.cpp - MFU/HFU against each dtype's peak --------===//
//
// The profile counts matmul FLOPs by the dtype whose rate they run at and
// divides each by that dtype's Tensor Engine peak: an fp32 matmul that keeps
// the engine busy is at 100% of the fp32 peak, not at 25% of the bf16 one.
// Tiny hand-built programs on trn1 (no warm-up throttle), numbers by hand.
//
//===----------------------------------------------------------------------===//

#include "TimingTestUtil.h"

#include "profile/Summary.h"
#include "sim/Timing.h"

using namespace trnc;
using namespace trnc::test;

namespace {

const double kBf16Peak = 128.0 * 128 * 2 * 2.8e9; // trn1: 128*128*2*clock

Profile run(std::vector<Instruction> matmuls) {
  Builder b;
  b.p.target = "trn1";
  uint64_t psum = 0;
  for (Instruction mm : matmuls) {
    mm.dst.offset = psum;
    psum += 2048; // a bank each: no accumulation chains between them
    b.raw(mm);
  }
  return runTimed(b.p);
}

} // namespace

TEST_CASE("matmul peaks per dtype follow the cost model", "[timing][mfu]") {
  MachineModel trn1 = *lookupMachineModel("trn1");
  CHECK_NS(sim::matmulPeakFlopsPerSecond(trn1, DType::BF16), kBf16Peak);
  CHECK_NS(sim::matmulPeakFlopsPerSecond(trn1, DType::F16), kBf16Peak);
  CHECK_NS(sim::matmulPeakFlopsPerSecond(trn1, DType::F32), kBf16Peak / 4);
  MachineModel trn2 = *lookupMachineModel("trn2");
  CHECK_NS(sim::matmulPeakFlopsPerSecond(trn2, DType::BF16), 128.0 * 128 * 2 * 2.4e9);
}

TEST_CASE("an fp32 matmul's MFU is against the fp32 peak", "[timing][mfu]") {
  Profile p = run({matmul(512, DType::F32)});
  // 4*512 cycles + 64 start-up; at the fp32 peak the work needs 4*512.
  CHECK_NS(p.totalNs, (4 * 512 + 64) / 2.8);
  const MatmulDTypeProfile &f32 = p.matmulByDType[size_t(DType::F32)];
  CHECK(f32.instructions == 1);
  CHECK(f32.tensorFlops == 2.0 * 128 * 128 * 512);
  CHECK(f32.usefulFlops == f32.tensorFlops);
  CHECK_NS(f32.peakFlopsPerSecond, kBf16Peak / 4);
  CHECK(p.matmulByDType[size_t(DType::BF16)].instructions == 0);
  CHECK_NS(p.usefulAtPeakNs, 4 * 512 / 2.8);
  CHECK_NS(p.mfu, 4.0 * 512 / (4 * 512 + 64));
  CHECK_NS(p.hfu, p.mfu);
  // The bf16 peak is still reported as the nominal one.
  CHECK_NS(p.peakFlopsPerSecond, kBf16Peak);
}

TEST_CASE("the same matmul in bf16 has the same MFU at a quarter of the time",
          "[timing][mfu]") {
  Profile p = run({matmul(512, DType::BF16)});
  CHECK_NS(p.totalNs, (512 + 64) / 2.8);
  CHECK(p.matmulByDType[size_t(DType::BF16)].instructions == 1);
  CHECK(p.matmulByDType[size_t(DType::F32)].instructions == 0);
  CHECK_NS(p.mfu, 512.0 / (512 + 64));
}

TEST_CASE("a step mixing bf16 and fp32 matmuls sums each at its own peak",
          "[timing][mfu]") {
  Profile p = run({matmul(512, DType::BF16), matmul(512, DType::F32)});
  // Back to back: one start-up, then 512 bf16 cycles and 4*512 fp32 cycles.
  double total = (64 + 512 + 4 * 512) / 2.8;
  CHECK_NS(p.totalNs, total);
  CHECK(p.matmulByDType[size_t(DType::BF16)].instructions == 1);
  CHECK(p.matmulByDType[size_t(DType::F32)].instructions == 1);
  CHECK(p.tensorFlops == 2 * 2.0 * 128 * 128 * 512);
  CHECK_NS(p.usefulAtPeakNs, (512 + 4 * 512) / 2.8);
  CHECK_NS(p.mfu, (512.0 + 4 * 512) / (64 + 512 + 4 * 512));
  // Against the bf16 peak alone the same run would read as 2*512/2624 = 39%.
  CHECK(p.mfu > 0.97);
}

TEST_CASE("a matmul with one fp32 operand runs and counts at the fp32 rate",
          "[timing][mfu]") {
  Instruction mixed = matmul(512, DType::BF16);
  mixed.src1.dtype = DType::F32;
  Profile p = run({mixed});
  CHECK_NS(p.totalNs, (4 * 512 + 64) / 2.8);
  CHECK(p.matmulByDType[size_t(DType::F32)].instructions == 1);
  CHECK(p.matmulByDType[size_t(DType::BF16)].instructions == 0);
  CHECK_NS(p.mfu, 4.0 * 512 / (4 * 512 + 64));
}

TEST_CASE("the summary labels MFU with the matmul dtypes", "[timing][mfu][summary]") {
  Builder b;
  b.p.target = "trn1";
  b.raw(matmul(512, DType::BF16));
  Instruction f32 = matmul(512, DType::F32);
  f32.dst.offset = 2048;
  b.raw(f32);
  std::string s = profile::summarize(b.p, runTimed(b.p));
  INFO(s);
  CHECK(contains(s, "against the peak of each matmul dtype: f32 16.8 MFLOP at 22.9 TFLOP/s peak, "
                    "bf16 16.8 MFLOP at 91.8 TFLOP/s peak"));
  // Without matmuls the summary says so and names the nominal peak.
  Builder none;
  Instruction a = make(Opcode::Memset, Engine::Vector);
  a.dst = sbuf(DType::F32, 0, 1, 0, {4});
  none.raw(a);
  std::string t = profile::summarize(none.p, runTimed(none.p));
  CHECK(contains(t, "no matmuls; peak per core 78.6 TFLOP/s bf16"));
}
