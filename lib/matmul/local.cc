// C += A B on the caller's column-major buffers. Eigen: maps with an outer
// stride (the leading dimension) over the buffers and one noalias() product
// (Eigen's blocked GEMM writes into C directly: no temporaries, no copies).
// OpenBLAS: one cblas_dgemm with beta = 1.
#include "lib/matmul/local.h"

#include <atomic>
#include <cstdlib>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "openblas/openblas_found.h"

#if RANKSHAPE_OPENBLAS_FOUND
#include <cblas-openblas.h>
#endif
#include <Eigen/Core>

namespace rankshape::matmul {
namespace {

constexpr bool kHaveOpenBlas = RANKSHAPE_OPENBLAS_FOUND != 0;

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

LocalBackend initial_backend() {
  const char* chosen = std::getenv("RANKSHAPE_LOCAL_GEMM");
  if (chosen != nullptr && *chosen != '\0') {
    try {
      return parse_local_backend(chosen);
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(std::string("RANKSHAPE_LOCAL_GEMM: ") + e.what());
    }
  }
  return kHaveOpenBlas ? LocalBackend::kOpenBlas : LocalBackend::kEigen;
}

// -1 until the first use reads the environment. Per process (and per
// simulated rank under SMPI, whose privatisation copies globals).
std::atomic<int> g_backend{-1};

void multiply_add_eigen(std::int64_t m, std::int64_t n, std::int64_t k, const double* a,
                        std::int64_t lda, const double* b, std::int64_t ldb, double* c,
                        std::int64_t ldc) {
  using Matrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::ColMajor>;
  using Stride = Eigen::OuterStride<>;
  const Eigen::Map<const Matrix, Eigen::Unaligned, Stride> am(a, m, k, Stride(lda));
  const Eigen::Map<const Matrix, Eigen::Unaligned, Stride> bm(b, k, n, Stride(ldb));
  Eigen::Map<Matrix, Eigen::Unaligned, Stride> cm(c, m, n, Stride(ldc));
  cm.noalias() += am * bm;
}

#if RANKSHAPE_OPENBLAS_FOUND
bool set_by_user(const char* variable) {
  const char* value = std::getenv(variable);
  return value != nullptr && *value != '\0';
}

void multiply_add_openblas(std::int64_t m, std::int64_t n, std::int64_t k, const double* a,
                           std::int64_t lda, const double* b, std::int64_t ldb, double* c,
                           std::int64_t ldc) {
  // Debian's OpenBLAS starts as many threads as cores; with one MPI rank
  // per core that oversubscribes every core, so one thread unless the user
  // chose a count through the variables OpenBLAS reads. The setting is
  // OpenBLAS's, for the whole process; made once (per simulated rank under
  // SMPI, which privatises this static).
  static const bool threads_set = [] {
    if (!set_by_user("OPENBLAS_NUM_THREADS") && !set_by_user("GOTO_NUM_THREADS") &&
        !set_by_user("OMP_NUM_THREADS")) {
      openblas_set_num_threads(1);
    }
    return true;
  }();
  static_cast<void>(threads_set);
  cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, static_cast<blasint>(m),
              static_cast<blasint>(n), static_cast<blasint>(k), 1.0, a, static_cast<blasint>(lda),
              b, static_cast<blasint>(ldb), 1.0, c, static_cast<blasint>(ldc));
}

/// Whether OpenBLAS's integers hold every size (Eigen's do).
bool fits_openblas(std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t lda,
                   std::int64_t ldb, std::int64_t ldc) {
  constexpr std::int64_t kMax = std::numeric_limits<blasint>::max();
  return m <= kMax && n <= kMax && k <= kMax && lda <= kMax && ldb <= kMax && ldc <= kMax;
}
#endif

}  // namespace

const char* backend_name(LocalBackend backend) {
  return backend == LocalBackend::kOpenBlas ? "openblas" : "eigen";
}

LocalBackend parse_local_backend(const std::string& name) {
  if (name == "eigen") return LocalBackend::kEigen;
  if (name == "openblas") {
    if (!kHaveOpenBlas) {
      throw std::invalid_argument(
          "the local product 'openblas' is not in this build (OpenBLAS was not found when it "
          "was built: install libopenblas-dev and build again)");
    }
    return LocalBackend::kOpenBlas;
  }
  throw std::invalid_argument("unknown local product '" + name + "' (expected eigen or openblas)");
}

std::vector<LocalBackend> available_local_backends() {
  std::vector<LocalBackend> backends = {LocalBackend::kEigen};
  if (kHaveOpenBlas) backends.push_back(LocalBackend::kOpenBlas);
  return backends;
}

void set_local_backend(LocalBackend backend) {
  if (backend == LocalBackend::kOpenBlas && !kHaveOpenBlas) {
    static_cast<void>(parse_local_backend("openblas"));  // throws, naming the fix
  }
  g_backend.store(static_cast<int>(backend));
}

LocalBackend current_local_backend() {
  int chosen = g_backend.load();
  if (chosen < 0) {
    const int initial = static_cast<int>(initial_backend());
    // A concurrent first use or set_local_backend() may have won; keep its value.
    chosen = g_backend.compare_exchange_strong(chosen, initial) ? initial : chosen;
  }
  return static_cast<LocalBackend>(chosen);
}

const char* local_backend() { return backend_name(current_local_backend()); }

void multiply_add(std::int64_t m, std::int64_t n, std::int64_t k, const double* a, std::int64_t lda,
                  const double* b, std::int64_t ldb, double* c, std::int64_t ldc) {
  check_operand("A", m, k, lda, a);
  check_operand("B", k, n, ldb, b);
  check_operand("C", m, n, ldc, c);
  // First: a bad RANKSHAPE_LOCAL_GEMM is reported even by empty products.
  const LocalBackend backend = current_local_backend();
  if (m == 0 || n == 0 || k == 0) return;    // C += 0
  if (backend == LocalBackend::kOpenBlas) {  // only ever chosen when built in
#if RANKSHAPE_OPENBLAS_FOUND
    // Beyond OpenBLAS's 32-bit integers Eigen takes over, so no rank of a
    // distributed product fails alone on a large block.
    if (fits_openblas(m, n, k, lda, ldb, ldc)) {
      multiply_add_openblas(m, n, k, a, lda, b, ldb, c, ldc);
      return;
    }
#endif
  }
  multiply_add_eigen(m, n, k, a, lda, b, ldb, c, ldc);
}

}  // namespace rankshape::matmul
