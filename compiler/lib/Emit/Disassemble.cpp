//===- Disassemble.cpp - a Program as readable text -----------------------===//
//
// One line per instruction, grouped by engine stream:
//
//   vector 3: tensor_tensor.add dst=sbuf:f32[p0+128 @512 (1x128)]
//       src0=... src1=... waits=[dma.q0>=2] signal=vector  ; aten.add.Tensor 'add' m.py:7
//
// On-chip operands print partitions start+count, the byte offset inside each
// partition and the free dims as (stride x count); HBM operands print the
// region, byte offset and rows (count x stride). Used by
// `trnc-compile --disassemble` (lit tests) and `trnc inspect`.
//
//===----------------------------------------------------------------------===//
#include "trnc/Compiler/Emit.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

using namespace trnc;

namespace {

/// Semaphores by the scheme of isa/Isa.h: compute engines by name, DMA
/// queue q as "dma.q<q>", anything else as "s<id>".
void printSemaphore(llvm::raw_ostream &os, uint8_t s) {
  if (s < isa::orderedAgent(isa::Engine::Dma, 0))
    os << isa::engineName(static_cast<isa::Engine>(s));
  else if (s >= isa::kDmaQueueSemaphoreBase &&
           s < isa::kDmaQueueSemaphoreBase + isa::kNumDmaQueues)
    os << "dma.q" << unsigned(s - isa::kDmaQueueSemaphoreBase);
  else
    os << "s" << unsigned(s);
}

void printPattern(llvm::raw_ostream &os, const Program &p,
                  const isa::AccessPattern &ap) {
  os << isa::memKindName(ap.mem);
  if (ap.mem == isa::MemKind::HBM) {
    os << "#" << ap.region;
    if (ap.region < p.regions.size()) {
      const Region &r = p.regions[ap.region];
      static const char *const kinds[] = {"in", "out", "scratch", "const"};
      os << "(" << kinds[unsigned(r.kind) & 3] << r.index << ")";
    }
  }
  os << ":" << isa::dtypeName(ap.dtype) << "[";
  if (ap.mem == isa::MemKind::HBM)
    os << ap.partitionCount << "x" << ap.partitionStride;
  else
    os << "p" << ap.partitionStart << "+" << ap.partitionCount;
  os << " @" << ap.offset << " (";
  for (unsigned d = 0; d < ap.numDims && d < isa::kMaxFreeDims; ++d)
    os << (d ? "," : "") << ap.stride[d] << "x" << ap.count[d];
  os << ")]";
}

std::string mnemonic(const isa::Instruction &inst) {
  std::string s(isa::opcodeName(inst.opcode));
  auto alu = [](uint8_t v) {
    return v < isa::kNumAluOps ? std::string(isa::aluOpName(isa::AluOp(v)))
                               : "alu" + std::to_string(v);
  };
  switch (inst.opcode) {
  case isa::Opcode::Activation:
    s += ".";
    s += inst.op0 < isa::kNumActFuncs
             ? std::string(isa::actFuncName(isa::ActFunc(inst.op0)))
             : "act" + std::to_string(inst.op0);
    break;
  case isa::Opcode::TensorTensor:
  case isa::Opcode::TensorReduce:
  case isa::Opcode::TensorScan:
    s += "." + alu(inst.op0);
    break;
  case isa::Opcode::TensorScalar:
    s += "." + alu(inst.op0) + "." + alu(inst.op1);
    break;
  default:
    break;
  }
  return s;
}

void printInstruction(llvm::raw_ostream &os, const Program &p,
                      const isa::Instruction &inst) {
  os << mnemonic(inst);
  const isa::AccessPattern *ops[] = {&inst.dst, &inst.src0, &inst.src1,
                                     &inst.src2};
  static const char *const names[] = {"dst", "src0", "src1", "src2"};
  for (unsigned i = 0; i < 4; ++i)
    if (ops[i]->present()) {
      os << " " << names[i] << "=";
      printPattern(os, p, *ops[i]);
    }
  switch (inst.opcode) {
  case isa::Opcode::Activation:
    os << " scale=" << inst.imm0;
    if (!inst.src1.present())
      os << " bias=" << inst.imm1;
    break;
  case isa::Opcode::TensorScalar:
    os << " imm0=" << inst.imm0 << " imm1=" << inst.imm1;
    break;
  case isa::Opcode::Memset:
    os << " value=" << inst.imm0;
    break;
  case isa::Opcode::Random: // the counter base's two 24-bit halves (Isa.h)
    os << " base=" << ((uint64_t(inst.imm0) << 24) + uint64_t(inst.imm1))
       << " coefs=[" << inst.partitionCoef << ", " << inst.freeCoef << "]";
    break;
  case isa::Opcode::DmaCopy:
  case isa::Opcode::DmaIndirect:
    os << " queue=" << inst.dmaQueue;
    break;
  case isa::Opcode::Collective:
    os << " " << isa::collectiveKindName(isa::CollectiveKind(inst.op0));
    if (isa::ReduceOp(inst.op1) != isa::ReduceOp::None)
      os << " " << isa::reduceOpName(isa::ReduceOp(inst.op1));
    os << " group=" << inst.partitionCoef << " id=" << inst.freeCoef
       << " span="
       << (inst.flags & isa::kFlagSpanCluster    ? "cluster"
           : inst.flags & isa::kFlagSpanInstance ? "instance"
                                                 : "chip")
       << " queue=" << inst.dmaQueue;
    break;
  default:
    break;
  }
  if (inst.flags & isa::kFlagAccumulate)
    os << " accumulate";
  if (inst.flags & isa::kFlagReverse0) // DmaIndirect's kFlagIdempotent
    os << (inst.opcode == isa::Opcode::DmaIndirect ? " idempotent" : " reverse0");
  if (inst.flags & isa::kFlagReverse1)
    os << " reverse1";
  if (inst.flags & isa::kFlagScatter)
    os << " scatter";
  if (inst.flags & isa::kFlagTranspose)
    os << " transpose";
  if (inst.flags & isa::kFlagSignalPeer)
    os << " signal-peer"; // the signal raises the other core's semaphore
  if (inst.numWaits) {
    os << " waits=[";
    for (unsigned w = 0; w < inst.numWaits && w < isa::kMaxWaits; ++w) {
      os << (w ? ", " : "");
      printSemaphore(os, inst.waits[w].semaphore);
      os << ">=" << inst.waits[w].value;
    }
    os << "]";
  }
  if (inst.signal != isa::kNoSemaphore) {
    os << " signal=";
    printSemaphore(os, inst.signal);
  }
  if (inst.sourceIndex < p.sources.size()) {
    const SourceLoc &loc = p.sources[inst.sourceIndex];
    os << "  ; " << loc.op;
    if (!loc.node.empty())
      os << " '" << loc.node << "'";
    if (!loc.file.empty())
      os << " " << loc.file << ":" << loc.line;
  }
}

} // namespace

