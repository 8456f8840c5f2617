//===- CacheFuzzer.cpp - libFuzzer target for hostile cache files and keys ===//
//
// Two things anyone who can write a cache directory, or hand trnc a graph,
// controls: the bytes of an entry's artifact and manifest, and the graph JSON
// that is canonicalised into the key. The first input byte picks one:
//   - entry: the rest is split into an artifact and a manifest, written under
//     a key of a fresh cache (whose secret exists) and looked up; a lookup
//     must be a miss or an invalid entry with a reason (never a hit: the
//     fuzzer cannot know the secret), never a crash;
//   - graph: canonicalGraph and computeKey on the rest as graph JSON; a key,
//     when computed, must be 64 hex digits.
// Built with the loader fuzzers (scripts/fuzz.sh): ASan + UBSan.
//
//===----------------------------------------------------------------------===//

#include "trnc/Compiler/Cache.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

using namespace trnc;

namespace {

const char *kIdentity = "trnc fuzz";
const std::string kKey(64, 'a');

/// One cache directory (with its secret) for the whole session.
const cache::ArtifactCache &fuzzCache() {
  static std::string root = [] {
    llvm::SmallString<128> dir;
    if (llvm::sys::fs::createUniqueDirectory("trnc-cache-fuzz", dir))
      std::abort();
    return std::string(dir);
  }();
  static cache::ArtifactCache c(root, kIdentity);
  static bool ready = [&] {
    llvm::sys::fs::create_directories(llvm::sys::path::parent_path(c.artifactPath(kKey)));
    llvm::Expected<std::string> secret = cache::loadSecret(root, /*create=*/true);
    if (!secret)
      std::abort();
    return true;
  }();
  (void)ready;
  return c;
}

void write(const std::string &path, const uint8_t *data, size_t size) {
  std::ofstream(path, std::ios::binary | std::ios::trunc)
      .write(reinterpret_cast<const char *>(data), std::streamsize(size));
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0)
    return 0;
  const uint8_t mode = data[0];
  ++data, --size;
  if (mode & 1) {
    std::string text(reinterpret_cast<const char *>(data), size);
    llvm::Expected<std::string> canonical = cache::canonicalGraph(text);
    if (!canonical)
      llvm::consumeError(canonical.takeError());
    llvm::Expected<std::string> key = cache::computeKey(text, R"({"target":"trn2"})", kIdentity);
    if (!key) {
      llvm::consumeError(key.takeError());
    } else if (key->size() != 64) {
      std::fprintf(stderr, "a key of %zu characters\n", key->size());
      std::abort();
    }
    return 0;
  }
  const cache::ArtifactCache &c = fuzzCache();
  size_t split = size ? data[0] * size / 256 : 0;
  write(c.artifactPath(kKey), data, split);
  write(c.manifestPath(kKey), data + split, size - split);
  cache::Lookup l = c.lookup(kKey, /*touch=*/mode & 2);
  if (l.status == cache::Lookup::Status::Hit) {
    std::fprintf(stderr, "a forged entry was served as a hit\n");
    std::abort();
  }
  return 0;
}
