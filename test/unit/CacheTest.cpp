//===- CacheTest.cpp - cache keys, atomic entries, verified reads ---------===//
//
// The canonical graph ignores names and locations but nothing else; the key
// changes with output options and compiler identity; entries round-trip;
// truncated, bit-flipped and foreign-compiler entries are misses with a
// reason; getOrCompile compiles once and degrades on an unusable directory;
// entries are bound to their key, manifest and the cache secret (HMAC), and
// FIFOs, symlinks and swapped or forged files are misses.
// (Cross-process locking is tested end to end in test/python/test_cache.py.)
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"

#include "trnc/Compiler/Cache.h"

#include "artifact/Artifact.h"

#include <nlohmann/json.hpp>

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <sys/stat.h>
#include <unistd.h>

using namespace trnc;
using namespace trnc::test;
using cache::ArtifactCache;
using cache::Lookup;

namespace {

const char *kIdentity = "trnc test (abc)";

std::string graph(const std::string &names, const std::string &dtype = "float32",
                  const std::string &loc = "null") {
  // `names` is a prefix for every name, to check they do not matter.
  return R"({"schema":"trnc.graph","version":1,"name":")" + names + R"(g",
    "inputs":[{"name":")" + names + R"(x","shape":[4],"stride":[1],"dtype":")" + dtype + R"("}],
    "nodes":[{"name":")" + names + R"(r","target":"aten.relu.default",
      "args":[{"node":")" + names + R"(x"}],"kwargs":{},
      "meta":{"shape":[4],"stride":[1],"dtype":")" + dtype + R"("},
      "loc":)" + loc + R"(,"stack_trace":")" + names + R"("}],
    "outputs":[{"node":")" + names + R"(r","shape":[4],"stride":[1],"dtype":")" + dtype + R"("}]})";
}

std::string key(const std::string &g, const std::string &options = R"({"target":"trn2"})",
                const char *identity = kIdentity) {
  auto k = cache::computeKey(g, options, identity);
  REQUIRE(errorText(k) == "");
  return *k;
}

std::vector<uint8_t> artifactBy(const std::string &compiler) {
  Builder b;
  b.p.name = "copy";
  b.p.compilerVersion = compiler;
  uint32_t in = b.input(DType::F32, 64);
  uint32_t out = b.output(DType::F32, 64);
  b.dma(sbuf(DType::F32, 0, 1, 0, {16}), hbm(in, DType::F32, 0, 1, 16, {16}));
  b.dma(hbm(out, DType::F32, 0, 1, 16, {16}), sbuf(DType::F32, 0, 1, 0, {16}));
  return writeArtifact(b.p);
}

struct TempDir {
  TempDir() { REQUIRE(!llvm::sys::fs::createUniqueDirectory("trnc-cache-test", path)); }
  ~TempDir() { llvm::sys::fs::remove_directories(path); }
  std::string str() const { return std::string(path); }
  llvm::SmallString<128> path;
};

void overwrite(const std::string &path, const std::vector<uint8_t> &bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc)
      .write(reinterpret_cast<const char *>(bytes.data()), bytes.size());
}

std::vector<uint8_t> slurp(const std::string &path) {
  std::ifstream f(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), {}};
}

} // namespace

TEST_CASE("the canonical graph drops names and locations only", "[cache]") {
  std::string a = key(graph("a_"));
  CHECK(a.size() == 64);
  CHECK(key(graph("other_", "float32", R"({"file":"m.py","line":3,"code":"x"})")) == a);
  CHECK(key(graph("a_", "bfloat16")) != a);
  auto canonical = cache::canonicalGraph(graph("a_"));
  REQUIRE(errorText(canonical) == "");
  CHECK(!contains(*canonical, "a_"));
  CHECK(contains(*canonical, R"("node":0)"));
  CHECK(contains(*canonical, R"("node":1)"));
}

