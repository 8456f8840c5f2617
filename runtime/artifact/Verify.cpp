//===- Verify.cpp - Check a Program against its target's machine model ----===//
//
// Everything the simulator relies on to run without bounds checks is proven
// here: opcodes and engines, operand presence, dtypes, semaphore ids, matmul
// shape rules, PSUM bank rules, and that every byte an access pattern touches
// lies inside SBUF, PSUM or its HBM region; the allocation table (tiles
// inside their memory, PSUM banks, live ranges on real instructions, no two
// tiles live at once sharing a byte). Each check names the rule it
// enforces (HARDWARE.md, NKI ISA reference); each message names the stream,
// the instruction and the operand.
//
//===----------------------------------------------------------------------===//

#include "artifact/Artifact.h"
#include "machine/MachineModel.h"

#include "llvm/ADT/StringExtras.h"

#include <algorithm>
#include <array>
#include <functional>
#include <map>
#include <queue>
#include <string>
#include <vector>

namespace trnc {
namespace {

using namespace isa;
using i128 = __int128;
using u128 = unsigned __int128;

std::string str(i128 v) {
  if (v == 0)
    return "0";
  bool neg = v < 0;
  u128 u = neg ? u128(-(v + 1)) + 1 : u128(v);
  std::string s;
  while (u) {
    s.insert(s.begin(), char('0' + unsigned(u % 10)));
    u /= 10;
  }
  return neg ? "-" + s : s;
}

/// Largest element count an instruction operand may cover; far above any
/// real tile, small enough that counts never overflow 64-bit arithmetic.
constexpr u128 kMaxElements = u128(1) << 48;
/// Largest stride magnitude in elements (same reasoning).
constexpr int64_t kMaxStride = int64_t(1) << 48;

u128 freeElements(const AccessPattern &ap) {
  u128 n = 1;
  for (unsigned i = 0; i < ap.numDims && i < kMaxFreeDims; ++i)
    n *= ap.count[i];
  return n;
}

/// Element offsets [lo, hi] (inclusive) the free dims reach from the start.
void freeExtent(const AccessPattern &ap, i128 &lo, i128 &hi) {
  lo = hi = 0;
  for (unsigned i = 0; i < ap.numDims; ++i) {
    i128 reach = i128(ap.stride[i]) * i128(ap.count[i] - 1);
    (reach < 0 ? lo : hi) += reach;
  }
}

struct OperandSpec {
  const char *name;
  bool isWrite;
};

class Verifier {
public:
  Verifier(const Program &p, const MachineModel &m) : p(p), m(m) {}

  llvm::Error run();

private:
  llvm::Error checkRegions();
  llvm::Error checkAllocations();
  llvm::Error checkInstruction(unsigned core, Engine stream, size_t index,
                               const Instruction &inst);
  /// Cross-core semaphores: only barrier ones, only raised by a Nop
  /// flagged kFlagSignalPeer, only at LNC=2 (isa/Isa.h).
  std::string checkBarrier(const Instruction &inst) const;
  /// Structural and bounds checks of one present operand.
  std::string checkPattern(const AccessPattern &ap, OperandSpec spec) const;
  std::string checkOperands(const Instruction &inst) const;
  std::string checkShapes(const Instruction &inst) const;
  std::string checkIndirect(const Instruction &inst) const;

  const Program &p;
  const MachineModel &m;
};

llvm::Error fail(const std::string &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), msg);
}

std::string regionKindName(Region::Kind k) {
  switch (k) {
  case Region::Kind::Input: return "input";
  case Region::Kind::Output: return "output";
  case Region::Kind::Scratch: return "scratch";
  case Region::Kind::Constant: return "constant";
  }
  return "kind " + std::to_string(unsigned(k));
}

