//===- HbmView.cpp - strided HBM views, dim merging and tiling ------------===//
//
// View algebra (transpose/broadcast/reshape as stride changes) and the
// shared tiler that turns an iteration space into [partition, free] tiles.
//
//===----------------------------------------------------------------------===//
#include "passes/Tile/HbmView.h"

#include "mlir/IR/BuiltinTypes.h"

#include <cassert>
#include <optional>

using namespace mlir;
using namespace trnc::tile;

int64_t HbmView::numElements() const {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

Type HbmView::elementType() const {
  return cast<MemRefType>(root.getType()).getElementType();
}

SmallVector<int64_t> trnc::tile::contiguousStrides(ArrayRef<int64_t> shape) {
  SmallVector<int64_t> strides(shape.size(), 1);
  for (int i = (int)shape.size() - 2; i >= 0; --i)
    strides[i] = strides[i + 1] * std::max<int64_t>(shape[i + 1], 1);
  return strides;
}

int64_t trnc::tile::stridedExtent(ArrayRef<int64_t> shape,
                                  ArrayRef<int64_t> strides) {
  // An empty tensor touches nothing: one element, as the artifact verifier
  // counts its layout (Region::layoutBytes).
  if (llvm::is_contained(shape, 0))
    return 1;
  int64_t extent = 1;
  for (auto [size, stride] : llvm::zip(shape, strides))
    extent += (size - 1) * stride;
  return std::max<int64_t>(extent, 1);
}

HbmView trnc::tile::transposeView(const HbmView &in, ArrayRef<int64_t> perm) {
  HbmView out{in.root, in.offset, {}, {}};
  for (int64_t p : perm) {
    out.shape.push_back(in.shape[p]);
    out.strides.push_back(in.strides[p]);
  }
  return out;
}

HbmView trnc::tile::broadcastView(const HbmView &in, ArrayRef<int64_t> shape) {
  HbmView out{in.root, in.offset, SmallVector<int64_t>(shape),
              SmallVector<int64_t>(shape.size(), 0)};
  size_t lead = shape.size() - in.shape.size();
  for (size_t i = 0; i < in.shape.size(); ++i)
    if (in.shape[i] == shape[lead + i])
      out.strides[lead + i] = in.strides[i];
  return out;
}

HbmView trnc::tile::sliceView(const HbmView &in, ArrayRef<int64_t> starts,
                              ArrayRef<int64_t> steps,
                              ArrayRef<int64_t> shape) {
  HbmView out{in.root, in.offset, SmallVector<int64_t>(shape), {}};
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] > 0)
      out.offset += starts[d] * in.strides[d];
    out.strides.push_back(in.strides[d] * steps[d]);
  }
  return out;
}

// After torch's computeStride (aten/src/ATen/TensorUtils.cpp): walk the old
// dims from the innermost, grouping runs that are contiguous with each other,
// and require every new dim to fall inside one such run.
std::optional<HbmView> trnc::tile::reshapeView(const HbmView &in,
                                               ArrayRef<int64_t> shape) {
  HbmView out{in.root, in.offset, SmallVector<int64_t>(shape),
              SmallVector<int64_t>(shape.size(), 1)};
  if (in.numElements() == 0)
    return out;
  if (in.shape.empty())
    return out; // every new dim has size 1
  if (shape.empty())
    return out;
  int64_t viewD = (int64_t)shape.size() - 1;
  int64_t chunkBaseStride = in.strides.back();
  int64_t tensorNumel = 1, viewNumel = 1;
  for (int64_t tensorD = (int64_t)in.shape.size() - 1; tensorD >= 0;
       --tensorD) {
    tensorNumel *= in.shape[tensorD];
    if (tensorD == 0 ||
        (in.shape[tensorD - 1] != 1 &&
         in.strides[tensorD - 1] != tensorNumel * chunkBaseStride)) {
      while (viewD >= 0 && (viewNumel < tensorNumel || shape[viewD] == 1)) {
        out.strides[viewD] = viewNumel * chunkBaseStride;
        viewNumel *= shape[viewD];
        --viewD;
      }
      if (viewNumel != tensorNumel)
        return std::nullopt;
      if (tensorD > 0) {
        chunkBaseStride = in.strides[tensorD - 1];
        tensorNumel = 1;
        viewNumel = 1;
      }
    }
  }
  if (viewD != -1)
    return std::nullopt;
  return out;
}

