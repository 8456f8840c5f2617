//===- StridedRuns.h - the element runs a strided pattern touches -*- C++ -*-===//
//
// An access pattern (offset, then (stride, count) per dim) touches a set of
// elements; one [min, max] range over-approximates it. Two patterns that
// interleave in a buffer (each core storing half the columns of the same
// rows of an HBM matrix) have overlapping ranges but no common element, so
// anything that orders accesses by their range orders them needlessly.
// `stridedRuns` gives the set as sorted, disjoint [begin, end) runs instead:
// dims whose stride stays inside the run built so far join it (a contiguous
// row, or a strided one taken whole), the other dims' starts are enumerated,
// and runs that touch are merged, so a contiguous block is one run.
//
// Used for HBM by the simulator's race checker (sim/RaceChecker.cpp) and the
// LNC=2 split's barrier rule (passes/SplitLogicalCores.cpp), which must see
// the same conflicts. Torch-free and MLIR-free like the rest of isa/.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace trnc::isa {

/// Half-open element range [first, second).
using Run = std::pair<int64_t, int64_t>;

/// The run cap for HBM footprints, the same in the race checker and the
/// split's barrier rule (a coarser pass would only add barriers; a finer one
/// would miss what the checker reports).
constexpr size_t kMaxHbmRuns = 512;

/// Appends to `runs` (cleared first) the elements `offset + sum_d i_d *
/// strides[d]` (0 <= i_d < counts[d]) as sorted disjoint runs. More than
/// `maxRuns` starts to enumerate: the smallest strided dims are taken whole
/// (gaps included, a superset) until they fit, so the answer is always safe
/// to use for conflicts. `dims` strides and counts have `numDims` entries.
void stridedRuns(int64_t offset, const int64_t *strides, const int64_t *counts,
                 size_t numDims, size_t maxRuns, std::vector<Run> &runs);

/// Whether two sorted disjoint run lists share an element.
bool runsOverlap(const std::vector<Run> &a, const std::vector<Run> &b);

} // namespace trnc::isa
