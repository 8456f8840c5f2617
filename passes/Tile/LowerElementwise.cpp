//===- LowerElementwise.cpp - elementwise trn ops -> tiled nisa -----------===//
//
// add/sub/mul, add_scalar/mul_scalar, relu, threshold_backward, convert and
// full. The result and every operand view are walked together as one
// iteration space (dims merged where all views allow, broadcast operands
// with stride 0); each [partition, free] tile is loaded by DMA (casting in
// the DMA where types differ), computed by one or two instructions, and
// stored by DMA.
//
//===----------------------------------------------------------------------===//
#include "passes/Tile/LoweringContext.h"

#include "dialects/Trn/TrnOps.h"

#include "llvm/ADT/TypeSwitch.h"

#define DEBUG_TYPE "trnc-tile-lower-to-nisa"

using namespace mlir;
using namespace trnc;
using namespace trnc::tile;

namespace {
/// The instructions computing one tile: `ins` are the loaded operand tiles,
/// `out` the tile to store. Null when the op is a pure copy or fill.
using TileCompute = std::function<void(Location, ArrayRef<Value> ins,
                                       Value out,
                                       nisa::AccessPatternAttr ap)>;

/// Walks `dst` and `srcs` tile by tile: load every source, run `compute`
/// (or store the first loaded tile when it is null), store to `dst`.
/// Loads cast to `loadTypes[i]`.
void forEachElementwiseTile(LoweringContext &ctx, Location loc,
                            const HbmView &dst, ArrayRef<HbmView> srcs,
                            ArrayRef<Type> loadTypes,
                            const TileCompute &compute) {
  SmallVector<const HbmView *> all{&dst};
  SmallVector<Type> types{dst.elementType()};
  for (size_t i = 0; i < srcs.size(); ++i) {
    all.push_back(&srcs[i]);
    types.push_back(loadTypes[i]);
    types.push_back(srcs[i].elementType());
  }
  JointSpace space = JointSpace::build(all);
  Type outType = dst.elementType();
  forEachTile(space, ctx.partitions(), ctx.maxFree(types),
              [&](const TileTask &task) {
                int64_t p = task.partitions, f = task.freeElements;
                SmallVector<Value> loaded;
                for (size_t i = 0; i < srcs.size(); ++i) {
                  Value t = ctx.allocSbuf(loc, p, f, loadTypes[i]);
                  ctx.dma(loc, t, ctx.tileAp(t), srcs[i].root,
                          ctx.ap(task.offsets[i + 1], task.strides[i + 1],
                                 task.counts));
                  loaded.push_back(t);
                }
                Value out = loaded.empty() ? Value() : loaded.front();
                if (compute) {
                  out = ctx.allocSbuf(loc, p, f, outType);
                  compute(loc, loaded, out, ctx.tileAp(out));
                }
                ctx.dma(loc, dst.root,
                        ctx.ap(task.offsets[0], task.strides[0], task.counts),
                        out, ctx.tileAp(out));
              });
}

/// trn.full: one tile filled once, stored to every tile of the result.
void lowerFull(LoweringContext &ctx, Location loc, const HbmView &dst,
               double value) {
  JointSpace space = JointSpace::build({&dst});
  Value fill;
  forEachTile(space, ctx.partitions(), ctx.maxFree({dst.elementType()}),
              [&](const TileTask &task) {
                // The first tile is the largest in both axes.
                if (!fill) {
                  fill = ctx.allocSbuf(loc, task.partitions,
                                       task.freeElements, dst.elementType());
                  ctx.memset(loc, fill, ctx.tileAp(fill), value);
                }
                ctx.dma(loc, dst.root,
                        ctx.ap(task.offsets[0], task.strides[0], task.counts),
                        fill,
                        ctx.tileAp(fill, task.partitions, task.freeElements));
              });
}

TileCompute binary(LoweringContext &ctx, nisa::AluOp op) {
  return [&ctx, op](Location loc, ArrayRef<Value> ins, Value out,
                    nisa::AccessPatternAttr ap) {
    ctx.tensorTensor(loc, op, out, ap, ins[0], ap, ins[1], ap);
  };
}

TileCompute scalar(LoweringContext &ctx, nisa::AluOp op, double value) {
  return [&ctx, op, value](Location loc, ArrayRef<Value> ins, Value out,
                           nisa::AccessPatternAttr ap) {
    ctx.tensorScalar(loc, out, ap, ins[0], ap, op, value);
  };
}
} // namespace

