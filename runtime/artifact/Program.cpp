//===- Program.cpp - Small queries on an in-memory Program -----------------===//
//
// Lookups of input/output regions by their graph position; used by the
// simulator to bind the caller's buffers and by the runner to size them.
//
//===----------------------------------------------------------------------===//

#include "artifact/Program.h"

#include <string>

namespace trnc {
namespace {

size_t countKind(const Program &p, Region::Kind kind) {
  size_t n = 0;
  for (const Region &r : p.regions)
    n += r.kind == kind;
  return n;
}

int64_t findRegion(const Program &p, Region::Kind kind, uint32_t index) {
  for (size_t i = 0; i < p.regions.size(); ++i)
    if (p.regions[i].kind == kind && p.regions[i].index == index)
      return int64_t(i);
  return -1;
}

} // namespace

size_t Program::numInputs() const { return countKind(*this, Region::Kind::Input); }
size_t Program::numOutputs() const {
  return countKind(*this, Region::Kind::Output);
}
int64_t Program::inputRegion(uint32_t index) const {
  return findRegion(*this, Region::Kind::Input, index);
}
int64_t Program::outputRegion(uint32_t index) const {
  return findRegion(*this, Region::Kind::Output, index);
}

std::string describeInstruction(const Program &program, isa::Engine stream,
                                size_t index) {
  std::string s(isa::engineName(stream));
  s += " stream instruction " + std::to_string(index);
  const auto &insts = program.streams[size_t(stream) % isa::kNumEngines];
  if (index >= insts.size())
    return s;
  const isa::Instruction &inst = insts[index];
  if (uint16_t(inst.opcode) < isa::kNumOpcodes)
    s += " (" + std::string(isa::opcodeName(inst.opcode)) + ")";
  else
    s += " (opcode " + std::to_string(unsigned(inst.opcode)) + ")";
  if (inst.sourceIndex < program.sources.size()) {
    const SourceLoc &loc = program.sources[inst.sourceIndex];
    s += " [" + loc.op;
    if (!loc.node.empty())
      s += " '" + loc.node + "'";
    if (!loc.file.empty())
      s += " at " + loc.file + ":" + std::to_string(loc.line);
    s += "]";
  }
  return s;
}

} // namespace trnc
