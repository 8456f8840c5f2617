//===- Compile.cpp - compileGraph: graph JSON -> verified Program ---------===//
//
// The driver behind torch.compile and trnc-compile: import the graph into
// the trn dialect, run the registered `trnc-compile` pipeline, emit the
// per-engine streams and verify them against the machine model.
// compileKernel does the same for a trnc.nki kernel, which arrives as nisa
// text and runs only the pipeline's tail (`trnc-compile-kernel`). Nothing is
// printed: every diagnostic is captured with its user source location into
// CompileResult::message, and on a pipeline failure the input IR is dumped
// with the trnc-opt command that reproduces it.
//
//===----------------------------------------------------------------------===//
#include "trnc/Compiler/Compile.h"

#include "artifact/Artifact.h"
#include "machine/MachineModel.h"
#include "passes/Passes.h"
#include "trnc/Compiler/Emit.h"
#include "trnc/Compiler/GraphImporter.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/OperationSupport.h"
#include "mlir/Pass/PassInstrumentation.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <nlohmann/json.hpp>

using namespace mlir;

namespace trnc {
namespace {

/// "file:line" of the user's source in `loc` (importer: NameLoc(node,
/// FileLineColLoc)), else the printed location.
std::string formatLocation(Location loc) {
  std::string node;
  std::string result;
  loc->walk([&](Location l) {
    if (auto name = dyn_cast<NameLoc>(l); name && node.empty())
      node = name.getName().str();
    if (auto file = dyn_cast<FileLineColLoc>(l); file && result.empty())
      result = (file.getFilename().getValue() + ":" + Twine(file.getLine())).str();
    return WalkResult::advance();
  });
  if (result.empty() && node.empty()) {
    llvm::raw_string_ostream os(result);
    os << loc;
    return os.str();
  }
  if (result.empty())
    return "node '" + node + "'";
  return node.empty() ? result : result + " (node '" + node + "')";
}

const char *severityName(DiagnosticSeverity s) {
  switch (s) {
  case DiagnosticSeverity::Error: return "error";
  case DiagnosticSeverity::Warning: return "warning";
  case DiagnosticSeverity::Note: return "note";
  case DiagnosticSeverity::Remark: return "remark";
  }
  return "error";
}

void appendDiagnostic(std::string &out, Diagnostic &diag) {
  out += formatLocation(diag.getLocation()) + ": " +
         severityName(diag.getSeverity()) + ": " + diag.str() + "\n";
  for (Diagnostic &note : diag.getNotes())
    appendDiagnostic(out, note);
}

std::string graphName(ModuleOp module) {
  if (auto main = module.lookupSymbol<func::FuncOp>("main"))
    if (auto name = main->getAttrOfType<StringAttr>("trn.graph_name"))
      return name.str();
  return "graph";
}

/// Writes the pre-pipeline IR under `dir`; returns the file path or "".
std::string dumpInput(const std::string &dir, const std::string &name,
                      const std::string &ir, std::string &error) {
  if (std::error_code ec = llvm::sys::fs::create_directories(dir)) {
    error = "cannot create " + dir + ": " + ec.message();
    return "";
  }
  llvm::SmallString<256> path(dir);
  llvm::sys::path::append(path, name + ".trn.mlir");
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  if (ec) {
    error = "cannot write " + std::string(path) + ": " + ec.message();
    return "";
  }
  os << ir;
  return std::string(path);
}

/// One compile's MLIR context (one per compile: compiles run in parallel
/// across contexts), every diagnostic captured into `diagnostics`.
class DiagnosedContext {
public:
  explicit DiagnosedContext(const DialectRegistry &registry)
      : context(registry, MLIRContext::Threading::DISABLED),
        handler(&context, [this](Diagnostic &diag) {
          appendDiagnostic(diagnostics, diag);
          return success();
        }) {
    context.loadAllAvailableDialects();
  }