std::string trnc::disassemble(const Program &program) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "program '" << program.name << "' target " << program.target
     << ", " << program.regions.size() << " regions\n";
  static const char *const kinds[] = {"input", "output", "scratch",
                                      "constant"};
  for (size_t i = 0; i < program.regions.size(); ++i) {
    const Region &r = program.regions[i];
    os << "region " << i << ": " << kinds[unsigned(r.kind) & 3] << " "
       << r.index << " " << isa::dtypeName(r.dtype) << " [";
    for (size_t d = 0; d < r.shape.size(); ++d)
      os << (d ? "," : "") << r.shape[d];
    os << "] " << r.bytes << " bytes\n";
  }
  // LNC=2: core 1's streams follow core 0's, their headers named by core.
  for (unsigned c = 0; c < program.lnc(); ++c)
    for (unsigned e = 0; e < isa::kNumEngines; ++e) {
      const auto &stream = program.coreStreams(c)[e];
      std::string core = c ? "core " + std::to_string(c) + " " : "";
      os << core << "stream " << isa::engineName(isa::Engine(e)) << ": "
         << stream.size() << " instructions\n";
      for (size_t i = 0; i < stream.size(); ++i) {
        os << "  " << isa::engineName(isa::Engine(e)) << " " << i << ": ";
        printInstruction(os, program, stream[i]);
        os << "\n";
      }
    }
  return os.str();
}
