//===- LogicalCoreTest.cpp - Programs over two physical cores (LNC=2) -----===//
//
// A hand-built LNC=2 program (core 0 writes a scratch tile to HBM, signals
// the peer's barrier semaphore; core 1 waits on it and reads the tile):
// its artifact round trip (two sets of streams, allocations per core), the
// verifier's barrier and LNC rules, the simulator (results, the barrier's
// cost, shared HBM bandwidth, per-core profile) and the race checker (the
// same read without the barrier is a race across cores; column halves of
// the same rows stored by the two cores are not), and its trace
// (a process row per core, the barrier's flow between them) and summary.
//
//===----------------------------------------------------------------------===//

#include "TimingTestUtil.h"

#include "profile/ChromeTrace.h"
#include "profile/Summary.h"
#include "sim/RaceChecker.h"

#include <nlohmann/json.hpp>
#include <set>

using namespace trnc;
using namespace trnc::test;

namespace {

constexpr int P = 4, F = 16;
constexpr uint8_t kDma0 = completionSemaphore(Engine::Dma, 0);
constexpr uint8_t kVector = completionSemaphore(Engine::Vector, 0);
constexpr uint8_t kBarrier = kFirstBarrierSemaphore;

Instruction &waitOn(Instruction &i, uint8_t sem, uint32_t value) {
  i.waits[i.numWaits++] = {sem, value};
  return i;
}

Instruction dma(AccessPattern dst, AccessPattern src, uint8_t signal = kDma0) {
  Instruction i = make(Opcode::DmaCopy, Engine::Dma);
  i.dst = dst;
  i.src0 = src;
  i.signal = signal;
  return i;
}

Instruction scale(float add, float mul) {
  Instruction i = make(Opcode::TensorScalar, Engine::Vector);
  i.op0 = uint8_t(AluOp::Add);
  i.imm0 = add;
  i.op1 = uint8_t(AluOp::Multiply);
  i.imm1 = mul;
  i.src0 = sbuf(DType::F32, 0, P, 0, {F});
  i.dst = sbuf(DType::F32, 0, P, 256, {F});
  i.signal = kVector;
  return i;
}

/// The barrier's signalling half: a Nop raising the peer's semaphore.
Instruction signalPeer(uint8_t sem = kBarrier) {
  Instruction i = make(Opcode::Nop, Engine::Dma);
  i.flags = kFlagSignalPeer;
  i.signal = sem;
  return i;
}

/// out = ((in + 1) * 1 + 0) * 2: core 0 computes in + 1 into scratch,
/// core 1 reads it and doubles it. `barrier`: core 1's read waits for core
/// 0's signal after the scratch write.
Program twoCoreProgram(bool barrier = true, const std::string &target = "trn2") {
  Builder b;
  b.p.target = target;
  b.p.name = "lnc2";
  uint32_t in = b.input(DType::F32, P * F * 4);
  uint32_t out = b.output(DType::F32, P * F * 4);
  uint32_t scratch = b.region(Region::Kind::Scratch, DType::F32, P * F * 4);
  auto hbmTile = [&](uint32_t r) { return hbm(r, DType::F32, 0, P, F, {F}); };
  EngineStreams &c0 = b.p.streams;
  c0[size_t(Engine::Dma)].push_back(dma(sbuf(DType::F32, 0, P, 0, {F}), hbmTile(in)));
  Instruction plusOne = scale(1, 1);
  c0[size_t(Engine::Vector)].push_back(waitOn(plusOne, kDma0, 1));
  Instruction write = dma(hbmTile(scratch), sbuf(DType::F32, 0, P, 256, {F}));
  c0[size_t(Engine::Dma)].push_back(waitOn(write, kVector, 1));
  if (barrier) {
    Instruction nop = signalPeer();
    c0[size_t(Engine::Dma)].push_back(waitOn(nop, kDma0, 2));
  }
  b.p.peerStreams.resize(1);
  EngineStreams &c1 = b.p.peerStreams[0];
  Instruction load = dma(sbuf(DType::F32, 0, P, 0, {F}), hbmTile(scratch));
  if (barrier)
    waitOn(load, kBarrier, 1);
  c1[size_t(Engine::Dma)].push_back(load);
  Instruction twice = scale(0, 2);
  c1[size_t(Engine::Vector)].push_back(waitOn(twice, kDma0, 1));
  Instruction store = dma(hbmTile(out), sbuf(DType::F32, 0, P, 256, {F}));
  c1[size_t(Engine::Dma)].push_back(waitOn(store, kVector, 1));
  // Each core's two tiles: same addresses, separate SBUFs.
  for (uint8_t core = 0; core < 2; ++core) {
    uint32_t lastDma = 1; // the store (core 0: to scratch; core 1: to out)
    Allocation loaded{Allocation::Space::Sbuf, P, 0, F * 4, 0, 1,
                      {Engine::Dma, 0}, {Engine::Vector, 0}};
    Allocation result{Allocation::Space::Sbuf, P, 256, F * 4, 1, 2,
                      {Engine::Vector, 0}, {Engine::Dma, lastDma}};
    loaded.core = result.core = core;
    b.p.allocations.push_back(loaded);
    b.p.allocations.push_back(result);
  }
  return b.p;
}

/// Each core copies columns [c0, c0 + n) of the same P rows (F columns)
/// from `in` to `out`, with no barrier: core 0 starts at column 0, core 1
/// at `peerColumn`. Two halves of the rows' columns touch no common byte;
/// overlapping columns are a write/write race.
Program columnHalvesProgram(uint32_t n, uint32_t peerColumn) {
  Builder b;
  b.p.name = "columns";
  uint32_t in = b.input(DType::F32, P * F * 4);
  uint32_t out = b.output(DType::F32, P * F * 4);
  b.p.peerStreams.resize(1);
  for (uint8_t core = 0; core < 2; ++core) {
    EngineStreams &c = core ? b.p.peerStreams[0] : b.p.streams;
    uint64_t column = core ? peerColumn : 0;
    auto rows = [&](uint32_t r) { return hbm(r, DType::F32, column * 4, P, F, {n}); };
    c[size_t(Engine::Dma)].push_back(dma(sbuf(DType::F32, 0, P, 0, {n}), rows(in)));
    Instruction store = dma(rows(out), sbuf(DType::F32, 0, P, 0, {n}));
    c[size_t(Engine::Dma)].push_back(waitOn(store, kDma0, 1));
    Allocation tile{Allocation::Space::Sbuf, P, 0, n * 4, 0, 1,
                    {Engine::Dma, 0}, {Engine::Dma, 1}};
    tile.core = core;
    b.p.allocations.push_back(tile);
  }
  return b.p;
}

std::vector<float> inputData() {
  std::vector<float> x(P * F);
  for (int i = 0; i < P * F; ++i)
    x[i] = float(i) * 0.5f - 3.0f;
  return x;
}

std::string runWith(const Program &p, std::vector<float> &out,
                    ExecutionObserver *observer = nullptr, bool timed = false,
                    Profile *profile = nullptr) {
  std::vector<float> x = inputData();
  out.assign(P * F, 0.0f);
  Simulator sim(*lookupMachineModel(p.target));
  RunOptions options;
  options.timed = timed;
  options.recordTrace = timed;
  options.observer = observer;
  return errorText(sim.run(p, {x.data()}, {out.data()}, options, profile));
}

} // namespace

