//===- CollectiveImporters.cpp - _c10d_functional.* -> trn.collective -----===//
//
// torch's functional collectives (the ones Dynamo and AOTAutograd put in
// graphs for DTensor, FSDP2 and torch.distributed._functional_collectives)
// become trn.collective ops. The exporter (python/trnc/distributed.py)
// resolves each node's process group name to its ranks and adds the
// keyword arguments trnc_ranks, trnc_world_size and trnc_id (the
// collective's number in the graph, which the host uses at run time); a
// node without them was not exported through trnc's backend and is
// refused. wait_tensor is the identity here: the collective's consumers
// wait on its queue's semaphore (docs/distributed.md). all_to_all_single
// with uneven splits is refused by name.
//
//===----------------------------------------------------------------------===//
#include "NodeContext.h"

#include "dialects/Trn/TrnOps.h"

using namespace mlir;

namespace trnc::import {
namespace {

/// The group the exporter resolved, and the collective's id.
struct Group {
  SmallVector<int64_t> ranks;
  int64_t worldSize = 1, id = 0;
};

FailureOr<Group> groupOf(NodeContext &ctx) {
  if (!ctx.arg(kKeywordOnly, "trnc_ranks"))
    return ctx.unsupported(
        "its process group was not resolved to ranks (graphs with "
        "collectives must be exported by trnc's backend, which does it)");
  FailureOr<SmallVector<int64_t>> ranks = ctx.intList(kKeywordOnly, "trnc_ranks");
  FailureOr<int64_t> world = ctx.integer(kKeywordOnly, "trnc_world_size");
  FailureOr<int64_t> id = ctx.integer(kKeywordOnly, "trnc_id");
  if (failed(ranks) || failed(world) || failed(id))
    return failure();
  return Group{*ranks, *world, *id};
}

/// A string argument (a reduce op), or failure.
FailureOr<std::string> text(NodeContext &ctx, unsigned pos, StringRef name) {
  const Arg *a = ctx.arg(pos, name);
  if (!a || a->kind != Arg::Kind::Str)
    return ctx.invalid("expects a string for '" + name.str() + "', got " +
                       (a ? a->describe() : std::string("nothing")));
  return a->text;
}

/// torch's reduce op names (c10d ReduceOp, lower case) -> trn's.
FailureOr<std::string> reduceOp(NodeContext &ctx, unsigned pos) {
  FailureOr<std::string> op = text(ctx, pos, "reduceOp");
  if (failed(op))
    return failure();
  std::string s = *op;
  for (char &c : s)
    c = char(std::tolower(c));
  if (s == "sum" || s == "avg" || s == "product" || s == "min" || s == "max")
    return s;
  return ctx.unsupported("reduce op '" + *op + "' (supported: sum, avg, "
                         "product, min, max)");
}

Value collective(NodeContext &ctx, Value input, RankedTensorType type,
                 StringRef kind, StringRef reduce, const Group &g,
                 int64_t root, int64_t id) {
  return ctx.create<trn::CollectiveOp>(
      type, input, ctx.builder.getStringAttr(kind),
      ctx.builder.getStringAttr(reduce),
      ctx.builder.getDenseI64ArrayAttr(g.ranks),
      ctx.builder.getI64IntegerAttr(g.worldSize),
      ctx.builder.getI64IntegerAttr(root), ctx.builder.getI64IntegerAttr(id));
}

/// The group_size argument of all_gather / reduce_scatter must be the
/// resolved group's.
LogicalResult checkGroupSize(NodeContext &ctx, unsigned pos, const Group &g) {
  FailureOr<int64_t> size = ctx.integer(pos, "group_size");
  if (failed(size))
    return failure();
  if (*size != int64_t(g.ranks.size()))
    return ctx.invalid("group_size " + std::to_string(*size) +
                       " but the process group has " +
                       std::to_string(g.ranks.size()) + " ranks");
  return success();
}

/// all_reduce(input, reduceOp, group_name).
FailureOr<Value> importAllReduce(NodeContext &ctx) {
  FailureOr<Value> x = ctx.tensor(0, "input");
  FailureOr<Group> g = groupOf(ctx);
  if (failed(x) || failed(g))
    return failure();
  FailureOr<std::string> op = reduceOp(ctx, 1);
  if (failed(op))
    return failure();
  return collective(ctx, *x, ctx.resultType(), "all_reduce", *op, *g, 0, g->id);
}

/// all_gather_into_tensor(input, group_size, group_name): concatenates the
/// ranks' inputs along dim 0.
FailureOr<Value> importAllGather(NodeContext &ctx) {
  FailureOr<Value> x = ctx.tensor(0, "input");
  FailureOr<Group> g = groupOf(ctx);
  if (failed(x) || failed(g) || failed(checkGroupSize(ctx, 1, *g)))
    return failure();
  return collective(ctx, *x, ctx.resultType(), "all_gather", "", *g, 0, g->id);
}

/// reduce_scatter_tensor(input, reduceOp, group_size, group_name).
FailureOr<Value> importReduceScatter(NodeContext &ctx) {
  FailureOr<Value> x = ctx.tensor(0, "input");
  FailureOr<Group> g = groupOf(ctx);
  if (failed(x) || failed(g) || failed(checkGroupSize(ctx, 2, *g)))
    return failure();
  FailureOr<std::string> op = reduceOp(ctx, 1);
  if (failed(op))
    return failure();
  return collective(ctx, *x, ctx.resultType(), "reduce_scatter", *op, *g, 0,
                    g->id);
}

/// all_to_all_single(input, output_split_sizes, input_split_sizes,
/// group_name): even splits of dim 0 only.
FailureOr<Value> importAllToAll(NodeContext &ctx) {
  FailureOr<Value> x = ctx.tensor(0, "input");
  FailureOr<Group> g = groupOf(ctx);
  if (failed(x) || failed(g))
    return failure();
  auto type = cast<RankedTensorType>(x->getType());
  int64_t n = g->ranks.size();
  if (type.getRank() == 0 || type.getDimSize(0) % n)
    return ctx.unsupported("all_to_all_single of a tensor whose dim 0 does "
                           "not split evenly over the group's " +
                           std::to_string(n) + " ranks");
  for (auto [pos, name] : {std::pair<unsigned, StringRef>{1, "output_split_sizes"},
                           {2, "input_split_sizes"}}) {
    FailureOr<SmallVector<int64_t>> splits =
        ctx.intList(pos, name, SmallVector<int64_t>());
    if (failed(splits))
      return failure();
    if (!splits->empty() &&
        (int64_t(splits->size()) != n ||
         llvm::any_of(*splits, [&](int64_t s) {
           return s != type.getDimSize(0) / n;
         })))
      return ctx.unsupported("all_to_all_single with uneven " + name.str() +
                             " (only equal splits of dim 0 are supported)");
  }
  return collective(ctx, *x, ctx.resultType(), "all_to_all", "", *g, 0, g->id);
}

/// broadcast(input, src, group_name).
FailureOr<Value> importBroadcast(NodeContext &ctx) {
  FailureOr<Value> x = ctx.tensor(0, "input");
  FailureOr<Group> g = groupOf(ctx);
  FailureOr<int64_t> src = ctx.integer(1, "src");
  if (failed(x) || failed(g) || failed(src))
    return failure();
  return collective(ctx, *x, ctx.resultType(), "broadcast", "", *g, *src,
                    g->id);
}

/// wait_tensor(tensor): the identity (its consumers' semaphore waits).
FailureOr<Value> importWait(NodeContext &ctx) { return ctx.tensor(0, "tensor"); }

/// The _coalesced forms: one collective per tensor, ids id, id + 1, ...
FailureOr<SmallVector<Value>> coalesced(NodeContext &ctx, StringRef kind,
                                        int reducePos, int sizePos) {
  FailureOr<SmallVector<Value>> xs = ctx.tensorList(0, "inputs");
  FailureOr<Group> g = groupOf(ctx);
  if (failed(xs) || failed(g))
    return failure();
  std::string op;
  if (reducePos >= 0) {
    FailureOr<std::string> r = reduceOp(ctx, reducePos);
    if (failed(r))
      return failure();
    op = *r;
  }
  if (sizePos >= 0 && failed(checkGroupSize(ctx, sizePos, *g)))
    return failure();
  ArrayRef<RankedTensorType> types = ctx.resultTypes();
  if (types.size() != xs->size())
    return ctx.invalid("has " + std::to_string(xs->size()) + " inputs but " +
                       std::to_string(types.size()) + " results");
  SmallVector<Value> out;
  for (auto [i, x] : llvm::enumerate(*xs))
    out.push_back(collective(ctx, x, types[i], kind, op, *g, 0, g->id + i));
  return out;
}

FailureOr<SmallVector<Value>> importAllReduceCoalesced(NodeContext &ctx) {
  return coalesced(ctx, "all_reduce", 1, -1);
}
FailureOr<SmallVector<Value>> importAllGatherCoalesced(NodeContext &ctx) {
  return coalesced(ctx, "all_gather", -1, 1);
}
FailureOr<SmallVector<Value>> importReduceScatterCoalesced(NodeContext &ctx) {
  return coalesced(ctx, "reduce_scatter", 1, 2);
}

} // namespace

void registerCollectiveImporters(OpRegistry &r) {
  r.add("_c10d_functional.all_reduce.default", importAllReduce);
  r.add("_c10d_functional.all_gather_into_tensor.default", importAllGather);
  r.add("_c10d_functional.reduce_scatter_tensor.default", importReduceScatter);
  r.add("_c10d_functional.all_to_all_single.default", importAllToAll);
  r.add("_c10d_functional.broadcast.default", importBroadcast);
  r.add("_c10d_functional.wait_tensor.default", importWait);
  r.addMulti("_c10d_functional.all_reduce_coalesced.default",
             importAllReduceCoalesced);
  r.addMulti("_c10d_functional.all_gather_into_tensor_coalesced.default",
             importAllGatherCoalesced);
  r.addMulti("_c10d_functional.reduce_scatter_tensor_coalesced.default",
             importReduceScatterCoalesced);
}

} // namespace trnc::import
