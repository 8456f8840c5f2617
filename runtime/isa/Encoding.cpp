//===- Encoding.cpp - Instruction word encode/decode and names -------------===//
//
// The 320-byte instruction word, written field by field in little-endian
// order so the artifact does not depend on the host's struct layout. Every
// byte not listed below is reserved and written as zero.
//
//   header (64 bytes)
//     0  u16 opcode        2  u8 engine       3  u8 flags
//     4  u8  op0           5  u8 op1          6  u8 numWaits   7 u8 signal
//     8  u16 dmaQueue     10  u16 reserved   12  u32 sourceIndex
//    16  f32 imm0         20  f32 imm1
//    24  4 x { u8 semaphore, 3 reserved, u32 value }            (32 bytes)
//    56  i32 partitionCoef 60  i32 freeCoef
//   access patterns: dst at 64, src0 at 144, src1 at 224 (80 bytes each)
//     0  u8 mem  1 u8 dtype  2 u8 numDims  3 reserved
//     4  u16 partitionStart  6 u16 partitionCount
//     8  u32 region         12 u32 reserved
//    16  u64 offset         24 i64 partitionStride
//    32  4 x i64 stride     64 4 x u32 count
//   src2 at 304 (16 bytes; a [P, 1] pattern: free dims [1] stride 1)
//     0  u8 mem  1 u8 dtype  2 u16 partitionStart  4 u16 partitionCount
//     6  reserved           8 u32 offset          12 reserved
//
//===----------------------------------------------------------------------===//

#include "isa/Isa.h"

#include <cstring>

namespace trnc::isa {
namespace {

constexpr size_t kWaitsOffset = 24;
constexpr size_t kPatternOffsets[3] = {64, 144, 224};
constexpr size_t kPatternBytes = 80;
constexpr size_t kSrc2Offset = 304, kSrc2Bytes = 16;
static_assert(kPatternOffsets[2] + kPatternBytes <= kSrc2Offset &&
                  kSrc2Offset + kSrc2Bytes <= kInstructionBytes,
              "instruction word overflow");

void putU8(uint8_t *p, uint8_t v) { p[0] = v; }
void putU16(uint8_t *p, uint16_t v) {
  p[0] = uint8_t(v);
  p[1] = uint8_t(v >> 8);
}
void putU32(uint8_t *p, uint32_t v) {
  for (int i = 0; i < 4; ++i)
    p[i] = uint8_t(v >> (8 * i));
}
void putU64(uint8_t *p, uint64_t v) {
  for (int i = 0; i < 8; ++i)
    p[i] = uint8_t(v >> (8 * i));
}
void putF32(uint8_t *p, float v) {
  uint32_t bits;
  std::memcpy(&bits, &v, 4);
  putU32(p, bits);
}

uint16_t getU16(const uint8_t *p) { return uint16_t(p[0] | (p[1] << 8)); }
uint32_t getU32(const uint8_t *p) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i)
    v |= uint32_t(p[i]) << (8 * i);
  return v;
}
uint64_t getU64(const uint8_t *p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i)
    v |= uint64_t(p[i]) << (8 * i);
  return v;
}
float getF32(const uint8_t *p) {
  uint32_t bits = getU32(p);
  float v;
  std::memcpy(&v, &bits, 4);
  return v;
}

void encodePattern(const AccessPattern &ap, uint8_t *p) {
  putU8(p + 0, uint8_t(ap.mem));
  putU8(p + 1, uint8_t(ap.dtype));
  putU8(p + 2, ap.numDims);
  putU16(p + 4, ap.partitionStart);
  putU16(p + 6, ap.partitionCount);
  putU32(p + 8, ap.region);
  putU64(p + 16, ap.offset);
  putU64(p + 24, uint64_t(ap.partitionStride));
  for (unsigned i = 0; i < kMaxFreeDims; ++i) {
    putU64(p + 32 + 8 * i, uint64_t(ap.stride[i]));
    putU32(p + 64 + 4 * i, ap.count[i]);
  }
}

AccessPattern decodePattern(const uint8_t *p) {
  AccessPattern ap;
  ap.mem = MemKind(p[0]);
  ap.dtype = DType(p[1]);
  ap.numDims = p[2];
  ap.partitionStart = getU16(p + 4);
  ap.partitionCount = getU16(p + 6);
  ap.region = getU32(p + 8);
  ap.offset = getU64(p + 16);
  ap.partitionStride = int64_t(getU64(p + 24));
  for (unsigned i = 0; i < kMaxFreeDims; ++i) {
    ap.stride[i] = int64_t(getU64(p + 32 + 8 * i));
    ap.count[i] = getU32(p + 64 + 4 * i);
  }
  return ap;
}

/// Byte ranges [begin, end) of the word that carry fields; all else reserved.
struct Span {
  size_t begin, end;
};
constexpr Span kPatternFieldSpans[] = {{0, 3}, {4, 12}, {16, 80}};

} // namespace