TEST_CASE("an LNC=2 artifact round-trips with a section set per core", "[lnc][artifact]") {
  Program p = twoCoreProgram();
  REQUIRE(p.lnc() == 2);
  std::vector<uint8_t> bytes = writeArtifact(p);
  CHECK(bytes[16] == 15); // 5 + 2 cores x 5 engine streams
  CHECK(writeArtifact(twoCoreProgram()) == bytes);
  auto back = readArtifact(bytes);
  REQUIRE(errorText(back) == "");
  REQUIRE(back->lnc() == 2);
  for (unsigned c = 0; c < 2; ++c)
    for (unsigned e = 0; e < kNumEngines; ++e)
      REQUIRE(back->coreStreams(c)[e].size() == p.coreStreams(c)[e].size());
  CHECK(back->peerStreams[0][size_t(Engine::Vector)][0].imm1 == 2.0f);
  CHECK(back->streams[size_t(Engine::Dma)][2].flags == kFlagSignalPeer);
  REQUIRE(back->allocations.size() == 4);
  CHECK(back->allocations[0].core == 0);
  CHECK(back->allocations[3].core == 1);
  CHECK(writeArtifact(*back) == bytes);
  // An LNC=1 program keeps ten sections.
  Program one = p;
  one.peerStreams.clear();
  one.streams[size_t(Engine::Dma)].pop_back(); // the barrier signal
  one.allocations.resize(2);
  CHECK(writeArtifact(one)[16] == 10);
  // A section count that is neither is refused naming both.
  std::vector<uint8_t> bad = bytes;
  bad[16] = 12;
  CHECK(contains(errorText(readArtifact(bad)),
                 "section table has 12 sections, expected 10 (one physical core) "
                 "or 15 (LNC=2)"));
}

