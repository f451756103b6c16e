// Who exchanges with whom when a level's fabric is measured (pure).
#include <gtest/gtest.h>

#include <vector>

#include "lib/measure/fabric.h"

namespace rankshape {
namespace {

// 8 ranks, 4 nodes of 2 (ranks scattered), no level above: the whole job
// is one parent; the first rank of each node represents it, and the i-th
// node pairs with the (i + 2)-th.
TEST(FabricPairsTest, GroupsPairAcrossTheMiddleOfTheirParent) {
  const FabricPairs pairs = fabric_pairs({0, 1, 2, 3, 0, 1, 2, 3}, {});
  EXPECT_EQ(pairs.partner, (std::vector<int>{2, 3, 0, 1, -1, -1, -1, -1}));
  EXPECT_EQ(pairs.flows, 4);
  EXPECT_EQ(pairs.alone_a, 0);
  EXPECT_EQ(pairs.alone_b, 2);
}

// Nodes inside racks: pairs stay in their rack; an odd node out waits;
// racks pair across the job.
TEST(FabricPairsTest, PairsStayInsideTheirParent) {
  // 6 nodes of one rank: nodes 0-2 in rack 0, 3-5 in rack 1.
  const std::vector<int> racks = {0, 0, 0, 1, 1, 1};
  const FabricPairs nodes = fabric_pairs({0, 1, 2, 3, 4, 5}, racks);
  EXPECT_EQ(nodes.partner, (std::vector<int>{1, 0, -1, 4, 3, -1}));
  EXPECT_EQ(nodes.flows, 2);
  EXPECT_EQ(nodes.alone_a, 0);
  EXPECT_EQ(nodes.alone_b, 1);
  const FabricPairs across = fabric_pairs(racks, {});
  EXPECT_EQ(across.partner, (std::vector<int>{3, -1, -1, 0, -1, -1}));
  EXPECT_EQ(across.flows, 2);
}

TEST(FabricPairsTest, OneGroupPerParentTimesNothing) {
  const FabricPairs pairs = fabric_pairs({0, 0, 0}, {});
  EXPECT_EQ(pairs.partner, (std::vector<int>{-1, -1, -1}));
  EXPECT_EQ(pairs.flows, 0);
  EXPECT_EQ(pairs.alone_a, -1);
  // Each node alone in its rack: nothing to pair at the node level.
  const FabricPairs alone = fabric_pairs({0, 1}, {0, 1});
  EXPECT_EQ(alone.alone_a, -1);
}

}  // namespace
}  // namespace rankshape
