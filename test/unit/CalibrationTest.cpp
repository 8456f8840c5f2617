//===- CalibrationTest.cpp - Simulated time equals the cost formulas -------===//
//
// Single instructions and small hand-built programs whose simulated time is
// computed here by hand from HARDWARE.md's formulas and the machine-model
// constants, written out as numbers so a change to either shows up:
//   matmul      max(min(64, M), N) cycles (x4 fp32) + 64 start-up, /throttle
//   vector-like 60 + max(64, work / (elements per cycle / 128))
//   dma         1300 ns + bytes / min(alone, shared cap)
// Trn1 is used where the warm-up throttle would blur the formula.
//
//===----------------------------------------------------------------------===//

#include "TimingTestUtil.h"

using namespace trnc;
using namespace trnc::test;

namespace {

Builder on(const char *target) {
  Builder b;
  b.p.target = target;
  return b;
}

} // namespace

TEST_CASE("calibration: bf16 matmul with moving free size 512",
          "[timing][calibration]") {
  Builder b = on("trn1");
  b.raw(matmul(512));
  Profile p = runTimed(b.p);
  // max(min(64, 128), 512) = 512 cycles + 64 start-up, at 2.8 GHz.
  CHECK_NS(p.totalNs, 576 / 2.8);
  REQUIRE(p.trace.size() == 1);
  CHECK_NS(durationNs(p.trace[0]), 576 / 2.8);
  // 2*K*M*N FLOPs against the per-core peak 128*128*2*2.8 GHz.
  CHECK(p.tensorFlops == 2.0 * 128 * 128 * 512);
  CHECK_NS(p.peakFlopsPerSecond, 128.0 * 128 * 2 * 2.8e9);
  CHECK_NS(p.hfu, 512.0 / 576.0);
  CHECK_NS(p.mfu, p.hfu);
  CHECK(p.engines[0].instructions == 1);
  CHECK_NS(p.engines[0].utilisation, 1.0);
}

TEST_CASE("calibration: small matmuls are floored at min(64, M) cycles",
          "[timing][calibration]") {
  Builder b = on("trn1");
  b.raw(matmul(16));
  CHECK_NS(runTimed(b.p).totalNs, (64 + 64) / 2.8);
}

TEST_CASE("calibration: fp32 matmul runs at a quarter rate",
          "[timing][calibration]") {
  Builder b = on("trn1");
  b.raw(matmul(512, DType::F32));
  Profile p = runTimed(b.p);
  CHECK_NS(p.totalNs, (4 * 512 + 64) / 2.8);
  // Its FLOPs count in full, against the fp32 peak (MatmulUtilisationTest).
  CHECK(p.tensorFlops == 2.0 * 128 * 128 * 512);
  CHECK_NS(p.hfu, 4 * 512.0 / (4 * 512 + 64));
}

TEST_CASE("calibration: back-to-back matmuls pay the start-up latency once",
          "[timing][calibration]") {
  Builder b = on("trn1");
  b.raw(matmul(512, DType::BF16, 0));
  b.raw(matmul(512, DType::BF16, 2048));
  b.raw(matmul(128, DType::BF16, 4096));
  Profile p = runTimed(b.p);
  CHECK_NS(p.totalNs, (576 + 512 + 128) / 2.8);
}

TEST_CASE("calibration: activation over 2048 elements",
          "[timing][calibration]") {
  // 60 cycles per access + max(64, 2048); Scalar 128 elem/cycle = one per
  // partition per cycle: trn1 1.4 GHz, trn2 1.2 GHz.
  for (auto [target, ghz] : {std::pair{"trn1", 1.4}, std::pair{"trn2", 1.2}}) {
    Builder b = on(target);
    b.raw(activation(2048));
    CHECK_NS(runTimed(b.p).totalNs, (60 + 2048) / ghz);
  }
  // trn3 Scalar does 256 bf16 elements per cycle: two per partition.
  Builder b = on("trn3");
  b.raw(activation(2048, DType::BF16));
  CHECK_NS(runTimed(b.p).totalNs, (60 + 1024) / 1.2);
  // Tiny instructions hit the 64-cycle minimum interval.
  Builder t = on("trn1");
  t.raw(activation(8));
  CHECK_NS(runTimed(t.p).totalNs, (60 + 64) / 1.4);
}

