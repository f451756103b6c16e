// Not a test of rankshape: a binary that must make the MPI test harness
// fail, used by harness_test.sh to prove failures on one rank are caught.
#include <gtest/gtest.h>
#include <mpi.h>

TEST(HarnessSelfTest, FailsOnlyOnRankOne) {
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  EXPECT_NE(rank, size > 1 ? 1 : 0) << "planted failure";
}

TEST(HarnessSelfTest, PassesEverywhere) { SUCCEED(); }