llvm::Error Verifier::checkRegions() {
  // Input/Output indices: unique and dense. With n regions of a kind, every
  // index below n and no duplicates means exactly 0..n-1.
  size_t numOfKind[2] = {p.numInputs(), p.numOutputs()};
  std::vector<int64_t> owner[2] = {std::vector<int64_t>(numOfKind[0], -1),
                                   std::vector<int64_t>(numOfKind[1], -1)};
  for (size_t i = 0; i < p.regions.size(); ++i) {
    const Region &r = p.regions[i];
    std::string ctx = "region " + std::to_string(i);
    if (uint8_t(r.kind) > uint8_t(Region::Kind::Constant))
      return fail(ctx + ": invalid kind " + std::to_string(unsigned(r.kind)));
    ctx += " (" + regionKindName(r.kind) + ")";
    if (uint8_t(r.dtype) >= kNumDTypes)
      return fail(ctx + ": invalid dtype " + std::to_string(unsigned(r.dtype)));
    // A region lives in the chip's HBM.
    if (r.bytes > m.hbmBytes)
      return fail(ctx + ": " + std::to_string(r.bytes) + " bytes exceed the " +
                  std::to_string(m.hbmBytes >> 30) + " GiB of HBM of " +
                  m.name);
    if (r.kind == Region::Kind::Constant && r.data.size() != r.bytes)
      return fail(ctx + ": data has " + std::to_string(r.data.size()) +
                  " bytes, expected " + std::to_string(r.bytes));
    if (r.kind != Region::Kind::Constant && !r.data.empty())
      return fail(ctx + ": only constant regions carry data");
    // Scratch lies in the packed arena, which lies in HBM too.
    if (r.kind == Region::Kind::Scratch &&
        (r.arenaOffset % kScratchAlignment != 0 ||
         r.arenaOffset > m.hbmBytes - r.bytes))
      return fail(ctx + ": scratch arena offset " +
                  std::to_string(r.arenaOffset) + " is not a multiple of " +
                  std::to_string(kScratchAlignment) + " or puts its " +
                  std::to_string(r.bytes) + " bytes past the " +
                  std::to_string(m.hbmBytes >> 30) + " GiB of HBM of " + m.name);
    if (r.kind != Region::Kind::Scratch && r.arenaOffset != 0)
      return fail(ctx + ": only scratch regions have an arena offset");
    if (!r.strides.empty() && r.strides.size() != r.shape.size())
      return fail(ctx + ": " + std::to_string(r.strides.size()) +
                  " strides for a rank-" + std::to_string(r.shape.size()) +
                  " shape");
    if (r.kind != Region::Kind::Input && r.kind != Region::Kind::Output)
      continue;
    int k = r.kind == Region::Kind::Output;
    std::string kind = regionKindName(r.kind);
    // The caller binds a tensor of exactly this layout, so the region must
    // lie inside it: a region larger than its layout would let the program
    // read or write past the caller's storage.
    std::optional<uint64_t> span = r.layoutBytes();
    if (!span)
      return fail(ctx + ": invalid layout (a negative or mismatched size or "
                        "stride, or a span past 2^62 bytes)");
    if (r.bytes > *span)
      return fail(ctx + ": spans " + std::to_string(r.bytes) +
                  " bytes, more than the " + std::to_string(*span) +
                  " bytes its shape and strides cover");
    if (r.index >= numOfKind[k])
      return fail(ctx + ": " + kind + " index " + std::to_string(r.index) +
                  ", but there are " + std::to_string(numOfKind[k]) + " " +
                  kind + "s (indices must be dense from 0)");
    if (owner[k][r.index] >= 0)
      return fail(ctx + ": " + kind + " index " + std::to_string(r.index) +
                  " is also used by region " +
                  std::to_string(owner[k][r.index]));
    owner[k][r.index] = int64_t(i);
  }
  // Packing by liveness only ever shrinks the arena below the regions laid
  // end to end: a larger one has a planted offset (and would make the
  // runtime reserve memory nothing uses).
  uint64_t endToEnd = p.scratchEndToEndBytes();
  if (p.scratchArenaBytes() > endToEnd)
    return fail("the scratch arena spans " +
                std::to_string(p.scratchArenaBytes()) +
                " bytes, more than its regions laid end to end (" +
                std::to_string(endToEnd) + ")");
  return llvm::Error::success();
}

std::string Verifier::checkPattern(const AccessPattern &ap,
                                   OperandSpec spec) const {
  std::string name = spec.name;
  const char *verb = spec.isWrite ? " writes " : " reads ";
  if (uint8_t(ap.mem) > uint8_t(MemKind::HBM))
    return name + " has invalid memory kind " + std::to_string(unsigned(ap.mem));
  if (uint8_t(ap.dtype) >= kNumDTypes)
    return name + " has invalid dtype " + std::to_string(unsigned(ap.dtype));
  if (ap.numDims < 1 || ap.numDims > kMaxFreeDims)
    return name + " has " + std::to_string(ap.numDims) +
           " free dims (must be 1.." + std::to_string(kMaxFreeDims) + ")";
  if (ap.partitionCount == 0)
    return name + " has a partition count of 0";
  for (unsigned i = 0; i < ap.numDims; ++i)
    if (ap.count[i] == 0)
      return name + " free dim " + std::to_string(i) + " has count 0";
  if (freeElements(ap) * ap.partitionCount > kMaxElements)
    return name + " covers more than 2^48 elements";
  // The simulator walks strides in bytes with 64-bit arithmetic; a dim of
  // count 1 reaches nothing, so bounds alone would let any stride through.
  for (unsigned i = 0; i < ap.numDims; ++i)
    if (ap.stride[i] > kMaxStride || ap.stride[i] < -kMaxStride)
      return name + " free dim " + std::to_string(i) + " stride " +
             std::to_string(ap.stride[i]) + " is beyond +-2^48 elements";
  if (ap.mem == MemKind::HBM &&
      (ap.partitionStride > kMaxStride || ap.partitionStride < -kMaxStride))
    return name + " row stride " + std::to_string(ap.partitionStride) +
           " is beyond +-2^48 elements";

  i128 lo, hi;
  freeExtent(ap, lo, hi);
  const i128 eb = dtypeBytes(ap.dtype);
  if (ap.mem == MemKind::SBUF || ap.mem == MemKind::PSUM) {
    const char *mem = ap.mem == MemKind::SBUF ? "SBUF" : "PSUM";
    // Partition rule: partitions are consecutive and at most 128.
    unsigned end = unsigned(ap.partitionStart) + ap.partitionCount;
    if (end > m.numPartitions)
      return name + verb + mem + " partitions " +
             std::to_string(ap.partitionStart) + ".." + std::to_string(end) +
             ", past " + std::to_string(m.numPartitions);
    // Every touched byte inside the partition.
    uint64_t limit = ap.mem == MemKind::SBUF ? m.sbufPartitionBytes
                                             : m.psumPartitionBytes;
    i128 first = i128(ap.offset) + lo * eb, last = i128(ap.offset) + hi * eb + eb;
    if (first < 0 || last > i128(limit))
      return name + verb + mem + " bytes " + str(first) + ".." + str(last) +
             " of each partition, outside 0.." + std::to_string(limit);
    return "";
  }
  // HBM: rows partitionStride elements apart inside the region.
  if (ap.region >= p.regions.size())
    return name + verb + "HBM region " + std::to_string(ap.region) +
           ", but the program has " + std::to_string(p.regions.size()) +
           " regions";
  const Region &r = p.regions[ap.region];
  if (spec.isWrite && r.kind == Region::Kind::Constant)
    return name + " writes constant region " + std::to_string(ap.region) +
           " (constants are read-only)";
  i128 rows = i128(ap.partitionStride) * (ap.partitionCount - 1);
  (rows < 0 ? lo : hi) += rows;
  i128 first = i128(ap.offset) + lo * eb, last = i128(ap.offset) + hi * eb + eb;
  if (first < 0 || last > i128(r.bytes))
    return name + verb + "HBM region " + std::to_string(ap.region) + " bytes " +
           str(first) + ".." + str(last) + ", outside its " +
           std::to_string(r.bytes) + " bytes";
  return "";
}

