//===- LowerCollective.cpp - trn.collective -> nisa.collective -----------===//
//
// One collective instruction on the collective DMA queue (Isa.h
// kCollectiveQueue) between two contiguous HBM runs: a strided input is
// first copied into contiguous scratch, and a result whose declared
// strides are not row-major is received into scratch and copied out. The
// group's span (cores of one chip, chips of an instance, instances) comes
// from its ranks and the target's layout at the logical-core degree
// (MachineModel: ranks are logical cores of `lnc` physical cores and fill
// a chip's logical cores, then chips, then instances: a trn2 chip holds 8
// ranks at lnc=1, 4 at lnc=2).
//
//===----------------------------------------------------------------------===//
#include "passes/Tile/LoweringContext.h"

#include "dialects/Trn/TrnOps.h"
#include "isa/Isa.h"

using namespace mlir;
using namespace trnc;
using namespace trnc::tile;

namespace {

bool isContiguous(const HbmView &v) {
  SmallVector<int64_t> want = contiguousStrides(v.shape);
  for (size_t d = 0; d < v.shape.size(); ++d)
    if (v.shape[d] != 1 && v.strides[d] != want[d])
      return false;
  return true;
}

nisa::CollectiveSpan spanOf(const MachineModel &m, unsigned lnc,
                            ArrayRef<int64_t> ranks) {
  bool chips = false, instances = false;
  for (int64_t r : ranks) {
    chips |= m.chipOfRank(r, lnc) != m.chipOfRank(ranks.front(), lnc);
    instances |=
        m.instanceOfRank(r, lnc) != m.instanceOfRank(ranks.front(), lnc);
  }
  return instances ? nisa::CollectiveSpan::cluster
         : chips   ? nisa::CollectiveSpan::instance
                   : nisa::CollectiveSpan::chip;
}

} // namespace

LogicalResult trnc::tile::lowerCollective(LoweringContext &ctx, Operation *op) {
  auto c = cast<trn::CollectiveOp>(op);
  Location loc = op->getLoc();
  auto it = ctx.views.find(c.getInput());
  if (it == ctx.views.end())
    return op->emitOpError("operand has no lowered HBM view");
  std::optional<nisa::CollectiveKind> kind =
      nisa::symbolizeCollectiveKind(c.getKind());
  std::optional<nisa::ReduceOp> reduce =
      c.getReduceOp().empty() ? nisa::ReduceOp::none
                              : nisa::symbolizeReduceOp(c.getReduceOp());
  if (!kind || !reduce)
    return op->emitOpError("has no collective instruction for ")
           << c.getKind() << " " << c.getReduceOp();

  HbmView in = it->second;
  auto inType = cast<RankedTensorType>(c.getInput().getType());
  auto outType = cast<RankedTensorType>(c.getResult().getType());
  if (!isContiguous(in)) {
    HbmView copy = ctx.allocScratch(loc, inType);
    emitCopy(ctx, loc, copy, in);
    in = copy;
  }
  HbmView dst = ctx.destination(loc, c.getResult());
  HbmView target = isContiguous(dst) ? dst : ctx.allocScratch(loc, outType);
  int64_t nIn = inType.getNumElements(), nOut = outType.getNumElements();
  // One row of every element: the outer dim's stride is the run's length.
  auto run = [&](const HbmView &v, int64_t n) {
    return ctx.ap(v.offset, {std::max<int64_t>(n, 1), 1}, {1, n});
  };
  if (nIn > 0 || nOut > 0) {
    OpBuilder &b = ctx.b;
    b.create<nisa::CollectiveOp>(
        loc, target.root, run(target, nOut), in.root, run(in, nIn),
        nisa::CollectiveKindAttr::get(b.getContext(), *kind),
        nisa::ReduceOpAttr::get(b.getContext(), *reduce),
        b.getI64IntegerAttr(c.getRanks().size()), b.getI64IntegerAttr(c.getId()),
        nisa::CollectiveSpanAttr::get(b.getContext(),
                                      spanOf(ctx.machine, ctx.lnc, c.getRanks())),
        b.getI64IntegerAttr(isa::kCollectiveQueue), DenseI64ArrayAttr(),
        IntegerAttr());
  }
  if (target.root != dst.root || target.offset != dst.offset)
    emitCopy(ctx, loc, dst, target);
  ctx.views[c.getResult()] = dst;
  return success();
}
