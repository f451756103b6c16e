// SUMMA and hierarchical SUMMA (HSUMMA, Hasanov et al.) on a 2-dim grid:
// C = A B with A (m x k), B (k x n) and C (m x n) in BlockLayout over the
// grid's pr x pc = dim(0) x dim(1) processes (process (i, j), at coordinates
// (i, j), holds row part i and column part j of each matrix).
//
// The k index is walked in panels. For each panel, the process column that
// owns those columns of A broadcasts its (local rows x w) piece along the
// row fibre, the process row that owns those rows of B its (w x local
// columns) piece along the column fibre, and every process adds the product
// to its block of C. HSUMMA splits each broadcast in two: an outer panel
// (width M) goes between groups of the grid first, then inside every group
// in pieces of width b. Broadcasts go through coll::dispatch::bcast.
#ifndef RANKSHAPE_LIB_MATMUL_SUMMA_H_
#define RANKSHAPE_LIB_MATMUL_SUMMA_H_

#include <cstdint>

#include "lib/matmul/grid_comm.h"
#include "lib/matmul/layout.h"
#include "lib/mpi/communicator.h"

namespace rankshape::matmul {

/// Where one rank's time went in one multiplication (MPI_Wtime seconds).
struct SummaTimings {
  /// All broadcasts of A and B panels, packing B's panels included.
  double bcast_seconds = 0;
  /// HSUMMA: the part of bcast_seconds spent between groups (0 for SUMMA).
  double outer_bcast_seconds = 0;
  /// The local products (multiply_add).
  double multiply_seconds = 0;
  /// The whole call, argument checks included.
  double total_seconds = 0;
  /// Inner steps: broadcasts of a b-wide piece followed by a local product.
  std::int64_t steps = 0;
};

/// Collective over grid.comm() (2 dimensions): C = A B by SUMMA with panels
/// of at most `panel` columns of A (rows of B); a and b are this rank's
/// blocks of A and B, the result its block of C. Panels never cross a
/// boundary of A's column parts or B's row parts, so sizes need not divide.
/// Fills *timings when given. compute = false skips the local products (C
/// comes out 0) and broadcasts the same panels: communication alone, for
/// benchmarks at scale. Throws std::invalid_argument on every rank when the
/// grid is not 2-dim, a size is negative, panel < 1 or any rank's blocks do
/// not fit the layout.
Block summa(const GridComm& grid, std::int64_t m, std::int64_t n, std::int64_t k, const Block& a,
            const Block& b, std::int64_t panel, SummaTimings* timings = nullptr,
            bool compute = true);

/// HSUMMA on a grid cut into group_rows x group_cols groups of
/// (pr / group_rows) x (pc / group_cols) consecutive processes. Owns the
/// communicators it needs, split once from the grid's fibres; the grid must
/// outlive it. group_rows = group_cols = 1, or one group per process, is
/// SUMMA.
class Hsumma {
 public:
  /// Collective over grid.comm(). Throws std::invalid_argument on every rank
  /// when the grid is not 2-dim or group_rows does not divide pr (or
  /// group_cols pc).
  Hsumma(const GridComm& grid, int group_rows, int group_cols);

  /// Collective over the grid: C = A B (blocks as for summa()). Outer panels
  /// of at most outer_panel columns go between groups, each broadcast inside
  /// the groups in pieces of at most inner_panel (the last piece of an outer
  /// panel may be narrower). compute = false skips the local products, as
  /// for summa(). Throws std::invalid_argument on every rank when a size is
  /// negative, inner_panel < 1, outer_panel < inner_panel or any rank's
  /// blocks do not fit.
  Block multiply(std::int64_t m, std::int64_t n, std::int64_t k, const Block& a, const Block& b,
                 std::int64_t outer_panel, std::int64_t inner_panel,
                 SummaTimings* timings = nullptr, bool compute = true) const;

  int group_rows() const { return group_rows_; }
  int group_cols() const { return group_cols_; }

 private:
  const GridComm* grid_;
  int group_rows_, group_cols_;
  // Along the row fibre: the same position in every group (rank = group
  // column), and this rank's group (rank = position in the group); along
  // the column fibre likewise.
  mpi::Communicator row_outer_, row_inner_, col_outer_, col_inner_;
};

}  // namespace rankshape::matmul

#endif  // RANKSHAPE_LIB_MATMUL_SUMMA_H_