/// Opcodes this runtime executes. Reserved ones (Isa.h) are refused until
/// their semantics, cost and operand rules land here and in sim/.
bool isImplemented(Opcode op) {
  switch (op) {
  case Opcode::Nop:
  case Opcode::DmaCopy:
  case Opcode::Matmul:
  case Opcode::Activation:
  case Opcode::TensorTensor:
  case Opcode::TensorScalar:
  case Opcode::TensorReduce:
  case Opcode::TensorCopy:
  case Opcode::Memset:
  case Opcode::CopyPredicated:
  case Opcode::Iota:
  case Opcode::AffineSelect:
  case Opcode::Random:
  case Opcode::TensorScan:
  case Opcode::DmaIndirect:
  case Opcode::Collective:
    return true;
  default:
    return false;
  }
}

/// Which operands each opcode takes: 2 = required, 1 = optional, 0 = absent.
struct OperandUse {
  uint8_t dst, src0, src1, src2 = 0;
};
OperandUse operandUse(Opcode op) {
  switch (op) {
  case Opcode::Nop: return {0, 0, 0};
  case Opcode::DmaCopy: return {2, 2, 0};
  case Opcode::Matmul: return {2, 2, 2};
  case Opcode::Activation: return {2, 2, 1};
  case Opcode::TensorTensor: return {2, 2, 2};
  case Opcode::TensorScalar: return {2, 2, 1, 1}; // per-partition operand0, 1
  case Opcode::TensorReduce: return {2, 2, 0};
  case Opcode::TensorScan: return {2, 2, 0};
  case Opcode::TensorCopy: return {2, 2, 0};
  case Opcode::Memset: return {2, 0, 0};
  case Opcode::CopyPredicated: return {2, 2, 2};
  case Opcode::Iota: return {2, 0, 0};
  case Opcode::AffineSelect: return {2, 2, 0};
  case Opcode::Random: return {2, 2, 0}; // src0: the seed tile
  case Opcode::DmaIndirect: return {2, 2, 2};
  case Opcode::Collective: return {2, 2, 0};
  }
  return {0, 0, 0};
}

/// Engine rule (HARDWARE.md "Instructions"): which engines run each opcode.
bool allowedOnEngine(Opcode op, Engine e) {
  switch (op) {
  case Opcode::Nop: return true;
  case Opcode::DmaCopy: return e == Engine::Dma;
  case Opcode::Matmul: return e == Engine::Tensor;
  case Opcode::Activation: return e == Engine::Scalar;
  case Opcode::TensorTensor: return e == Engine::Vector || e == Engine::GpSimd;
  case Opcode::TensorScalar:
    return e == Engine::Vector || e == Engine::Scalar || e == Engine::GpSimd;
  case Opcode::TensorReduce: return e == Engine::Vector;
  case Opcode::TensorScan: return e == Engine::Vector;
  case Opcode::TensorCopy:
    return e == Engine::Vector || e == Engine::Scalar || e == Engine::GpSimd;
  case Opcode::Memset: return e == Engine::Vector || e == Engine::GpSimd;
  // copy_predicated: Vector/GpSimd, like tensor_tensor (HARDWARE.md
  // "Instructions"; nki.isa.tensor_copy_predicated).
  case Opcode::CopyPredicated:
    return e == Engine::Vector || e == Engine::GpSimd;
  // iota / affine_select: GpSimd (HARDWARE.md "Instructions").
  case Opcode::Iota: return e == Engine::GpSimd;
  case Opcode::AffineSelect: return e == Engine::GpSimd;
  // random: GpSimd, like iota (HARDWARE.md "Instructions"; Isa.h Random).
  case Opcode::Random: return e == Engine::GpSimd;
  case Opcode::DmaIndirect: return e == Engine::Dma;
  // collective: issued by the Dma stream to its queue (Isa.h Collective).
  case Opcode::Collective: return e == Engine::Dma;
  }
  return false;
}

uint8_t allowedFlags(Opcode op) {
  if (op == Opcode::Matmul)
    return kFlagAccumulate | kFlagTranspose;
  if (op == Opcode::TensorScalar)
    return kFlagReverse0 | kFlagReverse1;
  if (op == Opcode::DmaIndirect) // accumulate/idempotent: checkIndirect
    return kFlagScatter | kFlagAccumulate | kFlagIdempotent;
  if (op == Opcode::Collective) // one span at most: checkCollective
    return kFlagSpanInstance | kFlagSpanCluster;
  if (op == Opcode::Nop) // a barrier's signal: checkBarrier
    return kFlagSignalPeer;
  return 0;
}

