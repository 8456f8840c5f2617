//===- Emit.cpp - scheduled nisa -> per-engine instruction streams --------===//
//
// Walks `func.func @main` after allocation and scheduling: every argument
// becomes an Input/Output HBM region (in argument order), every
// nisa.dram_alloc a Scratch region (in program order), and every instruction
// one isa::Instruction appended to its engine's stream in program order.
// nisa enums equal isa's numerically (NisaBase.td), so they convert with a
// static_cast. Nothing here iterates over pointer-keyed containers: the
// Program depends on the IR alone.
//
//===----------------------------------------------------------------------===//
#include "trnc/Compiler/Emit.h"

#include "dialects/Nisa/NisaOps.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/raw_ostream.h"

#include <limits>
#include <map>
#include <optional>
#include <tuple>

using namespace mlir;
using namespace trnc;
using namespace trnc::nisa;

namespace {

std::optional<isa::DType> dtypeOf(Type t) {
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

Type elementTypeOf(Type buffer) {
  if (auto tile = dyn_cast<TileType>(buffer))
    return tile.getElementType();
  return cast<MemRefType>(buffer).getElementType();
}

/// The user's source position found in a location: the importer writes
/// NameLoc(node, FileLineColLoc(file, line)); fused and call-site locations
/// are searched too.
struct SourcePos {
  std::string op, node, file; // op: the ATen target (fused-loc metadata)
  uint32_t line = 0;
};

void findSource(Location loc, SourcePos &pos) {
  if (auto name = dyn_cast<NameLoc>(loc)) {
    if (pos.node.empty())
      pos.node = name.getName().str();
    findSource(name.getChildLoc(), pos);
  } else if (auto file = dyn_cast<FileLineColLoc>(loc)) {
    if (pos.file.empty()) {
      pos.file = file.getFilename().str();
      pos.line = file.getLine();
    }
  } else if (auto fused = dyn_cast<FusedLoc>(loc)) {
    if (auto target = dyn_cast_or_null<StringAttr>(fused.getMetadata());
        target && pos.op.empty())
      pos.op = target.str();
    for (Location l : fused.getLocations())
      findSource(l, pos);
  } else if (auto call = dyn_cast<CallSiteLoc>(loc)) {
    findSource(call.getCallee(), pos);
  } else if (auto opaque = dyn_cast<OpaqueLoc>(loc)) {
    findSource(opaque.getFallbackLocation(), pos);
  }
}

class Emitter {
public:
  Emitter(func::FuncOp func, StringRef target) : func(func) {
    program.target = target.str();
    if (auto name = func->getAttrOfType<StringAttr>("trn.graph_name"))
      program.name = name.str();
    else
      program.name = func.getSymName().str();
  }

  llvm::Expected<Program> run();

private:
  llvm::Error error(Operation *op, const Twine &msg) const;
  llvm::Error emitArgumentRegions();
  llvm::Error emitInstruction(Operation *op);
  llvm::Error emitAccess(Operation *op, const Access &access,
                         isa::AccessPattern &out);
  uint32_t sourceIndex(Operation *op);

  func::FuncOp func;
  Program program;
  llvm::DenseMap<Value, uint32_t> regionOf;
  std::map<std::tuple<std::string, std::string, std::string, uint32_t>,
           uint32_t>
      sourceIds;
};

llvm::Error Emitter::error(Operation *op, const Twine &msg) const {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "cannot emit '" << op->getName() << "' at " << op->getLoc() << ": "
     << msg;
  return llvm::createStringError(llvm::inconvertibleErrorCode(), os.str());
}

llvm::Error Emitter::emitArgumentRegions() {
  for (BlockArgument arg : func.getArguments()) {
    unsigned i = arg.getArgNumber();
    auto type = dyn_cast<MemRefType>(arg.getType());
    auto input = func.getArgAttrOfType<IntegerAttr>(i, "nisa.input");
    auto output = func.getArgAttrOfType<IntegerAttr>(i, "nisa.output");
    std::optional<isa::DType> dtype =
        type ? dtypeOf(type.getElementType()) : std::nullopt;
    if (!type || type.getRank() != 1 || !dtype || (!input == !output))
      return error(func, "argument " + Twine(i) +
                             " must be a 1-D f32/bf16/f16/i32/i8 memref "
                             "with exactly one of nisa.input/nisa.output");
    trnc::Region r;
    r.kind = input ? trnc::Region::Kind::Input : trnc::Region::Kind::Output;
    r.index = static_cast<uint32_t>((input ? input : output).getInt());
    r.dtype = *dtype;
    if (auto shape = func.getArgAttrOfType<DenseI64ArrayAttr>(i, "nisa.shape"))
      r.shape.assign(shape.asArrayRef().begin(), shape.asArrayRef().end());
    if (auto st = func.getArgAttrOfType<DenseI64ArrayAttr>(i, "nisa.strides"))
      r.strides.assign(st.asArrayRef().begin(), st.asArrayRef().end());
    r.bytes = type.getNumElements() * isa::dtypeBytes(*dtype);
    regionOf[arg] = program.regions.size();
    program.regions.push_back(std::move(r));
  }
  return llvm::Error::success();
}

llvm::Error Emitter::emitAccess(Operation *op, const Access &access,
                                isa::AccessPattern &out) {
  AccessPatternAttr ap = access.pattern;
  ArrayRef<int64_t> strides = ap.getStrides(), counts = ap.getCounts();
  std::optional<isa::DType> dtype =
      dtypeOf(elementTypeOf(access.buffer.getType()));
  if (!dtype)
    return error(op, "operand element type has no ISA dtype");
  if (counts.size() > isa::kMaxFreeDims + 1)
    return error(op, "access pattern has more than 4 free dims");
  int64_t eb = isa::dtypeBytes(*dtype);
  out.dtype = *dtype;
  if (auto tile = dyn_cast<TileType>(access.buffer.getType())) {
    auto alloc = access.buffer.getDefiningOp<AllocOp>();
    if (!alloc || !alloc.getAddress())
      return error(op, "operand tile has no address (run "
                       "trnc-allocate-memory)");
    int64_t free = tile.getFreeSize();
    out.mem = static_cast<isa::MemKind>(tile.getSpace());
    out.partitionStart = static_cast<uint16_t>(ap.getOffset() / free);
    out.offset = *alloc.getAddress() + (ap.getOffset() % free) * eb;
  } else {
    auto it = regionOf.find(access.buffer);
    if (it == regionOf.end())
      return error(op, "HBM operand is neither an argument nor a dram_alloc");
    out.mem = isa::MemKind::HBM;
    out.region = it->second;
    out.offset = ap.getOffset() * eb;
    out.partitionStride = strides[0];
  }
  if (counts[0] > std::numeric_limits<uint16_t>::max())
    return error(op, "outer dim count " + Twine(counts[0]) +
                         " does not fit the instruction word");
  out.partitionCount = static_cast<uint16_t>(counts[0]);
  out.numDims = 0;
  for (size_t d = 1; d < counts.size(); ++d) {
    if (counts[d] > std::numeric_limits<uint32_t>::max())
      return error(op, "free dim count " + Twine(counts[d]) + " too large");
    out.stride[out.numDims] = strides[d];
    out.count[out.numDims++] = static_cast<uint32_t>(counts[d]);
  }
  if (out.numDims == 0) {
    out.stride[0] = 1;
    out.count[0] = 1;
    out.numDims = 1;
  }
  return llvm::Error::success();
}

uint32_t Emitter::sourceIndex(Operation *op) {
  SourcePos pos;
  findSource(op->getLoc(), pos);
  if (pos.node.empty() && pos.file.empty())
    return isa::kNoSource;
  std::string name = pos.op.empty() ? op->getName().getStringRef().str()
                                    : pos.op;
  if (auto attr = op->getAttrOfType<StringAttr>(kSourceOpAttrName))
    name = attr.str();
  auto key = std::make_tuple(name, pos.node, pos.file, pos.line);
  auto [it, inserted] = sourceIds.try_emplace(key, program.sources.size());
  if (inserted)
    program.sources.push_back({name, pos.node, pos.file, pos.line});
  return it->second;
}

llvm::Error Emitter::emitInstruction(Operation *op) {
  auto iface = cast<InstructionOpInterface>(op);
  isa::Instruction inst;
  inst.engine = static_cast<isa::Engine>(iface.getExecutionEngine());
  bool known = llvm::TypeSwitch<Operation *, bool>(op)
      .Case([&](DmaCopyOp o) {
        inst.opcode = isa::Opcode::DmaCopy;
        inst.dmaQueue = static_cast<uint16_t>(o.getQueue());
        return true;
      })
      .Case([&](DmaGatherOp o) {
        inst.opcode = isa::Opcode::DmaIndirect;
        inst.dmaQueue = static_cast<uint16_t>(o.getQueue());
        return true;
      })
      .Case([&](DmaScatterOp o) {
        inst.opcode = isa::Opcode::DmaIndirect;
        inst.flags |= isa::kFlagScatter;
        if (o.getAccumulate())
          inst.flags |= isa::kFlagAccumulate;
        inst.dmaQueue = static_cast<uint16_t>(o.getQueue());
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
      .Default([](Operation *) { return false; });
  if (!known)
    return error(op, "no ISA opcode for this instruction");

  isa::AccessPattern *slots[] = {&inst.dst, &inst.src0, &inst.src1};
  SmallVector<Access, 3> accesses = iface.getAccesses();
  if (accesses.size() > 3)
    return error(op, "more than three operands");
  for (auto [slot, access] : llvm::zip(slots, accesses))
    if (llvm::Error e = emitAccess(op, access, *slot))
      return e;

  if (auto waits = op->getAttrOfType<DenseI64ArrayAttr>("waits")) {
    ArrayRef<int64_t> w = waits.asArrayRef();
    if (w.size() % 2 || w.size() / 2 > isa::kMaxWaits)
      return error(op, "waits must be at most 4 (semaphore, value) pairs");
    for (size_t i = 0; i < w.size(); i += 2) {
      if (w[i] < 0 || w[i] >= isa::kNumSemaphores || w[i + 1] < 0 ||
          w[i + 1] > std::numeric_limits<uint32_t>::max())
        return error(op, "wait (" + Twine(w[i]) + ", " + Twine(w[i + 1]) +
                             ") out of range");
      inst.waits[inst.numWaits++] = {static_cast<uint8_t>(w[i]),
                                     static_cast<uint32_t>(w[i + 1])};
    }
  }
  if (auto signal = op->getAttrOfType<IntegerAttr>("signal")) {
    if (signal.getInt() < 0 || signal.getInt() >= isa::kNumSemaphores)
      return error(op, "signal semaphore out of range");
    inst.signal = static_cast<uint8_t>(signal.getInt());
  }
  inst.sourceIndex = sourceIndex(op);
  program.streams[static_cast<size_t>(inst.engine)].push_back(inst);
  return llvm::Error::success();
}

llvm::Expected<Program> Emitter::run() {
  if (llvm::Error e = emitArgumentRegions())
    return std::move(e);
  uint32_t scratch = 0;
  for (Operation &op : func.getBody().getOps()) {
    if (auto dram = dyn_cast<DramAllocOp>(op)) {
      trnc::Region r;
      r.kind = trnc::Region::Kind::Scratch;
      r.index = scratch++;
      MemRefType type = dram.getType();
      std::optional<isa::DType> dtype = dtypeOf(type.getElementType());
      if (!dtype)
        return error(&op, "scratch element type has no ISA dtype");
      r.dtype = *dtype;
      r.shape = {type.getNumElements()};
      r.strides = {1};
      r.bytes = type.getNumElements() * isa::dtypeBytes(*dtype);
      regionOf[dram.getResult()] = program.regions.size();
      program.regions.push_back(std::move(r));
      continue;
    }
    if (llvm::isa<AllocOp, func::ReturnOp>(op))
      continue;
    if (!llvm::isa<InstructionOpInterface>(op))
      return error(&op, "not a nisa instruction");
    if (llvm::Error e = emitInstruction(&op))
      return std::move(e);
  }
  return std::move(program);
}

} // namespace

llvm::Expected<Program> trnc::emitProgram(func::FuncOp func,
                                          llvm::StringRef target) {
  if (func.getBody().getBlocks().size() != 1)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "emitProgram: @" + func.getSymName().str() +
                                       " must have exactly one block");
  return Emitter(func, target).run();
}