  MLIRContext context;
  std::string diagnostics;

private:
  ScopedDiagnosticHandler handler;
};

/// Remembers whether the pass that failed was the integer range check, whose
/// refusal is the user's limit (error kind unsupported_integer_range), not
/// a compiler bug.
struct FailedPass : public PassInstrumentation {
  std::string *argument;
  explicit FailedPass(std::string *argument) : argument(argument) {}
  void runAfterPassFailed(Pass *pass, Operation *) override {
    if (argument->empty())
      *argument = pass->getArgument().str();
  }
};

/// The ATen target the importer fused into `loc` (FusedLoc metadata), or "".
std::string atenTarget(Location loc) {
  std::string target;
  loc->walk([&](Location l) {
    if (auto fused = dyn_cast<FusedLoc>(l))
      if (auto s = dyn_cast_or_null<StringAttr>(fused.getMetadata()))
        target = s.str();
    return WalkResult::advance();
  });
  return target;
}

/// The range check's bounds on integer inputs (trn.integer_inputs) as the
/// artifact metadata records them: [{input, bound, reason, op, where}].
nlohmann::json integerInputs(ModuleOp module) {
  nlohmann::json out = nlohmann::json::array();
  auto records = module->getAttrOfType<ArrayAttr>("trn.integer_inputs");
  for (Attribute a : records ? records.getValue() : ArrayRef<Attribute>()) {
    auto d = cast<DictionaryAttr>(a);
    auto loc = d.getAs<LocationAttr>("loc");
    out.push_back({{"input", d.getAs<IntegerAttr>("input").getInt()},
                   {"bound", d.getAs<IntegerAttr>("bound").getInt()},
                   {"reason", d.getAs<StringAttr>("reason").str()},
                   {"op", loc ? atenTarget(Location(loc)) : ""},
                   {"where", loc ? formatLocation(Location(loc)) : ""}});
  }
  return out;
}

CompileResult failure(std::string kind, std::string message) {
  CompileResult r;
  r.errorKind = std::move(kind);
  r.message = std::move(message);
  return r;
}

/// Emits `@main` of the scheduled module and verifies the Program the way
/// the runtime will: a failure is a compiler bug, reported as such rather
/// than at load time.
CompileResult emitVerified(ModuleOp module, const std::string &name,
                           const std::string &target) {
  auto main = module.lookupSymbol<func::FuncOp>("main");
  if (!main)
    return failure("compile_error", "internal error: the pipeline output has "
                                    "no func.func @main");
  // LNC=2: physical core 1's function (SplitLogicalCores.cpp).
  auto peer = module.lookupSymbol<func::FuncOp>("main_core1");
  llvm::Expected<Program> program = emitProgram(main, target, peer);
  if (!program)
    return failure("compile_error", "internal error while emitting graph '" +
                                        name + "': " +
                                        llvm::toString(program.takeError()));
  program->name = name;
  program->compilerVersion = compilerIdentity();
  nlohmann::json metadata{{"target", target}};
  if (program->lnc() > 1)
    metadata["lnc"] = program->lnc();
  if (nlohmann::json bounds = integerInputs(module); !bounds.empty())
    metadata["integer_inputs"] = std::move(bounds);
  program->metadataJson = metadata.dump();
  // Self-check: the runtime refuses anything that fails this, so a failure
  // here is a compiler bug, reported as such rather than at load time.
  if (llvm::Error e = verifyProgram(*program))
    return failure("compile_error",
                   "internal error: the emitted program for graph '" + name +
                       "' fails verification: " + llvm::toString(std::move(e)));

  CompileResult result;
  result.ok = true;
  result.program = std::move(*program);
  return result;
}

} // namespace

bool CompileOptions::fromJson(std::string_view json, CompileOptions &out,
                              std::string &error) {
  nlohmann::json doc = nlohmann::json::parse(json, nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) {
    error = "compile options must be a JSON object";
    return false;
  }
  CompileOptions options;
  for (auto it = doc.begin(); it != doc.end(); ++it) {
    if (!it.value().is_string()) {
      error = "compile option '" + it.key() + "' must be a string";
      return false;
    }
    std::string value = it.value().get<std::string>();
    if (it.key() == "target") {
      options.target = value;
    } else if (it.key() == "dump_dir") {
      options.dumpDir = value;
    } else if (it.key() == "lnc") {
      if (value != "1" && value != "2") {
        error = "compile option 'lnc' must be \"1\" or \"2\" (the Neuron "
                "logical-core degrees), got \"" + value + "\"";
        return false;
      }
      options.lnc = unsigned(value[0] - '0');
    } else {
      error = "unknown compile option '" + it.key() +
              "' (known: target, dump_dir, lnc)";
      return false;
    }
  }
  std::optional<MachineModel> model = lookupMachineModel(options.target);
  if (!model) {
    error = "unknown target '" + options.target + "'";
    return false;
  }
  if (options.lnc > model->maxLnc) {
    error = "lnc=" + std::to_string(options.lnc) + " is not supported on " +
            options.target + ": its logical cores are at most " +
            std::to_string(model->maxLnc) + " physical core (Neuron "
            "\"Logical NeuronCore configuration\", NCC_EARG001)";
    return false;
  }
  out = std::move(options);
  return true;
}

CompileResult compileGraph(std::string_view graphJson,
                           const CompileOptions &options) {
  nlohmann::json doc = nlohmann::json::parse(graphJson, nullptr, false);
  if (doc.is_discarded() && lookupMachineModel(options.target)) {
    // Malformed: the importer's reader words the parse error (line, column).
    MLIRContext context(MLIRContext::Threading::DISABLED);
    ImportResult imported = importGraph(graphJson, context);
    if (!imported.ok()) {
      CompileResult r = failure(imported.errorKind, imported.message);
      r.detailsJson = imported.detailsJson();
      return r;
    }
  }
  return compileGraph(doc, options);
}

CompileResult compileGraph(const nlohmann::json &graphJson,
                           const CompileOptions &options) {
  if (!lookupMachineModel(options.target)) {
    return failure("compile_error", "unknown target '" + options.target +
                                        "' (known: " + knownTargetNames() +
                                        ")");
  }

  // fromJson refuses it too; a caller building CompileOptions by hand gets
  // the same words.
  if (options.lnc < 1 || options.lnc > lookupMachineModel(options.target)->maxLnc)
    return failure("compile_error",
                   "lnc=" + std::to_string(options.lnc) +
                       " is not supported on " + options.target +
                       ": its logical cores are at most " +
                       std::to_string(lookupMachineModel(options.target)->maxLnc) +
                       " physical core (Neuron \"Logical NeuronCore "
                       "configuration\", NCC_EARG001)");

  if (std::string limit = checkGraphLimits(graphJson, *lookupMachineModel(options.target));
      !limit.empty())
    return failure("resource_limit", limit);

  DialectRegistry registry;
  registry.insert<trn::TrnDialect, nisa::NisaDialect, func::FuncDialect,
                  memref::MemRefDialect>();
  DiagnosedContext diagnosed(registry);
  MLIRContext &context = diagnosed.context;
  std::string &diagnostics = diagnosed.diagnostics;

  ImportResult imported = importGraph(graphJson, context);
  if (!imported.ok()) {
    CompileResult r = failure(imported.errorKind, imported.message);
    r.detailsJson = imported.detailsJson();
    return r;
  }
  ModuleOp module = imported.module.get();
  std::string name = graphName(module);

  std::string inputIR;
  if (!options.dumpDir.empty()) {
    llvm::raw_string_ostream os(inputIR);
    module->print(os, OpPrintingFlags().enableDebugInfo());
  }

  PassManager pm(&context, ModuleOp::getOperationName());
  PipelineOptions pipeline;
  pipeline.target = options.target;
  pipeline.lnc = options.lnc;
  buildCompilePipeline(pm, pipeline);
  std::string failedPass;
  pm.addInstrumentation(std::make_unique<FailedPass>(&failedPass));
  // The module is verified once after the whole pipeline (below), not after
  // every pass: per-pass verification of a large graph's module was the
  // biggest single cost of the C++ compile (16% of densenet121's backward,
  // perf). trnc-opt and an IR capture (TORCH_LOGS=trnc_ir) still verify after
  // each pass, naming the pass that broke the IR.
  pm.enableVerifier(options.captureIR);
  std::string irDump;
  llvm::raw_string_ostream irStream(irDump);
  if (options.captureIR) {
    irStream << "// -----// IR Dump After import (graph JSON) //----- //\n";
    module->print(irStream);
    pm.enableIRPrinting([](Pass *, Operation *) { return false; },
                        [](Pass *, Operation *) { return true; },
                        /*printModuleScope=*/true,
                        /*printAfterOnlyOnChange=*/false,
                        /*printAfterOnlyOnFailure=*/false, irStream);
  }
  if (failed(pm.run(module))) {
    std::string message = "trnc failed to compile graph '" + name + "' for " +
                          options.target + ":\n" + diagnostics;
    if (!options.dumpDir.empty()) {
      std::string error;
      std::string path = dumpInput(options.dumpDir, name, inputIR, error);
      if (path.empty())
        message += "(could not dump the input IR: " + error + ")\n";
      else
        message += "reproduce with: trnc-opt --pass-pipeline='builtin.module("
                   "trnc-compile{target=" +
                   options.target + " lnc=" + std::to_string(options.lnc) +
                   "})' " + path + "\n";
    }
    CompileResult r = failure(failedPass == "trnc-trn-integer-range"
                                  ? "unsupported_integer_range"
                                  : "compile_error",
                              message);
    r.irDump = std::move(irDump);
    return r;
  }

  if (!options.captureIR && failed(verify(module)))
    return failure("compile_error", "trnc failed to compile graph '" + name +
                                        "': the pipeline produced invalid IR:\n" + diagnostics);

  CompileResult result = emitVerified(module, name, options.target);
  if (result.ok)
    result.irDump = std::move(irDump);
  return result;
}

CompileResult compileKernel(std::string_view nisaModule, const CompileOptions &options,
                            bool listSchedule) {
  if (!lookupMachineModel(options.target))
    return failure("compile_error", "unknown target '" + options.target + "'");
  DialectRegistry registry;
  registry.insert<nisa::NisaDialect, func::FuncDialect, memref::MemRefDialect>();
  DiagnosedContext diagnosed(registry);
  MLIRContext &context = diagnosed.context;
  std::string &diagnostics = diagnosed.diagnostics;
  // The parser verifies every op (the nisa verifiers name the hardware rule
  // each check enforces) at the location the tracer gave it.
  OwningOpRef<ModuleOp> module =
      parseSourceString<ModuleOp>(llvm::StringRef(nisaModule.data(), nisaModule.size()),
                                  ParserConfig(&context));
  if (!module)
    return failure("invalid_kernel", "invalid kernel:\n" + diagnostics);
  std::string name = graphName(*module);
  if (!module->lookupSymbol<func::FuncOp>("main"))
    return failure("invalid_kernel", "invalid kernel '" + name + "': no func.func @main");

  PassManager pm(&context, ModuleOp::getOperationName());
  KernelPipelineOptions pipeline;
  pipeline.target = options.target;
  pipeline.listSchedule = listSchedule;
  buildKernelPipeline(pm, pipeline);
  if (failed(pm.run(*module)))
    return failure("compile_error", "trnc failed to compile kernel '" + name + "' for " +
                                        options.target + ":\n" + diagnostics);
  return emitVerified(*module, name, options.target);
}

} // namespace trnc