std::string Verifier::checkOperands(const Instruction &inst) const {
  OperandUse use = operandUse(inst.opcode);
  struct Entry {
    const AccessPattern *ap;
    uint8_t use;
    OperandSpec spec;
  } entries[] = {{&inst.dst, use.dst, {"dst", true}},
                 {&inst.src0, use.src0, {"src0", false}},
                 {&inst.src1, use.src1, {"src1", false}},
                 {&inst.src2, use.src2, {"src2", false}}};
  std::string op(opcodeName(inst.opcode));
  for (const Entry &e : entries) {
    if (!e.ap->present()) {
      if (e.use == 2)
        return op + " requires " + e.spec.name;
      continue;
    }
    if (e.use == 0)
      return op + " takes no " + e.spec.name;
    std::string err = checkPattern(*e.ap, e.spec);
    if (!err.empty())
      return err;
    // Only the DMA queues reach HBM; compute engines see SBUF and PSUM.
    if (e.ap->mem == MemKind::HBM && !isDmaTransfer(inst.opcode))
      return std::string(e.spec.name) + " is in HBM, which only dma_copy " +
             "and dma_indirect may access";
  }
  return "";
}

std::string count(u128 n) { return str(i128(n)); }

/// Agreement of partitions and free elements between dst and a source.
std::string sameShape(const AccessPattern &dst, const AccessPattern &src,
                      const char *srcName) {
  if (dst.partitionCount != src.partitionCount)
    return std::string("dst has ") + std::to_string(dst.partitionCount) +
           " partitions but " + srcName + " has " +
           std::to_string(src.partitionCount);
  if (freeElements(dst) != freeElements(src))
    return std::string("dst has ") + count(freeElements(dst)) +
           " free elements per partition but " + srcName + " has " +
           count(freeElements(src));
  return "";
}

/// random (Isa.h Random): a floating dst; the seed src0 is an i32 tile of
/// two words on each of dst's partitions (an engine reads per-partition
/// operands from its own lanes, like activation's bias); the counter base
/// imm0 * 2^24 + imm1 has integer-valued parts in [0, 2^24).
std::string checkRandom(const Instruction &inst) {
  const AccessPattern &d = inst.dst, &s = inst.src0;
  if (d.dtype != DType::F32 && d.dtype != DType::BF16 && d.dtype != DType::F16)
    return "random dst must be f32, bf16 or f16, found " +
           std::string(dtypeName(d.dtype));
  if (s.dtype != DType::I32)
    return "random seed src0 must be i32, found " +
           std::string(dtypeName(s.dtype));
  if (s.partitionCount != d.partitionCount || freeElements(s) != 2)
    return "random seed src0 must be a per-partition [" +
           std::to_string(d.partitionCount) + ", 2] tile, found [" +
           std::to_string(s.partitionCount) + ", " + count(freeElements(s)) +
           "]";
  for (float v : {inst.imm0, inst.imm1})
    if (!(v >= 0.0f && v < 16777216.0f) || v != float(int64_t(v)))
      return "random counter base parts imm0/imm1 must be integers in "
             "[0, 2^24), found " + std::to_string(v);
  return "";
}

/// An HBM pattern that walks one contiguous run of elements, row-major
/// (what a collective hands to the host as plain bytes).
bool contiguousHbm(const AccessPattern &ap) {
  if (ap.mem != MemKind::HBM)
    return false;
  i128 run = 1;
  for (int d = int(ap.numDims) - 1; d >= 0; --d) {
    if (ap.count[d] == 1)
      continue;
    if (i128(ap.stride[d]) != run)
      return false;
    run *= ap.count[d];
  }
  return ap.partitionCount <= 1 || i128(ap.partitionStride) == run;
}

/// collective (Isa.h Collective): contiguous HBM src0 and dst of one
/// dtype, a known kind and reduction, a group of >= 1 ranks, a non-negative
/// id, and element counts that follow the kind.
std::string checkCollective(const Instruction &inst) {
  const AccessPattern &d = inst.dst, &s = inst.src0;
  if (inst.op0 >= kNumCollectiveKinds)
    return "invalid collective kind " + std::to_string(inst.op0);
  if (inst.op1 >= kNumReduceOps)
    return "invalid collective reduce op " + std::to_string(inst.op1);
  auto kind = CollectiveKind(inst.op0);
  bool reduces = kind == CollectiveKind::AllReduce ||
                 kind == CollectiveKind::ReduceScatter;
  if (reduces != (ReduceOp(inst.op1) != ReduceOp::None))
    return std::string(collectiveKindName(kind)) +
           (reduces ? " needs a reduce op" : " takes no reduce op");
  if ((inst.flags & kFlagSpanInstance) && (inst.flags & kFlagSpanCluster))
    return "collective spans both an instance and a cluster; set one";
  if (inst.partitionCoef < 1 || inst.freeCoef < 0)
    return "collective group size " + std::to_string(inst.partitionCoef) +
           " and id " + std::to_string(inst.freeCoef) +
           " must be >= 1 and >= 0";
  if (!contiguousHbm(d) || !contiguousHbm(s))
    return std::string("collective ") + (contiguousHbm(d) ? "src0" : "dst") +
           " must be one contiguous HBM run";
  if (d.dtype != s.dtype)
    return "collective dst is " + std::string(dtypeName(d.dtype)) +
           " but src0 is " + std::string(dtypeName(s.dtype));
  u128 nd = freeElements(d) * d.partitionCount;
  u128 ns = freeElements(s) * s.partitionCount;
  u128 g = u128(inst.partitionCoef);
  u128 want = kind == CollectiveKind::AllGather       ? ns * g
              : kind == CollectiveKind::ReduceScatter ? ns / g
                                                      : ns;
  if ((kind == CollectiveKind::ReduceScatter && ns % g) || nd != want)
    return std::string(collectiveKindName(kind)) + " over " +
           std::to_string(inst.partitionCoef) + " ranks: src0 has " +
           count(ns) + " elements, so dst must have " +
           (kind == CollectiveKind::ReduceScatter && ns % g
                ? std::string("src0 / group (src0 must divide evenly)")
                : count(want)) +
           ", found " + count(nd);
  return "";
}

