#include "lib/model/link_load.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <vector>

#include "lib/util/random.h"
#include "tests/testing/machines.h"

namespace rankshape {
namespace {

Labelling from(std::initializer_list<int> perm) {
  std::vector<OldRank> v;
  for (int o : perm) v.emplace_back(o);
  return Labelling(std::move(v));
}

// racks x nodes x cores, block placement: 1 inside a node, 10 between
// nodes of a rack, 40 between racks.
StructuredCosts racked(int racks, int nodes_per_rack, int cores) {
  StructuredSpec s = testing::flat_machine(racks * nodes_per_rack, cores, 10);
  s.racks = racks;
  s.rack_costs.assign(static_cast<std::size_t>(racks) * racks, 40);
  for (int r = 0; r < racks; ++r) s.rack_costs[static_cast<std::size_t>(r) * racks + r] = 10;
  for (int n = 0; n < s.nodes; ++n) s.node_rack.push_back(n / nodes_per_rack);
  for (int n = 0; n < s.nodes; ++n) {
    for (int c = 0; c < cores; ++c) s.ranks.push_back({n, c});
  }
  return StructuredCosts(std::move(s));
}

TEST(LinkLoadTest, WorkedExampleFromTheHeader) {
  LinkLevel racks;
  racks.group_of = {0, 0, 1, 1};
  racks.groups = 2;
  racks.flow_cost = 1;
  const Grid g({2, 2});
  const std::vector<double> id = link_load(g, Labelling::identity(4), {racks});
  EXPECT_EQ(id, (std::vector<double>{1.0, 0.0}));
  // Transposed, dimension 1 crosses the racks instead.
  EXPECT_EQ(link_load(g, from({0, 2, 1, 3}), {racks}), (std::vector<double>{0.0, 1.0}));
}

TEST(LinkLoadTest, LoadCountsTheMessagesThatLeaveEachGroup) {
  // One fibre of 4 with 1 member in group 0 and 3 in group 1: 1 * 3 / 4
  // leaves each group; the flow cost scales it.
  LinkLevel level;
  level.group_of = {0, 1, 1, 1};
  level.groups = 2;
  level.flow_cost = 2;
  EXPECT_EQ(link_load(Grid({4}), Labelling::identity(4), {level}), (std::vector<double>{1.5}));
  // Two levels: the worse of them counts.
  LinkLevel dearer = level;
  dearer.group_of = {0, 0, 1, 1};  // 2 * 2 / 4 = 1 each, times 5
  dearer.flow_cost = 5;
  EXPECT_EQ(link_load(Grid({4}), Labelling::identity(4), {level, dearer}),
            (std::vector<double>{5.0}));
  // A dimension of size 1 carries nothing; no levels, no load.
  EXPECT_EQ(link_load(Grid({1, 4}), Labelling::identity(4), {level}),
            (std::vector<double>{0.0, 1.5}));
  EXPECT_EQ(link_load(Grid({4}), Labelling::identity(4), {}), (std::vector<double>{0.0}));
}

TEST(LinkLoadTest, FibresInsideGroupsBeatFibresAcrossThem) {
  // 2 racks of 2 nodes of 4 cores; grid 4x4: dimension 1's fibres are the
  // nodes in block order. Scrambling moves load onto the rack links.
  const StructuredCosts costs = racked(2, 2, 4);
  const std::vector<LinkLevel> levels =
      link_levels(costs, {{0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3},
                          {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1}});
  ASSERT_EQ(levels.size(), 2u);
  const Grid g({4, 4});
  const std::vector<double> block = link_load(g, Labelling::identity(16), levels);
  EXPECT_EQ(block[1], 0.0);
  SplitMix64 rng(3);
  std::vector<OldRank> shuffled;
  for (int i = 0; i < 16; ++i) shuffled.emplace_back(i);
  for (int i = 15; i > 0; --i) {
    std::swap(shuffled[static_cast<std::size_t>(i)],
              shuffled[static_cast<std::size_t>(rng.below(static_cast<std::uint64_t>(i) + 1))]);
  }
  const std::vector<double> scrambled = link_load(g, Labelling(shuffled), levels);
  EXPECT_GT(scrambled[0] + scrambled[1], block[0] + block[1]);
}

TEST(LinkLoadTest, KnownLevelsKeepTheirGroupsAndGetFlowCosts) {
  const StructuredCosts costs = racked(2, 2, 2);              // 8 ranks
  const std::vector<int> nodes = {5, 5, 7, 7, 9, 9, 11, 11};  // any labels
  const std::vector<int> racks = {0, 0, 0, 0, 1, 1, 1, 1};
  const std::vector<LinkLevel> levels = link_levels(costs, {nodes, racks});
  ASSERT_EQ(levels.size(), 2u);
  EXPECT_EQ(levels[0].group_of, (std::vector<int>{0, 0, 1, 1, 2, 2, 3, 3}));
  EXPECT_EQ(levels[0].groups, 4);
  EXPECT_EQ(levels[0].flow_cost, 10);  // nodes of one rack
  EXPECT_FALSE(levels[0].detected);
  EXPECT_EQ(levels[1].flow_cost, 40);  // the two racks
  // A level of one group has no shared links: nodes and racks are then
  // found in the costs.
  const std::vector<LinkLevel> found = link_levels(costs, {std::vector<int>(8, 0)});
  ASSERT_EQ(found.size(), 2u);
  EXPECT_EQ(found[0].group_of, levels[0].group_of);
  EXPECT_EQ(found[1].group_of, levels[1].group_of);
  EXPECT_THROW(link_levels(costs, {{0, 0, 1}}), std::invalid_argument);
}

TEST(LinkLoadTest, LevelsGetTheirParentsAndTheFilesFabrics) {
  StructuredSpec spec = racked(2, 2, 2).spec();  // 8 ranks, 4 nodes, 2 racks
  spec.node_fabric = 2.5;
  spec.rack_fabric = 7;
  const StructuredCosts costs(spec);
  const std::vector<int> nodes = {0, 0, 1, 1, 2, 2, 3, 3};
  const std::vector<int> racks = {0, 0, 0, 0, 1, 1, 1, 1};
  const std::vector<LinkLevel> levels = link_levels(costs, {nodes, racks});
  ASSERT_EQ(levels.size(), 2u);
  // Nodes sit in racks; racks in the whole job.
  EXPECT_EQ(levels[0].parent_of, (std::vector<int>{0, 0, 1, 1}));
  EXPECT_EQ(levels[0].parents, 2);
  EXPECT_TRUE(levels[1].parent_of.empty());
  EXPECT_EQ(levels[1].parents, 1);
  EXPECT_EQ(levels[0].fabric_cost, 2.5 * 10);  // fractions of the flow costs
  EXPECT_EQ(levels[1].fabric_cost, 7 * 40);
  // Racks found in the costs are the file's racks: they get its fabric too.
  const std::vector<LinkLevel> found = link_levels(costs, {nodes});
  ASSERT_EQ(found.size(), 2u);
  EXPECT_EQ(found[1].fabric_cost, 7 * 40);
  // A level that groups the ranks otherwise gets none, and a level the
  // next one does not nest has the whole job as its parent.
  const std::vector<LinkLevel> other = link_levels(costs, {{0, 1, 1, 0, 2, 3, 3, 2}, racks});
  EXPECT_EQ(other[0].fabric_cost, 0);
  const std::vector<LinkLevel> unnested = link_levels(costs, {nodes, {0, 1, 0, 0, 1, 1, 1, 1}});
  EXPECT_TRUE(unnested[0].parent_of.empty());
  EXPECT_EQ(unnested[0].parents, 1);
  // One node per rack: the nodes' level is the racks' too, and gets the
  // nodes' fabric.
  StructuredSpec lone = racked(3, 1, 2).spec();
  lone.node_fabric = 0.5;
  lone.rack_fabric = 3;
  const StructuredCosts lone_costs(lone);
  const std::vector<LinkLevel> lone_levels = link_levels(lone_costs, {{0, 0, 1, 1, 2, 2}});
  ASSERT_FALSE(lone_levels.empty());
  EXPECT_EQ(lone_levels[0].fabric_cost, 0.5 * lone_levels[0].flow_cost);
  // Traffic between groups crosses its sender's parent's fabric and, in
  // another parent, its receiver's.
  std::vector<int> crossed;
  levels[0].for_each_fabric(0, 1, [&](int p) { crossed.push_back(p); });  // nodes of rack 0
  EXPECT_EQ(crossed, (std::vector<int>{0}));
  crossed.clear();
  levels[0].for_each_fabric(1, 2, [&](int p) { crossed.push_back(p); });  // rack 0 to rack 1
  EXPECT_EQ(crossed, (std::vector<int>{0, 1}));
}

TEST(LinkLoadTest, RacksAreFoundInTheCostsWhenOnlyNodesAreKnown) {
  const StructuredCosts costs = racked(3, 4, 2);  // 24 ranks, 12 nodes
  std::vector<int> nodes;
  for (int r = 0; r < 24; ++r) nodes.push_back(r / 2);
  const std::vector<LinkLevel> levels = link_levels(costs, {nodes});
  ASSERT_EQ(levels.size(), 2u);
  EXPECT_TRUE(levels[1].detected);
  EXPECT_EQ(levels[1].groups, 3);
  for (int r = 0; r < 24; ++r) EXPECT_EQ(levels[1].group_of[r], r / 8) << r;
  EXPECT_EQ(levels[1].flow_cost, 40);
}

TEST(LinkLoadTest, NodesAndRacksAreFoundInADenseMatrix) {
  const DenseCosts dense = to_dense(racked(2, 3, 4));  // 24 ranks, nothing known
  const std::vector<LinkLevel> levels = link_levels(dense, {});
  ASSERT_EQ(levels.size(), 2u);
  EXPECT_EQ(levels[0].groups, 6);
  EXPECT_EQ(levels[1].groups, 2);
  EXPECT_EQ(levels[0].flow_cost, 10);
  EXPECT_EQ(levels[1].flow_cost, 40);
}

TEST(LinkLoadTest, GroupingsByGapsNeedAJump) {
  using Groupings = std::vector<std::vector<int>>;
  // Noise of up to 1.2x inside a level is not a level.
  EXPECT_EQ(groupings_by_gaps({0, 1, 1.1, 1, 0, 1.2, 1.1, 1.2, 0}, 3), Groupings{});
  // Nor is one measuring round's pairs cheaper by 1.3x (contention that
  // varies by round): 0-1 and 2-3 at 130, all else 175.
  const std::vector<double> one_round = {0,   130, 175, 175, 130, 0,   175, 175,
                                         175, 175, 0,   130, 175, 175, 130, 0};
  EXPECT_EQ(groupings_by_gaps(one_round, 4), Groupings{});
  // 1 vs 2: items {0, 1} and {2, 3}.
  const std::vector<double> two_pairs = {0, 1, 2, 2, 1, 0, 2, 2, 2, 2, 0, 1, 2, 2, 1, 0};
  EXPECT_EQ(groupings_by_gaps(two_pairs, 4), (Groupings{{0, 0, 1, 1}}));
  // Zero costs are a level of their own.
  const std::vector<double> zeros = {0, 0, 3, 3, 0, 0, 3, 3, 3, 3, 0, 0, 3, 3, 0, 0};
  EXPECT_EQ(groupings_by_gaps(zeros, 4), (Groupings{{0, 0, 1, 1}}));
  // A group of one is an outlier, not a level: 0 and 1 close, 2 alone.
  EXPECT_EQ(groupings_by_gaps({0, 1, 2, 1, 0, 2, 2, 2, 0}, 3), Groupings{});
  EXPECT_EQ(groupings_by_gaps({0, 1, 1, 0}, 2), Groupings{});
  EXPECT_THROW(groupings_by_gaps({0, 1, 1}, 2), std::invalid_argument);
}

TEST(LinkLoadTest, AFinerLevelUnderALargerJumpIsFound) {
  // 2 racks of 2 nodes of 2 cores: 1 inside a node, 2 between nodes of a
  // rack, 40 between racks. The rack jump (20x) is the largest; the node
  // jump (2x) below it is found too, finest first.
  StructuredSpec s = testing::flat_machine(4, 2, 2);
  s.racks = 2;
  s.rack_costs = {2, 40, 40, 2};
  s.node_rack = {0, 0, 1, 1};
  for (int n = 0; n < 4; ++n) {
    for (int c = 0; c < 2; ++c) s.ranks.push_back({n, c});
  }
  const StructuredCosts costs(std::move(s));
  const std::vector<LinkLevel> levels = link_levels(to_dense(costs), {});
  ASSERT_EQ(levels.size(), 2u);
  EXPECT_EQ(levels[0].group_of, (std::vector<int>{0, 0, 1, 1, 2, 2, 3, 3}));
  EXPECT_EQ(levels[1].group_of, (std::vector<int>{0, 0, 0, 0, 1, 1, 1, 1}));
  EXPECT_EQ(levels[0].flow_cost, 2);
  EXPECT_EQ(levels[1].flow_cost, 40);
}

TEST(LinkLoadTest, BadLevelsThrow) {
  LinkLevel level;
  level.group_of = {0, 1};
  level.groups = 2;
  EXPECT_THROW(link_load(Grid({4}), Labelling::identity(4), {level}), std::invalid_argument);
  EXPECT_THROW(link_load(Grid({4}), Labelling::identity(2), {}), std::invalid_argument);
  level.group_of = {0, 1, 2, 1};  // group 2 of 2
  EXPECT_THROW(link_load(Grid({4}), Labelling::identity(4), {level}), std::invalid_argument);
  level.group_of = {0, 1, -1, 1};
  EXPECT_THROW(link_load(Grid({4}), Labelling::identity(4), {level}), std::invalid_argument);
  level.group_of = {0, 1, 0, 1};
  level.flow_cost = -1;
  EXPECT_THROW(link_load(Grid({4}), Labelling::identity(4), {level}), std::invalid_argument);
  level.flow_cost = 1;
  level.fabric_cost = -2;
  EXPECT_THROW(check_level(level, 4), std::invalid_argument);
  level.fabric_cost = 1;
  level.parent_of = {0, 2};  // parent 2 of 2
  level.parents = 2;
  EXPECT_THROW(check_level(level, 4), std::invalid_argument);
  level.parent_of = {0};  // one group without a parent
  EXPECT_THROW(check_level(level, 4), std::invalid_argument);
  level.parent_of = {0, 1};
  EXPECT_NO_THROW(check_level(level, 4));
  level.groups = 0;
  EXPECT_THROW(check_level(level, 4), std::invalid_argument);
}

}  // namespace
}  // namespace rankshape
