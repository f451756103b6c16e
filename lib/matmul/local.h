// The local multiplication every distributed algorithm ends in: C += A B
// on column-major blocks, without copies: OpenBLAS's dgemm when the build
// found OpenBLAS (the default then: it is the faster kernel), or Eigen maps
// over the caller's buffers.
#ifndef RANKSHAPE_LIB_MATMUL_LOCAL_H_
#define RANKSHAPE_LIB_MATMUL_LOCAL_H_

#include <cstdint>
#include <string>
#include <vector>

namespace rankshape::matmul {

/// C (m x n, leading dimension ldc) += A (m x k, lda) * B (k x n, ldb), all
/// column-major. Any of m, n, k may be 0. Leading dimensions are at least
/// the row counts (1 when there are none).
void multiply_add(std::int64_t m, std::int64_t n, std::int64_t k, const double* a, std::int64_t lda,
                  const double* b, std::int64_t ldb, double* c, std::int64_t ldc);

/// What multiply_add runs on. OpenBLAS runs with one thread per process
/// (MPI ranks already fill the cores) unless OPENBLAS_NUM_THREADS,
/// GOTO_NUM_THREADS or OMP_NUM_THREADS is set: its first product sets
/// OpenBLAS's process-wide thread count to 1. Sizes beyond OpenBLAS's
/// 32-bit integers go to Eigen.
enum class LocalBackend { kEigen, kOpenBlas };

/// "eigen" or "openblas".
const char* backend_name(LocalBackend backend);

/// The back-end named `name` ("eigen" or "openblas"); std::invalid_argument
/// names the problem when it is neither or this build lacks it.
LocalBackend parse_local_backend(const std::string& name);

/// The back-ends this build has: Eigen always, then OpenBLAS if found.
std::vector<LocalBackend> available_local_backends();

/// This process's choice for multiply_add from now on (std::invalid_argument
/// if this build lacks it). Before any call, the choice is
/// RANKSHAPE_LOCAL_GEMM (eigen or openblas) when set, else OpenBLAS when
/// built in, else Eigen.
void set_local_backend(LocalBackend backend);

/// This process's current choice.
LocalBackend current_local_backend();

/// backend_name(current_local_backend()).
const char* local_backend();

}  // namespace rankshape::matmul

#endif  // RANKSHAPE_LIB_MATMUL_LOCAL_H_
