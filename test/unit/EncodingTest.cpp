//===- EncodingTest.cpp - The 320-byte instruction word ---------------------===//
//
// Randomised encode/decode round trips, the little-endian layout of a few
// fields, reserved bytes, and the names of every enum value.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"

#include <random>

using namespace trnc;
using namespace trnc::isa;
using namespace trnc::test;

namespace {

AccessPattern randomPattern(std::mt19937_64 &rng) {
  AccessPattern ap;
  ap.mem = MemKind(rng() % 4);
  ap.dtype = DType(rng() % kNumDTypes);
  ap.numDims = uint8_t(rng() % 5);
  ap.partitionStart = uint16_t(rng());
  ap.partitionCount = uint16_t(rng());
  ap.region = uint32_t(rng());
  ap.offset = rng();
  ap.partitionStride = int64_t(rng());
  for (unsigned i = 0; i < kMaxFreeDims; ++i) {
    ap.stride[i] = int64_t(rng());
    ap.count[i] = uint32_t(rng());
  }
  return ap;
}

float randomFloat(std::mt19937_64 &rng) {
  uint32_t bits = uint32_t(rng());
  float f;
  std::memcpy(&f, &bits, 4); // any bit pattern, NaNs included
  return f;
}

Instruction randomInstruction(std::mt19937_64 &rng) {
  Instruction i;
  i.opcode = Opcode(rng() % kNumOpcodes);
  i.engine = Engine(rng() % kNumEngines);
  i.flags = uint8_t(rng());
  i.op0 = uint8_t(rng());
  i.op1 = uint8_t(rng());
  i.numWaits = uint8_t(rng() % 5);
  i.signal = uint8_t(rng());
  i.dmaQueue = uint16_t(rng());
  i.sourceIndex = uint32_t(rng());
  i.imm0 = randomFloat(rng);
  i.imm1 = randomFloat(rng);
  i.partitionCoef = int32_t(rng());
  i.freeCoef = int32_t(rng());
  for (auto &w : i.waits)
    w = {uint8_t(rng()), uint32_t(rng())};
  i.dst = randomPattern(rng);
  i.src0 = randomPattern(rng);
  i.src1 = randomPattern(rng);
  // src2 is a per-partition [P, 1] operand: partitions and a 32-bit offset.
  if (rng() % 2) {
    i.src2.mem = MemKind(1 + rng() % 3);
    i.src2.dtype = DType(rng() % kNumDTypes);
    i.src2.partitionStart = uint16_t(rng());
    i.src2.partitionCount = uint16_t(rng());
    i.src2.offset = uint32_t(rng());
    i.src2.numDims = 1;
    i.src2.stride[0] = 1;
    i.src2.count[0] = 1;
  }
  return i;
}

bool samePattern(const AccessPattern &a, const AccessPattern &b) {
  return a.mem == b.mem && a.dtype == b.dtype && a.numDims == b.numDims &&
         a.partitionStart == b.partitionStart &&
         a.partitionCount == b.partitionCount && a.region == b.region &&
         a.offset == b.offset && a.partitionStride == b.partitionStride &&
         a.stride == b.stride && a.count == b.count;
}

bool sameInstruction(const Instruction &a, const Instruction &b) {
  bool waits = true;
  for (unsigned w = 0; w < kMaxWaits; ++w)
    waits &= a.waits[w].semaphore == b.waits[w].semaphore &&
             a.waits[w].value == b.waits[w].value;
  return a.opcode == b.opcode && a.engine == b.engine && a.flags == b.flags &&
         a.op0 == b.op0 && a.op1 == b.op1 && a.numWaits == b.numWaits &&
         a.signal == b.signal && a.dmaQueue == b.dmaQueue &&
         a.sourceIndex == b.sourceIndex &&
         std::memcmp(&a.imm0, &b.imm0, 4) == 0 &&
         std::memcmp(&a.imm1, &b.imm1, 4) == 0 && waits &&
         a.partitionCoef == b.partitionCoef && a.freeCoef == b.freeCoef &&
         samePattern(a.dst, b.dst) && samePattern(a.src0, b.src0) &&
         samePattern(a.src1, b.src1) && samePattern(a.src2, b.src2);
}

} // namespace

TEST_CASE("instruction words round-trip through encode/decode", "[isa]") {
  std::mt19937_64 rng(20240611);
  for (int n = 0; n < 5000; ++n) {
    Instruction inst = randomInstruction(rng);
    uint8_t word[kInstructionBytes + 16];
    std::memset(word, 0xAB, sizeof(word));
    encode(inst, word);
    // Exactly kInstructionBytes are written.
    for (size_t i = kInstructionBytes; i < sizeof(word); ++i)
      REQUIRE(word[i] == 0xAB);
    REQUIRE_FALSE(firstNonZeroReservedByte(word).has_value());
    Instruction back = decode(word);
    REQUIRE(sameInstruction(inst, back));
    uint8_t again[kInstructionBytes];
    encode(back, again);
    REQUIRE(std::memcmp(word, again, kInstructionBytes) == 0);
  }
}

