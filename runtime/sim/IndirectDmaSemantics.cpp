//===- IndirectDmaSemantics.cpp - dma_indirect: gather/scatter of rows ----===//
//
// Isa.h, DmaIndirect. The index tile (src1, SBUF i32 [P, 1]) is read when the
// instruction executes, one index per partition. The HBM side is a table of
// N rows (its partition dim); row r of it is walked like one partition.
// Gather: SBUF partition p <- row index[p] (zeros when out of [0, N)).
// Scatter: row index[p] <- partition p, p = 0..P-1 in order (so the last
// writer wins and duplicates accumulate), out-of-range partitions dropped;
// with kFlagAccumulate the row becomes cast(fp32(row) + fp32(src)).
// Casts follow dma_copy: same dtype copies bytes, integer to integer is
// exact, anything else goes through fp32.
//
//===----------------------------------------------------------------------===//

#include "sim/DTypes.h"
#include "sim/Exec.h"

#include <algorithm>
#include <cstring>

namespace trnc::sim {
namespace {

/// Copy `n` elements from `s` to `d` (both positioned on one row).
void copyRow(ExecContext &ctx, Walker &d, isa::DType dt, Walker &s,
             isa::DType st, uint64_t n) {
  if (dt == st) {
    const unsigned eb = isa::dtypeBytes(dt);
    while (n) {
      uint64_t k = std::min({n, d.runLeft(), s.runLeft()});
      for (uint64_t i = 0; i < k; ++i)
        std::memmove(d.ptr() + int64_t(i) * d.runStride(),
                     s.ptr() + int64_t(i) * s.runStride(), eb);
      d.advance(k);
      s.advance(k);
      n -= k;
    }
    return;
  }
  if (isa::isIntegerDType(dt) && isa::isIntegerDType(st)) {
    for (; n; --n) {
      storeInteger(d.ptr(), dt, loadInteger(s.ptr(), st));
      d.advance(1);
      s.advance(1);
    }
    return;
  }
  float *buf = ctx.buf0.data();
  while (n) {
    size_t k = size_t(std::min<uint64_t>(n, kChunk));
    s.load(buf, k);
    d.store(buf, k);
    n -= k;
  }
}

/// row (d, read through `dr`, written through `dw`) += s, in fp32.
void accumulateRow(ExecContext &ctx, Walker &dr, Walker &dw, Walker &s,
                   uint64_t n) {
  float *acc = ctx.buf0.data(), *add = ctx.buf1.data();
  while (n) {
    size_t k = size_t(std::min<uint64_t>(n, kChunk));
    dr.load(acc, k);
    s.load(add, k);
    for (size_t i = 0; i < k; ++i)
      acc[i] += add[i];
    dw.store(acc, k);
    n -= k;
  }
}

void zeroRow(ExecContext &ctx, Walker &d, uint64_t n) {
  float *zeros = ctx.buf0.data();
  std::fill(zeros, zeros + std::min<uint64_t>(n, kChunk), 0.0f);
  while (n) {
    size_t k = size_t(std::min<uint64_t>(n, kChunk));
    d.store(zeros, k);
    n -= k;
  }
}

} // namespace

void execDmaIndirect(ExecContext &ctx, const isa::Instruction &inst) {
  const bool scatter = inst.flags & isa::kFlagScatter;
  const bool accumulate = inst.flags & isa::kFlagAccumulate;
  View dst = ctx.view(inst.dst), src = ctx.view(inst.src0);
  View index = ctx.view(inst.src1);
  const View &table = scatter ? dst : src; // the HBM side: N rows
  const int64_t rows = int64_t(table.partitions());
  const uint64_t rowElements = table.freeElements();
  for (uint64_t p = 0; p < index.partitions(); ++p) {
    const uint8_t *ip = index.base + int64_t(p) * index.strideBytes[0];
    int64_t row = loadInteger(ip, index.dtype);
    bool inRange = row >= 0 && row < rows;
    uint64_t dPart = scatter ? uint64_t(row) : p;
    uint64_t sPart = scatter ? p : uint64_t(row);
    if (!inRange) {
      if (!scatter) { // gather: a zero row
        Walker d(dst, 1);
        d.setPartition(p);
        zeroRow(ctx, d, rowElements);
      }
      continue; // scatter: dropped
    }
    Walker d(dst, 1), s(src, 1);
    d.setPartition(dPart);
    s.setPartition(sPart);
    if (scatter && accumulate) {
      Walker dr(dst, 1);
      dr.setPartition(dPart);
      accumulateRow(ctx, dr, d, s, rowElements);
    } else {
      copyRow(ctx, d, dst.dtype, s, src.dtype, rowElements);
    }
  }
}

} // namespace trnc::sim
