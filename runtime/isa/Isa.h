//===- Isa.h - The trnc NeuronCore instruction set ----------------*- C++ -*-===//
//
// The binary instruction format shared by the compiler's emitter and the
// runtime's loader and simulator. One fixed-width word per instruction; one
// stream of words per engine (Tensor, Vector, Scalar, GpSimd, DMA). Engines
// synchronise through counting semaphores: an instruction waits until each
// named semaphore has reached a value, and on completion increments its
// `signal` semaphore. Operands are access patterns into SBUF, PSUM or an HBM
// region (see HARDWARE.md, "How a core executes").
//
// Semaphore ids (trnc's scheme, shared by the scheduling pass, the race
// checker and the tests through the helpers below): a compute engine's
// instructions signal semaphore = engine number (0..3), since an engine
// completes in program order. DMA instructions issue in stream order but
// run on 16 queues that overlap and complete out of order; each queue is
// in order, so a DMA on queue q signals kDmaQueueSemaphoreBase + q (5..20).
// Id 4 is unused; 21..31 are free in a one-core program and the cross-core
// barrier semaphores of a program over two physical cores (LNC=2, below).
// Instruction k (0-based) of such an
// "ordered agent" is complete once its semaphore reaches k + 1. Waits that
// do not fit kMaxWaits go on wait-only Nop instructions placed just before
// on the same engine (no operands, no signal).
//
// This header is torch-free and MLIR-free on purpose: the simulator, the
// C++ runner and the emitter all include it.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace trnc::isa {

/// Bumped whenever the encoding of an instruction word changes. 2:
/// tensor_scalar's per-partition operand1 (src2, in bytes 304..316).
constexpr uint32_t kIsaVersion = 2;

/// Size of one encoded instruction word in bytes (fixed width).
constexpr size_t kInstructionBytes = 320;

enum class Engine : uint8_t { Tensor = 0, Vector = 1, Scalar = 2, GpSimd = 3, Dma = 4 };
constexpr unsigned kNumEngines = 5;

enum class MemKind : uint8_t { None = 0, SBUF = 1, PSUM = 2, HBM = 3 };

/// Element types. Engines compute fp32 internally and cast on read/write;
/// integer results are exact while |value| <= 2^24 (the fp32 datapath).
/// I64 exists only in HBM, as the HBM side of a DmaCopy whose other side is
/// I32: the DMA narrows int64 -> int32 saturating to [INT32_MIN, INT32_MAX]
/// and widens int32 -> int64 exactly (torch's int64 tensors are computed as
/// int32; docs/decompositions.md, "dtypes"). Bool is one byte holding 0 or
/// 1 (NKI's bool_): a write stores (value != 0), so NaN -> 1 as in torch.
enum class DType : uint8_t {
  F32 = 0, BF16 = 1, F16 = 2, I32 = 3, U8 = 4, I64 = 5, Bool = 6,
};
constexpr unsigned kNumDTypes = 7;
constexpr bool isIntegerDType(DType t) {
  return t == DType::I32 || t == DType::U8 || t == DType::I64 ||
         t == DType::Bool;
}

