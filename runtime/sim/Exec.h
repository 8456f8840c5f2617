//===- Exec.h - Internal interface between the engine loop and semantics -*- C++ -*-===//
//
// A View is an access pattern resolved to host memory (partition dim first,
// then the free dims, strides in bytes). A Walker visits a view's elements in
// row-major order as contiguous runs, which is what lets every instruction
// run as tight loops over fp32 rows. ExecContext carries the bound memory and
// reusable scratch buffers; the semantics files implement one function per
// opcode on top of it.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "isa/Isa.h"

#include <cstdint>
#include <vector>

namespace trnc {
struct CollectiveCall; // sim/Collectives.h
}

namespace trnc::sim {

/// Elements converted per step when an instruction streams through fp32.
constexpr size_t kChunk = 1024;

struct View {
  uint8_t *base = nullptr; // first element of partition 0
  isa::DType dtype = isa::DType::F32;
  unsigned elemBytes = 4;
  unsigned numDims = 0; // dim 0 = partitions, then the free dims
  int64_t strideBytes[1 + isa::kMaxFreeDims] = {};
  uint64_t count[1 + isa::kMaxFreeDims] = {};

  uint64_t partitions() const { return count[0]; }
  uint64_t freeElements() const;
};

/// Dims [firstDim, numDims) of a view with count-1 dims dropped and
/// row-major-contiguous neighbours merged (outermost first); a single
/// element is one dim of count 1. Returns the number of dims.
unsigned mergeDims(const View &view, unsigned firstDim, int64_t *stride,
                   uint64_t *count);

/// Row-major walk over dims [firstDim, numDims) of a view, in runs along the
/// innermost dim. firstDim = 0 walks every partition; firstDim = 1 walks one
/// partition chosen with setPartition.
class Walker {
public:
  Walker(const View &view, unsigned firstDim);

  void setPartition(uint64_t p);
  /// Elements left in the current innermost run.
  uint64_t runLeft() const { return count[inner] - idx[inner]; }
  int64_t runStride() const { return stride[inner]; }
  uint8_t *ptr() const { return cur; }
  /// Move `n` elements forward; n <= runLeft().
  void advance(uint64_t n);
  /// Read (write) the next `n` elements through fp32 and move past them.
  void load(float *out, size_t n);
  void store(const float *in, size_t n);

private:
  uint8_t *start;
  uint8_t *cur;
  isa::DType dtype;
  int64_t partitionStride;
  unsigned nd = 0, inner = 0;
  int64_t stride[1 + isa::kMaxFreeDims];
  uint64_t count[1 + isa::kMaxFreeDims];
  uint64_t idx[1 + isa::kMaxFreeDims];
};

/// Memory bound for one run plus buffers reused across instructions.
struct ExecContext {
  uint8_t *sbuf = nullptr, *psum = nullptr;
  uint64_t sbufPartitionBytes = 0, psumPartitionBytes = 0;
  std::vector<uint8_t *> regions; // host base of each HBM region

  std::vector<float> buf0, buf1, buf2; // kChunk floats each
  std::vector<float> matA, matB, matC; // matmul tiles
  /// Transpose matmuls move data bit-exactly (MachineModel).
  bool exactTranspose = true;

  View view(const isa::AccessPattern &ap) const;
};

// One function per opcode; the program is verified, so every access is in
// bounds and every operand the opcode needs is present.
void execDmaCopy(ExecContext &ctx, const isa::Instruction &inst);
void execTensorCopy(ExecContext &ctx, const isa::Instruction &inst);
void execMatmul(ExecContext &ctx, const isa::Instruction &inst);
void execActivation(ExecContext &ctx, const isa::Instruction &inst);
void execTensorTensor(ExecContext &ctx, const isa::Instruction &inst);
void execTensorScalar(ExecContext &ctx, const isa::Instruction &inst);
void execTensorReduce(ExecContext &ctx, const isa::Instruction &inst);
void execMemset(ExecContext &ctx, const isa::Instruction &inst);
void execCopyPredicated(ExecContext &ctx, const isa::Instruction &inst); // VectorScalarSemantics.cpp
void execIota(ExecContext &ctx, const isa::Instruction &inst);         // IotaSemantics.cpp
void execAffineSelect(ExecContext &ctx, const isa::Instruction &inst); // IotaSemantics.cpp
void execTensorScan(ExecContext &ctx, const isa::Instruction &inst); // ScanSemantics.cpp
void execDmaIndirect(ExecContext &ctx, const isa::Instruction &inst); // IndirectDmaSemantics.cpp
void execRandom(ExecContext &ctx, const isa::Instruction &inst); // RandomSemantics.cpp
/// A collective's host call: its contiguous HBM runs as pointers (the
/// Simulator hands it to the CollectiveHook; Collectives.cpp).
CollectiveCall describeCollective(const ExecContext &ctx,
                                  const isa::Instruction &inst);

} // namespace trnc::sim
