#include "lib/coll/racks.h"

#include <map>
#include <optional>
#include <stdexcept>
#include <utility>

#include "lib/model/link_load.h"
#include "lib/mpi/communicator.h"
#include "lib/mpi/error.h"

namespace rankshape::coll {

PingPongOptions rack_pingpong_options() {
  PingPongOptions o;
  // The 64 KiB time decides (as `measure` writes costs): racks show in
  // bandwidth as much as in latency. A second size is needed for the fit.
  o.sizes = {8, kRackMessageBytes};
  o.repetitions = 3;
  o.warmup = 1;
  o.retries = 0;
  // Inside a library call: no watchdog thread that could end the program.
  o.stall_seconds = 0;
  o.result_on_every_rank = false;
  return o;
}

std::vector<std::vector<int>> with_found_racks(MPI_Comm comm, std::vector<std::vector<int>> groups,
                                               const PingPongOptions& options) {
  int p = 0, me = 0;
  mpi::check(MPI_Comm_size(comm, &p), "MPI_Comm_size");
  mpi::check(MPI_Comm_rank(comm, &me), "MPI_Comm_rank");
  if (groups.empty() || groups.back().size() != static_cast<std::size_t>(p)) {
    throw std::invalid_argument("with_found_racks: the coarsest group table must place the " +
                                std::to_string(p) + " ranks");
  }
  check_pingpong_options(options);
  // A copy: groups grows below, which may move its tables.
  const std::vector<int> top = groups.back();
  // Each coarsest group's leader is its lowest rank; the leaders, in rank
  // order, are the groups in the order their first ranks come.
  std::map<int, int> index_of;  // coarsest group -> its leader's index
  std::vector<int> leaders;
  for (int r = 0; r < p; ++r) {
    if (index_of.emplace(top[static_cast<std::size_t>(r)], static_cast<int>(leaders.size())).second)
      leaders.push_back(r);
  }
  const int n = static_cast<int>(leaders.size());
  if (n < 3 || n > kMaxRackLeaders) return groups;
  const bool leading =
      leaders[static_cast<std::size_t>(index_of.at(top[static_cast<std::size_t>(me)]))] == me;
  // Rank 0 leads its group and is the leaders' rank 0 (keys are comm ranks).
  const std::optional<mpi::Communicator> among = mpi::split_members(comm, leading ? 0 : -1, me);
  // Levels found, finest first, each a coarse group per leader (in leader
  // order), flattened on rank 0 and broadcast.
  std::vector<int> found;
  if (leading) {
    const PingPongResult result = measure_pingpong(*among, options);
    if (me == 0) {
      const std::vector<std::vector<int>> levels = groupings_by_gaps(
          metric_matrix(result, Metric::kMessageTime, static_cast<double>(kRackMessageBytes)), n);
      for (const std::vector<int>& level : levels)
        found.insert(found.end(), level.begin(), level.end());
    }
  }
  int length = static_cast<int>(found.size());
  mpi::check(MPI_Bcast(&length, 1, MPI_INT, 0, comm), "MPI_Bcast");
  found.resize(static_cast<std::size_t>(length));
  if (length > 0) mpi::check(MPI_Bcast(found.data(), length, MPI_INT, 0, comm), "MPI_Bcast");
  for (int start = 0; start < length; start += n) {
    std::vector<int> table(static_cast<std::size_t>(p));
    for (int r = 0; r < p; ++r) {
      table[static_cast<std::size_t>(r)] =
          found[static_cast<std::size_t>(start + index_of.at(top[static_cast<std::size_t>(r)]))];
    }
    groups.push_back(std::move(table));
  }
  return groups;
}

}  // namespace rankshape::coll
