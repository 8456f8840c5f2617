//===- TrnIndexingPatterns.cpp - canonicalization of trn.gather_rows ------===//
//
// A gather whose index is an arange: gather_rows(table, iota(start = s,
// step = k)) with every index s, s + k, ..., s + k (M - 1) inside [0, N)
// reads rows s, s + k, ... of the table in order, which is the strided
// window trn.slice(table, starts = [s, 0], steps = [k, 1]). The window is
// folded into the access patterns of whatever reads it: no indirect DMA,
// no copy of the rows (a sequence's position embeddings, positions =
// arange(T), and rotary tables indexed by them).
//
//===----------------------------------------------------------------------===//
#include "dialects/Trn/TrnOps.h"

#include "mlir/IR/PatternMatch.h"

#include <cmath>

using namespace mlir;
using namespace trnc::trn;

namespace {

/// `x` as an int64 when it is an integer (an iota's start or step).
std::optional<int64_t> integral(double x) {
  if (!std::isfinite(x) || std::trunc(x) != x || std::abs(x) > 0x1p52)
    return std::nullopt;
  return int64_t(x);
}

struct GatherOfIota : OpRewritePattern<GatherRowsOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(GatherRowsOp op,
                                PatternRewriter &rewriter) const override {
    auto iota = op.getIndex().getDefiningOp<IotaOp>();
    if (!iota)
      return failure();
    std::optional<int64_t> start = integral(iota.getStart().convertToDouble()),
                           step = integral(iota.getStep().convertToDouble());
    auto table = cast<RankedTensorType>(op.getTable().getType());
    int64_t m = cast<RankedTensorType>(op.getIndex().getType()).getDimSize(0),
            n = table.getDimSize(0);
    // Step 0 repeats one row (a broadcast, not a window); an index out of
    // range gathers zeros, which no window reads.
    if (!start || !step || *step == 0 || m == 0)
      return failure();
    int64_t last = *start + *step * (m - 1);
    if (*start < 0 || *start >= n || last < 0 || last >= n)
      return failure();
    rewriter.replaceOpWithNewOp<SliceOp>(
        op, op.getType(), op.getTable(),
        rewriter.getDenseI64ArrayAttr({*start, 0}),
        rewriter.getDenseI64ArrayAttr({*step, 1}));
    return success();
  }
};

} // namespace

void GatherRowsOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                               MLIRContext *context) {
  patterns.add<GatherOfIota>(context);
}
