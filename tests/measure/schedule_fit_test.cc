#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <stdexcept>

#include "lib/measure/fit.h"
#include "lib/measure/schedule.h"
#include "lib/util/random.h"

namespace rankshape {
namespace {

// Every round a perfect pairing, every pair exactly once per sweep, for
// every p from 1 to 69 and many alpha, beta (the digest's brute-force check).
TEST(ScheduleTest, EveryRoundPairsAndEveryPairMeetsOnce) {
  for (int p = 1; p <= 69; ++p) {
    const int q = next_power_of_two(p);
    for (int trial = 0; trial < 6; ++trial) {
      const PartnerSchedule s =
          trial == 0 ? PartnerSchedule(p, 0, 0) : PartnerSchedule::random(p, 1000u * p + trial);
      std::set<std::pair<int, int>> met;
      for (int round = 0; round < s.rounds(); ++round) {
        for (int r = 0; r < p; ++r) {
          const int x = s.partner(r, round);
          ASSERT_GE(x, 0);
          ASSERT_LT(x, p);
          ASSERT_EQ(s.partner(x, round), r) << "p=" << p << " round " << round;
          if (x > r) {
            ASSERT_TRUE(met.insert({r, x}).second) << "pair met twice, p=" << p;
          }
        }
      }
      EXPECT_EQ(met.size(), static_cast<std::size_t>(p) * (p - 1) / 2) << "p=" << p;
      EXPECT_EQ(s.rounds(), q);
    }
  }
}

// Capped rounds: every pair exactly once, each rank at most once per
// round, no host over its cap (a cap below 2 counts as 2).
TEST(CappedRoundsTest, EveryPairOnceWithinTheCaps) {
  SplitMix64 rng(7);
  for (int p = 2; p <= 40; p += 3) {
    for (int hosts = 1; hosts <= 4; ++hosts) {
      std::vector<int> host_of(static_cast<std::size_t>(p)), cap(static_cast<std::size_t>(hosts));
      for (int r = 0; r < p; ++r) host_of[r] = r % hosts;
      for (int& c : cap) c = static_cast<int>(rng.below(5));  // 0..4
      const auto rounds = capped_rounds(all_pairs(p), host_of, cap, 1000u + p);
      std::set<std::pair<int, int>> met;
      for (const auto& round : rounds) {
        ASSERT_FALSE(round.empty());
        std::set<int> busy;
        std::vector<int> active(static_cast<std::size_t>(hosts), 0);
        for (const auto& [a, b] : round) {
          ASSERT_LT(a, b);
          ASSERT_TRUE(busy.insert(a).second && busy.insert(b).second) << "a rank twice in a round";
          ++active[host_of[a]];
          ++active[host_of[b]];
          ASSERT_TRUE(met.insert({a, b}).second) << "pair twice";
        }
        for (int h = 0; h < hosts; ++h) EXPECT_LE(active[h], std::max(2, cap[h]));
      }
      EXPECT_EQ(met.size(), static_cast<std::size_t>(p) * (p - 1) / 2);
    }
  }
}

TEST(CappedRoundsTest, OneHostOfEightWithTwoCpusTakesOnePairPerRound) {
  const auto rounds = capped_rounds(all_pairs(8), std::vector<int>(8, 0), {2}, 1);
  EXPECT_EQ(rounds.size(), 28u);
  // Without a cap the greedy rounds stay near a perfect pairing's 7.
  const auto open = capped_rounds(all_pairs(8), std::vector<int>(8, 0), {8}, 1);
  EXPECT_LE(open.size(), 10u);
  // Two hosts of 4 ranks and 2 CPUs each: two measuring ranks per host.
  const auto two = capped_rounds(all_pairs(8), {0, 0, 0, 0, 1, 1, 1, 1}, {2, 2}, 1);
  for (const auto& round : two) EXPECT_LE(round.size(), 2u);
}

TEST(CappedRoundsTest, BadPairsAreRefused) {
  EXPECT_THROW(capped_rounds({{0, 0}}, {0, 0}, {2}, 1), std::invalid_argument);
  EXPECT_THROW(capped_rounds({{0, 2}}, {0, 0}, {2}, 1), std::invalid_argument);
  EXPECT_THROW(capped_rounds({{0, 1}}, {0, 1}, {2}, 1), std::invalid_argument);  // host 1 uncapped
  EXPECT_TRUE(capped_rounds({}, {0, 0}, {2}, 1).empty());
}

TEST(ScheduleTest, HeaderExample) {
  const PartnerSchedule s(3, 0, 0);
  EXPECT_EQ(s.partner(0, 1), 1);
  EXPECT_EQ(s.partner(2, 1), 2);
  EXPECT_EQ(s.partner(0, 2), 2);
  EXPECT_EQ(s.partner(1, 3), 2);
  EXPECT_EQ(s.partner(0, 3), 0);
  EXPECT_THROW(PartnerSchedule(3, 4, 0), std::invalid_argument);
  EXPECT_THROW(PartnerSchedule(0, 0, 0), std::invalid_argument);
  // Same seed, same schedule on every rank.
  const PartnerSchedule a = PartnerSchedule::random(50, 9), b = PartnerSchedule::random(50, 9);
  EXPECT_EQ(a.alpha, b.alpha);
  EXPECT_EQ(a.beta, b.beta);
}

TEST(FitTest, RecoversAKnownLine) {
  // t = 2 us + 0.1 ns/byte, sizes 8 B .. 1 MiB.
  std::vector<double> h, t;
  for (double bytes = 8; bytes <= 1 << 20; bytes *= 4) {
    h.push_back(bytes);
    t.push_back(2e-6 + 1e-10 * bytes);
  }
  const LineFit f = fit_line(h, t);
  EXPECT_NEAR(f.latency, 2e-6, 1e-12);
  EXPECT_NEAR(f.inverse_bandwidth, 1e-10, 1e-16);
  EXPECT_NEAR(f.r_squared, 1, 1e-12);
  EXPECT_GT(f.latency, 0);  // the printed thesis formulas go negative here
}

TEST(FitTest, NoiseAndStragglers) {
  SplitMix64 rng(3);
  std::vector<double> h, t;
  for (int i = 0; i < 200; ++i) {
    const double bytes = 1024.0 * (1 + i % 10);
    h.push_back(bytes);
    t.push_back((5e-6 + 2e-9 * bytes) * (1 + 0.02 * (rng.uniform() - 0.5)));
  }
  const LineFit f = fit_line(h, t);
  EXPECT_NEAR(f.latency, 5e-6, 5e-7);
  EXPECT_NEAR(f.inverse_bandwidth, 2e-9, 1e-10);
  EXPECT_GT(f.r_squared, 0.99);
  EXPECT_THROW(fit_line({1, 1}, {2, 3}), std::invalid_argument);
  EXPECT_THROW(fit_line({1}, {2, 3}), std::invalid_argument);

  EXPECT_EQ(median({3, 1, 2}), 2);
  EXPECT_EQ(median({4, 1, 2, 3}), 2.5);
  EXPECT_THROW(median({}), std::invalid_argument);
  // A core that was busy for one repetition does not move the result.
  const std::vector<double> kept = without_outliers({1.0, 1.1, 0.9, 1.05, 50.0});
  EXPECT_EQ(kept.size(), 4u);
  EXPECT_EQ(without_outliers({2, 2, 2, 9}).size(), 3u);
}

}  // namespace
}  // namespace rankshape
