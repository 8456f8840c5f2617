//===- LoaderTest.cpp - The loader refuses bad artifacts, never overreads -===//
//
// On the fuzzer's seed programs (runtime/fuzz/SeedPrograms.h): every
// truncation, every bit of every byte flipped, then the same flips with the
// section checksum recomputed (so the parser and verifier, not the checksum,
// must catch them; what they accept must run safely), and hand-crafted
// artifacts that break one structural or verifier rule each, with valid
// checksums. Each refusal must be a clear "invalid trnc artifact" or
// verifier message. Run under ASan/UBSan to prove no out-of-bounds access.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"

#include "fuzz/SeedPrograms.h"
#include "sim/RaceChecker.h"

#include <functional>

using namespace trnc;
using namespace trnc::test;

namespace {

constexpr size_t kTableStart = 24, kEntryBytes = 32, kNumSections = 10;
/// Table positions of the sections (file order: metadata, regions, the five
/// streams, constants, sources, allocations).
constexpr size_t kMetadata = 0, kRegions = 1, kVectorStream = 3, kSources = 8,
                 kAllocations = 9;

uint64_t le64(const std::vector<uint8_t> &b, size_t at) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i)
    v |= uint64_t(b[at + i]) << (8 * i);
  return v;
}

void put(std::vector<uint8_t> &b, size_t at, uint64_t v, int n) {
  for (int i = 0; i < n; ++i)
    b[at + i] = uint8_t(v >> (8 * i));
}

struct Section {
  size_t offset, size;
};

Section section(const std::vector<uint8_t> &b, size_t entry) {
  size_t at = kTableStart + entry * kEntryBytes;
  return {size_t(le64(b, at + 8)), size_t(le64(b, at + 16))};
}

/// Which section holds byte `at`, or kNumSections for header and table.
size_t sectionOfByte(const std::vector<uint8_t> &b, size_t at) {
  for (size_t i = 0; i < kNumSections; ++i) {
    Section s = section(b, i);
    if (at >= s.offset && at < s.offset + s.size)
      return i;
  }
  return kNumSections;
}

/// Run an accepted program with zeroed buffers of its regions' sizes.
std::string runAccepted(const Program &p) {
  std::vector<std::vector<uint8_t>> in(p.numInputs()), out(p.numOutputs());
  for (const Region &r : p.regions) {
    if (r.bytes > (64u << 20))
      return ""; // a mutated size: valid, but too big to allocate in a test
    if (r.kind == Region::Kind::Input)
      in[r.index].assign(r.bytes + 1, 0);
    if (r.kind == Region::Kind::Output)
      out[r.index].assign(r.bytes + 1, 0);
  }
  std::vector<void *> ip, op;
  for (auto &v : in)
    ip.push_back(v.data());
  for (auto &v : out)
    op.push_back(v.data());
  // One simulator for every run, as a real caller would (and fast).
  static Simulator sim(*lookupMachineModel("trn2"));
  if (p.target != "trn2")
    return run(p, ip, op);
  return errorText(sim.run(p, ip, op));
}

std::string load(const std::vector<uint8_t> &bytes) {
  auto p = readArtifact(bytes);
  return errorText(p);
}

} // namespace

TEST_CASE("seed programs are valid, race-free and small", "[loader]") {
  for (const Program &p : fuzz::seedPrograms()) {
    INFO(p.name);
    std::vector<uint8_t> bytes = writeArtifact(p);
    CHECK(bytes.size() < 8192);
    auto back = readArtifact(bytes);
    REQUIRE(errorText(back) == "");
    std::vector<std::vector<uint8_t>> in(p.numInputs()), out(p.numOutputs());
    for (const Region &r : p.regions)
      if (r.kind == Region::Kind::Input || r.kind == Region::Kind::Output)
        (r.kind == Region::Kind::Input ? in : out)[r.index].assign(r.bytes, 0);
    std::vector<void *> ip, op;
    for (auto &v : in)
      ip.push_back(v.data());
    for (auto &v : out)
      op.push_back(v.data());
    Simulator sim(*lookupMachineModel(p.target));
    RaceChecker checker;
    RunOptions options;
    options.timed = false;
    options.observer = &checker;
    CHECK(errorText(sim.run(*back, ip, op, options, nullptr)) == "");
  }
}