TEST_CASE("the verifier checks each core and the barrier rules", "[lnc][verify]") {
  CHECK(errorText(verifyProgram(twoCoreProgram())) == "");
  // Two physical cores on a target whose logical core is one.
  CHECK(contains(errorText(verifyProgram(twoCoreProgram(true, "trn1"))),
                 "the program spans 2 physical cores (LNC=2) but trn1's logical "
                 "cores have at most 1"));
  CHECK(errorText(verifyProgram(twoCoreProgram(true, "trn3"))) == "");
  // Core 1's instructions are checked like core 0's, and named by core.
  Program p = twoCoreProgram();
  p.peerStreams[0][size_t(Engine::Vector)][0].src0.partitionCount = 200;
  CHECK(contains(errorText(verifyProgram(p)),
                 "core 1 vector stream instruction 0 (tensor_scalar): src0 reads "
                 "SBUF partitions 0..200, past 128"));
  // A peer signal on a semaphore that is not a barrier one.
  p = twoCoreProgram();
  p.streams[size_t(Engine::Dma)][2].signal = kDma0;
  CHECK(contains(errorText(verifyProgram(p)),
                 "core 0 dma stream instruction 2 (nop): signals the peer core on "
                 "semaphore 5, which is not a barrier semaphore (21..31)"));
  // A barrier semaphore raised by the core itself.
  p = twoCoreProgram();
  p.streams[size_t(Engine::Dma)][2].flags = 0;
  CHECK(contains(errorText(verifyProgram(p)),
                 "signals barrier semaphore 21 without kFlagSignalPeer"));
  // kFlagSignalPeer on anything but a Nop.
  p = twoCoreProgram();
  p.streams[size_t(Engine::Dma)][1].flags = kFlagSignalPeer;
  CHECK(contains(errorText(verifyProgram(p)), "flags 0x80 not valid for dma_copy"));
  // A peer signal in a one-core program.
  Builder one;
  one.raw(signalPeer());
  CHECK(contains(errorText(verifyProgram(one.p)),
                 "signals the peer core (kFlagSignalPeer) but the program runs on "
                 "one physical core (LNC=1)"));
  // Allocations per core: a tile on a core the program does not have, and
  // live ranges counted in the tile's own core.
  p = twoCoreProgram();
  p.allocations[3].core = 2;
  CHECK(contains(errorText(verifyProgram(p)),
                 "allocation 3 (SBUF): on physical core 2 but the program spans 2"));
  p = twoCoreProgram();
  p.allocations[3].last = 3; // core 1 has 3 instructions
  CHECK(contains(errorText(verifyProgram(p)),
                 "live range 1..3 outside the 3 instructions of core 1"));
  // Same addresses on the two cores do not overlap (separate SBUFs), the
  // same address twice on one core does.
  p = twoCoreProgram();
  p.allocations[2].core = 0;
  p.allocations[2].firstAt = {Engine::Dma, 0};
  CHECK(contains(errorText(verifyProgram(p)), "overlaps allocation 0"));
}

TEST_CASE("two cores run one program over shared HBM", "[lnc][sim]") {
  std::vector<float> out;
  RaceChecker checker;
  REQUIRE(runWith(twoCoreProgram(), out, &checker) == "");
  std::vector<float> x = inputData();
  for (int i = 0; i < P * F; ++i)
    REQUIRE(out[i] == (x[i] + 1.0f) * 2.0f);
  CHECK(checker.numRaces() == 0);
  // Untimed stats count both cores' instructions.
  RunStats stats;
  Simulator sim(*lookupMachineModel("trn2"));
  REQUIRE(errorText(sim.run(twoCoreProgram(), {x.data()}, {out.data()}, &stats)) == "");
  CHECK(stats.instructions[size_t(Engine::Dma)] == 5);
  CHECK(stats.instructions[size_t(Engine::Vector)] == 2);
}

