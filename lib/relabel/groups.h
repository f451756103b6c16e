// Groups of ranks that belong together (a node, a socket, a cluster of
// mutually close ranks), the raw material of multilevel relabelling.
#ifndef RANKSHAPE_LIB_RELABEL_GROUPS_H_
#define RANKSHAPE_LIB_RELABEL_GROUPS_H_

#include <optional>
#include <vector>

#include "lib/model/costs.h"
#include "lib/relabel/deadline.h"
#include "lib/util/random.h"

namespace rankshape {

/// A partition of items 0..n-1 into groups of equal size.
struct Grouping {
  int group_size = 0;
  std::vector<std::vector<int>> members;  // members[g], each sorted
  std::vector<int> group_of;              // group_of[item]
};

/// The grouping given by a label per item (e.g. the node of each rank), if
/// every group has the same size; nullopt otherwise. Groups are numbered in
/// order of their smallest member.
std::optional<Grouping> grouping_from_labels(const std::vector<int>& labels);

/// Groups of g mutually close items (n must be a multiple of g): each group
/// grows from a seed (taken in random order) by repeatedly adding the
/// unassigned item with the smallest total cost to the group, the
/// generalisation of heavy-edge matching. Then multi-way Kernighan-Lin
/// refines the partition, until the deadline, when groups are few and small
/// enough (at most 128 groups of at most 64). O(n^2) lookups.
Grouping cluster_items(const Costs& costs, int g, SplitMix64& rng, const Deadline& deadline);

/// Average cost between the members of two groups, for every pair of
/// groups (0 on the diagonal). O(n^2) lookups; exact and O(groups^2) when
/// the groups are the nodes of a structured machine.
DenseCosts coarse_costs(const Costs& costs, const Grouping& grouping);

/// The coarse problem of a structured machine, kept structured (O(groups)
/// memory, where a dense one at 16,384 nodes takes 2 GiB): when every
/// group lies in one node, no two in the same node (each group becomes a
/// node of one core), or, with rack costs alone, in one rack, no two in the
/// same rack (each group a node of its own in that rack). The cost between
/// two groups is then exactly that between any of their members.
/// nullopt otherwise.
std::optional<StructuredCosts> structured_coarse_costs(const Costs& costs,
                                                       const Grouping& grouping);

/// The mean cost between two different members of `members` (0 for one).
double mean_cost_inside(const Costs& costs, const std::vector<int>& members);

/// Sorts ranks of one node by the core they run on (stable), the order in
/// which a structured machine's nodes pose identical inner problems.
void order_by_core(const StructuredCosts& costs, std::vector<int>& members);

/// Up to k closest other items of every item (ties by index). O(n^2).
std::vector<std::vector<int>> nearest_items(const Costs& costs, int k);

}  // namespace rankshape

#endif  // RANKSHAPE_LIB_RELABEL_GROUPS_H_
