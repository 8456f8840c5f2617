//===- AttentionImporters.cpp - trnc.attention(_backward) -> trn ---------===//
//
// The fused attention custom ops (python/trnc/attention_ops.py; the
// scaled-dot-product-attention rules of decomp_matmul_conv.py reach them
// when no mask or dropout is involved) -> trn.attention / trn.attention_grad,
// lowered as one group each (passes/Tile/LowerAttention.cpp).
//
//===----------------------------------------------------------------------===//
#include "NodeContext.h"

#include "dialects/Trn/TrnOps.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"

using namespace mlir;

namespace trnc::import {
namespace {

/// Runs the new op's verifier, turning its message into the node's
/// rejection (a graph that contradicts the op's shape rules is invalid
/// input, not an internal error); the op is erased on failure.
LogicalResult verifyNew(NodeContext &ctx, Operation *op) {
  std::string message;
  LogicalResult result = success();
  {
    ScopedDiagnosticHandler capture(op->getContext(), [&](Diagnostic &d) {
      message = d.str();
      return success();
    });
    result = mlir::verify(op);
  }
  if (succeeded(result))
    return success();
  op->erase();
  return ctx.invalid(message);
}

struct AttentionArgs {
  SmallVector<Value> tensors;
  FloatAttr scale;
  UnitAttr causal;
};

/// Reads `count` tensors, then (causal, scale); checks result types exist.
FailureOr<AttentionArgs> readArgs(NodeContext &ctx,
                                  ArrayRef<StringRef> names) {
  AttentionArgs args;
  for (auto [i, name] : llvm::enumerate(names)) {
    FailureOr<Value> t = ctx.tensor(i, name);
    if (failed(t))
      return failure();
    args.tensors.push_back(*t);
  }
  FailureOr<bool> causal = ctx.boolean(names.size(), "causal");
  FailureOr<double> scale = ctx.scalar(names.size() + 1, "scale");
  if (failed(causal) || failed(scale))
    return failure();
  args.scale = ctx.builder.getF64FloatAttr(*scale);
  if (*causal)
    args.causal = ctx.builder.getUnitAttr();
  for (RankedTensorType t : ctx.resultTypes())
    if (!t)
      return ctx.invalid("every result of the fused attention must be a tensor");
  return args;
}

/// trnc.attention(q, k, v, causal, scale) -> (out [N, L, H, Ev], lse).
FailureOr<SmallVector<Value>> importAttention(NodeContext &ctx) {
  FailureOr<AttentionArgs> a = readArgs(ctx, {"q", "k", "v"});
  if (failed(a))
    return failure();
  ArrayRef<RankedTensorType> types = ctx.resultTypes();
  if (types.size() != 2)
    return ctx.invalid("trnc.attention has two results (out, lse)");
  auto op = ctx.builder.create<trn::AttentionOp>(
      ctx.loc, TypeRange{types[0], types[1]}, a->tensors[0], a->tensors[1],
      a->tensors[2], a->scale, a->causal);
  if (failed(verifyNew(ctx, op)))
    return failure();
  return SmallVector<Value>{op.getOut(), op.getLse()};
}

/// trnc.attention_backward(dout, q, k, v, out, lse, causal, scale)
///   -> (dq, dk, dv).
FailureOr<SmallVector<Value>> importAttentionBackward(NodeContext &ctx) {
  FailureOr<AttentionArgs> a =
      readArgs(ctx, {"grad_out", "q", "k", "v", "out", "lse"});
  if (failed(a))
    return failure();
  ArrayRef<RankedTensorType> types = ctx.resultTypes();
  if (types.size() != 3)
    return ctx.invalid("trnc.attention_backward has three results (dq, dk, dv)");
  const SmallVector<Value> &t = a->tensors;
  auto op = ctx.builder.create<trn::AttentionGradOp>(
      ctx.loc, TypeRange{types[0], types[1], types[2]}, t[0], t[1], t[2], t[3],
      t[4], t[5], a->scale, a->causal);
  if (failed(verifyNew(ctx, op)))
    return failure();
  return SmallVector<Value>{op.getDq(), op.getDk(), op.getDv()};
}

} // namespace

void registerAttentionImporters(OpRegistry &r) {
  r.addMulti("trnc.attention.default", importAttention);
  r.addMulti("trnc.attention_backward.default", importAttentionBackward);
}

} // namespace trnc::import
