//===- LowerDataMovement.cpp - trn.slice / trn.concat -> HBM views and DMA ===//
//
// trn.slice is a view: the start of every dim moves the offset and the step
// scales the stride (negative for flip), so no instruction runs. trn.concat
// writes each input into its window of the destination along the concat dim
// with the shared tiled copy (emitCopy: HBM -> HBM transfers), except
// an input its producer already wrote there (the producer made the
// destination and set it as the concat's view: LowerAttention.cpp).
//
//===----------------------------------------------------------------------===//
#include "passes/Tile/LoweringContext.h"

#include "dialects/Trn/TrnOps.h"

using namespace mlir;
using namespace trnc;
using namespace trnc::tile;

LogicalResult trnc::tile::lowerConcat(LoweringContext &ctx, Operation *op) {
  auto cat = cast<trn::ConcatOp>(op);
  auto made = ctx.views.find(cat.getResult());
  HbmView dst = made != ctx.views.end()
                    ? made->second
                    : ctx.destination(op->getLoc(), cat.getResult());
  int64_t dim = cat.getDim(), at = 0;
  for (Value input : cat.getInputs()) {
    auto it = ctx.views.find(input);
    if (it == ctx.views.end())
      return op->emitOpError("operand has no lowered HBM view");
    ArrayRef<int64_t> shape = cast<RankedTensorType>(input.getType()).getShape();
    SmallVector<int64_t> starts(shape.size(), 0), steps(shape.size(), 1);
    starts[dim] = at;
    at += shape[dim];
    if (shape[dim] == 0)
      continue;
    HbmView window = sliceView(dst, starts, steps, shape);
    const HbmView &src = it->second;
    if (src.root == window.root && src.offset == window.offset &&
        src.strides == window.strides)
      continue; // written in place by its producer
    emitCopy(ctx, op->getLoc(), window, src);
  }
  ctx.views[cat.getResult()] = dst;
  return success();
}