void encode(const Instruction &inst, uint8_t *out) {
  std::memset(out, 0, kInstructionBytes);
  putU16(out + 0, uint16_t(inst.opcode));
  putU8(out + 2, uint8_t(inst.engine));
  putU8(out + 3, inst.flags);
  putU8(out + 4, inst.op0);
  putU8(out + 5, inst.op1);
  putU8(out + 6, inst.numWaits);
  putU8(out + 7, inst.signal);
  putU16(out + 8, inst.dmaQueue);
  putU32(out + 12, inst.sourceIndex);
  putF32(out + 16, inst.imm0);
  putF32(out + 20, inst.imm1);
  putU32(out + 56, uint32_t(inst.partitionCoef));
  putU32(out + 60, uint32_t(inst.freeCoef));
  for (unsigned i = 0; i < kMaxWaits; ++i) {
    uint8_t *w = out + kWaitsOffset + 8 * i;
    putU8(w, inst.waits[i].semaphore);
    putU32(w + 4, inst.waits[i].value);
  }
  encodePattern(inst.dst, out + kPatternOffsets[0]);
  encodePattern(inst.src0, out + kPatternOffsets[1]);
  encodePattern(inst.src1, out + kPatternOffsets[2]);
  if (inst.src2.present()) {
    uint8_t *p = out + kSrc2Offset;
    putU8(p, uint8_t(inst.src2.mem));
    putU8(p + 1, uint8_t(inst.src2.dtype));
    putU16(p + 2, inst.src2.partitionStart);
    putU16(p + 4, inst.src2.partitionCount);
    putU32(p + 8, uint32_t(inst.src2.offset));
  }
}

Instruction decode(const uint8_t *in) {
  Instruction inst;
  inst.opcode = Opcode(getU16(in + 0));
  inst.engine = Engine(in[2]);
  inst.flags = in[3];
  inst.op0 = in[4];
  inst.op1 = in[5];
  inst.numWaits = in[6];
  inst.signal = in[7];
  inst.dmaQueue = getU16(in + 8);
  inst.sourceIndex = getU32(in + 12);
  inst.imm0 = getF32(in + 16);
  inst.imm1 = getF32(in + 20);
  inst.partitionCoef = int32_t(getU32(in + 56));
  inst.freeCoef = int32_t(getU32(in + 60));
  for (unsigned i = 0; i < kMaxWaits; ++i) {
    const uint8_t *w = in + kWaitsOffset + 8 * i;
    inst.waits[i].semaphore = w[0];
    inst.waits[i].value = getU32(w + 4);
  }
  inst.dst = decodePattern(in + kPatternOffsets[0]);
  inst.src0 = decodePattern(in + kPatternOffsets[1]);
  inst.src1 = decodePattern(in + kPatternOffsets[2]);
  const uint8_t *p = in + kSrc2Offset;
  inst.src2.mem = MemKind(p[0]);
  if (inst.src2.present()) {
    inst.src2.dtype = DType(p[1]);
    inst.src2.partitionStart = getU16(p + 2);
    inst.src2.partitionCount = getU16(p + 4);
    inst.src2.offset = getU32(p + 8);
    inst.src2.numDims = 1;
    inst.src2.stride[0] = 1;
    inst.src2.count[0] = 1;
  }
  return inst;
}

std::optional<size_t> firstNonZeroReservedByte(const uint8_t *word) {
  // Mark every byte that carries a field, then report the first other byte
  // that is not zero.
  bool used[kInstructionBytes] = {};
  auto mark = [&](size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i)
      used[i] = true;
  };
  mark(0, 10);
  mark(12, 24);
  mark(56, 64);
  for (unsigned i = 0; i < kMaxWaits; ++i) {
    size_t w = kWaitsOffset + 8 * i;
    mark(w, w + 1);
    mark(w + 4, w + 8);
  }
  for (size_t base : kPatternOffsets)
    for (const Span &s : kPatternFieldSpans)
      mark(base + s.begin, base + s.end);
  mark(kSrc2Offset, kSrc2Offset + 6);
  mark(kSrc2Offset + 8, kSrc2Offset + 12);
  for (size_t i = 0; i < kInstructionBytes; ++i)
    if (!used[i] && word[i] != 0)
      return i;
  return std::nullopt;
}

std::string_view engineName(Engine e) {
  switch (e) {
  case Engine::Tensor: return "tensor";
  case Engine::Vector: return "vector";
  case Engine::Scalar: return "scalar";
  case Engine::GpSimd: return "gpsimd";
  case Engine::Dma: return "dma";
  }
  return "<bad engine>";
}

