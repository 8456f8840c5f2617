//===- TrncRunner.cpp - Model: load, check, run on the simulator ---------===//
//
// Bridges at::Tensor and the torch-free runtime: the artifact's Input/Output
// regions become TensorSpecs, inputs are checked against them and handed to
// the simulator by data pointer, outputs are allocated per region. Every
// bound the simulator relies on (a region never spans more bytes than its
// layout: verifyProgram, at load; each tensor's dtype, shape, strides and
// storage against its region: checkBindings, before every run) is checked,
// so a bad artifact is an error and never a write past a tensor's storage.
//
//===----------------------------------------------------------------------===//
#include "runner/TrncRunner.h"

#include "artifact/Artifact.h"
#include "artifact/Binding.h"
#include "machine/MachineModel.h"
#include "sim/Simulator.h"

#include <ATen/ops/empty_strided.h>

#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBuffer.h"

#include <mutex>
#include <optional>
#include <sstream>

namespace trnc::runner {
namespace {

std::string dtypeName(at::ScalarType t) {
  switch (t) {
  case at::kFloat: return "float32";
  case at::kBFloat16: return "bfloat16";
  case at::kHalf: return "float16";
  case at::kDouble: return "float64";
  case at::kInt: return "int32";
  case at::kLong: return "int64";
  case at::kShort: return "int16";
  case at::kChar: return "int8";
  case at::kByte: return "uint8";
  case at::kBool: return "bool";
  default: return c10::toString(t);
  }
}

at::ScalarType scalarTypeOf(isa::DType t) {
  switch (t) {
  case isa::DType::F32: return at::kFloat;
  case isa::DType::BF16: return at::kBFloat16;
  case isa::DType::F16: return at::kHalf;
  case isa::DType::I32: return at::kInt;
  case isa::DType::U8: return at::kByte;
  case isa::DType::I64: return at::kLong;
  case isa::DType::Bool: return at::kBool;
  }
  return at::ScalarType::Undefined;
}

std::string listText(at::IntArrayRef values) {
  std::ostringstream os;
  os << '[';
  for (size_t i = 0; i < values.size(); ++i)
    os << (i ? ", " : "") << values[i];
  os << ']';
  return os.str();
}

std::string describe(const at::Tensor &t) {
  return dtypeName(t.scalar_type()) + listText(t.sizes()) + " strides " +
         listText(t.strides());
}

/// `t` as the simulator will address it: pointer, storage bytes from there.
BufferView viewOf(const at::Tensor &t) {
  BufferView v;
  v.data = t.data_ptr();
  size_t item = c10::elementSize(t.scalar_type());
  uint64_t storage = t.storage().nbytes(), offset = uint64_t(t.storage_offset()) * item;
  v.bytesAvailable = storage > offset ? storage - offset : 0;
  v.dtype = t.scalar_type() == at::kFloat      ? "f32"
            : t.scalar_type() == at::kBFloat16 ? "bf16"
            : t.scalar_type() == at::kHalf     ? "f16"
            : t.scalar_type() == at::kInt      ? "i32"
            : t.scalar_type() == at::kByte     ? "u8"
            : t.scalar_type() == at::kLong     ? "i64"
            : t.scalar_type() == at::kBool     ? "bool"
                                               : dtypeName(t.scalar_type());
  v.shape.assign(t.sizes().begin(), t.sizes().end());
  v.strides.assign(t.strides().begin(), t.strides().end());
  return v;
}

/// Strides equal where they matter: a size-1 dim is never stepped over.
bool sameLayout(const at::Tensor &t, const TensorSpec &spec) {
  for (size_t d = 0; d < spec.shape.size(); ++d)
    if (spec.shape[d] != 1 && t.stride(d) != spec.strides[d])
      return false;
  return true;
}

} // namespace

std::string TensorSpec::str() const {
  return dtypeName(dtype) + listText(shape) + " strides " + listText(strides);
}

struct Model::Impl {
  Program program;
  MachineModel machine;
  std::unique_ptr<Simulator> simulator; // refers to `machine`
  std::vector<TensorSpec> inputs, outputs;
  std::mutex mutex;
};

Model::Model(std::unique_ptr<Impl> impl) : impl(std::move(impl)) {}
Model::Model(Model &&) noexcept = default;
Model &Model::operator=(Model &&) noexcept = default;
Model::~Model() = default;

const std::vector<TensorSpec> &Model::inputSpecs() const { return impl->inputs; }
const std::vector<TensorSpec> &Model::outputSpecs() const {
  return impl->outputs;
}
const std::string &Model::target() const { return impl->program.target; }
const std::string &Model::name() const { return impl->program.name; }

Model Model::load(const std::string &path, const std::string &target) {
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> file =
      llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                  /*RequiresNullTerminator=*/false);
  if (!file)
    throw Error("cannot read artifact '" + path +
                "': " + file.getError().message());
  llvm::StringRef data = (*file)->getBuffer();
  return fromBytes(std::vector<uint8_t>(data.bytes_begin(), data.bytes_end()),
                   target, path);
}

