//===- RaceCheckerTest.cpp - Races, orderings and deadlocks ---------------===//
//
// Hand-built programs where two engines touch the same bytes with and without
// semaphore ordering (direct, transitive, by semaphore value), disjoint tiles
// that must not be flagged, the capped report, deadlocks (a wait no one can
// satisfy, a cycle of two engines), DMAs on different queues (unordered
// unless a queue semaphore orders them), and the checker's cost on a 50k
// instruction pipeline synchronised the way the compiler does it.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"

#include "sim/RaceChecker.h"

#include <chrono>

using namespace trnc;
using namespace trnc::test;

namespace {

std::string runChecked(const Program &p, std::vector<void *> in = {},
                       std::vector<void *> out = {},
                       RaceChecker *checker = nullptr) {
  Simulator sim(*lookupMachineModel(p.target));
  RaceChecker local;
  RunOptions options;
  options.timed = false;
  options.observer = checker ? checker : &local;
  return errorText(sim.run(p, in, out, options, nullptr));
}

Instruction memset(Engine e, AccessPattern dst, uint8_t signal = kNoSemaphore) {
  Instruction i = make(Opcode::Memset, e);
  i.dst = dst;
  i.imm0 = 1.0f;
  i.signal = signal;
  return i;
}

Instruction copy(Engine e, AccessPattern dst, AccessPattern src,
                 uint8_t signal = kNoSemaphore) {
  Instruction i = make(e == Engine::Dma ? Opcode::DmaCopy : Opcode::TensorCopy, e);
  i.dst = dst;
  i.src0 = src;
  i.signal = signal;
  return i;
}

Instruction &waitFor(Instruction &i, uint8_t sem, uint32_t value) {
  i.waits[i.numWaits++] = {sem, value};
  return i;
}

AccessPattern tile(uint16_t p0, uint16_t np, uint64_t offset, uint32_t n) {
  return sbuf(DType::F32, p0, np, offset, {n});
}

} // namespace

TEST_CASE("unsynchronised write and read on two engines race", "[race]") {
  Builder b;
  b.raw(memset(Engine::GpSimd, tile(0, 4, 0, 16)));
  b.raw(copy(Engine::Vector, tile(0, 2, 256, 4), tile(2, 2, 32, 4)))
      .sourceIndex = 0;
  b.p.sources.push_back({"aten.relu.default", "relu", "m.py", 7});
  std::string err = runChecked(b.p);
  INFO(err);
  CHECK(contains(err, "race check of program 'test' failed: 1 race between "
                      "instructions on different engines or DMA queues:"));
  // Vector runs first in the simulator's interleaving, so it is named first.
  CHECK(contains(err, "vector stream instruction 0 (tensor_copy) "
                      "[aten.relu.default 'relu' at m.py:7] reads and gpsimd "
                      "stream instruction 0 (memset) writes SBUF partitions "
                      "2..4, bytes 32..48 of each partition, with no semaphore "
                      "ordering between them"));
}

TEST_CASE("a semaphore wait orders the pair", "[race]") {
  Builder b;
  b.raw(memset(Engine::GpSimd, tile(0, 4, 0, 16), /*signal=*/3));
  Instruction c = copy(Engine::Vector, tile(0, 4, 256, 16), tile(0, 4, 0, 16));
  b.raw(waitFor(c, 3, 1));
  CHECK(runChecked(b.p) == "");
  // Write after read needs ordering too: GpSimd overwrites what Vector reads.
  Instruction w = memset(Engine::GpSimd, tile(0, 4, 0, 16));
  b.raw(w);
  std::string err = runChecked(b.p);
  CHECK(contains(err, "vector stream instruction 0 (tensor_copy) reads and "
                      "gpsimd stream instruction 1 (memset) writes"));
  b.p.streams[size_t(Engine::Vector)][0].signal = 4;
  waitFor(b.p.streams[size_t(Engine::GpSimd)][1], 4, 1);
  CHECK(runChecked(b.p) == "");
}

TEST_CASE("disjoint tiles and concurrent reads do not race", "[race]") {
  Builder b;
  // Different partitions, same bytes.
  b.raw(memset(Engine::GpSimd, tile(0, 64, 0, 16)));
  b.raw(memset(Engine::Vector, tile(64, 64, 0, 16)));
  // Same partitions, adjacent bytes (a strided pattern's extent ends at
  // its last element, not at the next stride).
  b.raw(memset(Engine::GpSimd, sbuf(DType::F32, 0, 128, 1024, {4, 4}, {8, 1})));
  b.raw(memset(Engine::Vector, tile(0, 128, 1024 + 4 * 28, 8)));
  // PSUM and SBUF at the same address are different memories.
  b.raw(memset(Engine::GpSimd, psum(DType::F32, 0, 8, 0, {16})));
  // Two engines reading the same bytes.
  b.raw(copy(Engine::Scalar, tile(0, 8, 4096, 16), tile(0, 8, 2048, 16)));
  b.raw(copy(Engine::Vector, tile(0, 8, 8192, 16), tile(0, 8, 2048, 16)));
  CHECK(runChecked(b.p) == "");
}