enum class Opcode : uint16_t {
  Nop = 0,
  /// DMA: dst = cast(src0). Either side SBUF, PSUM or HBM. Both patterns are
  /// walked in row-major order (partition dim outermost) and must cover the
  /// same number of elements.
  DmaCopy = 1,
  /// Tensor: dst(PSUM, f32)[M parts, N] (+)= src0[K parts, M]^T @ src1[K parts, N].
  /// K <= 128, M <= 128, N <= 512 (moving free size). Flag kFlagAccumulate adds
  /// into dst; without it the first write of an accumulation group overwrites.
  /// kFlagTranspose marks a Tensor Engine transpose (src1 an identity).
  Matmul = 2,
  /// Scalar: dst = act<op0>(src0 * imm0 + bias) where bias is src1 (a
  /// per-partition [P, 1] pattern) when present, else imm1.
  Activation = 3,
  /// Vector/GpSimd: dst = src0 <alu op0> src1, elementwise.
  TensorTensor = 4,
  /// Vector/Scalar/GpSimd: dst = (src0 <op0> imm0) <op1> imm1. op1 may be
  /// Bypass. kFlagReverse0/1 swap the operands of op0/op1 (imm op x). With
  /// src1 (a per-partition [P, 1] pattern) op0's operand is that
  /// partition's value instead of imm0; with src2, op1's instead of imm1
  /// (NKI's tensor_scalar: both operands may be [P, 1] vectors, at the cost
  /// of one).
  TensorScalar = 5,
  /// Vector: reduce the innermost free dim of src0 with alu op0; dst has the
  /// same partitions and the remaining free dims (or one dim of count 1).
  TensorReduce = 6,
  /// Vector/Scalar/GpSimd: dst = cast(src0).
  TensorCopy = 7,
  /// Vector/GpSimd: dst = imm0.
  Memset = 8,

  // Reserved for the operator-coverage work; the verifier refuses each one
  // ("reserved, not implemented by this runtime") until its semantics land.
  /// Vector/GpSimd: dst[i] = src0[i] != 0 ? src1[i] : dst[i] (predicated
  /// copy: `where`). Reads dst: it must have been written earlier on the
  /// same engine (program order), which is how trnc emits it.
  CopyPredicated = 9,
  /// Vector: inclusive scan of src0 along its innermost free dim with op0.
  TensorScan = 10,
  /// GpSimd: dst[p, f] = uniform [0, 1) from the counter-based generator
  /// Philox-4x32-10 (Salmon et al., "Parallel Random Numbers: As Easy as 1,
  /// 2, 3", SC'11; Random123). src0 is the seed: an SBUF i32 tile [P, 2] on
  /// dst's partitions, read when the instruction runs; key = (src0[p, 0],
  /// src0[p, 1]) as uint32. counter = (n mod 2^32, n >> 32, 0, 0), n = imm0 *
  /// 2^24 + imm1 + partitionCoef * p + freeCoef * f in exact 64-bit integer
  /// arithmetic (imm0, imm1 integers in [0, 2^24)), p the partition within
  /// dst and f its row-major free index: each element's value depends only
  /// on (seed, n), never on tiling. With x the first output word and m the
  /// significand bits of dst's dtype (24 f32, 11 f16, 8 bf16), dst =
  /// (x >> (32 - m)) * 2^-m, exact in that dtype (so never 1.0).
  Random = 11,
  /// GpSimd: dst[p, f] = imm0 + imm1 * (partitionCoef * p + freeCoef * f),
  /// p the partition within dst, f the row-major free index (exact integer
  /// arithmetic, then one fp32 multiply-add).
  Iota = 12,
  /// GpSimd: dst[p, f] = (imm1 + partitionCoef * p + freeCoef * f <op0> 0)
  /// ? src0[p, f] : imm0, op0 a comparison (triangular and causal masks).
  AffineSelect = 13,
  /// Dma: gather or scatter rows addressed by an index tile. src1 is an
  /// SBUF i32 pattern [P, 1] (one index per partition), read when the DMA
  /// runs. The HBM side is a table of N rows: partitionCount = N,
  /// partitionStride = the row stride, free dims = one row of D elements.
  /// Gather (no flag): dst (SBUF, P partitions x D) partition p =
  ///   cast(HBM src0 row index[p]), or zeros if index[p] is outside [0, N).
  /// Scatter (kFlagScatter): for p = 0..P-1 in order, if 0 <= index[p] < N,
  ///   HBM dst row index[p] = cast(src0 partition p) (last writer wins), or
  ///   with kFlagAccumulate = cast(fp32(row) + fp32(src0 partition p));
  ///   out-of-range partitions are dropped. One descriptor per row.
  ///   kFlagIdempotent (scatter without accumulate): every row it writes
  ///   gets the bytes any other idempotent scatter writes there, so two of
  ///   them need no order between them (a race checker does not report
  ///   them; a later access still waits for both).
  DmaIndirect = 14,
  /// Dma (on its queue, like a transfer): a collective across the ranks of
  /// a replica group (op0 CollectiveKind, op1 ReduceOp, partitionCoef the
  /// group size, freeCoef the collective's id in its graph, flags the
  /// widest link the group spans: kFlagSpanInstance / kFlagSpanCluster,
  /// neither = the cores of one chip). src0 and dst are contiguous HBM
  /// runs of one dtype; element counts follow the kind (all_gather: dst =
  /// group x src0; reduce_scatter: src0 = group x dst; else equal). The
  /// simulator hands the bytes to the host's CollectiveHook
  /// (sim/Collectives.h), which moves them through the user's process
  /// group, and signals the queue's semaphore when the modelled ring
  /// algorithm would finish; consumers wait on that semaphore (wait_tensor).
  Collective = 15,
};
constexpr unsigned kNumOpcodes = 16;

