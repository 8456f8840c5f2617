//===- GraphImporter.h - graph JSON -> trn dialect ------------------*- C++ -*-===//
//
// The importer's public API: reads one graph JSON document
// (docs/graph-json.md) and builds a module holding `func.func @main` in the
// trn dialect. It never aborts: malformed documents, operators without a
// lowering and dtypes the backend cannot compute in all come back as an
// ImportResult error whose message names every offending node with the
// user's source line.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"

#include <nlohmann/json_fwd.hpp>

#include <string>
#include <string_view>
#include <vector>

namespace trnc {

/// One node that uses an unsupported operator, with the user's source line
/// (`file` empty and `line` 0 when the node has no location).
struct OperatorUse {
  std::string node, file, code;
  unsigned line = 0;
};

/// An ATen target without a lowering, or one whose importer rejected its
/// arguments (then `reason` says why, e.g. division by a tensor).
struct UnsupportedOperator {
  std::string target;
  std::vector<OperatorUse> uses;
  std::string reason; // empty: no importer for the target at all
};

/// A graph input, node result or output whose dtype the backend cannot
/// compute in (float32, bfloat16, float16, int32, int64, bool).
struct UnsupportedDtype {
  std::string node;   // input or node name
  std::string target; // empty for graph inputs
  std::string dtype;  // e.g. "float64"
  OperatorUse use;    // source location of the node
};

struct ImportResult {
  mlir::OwningOpRef<mlir::ModuleOp> module; // null on failure
  /// On failure: "invalid_graph" (the document breaks docs/graph-json.md or
  /// is inconsistent), "unsupported_operator" or "unsupported_dtype".
  std::string errorKind;
  std::string message; // complete human-readable message
  /// Every unsupported operator, in first-use order.
  std::vector<UnsupportedOperator> unsupported;
  /// Every tensor with an unsupported dtype, in graph order.
  std::vector<UnsupportedDtype> unsupportedDtypes;

  bool ok() const { return static_cast<bool>(module); }
  /// {"unsupported":[{"target":..,"count":..,"reason":..,"locations":
  ///   [{"node","file","line","code"}]}], "unsupported_dtypes":[{"node",
  ///   "target","dtype","file","line","code"}]} (`reason` only when set).
  std::string detailsJson() const;
};

/// Imports `json` into a new module in `context` (loads the trn and func
/// dialects). `func.func @main` has one argument per graph input and one
/// result per graph output, each with a `trn.stride` attribute; the func has
/// `trn.graph_name`. Ops are located at NameLoc(node, FileLineColLoc(file,
/// line, 0)).
ImportResult importGraph(std::string_view json, mlir::MLIRContext &context);
/// The same for a document already parsed from graph JSON.
ImportResult importGraph(const nlohmann::json &doc, mlir::MLIRContext &context);

} // namespace trnc
