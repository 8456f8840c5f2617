//===- SimSchedulingTest.cpp - Engines, semaphores and deadlocks ------------===//
//
// The engine loop runs the lowest-numbered ready engine first, so a consumer
// on Vector (engine 1) would overtake a producer on DMA (engine 4) unless a
// semaphore wait orders them. Also a cross-engine chain through every engine
// and deadlock reports that name the stuck instructions, and DMA queues that
// complete out of order, each consumer waiting on its producer's queue.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"
#include "TimingTestUtil.h"

#include <chrono>
#include <numeric>

using namespace trnc;
using namespace trnc::test;

namespace {

/// DMA in -> Vector adds 1 -> DMA out, synchronised only by `useWait`.
Program producerConsumer(bool useWait) {
  Builder b;
  const int P = 4, F = 8;
  uint32_t in = b.input(DType::F32, P * F * 4);
  uint32_t out = b.output(DType::F32, P * F * 4);
  Instruction load = make(Opcode::DmaCopy, Engine::Dma);
  load.dst = sbuf(DType::F32, 0, P, 0, {F});
  load.src0 = hbm(in, DType::F32, 0, P, F, {F});
  load.signal = 3;
  b.raw(load);
  Instruction add = make(Opcode::TensorScalar, Engine::Vector);
  add.op0 = uint8_t(AluOp::Add);
  add.imm0 = 1.0f;
  add.src0 = load.dst;
  add.dst = sbuf(DType::F32, 0, P, 256, {F});
  if (useWait) {
    add.numWaits = 1;
    add.waits[0] = {3, 1};
  }
  add.signal = 4;
  b.raw(add);
  Instruction store = make(Opcode::DmaCopy, Engine::Dma);
  store.dst = hbm(out, DType::F32, 0, P, F, {F});
  store.src0 = add.dst;
  store.numWaits = 1;
  store.waits[0] = {4, 1};
  b.raw(store);
  return b.p;
}

} // namespace

TEST_CASE("a semaphore wait orders a DMA producer before a Vector consumer",
          "[sim][sched]") {
  std::vector<float> x(32), y(32);
  std::iota(x.begin(), x.end(), 1.0f);
  REQUIRE(run(producerConsumer(true), {x.data()}, {y.data()}) == "");
  for (int i = 0; i < 32; ++i)
    REQUIRE(y[i] == x[i] + 1.0f);
  // Without the wait, Vector (engine 1) runs first and reads the still-zero
  // SBUF of a fresh simulator: the result is wrong, which is the point.
  REQUIRE(run(producerConsumer(false), {x.data()}, {y.data()}) == "");
  for (int i = 0; i < 32; ++i)
    REQUIRE(y[i] == 1.0f);
}