/// What a Collective instruction does (op0).
enum class CollectiveKind : uint8_t {
  AllReduce = 0, AllGather = 1, ReduceScatter = 2, AllToAll = 3,
  Broadcast = 4,
};
constexpr unsigned kNumCollectiveKinds = 5;
/// The reduction of an AllReduce / ReduceScatter (op1; None otherwise).
enum class ReduceOp : uint8_t {
  None = 0, Sum = 1, Avg = 2, Product = 3, Min = 4, Max = 5,
};
constexpr unsigned kNumReduceOps = 6;

/// ALU operations of the Vector/GpSimd engines (and Scalar's tensor_scalar).
/// Comparisons and logical ops produce 1.0 or 0.0; max/min propagate NaN.
/// Bitwise ops act on the operands as int32 (truncated toward zero).
/// Remainder takes the sign of the divisor (Python %), Fmod that of the
/// dividend (C fmod); FloorDivide is torch's floor division (div_floor).
enum class AluOp : uint8_t {
  Bypass = 0, Add, Subtract, Multiply, Divide, Max, Min, Pow,
  IsEqual, NotEqual, IsGt, IsGe, IsLt, IsLe, LogicalAnd, LogicalOr,
  LogicalXor, BitwiseAnd, BitwiseOr, BitwiseXor, Remainder, Fmod,
  FloorDivide,
};
constexpr unsigned kNumAluOps = 23;

/// Activation functions of the Scalar engine (the NKI activation table,
/// HARDWARE.md "Instructions"). Round is half to even; IsNan/IsInf give
/// 1.0 or 0.0; Relu propagates NaN.
enum class ActFunc : uint8_t {
  Copy = 0, Relu, Exp, Log, Tanh, Sigmoid, Gelu, GeluTanh, Silu, Sqrt, Rsqrt,
  Reciprocal, Square, Abs, Sign, Erf, Sin, Softplus,
  Cos, Expm1, Log1p, Mish, Floor, Ceil, Round, Trunc, IsNan, IsInf,
  // Derivatives (NKI's gelu_dx, silu_dx): gelu'(x) = Phi(x) + x phi(x),
  // silu'(x) = s (1 + x (1 - s)) with s = sigmoid(x).
  GeluDx, SiluDx,
};
constexpr unsigned kNumActFuncs = 30;

