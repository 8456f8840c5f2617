//===- LowerElementwise.cpp - elementwise trn ops -> tiled nisa -----------===//
//
// Every elementwise trn op: unary math (Scalar-engine activations, table
// kActivations), binary arithmetic and comparisons (Vector ALU ops, table
// kAluOps; an operand that is a broadcast `trn.full` becomes the immediate
// of one tensor_scalar instead of a loaded tile), select/threshold_backward
// (copy_predicated), clamp, leaky_relu, casts and fills. The result and
// every operand view are walked together as one iteration space (dims
// merged where all views allow, broadcast operands with stride 0); each
// [partition, free] tile is loaded by DMA (casting in the DMA where types
// differ), computed by one or two instructions, and stored by DMA.
//
//===----------------------------------------------------------------------===//
#include "passes/Tile/LoweringContext.h"

#include "dialects/Trn/TrnOps.h"

#include "llvm/ADT/TypeSwitch.h"

#include <map>
#include <tuple>

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

/// A source that broadcasts along free dims of the tile (stride 0 in HBM)
/// is loaded once per distinct element and widened on chip: a DMA whose
/// innermost stride is 0 moves one element per descriptor (HARDWARE.md: DMA
/// efficiency needs >= 2 KiB contiguous per partition), while the engines
/// read stride-0 patterns at full rate. Fills `t` ([p, f], the tile's
/// shape) and returns true, or returns false when the source has no
/// stride-0 free dim.
bool loadBroadcast(LoweringContext &ctx, Location loc, Value t, Value root,
                   int64_t offset, ArrayRef<int64_t> strides,
                   ArrayRef<int64_t> counts) {
  bool broadcasts = false;
  for (size_t d = 1; d < counts.size(); ++d)
    broadcasts |= strides[d] == 0 && counts[d] > 1;
  if (!broadcasts)
    return false;
  // The compact tile keeps the dims the source walks; the widening copy
  // reads it with stride 0 along the others.
  SmallVector<int64_t> loadStrides{strides[0]}, loadCounts{counts[0]};
  int64_t compact = 1;
  for (size_t d = 1; d < counts.size(); ++d)
    if (strides[d] != 0 || counts[d] == 1) {
      loadStrides.push_back(strides[d]);
      loadCounts.push_back(counts[d]);
      compact *= counts[d];
    }
  if (loadCounts.size() == 1) {
    loadStrides.push_back(1);
    loadCounts.push_back(1);
  }
  SmallVector<int64_t> widenStrides{compact}, widenCounts{counts[0]};
  int64_t inner = compact;
  for (size_t d = 1; d < counts.size(); ++d) {
    bool kept = strides[d] != 0 || counts[d] == 1;
    if (kept)
      inner /= counts[d];
    widenStrides.push_back(kept ? inner : 0);
    widenCounts.push_back(counts[d]);
  }
  auto type = cast<nisa::TileType>(t.getType());
  Value c = ctx.allocSbuf(loc, counts[0], compact, type.getElementType());
  ctx.dma(loc, c, ctx.tileAp(c), root, ctx.ap(offset, loadStrides, loadCounts));
  ctx.copyOnVector(loc, t, ctx.tileAp(t), c,
                   ctx.ap(0, widenStrides, widenCounts));
  return true;
}

