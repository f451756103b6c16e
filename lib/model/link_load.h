// Load on the links that groups of ranks share: a second predictor, next to
// the objective's pair costs.
//
// Pair costs come from one message at a time (ping-pong). In one step of a
// cartesian program every fibre of a dimension communicates at once, and
// the flows that leave a node or a rack share its links: 64 ranks of a rack
// behind one uplink get 1/64 of it each. The objective does not see that;
// the link load does. For dimension k, whose fibres have q members, a group
// g (a node, a rack) carries
//   load(g) = sum over the fibres f of dimension k of m (q - m) / q,
// m = the members of f in g: the messages that leave g when every member
// sends an equal share to every other, as bandwidth-optimal allreduces do,
// in units of one member's message. The link load of dimension k is
//   max over levels l, groups g of level l of flow_cost(l) * load(g),
// flow_cost(l) being what one message between two groups of level l costs.
//
// Worked example: 2 racks {0,1} {2,3}, grid 2x2 (dim 0 fibres {0,2} {1,3},
// dim 1 fibres {0,1} {2,3}), identity: each dim 0 fibre has one member in
// each rack, m (q - m) / q = 1/2, so each rack carries 1/2 + 1/2 = 1 in
// dimension 0 and 0 in dimension 1 (its fibres stay inside racks).
#ifndef RANKSHAPE_LIB_MODEL_LINK_LOAD_H_
#define RANKSHAPE_LIB_MODEL_LINK_LOAD_H_

#include <algorithm>
#include <cstdint>
#include <optional>
#include <vector>

#include "lib/model/costs.h"
#include "lib/model/grid.h"
#include "lib/model/labelling.h"

namespace rankshape {

/// One level of shared links: the group of every old rank (nodes, racks).
struct LinkLevel {
  std::vector<int> group_of;  // 0 .. groups - 1, one per old rank
  int groups = 0;
  /// Mean cost between representatives (first members) of two groups of
  /// this level inside one group of the next level up (any two groups at
  /// the top level).
  double flow_cost = 0;
  bool detected = false;  // found in the costs by groupings_by_gaps()
  /// The fabric that joins this level's groups inside one group of the next
  /// level up (its parent; the whole job above the top level), where it is
  /// narrower than the groups' own links: what one message between two
  /// groups adds to each parent's fabric it crosses (its sender's and, in
  /// another parent, its receiver's) when all the parent's groups send at
  /// once. 0: no such bottleneck known. A structured file's node-fabric and
  /// rack-fabric give it as a fraction of flow_cost (measure_fabric()
  /// measures node-fabric).
  ///
  /// Worked example (SMPI's lvl2-node64-core16): 64 nodes, each with a
  /// 10 Gb/s link into one 160 Gb/s backbone. One message alone between
  /// two nodes costs flow_cost; with every node sending, 16 links' worth
  /// share the backbone, so each message costs it flow_cost / 16. A halo
  /// step whose nodes send 3,072 messages out, 48 from the busiest, waits
  /// about flow_cost * (48 + 3072 / 16): the backbone, not the busiest
  /// node, decides it.
  double fabric_cost = 0;
  /// The parent of each group (0 .. parents - 1); empty: one parent, the
  /// whole job. Filled by link_levels() from the next level when it nests
  /// this one's groups.
  std::vector<int> parent_of;
  int parents = 1;

  int parent(int group) const {
    return parent_of.empty() ? 0 : parent_of[static_cast<std::size_t>(group)];
  }
  /// Calls add(parent) for every parent whose fabric carries traffic
  /// between groups a != b: a's and, when another, b's.
  template <class Add>
  void for_each_fabric(int a, int b, Add&& add) const {
    const int pa = parent(a), pb = parent(b);
    add(pa);
    if (pb != pa) add(pb);
  }
};

/// Smallest jump between consecutive sorted costs that separates two levels
/// of a machine. Costs measured concurrently on an oversubscribed network
/// spread one level by up to ~1.45x: on SMPI's lvl2-node64-core16 (one
/// level between nodes) the 64 KiB times were 175 us, except the 32 pairs
/// of one measuring round at 122-135 us, a jump of 1.30x that read as a
/// level of node pairs. Real levels measured so far jump 1.9x or more
/// (SMPI racks 152 -> 288 us; emulated nodes 1.6 -> 7.3 us).
constexpr double kMinLevelGap = 1.5;
/// Most items groupings_by_gaps() sorts the pair costs of (n^2 / 2 values:
/// 2,048 items take about 50 MB).
constexpr int kMaxGapItems = 2048;

/// The levels among n items (costs: n x n row-major, symmetric), finest
/// first. The largest jump (by ratio, at least kMinLevelGap) between
/// consecutive sorted pair costs gives a level, then the largest jump below
/// it, and so on; each level joins the items whose costs are at most the
/// value below its jump. Levels that leave one group, a group of one, or
/// no fewer groups than the level below are dropped. Each result labels
/// the items 0 .. groups - 1.
std::vector<std::vector<int>> groupings_by_gaps(const std::vector<double>& costs, int n);

/// Throws std::invalid_argument unless the level places p ranks in groups
/// 0 .. groups - 1 (groups >= 1) with a flow cost that is a cost.
void check_level(const LinkLevel& level, int p);

/// The levels with shared links: each known level (group of every old
/// rank, finest first, e.g. JobCosts::levels) with at least two groups and
/// fewer groups than ranks, then levels above the last found in the costs
/// between its groups' representatives by groupings_by_gaps() (starting from
/// single ranks when nothing is known and p <= kMaxGapItems). Each level
/// gets its parents from the next one (when that nests it) and, from
/// structured costs, a fabric cost where it groups the ranks as the file's
/// nodes (node-fabric times its flow cost) or racks (rack-fabric) do. Throws
/// std::invalid_argument if a known level's size is not costs.size().
std::vector<LinkLevel> link_levels(const Costs& costs, const std::vector<std::vector<int>>& known);

/// One fibre's part of the loads, times q: for the groups of its q members
/// (sorted in place), calls add(group, m (q - m)) for every group holding
/// m < q of them. Whole numbers, so that IncrementalObjective can add and
/// remove fibres without rounding; link_load() divides by q.
template <class Add>
void for_each_group_share(std::vector<int>& groups, Add&& add) {
  std::sort(groups.begin(), groups.end());
  const auto q = static_cast<std::int64_t>(groups.size());
  for (std::size_t i = 0; i < groups.size();) {
    std::size_t j = i;
    while (j < groups.size() && groups[j] == groups[i]) ++j;
    const auto m = static_cast<std::int64_t>(j - i);
    if (m < q) add(groups[i], m * (q - m));
    i = j;
  }
}

/// The link load of every dimension of the grid under the labelling. With
/// spread, also every dimension's sum over levels and groups of flow_cost
/// times load, the objective's tie-break (all traffic that leaves groups,
/// not only the busiest group's). Throws std::invalid_argument if the grid,
/// the labelling or a level disagree on the number of ranks, or a level
/// fails check_level().
std::vector<double> link_load(const Grid& grid, const Labelling& labelling,
                              const std::vector<LinkLevel>& levels,
                              std::vector<double>* spread = nullptr);

}  // namespace rankshape

#endif  // RANKSHAPE_LIB_MODEL_LINK_LOAD_H_
