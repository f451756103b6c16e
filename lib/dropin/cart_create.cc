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
// give every rank the same environment.
//   RANKSHAPE_CART=on|off     off: always pass through (default on)
//   RANKSHAPE_COSTS=FILE      costs from a dense or structured cost file
//                             (source "file"); every rank reads it
//   RANKSHAPE_SOURCE=NAME     auto (default) | measure | hierarchical |
//                             model | file (needs RANKSHAPE_COSTS)
//   RANKSHAPE_ALGORITHM=NAME  relabelling algorithm (default auto)
//   RANKSHAPE_SEED=N          seed, a non-negative integer (default 1)
//   RANKSHAPE_TIME_LIMIT=S    seconds of search per rank (default 5)
//   RANKSHAPE_PATTERN=TEXT    stencil (default: grid neighbours, periodic
//                             where the program's periods are, unless the
//                             text names periods) | fibres | stencil:OPTION,...
//                             (lib/model/pattern.h)
//   RANKSHAPE_OBJECTIVE=NAME  the pattern's: step (default) | total for a
//                             stencil; sum-max (default) | thesis-max |
//                             total, ..., +links for fibres
//   RANKSHAPE_REPORT=PATH     rank 0 writes a JSON report there (atomically)
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

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "lib/io/atomic_file.h"
#include "lib/model/grid.h"
#include "lib/model/objective.h"
#include "lib/mpi/communicator.h"
#include "lib/mpi/error.h"
#include "lib/relabel/relabel.h"
#include "lib/shape/shape.h"

namespace rankshape {
namespace {

constexpr const char* kPrefix = "rankshape MPI_Cart_create: ";

// An error that every rank of the call knows about (agreed on): printed
// once, then reported on every rank with code.
class AgreedError : public std::runtime_error {
 public:
  AgreedError(const std::string& what, int code) : std::runtime_error(what), code_(code) {}
  int code() const { return code_; }

