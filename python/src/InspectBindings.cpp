//===- InspectBindings.cpp - trnc._C functions behind `trnc inspect` ------===//
//
// Read-only views of an artifact for the `trnc inspect` command: its header
// (format version, target, compiler identity, graph name), the HBM regions
// (inputs/outputs with shape, strides, dtype), per-engine instruction counts
// by opcode, and the disassembly (trnc::disassemble, the same text as
// `trnc-compile --disassemble`). Every function fully verifies the artifact
// first (trnc::readArtifact) and raises ValueError on a bad file.
//
//===----------------------------------------------------------------------===//

#include "artifact/Artifact.h"
#include "artifact/Program.h"
#include "isa/Isa.h"
#include "trnc/Compiler/Emit.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <string>
#include <string_view>

namespace py = pybind11;

namespace {

trnc::Program load(const py::bytes &artifact) {
  std::string_view bytes = artifact;
  llvm::Expected<trnc::Program> program = trnc::readArtifact(llvm::ArrayRef<uint8_t>(
      reinterpret_cast<const uint8_t *>(bytes.data()), bytes.size()));
  if (!program) {
    // Structural errors already say "invalid trnc artifact: ..."; verifier ones do not.
    std::string message = llvm::toString(program.takeError());
    llvm::StringRef prefix = "invalid trnc artifact";
    throw py::value_error(llvm::StringRef(message).starts_with(prefix) ? message
                                                                       : prefix.str() + ": " + message);
  }
  return std::move(*program);
}

const char *regionKindName(trnc::Region::Kind kind) {
  switch (kind) {
  case trnc::Region::Kind::Input: return "input";
  case trnc::Region::Kind::Output: return "output";
  case trnc::Region::Kind::Scratch: return "scratch";
  case trnc::Region::Kind::Constant: return "constant";
  }
  return "unknown";
}

py::dict describeRegion(const trnc::Region &r) {
  py::dict d;
  d["kind"] = regionKindName(r.kind);
  d["index"] = r.index;
  d["dtype"] = std::string(trnc::isa::dtypeName(r.dtype));
  d["shape"] = r.shape;
  d["strides"] = r.layoutStrides();
  d["bytes"] = r.bytes;
  if (r.kind == trnc::Region::Kind::Scratch)
    d["arena_offset"] = r.arenaOffset;
  return d;
}

/// Engine `e` over every physical core (LNC=2: both cores' streams).
py::dict describeEngine(const trnc::Program &p, unsigned e) {
  py::dict opcodes; // insertion order = first appearance in the stream
  double elements = 0; // the work a run would do (as a float: it may be huge)
  size_t instructions = 0;
  for (unsigned c = 0; c < p.lnc(); ++c) {
    const auto &stream = p.coreStreams(c)[e];
    instructions += stream.size();
    for (const trnc::isa::Instruction &inst : stream) {
      py::str name(std::string(trnc::isa::opcodeName(inst.opcode)));
      opcodes[name] = (opcodes.contains(name) ? opcodes[name].cast<size_t>() : 0) + 1;
      for (const trnc::isa::AccessPattern *ap : trnc::isa::operandPatterns(inst))
        if (ap->present())
          elements += double(ap->freeElements()) * ap->partitionCount;
    }
  }
  py::dict d;
  d["engine"] = std::string(trnc::isa::engineName(trnc::isa::Engine(e)));
  d["instructions"] = instructions;
  d["opcodes"] = opcodes;
  d["elements"] = elements;
  return d;
}

/// Everything but the disassembly, as plain Python values (JSON-ready).
py::dict inspectArtifact(const py::bytes &artifact) {
  trnc::Program p = load(artifact);
  py::list regions, engines;
  for (const trnc::Region &r : p.regions)
    regions.append(describeRegion(r));
  for (unsigned e = 0; e < trnc::isa::kNumEngines; ++e)
    engines.append(describeEngine(p, e));
  py::dict d;
  d["format_version"] = trnc::kArtifactFormatVersion; // readArtifact accepts only this
  d["isa_version"] = trnc::isa::kIsaVersion;
  d["target"] = p.target;
  d["lnc"] = p.lnc(); // physical cores the program spans
  d["name"] = p.name;
  d["compiler"] = p.compilerVersion;
  d["metadata_json"] = p.metadataJson;
  d["bytes"] = py::len(artifact);
  d["regions"] = regions;
  d["scratch_arena_bytes"] = p.scratchArenaBytes();
  d["engines"] = engines;
  d["source_locations"] = p.sources.size();
  return d;
}

} // namespace

namespace trnc::python {

void registerInspectBindings(py::module_ &m) {
  m.attr("artifact_format_version") = trnc::kArtifactFormatVersion;
  m.def("inspect_artifact", &inspectArtifact, py::arg("artifact"),
        "Verify an artifact and describe it: header, regions, per-engine "
        "instruction counts by opcode. Raises ValueError on a bad artifact.");
  m.def(
      "disassemble",
      [](const py::bytes &artifact) { return trnc::disassemble(load(artifact)); },
      py::arg("artifact"),
      "Verify an artifact and return its disassembly: one line per instruction.");
}

} // namespace trnc::python
