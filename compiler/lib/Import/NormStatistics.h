//===- NormStatistics.h - mean and variance for the norm importers -*- C++ -*-===//
//
// The statistics batch norm and layer norm compute, as trn ops: the mean and
// the biased variance by the corrected two-pass algorithm of
// python/trnc/decomp_reductions.py's var_mean, so an imported norm builds
// the same ops, in the same order, as the decomposition it replaces.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "NodeContext.h"

#include "dialects/Trn/TrnOps.h"

#include <utility>

namespace trnc::import {

/// {mean, biased variance} of fp32 `x` over groups of `count` elements:
/// `reduce(v)` sums v over a group (the statistic's shape), `spread(s)`
/// broadcasts a statistic back to x's shape.
template <typename Reduce, typename Spread>
std::pair<mlir::Value, mlir::Value> twoPassMeanVar(NodeContext &ctx,
                                                   mlir::Value x, int64_t count,
                                                   Reduce reduce, Spread spread) {
  double inv = 1.0 / double(count);
  mlir::Value m = ctx.mulScalar(reduce(x), inv);
  mlir::Value centred = ctx.binary<trn::SubOp>(x, spread(m));
  mlir::Value cs = reduce(centred);
  mlir::Value mean = ctx.binary<trn::AddOp>(m, ctx.mulScalar(cs, inv));
  mlir::Value ss = reduce(ctx.binary<trn::MulOp>(centred, centred));
  ss = ctx.binary<trn::SubOp>(
      ss, ctx.mulScalar(ctx.binary<trn::MulOp>(cs, cs), inv));
  return {mean, ctx.mulScalar(ss, inv)};
}

} // namespace trnc::import