 private:
  int code_;
};

// The value of an environment variable; empty when unset.
std::string env(const char* name) {
  const char* value = std::getenv(name);
  return value == nullptr ? std::string() : std::string(value);
}

std::string quoted(const char* name, const std::string& value) {
  return std::string(name) + "='" + value + "'";
}

// What the environment asks for (RANKSHAPE_CART=off never gets here).
struct Settings {
  ShapeOptions options;
  Pattern pattern;        // as given (options.objective's gets the program's periods)
  std::string objective;  // as given; empty: the pattern's default
  std::string report_path;
};

std::uint64_t parse_seed(const std::string& text) {
  const bool digits = !text.empty() && std::all_of(text.begin(), text.end(),
                                                   [](char c) { return c >= '0' && c <= '9'; });
  errno = 0;
  char* end = nullptr;
  const unsigned long long value = digits ? std::strtoull(text.c_str(), &end, 10) : 0;
  if (!digits || errno == ERANGE || *end != '\0') {
    throw std::invalid_argument(quoted("RANKSHAPE_SEED", text) +
                                ": expected a non-negative integer below 2^64");
  }
  return value;
}

double parse_time_limit(const std::string& text) {
  char* end = nullptr;
  errno = 0;
  const double value = std::strtod(text.c_str(), &end);
  if (text.empty() || end == text.c_str() || *end != '\0' || errno == ERANGE ||
      !std::isfinite(value) || value < 0) {
    throw std::invalid_argument(quoted("RANKSHAPE_TIME_LIMIT", text) +
                                ": expected a number of seconds >= 0");
  }
  return value;
}

// Throws std::invalid_argument naming the variable and the value.
Settings read_settings() {
  Settings s;
  const std::string cart = env("RANKSHAPE_CART");
  if (!cart.empty() && cart != "on") {
    throw std::invalid_argument(quoted("RANKSHAPE_CART", cart) + ": expected on or off");
  }
  const std::string costs = env("RANKSHAPE_COSTS");
  const std::string source = env("RANKSHAPE_SOURCE");
  if (!source.empty()) {
    CostSource parsed;
    try {
      parsed = parse_cost_source(source);
    } catch (const std::invalid_argument&) {
      throw std::invalid_argument(quoted("RANKSHAPE_SOURCE", source) +
                                  ": unknown cost source; expected auto, measure, "
                                  "hierarchical, model or file (with RANKSHAPE_COSTS)");
    }
    if (parsed == CostSource::kMatrix) {
      throw std::invalid_argument(quoted("RANKSHAPE_SOURCE", source) +
                                  ": a matrix cannot come from the environment; use "
                                  "RANKSHAPE_COSTS=FILE");
    }
    if (parsed == CostSource::kFile && costs.empty()) {
      throw std::invalid_argument(quoted("RANKSHAPE_SOURCE", source) +
                                  " needs RANKSHAPE_COSTS=FILE");
    }
    if (parsed != CostSource::kFile && !costs.empty()) {
      throw std::invalid_argument(quoted("RANKSHAPE_SOURCE", source) + " and " +
                                  quoted("RANKSHAPE_COSTS", costs) +
                                  " conflict: a cost file is source file");
    }
    s.options.source = parsed;
  }
  if (!costs.empty()) {
    s.options.source = CostSource::kFile;
    s.options.cost_file = costs;
  }
  const std::string algorithm = env("RANKSHAPE_ALGORITHM");
  if (!algorithm.empty()) {
    const std::vector<std::string>& names = relabel_algorithms();
    if (std::find(names.begin(), names.end(), algorithm) == names.end()) {
      std::string list;
      for (const std::string& n : names) list += (list.empty() ? "" : ", ") + n;
      throw std::invalid_argument(quoted("RANKSHAPE_ALGORITHM", algorithm) +
                                  ": unknown algorithm; expected one of " + list);
    }
    s.options.algorithm = algorithm;
  }
  const std::string seed = env("RANKSHAPE_SEED");
  if (!seed.empty()) s.options.seed = parse_seed(seed);
  const std::string time_limit = env("RANKSHAPE_TIME_LIMIT");
  if (!time_limit.empty()) s.options.time_limit = parse_time_limit(time_limit);
  const std::string pattern = env("RANKSHAPE_PATTERN");
  try {
    s.pattern = Pattern::parse(pattern.empty() ? "stencil" : pattern);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(quoted("RANKSHAPE_PATTERN", pattern) + ": " + e.what());
  }
  s.objective = env("RANKSHAPE_OBJECTIVE");
  try {
    s.options.objective = ObjectiveSpec::parse(s.objective, s.pattern);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(quoted("RANKSHAPE_OBJECTIVE", s.objective) + ": " + e.what());
  }
  s.report_path = env("RANKSHAPE_REPORT");
  return s;
}

// Collective: an error every rank knows of. Rank 0 prints it, then all
// throw AgreedError with code (the message is out before any rank can
// abort in the error handler).
[[noreturn]] void fail_everywhere(const mpi::Communicator& comm, const std::string& message,
                                  int code) {
  if (comm.rank() == 0) {
    std::fprintf(stderr, "%s%s\n", kPrefix, message.c_str());
    std::fflush(stderr);
  }
  mpi::check(MPI_Barrier(comm.get()), "MPI_Barrier");
  throw AgreedError(message, code);
}

// Collective: returns if no rank has an error; otherwise every rank fails
// with the first failing rank's message ("rank R: ...").
void agree(const mpi::Communicator& comm, const std::string& error, int code) {
  try {
    agree_on_errors(comm.get(), error);
  } catch (const std::invalid_argument& e) {
    fail_everywhere(comm, e.what(), code);
  }
}

nlohmann::json report_json(const Settings& s, const ShapedComm& shaped,
                           const std::vector<int>& periods) {
  const ShapeReport& r = shaped.report();
  std::vector<int> perm;
  const int p = shaped.grid().size();
  perm.reserve(static_cast<std::size_t>(p));
  for (int i = 0; i < p; ++i) perm.push_back(shaped.old_of(NewRank(i)).value());
  nlohmann::json j = {
      {"tool", "rankshape MPI_Cart_create"},
      {"p", p},
      {"grid", shaped.grid().to_string()},
      {"periods", periods},
      {"cost_source", r.cost_source},
      {"algorithm", s.options.algorithm},
      {"algorithm_run", r.algorithm},
      {"seed", s.options.seed},
      {"winner", r.winner},
      {"winner_seed", r.winner_seed},
      {"time_limit", s.options.time_limit},
      {"time_limited", r.time_limited},
      {"pattern", s.options.objective.pattern.name()},
      {"objective", s.options.objective.name()},
      {"objective_before", r.before.value.primary},
      {"objective_after", r.after.value.primary},
      {"total_before", r.before.value.total},
      {"total_after", r.after.value.total},
      {"measure_seconds", r.measure_seconds},
      {"relabel_seconds", r.relabel_seconds},
      // perm[i] = rank in the old communicator of cartesian rank i.
      {"perm", perm},
  };
  if (s.options.source == CostSource::kFile) j["cost_file"] = s.options.cost_file;
  return j;
}

// MPI's way of reporting an error from a call on `old`.
int fail(MPI_Comm old, int code) {
  PMPI_Comm_call_errhandler(old, code);
  return code;
}

// The whole drop-in for a call that may relabel. Returns an MPI code
// (after calling old's error handler on failure) or throws AgreedError,
// mpi::MpiError or another std::exception.
int shaped_cart_create(MPI_Comm old, int ndims, const int dims[], const int periods[],
                       MPI_Comm* cart) {
  const mpi::Communicator borrowed(old, mpi::Ownership::kBorrow);
  // Our own copy: codes instead of aborts, and no mixing with the program.
  const mpi::Communicator comm = borrowed.dup();

  Settings settings;
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
    fail_everywhere(comm, e.what(), MPI_ERR_ARG);
  }

