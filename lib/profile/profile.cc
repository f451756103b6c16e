// The traffic profiler as a drop-in (PMPI interposition): an unmodified MPI
// program, preloaded with librankshape_profile.so or linked with
// //lib/profile, counts what it sends to whom, and at MPI_Finalize rank 0
// writes one traffic file (recorder.h: $RANKSHAPE_PROFILE_OUT, else
// ./rankshape.traffic) that read_traffic() reads.
//
// Counted, from C and Fortran (mpif.h, use mpi, use mpi_f08):
//   - point to point: Send, Bsend, Ssend, Rsend, their nonblocking forms,
//     Sendrecv, Sendrecv_replace, and persistent sends (Send_init and its
//     kin) at every Start or Startall;
//   - the collectives Bcast, Reduce, Allreduce, Gather, Scatter, Allgather,
//     Reduce_scatter_block, Alltoall and Barrier, five vector forms and
//     eleven nonblocking ones, as the messages of the algorithms in
//     algorithms.h (intra-communicators only);
//   - neighbourhood collectives: what each out-neighbour gets.
// docs/profile.md lists what is not counted, and the overhead.
//
// Every entry point calls the MPI library's own routine and counts only
// what succeeded. Fortran entry points forward to the MPI library's own
// definition of the same Fortran symbol (dlsym RTLD_NEXT, at the first
// call; MPICH has no pmpi_ forms of its mpi_f08 ones), so Fortran's
// handles, statuses and sentinels pass untouched; under MPICH those come
// back through the C entry points here, which then do not count again. Do not
// preload this with librankshape_coll.so: whichever comes first takes the
// collectives.
#include <dlfcn.h>
#include <mpi.h>

#include <cstdio>
#include <string>
#include <vector>

#include "lib/mpi/fortran.h"
#include "lib/profile/algorithms.h"
#include "lib/profile/recorder.h"

#ifdef TRACE_CALL_LOCATION
#error "build the profiler without TRACE_CALL_LOCATION"
#endif

namespace rankshape::profile {
namespace {

bool counting(int code) { return code == MPI_SUCCESS && !forwarding_from_fortran(); }

// A collective's sends from this rank on an intra-communicator:
// sends(size, rank, out) appends them to this thread's buffer.
template <class Sender>
void record_collective(const CommInfo* comm, Sender sends) {
  if (comm == nullptr || comm->inter) return;
  Sends& out = scratch_sends();
  sends(comm->size, comm->rank, out);
  record_sends(*comm, out);
}

// A collective's sends from this rank, counted after it succeeded.
template <class Sender>
int collective(int code, MPI_Comm comm, Sender sends) {
  if (!counting(code)) return code;
  record_collective(comm_info(comm), sends);
  return code;
}

// The algorithms of the collectives whose sends follow from one block
// size and a root (CollectiveCall::call).
enum class Algorithm {
  kBcast,
  kReduce,
  kAllreduce,
  kGather,
  kScatter,
  kAllgather,
  kPairwise,
  kBarrier
};

void algorithm_sends(Algorithm a, int n, int r, int root, std::int64_t bytes, Sends& out) {
  switch (a) {
    case Algorithm::kBcast:
      return bcast(n, r, root, bytes, out);
    case Algorithm::kReduce:
      return reduce(n, r, root, bytes, out);
    case Algorithm::kAllreduce:
      return allreduce(n, r, bytes, out);
    case Algorithm::kGather:
      return gather(n, r, root, bytes, out);
    case Algorithm::kScatter:
      return scatter(n, r, root, bytes, out);
    case Algorithm::kAllgather:
      return allgather(n, r, bytes, out);
    case Algorithm::kPairwise:
      return pairwise(n, r, bytes, out);
    case Algorithm::kBarrier:
      return barrier(n, r, out);
  }
}

// A keyed collective that does not repeat the last one: its sends, counted
// and remembered (out of line, so that keyed() inlines into each entry
// point).
[[gnu::noinline]] void record_first(const CollectiveCall& call, Algorithm a) {
  if (forwarding_from_fortran()) return;
  const CommInfo* info = comm_info(call.comm);
  if (info == nullptr || info->inter) return;
  const std::int64_t bytes = a == Algorithm::kBarrier ? 0 : bytes_of(call.count, call.type);
  Sends& out = scratch_sends();
  algorithm_sends(a, info->size, info->rank, call.root, bytes, out);
  record_keyed(call, bytes, *info, out);
}

// collective() for those: a call that repeats the last one is only
// counted (repeat_last()), so that a loop of small collectives costs
// little more than the calls. count elements of type make the block.
inline int keyed(int code, MPI_Comm comm, Algorithm a, int count, MPI_Datatype type, int root) {
  if (code != MPI_SUCCESS) return code;
  const CollectiveCall call{comm, static_cast<int>(a), count, type, root};
  if (!repeat_last(call)) record_first(call, a);
  return code;
}

// A neighbourhood collective's sends: bytes(i) to comm's i-th out-neighbour.
template <class Bytes>
void to_neighbours(MPI_Comm comm, Bytes bytes, Sends& out) {
  const std::vector<int> to = out_neighbours(comm);
  for (std::size_t i = 0; i < to.size(); ++i) out.push_back({to[i], bytes(i), 1});
}

}  // namespace
}  // namespace rankshape::profile

using rankshape::profile::Algorithm;
using rankshape::profile::blocks;
using rankshape::profile::bytes_of;
using rankshape::profile::collective;
using rankshape::profile::counting;
using rankshape::profile::keyed;
using rankshape::profile::record_send;
using rankshape::profile::to_neighbours;
namespace rp = rankshape::profile;

#define RANKSHAPE_BLOCKING_SEND(Name)                                                         \
  extern "C" int MPI_##Name(const void* buf, int count, MPI_Datatype type, int dest, int tag, \
                            MPI_Comm comm) {                                                  \
    const int code = PMPI_##Name(buf, count, type, dest, tag, comm);                          \
    if (code == MPI_SUCCESS) record_send(comm, dest, count, type);                            \
    return code;                                                                              \
  }
#define RANKSHAPE_NONBLOCKING_SEND(Name)                                                      \
  extern "C" int MPI_##Name(const void* buf, int count, MPI_Datatype type, int dest, int tag, \
                            MPI_Comm comm, MPI_Request* request) {                            \
    const int code = PMPI_##Name(buf, count, type, dest, tag, comm, request);                 \
    if (code == MPI_SUCCESS) record_send(comm, dest, count, type);                            \
    return code;                                                                              \
  }
