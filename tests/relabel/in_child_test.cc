// run_in_child: answers, errors and crashes come back; the deadline kills.
#include "lib/relabel/in_child.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "lib/relabel/relabel.h"
#include "lib/synth/machine.h"

namespace rankshape {
namespace {

TEST(InChildTest, ReturnsTheChildsBytes) {
  const std::optional<std::string> a =
      run_in_child([] { return std::string("a\0b", 3); }, 60).answer;
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(*a, std::string("a\0b", 3));
}

TEST(InChildTest, AnswersLargerThanThePipeArriveWhole) {
  std::string big(3 << 20, 'x');
  for (std::size_t i = 0; i < big.size(); i += 4099) big[i] = static_cast<char>(i % 251);
  const std::optional<std::string> a = run_in_child([&big] { return big; }, 60).answer;
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(*a, big);
}

TEST(InChildTest, RunsInAnotherProcess) {
  const pid_t parent = getpid();
  const ChildRun run = run_in_child([] { return std::to_string(getpid()); }, 60);
  ASSERT_TRUE(run.answer.has_value());
  EXPECT_FALSE(run.ran_here);
  EXPECT_NE(*run.answer, std::to_string(parent));
}

TEST(InChildTest, DeadlineKillsAComputationThatNeverEnds) {
  const ChildRun run = run_in_child(
      []() -> std::string {
        for (;;) pause();
      },
      0.2);
  EXPECT_FALSE(run.answer.has_value());
  EXPECT_FALSE(run.ran_here);
}

TEST(InChildTest, NoTimeMeansNoAnswer) {
  // Not even started: a child would have been killed and reaped (below).
  const ChildRun run = run_in_child([] { return std::string("late"); }, 0);
  EXPECT_FALSE(run.answer.has_value());
  EXPECT_EQ(run.peak_rss_bytes, 0u);
}

TEST(InChildTest, LeavesNoChildBehind) {
  run_in_child(
      []() -> std::string {
        for (;;) pause();
      },
      0.1);
  run_in_child([] { return std::string("x"); }, 60);
  int status = 0;
  EXPECT_EQ(waitpid(-1, &status, WNOHANG), -1);  // no child left, reaped or running
  EXPECT_EQ(errno, ECHILD);
}

TEST(InChildTest, ExceptionsComeBackWithTheirKindAndMessage) {
  try {
    run_in_child([]() -> std::string { throw std::invalid_argument("bad grid"); }, 60);
    FAIL() << "no exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "bad grid");
  }
  try {
    run_in_child([]() -> std::string { throw std::runtime_error("library failed"); }, 60);
    FAIL() << "no exception";
  } catch (const std::invalid_argument&) {
    FAIL() << "wrong kind";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "library failed");
  }
}

TEST(InChildTest, AChildThatDiesIsAnError) {
  try {
    run_in_child([]() -> std::string { _exit(3); }, 60);
    FAIL() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("exited with status 3"), std::string::npos) << e.what();
  }
  try {
    run_in_child(
        []() -> std::string {
          kill(getpid(), SIGKILL);
          return "";
        },
        60);
    FAIL() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("killed by signal 9"), std::string::npos) << e.what();
  }
}

TEST(InChildTest, ReportsTheChildsPeakMemory) {
  constexpr std::size_t kBytes = 64 << 20;
  const ChildRun run = run_in_child(
      [] {
        std::vector<char> block(kBytes);
        for (std::size_t i = 0; i < block.size(); i += 4096) block[i] = 1;  // touch every page
        return std::string(1, block[kBytes / 2]);
      },
      60);
  ASSERT_TRUE(run.answer.has_value());
  EXPECT_GE(run.peak_rss_bytes, kBytes);
}

// Scotch runs in a child; with no time left the identity is kept and the
// result says the limit was reached.
TEST(InChildTest, ScotchKeepsTheIdentityWhenTimeRunsOut) {
  const SyntheticMachine s = generate_machine(machine_shape(2, 2, 1, 4, RankOrder::kRandom));
  RelabelOptions o;
  o.algorithm = "scotch";
  o.time_limit = 0;
  const RelabelResult r = relabel(s.costs, Grid({4, 4}), o);
  EXPECT_TRUE(r.time_limited);
  EXPECT_EQ(r.labelling, Labelling::identity(16));
  EXPECT_NE(r.algorithm.find("time limit"), std::string::npos) << r.algorithm;

  o.time_limit = 60;
  const RelabelResult full = relabel(s.costs, Grid({4, 4}), o);
  EXPECT_FALSE(full.time_limited);
  EXPECT_GT(full.child_peak_bytes, 0u);
  EXPECT_LT(full.after.value.primary, full.before.value.primary);
}

}  // namespace
}  // namespace rankshape
