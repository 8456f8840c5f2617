//===- CacheStore.cpp - atomic entries, per-key locks, verified reads -----===//
//
// The only code that writes or locks cache entries (the Python side and the
// CLI call into it). The protocol, and why each step is there:
//   - write artifact and manifest to unique temporary files, rename the
//     manifest, then the artifact: rename is atomic, and the artifact's
//     presence is what makes an entry, so a reader never sees half of one;
//     a writer killed before the rename leaves only `*.tmp-*` files, which
//     no reader opens;
//   - every read takes regular files only (readRegularFile: no FIFO, no
//     symlink, bounded size), runs readArtifact (section checksums, format
//     version, full program verification), compares the compiler identity,
//     and checks the binding: the key the artifact and the manifest record
//     equal the key looked up, the manifest's I/O signature and SHA-256 are
//     the artifact's, and the manifest's MAC verifies under the cache secret
//     (CacheAuth.cpp). A corrupt, truncated, stale, planted or swapped entry
//     is a miss, reported once, and overwritten;
//   - a per-key llvm::LockFileManager makes concurrent compiles of one key
//     happen once; it records host and pid, so a lock whose owner died is
//     taken over at once, and a live but stuck owner is broken after a
//     timeout (at most kForeignLockWaitSeconds for another host's lock,
//     whose owner's liveness cannot be checked).
//
//===----------------------------------------------------------------------===//
#include "trnc/Compiler/Cache.h"

#include "artifact/Artifact.h"
#include "artifact/Program.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/LockFileManager.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/raw_ostream.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <thread>
#include <unistd.h>

using nlohmann::json;
namespace fs = llvm::sys::fs;

