//===- CollectiveTest.cpp - Collective instructions in the runtime --------===//
//
// The verifier's rules for collectives, the simulator's call into the host's
// CollectiveHook (bytes in, bytes out, errors carried back), the ring cost
// model per link, and the profile's collective time and overlap.
//
//===----------------------------------------------------------------------===//
#include "TestUtil.h"

#include "sim/Collectives.h"

#include <cmath>

using namespace trnc;
using namespace trnc::test;

namespace {

bool near(double a, double b) {
  return std::fabs(a - b) <= 1e-9 * std::max(1.0, std::fabs(b));
}

Instruction collective(CollectiveKind kind, ReduceOp op, uint32_t in,
                       uint32_t inElems, uint32_t out, uint32_t outElems,
                       int32_t group = 2) {
  Instruction i = make(Opcode::Collective, Engine::Dma);
  i.op0 = uint8_t(kind);
  i.op1 = uint8_t(op);
  i.partitionCoef = group;
  i.freeCoef = 3;
  i.dmaQueue = kCollectiveQueue;
  i.src0 = hbm(in, DType::F32, 0, 1, inElems, {inElems});
  i.dst = hbm(out, DType::F32, 0, 1, outElems, {outElems});
  return i;
}

/// A host that "gathers" from a pretend peer whose input is ours + 100.
struct FakeGroup : CollectiveHook {
  std::vector<CollectiveCall> calls;
  bool failWith = false;
  llvm::Error run(const CollectiveCall &c) override {
    calls.push_back(c);
    if (failWith)
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "gloo: connection closed");
    auto *in = reinterpret_cast<const float *>(c.input);
    auto *out = reinterpret_cast<float *>(c.output);
    size_t n = c.inputBytes / 4;
    for (size_t i = 0; i < n; ++i) {
      out[i] = in[i];
      out[n + i] = in[i] + 100;
    }
    return llvm::Error::success();
  }
};

Program gatherProgram() {
  Builder b;
  uint32_t in = b.input(DType::F32, 4 * 4);
  uint32_t out = b.output(DType::F32, 8 * 4);
  b.add(collective(CollectiveKind::AllGather, ReduceOp::None, in, 4, out, 8));
  return b.p;
}

} // namespace

TEST_CASE("collective: the simulator hands the bytes to the host hook",
          "[collective]") {
  Program p = gatherProgram();
  REQUIRE(errorText(verifyProgram(p)).empty());
  std::vector<float> in = {1, 2, 3, 4}, out(8, -1);
  FakeGroup group;
  RunOptions options;
  options.collectives = &group;
  Simulator sim(*lookupMachineModel("trn2"));
  Profile profile;
  REQUIRE(errorText(sim.run(p, {in.data()}, {out.data()}, options, &profile))
              .empty());
  REQUIRE(group.calls.size() == 1);
  CHECK(group.calls[0].id == 3);
  CHECK(group.calls[0].kind == CollectiveKind::AllGather);
  CHECK(group.calls[0].groupSize == 2);
  CHECK(group.calls[0].inputBytes == 16);
  CHECK(group.calls[0].outputBytes == 32);
  CHECK(out == std::vector<float>{1, 2, 3, 4, 101, 102, 103, 104});
  CHECK(profile.collectives == 1);
  CHECK(profile.collectiveBytes == 32);
  CHECK(profile.collectiveNs > 0);
  // Nothing computes meanwhile: all of it is exposed.
  CHECK(near(profile.exposedCollectiveNs(), profile.collectiveNs));
}

TEST_CASE("collective: without a hook, or when the host fails, the run fails "
          "naming the collective",
          "[collective]") {
  Program p = gatherProgram();
  std::vector<float> in(4), out(8);
  Simulator sim(*lookupMachineModel("trn2"));
  std::string err = errorText(sim.run(p, {in.data()}, {out.data()}));
  CHECK(contains(err, "all_gather over 2 ranks"));
  CHECK(contains(err, "no process group"));
  FakeGroup group;
  group.failWith = true;
  RunOptions options;
  options.collectives = &group;
  err = errorText(sim.run(p, {in.data()}, {out.data()}, options, nullptr));
  CHECK(contains(err, "gloo: connection closed"));
  CHECK(contains(err, "collective all_gather"));
}

TEST_CASE("collective: the verifier checks kind, sizes, layout and queue",
          "[collective][verify]") {
  auto refuse = [](Instruction i, const std::string &why) {
    Builder b;
    uint32_t in = b.input(DType::F32, 64 * 4);
    uint32_t out = b.output(DType::F32, 64 * 4);
    i.src0.region = in;
    i.dst.region = out;
    b.add(i);
    std::string err = errorText(verifyProgram(b.p));
    INFO(err);
    CHECK(contains(err, why));
  };
  refuse(collective(CollectiveKind::AllGather, ReduceOp::None, 0, 16, 0, 16),
         "all_gather over 2 ranks: src0 has 16 elements, so dst must have 32");
  refuse(collective(CollectiveKind::ReduceScatter, ReduceOp::Sum, 0, 15, 0, 7),
         "src0 must divide evenly");
  refuse(collective(CollectiveKind::AllReduce, ReduceOp::None, 0, 8, 0, 8),
         "all_reduce needs a reduce op");
  refuse(collective(CollectiveKind::Broadcast, ReduceOp::Max, 0, 8, 0, 8),
         "broadcast takes no reduce op");
  Instruction strided =
      collective(CollectiveKind::AllReduce, ReduceOp::Sum, 0, 8, 0, 8);
  strided.src0 = hbm(0, DType::F32, 0, 1, 16, {8}, {2});
  refuse(strided, "src0 must be one contiguous HBM run");
  Instruction queue =
      collective(CollectiveKind::AllReduce, ReduceOp::Sum, 0, 8, 0, 8);
  queue.dmaQueue = 2;
  refuse(queue, "collectives run on queue 15");
  Instruction kind =
      collective(CollectiveKind::AllReduce, ReduceOp::Sum, 0, 8, 0, 8);
  kind.op0 = 9;
  refuse(kind, "invalid collective kind 9");
  Instruction both =
      collective(CollectiveKind::AllReduce, ReduceOp::Sum, 0, 8, 0, 8);
  both.flags = kFlagSpanInstance | kFlagSpanCluster;
  refuse(both, "spans both");
}

