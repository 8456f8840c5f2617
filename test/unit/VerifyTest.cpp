//===- VerifyTest.cpp - verifyProgram refuses bad programs precisely --------===//
//
// Hand-crafted programs that break one rule each; the message must name the
// stream, the instruction, the operand and the numbers involved.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"

using namespace trnc;
using namespace trnc::test;

namespace {

std::string verify(const Program &p) { return errorText(verifyProgram(p)); }

/// A valid tensor_tensor on Vector, for mutation.
Instruction goodTensorTensor() {
  Instruction i = make(Opcode::TensorTensor, Engine::Vector);
  i.op0 = uint8_t(AluOp::Add);
  i.dst = sbuf(DType::F32, 0, 64, 0, {16});
  i.src0 = sbuf(DType::F32, 0, 64, 64, {16});
  i.src1 = sbuf(DType::F32, 0, 64, 128, {16});
  return i;
}

Instruction goodMatmul(uint32_t N) {
  Instruction i = make(Opcode::Matmul, Engine::Tensor);
  i.dst = psum(DType::F32, 0, 32, 0, {N});
  i.src0 = sbuf(DType::BF16, 0, 64, 0, {32});
  i.src1 = sbuf(DType::BF16, 0, 64, 64, {N});
  return i;
}

std::string verifyOne(Instruction inst, Builder b = Builder()) {
  b.raw(inst);
  return verify(b.p);
}

} // namespace

TEST_CASE("valid programs pass", "[verify]") {
  CHECK(verifyOne(goodTensorTensor()) == "");
  CHECK(verifyOne(goodMatmul(512)) == "");
}

TEST_CASE("SBUF and PSUM bounds", "[verify]") {
  Builder b;
  for (int n = 0; n < 12; ++n)
    b.raw(make(Opcode::Nop, Engine::Vector));
  Instruction i = goodTensorTensor();
  i.src1.partitionStart = 96;
  b.raw(i);
  CHECK(contains(verify(b.p), "vector stream instruction 12 (tensor_tensor): "
                              "src1 reads SBUF partitions 96..160, past 128"));

  i = goodTensorTensor();
  i.dst.offset = 224 * 1024 - 32; // 16 floats = 64 bytes: 32 past the end
  CHECK(contains(verifyOne(i), "dst writes SBUF bytes 229344..229408 of each "
                               "partition, outside 0..229376"));
  // The same tile fits on trn3 (256 KiB per partition).
  Builder t3;
  t3.p.target = "trn3";
  CHECK(verifyOne(i, t3) == "");

  i = goodTensorTensor();
  i.src0.offset = 8;
  i.src0.stride[0] = -1; // walks backwards past byte 0
  CHECK(contains(verifyOne(i), "src0 reads SBUF bytes -52..12"));

  i = goodTensorTensor();
  i.src1.stride[0] = 0; // broadcast: touches one element only
  i.src1.offset = 224 * 1024 - 4;
  CHECK(verifyOne(i) == "");
}

TEST_CASE("HBM accesses stay inside their region", "[verify]") {
  Builder b;
  uint32_t in = b.input(DType::F32, 4096);
  Instruction d = make(Opcode::DmaCopy, Engine::Dma);
  d.dst = sbuf(DType::F32, 0, 8, 0, {128});
  d.src0 = hbm(in, DType::F32, 4, 8, 128, {128});
  b.raw(d);
  CHECK(contains(verify(b.p), "dma stream instruction 0 (dma_copy): src0 reads "
                              "HBM region 0 bytes 4..4100, outside its 4096 "
                              "bytes"));
  b.p.streams[size_t(Engine::Dma)][0].src0.region = 3;
  CHECK(contains(verify(b.p), "src0 reads HBM region 3, but the program has 1 "
                              "regions"));
}

