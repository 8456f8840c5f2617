//===- TimingModelTest.cpp - Machine-model timing constants and the loop ---===//
//
// The timing constants of each target as HARDWARE.md lists them, the DMA
// efficiency curve, and properties of the timed engine loop: functional
// results equal to an untimed run, per-engine slices that never overlap,
// deadlocks reported (not hung) in timed mode, and counts-only profiles of
// untimed runs.
//
//===----------------------------------------------------------------------===//

#include "TimingTestUtil.h"

#include "sim/CostModel.h"

#include <map>
#include <numeric>

using namespace trnc;
using namespace trnc::test;

TEST_CASE("timing constants match HARDWARE.md", "[timing][machine]") {
  auto t1 = *lookupMachineModel("trn1"), t2 = *lookupMachineModel("trn2"),
       t3 = *lookupMachineModel("trn3");
  for (const MachineModel &m : {t1, t2, t3}) {
    CHECK(m.tensorArrayRows == 128);
    CHECK(m.tensorArrayCols == 128);
    CHECK(m.matmulFp32Slowdown == 4);
    CHECK(m.matmulStartupCycles == 64);
    CHECK(m.minInitiationCycles == 64);
    CHECK(m.accessOverheadCycles == 60);
    CHECK(m.dmaEngines == 16);
    CHECK(m.dmaQueuesPerEngine == 16);
    CHECK(m.dmaFixedNs == 1300);
  }
  CHECK_FALSE(t1.tensorWarmupThrottle);
  CHECK(t2.tensorWarmupThrottle);
  CHECK(t3.tensorWarmupThrottle);
  CHECK(t1.vectorElemsPerCycle16 == 128);
  CHECK(t2.vectorElemsPerCycle16 == 512);
  CHECK(t2.vectorElemsPerCycleOther == 256);
  CHECK(t3.scalarElemsPerCycle16 == 256);
  CHECK(t3.scalarElemsPerCycleOther == 128);
  // Per-core Tensor Engine peak 128*128*2*clock: ~92 (trn1), ~79 TFLOP/s.
  CHECK_NS(t1.tensorPeakFlopsPerSecond(), 91.7504e12);
  CHECK_NS(t2.tensorPeakFlopsPerSecond(), 78.6432e12);
  // Per-core HBM share.
  CHECK_NS(t1.hbmCoreBytesPerSecond(), 410e9);
  CHECK_NS(t2.hbmCoreBytesPerSecond(), 362.5e9);
  CHECK_NS(t3.hbmCoreBytesPerSecond(), 612.5e9);
}

TEST_CASE("DMA size efficiency: efficient from 2 KiB, saturated from 4 KiB",
          "[timing][dma]") {
  MachineModel m = *lookupMachineModel("trn2");
  CHECK_NS(sim::dmaEfficiency(m, 4096), 1.0);
  CHECK_NS(sim::dmaEfficiency(m, 65536), 1.0);
  CHECK_NS(sim::dmaEfficiency(m, 2048), 0.9);
  CHECK_NS(sim::dmaEfficiency(m, 512), 0.5625);
  CHECK(sim::dmaEfficiency(m, 64) < 0.13);
  for (uint64_t r = 1; r < 8192; r *= 2)
    CHECK(sim::dmaEfficiency(m, r) <= sim::dmaEfficiency(m, 2 * r));
}

TEST_CASE("an HBM -> HBM copy's rows are its partitions' runs, and it "
          "counts its bytes on both sides of HBM", "[timing][dma]") {
  MachineModel m = *lookupMachineModel("trn2");
  Instruction c = make(Opcode::DmaCopy, Engine::Dma);
  // [128, 1024] f32, contiguous on both sides: 128 rows of 4 KiB (spread
  // over the 16 engines), not one 512 KiB descriptor on one engine.
  c.dst = hbm(1, DType::F32, 0, 128, 1024, {1024});
  c.src0 = hbm(0, DType::F32, 0, 128, 1024, {1024});
  CHECK(sim::dmaRowBytes(c) == 4096);
  CHECK(sim::dmaBytes(c) == 128 * 1024 * 4);
  CHECK(sim::dmaHbmBytes(c) == 2 * 128 * 1024 * 4);
  CHECK_NS(sim::dmaAloneBytesPerNs(m, c), m.dmaEngines * m.dmaEngineGBps);
  // It reads and writes HBM: at most half the core's HBM share.
  CHECK_NS(sim::dmaSharedCapBytesPerNs(m, c),
           std::min(m.dmaCoreBytesPerSecond(), m.hbmCoreBytesPerSecond() / 2) * 1e-9);
  // The same pattern into SBUF: one side, the same rows.
  Instruction l = c;
  l.dst = sbuf(DType::F32, 0, 128, 0, {1024});
  CHECK(sim::dmaRowBytes(l) == 4096);
  CHECK_NS(sim::dmaSharedCapBytesPerNs(m, l),
           std::min(m.dmaCoreBytesPerSecond(), m.hbmCoreBytesPerSecond()) * 1e-9);
}

