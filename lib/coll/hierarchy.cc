#include "lib/coll/hierarchy.h"

#include <hwloc.h>

#include <algorithm>
#include <charconv>
#include <functional>
#include <map>
#include <memory>
#include <numeric>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>

#include "lib/mpi/error.h"

namespace rankshape::coll {
namespace {

// Group ids renumbered 0, 1, ... in order of their lowest rank.
std::vector<int> normalised(const std::vector<int>& groups) {
  std::map<int, int> index;
  std::vector<int> out;
  out.reserve(groups.size());
  for (int g : groups)
    out.push_back(index.emplace(g, static_cast<int>(index.size())).first->second);
  return out;
}

// What package_of_this_rank finds besides a package's logical index (>= 0).
constexpr int kNoPackage = -1;   // not bound inside one package
constexpr int kLoadFailed = -2;  // hwloc cannot load the topology
constexpr int kPuNotFound = -3;  // the PU given is not in the topology

// The hwloc package holding this rank's CPUs: those of PU os index `pu`
// when pu >= 0, else the process's binding. Never throws, so that every
// rank reaches the collective that shares the outcome.
int package_of_this_rank(const std::string& topology_xml, int pu) {
  hwloc_topology_t raw = nullptr;
  if (hwloc_topology_init(&raw) != 0) return kLoadFailed;
  const std::unique_ptr<hwloc_topology, void (*)(hwloc_topology_t)> topology(
      raw, hwloc_topology_destroy);
  if (!topology_xml.empty()) {
    if (hwloc_topology_set_xml(raw, topology_xml.c_str()) != 0) return kLoadFailed;
    // The binding is this process's: let hwloc ask the system about it even
    // though the topology comes from a file.
    if (pu < 0 && hwloc_topology_set_flags(raw, HWLOC_TOPOLOGY_FLAG_IS_THISSYSTEM) != 0)
      return kLoadFailed;
  }
  if (hwloc_topology_load(raw) != 0) return kLoadFailed;
  const std::unique_ptr<hwloc_bitmap_s, void (*)(hwloc_bitmap_t)> cpus(hwloc_bitmap_alloc(),
                                                                       hwloc_bitmap_free);
  if (!cpus) return kNoPackage;
  if (pu >= 0) {
    const hwloc_obj_t obj = hwloc_get_pu_obj_by_os_index(raw, static_cast<unsigned>(pu));
    if (!obj) return kPuNotFound;
    hwloc_bitmap_copy(cpus.get(), obj->cpuset);
  } else {
    if (hwloc_get_cpubind(raw, cpus.get(), HWLOC_CPUBIND_PROCESS) != 0) return kNoPackage;
    hwloc_bitmap_and(cpus.get(), cpus.get(), hwloc_topology_get_topology_cpuset(raw));
  }
  if (hwloc_bitmap_iszero(cpus.get())) return kNoPackage;
  for (hwloc_obj_t package = hwloc_get_next_obj_by_type(raw, HWLOC_OBJ_PACKAGE, nullptr); package;
       package = hwloc_get_next_obj_by_type(raw, HWLOC_OBJ_PACKAGE, package)) {
    if (hwloc_bitmap_isincluded(cpus.get(), package->cpuset))
      return static_cast<int>(package->logical_index);
  }
  return kNoPackage;
}

// This process's package from its binding, looked up once: every new
// communicator's first dispatched collective asks, and loading the
// topology costs about 5 ms each time on this 2-core machine (hwloc 2.9;
// more with more cores).
int own_package() {
  static const int package = package_of_this_rank("", -1);
  return package;
}

// Every rank of comm's place in launch order: its rank in MPI_COMM_WORLD,
// found locally by group translation; comm's own ranks when some are not
// in MPI_COMM_WORLD (e.g. spawned processes). Not rotated to start at comm
// rank 0's, though rank 0 is the usual root: the top would then list the
// nodes from rank 0's on, and every block of nodes a tree's subtree spans
// would straddle two racks (a relabelled communicator whose rank 0 sits on
// node 1 of racks of 8 nodes: a k-nomial reduce of 8 B took 97.6 us at 256
// ranks, 75.6 in launch order). Rank 0 leads its groups all the same (see
// the constructor), and the trees keep blocks aligned whatever their root
// (algorithms.cc, Relative).
std::vector<int> launch_ranks(MPI_Comm comm, int size) {
  std::vector<int> mine(static_cast<std::size_t>(size)), world(mine.size());
  std::iota(mine.begin(), mine.end(), 0);
  MPI_Group from = MPI_GROUP_NULL, to = MPI_GROUP_NULL;
  mpi::check(MPI_Comm_group(comm, &from), "MPI_Comm_group");
  mpi::check(MPI_Comm_group(MPI_COMM_WORLD, &to), "MPI_Comm_group");
  const int translated = MPI_Group_translate_ranks(from, size, mine.data(), to, world.data());
  const int freed_from = MPI_Group_free(&from);
  const int freed_to = MPI_Group_free(&to);
  mpi::check(translated, "MPI_Group_translate_ranks");
  mpi::check(freed_from, "MPI_Group_free");
  mpi::check(freed_to, "MPI_Group_free");
  for (int w : world) {
    if (w == MPI_UNDEFINED) return mine;
  }
  return world;
}

}  // namespace

std::vector<std::vector<int>> Hierarchy::machine_groups(MPI_Comm comm,
                                                        const std::string& topology_xml,
                                                        const std::vector<int>& pu_of_rank) {
  const mpi::Communicator c(comm, mpi::Ownership::kBorrow);
  const auto p = static_cast<std::size_t>(c.size());
  // Checked before any collective: every rank passes the same vector.
  if (!pu_of_rank.empty() && pu_of_rank.size() != p) {
    throw std::invalid_argument("pu_of_rank has " + std::to_string(pu_of_rank.size()) +
                                " entries for " + std::to_string(p) + " ranks");
  }
  for (int pu : pu_of_rank) {
    if (pu < 0) throw std::invalid_argument("pu_of_rank holds " + std::to_string(pu));
  }
  std::vector<std::vector<int>> nodes = node_groups(comm);
  if (mpi::simulated() && (topology_xml.empty() || pu_of_rank.empty())) return nodes;
  const int pu = pu_of_rank.empty() ? -1 : pu_of_rank[static_cast<std::size_t>(c.rank())];
  const bool own = topology_xml.empty() && pu < 0;
  const std::vector<int> package =
      c.allgather(own ? own_package() : package_of_this_rank(topology_xml, pu));
  const std::string where = topology_xml.empty() ? "this machine's topology" : topology_xml;
  for (std::size_t r = 0; r < p; ++r) {
    if (package[r] == kLoadFailed) {
      throw std::runtime_error("hwloc cannot load " + where + " on rank " + std::to_string(r));
    }
    if (package[r] == kPuNotFound) {
      throw std::invalid_argument("PU " + std::to_string(pu_of_rank[r]) + " of rank " +
                                  std::to_string(r) + " is not in " + where);
    }
  }
  if (std::find(package.begin(), package.end(), kNoPackage) != package.end()) return nodes;
  // A socket is a (node, package) pair, numbered in order of first rank.
  std::map<std::pair<int, int>, int> socket_id;
  std::vector<int> sockets(p);
  for (std::size_t r = 0; r < p; ++r) {
    sockets[r] =
        socket_id
            .emplace(std::make_pair(nodes[0][r], package[r]), static_cast<int>(socket_id.size()))
            .first->second;
  }
  const std::set<int> node_ids(nodes[0].begin(), nodes[0].end());
  // Sockets refine nodes, so as many sockets as nodes means the same groups.
  if (socket_id.size() == node_ids.size() || socket_id.size() == p) return nodes;
  return {std::move(sockets), std::move(nodes[0])};
}

std::vector<std::vector<int>> Hierarchy::node_groups(MPI_Comm comm) {
  const mpi::Communicator c(comm, mpi::Ownership::kBorrow);
  const mpi::Communicator node = c.split_by_node();
  // A node is named by its lowest rank.
  int lowest = c.rank();
  mpi::check(MPI_Allreduce(MPI_IN_PLACE, &lowest, 1, MPI_INT, MPI_MIN, node.get()),
             "MPI_Allreduce");
  return {c.allgather(lowest)};
}

std::vector<std::vector<int>> Hierarchy::with_coarser(std::vector<std::vector<int>> groups,
                                                      int per_group) {
  if (groups.empty() || per_group < 1) {
    throw std::invalid_argument("coarser groups need a group table and at least 1 group each");
  }
  const std::vector<int> top = normalised(groups.back());  // numbered by first rank
  std::vector<int> coarser(top.size());
  for (std::size_t r = 0; r < top.size(); ++r) coarser[r] = top[r] / per_group;
  groups.push_back(std::move(coarser));
  return groups;
}

std::vector<std::vector<int>> Hierarchy::pretend_groups(const std::string& spec, int size) {
  const std::size_t colon = spec.find(':');
  const std::string kind = spec.substr(0, colon);
  int n = 0;
  const char* first = spec.data() + (colon == std::string::npos ? spec.size() : colon + 1);
  const char* last = spec.data() + spec.size();
  const auto [ptr, ec] = std::from_chars(first, last, n);
  if (colon == std::string::npos || (kind != "blocks" && kind != "dealt") || ec != std::errc() ||
      ptr != last || n < 1) {
    throw std::invalid_argument("'" + spec + "': expected blocks:N or dealt:N with N >= 1");
  }
  std::vector<int> groups(static_cast<std::size_t>(size));
  for (int r = 0; r < size; ++r) {
    groups[static_cast<std::size_t>(r)] = kind == "blocks" ? r / n : r % n;
  }
  return {groups};
}

Hierarchy::Hierarchy(MPI_Comm comm, std::vector<std::vector<int>> groups)
    : own_(mpi::Communicator(comm, mpi::Ownership::kBorrow).dup()), groups_(std::move(groups)) {
  mpi::check(MPI_Comm_size(comm, &size_), "MPI_Comm_size");
  mpi::check(MPI_Comm_rank(comm, &rank_), "MPI_Comm_rank");
  const auto p = static_cast<std::size_t>(size_);
  const int depth = static_cast<int>(groups_.size());
  for (auto& level : groups_) {
    if (level.size() != p) {
      throw std::invalid_argument("a group table has " + std::to_string(level.size()) +
                                  " entries for " + std::to_string(size_) + " ranks");
    }
    level = normalised(level);
  }
  // Nesting: one level j group lies inside one level j + 1 group.
  for (int j = 0; j + 1 < depth; ++j) {
    std::map<int, int> outer;
    for (std::size_t r = 0; r < p; ++r) {
      const auto [it, added] = outer.emplace(groups_[j][r], groups_[j + 1][r]);
      if (!added && it->second != groups_[j + 1][r]) {
        throw std::invalid_argument("group tables do not nest: a level " + std::to_string(j) +
                                    " group spans two level " + std::to_string(j + 1) + " groups");
      }
    }
  }
  // Launch order (launch_ranks()): comm's ranks sorted by it.
  const std::vector<int> launch = launch_ranks(comm, size_);
  std::vector<std::size_t> launched(p);
  std::iota(launched.begin(), launched.end(), std::size_t{0});
  std::stable_sort(launched.begin(), launched.end(),
                   [&](std::size_t a, std::size_t b) { return launch[a] < launch[b]; });
  const int my_key = launch[static_cast<std::size_t>(rank_)];
  // Leaders: comm rank 0 (the usual root) in its groups, elsewhere the first
  // of each group in launch order. The first of a group without rank 0 is
  // the first of its own subgroup too, so the leaders nest.
  leader_.assign(static_cast<std::size_t>(depth), std::vector<int>(p));
  for (int j = 0; j < depth; ++j) {
    std::map<int, int> first;
    first.emplace(groups_[j][0], 0);
    for (std::size_t r : launched) first.emplace(groups_[j][r], static_cast<int>(r));
    for (std::size_t r = 0; r < p; ++r) leader_[j][r] = first[groups_[j][r]];
  }
  // Members and colour of every level (top: one colour).
  const auto member = [&](int j, std::size_t r) {
    return j == 0 || leader_[static_cast<std::size_t>(j - 1)][r] == static_cast<int>(r);
  };
  const auto colour = [&](int j, std::size_t r) {
    return j < depth ? groups_[static_cast<std::size_t>(j)][r] : 0;
  };
  // Order inside a level j communicator: its group's leader first (rank 0
  // of every level below the top leads), then launch order; the top in
  // launch order. in_level[j]: comm ranks in that order.
  const auto level_key = [&](int j, std::size_t r) {
    const bool leads = j < depth && leader_[static_cast<std::size_t>(j)][r] == static_cast<int>(r);
    return leads ? -1 : launch[r];
  };
  std::vector<std::vector<std::size_t>> in_level(static_cast<std::size_t>(depth + 1), launched);
  for (int j = 0; j <= depth; ++j) {
    std::stable_sort(in_level[j].begin(), in_level[j].end(), [&](std::size_t a, std::size_t b) {
      return level_key(j, a) < level_key(j, b);
    });
  }
  rank_in_level_.assign(static_cast<std::size_t>(depth + 1), std::vector<int>(p, -1));
  levels_.clear();
  for (int j = 0; j <= depth; ++j) {
    std::map<int, int> next;
    for (std::size_t r : in_level[j]) {
      if (member(j, r)) rank_in_level_[j][r] = next[colour(j, r)]++;
    }
    const auto me = static_cast<std::size_t>(rank_);
    const int colour_j = member(j, me) ? colour(j, me) : -1;
    levels_.push_back(mpi::split_members(comm, colour_j, level_key(j, me)));
    levels_down_.push_back(mpi::split_members(comm, colour_j, level_key(j, me)));
  }
  rank_in_group_leaders_.assign(p, -1);
  int next_leader = 0;
  for (std::size_t r : launched) {
    if (member(std::min(depth, 1), r)) rank_in_group_leaders_[r] = next_leader++;
  }
  group_leaders_ = mpi::split_members(
      comm, member(std::min(depth, 1), static_cast<std::size_t>(rank_)) ? 0 : -1, my_key);
  // Hierarchical order, by expanding each top member down the levels.
  span_.assign(static_cast<std::size_t>(depth + 1), std::vector<int>(p, 0));
  // members[j][c]: the level j members of colour c, in their level's order.
  std::vector<std::map<int, std::vector<int>>> members(static_cast<std::size_t>(depth + 1));
  for (int j = 0; j <= depth; ++j) {
    for (std::size_t r : in_level[j]) {
      if (member(j, r)) members[j][colour(j, r)].push_back(static_cast<int>(r));
    }
  }
  // expand(r, j): the comm ranks that r represents at level j: itself at
  // level 0; above, the members of the level j - 1 group it leads.
  std::vector<int> order;
  const std::function<void(int, int)> expand = [&](int r, int j) {
    const std::size_t before = order.size();
    if (j == 0) {
      order.push_back(r);
    } else {
      for (int q : members[j - 1][colour(j - 1, static_cast<std::size_t>(r))]) expand(q, j - 1);
    }
    span_[j][r] = static_cast<int>(order.size() - before);
  };
  for (int r : members[depth][0]) expand(r, depth);
  order_ = std::move(order);
  position_.assign(p, 0);
  for (std::size_t i = 0; i < p; ++i) position_[order_[i]] = static_cast<int>(i);
  for (std::size_t i = 0; i < p; ++i) ordered_ = ordered_ && order_[i] == static_cast<int>(i);
  int groups0 = depth > 0 ? *std::max_element(groups_[0].begin(), groups_[0].end()) + 1 : 1;
  useful_ = depth > 0 && groups0 > 1 && groups0 < size_;
}

int Hierarchy::span(int r, int j) const {
  return span_[static_cast<std::size_t>(j)][static_cast<std::size_t>(r)];
}

}  // namespace rankshape::coll
