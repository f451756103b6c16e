#include "lib/io/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <vector>

namespace rankshape {
namespace {

[[noreturn]] void fail(const std::string& path, const std::string& what, int err) {
  throw std::runtime_error("cannot write " + path + ": " + what + ": " + std::strerror(err));
}

// A streambuf over a file descriptor that remembers the first write error.
class FdBuf : public std::streambuf {
 public:
  explicit FdBuf(int fd) : fd_(fd), buffer_(1 << 16) {
    setp(buffer_.data(), buffer_.data() + buffer_.size());
  }
  int error() const { return error_; }
  bool flush_all() { return sync() == 0; }

 protected:
  int_type overflow(int_type ch) override {
    if (sync() != 0) return traits_type::eof();
    if (!traits_type::eq_int_type(ch, traits_type::eof())) {
      *pptr() = traits_type::to_char_type(ch);
      pbump(1);
    }
    return traits_type::not_eof(ch);
  }
  int sync() override {
    const char* p = pbase();
    while (p < pptr()) {
      const ssize_t n = ::write(fd_, p, static_cast<std::size_t>(pptr() - p));
      if (n < 0) {
        if (errno == EINTR) continue;
        if (error_ == 0) error_ = errno;
        return -1;
      }
      p += n;
    }
    setp(buffer_.data(), buffer_.data() + buffer_.size());
    return 0;
  }

 private:
  int fd_;
  std::vector<char> buffer_;
  int error_ = 0;
};

// The umask can only be read by setting it; do that once, before any
// thread of ours could race on it.
mode_t process_umask() {
  static const mode_t mask = [] {
    const mode_t m = ::umask(0);
    ::umask(m);
    return m;
  }();
  return mask;
}

std::string directory_of(const std::string& path) {
  const std::size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

}  // namespace

void write_file_atomically(const std::string& path,
                           const std::function<void(std::ostream&)>& write) {
  std::string temp = path + ".tmp.XXXXXX";
  const int fd = ::mkstemp(temp.data());
  if (fd < 0) fail(path, "cannot create a temporary file beside it", errno);
  bool closed = false;
  try {
    // mkstemp creates 0600; outputs are ordinary files, readable like others.
    if (::fchmod(fd, 0666 & ~process_umask()) != 0) fail(path, "chmod failed", errno);
    FdBuf buf(fd);
    std::ostream out(&buf);
    write(out);
    out.flush();
    if (!buf.flush_all() || buf.error() != 0 || !out) {
      fail(path, "write failed", buf.error() ? buf.error() : EIO);
    }
    if (::fsync(fd) != 0) fail(path, "fsync failed", errno);
    closed = true;
    if (::close(fd) != 0) fail(path, "close failed", errno);
  } catch (...) {
    if (!closed) ::close(fd);
    ::unlink(temp.c_str());
    throw;
  }
  if (::rename(temp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(temp.c_str());
    fail(path, "rename failed", err);
  }
  // Make the rename itself durable.
  const int dir = ::open(directory_of(path).c_str(), O_RDONLY | O_DIRECTORY);
  if (dir >= 0) {
    ::fsync(dir);
    ::close(dir);
  }
}

}  // namespace rankshape