/// Instruction flag bits.
constexpr uint8_t kFlagAccumulate = 1 << 0; // Matmul: add into PSUM; DmaIndirect scatter: add rows.
constexpr uint8_t kFlagReverse0 = 1 << 1;   // TensorScalar: imm0 op0 x.
constexpr uint8_t kFlagReverse1 = 1 << 2;   // TensorScalar: imm1 op1 y.
/// DmaIndirect scatter: writes what every other idempotent scatter writes to
/// the same rows (see DmaIndirect); the bit is TensorScalar's kFlagReverse0.
constexpr uint8_t kFlagIdempotent = 1 << 1;
constexpr uint8_t kFlagScatter = 1 << 3;    // DmaIndirect: scatter, not gather.
/// Matmul: the moving operand is an identity tile, so dst is the transpose of
/// the stationary operand (layout work, not model arithmetic). Bit-exact
/// where the target's Tensor Engine transposes bit-exactly (trn2 on), else
/// executed as the product; profiles count its FLOPs in HFU, not in MFU.
constexpr uint8_t kFlagTranspose = 1 << 4;
/// Collective: the group spans chips of one instance (NeuronLink) ...
constexpr uint8_t kFlagSpanInstance = 1 << 5;
/// ... or instances (EFA). Neither: the cores of one chip.
constexpr uint8_t kFlagSpanCluster = 1 << 6;

/// The DMA queue every Collective runs on: one in-order queue, so every
/// rank issues its collectives in one order (the process groups need it),
/// and the compiler keeps other transfers off it.
constexpr uint16_t kCollectiveQueue = 15;

/// Opcodes that run on a DMA queue (they transfer data and signal the
/// queue's semaphore); anything else on the Dma stream is a Nop.
constexpr bool isDmaTransfer(Opcode op) {
  return op == Opcode::DmaCopy || op == Opcode::DmaIndirect ||
         op == Opcode::Collective;
}

constexpr unsigned kMaxFreeDims = 4;
constexpr unsigned kMaxWaits = 4;
constexpr unsigned kNumSemaphores = 32;
constexpr uint8_t kNoSemaphore = 0xff;
constexpr uint32_t kNoSource = 0xffffffffu;

/// Alignment of every HBM scratch region's offset in the program's scratch
/// arena (the compiler packs regions there, trnc-pack-scratch; the artifact
/// reader refuses other offsets): a DMA descriptor's natural alignment.
constexpr uint64_t kScratchAlignment = 64;

constexpr unsigned kNumDmaQueues = 16; // per DMA engine (HARDWARE.md, DMA row)
constexpr uint8_t kDmaQueueSemaphoreBase = 5;
static_assert(kDmaQueueSemaphoreBase + kNumDmaQueues <= kNumSemaphores);

/// Ordered agents: units that complete their instructions in order, i.e.
/// the four compute engines (0..3) and the DMA queues (4 + queue).
constexpr unsigned kNumOrderedAgents = 4 + kNumDmaQueues;
constexpr unsigned orderedAgent(Engine e, unsigned dmaQueue) {
  return e == Engine::Dma ? 4 + dmaQueue % kNumDmaQueues : unsigned(e);
}
/// The semaphore an instruction of `agent` signals on completion.
constexpr uint8_t agentSemaphore(unsigned agent) {
  return agent < 4 ? uint8_t(agent)
                   : uint8_t(kDmaQueueSemaphoreBase + (agent - 4));
}
/// The semaphore an instruction of `e` (on `dmaQueue` for DMA) signals.
constexpr uint8_t completionSemaphore(Engine e, unsigned dmaQueue) {
  return agentSemaphore(orderedAgent(e, dmaQueue));
}

/// Cross-core barriers (LNC=2: one program over two physical cores, each
/// with its own engines and semaphores). In such a program semaphores
/// 21..31 are barrier semaphores: only a Nop flagged kFlagSignalPeer raises
/// one, and it raises
/// the *other* physical core's copy; a core waits on its own copy. A
/// barrier is such a Nop on each side (or on the writing side only, for a
/// one-way order) and a wait on the reading side. Every other semaphore is
/// per core and never crosses.
constexpr uint8_t kFirstBarrierSemaphore = 21;
constexpr bool isBarrierSemaphore(uint8_t s) {
  return s >= kFirstBarrierSemaphore && s < kNumSemaphores;
}
/// Nop only: its signal goes to the peer physical core's barrier semaphore.
constexpr uint8_t kFlagSignalPeer = 1 << 7;