TEST_CASE("the word is 320 little-endian bytes with reserved zeros", "[isa]") {
  STATIC_REQUIRE(kInstructionBytes == 320);
  Instruction inst = make(Opcode::Matmul, Engine::Tensor);
  inst.imm0 = 1.0f;
  inst.sourceIndex = 0x01020304;
  uint8_t word[kInstructionBytes];
  encode(inst, word);
  CHECK(word[0] == 2);
  CHECK(word[1] == 0);
  CHECK(word[2] == 0);
  CHECK(word[12] == 0x04);
  CHECK(word[15] == 0x01);
  CHECK(word[16] == 0x00);
  CHECK(word[18] == 0x80);
  CHECK(word[19] == 0x3f);

  // A default instruction is all zero except signal and wait semaphores.
  uint8_t zero[kInstructionBytes];
  encode(Instruction(), zero);
  size_t nonZero = 0;
  for (uint8_t b : zero)
    nonZero += b != 0;
  CHECK(nonZero == 4 + 1 + 4 + 1); // sourceIndex, signal, 4 waits, engine

  for (size_t reserved : {10u, 11u, 25u, 64u + 3, 64u + 12, 144u + 13,
                          224u + 15, 304u + 6, 304u + 7, 304u + 12, 319u}) {
    uint8_t copy[kInstructionBytes];
    std::memcpy(copy, word, sizeof(copy));
    copy[reserved] = 1;
    auto at = firstNonZeroReservedByte(copy);
    REQUIRE(at.has_value());
    CHECK(*at == reserved);
  }
}

TEST_CASE("src2 takes bytes 304..316: mem, dtype, partitions, offset",
          "[isa]") {
  Instruction inst = make(Opcode::TensorScalar, Engine::Vector);
  inst.src2.mem = MemKind::SBUF;
  inst.src2.dtype = DType::F32;
  inst.src2.partitionStart = 0x0102;
  inst.src2.partitionCount = 0x0080;
  inst.src2.offset = 0x0A0B0C0D;
  inst.src2.numDims = 1;
  inst.src2.stride[0] = 1;
  inst.src2.count[0] = 1;
  uint8_t word[kInstructionBytes];
  encode(inst, word);
  CHECK(word[304] == uint8_t(MemKind::SBUF));
  CHECK(word[305] == uint8_t(DType::F32));
  CHECK(word[306] == 0x02);
  CHECK(word[307] == 0x01);
  CHECK(word[308] == 0x80);
  CHECK(word[312] == 0x0D);
  CHECK(word[315] == 0x0A);
  Instruction back = decode(word);
  CHECK(back.src2.present());
  CHECK(back.src2.freeElements() == 1);
  CHECK(back.src2.offset == 0x0A0B0C0D);
  // Absent: all sixteen bytes zero, decoded absent.
  encode(make(Opcode::TensorScalar, Engine::Vector), word);
  for (size_t b = 304; b < 320; ++b)
    CHECK(word[b] == 0);
  CHECK_FALSE(decode(word).src2.present());
}

TEST_CASE("every enum value has a lower-case name", "[isa]") {
  CHECK(engineName(Engine::Dma) == "dma");
  CHECK(engineName(Engine::Tensor) == "tensor");
  CHECK(opcodeName(Opcode::DmaCopy) == "dma_copy");
  CHECK(opcodeName(Opcode::TensorTensor) == "tensor_tensor");
  CHECK(dtypeName(DType::BF16) == "bf16");
  CHECK(memKindName(MemKind::SBUF) == "sbuf");
  CHECK(aluOpName(AluOp::Add) == "add");
  CHECK(actFuncName(ActFunc::Relu) == "relu");
  CHECK(actFuncName(ActFunc::GeluTanh) == "gelu_tanh");
  for (unsigned i = 0; i < kNumOpcodes; ++i)
    CHECK(opcodeName(Opcode(i))[0] != '<');
  for (unsigned i = 0; i < kNumAluOps; ++i)
    CHECK(aluOpName(AluOp(i))[0] != '<');
  for (unsigned i = 0; i < kNumActFuncs; ++i)
    CHECK(actFuncName(ActFunc(i))[0] != '<');
  for (unsigned i = 0; i < kNumDTypes; ++i)
    CHECK(dtypeName(DType(i))[0] != '<');
  CHECK(opcodeName(Opcode(kNumOpcodes))[0] == '<');
}
