//===- CacheBindings.cpp - trnc._C bindings of the artifact cache ---------===//
//
// Exposes compiler/lib/Cache to python/trnc/cache.py: the key, a verified
// lookup, and get_or_compile, which runs the whole lookup -> lock -> compile
// -> atomic store protocol in C++ with the GIL released, compiling with
// trnc::compileGraph on a miss. Warnings come back as (kind, message) pairs
// so Python can issue (and deduplicate) them as TrncCacheWarning.
//
//===----------------------------------------------------------------------===//

#include "artifact/Artifact.h"
#include "trnc/Compiler/Cache.h"
#include "trnc/Compiler/Compile.h"

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <atomic>
#include <string>
#include <vector>

namespace py = pybind11;
using namespace trnc;

namespace {

/// Real compiles (import + MLIR pipeline + emit) run through the cache.
std::atomic<uint64_t> compileCount{0};

py::bytes toBytes(const std::vector<uint8_t> &v) {
  return py::bytes(reinterpret_cast<const char *>(v.data()), v.size());
}

const char *kindName(cache::WarningKind k) {
  switch (k) {
  case cache::WarningKind::InvalidEntry: return "invalid_entry";
  case cache::WarningKind::Unwritable: return "unwritable";
  case cache::WarningKind::StaleLock: return "stale_lock";
  }
  return "unknown";
}

std::string cacheKey(const std::string &graphJson, const std::string &optionsJson) {
  llvm::Expected<std::string> key =
      cache::computeKey(graphJson, optionsJson, compilerIdentity());
  if (!key)
    throw py::value_error(llvm::toString(key.takeError()));
  return *key;
}

py::dict lookup(const std::string &root, const std::string &key, bool touch) {
  cache::Lookup l;
  {
    py::gil_scoped_release noGil;
    l = cache::ArtifactCache(root, compilerIdentity()).lookup(key, touch);
  }
  py::dict out;
  out["status"] = l.status == cache::Lookup::Status::Hit    ? "hit"
                  : l.status == cache::Lookup::Status::Miss ? "miss"
                                                            : "invalid";
  out["reason"] = l.reason;
  out["stale"] = l.stale;
  out["artifact"] = l.status == cache::Lookup::Status::Hit ? py::object(toBytes(l.artifact))
                                                           : py::object(py::none());
  return out;
}

py::dict getOrCompile(const std::string &root, const std::string &key,
                      const std::string &graphJson, const std::string &optionsJson,
                      const std::string &manifestJson, unsigned lockTimeoutSeconds) {
  py::dict out;
  CompileOptions options;
  std::string optionsError;
  if (!CompileOptions::fromJson(optionsJson, options, optionsError)) {
    out["ok"] = false;
    out["hit"] = false;
    out["compiled"] = false;
    out["stored"] = false;
    out["compile_seconds"] = 0.0;
    out["artifact"] = py::none();
    out["error_kind"] = "invalid_options";
    out["message"] = "invalid compile options: " + optionsError;
    out["details"] = "{}";
    out["warnings"] = py::list();
    return out;
  }
  CompileResult failure;
  cache::Outcome outcome;
  {
    py::gil_scoped_release noGil;
    cache::ArtifactCache store(root, compilerIdentity());
    outcome = store.getOrCompile(
        key, manifestJson,
        [&](std::vector<uint8_t> &artifact) {
          ++compileCount;
          CompileResult r = compileGraph(graphJson, options);
          if (!r.ok) {
            failure = std::move(r);
            return false;
          }
          artifact = writeArtifact(r.program);
          return true;
        },
        lockTimeoutSeconds);
  }
  out["ok"] = outcome.ok;
  out["hit"] = outcome.hit;
  out["compiled"] = outcome.compiled;
  out["stored"] = outcome.stored;
  out["compile_seconds"] = outcome.compileSeconds;
  out["artifact"] = outcome.ok ? py::object(toBytes(outcome.artifact)) : py::object(py::none());
  out["error_kind"] = failure.errorKind;
  out["message"] = failure.message;
  out["details"] = failure.detailsJson;
  py::list warnings;
  for (const cache::Warning &w : outcome.warnings)
    warnings.append(py::make_tuple(kindName(w.kind), w.message));
  out["warnings"] = warnings;
  return out;
}

} // namespace

namespace trnc::python {

void registerCacheBindings(py::module_ &m) {
  m.def("cache_key", &cacheKey, py::arg("graph_json"), py::arg("options_json"),
        "Hex SHA-256 cache key of a graph JSON document and compile options "
        "(docs/cache.md); raises ValueError on a malformed graph.");
  m.def(
      "canonical_graph",
      [](const std::string &graphJson) {
        llvm::Expected<std::string> c = cache::canonicalGraph(graphJson);
        if (!c)
          throw py::value_error(llvm::toString(c.takeError()));
        return *c;
      },
      py::arg("graph_json"), "The canonical form of a graph JSON document (hashed into keys).");
  m.def("cache_lookup", &lookup, py::arg("cache_dir"), py::arg("key"), py::arg("touch") = false,
        "Read and verify one entry: dict with status ('hit'|'miss'|'invalid'), "
        "reason, artifact (bytes or None).");
  m.def("cache_get_or_compile", &getOrCompile, py::arg("cache_dir"), py::arg("key"),
        py::arg("graph_json"), py::arg("options_json"), py::arg("manifest_json"),
        py::arg("lock_timeout_seconds"),
        "Lookup, else lock the key, compile and store atomically. Dict with ok, hit, "
        "compiled, stored, compile_seconds, artifact, error_kind, message, details, "
        "warnings [(kind, message)].");
  m.def(
      "cache_compile_count", []() { return compileCount.load(); },
      "Number of real compiles (import + MLIR pipeline) run through the cache by this process.");
  m.attr("CACHE_PAUSE_BEFORE_RENAME_ENV") = cache::kPauseBeforeRenameEnv;
}

} // namespace trnc::python
