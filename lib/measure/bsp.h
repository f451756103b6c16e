// BSP machine parameters of a communicator (van Duijn §5.1): the
// computation rate r (DAXPY flop/s), and g (seconds per 8-byte word) and l
// (seconds per superstep) from full h-relations, every rank sending and
// receiving exactly h words spread evenly over the others, fitted as
// T(h) = l + g h by least squares. A superstep waits for the slowest rank,
// so T(h) is the maximum over ranks and r the minimum.
#ifndef RANKSHAPE_LIB_MEASURE_BSP_H_
#define RANKSHAPE_LIB_MEASURE_BSP_H_

#include <cstddef>
#include <vector>

#include "lib/mpi/communicator.h"

namespace rankshape {

struct BspParameters {
  double r = 0;  // flop/s (DAXPY: 2 flops per element)
  double g = 0;  // s per word
  double l = 0;  // s
  double r_squared = 1;
};

/// This rank's DAXPY rate over n doubles: the median of reps timings.
double daxpy_rate(std::size_t n, int reps);

/// Collective over comm. h values are rounded up to multiples of p - 1;
/// needs at least two different ones when p > 1 (throws
/// std::invalid_argument otherwise). With one rank, g = l = 0.
BspParameters measure_bsp(const mpi::Communicator& comm, const std::vector<std::size_t>& words,
                          int reps);

}  // namespace rankshape

#endif  // RANKSHAPE_LIB_MEASURE_BSP_H_
