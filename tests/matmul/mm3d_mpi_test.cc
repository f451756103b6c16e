// The 3D algorithm at 1, 2, 3, 4, 6, 8, 12 and 27 ranks against a serial
// Eigen product of the same random matrices (every rank builds them whole
// from a fixed seed): square, rectangular, uneven, empty and smaller-than-
// the-grid shapes, on (nearly) every 3D grid of each job size; on cartesian grids, on a scrambled
// communicator and on one shaped by relabel_comm(); distributed from and
// gathered to a root; bad arguments.
#include <gtest/gtest.h>
#include <mpi.h>

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "lib/matmul/grid_comm.h"
#include "lib/matmul/layout.h"
#include "lib/matmul/mm3d.h"
#include "lib/model/grid.h"
#include "lib/shape/shape.h"
#include "lib/util/random.h"
#include "tests/testing/machines.h"
#include "tests/testing/world.h"

namespace rankshape::matmul {
namespace {

using ::rankshape::testing::world_rank;
using ::rankshape::testing::world_size;

// Every q0 x q1 x q2 grid of p ranks up to 8 ranks (8: 10 grids, cubes or
// not); beyond, where MPICH's busy-polling ranks make every collective slow
// on two cores, the balanced grid's permutations and the three lines.
std::vector<std::vector<int>> grids(int p) {
  std::set<std::vector<int>> out;
  if (p <= 8) {
    for (int q0 = 1; q0 <= p; ++q0) {
      for (int q1 = 1; q0 * q1 <= p; ++q1) {
        if (p % (q0 * q1) == 0) out.insert({q0, q1, p / (q0 * q1)});
      }
    }
  } else {
    std::vector<int> balanced = complete_grid(p, {0, 0, 0}).dims();
    std::sort(balanced.begin(), balanced.end());
    do {
      out.insert(balanced);
    } while (std::next_permutation(balanced.begin(), balanced.end()));
    out.insert({p, 1, 1});
    out.insert({1, p, 1});
    out.insert({1, 1, p});
  }
  return {out.begin(), out.end()};
}

std::string describe(const std::vector<int>& dims) {
  std::string s;
  for (int d : dims) s += (s.empty() ? "" : "x") + std::to_string(d);
  return s;
}

// Square, rectangular and uneven, 1 x 1 x 1, smaller than most grids (some
// pieces empty), and empty dimensions (k = 0: C = 0).
// One large enough for Eigen's blocked kernel on every rank.
const std::vector<MatmulSizes> kShapes = {{16, 16, 16}, {17, 5, 23}, {1, 1, 1}, {2, 3, 2},
                                          {33, 40, 9},  {0, 3, 4},   {4, 0, 3}, {96, 130, 71}};

std::string describe(const MatmulSizes& s) {
  return std::to_string(s.m) + "x" + std::to_string(s.k) + "x" + std::to_string(s.n);
}

Block random_matrix(std::int64_t rows, std::int64_t cols, std::uint64_t seed) {
  SplitMix64 rng(seed);
  Block b(rows, cols);
  for (double& x : b.data) x = 2 * rng.uniform() - 1;
  return b;
}

using Map = Eigen::Map<const Eigen::MatrixXd>;
Map view(const Block& b) { return Map(b.data.data(), b.rows, b.cols); }

// Every rank holds the whole problem and its serial product.
struct Problem {
  MatmulSizes sizes;
  Block a, b, c;
  double scale = 0;  // ||A||_F ||B||_F
};
Problem make_problem(const MatmulSizes& s) {
  Problem p{s, random_matrix(s.m, s.k, 1000 + s.m * 7 + s.k), random_matrix(s.k, s.n, 2000 + s.n),
            Block(s.m, s.n)};
  Eigen::Map<Eigen::MatrixXd>(p.c.data.data(), s.m, s.n) = view(p.a) * view(p.b);
  p.scale = view(p.a).norm() * view(p.b).norm();
  return p;
}

// Built once per process: with many ranks on two cores, per-rank serial
// work is what the test time is made of.
const Problem& problem(const MatmulSizes& s) {
  static const std::vector<Problem> problems = [] {
    std::vector<Problem> out;
    for (const MatmulSizes& shape : kShapes) out.push_back(make_problem(shape));
    return out;
  }();
  for (const Problem& p : problems) {
    if (p.sizes.m == s.m && p.sizes.k == s.k && p.sizes.n == s.n) return p;
  }
  throw std::logic_error("not a test shape");
}

Block piece_of(const Block& whole, const Piece& piece) {
  Block out(piece.rows.size, piece.cols.size);
  for (std::int64_t j = 0; j < out.cols; ++j) {
    for (std::int64_t i = 0; i < out.rows; ++i) {
      out.at(i, j) = whole.at(piece.rows.begin + i, piece.cols.begin + j);
    }
  }
  return out;
}

// Frobenius error of this rank's piece of C against the bound for the whole
// product (the test main fails the test on every rank if one fails): the
// rounding bound of a k-term inner product is about k eps |A||B|.
void expect_close(const Problem& p, const Block& mine, const Piece& piece) {
  ASSERT_EQ(mine.rows, piece.rows.size);
  ASSERT_EQ(mine.cols, piece.cols.size);
  ASSERT_EQ(static_cast<std::int64_t>(mine.data.size()), mine.rows * mine.cols);
  const Block want = piece_of(p.c, piece);
  const double err = (view(mine) - view(want)).norm();
  if (p.scale == 0) {
    EXPECT_EQ(err, 0);
  } else {
    EXPECT_LE(err, 1e-15 * static_cast<double>(p.sizes.k + 1) * p.scale)
        << "relative error " << err / p.scale;
  }
}

// Fewer, for the tests that are not about shapes.
const std::vector<MatmulSizes> kSomeShapes = {{17, 5, 23}, {2, 3, 2}, {4, 0, 3}, {96, 130, 71}};

// Each shape on one grid, pieces cut locally from the whole matrices.
void check_shapes(const GridComm& grid, const std::vector<MatmulSizes>& shapes) {
  for (const MatmulSizes& s : shapes) {
    SCOPED_TRACE(describe(s) + " on " + describe(grid.dims()));
    const Problem& p = problem(s);
    const Block a = piece_of(p.a, piece_a_3d(s, grid.dims(), grid.coords()));
    const Block b = piece_of(p.b, piece_b_3d(s, grid.dims(), grid.coords()));
    Timings t;
    const Block c = multiply_3d(grid, s, a, b, &t);
    expect_close(p, c, piece_c_3d(s, grid.dims(), grid.coords()));
    EXPECT_GE(t.allgather, 0);
    EXPECT_GE(t.multiply, 0);
    EXPECT_GE(t.reduce_scatter, 0);
    EXPECT_DOUBLE_EQ(t.total(), t.allgather + t.multiply + t.reduce_scatter);
  }
}

TEST(Mm3dTest, PiecesTileEachMatrix) {
  const int p = world_size();
  for (const std::vector<int>& dims : grids(p)) {
    for (const MatmulSizes& s : kShapes) {
      SCOPED_TRACE(describe(s) + " on " + describe(dims));
      std::vector<int> count_a(static_cast<std::size_t>(s.m * s.k)),
          count_b(static_cast<std::size_t>(s.k * s.n)),
          count_c(static_cast<std::size_t>(s.m * s.n));
      const auto cover = [](std::vector<int>& count, std::int64_t rows, const Piece& piece) {
        for (std::int64_t j = piece.cols.begin; j < piece.cols.end(); ++j) {
          for (std::int64_t i = piece.rows.begin; i < piece.rows.end(); ++i) {
            ++count[static_cast<std::size_t>(i + j * rows)];
          }
        }
      };
      for (int s0 = 0; s0 < dims[0]; ++s0) {
        for (int t = 0; t < dims[1]; ++t) {
          for (int u = 0; u < dims[2]; ++u) {
            const std::vector<int> c{s0, t, u};
            cover(count_a, s.m, piece_a_3d(s, dims, c));
            cover(count_b, s.k, piece_b_3d(s, dims, c));
            cover(count_c, s.m, piece_c_3d(s, dims, c));
          }
        }
      }
      for (const auto* count : {&count_a, &count_b, &count_c}) {
        EXPECT_TRUE(std::all_of(count->begin(), count->end(), [](int n) { return n == 1; }));
      }
    }
  }
}

TEST(Mm3dTest, MatchesSerialProductOnCartesianGrids) {
  for (const std::vector<int>& dims : grids(world_size())) {
    const GridComm grid = GridComm::cartesian(MPI_COMM_WORLD, dims);
    ASSERT_EQ(grid.rank(), world_rank());  // no reordering
    for (int k = 0; k < 3; ++k) {
      int r = -1;
      MPI_Comm_rank(grid.fibre(k), &r);
      EXPECT_EQ(r, grid.coord(k));
    }
    check_shapes(grid, kShapes);
  }
}

TEST(Mm3dTest, MatchesSerialProductOnAScrambledCommunicator) {
  // Ranks in a shuffled order (a relabelling that no cost justifies).
  const int p = world_size();
  std::vector<int> order(static_cast<std::size_t>(p));
  for (int i = 0; i < p; ++i) order[static_cast<std::size_t>(i)] = i;
  SplitMix64 rng(7);
  shuffle(order, rng);
  MPI_Comm scrambled = MPI_COMM_NULL;
  MPI_Comm_split(MPI_COMM_WORLD, 0, order[static_cast<std::size_t>(world_rank())], &scrambled);
  {
    const GridComm grid = GridComm::cartesian(scrambled, complete_grid(p, {0, 0, 0}).dims());
    EXPECT_EQ(grid.rank(), order[static_cast<std::size_t>(world_rank())]);
    check_shapes(grid, kSomeShapes);
  }
  MPI_Comm_free(&scrambled);
}

using ::rankshape::testing::alternating_machine;

TEST(Mm3dTest, MatchesSerialProductOnShapedCommunicators) {
  const int p = world_size();
  ShapeOptions o;
  o.source = CostSource::kMatrix;
  o.matrix = alternating_machine(p);
  o.time_limit = 1;
  o.collective_groups = false;
  // A line too, except at many ranks (relabel_comm() is the slow part).
  std::vector<std::vector<int>> shapes = {complete_grid(p, {0, 0, 0}).dims()};
  if (p <= 12) shapes.push_back({1, p, 1});
  for (const std::vector<int>& dims : shapes) {
    const ShapedComm shaped = relabel_comm(MPI_COMM_WORLD, Grid(dims), o);
    const GridComm grid = GridComm::shaped(shaped);
    ASSERT_EQ(grid.dims(), dims);
    EXPECT_EQ(grid.rank(), shaped.new_of(OldRank(world_rank())).value());
    EXPECT_EQ(grid.coords(), shaped.coords());
    check_shapes(grid, kSomeShapes);
  }
}

TEST(Mm3dTest, ScatterMultiplyGatherAtARoot) {
  const int p = world_size();
  const GridComm grid = GridComm::cartesian(MPI_COMM_WORLD, complete_grid(p, {0, 0, 0}).dims());
  // Root 0 is also covered by layout_mpi_test's scatter and gather.
  for (const MatmulSizes& s : kSomeShapes) {
    for (int root : {p - 1}) {
      SCOPED_TRACE(describe(s) + " root " + std::to_string(root));
      const Problem& pr = problem(s);
      const bool at_root = grid.rank() == root;
      const Block a = scatter_a_3d(grid, s, at_root ? pr.a : Block(), root);
      const Block b = scatter_b_3d(grid, s, at_root ? pr.b : Block(), root);
      EXPECT_EQ(a.data, piece_of(pr.a, piece_a_3d(s, grid.dims(), grid.coords())).data);
      EXPECT_EQ(b.data, piece_of(pr.b, piece_b_3d(s, grid.dims(), grid.coords())).data);
      const Block c = multiply_3d(grid, s, a, b);
      const Block whole = gather_c_3d(grid, s, c, root);
      if (at_root) {
        ASSERT_EQ(whole.rows, s.m);
        ASSERT_EQ(whole.cols, s.n);
        const double err = (view(whole) - view(pr.c)).norm();
        EXPECT_LE(err, 1e-15 * static_cast<double>(s.k + 1) * pr.scale);
      } else {
        EXPECT_TRUE(whole.data.empty());
      }
    }
  }
}

TEST(Mm3dTest, WithoutComputingTheSameShapesComeBackZero) {
  // compute = false (communication-only benchmarks): every piece of C has
  // its shape and holds zeros.
  const int p = world_size();
  const GridComm grid = GridComm::cartesian(MPI_COMM_WORLD, complete_grid(p, {0, 0, 0}).dims());
  const MatmulSizes s{17, 5, 23};
  const Problem& pr = problem(s);
  const Block a = piece_of(pr.a, piece_a_3d(s, grid.dims(), grid.coords()));
  const Block b = piece_of(pr.b, piece_b_3d(s, grid.dims(), grid.coords()));
  Timings t;
  const Block c = multiply_3d(grid, s, a, b, &t, false);
  const Piece want = piece_c_3d(s, grid.dims(), grid.coords());
  EXPECT_EQ(c.rows, want.rows.size);
  EXPECT_EQ(c.cols, want.cols.size);
  for (double x : c.data) EXPECT_EQ(x, 0.0);
}

TEST(Mm3dTest, RejectsBadArguments) {
  const int p = world_size();
  const MatmulSizes s{5, 4, 3};
  const GridComm flat = GridComm::cartesian(MPI_COMM_WORLD, {p, 1});
  EXPECT_THROW(multiply_3d(flat, s, Block(), Block()), std::invalid_argument);
  EXPECT_THROW(GridComm::cartesian(MPI_COMM_WORLD, {p + 1, 1, 1}), std::invalid_argument);
  EXPECT_THROW(GridComm::cartesian(MPI_COMM_WORLD, {p, 0, 1}), std::invalid_argument);
  const GridComm grid = GridComm::cartesian(MPI_COMM_WORLD, {p, 1, 1});
  // Every rank passes pieces of the wrong size: every rank throws.
  const Piece pa = piece_a_3d(s, grid.dims(), grid.coords());
  const Piece pb = piece_b_3d(s, grid.dims(), grid.coords());
  EXPECT_THROW(multiply_3d(grid, s, Block(pa.rows.size + 1, pa.cols.size),
                           Block(pb.rows.size, pb.cols.size)),
               std::invalid_argument);
  EXPECT_THROW(multiply_3d(grid, MatmulSizes{-1, 4, 3}, Block(), Block()), std::invalid_argument);
  EXPECT_THROW(piece_a_3d(s, {2, 2}, {0, 0}), std::invalid_argument);
  EXPECT_THROW(piece_c_3d(s, {2, 2, 2}, {0, 2, 0}), std::invalid_argument);
}

}  // namespace
}  // namespace rankshape::matmul
