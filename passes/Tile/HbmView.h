//===- HbmView.h - strided views of HBM tensors and their patterns -*- C++ -*-===//
//
// Between trn ops every tensor lives in HBM. A view names the bytes of one
// tensor inside a 1-D HBM memref (root, element offset, shape, strides), so
// transpose/broadcast/reshape cost no instruction. This file also holds the
// iteration-space algebra the lowerings share: merging dims that several
// views walk the same way, and cutting a space into [partition, free] tiles
// whose HBM side is a legal (<= 5 dim) DMA pattern for every view.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "mlir/IR/Types.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"

#include <optional>

namespace trnc::tile {

/// A tensor as a strided window of a 1-D HBM memref (strides in elements).
struct HbmView {
  mlir::Value root;
  int64_t offset = 0;
  llvm::SmallVector<int64_t> shape;
  llvm::SmallVector<int64_t> strides;

  int64_t numElements() const;
  mlir::Type elementType() const;
};

/// Row-major strides of `shape`.
llvm::SmallVector<int64_t> contiguousStrides(llvm::ArrayRef<int64_t> shape);
/// Elements a strided tensor spans: 1 + sum((size - 1) * stride), at least 1;
/// 1 for an empty tensor.
int64_t stridedExtent(llvm::ArrayRef<int64_t> shape,
                      llvm::ArrayRef<int64_t> strides);

/// `trn.transpose`: result dim i is input dim perm[i].
HbmView transposeView(const HbmView &in, llvm::ArrayRef<int64_t> perm);
/// `trn.broadcast`: trailing dims align; new and size-1 dims get stride 0.
HbmView broadcastView(const HbmView &in, llvm::ArrayRef<int64_t> shape);
/// `trn.slice`: dim d starts at starts[d] and steps by steps[d] (negative
/// steps walk backwards); `shape` is the result's.
HbmView sliceView(const HbmView &in, llvm::ArrayRef<int64_t> starts,
                  llvm::ArrayRef<int64_t> steps, llvm::ArrayRef<int64_t> shape);
/// `trn.reshape` as a view (torch's view stride rules), or nullopt when the
/// elements are not evenly strided in the new shape.
std::optional<HbmView> reshapeView(const HbmView &in,
                                   llvm::ArrayRef<int64_t> shape);

/// An iteration space walked by several views at once: one shape, and per
/// view an offset and strides.
struct JointSpace {
  llvm::SmallVector<int64_t> shape;
  llvm::SmallVector<int64_t> offsets;
  llvm::SmallVector<llvm::SmallVector<int64_t>> strides; // [view][dim]

  /// Views of identical shape walked together; size-1 dims dropped and
  /// adjacent dims merged where every view allows it.
  static JointSpace build(llvm::ArrayRef<const HbmView *> views);
  /// Merges adjacent dims in place where every view allows it.
  void merge();
  /// Reorders dims by decreasing stride of view `v` (stable), then merges:
  /// for spaces whose visiting order is free (elementwise), so that view v
  /// is walked row-major and its innermost dim is the contiguous one.
  void orderByView(unsigned v);
  unsigned numViews() const { return offsets.size(); }
};

/// One tile of a JointSpace: `partitions` rows of `freeElements` each; per
/// view the HBM pattern (offset, strides, counts) whose row-major walk
/// matches the tile's [partition, free] row-major walk.
struct TileTask {
  int64_t partitions = 1;
  int64_t freeElements = 1;
  llvm::SmallVector<int64_t> offsets;
  llvm::SmallVector<llvm::SmallVector<int64_t>> strides; // [view][dim]
  llvm::SmallVector<int64_t> counts;                     // shared by views
};

/// Cuts `space` into tiles of at most `maxPartitions` x `maxFree`: dim 0 (or
/// a row split of a 1-D space, or of dim 1 when dim 0 would fill less than
/// half the partitions and dim 1 splits evenly into long runs) walks
/// partitions, the innermost dims (at most four, the outermost of them
/// chunked) walk the free axis, the remaining dims are looped. The order of
/// the tiles depends only on the space.
void forEachTile(const JointSpace &space, int64_t maxPartitions,
                 int64_t maxFree, llvm::function_ref<void(const TileTask &)> fn);

/// Visits a space of two or more dims (points walked one per partition,
/// free size 1) in runs of up to `maxPartitions` consecutive points of its
/// innermost dim, the outer dims looped: the rows of a row group whose walks
/// do not merge into one dim (a [T, N] operand broadcast over a batch B is
/// walked [B, T] with strides [0, N]). A run never crosses an outer index,
/// so each view's rows are `strides.back()` apart.
void forEachPartitionRun(const JointSpace &space, int64_t maxPartitions,
                         llvm::function_ref<void(const TileTask &)> fn);

/// Splits `shape` (one view's dims) into chunks of the free axis: the
/// innermost dims fit `maxFree` (at most four dims, outermost chunked), outer
/// dims are looped. Calls fn(offset in elements along `strides`, free
/// strides, free counts) per chunk.
void forEachFreeChunk(
    llvm::ArrayRef<int64_t> shape, llvm::ArrayRef<int64_t> strides,
    int64_t maxFree,
    llvm::function_ref<void(int64_t, llvm::ArrayRef<int64_t>,
                            llvm::ArrayRef<int64_t>)> fn);

} // namespace trnc::tile
