// SUMMA and HSUMMA over block layouts.
//
// The idea: C(i, j) = sum over t of A(i, t) B(t, j), with t walked in
// panels. A panel of k lies in one process column's part of A's columns and
// one process row's part of B's rows (the walk cuts k at both partitions'
// boundaries). Its owner column broadcasts A's piece along each row fibre,
// its owner row B's piece along each column fibre; then every process has
// the A(i, t) and B(t, j) it needs for a rank-w update of its C block.
//
// Example: a 2 x 3 grid, k = 5. A's columns are cut into 3 parts {0,1},
// {2,3}, {4}; B's rows into 2 parts {0,1,2}, {3,4}. The walk's segments are
// {0,1} (A column 0, B row 0), {2} (A column 1, B row 0), {3} (A column 1,
// B row 1) and {4} (A column 2, B row 1); with b = 1, {0,1} is two panels.
//
// HSUMMA: with group_cols = 3 (one process column per group) and a 6-wide
// grid, process column c sits in group c / 2 at position c % 2. The owner
// (say column 3: group 1, position 1) first broadcasts its outer panel to
// columns 1 and 5 (position 1 of the other groups: the row's outer
// communicator), then columns 1, 3 and 5 each broadcast it inside their
// group, to columns 0, 2 and 4, in pieces of width b (the inner
// communicator). B's rows go the same way along the columns.
//
// Buffers: A's panel is a column range of a column-major block, so the
// owner broadcasts straight from its block. B's panel is a row range (not
// contiguous): the owner packs it piece by piece, each piece w x (local
// columns) column-major, so that every piece of an outer panel is itself
// contiguous.
#include "lib/matmul/summa.h"

#include <mpi.h>

#include <algorithm>
#include <climits>
#include <stdexcept>
#include <string>
#include <vector>

#include "lib/coll/dispatch.h"
#include "lib/matmul/local.h"
#include "lib/mpi/error.h"
#include "lib/shape/shape.h"

