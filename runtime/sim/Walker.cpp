//===- Walker.cpp - Resolve access patterns and walk them in runs ---------===//
//
// Views turn an AccessPattern into host addresses; walkers visit them in
// row-major order. Adjacent dims that are contiguous with each other are
// merged and dims of count 1 dropped, so most patterns become one or two long
// runs and the per-run overhead vanishes.
//
//===----------------------------------------------------------------------===//

#include "sim/DTypes.h"
#include "sim/Exec.h"

#include <algorithm>

namespace trnc::sim {

uint64_t View::freeElements() const {
  uint64_t n = 1;
  for (unsigned d = 1; d < numDims; ++d)
    n *= count[d];
  return n;
}

View ExecContext::view(const isa::AccessPattern &ap) const {
  View v;
  v.dtype = ap.dtype;
  v.elemBytes = isa::dtypeBytes(ap.dtype);
  v.numDims = 1 + ap.numDims;
  v.count[0] = ap.partitionCount;
  for (unsigned i = 0; i < ap.numDims; ++i) {
    v.count[1 + i] = ap.count[i];
    v.strideBytes[1 + i] = ap.stride[i] * int64_t(v.elemBytes);
  }
  switch (ap.mem) {
  case isa::MemKind::SBUF:
  case isa::MemKind::PSUM: {
    bool sb = ap.mem == isa::MemKind::SBUF;
    uint64_t pb = sb ? sbufPartitionBytes : psumPartitionBytes;
    v.base = (sb ? sbuf : psum) + ap.partitionStart * pb + ap.offset;
    v.strideBytes[0] = int64_t(pb);
    break;
  }
  case isa::MemKind::HBM:
    v.base = regions[ap.region] + ap.offset;
    v.strideBytes[0] = ap.partitionStride * int64_t(v.elemBytes);
    break;
  case isa::MemKind::None:
    break;
  }
  return v;
}

unsigned mergeDims(const View &view, unsigned firstDim, int64_t *stride,
                   uint64_t *count) {
  // Keep dims of count > 1, merging a dim into its outer neighbour when the
  // outer stride equals inner stride x inner count (row-major contiguous).
  unsigned nd = 0;
  for (unsigned d = firstDim; d < view.numDims; ++d) {
    if (view.count[d] == 1)
      continue;
    if (nd > 0 &&
        stride[nd - 1] == view.strideBytes[d] * int64_t(view.count[d])) {
      count[nd - 1] *= view.count[d];
      stride[nd - 1] = view.strideBytes[d];
      continue;
    }
    stride[nd] = view.strideBytes[d];
    count[nd] = view.count[d];
    ++nd;
  }
  if (nd == 0) { // a single element
    stride[0] = view.elemBytes;
    count[0] = 1;
    nd = 1;
  }
  return nd;
}

Walker::Walker(const View &view, unsigned firstDim)
    : start(view.base), cur(view.base), dtype(view.dtype),
      partitionStride(view.strideBytes[0]) {
  nd = mergeDims(view, firstDim, stride, count);
  inner = nd - 1;
  std::fill(idx, idx + nd, 0);
}

void Walker::setPartition(uint64_t p) {
  cur = start + int64_t(p) * partitionStride;
  std::fill(idx, idx + nd, 0);
}

void Walker::advance(uint64_t n) {
  idx[inner] += n;
  cur += int64_t(n) * stride[inner];
  // Carry into the outer dims when the run is exhausted.
  for (unsigned d = inner; d > 0 && idx[d] == count[d]; --d) {
    cur -= int64_t(count[d]) * stride[d];
    idx[d] = 0;
    ++idx[d - 1];
    cur += stride[d - 1];
  }
}

void Walker::load(float *out, size_t n) {
  while (n) {
    size_t k = size_t(std::min<uint64_t>(n, runLeft()));
    loadRow(cur, stride[inner], dtype, out, k);
    advance(k);
    out += k;
    n -= k;
  }
}

void Walker::store(const float *in, size_t n) {
  while (n) {
    size_t k = size_t(std::min<uint64_t>(n, runLeft()));
    storeRow(cur, stride[inner], dtype, in, k);
    advance(k);
    in += k;
    n -= k;
  }
}

} // namespace trnc::sim