namespace {

Instruction dma(unsigned queue, AccessPattern dst, AccessPattern src,
                uint8_t signal) {
  Instruction i = copy(Engine::Dma, dst, src, signal);
  i.dmaQueue = uint16_t(queue);
  return i;
}

} // namespace

TEST_CASE("DMAs on different queues race unless a queue semaphore orders "
          "them", "[race][dma]") {
  const uint8_t q0 = completionSemaphore(Engine::Dma, 0);
  auto program = [&](unsigned storeQueue, bool wait) {
    Builder b;
    uint32_t in = b.input(DType::F32, 256), out = b.output(DType::F32, 256);
    b.raw(dma(0, tile(0, 4, 0, 16), hbm(in, DType::F32, 0, 4, 16, {16}), q0));
    Instruction store = dma(storeQueue, hbm(out, DType::F32, 0, 4, 16, {16}),
                            tile(0, 4, 0, 16),
                            completionSemaphore(Engine::Dma, storeQueue));
    if (wait)
      waitFor(store, q0, 1);
    b.raw(store);
    return b.p;
  };
  std::vector<float> x(64), y(64);
  std::string err = runChecked(program(1, false), {x.data()}, {y.data()});
  INFO(err);
  CHECK(contains(err, "dma stream instruction 0 (dma_copy) writes and dma "
                      "stream instruction 1 (dma_copy) reads SBUF"));
  CHECK(runChecked(program(1, true), {x.data()}, {y.data()}) == "");
  // Same queue: the queue runs them in order.
  CHECK(runChecked(program(0, false), {x.data()}, {y.data()}) == "");
}

TEST_CASE("scratch regions sharing arena bytes race unless ordered",
          "[race][dma]") {
  // Region a is written and read back (queue 0), then region c written
  // (queue 1): apart in the arena they never race; packed at one offset,
  // c's write may overwrite a before it is read, unless it waits for
  // queue 0.
  const uint8_t q0 = completionSemaphore(Engine::Dma, 0);
  auto program = [&](bool shared, bool wait) {
    Builder b;
    uint32_t a = b.region(Region::Kind::Scratch, DType::F32, 256);
    uint32_t c = b.region(Region::Kind::Scratch, DType::F32, 256);
    if (shared)
      b.p.regions[c].arenaOffset = b.p.regions[a].arenaOffset;
    b.raw(dma(0, hbm(a, DType::F32, 0, 4, 16, {16}), tile(0, 4, 0, 16), q0));
    b.raw(dma(0, tile(8, 4, 0, 16), hbm(a, DType::F32, 0, 4, 16, {16}), q0));
    Instruction store = dma(1, hbm(c, DType::F32, 0, 4, 16, {16}),
                            tile(4, 4, 0, 16), completionSemaphore(Engine::Dma, 1));
    if (wait)
      waitFor(store, q0, 2);
    b.raw(store);
    return b.p;
  };
  CHECK(runChecked(program(false, false)) == "");
  std::string err = runChecked(program(true, false));
  INFO(err);
  CHECK(contains(err, "dma stream instruction 1 (dma_copy) reads and dma "
                      "stream instruction 2 (dma_copy) writes the HBM scratch "
                      "arena bytes 0..256"));
  CHECK(runChecked(program(true, true)) == "");
}

TEST_CASE("a read of scratch bytes nothing wrote in the run is reported",
          "[race][dma]") {
  // Scratch is undefined until written: packed, its bytes may hold another
  // region's data. Rows 0..1 of the region are written, then rows 0..3 read.
  const uint8_t q0 = completionSemaphore(Engine::Dma, 0);
  auto program = [&](uint16_t writtenRows) {
    Builder b;
    uint32_t a = b.region(Region::Kind::Scratch, DType::F32, 256);
    b.raw(dma(0, hbm(a, DType::F32, 0, writtenRows, 16, {16}),
              tile(0, writtenRows, 0, 16), q0));
    b.raw(dma(0, tile(8, 4, 0, 16), hbm(a, DType::F32, 0, 4, 16, {16}), q0));
    return b.p;
  };
  CHECK(runChecked(program(4)) == "");
  std::string err = runChecked(program(2));
  INFO(err);
  CHECK(contains(err, "scratch check of program 'test' failed: 1 instruction "
                      "reads HBM scratch bytes nothing wrote before in this run "
                      "(scratch is undefined until written):\n  dma stream "
                      "instruction 1 (dma_copy) reads bytes 128..256 of "
                      "scratch region 0"));
}

