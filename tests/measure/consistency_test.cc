#include "lib/measure/consistency.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <stdexcept>
#include <utility>
#include <vector>

namespace rankshape {
namespace {

// p ranks in nodes of `per` (consecutive), racks of `per_rack` nodes:
// 15 us inside a node, 50 us across nodes, 200 us across racks.
std::vector<double> hierarchy(int p, int per, int per_rack, std::vector<int>* node_of) {
  std::vector<double> m(static_cast<std::size_t>(p) * p, 0);
  node_of->clear();
  for (int a = 0; a < p; ++a) {
    node_of->push_back(a / per);
    for (int b = 0; b < p; ++b) {
      if (a == b) continue;
      const double c = a / per == b / per                             ? 15e-6
                       : a / (per * per_rack) == b / (per * per_rack) ? 50e-6
                                                                      : 200e-6;
      m[static_cast<std::size_t>(a) * p + b] = c;
    }
  }
  return m;
}

void set(std::vector<double>& m, int p, int a, int b, double v) {
  m[static_cast<std::size_t>(a) * p + b] = m[static_cast<std::size_t>(b) * p + a] = v;
}

TEST(ConsistencyTest, HeaderExample) {
  std::vector<int> node_of;
  std::vector<double> m = hierarchy(6, 3, 2, &node_of);
  set(m, 6, 0, 1, 4e-3);
  const ConsistencyCheck c = check_consistency(m, 6, node_of);
  ASSERT_EQ(c.suspects, (std::vector<std::pair<int, int>>{{0, 1}}));
  EXPECT_EQ(c.triangle, 1);
  EXPECT_EQ(c.node_order, 1);
  EXPECT_FALSE(c.inverted);
  EXPECT_DOUBLE_EQ(c.inside_median, 15e-6);
  EXPECT_DOUBLE_EQ(c.across_median, 50e-6);
}

TEST(ConsistencyTest, ACleanHierarchyHasNoSuspects) {
  std::vector<int> node_of;
  for (int p : {1, 2, 3, 8, 33, 200}) {
    const std::vector<double> m = hierarchy(p, 4, 3, &node_of);
    const ConsistencyCheck c = check_consistency(m, p, node_of);
    EXPECT_TRUE(c.suspects.empty()) << "p=" << p;
    EXPECT_FALSE(c.inverted);
  }
}

// A 1-D ring of 12 nodes, 10 us plus 2 us per hop: a triangle is off by
// less than 3x, and nothing is suspect.
TEST(ConsistencyTest, ATorusIsNotSuspect) {
  const int p = 12;
  std::vector<double> m(p * p, 0);
  for (int a = 0; a < p; ++a) {
    for (int b = 0; b < p; ++b) {
      const int hops = std::min(std::abs(a - b), p - std::abs(a - b));
      if (a != b) m[a * p + b] = 10e-6 + 2e-6 * hops;
    }
  }
  EXPECT_TRUE(check_consistency(m, p, {}).suspects.empty());
}

// Descheduled pairs, as on an oversubscribed node: a few ms on some pairs
// inside nodes and across, among 16 ranks on 4 nodes; every one is found,
// and nothing else.
TEST(ConsistencyTest, DescheduledPairsAreFound) {
  std::vector<int> node_of;
  std::vector<double> m = hierarchy(16, 4, 4, &node_of);
  const std::vector<std::pair<int, int>> hit = {{0, 1}, {2, 9}, {5, 6}, {7, 15}, {12, 13}};
  for (const auto& [a, b] : hit) set(m, 16, a, b, 3e-3 + 1e-3 * a);
  EXPECT_EQ(check_consistency(m, 16, node_of).suspects, hit);
  // Without the nodes, the triangle check alone finds them too.
  EXPECT_EQ(check_consistency(m, 16, {}).suspects, hit);
}

// Inside pairs dearer than the typical across one are suspect; a small
// overlap is not, nor is a cheap pair across (measuring it again could not
// lower it), but both are listed as overlap, to be measured again.
TEST(ConsistencyTest, NodeOrder) {
  std::vector<int> node_of;
  std::vector<double> m = hierarchy(8, 4, 2, &node_of);
  set(m, 8, 1, 2, 40e-6);  // inside, dearer than most inside but below 50 us across
  set(m, 8, 0, 3, 60e-6);  // inside, dearer than the 50 us across
  const ConsistencyCheck c = check_consistency(m, 8, node_of, 4);
  EXPECT_EQ(c.suspects, (std::vector<std::pair<int, int>>{{0, 3}}));
  EXPECT_EQ(c.node_order, 1);
  EXPECT_EQ(c.overlap, (std::vector<std::pair<int, int>>{{0, 3}}));
  set(m, 8, 0, 4, 10e-6);  // across, cheaper than every pair inside
  const ConsistencyCheck cheap = check_consistency(m, 8, node_of, 4);
  EXPECT_EQ(cheap.node_order, 1);  // (0, 3) still, not (0, 4)
  // Every inside pair is now dearer than the cheapest across (10 us).
  EXPECT_EQ(cheap.overlap.size(), 12u);
}

TEST(ConsistencyTest, InvertedNodesAreReported) {
  std::vector<int> node_of;
  std::vector<double> m = hierarchy(8, 4, 2, &node_of);
  for (int a = 0; a < 8; ++a) {
    for (int b = 0; b < 8; ++b) {
      if (a != b) m[a * 8 + b] = node_of[a] == node_of[b] ? 80e-6 : 50e-6;
    }
  }
  const ConsistencyCheck c = check_consistency(m, 8, node_of);
  EXPECT_TRUE(c.inverted);
  EXPECT_TRUE(c.suspects.empty());
}

TEST(ConsistencyTest, BadInputIsRefused) {
  EXPECT_THROW(check_consistency(std::vector<double>(5), 2, {}), std::invalid_argument);
  EXPECT_THROW(check_consistency(std::vector<double>(4), 2, {0}), std::invalid_argument);
  EXPECT_THROW(check_consistency(std::vector<double>(4), 2, {}, 0.5), std::invalid_argument);
}

}  // namespace
}  // namespace rankshape
