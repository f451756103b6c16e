// multiply_add against a naive triple loop: every shape class (empty,
// vectors, rectangular, larger than Eigen's blocking), leading dimensions
// above the row counts (whose padding must stay untouched), and C += A B
// (not C = A B); on every back-end this build has, and the choice of
// back-end itself.
#include "lib/matmul/local.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

#include "lib/util/random.h"

namespace rankshape::matmul {
namespace {

std::vector<double> random_values(std::size_t n, SplitMix64& rng) {
  std::vector<double> v(n);
  for (double& x : v) x = 2 * rng.uniform() - 1;
  return v;
}

struct Case {
  std::int64_t m, n, k, pad_a, pad_b, pad_c;
};

void expect_matches_naive(const Case& c) {
  SCOPED_TRACE(std::to_string(c.m) + " x " + std::to_string(c.k) + " x " + std::to_string(c.n) +
               " pads " + std::to_string(c.pad_a) + "," + std::to_string(c.pad_b) + "," +
               std::to_string(c.pad_c));
  SplitMix64 rng(static_cast<std::uint64_t>(c.m * 1000003 + c.n * 1009 + c.k));
  const std::int64_t lda = std::max<std::int64_t>(c.m, 1) + c.pad_a;
  const std::int64_t ldb = std::max<std::int64_t>(c.k, 1) + c.pad_b;
  const std::int64_t ldc = std::max<std::int64_t>(c.m, 1) + c.pad_c;
  const std::vector<double> a = random_values(static_cast<std::size_t>(lda * c.k), rng);
  const std::vector<double> b = random_values(static_cast<std::size_t>(ldb * c.n), rng);
  std::vector<double> out = random_values(static_cast<std::size_t>(ldc * c.n), rng);
  std::vector<double> expected = out;
  for (std::int64_t j = 0; j < c.n; ++j) {
    for (std::int64_t i = 0; i < c.m; ++i) {
      double sum = 0;
      for (std::int64_t l = 0; l < c.k; ++l) sum += a[i + l * lda] * b[l + j * ldb];
      expected[i + j * ldc] += sum;
    }
  }
  multiply_add(c.m, c.n, c.k, a.data(), lda, b.data(), ldb, out.data(), ldc);
  for (std::int64_t j = 0; j < c.n; ++j) {
    for (std::int64_t i = 0; i < ldc; ++i) {
      const double want = expected[i + j * ldc], got = out[i + j * ldc];
      if (i >= c.m) {
        ASSERT_EQ(got, want) << "padding row " << i << " of column " << j << " changed";
      } else {
        ASSERT_NEAR(got, want, 1e-14 * (c.k + 1) * 4) << "C(" << i << ", " << j << ")";
      }
    }
  }
}

// Runs a test body once per back-end this build has, restoring the choice.
class BackendTest : public ::testing::TestWithParam<LocalBackend> {
 protected:
  void SetUp() override {
    saved_ = current_local_backend();
    set_local_backend(GetParam());
  }
  void TearDown() override { set_local_backend(saved_); }