/// Where an operand lives and how it is walked.
/// SBUF/PSUM: partitions [partitionStart, partitionStart + partitionCount),
///   each walked from byte `offset` by the free dims (strides in elements).
///   Partitions are consecutive (no partition stride on chip).
/// HBM: `region` indexes the artifact's region table; the outer dim has
///   `partitionCount` rows `partitionStride` elements apart, starting at byte
///   `offset`, each walked by the free dims.
struct AccessPattern {
  MemKind mem = MemKind::None; // None: the operand is absent.
  DType dtype = DType::F32;
  uint8_t numDims = 0; // free dims used, 1..kMaxFreeDims
  uint16_t partitionStart = 0;
  uint16_t partitionCount = 0;
  uint32_t region = 0;
  uint64_t offset = 0;
  int64_t partitionStride = 0;
  std::array<int64_t, kMaxFreeDims> stride{};
  std::array<uint32_t, kMaxFreeDims> count{};

  bool present() const { return mem != MemKind::None; }
  /// Elements per partition (product of the free counts).
  uint64_t freeElements() const {
    uint64_t n = 1;
    for (unsigned i = 0; i < numDims; ++i)
      n *= count[i];
    return n;
  }
  uint64_t numElements() const { return freeElements() * partitionCount; }
};

/// Wait until semaphore `semaphore` >= `value`.
struct SemaphoreWait {
  uint8_t semaphore = kNoSemaphore;
  uint32_t value = 0;
};

struct Instruction {
  Opcode opcode = Opcode::Nop;
  Engine engine = Engine::Vector;
  uint8_t flags = 0;
  uint8_t op0 = 0; // AluOp or ActFunc, by opcode
  uint8_t op1 = 0; // AluOp (TensorScalar)
  uint8_t numWaits = 0;
  uint8_t signal = kNoSemaphore; // incremented by 1 when this instruction completes
  uint16_t dmaQueue = 0;         // DMA queue (0..15) of a DMA transfer
  uint32_t sourceIndex = kNoSource; // index into the artifact's source table
  float imm0 = 0.0f;
  float imm1 = 0.0f;
  int32_t partitionCoef = 0; // Iota / AffineSelect / Random: affine coefficients
  int32_t freeCoef = 0;
  std::array<SemaphoreWait, kMaxWaits> waits{};
  AccessPattern dst, src0, src1;
  /// A third source, one element per partition: TensorScalar's op1 operand.
  /// Encoded compactly (Encoding.cpp): SBUF or PSUM, partitions and a byte
  /// offset, free shape [1].
  AccessPattern src2;
};

/// The operand patterns of `inst` in word order: dst, src0, src1, src2.
inline std::array<const AccessPattern *, 4>
operandPatterns(const Instruction &inst) {
  return {&inst.dst, &inst.src0, &inst.src1, &inst.src2};
}

/// Encode `inst` into exactly kInstructionBytes little-endian bytes at `out`.
void encode(const Instruction &inst, uint8_t *out);
/// Decode one word. Performs no semantic validation (see verifyInstruction).
Instruction decode(const uint8_t *in);
/// Offset of the first reserved (always-zero) byte of the word at `in` that
/// is not zero, if any. The artifact reader refuses such words.
std::optional<size_t> firstNonZeroReservedByte(const uint8_t *in);

/// Size in bytes of one element of `t`.
constexpr unsigned dtypeBytes(DType t) {
  switch (t) {
  case DType::F32: return 4;
  case DType::BF16: return 2;
  case DType::F16: return 2;
  case DType::I32: return 4;
  case DType::U8: return 1;
  case DType::I64: return 8;
  case DType::Bool: return 1;
  }
  return 0;
}

std::string_view engineName(Engine e);
std::string_view opcodeName(Opcode o);
std::string_view dtypeName(DType t);
std::string_view memKindName(MemKind m);
std::string_view aluOpName(AluOp o);
std::string_view actFuncName(ActFunc f);
std::string_view collectiveKindName(CollectiveKind k);
std::string_view reduceOpName(ReduceOp r);

} // namespace trnc::isa