std::string Verifier::checkShapes(const Instruction &inst) const {
  const AccessPattern &d = inst.dst, &a = inst.src0, &b = inst.src1;
  // Engines do not compute int64: I64 is only the HBM side of a DmaCopy
  // whose other side is I32 (Isa.h, DType).
  for (const AccessPattern *ap : {&d, &a, &b}) {
    if (!ap->present() || ap->dtype != DType::I64)
      continue;
    if (inst.opcode != Opcode::DmaCopy || ap->mem != MemKind::HBM)
      return "i64 is only valid in HBM on one side of a dma_copy";
    const AccessPattern &other = ap == &d ? a : d;
    if (other.dtype != DType::I32 && other.dtype != DType::I64)
      return "a dma_copy with an i64 side must have i32 (or i64) on the "
             "other, found " + std::string(dtypeName(other.dtype));
  }
  switch (inst.opcode) {
  case Opcode::Nop:
  case Opcode::Memset:
  case Opcode::Iota:
    return "";
  case Opcode::AffineSelect: {
    // The predicate compares the affine value with 0 (Isa.h AffineSelect).
    AluOp op = AluOp(inst.op0);
    if (op < AluOp::IsEqual || op > AluOp::IsLe)
      return "affine_select op0 must be a comparison, found alu " +
             std::to_string(unsigned(inst.op0));
    return sameShape(d, a, "src0");
  }
  case Opcode::Random:
    return checkRandom(inst);
  case Opcode::DmaIndirect:
    return checkIndirect(inst);
  case Opcode::Collective:
    return checkCollective(inst);
  case Opcode::DmaCopy: {
    u128 nd = freeElements(d) * d.partitionCount;
    u128 ns = freeElements(a) * a.partitionCount;
    if (nd != ns)
      return "dst covers " + count(nd) + " elements but src0 covers " +
             count(ns);
    return "";
  }
  case Opcode::Matmul: {
    // nki.isa.nc_matmul: psum[M, N] (+)= stationary[K, M]^T @ moving[K, N].
    if (d.mem != MemKind::PSUM)
      return "matmul dst must be in PSUM, found " +
             std::string(memKindName(d.mem));
    if (d.dtype != DType::F32)
      return "matmul dst must be f32 (PSUM accumulates in fp32), found " +
             std::string(dtypeName(d.dtype));
    if (a.mem == MemKind::PSUM || b.mem == MemKind::PSUM)
      return std::string(a.mem == MemKind::PSUM ? "src0" : "src1") +
             " is in PSUM; matmul reads its operands from SBUF";
    if (a.partitionCount != b.partitionCount)
      return "contraction mismatch: src0 has K=" +
             std::to_string(a.partitionCount) + " partitions, src1 has K=" +
             std::to_string(b.partitionCount);
    if (a.partitionCount > m.matmulMaxK)
      return "K=" + std::to_string(a.partitionCount) + " exceeds " +
             std::to_string(m.matmulMaxK);
    u128 M = freeElements(a), N = freeElements(b);
    if (M > m.matmulMaxM)
      return "M=" + count(M) + " (src0 free elements) exceeds " +
             std::to_string(m.matmulMaxM);
    if (N > m.matmulMaxN)
      return "N=" + count(N) + " (src1 free elements) exceeds " +
             std::to_string(m.matmulMaxN);
    if (d.partitionCount != M)
      return "dst has " + std::to_string(d.partitionCount) +
             " partitions, expected M=" + count(M);
    if (freeElements(d) != N)
      return "dst has " + count(freeElements(d)) +
             " free elements, expected N=" + count(N);
    // A transpose multiplies by a [K, K] identity; it starts its group.
    if ((inst.flags & kFlagTranspose) && N != a.partitionCount)
      return "transpose matmul: src1 must be a [K, K] identity, has K=" +
             std::to_string(a.partitionCount) + " and N=" + count(N);
    if ((inst.flags & kFlagTranspose) && (inst.flags & kFlagAccumulate))
      return "transpose matmul cannot accumulate";
    // One accumulation group lives in one 2 KiB PSUM bank per partition.
    i128 lo, hi;
    freeExtent(d, lo, hi);
    i128 first = i128(d.offset) + lo * 4, last = i128(d.offset) + hi * 4 + 4;
    if (first / m.psumBankBytes != (last - 1) / m.psumBankBytes)
      return "dst PSUM bytes " + str(first) + ".." + str(last) +
             " cross a " + std::to_string(m.psumBankBytes) +
             "-byte bank boundary";
    return "";
  }
  case Opcode::Activation:
  case Opcode::TensorScalar: {
    struct {
      const AccessPattern *ap;
      const char *role, *name;
    } perPartition[] = {
        {&b, inst.opcode == Opcode::Activation ? "bias" : "operand0", "src1"},
        {&inst.src2, "operand1", "src2"}};
    for (const auto &o : perPartition)
      if (o.ap->present() &&
          (o.ap->partitionCount != a.partitionCount || freeElements(*o.ap) != 1))
        return std::string(o.role) + " " + o.name +
               " must be a per-partition [" + std::to_string(a.partitionCount) +
               ", 1] tile, found [" + std::to_string(o.ap->partitionCount) +
               ", " + count(freeElements(*o.ap)) + "]";
    if (inst.src2.present() && AluOp(inst.op1) == AluOp::Bypass)
      return "operand1 src2 given, but op1 is bypass";
    return sameShape(d, a, "src0");
  }
  case Opcode::CopyPredicated:
  case Opcode::TensorTensor: {
    // nki.isa.tensor_tensor: the two inputs may not both be in PSUM.
    if (a.mem == MemKind::PSUM && b.mem == MemKind::PSUM)
      return "src0 and src1 are both in PSUM";
    std::string err = sameShape(d, a, "src0");
    return err.empty() ? sameShape(d, b, "src1") : err;
  }
  case Opcode::TensorCopy:
  case Opcode::TensorScan:
    return sameShape(d, a, "src0");
  case Opcode::TensorReduce: {
    if (d.partitionCount != a.partitionCount)
      return "dst has " + std::to_string(d.partitionCount) +
             " partitions but src0 has " + std::to_string(a.partitionCount);
    u128 expect = freeElements(a) / a.count[a.numDims - 1];
    if (freeElements(d) != expect)
      return "dst has " + count(freeElements(d)) +
             " free elements per partition, expected " + count(expect) +
             " (src0 without its innermost dim)";
    return "";
  }
  }
  return "";
}

