//===- RowGroupFormation.cpp - which ops form a row group -----------------===//
//
// Formation of row groups (formRowGroups, GroupFormation.h), over trn ops:
// it starts at each row reduction, floods through compatible ops (roleOf,
// RowSpace.h) along def-use edges, and places the group at its last op.
// Ops are pure, so moving the members there is legal when nothing outside
// the group reads a member before that point: the group is cut before the
// first op that would (a matmul reading a normalised activation), unless
// that op is elementwise and read only after the point: it then moves after
// the group (a cast of a weight-gradient sum, between the group's first op
// and the residual add that joins it). A member read outside before the seed (a
// residual sum read by a matmul) stays out with what it is computed from.
//
//===----------------------------------------------------------------------===//
#include "passes/Tile/ElementwiseSteps.h"
#include "passes/Tile/GroupFormation.h"
#include "passes/Tile/LoweringContext.h"
#include "passes/Tile/RowSpace.h"

#include "dialects/Trn/TrnOps.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"

#include <deque>

using namespace mlir;
using namespace trnc;
using namespace trnc::tile;

namespace {
bool reducesExactly(Operation *op, ArrayRef<int64_t> dims) {
  auto attr = dyn_cast_or_null<DenseI64ArrayAttr>(op->getAttr("dims"));
  return attr && attr.asArrayRef() == dims;
}

} // namespace

Role trnc::tile::roleOf(Operation *op, const RowSpace &space) {
  if (op->getNumResults() != 1 || !isa<RankedTensorType>(op->getResult(0).getType()))
    return Role::none;
  Value r = op->getResult(0);
  int64_t rank = space.full.size();
  if (isGroupableElementwise(op)) {
    // int64 is computed as int32 on chip; only a cast from it (a load) joins.
    if (eltOf(r).isInteger(64) ||
        (!isa<trn::ConvertOp>(op) &&
         llvm::any_of(op->getOperands(),
                      [](Value v) { return eltOf(v).isInteger(64); })))
      return Role::none;
    return space.isFull(r) || space.isRow(r) ? Role::elementwise : Role::none;
  }
  if (isa<trn::ReduceSumOp, trn::ReduceMaxOp, trn::ReduceMinOp>(op)) {
    Value in = op->getOperand(0);
    if (!isa<FloatType>(eltOf(in)))
      return Role::none;
    if (space.isExactFull(in) && reducesExactly(op, {rank - 1}) &&
        shapeOf(r) == space.kept())
      return Role::reduceRow;
    if (!isa<trn::ReduceSumOp>(op))
      return Role::none;
    SmallVector<int64_t> outer;
    for (int64_t d = 0; d + 1 < rank; ++d)
      outer.push_back(d);
    if (space.isExactFull(in) && reducesExactly(op, outer) &&
        shapeOf(r) == ArrayRef<int64_t>{space.n()})
      return Role::sumRows;
    SmallVector<int64_t> all;
    for (int64_t d = 0; d < (int64_t)shapeOf(in).size(); ++d)
      all.push_back(d);
    if (space.isRow(in) && reducesExactly(op, all) && shapeOf(r).empty())
      return Role::sumRows;
    return Role::none;
  }
  if (auto reshape = dyn_cast<trn::ReshapeOp>(op)) {
    Value in = reshape.getInput();
    bool rows = space.isRow(in) && space.isRow(r);
    return rows || (space.isFull(in) && space.isFull(r)) ? Role::alias
                                                         : Role::none;
  }
  if (auto bcast = dyn_cast<trn::BroadcastOp>(op)) {
    ArrayRef<int64_t> in = shapeOf(bcast.getInput());
    return in.size() == space.full.size() && in.drop_back() == space.kept() &&
                   in.back() == 1 && space.isExactFull(r)
               ? Role::alias
               : Role::none;
  }
  return Role::none;
}
namespace {
/// Builds the groups of one block in program order of their seeds.
class RowGroupFormation {
public:
  RowGroupFormation(Block &body, int64_t maxRow) : maxRow(maxRow) {
    for (Operation &op : body.without_terminator())
      index[&op] = index.size();
  }