TEST_CASE("a chain across every engine", "[sim][sched]") {
  // DMA loads A [K=2, M=2] and B [K=2, N=4]; Tensor multiplies into PSUM;
  // Vector adds 1 (PSUM -> SBUF); Scalar applies relu; GpSimd multiplies by
  // 2; DMA stores. Each step waits for the previous one's semaphore, and the
  // streams are given in reverse order of execution.
  Builder b;
  uint32_t ia = b.input(DType::F32, 16), ib = b.input(DType::F32, 32);
  uint32_t out = b.output(DType::F32, 32);
  auto wait = [](Instruction &i, uint8_t sem, uint32_t v) {
    i.waits[i.numWaits++] = {sem, v};
  };
  AccessPattern sa = sbuf(DType::F32, 0, 2, 0, {2}),
                sb = sbuf(DType::F32, 0, 2, 64, {4}),
                pd = psum(DType::F32, 0, 2, 0, {4}),
                t1 = sbuf(DType::F32, 0, 2, 128, {4}),
                t2 = sbuf(DType::F32, 0, 2, 192, {4});
  Instruction la = make(Opcode::DmaCopy, Engine::Dma);
  la.dst = sa;
  la.src0 = hbm(ia, DType::F32, 0, 2, 2, {2});
  la.signal = 0;
  Instruction lb = make(Opcode::DmaCopy, Engine::Dma);
  lb.dst = sb;
  lb.src0 = hbm(ib, DType::F32, 0, 2, 4, {4});
  lb.signal = 0;
  Instruction mm = make(Opcode::Matmul, Engine::Tensor);
  mm.dst = pd;
  mm.src0 = sa;
  mm.src1 = sb;
  wait(mm, 0, 2);
  mm.signal = 1;
  Instruction add = make(Opcode::TensorScalar, Engine::Vector);
  add.op0 = uint8_t(AluOp::Add);
  add.imm0 = 1.0f;
  add.src0 = pd;
  add.dst = t1;
  wait(add, 1, 1);
  add.signal = 2;
  Instruction relu = make(Opcode::Activation, Engine::Scalar);
  relu.op0 = uint8_t(ActFunc::Relu);
  relu.imm0 = 1.0f;
  relu.src0 = t1;
  relu.dst = t1;
  wait(relu, 2, 1);
  relu.signal = 3;
  Instruction dbl = make(Opcode::TensorScalar, Engine::GpSimd);
  dbl.op0 = uint8_t(AluOp::Multiply);
  dbl.imm0 = 2.0f;
  dbl.src0 = t1;
  dbl.dst = t2;
  wait(dbl, 3, 1);
  dbl.signal = 4;
  Instruction st = make(Opcode::DmaCopy, Engine::Dma);
  st.dst = hbm(out, DType::F32, 0, 2, 4, {4});
  st.src0 = t2;
  wait(st, 4, 1);
  for (Instruction *i : {&mm, &add, &relu, &dbl, &la, &lb, &st})
    b.raw(*i);
  std::vector<float> A = {1, -1, 2, 0.5f}, B = {1, 2, 3, -4, 0, 1, -2, 1};
  std::vector<float> y(8);
  RunStats stats;
  REQUIRE(run(b.p, {A.data(), B.data()}, {y.data()}, &stats) == "");
  for (int m = 0; m < 2; ++m)
    for (int n = 0; n < 4; ++n) {
      float v = A[0 * 2 + m] * B[0 * 4 + n] + A[1 * 2 + m] * B[1 * 4 + n];
      v = std::max(v + 1.0f, 0.0f) * 2.0f;
      REQUIRE(y[m * 4 + n] == v);
    }
  CHECK(stats.instructions ==
        std::array<uint64_t, kNumEngines>{1, 1, 1, 1, 3});
}

TEST_CASE("a deadlock is reported, never a hang", "[sim][sched]") {
  Builder b;
  Instruction v = make(Opcode::Memset, Engine::Vector);
  v.dst = sbuf(DType::F32, 0, 1, 0, {4});
  v.numWaits = 1;
  v.waits[0] = {1, 1}; // nobody signals semaphore 1
  v.signal = 2;
  b.raw(v);
  Instruction d = make(Opcode::DmaCopy, Engine::Dma);
  d.dst = sbuf(DType::F32, 1, 1, 0, {4});
  d.src0 = sbuf(DType::F32, 0, 1, 0, {4});
  d.numWaits = 2;
  d.waits[0] = {5, 0}; // met
  d.waits[1] = {2, 1};
  b.raw(d);
  Instruction ok = make(Opcode::Memset, Engine::GpSimd);
  ok.dst = sbuf(DType::F32, 2, 1, 0, {4});
  ok.signal = 7;
  b.raw(ok);
  auto start = std::chrono::steady_clock::now();
  std::string err = run(b.p, {}, {});
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(5));
  INFO(err);
  CHECK(contains(err, "deadlock in program 'test'"));
  CHECK(contains(err, "vector stream instruction 0 (memset) waits for "
                      "semaphore 1 >= 1 (now 0)"));
  CHECK(contains(err, "dma stream instruction 0 (dma_copy) waits for "
                      "semaphore 2 >= 1 (now 0)"));
  CHECK_FALSE(contains(err, "semaphore 5"));
  CHECK(contains(err, "semaphores: s7=1"));
}

TEST_CASE("a simulator is reusable across runs and programs", "[sim][sched]") {
  Simulator sim(*lookupMachineModel("trn2"));
  std::vector<float> x(32), y(32);
  std::iota(x.begin(), x.end(), 0.0f);
  Program p = producerConsumer(true);
  for (int rep = 0; rep < 3; ++rep) {
    REQUIRE(errorText(sim.run(p, {x.data()}, {y.data()})) == "");
    for (int i = 0; i < 32; ++i)
      REQUIRE(y[i] == x[i] + 1.0f);
    x[rep] += 10.0f;
  }
}