TEST_CASE("a cross-core read without the barrier is a race", "[lnc][race]") {
  std::vector<float> out;
  RaceChecker checker;
  std::string err = runWith(twoCoreProgram(/*barrier=*/false), out, &checker);
  INFO(err);
  CHECK(checker.numRaces() == 1);
  CHECK(contains(err, "core 0 dma stream instruction 1 (dma_copy) writes and core 1 "
                      "dma stream instruction 0 (dma_copy) reads the HBM scratch arena bytes "
                      "0..256, with no semaphore ordering between them"));
  // The same wait on a barrier semaphore nobody raises is a deadlock named
  // by core, not a hang.
  Program p = twoCoreProgram(false);
  waitOn(p.peerStreams[0][size_t(Engine::Dma)][0], kBarrier, 1);
  err = runWith(p, out);
  CHECK(contains(err, "core 1 dma stream instruction 0 (dma_copy) waits for semaphore "
                      "21 >= 1 (now 0)"));
  CHECK(contains(err, "core 1 semaphores: all 0"));
}

TEST_CASE("two cores storing the column halves of the same rows do not race",
          "[lnc][race]") {
  // The race checker sees an HBM access as its rows' byte runs, not one
  // range: rows 0..P of columns 0..F/2 and of F/2..F interleave but do not
  // overlap (the LNC=2 split stores a weight gradient's halves this way).
  std::vector<float> out;
  RaceChecker checker;
  REQUIRE(runWith(columnHalvesProgram(F / 2, F / 2), out, &checker) == "");
  CHECK(checker.numRaces() == 0);
  std::vector<float> x = inputData();
  CHECK(out == x);
  // One column more on core 1 overlaps core 0's last column of every row.
  RaceChecker overlapping;
  std::string err = runWith(columnHalvesProgram(F / 2 + 1, F / 2 - 1), out, &overlapping);
  INFO(err);
  CHECK(overlapping.numRaces() == 1);
  CHECK(contains(err, "core 0 dma stream instruction 1 (dma_copy) writes and core 1 "
                      "dma stream instruction 1 (dma_copy) writes HBM region 1 bytes"));
}

TEST_CASE("the barrier costs one DMA fixed cost; the profile counts both cores",
          "[lnc][timing]") {
  const MachineModel model = *lookupMachineModel("trn2");
  std::vector<float> out;
  Profile profile;
  RaceChecker checker;
  REQUIRE(runWith(twoCoreProgram(), out, &checker, /*timed=*/true, &profile) == "");
  CHECK(profile.lnc == 2);
  REQUIRE(profile.peerEngines.size() == 1);
  CHECK(profile.engines[size_t(Engine::Vector)].instructions == 1);
  CHECK(profile.peerEngines[0][size_t(Engine::Vector)].instructions == 1);
  CHECK(profile.peerEngines[0][size_t(Engine::Vector)].busyNs > 0);
  CHECK(profile.dmaQueues.size() == 2 * kNumDmaQueues);
  CHECK(profile.dmaQueues[kNumDmaQueues].transfers == 2); // core 1's queue 0
  CHECK(profile.peakFlopsPerSecond == 2 * model.tensorPeakFlopsPerSecond());
  CHECK(profile.peakHbmBytesPerSecond == 2 * model.hbmCoreBytesPerSecond());
  // Core 1's load starts one barrier cost after core 0's store ended.
  const InstructionRecord *store = nullptr, *load = nullptr;
  for (const InstructionRecord &r : profile.trace) {
    if (r.engine != Engine::Dma || r.opcode != Opcode::DmaCopy)
      continue;
    if (r.core == 0 && r.index == 1)
      store = &r;
    if (r.core == 1 && r.index == 0)
      load = &r;
  }
  REQUIRE(store);
  REQUIRE(load);
  CHECK(model.barrierNs() == model.dmaFixedNs);
  CHECK(load->startNs == Approx(store->endNs + model.barrierNs()));
  CHECK(profile.totalNs >= load->endNs);
}