/// dma_indirect (Isa.h DmaIndirect): an SBUF side of P partitions x one
/// row, an HBM table of N rows (all N inside the region: checkPattern),
/// and an i32 [P, 1] index tile in SBUF. Dtypes cast as in dma_copy.
std::string Verifier::checkIndirect(const Instruction &inst) const {
  const bool scatter = inst.flags & kFlagScatter;
  if ((inst.flags & kFlagAccumulate) && !scatter)
    return "dma_indirect accumulates only when it scatters";
  if ((inst.flags & kFlagIdempotent) &&
      (!scatter || (inst.flags & kFlagAccumulate)))
    return "dma_indirect is idempotent only as a scatter without accumulate";
  const AccessPattern &chip = scatter ? inst.src0 : inst.dst;
  const AccessPattern &table = scatter ? inst.dst : inst.src0;
  const char *chipName = scatter ? "src0" : "dst";
  const char *tableName = scatter ? "dst" : "src0";
  if (chip.mem != MemKind::SBUF)
    return std::string("dma_indirect ") + (scatter ? "scatter" : "gather") +
           ": " + chipName + " must be in SBUF, found " +
           std::string(memKindName(chip.mem));
  if (table.mem != MemKind::HBM)
    return std::string("dma_indirect ") + (scatter ? "scatter" : "gather") +
           ": " + tableName + " (the row table) must be in HBM, found " +
           std::string(memKindName(table.mem));
  const AccessPattern &idx = inst.src1;
  if (idx.mem != MemKind::SBUF || idx.dtype != DType::I32)
    return "dma_indirect index src1 must be an SBUF i32 tile, found " +
           std::string(memKindName(idx.mem)) + " " +
           std::string(dtypeName(idx.dtype));
  if (freeElements(idx) != 1 || idx.partitionCount != chip.partitionCount)
    return "dma_indirect index src1 must be [" +
           std::to_string(chip.partitionCount) + ", 1] (one index per " +
           chipName + " partition), found [" +
           std::to_string(idx.partitionCount) + ", " +
           count(freeElements(idx)) + "]";
  if (freeElements(chip) != freeElements(table))
    return std::string(chipName) + " has " + count(freeElements(chip)) +
           " elements per partition but a row of " + tableName + " has " +
           count(freeElements(table));
  return "";
}

std::string Verifier::checkBarrier(const Instruction &inst) const {
  bool peer = inst.flags & kFlagSignalPeer;
  if (peer && p.lnc() < 2)
    return "signals the peer core (kFlagSignalPeer) but the program runs on "
           "one physical core (LNC=1)";
  if (peer && !isBarrierSemaphore(inst.signal))
    return "signals the peer core on semaphore " +
           (inst.signal == kNoSemaphore ? std::string("none")
                                        : std::to_string(inst.signal)) +
           ", which is not a barrier semaphore (" +
           std::to_string(kFirstBarrierSemaphore) + ".." +
           std::to_string(kNumSemaphores - 1) + ")";
  // At LNC=1 ids 21..31 are free for any use (isa/Isa.h).
  if (!peer && p.lnc() > 1 && inst.signal != kNoSemaphore &&
      isBarrierSemaphore(inst.signal))
    return "signals barrier semaphore " + std::to_string(inst.signal) +
           " without kFlagSignalPeer (barrier semaphores are raised only by "
           "the peer core)";
  return "";
}

