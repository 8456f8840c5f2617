//===- StridedRuns.cpp - the element runs a strided pattern touches -------===//
//
// See StridedRuns.h.
//
//===----------------------------------------------------------------------===//
#include "isa/StridedRuns.h"

#include <algorithm>

namespace trnc::isa {

void stridedRuns(int64_t offset, const int64_t *strides, const int64_t *counts,
                 size_t numDims, size_t maxRuns, std::vector<Run> &runs) {
  runs.clear();
  // Dims as (stride > 0, count > 1): a negative stride walks the same
  // elements from its other end; a dim of one element moves nothing.
  std::vector<std::pair<int64_t, int64_t>> dims;
  for (size_t d = 0; d < numDims; ++d) {
    if (counts[d] <= 0)
      return; // no element at all
    if (counts[d] == 1 || strides[d] == 0)
      continue;
    int64_t stride = strides[d];
    if (stride < 0) {
      offset += stride * (counts[d] - 1);
      stride = -stride;
    }
    dims.push_back({stride, counts[d]});
  }
  std::sort(dims.begin(), dims.end());
  // The run: element 0, grown by every dim whose stride does not leave a
  // gap (stride <= run length), smallest stride first.
  int64_t length = 1;
  size_t inner = 0;
  while (inner < dims.size() && dims[inner].first <= length) {
    length += dims[inner].first * (dims[inner].second - 1);
    ++inner;
  }
  // Too many starts: take the smallest remaining dims whole.
  auto starts = [&] {
    size_t n = 1;
    for (size_t d = inner; d < dims.size(); ++d)
      n = std::min(n * size_t(dims[d].second), maxRuns + 1);
    return n;
  };
  while (inner < dims.size() && starts() > std::max<size_t>(maxRuns, 1)) {
    length += dims[inner].first * (dims[inner].second - 1);
    ++inner;
    while (inner < dims.size() && dims[inner].first <= length) {
      length += dims[inner].first * (dims[inner].second - 1);
      ++inner;
    }
  }
  // Enumerate the starts of the outer dims.
  std::vector<int64_t> index(dims.size(), 0);
  for (;;) {
    int64_t start = offset;
    for (size_t d = inner; d < dims.size(); ++d)
      start += index[d] * dims[d].first;
    runs.push_back({start, start + length});
    size_t d = inner;
    while (d < dims.size() && ++index[d] == dims[d].second)
      index[d++] = 0;
    if (d == dims.size())
      break;
  }
  std::sort(runs.begin(), runs.end());
  size_t kept = 0;
  for (const Run &r : runs) {
    if (kept && r.first <= runs[kept - 1].second)
      runs[kept - 1].second = std::max(runs[kept - 1].second, r.second);
    else
      runs[kept++] = r;
  }
  runs.resize(kept);
}

bool runsOverlap(const std::vector<Run> &a, const std::vector<Run> &b) {
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (a[i].second <= b[j].first)
      ++i;
    else if (b[j].second <= a[i].first)
      ++j;
    else
      return true;
  }
  return false;
}

} // namespace trnc::isa
