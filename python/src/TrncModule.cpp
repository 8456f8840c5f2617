//===- TrncModule.cpp - The trnc._C Python extension ----------------------===//
//
// Binds the compiler entry points (trnc::compileGraph, and compileKernel
// for trnc.nki kernels) and the runtime
// (artifact loader + functional simulator) for the `trnc` Python package.
// Torch-free on purpose: tensors cross this boundary as buffer descriptors
// (data pointer, bytes of storage from it, dtype, shape, strides; built by
// trnc.compiled_graph.buffer_of), so inputs and outputs are zero copy, and
// every descriptor is checked against the artifact's I/O regions
// (artifact/Binding.h) before the simulator touches memory. The GIL is
// released while compiling and while simulating.
//
//===----------------------------------------------------------------------===//

#include "ProfileBindings.h"
#include "artifact/Artifact.h"
#include "artifact/Binding.h"
#include "artifact/Program.h"
#include "machine/MachineModel.h"
#include "sim/RaceChecker.h"
#include "sim/Collectives.h"
#include "sim/Simulator.h"
#include "trnc/Compiler/Compile.h"

#include "llvm/Support/Error.h"

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace py = pybind11;

namespace trnc::python {
void registerInspectBindings(py::module_ &m); // InspectBindings.cpp
void registerCacheBindings(py::module_ &m);   // CacheBindings.cpp
void registerSupportBindings(py::module_ &m); // SupportBindings.cpp
} // namespace trnc::python

namespace {

std::string errorText(llvm::Error err) { return llvm::toString(std::move(err)); }

/// A CompileResult as the dict the Python side reads (artifact bytes when ok).
py::dict resultDict(const trnc::CompileResult &result, const std::vector<uint8_t> &artifact,
                    bool captureIR) {
  py::dict out;
  out["ok"] = result.ok;
  out["artifact"] = result.ok ? py::object(py::bytes(reinterpret_cast<const char *>(artifact.data()),
                                                      artifact.size()))
                              : py::object(py::none());
  out["error_kind"] = result.errorKind;
  out["message"] = result.message;
  out["details"] = result.detailsJson;
  if (captureIR)
    out["ir"] = result.irDump;
  return out;
}

py::dict compile(const std::string &graphJson, const std::string &optionsJson, bool captureIR) {
  trnc::CompileOptions options;
  std::string optionsError;
  trnc::CompileResult result;
  bool optionsOk = trnc::CompileOptions::fromJson(optionsJson, options, optionsError);
  options.captureIR = captureIR;
  std::vector<uint8_t> artifact;
  if (optionsOk) {
    py::gil_scoped_release noGil;
    result = trnc::compileGraph(graphJson, options);
    if (result.ok)
      artifact = trnc::writeArtifact(result.program);
  } else {
    result.ok = false;
    result.errorKind = "invalid_options";
    result.message = "invalid compile options: " + optionsError;
  }
  return resultDict(result, artifact, captureIR);
}

py::dict compileKernel(const std::string &nisaModule, const std::string &target,
                       bool listSchedule) {
  trnc::CompileOptions options;
  options.target = target;
  trnc::CompileResult result;
  std::vector<uint8_t> artifact;
  {
    py::gil_scoped_release noGil;
    result = trnc::compileKernel(nisaModule, options, listSchedule);
    if (result.ok)
      artifact = trnc::writeArtifact(result.program);
  }
  return resultDict(result, artifact, false);
}

/// Runs a program's collective instructions through a Python callable
/// (trnc.distributed.GraphCollectives), which performs them with
/// torch.distributed: called with the collective's id, kind, reduce op,
/// group size, dtype and the (address, bytes) of its input and output.
/// Runs with the GIL held; a Python exception becomes the run's error.
class PyCollectiveHook : public trnc::CollectiveHook {
public:
  explicit PyCollectiveHook(py::object fn) : fn(std::move(fn)) {}

