// The collectives' stated algorithms (lib/profile/algorithms.h): who sends
// to whom, checked as a whole over every rank for n = 1 to 17.
#include "lib/profile/algorithms.h"

#include <gtest/gtest.h>

#include <map>
#include <utility>
#include <vector>

namespace rankshape::profile {
namespace {

// Messages from -> to over all ranks of the collective; bytes per message
// checked against `bytes`.
template <class F>
std::map<std::pair<int, int>, int> messages(int n, std::int64_t bytes, F per_rank) {
  std::map<std::pair<int, int>, int> out;
  for (int r = 0; r < n; ++r) {
    for (const Send& s : per_rank(r)) {
      EXPECT_GE(s.to, 0);
      EXPECT_LT(s.to, n);
      EXPECT_NE(s.to, r);
      EXPECT_EQ(s.bytes, bytes * s.messages);
      out[{r, s.to}] += static_cast<int>(s.messages);
    }
  }
  return out;
}

int total(const std::map<std::pair<int, int>, int>& m) {
  int t = 0;
  for (const auto& [pair, count] : m) t += count;
  return t;
}

TEST(ProfileAlgorithmsTest, HeaderExample) {
  EXPECT_EQ(sends_of(bcast, 4, 0, 0, 100).size(), 2u);
  EXPECT_EQ(sends_of(bcast, 4, 0, 0, 100)[0].to, 1);
  EXPECT_EQ(sends_of(bcast, 4, 0, 0, 100)[1].to, 2);
  ASSERT_EQ(sends_of(bcast, 4, 2, 0, 100).size(), 1u);
  EXPECT_EQ(sends_of(bcast, 4, 2, 0, 100)[0].to, 3);
  EXPECT_TRUE(sends_of(bcast, 4, 1, 0, 100).empty());
}

TEST(ProfileAlgorithmsTest, TreesReachEveryRankOnce) {
  for (int n = 1; n <= 17; ++n) {
    for (int root = 0; root < n; ++root) {
      const auto down = messages(n, 8, [&](int r) { return sends_of(bcast, n, r, root, 8); });
      const auto up = messages(n, 8, [&](int r) { return sends_of(reduce, n, r, root, 8); });
      EXPECT_EQ(total(down), n - 1) << n;
      EXPECT_EQ(total(up), n - 1) << n;
      std::vector<int> received(static_cast<std::size_t>(n), 0);
      for (const auto& [pair, count] : down)
        received[static_cast<std::size_t>(pair.second)] += count;
      for (int r = 0; r < n; ++r)
        EXPECT_EQ(received[static_cast<std::size_t>(r)], r == root ? 0 : 1);
      // The reduction tree is the broadcast tree reversed.
      for (const auto& [pair, count] : up) EXPECT_EQ(down.count({pair.second, pair.first}), 1u);
    }
  }
}

TEST(ProfileAlgorithmsTest, RecursiveDoublingPairsUp) {
  // n = 3 (as Open MPI's monitoring counted its allreduce): 0 -> 1, 1 <-> 2, 1 -> 0.
  EXPECT_EQ(
      messages(3, 4, [](int r) { return sends_of(allreduce, 3, r, 4); }),
      (std::map<std::pair<int, int>, int>{{{0, 1}, 1}, {{1, 0}, 1}, {{1, 2}, 1}, {{2, 1}, 1}}));
  for (int n = 1; n <= 17; ++n) {
    int pof2 = 1, steps = 0;
    while (pof2 * 2 <= n) {
      pof2 *= 2;
      ++steps;
    }
    const auto m = messages(n, 4, [&](int r) { return sends_of(allreduce, n, r, 4); });
    EXPECT_EQ(total(m), pof2 * steps + 2 * (n - pof2)) << n;
    for (const auto& [pair, count] : m) {
      // Every exchange is answered: partners send to each other.
      EXPECT_EQ(m.count({pair.second, pair.first}), 1u) << n;
    }
  }
}

TEST(ProfileAlgorithmsTest, LinearRingPairwiseAndDissemination) {
  for (int n = 1; n <= 17; ++n) {
    EXPECT_EQ(total(messages(n, 3, [&](int r) { return sends_of(gather, n, r, n / 2, 3); })),
              n - 1);
    EXPECT_EQ(total(messages(n, 3, [&](int r) { return sends_of(scatter, n, r, n / 2, 3); })),
              n - 1);
    EXPECT_EQ(total(messages(n, 5, [&](int r) { return sends_of(allgather, n, r, 5); })),
              n * (n - 1));
    EXPECT_EQ(total(messages(n, 2, [&](int r) { return sends_of(pairwise, n, r, 2); })),
              n * (n - 1));
    int rounds = 0;
    for (int step = 1; step < n; step *= 2) ++rounds;
    EXPECT_EQ(total(messages(n, 0, [&](int r) { return sends_of(barrier, n, r); })), n * rounds);
  }
  const Sends ring = sends_of(allgather, 4, 3, 5);
  ASSERT_EQ(ring.size(), 1u);
  EXPECT_EQ(ring[0].to, 0);
  EXPECT_EQ(ring[0].bytes, 15);
  EXPECT_EQ(ring[0].messages, 3);
}

}  // namespace
}  // namespace rankshape::profile