TEST_CASE("every truncation of every seed is refused", "[loader]") {
  for (const Program &p : fuzz::seedPrograms()) {
    std::vector<uint8_t> bytes = writeArtifact(p);
    for (size_t n = 0; n < bytes.size(); ++n) {
      std::vector<uint8_t> prefix(bytes.begin(), bytes.begin() + n);
      INFO(p.name << " prefix " << n);
      REQUIRE(contains(load(prefix), "invalid trnc artifact: "));
    }
  }
}

TEST_CASE("every bit flip is refused; re-checksummed, it is refused or runs",
          "[loader]") {
  for (const Program &p : fuzz::seedPrograms()) {
    const std::vector<uint8_t> bytes = writeArtifact(p);
    size_t accepted = 0;
    for (size_t i = 0; i < bytes.size(); ++i) {
      for (int bit = 0; bit < 8; ++bit) {
        std::vector<uint8_t> bad = bytes;
        bad[i] ^= uint8_t(1 << bit);
        INFO(p.name << " byte " << i << " bit " << bit);
        std::string err = load(bad);
        REQUIRE(!err.empty());
        // Header, table and checksum fields: nothing to re-checksum.
        if (sectionOfByte(bad, i) == kNumSections)
          continue;
        fuzz::fixChecksums(bad);
        auto q = readArtifact(bad);
        if (!q) {
          std::string msg = llvm::toString(q.takeError());
          REQUIRE(!msg.empty());
          continue;
        }
        ++accepted; // e.g. an immediate, a name, a stride that stays in bounds
        std::string ran = runAccepted(*q);
        INFO(ran);
        if (!ran.empty())
          REQUIRE(contains(ran, "deadlock"));
      }
    }
    // Many flips land in immediates, names or strides and stay valid; the
    // rest must be refused, not crash.
    CHECK(accepted > 0);
    CHECK(accepted < bytes.size() * 8);
  }
}

TEST_CASE("hand-crafted structural damage with valid checksums", "[loader]") {
  const std::vector<uint8_t> good = writeArtifact(fuzz::seedPrograms()[0]);
  struct Case {
    const char *what;
    std::function<void(std::vector<uint8_t> &)> damage;
    const char *expect;
  };
  auto at = [&](size_t entry) { return section(good, entry).offset; };
  const Case cases[] = {
      {"target string longer than its section",
       [&](auto &b) { put(b, at(kMetadata), 1000000, 4); },
       "metadata section: target length 1000000 exceeds the"},
      {"huge region count",
       [&](auto &b) { put(b, at(kRegions), 0x7fffffff, 4); },
       "regions section: region count 2147483647 does not fit"},
      {"region reserved bytes",
       [&](auto &b) { put(b, at(kRegions) + 4 + 2, 1, 2); },
       "region 0 reserved bytes not zero"},
      {"input region naming constant bytes",
       [&](auto &b) {
         // Region 0: 16 fixed bytes, rank + 2 dims, count + 2 strides,
         // constant offset, then constant size.
         put(b, at(kRegions) + 4 + 16 + 4 + 16 + 4 + 16 + 8, 4, 8);
       },
       "region 0 is not constant but names constant bytes"},
      {"constant bytes outside the constants section",
       [&](auto &b) {
         // Region 1 (the constant, rank 0) follows region 0's 72 bytes;
         // its constant offset follows 16 fixed bytes, rank and count.
         put(b, at(kRegions) + 4 + 72 + 16 + 4 + 4, 1u << 20, 8);
       },
       "constant bytes 1048576+32 exceed the"},
      {"stream count disagreeing with its size",
       [&](auto &b) { put(b, at(kVectorStream), 5, 4); },
       "vector stream section: holds 320 bytes of instructions, expected 5 x 320"},
      {"stream header reserved bytes",
       [&](auto &b) { put(b, at(kVectorStream) + 4, 1, 4); },
       "vector stream section: reserved bytes not zero"},
      {"reserved byte inside an instruction word",
       [&](auto &b) { b[at(kVectorStream) + 8 + 319] = 1; },
       "vector stream instruction 0: reserved byte 319 is not zero"},
      {"huge source count",
       [&](auto &b) { put(b, at(kSources), 0xffffffff, 4); },
       "sources section: source count 4294967295 does not fit"},
      {"source string past the end",
       [&](auto &b) { put(b, at(kSources) + 4, 0xfffffff0, 4); },
       "op length 4294967280 exceeds the"},
      // The seed's table: x [0, 64) live 0..2, c [64, 68) live 1..3, ...
      // (48-byte entries after a u32 count and a u32 0).
      {"huge allocation count",
       [&](auto &b) { put(b, at(kAllocations), 0xffffffff, 4); },
       "allocations section: allocation count 4294967295 does not fit"},
      {"allocations reserved word",
       [&](auto &b) { put(b, at(kAllocations) + 4, 1, 4); },
       "allocations section: reserved bytes not zero"},
      {"unknown memory space",
       [&](auto &b) { b[at(kAllocations) + 8] = 7; },
       "allocation 0 has memory space 7 (0 SBUF, 1 PSUM)"},
  };
  for (const Case &c : cases) {
    std::vector<uint8_t> bad = good;
    c.damage(bad);
    fuzz::fixChecksums(bad);
    INFO(c.what);
    std::string err = load(bad);
    CHECK(contains(err, "invalid trnc artifact: "));
    CHECK(contains(err, c.expect));
  }
  // Well-formed tables that break a rule: the verifier, behind the reader,
  // names the program and the rule.
  const Case verified[] = {
      {"two live tiles sharing bytes",
       [&](auto &b) { put(b, at(kAllocations) + 8 + 48 + 8, 32, 8); },
       "program 'elementwise': allocation 1 (SBUF, bytes [32, 36), live 1..3) overlaps "
       "allocation 0 (bytes [0, 64), live 0..2) while both are live"},
      {"live range past the program",
       [&](auto &b) { put(b, at(kAllocations) + 8 + 32, 99, 8); },
       "allocation 0 (SBUF): live range 0..99 outside the program's 5 instructions"},
  };
  for (const Case &c : verified) {
    std::vector<uint8_t> bad = good;
    c.damage(bad);
    fuzz::fixChecksums(bad);
    INFO(c.what);
    CHECK(contains(load(bad), c.expect));
  }
}

