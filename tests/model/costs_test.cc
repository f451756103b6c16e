#include "lib/model/costs.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace rankshape {
namespace {

TEST(DenseCostsTest, LooksUpSymmetricEntries) {
  const DenseCosts d(3, {0, 1, 2, 1, 0, 3, 2, 3, 0});
  EXPECT_EQ(d.size(), 3);
  EXPECT_EQ(d.cost(OldRank(0), OldRank(2)), 2);
  EXPECT_EQ(d.cost(OldRank(2), OldRank(1)), 3);
  EXPECT_EQ(d.row(OldRank(1))[2], 3);
}

TEST(DenseCostsTest, RejectsBadMatrices) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_THROW(DenseCosts(2, {0, 1, 1}), std::invalid_argument);
  EXPECT_THROW(DenseCosts(2, {0, 1, 2, 0}), std::invalid_argument);
  EXPECT_THROW(DenseCosts(2, {1, 1, 1, 0}), std::invalid_argument);
  EXPECT_THROW(DenseCosts(2, {0, -1, -1, 0}), std::invalid_argument);
  EXPECT_THROW(DenseCosts(2, {0, nan, nan, 0}), std::invalid_argument);
  EXPECT_THROW(DenseCosts(2, {0, inf, inf, 0}), std::invalid_argument);
  // Finite, but sums of them overflow: every labelling would look alike.
  EXPECT_THROW(DenseCosts(2, {0, 1e300, 1e300, 0}), std::invalid_argument);
  EXPECT_NO_THROW(DenseCosts(2, {0, kMaxCost, kMaxCost, 0}));
  EXPECT_THROW(DenseCosts(0, {}), std::invalid_argument);
  EXPECT_THROW(DenseCosts(DenseCosts::kMaxRanks + 1, {}), std::invalid_argument);
}

StructuredSpec two_racks() {
  StructuredSpec s;
  s.cores_per_node = 2;
  s.core_costs = {0, 1, 1, 0};
  s.nodes = 4;
  s.racks = 2;
  s.node_rack = {0, 0, 1, 1};
  s.rack_costs = {10, 40, 40, 10};
  for (int r = 0; r < 8; ++r) s.ranks.push_back({r / 2, r % 2});
  return s;
}

TEST(StructuredCostsTest, UsesTheClosestLevel) {
  const StructuredCosts c(two_racks());
  EXPECT_EQ(c.size(), 8);
  EXPECT_EQ(c.cost(OldRank(3), OldRank(3)), 0);
  EXPECT_EQ(c.cost(OldRank(0), OldRank(1)), 1);   // same node
  EXPECT_EQ(c.cost(OldRank(0), OldRank(2)), 10);  // same rack
  EXPECT_EQ(c.cost(OldRank(0), OldRank(7)), 40);  // other rack
  const DenseCosts d = to_dense(c);
  for (int a = 0; a < 8; ++a) {
    for (int b = 0; b < 8; ++b)
      EXPECT_EQ(d.cost(OldRank(a), OldRank(b)), c.cost(OldRank(a), OldRank(b)));
  }
}

TEST(StructuredCostsTest, NodeMatrixOverridesRacks) {
  StructuredSpec s = two_racks();
  s.node_costs.assign(16, 5.f);
  for (int n = 0; n < 4; ++n) s.node_costs[n * 4 + n] = 0;
  s.node_costs[0 * 4 + 3] = s.node_costs[3 * 4 + 0] = 99.f;
  const StructuredCosts c(std::move(s));
  EXPECT_EQ(c.cost(OldRank(0), OldRank(2)), 5);
  EXPECT_EQ(c.cost(OldRank(1), OldRank(6)), 99);
}

TEST(StructuredCostsTest, RejectsInconsistentSpecs) {
  auto broken = [](auto mutate) {
    StructuredSpec s = two_racks();
    mutate(s);
    return s;
  };
  EXPECT_THROW(StructuredCosts(broken([](StructuredSpec& s) { s.ranks[3].node = 4; })),
               std::invalid_argument);
  EXPECT_THROW(StructuredCosts(broken([](StructuredSpec& s) { s.ranks[3].core = 2; })),
               std::invalid_argument);
  EXPECT_THROW(StructuredCosts(broken([](StructuredSpec& s) { s.node_rack[1] = 2; })),
               std::invalid_argument);
  EXPECT_THROW(StructuredCosts(broken([](StructuredSpec& s) { s.rack_costs[1] = 41; })),
               std::invalid_argument);
  EXPECT_THROW(StructuredCosts(broken([](StructuredSpec& s) { s.rack_costs.clear(); })),
               std::invalid_argument);
  EXPECT_THROW(StructuredCosts(broken([](StructuredSpec& s) { s.core_costs.pop_back(); })),
               std::invalid_argument);
  EXPECT_THROW(StructuredCosts(broken([](StructuredSpec& s) { s.ranks.clear(); })),
               std::invalid_argument);
  EXPECT_THROW(
      StructuredCosts(broken([](StructuredSpec& s) { s.core_costs[1] = s.core_costs[2] = -1; })),
      std::invalid_argument);
}

// The scale target: 65,536 ranks (1,024 nodes x 64 cores) in a few MB.
TEST(StructuredCostsTest, LargeMachineFitsInAFewMegabytes) {
  StructuredSpec s;
  s.cores_per_node = 64;
  s.core_costs.assign(64 * 64, 1.0);
  for (int c = 0; c < 64; ++c) s.core_costs[c * 64 + c] = 0;
  s.nodes = 1024;
  s.racks = 16;
  for (int n = 0; n < 1024; ++n) s.node_rack.push_back(n / 64);
  s.rack_costs.assign(16 * 16, 40.0);
  for (int r = 0; r < 65536; ++r) s.ranks.push_back({r / 64, r % 64});
  StructuredSpec with_nodes = s;
  const StructuredCosts racks(std::move(s));
  EXPECT_EQ(racks.size(), 65536);
  EXPECT_LT(racks.memory_bytes(), 1u << 20);
  with_nodes.node_costs.assign(1024 * 1024, 10.f);
  for (int n = 0; n < 1024; ++n) with_nodes.node_costs[n * 1024 + n] = 0;
  const StructuredCosts nodes(std::move(with_nodes));
  EXPECT_LT(nodes.memory_bytes(), 5u << 20);
  EXPECT_EQ(nodes.cost(OldRank(0), OldRank(65535)), 10);
}

}  // namespace
}  // namespace rankshape
