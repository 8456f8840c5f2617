//===- CacheStore.cpp - atomic entries, per-key locks, verified reads -----===//
//
// The only code that writes or locks cache entries (the Python side and the
// CLI call into it). The protocol, and why each step is there:
//   - write artifact and manifest to unique temporary files, rename the
//     manifest, then the artifact: rename is atomic, and the artifact's
//     presence is what makes an entry, so a reader never sees half of one;
//     a writer killed before the rename leaves only `*.tmp-*` files, which
//     no reader opens;
//   - every read runs readArtifact (section checksums, format version, full
//     program verification) and compares the compiler identity: a corrupt,
//     truncated or stale entry is a miss, reported once, and overwritten;
//   - a per-key llvm::LockFileManager makes concurrent compiles of one key
//     happen once; it records host and pid, so a lock whose owner died is
//     taken over at once, and a live but stuck owner is broken after a
//     timeout.
//
//===----------------------------------------------------------------------===//
#include "trnc/Compiler/Cache.h"

#include "artifact/Artifact.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/LockFileManager.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/raw_ostream.h"

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdlib>
#include <thread>

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
    llvm::consumeError(tmp->discard());
    return llvm::createStringError(ec, "cannot write " + tmp->TmpName + ": " + ec.message());
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
  if (const char *s = std::getenv(kPauseBeforeRenameEnv); s && *s)
    std::this_thread::sleep_for(std::chrono::duration<double>(std::atof(s)));
}

json readManifest(const std::string &path) {
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buf = llvm::MemoryBuffer::getFile(path);
  if (!buf)
    return json::object();
  json doc = json::parse((*buf)->getBuffer(), nullptr, false);
  return doc.is_object() ? doc : json::object();
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
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buf = llvm::MemoryBuffer::getFile(
      path, /*IsText=*/false, /*RequiresNullTerminator=*/false);
  if (!buf) {
    // No entry (or no cache directory at all): a plain miss.
    if (buf.getError() == std::errc::no_such_file_or_directory ||
        buf.getError() == std::errc::not_a_directory)
      return result;
    result.status = Lookup::Status::Invalid;
    result.reason = "cannot read " + path + ": " + buf.getError().message();
    return result;
  }
  llvm::ArrayRef<uint8_t> bytes(reinterpret_cast<const uint8_t *>((*buf)->getBufferStart()),
                                (*buf)->getBufferSize());
  llvm::Expected<Program> program = readArtifact(bytes);
  if (!program) {
    result.status = Lookup::Status::Invalid;
    result.reason = "cache entry " + path + " is invalid (" +
                    llvm::toString(program.takeError()) + ")";
    return result;
  }
  if (program->compilerVersion != identity) {
    result.status = Lookup::Status::Invalid;
    result.reason = "cache entry " + path + " was built by compiler '" +
                    program->compilerVersion + "', not '" + identity + "'";
    return result;
  }
  result.status = Lookup::Status::Hit;
  result.artifact.assign(bytes.begin(), bytes.end());
  if (touch)
    touchEntry(key);
  return result;
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
  doc["hits"] = doc.value("hits", 0) + 1;
  doc["last_used"] = now();
  llvm::Expected<fs::TempFile> tmp = writeTemp(manifest, doc.dump(1));
  if (!tmp)
    return llvm::consumeError(tmp.takeError());
  llvm::consumeError(keep(*tmp, manifest));
}

llvm::Error ArtifactCache::store(std::string_view key, const std::vector<uint8_t> &artifact,
                                 std::string_view manifestJson, double compileSeconds) const {
  std::string path = artifactPath(key);
  if (std::error_code ec = fs::create_directories(llvm::sys::path::parent_path(path)))
    return llvm::createStringError(ec, "cannot create " +
                                           llvm::sys::path::parent_path(path).str() + ": " +
                                           ec.message());
  json manifest = json::parse(manifestJson, nullptr, false);
  if (!manifest.is_object())
    manifest = json::object();
  double t = now();
  manifest["key"] = std::string(key);
  manifest["compiler"] = identity;
  manifest["artifact_bytes"] = artifact.size();
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
    case llvm::LockFileManager::LFS_Shared:
      switch (lock.waitForUnlock(lockTimeoutSeconds)) {
      case llvm::LockFileManager::Res_Success:
      case llvm::LockFileManager::Res_OwnerDied:
        break; // look again; a dead owner's lock is removed on the next try
      case llvm::LockFileManager::Res_Timeout:
        out.warnings.push_back(
            {WarningKind::StaleLock, "the lock " + path + ".lock was held for more than " +
                                         std::to_string(lockTimeoutSeconds) +
                                         " s; breaking it and compiling"});
        (void)lock.unsafeRemoveLockFile();
        break;
      }
      break;
    }
  }
  compileAndMaybeStore(true);
  return out;
}

} // namespace trnc::cache