TEST_CASE("every verifier rule refuses a written artifact", "[loader]") {
  // Bad programs serialised by the writer (valid structure and checksums):
  // the loader's verifier must name the rule.
  using Mutate = std::function<void(Program &)>;
  auto vec = [](Program &p) -> Instruction & {
    return p.streams[size_t(Engine::Vector)][0]; // the tensor_scalar
  };
  auto dma = [](Program &p) -> Instruction & {
    return p.streams[size_t(Engine::Dma)][0]; // HBM input -> SBUF
  };
  const std::pair<Mutate, const char *> cases[] = {
      {[&](Program &p) { vec(p).opcode = Opcode(200); }, "invalid opcode 200"},
      {[&](Program &p) { vec(p).engine = Engine::Scalar; },
       "instruction is for engine scalar but sits in the vector stream"},
      {[&](Program &p) { vec(p).engine = Engine(9); },
       "instruction is for engine 9"},
      {[&](Program &p) { vec(p).opcode = Opcode::Matmul; },
       "matmul cannot run on the vector engine"},
      {[&](Program &p) { vec(p).flags = kFlagAccumulate; },
       "flags 0x1 not valid for tensor_scalar"},
      {[&](Program &p) { vec(p).numWaits = 7; }, "7 semaphore waits, at most 4"},
      {[&](Program &p) { vec(p).waits[0].semaphore = 40; },
       "wait 0 names semaphore 40"},
      {[&](Program &p) { vec(p).signal = 32; }, "signals semaphore 32"},
      {[&](Program &p) { vec(p).sourceIndex = 5; }, "source index 5"},
      {[&](Program &p) { vec(p).op0 = 99; }, "invalid alu op0 99"},
      {[&](Program &p) { vec(p).op1 = 40; }, "invalid alu op1 40"},
      {[&](Program &p) { p.streams[size_t(Engine::Scalar)][0].op0 = 40; },
       "invalid activation function 40"},
      {[&](Program &p) { dma(p).dmaQueue = 16; }, "DMA queue 16, at most 15"},
      {[&](Program &p) { vec(p).dst.mem = MemKind(6); },
       "dst has invalid memory kind 6"},
      {[&](Program &p) { vec(p).src0.dtype = DType(9); }, "src0 has invalid dtype 9"},
      {[&](Program &p) { vec(p).src0.numDims = 5; }, "src0 has 5 free dims"},
      {[&](Program &p) { vec(p).src0.partitionCount = 0; }, "partition count of 0"},
      {[&](Program &p) { vec(p).src0.count[0] = 0; }, "free dim 0 has count 0"},
      // Found by the fuzzer: a count-1 dim's stride reaches nothing, but
      // stride * element bytes overflowed in the simulator (UBSan).
      {[&](Program &p) {
         Instruction &v = vec(p);
         v.src0.numDims = 2;
         v.src0.count[1] = 1;
         v.src0.stride[1] = int64_t(1) << 62;
       },
       "src0 free dim 1 stride 4611686018427387904 is beyond +-2^48 elements"},
      {[&](Program &p) {
         Instruction &d = p.streams[size_t(Engine::Dma)][1]; // one-row constant
         d.src0.partitionCount = 1;
         d.src0.count[0] = 8;
         d.src0.partitionStride = -(int64_t(1) << 60);
       },
       "src0 row stride -1152921504606846976 is beyond +-2^48 elements"},
      {[&](Program &p) { vec(p).dst.offset = 229376 - 8; },
       "dst writes SBUF bytes 229368..229432"},
      {[&](Program &p) { vec(p).dst.partitionStart = 125; },
       "dst writes SBUF partitions 125..133, past 128"},
      {[&](Program &p) { vec(p).src1 = vec(p).src0; },
       "operand0 src1 must be a per-partition [8, 1] tile, found [8, 16]"},
      {[&](Program &p) { vec(p).src0 = AccessPattern(); },
       "tensor_scalar requires src0"},
      {[&](Program &p) { vec(p).src0.count[0] = 8; },
       "dst has 16 free elements per partition but src0 has 8"},
      {[&](Program &p) { vec(p).src0 = dma(p).src0; }, "which only dma_copy and dma_indirect may access"},
      {[&](Program &p) { dma(p).src0.region = 9; },
       "src0 reads HBM region 9, but the program has 3 regions"},
      {[&](Program &p) { dma(p).src0.partitionStride = 17; },
       "src0 reads HBM region 0 bytes 0..540, outside its 512 bytes"},
      {[&](Program &p) {
         Instruction &c = p.streams[size_t(Engine::Dma)][1]; // constant -> SBUF
         c.dst = c.src0;
       },
       "dst writes constant region 1 (constants are read-only)"},
      {[&](Program &p) { dma(p).dst.count[0] = 15; },
       "dst covers 120 elements but src0 covers 128"},
      {[&](Program &p) { p.regions[0].kind = Region::Kind(7); },
       "region 0: invalid kind 7"},
      {[&](Program &p) { p.regions[0].dtype = DType(8); },
       "region 0 (input): invalid dtype 8"},
      {[&](Program &p) { p.regions[2].bytes = uint64_t(1) << 40; },
       "bytes exceed the"},
      {[&](Program &p) { p.regions[2].index = 3; },
       "output index 3, but there are 1 outputs"},
      {[&](Program &p) { p.regions[1].data.pop_back(); },
       "region 1 (constant): data has 31 bytes, expected 32"},
      {[&](Program &p) { p.regions[2].strides = {1}; },
       "1 strides for a rank-2 shape"},
      {[&](Program &p) { p.target = "trn9"; }, "unknown target 'trn9'"},
  };
  for (const auto &[mutate, expect] : cases) {
    Program p = fuzz::seedPrograms()[0];
    mutate(p);
    INFO(expect);
    std::string err = load(writeArtifact(p));
    CHECK(contains(err, expect));
  }
}

TEST_CASE("a matmul seed with bad operands is refused", "[loader]") {
  Program p = fuzz::seedPrograms()[1];
  Instruction &mm = p.streams[size_t(Engine::Tensor)][0];
  mm.dst.mem = MemKind::SBUF;
  CHECK(contains(load(writeArtifact(p)), "matmul dst must be in PSUM"));
  p = fuzz::seedPrograms()[1];
  p.streams[size_t(Engine::Tensor)][0].src1.partitionCount = 3;
  CHECK(contains(load(writeArtifact(p)),
                 "contraction mismatch: src0 has K=4 partitions, src1 has K=3"));
}