namespace {

Instruction tensorTensor(DType dt, uint32_t n, MemKind src1Mem = MemKind::SBUF) {
  Instruction tt = make(Opcode::TensorTensor, Engine::Vector);
  tt.op0 = uint8_t(AluOp::Add);
  tt.src0 = sbuf(dt, 0, 128, 0, {n});
  tt.src1 = onChip(src1Mem, dt, 0, 128, src1Mem == MemKind::PSUM ? 0 : 16384, {n});
  tt.dst = sbuf(dt, 0, 128, 32768, {n});
  return tt;
}

double vectorNs(const char *target, Instruction inst) {
  Builder b = on(target);
  b.raw(inst);
  return runTimed(b.p).totalNs;
}

} // namespace

TEST_CASE("calibration: tensor_tensor fp32 (2N) vs contiguous bf16 add (N)",
          "[timing][calibration]") {
  // trn1 Vector: 128 elem/cycle at 1.12 GHz.
  CHECK_NS(vectorNs("trn1", tensorTensor(DType::F32, 1024)), (60 + 2048) / 1.12);
  CHECK_NS(vectorNs("trn1", tensorTensor(DType::BF16, 1024)), (60 + 1024) / 1.12);
  // One input in PSUM: N.
  CHECK_NS(vectorNs("trn1", tensorTensor(DType::F32, 512, MemKind::PSUM)),
           (60 + 512) / 1.12);
  // bf16 max is not on the fast path: 2N.
  Instruction mx = tensorTensor(DType::BF16, 1024);
  mx.op0 = uint8_t(AluOp::Max);
  CHECK_NS(vectorNs("trn1", mx), (60 + 2048) / 1.12);
  // trn2 Vector: 256 fp32 (2 per partition) or 512 bf16 (4) per cycle at
  // 0.96 GHz.
  CHECK_NS(vectorNs("trn2", tensorTensor(DType::F32, 1024)), (60 + 1024) / 0.96);
  CHECK_NS(vectorNs("trn2", tensorTensor(DType::BF16, 1024)), (60 + 256) / 0.96);
}

TEST_CASE("calibration: an innermost stride above 16 bytes halves bandwidth",
          "[timing][calibration]") {
  Instruction ts = make(Opcode::TensorScalar, Engine::Vector);
  ts.op0 = uint8_t(AluOp::Multiply);
  ts.imm0 = 2.0f;
  ts.dst = sbuf(DType::F32, 0, 128, 0, {512});
  ts.src0 = sbuf(DType::F32, 0, 128, 8192, {512}, {4}); // 16-byte stride: fast
  CHECK_NS(vectorNs("trn1", ts), (60 + 512) / 1.12);
  ts.src0 = sbuf(DType::F32, 0, 128, 8192, {512}, {8}); // 32 bytes: slow
  CHECK_NS(vectorNs("trn1", ts), (60 + 1024) / 1.12);
}

TEST_CASE("calibration: tensor_reduce and memset half-rate cases",
          "[timing][calibration]") {
  Instruction red = make(Opcode::TensorReduce, Engine::Vector);
  red.op0 = uint8_t(AluOp::Add);
  red.src0 = sbuf(DType::BF16, 0, 128, 0, {2048});
  red.dst = sbuf(DType::BF16, 0, 128, 8192, {1});
  CHECK_NS(vectorNs("trn1", red), (60 + 1024) / 1.12);
  red.src0.dtype = red.dst.dtype = DType::F32;
  CHECK_NS(vectorNs("trn1", red), (60 + 2048) / 1.12);
  Instruction ms = make(Opcode::Memset, Engine::Vector);
  ms.dst = sbuf(DType::BF16, 0, 128, 0, {2048});
  CHECK_NS(vectorNs("trn1", ms), (60 + 1024) / 1.12); // zero into bf16: N/2
  ms.imm0 = 1.0f;
  CHECK_NS(vectorNs("trn1", ms), (60 + 2048) / 1.12);
}

