//===- Program.cpp - Small queries on an in-memory Program -----------------===//
//
// Lookups of input/output regions by their graph position (used by the
// simulator to bind the caller's buffers and by the runner to size them),
// the byte span of a region's layout, the scratch arena's size, the
// program's I/O signature and the name of an allocation's memory space.
//
//===----------------------------------------------------------------------===//

#include "artifact/Program.h"

#include <algorithm>
#include <cstdint>
#include <limits>
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

std::string listText(const std::vector<int64_t> &v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i)
    s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

} // namespace

const char *spaceName(Allocation::Space space) {
  return space == Allocation::Space::Psum ? "PSUM" : "SBUF";
}

std::vector<int64_t> Region::layoutStrides() const {
  if (!strides.empty() || shape.empty())
    return strides;
  // Saturating: a hostile shape must not overflow (layoutBytes then refuses
  // the saturated stride as a span past its limit).
  std::vector<int64_t> contiguous(shape.size(), 1);
  for (size_t d = shape.size() - 1; d > 0; --d) {
    __int128 next = __int128(contiguous[d]) * std::max<int64_t>(shape[d], 1);
    contiguous[d - 1] = next > INT64_MAX ? INT64_MAX : int64_t(next);
  }
  return contiguous;
}

std::optional<uint64_t> Region::layoutBytes() const {
  std::vector<int64_t> strides = layoutStrides();
  if (shape.size() != strides.size())
    return std::nullopt;
  constexpr unsigned __int128 kLimit = (unsigned __int128)1 << 62;
  unsigned __int128 last = 0;
  bool empty = false;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] < 0 || strides[d] < 0)
      return std::nullopt;
    if (shape[d] == 0)
      empty = true;
    else
      last += (unsigned __int128)(shape[d] - 1) * uint64_t(strides[d]);
    if (last >= kLimit)
      return std::nullopt;
  }
  unsigned __int128 span = (empty ? 1 : last + 1) * isa::dtypeBytes(dtype);
  if (span >= kLimit)
    return std::nullopt;
  return uint64_t(span);
}

std::string ioSignature(const Program &program) {
  std::string s;
  for (Region::Kind kind : {Region::Kind::Input, Region::Kind::Output})
    for (uint32_t i = 0; i < uint32_t(program.regions.size()); ++i) {
      int64_t at = kind == Region::Kind::Input ? program.inputRegion(i)
                                               : program.outputRegion(i);
      if (at < 0)
        break; // indices are dense (verifyProgram)
      const Region &r = program.regions[size_t(at)];
      s += kind == Region::Kind::Input ? "input " : "output ";
      s += std::to_string(i) + " " + std::string(isa::dtypeName(r.dtype)) + " " +
           listText(r.shape) + " strides " + listText(r.strides) + " bytes " +
           std::to_string(r.bytes) + "\n";
    }
  return s;
}

namespace {
/// `bytes` rounded up to the scratch alignment, saturating.
uint64_t alignedScratch(uint64_t bytes) {
  constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();
  return bytes > kMax - (isa::kScratchAlignment - 1)
             ? kMax
             : (bytes + isa::kScratchAlignment - 1) / isa::kScratchAlignment *
                   isa::kScratchAlignment;
}
} // namespace

uint64_t Program::scratchArenaBytes() const {
  constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();
  uint64_t end = 0;
  for (const Region &r : regions) {
    if (r.kind != Region::Kind::Scratch)
      continue;
    uint64_t size = alignedScratch(r.bytes);
    end = std::max(end, r.arenaOffset > kMax - size ? kMax : r.arenaOffset + size);
  }
  return end;
}

uint64_t Program::scratchEndToEndBytes() const {
  constexpr uint64_t kCap = uint64_t(1) << 62;
  uint64_t sum = 0;
  for (const Region &r : regions)
    if (r.kind == Region::Kind::Scratch)
      sum = std::min(kCap, sum + std::min(kCap, alignedScratch(r.bytes)));
  return sum;
}

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
  return describeInstruction(program, 0, stream, index);
}

std::string describeInstruction(const Program &program, unsigned core,
                                isa::Engine stream, size_t index) {
  std::string s = program.lnc() > 1 ? "core " + std::to_string(core) + " " : "";
  s += isa::engineName(stream);
  s += " stream instruction " + std::to_string(index);
  if (core >= program.lnc())
    return s;
  const auto &insts =
      program.coreStreams(core)[size_t(stream) % isa::kNumEngines];
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
