// Not a test of rankshape: a binary in which every rank waits for a message
// nobody sends, used by harness_test.sh to prove hangs end with a message.
#include <gtest/gtest.h>
#include <mpi.h>

TEST(HarnessSelfTest, EveryRankWaitsForever) {
  int rank = 0, size = 1, value = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Recv(&value, 1, MPI_INT, (rank + 1) % size, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}
