//===- Cache.h - The on-disk artifact cache shared by processes ----*- C++ -*-===//
//
// Content-addressed: the key is a SHA-256 of the canonical graph, the options
// that change the output and the compiler identity (docs/cache.md). Entries
// are written to temporary files and renamed into place, so a reader sees a
// complete entry or none; every read re-verifies the artifact (checksums,
// format version, compiler identity) and its binding (the key recorded in
// the artifact and its manifest, the I/O signature, the artifact's SHA-256
// and an HMAC with the cache's secret), so a corrupt, planted or swapped
// entry is a miss, never a wrong answer or a crash. One lock per key (llvm::LockFileManager: owner pid checked, plus a
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
#include <optional>
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

/// Largest artifact / manifest file a lookup reads (anything larger is an
/// invalid entry, not an allocation).
inline constexpr uint64_t kMaxArtifactFileBytes = uint64_t(4) << 30;
inline constexpr uint64_t kMaxManifestFileBytes = uint64_t(1) << 20;

/// The contents of `path` if it is a regular file of at most `maxBytes`;
/// nullopt if it does not exist. Never follows a symlink, never blocks on a
/// FIFO or device (O_NOFOLLOW | O_NONBLOCK, then fstat). Anything else
/// (a symlink, a FIFO, a directory, too large, unreadable) is an error.
llvm::Expected<std::optional<std::string>> readRegularFile(const std::string &path,
                                                           uint64_t maxBytes);

/// Lower-case hex SHA-256 of `data`.
std::string sha256Hex(llvm::ArrayRef<uint8_t> data);
/// Lower-case hex HMAC-SHA256 (RFC 2104) of `message` under `key`.
std::string hmacSha256Hex(llvm::StringRef key, llvm::StringRef message);
/// The MAC a manifest records: HMAC-SHA256 under the cache secret of the
/// key, the artifact's SHA-256 and its I/O signature (length-prefixed).
std::string entryMac(llvm::StringRef secret, llvm::StringRef key, llvm::StringRef artifactSha256,
                     llvm::StringRef ioSignature);
/// Constant-time comparison of two MACs.
bool sameMac(llvm::StringRef a, llvm::StringRef b);
/// <root>/secret.
std::string secretPath(const std::string &root);
/// The cache's secret bytes, read from secretPath(root); with `create`, a
/// missing secret is made (32 random bytes, hex, mode 0600, linked into
/// place so racing processes agree). Refused unless it is a regular file
/// owned by this user with no group/other permission bits.
llvm::Expected<std::string> loadSecret(const std::string &root, bool create);

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
  /// Invalid only because another trnc wrote it (another compiler identity
  /// or artifact format), and its manifest authenticates it as this cache's
  /// own: stale, not corrupt. Never served either way.
  bool stale = false;
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

/// Longest wait for a lock held by a process on another host (its pid cannot
/// be checked from here): then it is broken with a StaleLock warning. A live
/// owner loses nothing but a duplicate compile (both writes are atomic).
inline constexpr unsigned kForeignLockWaitSeconds = 30;

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
  /// presence is what makes an entry). `artifact` must be a valid artifact;
  /// it is bound to `key` in place first (the key recorded in its metadata,
  /// "cache_key"), so the caller holds exactly the stored bytes.
  /// `manifestJson` is an object the caller fills (graph name, target, ...);
  /// sizes, times, the key, the I/O signature, the artifact's SHA-256 and
  /// the MAC (with the cache secret, created on first use) are added here.
  llvm::Error store(std::string_view key, std::vector<uint8_t> &artifact,
                    std::string_view manifestJson, double compileSeconds) const;

  /// lookup -> lock the key -> lookup again -> compile -> store. A lock
  /// whose owner died is taken over at once; one still held after
  /// `lockTimeoutSeconds` is broken with a warning. An unwritable directory
  /// compiles without caching (one Unwritable warning).
  Outcome getOrCompile(std::string_view key, std::string_view manifestJson,
                       const CompileFn &compile, unsigned lockTimeoutSeconds) const;

  /// How long getOrCompile waits for a lock held by another host
  /// (kForeignLockWaitSeconds unless a test shortens it).
  void setForeignLockWaitSeconds(unsigned seconds) { foreignLockWait = seconds; }

private:
  void touchEntry(std::string_view key) const;
  /// Whether `key`'s manifest authenticates `bytes` (its artifact) as an
  /// entry this cache stored, whichever trnc wrote it.
  bool ownEntry(std::string_view key, const std::string &bytes) const;
  std::string root, identity;
  unsigned foreignLockWait = kForeignLockWaitSeconds;
};

/// Name of the test hook: seconds store() sleeps after writing the
/// temporary files and before renaming them (tests kill the writer there),
/// or, when the value is an absolute path, until that file exists.
inline constexpr const char *kPauseBeforeRenameEnv = "TRNC_CACHE_TEST_PAUSE_BEFORE_RENAME";

} // namespace trnc::cache
