// MPI_Cart_create as a drop-in (PMPI interposition): an unmodified MPI
// program that asks for reorder gets a cartesian communicator whose ranks
// rankshape has relabelled, so that its traffic sits on cheap links: by
// default the halo exchange of a stencil code (each rank with its grid
// neighbours, wrapping where the program's periods say), or with
// RANKSHAPE_PATTERN=fibres every row, column and fibre (and hence every
// MPI_Cart_sub of the result).
//
// Fortran callers (mpif.h, use mpi, use mpi_f08) are caught too: see
// fortran_cart_create below.
//
// Use it by preloading librankshape_cart.so (LD_PRELOAD, forwarded to the
// ranks: `mpirun -x LD_PRELOAD=...` for Open MPI, `mpiexec -genv LD_PRELOAD
// ...` for MPICH) or by linking //lib/dropin:cart_create into the program.
//
// What it does, collectively over `old`, when reorder != 0 and the grid
// has exactly as many positions as `old` has ranks:
//   1. every rank reads its options from the environment (below), and the
//      ranks agree: one bad value anywhere fails the call on every rank;
//   2. relabel_comm(old, Grid(dims), options) chooses the relabelling;
//   3. rank 0 of `old` writes the report, if RANKSHAPE_REPORT asks for one;
//   4. PMPI_Cart_create(shaped, ..., reorder = 0): cartesian rank i is
//      relabelled position i. The shaped communicator is freed on return.
// Example: 16 ranks on 4 nodes of 4 ranks, dims 4x4, periods 1x1. The
// drop-in gives every node a 2x2 block of the grid (stencil default); with
// RANKSHAPE_PATTERN=fibres and 4 ranks on nodes {0,3} and {1,2}, dims 2x2,
// it returns cart ranks 0..3 = world ranks 0,3,1,2, so rows {0,3} {1,2}
// stay inside nodes and only the columns cross.
//
// Passed through untouched to PMPI_Cart_create: reorder == 0, ndims < 1,
// MPI_COMM_NULL, an inter-communicator, dims whose product is not the size
// of `old` (smaller grids leave the extra ranks MPI_COMM_NULL, larger ones
// are MPI's error), and RANKSHAPE_CART=off.
//
// Environment (read on every rank; an empty value counts as unset). The
// ranks check that they agree on every value but RANKSHAPE_CART, which is
// read before any communication so that "off" leaves MPI alone; launchers
// give every rank the same environment. Besides those of every topology
// drop-in (lib/dropin/settings.h: RANKSHAPE_COSTS, RANKSHAPE_SOURCE,
// RANKSHAPE_ALGORITHM, RANKSHAPE_SEED, RANKSHAPE_TIME_LIMIT,
// RANKSHAPE_REPORT):
//   RANKSHAPE_CART=on|off     off: always pass through (default on)
//   RANKSHAPE_PATTERN=TEXT    stencil (default: grid neighbours, periodic
//                             where the program's periods are, unless the
//                             text names periods) | fibres | stencil:OPTION,...
//                             (lib/model/pattern.h)
//   RANKSHAPE_OBJECTIVE=NAME  the pattern's: step (default) | total for a
//                             stencil; sum-max (default) | thesis-max |
//                             total, ..., +links for fibres
//
// Errors: a bad value, a bad cost file or a failed MPI call prints
// "rankshape MPI_Cart_create: ..." on stderr (once, by the first rank that
// found it, for problems all ranks agree on) and then behaves as MPI does:
// the error handler of `old` is called with the error code (MPI_ERR_ARG for
// bad values and files, the MPI code for MPI failures, MPI_ERR_OTHER
// otherwise), which aborts under the default MPI_ERRORS_ARE_FATAL and
// returns the code on every rank under MPI_ERRORS_RETURN. No exception
// leaves this file.
#include <mpi.h>

#include <cstdio>
#include <exception>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "lib/dropin/settings.h"
#include "lib/model/grid.h"
#include "lib/model/objective.h"
#include "lib/mpi/communicator.h"
#include "lib/mpi/error.h"
#include "lib/shape/shape.h"

