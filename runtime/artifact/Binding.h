//===- Binding.h - Check caller buffers against a program's I/O regions -*- C++ -*-===//
//
// The simulator addresses `Region::bytes` bytes from each pointer it is
// given, without bounds checks of its own. Every entry point that hands it
// caller memory (the Python extension's Executable.run, the libtorch runner,
// the fuzzers) describes each buffer as a BufferView and calls checkBindings
// first: dtype, shape, strides and the bytes the storage really holds must
// all match the artifact, so an artifact of another graph is an error, never
// a wrong answer or a read past a tensor.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "artifact/Program.h"

#include <cstdint>
#include <string>
#include <vector>

namespace trnc {

/// One caller buffer: where it starts, how many bytes from there its storage
/// holds, and the tensor layout it carries (dtype by ISA name: "f32", ...).
struct BufferView {
  const void *data = nullptr;
  uint64_t bytesAvailable = 0;
  std::string dtype;
  std::vector<int64_t> shape;
  std::vector<int64_t> strides; // in elements
};

/// Empty when `inputs` / `outputs` (in graph position order) match the
/// program's Input / Output regions exactly: the counts, and per buffer the
/// dtype, the shape, the strides of every dim of size > 1, and storage of
/// at least the region's bytes. Otherwise one message naming the first
/// mismatching buffer, what the artifact expects and what was passed.
std::string checkBindings(const Program &program,
                          const std::vector<BufferView> &inputs,
                          const std::vector<BufferView> &outputs);

} // namespace trnc