namespace trnc::cache {
namespace {

double now() {
  using namespace std::chrono;
  return duration<double>(system_clock::now().time_since_epoch()).count();
}

/// A complete temporary file next to `finalPath`, not yet renamed.
llvm::Expected<fs::TempFile> writeTemp(const std::string &finalPath, llvm::StringRef data) {
  llvm::Expected<fs::TempFile> tmp = fs::TempFile::create(finalPath + ".tmp-%%%%%%%%");
  if (!tmp)
    return tmp.takeError();
  llvm::raw_fd_ostream os(tmp->FD, /*shouldClose=*/false);
  os << data;
  os.flush();
  if (os.has_error()) {
    std::error_code ec = os.error();
    os.clear_error();
    std::string name = tmp->TmpName; // discard() clears it
    llvm::consumeError(tmp->discard());
    return llvm::createStringError(ec, "cannot write " + name + ": " + ec.message());
  }
  return tmp;
}

/// Renames `tmp` over `finalPath`, or discards it.
llvm::Error keep(fs::TempFile &tmp, const std::string &finalPath) {
  if (llvm::Error e = tmp.keep(finalPath)) {
    llvm::consumeError(tmp.discard());
    return e;
  }
  return llvm::Error::success();
}

void pauseBeforeRenameForTests() {
  const char *s = std::getenv(kPauseBeforeRenameEnv);
  if (!s || !*s)
    return;
  if (*s != '/') {
    std::this_thread::sleep_for(std::chrono::duration<double>(std::atof(s)));
    return;
  }
  // A path: wait until the test creates it (at most 10 minutes), so a test
  // controls the window instead of racing a fixed sleep under load.
  auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(10);
  while (!fs::exists(s) && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
}

/// The manifest as an object, or an empty object if it is missing, not a
/// regular file, too large or not a JSON object.
json readManifest(const std::string &path) {
  llvm::Expected<std::optional<std::string>> text = readRegularFile(path, kMaxManifestFileBytes);
  if (!text) {
    llvm::consumeError(text.takeError());
    return json::object();
  }
  if (!*text)
    return json::object();
  json doc = json::parse(**text, nullptr, false);
  return doc.is_object() ? doc : json::object();
}

/// A string field of `doc`, or "" if absent or of another type.
std::string stringField(const json &doc, const char *name) {
  auto it = doc.find(name);
  return it != doc.end() && it->is_string() ? it->get<std::string>() : std::string();
}

/// The key recorded in the artifact's metadata ("cache_key"), or "".
std::string recordedKey(const Program &program) {
  json meta = json::parse(program.metadataJson, nullptr, false);
  return meta.is_object() ? stringField(meta, "cache_key") : std::string();
}

llvm::ArrayRef<uint8_t> asBytes(const std::string &s) {
  return llvm::ArrayRef<uint8_t>(reinterpret_cast<const uint8_t *>(s.data()), s.size());
}

std::string hostName() {
  char name[256] = {0};
  if (::gethostname(name, sizeof name - 1) != 0)
    return "";
  return name;
}

/// The host a LockFileManager lock file names ("<host> <pid>"), or "".
std::string lockOwnerHost(const std::string &lockPath) {
  llvm::Expected<std::optional<std::string>> text = readRegularFile(lockPath, 4096);
  if (!text) {
    llvm::consumeError(text.takeError());
    return "";
  }
  if (!*text)
    return "";
  llvm::StringRef host = llvm::StringRef(**text).split(' ').first.trim();
  return host.str();
}

} // namespace

ArtifactCache::ArtifactCache(std::string root, std::string compilerIdentity)
    : root(std::move(root)), identity(std::move(compilerIdentity)) {}

std::string ArtifactCache::entryDir() const {
  llvm::SmallString<256> p(root);
  llvm::sys::path::append(p, "v1");
  return std::string(p);
}

std::string ArtifactCache::artifactPath(std::string_view key) const {
  llvm::SmallString<256> p(entryDir());
  llvm::sys::path::append(p, key.substr(0, 2), std::string(key) + ".trnc");
  return std::string(p);
}

std::string ArtifactCache::manifestPath(std::string_view key) const {
  llvm::SmallString<256> p(entryDir());
  llvm::sys::path::append(p, key.substr(0, 2), std::string(key) + ".json");
  return std::string(p);
}

Lookup ArtifactCache::lookup(std::string_view key, bool touch) const {
  Lookup result;
  std::string path = artifactPath(key);
  auto invalid = [&](const std::string &why) {
    result.status = Lookup::Status::Invalid;
    result.reason = "cache entry " + path + " " + why;
    return result;
  };
  llvm::Expected<std::optional<std::string>> file = readRegularFile(path, kMaxArtifactFileBytes);
  if (!file) {
    result.status = Lookup::Status::Invalid;
    result.reason = llvm::toString(file.takeError());
    return result;
  }
  if (!*file)
    return result; // no entry (or no cache directory at all): a plain miss
  const std::string &bytes = **file;
  llvm::Expected<Program> program = readArtifact(asBytes(bytes));
  if (!program) {
    std::optional<uint32_t> format = artifactFormatVersion(asBytes(bytes));
    result.stale = format && *format != kArtifactFormatVersion && ownEntry(key, bytes);
    return invalid("is invalid (" + llvm::toString(program.takeError()) + ")");
  }
  if (program->compilerVersion != identity) {
    result.stale = ownEntry(key, bytes);
    return invalid("was built by compiler '" + program->compilerVersion + "', not '" + identity +
                   "'");
  }
  std::string recorded = recordedKey(*program);
  if (recorded != key)
    return invalid(recorded.empty()
                       ? "records no cache key (it was not stored by this cache)"
                       : "was stored under key " + recorded +
                             ", not its own (a swapped or planted file)");
  std::string manifestFile = manifestPath(key);
  llvm::Expected<std::optional<std::string>> text =
      readRegularFile(manifestFile, kMaxManifestFileBytes);
  if (!text)
    return invalid("has an unusable manifest (" + llvm::toString(text.takeError()) + ")");
  if (!*text)
    return invalid("has no manifest " + manifestFile);
  json manifest = json::parse(**text, nullptr, false);
  if (!manifest.is_object())
    return invalid("has a manifest that is not a JSON object");
  if (stringField(manifest, "key") != key)
    return invalid("has a manifest for another key ('" + stringField(manifest, "key") + "')");
  std::string io = ioSignature(*program);
  if (stringField(manifest, "io_signature") != io)
    return invalid("has inputs/outputs that differ from its manifest's I/O signature");
  std::string sha = sha256Hex(asBytes(bytes));
  if (stringField(manifest, "artifact_sha256") != sha)
    return invalid("does not match the SHA-256 its manifest records");
  llvm::Expected<std::string> secret = loadSecret(root, /*create=*/false);
  if (!secret)
    return invalid("cannot be authenticated (" + llvm::toString(secret.takeError()) + ")");
  if (!sameMac(stringField(manifest, "mac"), entryMac(*secret, key, sha, io)))
    return invalid("fails authentication: its manifest's MAC is not the one this cache's secret "
                   "gives (written by someone without the secret, or edited)");
  result.status = Lookup::Status::Hit;
  result.artifact.assign(bytes.begin(), bytes.end());
  if (touch)
    touchEntry(key);
  return result;
}

bool ArtifactCache::ownEntry(std::string_view key, const std::string &bytes) const {
  // What a lookup checks of the binding, from the manifest alone (the
  // artifact may be one this trnc cannot read): its key, the artifact's
  // SHA-256, and the MAC over them and the manifest's I/O signature.
  llvm::Expected<std::optional<std::string>> text =
      readRegularFile(manifestPath(key), kMaxManifestFileBytes);
  if (!text || !*text) {
    if (!text)
      llvm::consumeError(text.takeError());
    return false;
  }
  json manifest = json::parse(**text, nullptr, false);
  if (!manifest.is_object() || stringField(manifest, "key") != key)
    return false;
  std::string sha = sha256Hex(asBytes(bytes));
  if (stringField(manifest, "artifact_sha256") != sha)
    return false;
  llvm::Expected<std::string> secret = loadSecret(root, /*create=*/false);
  if (!secret) {
    llvm::consumeError(secret.takeError());
    return false;
  }
  return sameMac(stringField(manifest, "mac"),
                 entryMac(*secret, key, sha, stringField(manifest, "io_signature")));
}

void ArtifactCache::touchEntry(std::string_view key) const {
  // LRU order is the artifact's mtime; the manifest keeps a hit count.
  // Both are best effort (a read-only cache still serves hits), and two
  // concurrent hits may count once.
  int fd;
  if (!fs::openFileForReadWrite(artifactPath(key), fd, fs::CD_OpenExisting, fs::OF_None)) {
    (void)fs::setLastAccessAndModificationTime(fd, std::chrono::system_clock::now());
    (void)llvm::sys::Process::SafelyCloseFileDescriptor(fd);
  }
  std::string manifest = manifestPath(key);
  json doc = readManifest(manifest);
  if (!doc.contains("mac"))
    return; // unreadable just now: never replace a manifest with a partial one
  auto hits = doc.find("hits");
  int64_t before = hits != doc.end() && hits->is_number_integer() ? hits->get<int64_t>() : 0;
  doc["hits"] = std::max<int64_t>(before, 0) + 1; // a count of the wrong type restarts
  doc["last_used"] = now();
  llvm::Expected<fs::TempFile> tmp = writeTemp(manifest, doc.dump(1));
  if (!tmp)
    return llvm::consumeError(tmp.takeError());
  llvm::consumeError(keep(*tmp, manifest));
}

llvm::Error ArtifactCache::store(std::string_view key, std::vector<uint8_t> &artifact,
                                 std::string_view manifestJson, double compileSeconds) const {
  std::string path = artifactPath(key);
  if (std::error_code ec = fs::create_directories(llvm::sys::path::parent_path(path)))
    return llvm::createStringError(ec, "cannot create " +
                                           llvm::sys::path::parent_path(path).str() + ": " +
                                           ec.message());
  llvm::Expected<std::string> secret = loadSecret(root, /*create=*/true);
  if (!secret)
    return secret.takeError();
  llvm::Expected<Program> program = readArtifact(artifact);
  if (!program)
    return program.takeError();
  if (recordedKey(*program) != key) {
    json meta = json::parse(program->metadataJson, nullptr, false);
    if (!meta.is_object())
      meta = json::object();
    meta["cache_key"] = std::string(key);
    program->metadataJson = meta.dump();
    artifact = writeArtifact(*program);
  }
  std::string io = ioSignature(*program);
  std::string sha = sha256Hex(artifact);
  json manifest = json::parse(manifestJson, nullptr, false);
  if (!manifest.is_object())
    manifest = json::object();
  double t = now();
  manifest["key"] = std::string(key);
  manifest["compiler"] = identity;
  manifest["artifact_bytes"] = artifact.size();
  manifest["io_signature"] = io;
  manifest["artifact_sha256"] = sha;
  manifest["mac"] = entryMac(*secret, key, sha, io);
  manifest["compile_seconds"] = compileSeconds;
  manifest["created"] = t;
  manifest["last_used"] = t;
  manifest["hits"] = 0;

  llvm::Expected<fs::TempFile> art = writeTemp(
      path, llvm::StringRef(reinterpret_cast<const char *>(artifact.data()), artifact.size()));
  if (!art)
    return art.takeError();
  std::string manifestFile = manifestPath(key);
  llvm::Expected<fs::TempFile> man = writeTemp(manifestFile, manifest.dump(1));
  if (!man) {
    llvm::consumeError(art->discard());
    return man.takeError();
  }
  pauseBeforeRenameForTests();
  if (llvm::Error e = keep(*man, manifestFile)) {
    llvm::consumeError(art->discard());
    return e;
  }
  return keep(*art, path);
}

Outcome ArtifactCache::getOrCompile(std::string_view key, std::string_view manifestJson,
                                    const CompileFn &compile,
                                    unsigned lockTimeoutSeconds) const {
  Outcome out;
  bool reportedInvalid = false;
  // A hit, or else the miss reason reported once.
  auto tryHit = [&]() {
    Lookup l = lookup(key);
    if (l.status == Lookup::Status::Hit) {
      out.ok = out.hit = true;
      out.artifact = std::move(l.artifact);
      return true;
    }
    if (l.status == Lookup::Status::Invalid && !reportedInvalid) {
      reportedInvalid = true;
      out.warnings.push_back({WarningKind::InvalidEntry, l.reason + "; recompiling"});
    }
    return false;
  };
  auto unwritable = [&](const std::string &why) {
    out.warnings.push_back({WarningKind::Unwritable,
                            "the trnc cache directory " + root + " is not usable (" + why +
                                "); compiling without caching"});
  };
  auto compileAndMaybeStore = [&](bool storeIt) {
    auto start = std::chrono::steady_clock::now();
    out.compiled = true;
    out.ok = compile(out.artifact);
    out.compileSeconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (!out.ok || !storeIt)
      return;
    if (llvm::Error e = store(key, out.artifact, manifestJson, out.compileSeconds))
      unwritable(llvm::toString(std::move(e)));
    else
      out.stored = true;
  };

  // Bounded: each round either hits, compiles, or waits for another owner.
  for (int round = 0; round < 4; ++round) {
    if (tryHit())
      return out;
    std::string path = artifactPath(key);
    if (std::error_code ec = fs::create_directories(llvm::sys::path::parent_path(path))) {
      unwritable("cannot create " + llvm::sys::path::parent_path(path).str() + ": " +
                 ec.message());
      compileAndMaybeStore(false);
      return out;
    }
    llvm::LockFileManager lock(path);
    switch (lock.getState()) {
    case llvm::LockFileManager::LFS_Error:
      unwritable("cannot lock " + path + ": " + lock.getErrorMessage());
      compileAndMaybeStore(false);
      return out;
    case llvm::LockFileManager::LFS_Owned:
      // Another process may have finished between our lookup and the lock.
      if (!tryHit())
        compileAndMaybeStore(true);
      return out; // the lock is released here
    case llvm::LockFileManager::LFS_Shared: {
      // LockFileManager can tell a dead owner only on this host; a lock of
      // another host (a container, a machine sharing the directory) would
      // block for the whole timeout even when its owner is long gone.
      std::string owner = lockOwnerHost(path + ".lock");
      bool foreign = !owner.empty() && owner != hostName();
      unsigned wait = foreign ? std::min(lockTimeoutSeconds, foreignLockWait) : lockTimeoutSeconds;
      switch (lock.waitForUnlock(wait)) {
      case llvm::LockFileManager::Res_Success:
      case llvm::LockFileManager::Res_OwnerDied:
        break; // look again; a dead owner's lock is removed on the next try
      case llvm::LockFileManager::Res_Timeout:
        out.warnings.push_back(
            {WarningKind::StaleLock,
             "the lock " + path + ".lock was held for more than " + std::to_string(wait) + " s" +
                 (foreign ? " by a process on host '" + owner +
                                "', whose liveness cannot be checked from here"
                          : "") +
                 "; breaking it and compiling"});
        (void)lock.unsafeRemoveLockFile();
        break;
      }
      break;
    }
    }
  }
  compileAndMaybeStore(true);
  return out;
}

} // namespace trnc::cache
