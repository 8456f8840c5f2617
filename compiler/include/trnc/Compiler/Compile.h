//===- Compile.h - Graph JSON in, Program out ----------------------*- C++ -*-===//
//
// The compiler's one public entry point, used by the Python extension and the
// CLI tools: import a graph (docs/graph-json.md) into the trn dialect, run the
// registered pipeline down to nisa, and emit the per-engine instruction
// streams. Failures never abort: they come back as a structured result whose
// message names every offending operator with the user's source line.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "artifact/Program.h"

#include <nlohmann/json_fwd.hpp>

#include <string>
#include <string_view>

namespace trnc {

struct CompileOptions {
  std::string target = "trn2";
  /// When non-empty, the input IR of a failing pipeline is written here and the
  /// message carries the `trnc-opt` command that reproduces the failure.
  std::string dumpDir;
  /// Record the IR after import and after every pass in CompileResult::irDump
  /// (TORCH_LOGS=trnc_ir). Not a compile option of the cache key: it changes
  /// nothing in the artifact.
  bool captureIR = false;
  /// Logical NeuronCore degree: physical cores the program spans (1, or 2
  /// on targets whose MachineModel::maxLnc allows it). Part of the cache
  /// key (the JSON carries "lnc" only when it is 2).
  unsigned lnc = 1;
  /// Parse `{"target": "trn2", "dump_dir": "...", "lnc": "2"}`; unknown
  /// keys, an lnc other than "1"/"2" and an lnc above the target's maxLnc
  /// are errors.
  static bool fromJson(std::string_view json, CompileOptions &out, std::string &error);
};

struct CompileResult {
  bool ok = false;
  Program program; // valid when ok
  /// "unsupported_operator" | "unsupported_dtype" | "invalid_graph" |
  /// "compile_error" when !ok. "unsupported_dtype": a tensor the backend
  /// cannot compute in (float32, bfloat16, float16, int32, int64, bool).
  std::string errorKind;
  /// Complete human-readable message (what the user's exception shows).
  std::string message;
  /// Structured details as JSON text, e.g. for unsupported operators:
  /// {"unsupported": [{"target": "aten.foo.default", "count": 2,
  ///   "locations": [{"node": "foo", "file": "m.py", "line": 12, "code": "..."}]}]}
  std::string detailsJson = "{}";
  /// With CompileOptions::captureIR: the imported IR, then the IR after each
  /// pass ("// -----// IR Dump After <pass> //----- //" headers), up to the
  /// failing pass when the pipeline fails.
  std::string irDump;
};

CompileResult compileGraph(std::string_view graphJson, const CompileOptions &options);
/// The same for a document already parsed from graph JSON (parsed once:
/// the limit check and the importer both read it).
CompileResult compileGraph(const nlohmann::json &graph, const CompileOptions &options);

/// A hand-written kernel (trnc.nki, docs/nki.md): MLIR text of a module
/// whose `func.func @main` takes HBM memrefs (`nisa.input` / `nisa.output`
/// argument attributes) and holds nisa instructions over tiles without
/// addresses. Parses, verifies, runs `trnc-compile-kernel` (list schedule
/// unless `listSchedule` is false, allocate, semaphores), emits and verifies
/// the Program. Errors ("invalid_kernel" for text or verifier failures,
/// "compile_error" for the pipeline) carry the ops' locations: the kernel's
/// source lines.
CompileResult compileKernel(std::string_view nisaModule, const CompileOptions &options,
                            bool listSchedule = true);

struct MachineModel;

/// Output elements per emitted instruction, for the artifact size estimate
/// of checkGraphLimits: a 128-partition tile of 512 elements (a PSUM bank of
/// f32 per partition) for most ops; matmul-like ops (mm, bmm, addmm, matmul,
/// baddbmm, convolution) emit far more per output element (measured: 655
/// per instruction for `(x.t() @ x).sum()`, x [1, 8192], 32.8 MB), so 512.
inline constexpr double kLimitElementsPerInstruction = 128.0 * 512.0;
inline constexpr double kLimitMatmulElementsPerInstruction = 512.0;
/// Largest artifact checkGraphLimits lets a graph grow to (estimated).
inline constexpr uint64_t kMaxEstimatedArtifactBytes = uint64_t(1) << 30;

/// Empty, or why the graph cannot run on `model` (a tensor larger than its
/// HBM, an artifact estimated past kMaxEstimatedArtifactBytes), naming the
/// tensor, its op and the user's source line. Read from the graph JSON
/// before anything is lowered (GraphLimits.cpp); compileGraph refuses with
/// error kind "resource_limit".
std::string checkGraphLimits(const nlohmann::json &graph, const MachineModel &model);

/// Compiler identity: version plus build hash; part of every cache key.
std::string compilerIdentity();

} // namespace trnc
