// The levels a hierarchical collective runs on.
//
// Groups are nested, finest first: level 0 groups are nodes (or sockets,
// see machine_groups), level 1 groups (nodes, racks, ...) hold whole level 0
// groups, and so on. Level j's
// communicator joins the leaders (rank 0 of their level j - 1 communicator;
// at level 0, every rank) of one level j group; the top communicator joins
// the leaders of the coarsest groups. Leaders: comm rank 0, the usual
// root, in its groups; elsewhere the first of the group in launch order
// (rank in MPI_COMM_WORLD; comm's rank order where comm has ranks from
// elsewhere). Members are ranked leader first, then in launch order; the
// top in launch order.
// Launch order follows the machine (racks, then nodes), where a relabelled
// communicator's rank order may not: its node leaders, ranked in its own
// order, would put every step of a tree across racks. On MPI_COMM_WORLD,
// with groups that are contiguous, increasing ranges of ranks the
// hierarchical order is comm's rank order (then non-commutative reductions
// may use the hierarchy).
//
// Hierarchical order: the ranks of comm listed group by group, recursively
// (the order in which a gather up the levels concatenates their blocks).
#ifndef RANKSHAPE_LIB_COLL_HIERARCHY_H_
#define RANKSHAPE_LIB_COLL_HIERARCHY_H_

#include <mpi.h>

#include <optional>
#include <string>
#include <vector>

#include "lib/mpi/communicator.h"

namespace rankshape::coll {

class Hierarchy {
 public:
  /// Collective over comm. groups[j][r] = group of rank r at level j (any
  /// integers; every rank passes the same tables), finest first; each
  /// level must nest inside the next. Empty: nodes only
  /// (MPI_Comm_split_type). Throws std::invalid_argument for tables that do
  /// not fit comm or do not nest. comm must outlive the hierarchy.
  Hierarchy(MPI_Comm comm, std::vector<std::vector<int>> groups = {});

  /// Group tables of nodes from MPI_Comm_split_type (collective).
  static std::vector<std::vector<int>> node_groups(MPI_Comm comm);
  /// Group tables of sockets (hwloc packages) inside nodes, then nodes
  /// (collective): {sockets, nodes}, or node_groups(comm) when the socket
  /// level would add nothing: some rank has no package (its CPU binding,
  /// HWLOC_CPUBIND_PROCESS, does not lie inside one package), the sockets
  /// are the nodes, or every socket holds one rank. Every rank returns the
  /// same tables.
  ///
  /// topology_xml: an hwloc XML file read instead of this machine's
  /// topology (the binding's OS indexes are looked up in it). pu_of_rank,
  /// for tests and emulation: the PU OS index of every rank of comm, used
  /// instead of the binding (every rank passes the same vector). Under SMPI
  /// hwloc sees the real host, not the simulated one: there the result is
  /// node_groups(comm) unless both topology_xml and pu_of_rank are given.
  ///
  /// Throws, on every rank alike, std::invalid_argument when pu_of_rank is
  /// neither empty nor of comm's size, or names a PU missing from the
  /// topology, and std::runtime_error when hwloc cannot load the topology.
  static std::vector<std::vector<int>> machine_groups(MPI_Comm comm,
                                                      const std::string& topology_xml = "",
                                                      const std::vector<int>& pu_of_rank = {});
  /// `groups` with one more level on top: the coarsest groups, in the order
  /// of their lowest rank, taken `per_group` at a time (racks of
  /// consecutive nodes). Throws std::invalid_argument for empty tables or
  /// per_group < 1.
  static std::vector<std::vector<int>> with_coarser(std::vector<std::vector<int>> groups,
                                                    int per_group);
  /// Pretended nodes of `size` ranks, for tests and emulation:
  /// "blocks:N" (N consecutive ranks per node) or "dealt:N" (ranks dealt
  /// round-robin over N nodes). Throws std::invalid_argument naming spec.
  static std::vector<std::vector<int>> pretend_groups(const std::string& spec, int size);

  /// A private duplicate of the communicator given (same ranks), for the
  /// point-to-point messages of the collectives: they never match the
  /// program's own messages on that communicator.
  MPI_Comm comm() const { return own_.get(); }
  int size() const { return size_; }
  int rank() const { return rank_; }
  /// Levels below the top (the number of group tables).
  int depth() const { return static_cast<int>(groups_.size()); }
  /// Level j's communicator for this rank, j in [0, depth()]; j = depth()
  /// is the top. Null when this rank is not in it.
  const mpi::Communicator* level(int j) const {
    return levels_[static_cast<std::size_t>(j)] ? &*levels_[static_cast<std::size_t>(j)] : nullptr;
  }
  /// A second communicator with the members of level(j), for the downward
  /// (broadcast) half of pipelined collectives: their non-blocking calls
  /// then never meet the upward (reduce) calls of other segments.
  const mpi::Communicator* level_down(int j) const {
    const auto& l = levels_down_[static_cast<std::size_t>(j)];
    return l ? &*l : nullptr;
  }
  /// All leaders of level 0 groups (one per node), whatever the coarser
  /// levels; null when this rank is not one. Equals the top when depth 1.
  const mpi::Communicator* group_leaders() const {
    return group_leaders_ ? &*group_leaders_ : nullptr;
  }
  /// Rank of comm rank r in group_leaders(), or -1.
  int rank_in_group_leaders(int r) const {
    return rank_in_group_leaders_[static_cast<std::size_t>(r)];
  }
  /// Rank of comm rank r inside its level j communicator, or -1 if r is
  /// not in one (the same on every rank).
  int rank_in_level(int r, int j) const {
    return rank_in_level_[static_cast<std::size_t>(j)][static_cast<std::size_t>(r)];
  }
  /// The comm rank that leads r's group at level j (r's representative in
  /// level j + 1); lead(r, -1) = r.
  int lead(int r, int j) const {
    return j < 0 ? r : leader_[static_cast<std::size_t>(j)][static_cast<std::size_t>(r)];
  }
  /// Comm ranks in hierarchical order, and the position of each rank in it.
  const std::vector<int>& order() const { return order_; }
  int position(int r) const { return position_[static_cast<std::size_t>(r)]; }
  /// Number of comm ranks under r's representative at level j, i.e. in
  /// the level j - 1 group that r leads (1 at level 0), for r in level j.
  int span(int r, int j) const;
  /// True when hierarchical order is comm's rank order.
  bool ordered() const { return ordered_; }
  /// True when some level has more than one member and some group has more
  /// than one rank: the hierarchy differs from a flat communicator.
  bool useful() const { return useful_; }

 private:
  mpi::Communicator own_;
  int size_ = 0, rank_ = 0;
  std::vector<std::vector<int>> groups_;
  std::vector<std::optional<mpi::Communicator>> levels_, levels_down_;
  std::optional<mpi::Communicator> group_leaders_;
  std::vector<int> rank_in_group_leaders_;
  std::vector<std::vector<int>> rank_in_level_;  // [level][rank]
  std::vector<std::vector<int>> leader_;         // [level][rank]
  std::vector<std::vector<int>> span_;           // [level][rank]
  std::vector<int> order_, position_;
  bool ordered_ = true, useful_ = false;
};

}  // namespace rankshape::coll

#endif  // RANKSHAPE_LIB_COLL_HIERARCHY_H_