TEST_CASE("two cores' HBM transfers share the pair's HBM bandwidth", "[lnc][timing]") {
  // Each core loads the same 1 MiB tile on one queue; at LNC=1 one core
  // loads it alone. The pair's HBM share is twice one core's, so the two
  // loads together take as long as one alone (each at a core's share).
  constexpr uint32_t rows = 128, cols = 2048; // f32: 8 KiB rows, 1 MiB
  auto program = [&](bool twoCores) {
    Builder b;
    uint32_t in = b.input(DType::F32, rows * cols * 4);
    Instruction load = dma(sbuf(DType::F32, 0, rows, 0, {cols}),
                           hbm(in, DType::F32, 0, rows, cols, {cols}));
    b.p.streams[size_t(Engine::Dma)].push_back(load);
    if (twoCores) {
      b.p.peerStreams.resize(1);
      b.p.peerStreams[0][size_t(Engine::Dma)].push_back(load);
    }
    return b.p;
  };
  std::vector<float> x(rows * cols, 1.0f);
  auto timeOf = [&](const Program &p) {
    Simulator sim(*lookupMachineModel("trn2"));
    Profile profile;
    RunOptions options;
    REQUIRE(errorText(sim.run(p, {x.data()}, {}, options, &profile)) == "");
    return profile;
  };
  Profile one = timeOf(program(false)), two = timeOf(program(true));
  CHECK(two.totalNs == Approx(one.totalNs).epsilon(1e-9));
  CHECK(two.hbmBytes == 2 * one.hbmBytes);
  // MBU against the pair's peak: the same utilisation of twice the bandwidth.
  CHECK(two.mbu == Approx(one.mbu).epsilon(1e-9));
}

TEST_CASE("the trace has a process row per core; the summary a row per core's engine",
          "[lnc][trace]") {
  std::vector<float> out;
  Profile profile;
  Program p = twoCoreProgram();
  REQUIRE(runWith(p, out, nullptr, /*timed=*/true, &profile) == "");
  nlohmann::json trace = nlohmann::json::parse(profile::writeChromeTrace(p, profile, 5));
  std::set<int> processes, slicePids;
  std::string core1Name;
  bool barrierFlow = false;
  for (const auto &e : trace["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "process_name") {
      processes.insert(int(e["pid"]));
      if (e["pid"] == 6)
        core1Name = e["args"]["name"];
    }
    if (e["ph"] == "X") {
      slicePids.insert(int(e["pid"]));
      CHECK(int(e["pid"]) == 5 + int(e["args"]["core"]));
    }
    // The barrier's wait on core 1 is met by core 0's signal: its flow
    // ends on core 1's row.
    if (e["ph"] == "f" && e["name"] == "s21>=1")
      barrierFlow = e["pid"] == 6;
  }
  CHECK(processes == std::set<int>{5, 6});
  CHECK(slicePids == std::set<int>{5, 6});
  CHECK(contains(core1Name, "lnc2 on trn2 (simulated) core 1"));
  CHECK(barrierFlow);
  std::string text = profile::summarize(p, profile);
  INFO(text);
  CHECK(contains(text, "  core engine      instrs"));
  CHECK(contains(text, "  1    vector           1"));
  CHECK(contains(text, "per logical core (2 physical cores)"));
}

TEST_CASE("matmul work split over two cores takes half the time at the same MFU",
          "[lnc][timing]") {
  // 256 128x128x512 bf16 matmuls (over the 8 PSUM banks, in order on the
  // Tensor Engine) on one core, or 128 on each core of the pair. Each core's
  // Tensor Engine has its own ~3 us warm-up throttle, paid once per core, so
  // the split takes a little over half the time (~1.5% here) at about the
  // same MFU against the pair's peak.
  auto program = [](unsigned perCore, unsigned cores) {
    Builder b;
    for (unsigned c = 0; c < cores; ++c) {
      if (c)
        b.p.peerStreams.resize(1);
      for (unsigned i = 0; i < perCore; ++i)
        b.p.coreStreams(c)[size_t(Engine::Tensor)].push_back(
            matmul(512, DType::BF16, 2048 * (i % 8)));
    }
    return b.p;
  };
  Profile one = runTimed(program(256, 1)), two = runTimed(program(128, 2));
  CHECK(two.lnc == 2);
  CHECK(two.tensorFlops == one.tensorFlops);
  CHECK(two.totalNs > one.totalNs / 2);
  CHECK(two.totalNs == Approx(one.totalNs / 2).epsilon(0.03));
  CHECK(two.mfu < one.mfu);
  CHECK(two.mfu == Approx(one.mfu).epsilon(0.03));
  CHECK(two.engines[size_t(Engine::Tensor)].busyNs ==
        Approx(two.peerEngines[0][size_t(Engine::Tensor)].busyNs));
}