TEST_CASE("one semaphore shared by DMA queues proves only what its count "
          "does", "[race][dma]") {
  // The old scheme: every DMA signals semaphore 4. Queue 2's unrelated
  // transfer can raise it to 1 first, so "4 >= 1" does not order the store
  // after the load on queue 0; "4 >= 2" does.
  for (uint32_t value : {1u, 2u}) {
    Builder b;
    uint32_t in = b.input(DType::F32, 256), out = b.output(DType::F32, 256);
    b.raw(dma(0, tile(0, 4, 0, 16), hbm(in, DType::F32, 0, 4, 16, {16}), 4));
    b.raw(dma(2, tile(8, 4, 0, 16), hbm(in, DType::F32, 0, 4, 16, {16}), 4));
    Instruction use = copy(Engine::Vector, tile(0, 4, 256, 16), tile(0, 4, 0, 16));
    b.raw(waitFor(use, 4, value));
    std::vector<float> x(64), y(64);
    std::string err = runChecked(b.p, {x.data()}, {y.data()});
    INFO(value << ": " << err);
    CHECK(contains(err, "dma stream instruction 0 (dma_copy) writes") ==
          (value == 1));
  }
}

TEST_CASE("a DMA is issued after the waits of earlier DMAs, not after their "
          "completion", "[race][dma]") {
  Builder b;
  uint32_t out = b.output(DType::F32, 512);
  b.raw(memset(Engine::Vector, tile(0, 4, 0, 16), /*signal=*/1));
  Instruction first = dma(0, hbm(out, DType::F32, 0, 4, 16, {16}),
                          tile(0, 4, 0, 16), completionSemaphore(Engine::Dma, 0));
  b.raw(waitFor(first, 1, 1));
  // Issued after `first`'s wait was met: ordered after the memset.
  b.raw(dma(1, hbm(out, DType::F32, 256, 4, 16, {16}), tile(0, 4, 0, 16),
            completionSemaphore(Engine::Dma, 1)));
  std::vector<float> y(128);
  CHECK(runChecked(b.p, {}, {y.data()}) == "");
  // ... but not after `first` ends: a third DMA overwriting what `first`
  // writes, on another queue, races with it.
  b.raw(dma(2, hbm(out, DType::F32, 0, 4, 16, {16}), tile(0, 4, 512, 16),
            completionSemaphore(Engine::Dma, 2)));
  std::string err = runChecked(b.p, {}, {y.data()});
  CHECK(contains(err, "dma stream instruction 0 (dma_copy) writes and dma "
                      "stream instruction 2 (dma_copy) writes HBM region 0"));
}

TEST_CASE("ordering is transitive through a third engine", "[race]") {
  Builder b;
  b.raw(memset(Engine::Vector, tile(0, 8, 0, 16), /*signal=*/1));
  Instruction mid = copy(Engine::Scalar, tile(0, 8, 512, 4), tile(0, 8, 1024, 4), 2);
  b.raw(waitFor(mid, 1, 1));
  Instruction last = memset(Engine::GpSimd, tile(0, 8, 0, 16));
  b.raw(waitFor(last, 2, 1));
  CHECK(runChecked(b.p) == "");
}

TEST_CASE("a wait orders only up to the signal that reached its value",
          "[race]") {
  // Vector signals semaphore 1 twice; the consumer of the second write
  // waits only for value 1, which the first signal already provides.
  Builder b;
  b.raw(memset(Engine::Vector, tile(0, 8, 0, 16), 1));
  b.raw(memset(Engine::Vector, tile(0, 8, 64, 16), 1));
  Instruction use = copy(Engine::Scalar, tile(0, 8, 4096, 16), tile(0, 8, 64, 16));
  b.raw(waitFor(use, 1, 1));
  std::string err = runChecked(b.p);
  CHECK(contains(err, "vector stream instruction 1 (memset) writes and scalar "
                      "stream instruction 0 (tensor_copy) reads SBUF "
                      "partitions 0..8, bytes 64..128"));
  b.p.streams[size_t(Engine::Scalar)][0].waits[0].value = 2;
  CHECK(runChecked(b.p) == "");
}

