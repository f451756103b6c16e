// One collective call of a given size, ready to run repeatedly and to be
// timed: buffers sized for the collective on a communicator, and the call
// run through a set of entry points (the MPI library's own, or dispatch.h's
// choice) or with a given hierarchical configuration. Used by dispatch.h's
// trials, coll_tune and the benchmarks.
// Reductions use MPI_INT and MPI_SUM (bytes rounded down to whole ints, at
// least one); the others move MPI_BYTE. Nobody reads the results, so under
// SMPI the buffers are shared between the simulated ranks
// (mpi::MessageBuffer): a 16 MiB reduce over 256 ranks holds 8 GiB of them
// otherwise, twice during a trial.
#ifndef RANKSHAPE_LIB_COLL_WORKLOAD_H_
#define RANKSHAPE_LIB_COLL_WORKLOAD_H_

#include <mpi.h>

#include <cstdint>
#include <optional>
#include <vector>

#include "lib/coll/config.h"
#include "lib/coll/hierarchy.h"
#include "lib/mpi/communicator.h"
#include "lib/mpi/message_buffer.h"

namespace rankshape::coll {

/// Entry points with MPI's signatures: the MPI library's own (PMPI_,
/// native_calls()) or dispatch::calls().
struct Calls {
  int (*bcast)(void*, int, MPI_Datatype, int, MPI_Comm);
  int (*reduce)(const void*, void*, int, MPI_Datatype, MPI_Op, int, MPI_Comm);
  int (*allreduce)(const void*, void*, int, MPI_Datatype, MPI_Op, MPI_Comm);
  int (*gather)(const void*, int, MPI_Datatype, void*, int, MPI_Datatype, int, MPI_Comm);
  int (*scatter)(const void*, int, MPI_Datatype, void*, int, MPI_Datatype, int, MPI_Comm);
  int (*allgather)(const void*, int, MPI_Datatype, void*, int, MPI_Datatype, MPI_Comm);
  int (*reduce_scatter_block)(const void*, void*, int, MPI_Datatype, MPI_Op, MPI_Comm);
  int (*alltoall)(const void*, int, MPI_Datatype, void*, int, MPI_Datatype, MPI_Comm);
  int (*barrier)(MPI_Comm);
};
const Calls& native_calls();

class Workload {
 public:
  /// bytes: per message (bcast, reduce, allreduce), per block (the others).
  Workload(Collective c, std::int64_t bytes, MPI_Comm comm);

  /// The call through `calls` on comm.
  void run(const Calls& calls);
  void run_native() { run(native_calls()); }
  /// collectives.h on h with config.
  void run_hierarchical(const Hierarchy& h, const Config& config);

  /// Bytes of the whole buffers of the rank that holds the most (the root
  /// for gather and scatter), to bound one rank's memory.
  static std::int64_t footprint(Collective c, std::int64_t bytes, int ranks);
  /// Bytes of the buffers of all ranks together.
  static std::int64_t total_footprint(Collective c, std::int64_t bytes, int ranks);
  /// The elements a call of `bytes` passes (MPI_INT for reductions).
  static std::int64_t count(Collective c, std::int64_t bytes);

 private:
  // The send and receive buffers of a call of c by this rank.
  struct Buffers {
    mpi::MessageBuffer send, recv;
  };
  static Buffers buffers_for(Collective c, std::int64_t bytes, MPI_Comm comm, int root);

  Collective c_;
  MPI_Comm comm_;
  int count_ = 0, root_ = 0;
  MPI_Datatype type_ = MPI_BYTE;
  Buffers buffers_;
};

/// Collective over comm: runs call `warmup` times untimed, then `reps`
/// times, each started together (StartTogether); returns the median over
/// repetitions of the slowest rank's time (seconds), the same on every rank.
template <typename Call>
double time_collective(MPI_Comm comm, int warmup, int reps, Call&& call);

double median_of_slowest(MPI_Comm comm, std::vector<double> times);

/// Starts the repetitions of a timed call on every rank of comm at once,
/// as far as the clocks allow, and gives each its start time.
///
/// Under SMPI the simulated clock is one for all ranks, so every rank waits
/// (in simulated time) until one agreed instant and times from it. A
/// barrier alone lets ranks go unevenly: at 256 ranks the last leaves SMPI's
/// `ompi` barrier about 50 us after the first, and a reduce's root, timed
/// from its own early exit, waited for that too (8 B reduce: 104 us under
/// `ompi`, 33 us under `mvapich2`, whose barrier differs). Elsewhere clocks
/// are not shared: a barrier, then each rank's own clock (OSU's method).
/// That barrier is rankshape's own (dissemination: ceil(log2 p) rounds of
/// empty messages, on a private communicator), not MPI_Barrier: the
/// library's barrier is part of what is compared (Open MPI's HAN releases
/// a node's ranks after their leader, tuned all at about once), and with
/// it every collective timed after it differs with the library, even one
/// both run alike (alltoall, which HAN 4.1 leaves to tuned).
class StartTogether {
 public:
  /// Collective over comm (under SMPI: learns how late after the last
  /// rank's arrival an agreement leaves the others; elsewhere: splits off
  /// the private communicator of the barrier's messages).
  explicit StartTogether(MPI_Comm comm);
  /// Collective over comm: returns when this repetition starts, with its
  /// start time (MPI_Wtime).
  double next();
  /// True where one clock serves every rank (SMPI), so that next() gives
  /// all ranks one start.
  static bool clock_shared();

 private:
  MPI_Comm comm_;
  double slack_ = 0;
  std::optional<mpi::Communicator> own_;  // not under SMPI: the barrier's
};

template <typename Call>
double time_collective(MPI_Comm comm, int warmup, int reps, Call&& call) {
  for (int i = 0; i < warmup; ++i) call();
  StartTogether together(comm);
  std::vector<double> times;
  for (int i = 0; i < reps; ++i) {
    const double start = together.next();
    call();
    times.push_back(MPI_Wtime() - start);
  }
  return median_of_slowest(comm, std::move(times));
}

}  // namespace rankshape::coll

#endif  // RANKSHAPE_LIB_COLL_WORKLOAD_H_
