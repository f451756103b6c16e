#include "lib/synth/irregular.h"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>

namespace rankshape {
namespace {

// The header's example: nodes of 3, 3 and 2 ranks; nodes 0-1 in island 0,
// node 2 in island 1.
IrregularSpec header_example() {
  IrregularSpec m;
  m.node_ranks = {3, 3, 2};
  m.islands = {2, 1};
  return m;
}

TEST(IrregularMachineTest, UnevenNodesInUnevenIslandsHaveTheHeaderCosts) {
  const SyntheticMachine s = generate_irregular(header_example());
  ASSERT_EQ(s.costs.size(), 8);
  EXPECT_EQ(s.costs.spec().cores_per_node, 3);
  EXPECT_EQ(s.costs.cost(OldRank(0), OldRank(1)), 1);
  EXPECT_EQ(s.costs.cost(OldRank(0), OldRank(3)), 10);
  EXPECT_EQ(s.costs.cost(OldRank(0), OldRank(6)), 40);
  EXPECT_EQ(s.costs.location(OldRank(7)).node, 2);
  EXPECT_EQ(s.costs.location(OldRank(7)).core, 1);
  EXPECT_EQ(s.placement.of(OldRank(4)).host, "r0n1");
  EXPECT_EQ(s.placement.of(OldRank(6)).host, "r1n0");
}

TEST(IrregularMachineTest, TorusNodesCostTheirHops) {
  IrregularSpec m;
  m.node_ranks = {2, 2, 2, 2, 2, 2};
  m.torus = {3, 2};
  const SyntheticMachine s = generate_irregular(m);
  // Node n at (n % 3, n / 3); ranks 2n and 2n+1 on node n.
  EXPECT_EQ(s.costs.cost(OldRank(0), OldRank(2)), 10);   // (0,0)-(1,0)
  EXPECT_EQ(s.costs.cost(OldRank(0), OldRank(4)), 10);   // (0,0)-(2,0): round the ring
  EXPECT_EQ(s.costs.cost(OldRank(0), OldRank(10)), 20);  // (0,0)-(2,1)
  EXPECT_EQ(s.costs.cost(OldRank(2), OldRank(10)), 20);  // (1,0)-(2,1)
  EXPECT_EQ(s.placement.of(OldRank(10)).host, "n5");
}

TEST(IrregularMachineTest, SlowNodesMakeTheirLinksDearer) {
  IrregularSpec m;
  m.node_ranks = {1, 1, 1, 1, 1};
  m.slow_nodes = 2;
  m.slow_factor = 3;
  const SyntheticMachine s = generate_irregular(m);
  std::map<double, int> pairs;  // cost -> pairs of nodes at that cost
  for (int a = 0; a < 5; ++a) {
    for (int b = a + 1; b < 5; ++b) ++pairs[s.costs.cost(OldRank(a), OldRank(b))];
  }
  // 3 fast nodes: 3 pairs at 10; every other pair touches a slow node.
  EXPECT_EQ(pairs, (std::map<double, int>{{10, 3}, {30, 7}}));
}

TEST(IrregularMachineTest, EveryPlacementFillsExactlyTheSlots) {
  for (RankOrder order : {RankOrder::kBlock, RankOrder::kRoundRobin, RankOrder::kRandom}) {
    IrregularSpec m;
    m.node_ranks = {48, 48, 4};
    m.sockets_per_node = 2;
    m.order = order;
    const SyntheticMachine s = generate_irregular(m);
    ASSERT_EQ(s.costs.size(), 100);
    std::set<std::pair<int, int>> used;
    std::map<int, int> per_node;
    for (int r = 0; r < 100; ++r) {
      const RankLocation& at = s.costs.location(OldRank(r));
      EXPECT_TRUE(used.insert({at.node, at.core}).second) << rank_order_name(order);
      ++per_node[at.node];
    }
    EXPECT_EQ(per_node, (std::map<int, int>{{0, 48}, {1, 48}, {2, 4}})) << rank_order_name(order);
  }
  IrregularSpec m;
  m.node_ranks = {3, 1, 2};
  m.order = RankOrder::kRoundRobin;
  const SyntheticMachine s = generate_irregular(m);
  // Dealt in turn, the full node 1 skipped: n0 n1 n2 n0 n2 n0.
  const int expected[] = {0, 1, 2, 0, 2, 0};
  for (int r = 0; r < 6; ++r) EXPECT_EQ(s.costs.location(OldRank(r)).node, expected[r]) << r;
}

TEST(IrregularMachineTest, SocketsSplitTheFullestNode) {
  IrregularSpec m;
  m.node_ranks = {4, 3};
  m.sockets_per_node = 2;
  const SyntheticMachine s = generate_irregular(m);
  EXPECT_EQ(s.costs.cost(OldRank(0), OldRank(1)), 1);  // cores 0, 1: socket 0
  EXPECT_EQ(s.costs.cost(OldRank(0), OldRank(2)), 2);  // core 2: socket 1
  EXPECT_EQ(s.costs.cost(OldRank(4), OldRank(6)), 2);  // node 1, cores 0 and 2
}

TEST(IrregularMachineTest, CountListsExpandRepeats) {
  EXPECT_EQ(parse_count_list("48*2,4", "x"), (std::vector<int>{48, 48, 4}));
  EXPECT_EQ(parse_count_list("7", "x"), (std::vector<int>{7}));
  for (const char* bad :
       {"", "4,", ",4", "0", "4*0", "-1", "4*", "*2", "4x2", "1e3", "99999999999"}) {
    try {
      parse_count_list(bad, "--node-ranks");
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("--node-ranks"), std::string::npos) << e.what();
    }
  }
}

TEST(IrregularMachineTest, InconsistentShapesAreRefusedByName) {
  const auto refused = [](IrregularSpec m, const std::string& words) {
    try {
      generate_irregular(m);
      ADD_FAILURE() << "accepted a machine that should fail with '" << words << "'";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
    }
  };
  IrregularSpec m = header_example();
  m.islands = {2, 2};
  refused(m, "islands hold more nodes");
  m.islands = {1, 1};
  refused(m, "islands hold 2 nodes, the machine has 3");
  m = header_example();
  m.torus = {3};
  refused(m, "not both");
  m.islands.clear();
  m.torus = {2, 2};
  refused(m, "torus has more places");
  m.torus = {2};
  refused(m, "torus has 2 places");
  m = header_example();
  m.slow_nodes = 4;
  refused(m, "slow nodes");
  m.slow_nodes = 1;
  m.slow_factor = 0.5;
  refused(m, "slow factor");
  m = header_example();
  m.node_ranks = {};
  refused(m, "at least one node");
  m.node_ranks = {2, 0};
  refused(m, "at least 1 rank");
  m = header_example();
  m.noise = 1;
  refused(m, "noise");
}

}  // namespace
}  // namespace rankshape
