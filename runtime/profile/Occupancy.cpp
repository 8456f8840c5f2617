//===- Occupancy.cpp - SBUF/PSUM bytes live, by program order and by time -===//
//
// See Occupancy.h.
//
//===----------------------------------------------------------------------===//

#include "profile/Occupancy.h"

#include <algorithm>
#include <unordered_map>

namespace trnc::profile {

uint64_t peakAllocatedBytes(const Program &program, Allocation::Space space,
                            unsigned core) {
  // A tile holds its bytes from its first instruction through its last:
  // +bytes at first, -bytes after last. Frees go before allocations at the
  // same position (last + 1 == another's first: the bytes are handed over).
  std::vector<std::pair<uint64_t, int64_t>> steps;
  for (const Allocation &a : program.allocations)
    if (a.space == space && a.core == core) {
      steps.push_back({a.first, int64_t(a.bytes)});
      steps.push_back({a.last + 1, -int64_t(a.bytes)});
    }
  std::sort(steps.begin(), steps.end());
  int64_t live = 0, peak = 0;
  for (const auto &[at, change] : steps) {
    live += change;
    peak = std::max(peak, live);
  }
  return uint64_t(peak);
}

std::vector<std::pair<double, double>> occupancySteps(const Program &program,
                                                      const Profile &profile,
                                                      Allocation::Space space,
                                                      unsigned core) {
  std::vector<std::pair<double, double>> steps;
  if (profile.trace.empty())
    return steps;
  auto key = [](isa::Engine engine, uint32_t index) {
    return (uint64_t(engine) << 32) | index;
  };
  std::unordered_map<uint64_t, const InstructionRecord *> records;
  records.reserve(profile.trace.size());
  for (const InstructionRecord &r : profile.trace)
    if (r.core == core)
      records.emplace(key(r.engine, r.index), &r);
  for (const Allocation &a : program.allocations) {
    if (a.space != space || a.core != core)
      continue;
    auto first = records.find(key(a.firstAt.engine, a.firstAt.index));
    auto last = records.find(key(a.lastAt.engine, a.lastAt.index));
    if (first == records.end() || last == records.end())
      continue;
    double start = first->second->startNs;
    double end = std::max(start, last->second->endNs);
    steps.push_back({start, double(a.bytes)});
    steps.push_back({end, -double(a.bytes)});
  }
  return steps;
}

double peakOfSteps(std::vector<std::pair<double, double>> steps) {
  std::sort(steps.begin(), steps.end(),
            [](const auto &a, const auto &b) { return a.first < b.first; });
  double live = 0, peak = 0;
  for (size_t i = 0; i < steps.size(); ++i) {
    live += steps[i].second;
    if (i + 1 == steps.size() || steps[i + 1].first != steps[i].first)
      peak = std::max(peak, live);
  }
  return peak;
}

} // namespace trnc::profile
