#include "lib/relabel/kl.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "lib/relabel/groups.h"
#include "lib/relabel/multilevel.h"
#include "lib/synth/machine.h"
#include "tests/testing/machines.h"

namespace rankshape {
namespace {

DenseCosts two_pairs() {
  return DenseCosts(4, {0, 1, 10, 10, 1, 0, 10, 10, 10, 10, 0, 1, 10, 10, 1, 0});
}

TEST(KernighanLinTest, WorkedExampleFromTheHeader) {
  std::vector<std::vector<int>> groups = {{0, 2}, {1, 3}};
  EXPECT_EQ(inside_cost(two_pairs(), groups), 20);
  EXPECT_EQ(refine_partition_kl(two_pairs(), groups, Deadline(10)), 18);
  std::sort(groups.begin(), groups.end());  // (2,1) and (0,3) gain the same
  EXPECT_EQ(groups, (std::vector<std::vector<int>>{{0, 1}, {2, 3}}));
}

TEST(KernighanLinTest, RecoversNodesFromAScramble) {
  MachineSpec m;
  m.nodes_per_rack = 8;
  m.cores_per_socket = 6;
  m.order = RankOrder::kRandom;
  const SyntheticMachine s = generate_machine(m);
  std::vector<std::vector<int>> groups(8);
  for (int r = 0; r < 48; ++r) groups[r / 6].push_back(r);  // scrambled: mixed nodes
  const double before = inside_cost(s.costs, groups);
  refine_partition_kl(s.costs, groups, Deadline(10));
  for (const auto& g : groups) {
    ASSERT_EQ(g.size(), 6u);
    for (int r : g)
      EXPECT_EQ(s.costs.location(OldRank(r)).node, s.costs.location(OldRank(g[0])).node);
  }
  EXPECT_LT(inside_cost(s.costs, groups), before);
}

TEST(GroupsTest, LabelsAndClusters) {
  EXPECT_FALSE(grouping_from_labels({0, 0, 1}).has_value());
  const auto g = grouping_from_labels({5, 3, 5, 3});
  ASSERT_TRUE(g.has_value());
  EXPECT_EQ(g->group_size, 2);
  EXPECT_EQ(g->members, (std::vector<std::vector<int>>{{0, 2}, {1, 3}}));
  SplitMix64 rng(1);
  const Grouping c = cluster_items(two_pairs(), 2, rng, Deadline(10));
  EXPECT_EQ(c.members, (std::vector<std::vector<int>>{{0, 1}, {2, 3}}));
  const DenseCosts coarse = coarse_costs(two_pairs(), c);
  EXPECT_EQ(coarse.cost(OldRank(0), OldRank(1)), 10);
  EXPECT_THROW(cluster_items(two_pairs(), 3, rng, Deadline(10)), std::invalid_argument);
}

// Groups that share a node (clusters on a machine with unequal nodes) must
// get their members' real costs, not the node-to-node cost.
TEST(GroupsTest, CoarseCostsOfGroupsSharingANode) {
  StructuredSpec s = testing::flat_machine(2, 8, 100);
  for (int r = 0; r < 12; ++r) s.ranks.push_back({r < 8 ? 0 : 1, r % 8});  // 8 + 4 ranks
  const StructuredCosts c(std::move(s));
  Grouping g;
  g.group_size = 2;
  g.members = {{0, 1}, {2, 3}, {8, 9}};
  g.group_of = {0, 0, 1, 1, -1, -1, -1, -1, 2, 2, -1, -1};
  const DenseCosts coarse = coarse_costs(c, g);
  EXPECT_EQ(coarse.cost(OldRank(0), OldRank(1)), 1);  // both on node 0
  EXPECT_EQ(coarse.cost(OldRank(0), OldRank(2)), 100);
  // Whole nodes as groups take the node cost directly.
  Grouping nodes;
  nodes.group_size = 2;
  nodes.members = {{0, 1}, {8, 9}};
  EXPECT_EQ(coarse_costs(c, nodes).cost(OldRank(0), OldRank(1)), 100);
}

// Groups of whole nodes, of parts of nodes (one per node) and of whole
// racks keep the machine's structure: the same costs as the dense average,
// in O(groups) memory. Groups that share a node do not.
TEST(GroupsTest, StructuredCoarseCostsEqualTheDenseOnes) {
  MachineSpec m = machine_shape(3, 4, 1, 4, RankOrder::kRandom);
  m.seed = 11;
  const SyntheticMachine machine = generate_machine(m);
  const StructuredCosts& c = machine.costs;
  std::vector<int> node(48), half(48), rack(48), pairs(48);
  for (int r = 0; r < 48; ++r) {
    const RankLocation at = c.location(OldRank(r));
    node[r] = at.node;
    half[r] = at.node * 2 + at.core / 2;
    rack[r] = c.rack_of(at.node);
  }
  for (const auto& labels : {node, rack}) {
    const Grouping g = *grouping_from_labels(labels);
    const std::optional<StructuredCosts> s = structured_coarse_costs(c, g);
    ASSERT_TRUE(s.has_value());
    const DenseCosts d = coarse_costs(c, g);
    ASSERT_EQ(s->size(), d.size());
    for (int a = 0; a < d.size(); ++a) {
      for (int b = 0; b < d.size(); ++b) {
        EXPECT_EQ(s->cost(OldRank(a), OldRank(b)), d.cost(OldRank(a), OldRank(b))) << a << " " << b;
      }
    }
  }
  // Half nodes: two groups share each node.
  EXPECT_FALSE(structured_coarse_costs(c, *grouping_from_labels(half)).has_value());
  EXPECT_FALSE(structured_coarse_costs(two_pairs(), *grouping_from_labels({0, 0, 1, 1})));
}

TEST(MultilevelTest, BoxShapesAndComposition) {
  const Grid g({4, 4});
  EXPECT_EQ(box_shapes(4, g), (std::vector<std::vector<int>>{{1, 4}, {2, 2}, {4, 1}}));
  EXPECT_TRUE(box_shapes(3, g).empty());
  // Two groups of 8 in 2x4 boxes stacked along dimension 0; the second
  // group's members are reversed inside its box.
  std::vector<std::vector<int>> members = {{0, 1, 2, 3, 4, 5, 6, 7},
                                           {8, 9, 10, 11, 12, 13, 14, 15}};
  std::vector<OldRank> reversed;
  for (int i = 7; i >= 0; --i) reversed.emplace_back(i);
  const std::vector<Labelling> inner = {Labelling::identity(8), Labelling(reversed)};
  const Labelling l = compose(g, {2, 4}, Labelling::identity(2), members, inner);
  EXPECT_EQ(l.old_of(NewRank(0)), OldRank(0));
  EXPECT_EQ(l.old_of(NewRank(7)), OldRank(7));
  EXPECT_EQ(l.old_of(NewRank(8)), OldRank(15));
  EXPECT_EQ(l.old_of(NewRank(15)), OldRank(8));
}

}  // namespace
}  // namespace rankshape
