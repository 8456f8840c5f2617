//===- MatmulImporters.cpp - mm, bmm and addmm ----------------------------===//
//
// aten.mm and aten.bmm -> trn.matmul; aten.addmm -> beta * bias + alpha *
// (a @ b) with the bias broadcast explicitly. Operands are converted to the
// result dtype first (trn.matmul needs one element type). baddbmm, linear,
// matmul and einsum reach these through the decomposition table (views +
// bmm/mm/addmm). Convolutions and pooling: ConvImporters.cpp.
//
//===----------------------------------------------------------------------===//
#include "NodeContext.h"

#include "dialects/Trn/TrnOps.h"

using namespace mlir;

namespace trnc::import {
namespace {

/// a @ b for two 2-D tensors, or batch by batch for two 3-D tensors, in the
/// result dtype.
FailureOr<Value> matmul(NodeContext &ctx, Value a, Value b, int64_t rank) {
  auto at = cast<RankedTensorType>(a.getType());
  auto bt = cast<RankedTensorType>(b.getType());
  auto shapes = [&] {
    return formatShape(at.getShape()) + " @ " + formatShape(bt.getShape());
  };
  if (at.getRank() != rank || bt.getRank() != rank)
    return ctx.invalid("expects " + std::to_string(rank) +
                       "-D operands, got " + shapes());
  if (rank == 3 && at.getDimSize(0) != bt.getDimSize(0))
    return ctx.invalid("batch sizes differ: " + shapes());
  if (at.getDimSize(rank - 1) != bt.getDimSize(rank - 2))
    return ctx.invalid("contraction sizes differ: " + shapes());
  Type et = ctx.resultElementType();
  if (!isa<FloatType>(et))
    return ctx.unsupported("integer matmul: the Tensor Engine multiplies "
                           "floating-point operands only");
  SmallVector<int64_t> shape(at.getShape().drop_back());
  shape.push_back(bt.getDimSize(rank - 1));
  auto type = RankedTensorType::get(shape, et);
  if (at.getDimSize(rank - 1) == 0) // an empty sum
    return ctx.full(type, 0.0);
  return ctx.create<trn::MatmulOp>(type, ctx.convert(a, et),
                                   ctx.convert(b, et));
}

FailureOr<Value> importMm(NodeContext &ctx) {
  FailureOr<Value> a = ctx.tensor(0, "self"), b = ctx.tensor(1, "mat2");
  if (failed(a) || failed(b))
    return failure();
  return matmul(ctx, *a, *b, 2);
}

FailureOr<Value> importBmm(NodeContext &ctx) {
  FailureOr<Value> a = ctx.tensor(0, "self"), b = ctx.tensor(1, "mat2");
  if (failed(a) || failed(b))
    return failure();
  return matmul(ctx, *a, *b, 3);
}

FailureOr<Value> importAddmm(NodeContext &ctx) {
  FailureOr<Value> bias = ctx.tensor(0, "self");
  FailureOr<Value> a = ctx.tensor(1, "mat1"), b = ctx.tensor(2, "mat2");
  FailureOr<double> beta = ctx.scalar(kKeywordOnly, "beta", 1.0);
  FailureOr<double> alpha = ctx.scalar(kKeywordOnly, "alpha", 1.0);
  if (failed(bias) || failed(a) || failed(b) || failed(beta) || failed(alpha))
    return failure();
  FailureOr<Value> product = matmul(ctx, *a, *b, 2);
  if (failed(product))
    return failure();
  Value scaled = ctx.mulScalar(*product, *alpha);
  // ATen ignores the bias when beta == 0 (NaN and inf in it do not leak).
  if (*beta == 0.0)
    return scaled;
  FailureOr<SmallVector<Value>> ops = ctx.elementwiseOperands({scaled, *bias});
  if (failed(ops))
    return failure();
  if ((*ops)[0].getType() != scaled.getType())
    return ctx.invalid("bias of shape " +
                       formatShape(cast<RankedTensorType>(bias->getType())
                                       .getShape()) +
                       " does not broadcast to the product's shape");
  Value biasTerm = ctx.mulScalar((*ops)[1], *beta);
  return ctx.create<trn::AddOp>(scaled.getType(), scaled, biasTerm);
}

} // namespace

void registerConvImporters(OpRegistry &r);      // ConvImporters.cpp
void registerAttentionImporters(OpRegistry &r); // AttentionImporters.cpp

void registerMatmulImporters(OpRegistry &r) {
  r.add("aten.mm.default", importMm);
  r.add("aten.bmm.default", importBmm);
  r.add("aten.addmm.default", importAddmm);
  registerConvImporters(r);
  registerAttentionImporters(r);
}

} // namespace trnc::import
