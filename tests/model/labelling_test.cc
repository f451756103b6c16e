#include "lib/model/labelling.h"

#include <gtest/gtest.h>

namespace rankshape {
namespace {

std::vector<OldRank> ranks(std::initializer_list<int> values) {
  std::vector<OldRank> out;
  for (int v : values) out.emplace_back(v);
  return out;
}

TEST(LabellingTest, BothDirectionsAgree) {
  const Labelling l(ranks({2, 0, 3, 1}));
  EXPECT_EQ(l.old_of(NewRank(0)), OldRank(2));
  EXPECT_EQ(l.new_of(OldRank(2)), NewRank(0));
  EXPECT_EQ(l.new_of(OldRank(1)), NewRank(3));
  const Labelling inv = l.inverse();
  EXPECT_EQ(inv.old_of(NewRank(2)), OldRank(0));
  EXPECT_EQ(inv.inverse(), l);
}

TEST(LabellingTest, RejectsNonPermutations) {
  EXPECT_THROW(Labelling(ranks({})), std::invalid_argument);
  EXPECT_THROW(Labelling(ranks({0, 0})), std::invalid_argument);
  EXPECT_THROW(Labelling(ranks({0, 2})), std::invalid_argument);
  EXPECT_THROW(Labelling(ranks({-1, 0})), std::invalid_argument);
  try {
    Labelling(ranks({1, 0, 1}));
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(),
                 "old rank 1 is placed twice (new ranks 0 and 2): a labelling must be a "
                 "permutation");
  }
}

TEST(LabellingTest, SwapAndCycleKeepInverseConsistent) {
  Labelling l = Labelling::identity(5);
  l.swap_positions(NewRank(1), NewRank(3));
  EXPECT_EQ(l.old_ranks(), ranks({0, 3, 2, 1, 4}));
  // The old rank at 0 moves to 2, the one at 2 to 4, the one at 4 to 0.
  l.cycle_positions(NewRank(0), NewRank(2), NewRank(4));
  EXPECT_EQ(l.old_ranks(), ranks({4, 3, 0, 1, 2}));
  for (int o = 0; o < 5; ++o) EXPECT_EQ(l.old_of(l.new_of(OldRank(o))), OldRank(o));
}

}  // namespace
}  // namespace rankshape
