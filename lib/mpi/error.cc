#include "lib/mpi/error.h"

namespace rankshape::mpi {
namespace {

std::string describe(const std::string& call, int code) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  if (MPI_Error_string(code, text, &length) != MPI_SUCCESS) {
    return call + " failed with MPI error code " + std::to_string(code);
  }
  return call + " failed: " + std::string(text, length) + " (MPI error code " +
         std::to_string(code) + ")";
}

int class_of(int code) {
  int cls = MPI_ERR_UNKNOWN;
  if (MPI_Error_class(code, &cls) != MPI_SUCCESS) cls = MPI_ERR_UNKNOWN;
  return cls;
}

}  // namespace

MpiError::MpiError(const std::string& call, int code)
    : std::runtime_error(describe(call, code)), code_(code), error_class_(class_of(code)) {}

}  // namespace rankshape::mpi
