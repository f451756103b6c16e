// MPI errors as exceptions. Communicators made by rankshape use
// MPI_ERRORS_RETURN so that failures come back as codes; check() turns a
// code into an MpiError carrying the MPI error class and MPI's own text.
#ifndef RANKSHAPE_LIB_MPI_ERROR_H_
#define RANKSHAPE_LIB_MPI_ERROR_H_

#include <mpi.h>

#include <stdexcept>
#include <string>

namespace rankshape::mpi {

class MpiError : public std::runtime_error {
 public:
  MpiError(const std::string& call, int code);
  /// MPI_Error_class of the failing code (e.g. MPI_ERR_COMM).
  int error_class() const { return error_class_; }
  int code() const { return code_; }

 private:
  int code_;
  int error_class_;
};

/// Throws MpiError naming `call` unless code is MPI_SUCCESS.
inline void check(int code, const char* call) {
  if (code != MPI_SUCCESS) throw MpiError(call, code);
}

}  // namespace rankshape::mpi

#endif  // RANKSHAPE_LIB_MPI_ERROR_H_
