//===- ArtifactTest.cpp - The on-disk artifact: round trip and corruption --===//
//
// Write/read round trips and determinism; every prefix of a small artifact,
// every single-bit flip, a wrong magic and wrong versions (an older format
// too) and hostile allocation tables are refused with precise messages,
// without reading out of bounds.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"

using namespace trnc;
using namespace trnc::test;

namespace {

Program sampleProgram() {
  Builder b;
  b.p.name = "sample";
  b.p.compilerVersion = "trnc 0.1.0 test";
  b.p.metadataJson = R"({"options":{"opt":2}})";
  uint32_t in = b.input(DType::BF16, 256);
  b.p.regions[in].shape = {8, 16};
  b.p.regions[in].strides = {16, 1};
  uint32_t cst = b.region(Region::Kind::Constant, DType::F32, 12);
  b.p.regions[cst].data = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
  uint32_t out = b.output(DType::F32, 512);
  b.p.regions[out].shape = {8, 16};
  b.region(Region::Kind::Scratch, DType::F32, 64);
  b.p.sources.push_back({"aten.add.Tensor", "add_1", "model.py", 12});
  b.dma(sbuf(DType::BF16, 0, 8, 0, {16}), hbm(in, DType::BF16, 0, 8, 16, {16}))
      .sourceIndex = 0;
  Instruction add = make(Opcode::TensorScalar, Engine::Vector);
  add.op0 = uint8_t(AluOp::Add);
  add.imm0 = 0.5f;
  add.src0 = sbuf(DType::BF16, 0, 8, 0, {16});
  add.dst = sbuf(DType::F32, 0, 8, 64, {16});
  b.add(add).sourceIndex = 0;
  b.dma(hbm(out, DType::F32, 0, 8, 16, {16}), sbuf(DType::F32, 0, 8, 64, {16}));
  // The two tiles: the loaded bf16 one (dma 0 .. add) and the f32 result
  // (add .. store dma 1); program order dma, add, dma.
  b.p.allocations.push_back({Allocation::Space::Sbuf, 8, 0, 32, 0, 1,
                             {Engine::Dma, 0}, {Engine::Vector, 0}});
  b.p.allocations.push_back({Allocation::Space::Sbuf, 8, 64, 64, 1, 2,
                             {Engine::Vector, 0}, {Engine::Dma, 1}});
  return b.p;
}

} // namespace

TEST_CASE("artifacts round-trip and are deterministic", "[artifact]") {
  Program p = sampleProgram();
  std::vector<uint8_t> bytes = writeArtifact(p);
  CHECK(std::memcmp(bytes.data(), "TRNCART\0", 8) == 0);
  CHECK(writeArtifact(p) == bytes);
  auto back = readArtifact(bytes);
  REQUIRE(errorText(back) == "");
  CHECK(back->target == p.target);
  CHECK(back->name == "sample");
  CHECK(back->compilerVersion == p.compilerVersion);
  CHECK(back->metadataJson == p.metadataJson);
  REQUIRE(back->regions.size() == p.regions.size());
  for (size_t i = 0; i < p.regions.size(); ++i) {
    const Region &a = p.regions[i], &r = back->regions[i];
    CHECK(a.kind == r.kind);
    CHECK(a.index == r.index);
    CHECK(a.dtype == r.dtype);
    CHECK(a.shape == r.shape);
    CHECK(a.strides == r.strides);
    CHECK(a.bytes == r.bytes);
    CHECK(a.data == r.data);
  }
  REQUIRE(back->allocations.size() == 2);
  for (size_t i = 0; i < 2; ++i) {
    const Allocation &a = p.allocations[i], &r = back->allocations[i];
    CHECK(a.space == r.space);
    CHECK(a.partitions == r.partitions);
    CHECK(a.address == r.address);
    CHECK(a.bytes == r.bytes);
    CHECK(a.first == r.first);
    CHECK(a.last == r.last);
    CHECK(a.firstAt.engine == r.firstAt.engine);
    CHECK(a.firstAt.index == r.firstAt.index);
    CHECK(a.lastAt.engine == r.lastAt.engine);
    CHECK(a.lastAt.index == r.lastAt.index);
  }
  REQUIRE(back->sources.size() == 1);
  CHECK(back->sources[0].node == "add_1");
  CHECK(back->sources[0].line == 12);
  for (unsigned e = 0; e < kNumEngines; ++e)
    REQUIRE(back->streams[e].size() == p.streams[e].size());
  CHECK(back->streams[size_t(Engine::Vector)][0].imm0 == 0.5f);
  CHECK(writeArtifact(*back) == bytes);
  CHECK(back->numInputs() == 1);
  CHECK(back->numOutputs() == 1);
  CHECK(back->inputRegion(0) == 0);
  CHECK(back->outputRegion(0) == 2);
  CHECK(back->outputRegion(1) == -1);

  // The loaded program runs.
  std::vector<uint16_t> x(128);
  for (int i = 0; i < 128; ++i)
    x[i] = sim::f32ToBf16(float(i) * 0.25f);
  std::vector<float> y(128);
  REQUIRE(run(*back, {x.data()}, {y.data()}) == "");
  for (int i = 0; i < 128; ++i)
    REQUIRE(y[i] == float(i) * 0.25f + 0.5f);
}

