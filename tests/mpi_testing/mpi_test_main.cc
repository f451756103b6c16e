// GoogleTest main for MPI tests, run by //tools:run_mpi.sh under mpirun.
//
// Every rank runs every test. After each test the ranks agree on its outcome:
// a failure on any rank fails the test everywhere, and rank 0 names the
// failing ranks. Only rank 0 prints GoogleTest's progress; other ranks print
// their failures, prefixed with their rank. A watchdog ends a test that runs
// longer than RANKSHAPE_MPI_TEST_TIMEOUT seconds (default 120) with a
// message naming the test and the rank, instead of hanging until Bazel kills
// the whole run without a word.
#include <gtest/gtest.h>
#include <mpi.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace {

// Distinct from timeout(1)'s 124 so the launcher can tell who stopped the run.
constexpr int kWatchdogExit = 86;

int world_rank = 0;
int world_size = 1;

// Prints this rank's failures as they happen (non-zero ranks only: rank 0
// has GoogleTest's own printer).
class RankFailurePrinter : public ::testing::EmptyTestEventListener {
  void OnTestPartResult(const ::testing::TestPartResult& result) override {
    if (!result.failed()) return;
    std::fprintf(stderr, "[rank %d] %s:%d: Failure\n%s\n", world_rank,
                 result.file_name() ? result.file_name() : "?", result.line_number(),
                 result.message());
    std::fflush(stderr);
  }
};

// Makes every rank agree on each test's outcome.
class CollectiveOutcome : public ::testing::EmptyTestEventListener {
  void OnTestEnd(const ::testing::TestInfo& info) override {
    const int failed_here = info.result()->Failed() ? 1 : 0;
    std::vector<int> failed(world_size);
    MPI_Allgather(&failed_here, 1, MPI_INT, failed.data(), 1, MPI_INT, MPI_COMM_WORLD);
    std::string ranks;
    for (int r = 0; r < world_size; ++r) {
      if (failed[r]) ranks += (ranks.empty() ? "" : ", ") + std::to_string(r);
    }
    if (ranks.empty()) return;
    if (world_rank == 0) {
      std::fprintf(stderr, "[  MPI     ] %s.%s failed on rank(s) %s of %d\n",
                   info.test_suite_name(), info.name(), ranks.c_str(), world_size);
      std::fflush(stderr);
    }
    // A test that failed elsewhere fails here too, so every rank's exit code
    // and summary agree.
    if (!failed_here) {
      ADD_FAILURE() << "failed on rank(s) " << ranks;
    }
  }
};

// Ends the process if one test runs past the deadline.
class Watchdog : public ::testing::EmptyTestEventListener {
 public:
  explicit Watchdog(double seconds) : seconds_(seconds), thread_([this] { watch(); }) {}
  ~Watchdog() override {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  void OnTestStart(const ::testing::TestInfo& info) override {
    std::lock_guard<std::mutex> lock(mutex_);
    current_ = std::string(info.test_suite_name()) + "." + info.name();
    started_ = std::chrono::steady_clock::now();
    running_ = true;
    cv_.notify_all();
  }
  void OnTestEnd(const ::testing::TestInfo&) override {
    std::lock_guard<std::mutex> lock(mutex_);
    running_ = false;
  }

 private:
  void watch() {
    std::unique_lock<std::mutex> lock(mutex_);
    while (!stop_) {
      cv_.wait_for(lock, std::chrono::milliseconds(200));
      if (!running_) continue;
      const double elapsed =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
      if (elapsed > seconds_) {
        std::fprintf(stderr,
                     "[rank %d] TIMEOUT: test %s still running after %.0f s; likely a hang (a "
                     "rank waiting in a collective or receive that its peers never reached)\n",
                     world_rank, current_.c_str(), elapsed);
        std::fflush(stderr);
        _exit(kWatchdogExit);
      }
    }
  }

  double seconds_;
  std::mutex mutex_;
  std::condition_variable cv_;
  std::string current_;
  std::chrono::steady_clock::time_point started_;
  bool running_ = false;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace

int main(int argc, char** argv) {
  if (MPI_Init(&argc, &argv) != MPI_SUCCESS) {
    std::fprintf(stderr, "MPI_Init failed\n");
    return 1;
  }
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world_size);
  ::testing::InitGoogleTest(&argc, argv);
  ::testing::TestEventListeners& listeners = ::testing::UnitTest::GetInstance()->listeners();
  if (world_rank != 0) {
    delete listeners.Release(listeners.default_result_printer());
    listeners.Append(new RankFailurePrinter);
  }
  // SMPI runs ranks as simulated actors in one process: a real thread
  // watching wall-clock time does not fit there; the launcher's timeout does.
  // The watchdog goes first: GoogleTest calls OnTestEnd in reverse order, so
  // it keeps watching while CollectiveOutcome gathers the outcome.
  const char* launcher = std::getenv("RANKSHAPE_MPI_LAUNCHER");
  if (!(launcher && std::string(launcher) == "smpi")) {
    const char* limit = std::getenv("RANKSHAPE_MPI_TEST_TIMEOUT");
    listeners.Append(new Watchdog(limit ? std::atof(limit) : 120.0));
  }
  listeners.Append(new CollectiveOutcome);
  const int local = RUN_ALL_TESTS();
  int global = 0;
  MPI_Allreduce(&local, &global, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (world_rank == 0) {
    std::fprintf(stderr, "[  MPI     ] %d rank(s): %s\n", world_size, global ? "FAILED" : "passed");
  }
  MPI_Finalize();
  return global;
}
