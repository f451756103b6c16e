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

}  // namespace

void write_file_atomically(const std::string& path,
                           const std::function<void(std::ostream&)>& write) {
  std::string temp = path + ".tmp.XXXXXX";
  const int fd = ::mkstemp(temp.data());
  if (fd < 0) fail(path, "cannot create a temporary file beside it", errno);
  // mkstemp creates 0600; outputs are ordinary files, readable like others.
  const mode_t mask = ::umask(0);
  ::umask(mask);
  ::fchmod(fd, 0666 & ~mask);
  bool closed = false;
  try {
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
}

}  // namespace rankshape
