/* A halo exchange on a communicator rankshape has relabelled, from C.
 * Built against an installed rankshape (see docs/install.md):
 *
 *   mpicc halo.c $(pkg-config --cflags --libs rankshape) -o halo
 *   mpirun -np 4 ./halo 1 4 [COST_FILE]
 *
 * Q0 x Q1 periodic grid (0 lets rankshape choose); without a cost file
 * rankshape measures the machine. Every rank trades its rank with its
 * neighbours along each dimension and checks what it gets; rank 0 prints
 *   rankshape VERSION
 *   world W cart C       (one line per world rank)
 *   checks ok */
#include <mpi.h>
#include <rankshape/rankshape.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv) {
  int world_rank = 0, world_size = 0, failed = 0, any = 0, rank = 0, k;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world_size);
  if (argc != 3 && argc != 4) {
    if (world_rank == 0) fprintf(stderr, "usage: halo Q0 Q1 [COST_FILE]\n");
    MPI_Finalize();
    return 2;
  }
  int dims[2] = {atoi(argv[1]), atoi(argv[2])};
  int periods[2] = {1, 1};
  rankshape_options options;
  rankshape_options_init(&options);
  options.pattern = "stencil:periodic";
  options.periods = periods;
  if (argc == 4) {
    options.source = "file";
    options.cost_file = argv[3];
  }
  rankshape_shape* shape = NULL;
  if (rankshape_relabel_comm(MPI_COMM_WORLD, 2, dims, &options, &shape) != RANKSHAPE_OK) {
    /* The same code on every rank; one of them says why. */
    if (world_rank == 0) fprintf(stderr, "halo: %s\n", rankshape_last_error());
    MPI_Finalize();
    return 1;
  }
  MPI_Comm cart = rankshape_comm(shape); /* owned by shape */
  MPI_Comm_rank(cart, &rank);
  for (k = 0; k < 2; ++k) {
    int down, up, from_down = -1, from_up = -1;
    MPI_Cart_shift(cart, k, 1, &down, &up);
    MPI_Sendrecv(&rank, 1, MPI_INT, up, 0, &from_down, 1, MPI_INT, down, 0, cart,
                 MPI_STATUS_IGNORE);
    MPI_Sendrecv(&rank, 1, MPI_INT, down, 1, &from_up, 1, MPI_INT, up, 1, cart, MPI_STATUS_IGNORE);
    if (from_down != down || from_up != up) {
      fprintf(stderr, "rank %d: along %d got %d %d, expected %d %d\n", rank, k, from_down, from_up,
              down, up);
      failed = 1;
    }
  }
  int* carts = world_rank == 0 ? malloc(sizeof(int) * (size_t)world_size) : NULL;
  MPI_Gather(&rank, 1, MPI_INT, carts, 1, MPI_INT, 0, MPI_COMM_WORLD);
  MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (world_rank == 0) {
    printf("rankshape %s\n", rankshape_version());
    for (k = 0; k < world_size; ++k) printf("world %d cart %d\n", k, carts[k]);
    printf(any ? "checks failed\n" : "checks ok\n");
    free(carts);
  }
  rankshape_free(&shape); /* before MPI_Finalize */
  MPI_Finalize();
  return any;
}
