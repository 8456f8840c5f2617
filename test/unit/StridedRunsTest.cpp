//===- StridedRunsTest.cpp - The element runs of a strided pattern --------===//
//
// isa/StridedRuns.h, which the race checker and the LNC=2 split use for HBM
// footprints: a contiguous block is one run, column halves of the same rows
// are row runs that do not overlap each other, negative strides and
// overlapping dims, and the coarsening past the run cap (a superset).
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"

#include "isa/StridedRuns.h"

using namespace trnc::isa;

namespace {

std::vector<Run> runsOf(int64_t offset, std::vector<int64_t> strides,
                        std::vector<int64_t> counts, size_t maxRuns = 1024) {
  std::vector<Run> runs;
  stridedRuns(offset, strides.data(), counts.data(), strides.size(), maxRuns, runs);
  return runs;
}

} // namespace

TEST_CASE("a contiguous block is one run", "[runs]") {
  CHECK(runsOf(8, {16, 1}, {4, 16}) == std::vector<Run>{{8, 72}});
  // Column-major walk of the same block, and a dim of one element.
  CHECK(runsOf(0, {1, 4, 99}, {4, 16, 1}) == std::vector<Run>{{0, 64}});
}

TEST_CASE("column halves of the same rows are disjoint row runs", "[runs]") {
  std::vector<Run> left = runsOf(0, {16, 1}, {4, 8}), right = runsOf(8, {16, 1}, {4, 8});
  CHECK(left == std::vector<Run>{{0, 8}, {16, 24}, {32, 40}, {48, 56}});
  CHECK(right.size() == 4);
  CHECK(!runsOverlap(left, right));
  CHECK(runsOverlap(left, runsOf(7, {16, 1}, {4, 8})));
  // Interleaved rows (2p and 2p + 1 of a contiguous [8, 4]): disjoint too.
  CHECK(!runsOverlap(runsOf(0, {8, 1}, {4, 4}), runsOf(4, {8, 1}, {4, 4})));
}

TEST_CASE("negative strides and overlapping dims", "[runs]") {
  // Rows walked backwards: the same runs as forwards.
  CHECK(runsOf(48, {-16, 1}, {4, 8}) == runsOf(0, {16, 1}, {4, 8}));
  // A stride inside the run already built extends it (a sliding window).
  CHECK(runsOf(0, {2, 1}, {3, 4}) == std::vector<Run>{{0, 8}});
  CHECK(runsOf(0, {4}, {0}).empty());
}

TEST_CASE("past the run cap the smallest strided dims are taken whole", "[runs]") {
  // 4 x 8 starts, at most 4 runs: the inner strided dim (stride 2) becomes
  // part of each run, gaps included.
  std::vector<Run> runs = runsOf(0, {100, 2}, {4, 8}, 4);
  CHECK(runs == std::vector<Run>{{0, 15}, {100, 115}, {200, 215}, {300, 315}});
  CHECK(runsOf(0, {100, 2}, {4, 8}, 1) == std::vector<Run>{{0, 315}});
}