namespace {

/// A 64 KiB fp32 load into SBUF as `rows` rows of 65536/rows bytes.
Profile load64KiB(const char *target, uint16_t rows, std::vector<float> &src) {
  Builder b = on(target);
  uint32_t per = 16384 / rows;
  src.assign(16384, 1.0f);
  uint32_t in = b.input(DType::F32, 65536);
  b.dma(sbuf(DType::F32, 0, rows, 0, {per}), hbm(in, DType::F32, 0, rows, per, {per}));
  return runTimed(b.p, {src.data()});
}

} // namespace

TEST_CASE("calibration: a 64 KiB DMA", "[timing][calibration][dma]") {
  std::vector<float> src;
  // 128 rows of 512 B: efficiency (512/1024) * (4608/4096) = 0.5625 on 16
  // engines of 27.2 GB/s = 244.8 GB/s, under trn2's HBM share 2900/8.
  Profile p = load64KiB("trn2", 128, src);
  CHECK_NS(p.totalNs, 1300 + 65536 / (16 * 27.2 * 0.5625));
  CHECK(p.dmaBytes == 65536);
  CHECK(p.hbmBytes == 65536);
  CHECK(p.dmaSizeHistogram[16] == 1);
  CHECK(p.dmaQueues.size() == 16);
  CHECK(p.dmaQueues[0].transfers == 1);
  CHECK_NS(p.peakHbmBytesPerSecond, 2900e9 / 8);
  CHECK_NS(p.mbu, 65536 / (p.totalNs * 1e-9) / (2900e9 / 8));
  CHECK_NS(p.engines[4].utilisation, 1.0);
  // 16 rows of 4 KiB saturate: 16 x 27.2 = 435.2 GB/s, capped by the HBM
  // share: trn2 362.5 GB/s, trn1 820/2 = 410 GB/s; trn3: 16 x 38.4 = 614.4
  // vs 4900/8 = 612.5.
  CHECK_NS(load64KiB("trn2", 16, src).totalNs, 1300 + 65536 / 362.5);
  CHECK_NS(load64KiB("trn1", 16, src).totalNs, 1300 + 65536 / 410.0);
  CHECK_NS(load64KiB("trn3", 16, src).totalNs, 1300 + 65536 / 612.5);
  // 2 KiB rows are 90% efficient (trn3: 16 x 38.4 x 0.9 = 553 GB/s, under
  // its HBM share); 4 rows of 16 KiB use only 4 engines.
  CHECK_NS(load64KiB("trn3", 32, src).totalNs, 1300 + 65536 / (16 * 38.4 * 0.9));
  CHECK_NS(load64KiB("trn1", 4, src).totalNs, 1300 + 65536 / (4 * 27.2));
}

TEST_CASE("calibration: DMA queues overlap, serialise and share bandwidth",
          "[timing][calibration][dma]") {
  std::vector<float> src(32768, 1.0f);
  auto twoLoads = [&](uint16_t queue2) {
    Builder b = on("trn2");
    uint32_t in = b.input(DType::F32, 131072);
    for (uint16_t q : {uint16_t(0), queue2}) {
      Instruction d = make(Opcode::DmaCopy, Engine::Dma);
      d.dmaQueue = q;
      uint64_t off = q ? 65536 : 0;
      d.dst = sbuf(DType::F32, 0, 128, q ? 512 : 0, {128});
      d.src0 = hbm(in, DType::F32, off, 128, 128, {128});
      b.raw(d);
    }
    return runTimed(b.p, {src.data()});
  };
  double alone = 65536 / (16 * 27.2 * 0.5625);
  // Same queue: one after the other.
  Profile same = twoLoads(0);
  CHECK_NS(same.totalNs, 2 * (1300 + alone));
  CHECK(same.dmaQueues[0].transfers == 2);
  // Two queues: the fixed costs overlap; both data phases run together and
  // share the HBM share fairly (181.25 GB/s each, below the 244.8 each would
  // reach alone), so both end together.
  Profile two = twoLoads(1);
  CHECK_NS(two.totalNs, 1300 + 65536 / (2900.0 / 8 / 2));
  CHECK_NS(two.trace[0].endNs, 1300 + 65536 / (2900.0 / 8 / 2));
  CHECK(two.engines[4].instructions == 2);
}

