//===- TrnFusionOps.cpp - trn.fusion_group verifier and accessors ---------===//
//
// What a fusion group must hold for its kind to be lowerable as one tile
// loop: a known kind, a body of trn ops ended by a yield of the result
// types, a row space for a row group, one leading matmul for a matmul group.
//
//===----------------------------------------------------------------------===//
#include "dialects/Trn/TrnOps.h"

#include "llvm/ADT/StringSwitch.h"

using namespace mlir;
using namespace trnc::trn;

SmallVector<Operation *> FusionGroupOp::members() {
  SmallVector<Operation *> ops;
  for (Operation &op : getBody().front().without_terminator())
    ops.push_back(&op);
  return ops;
}

Value FusionGroupOp::yielded(OpResult result) {
  return getBody().front().getTerminator()->getOperand(
      result.getResultNumber());
}

LogicalResult FusionGroupOp::verify() {
  StringRef kind = getKind();
  if (!llvm::StringSwitch<bool>(kind)
           .Cases("elementwise", "rows", "matmul", true)
           .Default(false))
    return emitOpError("kind must be elementwise, rows or matmul, not '")
           << kind << "'";
  Block &body = getBody().front();
  auto yield = dyn_cast<YieldOp>(body.getTerminator());
  if (!yield)
    return emitOpError("body must end with trn.yield");
  if (yield.getValues().getTypes() != getResultTypes())
    return emitOpError("yields ")
           << yield.getValues().size()
           << " values whose types must be the group's result types";
  if (body.without_terminator().empty())
    return emitOpError("body must hold at least one op");
  for (Operation &op : body.without_terminator())
    if (!isa<TrnDialect>(op.getDialect()) || isa<FusionGroupOp>(op))
      return op.emitOpError("cannot be a member of a fusion group (only trn "
                            "ops, not nested groups)");
  if (kind == "rows" && (!getRowSpace() || getRowSpace()->empty()))
    return emitOpError("of kind rows needs its [K..., N] row_space");
  if (kind == "matmul") {
    if (!isa<MatmulOp>(body.front()))
      return emitOpError("of kind matmul must start with its trn.matmul");
    if (llvm::range_size(body.getOps<MatmulOp>()) != 1)
      return emitOpError("of kind matmul must hold exactly one trn.matmul");
  }
  return success();
}