TEST_CASE("every truncation of an artifact is refused", "[artifact]") {
  std::vector<uint8_t> bytes = writeArtifact(sampleProgram());
  for (size_t n = 0; n < bytes.size(); ++n) {
    // A fresh, exactly-sized copy so a sanitizer would catch any overread.
    std::vector<uint8_t> prefix(bytes.begin(), bytes.begin() + n);
    auto r = readArtifact(prefix);
    INFO("prefix length " << n);
    REQUIRE_FALSE(bool(r));
    std::string err = llvm::toString(r.takeError());
    REQUIRE(contains(err, "invalid trnc artifact"));
  }
  std::vector<uint8_t> prefix(bytes.begin(), bytes.begin() + 10);
  auto shortRead = readArtifact(prefix);
  CHECK(contains(errorText(shortRead),
                 "shorter than the 24-byte header"));
}

TEST_CASE("every single-bit flip is refused", "[artifact]") {
  std::vector<uint8_t> bytes = writeArtifact(sampleProgram());
  size_t checksumErrors = 0;
  for (size_t i = 0; i < bytes.size(); ++i) {
    for (int bit : {0, 5}) {
      std::vector<uint8_t> bad = bytes;
      bad[i] ^= uint8_t(1 << bit);
      auto r = readArtifact(bad);
      INFO("byte " << i << " bit " << bit);
      REQUIRE_FALSE(bool(r));
      std::string err = llvm::toString(r.takeError());
      checksumErrors += contains(err, "checksum mismatch");
    }
  }
  CHECK(checksumErrors > bytes.size()); // most flips land in section data
}

TEST_CASE("wrong magic and versions are named", "[artifact]") {
  std::vector<uint8_t> bytes = writeArtifact(sampleProgram());
  std::vector<uint8_t> bad = bytes;
  bad[0] = 'X';
  auto r1 = readArtifact(bad);
  CHECK(contains(errorText(r1), "bad magic"));
  bad = bytes;
  bad[8] = 99;
  auto r2 = readArtifact(bad);
  CHECK(contains(errorText(r2), "format version 99 found, this runtime reads "
                                "version 4 (written by a newer trnc)"));
  // Format 1 had no allocations section, format 2 no streams per physical
  // core, format 3 no packed scratch: an artifact of an older trnc is
  // refused by its version, before any section is read.
  for (uint8_t old : {1, 2, 3}) {
    bad = bytes;
    bad[8] = old;
    CHECK(contains(errorText(readArtifact(bad)),
                   "format version " + std::to_string(old) +
                       " found, this runtime reads version 4 (written by an "
                       "older trnc: recompile the graph)"));
  }
  bad = bytes;
  bad[12] = 7;
  auto r3 = readArtifact(bad);
  CHECK(contains(errorText(r3),
                 "ISA version 7 found, this runtime implements version 2 "
                 "(written by a newer trnc)"));
  // ISA 1 had no src2 (tensor_scalar's per-partition operand1) in the
  // instruction word.
  bad = bytes;
  bad[12] = 1;
  CHECK(contains(errorText(readArtifact(bad)),
                 "ISA version 1 found, this runtime implements version 2 "
                 "(written by an older trnc: recompile the graph)"));
}

TEST_CASE("the reader verifies the program", "[artifact]") {
  Program p = sampleProgram();
  p.streams[size_t(Engine::Vector)][0].src0.partitionCount = 200;
  auto r = readArtifact(writeArtifact(p));
  CHECK(contains(errorText(r),
                 "vector stream instruction 0 (tensor_scalar) [aten.add.Tensor "
                 "'add_1' at model.py:12]: src0 reads SBUF partitions 0..200, "
                 "past 128"));
}

TEST_CASE("a hostile allocation table is refused by the reader", "[artifact]") {
  // Fields the reader decodes itself (memory space, engines) are refused
  // there; the rest goes to verifyProgram (VerifyTest).
  Program p = sampleProgram();
  p.allocations[1].space = Allocation::Space(7);
  CHECK(contains(errorText(readArtifact(writeArtifact(p))),
                 "allocations section: allocation 1 has memory space 7 (0 SBUF, 1 PSUM)"));
  p = sampleProgram();
  p.allocations[0].lastAt.engine = Engine(9);
  CHECK(contains(errorText(readArtifact(writeArtifact(p))),
                 "allocation 0 names engine 9, engines are 0..4"));
  p = sampleProgram();
  p.allocations[0].bytes = 1 << 20; // larger than a partition
  CHECK(contains(errorText(readArtifact(writeArtifact(p))),
                 "allocation 0 (SBUF): bytes [0, 1048576) per partition, outside the "
                 "229376 bytes of each SBUF partition"));
}
