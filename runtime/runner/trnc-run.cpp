//===- trnc-run.cpp - Run an artifact on tensors saved from Python -------===//
//
//   trnc-run ARTIFACT --inputs in.pt [--outputs out.pt]
//            [--expected expected.pt [--rtol R] [--atol A]]
//
// Tensor files are what Python's `torch.save(list_or_tuple_of_tensors, path)`
// writes; they are read with torch::jit::pickle_load (the reader libtorch
// documents for torch.save files) and outputs are written as a tuple with
// torch::jit::pickle_save, which `torch.load(path)` reads back (weights_only
// too). Exit codes: 0 ok, 1 error (usage, file, artifact, input mismatch,
// simulation), 2 outputs differ from --expected.
//
//===----------------------------------------------------------------------===//
#include "runner/TrncRunner.h"

#include <ATen/ops/allclose.h>
#include <torch/csrc/jit/serialization/pickle.h>

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <fstream>
#include <utility>

namespace cl = llvm::cl;
using llvm::errs;
using llvm::outs;
using trnc::runner::Error;

namespace {

cl::opt<std::string> artifactPath(cl::Positional, cl::Required,
                                  cl::desc("<artifact.trnc>"));
cl::opt<std::string>
    inputsPath("inputs", cl::Required, cl::value_desc("in.pt"),
               cl::desc("inputs: torch.save([t0, t1, ...]) in graph order"));
cl::opt<std::string>
    outputsPath("outputs", cl::value_desc("out.pt"),
                cl::desc("write the outputs here (torch.load returns a "
                         "tuple of tensors)"));
cl::opt<std::string>
    expectedPath("expected", cl::value_desc("expected.pt"),
                 cl::desc("compare the outputs with these tensors "
                          "(at::allclose); exit 2 on a mismatch"));
cl::opt<double> rtolOpt("rtol", cl::init(-1.0),
                        cl::desc("relative tolerance (default: "
                                 "torch.testing's for the output dtype)"));
cl::opt<double> atolOpt("atol", cl::init(-1.0),
                        cl::desc("absolute tolerance (default: "
                                 "torch.testing's for the output dtype)"));
cl::opt<std::string>
    targetOpt("target", cl::value_desc("trn2"),
              cl::desc("the target to run on; must be the artifact's "
                       "(default: the artifact's)"));

std::vector<at::Tensor> loadTensors(const std::string &path) {
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> file =
      llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                            /*RequiresNullTerminator=*/false);
  if (!file)
    throw Error("cannot read '" + path + "': " + file.getError().message());
  llvm::StringRef bytes = (*file)->getBuffer();
  c10::IValue value;
  try {
    value = torch::jit::pickle_load(std::vector<char>(bytes.begin(), bytes.end()));
  } catch (const c10::Error &e) {
    throw Error("cannot load tensors from '" + path +
                "' (expected a file written by torch.save of a list or tuple "
                "of tensors): " + e.what_without_backtrace());
  }
  std::vector<c10::IValue> items;
  if (value.isTensor())
    items.push_back(value);
  else if (value.isList())
    items = value.toList().vec();
  else if (value.isTuple())
    items = value.toTupleRef().elements().vec();
  else
    throw Error("'" + path + "' holds a " + value.tagKind() +
                ", expected a list or tuple of tensors");
  std::vector<at::Tensor> tensors;
  for (size_t i = 0; i < items.size(); ++i) {
    if (!items[i].isTensor())
      throw Error("'" + path + "' item " + std::to_string(i) + " is a " +
                  items[i].tagKind() + ", expected a tensor");
    tensors.push_back(items[i].toTensor());
  }
  return tensors;
}

void saveTensors(const std::string &path,
                 const std::vector<at::Tensor> &tensors) {
  // A tuple, not a typed c10::List: torch.load(weights_only=True) refuses the
  // build_tensorlist global that a List<Tensor> pickles to.
  std::vector<c10::IValue> items(tensors.begin(), tensors.end());
  std::vector<char> bytes =
      torch::jit::pickle_save(c10::ivalue::Tuple::create(std::move(items)));
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  file.write(bytes.data(), std::streamsize(bytes.size()));
  if (!file.flush())
    throw Error("cannot write '" + path + "'");
}

/// torch.testing.assert_close's defaults per dtype.
std::pair<double, double> defaultTolerances(at::ScalarType t) {
  switch (t) {
  case at::kBFloat16: return {1.6e-2, 1e-5};
  case at::kHalf: return {1e-3, 1e-5};
  case at::kFloat: return {1.3e-6, 1e-5};
  case at::kDouble: return {1e-7, 1e-7};
  default: return {0.0, 0.0};
  }
}

/// Compare every output with its expected tensor; prints one line each.
bool compareOutputs(const std::vector<at::Tensor> &outputs,
                    const std::vector<at::Tensor> &expected) {
  if (outputs.size() != expected.size()) {
    errs() << "trnc-run: the artifact produced " << outputs.size()
           << " outputs but '" << expectedPath << "' holds " << expected.size()
           << "\n";
    return false;
  }
  bool ok = true;
  for (size_t i = 0; i < outputs.size(); ++i) {
    const at::Tensor &got = outputs[i], &want = expected[i];
    outs() << "output " << i << ": ";
    if (got.scalar_type() != want.scalar_type() ||
        got.sizes() != want.sizes()) {
      outs() << "MISMATCH: got " << c10::toString(got.scalar_type())
             << c10::str(got.sizes()) << ", expected "
             << c10::toString(want.scalar_type()) << c10::str(want.sizes())
             << "\n";
      ok = false;
      continue;
    }
    auto [rtol, atol] = defaultTolerances(got.scalar_type());
    rtol = rtolOpt >= 0 ? double(rtolOpt) : rtol;
    atol = atolOpt >= 0 ? double(atolOpt) : atol;
    bool close = at::allclose(got, want, rtol, atol);
    double maxError =
        got.numel() ? got.to(at::kDouble).sub(want.to(at::kDouble)).abs()
                          .max().item<double>()
                    : 0.0;
    outs() << c10::str(got.sizes()) << " max abs error " << maxError
           << " (rtol " << rtol << ", atol " << atol << "): "
           << (close ? "ok" : "MISMATCH") << "\n";
    ok &= close;
  }
  return ok;
}

} // namespace

int main(int argc, char **argv) {
  cl::SetVersionPrinter([](llvm::raw_ostream &os) {
    os << "trnc-run (trnc " TRNC_VERSION_STRING ")\n";
  });
  cl::ParseCommandLineOptions(
      argc, argv,
      "trnc-run: run a trnc artifact on tensors saved with torch.save, on the "
      "NeuronCore simulator, without Python\n");
  try {
    trnc::runner::Model model = trnc::runner::Model::load(artifactPath, targetOpt);
    std::vector<at::Tensor> outputs = model.run(loadTensors(inputsPath));
    outs() << "trnc-run: ran graph '" << model.name() << "' (" << model.target()
           << "): " << model.inputSpecs().size() << " inputs, "
           << outputs.size() << " outputs\n";
    if (!outputsPath.empty())
      saveTensors(outputsPath, outputs);
    if (!expectedPath.empty() &&
        !compareOutputs(outputs, loadTensors(expectedPath))) {
      errs() << "trnc-run: outputs differ from '" << expectedPath << "'\n";
      return 2;
    }
    return 0;
  } catch (const std::exception &e) {
    // c10::Error (e.g. from a tensor op) lands here too, not only ours.
    errs() << "trnc-run: error: " << e.what() << "\n";
    return 1;
  }
}
