//===- SeedPrograms.cpp - Tiny programs covering every section and opcode -===//
//
// Two of them carry an allocation table, so mutations reach its checks;
// one spans two physical cores (LNC=2: a second set of stream sections, a
// cross-core barrier, allocations on core 1).
//
//===----------------------------------------------------------------------===//

#include "fuzz/SeedPrograms.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/xxhash.h"

#include <initializer_list>
#include <utility>
#include <vector>

namespace trnc::fuzz {
namespace {

using namespace isa;

AccessPattern pattern(MemKind mem, DType dt, uint16_t p0, uint16_t np,
                      uint64_t offset, std::initializer_list<uint32_t> counts) {
  AccessPattern ap;
  ap.mem = mem;
  ap.dtype = dt;
  ap.partitionStart = p0;
  ap.partitionCount = np;
  ap.offset = offset;
  ap.numDims = uint8_t(counts.size());
  unsigned i = 0;
  for (uint32_t c : counts)
    ap.count[i++] = c;
  int64_t stride = 1;
  for (int d = int(counts.size()) - 1; d >= 0; --d) {
    ap.stride[d] = stride;
    stride *= ap.count[d];
  }
  return ap;
}

AccessPattern sb(DType dt, uint16_t np, uint64_t offset, uint32_t n) {
  return pattern(MemKind::SBUF, dt, 0, np, offset, {n});
}

/// `rows` rows of `n` elements, contiguous, in HBM region `region`.
AccessPattern hb(uint32_t region, DType dt, uint16_t rows, uint32_t n) {
  AccessPattern ap = pattern(MemKind::HBM, dt, 0, rows, 0, {n});
  ap.region = region;
  ap.partitionStride = n;
  return ap;
}

/// Appends instructions the way trnc-schedule-semaphores leaves them: each
/// signals its engine's semaphore; waits name (engine, position) producers.
struct Emitter {
  Program p;
  unsigned core = 0; ///< the physical core `emit` appends to

  explicit Emitter(const char *name) {
    p.target = "trn2";
    p.name = name;
    p.compilerVersion = "trnc seed";
  }
  uint32_t region(Region::Kind kind, DType dt, uint64_t bytes, uint32_t index) {
    Region r;
    r.kind = kind;
    r.dtype = dt;
    r.bytes = bytes;
    r.index = index;
    if (kind == Region::Kind::Scratch) // after the others: no sharing
      r.arenaOffset = p.scratchArenaBytes();
    if (kind == Region::Kind::Input || kind == Region::Kind::Output)
      r.shape = {int64_t(bytes / dtypeBytes(dt))}; // flat; seeds may reshape
    if (kind == Region::Kind::Constant)
      for (uint64_t i = 0; i < bytes; ++i)
        r.data.push_back(uint8_t(i * 7));
    p.regions.push_back(std::move(r));
    return uint32_t(p.regions.size() - 1);
  }
  /// Returns the new instruction's (engine, position).
  std::pair<Engine, uint32_t>
  emit(Instruction inst, std::initializer_list<std::pair<Engine, uint32_t>> after) {
    for (auto [e, pos] : after)
      inst.waits[inst.numWaits++] = {uint8_t(e), pos + 1};
    inst.signal = uint8_t(inst.engine);
    auto &stream = p.coreStreams(core)[size_t(inst.engine)];
    stream.push_back(inst);
    if (core == 0)
      order.push_back({inst.engine, uint32_t(stream.size() - 1)});
    return {inst.engine, uint32_t(stream.size() - 1)};
  }
  /// A tile touched first by the `first`-th and last by the `last`-th
  /// instruction emitted (the allocation table the compiler writes).
  void tile(Allocation::Space space, uint32_t partitions, uint64_t address, uint64_t bytes,
            uint64_t first, uint64_t last) {
    p.allocations.push_back({space, partitions, address, bytes, first, last,
                             order.at(first), order.at(last)});
  }