//===----------------------------------------------------------------------===//
// Joint iteration spaces
//===----------------------------------------------------------------------===//

JointSpace JointSpace::build(ArrayRef<const HbmView *> views) {
  JointSpace js;
  js.shape.assign(views.front()->shape.begin(), views.front()->shape.end());
  for (const HbmView *v : views) {
    assert(v->shape == views.front()->shape && "views differ in shape");
    js.offsets.push_back(v->offset);
    js.strides.emplace_back(v->strides.begin(), v->strides.end());
  }
  js.merge();
  return js;
}

void JointSpace::merge() {
  // Size-1 dims carry no address arithmetic.
  for (int i = (int)shape.size() - 1; i >= 0; --i) {
    if (shape[i] != 1)
      continue;
    shape.erase(shape.begin() + i);
    for (auto &s : strides)
      s.erase(s.begin() + i);
  }
  // Dim i folds into dim i+1 when every view steps over dim i+1 exactly.
  for (int i = (int)shape.size() - 2; i >= 0; --i) {
    bool ok = llvm::all_of(
        strides, [&](auto &s) { return s[i] == s[i + 1] * shape[i + 1]; });
    if (!ok)
      continue;
    shape[i] *= shape[i + 1];
    shape.erase(shape.begin() + i + 1);
    for (auto &s : strides) {
      s[i] = s[i + 1];
      s.erase(s.begin() + i + 1);
    }
  }
}

void JointSpace::orderByView(unsigned v) {
  SmallVector<unsigned> perm(shape.size());
  for (unsigned i = 0; i < perm.size(); ++i)
    perm[i] = i;
  std::stable_sort(perm.begin(), perm.end(), [&](unsigned a, unsigned b) {
    return std::abs(strides[v][a]) > std::abs(strides[v][b]);
  });
  SmallVector<int64_t> newShape;
  for (unsigned i : perm)
    newShape.push_back(shape[i]);
  shape = std::move(newShape);
  for (auto &s : strides) {
    SmallVector<int64_t> permuted;
    for (unsigned i : perm)
      permuted.push_back(s[i]);
    s = std::move(permuted);
  }
  merge();
}