  llvm::Error run(const trnc::CollectiveCall &call) override {
    py::gil_scoped_acquire gil;
    try {
      fn(call.id, std::string(trnc::isa::collectiveKindName(call.kind)),
         std::string(trnc::isa::reduceOpName(call.reduce)), call.groupSize,
         std::string(trnc::isa::dtypeName(call.dtype)),
         reinterpret_cast<uintptr_t>(call.input), call.inputBytes,
         reinterpret_cast<uintptr_t>(call.output), call.outputBytes);
    } catch (py::error_already_set &e) {
      std::string what = e.what();
      return llvm::createStringError(llvm::inconvertibleErrorCode(), what);
    }
    return llvm::Error::success();
  }

private:
  py::object fn;
};

/// A loaded, verified artifact plus the simulator that runs it. One simulator
/// per executable, reused across calls; calls are serialised by a mutex
/// because the simulator keeps state between them.
class Executable {
public:
  explicit Executable(const py::bytes &artifact) {
    std::string_view bytes = artifact;
    llvm::Expected<trnc::Program> program = trnc::readArtifact(llvm::ArrayRef<uint8_t>(
        reinterpret_cast<const uint8_t *>(bytes.data()), bytes.size()));
    if (!program) {
      // Structural errors carry the prefix already; verifier errors do not.
      std::string msg = errorText(program.takeError());
      const std::string prefix = "invalid trnc artifact: ";
      throw py::value_error(msg.rfind(prefix, 0) == 0 ? msg : prefix + msg);
    }
    this->program = std::move(*program);
    std::optional<trnc::MachineModel> found = trnc::lookupMachineModel(this->program.target);
    if (!found)
      throw py::value_error("invalid trnc artifact: unknown target '" + this->program.target + "'");
    model = std::move(*found);
    simulator = std::make_unique<trnc::Simulator>(model);
  }

  /// Returns None, or a trnc._C.Profile when `profile` or `trace` is set.
  py::object run(const py::sequence &inputs, const py::sequence &outputs, bool profile,
                 bool trace, bool raceCheck, py::object collectives) {
    std::vector<trnc::BufferView> inViews = views(inputs, "input"),
                                  outViews = views(outputs, "output");
    std::string mismatch = trnc::checkBindings(program, inViews, outViews);
    if (!mismatch.empty())
      throw py::value_error("trnc: " + mismatch);
    std::vector<void *> in, out;
    for (const trnc::BufferView &v : inViews)
      in.push_back(const_cast<void *>(v.data));
    for (const trnc::BufferView &v : outViews)
      out.push_back(const_cast<void *>(v.data));
    std::string error;
    std::optional<trnc::Profile> timed;
    if (profile || trace)
      timed.emplace();
    std::optional<PyCollectiveHook> hook;
    if (!collectives.is_none())
      hook.emplace(collectives);
    {
      py::gil_scoped_release noGil;
      std::lock_guard<std::mutex> lock(mutex);
      trnc::RunOptions options;
      options.recordTrace = trace;
      // Functional only unless a profile or race check is asked for (as
      // before collectives existed).
      options.timed = bool(timed) || raceCheck;
      options.collectives = hook ? &*hook : nullptr;
      trnc::RaceChecker raceChecker;
      if (raceCheck)
        options.observer = &raceChecker;
      if (llvm::Error err = simulator->run(program, in, out, options, timed ? &*timed : nullptr))
        error = errorText(std::move(err));
    }
    if (!error.empty())
      throw std::runtime_error("simulating '" + program.name + "' failed: " + error);
    if (!timed)
      return py::none();
    return trnc::python::wrapProfile(py::cast(this), program, std::move(*timed));
  }

  trnc::Program program;
  trnc::MachineModel model;

private:
  /// (data_ptr, nbytes, dtype, shape, strides) tuples as BufferViews.
  static std::vector<trnc::BufferView> views(const py::sequence &items, const char *what) {
    std::vector<trnc::BufferView> out;
    for (size_t i = 0; i < py::len(items); ++i) {
      py::object item = items[i];
      auto bad = [&]() {
        return py::type_error(std::string("Executable.run: ") + what + " " + std::to_string(i) +
                              " must be a (data_ptr, nbytes, dtype, shape, strides) tuple "
                              "(trnc.compiled_graph.buffer_of(tensor)), got " +
                              std::string(py::str(py::type::of(item).attr("__name__"))));
      };
      if (!py::isinstance<py::tuple>(item) || py::len(item) != 5)
        throw bad();
      py::tuple t = item.cast<py::tuple>();
      trnc::BufferView v;
      try {
        v.data = reinterpret_cast<const void *>(t[0].cast<uintptr_t>());
        v.bytesAvailable = t[1].cast<uint64_t>();
        v.dtype = t[2].cast<std::string>();
        v.shape = t[3].cast<std::vector<int64_t>>();
        v.strides = t[4].cast<std::vector<int64_t>>();
      } catch (const py::cast_error &) {
        throw bad();
      }
      out.push_back(std::move(v));
    }
    return out;
  }