namespace {

/// load x -> Vector x*2 -> Scalar exp -> GpSimd +1 -> store, with the
/// streams' waits; several tiles so engines overlap in timed mode. The Dma
/// stream issues in order, so each load is placed one tile ahead of the
/// previous tile's store.
Program pipeline(const char *target, int tiles) {
  Builder b;
  b.p.target = target;
  const uint16_t P = 128;
  const uint32_t F = 256;
  uint32_t in = b.input(DType::F32, uint64_t(tiles) * P * F * 4);
  uint32_t out = b.output(DType::F32, uint64_t(tiles) * P * F * 4);
  std::vector<Instruction> loads, stores;
  for (int t = 0; t < tiles; ++t) {
    uint64_t hoff = uint64_t(t) * P * F * 4, soff = (t % 4) * 4 * F * 4;
    uint32_t n = uint32_t(t + 1);
    Instruction load = make(Opcode::DmaCopy, Engine::Dma);
    load.dmaQueue = uint16_t(t % 16);
    load.dst = sbuf(DType::F32, 0, P, soff, {F});
    load.src0 = hbm(in, DType::F32, hoff, P, F, {F});
    load.signal = 0;
    if (t >= 4) { // the buffer is free once tile t-4 was stored
      load.numWaits = 1;
      load.waits[0] = {4, uint32_t(t - 3)};
    }
    loads.push_back(load);
    Instruction mul = make(Opcode::TensorScalar, Engine::Vector);
    mul.op0 = uint8_t(AluOp::Multiply);
    mul.imm0 = 2.0f;
    mul.src0 = load.dst;
    mul.dst = sbuf(DType::F32, 0, P, soff + F * 4, {F});
    mul.numWaits = 1;
    mul.waits[0] = {0, n};
    mul.signal = 1;
    b.raw(mul);
    Instruction act = make(Opcode::Activation, Engine::Scalar);
    act.op0 = uint8_t(ActFunc::Exp);
    act.imm0 = 0.01f;
    act.src0 = mul.dst;
    act.dst = sbuf(DType::F32, 0, P, soff + 2 * F * 4, {F});
    act.numWaits = 1;
    act.waits[0] = {1, n};
    act.signal = 2;
    b.raw(act);
    Instruction add = make(Opcode::TensorScalar, Engine::GpSimd);
    add.op0 = uint8_t(AluOp::Add);
    add.imm0 = 1.0f;
    add.src0 = act.dst;
    add.dst = sbuf(DType::F32, 0, P, soff + 3 * F * 4, {F});
    add.numWaits = 1;
    add.waits[0] = {2, n};
    add.signal = 3;
    b.raw(add);
    Instruction store = make(Opcode::DmaCopy, Engine::Dma);
    store.dmaQueue = uint16_t((t + 8) % 16);
    store.dst = hbm(out, DType::F32, hoff, P, F, {F});
    store.src0 = add.dst;
    store.numWaits = 1;
    store.waits[0] = {3, n};
    store.signal = 4;
    stores.push_back(store);
  }
  b.raw(loads[0]);
  for (int t = 0; t < tiles; ++t) {
    if (t + 1 < tiles)
      b.raw(loads[t + 1]);
    b.raw(stores[t]);
  }
  return b.p;
}

} // namespace

TEST_CASE("timed runs compute the same results as untimed runs",
          "[timing][sched]") {
  const int tiles = 12;
  Program p = pipeline("trn2", tiles);
  std::vector<float> x(size_t(tiles) * 128 * 256), timed(x.size()), plain(x.size());
  for (size_t i = 0; i < x.size(); ++i)
    x[i] = float(i % 97) * 0.25f;
  Profile prof = runTimed(p, {x.data()}, {timed.data()});
  REQUIRE(run(p, {x.data()}, {plain.data()}) == "");
  CHECK(std::memcmp(timed.data(), plain.data(), x.size() * 4) == 0);
  CHECK(timed[5] == plain[5]);
  CHECK(prof.trace.size() == size_t(tiles) * 5);
  // Engines overlap: the run is shorter than the sum of busy times.
  double busy = 0;
  for (const EngineProfile &e : prof.engines)
    busy += e.busyNs;
  CHECK(prof.totalNs < busy);
  CHECK(prof.totalNs > 0);
}

TEST_CASE("trace slices of one engine or DMA queue never overlap",
          "[timing][trace]") {
  Profile p = runTimed(pipeline("trn1", 20), {std::vector<float>(20 * 128 * 256).data()},
                       {std::vector<float>(20 * 128 * 256).data()});
  std::map<int, double> lastEnd;
  for (const InstructionRecord &r : p.trace) {
    int track = r.engine == Engine::Dma ? 100 + r.dmaQueue : int(r.engine);
    CHECK(r.issueNs <= r.startNs);
    CHECK(r.startNs < r.endNs);
    CHECK(r.endNs <= p.totalNs);
    auto it = lastEnd.find(track);
    if (it != lastEnd.end())
      CHECK(r.startNs >= it->second);
    lastEnd[track] = r.endNs;
  }
  for (const EngineProfile &e : p.engines)
    CHECK(e.utilisation <= 1.0);
}

TEST_CASE("a deadlock is reported in timed mode too", "[timing][sched]") {
  Builder b;
  Instruction a = make(Opcode::Memset, Engine::Vector);
  a.dst = sbuf(DType::F32, 0, 1, 0, {4});
  a.numWaits = 1;
  a.waits[0] = {7, 1};
  b.raw(a);
  std::string err;
  runTimed(b.p, {}, {}, &err);
  CHECK(contains(err, "deadlock"));
  CHECK(contains(err, "semaphore 7 >= 1"));
}

TEST_CASE("an untimed run fills only the counts of the profile",
          "[timing][sched]") {
  Builder b;
  Instruction a = make(Opcode::Memset, Engine::Vector);
  a.dst = sbuf(DType::F32, 0, 1, 0, {4});
  b.raw(a);
  Simulator sim(*lookupMachineModel("trn2"));
  RunOptions options;
  options.timed = false;
  Profile p;
  p.totalNs = 5;
  REQUIRE(errorText(sim.run(b.p, {}, {}, options, &p)) == "");
  CHECK(p.totalNs == 0);
  CHECK(p.engines[1].instructions == 1);
  CHECK(p.target == "trn2");
}
