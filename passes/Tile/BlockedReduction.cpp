//===- BlockedReduction.cpp - accurate per-partition folds on Vector ------===//
//
// See BlockedReduction.h.
//
//===----------------------------------------------------------------------===//
#include "passes/Tile/BlockedReduction.h"

#include <algorithm>
#include <limits>

using namespace mlir;
using namespace trnc;
using namespace trnc::tile;

int64_t trnc::tile::reductionBlockSize(nisa::AluOp alu) {
  // 32 keeps a 2048-wide chunk at 32 + 64 sequential roundings (two levels)
  // instead of 2048.
  constexpr int64_t kBlock = 32;
  return alu == nisa::AluOp::add ? kBlock
                                 : std::numeric_limits<int64_t>::max();
}

void BlockedReduction::add(Value t, int64_t f) {
  int64_t groups = f / block, tail = f % block;
  int64_t need = reductionBlockCount(f, block);
  if (partials && used + need > capacity)
    flush();
  if (!partials) {
    capacity = std::max(need, std::min(maxPartials, remaining));
    partials = ctx.allocSbuf(loc, parts, capacity, ctx.b.getF32Type());
    used = 0;
  }
  remaining -= need;
  int64_t tFree = cast<nisa::TileType>(t.getType()).getFreeSize();
  if (groups)
    ctx.tensorReduce(loc, alu, partials, column(used, groups), t,
                     ctx.ap(0, {tFree, block, 1}, {parts, groups, block}));
  if (tail)
    ctx.tensorReduce(loc, alu, partials, column(used + groups, 1), t,
                     ctx.ap(groups * block, {tFree, 1}, {parts, tail}));
  used += need;
}

Value BlockedReduction::finish() {
  flush();
  return acc;
}

nisa::AccessPatternAttr BlockedReduction::column(int64_t first, int64_t n) {
  return ctx.ap(first, {capacity, 1}, {parts, n});
}

void BlockedReduction::flush() {
  if (!partials)
    return;
  Value level = partials;
  int64_t n = used, stride = capacity;
  while (n > 1) {
    int64_t groups = n / block, tail = n % block;
    int64_t next = groups + (tail ? 1 : 0);
    Value out = ctx.allocSbuf(loc, parts, next, ctx.b.getF32Type());
    if (groups)
      ctx.tensorReduce(loc, alu, out, ctx.ap(0, {next, 1}, {parts, groups}),
                       level,
                       ctx.ap(0, {stride, block, 1}, {parts, groups, block}));
    if (tail)
      ctx.tensorReduce(loc, alu, out, ctx.ap(groups, {next, 1}, {parts, 1}),
                       level, ctx.ap(groups * block, {stride, 1}, {parts, tail}));
    level = out;
    n = next;
    stride = next;
  }
  if (!acc) {
    acc = level;
  } else {
    Value sum = ctx.allocSbuf(loc, parts, 1, ctx.b.getF32Type());
    ctx.tensorTensor(loc, alu, sum, ctx.tileAp(sum), acc, ctx.tileAp(acc),
                     level, ctx.ap(0, {stride, 1}, {parts, 1}));
    acc = sum;
  }
  partials = Value();
  used = 0;
}