TEST_CASE("the key covers output options and the compiler identity", "[cache]") {
  std::string g = graph("a_");
  std::string a = key(g);
  CHECK(key(g, R"({"target":"trn1"})") != a);
  CHECK(key(g, R"({"target":"trn2","dump_dir":"/tmp/x"})") == a);
  CHECK(key(g, R"({"target":"trn2"})", "trnc other (def)") != a);
  ::setenv("TRNC_COMPILER_IDENTITY_OVERRIDE", "x", 1);
  CHECK(cache::keyIdentity(kIdentity) == std::string(kIdentity) + "+test:x");
  CHECK(key(g) != a);
  ::unsetenv("TRNC_COMPILER_IDENTITY_OVERRIDE");
  CHECK(key(g) == a);
  CHECK(!cache::computeKey("{", "{}", kIdentity));
  CHECK(!cache::computeKey(R"({"inputs":[],"nodes":[],"outputs":[{"node":"q"}]})", "{}",
                           kIdentity));
}

TEST_CASE("entries round-trip; damaged or foreign ones are misses with a reason", "[cache]") {
  TempDir dir;
  ArtifactCache c(dir.str(), kIdentity);
  std::string k = key(graph("a_"));
  CHECK(c.lookup(k).status == Lookup::Status::Miss);
  std::vector<uint8_t> bytes = artifactBy(kIdentity);
  REQUIRE(errorText(c.store(k, bytes, R"({"graph_name":"g"})", 0.5)) == "");
  Lookup hit = c.lookup(k);
  CHECK(hit.status == Lookup::Status::Hit);
  CHECK(hit.artifact == bytes);
  std::vector<uint8_t> manifest = slurp(c.manifestPath(k));
  CHECK(contains(std::string(manifest.begin(), manifest.end()), R"("graph_name": "g")"));

  std::vector<uint8_t> truncated(bytes.begin(), bytes.begin() + bytes.size() / 2);
  overwrite(c.artifactPath(k), truncated);
  Lookup bad = c.lookup(k);
  CHECK(bad.status == Lookup::Status::Invalid);
  CHECK(contains(bad.reason, "invalid"));

  std::vector<uint8_t> flipped = bytes;
  flipped[flipped.size() - 3] ^= 0x10;
  overwrite(c.artifactPath(k), flipped);
  CHECK(c.lookup(k).status == Lookup::Status::Invalid);

  overwrite(c.artifactPath(k), artifactBy("trnc old (123)"));
  bad = c.lookup(k);
  CHECK(bad.status == Lookup::Status::Invalid);
  CHECK(contains(bad.reason, "trnc old (123)"));
}

TEST_CASE("an entry another trnc stored is stale, not corrupt", "[cache]") {
  TempDir dir;
  std::string k = key(graph("a_"));
  const char *old = "trnc old (123)";
  std::vector<uint8_t> bytes = artifactBy(old);
  REQUIRE(errorText(ArtifactCache(dir.str(), old).store(k, bytes, "{}", 0.5)) == "");
  ArtifactCache c(dir.str(), kIdentity);
  Lookup l = c.lookup(k);
  CHECK(l.status == Lookup::Status::Invalid);
  CHECK(l.stale);
  CHECK(contains(l.reason, old));

  // An older artifact format, re-authenticated as that trnc's store would
  // have: stale too, though this trnc cannot read it.
  std::vector<uint8_t> older = slurp(c.artifactPath(k));
  REQUIRE(artifactFormatVersion(older) == kArtifactFormatVersion);
  older[8] = uint8_t(kArtifactFormatVersion - 1);
  REQUIRE(artifactFormatVersion(older) == kArtifactFormatVersion - 1);
  overwrite(c.artifactPath(k), older);
  std::vector<uint8_t> text = slurp(c.manifestPath(k));
  nlohmann::json manifest = nlohmann::json::parse(text.begin(), text.end());
  std::string sha = cache::sha256Hex(older);
  llvm::Expected<std::string> secret = cache::loadSecret(dir.str(), /*create=*/false);
  REQUIRE(errorText(secret) == "");
  manifest["artifact_sha256"] = sha;
  manifest["mac"] = cache::entryMac(*secret, k, sha,
                                    manifest["io_signature"].get<std::string>());
  std::string dumped = manifest.dump(1);
  overwrite(c.manifestPath(k), {dumped.begin(), dumped.end()});
  l = c.lookup(k);
  CHECK(l.status == Lookup::Status::Invalid);
  CHECK(contains(l.reason, "format version"));
  CHECK(l.stale);

  // Edited bytes (or a planted file) are not this cache's: corrupt.
  overwrite(c.artifactPath(k), artifactBy("trnc old (456)"));
  l = c.lookup(k);
  CHECK(l.status == Lookup::Status::Invalid);
  CHECK(!l.stale);
}

