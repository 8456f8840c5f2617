//===- FuzzTest.cpp - Seeded fuzzing of the reader, verifier and simulator -===//
//
// The verifier's promise is that a program it accepts runs without any
// out-of-bounds access. Two seeded fuzzers hold it to that (run the suite
// under ASan to make it bite): random single instructions near the edges of
// SBUF/PSUM/HBM, and artifacts whose section bytes are mutated with their
// checksums recomputed, so the structural parser is exercised too. Every
// program that is accepted is executed.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"

#include "llvm/Support/xxhash.h"

#include <map>
#include <memory>
#include <random>

using namespace trnc;
using namespace trnc::test;

namespace {

/// Run `p` with zeroed buffers of the sizes its regions declare, on one
/// simulator reused by every iteration (as a real caller would).
std::string runWithBuffers(const Program &p) {
  static std::map<std::string, std::unique_ptr<Simulator>> sims;
  auto &sim = sims[p.target];
  if (!sim)
    sim = std::make_unique<Simulator>(*lookupMachineModel(p.target));
  uint64_t total = 0;
  for (const Region &r : p.regions)
    total += r.bytes;
  if (total > (16u << 20)) // a mutated size: valid, but too big for a test
    return "";
  std::vector<std::vector<uint8_t>> in(p.numInputs()), out(p.numOutputs());
  std::vector<void *> ip, op;
  for (const Region &r : p.regions) {
    if (r.kind == Region::Kind::Input)
      in[r.index].assign(r.bytes + 1, 0);
    if (r.kind == Region::Kind::Output)
      out[r.index].assign(r.bytes + 1, 0);
  }
  for (auto &b : in)
    ip.push_back(b.data());
  for (auto &b : out)
    op.push_back(b.data());
  return errorText(sim->run(p, ip, op));
}

AccessPattern randomPattern(std::mt19937 &rng, const MachineModel &m,
                            bool allowHbm) {
  auto pick = [&](int n) { return int(rng() % unsigned(n)); };
  AccessPattern ap;
  ap.mem = MemKind(1 + pick(allowHbm ? 3 : 2));
  ap.dtype = DType(pick(kNumDTypes));
  ap.numDims = uint8_t(1 + pick(3));
  // Mostly plausible tiles, sometimes right at the edges.
  ap.partitionStart = uint16_t(pick(8) == 0 ? 120 + pick(8) : pick(4) * 32);
  ap.partitionCount = uint16_t(1 + (pick(4) == 0 ? pick(128) : pick(8)));
  ap.region = uint32_t(pick(3));
  uint64_t edge = ap.mem == MemKind::SBUF ? m.sbufPartitionBytes
                  : ap.mem == MemKind::PSUM ? m.psumPartitionBytes
                                            : 4096;
  ap.offset = pick(4) == 0 ? edge - uint64_t(pick(64)) : uint64_t(pick(64));
  ap.partitionStride = pick(9) - 4;
  for (unsigned i = 0; i < kMaxFreeDims; ++i) {
    ap.count[i] = uint32_t(1 + pick(4));
    ap.stride[i] = pick(9) - 4;
  }
  return ap;
}

} // namespace

TEST_CASE("fuzz: instructions the verifier accepts run safely", "[fuzz]") {
  std::mt19937 rng(12345);
  MachineModel m = *lookupMachineModel("trn2");
  int accepted = 0;
  for (int iter = 0; iter < 30000; ++iter) {
    Builder b;
    b.input(DType::F32, 4096);
    b.output(DType::F32, 4096);
    uint32_t c = b.region(Region::Kind::Constant, DType::F32, 4096);
    b.p.regions[c].data.assign(4096, 0x3f);
    Instruction inst;
    // One engine per implemented opcode (Nop..Memset); reserved opcodes
    // are refused by the verifier and have their own test.
    static const Engine engineFor[] = {Engine::Dma,    Engine::Dma,
                                       Engine::Tensor, Engine::Scalar,
                                       Engine::Vector, Engine::Scalar,
                                       Engine::Vector, Engine::GpSimd,
                                       Engine::GpSimd};
    constexpr unsigned kImplemented = sizeof(engineFor) / sizeof(engineFor[0]);
    inst.opcode = Opcode(1 + rng() % (kImplemented - 1));
    inst.engine = engineFor[size_t(inst.opcode)];
    inst.op0 = uint8_t(rng() % kNumActFuncs);
    inst.op1 = uint8_t(rng() % kNumAluOps);
    inst.flags = uint8_t(rng() % 8);
    inst.imm0 = 1.5f;
    inst.imm1 = -0.5f;
    bool hbm = inst.opcode == Opcode::DmaCopy || rng() % 8 == 0;
    inst.dst = randomPattern(rng, m, hbm);
    inst.src0 = randomPattern(rng, m, hbm);
    inst.src1 = randomPattern(rng, m, hbm);
    // Shape agreement is rare at random: make it likely.
    if (rng() % 2) {
      inst.src0.partitionCount = inst.src1.partitionCount =
          inst.dst.partitionCount;
      inst.src0.numDims = inst.src1.numDims = inst.dst.numDims;
      inst.src0.count = inst.src1.count = inst.dst.count;
    }
    if (inst.opcode == Opcode::Matmul && rng() % 2) {
      inst.dst.mem = MemKind::PSUM;
      inst.dst.dtype = DType::F32;
      inst.src0.mem = inst.src1.mem = MemKind::SBUF;
      inst.src1.partitionCount = inst.src0.partitionCount;
      inst.dst.partitionCount = uint16_t(inst.src0.freeElements());
      inst.dst.numDims = inst.src1.numDims;
      inst.dst.count = inst.src1.count;
    }
    if (rng() % 3 == 0)
      inst.src1 = AccessPattern();
    b.raw(inst);
    if (errorText(verifyProgram(b.p)) != "")
      continue;
    ++accepted;
    INFO("iteration " << iter);
    REQUIRE(runWithBuffers(b.p) == "");
  }
  CHECK(accepted > 300);
}