TEST_CASE("collective: ring cost per link (MachineModel constants)",
          "[collective][timing]") {
  MachineModel m = *lookupMachineModel("trn2");
  // 1 MiB all_reduce over 4 ranks: 2(n-1) = 6 steps of hop + (S/4)/bw.
  Builder b;
  uint32_t in = b.input(DType::F32, 1 << 20);
  uint32_t out = b.output(DType::F32, 1 << 20);
  Instruction i = collective(CollectiveKind::AllReduce, ReduceOp::Sum, in,
                             1 << 18, out, 1 << 18, 4);
  double S = 1 << 20;
  double chipBw = m.dmaEngines * m.dmaEngineGBps; // bytes/ns
  CHECK(near(sim::collectiveNs(m, i), 6 * (m.dmaFixedNs + S / 4 / chipBw)));
  i.flags = kFlagSpanInstance; // NeuronLink: 1.5 us, 1.28 TB/s / 4 links
  CHECK(near(sim::collectiveNs(m, i), 6 * (1500 + S / 4 / 320.0)));
  i.flags = kFlagSpanCluster; // EFA: 15 us, 3.2 Tbps / 16 chips = 25 GB/s
  CHECK(near(sim::collectiveNs(m, i), 6 * (15000 + S / 4 / 25.0)));
  // all_gather: (n-1) steps of the per-rank chunk (S = the output).
  i.op0 = uint8_t(CollectiveKind::AllGather);
  i.op1 = 0;
  i.src0.count[0] = 1 << 16;
  i.flags = 0;
  CHECK(near(sim::collectiveNs(m, i), 3 * (m.dmaFixedNs + S / 4 / chipBw)));
  // A group of one rank is a local copy of the larger side.
  i.partitionCoef = 1;
  CHECK(near(sim::collectiveNs(m, i), m.dmaFixedNs + S / chipBw));
}

TEST_CASE("collective: compute (or another transfer) during a collective "
          "counts as overlap",
          "[collective][timing]") {
  Builder b;
  uint32_t in = b.input(DType::F32, 1 << 20);
  uint32_t out = b.output(DType::F32, 1 << 20);
  // Unchained: the collective and a long vector op start together.
  b.raw(collective(CollectiveKind::AllReduce, ReduceOp::Sum, in, 1 << 18, out,
                   1 << 18));
  Instruction v = make(Opcode::Memset, Engine::Vector);
  v.dst = sbuf(DType::F32, 0, 128, 0, {4096});
  for (int k = 0; k < 8; ++k)
    b.raw(v);
  std::vector<float> x(1 << 18), y(1 << 18);
  struct Copy : CollectiveHook {
    llvm::Error run(const CollectiveCall &c) override {
      std::memcpy(c.output, c.input, c.outputBytes);
      return llvm::Error::success();
    }
  } copy;
  RunOptions options;
  options.collectives = &copy;
  Simulator sim(*lookupMachineModel("trn2"));
  Profile profile;
  REQUIRE(errorText(sim.run(b.p, {x.data()}, {y.data()}, options, &profile))
              .empty());
  double vectorNs = profile.engines[size_t(Engine::Vector)].busyNs;
  REQUIRE(vectorNs > 0);
  CHECK(near(profile.collectiveOverlapNs,
             std::min(vectorNs, profile.collectiveNs)));
  CHECK(near(profile.exposedCollectiveNs(),
             std::max(0.0, profile.collectiveNs - vectorNs)));
}

TEST_CASE("collective: a DMA transfer during a collective hides it too",
          "[collective][timing]") {
  Builder b;
  uint32_t in = b.input(DType::F32, 4096 * 4);
  uint32_t out = b.output(DType::F32, 4096 * 4);
  uint32_t other = b.input(DType::F32, 128 * 512 * 4);
  b.raw(collective(CollectiveKind::AllReduce, ReduceOp::Sum, in, 4096, out,
                   4096));
  Instruction load = make(Opcode::DmaCopy, Engine::Dma);
  load.dst = sbuf(DType::F32, 0, 128, 0, {512});
  load.src0 = hbm(other, DType::F32, 0, 128, 512, {512});
  b.raw(load);
  std::vector<float> x(4096), y(4096), z(128 * 512);
  struct Copy : CollectiveHook {
    llvm::Error run(const CollectiveCall &c) override {
      std::memcpy(c.output, c.input, c.outputBytes);
      return llvm::Error::success();
    }
  } copy;
  RunOptions options;
  options.collectives = &copy;
  options.recordTrace = true;
  Simulator sim(*lookupMachineModel("trn2"));
  Profile profile;
  REQUIRE(errorText(sim.run(b.p, {x.data(), z.data()}, {y.data()}, options,
                            &profile))
              .empty());
  REQUIRE(profile.trace.size() == 2);
  const InstructionRecord &c = profile.trace[0], &d = profile.trace[1];
  REQUIRE(c.opcode == Opcode::Collective);
  double both = std::max(0.0, std::min(c.endNs, d.endNs) -
                                  std::max(c.startNs, d.startNs));
  REQUIRE(both > 0);
  CHECK(near(profile.collectiveOverlapNs, both));
}
