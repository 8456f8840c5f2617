//===- SeedPrograms.h - Small valid programs for loader tests and fuzzing -*- C++ -*-===//
//
// A handful of tiny programs that together use every section of an artifact
// (metadata, input/output/scratch/constant regions, all five streams, source
// locations) and every opcode, synchronised the way the compiler does it
// (each instruction signals its engine's semaphore). The loader tests mutate
// them; MakeSeeds writes them as the fuzzer's seed corpus.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "artifact/Program.h"

#include <vector>

namespace trnc::fuzz {

/// Every seed program, each valid and race-free; under 8 KiB serialised.
std::vector<Program> seedPrograms();

} // namespace trnc::fuzz
