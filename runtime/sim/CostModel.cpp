//===- CostModel.cpp - Instruction cost formulas (HARDWARE.md) -------------===//
//
// Every formula here is the NKI ISA reference's cost, as HARDWARE.md
// "Instructions" quotes it, in engine cycles with N = free elements per
// partition; the constants come from MachineModel (sourced there).
//
//===----------------------------------------------------------------------===//

#include "sim/CostModel.h"

#include <algorithm>
#include <cmath>

namespace trnc::sim {

using namespace isa;

namespace {

bool isFloat16(DType t) { return t == DType::BF16 || t == DType::F16; }

/// Innermost stride of an on-chip operand in bytes (0 if it has one element
/// per partition or is not on chip).
uint64_t innerStrideBytes(const AccessPattern &ap) {
  if (ap.mem != MemKind::SBUF && ap.mem != MemKind::PSUM)
    return 0;
  for (int d = int(ap.numDims) - 1; d >= 0; --d)
    if (ap.count[d] > 1)
      return uint64_t(std::llabs(ap.stride[d])) * dtypeBytes(ap.dtype);
  return 0;
}

/// x2 when an operand's innermost stride is above 16 bytes: it halves the
/// SBUF/PSUM interface bandwidth (HARDWARE.md "How a core executes").
unsigned strideFactor(const MachineModel &m,
                      std::initializer_list<const AccessPattern *> aps) {
  for (const AccessPattern *ap : aps)
    if (ap->present() && innerStrideBytes(*ap) > m.fastStrideBytes)
      return m.slowStrideFactor;
  return 1;
}

/// Contiguous elements walked before the first jump (free dims only).
uint64_t contiguousFreeElements(const AccessPattern &ap) {
  uint64_t run = 1;
  for (int d = int(ap.numDims) - 1; d >= 0; --d) {
    if (ap.count[d] == 1)
      continue;
    if (ap.stride[d] != int64_t(run))
      return run;
    run *= ap.count[d];
  }
  return run;
}

bool contiguous(const AccessPattern &ap) {
  return !ap.present() || contiguousFreeElements(ap) == ap.freeElements();
}

/// Contiguous bytes of one descriptor on this side of a DMA. HBM rows
/// `partitionStride` apart that abut merge into one run.
uint64_t contiguousBytes(const AccessPattern &ap) {
  uint64_t run = contiguousFreeElements(ap);
  if (ap.mem == MemKind::HBM && run == ap.freeElements() &&
      ap.partitionStride == int64_t(run))
    run *= ap.partitionCount;
  return std::max<uint64_t>(1, run) * dtypeBytes(ap.dtype);
}

uint64_t apBytes(const AccessPattern &ap) {
  return ap.numElements() * dtypeBytes(ap.dtype);
}

} // namespace

double engineClockGHz(const MachineModel &m, Engine e) {
  switch (e) {
  case Engine::Tensor: return m.tensorClockGHz;
  case Engine::Vector: return m.vectorClockGHz;
  case Engine::Scalar: return m.scalarClockGHz;
  case Engine::GpSimd: return m.gpsimdClockGHz;
  case Engine::Dma: return 1.0; // DMA time is computed in ns directly
  }
  return 1.0;
}

uint64_t matmulCycles(const MachineModel &m, const Instruction &inst) {
  // nc_matmul: max(min(64, M), N) cycles for bf16/fp16/fp8, 4x for fp32.
  // Source: NKI ISA reference, HARDWARE.md "Instructions".
  uint64_t M = inst.src0.freeElements(), N = inst.src1.freeElements();
  uint64_t cycles = std::max<uint64_t>(std::min<uint64_t>(m.matmulMinCycles, M), N);
  if (!isFloat16(inst.src0.dtype) || !isFloat16(inst.src1.dtype))
    cycles *= m.matmulFp32Slowdown;
  // The moving operand streams through the SBUF interface.
  return cycles * strideFactor(m, {&inst.src1});
}

double matmulFlops(const Instruction &inst) {
  if (inst.opcode != Opcode::Matmul)
    return 0;
  return 2.0 * double(inst.src0.partitionCount) *
         double(inst.src0.freeElements()) * double(inst.src1.freeElements());
}

/// Fixed cost of iota and affine_select (HARDWARE.md "Instructions": ~150 + N).
constexpr uint64_t kIotaFixedCycles = 150;

uint64_t vectorLikeCycles(const MachineModel &m, const Instruction &inst) {
  if (inst.opcode == Opcode::Nop)
    return 0;
  // Work in element-cycles per partition (NKI ISA reference formulas,
  // HARDWARE.md "Instructions"); halves are kept exact by counting in
  // half-cycles.
  uint64_t N = inst.dst.freeElements();
  // iota / affine_select: ~150 + N GpSimd cycles (HARDWARE.md "Instructions").
  // random is modelled as the same GpSimd per-element generator (the table
  // has no row of its own): ~150 + N, one element per cycle per partition.
  if (inst.opcode == Opcode::Iota || inst.opcode == Opcode::AffineSelect ||
      inst.opcode == Opcode::Random)
    return kIotaFixedCycles + N * strideFactor(m, {&inst.dst, &inst.src0});
  uint64_t halfWork = 2 * N;
  switch (inst.opcode) {
  case Opcode::TensorTensor: {
    // N when one input is in PSUM or for contiguous bf16 add/sub/mul;
    // otherwise 2N.
    AluOp op = AluOp(inst.op0);
    bool psumIn = inst.src0.mem == MemKind::PSUM || inst.src1.mem == MemKind::PSUM;
    bool fastBf16 = inst.src0.dtype == DType::BF16 &&
                    inst.src1.dtype == DType::BF16 && contiguous(inst.src0) &&
                    contiguous(inst.src1) && contiguous(inst.dst) &&
                    (op == AluOp::Add || op == AluOp::Subtract ||
                     op == AluOp::Multiply);
    if (!psumIn && !fastBf16)
      halfWork = 4 * N;
    break;
  }
  case Opcode::TensorReduce: {
    // N input elements, or N/2 for bf16 add/max.
    uint64_t in = inst.src0.freeElements();
    AluOp op = AluOp(inst.op0);
    bool half = inst.src0.dtype == DType::BF16 &&
                (op == AluOp::Add || op == AluOp::Max);
    halfWork = half ? in : 2 * in;
    break;
  }
  case Opcode::CopyPredicated:
    // Two inputs (predicate, data) and the dst read: HARDWARE.md
    // tensor_tensor's general rate, 2N.
    halfWork = 4 * N;
    break;
  case Opcode::TensorScan:
    // A tensor_tensor with a carried operand (NKI tensor_tensor_scan):
    // HARDWARE.md tensor_tensor's general rate, 2N.
    halfWork = 4 * N;
    break;
  case Opcode::Memset:
    // N, or N/2 for zero into bf16.
    if (inst.imm0 == 0.0f && inst.dst.dtype == DType::BF16)
      halfWork = N;
    break;
  default: // activation, tensor_scalar, tensor_copy: N
    break;
  }
  // Elements per cycle of the engine, over all partitions; 2-byte floats are
  // faster on trn2/trn3 Vector and trn3 Scalar (HARDWARE.md "Targets").
  bool all16 = true;
  for (const AccessPattern *ap : operandPatterns(inst))
    if (ap->present() && !isFloat16(ap->dtype))
      all16 = false;
  unsigned perCycle = m.gpsimdElemsPerCycle;
  if (inst.engine == Engine::Vector)
    perCycle = all16 ? m.vectorElemsPerCycle16 : m.vectorElemsPerCycleOther;
  else if (inst.engine == Engine::Scalar)
    perCycle = all16 ? m.scalarElemsPerCycle16 : m.scalarElemsPerCycleOther;
  // cycles = halfWork/2 * stride / (perCycle / partitions), rounded up.
  uint64_t num = halfWork * strideFactor(m, {&inst.dst, &inst.src0, &inst.src1}) *
                 m.numPartitions;
  uint64_t den = 2ull * perCycle;
  uint64_t work = (num + den - 1) / den;
  return m.accessOverheadCycles + std::max<uint64_t>(m.minInitiationCycles, work);
}

/// dma_indirect moves P rows (the index tile's partitions), not the N rows
/// its HBM table pattern spans; each row is its own descriptor (the rows
/// named by the indices never merge), so it costs like a dma_copy of P
/// rows of one row's bytes: small rows are slow (HARDWARE.md, dma row).
static bool isIndirect(const Instruction &inst) {
  return inst.opcode == Opcode::DmaIndirect;
}
static const AccessPattern &indirectChipSide(const Instruction &inst) {
  return inst.flags & kFlagScatter ? inst.src0 : inst.dst;
}
static const AccessPattern &indirectTable(const Instruction &inst) {
  return inst.flags & kFlagScatter ? inst.dst : inst.src0;
}

uint64_t dmaBytes(const Instruction &inst) {
  if (isIndirect(inst))
    return apBytes(indirectChipSide(inst));
  return std::max(apBytes(inst.dst), apBytes(inst.src0));
}

uint64_t dmaHbmBytes(const Instruction &inst) {
  if (isIndirect(inst)) { // P rows of the HBM side's dtype (+ read, if adding)
    const AccessPattern &chip = indirectChipSide(inst);
    uint64_t b = chip.numElements() * dtypeBytes(indirectTable(inst).dtype);
    return inst.flags & kFlagAccumulate ? 2 * b : b;
  }
  uint64_t b = 0;
  if (inst.dst.mem == MemKind::HBM)
    b += apBytes(inst.dst);
  if (inst.src0.mem == MemKind::HBM)
    b += apBytes(inst.src0);
  return b;
}

unsigned dmaHbmSides(const Instruction &inst) {
  return unsigned(inst.dst.mem == MemKind::HBM) + unsigned(inst.src0.mem == MemKind::HBM);
}

uint64_t dmaRowBytes(const Instruction &inst) {
  if (isIndirect(inst)) { // one descriptor per row, at most a row long
    const AccessPattern &table = indirectTable(inst);
    return std::min(contiguousBytes(indirectChipSide(inst)),
                    contiguousFreeElements(table) * dtypeBytes(table.dtype));
  }
  if (dmaHbmSides(inst) == 2) {
    // HBM -> HBM: the engines split a transfer into packets by partition
    // groups of its pattern (Neuron Explorer, "How to identify and reduce
    // inefficient DMA transfers"), so a partition's run is a row here too,
    // as it is when the other side is SBUF; contiguity across partitions
    // does not make the transfer one descriptor.
    uint64_t run = std::min(contiguousFreeElements(inst.dst),
                            contiguousFreeElements(inst.src0));
    return std::max<uint64_t>(1, run) * dtypeBytes(inst.dst.dtype);
  }
  return std::min(contiguousBytes(inst.dst), contiguousBytes(inst.src0));
}

double dmaEfficiency(const MachineModel &m, uint64_t rowBytes) {
  // Per-descriptor overhead r0 normalised to 1 at the saturation size S:
  // eff(r) = min(1, (r / (r + r0)) / (S / (S + r0))). See MachineModel.h.
  double r = double(rowBytes), r0 = double(m.dmaRowOverheadBytes),
         S = double(m.dmaSaturateRowBytes);
  return std::min(1.0, (r / (r + r0)) * ((S + r0) / S));
}

double dmaAloneBytesPerNs(const MachineModel &m, const Instruction &inst) {
  // A transfer is spread over up to 16 DMA engines, one descriptor each
  // (NKI DMA overview: "parallelized up to 16 DMA engines, depending on the
  // shape"); GB/s = bytes/ns.
  uint64_t row = dmaRowBytes(inst);
  uint64_t rows = std::max<uint64_t>(1, (dmaBytes(inst) + row - 1) / row);
  double engines = double(std::min<uint64_t>(m.dmaEngines, rows));
  return engines * m.dmaEngineGBps * dmaEfficiency(m, row);
}

double dmaSharedCapBytesPerNs(const MachineModel &m, const Instruction &inst) {
  double cap = m.dmaCoreBytesPerSecond() * 1e-9;
  // An HBM -> HBM copy reads and writes HBM: each byte moved is two.
  if (unsigned sides = dmaHbmSides(inst))
    cap = std::min(cap, m.hbmCoreBytesPerSecond() * 1e-9 / sides);
  return cap;
}

} // namespace trnc::sim
