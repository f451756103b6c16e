// C += A B on the caller's column-major buffers. Eigen: maps with an outer
// stride (the leading dimension) over the buffers and one noalias() product
// (Eigen's blocked GEMM writes into C directly: no temporaries, no copies).
// OpenBLAS: one cblas_dgemm with beta = 1.
#include "lib/matmul/local.h"

#include <limits>
#include <stdexcept>
#include <string>

#ifdef RANKSHAPE_MATMUL_OPENBLAS
#include <cblas-openblas.h>
#else
#include <Eigen/Core>
#endif

namespace rankshape::matmul {
namespace {

void check_operand(const char* name, std::int64_t rows, std::int64_t cols, std::int64_t ld,
                   const void* data) {
  if (rows < 0 || cols < 0) {
    throw std::invalid_argument(std::string("multiply_add: ") + name + " has a negative size");
  }
  if (ld < 1 || ld < rows) {
    throw std::invalid_argument(std::string("multiply_add: leading dimension of ") + name + " (" +
                                std::to_string(ld) +
                                ") is below max(1, rows = " + std::to_string(rows) + ")");
  }
  if (data == nullptr && rows > 0 && cols > 0) {
    throw std::invalid_argument(std::string("multiply_add: ") + name + " is null");
  }
}

}  // namespace

void multiply_add(std::int64_t m, std::int64_t n, std::int64_t k, const double* a, std::int64_t lda,
                  const double* b, std::int64_t ldb, double* c, std::int64_t ldc) {
  check_operand("A", m, k, lda, a);
  check_operand("B", k, n, ldb, b);
  check_operand("C", m, n, ldc, c);
  if (m == 0 || n == 0 || k == 0) return;  // C += 0
#ifdef RANKSHAPE_MATMUL_OPENBLAS
  constexpr std::int64_t kMax = std::numeric_limits<blasint>::max();
  if (m > kMax || n > kMax || k > kMax || lda > kMax || ldb > kMax || ldc > kMax) {
    throw std::invalid_argument("multiply_add: a size exceeds OpenBLAS's integer range");
  }
  cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, static_cast<blasint>(m),
              static_cast<blasint>(n), static_cast<blasint>(k), 1.0, a, static_cast<blasint>(lda),
              b, static_cast<blasint>(ldb), 1.0, c, static_cast<blasint>(ldc));
#else
  using Matrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::ColMajor>;
  using Stride = Eigen::OuterStride<>;
  const Eigen::Map<const Matrix, Eigen::Unaligned, Stride> am(a, m, k, Stride(lda));
  const Eigen::Map<const Matrix, Eigen::Unaligned, Stride> bm(b, k, n, Stride(ldb));
  Eigen::Map<Matrix, Eigen::Unaligned, Stride> cm(c, m, n, Stride(ldc));
  cm.noalias() += am * bm;
#endif
}

const char* local_backend() {
#ifdef RANKSHAPE_MATMUL_OPENBLAS
  return "openblas";
#else
  return "eigen";
#endif
}

}  // namespace rankshape::matmul
