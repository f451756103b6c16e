/* Not a test of its own: an MPI program that reports where each rank runs
 * ("rank R host H cpu C", in rank order from rank 0), for offline_test.sh
 * to check that a launcher file put every rank where the labelling says. */
#define _GNU_SOURCE
#include <mpi.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0, length = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  char line[MPI_MAX_PROCESSOR_NAME + 64];
  char host[MPI_MAX_PROCESSOR_NAME];
  MPI_Get_processor_name(host, &length);
  memset(line, 0, sizeof line);
  snprintf(line, sizeof line, "rank %d host %s cpu %d", rank, host, sched_getcpu());
  char* all = rank == 0 ? calloc((size_t)size, sizeof line) : NULL;
  MPI_Gather(line, (int)sizeof line, MPI_CHAR, all, (int)sizeof line, MPI_CHAR, 0, MPI_COMM_WORLD);
  if (rank == 0) {
    for (int r = 0; r < size; ++r) printf("%s\n", all + (size_t)r * sizeof line);
    free(all);
  }
  MPI_Finalize();
  return 0;
}
