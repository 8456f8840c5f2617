//===- CacheFiles.cpp - Read a cache file without trusting what it is -----===//
//
// A cache directory may be shared, or written by something other than trnc,
// so a name in it can be a FIFO (open would block forever), a symlink to
// /dev/zero (a read would never end) or a huge file. Every read of an entry,
// a manifest or the secret goes through readRegularFile: opened with
// O_NOFOLLOW | O_NONBLOCK, checked to be a regular file of a bounded size
// with fstat, then read to exactly that size.
//
//===----------------------------------------------------------------------===//
#include "trnc/Compiler/Cache.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace trnc::cache {

llvm::Expected<std::optional<std::string>> readRegularFile(const std::string &path,
                                                           uint64_t maxBytes) {
  auto error = [&](const std::string &why) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(), "cannot read " + path + ": " + why);
  };
  int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    int err = errno;
    if (err == ENOENT || err == ENOTDIR)
      return std::optional<std::string>();
    if (err == ELOOP)
      return error("it is a symbolic link (cache files are regular files)");
    return error(std::strerror(err));
  }
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st;
  if (::fstat(fd, &st) != 0)
    return error(std::strerror(errno));
  if (!S_ISREG(st.st_mode))
    return error("it is not a regular file");
  if (uint64_t(st.st_size) > maxBytes)
    return error("it is " + std::to_string(st.st_size) + " bytes, more than the " +
                 std::to_string(maxBytes) + " a cache file may hold");
  std::string data(size_t(st.st_size), '\0');
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = ::read(fd, data.data() + done, data.size() - done);
    if (n < 0 && (errno == EINTR || errno == EAGAIN))
      continue;
    if (n < 0)
      return error(std::strerror(errno));
    if (n == 0)
      return error("it shrank while being read (" + std::to_string(done) + " of " +
                   std::to_string(data.size()) + " bytes)");
    done += size_t(n);
  }
  return std::optional<std::string>(std::move(data));
}

} // namespace trnc::cache
