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

}  // namespace rankshape::mpi