#define RANKSHAPE_PERSISTENT_SEND(Name)                                                       \
  extern "C" int MPI_##Name(const void* buf, int count, MPI_Datatype type, int dest, int tag, \
                            MPI_Comm comm, MPI_Request* request) {                            \
    const int code = PMPI_##Name(buf, count, type, dest, tag, comm, request);                 \
    if (code == MPI_SUCCESS) {                                                                \
      rankshape::profile::register_persistent(*request, comm, dest, count, type);             \
    }                                                                                         \
    return code;                                                                              \
  }

RANKSHAPE_BLOCKING_SEND(Send)
RANKSHAPE_BLOCKING_SEND(Bsend)
RANKSHAPE_BLOCKING_SEND(Ssend)
RANKSHAPE_BLOCKING_SEND(Rsend)
RANKSHAPE_NONBLOCKING_SEND(Isend)
RANKSHAPE_NONBLOCKING_SEND(Ibsend)
RANKSHAPE_NONBLOCKING_SEND(Issend)
RANKSHAPE_NONBLOCKING_SEND(Irsend)
RANKSHAPE_PERSISTENT_SEND(Send_init)
RANKSHAPE_PERSISTENT_SEND(Bsend_init)
RANKSHAPE_PERSISTENT_SEND(Ssend_init)
RANKSHAPE_PERSISTENT_SEND(Rsend_init)
#undef RANKSHAPE_BLOCKING_SEND
#undef RANKSHAPE_NONBLOCKING_SEND
#undef RANKSHAPE_PERSISTENT_SEND

extern "C" int MPI_Sendrecv(const void* send, int send_count, MPI_Datatype send_type, int dest,
                            int send_tag, void* recv, int recv_count, MPI_Datatype recv_type,
                            int source, int recv_tag, MPI_Comm comm, MPI_Status* status) {
  const int code = PMPI_Sendrecv(send, send_count, send_type, dest, send_tag, recv, recv_count,
                                 recv_type, source, recv_tag, comm, status);
  if (code == MPI_SUCCESS) record_send(comm, dest, send_count, send_type);
  return code;
}

extern "C" int MPI_Sendrecv_replace(void* buf, int count, MPI_Datatype type, int dest, int send_tag,
                                    int source, int recv_tag, MPI_Comm comm, MPI_Status* status) {
  const int code =
      PMPI_Sendrecv_replace(buf, count, type, dest, send_tag, source, recv_tag, comm, status);
  if (code == MPI_SUCCESS) record_send(comm, dest, count, type);
  return code;
}

extern "C" int MPI_Start(MPI_Request* request) {
  const MPI_Request started = *request;
  const int code = PMPI_Start(request);
  if (counting(code)) rankshape::profile::record_start(started);
  return code;
}

extern "C" int MPI_Startall(int count, MPI_Request requests[]) {
  const int code = PMPI_Startall(count, requests);
  if (counting(code)) {
    for (int i = 0; i < count; ++i) rankshape::profile::record_start(requests[i]);
  }
  return code;
}

extern "C" int MPI_Request_free(MPI_Request* request) {
  if (request != nullptr) rankshape::profile::forget_persistent(*request);
  return PMPI_Request_free(request);
}

extern "C" int MPI_Type_free(MPI_Datatype* type) {
  if (type != nullptr) rankshape::profile::forget_datatype(*type);
  return PMPI_Type_free(type);
}

extern "C" int MPI_Bcast(void* buffer, int count, MPI_Datatype type, int root, MPI_Comm comm) {
  return keyed(PMPI_Bcast(buffer, count, type, root, comm), comm, Algorithm::kBcast, count, type,
               root);
}

extern "C" int MPI_Reduce(const void* send, void* recv, int count, MPI_Datatype type, MPI_Op op,
                          int root, MPI_Comm comm) {
  return keyed(PMPI_Reduce(send, recv, count, type, op, root, comm), comm, Algorithm::kReduce,
               count, type, root);
}

extern "C" int MPI_Allreduce(const void* send, void* recv, int count, MPI_Datatype type, MPI_Op op,
                             MPI_Comm comm) {
  return keyed(PMPI_Allreduce(send, recv, count, type, op, comm), comm, Algorithm::kAllreduce,
               count, type, 0);
}

extern "C" int MPI_Gather(const void* send, int send_count, MPI_Datatype send_type, void* recv,
                          int recv_count, MPI_Datatype recv_type, int root, MPI_Comm comm) {
  return keyed(PMPI_Gather(send, send_count, send_type, recv, recv_count, recv_type, root, comm),
               comm, Algorithm::kGather, send_count, send_type, root);
}

extern "C" int MPI_Scatter(const void* send, int send_count, MPI_Datatype send_type, void* recv,
                           int recv_count, MPI_Datatype recv_type, int root, MPI_Comm comm) {
  return keyed(PMPI_Scatter(send, send_count, send_type, recv, recv_count, recv_type, root, comm),
               comm, Algorithm::kScatter, send_count, send_type, root);
}

// Allgather, Reduce_scatter_block and Alltoall count the receive side's
// block, which MPI_IN_PLACE leaves the only one given.
extern "C" int MPI_Allgather(const void* send, int send_count, MPI_Datatype send_type, void* recv,
                             int recv_count, MPI_Datatype recv_type, MPI_Comm comm) {
  return keyed(PMPI_Allgather(send, send_count, send_type, recv, recv_count, recv_type, comm), comm,
               Algorithm::kAllgather, recv_count, recv_type, 0);
}

extern "C" int MPI_Reduce_scatter_block(const void* send, void* recv, int count, MPI_Datatype type,
                                        MPI_Op op, MPI_Comm comm) {
  return keyed(PMPI_Reduce_scatter_block(send, recv, count, type, op, comm), comm,
               Algorithm::kPairwise, count, type, 0);
}

extern "C" int MPI_Alltoall(const void* send, int send_count, MPI_Datatype send_type, void* recv,
                            int recv_count, MPI_Datatype recv_type, MPI_Comm comm) {
  return keyed(PMPI_Alltoall(send, send_count, send_type, recv, recv_count, recv_type, comm), comm,
               Algorithm::kPairwise, recv_count, recv_type, 0);
}

extern "C" int MPI_Barrier(MPI_Comm comm) {
  return keyed(PMPI_Barrier(comm), comm, Algorithm::kBarrier, 0, MPI_DATATYPE_NULL, 0);
}