TEST_CASE("races in HBM and PSUM are found too", "[race]") {
  // HBM is reached only by the DMA engine, whose stream is ordered: a DMA
  // writing HBM while another DMA reads it is never a race.
  Builder b;
  uint32_t out = b.output(DType::F32, 256);
  b.raw(copy(Engine::Dma, hbm(out, DType::F32, 0, 4, 16, {16}), tile(0, 4, 0, 16)));
  b.raw(copy(Engine::Dma, tile(8, 4, 0, 16), hbm(out, DType::F32, 0, 4, 16, {16})));
  // Tensor accumulates into PSUM while Vector reads the same bank.
  Instruction mm = make(Opcode::Matmul, Engine::Tensor);
  mm.dst = psum(DType::F32, 0, 4, 0, {8});
  mm.src0 = sbuf(DType::F32, 0, 2, 0, {4});
  mm.src1 = sbuf(DType::F32, 0, 2, 64, {8});
  b.raw(mm);
  b.raw(copy(Engine::Vector, tile(0, 4, 4096, 2), psum(DType::F32, 0, 4, 16, {2})));
  std::vector<float> y(64);
  std::string err = runChecked(b.p, {}, {y.data()});
  CHECK(contains(err, "1 race"));
  CHECK(contains(err, "tensor stream instruction 0 (matmul) writes and vector "
                      "stream instruction 0 (tensor_copy) reads PSUM "
                      "partitions 0..4, bytes 16..24"));
}

TEST_CASE("the report is capped and counts every pair", "[race]") {
  Builder b;
  for (uint16_t i = 0; i < 25; ++i) {
    b.raw(memset(Engine::Vector, tile(i, 1, 0, 4)));
    b.raw(memset(Engine::GpSimd, tile(i, 1, 0, 4)));
  }
  RaceChecker checker;
  std::string err = runChecked(b.p, {}, {}, &checker);
  CHECK(checker.numRaces() == 25);
  CHECK(contains(err, "failed: 25 races"));
  CHECK(contains(err, "... and 15 more"));
  // The checker is reusable: a clean run after a racy one passes.
  Builder clean;
  clean.raw(memset(Engine::Vector, tile(0, 1, 0, 4)));
  CHECK(runChecked(clean.p, {}, {}, &checker) == "");
}

TEST_CASE("a wait on a semaphore no one signals is a deadlock", "[race][deadlock]") {
  Builder b;
  Instruction m = memset(Engine::Vector, tile(0, 1, 0, 4));
  b.raw(memset(Engine::GpSimd, tile(1, 1, 0, 4), 2));
  b.raw(waitFor(m, 9, 1)).sourceIndex = 0;
  b.p.sources.push_back({"aten.add.Tensor", "add", "m.py", 3});
  std::string err = runChecked(b.p);
  INFO(err);
  CHECK(contains(err, "deadlock in program 'test'"));
  CHECK(contains(err, "vector stream instruction 0 (memset) [aten.add.Tensor "
                      "'add' at m.py:3] waits for semaphore 9 >= 1 (now 0)"));
}

TEST_CASE("two engines waiting on each other are a deadlock, not a hang",
          "[race][deadlock]") {
  Builder b;
  b.raw(memset(Engine::Vector, tile(0, 1, 0, 4), 1));
  Instruction v = memset(Engine::Vector, tile(0, 1, 16, 4), 1);
  b.raw(waitFor(v, 2, 1));
  Instruction g = memset(Engine::GpSimd, tile(1, 1, 0, 4), 2);
  b.raw(waitFor(g, 1, 2)); // needs v, which needs g
  auto start = std::chrono::steady_clock::now();
  std::string err = runChecked(b.p);
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(5));
  INFO(err);
  CHECK(contains(err, "deadlock"));
  CHECK(contains(err, "vector stream instruction 1 (memset) waits for "
                      "semaphore 2 >= 1 (now 0)"));
  CHECK(contains(err, "gpsimd stream instruction 0 (memset) waits for "
                      "semaphore 1 >= 2 (now 1)"));
}

