//===- Emit.cpp - scheduled nisa -> per-engine instruction streams --------===//
//
// Walks `func.func @main` after allocation and scheduling: every argument
// becomes an Input/Output HBM region (in argument order), every
// nisa.dram_alloc a Scratch region (in program order, at the arena offset
// trnc-pack-scratch gave it), and every instruction
// one isa::Instruction appended to its engine's stream in program order.
// Every nisa.alloc an instruction touches becomes an Allocation: its address
// and the first and last instruction using it, the live range the allocator
// placed it by (TilePlacement.cpp counts instructions the same way).
// A program split over two physical cores (LNC=2, SplitLogicalCores.cpp)
// is `@main` (core 0) and `@main_core1`: both address the same regions
// (their arguments, and scratch matched by its `trnc.scratch` tag), core 1's
// instructions go to Program::peerStreams and its tiles are core 1's.
// nisa enums equal isa's numerically (NisaBase.td), so they convert with a
// static_cast. Nothing here iterates over pointer-keyed containers: the
// Program depends on the IR alone.
//
//===----------------------------------------------------------------------===//
#include "trnc/Compiler/Emit.h"

#include "dialects/Nisa/NisaToIsa.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <limits>
#include <map>
#include <optional>
#include <tuple>

using namespace mlir;
using namespace trnc;
using namespace trnc::nisa;

namespace {

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
  /// Adds physical core 1's function (same arguments, scratch tagged as
  /// core 0's) as Program::peerStreams.
  llvm::Error runPeer(func::FuncOp peer);
  void adopt(Program p) { program = std::move(p); }
  Program take() { return std::move(program); }

private:
  llvm::Error emitBody();
  llvm::Error error(Operation *op, const Twine &msg) const;
  llvm::Error emitArgumentRegions();
  llvm::Error emitInstruction(Operation *op);
  llvm::Error emitAccess(Operation *op, const Access &access,
                         isa::AccessPattern &out);
  uint32_t sourceIndex(Operation *op);
  void noteTileUses(Operation *op, InstructionRef at);
  llvm::Error emitAllocations();

  /// The instructions that first and last touch one tile.
  struct TileUse {
    uint64_t first = 0, last = 0;
    InstructionRef firstAt, lastAt;
  };

  func::FuncOp func; // the core being emitted
  unsigned core = 0;
  uint64_t emitted = 0; // instructions so far, in program order
  std::map<int64_t, uint32_t> scratchRegions; // trnc.scratch tag -> region
  llvm::DenseMap<Operation *, TileUse> tileUses;
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
        type ? isaDTypeOf(type.getElementType()) : std::nullopt;
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
  std::string message;
  if (!describeAccess(access, out, message))
    return error(op, message);
  if (llvm::isa<TileType>(access.buffer.getType())) {
    auto alloc = access.buffer.getDefiningOp<AllocOp>();
    if (!alloc || !alloc.getAddress())
      return error(op, "operand tile has no address (run "
                       "trnc-allocate-memory)");
    out.offset += *alloc.getAddress();
    return llvm::Error::success();
  }
  auto it = regionOf.find(access.buffer);
  if (it == regionOf.end())
    return error(op, "HBM operand is neither an argument nor a dram_alloc");
  out.region = it->second;
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
  bool known = describeInstruction(op, inst);
  if (!known)
    return error(op, "no ISA opcode for this instruction");

  isa::AccessPattern *slots[] = {&inst.dst, &inst.src0, &inst.src1,
                                 &inst.src2};
  for (const Access &access : iface.getAccesses())
    if (llvm::Error e = emitAccess(op, access, *slots[access.slot]))
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
  auto &stream = program.coreStreams(core)[static_cast<size_t>(inst.engine)];
  stream.push_back(inst);
  noteTileUses(op, {inst.engine, static_cast<uint32_t>(stream.size() - 1)});
  return llvm::Error::success();
}

void Emitter::noteTileUses(Operation *op, InstructionRef at) {
  for (Value v : op->getOperands())
    if (auto alloc = v.getDefiningOp<AllocOp>()) {
      auto [it, fresh] = tileUses.try_emplace(alloc);
      if (fresh) {
        it->second.first = emitted;
        it->second.firstAt = at;
      }
      it->second.last = emitted;
      it->second.lastAt = at;
    }
  ++emitted;
}

