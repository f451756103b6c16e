// A message buffer for the SMPI benchmarks: under SimGrid SMPI it comes
// from SMPI_SHARED_MALLOC, so that thousands of simulated ranks sending MiB
// messages fit in little real memory (run with
// --cfg=smpi/shared-malloc:global; the data is then garbage, the timing
// right); elsewhere from malloc.
#ifndef RANKSHAPE_BENCH_SIM_BUFFER_H_
#define RANKSHAPE_BENCH_SIM_BUFFER_H_

#include <mpi.h>

#include <cstddef>
#include <cstdlib>
#include <stdexcept>

namespace rankshape::bench {

struct Buffer {
  explicit Buffer(std::size_t bytes) : size(bytes) {
#ifdef SMPI_H
    data = static_cast<char*>(SMPI_SHARED_MALLOC(bytes == 0 ? 1 : bytes));
#else
    data = static_cast<char*>(std::malloc(bytes == 0 ? 1 : bytes));
#endif
    if (data == nullptr) throw std::runtime_error("out of memory for a message buffer");
  }
  ~Buffer() {
#ifdef SMPI_H
    SMPI_SHARED_FREE(data);
#else
    std::free(data);
#endif
  }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  char* data = nullptr;
  std::size_t size = 0;
};

}  // namespace rankshape::bench

#endif  // RANKSHAPE_BENCH_SIM_BUFFER_H_