  std::vector<InstructionRef> order; // core 0's instructions, in emission order
};

Instruction op(Opcode o, Engine e, AccessPattern dst, AccessPattern src0 = {},
               AccessPattern src1 = {}) {
  Instruction i;
  i.opcode = o;
  i.engine = e;
  i.dst = dst;
  i.src0 = src0;
  i.src1 = src1;
  return i;
}

/// relu(x * 0.5 + c) with a constant bias column, through Vector and Scalar.
Program elementwise() {
  Emitter m("elementwise");
  uint32_t in = m.region(Region::Kind::Input, DType::F32, 8 * 16 * 4, 0);
  uint32_t cst = m.region(Region::Kind::Constant, DType::F32, 8 * 4, 0);
  uint32_t out = m.region(Region::Kind::Output, DType::F32, 8 * 16 * 4, 0);
  m.p.regions[in].shape = m.p.regions[out].shape = {8, 16};
  m.p.regions[in].strides = m.p.regions[out].strides = {16, 1};
  m.p.sources.push_back({"aten.relu.default", "relu", "model.py", 12});
  auto x = m.emit(op(Opcode::DmaCopy, Engine::Dma, sb(DType::F32, 8, 0, 16),
                     hb(in, DType::F32, 8, 16)), {});
  auto c = m.emit(op(Opcode::DmaCopy, Engine::Dma, sb(DType::F32, 8, 64, 1),
                     hb(cst, DType::F32, 8, 1)), {});
  Instruction mul = op(Opcode::TensorScalar, Engine::Vector,
                       sb(DType::F32, 8, 128, 16), sb(DType::F32, 8, 0, 16));
  mul.op0 = uint8_t(AluOp::Multiply);
  mul.imm0 = 0.5f;
  auto y = m.emit(mul, {x});
  Instruction act = op(Opcode::Activation, Engine::Scalar, sb(DType::F32, 8, 192, 16),
                       sb(DType::F32, 8, 128, 16), sb(DType::F32, 8, 64, 1));
  act.op0 = uint8_t(ActFunc::Relu);
  act.imm0 = 1.0f;
  act.sourceIndex = 0;
  auto z = m.emit(act, {y, c});
  m.emit(op(Opcode::DmaCopy, Engine::Dma, hb(out, DType::F32, 8, 16),
            sb(DType::F32, 8, 192, 16)), {z});
  m.tile(Allocation::Space::Sbuf, 8, 0, 64, 0, 2);   // x
  m.tile(Allocation::Space::Sbuf, 8, 64, 4, 1, 3);   // c
  m.tile(Allocation::Space::Sbuf, 8, 128, 64, 2, 3); // y
  m.tile(Allocation::Space::Sbuf, 8, 192, 64, 3, 4); // z
  return m.p;
}

/// A bf16 matmul into PSUM, evacuated by Vector, through a scratch region.
Program matmul() {
  Emitter m("matmul");
  uint32_t a = m.region(Region::Kind::Input, DType::BF16, 4 * 8 * 2, 0);
  uint32_t b = m.region(Region::Kind::Input, DType::BF16, 4 * 8 * 2, 1);
  uint32_t tmp = m.region(Region::Kind::Scratch, DType::F32, 8 * 8 * 4, 0);
  uint32_t out = m.region(Region::Kind::Output, DType::F32, 8 * 8 * 4, 0);
  auto la = m.emit(op(Opcode::DmaCopy, Engine::Dma, sb(DType::BF16, 4, 0, 8),
                      hb(a, DType::BF16, 4, 8)), {});
  auto lb = m.emit(op(Opcode::DmaCopy, Engine::Dma, sb(DType::BF16, 4, 64, 8),
                      hb(b, DType::BF16, 4, 8)), {});
  AccessPattern acc = pattern(MemKind::PSUM, DType::F32, 0, 8, 0, {8});
  auto mm = m.emit(op(Opcode::Matmul, Engine::Tensor, acc, sb(DType::BF16, 4, 0, 8),
                      sb(DType::BF16, 4, 64, 8)), {la, lb});
  auto ev = m.emit(op(Opcode::TensorCopy, Engine::Vector, sb(DType::F32, 8, 256, 8), acc),
                   {mm});
  auto st = m.emit(op(Opcode::DmaCopy, Engine::Dma, hb(tmp, DType::F32, 8, 8),
                      sb(DType::F32, 8, 256, 8)), {ev});
  m.emit(op(Opcode::DmaCopy, Engine::Dma, hb(out, DType::F32, 8, 8),
            hb(tmp, DType::F32, 8, 8)), {st});
  m.tile(Allocation::Space::Sbuf, 4, 0, 16, 0, 2);   // a
  m.tile(Allocation::Space::Sbuf, 4, 64, 16, 1, 2);  // b
  m.tile(Allocation::Space::Psum, 8, 0, 32, 2, 3);   // acc
  m.tile(Allocation::Space::Sbuf, 8, 256, 32, 3, 4); // evacuated
  return m.p;
}

/// GpSimd memset and tensor_tensor, a Vector row reduction, a Scalar copy.
Program reduction() {
  Emitter m("reduction");
  uint32_t in = m.region(Region::Kind::Input, DType::F16, 4 * 32 * 2, 0);
  uint32_t out = m.region(Region::Kind::Output, DType::F32, 4 * 4 * 4, 0);
  auto x = m.emit(op(Opcode::DmaCopy, Engine::Dma, sb(DType::F16, 4, 0, 32),
                     hb(in, DType::F16, 4, 32)), {});
  Instruction fill = op(Opcode::Memset, Engine::GpSimd, sb(DType::F16, 4, 128, 32));
  fill.imm0 = 2.0f;
  auto f = m.emit(fill, {});
  Instruction add = op(Opcode::TensorTensor, Engine::GpSimd, sb(DType::F32, 4, 256, 32),
                       sb(DType::F16, 4, 0, 32), sb(DType::F16, 4, 128, 32));
  add.op0 = uint8_t(AluOp::Add);
  auto s = m.emit(add, {x, f});
  Instruction red = op(Opcode::TensorReduce, Engine::Vector, sb(DType::F32, 4, 512, 4),
                       pattern(MemKind::SBUF, DType::F32, 0, 4, 256, {4, 8}));
  red.op0 = uint8_t(AluOp::Max);
  auto r = m.emit(red, {s});
  auto c = m.emit(op(Opcode::TensorCopy, Engine::Scalar, sb(DType::F32, 4, 576, 4),
                     sb(DType::F32, 4, 512, 4)), {r});
  m.emit(op(Opcode::DmaCopy, Engine::Dma, hb(out, DType::F32, 4, 4),
            sb(DType::F32, 4, 576, 4)), {c});
  return m.p;
}

/// dma_indirect: gather table rows named by an index tile, then scatter
/// them (accumulating) into a copy of the table.
Program indirect() {
  Emitter m("indirect");
  uint32_t table = m.region(Region::Kind::Input, DType::F32, 8 * 4 * 4, 0);
  uint32_t index = m.region(Region::Kind::Input, DType::I32, 6 * 4, 1);
  uint32_t out = m.region(Region::Kind::Output, DType::F32, 8 * 4 * 4, 0);
  auto i = m.emit(op(Opcode::DmaCopy, Engine::Dma, sb(DType::I32, 6, 0, 1),
                     hb(index, DType::I32, 6, 1)), {});
  auto g = m.emit(op(Opcode::DmaIndirect, Engine::Dma, sb(DType::F32, 6, 64, 4),
                     hb(table, DType::F32, 8, 4), sb(DType::I32, 6, 0, 1)), {i});
  auto c = m.emit(op(Opcode::DmaCopy, Engine::Dma, hb(out, DType::F32, 8, 4),
                     hb(table, DType::F32, 8, 4)), {});
  Instruction scatter = op(Opcode::DmaIndirect, Engine::Dma, hb(out, DType::F32, 8, 4),
                           sb(DType::F32, 6, 64, 4), sb(DType::I32, 6, 0, 1));
  scatter.flags = kFlagScatter | kFlagAccumulate;
  m.emit(scatter, {g, c});
  return m.p;
}

/// LNC=2: core 0 scales the input into scratch and signals the peer's
/// barrier semaphore; core 1 waits for it, reads the scratch tile and
/// stores it to the output. Both cores use the same SBUF addresses.
Program twoCores() {
  Emitter m("two_cores");
  uint32_t in = m.region(Region::Kind::Input, DType::F32, 8 * 16 * 4, 0);
  uint32_t mid = m.region(Region::Kind::Scratch, DType::F32, 8 * 16 * 4, 0);
  uint32_t out = m.region(Region::Kind::Output, DType::F32, 8 * 16 * 4, 0);
  m.p.peerStreams.resize(1);
  auto x = m.emit(op(Opcode::DmaCopy, Engine::Dma, sb(DType::F32, 8, 0, 16),
                     hb(in, DType::F32, 8, 16)), {});
  Instruction scale = op(Opcode::TensorScalar, Engine::Vector, sb(DType::F32, 8, 64, 16),
                         sb(DType::F32, 8, 0, 16));
  scale.op0 = uint8_t(AluOp::Multiply);
  scale.imm0 = 3.0f;
  auto y = m.emit(scale, {x});
  auto w = m.emit(op(Opcode::DmaCopy, Engine::Dma, hb(mid, DType::F32, 8, 16),
                     sb(DType::F32, 8, 64, 16)), {y});
  Instruction barrier = op(Opcode::Nop, Engine::Dma, {});
  barrier.waits[barrier.numWaits++] = {uint8_t(Engine::Dma), w.second + 1};
  barrier.flags = kFlagSignalPeer;
  barrier.signal = kFirstBarrierSemaphore;
  m.p.streams[size_t(Engine::Dma)].push_back(barrier);
  m.order.push_back({Engine::Dma, 2});
  m.tile(Allocation::Space::Sbuf, 8, 0, 64, 0, 1);
  m.tile(Allocation::Space::Sbuf, 8, 64, 64, 1, 2);
  m.core = 1;
  Instruction load = op(Opcode::DmaCopy, Engine::Dma, sb(DType::F32, 8, 0, 16),
                        hb(mid, DType::F32, 8, 16));
  load.waits[load.numWaits++] = {kFirstBarrierSemaphore, 1};
  auto l = m.emit(load, {});
  m.emit(op(Opcode::DmaCopy, Engine::Dma, hb(out, DType::F32, 8, 16), sb(DType::F32, 8, 0, 16)),
         {l});
  Allocation peer{Allocation::Space::Sbuf, 8, 0, 64, 0, 1, {Engine::Dma, 0}, {Engine::Dma, 1}};
  peer.core = 1;
  m.p.allocations.push_back(peer);
  return m.p;
}

} // namespace

std::vector<Program> seedPrograms() {
  return {elementwise(), matmul(), reduction(), indirect(), twoCores()};
}

void fixChecksums(std::vector<uint8_t> &bytes) {
  // Artifact.cpp's layout: a 24-byte header (u32 section count at byte 16),
  // then one 32-byte table entry per section (u32 kind, u32 0, u64 offset,
  // u64 size, u64 xxh3). The count is the header's, so every section a
  // format version has gets its checksum fixed.
  constexpr size_t kTable = 24, kEntry = 32;
  auto get = [&](size_t at, int n = 8) {
    uint64_t v = 0;
    for (int i = 0; i < n; ++i)
      v |= uint64_t(bytes[at + i]) << (8 * i);
    return v;
  };
  if (bytes.size() < kTable)
    return;
  uint64_t sections = get(16, 4);
  for (size_t i = 0; i < sections; ++i) {
    size_t entry = kTable + i * kEntry;
    if (entry + kEntry > bytes.size())
      return;
    uint64_t offset = get(entry + 8), size = get(entry + 16);
    if (offset > bytes.size() || size > bytes.size() - offset)
      continue;
    uint64_t h = llvm::xxh3_64bits(llvm::ArrayRef<uint8_t>(bytes).slice(offset, size));
    for (int b = 0; b < 8; ++b)
      bytes[entry + 24 + b] = uint8_t(h >> (8 * b));
  }
}

} // namespace trnc::fuzz