// The vector forms: Alltoallv counts the receive side when sending in
// place; Scatterv's send counts mean something at its root only.
extern "C" int MPI_Alltoallv(const void* send, const int send_counts[], const int send_displs[],
                             MPI_Datatype send_type, void* recv, const int recv_counts[],
                             const int recv_displs[], MPI_Datatype recv_type, MPI_Comm comm) {
  return collective(PMPI_Alltoallv(send, send_counts, send_displs, send_type, recv, recv_counts,
                                   recv_displs, recv_type, comm),
                    comm, [&](int n, int r, rp::Sends& out) {
                      rp::pairwise_v(n, r,
                                     send == MPI_IN_PLACE ? blocks(n, recv_counts, recv_type)
                                                          : blocks(n, send_counts, send_type),
                                     out);
                    });
}

extern "C" int MPI_Allgatherv(const void* send, int send_count, MPI_Datatype send_type, void* recv,
                              const int recv_counts[], const int displs[], MPI_Datatype recv_type,
                              MPI_Comm comm) {
  return collective(
      PMPI_Allgatherv(send, send_count, send_type, recv, recv_counts, displs, recv_type, comm),
      comm, [&](int n, int r, rp::Sends& out) {
        rp::allgather_v(n, r, blocks(n, recv_counts, recv_type), out);
      });
}

extern "C" int MPI_Gatherv(const void* send, int send_count, MPI_Datatype send_type, void* recv,
                           const int recv_counts[], const int displs[], MPI_Datatype recv_type,
                           int root, MPI_Comm comm) {
  return collective(
      PMPI_Gatherv(send, send_count, send_type, recv, recv_counts, displs, recv_type, root, comm),
      comm, [&](int n, int r, rp::Sends& out) {
        rp::gather(n, r, root, bytes_of(send_count, send_type), out);
      });
}

extern "C" int MPI_Scatterv(const void* send, const int send_counts[], const int displs[],
                            MPI_Datatype send_type, void* recv, int recv_count,
                            MPI_Datatype recv_type, int root, MPI_Comm comm) {
  return collective(
      PMPI_Scatterv(send, send_counts, displs, send_type, recv, recv_count, recv_type, root, comm),
      comm, [&](int n, int r, rp::Sends& out) {
        if (r == root) rp::pairwise_v(n, r, blocks(n, send_counts, send_type), out);
      });
}

extern "C" int MPI_Reduce_scatter(const void* send, void* recv, const int recv_counts[],
                                  MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  return collective(PMPI_Reduce_scatter(send, recv, recv_counts, type, op, comm), comm,
                    [&](int n, int r, rp::Sends& out) {
                      rp::pairwise_v(n, r, blocks(n, recv_counts, type), out);
                    });
}

// Neighbourhood collectives: what each out-neighbour of the topology gets.
extern "C" int MPI_Neighbor_allgather(const void* send, int send_count, MPI_Datatype send_type,
                                      void* recv, int recv_count, MPI_Datatype recv_type,
                                      MPI_Comm comm) {
  return collective(
      PMPI_Neighbor_allgather(send, send_count, send_type, recv, recv_count, recv_type, comm), comm,
      [&](int, int, rp::Sends& out) {
        to_neighbours(
            comm, [&](std::size_t) { return bytes_of(send_count, send_type); }, out);
      });
}

extern "C" int MPI_Neighbor_allgatherv(const void* send, int send_count, MPI_Datatype send_type,
                                       void* recv, const int recv_counts[], const int displs[],
                                       MPI_Datatype recv_type, MPI_Comm comm) {
  return collective(PMPI_Neighbor_allgatherv(send, send_count, send_type, recv, recv_counts, displs,
                                             recv_type, comm),
                    comm, [&](int, int, rp::Sends& out) {
                      to_neighbours(
                          comm, [&](std::size_t) { return bytes_of(send_count, send_type); }, out);
                    });
}

extern "C" int MPI_Neighbor_alltoall(const void* send, int send_count, MPI_Datatype send_type,
                                     void* recv, int recv_count, MPI_Datatype recv_type,
                                     MPI_Comm comm) {
  return collective(
      PMPI_Neighbor_alltoall(send, send_count, send_type, recv, recv_count, recv_type, comm), comm,
      [&](int, int, rp::Sends& out) {
        to_neighbours(
            comm, [&](std::size_t) { return bytes_of(send_count, send_type); }, out);
      });
}

extern "C" int MPI_Neighbor_alltoallv(const void* send, const int send_counts[],
                                      const int send_displs[], MPI_Datatype send_type, void* recv,
                                      const int recv_counts[], const int recv_displs[],
                                      MPI_Datatype recv_type, MPI_Comm comm) {
  return collective(PMPI_Neighbor_alltoallv(send, send_counts, send_displs, send_type, recv,
                                            recv_counts, recv_displs, recv_type, comm),
                    comm, [&](int, int, rp::Sends& out) {
                      to_neighbours(
                          comm, [&](std::size_t i) { return bytes_of(send_counts[i], send_type); },
                          out);
                    });
}

extern "C" int MPI_Neighbor_alltoallw(const void* send, const int send_counts[],
                                      const MPI_Aint send_displs[], const MPI_Datatype send_types[],
                                      void* recv, const int recv_counts[],
                                      const MPI_Aint recv_displs[], const MPI_Datatype recv_types[],
                                      MPI_Comm comm) {
  return collective(
      PMPI_Neighbor_alltoallw(send, send_counts, send_displs, send_types, recv, recv_counts,
                              recv_displs, recv_types, comm),
      comm, [&](int, int, rp::Sends& out) {
        to_neighbours(
            comm, [&](std::size_t i) { return bytes_of(send_counts[i], send_types[i]); }, out);
      });
}

// Nonblocking collectives: counted when started, as their blocking forms.
extern "C" int MPI_Ibcast(void* buffer, int count, MPI_Datatype type, int root, MPI_Comm comm,
                          MPI_Request* request) {
  return keyed(PMPI_Ibcast(buffer, count, type, root, comm, request), comm, Algorithm::kBcast,
               count, type, root);
}

extern "C" int MPI_Ireduce(const void* send, void* recv, int count, MPI_Datatype type, MPI_Op op,
                           int root, MPI_Comm comm, MPI_Request* request) {
  return keyed(PMPI_Ireduce(send, recv, count, type, op, root, comm, request), comm,
               Algorithm::kReduce, count, type, root);
}

extern "C" int MPI_Iallreduce(const void* send, void* recv, int count, MPI_Datatype type, MPI_Op op,
                              MPI_Comm comm, MPI_Request* request) {
  return keyed(PMPI_Iallreduce(send, recv, count, type, op, comm, request), comm,
               Algorithm::kAllreduce, count, type, 0);
}