llvm::Error Verifier::checkInstruction(unsigned core, Engine stream,
                                       size_t index, const Instruction &inst) {
  auto bad = [&](const std::string &msg) {
    return fail(describeInstruction(p, core, stream, index) + ": " + msg);
  };
  if (uint16_t(inst.opcode) >= kNumOpcodes)
    return bad("invalid opcode " + std::to_string(unsigned(inst.opcode)));
  std::string op(opcodeName(inst.opcode));
  if (!isImplemented(inst.opcode))
    return bad("opcode " + op + " is reserved, not implemented by this runtime");
  if (inst.engine != stream)
    return bad("instruction is for engine " +
               (uint8_t(inst.engine) < kNumEngines
                    ? std::string(engineName(inst.engine))
                    : std::to_string(unsigned(inst.engine))) +
               " but sits in the " + std::string(engineName(stream)) +
               " stream");
  if (!allowedOnEngine(inst.opcode, stream))
    return bad(op + " cannot run on the " + std::string(engineName(stream)) +
               " engine");
  if (inst.flags & ~allowedFlags(inst.opcode))
    return bad("flags 0x" + llvm::utohexstr(inst.flags) + " not valid for " + op);
  if (inst.numWaits > kMaxWaits)
    return bad(std::to_string(inst.numWaits) + " semaphore waits, at most " +
               std::to_string(kMaxWaits));
  for (unsigned i = 0; i < inst.numWaits; ++i)
    if (inst.waits[i].semaphore >= kNumSemaphores)
      return bad("wait " + std::to_string(i) + " names semaphore " +
                 std::to_string(inst.waits[i].semaphore) + ", ids are 0.." +
                 std::to_string(kNumSemaphores - 1));
  if (inst.signal != kNoSemaphore && inst.signal >= kNumSemaphores)
    return bad("signals semaphore " + std::to_string(inst.signal) +
               ", ids are 0.." + std::to_string(kNumSemaphores - 1));
  if (std::string err = checkBarrier(inst); !err.empty())
    return bad(err);
  if (inst.opcode == Opcode::Collective && core != 0)
    return bad("collective on physical core " + std::to_string(core) +
               ": core 0 issues a logical core's collectives");
  if (inst.sourceIndex != kNoSource && inst.sourceIndex >= p.sources.size())
    return bad("source index " + std::to_string(inst.sourceIndex) +
               " but the program has " + std::to_string(p.sources.size()) +
               " source locations");
  switch (inst.opcode) {
  case Opcode::Activation:
    if (inst.op0 >= kNumActFuncs)
      return bad("invalid activation function " + std::to_string(inst.op0));
    break;
  case Opcode::TensorScalar:
    if (inst.op1 >= kNumAluOps)
      return bad("invalid alu op1 " + std::to_string(inst.op1));
    [[fallthrough]];
  case Opcode::TensorTensor:
  case Opcode::TensorReduce:
    if (inst.op0 >= kNumAluOps)
      return bad("invalid alu op0 " + std::to_string(inst.op0));
    if (inst.opcode == Opcode::TensorReduce && AluOp(inst.op0) == AluOp::Bypass)
      return bad("tensor_reduce needs a reducing alu op, not bypass");
    break;
  case Opcode::TensorScan: {
    // Associative ops only (Isa.h, TensorScan).
    AluOp op = AluOp(inst.op0);
    if (op != AluOp::Add && op != AluOp::Multiply && op != AluOp::Max &&
        op != AluOp::Min)
      return bad("tensor_scan needs add, multiply, max or min, not alu " +
                 std::to_string(inst.op0));
    break;
  }
  case Opcode::Collective:
    if (inst.dmaQueue != kCollectiveQueue)
      return bad("collective on DMA queue " + std::to_string(inst.dmaQueue) +
                 ", collectives run on queue " +
                 std::to_string(kCollectiveQueue));
    break;
  case Opcode::DmaCopy:
  case Opcode::DmaIndirect:
    // 16 queues per DMA engine (HARDWARE.md, DMA row).
    if (inst.dmaQueue >= 16)
      return bad("DMA queue " + std::to_string(inst.dmaQueue) + ", at most 15");
    break;
  default:
    break;
  }
  std::string err = checkOperands(inst);
  if (err.empty())
    err = checkShapes(inst);
  if (!err.empty())
    return bad(err);
  return llvm::Error::success();
}

