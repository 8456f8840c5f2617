//===- TrnCollectiveOps.cpp - trn.collective verifier --------------------===//
//
// The rules a collective's group and shapes must follow: a known kind and
// reduction, distinct ranks inside the world, and result shapes as torch's
// functional collectives give them (dim 0 scaled by the group size for
// all_gather, divided for reduce_scatter, unchanged otherwise).
//
//===----------------------------------------------------------------------===//
#include "dialects/Trn/TrnOps.h"

#include "llvm/ADT/SmallSet.h"
#include "llvm/ADT/StringSwitch.h"

using namespace mlir;
using namespace trnc::trn;

LogicalResult CollectiveOp::verify() {
  StringRef kind = getKind(), reduce = getReduceOp();
  bool known = llvm::StringSwitch<bool>(kind)
                   .Cases("all_reduce", "all_gather", "reduce_scatter",
                          "all_to_all", "broadcast", true)
                   .Default(false);
  if (!known)
    return emitOpError("unknown collective kind '") << kind << "'";
  bool reduces = kind == "all_reduce" || kind == "reduce_scatter";
  bool knownReduce = llvm::StringSwitch<bool>(reduce)
                         .Cases("sum", "avg", "product", "min", "max", true)
                         .Default(false);
  if (reduces && !knownReduce)
    return emitOpError(kind) << " needs a reduce_op of sum, avg, product, "
                                "min or max, got '"
                             << reduce << "'";
  if (!reduces && !reduce.empty())
    return emitOpError(kind) << " takes no reduce_op";
  ArrayRef<int64_t> ranks = getRanks();
  int64_t world = getWorldSize();
  if (ranks.empty() || world < 1)
    return emitOpError("needs a non-empty group inside a world of >= 1 ranks");
  llvm::SmallSet<int64_t, 8> seen;
  for (int64_t r : ranks)
    if (r < 0 || r >= world || !seen.insert(r).second)
      return emitOpError("rank ") << r << " of the group is outside the world "
                                  << "of " << world << " or repeated";
  int64_t n = ranks.size();
  if (getRoot() < 0 || getRoot() >= world)
    return emitOpError("root ") << getRoot() << " is outside the world of "
                                << world;
  if (getId() < 0)
    return emitOpError("id must be >= 0");
  auto in = cast<RankedTensorType>(getInput().getType());
  auto out = cast<RankedTensorType>(getResult().getType());
  if (in.getElementType() != out.getElementType())
    return emitOpError("result element type differs from the input's");
  SmallVector<int64_t> want(in.getShape());
  if (kind == "all_gather" || kind == "reduce_scatter") {
    if (want.empty())
      return emitOpError(kind) << " needs a tensor of rank >= 1";
    if (kind == "reduce_scatter" && want[0] % n)
      return emitOpError("reduce_scatter: dim 0 (")
             << want[0] << ") does not divide by the group size " << n;
    want[0] = kind == "all_gather" ? want[0] * n : want[0] / n;
  }
  if (kind == "all_to_all" && !want.empty() && want[0] % n)
    return emitOpError("all_to_all: dim 0 (")
           << want[0] << ") does not split evenly over " << n << " ranks";
  if (out.getShape() != ArrayRef<int64_t>(want))
    return emitOpError("result shape does not match what ")
           << kind << " over " << n << " ranks gives";
  return success();
}
