//===- SupportBindings.cpp - trnc._C binding of the importer alone --------===//
//
// `check_graph(graph_json) -> dict` runs only the graph importer
// (trnc::importGraph) on one graph JSON document: no passes, no emission, no
// simulation. trnc.check_support (python/trnc/support.py) uses it to report,
// before compiling anything, which operators and dtypes of a model would not
// lower. The result mirrors a failed compile's: ok, error_kind, message and
// details (the importer's detailsJson: unsupported operators with counts and
// source lines, unsupported dtypes).
//
//===----------------------------------------------------------------------===//

#include "trnc/Compiler/GraphImporter.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"

#include <pybind11/pybind11.h>

#include <string>

namespace py = pybind11;

namespace trnc::python {

namespace {

py::dict checkGraph(const std::string &graphJson) {
  ImportResult result;
  std::string diagnostics;
  {
    py::gil_scoped_release noGil;
    mlir::MLIRContext context(mlir::MLIRContext::Threading::DISABLED);
    // The importer reports through ImportResult; keep stray diagnostics off stderr.
    mlir::ScopedDiagnosticHandler handler(&context, [&](mlir::Diagnostic &diag) {
      diagnostics += diag.str() + "\n";
      return mlir::success();
    });
    result = importGraph(graphJson, context);
    result.module = nullptr; // destroy the module while its context lives
  }
  py::dict out;
  out["ok"] = result.errorKind.empty();
  out["error_kind"] = result.errorKind;
  out["message"] = result.message;
  out["details"] = result.errorKind.empty() ? std::string("{}") : result.detailsJson();
  out["diagnostics"] = diagnostics;
  return out;
}

} // namespace

void registerSupportBindings(py::module_ &m) {
  m.def("check_graph", &checkGraph, py::arg("graph_json"),
        "Import one graph JSON document only (no compile); returns "
        "{ok, error_kind, message, details, diagnostics}.");
}

} // namespace trnc::python
