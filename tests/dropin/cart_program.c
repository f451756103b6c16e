/* An ordinary cartesian MPI program that knows nothing of rankshape: the
 * MPI_Cart_create drop-in test runs it as it is, with and without the
 * drop-in.
 *
 *   cart_program [--errors-return] [Q0 Q1]
 *
 * Q0 x Q1 comes from MPI_Dims_create unless given (a grid smaller than
 * the job leaves the extra ranks out: cart rank -1). The program builds a
 * 2-D cartesian communicator with reorder = 1, splits it into rows and
 * columns with MPI_Cart_sub, and checks an allreduce along each: the sum
 * of the cartesian ranks of a row (or column) is known from the
 * coordinates. Rank 0 prints
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

static int fail_everywhere(int failed) {
  int any = 0;
  MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  return any;
}

int main(int argc, char** argv) {
  int world_rank = 0, world_size = 0, arg = 1;
  int dims[2] = {0, 0}, periods[2] = {0, 0}, coords[2] = {0, 0};
  int cart_rank = -1, failed = 0, code;
  MPI_Comm cart = MPI_COMM_NULL, row = MPI_COMM_NULL, column = MPI_COMM_NULL;

  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world_size);
  if (arg < argc && strcmp(argv[arg], "--errors-return") == 0) {
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    ++arg;
  }
  if (arg + 2 == argc) {
    dims[0] = atoi(argv[arg]);
    dims[1] = atoi(argv[arg + 1]);
  } else if (arg != argc) {
    if (world_rank == 0) fprintf(stderr, "usage: cart_program [--errors-return] [Q0 Q1]\n");
    MPI_Finalize();
    return 2;
  }
  if (dims[0] == 0 || dims[1] == 0) MPI_Dims_create(world_size, 2, dims);

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
    const int along_row[2] = {0, 1}, along_column[2] = {1, 0};
    int row_sum = 0, column_sum = 0, expected_row, expected_column;
    MPI_Comm_rank(cart, &cart_rank);
    MPI_Cart_coords(cart, cart_rank, 2, coords);
    /* Row X holds cartesian ranks X*Q1 .. X*Q1+Q1-1 (the last dimension
     * varies fastest); column Y holds Y, Q1+Y, ..., (Q0-1)*Q1+Y. */
    MPI_Cart_sub(cart, along_row, &row);
    MPI_Cart_sub(cart, along_column, &column);
    MPI_Allreduce(&cart_rank, &row_sum, 1, MPI_INT, MPI_SUM, row);
    MPI_Allreduce(&cart_rank, &column_sum, 1, MPI_INT, MPI_SUM, column);
    expected_row = coords[0] * dims[1] * dims[1] + dims[1] * (dims[1] - 1) / 2;
    expected_column = dims[1] * dims[0] * (dims[0] - 1) / 2 + dims[0] * coords[1];
    if (row_sum != expected_row || column_sum != expected_column) {
      fprintf(stderr, "rank %d: row sum %d (expected %d), column sum %d (expected %d)\n",
              world_rank, row_sum, expected_row, column_sum, expected_column);
      failed = 1;
    }
  }

  {
    int mine[4] = {world_rank, cart_rank, coords[0], coords[1]};
    int* all = world_rank == 0 ? malloc(sizeof(int) * 4 * (size_t)world_size) : NULL;
    MPI_Gather(mine, 4, MPI_INT, all, 4, MPI_INT, 0, MPI_COMM_WORLD);
    if (world_rank == 0) {
      int r;
      printf("dims %d %d\n", dims[0], dims[1]);
      for (r = 0; r < world_size; ++r) {
        printf("world %d cart %d coords %d %d\n", all[4 * r], all[4 * r + 1], all[4 * r + 2],
               all[4 * r + 3]);
      }
      free(all);
    }
  }
  failed = fail_everywhere(failed);
  if (world_rank == 0) printf(failed ? "checks FAILED\n" : "checks ok\n");
  fflush(stdout);

  if (row != MPI_COMM_NULL) MPI_Comm_free(&row);
  if (column != MPI_COMM_NULL) MPI_Comm_free(&column);
  if (cart != MPI_COMM_NULL) MPI_Comm_free(&cart);
  MPI_Finalize();
  return failed;
}
