// The communicators a grid algorithm runs on: the whole grid (rank =
// position, row-major with the last dimension fastest, as MPI_Cart_create
// numbers them) and, per dimension k, the fibre through this rank, in which
// this rank's rank is its coordinate k. Built either from a shaped
// communicator (relabelled ranks) or from any communicator in its own rank
// order (identity placement: the numbering of MPI_Cart_create without
// reordering; made with MPI_Comm_dup and one MPI_Comm_split per dimension,
// so the grid carries no MPI topology).
#ifndef RANKSHAPE_LIB_MATMUL_GRID_COMM_H_
#define RANKSHAPE_LIB_MATMUL_GRID_COMM_H_

#include <mpi.h>

#include <vector>

#include "lib/mpi/communicator.h"
#include "lib/shape/shape.h"

namespace rankshape::matmul {

class GridComm {
 public:
  /// Collective over comm, whose size must be the product of dims: a
  /// cartesian grid in comm's rank order, with its fibres (owned).
  /// Throws std::invalid_argument when the sizes do not fit.
  static GridComm cartesian(MPI_Comm comm, const std::vector<int>& dims);
  /// Local: the shaped communicator and its fibres, borrowed (the
  /// ShapedComm must outlive this).
  static GridComm shaped(const ShapedComm& s);

  MPI_Comm comm() const { return comm_.get(); }
  int size() const { return comm_.size(); }
  int rank() const { return comm_.rank(); }
  int ndims() const { return static_cast<int>(dims_.size()); }
  int dim(int k) const { return dims_[static_cast<std::size_t>(k)]; }
  int coord(int k) const { return coords_[static_cast<std::size_t>(k)]; }
  const std::vector<int>& dims() const { return dims_; }
  const std::vector<int>& coords() const { return coords_; }
  /// The fibre along dimension k through this rank; its rank is coord(k).
  MPI_Comm fibre(int k) const { return fibres_[static_cast<std::size_t>(k)].get(); }

 private:
  GridComm(mpi::Communicator comm, std::vector<mpi::Communicator> fibres, std::vector<int> dims,
           std::vector<int> coords);

  mpi::Communicator comm_;
  std::vector<mpi::Communicator> fibres_;
  std::vector<int> dims_, coords_;
};

}  // namespace rankshape::matmul

#endif  // RANKSHAPE_LIB_MATMUL_GRID_COMM_H_
