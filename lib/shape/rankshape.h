/* rankshape's C interface: shaped communicators for C programs (and the
 * ground of the C++ header rankshape.hpp and the Fortran module).
 *
 *   rankshape_shape* shape = NULL;
 *   int dims[2] = {0, 0};                        // 0: chosen, as MPI_Dims_create
 *   if (rankshape_relabel_comm(MPI_COMM_WORLD, 2, dims, NULL, &shape) != RANKSHAPE_OK) {
 *     fprintf(stderr, "%s\n", rankshape_last_error());
 *   }
 *   MPI_Comm rows = rankshape_fibre(shape, 1);   // owned by shape
 *   ...
 *   rankshape_free(&shape);                      // before MPI_Finalize
 *
 * For a halo exchange, ask for a stencil; rankshape_comm() is cartesian:
 *   rankshape_options o;
 *   rankshape_options_init(&o);
 *   o.pattern = "stencil:periodic";
 *   rankshape_relabel_comm(MPI_COMM_WORLD, 2, dims, &o, &shape);
 *   MPI_Cart_shift(rankshape_comm(shape), 0, 1, &up, &down);
 *
 * For any traffic, each rank names the ranks it talks to and how much it
 * sends each (weights NULL: 1 each); rank i of rankshape_comm() then takes
 * the role of rank i, placed so that heavy edges sit on cheap links, and
 * the communicator has a distributed graph topology of those edges:
 *   int partners[2] = {left, right};
 *   double bytes[2] = {1e6, 1e3};
 *   rankshape_relabel_graph_comm(MPI_COMM_WORLD, 2, partners, bytes, NULL, &shape);
 *   MPI_Neighbor_alltoall(..., rankshape_comm(shape));
 *
 * rankshape_relabel_comm() is collective over comm; on error every rank
 * gets the same code (no rank is left waiting) and rankshape_last_error()
 * says what went wrong. See lib/shape/shape.h for what it does. */
#ifndef RANKSHAPE_LIB_SHAPE_RANKSHAPE_H_
#define RANKSHAPE_LIB_SHAPE_RANKSHAPE_H_

#include <mpi.h>

#include "rankshape/version.h"

