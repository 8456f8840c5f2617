//===- TrnReductionPatterns.cpp - canonicalization of trn reductions ------===//
//
// The sum of a one-hot select: reduce_sum over dim d of
// select(iota_d == t, a, 0), with t and a the same all along d (the
// gradient nll_loss hands to log_softmax's backward, which sums it over the
// classes), has at most one nonzero term, a, where t is an index of d. It
// becomes select(t in {0, ..., C-1}, a, 0) over the other dims: no pass over
// the row, so what is left of a cross-entropy gradient is elementwise and
// need not hold a whole row on chip.
//
//===----------------------------------------------------------------------===//
#include "dialects/Trn/TrnOps.h"

#include "mlir/IR/PatternMatch.h"

#include <cmath>

using namespace mlir;
using namespace trnc::trn;

namespace {

RankedTensorType tensorOf(Value v) { return cast<RankedTensorType>(v.getType()); }

/// The value `v` broadcasts (numpy-style, right-aligned) to a rank-`rank`
/// shape in which dim `d` is constant: its own dim aligned with d is 1 or
/// absent. A trn.full is constant everywhere (returned itself).
Value constantAlong(Value v, int64_t d, int64_t rank) {
  if (v.getDefiningOp<FullOp>())
    return v;
  auto b = v.getDefiningOp<BroadcastOp>();
  if (!b)
    return Value();
  RankedTensorType in = tensorOf(b.getInput());
  int64_t aligned = d - (rank - in.getRank());
  return aligned < 0 || in.getDimSize(aligned) == 1 ? b.getInput() : Value();
}

/// Whether `v` holds 0, 1, ..., C-1 along dim `d` (C its size): a broadcast
/// of a reshaped (or plain) iota from 0 by 1 whose other dims are all 1.
bool iotaAlong(Value v, int64_t d) {
  RankedTensorType type = tensorOf(v);
  int64_t c = type.getDimSize(d);
  Value x = v;
  if (auto b = v.getDefiningOp<BroadcastOp>())
    x = b.getInput();
  RankedTensorType xt = tensorOf(x);
  int64_t aligned = d - (type.getRank() - xt.getRank());
  if (aligned < 0 || xt.getDimSize(aligned) != c || xt.getNumElements() != c)
    return false;
  while (auto r = x.getDefiningOp<ReshapeOp>())
    x = r.getInput();
  auto iota = x.getDefiningOp<IotaOp>();
  return iota && iota.getStart().convertToDouble() == 0.0 &&
         iota.getStep().convertToDouble() == 1.0 &&
         tensorOf(iota.getResult()).getNumElements() == c;
}

/// Whether `v` is +0 everywhere (a full, or its broadcast).
bool isPositiveZero(Value v) {
  if (auto b = v.getDefiningOp<BroadcastOp>())
    v = b.getInput();
  auto full = v.getDefiningOp<FullOp>();
  if (!full)
    return false;
  double x = full.getValue().convertToDouble();
  return x == 0.0 && !std::signbit(x);
}

struct OneHotSum : OpRewritePattern<ReduceSumOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(ReduceSumOp sum,
                                PatternRewriter &rewriter) const override {
    if (sum.getDims().size() != 1)
      return failure();
    int64_t d = sum.getDims()[0];
    Value in = sum.getInput();
    auto cvt = in.getDefiningOp<ConvertOp>();
    auto select = (cvt ? cvt.getInput() : in).getDefiningOp<SelectOp>();
    if (!select || !isPositiveZero(select.getOnFalse()))
      return failure();
    auto eq = select.getCond().getDefiningOp<EqOp>();
    if (!eq)
      return failure();
    int64_t rank = tensorOf(in).getRank();
    Value index = eq.getRhs(), iota = eq.getLhs();
    if (!iotaAlong(iota, d))
      std::swap(index, iota);
    if (!iotaAlong(iota, d))
      return failure();
    Value t = constantAlong(index, d, rank);
    Value a = constantAlong(select.getOnTrue(), d, rank);
    if (!t || !a)
      return failure();

    Location loc = sum.getLoc();
    RankedTensorType result = sum.getType();
    // The per-row ops go right after t and a exist, ahead of the row-wide
    // ops: a fusion group that reads the sum (the gradient's `exp * sum`)
    // then finds it computed when the group forms, instead of being cut.
    OpBuilder::InsertionGuard guard(rewriter);
    Operation *tDef = t.getDefiningOp(), *aDef = a.getDefiningOp();
    if (tDef && aDef && tDef->getBlock() != aDef->getBlock())
      return failure();
    Value last = !tDef ? a : !aDef ? t : tDef->isBeforeInBlock(aDef) ? a : t;
    rewriter.setInsertionPointAfterValue(last);
    auto like = [&](Type elt) { return result.clone(elt); };
    // A value constant along d as a tensor of the result's shape: its
    // broadcast with d of size 1, reshaped without d.
    ArrayRef<int64_t> full = tensorOf(in).getShape();
    auto perRow = [&](Value v) -> Value {
      Type elt = tensorOf(v).getElementType();
      if (auto f = v.getDefiningOp<FullOp>())
        return rewriter.create<FullOp>(loc, like(elt), f.getValueAttr());
      SmallVector<int64_t> ones(full);
      ones[d] = 1;
      auto onesType = RankedTensorType::get(ones, elt);
      if (tensorOf(v) != onesType)
        v = rewriter.create<BroadcastOp>(loc, onesType, v);
      return rewriter.create<ReshapeOp>(loc, like(elt), v);
    };
    Value tRow = perRow(t), aRow = perRow(a);
    Type tElt = tensorOf(tRow).getElementType();
    auto constant = [&](Type elt, double x) {
      return rewriter.create<FullOp>(loc, like(elt), rewriter.getF64FloatAttr(x));
    };
    auto boolType = like(rewriter.getI1Type());
    int64_t c = full[d];
    Value inRange = rewriter.create<LogicalAndOp>(
        loc, boolType, rewriter.create<GeOp>(loc, boolType, tRow, constant(tElt, 0.0)),
        rewriter.create<LeOp>(loc, boolType, tRow, constant(tElt, double(c - 1))));
    if (isa<FloatType>(tElt)) // an index only if integral
      inRange = rewriter.create<LogicalAndOp>(
          loc, boolType, inRange,
          rewriter.create<EqOp>(loc, boolType,
                                rewriter.create<FloorOp>(loc, tRow.getType(), tRow),
                                tRow));
    if (tensorOf(aRow).getElementType() != result.getElementType())
      aRow = rewriter.create<ConvertOp>(loc, result, aRow);
    rewriter.replaceOpWithNewOp<SelectOp>(sum, result, inRange, aRow,
                                          constant(result.getElementType(), 0.0));
    return success();
  }
};

} // namespace

void ReduceSumOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                              MLIRContext *context) {
  patterns.add<OneHotSum>(context);
}