TEST_CASE("opcode, engine, flags and operand rules", "[verify]") {
  Instruction mm = goodMatmul(64);
  mm.engine = Engine::Vector;
  Builder b;
  b.p.streams[size_t(Engine::Vector)].push_back(mm);
  CHECK(contains(verify(b.p), "vector stream instruction 0 (matmul): matmul "
                              "cannot run on the vector engine"));

  Instruction tt = goodTensorTensor();
  tt.engine = Engine::Scalar;
  CHECK(contains(verifyOne(tt), "tensor_tensor cannot run on the scalar engine"));
  Instruction act = make(Opcode::Activation, Engine::Vector);
  CHECK(contains(verifyOne(act), "activation cannot run on the vector engine"));

  Builder wrong;
  wrong.p.streams[size_t(Engine::Scalar)].push_back(goodTensorTensor());
  CHECK(contains(verify(wrong.p), "instruction is for engine vector but sits in "
                                "the scalar stream"));

  Instruction bad = goodTensorTensor();
  bad.opcode = Opcode(42);
  CHECK(contains(verifyOne(bad), "vector stream instruction 0 (opcode 42): "
                                 "invalid opcode 42"));
  bad = goodTensorTensor();
  bad.op0 = 40;
  CHECK(contains(verifyOne(bad), "invalid alu op0 40"));
  bad = goodTensorTensor();
  bad.flags = kFlagAccumulate;
  CHECK(contains(verifyOne(bad), "flags 0x1 not valid for tensor_tensor"));
  bad = goodTensorTensor();
  bad.src1 = AccessPattern();
  CHECK(contains(verifyOne(bad), "tensor_tensor requires src1"));
  bad = goodTensorTensor();
  bad.src0.dtype = DType(9);
  CHECK(contains(verifyOne(bad), "src0 has invalid dtype 9"));
  bad = goodTensorTensor();
  bad.src0.numDims = 5;
  CHECK(contains(verifyOne(bad), "src0 has 5 free dims (must be 1..4)"));
  bad = goodTensorTensor();
  bad.src1.count[0] = 8;
  CHECK(contains(verifyOne(bad), "dst has 16 free elements per partition but "
                                 "src1 has 8"));
  bad = goodTensorTensor();
  bad.src0.mem = MemKind::PSUM;
  bad.src1.mem = MemKind::PSUM;
  CHECK(contains(verifyOne(bad), "src0 and src1 are both in PSUM"));
  Instruction ms = make(Opcode::Memset, Engine::Vector);
  ms.dst = sbuf(DType::F32, 0, 1, 0, {4});
  ms.src0 = ms.dst;
  CHECK(contains(verifyOne(ms), "memset takes no src0"));

  Builder hb;
  uint32_t r = hb.input(DType::F32, 64);
  Instruction hc = make(Opcode::TensorCopy, Engine::Vector);
  hc.dst = sbuf(DType::F32, 0, 1, 0, {4});
  hc.src0 = hbm(r, DType::F32, 0, 1, 0, {4});
  CHECK(contains(verifyOne(hc, hb), "src0 is in HBM, which only dma_copy and "
                                    "dma_indirect may access"));

  Instruction red = make(Opcode::TensorReduce, Engine::Vector);
  red.op0 = uint8_t(AluOp::Add);
  red.src0 = sbuf(DType::F32, 0, 4, 0, {3, 10});
  red.dst = sbuf(DType::F32, 0, 4, 256, {10});
  CHECK(contains(verifyOne(red), "dst has 10 free elements per partition, "
                                 "expected 3"));
  red.dst = sbuf(DType::F32, 0, 4, 256, {3});
  CHECK(verifyOne(red) == "");

  Instruction ts = make(Opcode::TensorScalar, Engine::Scalar);
  ts.dst = sbuf(DType::F32, 0, 4, 0, {16});
  ts.src0 = sbuf(DType::F32, 0, 4, 64, {16});
  CHECK(verifyOne(ts) == "");
  ts.src1 = sbuf(DType::F32, 0, 4, 128, {1}); // per-partition operand0
  CHECK(verifyOne(ts) == "");
  ts.src1 = sbuf(DType::F32, 0, 4, 128, {2});
  CHECK(contains(verifyOne(ts), "operand0 src1 must be a per-partition [4, 1] "
                                "tile, found [4, 2]"));
  ts.src1 = sbuf(DType::F32, 0, 4, 128, {1});
  ts.src2 = sbuf(DType::F32, 0, 4, 132, {1}); // per-partition operand1
  CHECK(contains(verifyOne(ts), "operand1 src2 given, but op1 is bypass"));
  ts.op1 = uint8_t(AluOp::Multiply);
  CHECK(verifyOne(ts) == "");
  ts.src2 = sbuf(DType::F32, 0, 2, 132, {1});
  CHECK(contains(verifyOne(ts), "operand1 src2 must be a per-partition [4, 1] "
                                "tile, found [2, 1]"));
  Instruction three = make(Opcode::TensorTensor, Engine::Vector);
  three.dst = sbuf(DType::F32, 0, 4, 0, {16});
  three.src0 = sbuf(DType::F32, 0, 4, 64, {16});
  three.src1 = sbuf(DType::F32, 0, 4, 128, {16});
  three.src2 = sbuf(DType::F32, 0, 4, 192, {1});
  CHECK(contains(verifyOne(three), "tensor_tensor takes no src2"));

  Instruction dq = make(Opcode::DmaCopy, Engine::Dma);
  dq.dst = sbuf(DType::F32, 0, 1, 0, {4});
  dq.src0 = sbuf(DType::F32, 1, 1, 0, {2, 2});
  dq.dmaQueue = 16;
  CHECK(contains(verifyOne(dq), "DMA queue 16, at most 15"));
  dq.dmaQueue = 0;
  dq.src0.count[0] = 3;
  CHECK(contains(verifyOne(dq), "dst covers 4 elements but src0 covers 6"));
}

