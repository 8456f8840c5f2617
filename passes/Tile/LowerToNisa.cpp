//===- LowerToNisa.cpp - the trnc-tile-lower-to-nisa pass -----------------===//
//
// Rewrites every func of trn ops into a destination-passing func of nisa
// instructions: arguments become 1-D HBM memrefs (inputs, then one per
// result), views become stride changes, and each fusion group
// (trnc-form-fusion-groups: trn.fusion_group) and each op outside one is
// tiled by the category lowerings (LowerElementwise/LowerRowGroup/
// LowerMatmul/LowerReduction.cpp...).
// A result computed by an op is written straight into its output buffer;
// a result that is a view, an argument or returned twice is copied there.
//
//===----------------------------------------------------------------------===//
#include "passes/Passes.h"
#include "passes/TargetModel.h"
#include "passes/Tile/DeferredProducts.h"
#include "passes/Tile/ElementwiseSteps.h"
#include "passes/Tile/GroupFormation.h"
#include "passes/Tile/LoweringContext.h"
#include "passes/Tile/LowerRowGroup.h"
#include "passes/Tile/MatmulEpilogue.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/TypeSwitch.h"

#define DEBUG_TYPE "trnc-tile-lower-to-nisa"

namespace trnc {
#define GEN_PASS_DEF_LOWERTONISA
#include "passes/Passes.h.inc"
} // namespace trnc

using namespace mlir;
using namespace trnc;
using namespace trnc::tile;

namespace {

/// Declared strides of argument/result `attr`, or row-major ones.
SmallVector<int64_t> declaredStrides(DenseI64ArrayAttr attr,
                                     RankedTensorType type) {
  if (attr && attr.size() == type.getRank())
    return SmallVector<int64_t>(attr.asArrayRef());
  return contiguousStrides(type.getShape());
}

struct LowerToNisaPass : public trnc::impl::LowerToNisaBase<LowerToNisaPass> {
  using Base::Base;

  void runOnOperation() override {
    std::optional<MachineModel> machine = targetModel(getOperation(), target);
    if (!machine)
      return signalPassFailure();
    if (lnc < 1 || lnc > machine->maxLnc) {
      getOperation().emitError("lnc=")
          << unsigned(lnc) << " is not supported on " << machine->name
          << " (at most " << machine->maxLnc
          << " physical cores per logical core)";
      return signalPassFailure();
    }
    SmallVector<func::FuncOp> funcs(getOperation().getOps<func::FuncOp>());
    for (func::FuncOp func : funcs)
      if (!func.isExternal() && failed(lowerFunc(func, *machine)))
        return signalPassFailure();
  }

