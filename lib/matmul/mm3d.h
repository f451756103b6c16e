// The 3D matrix multiplication C = A B (van Duijn §3.1; notes/algorithms.md
// §4) on a q0 x q1 x q2 grid of ranks P(s,t,u), any shape (cube or not),
// any sizes (they need not divide: pieces differ by at most one row or
// column, some may be empty).
//
// Distribution (every piece a contiguous column-major Block):
//   A (m x k) is cut by BlockLayout{m, k, q0, q2} into blocks A(s,u); block
//     A(s,u) is spread over the t-fibre P(s,*,u): member t holds columns
//     part(cols of A(s,u), q1, t) of it.
//   B (k x n) is cut by BlockLayout{k, n, q2, q1} into blocks B(u,t), spread
//     over the s-fibre P(*,t,u): member s holds columns part(cols, q0, s).
//   C (m x n) is cut by BlockLayout{m, n, q0, q1} into blocks C(s,t), spread
//     over the u-fibre P(s,t,*): member u holds columns part(cols, q2, u).
// Steps, each inside fibres of one dimension:
//   (0) allgather A(s,u) along fibre(1) and B(u,t) along fibre(0): column
//       pieces of a column-major block concatenate into the whole block, so
//       they land in place;
//   (1) C~(s,t,u) = A(s,u) B(u,t), one local product (lib/matmul/local.h);
//   (2) reduce-scatter C(s,t) = sum over u of C~(s,t,u) along fibre(2),
//       each member keeping its column piece.
// Example, 2 x 2 x 2 grid, m = k = n = 4: A(0,1) is rows 0-1, columns 2-3
// of A; P(0,0,1) holds its column 2 and P(0,1,1) its column 3; after step
// (0) both hold all of A(0,1); P(0,0,0) and P(0,0,1) each compute a 2 x 2
// partial C(0,0), and after step (2) P(0,0,0) holds column 0 of C(0,0),
// P(0,0,1) column 1.
//
// The collectives are the MPI library's (MPI_Allgatherv and
// MPI_Reduce_scatter: the pieces are uneven in general, which the
// hierarchical collectives of lib/coll do not cover); on a shaped grid they
// run inside fibres that relabelling put on cheap links. A dimension of
// size 1 skips its collective (and its copy).
#ifndef RANKSHAPE_LIB_MATMUL_MM3D_H_
#define RANKSHAPE_LIB_MATMUL_MM3D_H_

#include <mpi.h>

#include <cstdint>
#include <vector>

#include "lib/matmul/grid_comm.h"
#include "lib/matmul/layout.h"

namespace rankshape::matmul {

/// C (m x n) = A (m x k) B (k x n).
struct MatmulSizes {
  std::int64_t m = 0, k = 0, n = 0;
};

/// Seconds (MPI_Wtime) spent in each step on this rank.
struct Timings {
  double allgather = 0, multiply = 0, reduce_scatter = 0;
  double total() const { return allgather + multiply + reduce_scatter; }
};

/// The part of A, B and C that the rank at coords (s, t, u) of a
/// dims = (q0, q1, q2) grid holds (see the distribution above). Throws
/// std::invalid_argument unless dims and coords have 3 entries that fit.
Piece piece_a_3d(const MatmulSizes& sizes, const std::vector<int>& dims,
                 const std::vector<int>& coords);
Piece piece_b_3d(const MatmulSizes& sizes, const std::vector<int>& dims,
                 const std::vector<int>& coords);
Piece piece_c_3d(const MatmulSizes& sizes, const std::vector<int>& dims,
                 const std::vector<int>& coords);

/// Collective over grid (3 dimensions): this rank's piece of C = A B, from
/// its pieces of A and B. timings, when given, receives this rank's
/// breakdown. Throws std::invalid_argument, before any communication, for a
/// grid that is not 3-dimensional, negative sizes, pieces of the wrong size
/// (on the ranks that hold them: a call that throws on some ranks only
/// leaves the others waiting, as with any MPI collective given bad
/// arguments), or blocks beyond MPI's int counts; mpi::MpiError when MPI
/// fails. compute = false skips the local product (the partial sums stay
/// 0, so C comes out 0) and moves the same messages: communication alone,
/// for benchmarks at scale (e.g. many simulated ranks).
Block multiply_3d(const GridComm& grid, const MatmulSizes& sizes, const Block& a, const Block& b,
                  Timings* timings = nullptr, bool compute = true);

/// Collective over grid: root (a rank of grid.comm()) holds the whole
/// column-major A (m x k) or B (k x n); every rank gets its piece. Throws
/// std::invalid_argument on every rank as scatter_pieces.
Block scatter_a_3d(const GridComm& grid, const MatmulSizes& sizes, const Block& whole, int root);
Block scatter_b_3d(const GridComm& grid, const MatmulSizes& sizes, const Block& whole, int root);
/// Collective over grid: root gets the whole C (m x n) from every rank's
/// piece (others an empty Block).
Block gather_c_3d(const GridComm& grid, const MatmulSizes& sizes, const Block& mine, int root);

}  // namespace rankshape::matmul

#endif  // RANKSHAPE_LIB_MATMUL_MM3D_H_
