// rankshape's C++ interface for programs built against an installed
// rankshape: a header-only layer over the C interface (rankshape.h).
//
//   #include <rankshape/rankshape.hpp>
//   rankshape::Options options;
//   options.pattern = "stencil:periodic";
//   rankshape::Shape shape(MPI_COMM_WORLD, {0, 0, 0}, options);   // collective
//   int down, up;
//   MPI_Cart_shift(shape.comm(), 0, 1, &down, &up);
//
// Why a header over C: librankshape.so exports the C functions and nothing
// else, so no C++ type, exception or standard-library object crosses the
// library boundary. A program may use any C++ compiler and standard
// library; the shared library's ABI is the C one (rankshape.h), and its
// SONAME (librankshape.so.MAJOR) changes only when that does. MPI's C++
// bindings play no part (MPI_Comm is the C handle).
#ifndef RANKSHAPE_LIB_SHAPE_RANKSHAPE_HPP_
#define RANKSHAPE_LIB_SHAPE_RANKSHAPE_HPP_

// MPI's C interface only: its deprecated C++ bindings need a library of
// their own (a program that wants them includes <mpi.h> first).
#ifndef OMPI_SKIP_MPICXX
#define OMPI_SKIP_MPICXX 1
#endif
#ifndef MPICH_SKIP_MPICXX
#define MPICH_SKIP_MPICXX 1
#endif

#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "rankshape/rankshape.h"

namespace rankshape {

/// A failed call: the status (RANKSHAPE_ERR_*), the message, and for
/// RANKSHAPE_ERR_MPI the MPI error class.
class Error : public std::runtime_error {
 public:
  Error(int status, const std::string& message, int mpi_error_class)
      : std::runtime_error(message), status_(status), mpi_error_class_(mpi_error_class) {}
  int status() const { return status_; }
  int mpi_error_class() const { return mpi_error_class_; }

 private:
  int status_;
  int mpi_error_class_;
};

/// The fields of rankshape_options; empty strings take the defaults.
struct Options {
  std::string source = "auto";  // auto, measure, hierarchical, model, file, matrix
  std::string cost_file;        // source "file"
  std::vector<double> matrix;   // source "matrix": p x p, row-major
  std::string algorithm = "auto";
  unsigned long long seed = 1;
  double time_limit = 5;     // seconds of search per rank
  std::string pattern;       // "fibres" (default) or "stencil[:OPTION,...]"
  std::string objective;     // the pattern's default when empty
  std::vector<int> periods;  // of comm()'s topology; empty: the stencil's
};

/// The version of the library in use.
inline std::string version() { return rankshape_version(); }

/// A shaped communicator and its fibres (rankshape_relabel_comm()); owns
/// them, freed with it (before MPI_Finalize).
class Shape {
 public:
  /// Collective over comm; zeros in dims are chosen like MPI_Dims_create.
  /// Throws Error, the same on every rank.
  Shape(MPI_Comm comm, const std::vector<int>& dims, const Options& options = {}) {
    rankshape_options o;
    rankshape_options_init(&o);
    o.source = options.source.empty() ? nullptr : options.source.c_str();
    o.cost_file = options.cost_file.empty() ? nullptr : options.cost_file.c_str();
    o.matrix = options.matrix.empty() ? nullptr : options.matrix.data();
    o.algorithm = options.algorithm.empty() ? nullptr : options.algorithm.c_str();
    o.seed = options.seed;
    o.time_limit = options.time_limit;
    o.pattern = options.pattern.empty() ? nullptr : options.pattern.c_str();
    o.objective = options.objective.empty() ? nullptr : options.objective.c_str();
    o.periods = options.periods.empty() ? nullptr : options.periods.data();
    if (!options.periods.empty() && options.periods.size() != dims.size()) {
      throw Error(RANKSHAPE_ERR_ARG, "rankshape::Shape: one period per dimension", MPI_SUCCESS);
    }
    const int status =
        rankshape_relabel_comm(comm, static_cast<int>(dims.size()), dims.data(), &o, &shape_);
    if (status != RANKSHAPE_OK) {
      throw Error(status, rankshape_last_error(), rankshape_last_mpi_error_class());
    }
  }
  ~Shape() { rankshape_free(&shape_); }
  Shape(const Shape&) = delete;
  Shape& operator=(const Shape&) = delete;
  Shape(Shape&& other) noexcept : shape_(std::exchange(other.shape_, nullptr)) {}
  Shape& operator=(Shape&& other) noexcept {
    if (this != &other) {
      rankshape_free(&shape_);
      shape_ = std::exchange(other.shape_, nullptr);
    }
    return *this;
  }

  /// Rank i is grid position i; cartesian (MPI_Cart_shift works on it).
  MPI_Comm comm() const { return rankshape_comm(shape_); }
  /// The fibre through this rank along dimension k.
  MPI_Comm fibre(int k) const { return rankshape_fibre(shape_, k); }
  std::vector<int> dims() const {
    std::vector<int> d(static_cast<std::size_t>(rankshape_ndims(shape_)));
    rankshape_dims(shape_, d.data());
    return d;
  }
  std::vector<int> coords() const {
    std::vector<int> c(static_cast<std::size_t>(rankshape_ndims(shape_)));
    rankshape_coords(shape_, c.data());
    return c;
  }
  /// Rank in comm() of the given rank of the original communicator.
  int new_rank(int old_rank) const { return rankshape_new_rank(shape_, old_rank); }
  int old_rank(int new_rank) const { return rankshape_old_rank(shape_, new_rank); }
  double objective_before() const { return rankshape_objective_before(shape_); }
  double objective_after() const { return rankshape_objective_after(shape_); }
  /// -1 when no bound is known (rankshape_lower_bound).
  double lower_bound() const { return rankshape_lower_bound(shape_); }

 private:
  rankshape_shape* shape_ = nullptr;
};

}  // namespace rankshape

#endif  // RANKSHAPE_LIB_SHAPE_RANKSHAPE_HPP_