TEST_CASE("calibration: engines overlap unless a semaphore orders them",
          "[timing][calibration]") {
  double act = (60 + 2048) / 1.4;          // Scalar, trn1
  double vec = (60 + 2048) / 1.12;         // Vector tensor_tensor fp32 1024
  auto program = [&](bool ordered) {
    Builder b = on("trn1");
    Instruction tt = tensorTensor(DType::F32, 1024);
    tt.signal = 0;
    b.raw(tt);
    Instruction a = activation(2048);
    a.src0 = sbuf(DType::F32, 0, 128, 128 * 1024, {2048});
    if (ordered) {
      a.numWaits = 1;
      a.waits[0] = {0, 1};
    }
    b.raw(a);
    return runTimed(b.p);
  };
  Profile overlap = program(false);
  CHECK_NS(overlap.totalNs, std::max(act, vec));
  CHECK_NS(overlap.semaphoreWaitNs, 0.0);
  Profile serial = program(true);
  CHECK_NS(serial.totalNs, act + vec);
  // Scalar waited for Vector's signal for the whole Vector instruction.
  CHECK_NS(serial.engines[2].semaphoreWaitNs, vec);
  CHECK_NS(serial.semaphoreWaitNs, vec);
  CHECK_NS(serial.trace[1].issueNs, 0.0);
  CHECK_NS(serial.trace[1].startNs, vec);
  CHECK_NS(serial.engines[2].utilisation, act / (act + vec));
}

TEST_CASE("calibration: warm-up throttle on a first matmul vs a warmed one",
          "[timing][calibration][throttle]") {
  // trn2: 20 back-to-back bf16 matmuls, N = 512. The first runs at 50% of
  // peak plus start-up: (1024 + 64) cycles at 2.4 GHz; the rate ramps
  // linearly over 3 us; a matmul starting >= 3 us in runs at full rate.
  Builder b = on("trn2");
  for (int i = 0; i < 20; ++i)
    b.raw(matmul(512, DType::BF16, (i % 8) * 2048));
  Profile p = runTimed(b.p);
  REQUIRE(p.trace.size() == 20);
  CHECK_NS(durationNs(p.trace[0]), (1024 + 64) / 2.4);
  // Second: starts at t1 = 1088/2.4 ns, rate 0.5 + 0.5 * t1/3000.
  double t1 = 1088 / 2.4;
  CHECK_NS(durationNs(p.trace[1]), 512 / (0.5 + 0.5 * t1 / 3000) / 2.4);
  const InstructionRecord &last = p.trace.back();
  REQUIRE(last.startNs >= 3000);
  CHECK_NS(durationNs(last), 512 / 2.4);
  // trn1 has no throttle: every matmul after the first takes 512 cycles.
  b.p.target = "trn1";
  Profile t1p = runTimed(b.p);
  CHECK_NS(t1p.totalNs, (576 + 19 * 512) / 2.8);
}

TEST_CASE("calibration: the throttle re-engages after ~3 us of low use",
          "[timing][calibration][throttle]") {
  // matmul; a long Scalar activation (8192 fp32: 8252 cycles at 1.2 GHz =
  // 6.9 us) the second matmul waits for. The Tensor Engine sat idle > 3 us,
  // so the second matmul starts cold again: 50% rate plus start-up.
  Builder b = on("trn2");
  b.raw(matmul(512));
  Instruction a = activation(8192);
  a.signal = 1;
  b.raw(a);
  Instruction mm = matmul(512, DType::BF16, 2048);
  mm.numWaits = 1;
  mm.waits[0] = {1, 1};
  b.raw(mm);
  Profile p = runTimed(b.p);
  CHECK_NS(p.trace[2].startNs, 8252 / 1.2);
  CHECK_NS(durationNs(p.trace[2]), (1024 + 64) / 2.4);
  CHECK_NS(p.totalNs, 8252 / 1.2 + (1024 + 64) / 2.4);
}