llvm::Error Verifier::checkAllocations() {
  // Each physical core has its own SBUF, PSUM and streams.
  std::array<uint64_t, kMaxLnc> instructions{};
  for (unsigned c = 0; c < p.lnc(); ++c)
    for (const auto &stream : p.coreStreams(c))
      instructions[c] += stream.size();
  // Live tiles of each space by address, swept in order of first use.
  std::vector<size_t> order(p.allocations.size());
  for (size_t i = 0; i < order.size(); ++i)
    order[i] = i;
  for (size_t i = 0; i < p.allocations.size(); ++i) {
    const Allocation &a = p.allocations[i];
    std::string ctx = "allocation " + std::to_string(i) + " (" + spaceName(a.space) + ")";
    if (uint8_t(a.space) > uint8_t(Allocation::Space::Psum))
      return fail(ctx + ": invalid memory space " + std::to_string(unsigned(a.space)));
    if (a.core >= p.lnc())
      return fail(ctx + ": on physical core " + std::to_string(a.core) +
                  " but the program spans " + std::to_string(p.lnc()));
    const EngineStreams &streams = p.coreStreams(a.core);
    bool psum = a.space == Allocation::Space::Psum;
    uint64_t capacity = psum ? m.psumPartitionBytes : m.sbufPartitionBytes;
    if (a.partitions == 0 || a.partitions > m.numPartitions)
      return fail(ctx + ": " + std::to_string(a.partitions) + " partitions, the " +
                  spaceName(a.space) + " has " + std::to_string(m.numPartitions));
    if (a.bytes == 0 || a.address > capacity || a.bytes > capacity - a.address)
      return fail(ctx + ": bytes [" + std::to_string(a.address) + ", " +
                  str(i128(a.address) + i128(a.bytes)) + ") per partition, outside the " +
                  std::to_string(capacity) + " bytes of each " + spaceName(a.space) +
                  " partition");
    // A matmul accumulation group stays in one 2 KiB bank; a larger tile
    // takes whole banks (HARDWARE.md, PSUM row).
    uint64_t bank = m.psumBankBytes;
    if (psum && (a.bytes <= bank ? a.address / bank != (a.address + a.bytes - 1) / bank
                                 : a.address % bank != 0))
      return fail(ctx + ": bytes [" + std::to_string(a.address) + ", " +
                  std::to_string(a.address + a.bytes) + ") cross a " + std::to_string(bank) +
                  "-byte PSUM bank boundary");
    if (a.first > a.last || a.last >= instructions[a.core])
      return fail(ctx + ": live range " + std::to_string(a.first) + ".." +
                  std::to_string(a.last) + " outside the " +
                  (p.lnc() > 1 ? std::to_string(instructions[a.core]) +
                                     " instructions of core " + std::to_string(a.core)
                               : "program's " + std::to_string(instructions[0]) +
                                     " instructions"));
    for (const InstructionRef &at : {a.firstAt, a.lastAt}) {
      size_t e = size_t(at.engine);
      if (e >= kNumEngines || at.index >= streams[e].size())
        return fail(ctx + ": names instruction " + std::to_string(at.index) + " of the " +
                    (e < kNumEngines ? std::string(engineName(at.engine)) : "?") +
                    " stream, which has " +
                    std::to_string(e < kNumEngines ? streams[e].size() : 0));
    }
    // An instruction's place in its stream is at most its place in the
    // program (the streams interleaved).
    if (a.firstAt.index > a.first || a.lastAt.index > a.last)
      return fail(ctx + ": stream positions " + std::to_string(a.firstAt.index) + ", " +
                  std::to_string(a.lastAt.index) + " lie past program positions " +
                  std::to_string(a.first) + ", " + std::to_string(a.last));
  }
  std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) {
    return p.allocations[x].first < p.allocations[y].first;
  });
  // Live tiles are pairwise disjoint, so a new one need only be compared
  // with its neighbours by address.
  // Per (core, space): each physical core has its own SBUF and PSUM.
  std::map<uint64_t, size_t> live[2 * kMaxLnc]; // address -> allocation
  using Expiry = std::pair<uint64_t, size_t>; // (last, allocation)
  std::priority_queue<Expiry, std::vector<Expiry>, std::greater<Expiry>> ends[2 * kMaxLnc];
  for (size_t i : order) {
    const Allocation &a = p.allocations[i];
    size_t memory = 2 * size_t(a.core) + size_t(a.space);
    std::map<uint64_t, size_t> &map = live[memory];
    auto &expiring = ends[memory];
    while (!expiring.empty() && expiring.top().first < a.first) {
      map.erase(p.allocations[expiring.top().second].address);
      expiring.pop();
    }
    auto next = map.lower_bound(a.address);
    const Allocation *clash = nullptr;
    size_t other = 0;
    if (next != map.end() && next->first < a.address + a.bytes)
      clash = &p.allocations[other = next->second];
    else if (next != map.begin()) {
      auto prev = std::prev(next);
      const Allocation &b = p.allocations[prev->second];
      if (b.address + b.bytes > a.address)
        clash = &p.allocations[other = prev->second];
    }
    if (clash)
      return fail("allocation " + std::to_string(i) + " (" + spaceName(a.space) + ", bytes [" +
                  std::to_string(a.address) + ", " + std::to_string(a.address + a.bytes) +
                  "), live " + std::to_string(a.first) + ".." + std::to_string(a.last) +
                  ") overlaps allocation " + std::to_string(other) + " (bytes [" +
                  std::to_string(clash->address) + ", " +
                  std::to_string(clash->address + clash->bytes) + "), live " +
                  std::to_string(clash->first) + ".." + std::to_string(clash->last) +
                  ") while both are live");
    map.emplace(a.address, i);
    expiring.push({a.last, i});
  }
  return llvm::Error::success();
}

llvm::Error Verifier::run() {
  if (p.lnc() > m.maxLnc)
    return fail("the program spans " + std::to_string(p.lnc()) +
                " physical cores (LNC=" + std::to_string(p.lnc()) + ") but " +
                m.name + "'s logical cores have at most " +
                std::to_string(m.maxLnc));
  if (llvm::Error e = checkRegions())
    return e;
  if (llvm::Error e = checkAllocations())
    return e;
  for (unsigned c = 0; c < p.lnc(); ++c)
    for (unsigned e = 0; e < kNumEngines; ++e) {
      const auto &stream = p.coreStreams(c)[e];
      for (size_t i = 0; i < stream.size(); ++i)
        if (llvm::Error err = checkInstruction(c, Engine(e), i, stream[i]))
          return err;
    }
  return llvm::Error::success();
}

} // namespace

llvm::Error verifyProgram(const Program &program) {
  std::optional<MachineModel> model = lookupMachineModel(program.target);
  if (!model) {
    return fail("unknown target '" + program.target +
                "' (known: " + knownTargetNames() + ")");
  }
  std::string ctx = program.name.empty() ? "" : "program '" + program.name + "': ";
  if (llvm::Error e = Verifier(program, *model).run())
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   ctx + llvm::toString(std::move(e)));
  return llvm::Error::success();
}

} // namespace trnc
