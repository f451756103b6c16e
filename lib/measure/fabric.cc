#include "lib/measure/fabric.h"

#include <algorithm>
#include <climits>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>

#include "lib/measure/host_load.h"

namespace rankshape {
namespace {

// The slowest rank's time to send one message to `to` and receive one from
// `from` (-1: none), all of comm starting after a barrier.
double time_exchange(const mpi::Communicator& comm, int to, int from, const FabricOptions& options,
                     std::vector<char>& out, std::vector<char>& in, int tag) {
  comm.barrier();
  const double started = MPI_Wtime();
  if (to >= 0 || from >= 0) {
    const int count = static_cast<int>(options.bytes);
    mpi::check(MPI_Sendrecv(out.data(), count, MPI_BYTE, to >= 0 ? to : MPI_PROC_NULL, tag,
                            in.data(), count, MPI_BYTE, from >= 0 ? from : MPI_PROC_NULL, tag,
                            comm.get(), MPI_STATUS_IGNORE),
               "MPI_Sendrecv");
  }
  double took = to >= 0 || from >= 0 ? MPI_Wtime() - started : 0.0;
  mpi::check(MPI_Allreduce(MPI_IN_PLACE, &took, 1, MPI_DOUBLE, MPI_MAX, comm.get()),
             "MPI_Allreduce");
  return took;
}

}  // namespace

FabricPairs fabric_pairs(const std::vector<int>& group_of, const std::vector<int>& parent_of_rank) {
  const std::size_t p = group_of.size();
  FabricPairs out;
  out.partner.assign(p, -1);
  // Representatives (lowest rank of each group) per parent, parents in
  // order of their first representative.
  std::set<int> seen_group;
  std::map<int, std::size_t> parent_index;
  std::vector<std::vector<int>> reps;
  for (std::size_t r = 0; r < p; ++r) {
    if (!seen_group.insert(group_of[r]).second) continue;
    const int parent = parent_of_rank.empty() ? 0 : parent_of_rank.at(r);
    const auto [it, added] = parent_index.emplace(parent, reps.size());
    if (added) reps.emplace_back();
    reps[it->second].push_back(static_cast<int>(r));
  }
  for (const std::vector<int>& members : reps) {
    const std::size_t half = members.size() / 2;
    for (std::size_t i = 0; i < half; ++i) {
      const int a = members[i], b = members[i + half];
      out.partner[static_cast<std::size_t>(a)] = b;
      out.partner[static_cast<std::size_t>(b)] = a;
    }
    out.flows = std::max(out.flows, static_cast<int>(2 * half));
    if (half > 0 && out.alone_a < 0) {
      out.alone_a = members[0];
      out.alone_b = members[half];
    }
  }
  return out;
}

FabricMeasurement measure_fabric(const mpi::Communicator& comm, const std::vector<int>& group_of,
                                 const std::vector<int>& parent_of_rank,
                                 const FabricOptions& options) {
  const auto p = static_cast<std::size_t>(comm.size());
  if (group_of.size() != p || (!parent_of_rank.empty() && parent_of_rank.size() != p)) {
    throw std::invalid_argument(
        "fabric groups and parents place " + std::to_string(group_of.size()) + " and " +
        std::to_string(parent_of_rank.size()) + " ranks, the job has " + std::to_string(p));
  }
  if (!(options.bytes >= 1) || options.bytes > INT_MAX || options.repetitions < 1 ||
      options.warmup < 0) {
    throw std::invalid_argument(
        "fabric options: bytes must be in [1, 2^31), repetitions >= 1, warmup >= 0");
  }
  const FabricPairs pairs = fabric_pairs(group_of, parent_of_rank);
  FabricMeasurement level;
  std::vector<int> distinct = group_of;
  std::sort(distinct.begin(), distinct.end());
  level.groups = static_cast<int>(std::unique(distinct.begin(), distinct.end()) - distinct.begin());
  level.flows = pairs.flows;
  if (pairs.alone_a < 0) return level;
  // The representatives time among themselves; the other ranks wait in a
  // quiet barrier, as in the ping-pong measurement, so that on a busy host
  // they leave the CPUs to those timing instead of polling in collectives.
  const int me = comm.rank();
  const std::vector<int>& partner = pairs.partner;
  const std::optional<mpi::Communicator> timing =
      mpi::split_members(comm.get(), partner[static_cast<std::size_t>(me)] >= 0 ? 0 : -1, me);
  double times[2] = {0, 0};  // least alone, least together
  if (timing) {
    // Ranks in `timing`: the representatives in order of their rank in comm.
    std::vector<int> rank_in_timing(partner.size(), -1);
    for (std::size_t r = 0, next = 0; r < partner.size(); ++r) {
      if (partner[r] >= 0) rank_in_timing[r] = static_cast<int>(next++);
    }
    const auto in_timing = [&](int r) {
      return r < 0 ? -1 : rank_in_timing[static_cast<std::size_t>(r)];
    };
    const int together = in_timing(partner[static_cast<std::size_t>(me)]);
    const int alone_to = me == pairs.alone_a ? in_timing(pairs.alone_b) : -1;
    const int alone_from = me == pairs.alone_b ? in_timing(pairs.alone_a) : -1;
    std::vector<char> out(static_cast<std::size_t>(options.bytes), static_cast<char>(me)),
        in(out.size());
    times[0] = times[1] = std::numeric_limits<double>::infinity();
    // Alone and together in turn, so that a slow spell of the machine
    // spoils a repetition of each rather than all of one.
    for (int i = 0; i < options.warmup + options.repetitions; ++i) {
      const double a = time_exchange(*timing, alone_to, alone_from, options, out, in, 2 * i);
      const double t = time_exchange(*timing, together, together, options, out, in, 2 * i + 1);
      if (i < options.warmup) continue;
      times[0] = std::min(times[0], a);
      times[1] = std::min(times[1], t);
    }
  }
  quiet_barrier(comm);
  // Every representative holds the figures; the first of the lone pair
  // tells every rank.
  mpi::check(MPI_Bcast(times, 2, MPI_DOUBLE, pairs.alone_a, comm.get()), "MPI_Bcast");
  level.alone = times[0];
  level.together = times[1];
  level.slowdown = level.alone > 0 ? level.together / level.alone : 0;
  if (level.slowdown >= kMinFabricSlowdown) level.ratio = level.slowdown / level.flows;
  return level;
}

}  // namespace rankshape