llvm::Error Emitter::emitAllocations() {
  for (AllocOp alloc : func.getBody().getOps<AllocOp>()) {
    auto it = tileUses.find(alloc);
    if (it == tileUses.end())
      continue; // never touched: holds nothing
    if (!alloc.getAddress())
      return error(alloc, "tile has no address (run trnc-allocate-memory)");
    auto type = cast<TileType>(alloc.getType());
    Allocation a;
    a.space = type.getSpace() == MemorySpace::psum ? Allocation::Space::Psum
                                                   : Allocation::Space::Sbuf;
    a.partitions = static_cast<uint32_t>(type.getPartitions());
    a.address = static_cast<uint64_t>(*alloc.getAddress());
    a.bytes = static_cast<uint64_t>(type.getPartitionBytes());
    a.first = it->second.first;
    a.last = it->second.last;
    a.firstAt = it->second.firstAt;
    a.lastAt = it->second.lastAt;
    a.core = uint8_t(core);
    program.allocations.push_back(a);
  }
  std::stable_sort(program.allocations.begin(), program.allocations.end(),
                   [](const Allocation &x, const Allocation &y) {
                     return std::tie(x.core, x.first) < std::tie(y.core, y.first);
                   });
  return llvm::Error::success();
}

llvm::Expected<Program> Emitter::run() {
  if (llvm::Error e = emitArgumentRegions())
    return std::move(e);
  if (llvm::Error e = emitBody())
    return std::move(e);
  return std::move(program);
}

llvm::Error Emitter::runPeer(func::FuncOp peer) {
  if (peer.getNumArguments() != func.getNumArguments())
    return error(peer, "core 1's function has other arguments than core 0's");
  llvm::DenseMap<Value, uint32_t> core0 = std::move(regionOf);
  regionOf.clear();
  for (auto [mine, theirs] : llvm::zip(peer.getArguments(), func.getArguments()))
    regionOf[mine] = core0.lookup(theirs);
  func = peer;
  core = 1;
  emitted = 0;
  tileUses.clear();
  program.peerStreams.resize(1);
  return emitBody();
}

llvm::Error Emitter::emitBody() {
  uint32_t scratch = 0;
  for (Operation &op : func.getBody().getOps()) {
    auto tag = op.getAttrOfType<IntegerAttr>("trnc.scratch");
    if (core > 0 && tag && llvm::isa<DramAllocOp>(op)) {
      auto it = scratchRegions.find(tag.getInt());
      if (it == scratchRegions.end())
        return error(&op, "core 1's scratch has no trnc.scratch tag of core 0");
      regionOf[op.getResult(0)] = it->second;
      continue;
    }
    if (auto dram = dyn_cast<DramAllocOp>(op)) {
      // Untagged scratch of core 1 (a spill after the split) is its own.
      if (tag)
        scratchRegions[tag.getInt()] = program.regions.size();
      if (!dram.getOffset())
        return error(&op, "scratch has no arena offset; run trnc-pack-scratch "
                          "first");
      trnc::Region r;
      r.arenaOffset = uint64_t(*dram.getOffset());
      r.kind = trnc::Region::Kind::Scratch;
      r.index = scratch++;
      MemRefType type = dram.getType();
      std::optional<isa::DType> dtype = isaDTypeOf(type.getElementType());
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
      return e;
  }
  return emitAllocations();
}

} // namespace

llvm::Expected<Program> trnc::emitProgram(func::FuncOp func,
                                          llvm::StringRef target,
                                          func::FuncOp peer) {
  for (func::FuncOp f : {func, peer})
    if (f && f.getBody().getBlocks().size() != 1)
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "emitProgram: @" + f.getSymName().str() +
                                         " must have exactly one block");
  Emitter emitter(func, target);
  llvm::Expected<Program> core0 = emitter.run();
  if (!core0 || !peer)
    return core0;
  // run() moved its program out: emit core 1 into it.
  emitter.adopt(std::move(*core0));
  if (llvm::Error e = emitter.runPeer(peer))
    return std::move(e);
  return emitter.take();
}
