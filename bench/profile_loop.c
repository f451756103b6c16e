/* A message-heavy loop for the profiler's overhead (bench/profile_overhead.sh):
   ranks in pairs (r, r ^ 1; a single rank with itself) exchange ITERS
   messages of BYTES bytes with MPI_Isend, MPI_Irecv and MPI_Waitall
   ("p2p"), or all ranks run ITERS MPI_Allreduce of BYTES bytes
   ("allreduce"). Prints the slowest rank's seconds. Plain MPI: the
   profiler is preloaded or not.
     profile_loop p2p|allreduce ITERS BYTES */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int r, p;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  if (argc != 4 || (strcmp(argv[1], "p2p") != 0 && strcmp(argv[1], "allreduce") != 0) ||
      atol(argv[2]) < 1 || atoi(argv[3]) < 1 ||
      (strcmp(argv[1], "p2p") == 0 && p % 2 != 0 && p != 1)) {
    if (r == 0)
      fprintf(stderr, "usage: profile_loop p2p|allreduce ITERS BYTES (p2p: even ranks or 1)\n");
    MPI_Finalize();
    return 2;
  }
  const int p2p = strcmp(argv[1], "p2p") == 0;
  const long iters = atol(argv[2]);
  const int bytes = atoi(argv[3]);
  const int partner = p == 1 ? r : r ^ 1;
  char* out = calloc((size_t)bytes, 1);
  char* in = calloc((size_t)bytes, 1);
  MPI_Barrier(MPI_COMM_WORLD);
  const double start = MPI_Wtime();
  for (long i = 0; i < iters; ++i) {
    if (p2p) {
      MPI_Request rq[2];
      MPI_Status st[2];  // not MPI_STATUSES_IGNORE: GCC 12 flags MPICH's (-Wstringop-overflow)
      MPI_Irecv(in, bytes, MPI_CHAR, partner, 0, MPI_COMM_WORLD, &rq[0]);
      MPI_Isend(out, bytes, MPI_CHAR, partner, 0, MPI_COMM_WORLD, &rq[1]);
      MPI_Waitall(2, rq, st);
    } else {
      MPI_Allreduce(out, in, bytes, MPI_CHAR, MPI_MAX, MPI_COMM_WORLD);
    }
  }
  double seconds = MPI_Wtime() - start, slowest = 0;
  MPI_Reduce(&seconds, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  if (r == 0) printf("seconds %.6f\n", slowest);
  free(out);
  free(in);
  MPI_Finalize();
  return 0;
}
