//===- TrnOps.cpp - trn op verifiers and folders --------------------------===//
//
// Shape rules of the tensor-level ops. Folders remove identity views and
// conversions so the lowering sees fewer ops.
//
//===----------------------------------------------------------------------===//
#include "dialects/Trn/TrnOps.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"

using namespace mlir;
using namespace trnc::trn;

static RankedTensorType rankedType(Value v) {
  return cast<RankedTensorType>(v.getType());
}

// MatmulOp and Conv2dOp: TrnMatmulOps.cpp.

//===----------------------------------------------------------------------===//
// Layout ops
//===----------------------------------------------------------------------===//

LogicalResult TransposeOp::verify() {
  RankedTensorType in = rankedType(getInput()), res = rankedType(getResult());
  ArrayRef<int64_t> perm = getPermutation();
  if ((int64_t)perm.size() != in.getRank() || res.getRank() != in.getRank())
    return emitOpError("permutation size must equal the rank ") << in.getRank();
  SmallVector<bool> seen(perm.size(), false);
  for (auto [i, p] : llvm::enumerate(perm)) {
    if (p < 0 || p >= (int64_t)perm.size() || seen[p])
      return emitOpError("permutation is not a permutation of 0..")
             << perm.size() - 1;
    seen[p] = true;
    if (res.getDimSize(i) != in.getDimSize(p))
      return emitOpError("result dim ") << i << " must be " << in.getDimSize(p);
  }
  if (res.getElementType() != in.getElementType())
    return emitOpError("element type must not change");
  return success();
}

OpFoldResult TransposeOp::fold(FoldAdaptor) {
  for (auto [i, p] : llvm::enumerate(getPermutation()))
    if ((int64_t)i != p)
      return {};
  return getInput();
}

LogicalResult ReshapeOp::verify() {
  RankedTensorType in = rankedType(getInput()), res = rankedType(getResult());
  if (in.getNumElements() != res.getNumElements())
    return emitOpError("element count changes from ")
           << in.getNumElements() << " to " << res.getNumElements();
  if (res.getElementType() != in.getElementType())
    return emitOpError("element type must not change");
  return success();
}

OpFoldResult ReshapeOp::fold(FoldAdaptor) {
  if (getInput().getType() == getResult().getType())
    return getInput();
  // A reshape of a reshape is one reshape of the first input (both are
  // row-major reinterpretations).
  if (auto inner = getInput().getDefiningOp<ReshapeOp>()) {
    if (inner.getInput().getType() == getResult().getType())
      return inner.getInput();
    getInputMutable().assign(inner.getInput());
    return getResult();
  }
  return {};
}

LogicalResult BroadcastOp::verify() {
  RankedTensorType in = rankedType(getInput()), res = rankedType(getResult());
  if (in.getRank() > res.getRank())
    return emitOpError("cannot broadcast rank ")
           << in.getRank() << " to lower rank " << res.getRank();
  int64_t lead = res.getRank() - in.getRank();
  for (int64_t i = 0; i < in.getRank(); ++i) {
    int64_t a = in.getDimSize(i), b = res.getDimSize(lead + i);
    if (a != b && a != 1)
      return emitOpError("input dim ")
             << i << " of size " << a << " cannot broadcast to " << b;
  }
  if (res.getElementType() != in.getElementType())
    return emitOpError("element type must not change");
  return success();
}

OpFoldResult BroadcastOp::fold(FoldAdaptor) {
  if (getInput().getType() == getResult().getType())
    return getInput();
  return {};
}

OpFoldResult ConvertOp::fold(FoldAdaptor) {
  if (getInput().getType() == getResult().getType())
    return getInput();
  return {};
}

#define GET_OP_CLASSES
#include "dialects/Trn/TrnOps.cpp.inc"
