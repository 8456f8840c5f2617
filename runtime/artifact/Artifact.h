//===- Artifact.h - The on-disk artifact: write, read, verify ------*- C++ -*-===//
//
// A trnc artifact is a self-describing binary file: magic, format version,
// a section table (metadata, regions, per-engine instruction streams of
// each physical core,
// constants, source locations), each section checksummed. The reader
// verifies everything before anything runs: a bad file is an error, never
// memory corruption.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "artifact/Program.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <optional>
#include <vector>

namespace trnc {

/// Bumped whenever the container layout changes. 2: the allocations
/// section (each SBUF/PSUM tile's placement and live range). 3: streams per
/// physical core (a second set of five stream sections at LNC=2) and each
/// allocation's core. 4: scratch regions' offsets in one packed arena.
constexpr uint32_t kArtifactFormatVersion = 4;

/// The format version an artifact's header names, when it starts with the
/// trnc magic: readArtifact refuses any but kArtifactFormatVersion, and
/// the cache tells an older trnc's entry (stale) from a corrupt one by it.
std::optional<uint32_t> artifactFormatVersion(llvm::ArrayRef<uint8_t> bytes);

/// Serialise `program` (deterministic: same program, same bytes).
std::vector<uint8_t> writeArtifact(const Program &program);

/// Parse and fully verify an artifact (structure, checksums, then
/// verifyProgram). Never reads out of bounds of `bytes`.
llvm::Expected<Program> readArtifact(llvm::ArrayRef<uint8_t> bytes);

/// Check every instruction of `program` against its target's machine model:
/// opcodes, engines, dtypes, semaphore ids, and the bounds of every access
/// pattern in SBUF, PSUM and its HBM region; every allocation inside its
/// memory and the streams, no two live at once sharing a byte.
llvm::Error verifyProgram(const Program &program);

} // namespace trnc
