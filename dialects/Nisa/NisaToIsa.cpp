//===- NisaToIsa.cpp - nisa ops as isa::Instruction fields ----------------===//
//
// See NisaToIsa.h. nisa enums equal isa's numerically (NisaBase.td), so they
// convert with a static_cast.
//
//===----------------------------------------------------------------------===//
#include "dialects/Nisa/NisaToIsa.h"

#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/FormatVariadic.h"

#include <limits>

using namespace mlir;
using namespace trnc;
using namespace trnc::nisa;

std::optional<isa::DType> trnc::nisa::isaDTypeOf(Type t) {
  if (t.isF32())
    return isa::DType::F32;
  if (t.isBF16())
    return isa::DType::BF16;
  if (t.isF16())
    return isa::DType::F16;
  if (t.isInteger(32))
    return isa::DType::I32;
  if (t.isInteger(8))
    return isa::DType::U8;
  if (t.isInteger(64)) // HBM only (Isa.h, DType)
    return isa::DType::I64;
  if (t.isInteger(1)) // torch.bool: one byte, 0 or 1
    return isa::DType::Bool;
  return std::nullopt;
}

Type trnc::nisa::bufferElementType(Type buffer) {
  if (auto tile = dyn_cast<TileType>(buffer))
    return tile.getElementType();
  return cast<MemRefType>(buffer).getElementType();
}

bool trnc::nisa::describeInstruction(Operation *op, isa::Instruction &inst) {
  if (!llvm::isa<InstructionOpInterface>(op))
    return false;
  inst.engine = static_cast<isa::Engine>(
      cast<InstructionOpInterface>(op).getExecutionEngine());
  return llvm::TypeSwitch<Operation *, bool>(op)
      .Case([&](DmaCopyOp o) {
        inst.opcode = isa::Opcode::DmaCopy;
        inst.dmaQueue = static_cast<uint16_t>(o.getQueue().value_or(0));
        return true;
      })
      .Case([&](DmaGatherOp o) {
        inst.opcode = isa::Opcode::DmaIndirect;
        inst.dmaQueue = static_cast<uint16_t>(o.getQueue().value_or(0));
        return true;
      })
      .Case([&](DmaScatterOp o) {
        inst.opcode = isa::Opcode::DmaIndirect;
        inst.flags |= isa::kFlagScatter;
        if (o.getAccumulate())
          inst.flags |= isa::kFlagAccumulate;
        if (o.getIdempotent())
          inst.flags |= isa::kFlagIdempotent;
        inst.dmaQueue = static_cast<uint16_t>(o.getQueue().value_or(0));
        return true;
      })
      .Case([&](CollectiveOp o) {
        inst.opcode = isa::Opcode::Collective;
        inst.dmaQueue = static_cast<uint16_t>(o.getQueue());
        inst.op0 = static_cast<uint8_t>(o.getKind());
        inst.op1 = static_cast<uint8_t>(o.getReduce());
        inst.partitionCoef = static_cast<int32_t>(o.getGroupSize());
        inst.freeCoef = static_cast<int32_t>(o.getId());
        if (o.getSpan() == CollectiveSpan::instance)
          inst.flags |= isa::kFlagSpanInstance;
        if (o.getSpan() == CollectiveSpan::cluster)
          inst.flags |= isa::kFlagSpanCluster;
        return true;
      })
      .Case([&](MatmulOp o) {
        inst.opcode = isa::Opcode::Matmul;
        if (o.getAccumulate())
          inst.flags |= isa::kFlagAccumulate;
        if (o.getTranspose())
          inst.flags |= isa::kFlagTranspose;
        return true;
      })
      .Case([&](ActivationOp o) {
        inst.opcode = isa::Opcode::Activation;
        inst.op0 = static_cast<uint8_t>(o.getFunc());
        inst.imm0 = o.getScale().convertToFloat();
        inst.imm1 = o.getBiasImm().convertToFloat();
        return true;
      })
      .Case([&](TensorTensorOp o) {
        inst.opcode = isa::Opcode::TensorTensor;
        inst.op0 = static_cast<uint8_t>(o.getOp());
        return true;
      })
      .Case([&](TensorScalarOp o) {
        inst.opcode = isa::Opcode::TensorScalar;
        inst.op0 = static_cast<uint8_t>(o.getOp0());
        inst.op1 = static_cast<uint8_t>(o.getOp1());
        inst.imm0 = o.getImm0().convertToFloat();
        inst.imm1 = o.getImm1().convertToFloat();
        if (o.getReverse0())
          inst.flags |= isa::kFlagReverse0;
        if (o.getReverse1())
          inst.flags |= isa::kFlagReverse1;
        return true;
      })
      .Case([&](TensorReduceOp o) {
        inst.opcode = isa::Opcode::TensorReduce;
        inst.op0 = static_cast<uint8_t>(o.getOp());
        return true;
      })
      .Case([&](TensorScanOp o) {
        inst.opcode = isa::Opcode::TensorScan;
        inst.op0 = static_cast<uint8_t>(o.getOp());
        return true;
      })
      .Case([&](TensorCopyOp) {
        inst.opcode = isa::Opcode::TensorCopy;
        return true;
      })
      .Case([&](CopyPredicatedOp) {
        inst.opcode = isa::Opcode::CopyPredicated;
        return true;
      })
      .Case([&](MemsetOp o) {
        inst.opcode = isa::Opcode::Memset;
        inst.imm0 = o.getValue().convertToFloat();
        return true;
      })
      .Case([&](IotaOp o) {
        inst.opcode = isa::Opcode::Iota;
        inst.imm0 = o.getBase().convertToFloat();
        inst.imm1 = o.getScale().convertToFloat();
        inst.partitionCoef = o.getPartitionCoef();
        inst.freeCoef = o.getFreeCoef();
        return true;
      })
      .Case([&](AffineSelectOp o) {
        inst.opcode = isa::Opcode::AffineSelect;
        inst.op0 = static_cast<uint8_t>(o.getOp());
        inst.imm0 = o.getFill().convertToFloat();
        inst.imm1 = o.getOffset().convertToFloat();
        inst.partitionCoef = o.getPartitionCoef();
        inst.freeCoef = o.getFreeCoef();
        return true;
      })
      .Case([&](RandomOp o) {
        inst.opcode = isa::Opcode::Random;
        // The counter base as two exact 24-bit halves (Isa.h Random).
        uint64_t base = uint64_t(o.getCounterBase());
        inst.imm0 = float(base >> 24);
        inst.imm1 = float(base & 0xffffff);
        inst.partitionCoef = o.getPartitionCoef();
        inst.freeCoef = o.getFreeCoef();
        return true;
      })
      .Case([&](NopOp) {
        inst.opcode = isa::Opcode::Nop; // waits only: no operands
        return true;
      })
      .Case([&](PeerSignalOp) {
        // Its signal (the barrier semaphore) raises the peer core's copy.
        inst.opcode = isa::Opcode::Nop;
        inst.flags |= isa::kFlagSignalPeer;
        return true;
      })
      .Case([&](PeerWaitOp) {
        inst.opcode = isa::Opcode::Nop; // waits on the barrier semaphore
        return true;
      })
      .Default([](Operation *) { return false; });
}