bool trnc::tile::isElementwiseOp(Operation *op) {
  return isa<trn::AddOp, trn::SubOp, trn::MulOp, trn::AddScalarOp,
             trn::MulScalarOp, trn::ReluOp, trn::ThresholdBackwardOp,
             trn::ConvertOp, trn::FullOp>(op);
}

void trnc::tile::emitCopy(LoweringContext &ctx, Location loc,
                          const HbmView &dst, const HbmView &src) {
  forEachElementwiseTile(ctx, loc, dst, {src}, {dst.elementType()}, nullptr);
}

LogicalResult trnc::tile::lowerElementwise(LoweringContext &ctx,
                                           Operation *op) {
  Location loc = op->getLoc();
  Value result = op->getResult(0);
  HbmView dst = ctx.destination(loc, result);
  ctx.views[result] = dst;

  if (auto full = dyn_cast<trn::FullOp>(op)) {
    lowerFull(ctx, loc, dst, full.getValue().convertToDouble());
    return success();
  }

  SmallVector<HbmView> srcs;
  SmallVector<Type> loadTypes;
  for (Value operand : op->getOperands()) {
    auto it = ctx.views.find(operand);
    if (it == ctx.views.end())
      return op->emitOpError("operand has no lowered HBM view");
    srcs.push_back(it->second);
    loadTypes.push_back(it->second.elementType());
  }

  TileCompute compute =
      TypeSwitch<Operation *, TileCompute>(op)
          .Case([&](trn::AddOp) { return binary(ctx, nisa::AluOp::add); })
          .Case([&](trn::SubOp) { return binary(ctx, nisa::AluOp::subtract); })
          .Case([&](trn::MulOp) { return binary(ctx, nisa::AluOp::multiply); })
          .Case([&](trn::AddScalarOp s) {
            return scalar(ctx, nisa::AluOp::add,
                          s.getValue().convertToDouble());
          })
          .Case([&](trn::MulScalarOp s) {
            return scalar(ctx, nisa::AluOp::multiply,
                          s.getValue().convertToDouble());
          })
          .Case([&](trn::ReluOp) -> TileCompute {
            // Scalar engine, leaving Vector for the binary ops around it.
            return [&ctx](Location loc, ArrayRef<Value> ins, Value out,
                          nisa::AccessPatternAttr ap) {
              ctx.activation(loc, nisa::ActFunc::relu, out, ap, ins[0], ap);
            };
          })
          .Case([&](trn::ThresholdBackwardOp t) -> TileCompute {
            double threshold = t.getThreshold().convertToDouble();
            // mask = input > threshold (1.0 / 0.0, exact in any float type,
            // written over the input tile), then grad * mask. Differs from
            // torch's where() only for non-finite grads: 0 * inf/NaN is NaN
            // where torch gives 0. No single ALU instruction selects.
            return [&ctx, threshold](Location loc, ArrayRef<Value> ins,
                                     Value out, nisa::AccessPatternAttr ap) {
              ctx.tensorScalar(loc, ins[1], ap, ins[1], ap,
                               nisa::AluOp::is_gt, threshold);
              ctx.tensorTensor(loc, nisa::AluOp::multiply, out, ap, ins[0],
                               ap, ins[1], ap);
            };
          })
          .Case([&](trn::ConvertOp) -> TileCompute {
            // The DMA casts on load; nothing to compute.
            return nullptr;
          })
          .Default([](Operation *) -> TileCompute { return nullptr; });

  if (isa<trn::ConvertOp>(op))
    loadTypes[0] = dst.elementType();
  else if (!compute)
    return op->emitOpError("has no elementwise lowering");
  forEachElementwiseTile(ctx, loc, dst, srcs, loadTypes, compute);
  return success();
}
