/* An unmodified MPI program (nothing of rankshape): each rank r sends
   100 (r + 1) chars to rank r + 1 three times (MPI_Sendrecv), then all
   take part in one MPI_Allreduce of an int. */
#include <mpi.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int r, p;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  char out[1000] = {0}, in[1000];
  for (int i = 0; i < 3; ++i) {
    MPI_Sendrecv(out, 100 * (r + 1), MPI_CHAR, (r + 1) % p, 0, in, 1000, MPI_CHAR, (r + p - 1) % p,
                 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  }
  int x = r, y = 0;
  MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  return MPI_Finalize() == MPI_SUCCESS ? 0 : 3;
}