namespace rankshape::matmul {
namespace {

// The communicators one multiplication runs on (outer ones null for
// SUMMA). A group is group_height x group_width consecutive processes;
// inner ranks are positions inside a group, outer ranks group indices.
struct Plan {
  MPI_Comm row_outer = MPI_COMM_NULL, row_inner = MPI_COMM_NULL;
  MPI_Comm col_outer = MPI_COMM_NULL, col_inner = MPI_COMM_NULL;
  int group_height = 1, group_width = 1;  // processes per group: rows, columns
};

int comm_size(MPI_Comm comm) {
  if (comm == MPI_COMM_NULL) return 1;
  int size = 0;
  mpi::check(MPI_Comm_size(comm, &size), "MPI_Comm_size");
  return size;
}

// A broadcast that does nothing where there is nothing to do (every member
// of comm sees the same size and count, so all skip together).
void bcast(double* data, std::int64_t count, int root, MPI_Comm comm) {
  if (count == 0 || comm_size(comm) == 1) return;
  mpi::check(coll::dispatch::bcast(data, static_cast<int>(count), MPI_DOUBLE, root, comm),
             "MPI_Bcast");
}

// The index of the part (of n items in `parts`) that holds item t, starting
// the search at `from` (parts are walked in order).
int owner(std::int64_t n, int parts, std::int64_t t, int from) {
  while (part(n, parts, from).end() <= t) ++from;
  return from;
}

// This rank's argument errors ("" when none), checked by every rank and
// agreed on before any broadcast so that no rank waits for one that threw.
std::string check_blocks(const GridComm& grid, std::int64_t m, std::int64_t n, std::int64_t k,
                         const Block& a, const Block& b) {
  if (grid.ndims() != 2) {
    return "SUMMA needs a 2-dim grid, got " + std::to_string(grid.ndims()) + " dimensions";
  }
  if (m < 0 || n < 0 || k < 0) {
    return "negative matrix size " + std::to_string(m) + " x " + std::to_string(n) + " x " +
           std::to_string(k);
  }
  const int pr = grid.dim(0), pc = grid.dim(1), i = grid.coord(0), j = grid.coord(1);
  const std::int64_t rows = part(m, pr, i).size, cols = part(n, pc, j).size;
  const std::int64_t a_cols = part(k, pc, j).size, b_rows = part(k, pr, i).size;
  auto fits = [](const Block& x, std::int64_t r, std::int64_t c) {
    return x.rows == r && x.cols == c && x.data.size() == static_cast<std::size_t>(r * c);
  };
  if (!fits(a, rows, a_cols)) {
    return "A's block is " + std::to_string(a.rows) + " x " + std::to_string(a.cols) +
           ", expected " + std::to_string(rows) + " x " + std::to_string(a_cols);
  }
  if (!fits(b, b_rows, cols)) {
    return "B's block is " + std::to_string(b.rows) + " x " + std::to_string(b.cols) +
           ", expected " + std::to_string(b_rows) + " x " + std::to_string(cols);
  }
  return "";
}

std::string check_panels(std::int64_t outer, std::int64_t inner, std::int64_t rows,
                         std::int64_t cols) {
  if (inner < 1) return "panel width " + std::to_string(inner) + " is below 1";
  if (outer < inner) {
    return "outer panel width " + std::to_string(outer) + " is below the inner width " +
           std::to_string(inner);
  }
  if (std::max(rows, cols) > INT_MAX / std::max<std::int64_t>(outer, 1)) {
    return "a panel of " + std::to_string(outer) + " x " + std::to_string(std::max(rows, cols)) +
           " elements is too large for one broadcast";
  }
  return "";
}

Block run(const GridComm& grid, const Plan& plan, std::int64_t m, std::int64_t n, std::int64_t k,
          const Block& a, const Block& b, std::int64_t outer_width, std::int64_t inner_width,
          SummaTimings* timings, bool compute) {
  const double start = MPI_Wtime();
  std::string error = check_blocks(grid, m, n, k, a, b);
  if (error.empty()) {
    error = check_panels(outer_width, inner_width, part(m, grid.dim(0), grid.coord(0)).size,
                         part(n, grid.dim(1), grid.coord(1)).size);
  }
  agree_on_errors(grid.comm(), error);

  const int pr = grid.dim(0), pc = grid.dim(1), i = grid.coord(0), j = grid.coord(1);
  const std::int64_t rows = part(m, pr, i).size, cols = part(n, pc, j).size;
  const std::int64_t lda = std::max<std::int64_t>(rows, 1);
  const Range a_mine = part(k, pc, j), b_mine = part(k, pr, i);
  const int gh = plan.group_height, gw = plan.group_width;

  Block c(rows, cols);
  std::vector<double> a_panel(static_cast<std::size_t>(rows * std::min(outer_width, k)));
  std::vector<double> b_panel(static_cast<std::size_t>(std::min(outer_width, k) * cols));
  SummaTimings t;

  int a_owner = 0, b_owner = 0;  // process column of A's, row of B's panel
  for (std::int64_t s = 0; s < k;) {
    a_owner = owner(k, pc, s, a_owner);
    b_owner = owner(k, pr, s, b_owner);
    const std::int64_t segment_end =
        std::min(part(k, pc, a_owner).end(), part(k, pr, b_owner).end());
    // Where the owners sit: group and position in the group.
    const int a_group = a_owner / gw, a_pos = a_owner % gw;
    const int b_group = b_owner / gh, b_pos = b_owner % gh;
    for (std::int64_t width = 0; s < segment_end; s += width) {
      width = std::min(outer_width, segment_end - s);
      // A: the owner's panel is in its block; everyone else's arrives in
      // a_panel (between groups for those at the owner's position, inside
      // the group for the rest). B: the owner packs its rows, each piece
      // contiguous.
      double* a_src = a_panel.data();
      if (j == a_owner && rows > 0) {
        a_src = const_cast<double*>(a.data.data()) + (s - a_mine.begin) * rows;
      }
      double t0 = MPI_Wtime();
      if (i == b_owner) {
        double* out = b_panel.data();
        for (std::int64_t p = s; p < s + width; p += inner_width) {
          const std::int64_t w = std::min(inner_width, s + width - p);
          for (std::int64_t col = 0; col < cols; ++col) {
            for (std::int64_t r = 0; r < w; ++r) *out++ = b.at(p - b_mine.begin + r, col);
          }
        }
      }
      const double packed = MPI_Wtime();
      if (j % gw == a_pos) bcast(a_src, rows * width, a_group, plan.row_outer);
      if (i % gh == b_pos) bcast(b_panel.data(), width * cols, b_group, plan.col_outer);
      const double outer_done = MPI_Wtime();
      t.outer_bcast_seconds += outer_done - packed;
      t.bcast_seconds += outer_done - t0;

      for (std::int64_t p = 0; p < width; p += inner_width) {
        const std::int64_t w = std::min(inner_width, width - p);
        double* a_piece = a_src + p * rows;
        double* b_piece = b_panel.data() + p * cols;
        t0 = MPI_Wtime();
        bcast(a_piece, rows * w, a_pos, plan.row_inner);
        bcast(b_piece, w * cols, b_pos, plan.col_inner);
        const double t1 = MPI_Wtime();
        if (compute) multiply_add(rows, cols, w, a_piece, lda, b_piece, w, c.data.data(), c.ld());
        t.bcast_seconds += t1 - t0;
        t.multiply_seconds += MPI_Wtime() - t1;
        ++t.steps;
      }
    }
  }
  if (plan.row_outer == MPI_COMM_NULL) t.outer_bcast_seconds = 0;  // SUMMA
  t.total_seconds = MPI_Wtime() - start;
  if (timings) *timings = t;
  return c;
}

// The groups' sizes: throws std::invalid_argument (the same on every rank)
// unless the groups tile the 2-dim grid. Returns group_rows.
int checked_groups(const GridComm& grid, int group_rows, int group_cols) {
  std::string error;
  if (grid.ndims() != 2) {
    error = "HSUMMA needs a 2-dim grid, got " + std::to_string(grid.ndims()) + " dimensions";
  } else if (group_rows < 1 || grid.dim(0) % group_rows != 0) {
    error = "HSUMMA: group_rows = " + std::to_string(group_rows) + " does not divide the " +
            std::to_string(grid.dim(0)) + " process rows";
  } else if (group_cols < 1 || grid.dim(1) % group_cols != 0) {
    error = "HSUMMA: group_cols = " + std::to_string(group_cols) + " does not divide the " +
            std::to_string(grid.dim(1)) + " process columns";
  }
  agree_on_errors(grid.comm(), error);
  return group_rows;
}

// The communicators along one fibre (size dim, this rank at coord) cut
// into `groups` groups of consecutive ranks. When there is one group, or
// one rank per group, one of them is the fibre itself and the other this
// rank alone: no split, and no new communicator for the collectives to set
// up.
mpi::Communicator outer_comm(MPI_Comm fibre, int dim, int groups, int coord) {
  const int size = dim / groups;
  if (groups == 1) return mpi::Communicator(MPI_COMM_SELF, mpi::Ownership::kBorrow);
  if (size == 1) return mpi::Communicator(fibre, mpi::Ownership::kBorrow);
  return mpi::Communicator(fibre, mpi::Ownership::kBorrow).split(coord % size, coord / size);
}

mpi::Communicator inner_comm(MPI_Comm fibre, int dim, int groups, int coord) {
  const int size = dim / groups;
  if (groups == 1) return mpi::Communicator(fibre, mpi::Ownership::kBorrow);
  if (size == 1) return mpi::Communicator(MPI_COMM_SELF, mpi::Ownership::kBorrow);
  return mpi::Communicator(fibre, mpi::Ownership::kBorrow).split(coord / size, coord % size);
}

}  // namespace

Block summa(const GridComm& grid, std::int64_t m, std::int64_t n, std::int64_t k, const Block& a,
            const Block& b, std::int64_t panel, SummaTimings* timings, bool compute) {
  Plan plan;
  if (grid.ndims() == 2) {
    plan.row_inner = grid.fibre(1);
    plan.col_inner = grid.fibre(0);
    plan.group_height = grid.dim(0);
    plan.group_width = grid.dim(1);
  }
  return run(grid, plan, m, n, k, a, b, panel, panel, timings, compute);
}

// Row fibre (rank = process column j): group j / width, position j % width.
// The outer communicator joins equal positions (rank = group), the inner
// one equal groups (rank = position).
Hsumma::Hsumma(const GridComm& grid, int group_rows, int group_cols)
    : grid_(&grid),
      group_rows_(checked_groups(grid, group_rows, group_cols)),
      group_cols_(group_cols),
      row_outer_(outer_comm(grid.fibre(1), grid.dim(1), group_cols, grid.coord(1))),
      row_inner_(inner_comm(grid.fibre(1), grid.dim(1), group_cols, grid.coord(1))),
      col_outer_(outer_comm(grid.fibre(0), grid.dim(0), group_rows, grid.coord(0))),
      col_inner_(inner_comm(grid.fibre(0), grid.dim(0), group_rows, grid.coord(0))) {}

Block Hsumma::multiply(std::int64_t m, std::int64_t n, std::int64_t k, const Block& a,
                       const Block& b, std::int64_t outer_panel, std::int64_t inner_panel,
                       SummaTimings* timings, bool compute) const {
  Plan plan;
  plan.row_outer = row_outer_.get();
  plan.row_inner = row_inner_.get();
  plan.col_outer = col_outer_.get();
  plan.col_inner = col_inner_.get();
  plan.group_height = grid_->dim(0) / group_rows_;
  plan.group_width = grid_->dim(1) / group_cols_;
  return run(*grid_, plan, m, n, k, a, b, outer_panel, inner_panel, timings, compute);
}

}  // namespace rankshape::matmul