  SmallVector<RowGroup> run(Block &body) {
    for (Operation &op : body.without_terminator()) {
      if (groupOf.count(&op) || !isa<trn::ReduceSumOp, trn::ReduceMaxOp,
                                      trn::ReduceMinOp>(op))
        continue;
      RowSpace space{SmallVector<int64_t>(shapeOf(op.getOperand(0)))};
      if (space.full.size() < 2 || space.n() < 2 || space.n() > maxRow ||
          roleOf(&op, space) != Role::reduceRow)
        continue;
      std::optional<RowGroup> g = form(&op, space);
      if (!g)
        continue;
      for (Operation *m : g->ops)
        groupOf[m] = groups.size();
      // An op moving after this group joins no later one.
      claimed.insert(g->sink.begin(), g->sink.end());
      groups.push_back(std::move(*g));
    }
    return groups;
  }

private:
  /// The members reachable from `seed` through `candidates` (or through any
  /// compatible op when `candidates` is null).
  llvm::SetVector<Operation *>
  flood(Operation *seed, const RowSpace &space,
        const llvm::SetVector<Operation *> *candidates) {
    llvm::SetVector<Operation *> members;
    std::deque<Operation *> work{seed};
    members.insert(seed);
    auto consider = [&](Operation *op) {
      if (!op || members.contains(op) || !index.count(op) ||
          groupOf.count(op) || claimed.contains(op))
        return;
      if (candidates ? !candidates->contains(op) : !admissible(op, space))
        return;
      members.insert(op);
      work.push_back(op);
    };
    while (!work.empty()) {
      Operation *op = work.front();
      work.pop_front();
      // Producers, and the other readers of what it reads (an input loaded
      // once for all of them).
      for (Value v : op->getOperands()) {
        consider(v.getDefiningOp());
        for (Operation *sibling : v.getUsers())
          consider(sibling);
      }
      if (roleOf(op, space) == Role::sumRows)
        continue; // complete only after the last tile: read outside only
      for (Operation *user : op->getUsers())
        consider(user);
    }
    // An alias whose source is not a member (cut away) is an outside view:
    // drop it and what is no longer reachable without it.
    for (Operation *m : members)
      if (roleOf(m, space) == Role::alias) {
        Operation *def = m->getOperand(0).getDefiningOp();
        if (!def || !members.contains(def)) {
          llvm::SetVector<Operation *> rest(members);
          rest.remove(m);
          return flood(seed, space, &rest);
        }
      }
    return members;
  }

  bool admissible(Operation *op, const RowSpace &space) {
    Role role = roleOf(op, space);
    if (role == Role::none)
      return false;
    // A reshape of the rows joins only to feed an op computing on them
    // (a logits gradient plus a tangent), and an op on reshaped rows only
    // when it reads such a reshape: a view read by a matmul, or a matmul's
    // own bias add on [B*T, C], would only move the group's point (and
    // their lowering) later.
    auto readsReshapedRows = [&](Operation *u) {
      return llvm::any_of(u->getOperands(), [&](Value v) {
        auto r = v.getDefiningOp<trn::ReshapeOp>();
        return r && space.isExactFull(r.getInput());
      });
    };
    Value res = op->getResult(0);
    if (role == Role::alias && isa<trn::ReshapeOp>(op) && space.isFull(res) &&
        llvm::none_of(res.getUsers(), [&](Operation *u) {
          return roleOf(u, space) == Role::elementwise && readsReshapedRows(u);
        }))
      return false;
    if (role == Role::elementwise && space.isFull(res) &&
        !space.isExactFull(res) && !readsReshapedRows(op))
      return false;
    for (Value v : op->getOperands()) {
      Operation *def = v.getDefiningOp();
      if (def && roleOf(def, space) == Role::sumRows)
        return false;
      // An alias reads a member (an alias of an outside value is simply an
      // outside view).
      if (role == Role::alias &&
          (!def || groupOf.count(def) || !admissible(def, space)))
        return false;
    }
    return true;
  }

  /// The ops that read `v` from outside the group: a view outside is seen
  /// through to the ops reading it, and a member reading a member through
  /// such a view counts too (its HBM view exists only after the group).
  void readers(Value v, const llvm::SetVector<Operation *> &members,
               SmallVectorImpl<Operation *> &out, bool viaView = false) {
    for (Operation *user : v.getUsers()) {
      if (members.contains(user) && !viaView)
        continue;
      if (isViewOp(user) && !members.contains(user))
        readers(user->getResult(0), members, out, /*viaView=*/true);
      else
        out.push_back(user);
    }
  }

