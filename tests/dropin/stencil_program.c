/* An ordinary 2-D stencil program that knows nothing of rankshape: the
 * MPI_Cart_create drop-in test runs it as it is, with and without the
 * drop-in.
 *
 *   stencil_program [--errors-return] Q0 Q1 P0 P1
 *
 * It builds a Q0 x Q1 cartesian communicator with periods P0 P1 and
 * reorder = 1, then exchanges a halo: with each neighbour MPI_Cart_shift
 * names (MPI_PROC_NULL at the edge of a non-periodic dimension) it trades
 * its cartesian rank with MPI_Sendrecv, and with MPI_Neighbor_alltoall
 * once more, and checks every value against the rank MPI_Cart_rank gives
 * for the neighbour's coordinates. Rank 0 prints
 *   dims Q0 Q1
 *   world W cart C coords X Y     (one line per world rank, in order)
 *   checks ok
 * --errors-return sets MPI_ERRORS_RETURN on MPI_COMM_WORLD, so that a
 * failing MPI_Cart_create returns its code (printed by every rank as
 * "rank W: MPI_Cart_create failed: ..."); exit status 1. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The cartesian rank at coords + step along dim, or MPI_PROC_NULL. */
static int expected_neighbour(MPI_Comm cart, const int dims[2], const int periods[2],
                              const int coords[2], int dim, int step) {
  int c[2] = {coords[0], coords[1]}, rank = MPI_PROC_NULL;
  c[dim] += step;
  if (c[dim] < 0 || c[dim] >= dims[dim]) {
    if (!periods[dim]) return MPI_PROC_NULL;
    c[dim] = (c[dim] + dims[dim]) % dims[dim];
  }
  MPI_Cart_rank(cart, c, &rank);
  return rank;
}

int main(int argc, char** argv) {
  int world_rank = 0, world_size = 0, arg = 1, failed = 0, any = 0, code, k;
  int dims[2], periods[2], coords[2] = {0, 0}, cart_rank = -1;
  MPI_Comm cart = MPI_COMM_NULL;

  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world_size);
  if (arg < argc && strcmp(argv[arg], "--errors-return") == 0) {
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    ++arg;
  }
  if (arg + 4 != argc) {
    if (world_rank == 0) {
      fprintf(stderr, "usage: stencil_program [--errors-return] Q0 Q1 P0 P1\n");
    }
    MPI_Finalize();
    return 2;
  }
  dims[0] = atoi(argv[arg]);
  dims[1] = atoi(argv[arg + 1]);
  periods[0] = atoi(argv[arg + 2]);
  periods[1] = atoi(argv[arg + 3]);

  code = MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 1, &cart);
  if (code != MPI_SUCCESS) {
    char text[MPI_MAX_ERROR_STRING];
    int length = 0, error_class = 0;
    MPI_Error_class(code, &error_class);
    MPI_Error_string(code, text, &length);
    fprintf(stderr, "rank %d: MPI_Cart_create failed: error class %d%s: %s\n", world_rank,
            error_class, error_class == MPI_ERR_ARG ? " (MPI_ERR_ARG)" : "", text);
    MPI_Finalize();
    return 1;
  }
  if (cart != MPI_COMM_NULL) {
    int sent[4], received[4], expected[4];
    MPI_Comm_rank(cart, &cart_rank);
    MPI_Cart_coords(cart, cart_rank, 2, coords);
    /* The halo by hand: both directions of each dimension. */
    for (k = 0; k < 2; ++k) {
      int down = MPI_PROC_NULL, up = MPI_PROC_NULL, from_down = -1, from_up = -1;
      MPI_Cart_shift(cart, k, 1, &down, &up);
      if (down != expected_neighbour(cart, dims, periods, coords, k, -1) ||
          up != expected_neighbour(cart, dims, periods, coords, k, 1)) {
        fprintf(stderr, "rank %d: MPI_Cart_shift(%d) gave %d %d\n", world_rank, k, down, up);
        failed = 1;
      }
      MPI_Sendrecv(&cart_rank, 1, MPI_INT, up, 0, &from_down, 1, MPI_INT, down, 0, cart,
                   MPI_STATUS_IGNORE);
      MPI_Sendrecv(&cart_rank, 1, MPI_INT, down, 1, &from_up, 1, MPI_INT, up, 1, cart,
                   MPI_STATUS_IGNORE);
      if ((down != MPI_PROC_NULL && from_down != down) || (up != MPI_PROC_NULL && from_up != up)) {
        fprintf(stderr, "rank %d: halo along %d: got %d %d from %d %d\n", world_rank, k, from_down,
                from_up, down, up);
        failed = 1;
      }
    }
    /* The same with a neighbour collective: order -1, +1 per dimension. */
    for (k = 0; k < 4; ++k) {
      sent[k] = cart_rank;
      received[k] = -1;
      expected[k] = expected_neighbour(cart, dims, periods, coords, k / 2, k % 2 ? 1 : -1);
    }
    MPI_Neighbor_alltoall(sent, 1, MPI_INT, received, 1, MPI_INT, cart);
    for (k = 0; k < 4; ++k) {
      if (expected[k] != MPI_PROC_NULL && received[k] != expected[k]) {
        fprintf(stderr, "rank %d: MPI_Neighbor_alltoall slot %d: %d, expected %d\n", world_rank, k,
                received[k], expected[k]);
        failed = 1;
      }
    }
  }
  {
    int mine[4] = {world_rank, cart_rank, coords[0], coords[1]}, r;
    int* all = world_rank == 0 ? malloc(sizeof(int) * 4 * (size_t)world_size) : NULL;
    MPI_Gather(mine, 4, MPI_INT, all, 4, MPI_INT, 0, MPI_COMM_WORLD);
    if (world_rank == 0) {
      printf("dims %d %d\n", dims[0], dims[1]);
      for (r = 0; r < world_size; ++r) {
        printf("world %d cart %d coords %d %d\n", all[4 * r], all[4 * r + 1], all[4 * r + 2],
               all[4 * r + 3]);
      }
      free(all);
    }
  }
  MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (world_rank == 0) printf(any ? "checks FAILED\n" : "checks ok\n");
  fflush(stdout);
  if (cart != MPI_COMM_NULL) MPI_Comm_free(&cart);
  MPI_Finalize();
  return any;
}
