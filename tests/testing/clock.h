// Time for MPI tests that need a rank to be late, or ranks to compare when
// they did something: real time under Open MPI and MPICH, simulated time
// under SMPI (whose mpi.h defines SMPI_H).
#ifndef RANKSHAPE_TESTS_TESTING_CLOCK_H_
#define RANKSHAPE_TESTS_TESTING_CLOCK_H_

#include <mpi.h>

#include <chrono>
#include <thread>

namespace rankshape::testing {

/// Keeps this rank busy for `seconds`: a sleep, or simulated computation
/// under SMPI (a real sleep there would not advance simulated time).
inline void hold_for(double seconds) {
#ifdef SMPI_H
  smpi_execute(seconds);
#else
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
#endif
}

/// Seconds on a clock every process of the host shares (Open MPI's
/// MPI_Wtime counts from each process's start), or SMPI's simulated one.
inline double shared_now() {
#ifdef SMPI_H
  return MPI_Wtime();
#else
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
#endif
}

}  // namespace rankshape::testing

#endif  // RANKSHAPE_TESTS_TESTING_CLOCK_H_
