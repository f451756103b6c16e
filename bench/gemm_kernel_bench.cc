// gemm_kernel_bench: how fast lib/matmul's local product is against
// single-threaded OpenBLAS DGEMM, on one core, square C += A B:
//   gemm_kernel_bench --out kernel.csv [--sizes 256,512,1024,2048] [--min-seconds 1]
// For each size, multiply_add on each back-end this build has (Eigen, and
// OpenBLAS when found), then cblas_dgemm itself: one untimed call, then
// calls until both --min-reps calls and --min-seconds have passed; the time
// kept is the median call. All see the same column-major operands (uniform
// in [-1, 1)); every back-end's result is compared with OpenBLAS's, and a
// difference beyond rounding fails the run (status 1).
//
// Output (written atomically): CSV rows
//   n,kernel,backend,default,reps,seconds,gflops,ratio_to_openblas
// kernel "multiply_add" (one row per back-end; default 1 on the one
// multiply_add uses unless told otherwise) and "openblas" (cblas_dgemm, one
// thread); gflops is 2 n^3 / seconds; ratio_to_openblas is the row's
// GFLOP/s over cblas_dgemm's (1 for cblas_dgemm itself).
#include <cblas-openblas.h>
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <functional>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "lib/io/atomic_file.h"
#include "lib/matmul/local.h"
#include "lib/util/random.h"

namespace {

using Clock = std::chrono::steady_clock;

struct Args {
  std::string out;
  std::vector<std::int64_t> sizes = {256, 512, 1024, 2048};
  double min_seconds = 1;
  int min_reps = 3;
};

struct Timing {
  int reps = 0;
  double seconds = 0;  // median call
};

Timing time_calls(const Args& a, const std::function<void()>& call) {
  call();  // warm: caches, page faults, OpenBLAS's buffers
  std::vector<double> times;
  const Clock::time_point begin = Clock::now();
  while (static_cast<int>(times.size()) < a.min_reps ||
         std::chrono::duration<double>(Clock::now() - begin).count() < a.min_seconds) {
    const Clock::time_point start = Clock::now();
    call();
    times.push_back(std::chrono::duration<double>(Clock::now() - start).count());
  }
  std::sort(times.begin(), times.end());
  return {static_cast<int>(times.size()), times[times.size() / 2]};
}

int run(const Args& a) {
  namespace mm = rankshape::matmul;
  openblas_set_num_threads(1);
  const mm::LocalBackend default_backend = mm::current_local_backend();
  const std::vector<mm::LocalBackend> backends = mm::available_local_backends();
  std::cout << fmt::format("# gemm_kernel_bench: multiply_add by default on {}; {}\n",
                           mm::backend_name(default_backend), openblas_get_config());
  std::cout << fmt::format("{:>6}", "n");
  for (const mm::LocalBackend b : backends) {
    std::cout << fmt::format(" {:>34}",
                             fmt::format("multiply_add {} GFLOP/s (ratio)", mm::backend_name(b)));
  }
  std::cout << fmt::format(" {:>16}\n", "openblas GFLOP/s");
  std::ostringstream csv;
  csv << "n,kernel,backend,default,reps,seconds,gflops,ratio_to_openblas\n";
  bool wrong = false;
  for (const std::int64_t n : a.sizes) {
    const std::size_t count = static_cast<std::size_t>(n * n);
    std::vector<double> x(count), y(count), c(count, 0.0), c_blas(count, 0.0);
    rankshape::SplitMix64 rng(static_cast<std::uint64_t>(n));
    for (double& v : x) v = 2 * rng.uniform() - 1;
    for (double& v : y) v = 2 * rng.uniform() - 1;
    const double flops =
        2.0 * static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(n);
    // C += A B on every call: values grow by A B per call, which stays far
    // from overflow; the comparisons below use one call on zeroed C.
    const blasint bn = static_cast<blasint>(n);
    const Timing blas = time_calls(a, [&] {
      cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, bn, bn, bn, 1.0, x.data(), bn,
                  y.data(), bn, 1.0, c_blas.data(), bn);
    });
    const double g_blas = flops / blas.seconds / 1e9;
    std::fill(c_blas.begin(), c_blas.end(), 0.0);
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, bn, bn, bn, 1.0, x.data(), bn, y.data(),
                bn, 0.0, c_blas.data(), bn);
    std::cout << fmt::format("{:>6}", n);
    for (const mm::LocalBackend b : backends) {
      mm::set_local_backend(b);
      const Timing ours =
          time_calls(a, [&] { mm::multiply_add(n, n, n, x.data(), n, y.data(), n, c.data(), n); });
      std::fill(c.begin(), c.end(), 0.0);
      mm::multiply_add(n, n, n, x.data(), n, y.data(), n, c.data(), n);
      double diff = 0;
      for (std::size_t i = 0; i < count; ++i) diff = std::max(diff, std::fabs(c[i] - c_blas[i]));
      // |entries of A B| <= n; rounding differs by at most about n eps each.
      const double tol = static_cast<double>(n) * static_cast<double>(n) * 4e-16;
      if (!(diff <= tol)) wrong = true;
      const double g_ours = flops / ours.seconds / 1e9;
      csv << fmt::format("{},multiply_add,{},{},{},{:.9g},{:.6g},{:.4f}\n", n, mm::backend_name(b),
                         b == default_backend ? 1 : 0, ours.reps, ours.seconds, g_ours,
                         g_ours / g_blas);
      std::cout << fmt::format(" {:>34}",
                               fmt::format("{:.2f} ({:.3f}){}", g_ours, g_ours / g_blas,
                                           diff <= tol ? "" : fmt::format(" WRONG: {:.3g}", diff)));
    }
    mm::set_local_backend(default_backend);
    csv << fmt::format("{},openblas,openblas,0,{},{:.9g},{:.6g},1\n", n, blas.reps, blas.seconds,
                       g_blas);
    std::cout << fmt::format(" {:>16.2f}\n", g_blas) << std::flush;
  }
  const std::string text = csv.str();
  rankshape::write_file_atomically(a.out, [&](std::ostream& out) { out << text; });
  if (wrong) std::cerr << "gemm_kernel_bench: error: the kernels disagree (see WRONG above)\n";
  return wrong ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app("GFLOP/s of lib/matmul's local product against single-threaded OpenBLAS DGEMM.",
               "gemm_kernel_bench");
  Args a;
  app.add_option("--out", a.out, "CSV to write")->required();
  app.add_option("--sizes", a.sizes, "square sizes n")
      ->delimiter(',')
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{32768}))
      ->capture_default_str();
  app.add_option("--min-seconds", a.min_seconds, "time each kernel at least this long per size")
      ->check(CLI::Range(0.0, 3600.0))
      ->capture_default_str();
  app.add_option("--min-reps", a.min_reps, "timed calls at least")
      ->check(CLI::Range(1, 1000000))
      ->capture_default_str();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  try {
    return run(a);
  } catch (const std::exception& e) {
    std::cerr << "gemm_kernel_bench: error: " << e.what() << "\n";
    return 1;
  }
}
