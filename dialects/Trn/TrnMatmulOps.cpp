//===- TrnMatmulOps.cpp - verifiers of the Tensor Engine trn ops -----------===//
//
// Shape rules of the Tensor Engine ops: matrix products (optionally with one
// batch dim), 2-D convolutions and fused attention (forward and gradient).
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

namespace {
/// q [N, H, L, E], k [N, H, S, E], v [N, H, S, Ev] of one float type.
LogicalResult verifyAttentionOperands(Operation *op, RankedTensorType q,
                                      RankedTensorType k, RankedTensorType v) {
  if (q.getRank() != 4 || k.getRank() != 4 || v.getRank() != 4)
    return op->emitOpError("expects q, k, v of rank 4 [N, H, L|S, E], got ")
           << q.getRank() << ", " << k.getRank() << ", " << v.getRank();
  if (q.getElementType() != k.getElementType() ||
      q.getElementType() != v.getElementType())
    return op->emitOpError("q, k and v must share one element type");
  for (int64_t d : {0, 1})
    if (k.getDimSize(d) != q.getDimSize(d) ||
        v.getDimSize(d) != q.getDimSize(d))
      return op->emitOpError("q, k, v must share batch and head sizes");
  if (k.getDimSize(3) != q.getDimSize(3))
    return op->emitOpError("q and k head sizes differ: ")
           << q.getDimSize(3) << " vs " << k.getDimSize(3);
  if (v.getDimSize(2) != k.getDimSize(2))
    return op->emitOpError("k and v sequence lengths differ: ")
           << k.getDimSize(2) << " vs " << v.getDimSize(2);
  return success();
}

/// [N, H, T, E] -> [N, T, H, E]: the layout attention writes its results in.
SmallVector<int64_t> seqMajor(RankedTensorType t) {
  return {t.getDimSize(0), t.getDimSize(2), t.getDimSize(1), t.getDimSize(3)};
}

LogicalResult expectType(Operation *op, StringRef what, RankedTensorType t,
                         ArrayRef<int64_t> shape, Type elt) {
  if (t.getShape() != shape || t.getElementType() != elt) {
    InFlightDiagnostic d = op->emitOpError() << what << " must be ";
    d << RankedTensorType::get(shape, elt) << ", got " << t;
    return d;
  }
  return success();
}
} // namespace

LogicalResult AttentionOp::verify() {
  RankedTensorType q = rankedType(getQ()), k = rankedType(getK()),
                   v = rankedType(getV());
  if (failed(verifyAttentionOperands(*this, q, k, v)))
    return failure();
  int64_t n = q.getDimSize(0), h = q.getDimSize(1), l = q.getDimSize(2);
  Type f32 = Float32Type::get(getContext());
  if (failed(expectType(*this, "out", rankedType(getOut()),
                        {n, l, h, v.getDimSize(3)}, q.getElementType())) ||
      failed(expectType(*this, "lse", rankedType(getLse()), {n, h, l}, f32)))
    return failure();
  return success();
}

LogicalResult AttentionGradOp::verify() {
  RankedTensorType q = rankedType(getQ()), k = rankedType(getK()),
                   v = rankedType(getV());
  if (failed(verifyAttentionOperands(*this, q, k, v)))
    return failure();
  int64_t n = q.getDimSize(0), h = q.getDimSize(1), l = q.getDimSize(2);
  SmallVector<int64_t> outShape{n, h, l, v.getDimSize(3)};
  Type elt = q.getElementType(), f32 = Float32Type::get(getContext());
  if (failed(expectType(*this, "dout", rankedType(getDout()), outShape, elt)) ||
      failed(expectType(*this, "out", rankedType(getOut()), outShape, elt)) ||
      failed(expectType(*this, "lse", rankedType(getLse()), {n, h, l}, f32)) ||
      failed(expectType(*this, "dq", rankedType(getDq()), seqMajor(q), elt)) ||
      failed(expectType(*this, "dk", rankedType(getDk()), seqMajor(k), elt)) ||
      failed(expectType(*this, "dv", rankedType(getDv()), seqMajor(v), elt)))
    return failure();
  return success();
}