TEST_CASE("semaphore rules", "[verify]") {
  Instruction i = goodTensorTensor();
  i.numWaits = 1;
  i.waits[0] = {40, 1};
  CHECK(contains(verifyOne(i), "vector stream instruction 0 (tensor_tensor): "
                               "wait 0 names semaphore 40, ids are 0..31"));
  i = goodTensorTensor();
  i.signal = 40;
  CHECK(contains(verifyOne(i), "signals semaphore 40"));
  i = goodTensorTensor();
  i.numWaits = 5;
  CHECK(contains(verifyOne(i), "5 semaphore waits, at most 4"));
  i = goodTensorTensor();
  i.signal = kNoSemaphore;
  i.numWaits = 2; // waits beyond numWaits are ignored
  i.waits[0] = {1, 1};
  i.waits[1] = {31, 1};
  i.waits[2] = {200, 1};
  CHECK(verifyOne(i) == "");
}

TEST_CASE("matmul rules", "[verify]") {
  CHECK(contains(verifyOne(goodMatmul(600)),
                 "tensor stream instruction 0 (matmul): N=600 (src1 free "
                 "elements) exceeds 512"));
  Instruction m = goodMatmul(64);
  m.dst.mem = MemKind::SBUF;
  CHECK(contains(verifyOne(m), "matmul dst must be in PSUM, found sbuf"));
  m = goodMatmul(64);
  m.dst.dtype = DType::BF16;
  CHECK(contains(verifyOne(m), "matmul dst must be f32"));
  m = goodMatmul(64);
  m.src1.partitionCount = 32;
  CHECK(contains(verifyOne(m), "contraction mismatch: src0 has K=64 "
                               "partitions, src1 has K=32"));
  m = goodMatmul(64);
  m.src0.count[0] = 129;
  CHECK(contains(verifyOne(m), "M=129 (src0 free elements) exceeds 128"));
  m = goodMatmul(64);
  m.dst.partitionCount = 16;
  CHECK(contains(verifyOne(m), "dst has 16 partitions, expected M=32"));
  m = goodMatmul(64);
  m.dst.offset = 2048 - 128; // 64 floats = 256 bytes from 1920
  CHECK(contains(verifyOne(m), "dst PSUM bytes 1920..2176 cross a 2048-byte "
                               "bank boundary"));
  m = goodMatmul(64);
  m.src0.mem = MemKind::PSUM;
  CHECK(contains(verifyOne(m), "src0 is in PSUM; matmul reads its operands "
                               "from SBUF"));
}

TEST_CASE("region and program rules", "[verify]") {
  Builder b;
  b.p.target = "trn9";
  CHECK(contains(verify(b.p), "unknown target 'trn9' (known: trn2, trn1, trn3)"));

  Builder dup;
  dup.input(DType::F32, 16);
  dup.input(DType::F32, 16);
  dup.p.regions[1].index = 0;
  CHECK(contains(verify(dup.p), "region 1 (input): input index 0 is also used by "
                              "region 0"));
  dup.p.regions[1].index = 2;
  CHECK(contains(verify(dup.p), "region 1 (input): input index 2, but there are "
                              "2 inputs (indices must be dense from 0)"));

  Builder cst;
  uint32_t c = cst.region(Region::Kind::Constant, DType::F32, 16);
  cst.p.regions[c].data.resize(12);
  CHECK(contains(verify(cst.p), "region 0 (constant): data has 12 bytes, "
                              "expected 16"));
  cst.p.regions[c].data.resize(16);
  Instruction w = make(Opcode::DmaCopy, Engine::Dma);
  w.dst = hbm(c, DType::F32, 0, 1, 0, {4});
  w.src0 = sbuf(DType::F32, 0, 1, 0, {4});
  CHECK(contains(verifyOne(w, cst), "dst writes constant region 0 "
                                    "(constants are read-only)"));

  Builder src;
  Instruction i = goodTensorTensor();
  i.sourceIndex = 3;
  CHECK(contains(verifyOne(i, src), "source index 3 but the program has 0 "
                                    "source locations"));
}

