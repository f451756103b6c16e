#include "lib/measure/rescale.h"

#include <gtest/gtest.h>

#include <limits>
#include <stdexcept>
#include <utility>
#include <vector>

namespace rankshape {
namespace {

using Pairs = std::vector<std::pair<int, int>>;
constexpr double kNone = std::numeric_limits<double>::infinity();  // not measured in a pass

// `nodes` nodes of `per` consecutive ranks: 12 us inside a node, 30 us
// between nodes 0 and 1, 60 us between other nodes.
std::vector<double> machine(int nodes, int per, std::vector<int>* node_of) {
  const int p = nodes * per;
  std::vector<double> m(static_cast<std::size_t>(p) * p, 0);
  node_of->clear();
  for (int a = 0; a < p; ++a) {
    node_of->push_back(a / per);
    for (int b = 0; b < p; ++b) {
      const int na = a / per, nb = b / per;
      if (a != b)
        m[static_cast<std::size_t>(a) * p + b] = na == nb ? 12e-6 : na + nb == 1 ? 30e-6 : 60e-6;
    }
  }
  return m;
}

void set(std::vector<double>& m, int p, int a, int b, double v) {
  m[static_cast<std::size_t>(a) * p + b] = m[static_cast<std::size_t>(b) * p + a] = v;
}

double get(const std::vector<double>& m, int p, int a, int b) {
  return m[static_cast<std::size_t>(a) * p + b];
}

// One pass's matrix: the given pairs at the given times, the rest unmeasured.
std::vector<double> pass_of(int p, const std::vector<std::pair<std::pair<int, int>, double>>& t) {
  std::vector<double> m(static_cast<std::size_t>(p) * p, kNone);
  for (const auto& [ab, v] : t) set(m, p, ab.first, ab.second, v);
  return m;
}

// Two nodes of 4 ranks, pair (1, 2) read at `read` and measured again.
struct SlowPair {
  std::vector<int> node_of;
  std::vector<std::vector<double>> kept;  // one message size
  Pairs again = {{1, 2}}, refs;

