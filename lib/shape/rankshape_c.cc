// The C interface (rankshape.h) over relabel_comm(): no exception crosses
// into C; each becomes a status code and a message for rankshape_last_error().
#include <memory>
#include <new>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "lib/mpi/error.h"
#include "lib/shape/shape.h"
#include "rankshape/rankshape.h"

struct rankshape_shape {
  rankshape::ShapedComm shaped;
};

namespace {

thread_local std::string last_error;
thread_local int last_mpi_class = MPI_SUCCESS;

int fail(int status, const std::string& message) {
  last_error = message;
  return status;
}

}  // namespace

namespace {

// Runs f, which sets *shape, turning what it throws into a status code and
// a message for rankshape_last_error().
template <class F>
int guarded(const char* name, rankshape_shape** shape, F&& f) {
  last_error.clear();
  last_mpi_class = MPI_SUCCESS;
  if (!shape) return fail(RANKSHAPE_ERR_ARG, std::string(name) + ": shape is NULL");
  *shape = nullptr;
  try {
    f();
    return RANKSHAPE_OK;
  } catch (const rankshape::mpi::MpiError& e) {
    last_mpi_class = e.error_class();
    return fail(RANKSHAPE_ERR_MPI, e.what());
  } catch (const std::invalid_argument& e) {
    return fail(RANKSHAPE_ERR_ARG, e.what());
  } catch (const std::exception& e) {
    return fail(RANKSHAPE_ERR_INTERNAL, e.what());
  } catch (...) {
    return fail(RANKSHAPE_ERR_INTERNAL, "unknown error");
  }
}

// The size of comm, which must not be MPI_COMM_NULL.
int size_of(MPI_Comm comm) {
  if (comm == MPI_COMM_NULL) {
    throw std::invalid_argument("rankshape needs a communicator, got MPI_COMM_NULL");
  }
  int p = 0;
  rankshape::mpi::check(MPI_Comm_size(comm, &p), "MPI_Comm_size");
  return p;
}

// The C options as C++ ones (pattern: the given one's default).
rankshape::ShapeOptions shape_options(const rankshape_options* options, int p,
                                      const char* default_pattern) {
  rankshape_options defaults;
  rankshape_options_init(&defaults);
  const rankshape_options& o = options ? *options : defaults;
  rankshape::ShapeOptions so;
  so.source = rankshape::parse_cost_source(o.source ? o.source : "auto");
  if (o.cost_file) so.cost_file = o.cost_file;
  if (o.algorithm) so.algorithm = o.algorithm;
  so.seed = o.seed;
  so.time_limit = o.time_limit;
  so.objective = rankshape::ObjectiveSpec::parse(
      o.objective ? o.objective : "",
      rankshape::Pattern::parse(o.pattern ? o.pattern : default_pattern));
  if (so.source == rankshape::CostSource::kMatrix) {
    if (!o.matrix) throw std::invalid_argument("source \"matrix\" needs options->matrix");
    so.matrix.assign(o.matrix, o.matrix + static_cast<std::size_t>(p) * p);
  }
  return so;
}

}  // namespace