#ifdef __cplusplus
extern "C" {
#endif

enum rankshape_status {
  RANKSHAPE_OK = 0,
  RANKSHAPE_ERR_ARG = 1,      /* bad or mismatched arguments, bad cost file */
  RANKSHAPE_ERR_MPI = 2,      /* an MPI call failed; see rankshape_last_mpi_error_class() */
  RANKSHAPE_ERR_INTERNAL = 3, /* anything else (out of memory, a bug) */
};

typedef struct rankshape_shape rankshape_shape;

typedef struct rankshape_options {
  const char* source; /* "auto" (default), "measure", "hierarchical", "model", "file", "matrix" */
  const char* cost_file; /* source "file" */
  const double* matrix;  /* source "matrix": p x p, row-major, the same on every rank */
  const char* algorithm; /* "auto" (default) or any name `relabel --help` lists */
  unsigned long long seed;
  double time_limit;     /* seconds per rank for relabelling */
  const char* objective; /* NULL: the pattern's default (sum-max, step); see docs/objective.md */
  const char* pattern;   /* NULL or "fibres" (default), or "stencil[:OPTION,...]" */
  const int* periods;    /* ndims entries 0 or 1 for the cartesian topology of
                            rankshape_comm(); NULL: the stencil's, or none */
} rankshape_options;

/* The defaults: source auto, algorithm auto, seed 1, 5 s, pattern fibres. */
void rankshape_options_init(rankshape_options* options);

/* ndims dimensions; zeros in dims are chosen (balanced, larger first).
 * options may be NULL for the defaults. On success *shape owns the new
 * communicators. */
int rankshape_relabel_comm(MPI_Comm comm, int ndims, const int dims[],
                           const rankshape_options* options, rankshape_shape** shape);

/* Any traffic graph: this rank talks to `degree` partners (ranks of comm),
 * sending weights[i] to partners[i] (NULL: 1 each); the graph is what all
 * ranks declare (an edge named by both ends counts twice). Collective; the
 * graph's objective is options->objective: "cost" (default) or "total";
 * options->pattern must be NULL or "graph", options->periods is unused. */
int rankshape_relabel_graph_comm(MPI_Comm comm, int degree, const int partners[],
                                 const double weights[], const rankshape_options* options,
                                 rankshape_shape** shape);

/* Rank i of this communicator is grid position i; it has the grid's
 * cartesian topology (MPI_Cart_shift, MPI_Cart_coords, MPI_Cart_sub), or
 * for a graph a distributed graph topology (MPI_Dist_graph_neighbors). */
MPI_Comm rankshape_comm(const rankshape_shape* shape);
/* The fibre through this rank along dimension k (MPI_COMM_NULL if k is out of range). */
MPI_Comm rankshape_fibre(const rankshape_shape* shape, int k);
int rankshape_ndims(const rankshape_shape* shape);
/* Copies the grid's dimensions and this rank's coordinates (ndims entries). */
void rankshape_dims(const rankshape_shape* shape, int dims[]);
void rankshape_coords(const rankshape_shape* shape, int coords[]);
/* Translation between ranks of the original communicator (old) and of
 * rankshape_comm() (new); -1 if out of range. */
int rankshape_new_rank(const rankshape_shape* shape, int old_rank);
int rankshape_old_rank(const rankshape_shape* shape, int new_rank);
/* Objective of the original order and of the new one (smaller is better). */
double rankshape_objective_before(const rankshape_shape* shape);
double rankshape_objective_after(const rankshape_shape* shape);
/* A lower bound on the objective, whatever the order (fibres with the
 * default pair costs, and stencils; docs/objective.md, "Lower bounds"): the
 * new order is optimal when objective_after reaches it. -1 when none is
 * known (graphs, max-pair). */
double rankshape_lower_bound(const rankshape_shape* shape);

/* Frees the communicators and the handle; sets *shape to NULL. */
void rankshape_free(rankshape_shape** shape);

/* For the Fortran module (use rankshape; it wraps these): the same with
 * communicators as Fortran handles and the options as separate arguments,
 * strings NUL-terminated or NULL for the defaults, periods NULL or
 * nperiods entries (an error unless nperiods == ndims). */
int rankshape_relabel_comm_f(MPI_Fint comm, int ndims, const int dims[], const char* pattern,
                             const char* objective, const char* source, const char* cost_file,
                             const char* algorithm, long long seed, double time_limit,
                             const int* periods, int nperiods, rankshape_shape** shape);
/* rankshape_relabel_graph_comm for the module: weights NULL (1 each) or
 * nweights entries (an error unless nweights == degree). */
int rankshape_relabel_graph_comm_f(MPI_Fint comm, int degree, const int partners[],
                                   const double weights[], int nweights, const char* objective,
                                   const char* source, const char* cost_file, const char* algorithm,
                                   long long seed, double time_limit, rankshape_shape** shape);
MPI_Fint rankshape_comm_f(const rankshape_shape* shape);
MPI_Fint rankshape_fibre_f(const rankshape_shape* shape, int k);
/* Copies the last error's message into buffer (size bytes, NUL-terminated,
 * cut if longer); returns its full length. */
int rankshape_last_error_copy(char* buffer, int size);

/* A fixed description of a status code. */
const char* rankshape_status_string(int status);
/* What the last failing call on this thread said ("" if none). */
const char* rankshape_last_error(void);
/* MPI error class of the last RANKSHAPE_ERR_MPI on this thread. */
int rankshape_last_mpi_error_class(void);

#ifdef __cplusplus
}
#endif

#endif /* RANKSHAPE_LIB_SHAPE_RANKSHAPE_H_ */
