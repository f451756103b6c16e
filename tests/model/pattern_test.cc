#include "lib/model/pattern.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <stdexcept>
#include <string>

namespace rankshape {
namespace {

TEST(PatternTest, ParsesAndNamesEveryOption) {
  const std::pair<const char*, const char*> cases[] = {
      {"fibres", "fibres"},
      {"stencil", "stencil"},
      {"stencil:periodic", "stencil:periodic"},
      {"stencil:periodic=1x0X1", "stencil:periodic=1x0x1"},
      {"stencil:points=9", "stencil:points=9"},
      {"stencil:diagonals", "stencil:diagonals"},
      {"stencil:weights=4x1", "stencil:weights=4x1"},
      {"stencil:weights=0.5x2.25", "stencil:weights=0.5x2.25"},
      {"stencil:diagonal-weight=0.25,diagonals,periodic",
       "stencil:periodic,diagonals,diagonal-weight=0.25"},
      {"stencil:diagonals,diagonal-weight=1", "stencil:diagonals"},
      {"stencil:weights=3x1x1,points=7,periodic=0x0x1",
       "stencil:periodic=0x0x1,points=7,weights=3x1x1"},
  };
  for (const auto& [text, name] : cases) {
    const Pattern p = Pattern::parse(text);
    EXPECT_EQ(p.name(), name) << text;
    EXPECT_EQ(Pattern::parse(p.name()), p) << text;
  }
  EXPECT_FALSE(Pattern::parse("fibres").is_stencil());
  EXPECT_TRUE(Pattern::parse("stencil").is_stencil());
  EXPECT_EQ(Pattern{}.name(), "fibres");
}

TEST(PatternTest, RefusesBadTextWithTheReason) {
  const std::pair<const char*, const char*> cases[] = {
      {"", "unknown pattern"},
      {"fibre", "unknown pattern"},
      {"stencils", "unknown pattern"},
      {"stencil:", "empty option"},
      {"stencil:periodic,", "empty option"},
      {"stencil:bogus", "unknown option 'bogus'"},
      {"stencil:periodic=2", "periods are 0 or 1"},
      {"stencil:periodic=1xx0", "empty entry"},
      {"stencil:periodic,periodic=1x1", "given twice"},
      {"stencil:weights=0", "must be a finite number > 0"},
      {"stencil:weights=-1x1", "must be a finite number > 0"},
      {"stencil:weights=nan", "must be a finite number > 0"},
      {"stencil:weights=inf", "must be a finite number > 0"},
      {"stencil:weights=1x2y", "not a number"},
      {"stencil:weights", "needs a value"},
      {"stencil:points=9,diagonals", "points or diagonals once"},
      {"stencil:points=2", "whole number >= 3"},
      {"stencil:points=9.5", "whole number >= 3"},
      {"stencil:diagonals=1", "takes no value"},
      {"stencil:diagonal-weight=2", "needs diagonals"},
      {"stencil:diagonals,diagonal-weight=0", "must be a finite number > 0"},
  };
  for (const auto& [text, why] : cases) {
    try {
      Pattern::parse(text);
      ADD_FAILURE() << "accepted '" << text << "'";
    } catch (const std::invalid_argument& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find(why), std::string::npos) << text << ": " << what;
      EXPECT_NE(what.find("expected fibres, graph or stencil"), std::string::npos) << what;
    }
  }
}

std::set<int> neighbours(const Stencil& s, int x) {
  std::set<int> out;
  for (int o = 0; o < s.offsets(); ++o) {
    const int y = s.neighbour(x, o);
    if (y >= 0) out.insert(y);
  }
  return out;
}

TEST(StencilTest, WorkedExampleFromTheHeader) {
  const Grid g({3, 3});
  const Stencil open(Pattern::parse("stencil").stencil, g);
  EXPECT_EQ(open.offsets(), 4);
  EXPECT_EQ(neighbours(open, 4), (std::set<int>{1, 3, 5, 7}));
  EXPECT_EQ(neighbours(open, 0), (std::set<int>{1, 3}));
  const Stencil periodic(Pattern::parse("stencil:periodic").stencil, g);
  EXPECT_EQ(neighbours(periodic, 0), (std::set<int>{1, 2, 3, 6}));
  const Stencil nine(Pattern::parse("stencil:points=9").stencil, g);
  EXPECT_EQ(nine.offsets(), 8);
  EXPECT_EQ(neighbours(nine, 4), (std::set<int>{0, 1, 2, 3, 5, 6, 7, 8}));
  EXPECT_EQ(neighbours(nine, 0), (std::set<int>{1, 3, 4}));
}

TEST(StencilTest, OffsetsPairUpWithTheirOpposites) {
  for (const char* text : {"stencil", "stencil:diagonals", "stencil:periodic,weights=2x1x0.5"}) {
    const Stencil s(Pattern::parse(text).stencil, Grid({3, 4, 5}));
    EXPECT_EQ(s.offsets(), std::string(text).find("diagonals") != std::string::npos ? 26 : 6);
    for (int o = 0; o < s.offsets(); ++o) {
      const int back = s.opposite(o);
      EXPECT_NE(back, o);
      EXPECT_EQ(s.opposite(back), o);
      EXPECT_EQ(s.weight(back), s.weight(o));
      for (int k = 0; k < 3; ++k) EXPECT_EQ(s.delta(back)[k], -s.delta(o)[k]);
      // y = neighbour(x, o) implies x = neighbour(y, opposite(o)).
      for (int x = 0; x < 60; ++x) {
        const int y = s.neighbour(x, o);
        if (y >= 0) {
          EXPECT_EQ(s.neighbour(y, back), x) << text << " x " << x << " o " << o;
        }
      }
    }
  }
}

TEST(StencilTest, SmallPeriodicDimensionsRepeatNeighbours) {
  // Size 2: left and right are the same rank; size 1: a rank is its own.
  const Stencil s(Pattern::parse("stencil:periodic").stencil, Grid({2, 1}));
  EXPECT_EQ(s.neighbour(0, 0), 1);  // -1 along dimension 0
  EXPECT_EQ(s.neighbour(0, 1), 1);  // +1
  EXPECT_EQ(s.neighbour(0, 2), 0);  // itself along dimension 1
  const Stencil open(Pattern::parse("stencil").stencil, Grid({2, 1}));
  EXPECT_EQ(open.neighbour(0, 0), -1);
  EXPECT_EQ(open.neighbour(0, 1), 1);
  EXPECT_EQ(open.neighbour(0, 2), -1);
}

TEST(StencilTest, WeightsAndUnits) {
  const Stencil s(Pattern::parse("stencil:weights=2x0.5,diagonals,diagonal-weight=0.25").stencil,
                  Grid({4, 4}));
  double diagonal = 0, axis = 0;
  for (int o = 0; o < s.offsets(); ++o) {
    EXPECT_NEAR(static_cast<double>(s.units(o)) * s.unit_weight(), s.weight(o), 1e-12);
    (s.diagonal(o) ? diagonal : axis) += s.weight(o);
  }
  EXPECT_EQ(diagonal, 4 * 0.25);
  EXPECT_EQ(axis, 2 * 2 + 2 * 0.5);
}

TEST(StencilTest, RefusesSpecsThatDoNotFitTheGrid) {
  const Grid g3({2, 2, 2});
  const std::pair<const char*, const char*> cases[] = {
      {"stencil:periodic=1x0", "periods name 2 dimensions"},
      {"stencil:weights=1x1", "weights name 2 dimensions"},
      {"stencil:points=9", "has 7 points"},
      {"stencil:weights=1x1x10000000", "differ by more than"},
  };
  for (const auto& [text, why] : cases) {
    try {
      Stencil(Pattern::parse(text).stencil, g3);
      ADD_FAILURE() << "accepted " << text;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
    }
  }
  EXPECT_NO_THROW(Stencil(Pattern::parse("stencil:points=27").stencil, g3));
  EXPECT_THROW(Stencil(Grid({2, 2}), {false, false}, {{1, 0}}, {1.0}), std::invalid_argument);
  EXPECT_THROW(Stencil(Grid({2, 2}), {false, false}, {{1, 0}, {-1, 0}}, {1.0, 2.0}),
               std::invalid_argument);
  EXPECT_THROW(Stencil(Grid({2, 2}), {false, false}, {{0, 0}}, {1.0}), std::invalid_argument);
  EXPECT_NO_THROW(Stencil(Grid({2, 2}), {false, true}, {{1, 1}, {-1, -1}}, {1.0, 1.0}));
}

TEST(PatternTest, ProgramPeriodsFillOnlyWhatTheTextLeftOpen) {
  const std::vector<bool> program = {true, false};
  EXPECT_EQ(Pattern::parse("stencil").with_default_periods(program).name(), "stencil:periodic=1x0");
  EXPECT_EQ(Pattern::parse("stencil:periodic=0x1").with_default_periods(program).name(),
            "stencil:periodic=0x1");
  EXPECT_EQ(Pattern::parse("fibres").with_default_periods(program).name(), "fibres");
}

}  // namespace
}  // namespace rankshape
