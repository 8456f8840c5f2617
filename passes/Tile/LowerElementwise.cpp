//===- LowerElementwise.cpp - elementwise trn ops -> tiled nisa -----------===//
//
// Every elementwise trn op: unary math (Scalar-engine activations, table
// kActivations), binary arithmetic and comparisons (Vector ALU ops, table
// kAluOps; an operand that is a broadcast `trn.full` becomes the immediate
// of one tensor_scalar instead of a loaded tile), select/threshold_backward
// (copy_predicated), clamp, leaky_relu, casts and fills.
//
// Elementwise ops of one shape form a fusion group (elementwiseGroup, run by
// trnc-form-fusion-groups): the first op and every later op of the same
// shape whose operands are group results or values computed before the
// group. Lowering a group (lowerElementwiseGroup): its outputs (results
// used outside it) and external inputs are walked together as one iteration
// space (dims merged where all views allow, broadcast operands with stride
// 0); per [partition, free] tile each input is loaded once by DMA (casting
// in the DMA where a group convert reads it), every op computes on tiles,
// and only the outputs are stored: the chain's intermediates never reach HBM.
// The tiles are emitted as tile loops where they repeat (TileLoops.h), an
// input that stays put in a loop loaded once, in its first iteration.
//
//===----------------------------------------------------------------------===//
#include "passes/Tile/ElementwiseSteps.h"
#include "passes/Tile/GroupFormation.h"
#include "passes/Tile/TileLoops.h"
#include "passes/TilePlacement.h"

#include "dialects/Trn/TrnOps.h"

#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>
#include <map>
#include <tuple>

#define DEBUG_TYPE "trnc-tile-lower-to-nisa"

using namespace mlir;
using namespace trnc;
using namespace trnc::tile;
using Ap = nisa::AccessPatternAttr;