  explicit SlowPair(double read) {
    std::vector<double> m = machine(2, 4, &node_of);
    set(m, 8, 1, 2, read);
    refs = reference_pairs(m, 8, node_of, again);
    kept = {m};
  }
  // Merges a pass that timed (1, 2) and the references (0, 1), (0, 2), (0, 3).
  int merge(double pair, double r01, double r02, double r03) {
    return merge_pass(kept,
                      {pass_of(8, {{{1, 2}, pair}, {{0, 1}, r01}, {{0, 2}, r02}, {{0, 3}, r03}})},
                      8, node_of, again, refs);
  }
  double at(int a, int b) const { return get(kept[0], 8, a, b); }
};

TEST(RescaleTest, HeaderExample) {
  SlowPair s(36e-6);  // measured after the host slowed 3x
  EXPECT_EQ(s.refs, (Pairs{{0, 1}, {0, 2}, {0, 3}}));
  EXPECT_EQ(s.merge(36e-6, 36e-6, 36e-6, 36e-6), 1);
  EXPECT_DOUBLE_EQ(s.at(1, 2), 12e-6);
  EXPECT_DOUBLE_EQ(s.at(2, 1), 12e-6);
  EXPECT_DOUBLE_EQ(s.at(0, 1), 12e-6);  // a reference keeps its least
}

TEST(RescaleTest, QuietHostKeepsADisturbedPairAsMeasured) {
  SlowPair s(80e-6);
  // The references take their kept times (or less): no slowdown, and the
  // pair, still slow on its own, keeps its least time, not a rescaled one.
  EXPECT_EQ(s.merge(40e-6, 12e-6, 11e-6, 12e-6), 0);
  EXPECT_DOUBLE_EQ(s.at(1, 2), 40e-6);
  EXPECT_DOUBLE_EQ(s.at(0, 2), 11e-6);
}

TEST(RescaleTest, MedianSlowdownIgnoresOneDisturbedReference) {
  SlowPair s(36e-6);
  // One reference descheduled as well (100x): the median slowdown is 3.
  EXPECT_EQ(s.merge(45e-6, 36e-6, 1.2e-3, 36e-6), 1);
  EXPECT_DOUBLE_EQ(s.at(1, 2), 15e-6);
}

TEST(RescaleTest, NeverBelowTheCheapestReference) {
  SlowPair s(36e-6);
  // The host sped up between the references and the pair: 13 us / 3 would
  // be 4.3 us, below every pair of the node; the pair keeps 12 us, the
  // references' least.
  s.merge(13e-6, 36e-6, 36e-6, 36e-6);
  EXPECT_DOUBLE_EQ(s.at(1, 2), 12e-6);
  // Measured faster than the references' least, the pair keeps its own time.
  s.merge(10e-6, 36e-6, 36e-6, 36e-6);
  EXPECT_DOUBLE_EQ(s.at(1, 2), 10e-6);
}

TEST(RescaleTest, ReferencesComeFromTheSameTwoNodes) {
  std::vector<int> node_of;
  std::vector<double> m = machine(3, 2, &node_of);  // nodes {0,1} {2,3} {4,5}
  set(m, 6, 1, 4, 180e-6);                          // nodes 0 and 2: 60 us, read 3x
  set(m, 6, 2, 3, 36e-6);                           // inside node 1
  const Pairs again = {{1, 4}, {2, 3}};
  const Pairs refs = reference_pairs(m, 6, node_of, again, 2);
  // Nodes 0-2: (0, 4), (0, 5), the cheapest two of the three left; node 1
  // has no other pair inside it and borrows the other nodes' insides.
  EXPECT_EQ(refs, (Pairs{{0, 1}, {0, 4}, {0, 5}, {4, 5}}));
  std::vector<std::vector<double>> kept = {m, m};  // two message sizes
  std::vector<std::vector<double>> pass = {pass_of(6, {{{1, 4}, 180e-6},
                                                       {{2, 3}, 36e-6},
                                                       {{0, 4}, 180e-6},
                                                       {{0, 5}, 180e-6},
                                                       {{0, 1}, 12e-6},
                                                       {{4, 5}, 12e-6}}),
                                           pass_of(6, {{{1, 4}, 120e-6},
                                                       {{2, 3}, 36e-6},
                                                       {{0, 4}, 60e-6},
                                                       {{0, 5}, 60e-6},
                                                       {{0, 1}, 12e-6},
                                                       {{4, 5}, 12e-6}})};
  EXPECT_EQ(merge_pass(kept, pass, 6, node_of, again, refs), 1);
  EXPECT_DOUBLE_EQ(get(kept[0], 6, 1, 4), 60e-6);   // slowed 3x at this size
  EXPECT_DOUBLE_EQ(get(kept[1], 6, 1, 4), 120e-6);  // not at this one
  EXPECT_DOUBLE_EQ(get(kept[0], 6, 2, 3), 36e-6);   // the insides are not slow: as measured
}

TEST(RescaleTest, ANodeMeasuredAgainWholeBorrowsOtherNodesInsides) {
  std::vector<int> node_of;
  std::vector<double> m = machine(3, 2, &node_of);  // nodes {0,1} {2,3} {4,5}
  set(m, 6, 0, 1, 36e-6);                           // node 0's only pair, read 3x
  set(m, 6, 4, 5, 11e-6);
  set(m, 6, 0, 2, 90e-6);  // nodes 0-1: no other pair to borrow from
  const Pairs again = {{0, 1}, {0, 2}, {0, 3}, {1, 2}, {1, 3}};
  const Pairs refs = reference_pairs(m, 6, node_of, again);
  EXPECT_EQ(refs, (Pairs{{2, 3}, {4, 5}}));
  std::vector<std::vector<double>> kept = {m};
  const std::vector<std::vector<double>> pass = {pass_of(6, {{{0, 1}, 36e-6},
                                                             {{0, 2}, 90e-6},
                                                             {{0, 3}, 90e-6},
                                                             {{1, 2}, 90e-6},
                                                             {{1, 3}, 90e-6},
                                                             {{2, 3}, 36e-6},
                                                             {{4, 5}, 33e-6}})};
  EXPECT_EQ(merge_pass(kept, pass, 6, node_of, again, refs), 1);
  EXPECT_DOUBLE_EQ(get(kept[0], 6, 0, 1), 12e-6);  // 36 / median(3, 3)
  EXPECT_DOUBLE_EQ(get(kept[0], 6, 0, 2), 90e-6);  // between nodes: as measured
}

TEST(RescaleTest, WithoutNodesOnlyTheLeastIsKept) {
  std::vector<int> node_of;
  std::vector<double> m = machine(2, 2, &node_of);
  set(m, 4, 0, 1, 36e-6);
  EXPECT_TRUE(reference_pairs(m, 4, {}, {{0, 1}}).empty());
  std::vector<std::vector<double>> kept = {m};
  EXPECT_EQ(merge_pass(kept, {pass_of(4, {{{0, 1}, 20e-6}})}, 4, {}, {{0, 1}}, {}), 0);
  EXPECT_DOUBLE_EQ(get(kept[0], 4, 0, 1), 20e-6);
}

TEST(RescaleTest, RefusesBadInput) {
  std::vector<int> node_of;
  std::vector<double> m = machine(2, 2, &node_of);
  EXPECT_THROW(reference_pairs(m, 5, node_of, {}), std::invalid_argument);
  EXPECT_THROW(reference_pairs(m, 4, {0, 0, 1}, {}), std::invalid_argument);
  EXPECT_THROW(reference_pairs(m, 4, node_of, {{1, 0}}), std::invalid_argument);
  EXPECT_THROW(reference_pairs(m, 4, node_of, {{0, 4}}), std::invalid_argument);
  EXPECT_THROW(reference_pairs(m, 4, node_of, {}, 0), std::invalid_argument);
  std::vector<std::vector<double>> kept = {m};
  EXPECT_THROW(merge_pass(kept, {}, 4, node_of, {}, {}), std::invalid_argument);
  EXPECT_THROW(merge_pass(kept, {m}, 4, {}, {}, {{0, 1}}), std::invalid_argument);
}

}  // namespace
}  // namespace rankshape