extern "C" {

void rankshape_options_init(rankshape_options* o) {
  if (!o) return;
  o->source = "auto";
  o->cost_file = nullptr;
  o->matrix = nullptr;
  o->algorithm = "auto";
  o->seed = 1;
  o->time_limit = 5;
  o->objective = nullptr;
  o->pattern = nullptr;
  o->periods = nullptr;
}

namespace {

// rankshape_relabel_comm() with the length of options->periods (the
// Fortran module passes its array's size, checked here on every rank).
int relabel_comm(MPI_Comm comm, int ndims, const int dims[], const rankshape_options* options,
                 int nperiods, rankshape_shape** shape) {
  return guarded("rankshape_relabel_comm", shape, [&] {
    const int p = size_of(comm);
    // Arguments are turned into C++ ones on every rank, and a rank that
    // fails here must not leave the others waiting inside relabel_comm().
    rankshape::ShapeOptions so;
    std::optional<rankshape::Grid> grid;
    std::string error;
    try {
      if (ndims < 1 || !dims) throw std::invalid_argument("needs ndims >= 1 and dims");
      so = shape_options(options, p, "fibres");
      if (options && options->periods) {
        if (nperiods != ndims) {
          throw std::invalid_argument(std::to_string(nperiods) + " periods for " +
                                      std::to_string(ndims) + " dimensions");
        }
        so.periods.assign(options->periods, options->periods + ndims);
      }
      grid = rankshape::complete_grid(p, std::vector<int>(dims, dims + ndims));
    } catch (const std::exception& e) {  // e.g. bad_alloc of a huge matrix on one rank
      error = e.what();
    }
    rankshape::agree_on_errors(comm, error);
    *shape = new rankshape_shape{rankshape::relabel_comm(comm, *grid, so)};
  });
}

}  // namespace

int rankshape_relabel_comm(MPI_Comm comm, int ndims, const int dims[],
                           const rankshape_options* options, rankshape_shape** shape) {
  return relabel_comm(comm, ndims, dims, options, ndims, shape);
}

namespace {

// rankshape_relabel_graph_comm; nweights: the count of weights given (-1:
// not given, so any count goes), checked with the rest on every rank.
int relabel_graph_comm(MPI_Comm comm, int degree, const int partners[], const double weights[],
                       int nweights, const rankshape_options* options, rankshape_shape** shape) {
  return guarded("rankshape_relabel_graph_comm", shape, [&] {
    const int p = size_of(comm);
    rankshape::ShapeOptions so;
    std::vector<int> my_partners;
    std::vector<double> my_weights;
    std::string error;
    try {
      if (degree < 0 || (degree > 0 && !partners)) {
        throw std::invalid_argument("needs degree >= 0 and degree partners");
      }
      if (nweights >= 0 && nweights != degree) {
        throw std::invalid_argument(std::to_string(nweights) + " weights for " +
                                    std::to_string(degree) + " partners");
      }
      if (options && options->pattern && std::string(options->pattern) != "graph") {
        throw std::invalid_argument(std::string("pattern '") + options->pattern +
                                    "' is for rankshape_relabel_comm; a graph's is graph");
      }
      so = shape_options(options, p, "graph");
      my_partners.assign(partners, partners + degree);
      if (weights) my_weights.assign(weights, weights + degree);
    } catch (const std::exception& e) {
      error = e.what();
    }
    rankshape::agree_on_errors(comm, error);
    *shape = new rankshape_shape{rankshape::relabel_graph_comm(
        comm, rankshape::gather_graph(comm, my_partners, my_weights), so)};
  });
}

// The options the Fortran module passes one by one (NULL strings: the
// defaults).
rankshape_options fortran_options(const char* pattern, const char* objective, const char* source,
                                  const char* cost_file, const char* algorithm, long long seed,
                                  double time_limit) {
  rankshape_options o;
  rankshape_options_init(&o);
  if (pattern) o.pattern = pattern;
  if (objective) o.objective = objective;
  if (source) o.source = source;
  if (cost_file) o.cost_file = cost_file;
  if (algorithm) o.algorithm = algorithm;
  o.seed = static_cast<unsigned long long>(seed);
  o.time_limit = time_limit;
  return o;
}

}  // namespace

int rankshape_relabel_graph_comm(MPI_Comm comm, int degree, const int partners[],
                                 const double weights[], const rankshape_options* options,
                                 rankshape_shape** shape) {
  return relabel_graph_comm(comm, degree, partners, weights, -1, options, shape);
}

int rankshape_relabel_graph_comm_f(MPI_Fint comm, int degree, const int partners[],
                                   const double weights[], int nweights, const char* objective,
                                   const char* source, const char* cost_file, const char* algorithm,
                                   long long seed, double time_limit, rankshape_shape** shape) {
  const rankshape_options o =
      fortran_options(nullptr, objective, source, cost_file, algorithm, seed, time_limit);
  return relabel_graph_comm(MPI_Comm_f2c(comm), degree, partners, weights, weights ? nweights : -1,
                            &o, shape);
}

int rankshape_relabel_comm_f(MPI_Fint comm, int ndims, const int dims[], const char* pattern,
                             const char* objective, const char* source, const char* cost_file,
                             const char* algorithm, long long seed, double time_limit,
                             const int* periods, int nperiods, rankshape_shape** shape) {
  rankshape_options o =
      fortran_options(pattern, objective, source, cost_file, algorithm, seed, time_limit);
  o.periods = periods;
  return relabel_comm(MPI_Comm_f2c(comm), ndims, dims, &o, nperiods, shape);
}

MPI_Fint rankshape_comm_f(const rankshape_shape* s) { return MPI_Comm_c2f(rankshape_comm(s)); }

MPI_Fint rankshape_fibre_f(const rankshape_shape* s, int k) {
  return MPI_Comm_c2f(rankshape_fibre(s, k));
}

int rankshape_last_error_copy(char* buffer, int size) {
  const int length = static_cast<int>(last_error.size());
  if (buffer && size > 0) {
    const int n = length < size - 1 ? length : size - 1;
    last_error.copy(buffer, static_cast<std::size_t>(n));
    buffer[n] = '\0';
  }
  return length;
}

MPI_Comm rankshape_comm(const rankshape_shape* s) {
  return s ? s->shaped.comm().get() : MPI_COMM_NULL;
}

MPI_Comm rankshape_fibre(const rankshape_shape* s, int k) {
  if (!s || k < 0 || k >= s->shaped.grid().ndims()) return MPI_COMM_NULL;
  return s->shaped.fibre(k).get();
}

int rankshape_ndims(const rankshape_shape* s) { return s ? s->shaped.grid().ndims() : 0; }

void rankshape_dims(const rankshape_shape* s, int dims[]) {
  if (!s || !dims) return;
  for (int k = 0; k < s->shaped.grid().ndims(); ++k) dims[k] = s->shaped.grid().dim(k);
}

void rankshape_coords(const rankshape_shape* s, int coords[]) {
  if (!s || !coords) return;
  const std::vector<int>& c = s->shaped.coords();
  for (std::size_t k = 0; k < c.size(); ++k) coords[k] = c[k];
}

int rankshape_new_rank(const rankshape_shape* s, int old_rank) {
  if (!s || old_rank < 0 || old_rank >= s->shaped.grid().size()) return -1;
  return s->shaped.new_of(rankshape::OldRank(old_rank)).value();
}

int rankshape_old_rank(const rankshape_shape* s, int new_rank) {
  if (!s || new_rank < 0 || new_rank >= s->shaped.grid().size()) return -1;
  return s->shaped.old_of(rankshape::NewRank(new_rank)).value();
}

double rankshape_objective_before(const rankshape_shape* s) {
  return s ? s->shaped.report().before.value.primary : 0;
}

double rankshape_objective_after(const rankshape_shape* s) {
  return s ? s->shaped.report().after.value.primary : 0;
}

double rankshape_lower_bound(const rankshape_shape* s) {
  if (!s || !s->shaped.report().bound) return -1;
  return s->shaped.report().bound->primary;
}

void rankshape_free(rankshape_shape** s) {
  if (!s) return;
  delete *s;
  *s = nullptr;
}

const char* rankshape_status_string(int status) {
  switch (status) {
    case RANKSHAPE_OK:
      return "success";
    case RANKSHAPE_ERR_ARG:
      return "bad or mismatched arguments";
    case RANKSHAPE_ERR_MPI:
      return "an MPI call failed";
    case RANKSHAPE_ERR_INTERNAL:
      return "internal error";
  }
  return "unknown rankshape status";
}

const char* rankshape_last_error(void) { return last_error.c_str(); }

int rankshape_last_mpi_error_class(void) { return last_mpi_class; }

}  // extern "C"