  /// Whether `reader` (outside the group, after the seed) may move after
  /// `point`: an elementwise op (a cast; not a matmul, whose place in the
  /// program is where it overlaps others) in no group, everything reading
  /// it coming later.
  bool sinkable(Operation *reader, size_t point) {
    if (!index.count(reader) || groupOf.count(reader) ||
        claimed.contains(reader) || !isGroupableElementwise(reader))
      return false;
    return llvm::all_of(reader->getUsers(), [&](Operation *user) {
      return timeOf(user) > point;
    });
  }

  size_t timeOf(Operation *op) {
    auto it = index.find(op);
    if (it == index.end())
      return SIZE_MAX; // the terminator
    auto g = groupOf.find(op);
    return g == groupOf.end() ? it->second : index[groups[g->second].point()];
  }

  std::optional<RowGroup> form(Operation *seed, const RowSpace &space) {
    llvm::SetVector<Operation *> members = flood(seed, space, nullptr);
    while (true) {
      size_t point = 0;
      for (Operation *m : members)
        point = std::max(point, index[m]);
      size_t cut = SIZE_MAX;
      Operation *early = nullptr; // read outside before the seed
      sink.clear();
      for (Operation *m : members) {
        SmallVector<Operation *> outside;
        readers(m->getResult(0), members, outside);
        for (Operation *u : outside) {
          size_t t = timeOf(u);
          if (t > point)
            continue;
          // A member reading a member through an outside view (a row sum
          // reshaped to a column and compared with the rows) cannot move
          // after the group it belongs to: it is cut.
          if (t > index[seed] && !members.contains(u) && sinkable(u, point)) {
            sink.insert(u);
            continue;
          }
          cut = std::min(cut, t);
          if (t <= index[seed] && !early)
            early = m;
        }
      }
      if (cut == SIZE_MAX)
        break;
      llvm::SetVector<Operation *> kept;
      if (early) {
        // A member read outside before the seed (a residual sum read by a
        // matmul, pulled in as a sibling) cannot be moved to the group's
        // end: it and what it is computed from stay out, lowered at their
        // place.
        llvm::DenseSet<Operation *> upstream;
        SmallVector<Operation *> work{early};
        while (!work.empty()) {
          Operation *op = work.pop_back_val();
          if (!upstream.insert(op).second)
            continue;
          for (Value v : op->getOperands())
            if (Operation *def = v.getDefiningOp(); def && members.contains(def))
              work.push_back(def);
        }
        for (Operation *m : members)
          if (!upstream.contains(m))
            kept.insert(m);
      } else {
        for (Operation *m : members)
          if (index[m] < cut)
            kept.insert(m);
      }
      if (!kept.contains(seed))
        return std::nullopt;
      members = flood(seed, space, &kept);
    }
    int compute = 0;
    for (Operation *m : members)
      compute += roleOf(m, space) != Role::alias;
    if (compute < 2)
      return std::nullopt;
    RowGroup g;
    g.ops.assign(members.begin(), members.end());
    llvm::sort(g.ops, [&](Operation *a, Operation *b) {
      return index[a] < index[b];
    });
    g.fullShape = space.full;
    g.sink.assign(sink.begin(), sink.end());
    llvm::sort(g.sink, [&](Operation *a, Operation *b) {
      return index[a] < index[b];
    });
    return g;
  }

  llvm::SetVector<Operation *> sink; // form()'s late readers
  llvm::DenseSet<Operation *> claimed; // groups' late readers

  int64_t maxRow;
  llvm::DenseMap<Operation *, size_t> index;
  llvm::DenseMap<Operation *, size_t> groupOf;
  SmallVector<RowGroup> groups;
};
} // namespace

SmallVector<RowGroup> trnc::tile::formRowGroups(Block &body,
                                                const MachineModel &machine) {
  return RowGroupFormation(body, maxSoftmaxRow(machine)).run(body);
}

void trnc::tile::sinkLateReaders(ArrayRef<RowGroup> groups) {
  for (const RowGroup &g : groups) {
    Operation *last = g.point();
    for (Operation *op : g.sink) {
      op->moveAfter(last);
      last = op;
    }
  }
}
