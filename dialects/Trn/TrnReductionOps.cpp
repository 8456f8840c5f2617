//===- TrnReductionOps.cpp - verifiers of the trn reductions and softmax --===//
//
// Shape rules of TrnReductionOps.td: reductions drop exactly their sorted,
// unique dims; softmax names a dimension of its input.
//
//===----------------------------------------------------------------------===//
#include "dialects/Trn/TrnOps.h"

#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace trnc::trn;

namespace {
template <typename OpTy> LogicalResult verifyReduce(OpTy op) {
  auto in = cast<RankedTensorType>(op.getInput().getType());
  auto res = cast<RankedTensorType>(op.getResult().getType());
  ArrayRef<int64_t> dims = op.getDims();
  int64_t prev = -1;
  for (int64_t d : dims) {
    if (d < 0 || d >= in.getRank())
      return op.emitOpError("dimension ")
             << d << " out of range for rank " << in.getRank();
    if (d <= prev)
      return op.emitOpError("dims must be sorted and unique");
    prev = d;
  }
  SmallVector<int64_t> expected;
  for (int64_t i = 0; i < in.getRank(); ++i)
    if (!llvm::is_contained(dims, i))
      expected.push_back(in.getDimSize(i));
  if (res.getShape() != ArrayRef<int64_t>(expected))
    return op.emitOpError("result shape does not drop the reduced dims");
  if (res.getElementType() != in.getElementType())
    return op.emitOpError("result element type must match the input's");
  return success();
}
} // namespace

LogicalResult ReduceSumOp::verify() { return verifyReduce(*this); }
LogicalResult ReduceMaxOp::verify() { return verifyReduce(*this); }
LogicalResult ReduceMinOp::verify() { return verifyReduce(*this); }
LogicalResult ReduceProdOp::verify() { return verifyReduce(*this); }

namespace {
/// `dim` names a dimension of the input.
template <typename OpTy> LogicalResult verifyDim(OpTy op) {
  auto in = cast<RankedTensorType>(op.getInput().getType());
  int64_t dim = op.getDim();
  if (dim < 0 || dim >= std::max<int64_t>(in.getRank(), 1))
    return op.emitOpError("dim ")
           << dim << " out of range for rank " << in.getRank();
  return success();
}
} // namespace

LogicalResult SoftmaxOp::verify() { return verifyDim(*this); }
LogicalResult CumsumOp::verify() { return verifyDim(*this); }
LogicalResult CumprodOp::verify() { return verifyDim(*this); }
