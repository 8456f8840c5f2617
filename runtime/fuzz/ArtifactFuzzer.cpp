//===- ArtifactFuzzer.cpp - libFuzzer target for the artifact loader ------===//
//
// Feeds arbitrary bytes to readArtifact, as given and again with the section
// checksums recomputed (else nearly every mutation stops at a checksum and
// the parser and verifier are never reached). Whatever it accepts must run: the
// program is executed on the simulator (timed or functional, by the input's
// last byte) with zeroed input/output buffers of its regions' sizes, under
// the race checker. Sizes are capped so a mutated
// region size cannot drive a huge allocation (those inputs are only loaded),
// and long streams or instructions covering huge element counts are only
// loaded, keeping each execution fast. A refused
// artifact, a deadlock or a race is a normal outcome; a crash, a sanitizer
// report or a leak is a finding.
//
//===----------------------------------------------------------------------===//

#include "artifact/Artifact.h"
#include "fuzz/SeedPrograms.h"
#include "fuzz/Simulators.h"
#include "machine/MachineModel.h"
#include "sim/RaceChecker.h"
#include "sim/Simulator.h"

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

using namespace trnc;

namespace {

constexpr uint64_t kMaxRegionBytes = 1 << 20;
constexpr uint64_t kMaxTotalBytes = 4 << 20;
constexpr size_t kMaxInstructions = 256;
// A verified instruction may legally cover up to 2^48 elements (a stride-0
// pattern repeating one tile): correct, but minutes under ASan, so such
// programs are only loaded (found as a libFuzzer timeout, not a defect).
constexpr double kMaxElements = double(1 << 24);

void runBounded(const Program &p, bool timed) {
  uint64_t total = 0;
  for (const Region &r : p.regions) {
    if (r.bytes > kMaxRegionBytes)
      return;
    total += r.bytes;
  }
  size_t instructions = 0;
  double elements = 0; // what the instructions touch (a time budget)
  for (const auto &stream : p.streams) {
    instructions += stream.size();
    for (const isa::Instruction &inst : stream)
      for (const isa::AccessPattern *ap : isa::operandPatterns(inst))
        if (ap->present()) {
          double n = ap->partitionCount;
          for (unsigned i = 0; i < ap->numDims && i < isa::kMaxFreeDims; ++i)
            n *= ap->count[i];
          elements += n;
        }
  }
  if (total > kMaxTotalBytes || instructions > kMaxInstructions || elements > kMaxElements)
    return;
  // Exactly sized buffers, so ASan catches a one-byte overrun.
  std::vector<std::unique_ptr<uint8_t[]>> storage;
  std::vector<void *> inputs(p.numInputs()), outputs(p.numOutputs());
  for (const Region &r : p.regions) {
    if (r.kind != Region::Kind::Input && r.kind != Region::Kind::Output)
      continue;
    storage.emplace_back(new uint8_t[r.bytes ? r.bytes : 1]());
    (r.kind == Region::Kind::Input ? inputs : outputs)[r.index] =
        storage.back().get();
  }
  RaceChecker checker;
  RunOptions options;
  options.timed = timed;
  options.observer = &checker;
  Profile profile;
  llvm::consumeError(fuzz::simulatorFor(p.target).run(p, inputs, outputs, options,
                                                timed ? &profile : nullptr));
}

void loadAndRun(llvm::ArrayRef<uint8_t> bytes, bool timed) {
  llvm::Expected<Program> program = readArtifact(bytes);
  if (!program) {
    llvm::consumeError(program.takeError());
    return;
  }
  runBounded(*program, timed);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  // As given (the header, table and checksum checks), then with the section
  // checksums made valid so mutations reach the parser and the verifier.
  // The last byte picks the timed or the functional simulator (both must be
  // safe on whatever the verifier accepts).
  bool timed = size && (data[size - 1] & 1);
  loadAndRun(llvm::ArrayRef<uint8_t>(data, size), timed);
  std::vector<uint8_t> fixed(data, data + size);
  fuzz::fixChecksums(fixed);
  loadAndRun(fixed, timed);
  return 0;
}