namespace {
/// The free-axis split shared by tiles and reduction chunks: over `shape`
/// with per-view `strides`, pick the innermost dims (at most four) whose
/// product fits `maxFree`, chunk the outermost of them, loop the rest.
using ChunkFn = function_ref<void(ArrayRef<int64_t> offsets,
                                  ArrayRef<SmallVector<int64_t>> freeStrides,
                                  ArrayRef<int64_t> freeCounts)>;

void chunkDims(ArrayRef<int64_t> shape,
               ArrayRef<SmallVector<int64_t>> strides,
               ArrayRef<int64_t> baseOffsets, int64_t maxFree, ChunkFn fn) {
  size_t numViews = strides.size();
  int64_t r = shape.size();
  if (r == 0) {
    SmallVector<SmallVector<int64_t>> unit(numViews, SmallVector<int64_t>{1});
    fn(baseOffsets, unit, {1});
    return;
  }
  // j: first free dim. Everything after it fits the free axis whole.
  int64_t j = r - 1, inner = 1;
  while (j > 0 && r - j < 4 && inner * shape[j] <= maxFree) {
    inner *= shape[j];
    --j;
  }
  int64_t chunk = std::max<int64_t>(1, std::min(shape[j], maxFree / inner));

  SmallVector<int64_t> idx(j, 0); // odometer over looped dims 0..j-1
  while (true) {
    for (int64_t c0 = 0; c0 < shape[j]; c0 += chunk) {
      SmallVector<int64_t> offsets(baseOffsets);
      SmallVector<SmallVector<int64_t>> freeStrides(numViews);
      for (size_t v = 0; v < numViews; ++v) {
        for (int64_t d = 0; d < j; ++d)
          offsets[v] += idx[d] * strides[v][d];
        offsets[v] += c0 * strides[v][j];
        freeStrides[v].assign(strides[v].begin() + j, strides[v].end());
      }
      SmallVector<int64_t> counts(shape.begin() + j, shape.end());
      counts[0] = std::min(chunk, shape[j] - c0);
      fn(offsets, freeStrides, counts);
    }
    int64_t d = j - 1;
    while (d >= 0 && ++idx[d] == shape[d])
      idx[d--] = 0;
    if (d < 0)
      break;
  }
}

int64_t product(ArrayRef<int64_t> xs) {
  int64_t n = 1;
  for (int64_t x : xs)
    n *= x;
  return n;
}

/// A space whose dim 0 would fill few partitions (a batch of 4 of [T*C]
/// rows, or a batch of 8 of [C, H*W] maps, that a broadcast operand keeps
/// from merging into one dim) tiled with more partitions: dim 1 of size
/// n = d * q becomes [d, q], its d part walks partitions and dim 0 is
/// looped. d is the largest divisor of n up to maxPartitions (and at least
/// twice dim 0) that still gives each partition runs of kMinRun elements (q
/// times the inner dims): batch norm's [8, 64, 112*112] spreads its 64
/// channels over 64 partitions, [8, 512, 7*7] 4 channels to a partition.
/// Shorter runs cost DMA efficiency (a 512-byte fp32 run moves at about
/// half the rate of a long one), but the rows-only tiling runs every
/// engine, and the DMA, on dim 0's few partitions.
std::optional<JointSpace> spreadOverPartitions(const JointSpace &space,
                                               int64_t maxPartitions) {
  constexpr int64_t kMinRun = 128;
  int64_t rows = space.shape[0], n = space.shape[1];
  int64_t inner = product(ArrayRef<int64_t>(space.shape).drop_front(2));
  int64_t d = std::min(n, maxPartitions);
  for (; d >= 2 * rows; --d)
    if (n % d == 0 && n / d * inner >= kMinRun)
      break;
  if (d < 2 * rows)
    return std::nullopt;
  int64_t q = n / d;
  JointSpace split;
  split.offsets = space.offsets;
  split.shape = {d, rows, q};
  split.shape.append(space.shape.begin() + 2, space.shape.end());
  for (const auto &s : space.strides) {
    SmallVector<int64_t> t{q * s[1], s[0], s[1]};
    t.append(s.begin() + 2, s.end());
    split.strides.push_back(std::move(t));
  }
  return split;
}

/// Tiles a space whose dim 0 walks partitions.
void tileRows(const JointSpace &space, int64_t maxPartitions, int64_t maxFree,
              function_ref<void(const TileTask &)> fn) {
  size_t numViews = space.numViews();
  int64_t rows = space.shape[0];
  ArrayRef<int64_t> freeShape = ArrayRef<int64_t>(space.shape).drop_front();
  SmallVector<SmallVector<int64_t>> freeDimStrides;
  for (auto &s : space.strides)
    freeDimStrides.emplace_back(s.begin() + 1, s.end());
  for (int64_t p0 = 0; p0 < rows; p0 += maxPartitions) {
    int64_t parts = std::min(maxPartitions, rows - p0);
    SmallVector<int64_t> base(space.offsets);
    for (size_t v = 0; v < numViews; ++v)
      base[v] += p0 * space.strides[v][0];
    chunkDims(freeShape, freeDimStrides, base, maxFree,
              [&](ArrayRef<int64_t> offsets,
                  ArrayRef<SmallVector<int64_t>> freeStrides,
                  ArrayRef<int64_t> freeCounts) {
                TileTask task;
                task.partitions = parts;
                task.freeElements = product(freeCounts);
                task.offsets.assign(offsets.begin(), offsets.end());
                task.counts.push_back(parts);
                task.counts.append(freeCounts.begin(), freeCounts.end());
                for (size_t v = 0; v < numViews; ++v) {
                  SmallVector<int64_t> s{space.strides[v][0]};
                  s.append(freeStrides[v].begin(), freeStrides[v].end());
                  task.strides.push_back(std::move(s));
                }
                fn(task);
              });
  }
}
} // namespace

