//===- GraphLimits.cpp - Refuse graphs past the device's limits, early ----===//
//
// Some graphs are valid but cannot be run: a tensor larger than the chip's
// HBM, or a program whose straight-line instruction streams would grow to
// gigabytes (trnc unrolls every tile; `(x.t() @ x).sum()` with x [1, 90000]
// has an [90000, 90000] intermediate). Those are the user's limits, not
// compiler bugs: checkGraphLimits reads the parsed graph JSON before anything is
// lowered and names the tensor, the op and the user's source line, with the
// size it would need, in seconds instead of after minutes of lowering.
//
//===----------------------------------------------------------------------===//
#include "trnc/Compiler/Compile.h"

#include "isa/Isa.h"
#include "machine/MachineModel.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>

using nlohmann::json;

namespace trnc {
namespace {

/// Bytes per element as the program stores a graph dtype in HBM (float64 is
/// computed as float32: docs/coverage.md), 0 for an unknown name.
unsigned elementBytes(const std::string &dtype) {
  if (dtype == "float32" || dtype == "int32" || dtype == "float64" || dtype == "uint32")
    return 4;
  if (dtype == "bfloat16" || dtype == "float16" || dtype == "int16")
    return 2;
  if (dtype == "int64")
    return 8;
  if (dtype == "bool" || dtype == "uint8" || dtype == "int8")
    return 1;
  if (dtype == "complex64")
    return 8;
  return 0;
}

std::string humanBytes(double b) {
  char text[32];
  const char *units[] = {"B", "KB", "MB", "GB", "TB", "PB"};
  int u = 0;
  while (b >= 1000 && u < 5) {
    b /= 1000;
    ++u;
  }
  std::snprintf(text, sizeof text, u ? "%.1f %s" : "%.0f %s", b, units[u]);
  return text;
}

struct TensorMeta {
  double elements = 1;
  double bytes = 0;
  std::string shape;
};

/// The elements and bytes one {"shape", "stride", "dtype"} object spans (a
/// view with stride 0, e.g. an expand, spans only what it addresses); false
/// if it is not such an object.
bool metaOf(const json &m, TensorMeta &out) {
  if (!m.is_object() || !m.contains("shape") || !m["shape"].is_array() ||
      !m.contains("dtype") || !m["dtype"].is_string())
    return false;
  const json &shape = m["shape"];
  const json *stride = m.contains("stride") && m["stride"].is_array() &&
                               m["stride"].size() == shape.size()
                           ? &m["stride"]
                           : nullptr;
  out = TensorMeta();
  out.shape = "[";
  double numel = 1, last = 0;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (!shape[i].is_number_integer())
      return false;
    int64_t d = std::max<int64_t>(shape[i].get<int64_t>(), 0);
    numel *= double(d);
    if (stride && (*stride)[i].is_number_integer() && d > 0)
      last += double(d - 1) * std::fabs(double((*stride)[i].get<int64_t>()));
    out.shape += (i ? ", " : "") + std::to_string(d);
  }
  out.shape += "]";
  out.elements = numel == 0 ? 0 : stride ? std::min(numel, last + 1) : numel;
  out.bytes = out.elements * elementBytes(m["dtype"].get<std::string>());
  return true;
}

/// "'mm' (aten.mm.default at model.py:12: x.t() @ x)".
std::string where(const json &node) {
  std::string s = "'" + (node.contains("name") && node["name"].is_string()
                             ? node["name"].get<std::string>()
                             : std::string("?")) +
                  "'";
  std::string target = node.contains("target") && node["target"].is_string()
                           ? node["target"].get<std::string>()
                           : "";
  std::string loc;
  if (node.contains("loc") && node["loc"].is_object()) {
    const json &l = node["loc"];
    if (l.contains("file") && l["file"].is_string())
      loc = l["file"].get<std::string>();
    if (l.contains("line") && l["line"].is_number_integer())
      loc += ":" + std::to_string(l["line"].get<int64_t>());
    if (l.contains("code") && l["code"].is_string())
      loc += ": " + l["code"].get<std::string>();
  }
  if (target.empty() && loc.empty())
    return s;
  return s + " (" + target + (loc.empty() ? "" : (target.empty() ? "at " : " at ") + loc) + ")";
}

bool isMatmulLike(const json &node) {
  if (!node.contains("target") || !node["target"].is_string())
    return false;
  std::string t = node["target"].get<std::string>();
  for (const char *op : {"aten.mm.", "aten.bmm.", "aten.addmm.", "aten.matmul.", "aten.baddbmm.",
                         "aten.convolution."})
    if (t.rfind(op, 0) == 0)
      return true;
  return false;
}

} // namespace

std::string checkGraphLimits(const json &doc, const MachineModel &model) {
  if (!doc.is_object())
    return ""; // malformed: the importer reports it properly
  std::string graph = doc.contains("name") && doc["name"].is_string()
                          ? doc["name"].get<std::string>()
                          : "graph";
  const double hbm = double(model.hbmBytes);
  double instructions = 0;
  std::string largest;
  double largestElements = 0;
  auto check = [&](const json &meta, const std::string &what,
                   double perInstruction = kLimitElementsPerInstruction) -> std::string {
    TensorMeta t;
    if (!metaOf(meta, t))
      return "";
    if (t.bytes > hbm)
      return "graph '" + graph + "': " + what + " " + t.shape + " needs " + humanBytes(t.bytes) +
             ", more than the " + std::to_string(model.hbmBytes >> 30) + " GiB of HBM of " +
             model.name +
             ". This is a limit of the device, not a compiler error: split the computation "
             "(smaller batches or chunks) so that no single tensor exceeds it";
    instructions += std::ceil(t.elements / perInstruction);
    if (t.elements > largestElements) {
      largestElements = t.elements;
      largest = what + " " + t.shape;
    }
    return "";
  };
  // Nodes first: an output is a node's result, and the node names the line.
  if (doc.contains("nodes") && doc["nodes"].is_array())
    for (const json &node : doc["nodes"]) {
      if (!node.is_object() || !node.contains("meta"))
        continue;
      const json &meta = node["meta"];
      std::string what = "the result of node " + where(node);
      double per = isMatmulLike(node) ? kLimitMatmulElementsPerInstruction
                                      : kLimitElementsPerInstruction;
      for (const json &m : meta.is_array() ? meta : json::array({meta}))
        if (std::string e = check(m, what, per); !e.empty())
          return e;
    }
  for (const char *field : {"inputs", "outputs"}) {
    if (!doc.contains(field) || !doc[field].is_array())
      continue;
    size_t i = 0;
    for (const json &spec : doc[field]) {
      std::string what = std::string(field == std::string("inputs") ? "input " : "output ") +
                         std::to_string(i++);
      if (spec.is_object() && spec.contains("name") && spec["name"].is_string())
        what += " '" + spec["name"].get<std::string>() + "'";
      if (std::string e = check(spec, what); !e.empty())
        return e;
    }
  }
  double artifactBytes = instructions * double(isa::kInstructionBytes);
  if (artifactBytes > double(kMaxEstimatedArtifactBytes))
    return "graph '" + graph + "' is too large to compile: trnc emits straight-line code, one "
           "instruction stream entry per tile, so its artifact would need at least " +
           humanBytes(artifactBytes) + " (" + std::to_string(uint64_t(instructions)) +
           " instructions or more; the largest tensor is " + largest + "), more than the " +
           humanBytes(double(kMaxEstimatedArtifactBytes)) +
           " trnc accepts. Split the computation so that its intermediates are smaller";
  return "";
}

} // namespace trnc