extern "C" int MPI_Igather(const void* send, int send_count, MPI_Datatype send_type, void* recv,
                           int recv_count, MPI_Datatype recv_type, int root, MPI_Comm comm,
                           MPI_Request* request) {
  return keyed(
      PMPI_Igather(send, send_count, send_type, recv, recv_count, recv_type, root, comm, request),
      comm, Algorithm::kGather, send_count, send_type, root);
}

extern "C" int MPI_Iscatter(const void* send, int send_count, MPI_Datatype send_type, void* recv,
                            int recv_count, MPI_Datatype recv_type, int root, MPI_Comm comm,
                            MPI_Request* request) {
  return keyed(
      PMPI_Iscatter(send, send_count, send_type, recv, recv_count, recv_type, root, comm, request),
      comm, Algorithm::kScatter, send_count, send_type, root);
}

extern "C" int MPI_Iallgather(const void* send, int send_count, MPI_Datatype send_type, void* recv,
                              int recv_count, MPI_Datatype recv_type, MPI_Comm comm,
                              MPI_Request* request) {
  return keyed(
      PMPI_Iallgather(send, send_count, send_type, recv, recv_count, recv_type, comm, request),
      comm, Algorithm::kAllgather, recv_count, recv_type, 0);
}

extern "C" int MPI_Ialltoall(const void* send, int send_count, MPI_Datatype send_type, void* recv,
                             int recv_count, MPI_Datatype recv_type, MPI_Comm comm,
                             MPI_Request* request) {
  return keyed(
      PMPI_Ialltoall(send, send_count, send_type, recv, recv_count, recv_type, comm, request), comm,
      Algorithm::kPairwise, recv_count, recv_type, 0);
}

extern "C" int MPI_Ireduce_scatter_block(const void* send, void* recv, int count, MPI_Datatype type,
                                         MPI_Op op, MPI_Comm comm, MPI_Request* request) {
  return keyed(PMPI_Ireduce_scatter_block(send, recv, count, type, op, comm, request), comm,
               Algorithm::kPairwise, count, type, 0);
}

extern "C" int MPI_Ibarrier(MPI_Comm comm, MPI_Request* request) {
  return keyed(PMPI_Ibarrier(comm, request), comm, Algorithm::kBarrier, 0, MPI_DATATYPE_NULL, 0);
}

extern "C" int MPI_Ialltoallv(const void* send, const int send_counts[], const int send_displs[],
                              MPI_Datatype send_type, void* recv, const int recv_counts[],
                              const int recv_displs[], MPI_Datatype recv_type, MPI_Comm comm,
                              MPI_Request* request) {
  return collective(PMPI_Ialltoallv(send, send_counts, send_displs, send_type, recv, recv_counts,
                                    recv_displs, recv_type, comm, request),
                    comm, [&](int n, int r, rp::Sends& out) {
                      rp::pairwise_v(n, r,
                                     send == MPI_IN_PLACE ? blocks(n, recv_counts, recv_type)
                                                          : blocks(n, send_counts, send_type),
                                     out);
                    });
}

extern "C" int MPI_Iallgatherv(const void* send, int send_count, MPI_Datatype send_type, void* recv,
                               const int recv_counts[], const int displs[], MPI_Datatype recv_type,
                               MPI_Comm comm, MPI_Request* request) {
  return collective(PMPI_Iallgatherv(send, send_count, send_type, recv, recv_counts, displs,
                                     recv_type, comm, request),
                    comm, [&](int n, int r, rp::Sends& out) {
                      rp::allgather_v(n, r, blocks(n, recv_counts, recv_type), out);
                    });
}

extern "C" int MPI_Ineighbor_alltoall(const void* send, int send_count, MPI_Datatype send_type,
                                      void* recv, int recv_count, MPI_Datatype recv_type,
                                      MPI_Comm comm, MPI_Request* request) {
  return collective(PMPI_Ineighbor_alltoall(send, send_count, send_type, recv, recv_count,
                                            recv_type, comm, request),
                    comm, [&](int, int, rp::Sends& out) {
                      to_neighbours(
                          comm, [&](std::size_t) { return bytes_of(send_count, send_type); }, out);
                    });
}

extern "C" int MPI_Ineighbor_allgather(const void* send, int send_count, MPI_Datatype send_type,
                                       void* recv, int recv_count, MPI_Datatype recv_type,
                                       MPI_Comm comm, MPI_Request* request) {
  return collective(PMPI_Ineighbor_allgather(send, send_count, send_type, recv, recv_count,
                                             recv_type, comm, request),
                    comm, [&](int, int, rp::Sends& out) {
                      to_neighbours(
                          comm, [&](std::size_t) { return bytes_of(send_count, send_type); }, out);
                    });
}

extern "C" int MPI_Ineighbor_alltoallv(const void* send, const int send_counts[],
                                       const int send_displs[], MPI_Datatype send_type, void* recv,
                                       const int recv_counts[], const int recv_displs[],
                                       MPI_Datatype recv_type, MPI_Comm comm,
                                       MPI_Request* request) {
  return collective(PMPI_Ineighbor_alltoallv(send, send_counts, send_displs, send_type, recv,
                                             recv_counts, recv_displs, recv_type, comm, request),
                    comm, [&](int, int, rp::Sends& out) {
                      to_neighbours(
                          comm, [&](std::size_t i) { return bytes_of(send_counts[i], send_type); },
                          out);
                    });
}

extern "C" int MPI_Finalize(void) {
  // Called from Fortran's MPI_FINALIZE under MPICH: written there already.
  const int written = rankshape::profile::forwarding_from_fortran()
                          ? MPI_SUCCESS
                          : rankshape::profile::write_at_finalize();
  const int code = PMPI_Finalize();
  return code != MPI_SUCCESS ? code : written;
}

#ifndef RANKSHAPE_SMPI
// Fortran callers (Open MPI's Fortran symbols call the PMPI_ layer, so the
// C entry points above miss them). Each entry point forwards to the MPI
// library's own symbol of the same name and counts what the arguments say
// once it succeeded (ierror is optional, null, in mpi_f08).
namespace rankshape::profile {
namespace {

// The MPI library's own definition of a symbol this file defines too: the
// next one in the search order after this object.
void* next_symbol(const char* name) {
  void* f = dlsym(RTLD_NEXT, name);
  if (f == nullptr) {
    std::fprintf(stderr, "rankshape profile: the MPI library has no %s\n", name);
    PMPI_Abort(MPI_COMM_WORLD, 1);
  }
  return f;
}

bool ok(const MPI_Fint* ierror) { return ierror == nullptr || *ierror == MPI_SUCCESS; }
MPI_Comm comm_c(const MPI_Fint* comm) { return PMPI_Comm_f2c(*comm); }
MPI_Datatype type_c(const MPI_Fint* type) { return PMPI_Type_f2c(*type); }

// A collective called from Fortran, counted as from C.
template <class Sender>
void fortran_collective(const MPI_Fint* ierror, const MPI_Fint* comm, Sender sends) {
  if (ok(ierror)) record_collective(comm_info(comm_c(comm)), sends);
}

}  // namespace
}  // namespace rankshape::profile

