//===- LayoutImporters.cpp - views, permutations, expand, identities ------===//
//
// ATen view ops -> trn.reshape / trn.transpose / trn.broadcast; copies and
// aliases (clone, detach, alias, contiguous) map to the operand's value,
// since trn has value semantics and outputs are written with their declared
// strides anyway.
//
//===----------------------------------------------------------------------===//
#include "NodeContext.h"

#include "dialects/Trn/TrnOps.h"

#include "llvm/ADT/STLExtras.h"

using namespace mlir;

namespace trnc::import {
namespace {

/// view / _unsafe_view / reshape: `size` may hold one -1.
FailureOr<Value> importView(NodeContext &ctx) {
  FailureOr<Value> x = ctx.tensor(0, "self");
  FailureOr<SmallVector<int64_t>> size = ctx.intList(1, "size");
  if (failed(x) || failed(size))
    return failure();
  int64_t numel = typeOf(*x).getNumElements(), known = 1;
  int64_t *inferred = nullptr;
  for (int64_t &d : *size) {
    if (d == -1 && !inferred)
      inferred = &d;
    else if (d < 0)
      return ctx.invalid("invalid size " + formatShape(*size));
    else
      known *= d;
  }
  if (inferred) {
    if (known == 0 || numel % known != 0)
      return ctx.invalid("cannot infer -1 in " + formatShape(*size) +
                         " for " + std::to_string(numel) + " elements");
    *inferred = numel / known;
  } else if (known != numel) {
    return ctx.invalid("shape " + formatShape(*size) + " does not hold " +
                       std::to_string(numel) + " elements");
  }
  return ctx.reshape(*x, *size);
}

/// squeeze.default (every size-1 dim), squeeze.dim, squeeze.dims: dims
/// that are not of size 1 stay, as in ATen.
FailureOr<Value> importSqueeze(NodeContext &ctx) {
  FailureOr<Value> x = ctx.tensor(0, "self");
  if (failed(x))
    return failure();
  ArrayRef<int64_t> shape = typeOf(*x).getShape();
  int64_t rank = shape.size();
  SmallVector<bool> drop(rank, false);
  if (!ctx.arg(1, "dim")) {
    for (int64_t i = 0; i < rank; ++i)
      drop[i] = shape[i] == 1;
  } else {
    FailureOr<SmallVector<int64_t>> dims = ctx.intList(1, "dim");
    if (failed(dims))
      return failure();
    for (int64_t d : *dims) {
      FailureOr<int64_t> nd = ctx.normalizeDim(d, rank);
      if (failed(nd))
        return failure();
      if (rank > 0)
        drop[*nd] = shape[*nd] == 1;
    }
  }
  SmallVector<int64_t> result;
  for (int64_t i = 0; i < rank; ++i)
    if (!drop[i])
      result.push_back(shape[i]);
  return ctx.reshape(*x, result);
}

FailureOr<Value> importUnsqueeze(NodeContext &ctx) {
  FailureOr<Value> x = ctx.tensor(0, "self");
  FailureOr<int64_t> dim = ctx.integer(1, "dim");
  if (failed(x) || failed(dim))
    return failure();
  SmallVector<int64_t> shape(typeOf(*x).getShape());
  FailureOr<int64_t> d = ctx.normalizeDim(*dim, shape.size() + 1);
  if (failed(d))
    return failure();
  shape.insert(shape.begin() + *d, 1);
  return ctx.reshape(*x, shape);
}

/// t: transposes a 2-D tensor; 0-D and 1-D tensors are returned as is.
FailureOr<Value> importT(NodeContext &ctx) {
  FailureOr<Value> x = ctx.tensor(0, "self");
  if (failed(x))
    return failure();
  int64_t rank = typeOf(*x).getRank();
  if (rank > 2)
    return ctx.invalid("t() expects a tensor of at most 2 dims, got rank " +
                       std::to_string(rank));
  if (rank < 2)
    return *x;
  return ctx.transpose(*x, {1, 0});
}

FailureOr<Value> importTranspose(NodeContext &ctx) {
  FailureOr<Value> x = ctx.tensor(0, "self");
  FailureOr<int64_t> d0 = ctx.integer(1, "dim0"), d1 = ctx.integer(2, "dim1");
  if (failed(x) || failed(d0) || failed(d1))
    return failure();
  int64_t rank = typeOf(*x).getRank();
  FailureOr<int64_t> a = ctx.normalizeDim(*d0, rank);
  FailureOr<int64_t> b = ctx.normalizeDim(*d1, rank);
  if (failed(a) || failed(b))
    return failure();
  if (rank == 0)
    return *x;
  SmallVector<int64_t> perm = llvm::to_vector(llvm::seq<int64_t>(0, rank));
  std::swap(perm[*a], perm[*b]);
  return ctx.transpose(*x, perm);
}

FailureOr<Value> importPermute(NodeContext &ctx) {
  FailureOr<Value> x = ctx.tensor(0, "self");
  FailureOr<SmallVector<int64_t>> dims = ctx.intList(1, "dims");
  if (failed(x) || failed(dims))
    return failure();
  int64_t rank = typeOf(*x).getRank();
  if (static_cast<int64_t>(dims->size()) != rank)
    return ctx.invalid("permutation " + formatShape(*dims) +
                       " does not match rank " + std::to_string(rank));
  SmallVector<bool> seen(rank, false);
  for (int64_t &d : *dims) {
    FailureOr<int64_t> nd = ctx.normalizeDim(d, rank);
    if (failed(nd))
      return failure();
    if (seen[*nd])
      return ctx.invalid("dimension " + std::to_string(*nd) +
                         " repeats in the permutation");
    seen[*nd] = true;
    d = *nd;
  }
  return ctx.transpose(*x, *dims);
}

/// expand: -1 keeps a dimension; new leading dimensions may be added.
FailureOr<Value> importExpand(NodeContext &ctx) {
  FailureOr<Value> x = ctx.tensor(0, "self");
  FailureOr<SmallVector<int64_t>> size = ctx.intList(1, "size");
  if (failed(x) || failed(size))
    return failure();
  ArrayRef<int64_t> in = typeOf(*x).getShape();
  if (size->size() < in.size())
    return ctx.invalid("cannot expand " + formatShape(in) + " to fewer dims " +
                       formatShape(*size));
  size_t lead = size->size() - in.size();
  for (size_t i = 0; i < size->size(); ++i) {
    int64_t &d = (*size)[i];
    if (i < lead) {
      if (d < 0)
        return ctx.invalid("-1 is not allowed for the new leading dim " +
                           std::to_string(i) + " of " + formatShape(*size));
      continue;
    }
    int64_t src = in[i - lead];
    if (d == -1)
      d = src;
    else if (d != src && src != 1)
      return ctx.invalid("cannot expand " + formatShape(in) + " to " +
                         formatShape(*size));
  }
  return ctx.broadcast(*x, *size);
}

FailureOr<Value> importIdentity(NodeContext &ctx) {
  return ctx.tensor(0, "self");
}

} // namespace

// DataMovementImporters.cpp: slice, select, flip, cat.
void registerDataMovementImporters(OpRegistry &r);
void registerIndexingImporters(OpRegistry &r); // IndexingImporters.cpp
void registerKernelImporters(OpRegistry &r);   // KernelImporters.cpp

void registerLayoutImporters(OpRegistry &r) {
  registerDataMovementImporters(r);
  registerIndexingImporters(r);
  registerKernelImporters(r);
  for (const char *target :
       {"aten.view.default", "aten._unsafe_view.default", "aten.reshape.default"})
    r.add(target, importView);
  for (const char *target :
       {"aten.squeeze.default", "aten.squeeze.dim", "aten.squeeze.dims"})
    r.add(target, importSqueeze);
  r.add("aten.unsqueeze.default", importUnsqueeze);
  r.add("aten.t.default", importT);
  r.add("aten.transpose.int", importTranspose);
  r.add("aten.permute.default", importPermute);
  r.add("aten.expand.default", importExpand);
  for (const char *target :
       {"aten.clone.default", "aten.detach.default", "aten.alias.default",
        "aten.contiguous.default", "aten.lift_fresh_copy.default"})
    r.add(target, importIdentity);
}

} // namespace trnc::import