void trnc::tile::forEachTile(const JointSpace &space, int64_t maxPartitions,
                             int64_t maxFree,
                             function_ref<void(const TileTask &)> fn) {
  if (llvm::is_contained(space.shape, 0))
    return;
  size_t numViews = space.numViews();
  if (space.shape.size() >= 2) {
    if (std::optional<JointSpace> split = spreadOverPartitions(space, maxPartitions))
      return tileRows(*split, maxPartitions, maxFree, fn);
    return tileRows(space, maxPartitions, maxFree, fn);
  }

  JointSpace rowsSpace;
  rowsSpace.offsets = space.offsets;
  if (space.shape.empty()) { // one element
    rowsSpace.shape = {1, 1};
    rowsSpace.strides.assign(numViews, SmallVector<int64_t>{1, 1});
    return tileRows(rowsSpace, maxPartitions, maxFree, fn);
  }
  // 1-D: fold into rows of `free` elements (spread over every partition),
  // then one short row for the remainder.
  int64_t n = space.shape[0];
  int64_t free = std::min(maxFree, (n + maxPartitions - 1) / maxPartitions);
  int64_t rows = n / free, rem = n % free;
  rowsSpace.shape = {rows, free};
  for (auto &s : space.strides)
    rowsSpace.strides.push_back({free * s[0], s[0]});
  tileRows(rowsSpace, maxPartitions, maxFree, fn);
  if (rem == 0)
    return;
  JointSpace tail;
  tail.shape = {1, rem};
  for (size_t v = 0; v < numViews; ++v) {
    int64_t s = space.strides[v][0];
    tail.offsets.push_back(space.offsets[v] + rows * free * s);
    tail.strides.push_back({rem * s, s});
  }
  tileRows(tail, maxPartitions, maxFree, fn);
}

void trnc::tile::forEachPartitionRun(const JointSpace &space,
                                     int64_t maxPartitions,
                                     function_ref<void(const TileTask &)> fn) {
  size_t rank = space.shape.size(), numViews = space.numViews();
  assert(rank >= 2 && "forEachPartitionRun: use forEachTile for 1-D spaces");
  if (llvm::is_contained(space.shape, 0))
    return;
  int64_t inner = space.shape.back();
  SmallVector<int64_t> index(rank - 1, 0); // odometer over the outer dims
  while (true) {
    for (int64_t p0 = 0; p0 < inner; p0 += maxPartitions) {
      TileTask task;
      task.partitions = std::min(maxPartitions, inner - p0);
      task.counts = {task.partitions};
      for (size_t v = 0; v < numViews; ++v) {
        int64_t offset = space.offsets[v] + p0 * space.strides[v].back();
        for (size_t d = 0; d + 1 < rank; ++d)
          offset += index[d] * space.strides[v][d];
        task.offsets.push_back(offset);
        task.strides.push_back({space.strides[v].back()});
      }
      fn(task);
    }
    size_t d = rank - 1;
    while (d > 0 && ++index[d - 1] == space.shape[d - 1])
      index[--d] = 0;
    if (d == 0)
      return;
  }
}

void trnc::tile::forEachFreeChunk(
    ArrayRef<int64_t> shape, ArrayRef<int64_t> strides, int64_t maxFree,
    function_ref<void(int64_t, ArrayRef<int64_t>, ArrayRef<int64_t>)> fn) {
  if (llvm::is_contained(shape, 0))
    return;
  SmallVector<SmallVector<int64_t>> s{SmallVector<int64_t>(strides)};
  chunkDims(shape, s, {0}, maxFree,
            [&](ArrayRef<int64_t> offsets,
                ArrayRef<SmallVector<int64_t>> freeStrides,
                ArrayRef<int64_t> counts) {
              fn(offsets[0], freeStrides[0], counts);
            });
}