// RANKSHAPE_FORTRAN(lower, UPPER, parameters, arguments, before, after):
// the entry point under every name compilers give it (lower_, lower__,
// lower, UPPER) and mpi_f08's (lower_f08_), each forwarding to the MPI
// library's own definition of the same name.
#define RANKSHAPE_FORTRAN_NAME(name, parameters, arguments, before, after)                   \
  extern "C" void name parameters {                                                          \
    using Next = void(*) parameters;                                                         \
    static const Next next = reinterpret_cast<Next>(rankshape::profile::next_symbol(#name)); \
    before;                                                                                  \
    {                                                                                        \
      const rankshape::profile::FortranForward forward;                                      \
      next arguments;                                                                        \
    }                                                                                        \
    after;                                                                                   \
  }
#define RANKSHAPE_FORTRAN(lower, upper, parameters, arguments, before, after) \
  RANKSHAPE_FORTRAN_NAME(lower##_, parameters, arguments, before, after)      \
  RANKSHAPE_FORTRAN_NAME(lower##__, parameters, arguments, before, after)     \
  RANKSHAPE_FORTRAN_NAME(lower, parameters, arguments, before, after)         \
  RANKSHAPE_FORTRAN_NAME(upper, parameters, arguments, before, after)         \
  RANKSHAPE_FORTRAN_NAME(lower##_f08_, parameters, arguments, before, after)

using rankshape::profile::comm_c;
using rankshape::profile::fortran_collective;
using rankshape::profile::ok;
using rankshape::profile::type_c;

#define RANKSHAPE_FORTRAN_SEND(lower, upper)                                                       \
  RANKSHAPE_FORTRAN(lower, upper,                                                                  \
                    (void* buf, const MPI_Fint* count, const MPI_Fint* type, const MPI_Fint* dest, \
                     const MPI_Fint* tag, const MPI_Fint* comm, MPI_Fint* ierror),                 \
                    (buf, count, type, dest, tag, comm, ierror), (void)0,                          \
                    if (ok(ierror)) record_send(comm_c(comm), *dest, *count, type_c(type)))
#define RANKSHAPE_FORTRAN_ISEND(lower, upper)                                           \
  RANKSHAPE_FORTRAN(                                                                    \
      lower, upper,                                                                     \
      (void* buf, const MPI_Fint* count, const MPI_Fint* type, const MPI_Fint* dest,    \
       const MPI_Fint* tag, const MPI_Fint* comm, MPI_Fint* request, MPI_Fint* ierror), \
      (buf, count, type, dest, tag, comm, request, ierror), (void)0,                    \
      if (ok(ierror)) record_send(comm_c(comm), *dest, *count, type_c(type)))
#define RANKSHAPE_FORTRAN_SEND_INIT(lower, upper)                                       \
  RANKSHAPE_FORTRAN(                                                                    \
      lower, upper,                                                                     \
      (void* buf, const MPI_Fint* count, const MPI_Fint* type, const MPI_Fint* dest,    \
       const MPI_Fint* tag, const MPI_Fint* comm, MPI_Fint* request, MPI_Fint* ierror), \
      (buf, count, type, dest, tag, comm, request, ierror), (void)0,                    \
      if (ok(ierror)) rankshape::profile::register_persistent(                          \
          PMPI_Request_f2c(*request), comm_c(comm), *dest, *count, type_c(type)))

RANKSHAPE_FORTRAN_SEND(mpi_send, MPI_SEND)
RANKSHAPE_FORTRAN_SEND(mpi_bsend, MPI_BSEND)
RANKSHAPE_FORTRAN_SEND(mpi_ssend, MPI_SSEND)
RANKSHAPE_FORTRAN_SEND(mpi_rsend, MPI_RSEND)
RANKSHAPE_FORTRAN_ISEND(mpi_isend, MPI_ISEND)
RANKSHAPE_FORTRAN_ISEND(mpi_ibsend, MPI_IBSEND)
RANKSHAPE_FORTRAN_ISEND(mpi_issend, MPI_ISSEND)
RANKSHAPE_FORTRAN_ISEND(mpi_irsend, MPI_IRSEND)
RANKSHAPE_FORTRAN_SEND_INIT(mpi_send_init, MPI_SEND_INIT)
RANKSHAPE_FORTRAN_SEND_INIT(mpi_bsend_init, MPI_BSEND_INIT)
RANKSHAPE_FORTRAN_SEND_INIT(mpi_ssend_init, MPI_SSEND_INIT)
RANKSHAPE_FORTRAN_SEND_INIT(mpi_rsend_init, MPI_RSEND_INIT)

RANKSHAPE_FORTRAN(mpi_sendrecv, MPI_SENDRECV,
                  (void* send, const MPI_Fint* send_count, const MPI_Fint* send_type,
                   const MPI_Fint* dest, const MPI_Fint* send_tag, void* recv,
                   const MPI_Fint* recv_count, const MPI_Fint* recv_type, const MPI_Fint* source,
                   const MPI_Fint* recv_tag, const MPI_Fint* comm, MPI_Fint* status,
                   MPI_Fint* ierror),
                  (send, send_count, send_type, dest, send_tag, recv, recv_count, recv_type, source,
                   recv_tag, comm, status, ierror),
                  (void)0,
                  if (ok(ierror)) record_send(comm_c(comm), *dest, *send_count, type_c(send_type)))
RANKSHAPE_FORTRAN(mpi_sendrecv_replace, MPI_SENDRECV_REPLACE,
                  (void* buf, const MPI_Fint* count, const MPI_Fint* type, const MPI_Fint* dest,
                   const MPI_Fint* send_tag, const MPI_Fint* source, const MPI_Fint* recv_tag,
                   const MPI_Fint* comm, MPI_Fint* status, MPI_Fint* ierror),
                  (buf, count, type, dest, send_tag, source, recv_tag, comm, status, ierror),
                  (void)0, if (ok(ierror)) record_send(comm_c(comm), *dest, *count, type_c(type)))
RANKSHAPE_FORTRAN(mpi_start, MPI_START, (MPI_Fint * request, MPI_Fint* ierror), (request, ierror),
                  const MPI_Request started = PMPI_Request_f2c(*request),
                  if (ok(ierror)) rankshape::profile::record_start(started))
RANKSHAPE_FORTRAN(
    mpi_startall, MPI_STARTALL, (const MPI_Fint* count, MPI_Fint* requests, MPI_Fint* ierror),
    (count, requests, ierror), (void)0, if (ok(ierror)) {
      for (MPI_Fint i = 0; i < *count; ++i) {
        rankshape::profile::record_start(PMPI_Request_f2c(requests[i]));
      }
    })
RANKSHAPE_FORTRAN(mpi_request_free, MPI_REQUEST_FREE, (MPI_Fint * request, MPI_Fint* ierror),
                  (request, ierror),
                  rankshape::profile::forget_persistent(PMPI_Request_f2c(*request)), (void)0)
RANKSHAPE_FORTRAN(mpi_type_free, MPI_TYPE_FREE, (MPI_Fint * type, MPI_Fint* ierror), (type, ierror),
                  rankshape::profile::forget_datatype(type_c(type)), (void)0)

// The collectives by signature. REQUEST and REQUEST_ARGUMENT are empty for
// a blocking form and RANKSHAPE_REQUEST, RANKSHAPE_REQUEST_ARGUMENT for its
// nonblocking one, whose request comes before ierror.
#define RANKSHAPE_REQUEST MPI_Fint *request,
#define RANKSHAPE_REQUEST_ARGUMENT request,
#define RANKSHAPE_FORTRAN_BCAST(lower, upper, REQUEST, REQUEST_ARGUMENT)                    \
  RANKSHAPE_FORTRAN(lower, upper,                                                           \
                    (void* buffer, const MPI_Fint* count, const MPI_Fint* type,             \
                     const MPI_Fint* root, const MPI_Fint* comm, REQUEST MPI_Fint* ierror), \
                    (buffer, count, type, root, comm, REQUEST_ARGUMENT ierror), (void)0,    \
                    fortran_collective(ierror, comm, [&](int n, int r, rp::Sends& out) {    \
                      rp::bcast(n, r, *root, bytes_of(*count, type_c(type)), out);          \
                    }))
#define RANKSHAPE_FORTRAN_REDUCE(lower, upper, REQUEST, REQUEST_ARGUMENT)                       \
  RANKSHAPE_FORTRAN(                                                                            \
      lower, upper,                                                                             \
      (void* send, void* recv, const MPI_Fint* count, const MPI_Fint* type, const MPI_Fint* op, \
       const MPI_Fint* root, const MPI_Fint* comm, REQUEST MPI_Fint* ierror),                   \
      (send, recv, count, type, op, root, comm, REQUEST_ARGUMENT ierror), (void)0,              \
      fortran_collective(ierror, comm, [&](int n, int r, rp::Sends& out) {                      \
        rp::reduce(n, r, *root, bytes_of(*count, type_c(type)), out);                           \
      }))
// Allreduce and reduce_scatter_block: ALGORITHM(n, rank, bytes).
#define RANKSHAPE_FORTRAN_ALLREDUCE(lower, upper, ALGORITHM, REQUEST, REQUEST_ARGUMENT)    \
  RANKSHAPE_FORTRAN(lower, upper,                                                          \
                    (void* send, void* recv, const MPI_Fint* count, const MPI_Fint* type,  \
                     const MPI_Fint* op, const MPI_Fint* comm, REQUEST MPI_Fint* ierror),  \
                    (send, recv, count, type, op, comm, REQUEST_ARGUMENT ierror), (void)0, \
                    fortran_collective(ierror, comm, [&](int n, int r, rp::Sends& out) {   \
                      ALGORITHM(n, r, bytes_of(*count, type_c(type)), out);                \
                    }))
// Gather and scatter: ALGORITHM(n, rank, root, the send side's block).
#define RANKSHAPE_FORTRAN_ROOTED(lower, upper, ALGORITHM, REQUEST, REQUEST_ARGUMENT)              \
  RANKSHAPE_FORTRAN(lower, upper,                                                                 \
                    (void* send, const MPI_Fint* send_count, const MPI_Fint* send_type,           \
                     void* recv, const MPI_Fint* recv_count, const MPI_Fint* recv_type,           \
                     const MPI_Fint* root, const MPI_Fint* comm, REQUEST MPI_Fint* ierror),       \
                    (send, send_count, send_type, recv, recv_count, recv_type, root, comm,        \
                     REQUEST_ARGUMENT ierror),                                                    \
                    (void)0, fortran_collective(ierror, comm, [&](int n, int r, rp::Sends& out) { \
                      ALGORITHM(n, r, *root, bytes_of(*send_count, type_c(send_type)), out);      \
                    }))
// Allgather, alltoall and the neighbourhood forms: SENDS (from n, r and the
// arguments).
#define RANKSHAPE_FORTRAN_BLOCKS(lower, upper, SENDS, REQUEST, REQUEST_ARGUMENT)                 \
  RANKSHAPE_FORTRAN(                                                                             \
      lower, upper,                                                                              \
      (void* send, const MPI_Fint* send_count, const MPI_Fint* send_type, void* recv,            \
       const MPI_Fint* recv_count, const MPI_Fint* recv_type, const MPI_Fint* comm,              \
       REQUEST MPI_Fint* ierror),                                                                \
      (send, send_count, send_type, recv, recv_count, recv_type, comm, REQUEST_ARGUMENT ierror), \
      (void)0, fortran_collective(ierror, comm, [&](int n, int r, rp::Sends& out) {              \
        (void)n;                                                                                 \
        (void)r;                                                                                 \
        SENDS;                                                                                   \
      }))
// Alltoallv and its neighbourhood forms.
#define RANKSHAPE_FORTRAN_BLOCKS_V(lower, upper, SENDS, REQUEST, REQUEST_ARGUMENT)                 \
  RANKSHAPE_FORTRAN(lower, upper,                                                                  \
                    (void* send, const MPI_Fint* send_counts, const MPI_Fint* send_displs,         \
                     const MPI_Fint* send_type, void* recv, const MPI_Fint* recv_counts,           \
                     const MPI_Fint* recv_displs, const MPI_Fint* recv_type, const MPI_Fint* comm, \
                     REQUEST MPI_Fint* ierror),                                                    \
                    (send, send_counts, send_displs, send_type, recv, recv_counts, recv_displs,    \
                     recv_type, comm, REQUEST_ARGUMENT ierror),                                    \
                    (void)0, fortran_collective(ierror, comm, [&](int n, int r, rp::Sends& out) {  \
                      (void)n;                                                                     \
                      (void)r;                                                                     \
                      SENDS;                                                                       \
                    }))
// Allgatherv and its neighbourhood form.
#define RANKSHAPE_FORTRAN_GATHER_V(lower, upper, SENDS, REQUEST, REQUEST_ARGUMENT)                \
  RANKSHAPE_FORTRAN(lower, upper,                                                                 \
                    (void* send, const MPI_Fint* send_count, const MPI_Fint* send_type,           \
                     void* recv, const MPI_Fint* recv_counts, const MPI_Fint* displs,             \
                     const MPI_Fint* recv_type, const MPI_Fint* comm, REQUEST MPI_Fint* ierror),  \
                    (send, send_count, send_type, recv, recv_counts, displs, recv_type, comm,     \
                     REQUEST_ARGUMENT ierror),                                                    \
                    (void)0, fortran_collective(ierror, comm, [&](int n, int r, rp::Sends& out) { \
                      (void)n;                                                                    \
                      (void)r;                                                                    \
                      SENDS;                                                                      \
                    }))
#define RANKSHAPE_RECV_BLOCK bytes_of(*recv_count, type_c(recv_type))
#define RANKSHAPE_EACH_NEIGHBOUR_SEND_BLOCK \
  to_neighbours(                            \
      comm_c(comm), [&](std::size_t) { return bytes_of(*send_count, type_c(send_type)); }, out)
#define RANKSHAPE_EACH_NEIGHBOUR_SEND_COUNT                                                     \
  to_neighbours(                                                                                \
      comm_c(comm), [&](std::size_t i) { return bytes_of(send_counts[i], type_c(send_type)); }, \
      out)
#define RANKSHAPE_ALLTOALLV_SENDS                                 \
  rp::pairwise_v(n, r,                                            \
                 rankshape::mpi::c_buffer(send) == MPI_IN_PLACE   \
                     ? blocks(n, recv_counts, type_c(recv_type))  \
                     : blocks(n, send_counts, type_c(send_type)), \
                 out)
#define RANKSHAPE_ALLGATHERV_SENDS \
  rp::allgather_v(n, r, blocks(n, recv_counts, type_c(recv_type)), out)

RANKSHAPE_FORTRAN_BCAST(mpi_bcast, MPI_BCAST, , )
RANKSHAPE_FORTRAN_BCAST(mpi_ibcast, MPI_IBCAST, RANKSHAPE_REQUEST, RANKSHAPE_REQUEST_ARGUMENT)
RANKSHAPE_FORTRAN_REDUCE(mpi_reduce, MPI_REDUCE, , )
RANKSHAPE_FORTRAN_REDUCE(mpi_ireduce, MPI_IREDUCE, RANKSHAPE_REQUEST, RANKSHAPE_REQUEST_ARGUMENT)
RANKSHAPE_FORTRAN_ALLREDUCE(mpi_allreduce, MPI_ALLREDUCE, rp::allreduce, , )
RANKSHAPE_FORTRAN_ALLREDUCE(mpi_iallreduce, MPI_IALLREDUCE, rp::allreduce, RANKSHAPE_REQUEST,
                            RANKSHAPE_REQUEST_ARGUMENT)
RANKSHAPE_FORTRAN_ALLREDUCE(mpi_reduce_scatter_block, MPI_REDUCE_SCATTER_BLOCK, rp::pairwise, , )
RANKSHAPE_FORTRAN_ALLREDUCE(mpi_ireduce_scatter_block, MPI_IREDUCE_SCATTER_BLOCK, rp::pairwise,
                            RANKSHAPE_REQUEST, RANKSHAPE_REQUEST_ARGUMENT)
RANKSHAPE_FORTRAN_ROOTED(mpi_gather, MPI_GATHER, rp::gather, , )
RANKSHAPE_FORTRAN_ROOTED(mpi_igather, MPI_IGATHER, rp::gather, RANKSHAPE_REQUEST,
                         RANKSHAPE_REQUEST_ARGUMENT)
RANKSHAPE_FORTRAN_ROOTED(mpi_scatter, MPI_SCATTER, rp::scatter, , )
RANKSHAPE_FORTRAN_ROOTED(mpi_iscatter, MPI_ISCATTER, rp::scatter, RANKSHAPE_REQUEST,
                         RANKSHAPE_REQUEST_ARGUMENT)
RANKSHAPE_FORTRAN_BLOCKS(mpi_allgather, MPI_ALLGATHER,
                         rp::allgather(n, r, RANKSHAPE_RECV_BLOCK, out), , )
RANKSHAPE_FORTRAN_BLOCKS(mpi_iallgather, MPI_IALLGATHER,
                         rp::allgather(n, r, RANKSHAPE_RECV_BLOCK, out), RANKSHAPE_REQUEST,
                         RANKSHAPE_REQUEST_ARGUMENT)
RANKSHAPE_FORTRAN_BLOCKS(mpi_alltoall, MPI_ALLTOALL, rp::pairwise(n, r, RANKSHAPE_RECV_BLOCK, out),
                         , )
RANKSHAPE_FORTRAN_BLOCKS(mpi_ialltoall, MPI_IALLTOALL,
                         rp::pairwise(n, r, RANKSHAPE_RECV_BLOCK, out), RANKSHAPE_REQUEST,
                         RANKSHAPE_REQUEST_ARGUMENT)
RANKSHAPE_FORTRAN_BLOCKS(mpi_neighbor_allgather, MPI_NEIGHBOR_ALLGATHER,
                         RANKSHAPE_EACH_NEIGHBOUR_SEND_BLOCK, , )
RANKSHAPE_FORTRAN_BLOCKS(mpi_ineighbor_allgather, MPI_INEIGHBOR_ALLGATHER,
                         RANKSHAPE_EACH_NEIGHBOUR_SEND_BLOCK, RANKSHAPE_REQUEST,
                         RANKSHAPE_REQUEST_ARGUMENT)
RANKSHAPE_FORTRAN_BLOCKS(mpi_neighbor_alltoall, MPI_NEIGHBOR_ALLTOALL,
                         RANKSHAPE_EACH_NEIGHBOUR_SEND_BLOCK, , )
RANKSHAPE_FORTRAN_BLOCKS(mpi_ineighbor_alltoall, MPI_INEIGHBOR_ALLTOALL,
                         RANKSHAPE_EACH_NEIGHBOUR_SEND_BLOCK, RANKSHAPE_REQUEST,
                         RANKSHAPE_REQUEST_ARGUMENT)
RANKSHAPE_FORTRAN_BLOCKS_V(mpi_alltoallv, MPI_ALLTOALLV, RANKSHAPE_ALLTOALLV_SENDS, , )
RANKSHAPE_FORTRAN_BLOCKS_V(mpi_ialltoallv, MPI_IALLTOALLV, RANKSHAPE_ALLTOALLV_SENDS,
                           RANKSHAPE_REQUEST, RANKSHAPE_REQUEST_ARGUMENT)
RANKSHAPE_FORTRAN_BLOCKS_V(mpi_neighbor_alltoallv, MPI_NEIGHBOR_ALLTOALLV,
                           RANKSHAPE_EACH_NEIGHBOUR_SEND_COUNT, , )
RANKSHAPE_FORTRAN_BLOCKS_V(mpi_ineighbor_alltoallv, MPI_INEIGHBOR_ALLTOALLV,
                           RANKSHAPE_EACH_NEIGHBOUR_SEND_COUNT, RANKSHAPE_REQUEST,
                           RANKSHAPE_REQUEST_ARGUMENT)
RANKSHAPE_FORTRAN_GATHER_V(mpi_allgatherv, MPI_ALLGATHERV, RANKSHAPE_ALLGATHERV_SENDS, , )
RANKSHAPE_FORTRAN_GATHER_V(mpi_iallgatherv, MPI_IALLGATHERV, RANKSHAPE_ALLGATHERV_SENDS,
                           RANKSHAPE_REQUEST, RANKSHAPE_REQUEST_ARGUMENT)
RANKSHAPE_FORTRAN_GATHER_V(mpi_neighbor_allgatherv, MPI_NEIGHBOR_ALLGATHERV,
                           RANKSHAPE_EACH_NEIGHBOUR_SEND_BLOCK, , )
RANKSHAPE_FORTRAN(mpi_barrier, MPI_BARRIER, (const MPI_Fint* comm, MPI_Fint* ierror),
                  (comm, ierror), (void)0,
                  fortran_collective(ierror, comm,
                                     [&](int n, int r, rp::Sends& out) { rp::barrier(n, r, out); }))
RANKSHAPE_FORTRAN(mpi_ibarrier, MPI_IBARRIER,
                  (const MPI_Fint* comm, MPI_Fint* request, MPI_Fint* ierror),
                  (comm, request, ierror), (void)0,
                  fortran_collective(ierror, comm,
                                     [&](int n, int r, rp::Sends& out) { rp::barrier(n, r, out); }))
RANKSHAPE_FORTRAN(mpi_gatherv, MPI_GATHERV,
                  (void* send, const MPI_Fint* send_count, const MPI_Fint* send_type, void* recv,
                   const MPI_Fint* recv_counts, const MPI_Fint* displs, const MPI_Fint* recv_type,
                   const MPI_Fint* root, const MPI_Fint* comm, MPI_Fint* ierror),
                  (send, send_count, send_type, recv, recv_counts, displs, recv_type, root, comm,
                   ierror),
                  (void)0, fortran_collective(ierror, comm, [&](int n, int r, rp::Sends& out) {
                    rp::gather(n, r, *root, bytes_of(*send_count, type_c(send_type)), out);
                  }))
RANKSHAPE_FORTRAN(mpi_scatterv, MPI_SCATTERV,
                  (void* send, const MPI_Fint* send_counts, const MPI_Fint* displs,
                   const MPI_Fint* send_type, void* recv, const MPI_Fint* recv_count,
                   const MPI_Fint* recv_type, const MPI_Fint* root, const MPI_Fint* comm,
                   MPI_Fint* ierror),
                  (send, send_counts, displs, send_type, recv, recv_count, recv_type, root, comm,
                   ierror),
                  (void)0, fortran_collective(ierror, comm, [&](int n, int r, rp::Sends& out) {
                    if (r == *root)
                      rp::pairwise_v(n, r, blocks(n, send_counts, type_c(send_type)), out);
                  }))
RANKSHAPE_FORTRAN(mpi_reduce_scatter, MPI_REDUCE_SCATTER,
                  (void* send, void* recv, const MPI_Fint* recv_counts, const MPI_Fint* type,
                   const MPI_Fint* op, const MPI_Fint* comm, MPI_Fint* ierror),
                  (send, recv, recv_counts, type, op, comm, ierror), (void)0,
                  fortran_collective(ierror, comm, [&](int n, int r, rp::Sends& out) {
                    rp::pairwise_v(n, r, blocks(n, recv_counts, type_c(type)), out);
                  }))
RANKSHAPE_FORTRAN(mpi_neighbor_alltoallw, MPI_NEIGHBOR_ALLTOALLW,
                  (void* send, const MPI_Fint* send_counts, const MPI_Aint* send_displs,
                   const MPI_Fint* send_types, void* recv, const MPI_Fint* recv_counts,
                   const MPI_Aint* recv_displs, const MPI_Fint* recv_types, const MPI_Fint* comm,
                   MPI_Fint* ierror),
                  (send, send_counts, send_displs, send_types, recv, recv_counts, recv_displs,
                   recv_types, comm, ierror),
                  (void)0, fortran_collective(ierror, comm, [&](int, int, rp::Sends& out) {
                    to_neighbours(
                        comm_c(comm),
                        [&](std::size_t i) {
                          return bytes_of(send_counts[i], type_c(&send_types[i]));
                        },
                        out);
                  }))
#undef RANKSHAPE_FORTRAN_BCAST
#undef RANKSHAPE_FORTRAN_REDUCE
#undef RANKSHAPE_FORTRAN_ALLREDUCE
#undef RANKSHAPE_FORTRAN_ROOTED
#undef RANKSHAPE_FORTRAN_BLOCKS
#undef RANKSHAPE_FORTRAN_BLOCKS_V
#undef RANKSHAPE_FORTRAN_GATHER_V
#undef RANKSHAPE_RECV_BLOCK
#undef RANKSHAPE_EACH_NEIGHBOUR_SEND_BLOCK
#undef RANKSHAPE_EACH_NEIGHBOUR_SEND_COUNT
#undef RANKSHAPE_ALLTOALLV_SENDS
#undef RANKSHAPE_ALLGATHERV_SENDS
#undef RANKSHAPE_REQUEST
#undef RANKSHAPE_REQUEST_ARGUMENT
RANKSHAPE_FORTRAN(mpi_finalize, MPI_FINALIZE, (MPI_Fint * ierror), (ierror),
                  const int written = rankshape::profile::write_at_finalize(),
                  if (ierror != nullptr && *ierror == MPI_SUCCESS) * ierror = written)
#undef RANKSHAPE_FORTRAN_SEND
#undef RANKSHAPE_FORTRAN_ISEND
#undef RANKSHAPE_FORTRAN_SEND_INIT
#undef RANKSHAPE_FORTRAN
#undef RANKSHAPE_FORTRAN_NAME
#endif
