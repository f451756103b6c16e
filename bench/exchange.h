// One timed exchange step, shared by the halo and traffic-replay
// benchmarks: each rank posts a receive and a send per peer (nonblocking),
// then waits for all of them.
#ifndef RANKSHAPE_BENCH_EXCHANGE_H_
#define RANKSHAPE_BENCH_EXCHANGE_H_

#include <mpi.h>

#include <cstddef>
#include <memory>
#include <vector>

#include "lib/mpi/communicator.h"
#include "lib/mpi/error.h"
#include "lib/mpi/message_buffer.h"

namespace rankshape::bench {

// One message each way: `bytes` to send_to and from receive_from (either
// may be MPI_PROC_NULL), matched by tag.
struct ExchangePeer {
  int send_to, receive_from, tag;
  std::size_t bytes;
};

// The slowest rank's mean time of `reps` steps on comm, after `warmup`
// untimed ones and a barrier.
inline double timed_exchange(const mpi::Communicator& comm, const std::vector<ExchangePeer>& peers,
                             int reps, int warmup) {
  std::vector<std::unique_ptr<mpi::MessageBuffer>> send, receive;
  for (const ExchangePeer& p : peers) {
    send.push_back(std::make_unique<mpi::MessageBuffer>(p.bytes));
    receive.push_back(std::make_unique<mpi::MessageBuffer>(p.bytes));
  }
  std::vector<MPI_Request> requests(2 * peers.size());
  const auto step = [&] {
    for (std::size_t i = 0; i < peers.size(); ++i) {
      const int count = static_cast<int>(peers[i].bytes);
      mpi::check(MPI_Irecv(receive[i]->data(), count, MPI_BYTE, peers[i].receive_from, peers[i].tag,
                           comm.get(), &requests[2 * i]),
                 "MPI_Irecv");
      mpi::check(MPI_Isend(send[i]->data(), count, MPI_BYTE, peers[i].send_to, peers[i].tag,
                           comm.get(), &requests[2 * i + 1]),
                 "MPI_Isend");
    }
    mpi::check(MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE),
               "MPI_Waitall");
  };
  for (int i = 0; i < warmup; ++i) step();
  comm.barrier();
  const double started = MPI_Wtime();
  for (int i = 0; i < reps; ++i) step();
  const double mean = (MPI_Wtime() - started) / reps;
  double slowest = 0;
  mpi::check(MPI_Allreduce(&mean, &slowest, 1, MPI_DOUBLE, MPI_MAX, comm.get()), "MPI_Allreduce");
  return slowest;
}

}  // namespace rankshape::bench

#endif  // RANKSHAPE_BENCH_EXCHANGE_H_