TEST_CASE("fuzz: mutated artifacts with valid checksums", "[fuzz][artifact]") {
  // A program touching every section, including a constant and sources.
  Builder b;
  uint32_t in = b.input(DType::F32, 256);
  uint32_t out = b.output(DType::F32, 256);
  uint32_t c = b.region(Region::Kind::Constant, DType::F32, 64);
  b.p.regions[c].data.assign(64, 1);
  b.p.sources.push_back({"aten.mul.Tensor", "mul", "m.py", 3});
  b.dma(sbuf(DType::F32, 0, 4, 0, {16}), hbm(in, DType::F32, 0, 4, 16, {16}))
      .sourceIndex = 0;
  b.dma(sbuf(DType::F32, 0, 4, 64, {4}), hbm(c, DType::F32, 0, 4, 4, {4}));
  Instruction mul = make(Opcode::TensorTensor, Engine::Vector);
  mul.op0 = uint8_t(AluOp::Multiply);
  mul.src0 = sbuf(DType::F32, 0, 4, 0, {16});
  mul.src1 = sbuf(DType::F32, 0, 4, 64, {4, 4}, {1, 0});
  mul.dst = sbuf(DType::F32, 0, 4, 128, {16});
  b.add(mul);
  b.dma(hbm(out, DType::F32, 0, 4, 16, {16}), mul.dst);
  const std::vector<uint8_t> good = writeArtifact(b.p);
  auto base = readArtifact(good);
  REQUIRE(errorText(base) == "");

  std::mt19937 rng(777);
  int accepted = 0;
  for (int iter = 0; iter < 20000; ++iter) {
    std::vector<uint8_t> bytes = good;
    // Pick a section from the table, mutate 1-4 of its bytes, fix its hash.
    size_t entry = 24 + 32 * (rng() % 9);
    uint64_t off = 0, size = 0;
    for (int i = 0; i < 8; ++i) {
      off |= uint64_t(bytes[entry + 8 + i]) << (8 * i);
      size |= uint64_t(bytes[entry + 16 + i]) << (8 * i);
    }
    if (size == 0)
      continue;
    for (int n = 1 + rng() % 4; n > 0; --n) {
      size_t at = off + rng() % size;
      bytes[at] = rng() % 3 ? uint8_t(rng()) : uint8_t(bytes[at] ^ (1 << (rng() % 8)));
    }
    uint64_t h = llvm::xxh3_64bits(llvm::ArrayRef<uint8_t>(bytes).slice(off, size));
    for (int i = 0; i < 8; ++i)
      bytes[entry + 24 + i] = uint8_t(h >> (8 * i));
    auto p = readArtifact(bytes);
    if (!p) {
      llvm::consumeError(p.takeError());
      continue;
    }
    ++accepted;
    INFO("iteration " << iter);
    std::string err = runWithBuffers(*p);
    // A mutation may create a deadlock; anything else must run.
    INFO(err);
    if (!err.empty())
      REQUIRE(contains(err, "deadlock"));
  }
  CHECK(accepted > 100);
}

TEST_CASE("verifier: reserved opcodes are refused, not run", "[fuzz]") {
  for (unsigned op = unsigned(Opcode::CopyPredicated); op < kNumOpcodes; ++op) {
    if (op == unsigned(Opcode::Iota) || op == unsigned(Opcode::AffineSelect))
      continue; // implemented: SimIotaTest.cpp
    if (op == unsigned(Opcode::TensorScan))
      continue; // implemented: SimScanTest.cpp
    if (op == unsigned(Opcode::Random))
      continue; // implemented: RandomTest.cpp
    if (op == unsigned(Opcode::CopyPredicated))
      continue; // implemented: SimElementwiseTest.cpp
    if (op == unsigned(Opcode::DmaIndirect))
      continue; // implemented: IndirectDmaTest.cpp
    if (op == unsigned(Opcode::Collective))
      continue; // implemented: CollectiveTest.cpp
    Builder b;
    b.input(DType::F32, 64);
    b.output(DType::F32, 64);
    Instruction inst;
    inst.opcode = Opcode(op);
    inst.engine = Engine::GpSimd;
    b.raw(inst);
    CHECK(errorText(verifyProgram(b.p)).find("reserved, not implemented") !=
          std::string::npos);
  }
}
