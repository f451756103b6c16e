// The 3D algorithm; the distribution and a worked example are in mm3d.h.
// Per rank it moves the A and B blocks in (allgather) and its C block's
// partial out (reduce-scatter): about 3 n^2 / p^(2/3) words on a cube.
#include "lib/matmul/mm3d.h"

#include <climits>
#include <stdexcept>
#include <string>
#include <utility>

#include "lib/matmul/local.h"
#include "lib/mpi/error.h"

namespace rankshape::matmul {
namespace {

using mpi::check;

// A buffer for MPI even when empty: some MPI libraries (SimGrid SMPI 3.32's
// MPI_Reduce_scatter checks the receive buffer against every rank's count)
// refuse a null pointer where nothing is sent or received.
double* buffer(std::vector<double>& v, double& empty) { return v.empty() ? &empty : v.data(); }
const double* buffer(const std::vector<double>& v, const double& empty) {
  return v.empty() ? &empty : v.data();
}

void check_grid(const char* what, const std::vector<int>& dims, const std::vector<int>& coords) {
  if (dims.size() != 3 || coords.size() != 3) {
    throw std::invalid_argument(std::string(what) +
                                ": the 3D algorithm needs a 3-dimensional grid");
  }
  for (std::size_t k = 0; k < 3; ++k) {
    if (dims[k] < 1 || coords[k] < 0 || coords[k] >= dims[k]) {
      throw std::invalid_argument(std::string(what) + ": coordinates outside the grid");
    }
  }
}

void check_sizes(const char* what, const MatmulSizes& s) {
  if (s.m < 0 || s.k < 0 || s.n < 0) {
    throw std::invalid_argument(std::string(what) + ": negative matrix size");
  }
}

// Columns `cols` of a block cut into `parts` pieces: piece i, as global columns.
Range sub_columns(const Range& cols, int parts, int i) {
  const Range r = part(cols.size, parts, i);
  return Range{cols.begin + r.begin, r.size};
}

// Rows x column pieces of one block: counts and displacements (elements)
// of the pieces, for MPI_Allgatherv / MPI_Reduce_scatter.
struct PieceCounts {
  std::vector<int> count, displ;
};
PieceCounts column_pieces(std::int64_t rows, std::int64_t cols, int parts, const char* what) {
  if (rows * cols > INT_MAX) {
    throw std::invalid_argument(std::string(what) + ": a block of " + std::to_string(rows) + " x " +
                                std::to_string(cols) + " exceeds MPI's int counts");
  }
  PieceCounts c;
  for (int i = 0; i < parts; ++i) {
    const Range r = part(cols, parts, i);
    c.count.push_back(static_cast<int>(rows * r.size));
    c.displ.push_back(static_cast<int>(rows * r.begin));
  }
  return c;
}

void check_piece(const char* what, const char* name, const Block& b, const Piece& p) {
  if (b.rows != p.rows.size || b.cols != p.cols.size ||
      static_cast<std::int64_t>(b.data.size()) != b.rows * b.cols) {
    throw std::invalid_argument(std::string(what) + ": this rank's piece of " + name + " is " +
                                std::to_string(b.rows) + " x " + std::to_string(b.cols) +
                                "; expected " + std::to_string(p.rows.size) + " x " +
                                std::to_string(p.cols.size));
  }
}

// Grid coordinates of grid rank r (row-major, last dimension fastest).
std::vector<int> coords_of(const std::vector<int>& dims, int r) {
  std::vector<int> c(dims.size());
  for (std::size_t k = dims.size(); k-- > 0;) {
    c[k] = r % dims[k];
    r /= dims[k];
  }
  return c;
}

using PieceOf = Piece (*)(const MatmulSizes&, const std::vector<int>&, const std::vector<int>&);

std::vector<Piece> all_pieces(const GridComm& grid, const MatmulSizes& sizes, PieceOf piece_of) {
  std::vector<Piece> pieces;
  for (int r = 0; r < grid.size(); ++r) {
    pieces.push_back(piece_of(sizes, grid.dims(), coords_of(grid.dims(), r)));
  }
  return pieces;
}

void check_grid_comm(const char* what, const GridComm& grid) {
  if (grid.ndims() != 3) {
    throw std::invalid_argument(std::string(what) +
                                ": the 3D algorithm needs a 3-dimensional grid");
  }
}

}  // namespace

Piece piece_a_3d(const MatmulSizes& sizes, const std::vector<int>& dims,
                 const std::vector<int>& coords) {
  check_grid("piece_a_3d", dims, coords);
  check_sizes("piece_a_3d", sizes);
  const BlockLayout l{sizes.m, sizes.k, dims[0], dims[2]};
  return Piece{l.row_part(coords[0]), sub_columns(l.col_part(coords[2]), dims[1], coords[1])};
}

Piece piece_b_3d(const MatmulSizes& sizes, const std::vector<int>& dims,
                 const std::vector<int>& coords) {
  check_grid("piece_b_3d", dims, coords);
  check_sizes("piece_b_3d", sizes);
  const BlockLayout l{sizes.k, sizes.n, dims[2], dims[1]};
  return Piece{l.row_part(coords[2]), sub_columns(l.col_part(coords[1]), dims[0], coords[0])};
}

Piece piece_c_3d(const MatmulSizes& sizes, const std::vector<int>& dims,
                 const std::vector<int>& coords) {
  check_grid("piece_c_3d", dims, coords);
  check_sizes("piece_c_3d", sizes);
  const BlockLayout l{sizes.m, sizes.n, dims[0], dims[1]};
  return Piece{l.row_part(coords[0]), sub_columns(l.col_part(coords[1]), dims[2], coords[2])};
}

Block multiply_3d(const GridComm& grid, const MatmulSizes& sizes, const Block& a, const Block& b,
                  Timings* timings, bool compute) {
  constexpr const char* kWhat = "multiply_3d";
  check_grid_comm(kWhat, grid);
  check_piece(kWhat, "A", a, piece_a_3d(sizes, grid.dims(), grid.coords()));
  check_piece(kWhat, "B", b, piece_b_3d(sizes, grid.dims(), grid.coords()));
  const int q0 = grid.dim(0), q1 = grid.dim(1), q2 = grid.dim(2);
  const int s = grid.coord(0), t = grid.coord(1), u = grid.coord(2);
  // Block A(s,u) is ma x ka, B(u,t) ka x nb, C(s,t) ma x nb.
  const std::int64_t ma = part(sizes.m, q0, s).size;
  const std::int64_t ka = part(sizes.k, q2, u).size;
  const std::int64_t nb = part(sizes.n, q1, t).size;
  const PieceCounts a_pieces = column_pieces(ma, ka, q1, kWhat);
  const PieceCounts b_pieces = column_pieces(ka, nb, q0, kWhat);
  const PieceCounts c_pieces = column_pieces(ma, nb, q2, kWhat);
  Timings local;
  // Stand-ins for empty buffers; two, since MPICH refuses aliased send and
  // receive buffers.
  double empty_in = 0, empty_out = 0;

  // (0) The whole blocks A(s,u) and B(u,t), each from its fibre.
  double start = MPI_Wtime();
  std::vector<double> a_block, b_block;
  const double* a_whole = a.data.data();
  const double* b_whole = b.data.data();
  if (q1 > 1) {
    a_block.resize(static_cast<std::size_t>(ma * ka));
    check(MPI_Allgatherv(buffer(a.data, empty_in), a_pieces.count[static_cast<std::size_t>(t)],
                         MPI_DOUBLE, buffer(a_block, empty_out), a_pieces.count.data(),
                         a_pieces.displ.data(), MPI_DOUBLE, grid.fibre(1)),
          "MPI_Allgatherv (A along fibre 1)");
    a_whole = a_block.data();
  }
  if (q0 > 1) {
    b_block.resize(static_cast<std::size_t>(ka * nb));
    check(MPI_Allgatherv(buffer(b.data, empty_in), b_pieces.count[static_cast<std::size_t>(s)],
                         MPI_DOUBLE, buffer(b_block, empty_out), b_pieces.count.data(),
                         b_pieces.displ.data(), MPI_DOUBLE, grid.fibre(0)),
          "MPI_Allgatherv (B along fibre 0)");
    b_whole = b_block.data();
  }
  double now = MPI_Wtime();
  local.allgather = now - start;

  // (1) This rank's share of C(s,t): the k-range of u.
  start = now;
  Block partial(ma, nb);
  if (compute) {
    multiply_add(ma, nb, ka, a_whole, ma > 0 ? ma : 1, b_whole, ka > 0 ? ka : 1,
                 partial.data.data(), partial.ld());
  }
  now = MPI_Wtime();
  local.multiply = now - start;

  // (2) Sum over u, each member of the u-fibre keeping its column piece.
  start = now;
  Block mine;
  if (q2 > 1) {
    const Range cols = part(nb, q2, u);
    mine = Block(ma, cols.size);
    check(MPI_Reduce_scatter(buffer(partial.data, empty_in), buffer(mine.data, empty_out),
                             c_pieces.count.data(), MPI_DOUBLE, MPI_SUM, grid.fibre(2)),
          "MPI_Reduce_scatter (C along fibre 2)");
  } else {
    mine = std::move(partial);
  }
  local.reduce_scatter = MPI_Wtime() - start;
  if (timings != nullptr) *timings = local;
  return mine;
}

Block scatter_a_3d(const GridComm& grid, const MatmulSizes& sizes, const Block& whole, int root) {
  check_grid_comm("scatter_a_3d", grid);
  return scatter_pieces(sizes.m, sizes.k, all_pieces(grid, sizes, &piece_a_3d), whole, root,
                        grid.comm());
}

Block scatter_b_3d(const GridComm& grid, const MatmulSizes& sizes, const Block& whole, int root) {
  check_grid_comm("scatter_b_3d", grid);
  return scatter_pieces(sizes.k, sizes.n, all_pieces(grid, sizes, &piece_b_3d), whole, root,
                        grid.comm());
}

Block gather_c_3d(const GridComm& grid, const MatmulSizes& sizes, const Block& mine, int root) {
  check_grid_comm("gather_c_3d", grid);
  return gather_pieces(sizes.m, sizes.n, all_pieces(grid, sizes, &piece_c_3d), mine, root,
                       grid.comm());
}

}  // namespace rankshape::matmul