/// Walks `dst` and `srcs` tile by tile: load every source, run `compute`
/// (or store the first loaded tile when it is null), store to `dst`.
/// Loads cast to `loadTypes[i]`. `reuseLoads` is false when `compute` writes
/// its input tiles (then no loaded tile may serve two tiles).
void forEachElementwiseTile(LoweringContext &ctx, Location loc,
                            const HbmView &dst, ArrayRef<HbmView> srcs,
                            ArrayRef<Type> loadTypes,
                            const TileCompute &compute,
                            bool reuseLoads = true) {
  SmallVector<const HbmView *> all{&dst};
  SmallVector<Type> types{dst.elementType()};
  for (size_t i = 0; i < srcs.size(); ++i) {
    all.push_back(&srcs[i]);
    types.push_back(loadTypes[i]);
    types.push_back(srcs[i].elementType());
  }
  JointSpace space = JointSpace::build(all);
  // Any order visits the same elements: walk the result row-major so its
  // stores (and sources laid out like it) move contiguous rows.
  space.orderByView(0);
  Type outType = dst.elementType();
  // A source whose pattern repeats from tile to tile (a bias row broadcast
  // over the partitions and the looped dims) is loaded once per distinct
  // pattern, unless the compute writes its inputs.
  std::map<std::tuple<size_t, int64_t, SmallVector<int64_t>,
                      SmallVector<int64_t>>,
           Value>
      invariant;
  forEachTile(space, ctx.partitions(), ctx.maxFree(types),
              [&](const TileTask &task) {
                int64_t p = task.partitions, f = task.freeElements;
                SmallVector<Value> loaded;
                for (size_t i = 0; i < srcs.size(); ++i) {
                  auto key = std::make_tuple(i, task.offsets[i + 1],
                                             task.strides[i + 1], task.counts);
                  if (reuseLoads) {
                    auto it = invariant.find(key);
                    if (it != invariant.end()) {
                      loaded.push_back(it->second);
                      continue;
                    }
                  }
                  // int64 reaches chip only as int32 (Isa.h DType): load
                  // an i32 tile, then cast on Vector if another type is
                  // wanted.
                  bool viaI32 = srcs[i].elementType().isInteger(64) &&
                                !loadTypes[i].isInteger(64) &&
                                !loadTypes[i].isInteger(32);
                  Value t = ctx.allocSbuf(
                      loc, p, f,
                      viaI32 ? ctx.b.getI32Type() : loadTypes[i]);
                  if (!viaI32 && loadBroadcast(ctx, loc, t, srcs[i].root,
                                               task.offsets[i + 1],
                                               task.strides[i + 1],
                                               task.counts)) {
                    loaded.push_back(invariant[key] = t);
                    continue;
                  }
                  ctx.dma(loc, t, ctx.tileAp(t), srcs[i].root,
                          ctx.ap(task.offsets[i + 1], task.strides[i + 1],
                                 task.counts));
                  if (viaI32) {
                    Value c = ctx.allocSbuf(loc, p, f, loadTypes[i]);
                    ctx.copyOnVector(loc, c, ctx.tileAp(c), t, ctx.tileAp(t));
                    t = c;
                  }
                  loaded.push_back(invariant[key] = t);
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

/// Unary ops that are one activation of the Scalar engine.
const std::pair<StringLiteral, nisa::ActFunc> kActivations[] = {
    {"trn.relu", nisa::ActFunc::relu},     {"trn.exp", nisa::ActFunc::exp},
    {"trn.expm1", nisa::ActFunc::expm1},   {"trn.log", nisa::ActFunc::log},
    {"trn.log1p", nisa::ActFunc::log1p},   {"trn.sqrt", nisa::ActFunc::sqrt},
    {"trn.rsqrt", nisa::ActFunc::rsqrt},   {"trn.sin", nisa::ActFunc::sin},
    {"trn.reciprocal", nisa::ActFunc::reciprocal},
    {"trn.cos", nisa::ActFunc::cos},       {"trn.tanh", nisa::ActFunc::tanh},
    {"trn.sigmoid", nisa::ActFunc::sigmoid},
    {"trn.gelu", nisa::ActFunc::gelu},
    {"trn.gelu_tanh", nisa::ActFunc::gelu_tanh},
    {"trn.silu", nisa::ActFunc::silu},     {"trn.mish", nisa::ActFunc::mish},
    {"trn.erf", nisa::ActFunc::erf},       {"trn.floor", nisa::ActFunc::floor},
    {"trn.ceil", nisa::ActFunc::ceil},     {"trn.round", nisa::ActFunc::round},
    {"trn.trunc", nisa::ActFunc::trunc},   {"trn.abs", nisa::ActFunc::abs},
    {"trn.sign", nisa::ActFunc::sign},     {"trn.isnan", nisa::ActFunc::is_nan},
    {"trn.isinf", nisa::ActFunc::is_inf},
};

/// Binary ops (and comparisons, into a bool tile) that are one Vector ALU op.
const std::pair<StringLiteral, nisa::AluOp> kAluOps[] = {
    {"trn.add", nisa::AluOp::add},
    {"trn.sub", nisa::AluOp::subtract},
    {"trn.mul", nisa::AluOp::multiply},
    {"trn.div", nisa::AluOp::divide},
    {"trn.floor_div", nisa::AluOp::floor_divide},
    {"trn.maximum", nisa::AluOp::max},
    {"trn.minimum", nisa::AluOp::min},
    {"trn.pow", nisa::AluOp::pow},
    {"trn.remainder", nisa::AluOp::remainder},
    {"trn.fmod", nisa::AluOp::fmod},
    {"trn.bitwise_and", nisa::AluOp::bitwise_and},
    {"trn.bitwise_or", nisa::AluOp::bitwise_or},
    {"trn.bitwise_xor", nisa::AluOp::bitwise_xor},
    {"trn.eq", nisa::AluOp::is_equal},
    {"trn.ne", nisa::AluOp::not_equal},
    {"trn.lt", nisa::AluOp::is_lt},
    {"trn.le", nisa::AluOp::is_le},
    {"trn.gt", nisa::AluOp::is_gt},
    {"trn.ge", nisa::AluOp::is_ge},
    {"trn.logical_and", nisa::AluOp::logical_and},
    {"trn.logical_or", nisa::AluOp::logical_or},
    {"trn.logical_xor", nisa::AluOp::logical_xor},
};

template <typename T, size_t N>
std::optional<T> lookup(const std::pair<StringLiteral, T> (&table)[N],
                        Operation *op) {
  StringRef name = op->getName().getStringRef();
  for (const auto &[key, value] : table)
    if (key == name)
      return value;
  return std::nullopt;
}

/// The value of a `trn.full` (seen through broadcasts and reshapes) that
/// fits an fp32 immediate exactly enough: the ALU computes in fp32.
std::optional<double> constantOf(Value v) {
  Operation *def = v.getDefiningOp();
  while (def && isa<trn::BroadcastOp, trn::ReshapeOp>(def))
    def = def->getOperand(0).getDefiningOp();
  if (auto full = dyn_cast_or_null<trn::FullOp>(def))
    return full.getValue().convertToDouble();
  return std::nullopt;
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

namespace {
/// The ops that are not one table entry. Null for a cast (the DMA casts).
TileCompute specialCompute(LoweringContext &ctx, Operation *op) {
  using Ap = nisa::AccessPatternAttr;
  return TypeSwitch<Operation *, TileCompute>(op)
      .Case([&](trn::AddScalarOp s) {
        return scalar(ctx, nisa::AluOp::add, s.getValue().convertToDouble());
      })
      .Case([&](trn::MulScalarOp s) {
        return scalar(ctx, nisa::AluOp::multiply,
                      s.getValue().convertToDouble());
      })
      .Case([&](trn::ThresholdBackwardOp t) -> TileCompute {
        double threshold = t.getThreshold().convertToDouble();
        // torch: where(input > threshold, grad, 0). mask over the input
        // tile, zeros, then a predicated copy of grad: inf/NaN grads where
        // the mask is 0 give 0, as in torch.
        return [&ctx, threshold](Location loc, ArrayRef<Value> ins, Value out,
                                 Ap ap) {
          ctx.tensorScalar(loc, ins[1], ap, ins[1], ap, nisa::AluOp::is_gt,
                           threshold);
          ctx.memset(loc, out, ap, 0.0, nisa::Engine::vector);
          ctx.copyPredicated(loc, out, ap, ins[1], ap, ins[0], ap);
        };
      })
      .Case([&](trn::SelectOp) -> TileCompute {
        // out = on_false, then on_true where cond (both on Vector: the
        // predicated copy reads out after the copy in program order).
        return [&ctx](Location loc, ArrayRef<Value> ins, Value out, Ap ap) {
          ctx.copyOnVector(loc, out, ap, ins[2], ap);
          ctx.copyPredicated(loc, out, ap, ins[0], ap, ins[1], ap);
        };
      })
      .Case([&](trn::ClampOp c) -> TileCompute {
        // One tensor_scalar: max with the lower bound, then min with the
        // upper (bypass for an absent bound); max/min propagate NaN.
        auto lo = c.getMin(), hi = c.getMax();
        nisa::AluOp op0 = lo ? nisa::AluOp::max : nisa::AluOp::bypass;
        nisa::AluOp op1 = hi ? nisa::AluOp::min : nisa::AluOp::bypass;
        double v0 = lo ? lo->convertToDouble() : 0.0;
        double v1 = hi ? hi->convertToDouble() : 0.0;
        return [&ctx, op0, op1, v0, v1](Location loc, ArrayRef<Value> ins,
                                        Value out, Ap ap) {
          ctx.tensorScalar(loc, out, ap, ins[0], ap, op0, v0, op1, v1);
        };
      })
      .Case([&](trn::LeakyReluOp l) -> TileCompute {
        // max(x, slope * x) for slope <= 1, min(...) above: exact, NaN kept.
        double slope = l.getSlope().convertToDouble();
        nisa::AluOp pick = slope <= 1.0 ? nisa::AluOp::max : nisa::AluOp::min;
        return [&ctx, slope, pick](Location loc, ArrayRef<Value> ins,
                                   Value out, Ap ap) {
          ctx.tensorScalar(loc, out, ap, ins[0], ap, nisa::AluOp::multiply,
                           slope);
          ctx.tensorTensor(loc, pick, out, ap, ins[0], ap, out, ap);
        };
      })
      .Case([&](trn::LogicalNotOp) {
        return scalar(ctx, nisa::AluOp::is_equal, 0.0);
      })
      .Case([&](trn::BitwiseNotOp b) -> TileCompute {
        // bool: x == 0; int: ~x = -x - 1 (exact in the fp32 datapath).
        if (b.getType().getElementType().isInteger(1))
          return scalar(ctx, nisa::AluOp::is_equal, 0.0);
        return [&ctx](Location loc, ArrayRef<Value> ins, Value out, Ap ap) {
          ctx.tensorScalar(loc, out, ap, ins[0], ap, nisa::AluOp::multiply,
                           -1.0, nisa::AluOp::subtract, 1.0);
        };
      })
      .Default([](Operation *) -> TileCompute { return nullptr; });
}
} // namespace

bool trnc::tile::isElementwiseOp(Operation *op) {
  return lookup(kActivations, op) || lookup(kAluOps, op) ||
         isa<trn::AddScalarOp, trn::MulScalarOp, trn::ThresholdBackwardOp,
             trn::ConvertOp, trn::FullOp, trn::SelectOp, trn::ClampOp,
             trn::LeakyReluOp, trn::LogicalNotOp, trn::BitwiseNotOp>(op);
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

  SmallVector<Value> operands(op->getOperands());
  // A binary ALU op with one constant operand: one tensor_scalar with the
  // constant as immediate (reversed when it is the lhs).
  std::optional<nisa::AluOp> alu = lookup(kAluOps, op);
  std::optional<double> imm;
  bool reverse = false;
  if (alu) {
    if ((imm = constantOf(operands[1]))) {
      operands.pop_back();
    } else if ((imm = constantOf(operands[0]))) {
      operands.erase(operands.begin());
      reverse = true;
    }
  }

  SmallVector<HbmView> srcs;
  SmallVector<Type> loadTypes;
  for (Value operand : operands) {
    auto it = ctx.views.find(operand);
    if (it == ctx.views.end())
      return op->emitOpError("operand has no lowered HBM view");
    srcs.push_back(it->second);
    loadTypes.push_back(it->second.elementType());
  }

  TileCompute compute;
  if (std::optional<nisa::ActFunc> act = lookup(kActivations, op)) {
    compute = [&ctx, f = *act](Location loc, ArrayRef<Value> ins, Value out,
                               nisa::AccessPatternAttr ap) {
      ctx.activation(loc, f, out, ap, ins[0], ap);
    };
  } else if (alu && imm) {
    compute = [&ctx, a = *alu, c = *imm, reverse](
                  Location loc, ArrayRef<Value> ins, Value out,
                  nisa::AccessPatternAttr ap) {
      MLIRContext *m = ctx.b.getContext();
      ctx.b.create<nisa::TensorScalarOp>(
          loc, out, ap, ins[0], ap, nisa::AluOpAttr::get(m, a),
          ctx.b.getF32FloatAttr(c),
          nisa::AluOpAttr::get(m, nisa::AluOp::bypass),
          ctx.b.getF32FloatAttr(0.0),
          reverse ? ctx.b.getUnitAttr() : UnitAttr(), UnitAttr(),
          nisa::EngineAttr::get(m, nisa::Engine::vector), DenseI64ArrayAttr(),
          IntegerAttr());
    };
  } else if (alu) {
    compute = binary(ctx, *alu);
  } else {
    compute = specialCompute(ctx, op);
  }

  if (isa<trn::ConvertOp>(op))
    loadTypes[0] = dst.elementType();
  else if (!compute)
    return op->emitOpError("has no elementwise lowering");
  // threshold_backward masks its input tile in place.
  forEachElementwiseTile(ctx, loc, dst, srcs, loadTypes, compute,
                         /*reuseLoads=*/!isa<trn::ThresholdBackwardOp>(op));
  return success();
}
