//===- CacheAuth.cpp - The per-cache secret and entry MACs ----------------===//
//
// Every entry's manifest carries HMAC-SHA256(secret, key, SHA-256 of the
// artifact, I/O signature), where the secret is 32 random bytes in
// <cache>/secret, created once with mode 0600. A process that can write the
// cache directory but cannot read the secret (another user of a shared
// TRNC_CACHE_DIR, a stray tool) cannot make an entry trnc will serve: a
// planted, swapped, edited or stale file fails the MAC and is a miss
// (docs/cache.md, "Threat model"). The secret must be a regular file owned by
// this user and readable by nobody else, or the cache refuses to use it.
//
//===----------------------------------------------------------------------===//
#include "trnc/Compiler/Cache.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SHA256.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

namespace trnc::cache {
namespace {

constexpr size_t kSecretBytes = 32;
constexpr size_t kBlock = 64; // SHA-256 block size (RFC 2104's B)

llvm::Error authError(const std::string &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), msg);
}

/// The secret's bytes from its hex text, after checking who may read it.
llvm::Expected<std::string> parseSecret(const std::string &path, const std::string &text) {
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0)
    return authError("cannot stat " + path + ": " + std::strerror(errno));
  if (st.st_uid != ::geteuid())
    return authError("the cache secret " + path + " belongs to another user (uid " +
                     std::to_string(st.st_uid) + ")");
  if (st.st_mode & 077)
    return authError("the cache secret " + path + " is readable or writable by others (mode " +
                     llvm::utohexstr(st.st_mode & 0777) + " hex); it must be 0600");
  std::string trimmed = llvm::StringRef(text).trim().str();
  std::string bytes;
  if (trimmed.size() != 2 * kSecretBytes || !llvm::tryGetFromHex(trimmed, bytes))
    return authError("the cache secret " + path + " is not " + std::to_string(2 * kSecretBytes) +
                     " hex digits");
  return bytes;
}

} // namespace

std::string sha256Hex(llvm::ArrayRef<uint8_t> data) {
  return llvm::toHex(llvm::SHA256::hash(data), /*LowerCase=*/true);
}

std::string hmacSha256Hex(llvm::StringRef key, llvm::StringRef message) {
  std::string k = key.str();
  if (k.size() > kBlock) {
    auto d = llvm::SHA256::hash(llvm::arrayRefFromStringRef(k));
    k.assign(d.begin(), d.end());
  }
  k.resize(kBlock, '\0');
  std::string ipad(kBlock, '\0'), opad(kBlock, '\0');
  for (size_t i = 0; i < kBlock; ++i) {
    ipad[i] = char(uint8_t(k[i]) ^ 0x36);
    opad[i] = char(uint8_t(k[i]) ^ 0x5c);
  }
  llvm::SHA256 inner;
  inner.update(ipad);
  inner.update(message);
  std::array<uint8_t, 32> innerDigest = inner.final();
  llvm::SHA256 outer;
  outer.update(opad);
  outer.update(llvm::ArrayRef<uint8_t>(innerDigest));
  return llvm::toHex(outer.final(), /*LowerCase=*/true);
}

std::string entryMac(llvm::StringRef secret, llvm::StringRef key, llvm::StringRef artifactSha256,
                     llvm::StringRef ioSignature) {
  // Length-prefixed fields: no two different tuples give the same message.
  std::string message = "trnc cache entry v1";
  for (llvm::StringRef field : {key, artifactSha256, ioSignature})
    message += "\n" + std::to_string(field.size()) + ":" + field.str();
  return hmacSha256Hex(secret, message);
}

bool sameMac(llvm::StringRef a, llvm::StringRef b) {
  if (a.size() != b.size())
    return false;
  unsigned char diff = 0;
  for (size_t i = 0; i < a.size(); ++i)
    diff |= uint8_t(a[i]) ^ uint8_t(b[i]);
  return diff == 0;
}

std::string secretPath(const std::string &root) {
  llvm::SmallString<256> p(root);
  llvm::sys::path::append(p, "secret");
  return std::string(p);
}

llvm::Expected<std::string> loadSecret(const std::string &root, bool create) {
  std::string path = secretPath(root);
  for (int attempt = 0; attempt < 2; ++attempt) {
    llvm::Expected<std::optional<std::string>> text = readRegularFile(path, 4096);
    if (!text)
      return text.takeError();
    if (*text)
      return parseSecret(path, **text);
    if (!create)
      return authError("the cache has no secret (" + path + "), so no entry can be authenticated");
    // Create it whole under a unique name, then link it into place: link
    // never replaces, so two racing processes agree on one secret.
    uint8_t raw[kSecretBytes];
    if (::getrandom(raw, sizeof raw, 0) != ssize_t(sizeof raw))
      return authError(std::string("cannot draw random bytes: ") + std::strerror(errno));
    std::string hex = llvm::toHex(llvm::ArrayRef<uint8_t>(raw, sizeof raw), true) + "\n";
    std::string tmp = path + ".tmp-" + std::to_string(::getpid());
    int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0)
      return authError("cannot create the cache secret " + tmp + ": " + std::strerror(errno));
    bool written = ::write(fd, hex.data(), hex.size()) == ssize_t(hex.size()) && ::fsync(fd) == 0;
    int writeErrno = errno;
    ::close(fd);
    int linked = written ? ::link(tmp.c_str(), path.c_str()) : -1;
    int linkErrno = errno;
    ::unlink(tmp.c_str());
    if (!written)
      return authError("cannot write the cache secret " + tmp + ": " + std::strerror(writeErrno));
    if (linked != 0 && linkErrno != EEXIST)
      return authError("cannot create the cache secret " + path + ": " + std::strerror(linkErrno));
    // Created, or another process won the race: read whichever is there.
  }
  return authError("the cache secret " + path + " vanished while being created");
}

} // namespace trnc::cache
