//===- TrnDataMovementOps.cpp - verifiers of the data-movement trn ops ----===//
//
// Shape rules of the data-movement ops (TrnLayoutOps.td): every element a
// slice reads lies inside its input; concat inputs agree off the concat dim;
// iota is 1-D; triangle keeps its input's type and has two dims to act on.
//
//===----------------------------------------------------------------------===//
#include "dialects/Trn/TrnOps.h"

using namespace mlir;
using namespace trnc::trn;

LogicalResult SliceOp::verify() {
  auto in = cast<RankedTensorType>(getInput().getType());
  auto res = cast<RankedTensorType>(getResult().getType());
  ArrayRef<int64_t> starts = getStarts(), steps = getSteps();
  int64_t rank = in.getRank();
  if (res.getRank() != rank || (int64_t)starts.size() != rank ||
      (int64_t)steps.size() != rank)
    return emitOpError("expects starts, steps and result of the input's rank ")
           << rank;
  if (in.getElementType() != res.getElementType())
    return emitOpError("result element type must match the input's");
  for (int64_t d = 0; d < rank; ++d) {
    int64_t n = res.getDimSize(d), size = in.getDimSize(d);
    if (n == 0)
      continue;
    int64_t last = starts[d] + (n - 1) * steps[d];
    if (steps[d] == 0 && n > 1)
      return emitOpError("dim ") << d << " has step 0";
    if (starts[d] < 0 || starts[d] >= size || last < 0 || last >= size)
      return emitOpError("dim ")
             << d << " reads elements " << starts[d] << ".." << last
             << " outside 0.." << size - 1;
  }
  return success();
}

LogicalResult ConcatOp::verify() {
  auto res = cast<RankedTensorType>(getResult().getType());
  int64_t dim = getDim(), rank = res.getRank();
  if (getInputs().empty())
    return emitOpError("needs at least one input");
  if (dim < 0 || dim >= rank)
    return emitOpError("dim ") << dim << " out of range for rank " << rank;
  int64_t total = 0;
  for (Value v : getInputs()) {
    auto t = cast<RankedTensorType>(v.getType());
    if (t.getRank() != rank || t.getElementType() != res.getElementType())
      return emitOpError("inputs must have the result's rank and element type");
    for (int64_t d = 0; d < rank; ++d)
      if (d != dim && t.getDimSize(d) != res.getDimSize(d))
        return emitOpError("input shape differs from the result off dim ")
               << dim;
    total += t.getDimSize(dim);
  }
  if (total != res.getDimSize(dim))
    return emitOpError("inputs sum to ")
           << total << " along dim " << dim << ", result has "
           << res.getDimSize(dim);
  return success();
}

LogicalResult IotaOp::verify() {
  if (cast<RankedTensorType>(getResult().getType()).getRank() != 1)
    return emitOpError("result must be 1-D");
  return success();
}

LogicalResult TriangleOp::verify() {
  if (getInput().getType() != getResult().getType())
    return emitOpError("result type must match the input's");
  if (cast<RankedTensorType>(getInput().getType()).getRank() < 2)
    return emitOpError("input must have at least 2 dims");
  return success();
}