bool trnc::nisa::describeAccess(const Access &access, isa::AccessPattern &out,
                                std::string &error) {
  AccessPatternAttr ap = access.pattern;
  ArrayRef<int64_t> strides = ap.getStrides(), counts = ap.getCounts();
  std::optional<isa::DType> dtype =
      isaDTypeOf(bufferElementType(access.buffer.getType()));
  if (!dtype) {
    error = "operand element type has no ISA dtype";
    return false;
  }
  if (counts.size() > isa::kMaxFreeDims + 1) {
    error = "access pattern has more than 4 free dims";
    return false;
  }
  int64_t eb = isa::dtypeBytes(*dtype);
  out.dtype = *dtype;
  if (auto tile = dyn_cast<TileType>(access.buffer.getType())) {
    int64_t free = tile.getFreeSize();
    out.mem = static_cast<isa::MemKind>(tile.getSpace());
    out.partitionStart = static_cast<uint16_t>(ap.getOffset() / free);
    out.offset = (ap.getOffset() % free) * eb;
  } else {
    out.mem = isa::MemKind::HBM;
    out.offset = ap.getOffset() * eb;
    out.partitionStride = strides[0];
  }
  if (counts[0] > std::numeric_limits<uint16_t>::max()) {
    error = llvm::formatv("outer dim count {0} does not fit the instruction "
                          "word", counts[0]);
    return false;
  }
  out.partitionCount = static_cast<uint16_t>(counts[0]);
  out.numDims = 0;
  for (size_t d = 1; d < counts.size(); ++d) {
    if (counts[d] > std::numeric_limits<uint32_t>::max()) {
      error = llvm::formatv("free dim count {0} too large", counts[d]);
      return false;
    }
    out.stride[out.numDims] = strides[d];
    out.count[out.numDims++] = static_cast<uint32_t>(counts[d]);
  }
  if (out.numDims == 0) {
    out.stride[0] = 1;
    out.count[0] = 1;
    out.numDims = 1;
  }
  return true;
}

bool trnc::nisa::describeForCost(Operation *op, isa::Instruction &inst) {
  if (!describeInstruction(op, inst))
    return false;
  isa::AccessPattern *slots[] = {&inst.dst, &inst.src0, &inst.src1,
                                 &inst.src2};
  std::string error;
  for (const Access &access : cast<InstructionOpInterface>(op).getAccesses())
    if (!describeAccess(access, *slots[access.slot], error))
      return false;
  return true;
}