TEST_CASE("scratch arena rules", "[verify]") {
  // Two 100-byte regions: packed at one offset, or laid end to end (0, 128).
  Builder b;
  uint32_t r0 = b.region(Region::Kind::Scratch, DType::F32, 100);
  uint32_t r1 = b.region(Region::Kind::Scratch, DType::F32, 100);
  CHECK(b.p.regions[r1].arenaOffset == 128);
  CHECK(b.p.scratchArenaBytes() == 256);
  CHECK(verify(b.p) == "");
  b.p.regions[r1].arenaOffset = 0;
  CHECK(verify(b.p) == "");

  b.p.regions[r1].arenaOffset = 96;
  CHECK(contains(verify(b.p), "region 1 (scratch): scratch arena offset 96 "
                              "is not a multiple of 64"));
  // Past the chip's HBM.
  b.p.regions[r1].arenaOffset = uint64_t(1) << 62;
  CHECK(contains(verify(b.p), "region 1 (scratch): scratch arena offset " +
                                  std::to_string(uint64_t(1) << 62)));
  // Inside HBM, but a gap packing never leaves (a planted offset).
  b.p.regions[r1].arenaOffset = 1 << 20;
  CHECK(contains(verify(b.p), "the scratch arena spans 1048704 bytes, more "
                              "than its regions laid end to end (256)"));
  b.p.regions[r1].arenaOffset = 128;
  uint32_t in = b.input(DType::F32, 16);
  b.p.regions[in].arenaOffset = 64;
  CHECK(contains(verify(b.p), "region 2 (input): only scratch regions have "
                              "an arena offset"));
  (void)r0;
}

TEST_CASE("allocation table rules", "[verify]") {
  // Three instructions: two tensor_tensors on Vector, a matmul on Tensor.
  Builder b;
  b.raw(goodTensorTensor());
  b.raw(goodTensorTensor());
  b.raw(goodMatmul(512));
  using S = Allocation::Space;
  Allocation a{S::Sbuf, 64, 0, 64, 0, 1, {Engine::Vector, 0}, {Engine::Vector, 1}};
  Allocation c{S::Sbuf, 64, 64, 64, 1, 2, {Engine::Vector, 1}, {Engine::Tensor, 0}};
  Allocation acc{S::Psum, 32, 0, 2048, 2, 2, {Engine::Tensor, 0}, {Engine::Tensor, 0}};
  auto with = [&](std::vector<Allocation> table) {
    Program p = b.p;
    p.allocations = std::move(table);
    return verify(p);
  };
  CHECK(with({a, c, acc}) == "");
  // Live at once (instruction 1) and sharing bytes [32, 64).
  Allocation clash = c;
  clash.address = 32;
  CHECK(contains(with({a, clash}),
                 "allocation 1 (SBUF, bytes [32, 96), live 1..2) overlaps allocation 0 "
                 "(bytes [0, 64), live 0..1) while both are live"));
  // The same bytes one after the other are fine (a reused slot).
  Allocation later = a;
  later.first = later.last = 2;
  later.firstAt = later.lastAt = {Engine::Tensor, 0};
  CHECK(with({a, later}) == "");
  // The same bytes in SBUF and in PSUM are different memories.
  Allocation inPsum = acc;
  inPsum.first = 0;
  inPsum.firstAt = {Engine::Vector, 0};
  CHECK(with({a, inPsum}) == "");

  Allocation big = a;
  big.address = 224 * 1024 - 32;
  CHECK(contains(with({big}), "allocation 0 (SBUF): bytes [229344, 229408) per "
                              "partition, outside the 229376 bytes of each SBUF partition"));
  big.address = ~uint64_t(0) - 8; // address + bytes would wrap around
  CHECK(contains(with({big}), "outside the 229376 bytes of each SBUF partition"));
  Allocation none = a;
  none.bytes = 0;
  CHECK(contains(with({none}), "allocation 0 (SBUF): bytes [0, 0) per partition"));
  Allocation wide = a;
  wide.partitions = 129;
  CHECK(contains(with({wide}), "allocation 0 (SBUF): 129 partitions, the SBUF has 128"));
  Allocation bank = acc;
  bank.address = 1024; // 2048 bytes from 1024 straddle banks 0 and 1
  CHECK(contains(with({bank}), "allocation 0 (PSUM): bytes [1024, 3072) cross a "
                               "2048-byte PSUM bank boundary"));
  Allocation range = a;
  range.last = 3;
  CHECK(contains(with({range}), "allocation 0 (SBUF): live range 0..3 outside the "
                                "program's 3 instructions"));
  range = a;
  range.first = 2;
  CHECK(contains(with({range}), "live range 2..1"));
  Allocation stream = a;
  stream.lastAt = {Engine::Scalar, 0};
  CHECK(contains(with({stream}), "allocation 0 (SBUF): names instruction 0 of the "
                                 "scalar stream, which has 0"));
  stream.lastAt = {Engine::Vector, 2};
  CHECK(contains(with({stream}), "names instruction 2 of the vector stream, which has 2"));
  Allocation order = c;
  order.lastAt = {Engine::Vector, 1};
  order.first = order.last = 0;
  order.firstAt = {Engine::Vector, 1};
  CHECK(contains(with({order}), "stream positions 1, 1 lie past program positions 0, 0"));
  Allocation space = a;
  space.space = S(3);
  CHECK(contains(with({space}), "invalid memory space 3"));
}