namespace rankshape {
namespace {

using dropin::env;
using dropin::quoted;

constexpr const char* kPrefix = "rankshape MPI_Cart_create: ";

// What the environment asks for (RANKSHAPE_CART=off never gets here).
struct CartSettings : dropin::Settings {
  Pattern pattern;        // as given (options.objective's gets the program's periods)
  std::string objective;  // as given; empty: the pattern's default
};

// Throws std::invalid_argument naming the variable and the value.
CartSettings read_settings() {
  CartSettings s;
  const std::string cart = env("RANKSHAPE_CART");
  if (!cart.empty() && cart != "on") {
    throw std::invalid_argument(quoted("RANKSHAPE_CART", cart) + ": expected on or off");
  }
  static_cast<dropin::Settings&>(s) = dropin::read_common_settings();
  const std::string pattern = env("RANKSHAPE_PATTERN");
  try {
    s.pattern = Pattern::parse(pattern.empty() ? "stencil" : pattern);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(quoted("RANKSHAPE_PATTERN", pattern) + ": " + e.what());
  }
  if (s.pattern.is_graph()) {
    throw std::invalid_argument(quoted("RANKSHAPE_PATTERN", pattern) +
                                ": a cartesian grid's pattern is stencil or fibres");
  }
  s.objective = env("RANKSHAPE_OBJECTIVE");
  try {
    s.options.objective = ObjectiveSpec::parse(s.objective, s.pattern);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(quoted("RANKSHAPE_OBJECTIVE", s.objective) + ": " + e.what());
  }
  return s;
}

void agree(const mpi::Communicator& comm, const std::string& error, int code) {
  dropin::agree(comm, kPrefix, error, code);
}

// The whole drop-in for a call that may relabel. Returns an MPI code
// (after calling old's error handler on failure) or throws AgreedError,
// mpi::MpiError or another std::exception.
int shaped_cart_create(MPI_Comm old, int ndims, const int dims[], const int periods[],
                       MPI_Comm* cart) {
  const mpi::Communicator borrowed(old, mpi::Ownership::kBorrow);
  // Our own copy: codes instead of aborts, and no mixing with the program.
  const mpi::Communicator comm = borrowed.dup();

  CartSettings settings;
  std::string error;
  try {
    settings = read_settings();
  } catch (const std::invalid_argument& e) {
    error = e.what();
  }
  agree(comm, error, MPI_ERR_ARG);

  std::vector<int> dim_list(dims, dims + ndims);
  std::vector<int> period_list(static_cast<std::size_t>(ndims), 0);
  std::vector<bool> wraps(static_cast<std::size_t>(ndims), false);
  if (periods != nullptr) {
    for (int k = 0; k < ndims; ++k) {
      period_list[static_cast<std::size_t>(k)] = periods[k] ? 1 : 0;
      wraps[static_cast<std::size_t>(k)] = periods[k] != 0;
    }
  }
  // The stencil wraps where the program's grid does, unless the pattern
  // text said otherwise; the shaped communicator gets the program's periods.
  settings.options.objective =
      ObjectiveSpec::parse(settings.objective, settings.pattern.with_default_periods(wraps));
  settings.options.periods = period_list;
  std::optional<ShapedComm> shaped;
  try {
    shaped.emplace(relabel_comm(comm.get(), Grid(dim_list), settings.options));
  } catch (const std::invalid_argument& e) {
    // relabel_comm reports bad arguments on every rank alike.
    dropin::fail_everywhere(comm, kPrefix, e.what(), MPI_ERR_ARG);
  }
  nlohmann::json report = dropin::report_json("rankshape MPI_Cart_create", settings, *shaped);
  report["grid"] = shaped->grid().to_string();
  report["periods"] = period_list;
  dropin::write_report(comm, kPrefix, settings, report);

  // reorder = 0 keeps the relabelled order; MPI duplicates the group, so
  // the shaped communicators can go when this function returns.
  const int code = PMPI_Cart_create(shaped->comm().get(), ndims, dims, periods, 0, cart);
  if (code != MPI_SUCCESS) return dropin::fail(old, code);
  // The new communicator inherited our MPI_ERRORS_RETURN; give it the
  // program's handler, as a plain MPI_Cart_create on old would.
  dropin::inherit_errhandler(old, cart);
  return MPI_SUCCESS;
}

// True if the call is one rankshape relabels; false: pass it through.
bool wants_relabelling(MPI_Comm old, int ndims, const int dims[], int reorder) {
  if (reorder == 0 || ndims < 1 || dims == nullptr || old == MPI_COMM_NULL) return false;
  if (env("RANKSHAPE_CART") == "off") return false;
  int inter = 0;
  if (PMPI_Comm_test_inter(old, &inter) != MPI_SUCCESS || inter) return false;
  int size = 0;
  if (PMPI_Comm_size(old, &size) != MPI_SUCCESS) return false;
  long long product = 1;
  for (int k = 0; k < ndims; ++k) {
    if (dims[k] < 1) return false;
    product *= dims[k];
    if (product > size) return false;
  }
  return product == size;
}

// The one implementation behind the C and the Fortran entry points.
int cart_create(MPI_Comm old, int ndims, const int dims[], const int periods[], int reorder,
                MPI_Comm* cart) {
  return dropin::guarded(old, kPrefix, [&] {
    if (!wants_relabelling(old, ndims, dims, reorder)) {
      return PMPI_Cart_create(old, ndims, dims, periods, reorder, cart);
    }
    return shaped_cart_create(old, ndims, dims, periods, cart);
  });
}

#ifndef RANKSHAPE_SMPI
// MPI_CART_CREATE from Fortran (use mpi, mpif.h, use mpi_f08): Open MPI's
// own Fortran symbols call PMPI_Cart_create, so a C-only drop-in never sees
// them. Handles and logicals are converted here and the C implementation
// called directly; forwarding to pmpi_cart_create_ instead would be caught
// twice under MPICH, whose Fortran layer calls the C MPI_Cart_create.
// ierror is optional (NULL) in the mpi_f08 binding.
void fortran_cart_create(const MPI_Fint* old, const MPI_Fint* ndims, const MPI_Fint* dims,
                         const MPI_Fint* periods, const MPI_Fint* reorder, MPI_Fint* cart,
                         MPI_Fint* ierror) {
  const int n = *ndims;
  std::vector<int> c_dims(dims, dims + (n > 0 ? n : 0));
  // A Fortran LOGICAL is true when nonzero (gfortran: 1, some compilers -1).
  std::vector<int> c_periods(static_cast<std::size_t>(n > 0 ? n : 0));
  for (int k = 0; k < n; ++k) c_periods[static_cast<std::size_t>(k)] = periods[k] != 0;
  MPI_Comm c_cart = MPI_COMM_NULL;
  const int code =
      cart_create(PMPI_Comm_f2c(*old), n, c_dims.data(), c_periods.data(), *reorder != 0, &c_cart);
  if (code == MPI_SUCCESS) *cart = PMPI_Comm_c2f(c_cart);
  if (ierror != nullptr) *ierror = code;
}
#endif

}  // namespace
}  // namespace rankshape