  LogicalResult lowerFunc(func::FuncOp func, const MachineModel &machine);
  LogicalResult lowerBody(func::FuncOp oldFunc, LoweringContext &ctx,
                          ArrayRef<HbmView> outputs);
};

LogicalResult LowerToNisaPass::lowerFunc(func::FuncOp func,
                                         const MachineModel &machine) {
  MLIRContext *mctx = func.getContext();
  FunctionType type = func.getFunctionType();
  SmallVector<RankedTensorType> ioTypes;
  SmallVector<SmallVector<int64_t>> ioStrides;
  for (auto [i, t] : llvm::enumerate(type.getInputs())) {
    auto rt = dyn_cast<RankedTensorType>(t);
    if (!rt)
      return func.emitOpError("argument ") << i << " is not a ranked tensor";
    ioTypes.push_back(rt);
    ioStrides.push_back(declaredStrides(
        func.getArgAttrOfType<DenseI64ArrayAttr>(i, "trn.stride"), rt));
  }
  for (auto [j, t] : llvm::enumerate(type.getResults())) {
    auto rt = dyn_cast<RankedTensorType>(t);
    if (!rt)
      return func.emitOpError("result ") << j << " is not a ranked tensor";
    ioTypes.push_back(rt);
    ioStrides.push_back(declaredStrides(
        func.getResultAttrOfType<DenseI64ArrayAttr>(j, "trn.stride"), rt));
  }

  // The destination-passing signature.
  SmallVector<Type> argTypes;
  SmallVector<DictionaryAttr> argAttrs;
  Builder attrs(mctx);
  unsigned numInputs = type.getNumInputs();
  for (auto [i, rt] : llvm::enumerate(ioTypes)) {
    int64_t extent = stridedExtent(rt.getShape(), ioStrides[i]);
    argTypes.push_back(MemRefType::get({extent}, rt.getElementType()));
    bool isInput = i < numInputs;
    argAttrs.push_back(attrs.getDictionaryAttr({
        attrs.getNamedAttr(isInput ? "nisa.input" : "nisa.output",
                           attrs.getI64IntegerAttr(isInput ? i : i - numInputs)),
        attrs.getNamedAttr("nisa.shape",
                           attrs.getDenseI64ArrayAttr(rt.getShape())),
        attrs.getNamedAttr("nisa.strides",
                           attrs.getDenseI64ArrayAttr(ioStrides[i])),
    }));
  }

  OpBuilder b(func);
  auto newFunc = b.create<func::FuncOp>(
      func.getLoc(), func.getName(), b.getFunctionType(argTypes, {}));
  newFunc.setAllArgAttrs(argAttrs);
  for (StringRef name : {"trn.graph_name", "sym_visibility"})
    if (Attribute a = func->getAttr(name))
      newFunc->setAttr(name, a);

  Block *entry = newFunc.addEntryBlock();
  Block &oldEntry = func.getBody().front();
  for (unsigned i = 0; i < numInputs; ++i)
    entry->getArgument(i).setLoc(oldEntry.getArgument(i).getLoc());
  b.setInsertionPointToStart(entry);

  LoweringContext ctx(b, machine);
  ctx.lnc = lnc;
  SmallVector<HbmView> outputs;
  for (auto [i, rt] : llvm::enumerate(ioTypes)) {
    HbmView v{entry->getArgument(i), 0, SmallVector<int64_t>(rt.getShape()),
              ioStrides[i]};
    if (i < numInputs)
      ctx.views[oldEntry.getArgument(i)] = v;
    else
      outputs.push_back(v);
  }

  if (failed(lowerBody(func, ctx, outputs))) {
    newFunc.erase();
    return failure();
  }
  func.erase();
  return success();
}

LogicalResult LowerToNisaPass::lowerBody(func::FuncOp oldFunc,
                                         LoweringContext &ctx,
                                         ArrayRef<HbmView> outputs) {
  if (!oldFunc.getBody().hasOneBlock())
    return oldFunc.emitOpError("must have a single block");
  auto ret = cast<func::ReturnOp>(oldFunc.getBody().front().getTerminator());

  // A fusion group's result is the value its body yields: that value is
  // what the group's lowering writes.
  auto yieldedBy = [](Value v) {
    if (auto r = dyn_cast<OpResult>(v))
      if (auto group = dyn_cast<trn::FusionGroupOp>(r.getOwner()))
        return group.yielded(r);
    return v;
  };
  // Results computed by an op and returned once are written in place.
  llvm::MapVector<Value, unsigned> uses;
  for (Value v : ret.getOperands())
    ++uses[v];
  SmallVector<bool> written(outputs.size(), false);
  for (auto [j, v] : llvm::enumerate(ret.getOperands())) {
    Value computed = yieldedBy(v);
    Operation *def = computed.getDefiningOp();
    if (!def || isViewOp(def) || uses[v] != 1)
      continue;
    ctx.resultDest[computed] = outputs[j];
    written[j] = true;
  }
  // A result returned as a reshape/transpose of a computed value (a saved
  // activation viewed [B, T, C] from [B*T, C]; a convolution's weight
  // gradient computed [C_in, C_out, kh, kw] and returned transposed): the
  // value is computed straight into the output buffer, through the view
  // that undoes the chain (the inverse permutation of each transpose, the
  // operand's shape of each reshape, where strides express it), and no copy
  // follows. Every lowering stores through its destination's strides, as it
  // does for outputs with eager's non-contiguous layouts; the view must keep
  // the value's innermost dim contiguous, or each element would be a store
  // of its own (an elementwise result returned transposed is copied).
  // For `v` to read as `dest`: the computed value `v` is a view chain of
  // (its root) and the view of `dest` to compute the root into, or nullopt
  // when strides cannot say it. Without `oneUse`, `v` must be a view (a
  // computed `v` is written in place above); with it, every value of the
  // chain, root included, must have one reader.
  auto computedInto =
      [&](Value v, const HbmView &dest,
          bool oneUse) -> std::optional<std::pair<Value, HbmView>> {
    std::optional<HbmView> seen = dest;
    Value root = v;
    bool viewed = false;
    while (Operation *def = root.getDefiningOp()) {
      if (oneUse && !root.hasOneUse())
        return std::nullopt;
      if (auto t = dyn_cast<trn::TransposeOp>(def)) {
        ArrayRef<int64_t> perm = t.getPermutation();
        SmallVector<int64_t> inverse(perm.size());
        for (auto [d, p] : llvm::enumerate(perm))
          inverse[p] = d;
        seen = transposeView(*seen, inverse);
      } else if (auto r = dyn_cast<trn::ReshapeOp>(def)) {
        seen = reshapeView(*seen, r.getInput().getType().getShape());
      } else {
        break;
      }
      viewed = true;
      root = def->getOperand(0);
      if (!seen)
        break;
    }
    root = yieldedBy(root);
    Operation *producer = root.getDefiningOp();
    auto innermostContiguous = [](const HbmView &view) {
      for (size_t d = view.shape.size(); d-- > 0;)
        if (view.shape[d] > 1)
          return view.strides[d] == 1;
      return true;
    };
    if (!seen || !innermostContiguous(*seen) || !producer ||
        isViewOp(producer) || ctx.resultDest.count(root) ||
        (oneUse && !root.hasOneUse()) ||
        cast<RankedTensorType>(root.getType()).getElementType() !=
            dest.elementType() ||
        (!viewed && !oneUse))
      return std::nullopt;
    return std::make_pair(root, *seen);
  };
  for (auto [j, v] : llvm::enumerate(ret.getOperands())) {
    if (written[j])
      continue;
    if (auto into = computedInto(v, outputs[j], /*oneUse=*/false)) {
      ctx.resultDest[into->first] = into->second;
      written[j] = true;
    }
  }
  // A scatter_rows result written in place whose base is computed for it
  // alone (a tied embedding's gradient added to lm_head's weight gradient,
  // through a transpose pair): the base is computed into the same output
  // buffer, so the scatter's copy of it is none (LowerIndirect.cpp).
  for (auto [v, dest] : llvm::to_vector(ctx.resultDest))
    if (auto scatter = v.getDefiningOp<trn::ScatterRowsOp>())
      if (auto into = computedInto(scatter.getBase(), dest, /*oneUse=*/true))
        ctx.resultDest[into->first] = into->second;

  // A view whose source has no HBM view yet (a fill read only as
  // immediates) is derived when something reads it (resolveView).
  auto lowerView = [&](Operation *o) -> LogicalResult {
    if (ctx.resolveView(o->getResult(0))) // views always derive
      return success();
    Value in = o->getOperand(0);
    if (!ctx.views.count(in) && !ctx.resolveView(in))
      return success();
    auto r = dyn_cast<trn::ReshapeOp>(o);
    if (!r)
      return o->emitOpError("has no HBM view of its operand");
    // Not expressible as strides: materialise row-major first.
    HbmView copy = ctx.allocScratch(
        r.getLoc(), cast<RankedTensorType>(r.getInput().getType()));
    emitCopy(ctx, r.getLoc(), copy, ctx.views.lookup(in));
    ctx.views[r.getResult()] = *reshapeView(copy, r.getType().getShape());
    return success();
  };
  std::function<LogicalResult(Operation *)> lowerOp;
  // A fusion group (trnc-form-fusion-groups) as one loop of its kind; its
  // results are the HBM views of the values its body yields.
  auto lowerGroup = [&](trn::FusionGroupOp group) -> LogicalResult {
    SmallVector<Operation *> ops = group.members();
    StringRef kind = group.getKind();
    if (kind == "elementwise") {
      if (failed(lowerElementwiseGroup(ctx, ops)))
        return failure();
    } else if (kind == "rows") {
      RowGroup rows{ops, SmallVector<int64_t>(*group.getRowSpace()), {}};
      // Not one loop (rows too long for SBUF): its elementwise members
      // still share loops, as the elementwise groups the body forms.
      llvm::DenseSet<Operation *> lowered;
      auto lowerMember = [&](Operation *o) -> LogicalResult {
        if (!lowered.insert(o).second)
          return success();
        if (!isElementwiseOp(o) || isImmediateOnly(o))
          return lowerOp(o);
        SmallVector<Operation *> sub = elementwiseGroup(
            o, ctx.partitions(), [&](Operation *e) { return lowered.contains(e); },
            [&](Value v, int64_t) { return ctx.resolveView(v); });
        lowered.insert(sub.begin(), sub.end());
        return lowerElementwiseGroup(ctx, sub);
      };
      if (failed(lowerRowGroup(ctx, rows, lowerMember)))
        return failure();
    } else {
      auto mm = cast<trn::MatmulOp>(ops.front());
      SmallVector<Operation *> views, epilogueOps;
      for (Operation *o : ArrayRef(ops).drop_front())
        (isViewOp(o) ? views : epilogueOps).push_back(o);
      std::optional<MatmulEpilogue> epilogue =
          planMatmulEpilogue(ctx, mm, epilogueOps);
      if (failed(epilogue ? lowerMatmul(ctx, mm, &*epilogue)
                          : lowerMatmul(ctx, mm)))
        return failure();
      for (Operation *v : views)
        if (failed(lowerView(v)))
          return failure();
      // Its inputs or outputs have no [M, N] walk: after the product.
      if (!epilogue && failed(lowerElementwiseGroup(ctx, epilogueOps)))
        return failure();
    }
    for (OpResult r : group.getResults()) {
      Value v = group.yielded(r);
      if (!ctx.resolveView(v))
        return group.emitOpError("result ")
               << r.getResultNumber() << " has no lowered HBM view";
      ctx.views[r] = ctx.views.lookup(v);
    }
    return success();
  };
  lowerOp = [&](Operation *o) -> LogicalResult {
    if (isViewOp(o))
      return lowerView(o);
    return TypeSwitch<Operation *, LogicalResult>(o)
        .Case([&](trn::FusionGroupOp g) { return lowerGroup(g); })
        .Case([&](trn::ConcatOp) { return lowerConcat(ctx, o); })
        .Case<trn::GatherRowsOp, trn::ScatterRowsOp>(
            [&](Operation *o) { return lowerIndirect(ctx, o); })
        .Case<trn::IotaOp, trn::TriangleOp>(
            [&](Operation *o) { return lowerIndexPattern(ctx, o); })
        .Case([&](trn::RandomOp) { return lowerRandom(ctx, o); })
        .Case([&](trn::NkiKernelOp) { return lowerNkiKernel(ctx, o); })
        .Case([&](trn::CollectiveOp) { return lowerCollective(ctx, o); })
        .Case([&](trn::MatmulOp) { return lowerMatmul(ctx, o); })
        .Case([&](trn::Conv2dOp) { return lowerConv2d(ctx, o); })
        .Case<trn::ReduceSumOp, trn::ReduceMaxOp, trn::ReduceMinOp,
              trn::ReduceProdOp>(
            [&](Operation *o) { return lowerReduce(ctx, o); })
        .Case([&](trn::SoftmaxOp) { return lowerSoftmax(ctx, o); })
        .Case<trn::AttentionOp, trn::AttentionGradOp>(
            [&](Operation *o) { return lowerAttention(ctx, o); })
        .Case<trn::CumsumOp, trn::CumprodOp>(
            [&](Operation *o) { return lowerScan(ctx, o); })
        .Default([&](Operation *o) -> LogicalResult {
          if (isImmediateOnly(o)) // read only as tensor_scalar immediates
            return success();
          if (isElementwiseOp(o)) // LowerElementwise.cpp's list
            return lowerElementwiseGroup(ctx, o);
          return o->emitOpError("has no lowering to nisa (supported: trn "
                                "elementwise, matmul, reduce_sum, views)");
        });
  };

  // Weight gradients and where the list scheduler may move them
  // (DeferredProducts.h): marked on the instructions each op emits.
  Block &body = oldFunc.getBody().front();
  Block *out = ctx.b.getInsertionBlock();
  Deferrals deferrals = planDeferrals(body);
  SmallVector<int64_t> pendingAnchors, unanchored;
  for (auto [op, id] : deferrals.products)
    unanchored.push_back(id);
  for (auto &[op, ids] : deferrals.anchors)
    for (int64_t id : ids)
      llvm::erase(unanchored, id);
  auto emittedSince = [&](Operation *last) {
    return last ? std::next(Block::iterator(last)) : out->begin();
  };
  for (Operation &op : body.without_terminator()) {
    if (auto it = deferrals.anchors.find(&op); it != deferrals.anchors.end())
      llvm::append_range(pendingAnchors, it->second);
    auto deferred = deferrals.products.find(&op);
    DenseMap<Type, Value> identitiesBefore;
    if (deferred != deferrals.products.end())
      identitiesBefore = ctx.identities;
    Operation *last = out->empty() ? nullptr : &out->back();
    if (failed(lowerOp(&op)))
      return failure();
    if (deferred != deferrals.products.end()) {
      // An identity made for its transposes is cached for every later
      // lowering: its fill and select stay where they are.
      llvm::SmallPtrSet<Operation *, 4> shared;
      for (auto [elt, id] : ctx.identities) {
        if (identitiesBefore.count(elt))
          continue;
        for (Operation *user : id.getUsers())
          if (auto select = dyn_cast<nisa::AffineSelectOp>(user);
              select && select.getDst() == id) {
            shared.insert(select);
            for (Operation *fill : select.getSrc0().getUsers())
              if (isa<nisa::MemsetOp>(fill))
                shared.insert(fill);
          }
      }
      markDeferred(emittedSince(last), out->end(), deferred->second,
                   [&](Operation *o) { return shared.contains(o); });
    } else if (auto view = deferrals.chain.find(&op);
               view != deferrals.chain.end()) {
      markDeferred(emittedSince(last), out->end(), view->second,
                   [](Operation *) { return false; });
    } else if (!pendingAnchors.empty() &&
               markAnchor(emittedSince(last), out->end(), pendingAnchors)) {
      pendingAnchors.clear();
    }
  }
  // The rest go before the copies into the outputs (which may read them).
  llvm::append_range(pendingAnchors, unanchored);
  Operation *lastOp = out->empty() ? nullptr : &out->back();

  // Outputs not written in place: copy the value's view into them.
  for (auto [j, v] : llvm::enumerate(ret.getOperands())) {
    if (written[j])
      continue;
    auto it = ctx.views.find(v);
    if (it == ctx.views.end())
      return ret.emitOpError("operand ") << j << " has no lowered HBM view";
    emitCopy(ctx, ret.getLoc(), outputs[j], it->second);
  }
  if (!pendingAnchors.empty()) {
    llvm::sort(pendingAnchors);
    markAnchor(emittedSince(lastOp), out->end(), pendingAnchors);
  }
  ctx.b.create<func::ReturnOp>(ret.getLoc());
  return success();
}

} // namespace
