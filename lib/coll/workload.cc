#include "lib/coll/workload.h"

#include <algorithm>
#include <utility>

#include "lib/coll/collectives.h"
#include "lib/mpi/error.h"

namespace rankshape::coll {
namespace {

using mpi::check;

// Buffer bytes of one rank: send and receive. Gather's receive buffer and
// scatter's send buffer matter only at the root (MPI ignores them
// elsewhere), so only the root has them: 256 ranks gathering 1 MiB each
// hold 256 MiB, not 64 GiB.
std::pair<std::int64_t, std::int64_t> buffer_bytes(Collective c, std::int64_t bytes, int p,
                                                   bool root) {
  const std::int64_t at_root = root ? bytes * p : 0;
  switch (c) {
    case Collective::kBcast:
      return {0, bytes};
    case Collective::kReduce:
    case Collective::kAllreduce:
      return {bytes, bytes};
    case Collective::kGather:
      return {bytes, at_root};
    case Collective::kScatter:
      return {at_root, bytes};
    case Collective::kAllgather:
      return {bytes, bytes * p};
    case Collective::kReduceScatterBlock:
      return {bytes * p, bytes};
    case Collective::kAlltoall:
      return {bytes * p, bytes * p};
    case Collective::kBarrier:
      return {0, 0};
  }
  return {0, 0};
}

}  // namespace

std::int64_t Workload::footprint(Collective c, std::int64_t bytes, int ranks) {
  const auto [send, recv] = buffer_bytes(c, bytes, ranks, true);
  return send + recv;
}

std::int64_t Workload::total_footprint(Collective c, std::int64_t bytes, int ranks) {
  const auto [send, recv] = buffer_bytes(c, bytes, ranks, false);
  return footprint(c, bytes, ranks) + (ranks - 1) * (send + recv);
}

std::int64_t Workload::count(Collective c, std::int64_t bytes) {
  return is_reduction(c) ? std::max<std::int64_t>(1, bytes / 4) : bytes;
}

Workload::Buffers Workload::buffers_for(Collective c, std::int64_t bytes, MPI_Comm comm, int root) {
  int p = 0, me = 0;
  check(MPI_Comm_size(comm, &p), "MPI_Comm_size");
  check(MPI_Comm_rank(comm, &me), "MPI_Comm_rank");
  if (is_reduction(c)) bytes = count(c, bytes) * 4;  // whole ints
  const auto [send, recv] = buffer_bytes(c, bytes, p, me == root);
  return {mpi::MessageBuffer(static_cast<std::size_t>(send), 1),
          mpi::MessageBuffer(static_cast<std::size_t>(recv), 0)};
}

Workload::Workload(Collective c, std::int64_t bytes, MPI_Comm comm)
    : c_(c),
      comm_(comm),
      count_(static_cast<int>(count(c, bytes))),
      type_(is_reduction(c) ? MPI_INT : MPI_BYTE),
      buffers_(buffers_for(c, bytes, comm, root_)) {}

const Calls& native_calls() {
  static const Calls calls = {PMPI_Bcast,
                              PMPI_Reduce,
                              PMPI_Allreduce,
                              PMPI_Gather,
                              PMPI_Scatter,
                              PMPI_Allgather,
                              PMPI_Reduce_scatter_block,
                              PMPI_Alltoall,
                              PMPI_Barrier};
  return calls;
}

void Workload::run(const Calls& calls) {
  void* s = buffers_.send.data();
  void* r = buffers_.recv.data();
  switch (c_) {
    case Collective::kBcast:
      check(calls.bcast(r, count_, type_, root_, comm_), "MPI_Bcast");
      break;
    case Collective::kReduce:
      check(calls.reduce(s, r, count_, type_, MPI_SUM, root_, comm_), "MPI_Reduce");
      break;
    case Collective::kAllreduce:
      check(calls.allreduce(s, r, count_, type_, MPI_SUM, comm_), "MPI_Allreduce");
      break;
    case Collective::kGather:
      check(calls.gather(s, count_, type_, r, count_, type_, root_, comm_), "MPI_Gather");
      break;
    case Collective::kScatter:
      check(calls.scatter(s, count_, type_, r, count_, type_, root_, comm_), "MPI_Scatter");
      break;
    case Collective::kAllgather:
      check(calls.allgather(s, count_, type_, r, count_, type_, comm_), "MPI_Allgather");
      break;
    case Collective::kReduceScatterBlock:
      check(calls.reduce_scatter_block(s, r, count_, type_, MPI_SUM, comm_),
            "MPI_Reduce_scatter_block");
      break;
    case Collective::kAlltoall:
      check(calls.alltoall(s, count_, type_, r, count_, type_, comm_), "MPI_Alltoall");
      break;
    case Collective::kBarrier:
      check(calls.barrier(comm_), "MPI_Barrier");
      break;
  }
}

void Workload::run_hierarchical(const Hierarchy& h, const Config& config) {
  void* s = buffers_.send.data();
  void* r = buffers_.recv.data();
  switch (c_) {
    case Collective::kBcast:
      check(bcast(r, count_, type_, root_, h, config), "bcast");
      break;
    case Collective::kReduce:
      check(reduce(s, r, count_, type_, MPI_SUM, root_, h, config), "reduce");
      break;
    case Collective::kAllreduce:
      check(allreduce(s, r, count_, type_, MPI_SUM, h, config), "allreduce");
      break;
    case Collective::kGather:
      check(gather(s, count_, type_, r, count_, type_, root_, h), "gather");
      break;
    case Collective::kScatter:
      check(scatter(s, count_, type_, r, count_, type_, root_, h), "scatter");
      break;
    case Collective::kAllgather:
      check(allgather(s, count_, type_, r, count_, type_, h, config), "allgather");
      break;
    case Collective::kReduceScatterBlock:
      check(reduce_scatter_block(s, r, count_, type_, MPI_SUM, h, config), "reduce_scatter_block");
      break;
    case Collective::kAlltoall:
      check(alltoall(s, count_, type_, r, count_, type_, h), "alltoall");
      break;
    case Collective::kBarrier:
      check(barrier(h, config), "barrier");
      break;
  }
}

#ifdef RANKSHAPE_SMPI
bool StartTogether::clock_shared() { return true; }

namespace {
// The latest of every rank's now() (the instant the last rank arrived),
// and on this rank how long after it the agreement returned.
std::pair<double, double> latest_arrival(MPI_Comm comm) {
  double now = MPI_Wtime(), latest = 0;
  check(PMPI_Allreduce(&now, &latest, 1, MPI_DOUBLE, MPI_MAX, comm), "MPI_Allreduce");
  return {latest, MPI_Wtime() - latest};
}
}  // namespace

StartTogether::StartTogether(MPI_Comm comm) : comm_(comm) {
  double after = latest_arrival(comm).second;
  check(PMPI_Allreduce(&after, &slack_, 1, MPI_DOUBLE, MPI_MAX, comm), "MPI_Allreduce");
}

double StartTogether::next() {
  check(PMPI_Barrier(comm_), "MPI_Barrier");
  // Twice the slowest return seen: the start is after every rank's return,
  // and every wait is longer than SMPI's smpi/cpu-threshold (1 us by
  // default), below which a computation is dropped.
  const double start = latest_arrival(comm_).first + 2 * slack_ + 1e-5;
  const double wait = start - MPI_Wtime();
  if (wait > 0) smpi_execute(wait);  // simulated time passes, nothing runs
  return start;
}
#else
bool StartTogether::clock_shared() { return false; }

// MPI_Comm_split, not a dup: it copies no attributes (rankshape's own
// context among them) and runs no callbacks of the program's.
StartTogether::StartTogether(MPI_Comm comm) : comm_(comm) {
  int rank = 0;
  check(MPI_Comm_rank(comm_, &rank), "MPI_Comm_rank");
  MPI_Comm own = MPI_COMM_NULL;
  check(PMPI_Comm_split(comm_, 0, rank, &own), "MPI_Comm_split");
  own_.emplace(own, mpi::Ownership::kTake);
}

double StartTogether::next() {
  // Dissemination: in round k every rank tells rank + 2^k and hears from
  // rank - 2^k; after ceil(log2 p) rounds each has heard from all.
  const MPI_Comm c = own_->get();
  const int p = own_->size(), me = own_->rank();
  for (int d = 1; d < p; d *= 2) {
    check(PMPI_Sendrecv(nullptr, 0, MPI_BYTE, (me + d) % p, 0, nullptr, 0, MPI_BYTE,
                        (me - d + p) % p, 0, c, MPI_STATUS_IGNORE),
          "MPI_Sendrecv");
  }
  return MPI_Wtime();
}
#endif

double median_of_slowest(MPI_Comm comm, std::vector<double> times) {
  check(PMPI_Allreduce(MPI_IN_PLACE, times.data(), static_cast<int>(times.size()), MPI_DOUBLE,
                       MPI_MAX, comm),
        "MPI_Allreduce");
  if (times.empty()) return 0;
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

}  // namespace rankshape::coll
