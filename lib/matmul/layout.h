// Where the pieces of a distributed matrix live. Sizes need not divide:
// n items cut into `parts` ranges give the first n % parts ranges one item
// more. Local blocks are column-major and contiguous (leading dimension =
// local rows), as BLAS, Eigen and ScaLAPACK expect.
#ifndef RANKSHAPE_LIB_MATMUL_LAYOUT_H_
#define RANKSHAPE_LIB_MATMUL_LAYOUT_H_

#include <mpi.h>

#include <cstdint>
#include <vector>

namespace rankshape::matmul {

struct Range {
  std::int64_t begin = 0, size = 0;
  std::int64_t end() const { return begin + size; }
};

/// Range i (0 <= i < parts) of n items cut into `parts` nearly equal ones.
/// Throws std::invalid_argument for n < 0, parts < 1 or i outside [0, parts).
Range part(std::int64_t n, int parts, int i);

/// A rows x cols matrix cut into prow x pcol blocks: block (i, j) holds
/// rows part(rows, prow, i) and columns part(cols, pcol, j).
struct BlockLayout {
  std::int64_t rows = 0, cols = 0;
  int prow = 1, pcol = 1;

  Range row_part(int i) const { return part(rows, prow, i); }
  Range col_part(int j) const { return part(cols, pcol, j); }
};

/// A column-major block with its own storage.
struct Block {
  std::int64_t rows = 0, cols = 0;
  std::vector<double> data;  // rows * cols, column-major

  Block() = default;
  Block(std::int64_t r, std::int64_t c) : rows(r), cols(c), data(static_cast<std::size_t>(r * c)) {}
  double& at(std::int64_t r, std::int64_t c) {
    return data[static_cast<std::size_t>(r + c * rows)];
  }
  double at(std::int64_t r, std::int64_t c) const {
    return data[static_cast<std::size_t>(r + c * rows)];
  }
  std::int64_t ld() const { return rows > 0 ? rows : 1; }
};

/// A rectangle of a global matrix: the rows and columns a rank holds, as a
/// contiguous column-major Block of rows.size x cols.size.
struct Piece {
  Range rows, cols;
};

/// Collective over comm: rank r gets the piece pieces[r] of the rows x cols
/// matrix that root holds whole (column-major; other ranks pass any Block,
/// e.g. an empty one). pieces (one per rank of comm) must be the same on
/// every rank; they may overlap or leave parts out. Throws
/// std::invalid_argument on every rank for a bad root, pieces outside the
/// matrix, or a whole matrix of the wrong size at root; for more than
/// INT_MAX elements (MPI counts) too.
Block scatter_pieces(std::int64_t rows, std::int64_t cols, const std::vector<Piece>& pieces,
                     const Block& whole, int root, MPI_Comm comm);

/// The inverse: root gets the rows x cols matrix with every rank's piece in
/// place (elements no piece covers are 0; where pieces overlap the higher
/// rank wins); other ranks get an empty Block. Throws std::invalid_argument
/// on every rank when some rank's Block is not the size of its piece.
Block gather_pieces(std::int64_t rows, std::int64_t cols, const std::vector<Piece>& pieces,
                    const Block& mine, int root, MPI_Comm comm);

/// The pieces of a block layout, in rank order: rank i * pcol + j holds
/// block (i, j).
std::vector<Piece> block_pieces(const BlockLayout& layout);

/// Collective over comm, whose rank i * layout.pcol + j holds block (i, j)
/// (comm's size must be prow * pcol). Root passes the whole matrix
/// (column-major, layout.rows x layout.cols); every rank gets its block.
/// Throws std::invalid_argument when comm's size does not fit the layout
/// (and as scatter_pieces).
Block scatter_blocks(const BlockLayout& layout, const Block& whole, int root, MPI_Comm comm);

/// The inverse: root gets the whole matrix (others an empty Block).
Block gather_blocks(const BlockLayout& layout, const Block& mine, int root, MPI_Comm comm);

/// ScaLAPACK's 2D block-cyclic layout (descriptor fields MB, NB, NPROW,
/// NPCOL, RSRC = CSRC = 0; process grid row-major, rank = i * pcol + j, as
/// Cblacs_gridinit with "Row"): global row g lives on process row
/// (g / mb) % prow at local row (g / (mb * prow)) * mb + g % mb (columns
/// alike); process row i holds numroc(rows, mb, i, prow) rows. The local
/// Block is what ScaLAPACK expects with LLD = max(1, local rows).
struct CyclicLayout {
  std::int64_t rows = 0, cols = 0;
  std::int64_t mb = 64, nb = 64;
  int prow = 1, pcol = 1;
};
/// ScaLAPACK's NUMROC with ISRCPROC = 0: how many of n items, dealt in
/// blocks of nb over nprocs processes, process iproc holds. Throws
/// std::invalid_argument for n < 0, nb < 1 or iproc outside [0, nprocs).
std::int64_t numroc(std::int64_t n, std::int64_t nb, int iproc, int nprocs);

/// Collective over comm (prow * pcol ranks in each layout; the two process
/// grids may differ in shape): block layout to block-cyclic and back, with
/// one MPI_Alltoallv. Throws std::invalid_argument on every rank when the
/// matrix sizes differ, a grid does not fit comm, mb or nb is below 1, or a
/// rank's Block is not the size its layout gives it.
Block to_cyclic(const BlockLayout& from, const Block& mine, const CyclicLayout& to, MPI_Comm comm);
Block from_cyclic(const CyclicLayout& from, const Block& mine, const BlockLayout& to,
                  MPI_Comm comm);

}  // namespace rankshape::matmul

#endif  // RANKSHAPE_LIB_MATMUL_LAYOUT_H_