TEST_CASE("getOrCompile compiles once, replaces bad entries, degrades", "[cache]") {
  TempDir dir;
  ArtifactCache c(dir.str(), kIdentity);
  std::string k = key(graph("a_"));
  int compiles = 0;
  cache::CompileFn compile = [&](std::vector<uint8_t> &out) {
    ++compiles;
    out = artifactBy(kIdentity);
    return true;
  };
  cache::Outcome first = c.getOrCompile(k, "{}", compile, 5);
  CHECK((first.ok && first.compiled && first.stored && !first.hit));
  CHECK(first.warnings.empty());
  cache::Outcome second = c.getOrCompile(k, "{}", compile, 5);
  CHECK((second.ok && second.hit && !second.compiled));
  CHECK(compiles == 1);
  // No leftovers next to the entry: no temporary files, no lock.
  std::error_code ec;
  int files = 0;
  for (llvm::sys::fs::directory_iterator it(llvm::sys::path::parent_path(c.artifactPath(k)), ec),
       end;
       it != end && !ec; it.increment(ec))
    ++files;
  CHECK(files == 2);

  overwrite(c.artifactPath(k), {1, 2, 3});
  cache::Outcome repaired = c.getOrCompile(k, "{}", compile, 5);
  CHECK((repaired.ok && repaired.compiled && repaired.stored));
  REQUIRE(repaired.warnings.size() == 1);
  CHECK(repaired.warnings[0].kind == cache::WarningKind::InvalidEntry);
  CHECK(c.lookup(k).status == Lookup::Status::Hit);

  cache::Outcome failed = c.getOrCompile(key(graph("b_", "float16")), "{}",
                                         [](std::vector<uint8_t> &) { return false; }, 5);
  CHECK((!failed.ok && failed.compiled && !failed.stored));

  // A cache "directory" below a regular file cannot be created.
  std::string file = dir.str() + "/plain-file";
  overwrite(file, {0});
  ArtifactCache broken(file + "/cache", kIdentity);
  cache::Outcome degraded = broken.getOrCompile(k, "{}", compile, 5);
  CHECK((degraded.ok && degraded.compiled && !degraded.stored));
  REQUIRE(degraded.warnings.size() == 1);
  CHECK(degraded.warnings[0].kind == cache::WarningKind::Unwritable);
}

//===----------------------------------------------------------------------===//
// Trust boundaries (issue 12): entries bound to their key, MACs, hostile files
//===----------------------------------------------------------------------===//

