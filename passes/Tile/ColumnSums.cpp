//===- ColumnSums.cpp - sums over rows on the Tensor Engine ---------------===//
//
// See ColumnSums.h.
//
//===----------------------------------------------------------------------===//
#include "passes/Tile/ColumnSums.h"

using namespace mlir;
using namespace trnc;
using namespace trnc::tile;

ColumnSumShape trnc::tile::columnSumShape(const LoweringContext &ctx,
                                          int64_t width) {
  int64_t p = ctx.partitions();
  return {std::min(p, width), (width + p - 1) / p};
}

bool trnc::tile::columnSumsPay(int64_t rowTiles, Type elementType) {
  return rowTiles * (elementType.isF32() ? 4 : 1) >= 8;
}

void trnc::tile::addColumnSums(LoweringContext &ctx, Location loc, Value acc,
                               Value x, int64_t xFree, int64_t c0,
                               int64_t rows, int64_t width, Value ones,
                               bool accumulate) {
  auto accType = cast<nisa::TileType>(acc.getType());
  int64_t p = ctx.partitions(), blocks = accType.getFreeSize();
  for (int64_t b = 0; b * p < width; ++b) {
    int64_t cm = std::min(p, width - b * p);
    ctx.matmul(loc, acc, ctx.ap(b, {blocks, 1}, {cm, 1}), x,
               ctx.ap(c0 + b * p, {xFree, 1}, {rows, cm}), ones,
               ctx.tileAp(ones, rows, 1), accumulate);
  }
}

void trnc::tile::storeColumnSums(LoweringContext &ctx, Location loc, Value acc,
                                 int64_t width, Value dst, int64_t offset,
                                 int64_t stride, Type dstType) {
  ColumnSumShape shape = columnSumShape(ctx, width);
  Value out = ctx.allocSbuf(loc, shape.partitions, shape.blocks, dstType);
  ctx.copyOnScalar(loc, out, ctx.tileAp(out), acc, ctx.tileAp(acc));
  int64_t p = shape.partitions, full = width / p, rest = width % p;
  if (full)
    ctx.dma(loc, dst, ctx.ap(offset, {stride, p * stride}, {p, full}), out,
            ctx.ap(0, {shape.blocks, 1}, {p, full}));
  if (rest)
    ctx.dma(loc, dst, ctx.ap(offset + full * p * stride, {stride, 1}, {rest, 1}),
            out, ctx.ap(full, {shape.blocks, 1}, {rest, 1}));
}