 private:
  LocalBackend saved_ = LocalBackend::kEigen;
};

TEST_P(BackendTest, MatchesTripleLoop) {
  ASSERT_STREQ(local_backend(), backend_name(GetParam()));
  const std::vector<Case> cases = {
      {1, 1, 1, 0, 0, 0},       {3, 4, 5, 0, 0, 0},   {17, 23, 5, 3, 1, 2},
      {5, 1, 17, 2, 0, 7},      {1, 9, 4, 0, 5, 0},   {64, 64, 64, 1, 1, 1},
      {130, 97, 301, 5, 3, 11}, {300, 7, 2, 0, 0, 0}, {2, 3, 300, 4, 4, 4},
  };
  for (const Case& c : cases) expect_matches_naive(c);
}

TEST_P(BackendTest, EmptyDimensionsLeaveCAlone) {
  for (const Case& c : std::vector<Case>{{0, 4, 3, 0, 0, 0},
                                         {4, 0, 3, 0, 0, 0},
                                         {4, 3, 0, 0, 0, 2},
                                         {0, 0, 0, 0, 0, 0},
                                         {0, 3, 0, 1, 1, 1}}) {
    expect_matches_naive(c);
  }
  // Empty operands need no buffers.
  EXPECT_NO_THROW(multiply_add(0, 0, 0, nullptr, 1, nullptr, 1, nullptr, 1));
  std::vector<double> c(6, 1.0);
  EXPECT_NO_THROW(multiply_add(3, 2, 0, nullptr, 3, nullptr, 1, c.data(), 3));
  EXPECT_EQ(c, std::vector<double>(6, 1.0));
}

// Leading dimensions beyond 32 bits: OpenBLAS cannot take them, so the
// product goes to Eigen instead of failing (only element (0, 0) is read).
TEST_P(BackendTest, LeadingDimensionsBeyond32BitsStillMultiply) {
  const std::int64_t huge = std::int64_t{1} << 31;
  const std::vector<double> a = {3.0}, b = {5.0};
  std::vector<double> c = {1.0};
  multiply_add(1, 1, 1, a.data(), huge, b.data(), huge, c.data(), huge);
  EXPECT_EQ(c[0], 16.0);
}

INSTANTIATE_TEST_SUITE_P(EveryBackend, BackendTest, ::testing::ValuesIn(available_local_backends()),
                         [](const ::testing::TestParamInfo<LocalBackend>& param) {
                           return std::string(backend_name(param.param));
                         });

TEST(MultiplyAddTest, RejectsBadLeadingDimensionsAndSizes) {
  std::vector<double> a(12), b(12), c(12);
  EXPECT_THROW(multiply_add(3, 2, 2, a.data(), 2, b.data(), 2, c.data(), 3), std::invalid_argument);
  EXPECT_THROW(multiply_add(3, 2, 2, a.data(), 3, b.data(), 1, c.data(), 3), std::invalid_argument);
  EXPECT_THROW(multiply_add(3, 2, 2, a.data(), 3, b.data(), 2, c.data(), 2), std::invalid_argument);
  EXPECT_THROW(multiply_add(0, 2, 2, a.data(), 0, b.data(), 2, c.data(), 1), std::invalid_argument);
  EXPECT_THROW(multiply_add(-1, 2, 2, a.data(), 3, b.data(), 2, c.data(), 3),
               std::invalid_argument);
  EXPECT_THROW(multiply_add(3, 2, 2, nullptr, 3, b.data(), 2, c.data(), 3), std::invalid_argument);
}

TEST(LocalBackendTest, DefaultIsOpenBlasWhenBuiltIn) {
  const std::vector<LocalBackend> all = available_local_backends();
  ASSERT_FALSE(all.empty());
  EXPECT_EQ(all.front(), LocalBackend::kEigen);
  // The test runs without RANKSHAPE_LOCAL_GEMM (see BUILD), so the default shows.
  ASSERT_EQ(std::getenv("RANKSHAPE_LOCAL_GEMM"), nullptr);
  EXPECT_EQ(current_local_backend(), all.back());
}

TEST(LocalBackendTest, ParsesNamesAndRefusesOthers) {
  for (const LocalBackend b : available_local_backends()) {
    EXPECT_EQ(parse_local_backend(backend_name(b)), b);
  }
  for (const char* bad : {"", "EIGEN", "blas", "mkl"}) {
    try {
      static_cast<void>(parse_local_backend(bad));
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("expected eigen or openblas"), std::string::npos)
          << e.what();
    }
  }
  if (available_local_backends().size() == 1) {
    EXPECT_THROW(set_local_backend(LocalBackend::kOpenBlas), std::invalid_argument);
  }
}

// The death tests' children: they run the test binary afresh
// ("threadsafe"), so their first use reads the environment instead of
// inheriting this process's choice. Exit 0 when right.
[[noreturn]] void product_with_bad_environment() {
  setenv("RANKSHAPE_LOCAL_GEMM", "fortran", 1);
  std::vector<double> a(1, 1.0), b(1, 1.0), c(1, 0.0);
  try {
    multiply_add(1, 1, 1, a.data(), 1, b.data(), 1, c.data(), 1);
  } catch (const std::invalid_argument& e) {
    const std::string what = e.what();
    const bool named = what.find("RANKSHAPE_LOCAL_GEMM") != std::string::npos &&
                       what.find("'fortran'") != std::string::npos;
    std::exit(named ? 0 : 3);
  }
  std::exit(4);
}

// The environment overrides the default: Eigen when OpenBLAS is the
// default; without OpenBLAS, asking for it is refused by name.
[[noreturn]] void non_default_from_environment() {
  const bool both = available_local_backends().size() == 2;
  setenv("RANKSHAPE_LOCAL_GEMM", both ? "eigen" : "openblas", 1);
  try {
    const LocalBackend chosen = current_local_backend();
    std::exit(both && chosen == LocalBackend::kEigen ? 0 : 3);
  } catch (const std::invalid_argument& e) {
    std::exit(!both && std::string(e.what()).find("not in this build") != std::string::npos ? 0
                                                                                            : 5);
  }
}

TEST(LocalBackendDeathTest, BadEnvironmentIsReportedByName) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(product_with_bad_environment(), ::testing::ExitedWithCode(0), "");
}

TEST(LocalBackendDeathTest, EnvironmentChoosesTheBackend) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(non_default_from_environment(), ::testing::ExitedWithCode(0), "");
}

}  // namespace
}  // namespace rankshape::matmul
