// SUMMA and HSUMMA against a serial product: every grid shape of the job
// (1 x p, p x 1 and those between), square and rectangular sizes (some
// smaller than the grid, leaving blocks empty), panel widths 1, 3 and wider
// than k, every grouping HSUMMA accepts with outer panels b, 2b and not a
// multiple of b, on a cartesian and on a relabelled communicator, and the
// arguments both refuse.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "lib/matmul/grid_comm.h"
#include "lib/matmul/layout.h"
#include "lib/matmul/summa.h"
#include "lib/model/grid.h"
#include "lib/shape/shape.h"
#include "lib/util/random.h"
#include "tests/testing/machines.h"
#include "tests/testing/world.h"

namespace rankshape::matmul {
namespace {

using ::rankshape::testing::world_rank;
using ::rankshape::testing::world_size;

struct Sizes {
  std::int64_t m, n, k;
};

std::string name(const Sizes& s) {
  return std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k);
}

// Square, rectangular, smaller than most grids (empty blocks), and k = 0.
const std::vector<Sizes> kSizes = {{1, 1, 1}, {7, 13, 5}, {33, 17, 29}, {2, 3, 1}, {4, 3, 0}};

struct Shape {
  int rows, cols;
};

// Every pr x pc = p, from 1 x p to p x 1.
std::vector<Shape> shapes(int p) {
  std::vector<Shape> out;
  for (int r = 1; r <= p; ++r) {
    if (p % r == 0) out.push_back({r, p / r});
  }
  return out;
}

std::vector<int> divisors(int q) {
  std::vector<int> out;
  for (int d = 1; d <= q; ++d) {
    if (q % d == 0) out.push_back(d);
  }
  return out;
}

Block random_matrix(std::int64_t rows, std::int64_t cols, std::uint64_t seed) {
  SplitMix64 rng(seed);
  Block x(rows, cols);
  for (double& v : x.data) v = 2 * rng.uniform() - 1;
  return x;
}

Block serial_product(const Block& a, const Block& b) {
  Block c(a.rows, b.cols);
  for (std::int64_t j = 0; j < b.cols; ++j) {
    for (std::int64_t t = 0; t < a.cols; ++t) {
      for (std::int64_t i = 0; i < a.rows; ++i) c.at(i, j) += a.at(i, t) * b.at(t, j);
    }
  }
  return c;
}

double frobenius(const Block& x) {
  double s = 0;
  for (double v : x.data) s += v * v;
  return std::sqrt(s);
}

// One product, known everywhere: the whole matrices and the serial C.
struct Problem {
  Sizes sizes;
  Block a, b, c;
  explicit Problem(const Sizes& s)
      : sizes(s),
        a(random_matrix(s.m, s.k, 17 + static_cast<std::uint64_t>(s.m))),
        b(random_matrix(s.k, s.n, 91 + static_cast<std::uint64_t>(s.n))),
        c(serial_product(a, b)) {}
  double tolerance() const {
    return 1e-12 * std::sqrt(static_cast<double>(sizes.k) + 1) * frobenius(c);
  }
};

// The problem's blocks on one grid, handed out by scatter_blocks.
struct Distributed {
  BlockLayout a_layout, b_layout, c_layout;
  Block a, b;
  Distributed(const Problem& p, const GridComm& grid) {
    const int pr = grid.dim(0), pc = grid.dim(1);
    a_layout = {p.sizes.m, p.sizes.k, pr, pc};
    b_layout = {p.sizes.k, p.sizes.n, pr, pc};
    c_layout = {p.sizes.m, p.sizes.n, pr, pc};
    a = scatter_blocks(a_layout, p.a, 0, grid.comm());
    b = scatter_blocks(b_layout, p.b, 0, grid.comm());
  }
};

// Gathers C on the grid's rank 0 and compares it there with the serial one.
void expect_gathered(const Problem& p, const Distributed& d, const GridComm& grid, const Block& c,
                     const std::string& what) {
  const Block whole = gather_blocks(d.c_layout, c, 0, grid.comm());
  if (grid.rank() != 0) return;
  ASSERT_EQ(whole.rows, p.sizes.m) << what;
  ASSERT_EQ(whole.cols, p.sizes.n) << what;
  Block diff = whole;
  for (std::size_t e = 0; e < diff.data.size(); ++e) diff.data[e] -= p.c.data[e];
  EXPECT_LE(frobenius(diff), p.tolerance()) << what;
}

// Compares this rank's block with its part of the serial C (no
// communication: for the long sweeps).
void expect_local(const Problem& p, const GridComm& grid, const Block& c, const std::string& what) {
  const Range rows = part(p.sizes.m, grid.dim(0), grid.coord(0));
  const Range cols = part(p.sizes.n, grid.dim(1), grid.coord(1));
  ASSERT_EQ(c.rows, rows.size) << what;
  ASSERT_EQ(c.cols, cols.size) << what;
  double err = 0;
  for (std::int64_t j = 0; j < c.cols; ++j) {
    for (std::int64_t i = 0; i < c.rows; ++i) {
      const double d = c.at(i, j) - p.c.at(rows.begin + i, cols.begin + j);
      err += d * d;
    }
  }
  EXPECT_LE(std::sqrt(err), p.tolerance()) << what;
}

// Inner steps expected: k cut at both partitions' boundaries, each segment
// into outer panels of at most `outer`, each into pieces of at most `inner`.
std::int64_t expected_steps(std::int64_t k, int pr, int pc, std::int64_t outer,
                            std::int64_t inner) {
  std::vector<std::int64_t> cuts = {0, k};
  for (int i = 0; i < pr; ++i) cuts.push_back(part(k, pr, i).end());
  for (int j = 0; j < pc; ++j) cuts.push_back(part(k, pc, j).end());
  std::sort(cuts.begin(), cuts.end());
  cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
  std::int64_t steps = 0;
  for (std::size_t s = 0; s + 1 < cuts.size(); ++s) {
    for (std::int64_t o = cuts[s]; o < cuts[s + 1]; o += outer) {
      const std::int64_t w = std::min(outer, cuts[s + 1] - o);
      steps += (w + inner - 1) / inner;
    }
  }
  return steps;
}

TEST(Summa, MatchesSerialProductOnEveryGridShape) {
  const int p = world_size();
  for (const Shape& shape : shapes(p)) {
    const GridComm grid = GridComm::cartesian(MPI_COMM_WORLD, {shape.rows, shape.cols});
    for (const Sizes& sizes : kSizes) {
      const Problem problem(sizes);
      const Distributed d(problem, grid);
      // b = 1, 3 and wider than k (the same thing when k <= 1).
      std::vector<std::int64_t> widths = {1};
      if (sizes.k > 1) widths = {1, 3, sizes.k + 4};
      for (std::int64_t b : widths) {
        const std::string what = std::to_string(shape.rows) + "x" + std::to_string(shape.cols) +
                                 " grid, " + name(sizes) + ", b=" + std::to_string(b);
        SummaTimings t;
        t.steps = -1;
        const Block c = summa(grid, sizes.m, sizes.n, sizes.k, d.a, d.b, b, &t);
        expect_gathered(problem, d, grid, c, what);
        EXPECT_EQ(t.steps, expected_steps(sizes.k, shape.rows, shape.cols, b, b)) << what;
        EXPECT_GE(t.bcast_seconds, 0) << what;
        EXPECT_GE(t.multiply_seconds, 0) << what;
        EXPECT_EQ(t.outer_bcast_seconds, 0) << what;
        EXPECT_GE(t.total_seconds, t.bcast_seconds + t.multiply_seconds - 1e-9) << what;
      }
    }
  }
}

// The walk cuts k at both partitions: 2 x 3 grid, k = 5 (A's columns
// {0,1} {2,3} {4}, B's rows {0,1,2} {3,4}) gives 4 segments.
TEST(Summa, PanelsFollowBothPartitions) {
  EXPECT_EQ(expected_steps(5, 2, 3, 100, 100), 4);
  EXPECT_EQ(expected_steps(5, 2, 3, 1, 1), 5);
  EXPECT_EQ(expected_steps(29, 1, 1, 7, 3), 13);  // 4 x (3+3+1) + 1
  if (world_size() != 6) return;
  const GridComm grid = GridComm::cartesian(MPI_COMM_WORLD, {2, 3});
  const Problem problem({4, 4, 5});
  const Distributed d(problem, grid);
  SummaTimings t;
  const Block c = summa(grid, 4, 4, 5, d.a, d.b, 100, &t);
  expect_gathered(problem, d, grid, c, "2x3 grid, k=5");
  EXPECT_EQ(t.steps, 4);
}

TEST(Summa, WithoutComputingTheSameStepsAndZeros) {
  // compute = false (communication-only benchmarks): the same panels go
  // round, C keeps its shape and holds zeros.
  const int p = world_size();
  const GridComm grid = GridComm::cartesian(MPI_COMM_WORLD, {p, 1});
  const Problem problem({7, 13, 5});
  const Distributed d(problem, grid);
  SummaTimings with, without;
  const Block c = summa(grid, 7, 13, 5, d.a, d.b, 2, &with);
  const Block zero = summa(grid, 7, 13, 5, d.a, d.b, 2, &without, false);
  EXPECT_EQ(zero.rows, c.rows);
  EXPECT_EQ(zero.cols, c.cols);
  for (double x : zero.data) EXPECT_EQ(x, 0.0);
  EXPECT_EQ(without.steps, with.steps);
  const Hsumma h(grid, 1, 1);
  const Block hz = h.multiply(7, 13, 5, d.a, d.b, 4, 2, nullptr, false);
  EXPECT_EQ(hz.rows, c.rows);
  for (double x : hz.data) EXPECT_EQ(x, 0.0);
}

// One HSUMMA run: what it multiplies and with which panels.
struct HsummaRun {
  Sizes sizes;
  std::int64_t inner, outer;
};

TEST(Hsumma, MatchesSerialProductForEveryGrouping) {
  const int p = world_size();
  // Outer panels M = b, 2b, not a multiple of b, and wider than k (with
  // empty blocks on most grids).
  const std::vector<HsummaRun> runs = {
      {{7, 13, 5}, 1, 1}, {{33, 17, 29}, 3, 6}, {{33, 17, 29}, 3, 7}, {{2, 3, 1}, 2, 40}};
  std::vector<Problem> problems;
  for (const HsummaRun& r : runs) problems.emplace_back(r.sizes);
  for (const Shape& shape : shapes(p)) {
    const GridComm grid = GridComm::cartesian(MPI_COMM_WORLD, {shape.rows, shape.cols});
    std::vector<Distributed> blocks;
    for (const Problem& problem : problems) blocks.emplace_back(problem, grid);
    for (int groups_r : divisors(shape.rows)) {
      for (int groups_c : divisors(shape.cols)) {
        const Hsumma h(grid, groups_r, groups_c);
        EXPECT_EQ(h.group_rows(), groups_r);
        EXPECT_EQ(h.group_cols(), groups_c);
        for (std::size_t e = 0; e < runs.size(); ++e) {
          const HsummaRun& r = runs[e];
          const Sizes& s = r.sizes;
          const std::string what =
              std::to_string(shape.rows) + "x" + std::to_string(shape.cols) + " grid, " +
              std::to_string(groups_r) + "x" + std::to_string(groups_c) + " groups, " + name(s) +
              ", b=" + std::to_string(r.inner) + ", M=" + std::to_string(r.outer);
          SummaTimings t;
          const Block c = h.multiply(s.m, s.n, s.k, blocks[e].a, blocks[e].b, r.outer, r.inner, &t);
          expect_local(problems[e], grid, c, what);
          EXPECT_EQ(t.steps, expected_steps(s.k, shape.rows, shape.cols, r.outer, r.inner)) << what;
          EXPECT_LE(t.outer_bcast_seconds, t.bcast_seconds) << what;
        }
      }
    }
  }
}

using ::rankshape::testing::alternating_machine;

TEST(Summa, RelabelledCommunicator) {
  const int p = world_size();
  ShapeOptions o;
  o.source = CostSource::kMatrix;
  o.matrix = alternating_machine(p);
  o.time_limit = 0.5;
  const ShapedComm shaped = relabel_comm(MPI_COMM_WORLD, complete_grid(p, {0, 0}), o);
  const GridComm grid = GridComm::shaped(shaped);
  ASSERT_EQ(grid.ndims(), 2);
  for (const Sizes& sizes : {Sizes{33, 17, 29}, Sizes{2, 3, 1}}) {
    const Problem problem(sizes);
    const Distributed d(problem, grid);
    for (std::int64_t b : {std::int64_t{3}, sizes.k + 4}) {
      const std::string what = name(sizes) + ", b=" + std::to_string(b);
      expect_gathered(problem, d, grid, summa(grid, sizes.m, sizes.n, sizes.k, d.a, d.b, b),
                      "SUMMA " + what);
    }
    for (int groups_r : divisors(grid.dim(0))) {
      for (int groups_c : divisors(grid.dim(1))) {
        const Hsumma h(grid, groups_r, groups_c);
        const Block c = h.multiply(sizes.m, sizes.n, sizes.k, d.a, d.b, 4, 2);
        expect_gathered(problem, d, grid, c,
                        "HSUMMA " + name(sizes) + ", " + std::to_string(groups_r) + "x" +
                            std::to_string(groups_c) + " groups");
      }
    }
  }
}

TEST(Summa, RefusesBadArgumentsOnEveryRank) {
  const int p = world_size();
  const Grid dims = complete_grid(p, {0, 0});
  const GridComm grid = GridComm::cartesian(MPI_COMM_WORLD, dims.dims());
  const Problem problem({7, 13, 5});
  const Distributed d(problem, grid);
  EXPECT_THROW(summa(grid, 7, 13, 5, d.a, d.b, 0), std::invalid_argument);
  EXPECT_THROW(summa(grid, 7, 13, 5, d.a, d.b, -3), std::invalid_argument);
  EXPECT_THROW(summa(grid, -7, 13, 5, d.a, d.b, 1), std::invalid_argument);
  // Sizes that do not match the blocks (k = 6: A's parts of k add up to 6,
  // not 5, so some rank's block has the wrong width).
  EXPECT_THROW(summa(grid, 7, 13, 6, d.a, d.b, 1), std::invalid_argument);
  // One rank alone passes a wrong block: every rank throws.
  const Block wrong(1, 1);
  EXPECT_THROW(summa(grid, 7, 13, 5, grid.rank() == p - 1 ? wrong : d.a, d.b, 2),
               std::invalid_argument);
  const GridComm line = GridComm::cartesian(MPI_COMM_WORLD, {p});
  EXPECT_THROW(summa(line, 7, 13, 5, d.a, d.b, 1), std::invalid_argument);
  EXPECT_THROW(Hsumma(line, 1, 1), std::invalid_argument);

  EXPECT_THROW(Hsumma(grid, 0, 1), std::invalid_argument);
  EXPECT_THROW(Hsumma(grid, 1, -1), std::invalid_argument);
  EXPECT_THROW(Hsumma(grid, grid.dim(0) + 1, 1), std::invalid_argument);
  EXPECT_THROW(Hsumma(grid, 1, grid.dim(1) + 1), std::invalid_argument);
  for (int groups = 2; groups < grid.dim(0); ++groups) {
    if (grid.dim(0) % groups != 0) {
      EXPECT_THROW(Hsumma(grid, groups, 1), std::invalid_argument);
    }
  }
  for (int groups = 2; groups < grid.dim(1); ++groups) {
    if (grid.dim(1) % groups != 0) {
      EXPECT_THROW(Hsumma(grid, 1, groups), std::invalid_argument);
    }
  }
  try {
    Hsumma(grid, grid.dim(0) + 1, 1);
    ADD_FAILURE() << "no exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("group_rows = " + std::to_string(grid.dim(0) + 1) +
                                         " does not divide"),
              std::string::npos)
        << e.what();
  }
  const Hsumma h(grid, 1, 1);
  EXPECT_THROW(h.multiply(7, 13, 5, d.a, d.b, 4, 0), std::invalid_argument);
  EXPECT_THROW(h.multiply(7, 13, 5, d.a, d.b, 2, 3), std::invalid_argument);
  EXPECT_THROW(h.multiply(7, 13, 5, grid.rank() == 0 ? wrong : d.a, d.b, 4, 2),
               std::invalid_argument);
  // Still in step after all that.
  expect_gathered(problem, d, grid, h.multiply(7, 13, 5, d.a, d.b, 4, 2), "after the errors");
}

}  // namespace
}  // namespace rankshape::matmul
