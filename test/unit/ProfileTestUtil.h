//===- ProfileTestUtil.h - Hand-made programs and profiles for tests -*- C++ -*-===//
//
// A small program (DMA in, matmul, activation, DMA out, with source
// locations and its allocation table) and a Profile filled by hand the way the timed simulator fills
// it, so the trace writer and the summary are tested without the timed model.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "TestUtil.h"

#include "sim/Profile.h"

#include <cmath>

namespace trnc::test {

/// Relative closeness (Approx differs between Catch2 v2 and v3).
inline bool near(double a, double b) { return std::fabs(a - b) <= 1e-9 * std::max(1.0, std::fabs(b)); }

inline Program profiledProgram() {
  Builder b;
  b.p.name = "forward_0";
  b.p.sources.push_back({"aten.mm.default", "mm", "model.py", 12});
  b.p.sources.push_back({"aten.relu.default", "relu", "model.py", 13});
  uint32_t in = b.input(DType::BF16, 128 * 128 * 2);
  uint32_t out = b.output(DType::F32, 128 * 128 * 4);
  b.dma(sbuf(DType::BF16, 0, 128, 0, {128}), hbm(in, DType::BF16, 0, 128, 128, {128}));
  Instruction mm = make(Opcode::Matmul, Engine::Tensor);
  mm.dst = psum(DType::F32, 0, 128, 0, {128});
  mm.src0 = sbuf(DType::BF16, 0, 128, 0, {128});
  mm.src1 = sbuf(DType::BF16, 0, 128, 0, {128});
  mm.sourceIndex = 0;
  b.add(mm);
  Instruction act = make(Opcode::Activation, Engine::Scalar);
  act.op0 = uint8_t(ActFunc::Relu);
  act.dst = sbuf(DType::F32, 0, 128, 1024, {128});
  act.src0 = psum(DType::F32, 0, 128, 0, {128});
  act.sourceIndex = 1;
  b.add(act);
  b.dma(hbm(out, DType::F32, 0, 128, 128, {128}), sbuf(DType::F32, 0, 128, 1024, {128}));
  b.p.streams[size_t(Engine::Dma)][1].dmaQueue = 3;
  // Program order: dma 0, matmul, activation, dma 1. The loaded bf16 tile,
  // the PSUM accumulator and the f32 result, as the allocator places them.
  using S = Allocation::Space;
  b.p.allocations = {{S::Sbuf, 128, 0, 256, 0, 1, {Engine::Dma, 0}, {Engine::Tensor, 0}},
                     {S::Psum, 128, 0, 512, 1, 2, {Engine::Tensor, 0}, {Engine::Scalar, 0}},
                     {S::Sbuf, 128, 1024, 512, 2, 3, {Engine::Scalar, 0}, {Engine::Dma, 1}}};
  return b.p;
}

inline InstructionRecord record(Engine e, uint32_t index, Opcode op, double start, double end,
                                uint32_t source = kNoSource, uint16_t queue = 0) {
  InstructionRecord r;
  r.engine = e;
  r.index = index;
  r.opcode = op;
  r.sourceIndex = source;
  r.issueNs = start;
  r.startNs = start;
  r.endNs = end;
  r.dmaQueue = queue;
  return r;
}

/// A profile of profiledProgram(): 4 us total, engines mostly idle.
inline Profile handMadeProfile() {
  Profile p;
  p.target = "trn2";
  p.totalNs = 4000;
  p.trace.push_back(record(Engine::Dma, 0, Opcode::DmaCopy, 0, 1500, kNoSource, 0));
  p.trace.push_back(record(Engine::Tensor, 0, Opcode::Matmul, 1500, 1600, 0));
  p.trace.push_back(record(Engine::Scalar, 0, Opcode::Activation, 1600, 1700, 1));
  p.trace.push_back(record(Engine::Dma, 1, Opcode::DmaCopy, 1700, 4000, kNoSource, 3));
  p.trace[0].bytes = 32768;
  p.trace[3].bytes = 65536;
  p.trace[1].flops = 2.0 * 128 * 128 * 128;
  p.trace[2].issueNs = 1550; // waited 50 ns on the matmul's semaphore
  p.engines[size_t(Engine::Tensor)] = {1, 100, 0, 100.0 / 4000};
  p.engines[size_t(Engine::Scalar)] = {1, 100, 50, 100.0 / 4000};
  p.engines[size_t(Engine::Dma)] = {2, 3800, 0, 3800.0 / 4000};
  p.tensorFlops = p.usefulMatmulFlops = 2.0 * 128 * 128 * 128;
  p.peakFlopsPerSecond = 128.0 * 128 * 2 * 2.4e9;
  MatmulDTypeProfile &bf16 = p.matmulByDType[size_t(DType::BF16)];
  bf16 = {1, p.tensorFlops, p.tensorFlops, p.peakFlopsPerSecond};
  p.matmulByDType[size_t(DType::F32)].peakFlopsPerSecond = p.peakFlopsPerSecond / 4;
  p.tensorAtPeakNs = p.usefulAtPeakNs = p.tensorFlops / p.peakFlopsPerSecond * 1e9;
  p.hfu = p.mfu = p.tensorAtPeakNs / p.totalNs;
  p.dmaBytes = p.hbmBytes = 32768 + 65536;
  p.peakHbmBytesPerSecond = 2.9e12 / 8;
  p.mbu = p.hbmBytes / (p.totalNs * 1e-9 * p.peakHbmBytesPerSecond);
  p.semaphoreWaitNs = 50;
  p.dmaSizeHistogram[15] = 1;
  p.dmaSizeHistogram[16] = 1;
  return p;
}

} // namespace trnc::test
