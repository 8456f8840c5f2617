//===- TestUtil.h - Shared helpers of the runtime unit tests ------*- C++ -*-===//
//
// The Catch2 include shim (v3 on Debian 13, v2 on Debian 12), builders for
// access patterns and small programs, and helpers to run a program on the
// simulator and to read llvm::Error text.
//
//===----------------------------------------------------------------------===//
#pragma once

#if __has_include(<catch2/catch_all.hpp>)
#include <catch2/catch_all.hpp>
#else
#include <catch2/catch.hpp>
#endif

#include "artifact/Artifact.h"
#include "machine/MachineModel.h"
#include "sim/DTypes.h"
#include "sim/Simulator.h"

#include <algorithm>
#include <cstring>
#include <initializer_list>
#include <string>
#include <vector>

namespace trnc::test {

using namespace isa;

/// Row-major contiguous strides for `counts` when `strides` is empty.
inline void setDims(AccessPattern &ap, std::initializer_list<uint32_t> counts,
                    std::initializer_list<int64_t> strides) {
  ap.numDims = uint8_t(counts.size());
  unsigned i = 0;
  for (uint32_t c : counts)
    ap.count[i++] = c;
  if (strides.size()) {
    i = 0;
    for (int64_t s : strides)
      ap.stride[i++] = s;
    return;
  }
  int64_t s = 1;
  for (int d = int(counts.size()) - 1; d >= 0; --d) {
    ap.stride[d] = s;
    s *= ap.count[d];
  }
}

inline AccessPattern onChip(MemKind mem, DType dt, uint16_t pStart,
                            uint16_t pCount, uint64_t offset,
                            std::initializer_list<uint32_t> counts,
                            std::initializer_list<int64_t> strides = {}) {
  AccessPattern ap;
  ap.mem = mem;
  ap.dtype = dt;
  ap.partitionStart = pStart;
  ap.partitionCount = pCount;
  ap.offset = offset;
  setDims(ap, counts, strides);
  return ap;
}

inline AccessPattern sbuf(DType dt, uint16_t pStart, uint16_t pCount,
                          uint64_t offset, std::initializer_list<uint32_t> counts,
                          std::initializer_list<int64_t> strides = {}) {
  return onChip(MemKind::SBUF, dt, pStart, pCount, offset, counts, strides);
}

inline AccessPattern psum(DType dt, uint16_t pStart, uint16_t pCount,
                          uint64_t offset, std::initializer_list<uint32_t> counts,
                          std::initializer_list<int64_t> strides = {}) {
  return onChip(MemKind::PSUM, dt, pStart, pCount, offset, counts, strides);
}

/// `rows` rows `rowStride` elements apart in HBM region `region`.
inline AccessPattern hbm(uint32_t region, DType dt, uint64_t offset,
                         uint16_t rows, int64_t rowStride,
                         std::initializer_list<uint32_t> counts,
                         std::initializer_list<int64_t> strides = {}) {
  AccessPattern ap;
  ap.mem = MemKind::HBM;
  ap.dtype = dt;
  ap.region = region;
  ap.offset = offset;
  ap.partitionCount = rows;
  ap.partitionStride = rowStride;
  setDims(ap, counts, strides);
  return ap;
}

inline Instruction make(Opcode op, Engine e) {
  Instruction i;
  i.opcode = op;
  i.engine = e;
  return i;
}

/// Builds a Program whose instructions run strictly in the order added:
/// instruction n waits for semaphore 31 >= n and signals it.
struct Builder {
  Program p;
  uint32_t steps = 0;
  static constexpr uint8_t kChainSem = 31;

  Builder() {
    p.target = "trn2";
    p.name = "test";
  }

  uint32_t region(Region::Kind kind, DType dt, uint64_t bytes) {
    Region r;
    r.kind = kind;
    r.dtype = dt;
    r.bytes = bytes;
    if (kind == Region::Kind::Scratch) // after the others: no sharing
      r.arenaOffset = p.scratchArenaBytes();
    if (kind == Region::Kind::Input || kind == Region::Kind::Output) {
      uint32_t n = 0;
      for (const Region &o : p.regions)
        n += o.kind == kind;
      r.index = n;
      // A flat layout that covers exactly `bytes` (verifyProgram requires
      // an I/O region to lie inside its layout); tests may reshape it.
      r.shape = {int64_t(bytes / std::max(1u, dtypeBytes(dt)))};
    }
    p.regions.push_back(r);
    return uint32_t(p.regions.size() - 1);
  }
  uint32_t input(DType dt, uint64_t bytes) {
    return region(Region::Kind::Input, dt, bytes);
  }
  uint32_t output(DType dt, uint64_t bytes) {
    return region(Region::Kind::Output, dt, bytes);
  }

  /// Append in program order (chained through semaphore 31).
  Instruction &add(Instruction i) {
    i.numWaits = 1;
    i.waits[0] = {kChainSem, steps};
    i.signal = kChainSem;
    ++steps;
    auto &stream = p.streams[size_t(i.engine)];
    stream.push_back(i);
    return stream.back();
  }
  /// Append without any synchronisation.
  Instruction &raw(Instruction i) {
    auto &stream = p.streams[size_t(i.engine)];
    stream.push_back(i);
    return stream.back();
  }

  Instruction &dma(AccessPattern dst, AccessPattern src) {
    Instruction i = make(Opcode::DmaCopy, Engine::Dma);
    i.dst = dst;
    i.src0 = src;
    return add(i);
  }
};

/// A program that loads an f32 [P, F] input into SBUF at offset 0, runs `op`
/// (which reads it there and writes an f32 [P, F] tile at byte `dstOffset`)
/// and stores that tile to an f32 [P, F] output.
inline Program f32TileProgram(const Instruction &op, int P, int F,
                              uint64_t dstOffset) {
  Builder b;
  uint32_t in = b.input(DType::F32, P * F * 4);
  b.dma(sbuf(DType::F32, 0, P, 0, {uint32_t(F)}),
        hbm(in, DType::F32, 0, P, F, {uint32_t(F)}));
  b.add(op);
  uint32_t out = b.output(DType::F32, P * F * 4);
  b.dma(hbm(out, DType::F32, 0, P, F, {uint32_t(F)}),
        sbuf(DType::F32, 0, P, dstOffset, {uint32_t(F)}));
  return b.p;
}

inline std::string errorText(llvm::Error e) {
  return e ? llvm::toString(std::move(e)) : std::string();
}

template <typename T> std::string errorText(llvm::Expected<T> &e) {
  return e ? std::string() : llvm::toString(e.takeError());
}
template <typename T> std::string errorText(llvm::Expected<T> &&e) {
  return errorText(e);
}

/// Run on a fresh simulator of the program's target; "" on success.
inline std::string run(const Program &p, std::vector<void *> inputs,
                       std::vector<void *> outputs, RunStats *stats = nullptr) {
  Simulator sim(*lookupMachineModel(p.target));
  return errorText(sim.run(p, inputs, outputs, stats));
}

inline bool contains(const std::string &s, const std::string &part) {
  return s.find(part) != std::string::npos;
}

inline float roundBf16(float x) { return sim::bf16ToF32(sim::f32ToBf16(x)); }

} // namespace trnc::test
