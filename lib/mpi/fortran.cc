#include "lib/mpi/fortran.h"

#include <dlfcn.h>
#include <mpi.h>

#include <vector>

namespace rankshape::mpi {
namespace {

// The address of a data symbol of the MPI library, or null.
const void* symbol(const char* name) { return dlsym(RTLD_DEFAULT, name); }

}  // namespace

void* c_buffer(void* buffer) {
  struct Sentinels {
    std::vector<const void*> in_place, bottom;
    const void* const* mpich_in_place = nullptr;
    const void* const* mpich_bottom = nullptr;
  };
  static const Sentinels s = [] {
    Sentinels t;
    for (const char* name :
         {"mpi_fortran_in_place_", "mpi_fortran_in_place", "mpi_fortran_in_place__",
          "MPI_FORTRAN_IN_PLACE", "MPIR_F08_MPI_IN_PLACE"}) {
      if (const void* p = symbol(name)) t.in_place.push_back(p);
    }
    for (const char* name : {"mpi_fortran_bottom_", "mpi_fortran_bottom", "mpi_fortran_bottom__",
                             "MPI_FORTRAN_BOTTOM", "MPIR_F08_MPI_BOTTOM"}) {
      if (const void* p = symbol(name)) t.bottom.push_back(p);
    }
    t.mpich_in_place = static_cast<const void* const*>(symbol("MPIR_F_MPI_IN_PLACE"));
    t.mpich_bottom = static_cast<const void* const*>(symbol("MPIR_F_MPI_BOTTOM"));
    return t;
  }();
  if (buffer == nullptr) return buffer;
  for (const void* p : s.in_place) {
    if (buffer == p) return MPI_IN_PLACE;
  }
  if (s.mpich_in_place != nullptr && *s.mpich_in_place == buffer) return MPI_IN_PLACE;
  for (const void* p : s.bottom) {
    if (buffer == p) return MPI_BOTTOM;
  }
  if (s.mpich_bottom != nullptr && *s.mpich_bottom == buffer) return MPI_BOTTOM;
  return buffer;
}

const int* c_weights(const MPI_Fint* weights) {
  struct Sentinels {
    std::vector<const void*> unweighted, empty;
    const void* const* mpich_unweighted = nullptr;
    const void* const* mpich_empty = nullptr;
  };
  static const Sentinels s = [] {
    Sentinels t;
    for (const char* name :
         {"mpi_fortran_unweighted_", "mpi_fortran_unweighted", "mpi_fortran_unweighted__",
          "MPI_FORTRAN_UNWEIGHTED", "__mpi_f08_link_constants_MOD_mpi_unweighted"}) {
      if (const void* p = symbol(name)) t.unweighted.push_back(p);
    }
    for (const char* name :
         {"mpi_fortran_weights_empty_", "mpi_fortran_weights_empty", "mpi_fortran_weights_empty__",
          "MPI_FORTRAN_WEIGHTS_EMPTY", "__mpi_f08_link_constants_MOD_mpi_weights_empty"}) {
      if (const void* p = symbol(name)) t.empty.push_back(p);
    }
    t.mpich_unweighted = static_cast<const void* const*>(symbol("MPIR_F_MPI_UNWEIGHTED"));
    t.mpich_empty = static_cast<const void* const*>(symbol("MPIR_F_MPI_WEIGHTS_EMPTY"));
    return t;
  }();
  const void* w = weights;
  for (const void* p : s.unweighted) {
    if (w == p) return MPI_UNWEIGHTED;
  }
  if (s.mpich_unweighted != nullptr && *s.mpich_unweighted == w) return MPI_UNWEIGHTED;
  for (const void* p : s.empty) {
    if (w == p) return MPI_WEIGHTS_EMPTY;
  }
  if (s.mpich_empty != nullptr && *s.mpich_empty == w) return MPI_WEIGHTS_EMPTY;
  return weights;
}

}  // namespace rankshape::mpi
