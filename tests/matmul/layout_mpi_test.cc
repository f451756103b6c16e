// The distribution helpers at 1, 2, 3, 4, 6 and 8 ranks, on every process
// grid of each job size (block-cyclic: the same grid and its transpose): scatter then gather is the
// identity; block -> block-cyclic puts every element where ScaLAPACK's index formulas say (computed
// here independently) and the way back is the identity; bad arguments throw on every rank.
#include <gtest/gtest.h>
#include <mpi.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "lib/matmul/layout.h"
#include "tests/testing/world.h"

namespace rankshape::matmul {
namespace {

using ::rankshape::testing::world_rank;
using ::rankshape::testing::world_size;

struct Shape {
  int prow, pcol;
};
std::vector<Shape> grids(int p) {
  std::vector<Shape> out;
  for (int r = 1; r <= p; ++r) {
    if (p % r == 0) out.push_back({r, p / r});
  }
  return out;
}

struct Size {
  std::int64_t rows, cols;
};
// Square, rectangular, uneven, smaller than most grids, a vector, empty.
const std::vector<Size> kSizes = {{16, 16}, {17, 23}, {5, 3}, {1, 1}, {40, 1}, {0, 4}, {3, 0}};

// Exact values: every comparison below is ==.
double value(std::int64_t i, std::int64_t j) { return static_cast<double>(i * 1000 + j) + 0.25; }

Block whole_matrix(std::int64_t rows, std::int64_t cols) {
  Block w(rows, cols);
  for (std::int64_t j = 0; j < cols; ++j) {
    for (std::int64_t i = 0; i < rows; ++i) w.at(i, j) = value(i, j);
  }
  return w;
}

Block block_of(const BlockLayout& l, int rank) {
  const Range r = l.row_part(rank / l.pcol), c = l.col_part(rank % l.pcol);
  Block b(r.size, c.size);
  for (std::int64_t j = 0; j < c.size; ++j) {
    for (std::int64_t i = 0; i < r.size; ++i) b.at(i, j) = value(r.begin + i, c.begin + j);
  }
  return b;
}

std::string describe(const BlockLayout& l) {
  return std::to_string(l.rows) + "x" + std::to_string(l.cols) + " on " + std::to_string(l.prow) +
         "x" + std::to_string(l.pcol);
}

TEST(PartTest, TilesAndBalances) {
  for (std::int64_t n : {0, 1, 5, 16, 17, 100}) {
    for (int parts : {1, 2, 3, 7, 16, 27}) {
      std::int64_t next = 0;
      for (int i = 0; i < parts; ++i) {
        const Range r = part(n, parts, i);
        EXPECT_EQ(r.begin, next);
        EXPECT_TRUE(r.size == n / parts || r.size == n / parts + 1);
        EXPECT_EQ(r.size, n / parts + (i < n % parts ? 1 : 0));
        next = r.end();
      }
      EXPECT_EQ(next, n);
    }
  }
  EXPECT_THROW(part(5, 0, 0), std::invalid_argument);
  EXPECT_THROW(part(5, 2, 2), std::invalid_argument);
  EXPECT_THROW(part(-1, 2, 0), std::invalid_argument);
}

TEST(NumrocTest, CountsWhatTheCyclicDealGives) {
  for (std::int64_t n : {0, 1, 7, 64, 65, 200}) {
    for (std::int64_t nb : {1, 2, 3, 64}) {
      for (int nprocs : {1, 2, 3, 5}) {
        std::int64_t sum = 0;
        for (int p = 0; p < nprocs; ++p) {
          std::int64_t brute = 0;
          for (std::int64_t g = 0; g < n; ++g) brute += (g / nb) % nprocs == p ? 1 : 0;
          EXPECT_EQ(numroc(n, nb, p, nprocs), brute) << n << " " << nb << " " << p << "/" << nprocs;
          sum += brute;
        }
        EXPECT_EQ(sum, n);
      }
    }
  }
  EXPECT_THROW(numroc(5, 0, 0, 1), std::invalid_argument);
  EXPECT_THROW(numroc(5, 2, 3, 3), std::invalid_argument);
}

TEST(ScatterGatherTest, RoundTripOnEveryGridAndRoot) {
  const int p = world_size(), me = world_rank();
  for (const Shape g : grids(p)) {
    for (const Size s : kSizes) {
      for (int root : {0, p - 1}) {
        const BlockLayout l{s.rows, s.cols, g.prow, g.pcol};
        SCOPED_TRACE(describe(l) + " root " + std::to_string(root));
        const Block whole = me == root ? whole_matrix(s.rows, s.cols) : Block();
        const Block mine = scatter_blocks(l, whole, root, MPI_COMM_WORLD);
        const Block expected = block_of(l, me);
        EXPECT_EQ(mine.rows, expected.rows);
        EXPECT_EQ(mine.cols, expected.cols);
        EXPECT_EQ(mine.data, expected.data);
        const Block back = gather_blocks(l, mine, root, MPI_COMM_WORLD);
        if (me == root) {
          EXPECT_EQ(back.rows, s.rows);
          EXPECT_EQ(back.cols, s.cols);
          EXPECT_EQ(back.data, whole.data);
        } else {
          EXPECT_TRUE(back.data.empty());
        }
      }
    }
  }
}

TEST(ScatterGatherTest, PiecesMayBeAnyRectangles) {
  // Rank r gets row r % rows, all columns: pieces overlap when p > rows.
  const int p = world_size(), me = world_rank();
  const std::int64_t rows = 3, cols = 5;
  std::vector<Piece> pieces;
  for (int r = 0; r < p; ++r) pieces.push_back({Range{r % rows, 1}, Range{0, cols}});
  const Block whole = me == 0 ? whole_matrix(rows, cols) : Block();
  const Block mine = scatter_pieces(rows, cols, pieces, whole, 0, MPI_COMM_WORLD);
  ASSERT_EQ(mine.rows, 1);
  ASSERT_EQ(mine.cols, cols);
  for (std::int64_t j = 0; j < cols; ++j) EXPECT_EQ(mine.at(0, j), value(me % rows, j));
}

TEST(CyclicTest, MatchesScaLapackIndexFormulasAndRoundTrips) {
  const int p = world_size(), me = world_rank();
  for (const Shape bg : grids(p)) {
    // The same process grid, and its transpose when that is another shape.
    std::vector<Shape> cyclic_grids = {bg};
    if (bg.prow != bg.pcol) cyclic_grids.push_back({bg.pcol, bg.prow});
    for (const Shape cg : cyclic_grids) {
      for (const Size s : kSizes) {
        for (const std::int64_t mb : {1, 2, 64}) {
          const std::int64_t nb = mb == 2 ? 5 : mb;  // also mb != nb
          const BlockLayout bl{s.rows, s.cols, bg.prow, bg.pcol};
          const CyclicLayout cl{s.rows, s.cols, mb, nb, cg.prow, cg.pcol};
          SCOPED_TRACE(describe(bl) + " -> cyclic " + std::to_string(mb) + "x" +
                       std::to_string(nb) + " on " + std::to_string(cg.prow) + "x" +
                       std::to_string(cg.pcol));
          const Block mine = block_of(bl, me);
          const Block cyc = to_cyclic(bl, mine, cl, MPI_COMM_WORLD);
          // ScaLAPACK (RSRC = CSRC = 0, row-major BLACS grid): this process
          // is (myrow, mycol); local (li, lj) is global INDXL2G(li), INDXL2G(lj).
          const int myrow = me / cg.pcol, mycol = me % cg.pcol;
          ASSERT_EQ(cyc.rows, numroc(s.rows, mb, myrow, cg.prow));
          ASSERT_EQ(cyc.cols, numroc(s.cols, nb, mycol, cg.pcol));
          ASSERT_EQ(static_cast<std::int64_t>(cyc.data.size()), cyc.rows * cyc.cols);
          for (std::int64_t lj = 0; lj < cyc.cols; ++lj) {
            const std::int64_t gj = ((lj / nb) * cg.pcol + mycol) * nb + lj % nb;
            for (std::int64_t li = 0; li < cyc.rows; ++li) {
              const std::int64_t gi = ((li / mb) * cg.prow + myrow) * mb + li % mb;
              ASSERT_EQ(cyc.at(li, lj), value(gi, gj)) << "local (" << li << ", " << lj << ")";
            }
          }
          const Block back = from_cyclic(cl, cyc, bl, MPI_COMM_WORLD);
          EXPECT_EQ(back.rows, mine.rows);
          EXPECT_EQ(back.cols, mine.cols);
          EXPECT_EQ(back.data, mine.data);
        }
      }
    }
  }
}

TEST(LayoutErrorsTest, ThrowOnEveryRank) {
  const int p = world_size(), me = world_rank();
  // A layout for another job size: every rank sees it.
  EXPECT_THROW(scatter_blocks(BlockLayout{4, 4, p + 1, 1}, whole_matrix(4, 4), 0, MPI_COMM_WORLD),
               std::invalid_argument);
  EXPECT_THROW(scatter_blocks(BlockLayout{4, 4, p, 1}, Block(), p, MPI_COMM_WORLD),
               std::invalid_argument);
  // The root's whole matrix has the wrong size: every rank hears of it.
  EXPECT_THROW(scatter_blocks(BlockLayout{4, 4, p, 1}, me == 0 ? whole_matrix(4, 3) : Block(), 0,
                              MPI_COMM_WORLD),
               std::invalid_argument);
  // The last rank's block has the wrong size.
  const BlockLayout l{7, 5, 1, p};
  Block mine = block_of(l, me);
  if (me == p - 1) mine = Block(mine.rows + 1, mine.cols);
  try {
    gather_blocks(l, mine, 0, MPI_COMM_WORLD);
    ADD_FAILURE() << "gather_blocks accepted a block of the wrong size";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("rank " + std::to_string(p - 1)), std::string::npos)
        << e.what();
  }
  EXPECT_THROW(to_cyclic(l, mine, CyclicLayout{7, 5, 2, 2, 1, p}, MPI_COMM_WORLD),
               std::invalid_argument);
  EXPECT_THROW(to_cyclic(l, block_of(l, me), CyclicLayout{7, 6, 2, 2, 1, p}, MPI_COMM_WORLD),
               std::invalid_argument);
  EXPECT_THROW(to_cyclic(l, block_of(l, me), CyclicLayout{7, 5, 0, 2, 1, p}, MPI_COMM_WORLD),
               std::invalid_argument);
}

}  // namespace
}  // namespace rankshape::matmul
