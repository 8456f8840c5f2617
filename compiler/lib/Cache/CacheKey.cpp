//===- CacheKey.cpp - canonical graph form and the cache key --------------===//
//
// Two traces of the same program must hash the same, and anything that can
// change the artifact must change the hash. The canonical graph keeps every
// field the importer reads except names and source locations; references
// become definition indices, so renaming `mm_3` to `mm_7` changes nothing.
// Computed here (not in Python) so `trnc compile` and the backend agree.
//
//===----------------------------------------------------------------------===//
#include "trnc/Compiler/Cache.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/SHA256.h"

#include <nlohmann/json.hpp>

#include <cstdlib>
#include <map>

using nlohmann::json;

namespace trnc::cache {
namespace {

llvm::Error invalid(const std::string &what) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 "cannot compute the cache key: " + what);
}

/// Replaces {"node": "name", ...} by {"node": index, ...} everywhere in `v`.
bool renumber(json &v, const std::map<std::string, int64_t> &ids, std::string &bad) {
  if (v.is_array()) {
    for (json &e : v)
      if (!renumber(e, ids, bad))
        return false;
  } else if (v.is_object()) {
    auto ref = v.find("node");
    if (ref != v.end() && ref->is_string()) {
      auto id = ids.find(ref->get<std::string>());
      if (id == ids.end()) {
        bad = ref->get<std::string>();
        return false;
      }
      *ref = id->second;
      return true;
    }
    for (auto it = v.begin(); it != v.end(); ++it)
      if (!renumber(it.value(), ids, bad))
        return false;
  }
  return true;
}

/// Defines `doc[field][i].name` as the next id and drops the name.
llvm::Error number(json &doc, const char *field, std::map<std::string, int64_t> &ids) {
  json &list = doc[field];
  if (!list.is_array())
    return invalid(std::string("'") + field + "' is not a list");
  for (json &entry : list) {
    if (!entry.is_object() || !entry.contains("name") || !entry["name"].is_string())
      return invalid(std::string("an entry of '") + field + "' has no name");
    int64_t id = static_cast<int64_t>(ids.size());
    ids.emplace(entry["name"].get<std::string>(), id);
    entry.erase("name");
  }
  return llvm::Error::success();
}

} // namespace

llvm::Expected<std::string> canonicalGraph(std::string_view graphJson) {
  json doc = json::parse(graphJson, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object())
    return invalid("the graph is not a JSON object");
  doc.erase("name");
  std::map<std::string, int64_t> ids;
  if (llvm::Error e = number(doc, "inputs", ids))
    return std::move(e);
  if (llvm::Error e = number(doc, "nodes", ids))
    return std::move(e);
  for (json &node : doc["nodes"]) {
    node.erase("loc");
    node.erase("stack_trace");
  }
  std::string bad;
  for (const char *field : {"nodes", "outputs"})
    if (doc.contains(field) && !renumber(doc[field], ids, bad))
      return invalid("reference to unknown node '" + bad + "'");
  // nlohmann's object is a std::map: keys print sorted, numbers round-trip.
  return doc.dump();
}

llvm::Expected<std::string> outputOptions(std::string_view optionsJson) {
  json doc = json::parse(optionsJson, nullptr, false);
  if (doc.is_discarded() || !doc.is_object())
    return invalid("the compile options are not a JSON object");
  // Options that cannot change the artifact. Everything else is keyed.
  for (const char *neutral : {"dump_dir"})
    doc.erase(neutral);
  return doc.dump();
}

std::string keyIdentity(std::string_view compilerIdentity) {
  std::string id(compilerIdentity);
  if (const char *extra = std::getenv("TRNC_COMPILER_IDENTITY_OVERRIDE"); extra && *extra)
    id += std::string("+test:") + extra;
  return id;
}

llvm::Expected<std::string> computeKey(std::string_view graphJson,
                                       std::string_view optionsJson,
                                       std::string_view compilerIdentity) {
  llvm::Expected<std::string> graph = canonicalGraph(graphJson);
  if (!graph)
    return graph.takeError();
  llvm::Expected<std::string> options = outputOptions(optionsJson);
  if (!options)
    return options.takeError();
  // A JSON envelope frames the parts unambiguously.
  json envelope = {{"key_version", 1},
                   {"graph", *graph},
                   {"options", *options},
                   {"compiler", keyIdentity(compilerIdentity)}};
  std::array<uint8_t, 32> digest = llvm::SHA256::hash(
      llvm::arrayRefFromStringRef(envelope.dump()));
  return llvm::toHex(digest, /*LowerCase=*/true);
}

} // namespace trnc::cache
