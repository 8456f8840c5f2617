//===- Cache.h - The on-disk artifact cache shared by processes ----*- C++ -*-===//
//
// Content-addressed: the key is a SHA-256 of the canonical graph, the options
// that change the output and the compiler identity (docs/cache.md). Entries
// are written to temporary files and renamed into place, so a reader sees a
// complete entry or none; every read re-verifies the artifact (checksums,
// format version, compiler identity), so a corrupt entry is a miss, never a
// crash. One lock per key (llvm::LockFileManager: owner pid checked, plus a
// timeout) makes concurrent processes compile a key once.
//
// MLIR-free and torch-free: the compile step is a callback, so this library
// links only LLVMSupport, nlohmann_json and the runtime's artifact reader.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "llvm/Support/Error.h"

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace trnc::cache {

/// The graph document without `name`, input/node names, `loc` and
/// `stack_trace`, node references renumbered in definition order (inputs
/// first), printed with sorted keys (docs/graph-json.md, "Canonical form").
llvm::Expected<std::string> canonicalGraph(std::string_view graphJson);

/// The compile options (CompileOptions::fromJson form) that change the
/// output: every key except the output-neutral ones (dump_dir), sorted.
/// New options are part of the key unless listed as output-neutral here.
llvm::Expected<std::string> outputOptions(std::string_view optionsJson);

/// The identity hashed into keys: `compilerIdentity` plus, when the
/// test-only TRNC_COMPILER_IDENTITY_OVERRIDE is set, "+test:<value>". It is
/// appended, never substituted, so no setting makes one compiler's key
/// collide with another's.
std::string keyIdentity(std::string_view compilerIdentity);

/// Lower-case hex SHA-256 of the canonical graph, output options and
/// keyIdentity(compilerIdentity).
llvm::Expected<std::string> computeKey(std::string_view graphJson,
                                       std::string_view optionsJson,
                                       std::string_view compilerIdentity);

/// What a warning is about, so callers can deduplicate them.
enum class WarningKind { InvalidEntry, Unwritable, StaleLock };

struct Warning {
  WarningKind kind;
  std::string message;
};

struct Lookup {
  enum class Status { Hit, Miss, Invalid };
  Status status = Status::Miss;
  std::vector<uint8_t> artifact; // Hit
  std::string reason;            // Invalid: why the entry was rejected
};

/// Compiles on a miss: fills `artifact` and returns true, or returns false
/// (the caller keeps its own error; nothing is stored).
using CompileFn = std::function<bool(std::vector<uint8_t> &artifact)>;

struct Outcome {
  bool ok = false;       // `artifact` holds a verified or freshly built artifact
  bool hit = false;      // served from the cache, no compile
  bool compiled = false; // the callback ran
  bool stored = false;   // a new entry was written
  double compileSeconds = 0.0;
  std::vector<uint8_t> artifact;
  std::vector<Warning> warnings;
};

class ArtifactCache {
public:
  /// `root` is the cache directory (TRNC_CACHE_DIR); entries live under
  /// root/v1/<key[0:2]>/. `compilerIdentity` is the real identity: entries
  /// built by another compiler are rejected on read.
  ArtifactCache(std::string root, std::string compilerIdentity);

  std::string entryDir() const;
  std::string artifactPath(std::string_view key) const;
  std::string manifestPath(std::string_view key) const;

  /// Reads and fully verifies an entry. With `touch`, a hit refreshes the
  /// entry's last-used time and hit count (best effort).
  Lookup lookup(std::string_view key, bool touch = true) const;

  /// Atomically writes the entry: artifact and manifest to temporary files,
  /// then renamed into place (manifest first, artifact last: the artifact's
  /// presence is what makes an entry). `manifestJson` is an object the
  /// caller fills (graph name, target, ...); sizes, times and the key are
  /// added here.
  llvm::Error store(std::string_view key, const std::vector<uint8_t> &artifact,
                    std::string_view manifestJson, double compileSeconds) const;

  /// lookup -> lock the key -> lookup again -> compile -> store. A lock
  /// whose owner died is taken over at once; one still held after
  /// `lockTimeoutSeconds` is broken with a warning. An unwritable directory
  /// compiles without caching (one Unwritable warning).
  Outcome getOrCompile(std::string_view key, std::string_view manifestJson,
                       const CompileFn &compile, unsigned lockTimeoutSeconds) const;

private:
  void touchEntry(std::string_view key) const;
  std::string root, identity;
};

/// Name of the test hook: seconds store() sleeps after writing the
/// temporary files and before renaming them (tests kill the writer there).
inline constexpr const char *kPauseBeforeRenameEnv = "TRNC_CACHE_TEST_PAUSE_BEFORE_RENAME";

} // namespace trnc::cache
