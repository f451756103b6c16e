/* A C program using rankshape's C interface, run by the tests at several
 * rank counts: a shaped 2-D grid, a sum along each dimension's fibres,
 * the translation both ways, and a bad call reported as an error code.
 * Exits 0 when every check holds on every rank. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#include "rankshape/rankshape.h"

static int failures = 0;

static void check(int ok, const char* what, int rank) {
  if (!ok) {
    fprintf(stderr, "c_example: rank %d: check failed: %s\n", rank, what);
    ++failures;
  }
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);

  rankshape_options options;
  rankshape_options_init(&options);
  options.source = "model"; /* hwloc; no messages timed */
  options.time_limit = 2;

  rankshape_shape* shape = NULL;
  int dims[2] = {0, 0};
  int status = rankshape_relabel_comm(MPI_COMM_WORLD, 2, dims, &options, &shape);
  if (status != RANKSHAPE_OK) {
    fprintf(stderr, "c_example: rank %d: %s: %s\n", rank, rankshape_status_string(status),
            rankshape_last_error());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  int got[2], coords[2];
  rankshape_dims(shape, got);
  rankshape_coords(shape, coords);
  check(rankshape_ndims(shape) == 2 && got[0] * got[1] == size, "grid covers the job", rank);

  /* Rank i of the shaped communicator is grid position i. */
  int new_rank = -1;
  MPI_Comm_rank(rankshape_comm(shape), &new_rank);
  check(new_rank == rankshape_new_rank(shape, rank), "shaped rank is the new rank", rank);
  check(rankshape_old_rank(shape, new_rank) == rank, "translation round trip", rank);
  check(new_rank == coords[0] * got[1] + coords[1], "row-major coordinates", rank);
  check(rankshape_new_rank(shape, size) == -1, "out of range gives -1", rank);

  /* Along each dimension: fibre ranks are the coordinates, sums are known. */
  for (int k = 0; k < 2; ++k) {
    MPI_Comm fibre = rankshape_fibre(shape, k);
    int fibre_rank = -1, fibre_size = 0, sum = 0;
    MPI_Comm_rank(fibre, &fibre_rank);
    MPI_Comm_size(fibre, &fibre_size);
    check(fibre_size == got[k] && fibre_rank == coords[k], "fibre rank is the coordinate", rank);
    MPI_Allreduce(&coords[k], &sum, 1, MPI_INT, MPI_SUM, fibre);
    check(sum == got[k] * (got[k] - 1) / 2, "sum of coordinates along a fibre", rank);
  }
  check(rankshape_fibre(shape, 2) == MPI_COMM_NULL, "no third dimension", rank);
  check(rankshape_objective_after(shape) <= rankshape_objective_before(shape) * (1 + 1e-12),
        "never worse than the original order", rank);
  check(rankshape_lower_bound(shape) >= 0 &&
            rankshape_lower_bound(shape) <= rankshape_objective_after(shape) * (1 + 1e-12),
        "a lower bound, at most the objective found", rank);
  rankshape_free(&shape);
  check(shape == NULL, "free clears the handle", rank);

  /* A grid that does not fit: every rank gets the error, none hangs. */
  int wrong[1] = {size + 1};
  status = rankshape_relabel_comm(MPI_COMM_WORLD, 1, wrong, &options, &shape);
  check(status == RANKSHAPE_ERR_ARG && shape == NULL, "wrong grid is an argument error", rank);
  check(strstr(rankshape_last_error(), "positions") != NULL, "message says why", rank);
  /* A stencil: the shaped communicator is cartesian, with its periods. */
  options.pattern = "stencil:periodic";
  status = rankshape_relabel_comm(MPI_COMM_WORLD, 2, dims, &options, &shape);
  check(status == RANKSHAPE_OK, "a stencil relabels", rank);
  if (status == RANKSHAPE_OK) {
    int topology = MPI_UNDEFINED, cart_dims[2], periods[2], cart_coords[2], down, up, me;
#ifndef SMPI_H /* SimGrid 3.32 lacks MPI_Topo_test (MPI_Cart_get works) */
    MPI_Topo_test(rankshape_comm(shape), &topology);
    check(topology == MPI_CART, "the shaped communicator is cartesian", rank);
#else
    (void)topology;
#endif
    MPI_Cart_get(rankshape_comm(shape), 2, cart_dims, periods, cart_coords);
    check(periods[0] == 1 && periods[1] == 1, "periods from the stencil", rank);
    rankshape_coords(shape, coords);
    check(cart_coords[0] == coords[0] && cart_coords[1] == coords[1], "coordinates agree", rank);
    MPI_Comm_rank(rankshape_comm(shape), &me);
    MPI_Cart_shift(rankshape_comm(shape), 1, 1, &down, &up);
    check(up == coords[0] * cart_dims[1] + (coords[1] + 1) % cart_dims[1], "shift wraps", rank);
    rankshape_free(&shape);
  }
  /* Any traffic: a ring, each rank sending to the next. The shaped
   * communicator has a graph topology: rank i's neighbours are vertex i's,
   * the ranks before and after it, whichever process now holds rank i. */
  options.pattern = NULL;
  int next = (rank + 1) % size;
  double bytes = 1e6;
  status = rankshape_relabel_graph_comm(MPI_COMM_WORLD, size > 1 ? 1 : 0, &next, &bytes, &options,
                                        &shape);
  check(status == RANKSHAPE_OK, "a traffic graph relabels", rank);
  if (status == RANKSHAPE_OK) {
    MPI_Comm ring = rankshape_comm(shape);
    int me = -1, in = -1, out = -1, weighted = 0;
    MPI_Comm_rank(ring, &me);
    check(rankshape_old_rank(shape, me) == rank, "graph translation", rank);
#ifndef SMPI_H /* SimGrid 3.32 has no distributed graphs: no topology there */
    MPI_Dist_graph_neighbors_count(ring, &in, &out, &weighted);
    int want = size == 1 ? 0 : size == 2 ? 1 : 2;
    check(in == want && out == want, "vertex i has the ring's neighbours", rank);
    if (want > 0) {
      int sources[2], source_weights[2], destinations[2], destination_weights[2];
      MPI_Dist_graph_neighbors(ring, in, sources, source_weights, out, destinations,
                               destination_weights);
      int before = (me + size - 1) % size, after = (me + 1) % size;
      check(sources[0] == (before < after ? before : after) &&
                sources[want - 1] == (before < after ? after : before),
            "the neighbours are the ring's", rank);
      /* Each neighbour sends its new rank: what arrives names the sources. */
      int received[2] = {-1, -1};
      int mine[2] = {me, me};
      MPI_Neighbor_alltoall(mine, 1, MPI_INT, received, 1, MPI_INT, ring);
      check(received[0] == sources[0] && received[want - 1] == sources[want - 1],
            "a neighbour alltoall reaches the ring's neighbours", rank);
    }
#else
    (void)in, (void)out, (void)weighted;
#endif
    rankshape_free(&shape);
  }
  int self = rank;
  status = rankshape_relabel_graph_comm(MPI_COMM_WORLD, 1, &self, NULL, &options, &shape);
  check(status == RANKSHAPE_ERR_ARG && strstr(rankshape_last_error(), "not another rank") != NULL,
        "a rank that names itself is refused on every rank", rank);

  /* A bad pattern: the same error on every rank, naming it. */
  options.pattern = "stencil:sideways";
  status = rankshape_relabel_comm(MPI_COMM_WORLD, 2, dims, &options, &shape);
  check(status == RANKSHAPE_ERR_ARG && strstr(rankshape_last_error(), "sideways") != NULL,
        "bad pattern is named", rank);
  options.pattern = NULL;
  options.source = "guesswork";
  status = rankshape_relabel_comm(MPI_COMM_WORLD, 2, dims, &options, &shape);
  check(status == RANKSHAPE_ERR_ARG && strstr(rankshape_last_error(), "guesswork") != NULL,
        "unknown source is named", rank);

  int all_failures = 0;
  MPI_Allreduce(&failures, &all_failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) printf("c_example: %d ranks, %d failed checks\n", size, all_failures);
  MPI_Finalize();
  return all_failures == 0 ? 0 : 1;
}
