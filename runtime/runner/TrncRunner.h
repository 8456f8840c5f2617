//===- TrncRunner.h - Run a trnc artifact on at::Tensors, no Python -*- C++ -*-===//
//
// The libtorch-facing runtime API: load an artifact written by the compiler
// (`trnc compile-graph ... -o model.trnc`), check tensors against its I/O
// regions and run it on the simulator, zero copy, the way AOTInductor's
// package loader runs a .pt2 file without Python. This is the only part of
// trnc that includes torch; the core (runtime/, compiler/, ...) stays
// torch-free. docs/runner.md describes the API, the tool and the limits.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace trnc::runner {

/// Every error the runner reports: an unreadable or invalid artifact, an
/// unknown target, a failed simulation.
class Error : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

/// An input tensor does not match what the artifact was compiled for (count,
/// type, device, dtype or shape). The message names the input, what was
/// expected and what was passed.
class InputError : public Error {
public:
  using Error::Error;
};

/// What the program reads (an input) or writes (an output): one Input or
/// Output region of the artifact.
struct TensorSpec {
  at::ScalarType dtype = at::ScalarType::Undefined;
  std::vector<int64_t> shape;
  std::vector<int64_t> strides; // in elements

  /// "float32[8, 128] strides [128, 1]".
  std::string str() const;
};

/// A loaded, verified artifact, ready to run. Movable, not copyable. run() may
/// be called from several threads; runs of one Model are serialised.
class Model {
public:
  /// Read and verify the artifact at `path`. `target` empty: the target the
  /// artifact was compiled for; otherwise it must name that same target
  /// (an artifact holds code for one machine model).
  static Model load(const std::string &path, const std::string &target = "");
  /// As load(), from the bytes of an artifact; `origin` names it in messages.
  static Model fromBytes(const std::vector<uint8_t> &bytes,
                         const std::string &target = "",
                         const std::string &origin = "<memory>");

  Model(Model &&) noexcept;
  Model &operator=(Model &&) noexcept;
  ~Model();

  /// Run on `inputs` (CPU, strided tensors in graph input order). Each input's
  /// dtype and shape must match its spec exactly (InputError otherwise). An
  /// input whose strides differ from the compiled ones (ignoring size-1 dims)
  /// is copied once into the compiled layout; every other input is read in
  /// place. Outputs are allocated with at::empty_strided from the output
  /// specs and written in place by the simulator.
  std::vector<at::Tensor> run(const std::vector<at::Tensor> &inputs);

  const std::vector<TensorSpec> &inputSpecs() const;
  const std::vector<TensorSpec> &outputSpecs() const;
  /// The machine model the program runs on, e.g. "trn2".
  const std::string &target() const;
  /// The graph name the compiler gave the program (used in messages).
  const std::string &name() const;

private:
  struct Impl;
  explicit Model(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl;
};

} // namespace trnc::runner
