//===- TrnElementwisePatterns.cpp - canonicalization of trn elementwise ops -===//
//
// An add that reads a reshape of a computed value, its other operand a
// function argument (or a reshape of a value of the computed value's
// shape), is computed in the computed value's shape and its result
// reshaped: add(arg, reshape(y)) -> reshape(add(reshape(arg), y)). A
// logits gradient viewed [B, T, V] plus the logits' tangent then is an op of
// the gradient's [B*T, V] shape, and joins its fusion group instead of
// reading it back from HBM. Reshapes are views: they cost no instruction.
//
// An activation of a reshape of a computed value that keeps its rows
// ([B, T, N] <-> [B*T, N]) is computed in that value's shape and its result
// reshaped: gelu(reshape(y)) -> reshape(gelu(y)). An MLP's up-projection, viewed [B, T, 4C] and passed
// through a GELU, then has its GELU on the product's [B*T, 4C] tiles, in
// the matmul's epilogue, instead of in a group of its own that reads the
// product back from HBM.
//
// An add of x and a scatter-add into zeros (an embedding's gradient, added
// to the tied output projection's) is the scatter-add into x:
// add(x, scatter_rows(full 0, i, s) accumulate) -> scatter_rows(x, i, s)
// accumulate, when the scatter has no other reader. No [N, D] zeros are
// written and no add pass reads both back; each row's sum starts from x's
// row instead of 0 and is rounded once (a 16-bit scatter-add sums in fp32
// from its base's rows, LowerIndirect.cpp), where x + scatter rounded the
// scatter's sum and then the add.
//
//===----------------------------------------------------------------------===//
#include "dialects/Trn/TrnOps.h"

#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace trnc::trn;

namespace {

struct AddInReshapedShape : OpRewritePattern<AddOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(AddOp add,
                                PatternRewriter &rewriter) const override {
    for (bool swap : {false, true}) {
      Value x = swap ? add.getRhs() : add.getLhs();
      auto reshaped = (swap ? add.getLhs() : add.getRhs()).getDefiningOp<ReshapeOp>();
      if (!reshaped || !reshaped.getInput().getDefiningOp())
        continue; // a view of an argument: nothing to fuse with
      Value y = reshaped.getInput();
      auto shape = cast<RankedTensorType>(y.getType());
      // x in y's shape without computing anything.
      Value xIn;
      if (auto r = x.getDefiningOp<ReshapeOp>();
          r && r.getInput().getType() == shape)
        xIn = r.getInput();
      else if (isa<BlockArgument>(x))
        xIn = rewriter.create<ReshapeOp>(add.getLoc(), shape, x);
      else
        continue;
      Value sum = swap ? rewriter.create<AddOp>(add.getLoc(), y, xIn)
                       : rewriter.create<AddOp>(add.getLoc(), xIn, y);
      rewriter.replaceOpWithNewOp<ReshapeOp>(add, add.getType(), sum);
      return success();
    }
    return failure();
  }
};

struct AddIntoScatter : OpRewritePattern<AddOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(AddOp add,
                                PatternRewriter &rewriter) const override {
    for (bool swap : {false, true}) {
      Value x = swap ? add.getRhs() : add.getLhs();
      auto scatter =
          (swap ? add.getLhs() : add.getRhs()).getDefiningOp<ScatterRowsOp>();
      if (!scatter || !scatter.getAccumulate() || !scatter->hasOneUse() ||
          x.getType() != add.getType() || scatter.getType() != add.getType())
        continue;
      auto zeros = scatter.getBase().getDefiningOp<FullOp>();
      if (!zeros || zeros.getValue().convertToDouble() != 0.0)
        continue;
      rewriter.replaceOpWithNewOp<ScatterRowsOp>(
          add, add.getType(), x, scatter.getIndex(), scatter.getSrc(),
          /*accumulate=*/true);
      return success();
    }
    return failure();
  }
};

template <typename Op>
struct ActivationInProducerShape : OpRewritePattern<Op> {
  using OpRewritePattern<Op>::OpRewritePattern;

  LogicalResult matchAndRewrite(Op op,
                                PatternRewriter &rewriter) const override {
    auto reshaped = op.getInput().template getDefiningOp<ReshapeOp>();
    if (!reshaped || !reshaped.getInput().getDefiningOp())
      return failure(); // a view of an argument: nothing to fuse with
    // Only leading dims merged or split ([B, T, N] <-> [B*T, N]): the rows
    // stay rows, so no shape with a worse tiling (a [K, 1] column) results.
    Value y = reshaped.getInput();
    ArrayRef<int64_t> from = cast<RankedTensorType>(y.getType()).getShape(),
                      to = op.getType().getShape();
    if (from.empty() || to.empty() || from.back() != to.back())
      return failure();
    Value result = rewriter.create<Op>(op.getLoc(), y.getType(), y);
    rewriter.replaceOpWithNewOp<ReshapeOp>(op, op.getType(), result);
    return success();
  }
};

} // namespace

#define TRNC_ACTIVATION_IN_PRODUCER_SHAPE(Op)                                  \
  void Op::getCanonicalizationPatterns(RewritePatternSet &patterns,           \
                                       MLIRContext *context) {                 \
    patterns.add<ActivationInProducerShape<Op>>(context);                      \
  }
TRNC_ACTIVATION_IN_PRODUCER_SHAPE(GeluOp)
TRNC_ACTIVATION_IN_PRODUCER_SHAPE(GeluTanhOp)
TRNC_ACTIVATION_IN_PRODUCER_SHAPE(SiluOp)
TRNC_ACTIVATION_IN_PRODUCER_SHAPE(SigmoidOp)
TRNC_ACTIVATION_IN_PRODUCER_SHAPE(TanhOp)
TRNC_ACTIVATION_IN_PRODUCER_SHAPE(MishOp)
TRNC_ACTIVATION_IN_PRODUCER_SHAPE(ReluOp)
#undef TRNC_ACTIVATION_IN_PRODUCER_SHAPE

void AddOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                        MLIRContext *context) {
  patterns.add<AddInReshapedShape, AddIntoScatter>(context);
}
