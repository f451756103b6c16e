// A message buffer for timing: under SimGrid SMPI it comes from
// SMPI_SHARED_MALLOC, so that thousands of simulated ranks sending MiB
// messages fit in little real memory (SMPI's default smpi/shared-malloc,
// global; the data is then garbage, the timing right, as no computation is
// simulated on it); elsewhere from malloc, every byte set to `fill`. For
// buffers whose contents nobody reads: benchmarks and dispatch.h's trials.
#ifndef RANKSHAPE_LIB_MPI_MESSAGE_BUFFER_H_
#define RANKSHAPE_LIB_MPI_MESSAGE_BUFFER_H_

#include <mpi.h>

#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <new>
#include <utility>

namespace rankshape::mpi {

/// What a MessageBuffer throws when the memory cannot be had: a bad_alloc
/// (callers that catch those keep working) that says which allocation failed.
class MessageBufferAllocError : public std::bad_alloc {
 public:
  const char* what() const noexcept override { return "out of memory for a message buffer"; }
};

class MessageBuffer {
 public:
  explicit MessageBuffer(std::size_t bytes, unsigned char fill = 0) : size_(bytes) {
#ifdef SMPI_H
    (void)fill;
    data_ = static_cast<char*>(SMPI_SHARED_MALLOC(bytes == 0 ? 1 : bytes));
#else
    data_ = static_cast<char*>(std::malloc(bytes == 0 ? 1 : bytes));
    if (data_ != nullptr) std::memset(data_, fill, bytes);
#endif
    if (data_ == nullptr) throw MessageBufferAllocError();
  }
  ~MessageBuffer() { release(); }
  MessageBuffer(const MessageBuffer&) = delete;
  MessageBuffer& operator=(const MessageBuffer&) = delete;
  MessageBuffer(MessageBuffer&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}
  MessageBuffer& operator=(MessageBuffer&& other) noexcept {
    if (this != &other) {
      release();
      data_ = std::exchange(other.data_, nullptr);
      size_ = std::exchange(other.size_, 0);
    }
    return *this;
  }

  char* data() { return data_; }
  const char* data() const { return data_; }
  std::size_t size() const { return size_; }

 private:
  void release() {
    if (data_ == nullptr) return;
#ifdef SMPI_H
    SMPI_SHARED_FREE(data_);
#else
    std::free(data_);
#endif
    data_ = nullptr;
  }

  char* data_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace rankshape::mpi

#endif  // RANKSHAPE_LIB_MPI_MESSAGE_BUFFER_H_
