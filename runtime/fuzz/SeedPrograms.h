//===- SeedPrograms.h - Small valid programs for loader tests and fuzzing -*- C++ -*-===//
//
// A handful of tiny programs that together use every section of an artifact
// (metadata, input/output/scratch/constant regions, all five streams, source
// locations) and every opcode, synchronised the way the compiler does it
// (each instruction signals its engine's semaphore). The loader tests mutate
// them; MakeSeeds writes them as the fuzzer's seed corpus. fixChecksums
// lets both get past the section checksums to the parser and verifier.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "artifact/Program.h"

#include <cstdint>
#include <vector>

namespace trnc::fuzz {

/// Every seed program, each valid and race-free; under 8 KiB serialised.
std::vector<Program> seedPrograms();

/// Recompute the checksum of every section whose table entry lies inside
/// `bytes`, so that only a mutation's contents can make the loader refuse
/// it (lets tests and the fuzzer reach the parser and verifier).
void fixChecksums(std::vector<uint8_t> &bytes);

} // namespace trnc::fuzz
