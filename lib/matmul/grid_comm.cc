// Grid communicators for the matrix multiplication algorithms. cartesian()
// keeps the ranks as given (a duplicate of the communicator, and one
// MPI_Comm_split per dimension); shaped() borrows what relabel_comm() made,
// whose rank order is the same row-major grid order.
#include "lib/matmul/grid_comm.h"

#include <stdexcept>
#include <string>
#include <utility>

#include "lib/mpi/error.h"

namespace rankshape::matmul {

GridComm::GridComm(mpi::Communicator comm, std::vector<mpi::Communicator> fibres,
                   std::vector<int> dims, std::vector<int> coords)
    : comm_(std::move(comm)),
      fibres_(std::move(fibres)),
      dims_(std::move(dims)),
      coords_(std::move(coords)) {}

GridComm GridComm::cartesian(MPI_Comm comm, const std::vector<int>& dims) {
  if (comm == MPI_COMM_NULL) throw std::invalid_argument("GridComm::cartesian: MPI_COMM_NULL");
  if (dims.empty()) throw std::invalid_argument("GridComm::cartesian: no dimensions");
  long long product = 1;
  for (int d : dims) {
    if (d < 1) throw std::invalid_argument("GridComm::cartesian: a dimension below 1");
    product *= d;
    if (product > (1LL << 31)) break;
  }
  int size = 0;
  mpi::check(MPI_Comm_size(comm, &size), "MPI_Comm_size");
  if (product != size) {
    std::string text;
    for (int d : dims) text += (text.empty() ? "" : "x") + std::to_string(d);
    throw std::invalid_argument("GridComm::cartesian: a " + text + " grid on " +
                                std::to_string(size) + " ranks");
  }
  // Rank r of comm is grid position r (row-major, last dimension fastest,
  // as MPI_Cart_create numbers them without reordering).
  const mpi::Communicator given(comm, mpi::Ownership::kBorrow);
  mpi::Communicator grid = given.dup();
  const int ndims = static_cast<int>(dims.size());
  std::vector<int> coords(dims.size());
  for (int k = ndims - 1, r = grid.rank(); k >= 0; --k) {
    coords[static_cast<std::size_t>(k)] = r % dims[static_cast<std::size_t>(k)];
    r /= dims[static_cast<std::size_t>(k)];
  }
  // Fibre k: color = the other coordinates, key = coordinate k (what
  // MPI_Cart_sub would give).
  std::vector<mpi::Communicator> fibres;
  for (int k = 0; k < ndims; ++k) {
    int color = 0;
    for (int j = 0; j < ndims; ++j) {
      if (j != k) {
        color = color * dims[static_cast<std::size_t>(j)] + coords[static_cast<std::size_t>(j)];
      }
    }
    fibres.push_back(grid.split(color, coords[static_cast<std::size_t>(k)]));
  }
  return GridComm(std::move(grid), std::move(fibres), dims, std::move(coords));
}

GridComm GridComm::shaped(const ShapedComm& s) {
  std::vector<mpi::Communicator> fibres;
  for (int k = 0; k < s.grid().ndims(); ++k) {
    fibres.emplace_back(s.fibre(k).get(), mpi::Ownership::kBorrow);
  }
  return GridComm(mpi::Communicator(s.comm().get(), mpi::Ownership::kBorrow), std::move(fibres),
                  s.grid().dims(), s.coords());
}

}  // namespace rankshape::matmul
