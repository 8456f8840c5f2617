//===- CompileFuzzer.cpp - libFuzzer target: graph JSON into the compiler -===//
//
// Graph JSON is what anyone who can hand trnc a graph controls (a file for
// trnc compile-graph, or a document a tool writes). Each input is one graph
// document, parsed once here and fed to compileGraph: the JSON reader, the
// importer, the trn verifiers, the whole MLIR pipeline, the emitter and the
// artifact verifier.
// A compile must end ok or with an error kind and a message; a crash, a
// sanitizer report, or a failure the driver itself calls an internal error
// (a program that fails its own verification) is a finding. Documents whose
// tensors exceed kMaxElements elements are skipped: they are legal, but
// their straight-line programs grow with the tensors (GraphLimits bounds that
// for users; a fuzzer only needs small shapes to reach every path).
// Built in its own sanitizer configuration (scripts/fuzz.sh, build-fuzz-
// compiler: the compiler, passes and dialects instrumented; MLIR/LLVM from
// Debian are not). Seeds: compiler/fuzz/seeds, real exported graphs
// (scripts/fuzz_graph_seeds.py).
//
//===----------------------------------------------------------------------===//
#include "trnc/Compiler/Compile.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <cstdlib>
#include <string_view>

namespace {

constexpr double kMaxElements = 1 << 14;
constexpr size_t kMaxNodes = 96;

/// Largest element count of any "shape" array (or size list) in `v`.
double largestShape(const nlohmann::json &v, int depth = 0) {
  if (depth > 32)
    return kMaxElements + 1; // nesting this deep: not worth compiling
  double largest = 0;
  if (v.is_object()) {
    for (auto it = v.begin(); it != v.end(); ++it) {
      if (it.key() == "shape" && it.value().is_array()) {
        double n = 1;
        for (const auto &d : it.value())
          n *= d.is_number() ? std::max(std::abs(d.get<double>()), 1.0) : 1.0;
        largest = std::max(largest, n);
      }
      largest = std::max(largest, largestShape(it.value(), depth + 1));
    }
  } else if (v.is_array()) {
    // A list of ints may be a size argument (zeros, full, view, expand).
    double n = 1;
    for (const auto &d : v) {
      largest = std::max(largest, largestShape(d, depth + 1));
      if (d.is_number())
        n *= std::max(std::abs(d.get<double>()), 1.0);
    }
    largest = std::max(largest, n);
  }
  return largest;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string_view text(reinterpret_cast<const char *>(data), size);
  nlohmann::json doc = nlohmann::json::parse(text, nullptr, false);
  if (!doc.is_discarded()) {
    if (largestShape(doc) > kMaxElements)
      return -1; // not added to the corpus
    if (doc.is_object() && doc.contains("nodes") && doc["nodes"].is_array() &&
        doc["nodes"].size() > kMaxNodes)
      return -1;
  }
  trnc::CompileOptions options; // trn2
  // Parsed once: a malformed document takes the text path (the reader's
  // parse error), a parsed one is compiled as is.
  trnc::CompileResult result = doc.is_discarded()
                                   ? trnc::compileGraph(text, options)
                                   : trnc::compileGraph(doc, options);
  if (!result.ok && result.errorKind.empty()) {
    std::fprintf(stderr, "compile failed without an error kind: %s\n",
                 result.message.c_str());
    std::abort();
  }
  // The driver's own verdicts on its output ("internal error: the emitted
  // program ... fails verification", "internal error while emitting"); a
  // message merely quoting the input does not start with them.
  if (!result.ok && result.errorKind == "compile_error" &&
      result.message.rfind("internal error", 0) == 0) {
    std::fprintf(stderr, "compiler internal error (%s): %s\n",
                 result.errorKind.c_str(), result.message.c_str());
    std::abort();
  }
  return 0;
}