  error.clear();
  if (comm.rank() == 0 && !settings.report_path.empty()) {
    try {
      const nlohmann::json j = report_json(settings, *shaped, period_list);
      write_file_atomically(settings.report_path,
                            [&](std::ostream& out) { out << j.dump(2) << "\n"; });
    } catch (const std::exception& e) {
      error = std::string("RANKSHAPE_REPORT: ") + e.what();
    }
  }
  agree(comm, error, MPI_ERR_OTHER);

  // reorder = 0 keeps the relabelled order; MPI duplicates the group, so
  // the shaped communicators can go when this function returns.
  const int code = PMPI_Cart_create(shaped->comm().get(), ndims, dims, periods, 0, cart);
  if (code != MPI_SUCCESS) return fail(old, code);
  if (*cart == MPI_COMM_NULL) return MPI_SUCCESS;
  // The new communicator inherited our MPI_ERRORS_RETURN; give it the
  // program's handler, as a plain MPI_Cart_create on old would.
  MPI_Errhandler handler;
  int set = PMPI_Comm_get_errhandler(old, &handler);
  if (set == MPI_SUCCESS) {
    set = PMPI_Comm_set_errhandler(*cart, handler);
    PMPI_Errhandler_free(&handler);
  }
  if (set != MPI_SUCCESS) {
    PMPI_Comm_free(cart);  // not handed out half-configured
    *cart = MPI_COMM_NULL;
    mpi::check(set, "MPI_Comm_set_errhandler");
  }
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

// "rank R: " for messages that only some ranks may print.
std::string rank_of(MPI_Comm old) {
  int rank = 0;
  if (old == MPI_COMM_NULL || PMPI_Comm_rank(old, &rank) != MPI_SUCCESS) return "";
  return "rank " + std::to_string(rank) + ": ";
}

}  // namespace
}  // namespace rankshape

namespace rankshape {
namespace {

// The one implementation behind the C and the Fortran entry points.
int cart_create(MPI_Comm old, int ndims, const int dims[], const int periods[], int reorder,
                MPI_Comm* cart) {
  try {
    if (!wants_relabelling(old, ndims, dims, reorder)) {
      return PMPI_Cart_create(old, ndims, dims, periods, reorder, cart);
    }
    return shaped_cart_create(old, ndims, dims, periods, cart);
  } catch (const AgreedError& e) {
    return fail(old, e.code());  // printed once already
  } catch (const mpi::MpiError& e) {
    std::fprintf(stderr, "%s%s%s\n", kPrefix, rank_of(old).c_str(), e.what());
    return fail(old, e.code());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s%s%s\n", kPrefix, rank_of(old).c_str(), e.what());
    return fail(old, MPI_ERR_OTHER);
  } catch (...) {
    std::fprintf(stderr, "%s%sunknown error\n", kPrefix, rank_of(old).c_str());
    return fail(old, MPI_ERR_OTHER);
  }
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
