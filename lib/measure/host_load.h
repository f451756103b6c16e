// Which ranks share a machine's CPUs, and a barrier that leaves them free.
//
// A rank that waits for a descheduled partner times the scheduler, not the
// network, so measurement must know when ranks outnumber the CPUs they can
// run on. Hosts are told apart by the kernel's boot id: network namespaces
// and containers on one machine share it (the emulated cluster's "nodes"
// are one host), two machines never do. A host's CPUs are the union of its
// ranks' affinity masks: 4 ranks bound to 4 cores have 4, 8 unbound ranks
// on a 2-core machine have 2.
#ifndef RANKSHAPE_LIB_MEASURE_HOST_LOAD_H_
#define RANKSHAPE_LIB_MEASURE_HOST_LOAD_H_

#include <functional>
#include <string>
#include <vector>

#include "lib/mpi/communicator.h"

namespace rankshape {

struct HostLoad {
  std::vector<int> host_of;  // per rank of the communicator; hosts in order of first rank
  std::vector<int> ranks;    // per host: ranks of the communicator on it
  std::vector<int> cpus;     // per host: CPUs those ranks may run on
  /// Some host has more ranks than CPUs.
  bool oversubscribed() const;
  /// E.g. "1 host: 8 ranks on 2 CPUs".
  std::string describe() const;
};

/// Collective. Under SMPI (simulated hosts and cores) every rank is its
/// own host with one CPU: never oversubscribed. waiting, if set, hears what
/// this rank waits for before each blocking step (e.g. "waiting for rank 3
/// to start measuring"), for a stall guard to name a rank that never comes.
HostLoad detect_host_load(const mpi::Communicator& comm,
                          const std::function<void(const std::string&)>& waiting = {});

/// Collective: a barrier for ranks with nothing to do. It waits in sleeps
/// (100 us, doubling up to 10 ms) instead of busy-polling, so that the ranks
/// still measuring keep the CPUs: each wake-up takes a CPU from them for a
/// moment, and with 1 ms sleeps 14 waiting ranks woke every 70 us on 2
/// CPUs, which blurred the emulated cluster's 256 KiB round trips. A plain
/// barrier under SMPI.
void quiet_barrier(const mpi::Communicator& comm);

/// Sleeps before pass `pass` (0, 1, ...) of measuring again: 0.25 s, then
/// 0.5 s, 1 s, 2 s, 4 s and 4 s after. A host busy as a whole for a while
/// (a noisy neighbour, a slow phase of a virtual machine) may still be busy
/// right after a sweep, and passes taking milliseconds would all fall in it.
/// No sleep under SMPI, whose time is simulated.
void wait_before_pass(int pass);

/// The longest sleep of quiet_wait() and quiet_barrier(), in seconds.
constexpr double kLongestPause = 10e-3;

/// Waits for every request in sleeps, with MPI_Testall between them; each
/// sleep lasts pause() seconds, kept within [20 us, kLongestPause].
void quiet_wait(std::vector<MPI_Request>& requests, const std::function<double()>& pause);

}  // namespace rankshape

#endif  // RANKSHAPE_LIB_MEASURE_HOST_LOAD_H_
