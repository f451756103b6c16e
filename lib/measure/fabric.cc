#include "lib/measure/fabric.h"

#include <algorithm>
#include <climits>
#include <limits>
#include <map>
#include <stdexcept>
#include <string>

namespace rankshape {
namespace {

// The slowest rank's time to send one message to `to` and receive one from
// `from` (-1: none), all starting after a barrier.
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

FabricPairs fabric_pairs(const std::vector<int>& group_of, const std::vector<int>& parent_of) {
  const std::size_t p = group_of.size();
  FabricPairs out;
  out.partner.assign(p, -1);
  // Representatives (lowest rank of each group) per parent, parents in
  // order of their first representative.
  std::map<int, bool> seen_group;
  std::map<int, std::size_t> parent_index;
  std::vector<std::vector<int>> reps;
  for (std::size_t r = 0; r < p; ++r) {
    if (!seen_group.emplace(group_of[r], true).second) continue;
    const int parent = parent_of.empty() ? 0 : parent_of.at(r);
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

FabricLevel measure_fabric(const mpi::Communicator& comm, const std::vector<int>& group_of,
                           const std::vector<int>& parent_of, const FabricOptions& options) {
  const auto p = static_cast<std::size_t>(comm.size());
  if (group_of.size() != p || (!parent_of.empty() && parent_of.size() != p)) {
    throw std::invalid_argument(
        "fabric groups and parents place " + std::to_string(group_of.size()) + " and " +
        std::to_string(parent_of.size()) + " ranks, the job has " + std::to_string(p));
  }
  if (!(options.bytes >= 1) || options.bytes > INT_MAX || options.repetitions < 1 ||
      options.warmup < 0) {
    throw std::invalid_argument(
        "fabric options: bytes must be in [1, 2^31), repetitions >= 1, warmup >= 0");
  }
  const int me = comm.rank();
  const FabricPairs pairs = fabric_pairs(group_of, parent_of);
  FabricLevel level;
  std::vector<int> distinct = group_of;
  std::sort(distinct.begin(), distinct.end());
  level.groups = static_cast<int>(std::unique(distinct.begin(), distinct.end()) - distinct.begin());
  level.flows = pairs.flows;
  if (pairs.alone_a < 0) return level;
  const int together = pairs.partner[static_cast<std::size_t>(me)];
  // Alone: one message, from a to b.
  const int alone_to = me == pairs.alone_a ? pairs.alone_b : -1;
  const int alone_from = me == pairs.alone_b ? pairs.alone_a : -1;
  std::vector<char> out, in;
  if (together >= 0) {
    out.assign(static_cast<std::size_t>(options.bytes), static_cast<char>(me));
    in.resize(out.size());
  }
  level.alone = level.together = std::numeric_limits<double>::infinity();
  // Alone and together in turn, so that a slow spell of the machine
  // spoils a repetition of each rather than all of one.
  for (int i = 0; i < options.warmup + options.repetitions; ++i) {
    const double a = time_exchange(comm, alone_to, alone_from, options, out, in, 2 * i);
    const double t = time_exchange(comm, together, together, options, out, in, 2 * i + 1);
    if (i < options.warmup) continue;
    level.alone = std::min(level.alone, a);
    level.together = std::min(level.together, t);
  }
  level.slowdown = level.alone > 0 ? level.together / level.alone : 0;
  if (level.slowdown >= kMinFabricSlowdown) level.ratio = level.slowdown / level.flows;
  return level;
}

}  // namespace rankshape