namespace {

/// Tasks of an elementwise group whose tiles should fit SBUF at once: this
/// one and the next one's loads.
constexpr int64_t kTasksInFlight = 2;

/// A source that broadcasts along free dims of the tile (stride 0 in HBM)
/// is loaded once per distinct element: a DMA whose innermost stride is 0
/// moves one element per descriptor (HARDWARE.md: DMA efficiency needs >= 2
/// KiB contiguous per partition), while the engines read stride-0 patterns
/// at full rate. Returns the compact tile (the dims the source walks) and
/// the pattern that reads it as the [p, f] tile (stride 0 along the
/// others), or nothing when the source has no stride-0 free dim.
std::optional<std::pair<Value, Ap>>
loadBroadcast(LoweringContext &ctx, Location loc, Type elt, Value root,
              int64_t offset, ArrayRef<int64_t> strides,
              ArrayRef<int64_t> counts) {
  bool broadcasts = false;
  for (size_t d = 1; d < counts.size(); ++d)
    broadcasts |= strides[d] == 0 && counts[d] > 1;
  if (!broadcasts)
    return std::nullopt;
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
  SmallVector<int64_t> readStrides{compact}, readCounts{counts[0]};
  int64_t inner = compact;
  for (size_t d = 1; d < counts.size(); ++d) {
    bool kept = strides[d] != 0 || counts[d] == 1;
    if (kept)
      inner /= counts[d];
    readStrides.push_back(kept ? inner : 0);
    readCounts.push_back(counts[d]);
  }
  Value c = ctx.allocSbuf(loc, counts[0], compact, elt);
  ctx.dma(loc, c, ctx.tileAp(c), root, ctx.ap(offset, loadStrides, loadCounts));
  return std::make_pair(c, ctx.ap(0, readStrides, readCounts));
}

/// The tiles of one TileTask's outputs, from its loaded source tiles and
/// the patterns that read each of them as a [partitions, free] tile.
using TileBody = function_ref<SmallVector<Value>(
    Location, int64_t partitions, int64_t free, ArrayRef<Value> loaded,
    ArrayRef<Ap> loadedAps)>;

/// Walks `dsts` and `srcs` (views of one shape) tile by tile of at most
/// `maxFree` free elements: load every source, run `body`, store its tiles
/// to `dsts`. Loads cast to `loadTypes[i]`. `reuseLoads` is false when the
/// body writes its input tiles (then no loaded tile may serve two tiles,
/// and a broadcast source is widened to a whole tile first).
///
/// The tiles are emitted as loops (TileLoops.h): where the list of tiles
/// repeats with each view a constant step further on, one scf.for whose
/// body is one iteration, the views walked through nisa.hbm_window.
void forEachElementwiseTile(LoweringContext &ctx, Location loc,
                            ArrayRef<HbmView> dsts, ArrayRef<HbmView> srcs,
                            ArrayRef<Type> loadTypes, int64_t maxFree,
                            TileBody body, bool reuseLoads = true) {
  SmallVector<const HbmView *> all;
  for (const HbmView &d : dsts)
    all.push_back(&d);
  for (const HbmView &s : srcs)
    all.push_back(&s);
  const size_t first = dsts.size();
  JointSpace space = JointSpace::build(all);
  // Any order visits the same elements: walk the first result row-major so
  // its stores (and sources laid out like it) move contiguous rows.
  space.orderByView(0);
  SmallVector<TileTask> tasks;
  forEachTile(space, ctx.partitions(), maxFree,
              [&](const TileTask &task) { tasks.push_back(task); });
  // A source whose pattern repeats from tile to tile (a bias row broadcast
  // over the partitions and the looped dims) is loaded once per distinct
  // pattern and buffer (in a loop's first iteration, emitted before it),
  // unless the body writes its inputs; no loop inside one it stays put in
  // may move it (nestTileTasks). A loop body's own loads are per iteration:
  // the map a body fills is dropped when its loop is closed.
  using LoadKey = std::tuple<size_t, const void *, int64_t, SmallVector<int64_t>,
                             SmallVector<int64_t>>;
  using Loads = std::map<LoadKey, std::pair<Value, Ap>>;
  SmallVector<bool> hoistable(all.size(), false);
  for (size_t i = 0; i < srcs.size() && reuseLoads; ++i)
    hoistable[first + i] = true;
  std::vector<TileNestNode> nest = nestTileTasks(tasks, hoistable);

  // Source i of `task`, read through buffer `root`: the tile it is loaded
  // into and the pattern that reads that tile as [p, f] (null: whole).
  auto loadSource = [&](Loads &loads, const TileTask &task, Value root,
                        size_t i) -> std::pair<Value, Ap> {
    int64_t p = task.partitions, f = task.freeElements;
    size_t v = first + i;
    LoadKey key{i, root.getAsOpaquePointer(), task.offsets[v], task.strides[v],
                task.counts};
    if (reuseLoads) {
      auto it = loads.find(key);
      if (it != loads.end())
        return it->second;
    }
    // int64 reaches chip only as int32 (Isa.h DType): load an i32 tile,
    // then cast on Vector if another type is wanted.
    bool viaI32 = srcs[i].elementType().isInteger(64) &&
                  !loadTypes[i].isInteger(64) && !loadTypes[i].isInteger(32);
    if (!viaI32)
      if (auto compact = loadBroadcast(ctx, loc, loadTypes[i], root,
                                       task.offsets[v], task.strides[v],
                                       task.counts)) {
        // The engines read the compact tile through the stride-0 pattern
        // (a per-row value becomes tensor_scalar's per-partition operand);
        // a body that writes its inputs gets a whole tile.
        if (reuseLoads)
          return loads[key] = *compact;
        Value t = ctx.allocSbuf(loc, p, f, loadTypes[i]);
        ctx.copyOnVector(loc, t, ctx.tileAp(t), compact->first,
                         compact->second);
        return loads[key] = {t, Ap()};
      }
    Value t = ctx.allocSbuf(loc, p, f, viaI32 ? ctx.b.getI32Type() : loadTypes[i]);
    ctx.load(loc, t, root, ctx.ap(task.offsets[v], task.strides[v], task.counts));
    if (viaI32) {
      Value c = ctx.allocSbuf(loc, p, f, loadTypes[i]);
      ctx.copyOnVector(loc, c, ctx.tileAp(c), t, ctx.tileAp(t));
      t = c;
    }
    return loads[key] = {t, Ap()};
  };

  auto emitTask = [&](Loads &loads, const TileTask &task,
                      ArrayRef<Value> roots) {
    int64_t p = task.partitions, f = task.freeElements;
    SmallVector<Value> loaded;
    SmallVector<Ap> loadedAps;
    for (size_t i = 0; i < srcs.size(); ++i) {
      auto [t, ap] = loadSource(loads, task, roots[first + i], i);
      loaded.push_back(t);
      loadedAps.push_back(ap ? ap : ctx.tileAp(t, p, f));
    }
    SmallVector<Value> outs = body(loc, p, f, loaded, loadedAps);
    for (auto [d, out] : llvm::enumerate(outs)) {
      // An output that is a compact broadcast tile (a copy of the source)
      // is widened for its store.
      auto compact = llvm::find(loaded, out);
      if (compact != loaded.end() &&
          loadedAps[compact - loaded.begin()] != ctx.tileAp(out, p, f)) {
        Value t = ctx.allocSbuf(loc, p, f,
                                cast<nisa::TileType>(out.getType()).getElementType());
        ctx.copyOnVector(loc, t, ctx.tileAp(t), out,
                         loadedAps[compact - loaded.begin()]);
        out = t;
      }
      ctx.dma(loc, roots[d],
              ctx.ap(task.offsets[d], task.strides[d], task.counts), out,
              ctx.tileAp(out));
    }
  };

  // Each loop's first iteration is emitted as it is, so the loads later
  // iterations reuse come where they did tile by tile, outside the loop. A
  // loop's body sees what was loaded before it; its own loads are per
  // iteration, dropped when the loop closes.
  SmallVector<Loads> scopes(1);
  SmallVector<Value> roots;
  for (const HbmView *view : all)
    roots.push_back(view->root);
  emitPeeledTileNest(
      ctx.b, loc, nest, roots,
      [&](int64_t t, ArrayRef<Value> roots) {
        emitTask(scopes.back(), tasks[t], roots);
      },
      [&] { scopes.push_back(scopes.back()); }, [&] { scopes.pop_back(); });
}

/// trn.full: one tile filled once, stored to every tile of the result (in
/// loops where the tiles repeat).
void lowerFull(LoweringContext &ctx, Location loc, const HbmView &dst,
               double value) {
  JointSpace space = JointSpace::build({&dst});
  int64_t maxFree = ctx.maxFree({dst.elementType()});
  // The first tile is the largest in both axes.
  Value fill;
  forEachTile(space, ctx.partitions(), maxFree, [&](const TileTask &task) {
    if (fill)
      return;
    fill = ctx.allocSbuf(loc, task.partitions, task.freeElements,
                         dst.elementType());
    ctx.memset(loc, fill, ctx.tileAp(fill), value);
  });
  emitTileLoops(ctx.b, loc, space, ctx.partitions(), maxFree, {dst.root},
                [&](const TileTask &task, ArrayRef<Value> roots) {
                  ctx.dma(loc, roots[0],
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
    {"trn.gelu_dx", nisa::ActFunc::gelu_dx},
    {"trn.silu_dx", nisa::ActFunc::silu_dx},
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

/// A float -> float trn.convert.
bool isFloatConvert(Operation *op) {
  auto c = dyn_cast_or_null<trn::ConvertOp>(op);
  return c &&
         isa<FloatType>(
             cast<RankedTensorType>(c.getInput().getType()).getElementType()) &&
         isa<FloatType>(c.getType().getElementType());
}

/// `value` as an element of type `t` holds it (a bf16 fill of 0.1 holds
/// 0.10009765625); integers unchanged.
double roundTo(double value, Type t) {
  auto ft = dyn_cast<FloatType>(t);
  if (!ft)
    return value;
  APFloat f(value);
  bool lost = false;
  f.convert(ft.getFloatSemantics(), APFloat::rmNearestTiesToEven, &lost);
  return f.convertToDouble();
}

/// The value of a `trn.full` (seen through broadcasts, reshapes and float
/// casts, rounded to each type it passes) that fits an fp32 immediate
/// exactly enough: the ALU computes in fp32. An optimizer's
/// `lerp(weight=0.1)` on bf16 state reads `convert(full 0.1 : bf16) : f32`.
std::optional<double> constantOf(Value v) {
  SmallVector<Type> types{cast<RankedTensorType>(v.getType()).getElementType()};
  Operation *def = v.getDefiningOp();
  while (def && (isa<trn::BroadcastOp, trn::ReshapeOp>(def) ||
                 isFloatConvert(def))) {
    def = def->getOperand(0).getDefiningOp();
    if (def)
      types.push_back(
          cast<RankedTensorType>(def->getResult(0).getType()).getElementType());
  }
  auto full = dyn_cast_or_null<trn::FullOp>(def);
  if (!full)
    return std::nullopt;
  double value = full.getValue().convertToDouble();
  for (Type t : llvm::reverse(types))
    value = roundTo(value, t);
  return value;
}

TileCompute binary(LoweringContext &ctx, nisa::AluOp op) {
  return [&ctx, op](Location loc, ArrayRef<Value> ins, ArrayRef<Ap> aps,
                    Value out, Ap ap) {
    ctx.tensorTensor(loc, op, out, ap, ins[0], aps[0], ins[1], aps[1]);
  };
}

/// One tensor_scalar on Vector (EngineBalance may move it).
TileCompute scalar(LoweringContext &ctx, ScalarOps s) {
  return [&ctx, s](Location loc, ArrayRef<Value> ins, ArrayRef<Ap> aps,
                   Value out, Ap ap) {
    MLIRContext *m = ctx.b.getContext();
    ctx.b.create<nisa::TensorScalarOp>(
        loc, out, ap, ins[0], aps[0], nisa::AluOpAttr::get(m, s.op0),
        ctx.b.getF32FloatAttr(s.imm0), nisa::AluOpAttr::get(m, s.op1),
        ctx.b.getF32FloatAttr(s.imm1),
        s.reverse0 ? ctx.b.getUnitAttr() : UnitAttr(),
        s.reverse1 ? ctx.b.getUnitAttr() : UnitAttr(),
        nisa::EngineAttr::get(m, nisa::Engine::vector), Value(),
        nisa::AccessPatternAttr(), Value(), nisa::AccessPatternAttr(),
        DenseI64ArrayAttr(), IntegerAttr());
  };
}

TileCompute activation(LoweringContext &ctx, ActivationForm a) {
  return [&ctx, a](Location loc, ArrayRef<Value> ins, ArrayRef<Ap> aps,
                   Value out, Ap ap) {
    ctx.activation(loc, a.func, out, ap, ins[0], aps[0], a.scale, a.bias);
  };
}
} // namespace

namespace {
/// The ops that are not one table entry. Null for a cast (the DMA casts).
TileCompute specialCompute(LoweringContext &ctx, Operation *op) {
  return TypeSwitch<Operation *, TileCompute>(op)
      .Case([&](trn::ThresholdBackwardOp t) -> TileCompute {
        double threshold = t.getThreshold().convertToDouble();
        // torch: where(input > threshold, grad, 0). mask over the input
        // tile, zeros, then a predicated copy of grad: inf/NaN grads where
        // the mask is 0 give 0, as in torch.
        return [&ctx, threshold](Location loc, ArrayRef<Value> ins,
                                 ArrayRef<Ap> aps, Value out, Ap ap) {
          ctx.tensorScalar(loc, ins[1], aps[1], ins[1], aps[1],
                           nisa::AluOp::is_gt, threshold);
          ctx.memset(loc, out, ap, 0.0, nisa::Engine::vector);
          ctx.copyPredicated(loc, out, ap, ins[1], aps[1], ins[0], aps[0]);
        };
      })
      .Case([&](trn::SelectOp select) -> TileCompute {
        // out = on_false, then on_true where cond (both on Vector: the
        // predicated copy reads out after the copy in program order). An
        // on_false of constant zero into a bf16 result is a memset, which
        // writes zeros into bf16 at twice the copy's rate (HARDWARE.md
        // "Instructions"; the cross-entropy gradient's where(mask, g, 0):
        // bf16 GPT backward 11685.5 -> 11616.3 us, simulated). Elsewhere the
        // two cost the same and the copy stays: f32 memsets only moved the
        // forward's schedule (+128 us).
        std::optional<double> onFalse = constantOf(select.getOnFalse());
        bool zeroFill = onFalse && *onFalse == 0.0 && !std::signbit(*onFalse) &&
                        getElementTypeOrSelf(select.getType()).isBF16();
        return [&ctx, zeroFill](Location loc, ArrayRef<Value> ins,
                                ArrayRef<Ap> aps, Value out, Ap ap) {
          if (zeroFill)
            ctx.memset(loc, out, ap, 0.0, nisa::Engine::vector);
          else
            ctx.copyOnVector(loc, out, ap, ins[2], aps[2]);
          ctx.copyPredicated(loc, out, ap, ins[0], aps[0], ins[1], aps[1]);
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
                                        ArrayRef<Ap> aps, Value out, Ap ap) {
          ctx.tensorScalar(loc, out, ap, ins[0], aps[0], op0, v0, op1, v1);
        };
      })
      .Case([&](trn::LeakyReluOp l) -> TileCompute {
        // max(x, slope * x) for slope <= 1, min(...) above: exact, NaN kept.
        double slope = l.getSlope().convertToDouble();
        nisa::AluOp pick = slope <= 1.0 ? nisa::AluOp::max : nisa::AluOp::min;
        return [&ctx, slope, pick](Location loc, ArrayRef<Value> ins,
                                   ArrayRef<Ap> aps, Value out, Ap ap) {
          ctx.tensorScalar(loc, out, ap, ins[0], aps[0], nisa::AluOp::multiply,
                           slope);
          ctx.tensorTensor(loc, pick, out, ap, ins[0], aps[0], out, ap);
        };
      })
      .Case([&](trn::LogicalNotOp) {
        return scalar(ctx, {nisa::AluOp::is_equal, 0.0});
      })
      .Case([&](trn::BitwiseNotOp b) -> TileCompute {
        // bool: x == 0; int: ~x = -x - 1 (exact in the fp32 datapath).
        if (b.getType().getElementType().isInteger(1))
          return scalar(ctx, {nisa::AluOp::is_equal, 0.0});
        return scalar(ctx, {nisa::AluOp::multiply, -1.0, false,
                            nisa::AluOp::subtract, 1.0});
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
  // HBM to HBM directly (the DMA engines move data within HBM too: NKI DMA
  // overview), one transfer per tile's worth: no SBUF hop, half the
  // instructions, nothing for the allocator, and the list scheduler may run
  // it as early as its source is ready. Not for a cast (the engines' path
  // for i64), nor a source broadcast along a dim (a DMA of stride-0 runs
  // moves one element per descriptor; loadBroadcast widens on chip), nor
  // within one buffer (a transfer whose source and destination overlap has
  // no defined order; through SBUF each tile is read before it is written).
  Type elt = dst.elementType();
  bool broadcast = false;
  for (auto [stride, size] : llvm::zip_equal(src.strides, src.shape))
    broadcast |= stride == 0 && size > 1;
  if (elt == src.elementType() && !elt.isInteger(64) && !broadcast &&
      dst.root != src.root) {
    int64_t n = dst.numElements();
    SmallVector<int64_t> dense = contiguousStrides(dst.shape);
    if (dst.shape == src.shape && dst.strides == dense && src.strides == dense) {
      // Both contiguous: chunks of a tile's elements, each as [p, len / p]
      // rows (p the largest power of two up to the partition count that
      // divides it), so descriptors are long runs even for short rows.
      int64_t chunk = ctx.partitions() * ctx.maxFree({elt});
      for (int64_t at = 0; at < n; at += chunk) {
        int64_t len = std::min(chunk, n - at), p = ctx.partitions();
        while (p > 1 && len % p)
          p /= 2;
        ctx.dma(loc, dst.root, ctx.ap(dst.offset + at, {len / p, 1}, {p, len / p}),
                src.root, ctx.ap(src.offset + at, {len / p, 1}, {p, len / p}));
      }
      return;
    }
    JointSpace space = JointSpace::build({&dst, &src});
    space.orderByView(0);
    emitTileLoops(ctx.b, loc, space, ctx.partitions(), ctx.maxFree({elt}),
                  {dst.root, src.root},
                  [&](const TileTask &task, ArrayRef<Value> roots) {
                    ctx.dma(loc, roots[0],
                            ctx.ap(task.offsets[0], task.strides[0], task.counts),
                            roots[1],
                            ctx.ap(task.offsets[1], task.strides[1], task.counts));
                  });
    return;
  }
  forEachElementwiseTile(
      ctx, loc, {dst}, {src}, {dst.elementType()},
      ctx.maxFree({dst.elementType(), src.elementType()}),
      [](Location, int64_t, int64_t, ArrayRef<Value> loaded, ArrayRef<Ap>) {
        return SmallVector<Value>{loaded[0]};
      });
}

namespace {
/// The operands an op reads as tiles: a binary ALU op with one constant
/// operand is one tensor_scalar with the constant as immediate (reversed
/// when it is the lhs).
struct TileOperands {
  SmallVector<Value> operands;
  std::optional<double> imm;
  bool reverse = false;
};

TileOperands tileOperands(Operation *op) {
  TileOperands t{SmallVector<Value>(op->getOperands()), std::nullopt, false};
  if (!lookup(kAluOps, op))
    return t;
  if ((t.imm = constantOf(t.operands[1]))) {
    t.operands.pop_back();
  } else if ((t.imm = constantOf(t.operands[0]))) {
    t.operands.erase(t.operands.begin());
    t.reverse = true;
  }
  return t;
}
} // namespace

SmallVector<Value> trnc::tile::tileOperandsOf(Operation *op) {
  return tileOperands(op).operands;
}

FailureOr<ElementwiseStep> trnc::tile::elementwiseStep(LoweringContext &ctx,
                                                       Operation *op) {
  TileOperands t = tileOperands(op);
  ElementwiseStep step;
  step.op = op;
  step.operands = t.operands;
  std::optional<nisa::AluOp> alu = lookup(kAluOps, op);
  std::optional<double> imm = t.imm;
  bool reverse = t.reverse;
  if (std::optional<nisa::ActFunc> act = lookup(kActivations, op)) {
    step.activation = ActivationForm{*act};
    step.compute = activation(ctx, *step.activation);
  } else if (alu && imm) {
    step.scalarOps = ScalarOps{*alu, *imm, reverse};
  } else if (auto s = dyn_cast<trn::AddScalarOp>(op)) {
    step.scalarOps = ScalarOps{nisa::AluOp::add, s.getValue().convertToDouble()};
  } else if (auto s = dyn_cast<trn::MulScalarOp>(op)) {
    step.scalarOps =
        ScalarOps{nisa::AluOp::multiply, s.getValue().convertToDouble()};
  } else if (alu) {
    step.compute = binary(ctx, *alu);
  } else {
    step.compute = specialCompute(ctx, op);
  }
  if (step.scalarOps)
    step.compute = scalar(ctx, *step.scalarOps);
  if (!step.compute && !isa<trn::ConvertOp>(op))
    return op->emitOpError("has no elementwise lowering");
  step.inPlaceSafe =
      step.compute && (lookup(kActivations, op) || alu ||
                       isa<trn::AddScalarOp, trn::MulScalarOp, trn::ClampOp,
                           trn::LogicalNotOp, trn::BitwiseNotOp>(op));
  return step;
}

namespace {
/// x * scale + bias for a tensor_scalar of multiplies and adds (what an
/// activation's input stage computes), or none.
std::optional<std::pair<double, double>> affineOf(const ScalarOps &s) {
  using nisa::AluOp;
  double scale = 1.0, bias = 0.0;
  switch (s.op0) {
  case AluOp::multiply: scale = s.imm0; break;
  case AluOp::add: bias = s.imm0; break;
  case AluOp::subtract: // x - c, or c - x
    scale = s.reverse0 ? -1.0 : 1.0;
    bias = s.reverse0 ? s.imm0 : -s.imm0;
    break;
  default: return std::nullopt;
  }
  if (s.op1 == AluOp::bypass)
    return std::make_pair(scale, bias);
  // A second op may only add the bias to x * a.
  if (s.op0 != AluOp::multiply ||
      !(s.op1 == AluOp::add || (s.op1 == AluOp::subtract && !s.reverse1)))
    return std::nullopt;
  return std::make_pair(scale, s.op1 == AluOp::add ? s.imm1 : -s.imm1);
}

/// `reader` computed from `producer`'s input in one instruction, or false.
bool fold(LoweringContext &ctx, ElementwiseStep &reader,
          const ElementwiseStep &producer) {
  using nisa::AluOp;
  const std::optional<ScalarOps> &p = producer.scalarOps;
  std::optional<ScalarOps> &r = reader.scalarOps;
  if (p && r && p->op1 == AluOp::bypass && r->op1 == AluOp::bypass) {
    r = ScalarOps{p->op0, p->imm0, p->reverse0, r->op0, r->imm0, r->reverse0};
    reader.compute = scalar(ctx, *r);
    return true;
  }
  std::optional<ActivationForm> &a = reader.activation;
  if (p && a && a->scale == 1.0 && a->bias == 0.0) {
    std::optional<std::pair<double, double>> affine = affineOf(*p);
    if (!affine)
      return false;
    a->scale = affine->first;
    a->bias = affine->second;
    reader.compute = activation(ctx, *a);
    return true;
  }
  // c * exp(y) = exp(y + ln c): the multiply becomes the exp's bias.
  const std::optional<ActivationForm> &e = producer.activation;
  if (e && e->func == nisa::ActFunc::exp && r && r->op0 == AluOp::multiply &&
      r->op1 == AluOp::bypass && r->imm0 > 0.0 && std::isfinite(r->imm0)) {
    a = ActivationForm{nisa::ActFunc::exp, e->scale,
                       e->bias + std::log(r->imm0)};
    r.reset();
    reader.compute = activation(ctx, *a);
    return true;
  }
  return false;
}
} // namespace

void trnc::tile::foldSteps(LoweringContext &ctx,
                           MutableArrayRef<ElementwiseStep> steps,
                           function_ref<bool(Value)> foldable) {
  llvm::DenseMap<Operation *, ElementwiseStep *> stepOf;
  for (ElementwiseStep &step : steps)
    stepOf[step.op] = &step;
  for (ElementwiseStep &reader : steps) {
    // Single-operand steps only: what they read is what the producer read.
    while (reader.compute && reader.operands.size() == 1) {
      Value v = reader.operands[0];
      ElementwiseStep *producer = stepOf.lookup(v.getDefiningOp());
      if (!producer || producer->folded || !producer->compute ||
          producer->operands.size() != 1 || !foldable(v) ||
          !fold(ctx, reader, *producer))
        break;
      producer->folded = true;
      reader.operands[0] = producer->operands[0];
    }
  }
}

bool trnc::tile::isGroupableElementwise(Operation *op) {
  return isElementwiseOp(op) && !isa<trn::FullOp, trn::ThresholdBackwardOp>(op);
}

namespace {
RankedTensorType resultType(Operation *op) {
  return cast<RankedTensorType>(op->getResult(0).getType());
}
} // namespace

bool trnc::tile::isImmediateOnly(Operation *op) {
  if (op->getNumResults() != 1 || !constantOf(op->getResult(0)))
    return false;
  Value r = op->getResult(0);
  return llvm::all_of(r.getUsers(), [&](Operation *u) {
    if (isa<trn::BroadcastOp, trn::ReshapeOp>(u) || isFloatConvert(u))
      return isImmediateOnly(u);
    return isElementwiseOp(u) &&
           !llvm::is_contained(tileOperands(u).operands, r);
  });
}

SmallVector<Operation *>
trnc::tile::elementwiseGroup(Operation *first, int64_t partitions,
                             function_ref<bool(Operation *)> taken,
                             function_ref<bool(Value, int64_t)> available) {
  SmallVector<Operation *> group{first};
  if (!isGroupableElementwise(first))
    return group;
  ArrayRef<int64_t> shape = resultType(first).getShape();
  // Bounds the group (its tiles share SBUF, and compile time).
  constexpr size_t kMaxMembers = 128;
  auto candidate = [&](Operation *op) {
    return op && op != first && op->getBlock() == first->getBlock() &&
           isGroupableElementwise(op) && !taken(op) && !isImmediateOnly(op) &&
           resultType(op).getShape() == shape;
  };
  // The ops of `first`'s shape connected to it by def-use edges or by
  // reading the same value, wherever they are in program order: a foreach
  // optimizer step lists each foreach op for every parameter in turn, so
  // one parameter's update is spread over the whole function.
  llvm::SetVector<Operation *> component;
  component.insert(first);
  auto visit = [&](Operation *op) {
    if (component.size() < kMaxMembers && candidate(op))
      component.insert(op);
  };
  for (size_t i = 0; i < component.size(); ++i) {
    Operation *op = component[i];
    for (Operation *u : op->getResult(0).getUsers())
      visit(u);
    for (Value v : tileOperands(op).operands) {
      visit(v.getDefiningOp());
      for (Operation *u : v.getUsers())
        visit(u);
    }
  }
  // In program order (ops are pure, so a later op may move up to the
  // group), each op whose operands are available: group results, values
  // computed before the group (or views of them), or small producers
  // `available` moves ahead of it.
  SmallVector<Operation *> ordered(component.begin() + 1, component.end());
  llvm::sort(ordered, [](Operation *a, Operation *b) {
    return a->isBeforeInBlock(b);
  });
  // Only a group bigger than the producers moved ahead of it (a partition's
  // worth of elements, or 1/kPrepareShare of the group: per-row values of
  // rows of at least that many) may ask for them: those producers' own
  // groups are then of another, smaller shape, never take this group's ops,
  // and ask in turn only for producers smaller still.
  constexpr int64_t kPrepareShare = 32;
  int64_t elements = resultType(first).getNumElements();
  int64_t moveLimit = elements > partitions
                             ? std::max(partitions, elements / kPrepareShare)
                             : 0;
  llvm::SmallPtrSet<Operation *, 16> members{first};
  for (Operation *op : ordered) {
    bool ready = llvm::all_of(tileOperands(op).operands, [&](Value v) {
      Operation *def = v.getDefiningOp();
      if (def && members.contains(def))
        return true;
      if (def && component.contains(def))
        return false; // a member left out: so is this op
      return available(v, moveLimit);
    });
    if (!ready)
      continue;
    group.push_back(op);
    members.insert(op);
  }
  return group;
}

bool ElementwiseGroupPlan::internal(Value v) const {
  Operation *def = v.getDefiningOp();
  return def && members.contains(def);
}

Type ElementwiseGroupPlan::loadType(const ElementwiseStep &step,
                                    Value v) const {
  return step.compute || ownType.contains(v)
             ? cast<RankedTensorType>(v.getType()).getElementType()
             : resultType(step.op).getElementType();
}

FailureOr<ElementwiseGroupPlan>
ElementwiseGroupPlan::build(LoweringContext &ctx, ArrayRef<Operation *> ops) {
  ElementwiseGroupPlan plan;
  plan.members.insert(ops.begin(), ops.end());
  for (Operation *op : ops) {
    FailureOr<ElementwiseStep> step = elementwiseStep(ctx, op);
    if (failed(step))
      return failure();
    plan.steps.push_back(std::move(*step));
  }
  foldSteps(ctx, plan.steps, [&](Value v) {
    return plan.internal(v) && v.hasOneUse() &&
           cast<RankedTensorType>(v.getType()).getElementType().isF32();
  });
  // An input read in two types (AdamW reads grad in bf16 and, cast, in
  // f32) is loaded once, in its own type: one DMA, not one per type.
  llvm::DenseMap<Value, llvm::SmallPtrSet<Type, 2>> readAs;
  for (const ElementwiseStep &step : plan.steps)
    for (Value v : step.operands)
      if (!plan.internal(v) && !step.folded)
        readAs[v].insert(plan.loadType(step, v));
  for (auto &[v, types] : readAs)
    if (types.size() > 1)
      plan.ownType.insert(v);
  // A 16-bit float input widened to f32 is loaded in its own type too: the
  // engines widen it on read for free, and a casting DMA moves the wider
  // type's bytes (CostModel.cpp, dmaBytes), twice the narrow load's.
  for (const ElementwiseStep &step : plan.steps) {
    if (step.compute || step.folded || plan.internal(step.operands[0]))
      continue;
    Type from = cast<RankedTensorType>(step.operands[0].getType()).getElementType();
    if ((from.isBF16() || from.isF16()) && resultType(step.op).getElementType().isF32())
      plan.ownType.insert(step.operands[0]);
  }
  for (const ElementwiseStep &step : plan.steps)
    for (Value v : step.operands) {
      if (plan.internal(v) || step.folded)
        continue;
      std::pair<Value, Type> key{v, plan.loadType(step, v)};
      if (plan.sourceIndex.try_emplace(key, plan.sources.size()).second)
        plan.sources.push_back(key);
    }
  for (Operation *op : ops) {
    Value r = op->getResult(0);
    if (llvm::any_of(r.getUsers(),
                     [&](Operation *u) { return !plan.members.contains(u); }))
      plan.outputs.push_back(r);
  }
  // Casts between group values that need no instruction. The engines read
  // any float type and compute in fp32, rounding on output: a widening
  // float cast (bf16 -> f32) is exact, so its readers read the narrow tile;
  // a narrowing cast of an fp32 value read only by it is the same value as
  // the producer writing the cast's type.
  for (const ElementwiseStep &step : plan.steps) {
    if (step.compute || !(plan.internal(step.operands[0]) ||
                          plan.ownType.contains(step.operands[0])))
      continue;
    Value in = step.operands[0], out = step.op->getResult(0);
    auto from = dyn_cast<FloatType>(cast<RankedTensorType>(in.getType()).getElementType());
    auto to = dyn_cast<FloatType>(resultType(step.op).getElementType());
    if (!from || !to)
      continue;
    if (to.isF32() && (from.isBF16() || from.isF16()))
      plan.sameTile.insert(out);
    if (!plan.internal(in))
      continue;
    auto producer = llvm::find_if(plan.steps, [&](const ElementwiseStep &s) {
      return s.op == in.getDefiningOp();
    });
    if (from.isF32() && in.hasOneUse() && producer->compute &&
        !plan.sameTile.contains(in)) {
      plan.tileType[in] = to;
      plan.sameTile.insert(out);
    }
  }
  return plan;
}

SmallVector<Type> ElementwiseGroupPlan::tileTypes() const {
  SmallVector<Type> types;
  for (const ElementwiseStep &step : steps)
    types.push_back(resultType(step.op).getElementType());
  for (auto [v, t] : sources) {
    types.push_back(t);
    types.push_back(cast<RankedTensorType>(v.getType()).getElementType());
  }
  return types;
}

int64_t ElementwiseGroupPlan::liveTiles() const {
  llvm::DenseMap<Value, unsigned> lastUse;
  for (auto [i, step] : llvm::enumerate(steps))
    for (Value v : step.operands)
      if (!step.folded)
        lastUse[v] = i;
  for (Value v : outputs)
    lastUse[v] = steps.size();
  unsigned live = 0, peak = 0;
  for (auto [i, step] : llvm::enumerate(steps)) {
    if (step.folded)
      continue;
    ++live;
    peak = std::max(peak, live);
    for (Value v : step.operands)
      if (internal(v) && lastUse[v] == i)
        --live;
  }
  return sources.size() + peak;
}

SmallVector<Value> ElementwiseGroupPlan::computeTile(
    LoweringContext &ctx, Location loc, int64_t p, int64_t f,
    ArrayRef<Value> loaded, ArrayRef<Ap> loadedAps) const {
  EmitMark mark(ctx.b);
  llvm::DenseMap<Value, Value> tileOf;
  // How each tile is read as [p, f]: a loaded broadcast source through its
  // stride-0 pattern, any other tile whole.
  llvm::DenseMap<Value, Ap> readAs;
  for (auto [t, ap] : llvm::zip(loaded, loadedAps))
    readAs[t] = ap;
  auto read = [&](Value t) {
    auto it = readAs.find(t);
    return it != readAs.end() ? it->second : ctx.tileAp(t, p, f);
  };
  for (const ElementwiseStep &step : steps) {
    if (step.folded)
      continue; // computed by its reader's instruction
    Value result = step.op->getResult(0);
    Type out = resultType(step.op).getElementType();
    SmallVector<Value> ins;
    for (Value v : step.operands)
      ins.push_back(internal(v)
                        ? tileOf.lookup(v)
                        : loaded[sourceIndex.lookup({v, loadType(step, v)})]);
    Value in0 = step.operands.empty() ? Value() : step.operands[0];
    if (!step.compute &&
        ((!internal(in0) && !ownType.contains(in0)) ||
         sameTile.contains(result))) {
      tileOf[result] = ins[0]; // loaded with the cast, or no cast needed
      continue;
    }
    Value t = ctx.allocSbuf(loc, p, f, tileType.lookup(result) ? tileType.lookup(result) : out);
    if (step.compute) {
      SmallVector<Ap> aps;
      for (Value in : ins)
        aps.push_back(read(in));
      step.compute(step.op->getLoc(), ins, aps, t, ctx.tileAp(t));
    } else {
      ctx.copyOnVector(step.op->getLoc(), t, ctx.tileAp(t), ins[0],
                       read(ins[0]));
    }
    tileOf[result] = t;
  }
  // Their engines are chosen once the loops are unrolled (EngineBalance.h).
  markEngineFree(mark.begin(), ctx.b.getInsertionPoint());
  SmallVector<Value> outs;
  for (Value v : outputs)
    outs.push_back(tileOf.lookup(v));
  return outs;
}

LogicalResult trnc::tile::lowerElementwiseGroup(LoweringContext &ctx,
                                                ArrayRef<Operation *> ops) {
  Location loc = ops.front()->getLoc();
  if (auto full = dyn_cast<trn::FullOp>(ops.front())) {
    HbmView dst = ctx.destination(loc, full.getResult());
    ctx.views[full.getResult()] = dst;
    lowerFull(ctx, loc, dst, full.getValue().convertToDouble());
    return success();
  }
  FailureOr<ElementwiseGroupPlan> plan = ElementwiseGroupPlan::build(ctx, ops);
  if (failed(plan))
    return failure();
  EmitMark groupStart(ctx.b); // the group's instructions, for their engines
  SmallVector<HbmView> srcs;
  SmallVector<Type> loadTypes;
  for (auto [v, t] : plan->sources) {
    auto view = ctx.views.find(v);
    if (view == ctx.views.end())
      return ops.front()->emitOpError("operand has no lowered HBM view");
    srcs.push_back(view->second);
    loadTypes.push_back(t);
  }
  if (plan->outputs.empty())
    return success(); // nothing reads the group (dead code)
  SmallVector<HbmView> dsts;
  for (Value r : plan->outputs) {
    dsts.push_back(ctx.destination(loc, r));
    ctx.views[r] = dsts.back();
  }
  // Big groups get narrower tiles: as wide as lets two tasks' tiles fit the
  // share of SBUF a schedule fills (kPlaceableShare), so the next task's
  // loads run under this one's compute. Narrower tiles only add
  // instructions (each with its fixed cost).
  int64_t tiles = plan->liveTiles();
  int64_t widest = ctx.maxFree(plan->tileTypes());
  int64_t taskBytes = tiles * ctx.tileBytes(); // at full width
  int64_t budget = int64_t(kPlaceableShare * ctx.machine.sbufPartitionBytes);
  int64_t split = 1;
  while (split < widest &&
         int64_t(kTasksInFlight * llvm::divideCeil(taskBytes, split)) > budget)
    ++split;
  int64_t maxFree = llvm::divideCeil(widest, split);
  forEachElementwiseTile(
      ctx, loc, dsts, srcs, loadTypes, maxFree,
      [&](Location, int64_t p, int64_t f, ArrayRef<Value> loaded,
          ArrayRef<Ap> loadedAps) {
        return plan->computeTile(ctx, loc, p, f, loaded, loadedAps);
      },
      /*reuseLoads=*/!isa<trn::ThresholdBackwardOp>(ops.front()));
  markEngineGroup(groupStart.begin(), ctx.b.getInsertionPoint(),
                  ctx.nextEngineGroup++);
  return success();
}