TEST_CASE("DMA queues complete out of order; a consumer waits on its "
          "producer's queue semaphore", "[sim][sched][timing]") {
  // A 1 MiB load on queue 0 is issued first, a 64-byte load on queue 1
  // second: the small one ends first. Vector consumes the small load,
  // GpSimd the big one, each waiting on its producer's queue semaphore; each
  // starts exactly when its own producer ends.
  Builder b;
  const uint16_t P = 128;
  const uint32_t F = 2048;
  uint32_t big = b.input(DType::F32, uint64_t(P) * F * 4);
  uint32_t small = b.input(DType::F32, 64);
  uint32_t out = b.output(DType::F32, 128);
  const uint8_t q0 = completionSemaphore(Engine::Dma, 0),
                q1 = completionSemaphore(Engine::Dma, 1),
                q2 = completionSemaphore(Engine::Dma, 2);
  Instruction lb = make(Opcode::DmaCopy, Engine::Dma);
  lb.dst = sbuf(DType::F32, 0, P, 0, {F});
  lb.src0 = hbm(big, DType::F32, 0, P, F, {F});
  lb.signal = q0;
  Instruction ls = make(Opcode::DmaCopy, Engine::Dma);
  ls.dmaQueue = 1;
  ls.dst = sbuf(DType::F32, 0, 1, F * 4, {16});
  ls.src0 = hbm(small, DType::F32, 0, 1, 16, {16});
  ls.signal = q1;
  auto addOn = [](Engine e, AccessPattern src, uint64_t off, float k,
                  uint8_t sem) {
    Instruction i = make(Opcode::TensorScalar, e);
    i.op0 = uint8_t(AluOp::Add);
    i.imm0 = k;
    i.src0 = src;
    i.dst = sbuf(DType::F32, 0, 1, off, {16});
    i.numWaits = 1;
    i.waits[0] = {sem, 1};
    i.signal = uint8_t(e);
    return i;
  };
  Instruction v = addOn(Engine::Vector, ls.dst, F * 4 + 64, 1.0f, q1);
  Instruction g = addOn(Engine::GpSimd, sbuf(DType::F32, 0, 1, 0, {16}),
                        F * 4 + 128, 2.0f, q0);
  Instruction st = make(Opcode::DmaCopy, Engine::Dma);
  st.dmaQueue = 2;
  st.dst = hbm(out, DType::F32, 0, 1, 32, {32});
  st.src0 = sbuf(DType::F32, 0, 1, F * 4 + 64, {32});
  st.numWaits = 2;
  st.waits[0] = {uint8_t(Engine::Vector), 1};
  st.waits[1] = {uint8_t(Engine::GpSimd), 1};
  st.signal = q2;
  for (Instruction *i : {&lb, &ls, &v, &g, &st})
    b.raw(*i);

  std::vector<float> xb(size_t(P) * F), xs(16), y(32);
  std::iota(xb.begin(), xb.end(), 0.0f);
  std::iota(xs.begin(), xs.end(), 100.0f);
  Profile prof = runTimed(b.p, {xb.data(), xs.data()}, {y.data()});
  for (int i = 0; i < 16; ++i) {
    REQUIRE(y[i] == xs[i] + 1.0f);
    REQUIRE(y[16 + i] == xb[i] + 2.0f);
  }
  auto find = [&](Engine e, uint32_t index) {
    for (const InstructionRecord &r : prof.trace)
      if (r.engine == e && r.index == index)
        return r;
    FAIL("no trace record");
    return InstructionRecord();
  };
  InstructionRecord bigLoad = find(Engine::Dma, 0), smallLoad = find(Engine::Dma, 1);
  InstructionRecord vr = find(Engine::Vector, 0), gr = find(Engine::GpSimd, 0);
  CHECK(smallLoad.endNs < bigLoad.endNs); // out of order across queues
  CHECK(vr.startNs == smallLoad.endNs);   // no later than needed
  CHECK(vr.startNs < bigLoad.endNs);
  CHECK(gr.startNs == bigLoad.endNs);     // not before its producer ends
}
