//===- IotaSemantics.cpp - iota and affine_select on the GpSimd engine ----===//
//
// Both instructions evaluate an affine function of the destination's
// partition index p (relative to its first partition) and row-major free
// index f (Isa.h): iota writes imm0 + imm1 * (partitionCoef * p + freeCoef * f);
// affine_select keeps src0 where imm1 + partitionCoef * p + freeCoef * f
// compares true with 0 (op0) and writes imm0 elsewhere. The integer part is
// exact in int64; the value goes through fp32 like every engine result.
//
//===----------------------------------------------------------------------===//
#include "sim/Exec.h"

#include <algorithm>

namespace trnc::sim {
namespace {

bool compareWithZero(isa::AluOp op, double v) {
  switch (op) {
  case isa::AluOp::IsEqual: return v == 0;
  case isa::AluOp::NotEqual: return v != 0;
  case isa::AluOp::IsGt: return v > 0;
  case isa::AluOp::IsGe: return v >= 0;
  case isa::AluOp::IsLt: return v < 0;
  case isa::AluOp::IsLe: return v <= 0;
  default: return false; // the verifier admits comparisons only
  }
}

/// Calls fn(p, f0, n) for each chunk of at most kChunk elements of partition
/// p starting at free index f0, in the row-major order the Walkers use.
template <typename Fn>
void forEachChunk(const View &d, Fn fn) {
  uint64_t free = d.freeElements();
  for (uint64_t p = 0; p < d.partitions(); ++p)
    for (uint64_t f = 0; f < free; f += kChunk)
      fn(p, f, size_t(std::min<uint64_t>(kChunk, free - f)));
}

} // namespace

void execIota(ExecContext &ctx, const isa::Instruction &inst) {
  View d = ctx.view(inst.dst);
  Walker wd(d, 0);
  float *x = ctx.buf0.data();
  forEachChunk(d, [&](uint64_t p, uint64_t f0, size_t n) {
    for (size_t i = 0; i < n; ++i) {
      int64_t a = int64_t(inst.partitionCoef) * int64_t(p) +
                  int64_t(inst.freeCoef) * int64_t(f0 + i);
      x[i] = inst.imm0 + inst.imm1 * float(a);
    }
    wd.store(x, n);
  });
}

void execAffineSelect(ExecContext &ctx, const isa::Instruction &inst) {
  View d = ctx.view(inst.dst), s = ctx.view(inst.src0);
  Walker wd(d, 0), ws(s, 0);
  float *x = ctx.buf0.data();
  isa::AluOp op = isa::AluOp(inst.op0);
  forEachChunk(d, [&](uint64_t p, uint64_t f0, size_t n) {
    ws.load(x, n);
    for (size_t i = 0; i < n; ++i) {
      double a = double(inst.imm1) +
                 double(int64_t(inst.partitionCoef) * int64_t(p) +
                        int64_t(inst.freeCoef) * int64_t(f0 + i));
      if (!compareWithZero(op, a))
        x[i] = inst.imm0;
    }
    wd.store(x, n);
  });
}

} // namespace trnc::sim
