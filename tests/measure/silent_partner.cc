// Not a test of its own: an MPI program in which rank 1 never answers
// (it waits for a message nobody sends) while the others measure, for
// stall_test.sh to check that the run ends with a message naming the ranks.
#include <mpi.h>

#include "lib/measure/pingpong.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 1) {
    int value = 0;
    MPI_Recv(&value, 1, MPI_INT, 0, 12345, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  } else {
    rankshape::PingPongOptions o;
    o.sizes = {8, 64};
    o.repetitions = 2;
    o.stall_seconds = 2;
    rankshape::measure_pingpong(
        rankshape::mpi::Communicator(MPI_COMM_WORLD, rankshape::mpi::Ownership::kBorrow), o);
  }
  MPI_Finalize();
  return 0;
}