extern "C" int MPI_Cart_create(MPI_Comm old, int ndims, const int dims[], const int periods[],
                               int reorder, MPI_Comm* cart) {
  return rankshape::cart_create(old, ndims, dims, periods, reorder, cart);
}

#ifndef RANKSHAPE_SMPI
// The Fortran compilers' manglings of MPI_CART_CREATE, and mpi_f08's.
#define RANKSHAPE_FORTRAN_CART_CREATE(name)                                              \
  extern "C" void name(const MPI_Fint* old, const MPI_Fint* ndims, const MPI_Fint* dims, \
                       const MPI_Fint* periods, const MPI_Fint* reorder, MPI_Fint* cart, \
                       MPI_Fint* ierror) {                                               \
    rankshape::fortran_cart_create(old, ndims, dims, periods, reorder, cart, ierror);    \
  }
RANKSHAPE_FORTRAN_CART_CREATE(mpi_cart_create_)
RANKSHAPE_FORTRAN_CART_CREATE(mpi_cart_create__)
RANKSHAPE_FORTRAN_CART_CREATE(mpi_cart_create)
RANKSHAPE_FORTRAN_CART_CREATE(MPI_CART_CREATE)
RANKSHAPE_FORTRAN_CART_CREATE(mpi_cart_create_f08_)
#undef RANKSHAPE_FORTRAN_CART_CREATE
#endif
