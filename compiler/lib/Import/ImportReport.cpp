//===- ImportReport.cpp - the messages an import failure shows ------------===//
//
// The unsupported-operator message follows torch-mlir's backend-contract
// habit: every missing operator at once, with its count and every use's
// source line, then where the missing lowering belongs.
//
//===----------------------------------------------------------------------===//
#include "ImportReport.h"

#include <nlohmann/json.hpp>

namespace trnc {

namespace import {

std::string messageHeader(const std::string &graphName) {
  return graphName.empty() ? "trnc cannot compile this graph"
                           : "trnc cannot compile graph '" + graphName + "'";
}

std::string describeUse(const OperatorUse &use) {
  if (use.file.empty())
    return "node '" + use.node + "' (no source location)";
  std::string s = use.file + ":" + std::to_string(use.line);
  return use.code.empty() ? s : s + ": " + use.code;
}

static std::string plural(size_t n, const char *one, const char *many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

std::string formatUnsupportedOperators(
    const std::string &graphName, const std::vector<UnsupportedOperator> &ops) {
  std::string s = messageHeader(graphName) + ": " +
                  plural(ops.size(), "operator has", "operators have") +
                  " no lowering\n";
  for (const UnsupportedOperator &op : ops) {
    s += "  " + op.target + " (" + plural(op.uses.size(), "use", "uses") + ")";
    s += op.reason.empty() ? "\n" : ": " + op.reason + "\n";
    for (const OperatorUse &use : op.uses)
      s += "    " + describeUse(use) + "\n";
  }
  s += "The lowering for each belongs in compiler/lib/Import/ (trn) and "
       "passes/ (nisa).";
  return s;
}

std::string formatUnsupportedDtypes(const std::string &graphName,
                                    const std::vector<UnsupportedDtype> &dtypes) {
  std::string s = messageHeader(graphName) + ": " +
                  plural(dtypes.size(), "tensor has an unsupported dtype",
                         "tensors have unsupported dtypes") +
                  " (trnc computes in float32, bfloat16, float16, int32, "
                  "int64 and bool)\n";
  for (const UnsupportedDtype &d : dtypes) {
    if (d.target.empty())
      s += "  input '" + d.node + "': " + d.dtype + "\n";
    else
      s += "  node '" + d.node + "' (" + d.target + "): " + d.dtype + " at " +
           describeUse(d.use) + "\n";
  }
  s += "Cast to a supported dtype before the compiled region, or keep this "
       "computation out of torch.compile.";
  return s;
}

} // namespace import

std::string ImportResult::detailsJson() const {
  using json = nlohmann::ordered_json;
  auto location = [](const OperatorUse &use) {
    return json{{"node", use.node},
                {"file", use.file},
                {"line", use.line},
                {"code", use.code}};
  };
  json ops = json::array();
  for (const UnsupportedOperator &op : unsupported) {
    json entry = {{"target", op.target}, {"count", op.uses.size()}};
    if (!op.reason.empty())
      entry["reason"] = op.reason;
    json locations = json::array();
    for (const OperatorUse &use : op.uses)
      locations.push_back(location(use));
    entry["locations"] = std::move(locations);
    ops.push_back(std::move(entry));
  }
  json doc = {{"unsupported", std::move(ops)}};
  if (!unsupportedDtypes.empty()) {
    json dtypes = json::array();
    for (const UnsupportedDtype &d : unsupportedDtypes) {
      json entry = location(d.use);
      entry["node"] = d.node;
      entry["target"] = d.target;
      entry["dtype"] = d.dtype;
      dtypes.push_back(std::move(entry));
    }
    doc["unsupported_dtypes"] = std::move(dtypes);
  }
  // Replace invalid UTF-8 (source lines are the user's bytes) rather than
  // throw.
  return doc.dump(-1, ' ', false, json::error_handler_t::replace);
}

} // namespace trnc
