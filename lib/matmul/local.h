// The local multiplication every distributed algorithm ends in: C += A B
// on column-major blocks, through Eigen maps over the caller's buffers (no
// copies), or OpenBLAS's dgemm when the build has it (--define=blas=openblas).
#ifndef RANKSHAPE_LIB_MATMUL_LOCAL_H_
#define RANKSHAPE_LIB_MATMUL_LOCAL_H_

#include <cstdint>

namespace rankshape::matmul {

/// C (m x n, leading dimension ldc) += A (m x k, lda) * B (k x n, ldb), all
/// column-major. Any of m, n, k may be 0. Leading dimensions are at least
/// the row counts (1 when there are none).
void multiply_add(std::int64_t m, std::int64_t n, std::int64_t k, const double* a, std::int64_t lda,
                  const double* b, std::int64_t ldb, double* c, std::int64_t ldc);

/// "eigen" or "openblas": what multiply_add runs on.
const char* local_backend();

}  // namespace rankshape::matmul

#endif  // RANKSHAPE_LIB_MATMUL_LOCAL_H_