namespace {

/// A software pipeline the way the compiler emits it: every instruction
/// signals its engine's semaphore; DMA loads tile t into one of 4 SBUF slots,
/// Vector scales it into an output slot, Scalar adds one in place, DMA stores
/// it. Each cross-engine hazard waits for the producer (or last reader); the
/// scale's wait for its load also covers the slot's previous store, which
/// precedes the load in the DMA stream. `dropWaitAt` removes the Scalar
/// instruction's wait for the scale of that tile.
Program pipeline(unsigned tiles, int64_t dropWaitAt = -1) {
  Builder b;
  uint32_t in = b.input(DType::F32, uint64_t(tiles) * 128 * 64 * 4);
  uint32_t out = b.output(DType::F32, uint64_t(tiles) * 128 * 64 * 4);
  auto sig = [](Engine e) { return uint8_t(e); };
  auto count = [&](Engine e) { return uint32_t(b.p.streams[size_t(e)].size()); };
  uint32_t lastVectorReadOfSlot[4] = {};
  for (unsigned t = 0; t < tiles; ++t) {
    unsigned slot = t % 4;
    uint64_t inSlot = slot * 256, outSlot = 1024 + slot * 256;
    uint64_t hbmAt = uint64_t(t) * 128 * 64 * 4;
    Instruction load = copy(Engine::Dma, tile(0, 128, inSlot, 64),
                            hbm(in, DType::F32, hbmAt, 128, 64, {64}), sig(Engine::Dma));
    if (lastVectorReadOfSlot[slot])
      waitFor(load, sig(Engine::Vector), lastVectorReadOfSlot[slot]);
    b.raw(load);
    Instruction scale = make(Opcode::TensorScalar, Engine::Vector);
    scale.op0 = uint8_t(AluOp::Multiply);
    scale.imm0 = 2.0f;
    scale.src0 = tile(0, 128, inSlot, 64);
    scale.dst = tile(0, 128, outSlot, 64);
    scale.signal = sig(Engine::Vector);
    waitFor(scale, sig(Engine::Dma), count(Engine::Dma));
    b.raw(scale);
    lastVectorReadOfSlot[slot] = count(Engine::Vector);
    Instruction bias = make(Opcode::Activation, Engine::Scalar);
    bias.op0 = uint8_t(ActFunc::Copy);
    bias.imm0 = 1.0f;
    bias.imm1 = 1.0f;
    bias.src0 = bias.dst = tile(0, 128, outSlot, 64);
    bias.signal = sig(Engine::Scalar);
    if (int64_t(t) != dropWaitAt)
      waitFor(bias, sig(Engine::Vector), count(Engine::Vector));
    b.raw(bias);
    Instruction store = copy(Engine::Dma, hbm(out, DType::F32, hbmAt, 128, 64, {64}),
                             tile(0, 128, outSlot, 64), sig(Engine::Dma));
    waitFor(store, sig(Engine::Scalar), count(Engine::Scalar));
    b.raw(store);
  }
  return b.p;
}

} // namespace

TEST_CASE("a 50k-instruction pipeline: correct waits pass, a dropped one is "
          "found, at a small cost",
          "[race][cost]") {
  const unsigned tiles = 12500; // 4 instructions per tile
  Program p = pipeline(tiles);
  std::vector<float> x(size_t(tiles) * 128 * 64, 1.0f), y(x.size());
  Simulator sim(*lookupMachineModel("trn2"));
  RunOptions plain;
  plain.timed = false;
  auto t0 = std::chrono::steady_clock::now();
  REQUIRE(errorText(sim.run(p, {x.data()}, {y.data()}, plain, nullptr)) == "");
  auto t1 = std::chrono::steady_clock::now();
  RaceChecker checker;
  RunOptions checked = plain;
  checked.observer = &checker;
  REQUIRE(errorText(sim.run(p, {x.data()}, {y.data()}, checked, nullptr)) == "");
  auto t2 = std::chrono::steady_clock::now();
  CHECK(y[0] == 3.0f);
  double runMs = std::chrono::duration<double, std::milli>(t1 - t0).count();
  double checkedMs = std::chrono::duration<double, std::milli>(t2 - t1).count();
  WARN("50k instructions: run " << runMs << " ms, with race checker "
                                << checkedMs << " ms; peak live accesses "
                                << checker.peakLiveAccesses());
  CHECK(checker.peakLiveAccesses() < 10000);

  // Without its wait, Scalar's tile 6000 may read before Vector writes it,
  // and so may the store that waits only for Scalar.
  Program racy = pipeline(tiles, 6000);
  std::string err = errorText(sim.run(racy, {x.data()}, {y.data()}, checked, nullptr));
  INFO(err);
  CHECK(contains(err, "failed: 2 races"));
  // The activation reads and writes the slot in place; its write is named.
  CHECK(contains(err, "scalar stream instruction 6000 (activation) writes and "
                      "vector stream instruction 6000 (tensor_scalar) writes "
                      "SBUF partitions 0..128, bytes 1024..1280"));
  CHECK(contains(err, "vector stream instruction 6000 (tensor_scalar) writes "
                      "and dma stream instruction 12001 (dma_copy) reads"));
}
