#include "bench/phases.h"

#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>

namespace rankshape {
namespace {

TEST(SplitPhases, SlowRunsBetweenFastOnes) {
  // 20 fast samples, 3 slow, 10 fast, 1 slow, 6 fast: the shape of CI's
  // virtual machine, 0.06 against 0.32 us.
  std::vector<double> s;
  for (int i = 0; i < 20; ++i) s.push_back(0.06 + 0.001 * (i % 3));
  for (int i = 0; i < 3; ++i) s.push_back(0.32);
  for (int i = 0; i < 10; ++i) s.push_back(0.06);
  s.push_back(0.31);
  for (int i = 0; i < 6; ++i) s.push_back(0.07);
  PhaseSummary sum = split_phases(s, 2);
  EXPECT_DOUBLE_EQ(sum.fast_reference, 0.06);
  EXPECT_DOUBLE_EQ(sum.threshold, 0.12);
  EXPECT_DOUBLE_EQ(sum.slow_median, 0.32);
  EXPECT_NEAR(sum.fast_median, 0.06, 0.0011);
  ASSERT_EQ(sum.phases.size(), 5u);
  const bool slow[] = {false, true, false, true, false};
  const int first[] = {0, 20, 23, 33, 34};
  const int length[] = {20, 3, 10, 1, 6};
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(sum.phases[i].slow, slow[i]) << i;
    EXPECT_EQ(sum.phases[i].first, first[i]) << i;
    EXPECT_EQ(sum.phases[i].samples, length[i]) << i;
  }
}

TEST(SplitPhases, QuietMachineHasOneFastPhase) {
  std::vector<double> s = {0.05, 0.06, 0.07, 0.06, 0.09, 0.05};
  PhaseSummary sum = split_phases(s, 2);
  ASSERT_EQ(sum.phases.size(), 1u);
  EXPECT_FALSE(sum.phases[0].slow);
  EXPECT_EQ(sum.phases[0].samples, 6);
  EXPECT_EQ(sum.slow_median, 0);
}

TEST(SplitPhases, TheRatioDecidesWhatIsSlow) {
  std::vector<double> s = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2.5, 1};
  EXPECT_EQ(split_phases(s, 2).phases.size(), 3u);
  EXPECT_EQ(split_phases(s, 3).phases.size(), 1u);
}

TEST(SplitPhases, RejectsBadInput) {
  EXPECT_THROW(split_phases({}, 2), std::invalid_argument);
  EXPECT_THROW(split_phases({1, 2}, 1), std::invalid_argument);
  EXPECT_THROW(split_phases({1, 2}, NAN), std::invalid_argument);
  EXPECT_THROW(split_phases({1, 0}, 2), std::invalid_argument);
  EXPECT_THROW(split_phases({1, INFINITY}, 2), std::invalid_argument);
}

}  // namespace
}  // namespace rankshape
