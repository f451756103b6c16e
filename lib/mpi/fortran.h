// Fortran callers' buffers as C sees them. Fortran's MPI_IN_PLACE and
// MPI_BOTTOM are variables of the MPI library, passed by address (Open MPI:
// mpi_fortran_in_place_ and its manglings; MPICH: the addresses its
// Fortran MPI_Init stores in MPIR_F_MPI_IN_PLACE, and MPIR_F08_* for
// mpi_f08). The same holds for the topology constructors' MPI_UNWEIGHTED
// and MPI_WEIGHTS_EMPTY. The drop-ins' Fortran entry points use this to
// hand C the sentinels it knows.
#ifndef RANKSHAPE_LIB_MPI_FORTRAN_H_
#define RANKSHAPE_LIB_MPI_FORTRAN_H_

#include <mpi.h>

namespace rankshape::mpi {

/// MPI_IN_PLACE or MPI_BOTTOM for Fortran's sentinels, else buffer itself.
void* c_buffer(void* buffer);

/// MPI_UNWEIGHTED or MPI_WEIGHTS_EMPTY for Fortran's (Open MPI:
/// mpi_fortran_unweighted_, mpi_fortran_weights_empty_; MPICH: the
/// addresses in MPIR_F_MPI_UNWEIGHTED and MPIR_F_MPI_WEIGHTS_EMPTY, and
/// mpi_f08's link constants), else weights itself (a Fortran INTEGER array
/// is a C int array).
const int* c_weights(const MPI_Fint* weights);

}  // namespace rankshape::mpi

#endif  // RANKSHAPE_LIB_MPI_FORTRAN_H_
