//===- TrnIndexingPatterns.cpp - canonicalization of gathers and scatters -===//
//
// A gather whose index is an arange: gather_rows(table, iota(start = s,
// step = k)) with every index s, s + k, ..., s + k (M - 1) inside [0, N)
// reads rows s, s + k, ... of the table in order, which is the strided
// window trn.slice(table, starts = [s, 0], steps = [k, 1]). The window is
// folded into the access patterns of whatever reads it: no indirect DMA,
// no copy of the rows (a sequence's position embeddings, positions =
// arange(T), and rotary tables indexed by them).
//
// A scatter whose index is an arange over every row of its base, once each
// (start 0 step 1, or start N - 1 step -1, N indices): scatter_rows(base,
// iota, src) writes every row, so it is src (reversed for step -1), and
// with `accumulate` add(base, src). The position embedding's gradient,
// scattered by positions = arange(T) into zeros, is then an add in its
// reduction's epilogue instead of a zero fill, an index load and an
// indirect DMA of every row.
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

/// The rows an iota of `m` indices names in a table of `n` rows, when every
/// one is inside the table and they are distinct (step != 0).
struct IotaRows {
  int64_t start, step;
};
std::optional<IotaRows> iotaRows(Value index, int64_t n) {
  auto iota = index.getDefiningOp<IotaOp>();
  if (!iota)
    return std::nullopt;
  std::optional<int64_t> start = integral(iota.getStart().convertToDouble()),
                         step = integral(iota.getStep().convertToDouble());
  int64_t m = cast<RankedTensorType>(index.getType()).getDimSize(0);
  // Step 0 repeats one row (a broadcast, not a window); an index out of
  // range gathers zeros (or is dropped by a scatter), which no window does.
  if (!start || !step || *step == 0 || m == 0)
    return std::nullopt;
  int64_t last = *start + *step * (m - 1);
  if (*start < 0 || *start >= n || last < 0 || last >= n)
    return std::nullopt;
  return IotaRows{*start, *step};
}

struct GatherOfIota : OpRewritePattern<GatherRowsOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(GatherRowsOp op,
                                PatternRewriter &rewriter) const override {
    auto table = cast<RankedTensorType>(op.getTable().getType());
    std::optional<IotaRows> rows = iotaRows(op.getIndex(), table.getDimSize(0));
    if (!rows)
      return failure();
    rewriter.replaceOpWithNewOp<SliceOp>(
        op, op.getType(), op.getTable(),
        rewriter.getDenseI64ArrayAttr({rows->start, 0}),
        rewriter.getDenseI64ArrayAttr({rows->step, 1}));
    return success();
  }
};

struct ScatterOfIota : OpRewritePattern<ScatterRowsOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(ScatterRowsOp op,
                                PatternRewriter &rewriter) const override {
    auto base = cast<RankedTensorType>(op.getBase().getType());
    int64_t n = base.getDimSize(0);
    std::optional<IotaRows> rows = iotaRows(op.getIndex(), n);
    // Distinct and in range, N of them: every row once. Only steps +-1 can.
    if (!rows ||
        cast<RankedTensorType>(op.getIndex().getType()).getDimSize(0) != n)
      return failure();
    Value written = op.getSrc();
    if (rows->step == -1)
      written = rewriter.create<SliceOp>(
          op.getLoc(), base, written, rewriter.getDenseI64ArrayAttr({n - 1, 0}),
          rewriter.getDenseI64ArrayAttr({-1, 1}));
    if (op.getAccumulate())
      written = rewriter.create<AddOp>(op.getLoc(), op.getBase(), written);
    rewriter.replaceOp(op, written);
    return success();
  }
};

} // namespace

void GatherRowsOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                               MLIRContext *context) {
  patterns.add<GatherOfIota>(context);
}

void ScatterRowsOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                                MLIRContext *context) {
  patterns.add<ScatterOfIota>(context);
}
