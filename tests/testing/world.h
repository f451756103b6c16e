// This process's place in MPI_COMM_WORLD, for MPI tests.
#ifndef RANKSHAPE_TESTS_TESTING_WORLD_H_
#define RANKSHAPE_TESTS_TESTING_WORLD_H_

#include <mpi.h>

namespace rankshape::testing {

inline int world_rank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

inline int world_size() {
  int p = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  return p;
}

}  // namespace rankshape::testing

#endif  // RANKSHAPE_TESTS_TESTING_WORLD_H_