std::string_view opcodeName(Opcode o) {
  switch (o) {
  case Opcode::Nop: return "nop";
  case Opcode::DmaCopy: return "dma_copy";
  case Opcode::Matmul: return "matmul";
  case Opcode::Activation: return "activation";
  case Opcode::TensorTensor: return "tensor_tensor";
  case Opcode::TensorScalar: return "tensor_scalar";
  case Opcode::TensorReduce: return "tensor_reduce";
  case Opcode::TensorCopy: return "tensor_copy";
  case Opcode::Memset: return "memset";
  case Opcode::CopyPredicated: return "copy_predicated";
  case Opcode::TensorScan: return "tensor_scan";
  case Opcode::Random: return "random";
  case Opcode::Iota: return "iota";
  case Opcode::AffineSelect: return "affine_select";
  case Opcode::DmaIndirect: return "dma_indirect";
  case Opcode::Collective: return "collective";
  }
  return "<bad opcode>";
}

std::string_view collectiveKindName(CollectiveKind k) {
  switch (k) {
  case CollectiveKind::AllReduce: return "all_reduce";
  case CollectiveKind::AllGather: return "all_gather";
  case CollectiveKind::ReduceScatter: return "reduce_scatter";
  case CollectiveKind::AllToAll: return "all_to_all";
  case CollectiveKind::Broadcast: return "broadcast";
  }
  return "<bad collective>";
}

std::string_view reduceOpName(ReduceOp r) {
  switch (r) {
  case ReduceOp::None: return "none";
  case ReduceOp::Sum: return "sum";
  case ReduceOp::Avg: return "avg";
  case ReduceOp::Product: return "product";
  case ReduceOp::Min: return "min";
  case ReduceOp::Max: return "max";
  }
  return "<bad reduce op>";
}

std::string_view dtypeName(DType t) {
  switch (t) {
  case DType::F32: return "f32";
  case DType::BF16: return "bf16";
  case DType::F16: return "f16";
  case DType::I32: return "i32";
  case DType::U8: return "u8";
  case DType::I64: return "i64";
  case DType::Bool: return "bool";
  }
  return "<bad dtype>";
}

std::string_view memKindName(MemKind m) {
  switch (m) {
  case MemKind::None: return "none";
  case MemKind::SBUF: return "sbuf";
  case MemKind::PSUM: return "psum";
  case MemKind::HBM: return "hbm";
  }
  return "<bad memory>";
}

std::string_view aluOpName(AluOp o) {
  switch (o) {
  case AluOp::Bypass: return "bypass";
  case AluOp::Add: return "add";
  case AluOp::Subtract: return "subtract";
  case AluOp::Multiply: return "multiply";
  case AluOp::Divide: return "divide";
  case AluOp::Max: return "max";
  case AluOp::Min: return "min";
  case AluOp::Pow: return "pow";
  case AluOp::IsEqual: return "is_equal";
  case AluOp::NotEqual: return "not_equal";
  case AluOp::IsGt: return "is_gt";
  case AluOp::IsGe: return "is_ge";
  case AluOp::IsLt: return "is_lt";
  case AluOp::IsLe: return "is_le";
  case AluOp::LogicalAnd: return "logical_and";
  case AluOp::LogicalOr: return "logical_or";
  case AluOp::LogicalXor: return "logical_xor";
  case AluOp::BitwiseAnd: return "bitwise_and";
  case AluOp::BitwiseOr: return "bitwise_or";
  case AluOp::BitwiseXor: return "bitwise_xor";
  case AluOp::Remainder: return "remainder";
  case AluOp::Fmod: return "fmod";
  case AluOp::FloorDivide: return "floor_divide";
  }
  return "<bad alu op>";
}

std::string_view actFuncName(ActFunc f) {
  switch (f) {
  case ActFunc::Copy: return "copy";
  case ActFunc::Relu: return "relu";
  case ActFunc::Exp: return "exp";
  case ActFunc::Log: return "log";
  case ActFunc::Tanh: return "tanh";
  case ActFunc::Sigmoid: return "sigmoid";
  case ActFunc::Gelu: return "gelu";
  case ActFunc::GeluTanh: return "gelu_tanh";
  case ActFunc::Silu: return "silu";
  case ActFunc::Sqrt: return "sqrt";
  case ActFunc::Rsqrt: return "rsqrt";
  case ActFunc::Reciprocal: return "reciprocal";
  case ActFunc::Square: return "square";
  case ActFunc::Abs: return "abs";
  case ActFunc::Sign: return "sign";
  case ActFunc::Erf: return "erf";
  case ActFunc::Sin: return "sin";
  case ActFunc::Softplus: return "softplus";
  case ActFunc::Cos: return "cos";
  case ActFunc::Expm1: return "expm1";
  case ActFunc::Log1p: return "log1p";
  case ActFunc::Mish: return "mish";
  case ActFunc::Floor: return "floor";
  case ActFunc::Ceil: return "ceil";
  case ActFunc::Round: return "round";
  case ActFunc::Trunc: return "trunc";
  case ActFunc::IsNan: return "is_nan";
  case ActFunc::IsInf: return "is_inf";
  case ActFunc::GeluDx: return "gelu_dx";
  case ActFunc::SiluDx: return "silu_dx";
  }
  return "<bad activation>";
}

} // namespace trnc::isa
