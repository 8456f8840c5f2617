//===- GraphJson.h - in-memory form of the graph JSON document ------*- C++ -*-===//
//
// The reader turns the JSON text into these plain structs and checks
// everything docs/graph-json.md promises (schema and version, field types,
// dtype names, node references in topological order, output metadata) so
// that the op importers can trust the graph and only reason about ATen
// semantics. Nothing here knows about MLIR.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace trnc::import {

inline constexpr const char *kSchemaName = "trnc.graph";
inline constexpr int64_t kSchemaVersion = 1;

/// Static tensor metadata: shape, strides and dtype name ("float32", ...).
struct TensorMeta {
  std::vector<int64_t> shape, stride;
  std::string dtype;
};

/// One encoded argument (docs/graph-json.md, "Argument encoding").
struct Arg {
  enum class Kind { None, Bool, Int, Float, Str, DType, Device, Enum, List, Ref };
  Kind kind = Kind::None;
  bool boolean = false;
  int64_t integer = 0;
  double number = 0.0;
  std::string text; // Str, DType, Device, Enum payload; Ref: node name
  int64_t index = -1; // Ref: element of a multi-output node, -1 when absent
  std::vector<Arg> list;

  bool isTensor() const { return kind == Kind::Ref; }
  /// Int, Float or Bool: a Python scalar.
  bool isNumber() const {
    return kind == Kind::Int || kind == Kind::Float || kind == Kind::Bool;
  }
  double asDouble() const {
    return kind == Kind::Float ? number
           : kind == Kind::Int ? static_cast<double>(integer)
                               : (boolean ? 1.0 : 0.0);
  }
  /// Short description for messages: "a tensor", "the int 3", "None", ...
  std::string describe() const;
};

struct SourceLoc {
  std::string file, code;
  unsigned line = 0;
};

struct Node {
  std::string name, target;
  std::vector<Arg> args;
  std::vector<std::pair<std::string, Arg>> kwargs;
  /// One entry per result; an entry is empty for a non-tensor result.
  std::vector<std::optional<TensorMeta>> results;
  bool multiResult = false; // meta was a list
  bool hasMeta = false;     // meta was not null
  std::optional<SourceLoc> loc;
};

struct GraphInput {
  std::string name;
  TensorMeta meta;
  /// Optional "max_abs": the largest magnitude the caller guarantees (a
  /// lifted integer constant's, checked at every call); < 0 when absent.
  double maxAbs = -1;
  /// Optional "fp32_exact": every value survives the engines' fp32 reads.
  bool fp32Exact = false;
};

struct GraphOutput {
  std::string node;
  int64_t index = -1;
  TensorMeta meta;
};

struct Graph {
  std::string name;
  std::vector<GraphInput> inputs;
  std::vector<Node> nodes;
  std::vector<GraphOutput> outputs;
};

/// Parses and validates `json`. On failure returns false and sets `error` to
/// a message that names the offending field (e.g. "nodes[2].args[0]").
bool readGraph(std::string_view json, Graph &graph, std::string &error);
/// Validates an already parsed document (compileGraph parses once for the
/// limit check and the importer).
bool readGraph(const nlohmann::json &doc, Graph &graph, std::string &error);

/// True for dtype names the document may carry (docs/graph-json.md).
bool isKnownDtype(std::string_view dtype);
/// True for the dtypes the backend computes in: float32, bfloat16, float16.
bool isSupportedDtype(std::string_view dtype);

} // namespace trnc::import
