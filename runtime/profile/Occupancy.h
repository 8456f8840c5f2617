//===- Occupancy.h - SBUF/PSUM bytes live, by program order and by time -*- C++ -*-===//
//
// What the allocator's plan (Program::allocations) means for on-chip memory:
// the most bytes per partition any point of the program holds, and the
// bytes per partition live over a timed run's simulated time (each tile from
// the start of the first instruction touching it to the end of the last),
// drawn as counter tracks in the Perfetto trace.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "artifact/Program.h"
#include "sim/Profile.h"

#include <cstdint>
#include <utility>
#include <vector>

namespace trnc::profile {

/// Most bytes per partition of `space` live at once, over program order:
/// the allocator's peak, known without running the program. `core`: the
/// physical core whose SBUF/PSUM (LNC=2: each has its own).
uint64_t peakAllocatedBytes(const Program &program, Allocation::Space space,
                            unsigned core = 0);

/// Bytes per partition of `space` live over simulated time as (ns, change)
/// steps, from the run's per-instruction records (none without a trace).
/// A tile whose instructions the records lack is left out.
std::vector<std::pair<double, double>> occupancySteps(const Program &program,
                                                      const Profile &profile,
                                                      Allocation::Space space,
                                                      unsigned core = 0);

/// The most bytes live at once in occupancySteps' (ns, change) steps (the
/// changes at one time applied together).
double peakOfSteps(std::vector<std::pair<double, double>> steps);

} // namespace trnc::profile