  std::unique_ptr<trnc::Simulator> simulator;
  std::mutex mutex;
};

} // namespace

PYBIND11_MODULE(_C, m) {
  m.doc() = "trnc compiler and NeuronCore simulator (torch-free; see docs/python-api.md)";

  m.def("compile", &compile, py::arg("graph_json"), py::arg("options_json"),
        py::arg("capture_ir") = false,
        "Compile a graph JSON document. Returns a dict with keys ok, artifact "
        "(bytes or None), error_kind, message, details (JSON text); with "
        "capture_ir=True also ir (the IR after import and after each pass).");
  m.def("compile_kernel", &compileKernel, py::arg("nisa_module"), py::arg("target"),
        py::arg("list_schedule") = true,
        "Compile a trnc.nki kernel: MLIR text of nisa instructions over unallocated tiles "
        "(trnc-compile-kernel pipeline). Returns the dict compile() does (without ir).");
  m.def("compiler_identity", &trnc::compilerIdentity,
        "Compiler version plus build hash (part of every cache key).");
  m.def("known_targets", &trnc::knownTargets, "Known NeuronCore targets, default first.");
  m.def(
      "target_max_lnc",
      [](const std::string &target) {
        std::optional<trnc::MachineModel> model = trnc::lookupMachineModel(target);
        if (!model)
          throw py::value_error("unknown target '" + target + "'");
        return model->maxLnc;
      },
      py::arg("target"),
      "The largest logical NeuronCore degree `target` supports (trn1 1, trn2/trn3 2).");
  m.def(
      "target_ceilings",
      [](const std::string &target) {
        std::optional<trnc::MachineModel> model = trnc::lookupMachineModel(target);
        if (!model)
          throw py::value_error("unknown target '" + target + "'");
        py::dict d;
        d["peak_flops_per_second"] = model->tensorPeakFlopsPerSecond();
        d["peak_hbm_bytes_per_second"] = model->hbmCoreBytesPerSecond();
        return d;
      },
      py::arg("target"),
      "One core's roofline ceilings on `target`: Tensor Engine peak FLOP/s and HBM bytes/s "
      "(the peaks the profile's MFU and MBU divide by).");
  trnc::python::registerInspectBindings(m);
  trnc::python::registerCacheBindings(m);
  trnc::python::registerSupportBindings(m);
  trnc::python::registerProfileBindings(m);

  py::class_<Executable>(m, "Executable")
      .def(py::init<const py::bytes &>(), py::arg("artifact"),
           "Load and verify an artifact; raises ValueError on a bad one.")
      .def_property_readonly("target", [](const Executable &e) { return e.program.target; })
      .def_property_readonly("name", [](const Executable &e) { return e.program.name; })
      .def_property_readonly("num_inputs",
                             [](const Executable &e) { return e.program.numInputs(); })
      .def_property_readonly("num_outputs",
                             [](const Executable &e) { return e.program.numOutputs(); })
      .def_property_readonly("metadata_json",
                             [](const Executable &e) { return e.program.metadataJson; })
      .def_property_readonly("io_signature",
                             [](const Executable &e) { return trnc::ioSignature(e.program); })
      .def("run", &Executable::run, py::arg("inputs"), py::arg("outputs"),
           py::arg("profile") = false, py::arg("trace") = false, py::arg("race_check") = false,
           py::arg("collectives") = py::none(),
           "Run on buffer descriptors (data_ptr, nbytes, dtype, shape, strides), zero "
           "copy; raises ValueError when one does not match the artifact's I/O regions "
           "(dtype, shape, strides, storage bytes) and RuntimeError with the simulator's message. With profile (or trace, which "
           "also records every instruction) returns a trnc._C.Profile, else None. With "
           "race_check, the run fails if two engines could touch the same bytes (one "
           "writing) without semaphore ordering, or if an instruction reads HBM scratch "
           "bytes nothing wrote before in the run. `collectives` performs the program's "
           "collective instructions: called as fn(id, kind, reduce_op, group_size, dtype, "
           "in_ptr, in_bytes, out_ptr, out_bytes) (trnc.distributed).");
}
