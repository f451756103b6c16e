#include "lib/model/grid.h"

#include <gtest/gtest.h>

#include <numeric>
#include <set>

namespace rankshape {
namespace {

TEST(GridTest, RowMajorLastDimensionFastest) {
  const Grid g({2, 3, 4});
  EXPECT_EQ(g.size(), 24);
  EXPECT_EQ(g.stride(0), 12);
  EXPECT_EQ(g.stride(1), 4);
  EXPECT_EQ(g.stride(2), 1);
  EXPECT_EQ(g.coords(NewRank(0)), (std::vector<int>{0, 0, 0}));
  EXPECT_EQ(g.coords(NewRank(1)), (std::vector<int>{0, 0, 1}));
  EXPECT_EQ(g.coords(NewRank(23)), (std::vector<int>{1, 2, 3}));
  for (int p = 0; p < g.size(); ++p) EXPECT_EQ(g.position(g.coords(NewRank(p))), NewRank(p));
}

TEST(GridTest, FibresOfTheHeaderExample) {
  const Grid g({2, 3});
  // Dimension 0: {0,3} {1,4} {2,5}; dimension 1: {0,1,2} {3,4,5}.
  EXPECT_EQ(g.fibre_count(0), 3);
  EXPECT_EQ(g.fibre_count(1), 2);
  EXPECT_EQ(g.fibre_member(0, 1, 0), NewRank(1));
  EXPECT_EQ(g.fibre_member(0, 1, 1), NewRank(4));
  EXPECT_EQ(g.fibre_member(1, 1, 2), NewRank(5));
  EXPECT_EQ(g.fibre_of(NewRank(4), 0), 1);
  EXPECT_EQ(g.fibre_of(NewRank(4), 1), 1);
}

// Every position lies in exactly one fibre per dimension; members of a
// fibre agree on every coordinate but k and take each value of k once.
TEST(GridTest, FibresPartitionThePositions) {
  for (const auto& dims :
       std::vector<std::vector<int>>{{7}, {1, 5}, {3, 1, 2}, {4, 4, 4}, {2, 3, 5, 2}}) {
    const Grid g(dims);
    for (int k = 0; k < g.ndims(); ++k) {
      std::vector<int> seen(g.size(), 0);
      for (int f = 0; f < g.fibre_count(k); ++f) {
        const std::vector<int> base = g.coords(g.fibre_member(k, f, 0));
        for (int t = 0; t < g.dim(k); ++t) {
          const NewRank pos = g.fibre_member(k, f, t);
          ++seen[pos.value()];
          EXPECT_EQ(g.fibre_of(pos, k), f);
          std::vector<int> c = g.coords(pos);
          EXPECT_EQ(c[k], t);
          c[k] = base[k];
          EXPECT_EQ(c, base);
        }
      }
      for (int s : seen) EXPECT_EQ(s, 1) << g.to_string() << " dimension " << k;
    }
  }
}

TEST(GridTest, ParsesAndRejects) {
  EXPECT_EQ(Grid::parse("16x16x16").dims(), (std::vector<int>{16, 16, 16}));
  EXPECT_EQ(Grid::parse("4X2").dims(), (std::vector<int>{4, 2}));
  EXPECT_EQ(Grid::parse("4,2").dims(), (std::vector<int>{4, 2}));
  EXPECT_EQ(Grid::parse("64").dims(), (std::vector<int>{64}));
  EXPECT_EQ(Grid::parse("2x3").to_string(), "2x3");
  for (const char* bad :
       {"", "x", "4x", "x4", "4xx4", "4x0", "-2x4", "4xa", "4.5x2", "65536x65536"}) {
    EXPECT_THROW(Grid::parse(bad), std::invalid_argument) << bad;
  }
  try {
    Grid::parse("4x0");
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("dimension 1 is 0"), std::string::npos) << e.what();
  }
}

TEST(ChooseDimsTest, BalancedLikeMpiDimsCreate) {
  EXPECT_EQ(choose_dims(64, 3), (std::vector<int>{4, 4, 4}));
  EXPECT_EQ(choose_dims(24, 2), (std::vector<int>{6, 4}));
  EXPECT_EQ(choose_dims(7, 2), (std::vector<int>{7, 1}));
  EXPECT_EQ(choose_dims(1, 3), (std::vector<int>{1, 1, 1}));
  EXPECT_EQ(choose_dims(12, 1), (std::vector<int>{12}));
  EXPECT_THROW(choose_dims(0, 2), std::invalid_argument);
  EXPECT_THROW(choose_dims(4, 0), std::invalid_argument);
  EXPECT_THROW(choose_dims(4, kMaxChooseDims + 1), std::invalid_argument);
  // Large and prime p, and many dimensions, finish and stay exact.
  EXPECT_EQ(choose_dims(2147483647, 2), (std::vector<int>{2147483647, 1}));
  EXPECT_EQ(choose_dims(1 << 20, 8), (std::vector<int>{8, 8, 8, 8, 4, 4, 4, 4}));
  // Three dimensions inside nodes of 64 would take 16384x4x4x4: too
  // elongated; the balanced shape stays.
  EXPECT_EQ(choose_dims(1 << 20, 4, 64), (std::vector<int>{32, 32, 32, 32}));
  // 4096 ranks on nodes of 64: two dimensions inside a node would need the
  // first at 4096/64 = 64 > 2 x 16, so only one fits and balance decides.
  EXPECT_EQ(choose_dims(4096, 3, 64), (std::vector<int>{16, 16, 16}));
}

TEST(ChooseDimsTest, PrefersFibresInsideNodes) {
  // 64 ranks on nodes of 8: 4x4x4 keeps only the last dimension in a node;
  // 8x4x2 keeps the last two (spans 2 and 8 both divide 8).
  EXPECT_EQ(choose_dims(64, 3, 8), (std::vector<int>{8, 4, 2}));
  // 2D, nodes of 4: 4x4 has its rows (span 4) inside nodes.
  EXPECT_EQ(choose_dims(16, 2, 4), (std::vector<int>{4, 4}));
  // Nodes of 6 with 36 ranks: 6x6 puts each row in a node.
  EXPECT_EQ(choose_dims(36, 2, 6), (std::vector<int>{6, 6}));
  // Always a factorisation of p.
  for (int p = 1; p <= 60; ++p) {
    for (int d = 1; d <= 3; ++d) {
      const auto dims = choose_dims(p, d, 4);
      EXPECT_EQ(std::accumulate(dims.begin(), dims.end(), 1, std::multiplies<>()), p);
    }
  }
}

}  // namespace
}  // namespace rankshape
