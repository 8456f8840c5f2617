//===- TrnMatmulOps.cpp - trn.matmul and trn.conv2d verifiers -------------===//
//
// Shape rules of the Tensor Engine ops: matrix products (optionally with one
// batch dim) and 2-D convolutions.
//
//===----------------------------------------------------------------------===//
#include "dialects/Trn/TrnOps.h"

using namespace mlir;
using namespace trnc::trn;

static RankedTensorType rankedType(Value v) {
  return cast<RankedTensorType>(v.getType());
}

LogicalResult MatmulOp::verify() {
  RankedTensorType lhs = rankedType(getLhs()), rhs = rankedType(getRhs()),
                   res = rankedType(getResult());
  int64_t rank = lhs.getRank();
  if ((rank != 2 && rank != 3) || rhs.getRank() != rank ||
      res.getRank() != rank)
    return emitOpError("expects operands and result of rank 2 (or 3 with a "
                       "batch dim), got ")
           << lhs.getRank() << ", " << rhs.getRank() << " -> " << res.getRank();
  if (rank == 3 && (lhs.getDimSize(0) != rhs.getDimSize(0) ||
                    res.getDimSize(0) != lhs.getDimSize(0)))
    return emitOpError("batch sizes differ: ")
           << lhs.getDimSize(0) << ", " << rhs.getDimSize(0) << " -> "
           << res.getDimSize(0);
  int64_t m = rank - 2, k = rank - 1;
  if (lhs.getDimSize(k) != rhs.getDimSize(m))
    return emitOpError("contraction sizes differ: lhs has K = ")
           << lhs.getDimSize(k) << ", rhs has K = " << rhs.getDimSize(m);
  if (res.getDimSize(m) != lhs.getDimSize(m) ||
      res.getDimSize(k) != rhs.getDimSize(k))
    return emitOpError("result matrix shape must be [")
           << lhs.getDimSize(m) << ", " << rhs.getDimSize(k) << "]";
  if (lhs.getElementType() != rhs.getElementType() ||
      lhs.getElementType() != res.getElementType())
    return emitOpError("operands and result must share one element type");
  return success();
}

LogicalResult Conv2dOp::verify() {
  RankedTensorType in = rankedType(getInput()), w = rankedType(getWeight()),
                   res = rankedType(getResult());
  if (in.getRank() != 4 || w.getRank() != 4 || res.getRank() != 4)
    return emitOpError("expects rank-4 input, weight and result");
  for (ArrayRef<int64_t> a : {getStride(), getPadding(), getDilation(),
                              getLhsDilation()})
    if (a.size() != 2)
      return emitOpError("stride, padding, dilation and lhs_dilation need "
                         "two values (H, W)");
  for (ArrayRef<int64_t> a : {getStride(), getDilation(), getLhsDilation()})
    if (a[0] < 1 || a[1] < 1)
      return emitOpError("stride, dilation and lhs_dilation must be >= 1");
  int64_t g = getGroups();
  if (g < 1 || in.getDimSize(1) % g || w.getDimSize(0) % g)
    return emitOpError("groups = ")
           << g << " must divide input channels " << in.getDimSize(1)
           << " and output channels " << w.getDimSize(0);
  if (w.getDimSize(1) * g != in.getDimSize(1))
    return emitOpError("weight has ")
           << w.getDimSize(1) << " channels per group, input needs "
           << in.getDimSize(1) / g;
  if (res.getDimSize(0) != in.getDimSize(0) ||
      res.getDimSize(1) != w.getDimSize(0))
    return emitOpError("result must be [N = ")
           << in.getDimSize(0) << ", O = " << w.getDimSize(0) << ", ...]";
  if (in.getElementType() != w.getElementType() ||
      in.getElementType() != res.getElementType())
    return emitOpError("operands and result must share one element type");
  return success();
}
