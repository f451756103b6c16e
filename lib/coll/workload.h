// One collective call of a given size, ready to run repeatedly and to be
// timed: buffers sized for the collective on a communicator, and the call
// run three ways (the MPI library's own, dispatch.h's choice, or a given
// hierarchical configuration). Used by coll_tune and the benchmarks.
// Reductions use MPI_INT and MPI_SUM (bytes rounded down to whole ints, at
// least one); the others move MPI_BYTE.
#ifndef RANKSHAPE_LIB_COLL_WORKLOAD_H_
#define RANKSHAPE_LIB_COLL_WORKLOAD_H_

#include <mpi.h>

#include <cstdint>
#include <vector>

#include "lib/coll/config.h"
#include "lib/coll/hierarchy.h"

namespace rankshape::coll {

class Workload {
 public:
  /// bytes: per message (bcast, reduce, allreduce), per block (the others).
  Workload(Collective c, std::int64_t bytes, MPI_Comm comm);

  /// PMPI_ call on comm.
  void run_native();
  /// dispatch::X on comm.
  void run_dispatched();
  /// collectives.h on h with config.
  void run_hierarchical(const Hierarchy& h, const Config& config);

  /// Bytes of the whole buffers of one rank (to bound memory).
  static std::int64_t footprint(Collective c, std::int64_t bytes, int ranks);

 private:
  Collective c_;
  MPI_Comm comm_;
  int count_ = 0, root_ = 0;
  MPI_Datatype type_ = MPI_BYTE;
  std::vector<char> send_, recv_;
};

/// Collective over comm: runs call `warmup` times untimed, then `reps`
/// times, each started together after a barrier; returns the median over
/// repetitions of the slowest rank's time (seconds), the same on every rank.
template <typename Call>
double time_collective(MPI_Comm comm, int warmup, int reps, Call&& call);

double median_of_slowest(MPI_Comm comm, std::vector<double> times);

template <typename Call>
double time_collective(MPI_Comm comm, int warmup, int reps, Call&& call) {
  for (int i = 0; i < warmup; ++i) call();
  std::vector<double> times;
  for (int i = 0; i < reps; ++i) {
    PMPI_Barrier(comm);
    const double start = MPI_Wtime();
    call();
    times.push_back(MPI_Wtime() - start);
  }
  return median_of_slowest(comm, std::move(times));
}

}  // namespace rankshape::coll

#endif  // RANKSHAPE_LIB_COLL_WORKLOAD_H_