/// The Input or Output regions of `program` as specs, in index order; the
/// indices must be exactly 0..n-1 (the simulator binds pointers by index).
static std::vector<TensorSpec> specsOf(const Program &program,
                                       Region::Kind kind,
                                       const std::string &origin) {
  const char *what = kind == Region::Kind::Input ? "input" : "output";
  size_t count = kind == Region::Kind::Input ? program.numInputs()
                                             : program.numOutputs();
  std::vector<std::optional<TensorSpec>> found(count);
  auto bad = [&](uint32_t index, const std::string &why) {
    return Error("invalid artifact '" + origin + "': " + what + " " +
                 std::to_string(index) + " " + why);
  };
  for (const Region &r : program.regions) {
    if (r.kind != kind)
      continue;
    if (r.index >= count || found[r.index])
      throw bad(r.index, "is out of order or bound twice (" +
                             std::to_string(count) + " " + what + "s)");
    TensorSpec spec;
    spec.dtype = scalarTypeOf(r.dtype);
    spec.shape = r.shape;
    spec.strides = r.strides;
    if (spec.dtype == at::ScalarType::Undefined)
      throw bad(r.index, "has an unknown dtype");
    if (r.shape.size() != r.strides.size())
      throw bad(r.index, "has " + std::to_string(r.shape.size()) +
                             " dims but " + std::to_string(r.strides.size()) +
                             " strides");
    for (size_t d = 0; d < r.shape.size(); ++d)
      if (r.shape[d] < 0 || r.strides[d] < 0)
        throw bad(r.index, "has a negative size or stride");
    found[r.index] = std::move(spec);
  }
  std::vector<TensorSpec> specs;
  for (std::optional<TensorSpec> &spec : found)
    specs.push_back(std::move(*spec)); // every slot filled: count == #regions
  return specs;
}

Model Model::fromBytes(const std::vector<uint8_t> &bytes,
                       const std::string &target, const std::string &origin) {
  llvm::Expected<Program> program = readArtifact(bytes);
  if (!program)
    throw Error("invalid artifact '" + origin +
                "': " + llvm::toString(program.takeError()));
  if (!target.empty() && target != program->target)
    throw Error("artifact '" + origin + "' was compiled for " +
                program->target + ", not " + target +
                "; recompile it with --target " + target);
  std::optional<MachineModel> machine = lookupMachineModel(program->target);
  if (!machine) {
    throw Error("artifact '" + origin + "' targets unknown machine '" +
                program->target + "' (known: " + knownTargetNames() + ")");
  }
  auto impl = std::make_unique<Impl>();
  impl->inputs = specsOf(*program, Region::Kind::Input, origin);
  impl->outputs = specsOf(*program, Region::Kind::Output, origin);
  impl->program = std::move(*program);
  impl->machine = std::move(*machine);
  impl->simulator = std::make_unique<Simulator>(impl->machine);
  return Model(std::move(impl));
}

std::vector<at::Tensor> Model::run(const std::vector<at::Tensor> &inputs) {
  const std::string graph = "graph '" + impl->program.name + "'";
  if (inputs.size() != impl->inputs.size())
    throw InputError(graph + " takes " + std::to_string(impl->inputs.size()) +
                     " inputs, got " + std::to_string(inputs.size()));
  // `laidOut` keeps the one-copy re-layouts alive for the run.
  std::vector<at::Tensor> laidOut(inputs.size());
  std::vector<void *> in, out;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const at::Tensor &t = inputs[i];
    const TensorSpec &spec = impl->inputs[i];
    std::string where = graph + " input " + std::to_string(i) + ": ";
    if (!t.defined())
      throw InputError(where + "expected " + spec.str() +
                       ", got an undefined tensor");
    if (!t.device().is_cpu() || t.layout() != at::kStrided)
      throw InputError(where + "expected a strided CPU tensor, got one on " +
                       t.device().str() + " with layout " +
                       c10::toString(t.layout()) +
                       " (the simulator reads host memory)");
    if (t.scalar_type() != spec.dtype || t.sizes() != spec.shape)
      throw InputError(where + "expected " + spec.str() + ", got " +
                       describe(t));
    laidOut[i] = t;
    if (!sameLayout(t, spec)) // detach: the re-layout is not part of autograd
      laidOut[i] = at::empty_strided(spec.shape, spec.strides,
                                     at::dtype(spec.dtype))
                       .copy_(t.detach());
    in.push_back(laidOut[i].data_ptr());
  }
  std::vector<at::Tensor> outputs;
  for (const TensorSpec &spec : impl->outputs) {
    outputs.push_back(
        at::empty_strided(spec.shape, spec.strides, at::dtype(spec.dtype)));
    out.push_back(outputs.back().data_ptr());
  }
  // Zero-element tensors have no storage; the program names a one-element
  // region for each, bound to this scratch.
  at::Tensor scratch = at::empty_strided({64}, {1}, at::dtype(at::kByte));
  std::vector<BufferView> inViews, outViews;
  for (std::vector<void *> *ptrs : {&in, &out}) {
    const std::vector<at::Tensor> &ts = ptrs == &in ? laidOut : outputs;
    std::vector<BufferView> &views = ptrs == &in ? inViews : outViews;
    for (size_t i = 0; i < ts.size(); ++i) {
      views.push_back(viewOf(ts[i]));
      if (ts[i].numel() == 0) {
        views.back().data = (*ptrs)[i] = scratch.data_ptr();
        views.back().bytesAvailable = 64;
      }
    }
  }
  std::string mismatch = checkBindings(impl->program, inViews, outViews);
  if (!mismatch.empty())
    throw InputError(mismatch);
  std::lock_guard<std::mutex> lock(impl->mutex);
  if (llvm::Error err = impl->simulator->run(impl->program, in, out))
    throw Error("simulating " + graph +
                " failed: " + llvm::toString(std::move(err)));
  return outputs;
}

} // namespace trnc::runner