TEST_CASE("HMAC-SHA256 matches RFC 4231", "[cache][auth]") {
  CHECK(cache::hmacSha256Hex(std::string(20, '\x0b'), "Hi There") ==
        "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
  CHECK(cache::hmacSha256Hex("Jefe", "what do ya want for nothing?") ==
        "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
  CHECK(cache::hmacSha256Hex(std::string(131, '\xaa'),
                             "Test Using Larger Than Block-Size Key - Hash Key First") ==
        "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
  std::string mac = cache::entryMac("s", "k", "sha", "io");
  CHECK(mac != cache::entryMac("s", "k2", "sha", "io"));
  CHECK(mac != cache::entryMac("s", "k", "sha", "io2"));
  CHECK(mac != cache::entryMac("t", "k", "sha", "io"));
  CHECK(cache::entryMac("s", "ab", "c", "io") != cache::entryMac("s", "a", "bc", "io"));
  CHECK(cache::sameMac(mac, mac));
  CHECK(!cache::sameMac(mac, mac.substr(1)));
}

TEST_CASE("readRegularFile refuses FIFOs, symlinks, directories, large files", "[cache][files]") {
  TempDir dir;
  std::string d = dir.str();
  auto error = [](llvm::Expected<std::optional<std::string>> r) {
    return r ? std::string() : llvm::toString(r.takeError());
  };
  auto missing = cache::readRegularFile(d + "/none", 10);
  REQUIRE(errorText(missing) == "");
  CHECK(!*missing);
  overwrite(d + "/f", {'a', 'b', 'c'});
  auto three = cache::readRegularFile(d + "/f", 10);
  REQUIRE(errorText(three) == "");
  CHECK(**three == "abc");
  CHECK(contains(error(cache::readRegularFile(d + "/f", 2)), "more than the 2"));
  REQUIRE(::mkfifo((d + "/fifo").c_str(), 0600) == 0);
  CHECK(contains(error(cache::readRegularFile(d + "/fifo", 10)), "not a regular file"));
  REQUIRE(::symlink("/dev/zero", (d + "/zero").c_str()) == 0);
  CHECK(contains(error(cache::readRegularFile(d + "/zero", 10)), "symbolic link"));
  CHECK(contains(error(cache::readRegularFile(d, 10)), "not a regular file"));
}

TEST_CASE("the cache secret is private, stable, and checked", "[cache][auth]") {
  TempDir dir;
  auto first = cache::loadSecret(dir.str(), false);
  CHECK(contains(errorText(first), "has no secret"));
  auto made = cache::loadSecret(dir.str(), true);
  REQUIRE(errorText(made) == "");
  CHECK(made->size() == 32);
  struct stat st;
  REQUIRE(::stat(cache::secretPath(dir.str()).c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);
  auto again = cache::loadSecret(dir.str(), true);
  REQUIRE(errorText(again) == "");
  CHECK(*again == *made);
  ::chmod(cache::secretPath(dir.str()).c_str(), 0644);
  CHECK(contains(errorText(cache::loadSecret(dir.str(), false)), "must be 0600"));
}

TEST_CASE("an entry is bound to its key, its manifest and the secret", "[cache][auth]") {
  TempDir dir;
  ArtifactCache c(dir.str(), kIdentity);
  std::string ka = key(graph("a_")), kb = key(graph("b_", "float16"));
  std::vector<uint8_t> a = artifactBy(kIdentity), b = artifactBy(kIdentity);
  REQUIRE(errorText(c.store(ka, a, "{}", 0.1)) == "");
  REQUIRE(errorText(c.store(kb, b, "{}", 0.1)) == "");
  CHECK(a != b); // each records its own key
  std::vector<uint8_t> stored = slurp(c.manifestPath(ka));
  std::string manifest(stored.begin(), stored.end());
  CHECK(contains(manifest, "\"io_signature\": \"input 0 f32 [16] strides [] bytes 64"));
  CHECK(contains(manifest, "\"mac\""));

  SECTION("swapped artifacts") {
    overwrite(c.artifactPath(ka), b);
    Lookup l = c.lookup(ka);
    CHECK(l.status == Lookup::Status::Invalid);
    CHECK(contains(l.reason, "was stored under key " + kb));
  }
  SECTION("swapped artifact and manifest") {
    overwrite(c.artifactPath(ka), b);
    overwrite(c.manifestPath(ka), slurp(c.manifestPath(kb)));
    CHECK(contains(c.lookup(ka).reason, "was stored under key " + kb));
  }
  SECTION("an artifact stored outside the cache (no key, no manifest)") {
    overwrite(c.artifactPath(ka), artifactBy(kIdentity));
    CHECK(contains(c.lookup(ka).reason, "records no cache key"));
  }
  SECTION("a missing manifest") {
    llvm::sys::fs::remove(c.manifestPath(ka));
    CHECK(contains(c.lookup(ka).reason, "has no manifest"));
  }
  SECTION("a forged MAC") {
    std::string forged = manifest;
    size_t at = forged.find("\"mac\": \"") + 8;
    forged[at] = forged[at] == '0' ? '1' : '0';
    overwrite(c.manifestPath(ka), std::vector<uint8_t>(forged.begin(), forged.end()));
    CHECK(contains(c.lookup(ka).reason, "fails authentication"));
  }
  SECTION("another cache's secret") {
    llvm::sys::fs::remove(cache::secretPath(dir.str()));
    CHECK(contains(c.lookup(ka).reason, "cannot be authenticated"));
    REQUIRE(errorText(cache::loadSecret(dir.str(), true)) == "");
    CHECK(contains(c.lookup(ka).reason, "fails authentication"));
  }
  SECTION("a manifest field of the wrong type does not break hits") {
    std::string edited = manifest;
    size_t at = edited.find("\"hits\": 0");
    REQUIRE(at != std::string::npos);
    edited.replace(at, 9, "\"hits\": \"many\"");
    overwrite(c.manifestPath(ka), std::vector<uint8_t>(edited.begin(), edited.end()));
    CHECK(c.lookup(ka).status == Lookup::Status::Hit); // touches: hits becomes 1
    std::vector<uint8_t> m = slurp(c.manifestPath(ka));
    CHECK(contains(std::string(m.begin(), m.end()), "\"hits\": 1"));
  }
  SECTION("a FIFO or a symlink where the artifact should be") {
    llvm::sys::fs::remove(c.artifactPath(ka));
    REQUIRE(::mkfifo(c.artifactPath(ka).c_str(), 0600) == 0);
    CHECK(contains(c.lookup(ka).reason, "not a regular file"));
    REQUIRE(::unlink(c.artifactPath(ka).c_str()) == 0); // fs::remove refuses FIFOs
    REQUIRE(::symlink("/dev/zero", c.artifactPath(ka).c_str()) == 0);
    CHECK(contains(c.lookup(ka).reason, "symbolic link"));
    // The next compile replaces the name (never the target).
    int compiles = 0;
    cache::Outcome o = c.getOrCompile(
        ka, "{}",
        [&](std::vector<uint8_t> &out) {
          ++compiles;
          out = artifactBy(kIdentity);
          return true;
        },
        5);
    CHECK((o.ok && o.stored && compiles == 1));
    CHECK(c.lookup(ka).status == Lookup::Status::Hit);
  }
}

TEST_CASE("a lock of another host is broken after a bounded wait", "[cache][lock]") {
  TempDir dir;
  ArtifactCache c(dir.str(), kIdentity);
  c.setForeignLockWaitSeconds(1);
  std::string k = key(graph("a_"));
  REQUIRE(!llvm::sys::fs::create_directories(llvm::sys::path::parent_path(c.artifactPath(k))));
  // A live-looking owner on a host whose pids cannot be checked from here.
  std::string lock = c.artifactPath(k) + ".lock";
  overwrite(lock, {'o', 't', 'h', 'e', 'r', '-', 'h', 'o', 's', 't', ' ', '1'});
  cache::Outcome o = c.getOrCompile(
      k, "{}",
      [](std::vector<uint8_t> &out) {
        out = artifactBy(kIdentity);
        return true;
      },
      /*lockTimeoutSeconds=*/600);
  CHECK((o.ok && o.compiled && o.stored));
  REQUIRE(o.warnings.size() == 1);
  CHECK(o.warnings[0].kind == cache::WarningKind::StaleLock);
  CHECK(contains(o.warnings[0].message, "held for more than 1 s by a process on host 'other-host'"));
}
