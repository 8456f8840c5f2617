//===- RandomImporters.cpp - trnc.random_uniform -> trn.random -------------===//
//
// `trnc.random_uniform.default(size, dtype, seed)` (python/trnc/
// decomp_random.py) is the one random primitive: dropout, bernoulli, rand,
// randn and uniform decompose to it. Its seed is a graph input (graph
// export turns each `trnc.seed` node into one; docs/graph-json.md).
//
//===----------------------------------------------------------------------===//
#include "NodeContext.h"

#include "dialects/Trn/TrnOps.h"

using namespace mlir;

namespace trnc::import {
namespace {

FailureOr<Value> importRandomUniform(NodeContext &ctx) {
  FailureOr<SmallVector<int64_t>> size = ctx.intList(0, "size");
  FailureOr<Value> seed = ctx.tensor(2, "seed");
  if (failed(size) || failed(seed))
    return failure();
  auto seedType = cast<RankedTensorType>(seed->getType());
  if (seedType.getShape() != ArrayRef<int64_t>{2} ||
      !seedType.getElementType().isInteger(32))
    return ctx.invalid("the seed must be an int32 tensor of 2 words, got " +
                       formatShape(seedType.getShape()));
  if (*size != ctx.resultShape())
    return ctx.invalid("size " + formatShape(*size) +
                       " differs from the result's " +
                       formatShape(ctx.resultShape()));
  Type elt = ctx.resultElementType();
  if (!elt.isF32() && !elt.isBF16() && !elt.isF16())
    return ctx.unsupported("random numbers are generated in float32, "
                           "bfloat16 or float16 only");
  return ctx.create<trn::RandomOp>(ctx.resultType(), *seed);
}

} // namespace

void registerRandomImporters(OpRegistry &r) {
  r.add("trnc.random_uniform.default", importRandomUniform);
}

} // namespace trnc::import
