#include "lib/mpi/communicator.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>

namespace rankshape::mpi {
namespace {

Communicator world() { return Communicator(MPI_COMM_WORLD, Ownership::kBorrow); }

TEST(CommunicatorTest, SeesTheWorld) {
  const Communicator w = world();
  int rank = -1, size = -1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  EXPECT_EQ(w.rank(), rank);
  EXPECT_EQ(w.size(), size);
  EXPECT_FALSE(w.owns());
  const std::vector<int> ranks = w.allgather(w.rank());
  for (int r = 0; r < w.size(); ++r) EXPECT_EQ(ranks[r], r);
  EXPECT_EQ(w.allreduce_max(w.rank()), w.size() - 1);
}

TEST(CommunicatorTest, DupIsOwnedAndIndependent) {
  const Communicator w = world();
  Communicator d = w.dup();
  EXPECT_TRUE(d.owns());
  EXPECT_NE(d.get(), MPI_COMM_WORLD);
  EXPECT_EQ(d.rank(), w.rank());
  int result = MPI_UNEQUAL;
  MPI_Comm_compare(d.get(), MPI_COMM_WORLD, &result);
  EXPECT_EQ(result, MPI_CONGRUENT);
  // Moving transfers ownership; the source no longer frees anything.
  Communicator moved = std::move(d);
  EXPECT_TRUE(moved.owns());
  EXPECT_FALSE(d.owns());  // NOLINT(bugprone-use-after-move): checking the moved-from state
}

TEST(CommunicatorTest, SplitReversesRanksWithinParity) {
  const Communicator w = world();
  const Communicator half = w.split(w.rank() % 2, -w.rank());
  const int members = (w.size() + 1 - w.rank() % 2) / 2;
  EXPECT_EQ(half.size(), members);
  // Key -rank: the highest world rank of each parity becomes rank 0.
  const std::vector<int> world_ranks = half.allgather(w.rank());
  for (int i = 1; i < half.size(); ++i) EXPECT_GT(world_ranks[i - 1], world_ranks[i]);
  EXPECT_THROW((void)w.split(-1, 0), std::invalid_argument);
}

TEST(CommunicatorTest, SplitCommOrdersByKeyThenRankAndLeavesOutUndefined) {
  const Communicator w = world();
  // Ranks 2, 5, 8, ... stay out; the others form two colours by parity.
  // Keys fall with the rank but tie within blocks of four (two ranks of a
  // parity), so the parent's rank breaks those ties.
  const bool out = w.rank() % 3 == 2;
  const int color = out ? MPI_UNDEFINED : w.rank() % 2;
  const int key = -(w.rank() / 4);
  MPI_Comm raw = split_comm(w.get(), color, key);
  if (out) {
    EXPECT_EQ(raw, MPI_COMM_NULL);
    return;
  }
  ASSERT_NE(raw, MPI_COMM_NULL);
  const Communicator part(raw, Ownership::kTake);
  std::vector<int> expected;  // world ranks in the order MPI_Comm_split gives
  for (int r = 0; r < w.size(); ++r)
    if (r % 3 != 2 && r % 2 == color) expected.push_back(r);
  std::stable_sort(expected.begin(), expected.end(),
                   [](int a, int b) { return -(a / 4) < -(b / 4); });
  EXPECT_EQ(part.allgather(w.rank()), expected);
}

TEST(CommunicatorTest, NodeSplitCoversTheWorld) {
  const Communicator w = world();
  const Communicator node = w.split_by_node();
  EXPECT_GE(node.size(), 1);
  // Every rank is in exactly one node communicator: node sizes seen from
  // the node leaders add up to the world.
  const int leader_size = node.rank() == 0 ? node.size() : 0;
  std::vector<int> all = w.allgather(leader_size);
  EXPECT_EQ(std::accumulate(all.begin(), all.end(), 0), w.size());
}

TEST(CommunicatorTest, RejectsNullAndErrorsAreExceptions) {
  EXPECT_THROW(Communicator(MPI_COMM_NULL, Ownership::kBorrow), std::invalid_argument);
  Communicator d = world().dup();
  // An invalid root on an MPI_ERRORS_RETURN communicator comes back as a
  // code, which becomes an MpiError naming the call and MPI's text.
  int value = 0;
  try {
    check(MPI_Bcast(&value, 1, MPI_INT, d.size() + 5, d.get()), "MPI_Bcast");
    FAIL() << "an out-of-range root must fail";
  } catch (const MpiError& e) {
    EXPECT_EQ(e.error_class(), MPI_ERR_ROOT);
    EXPECT_NE(std::string(e.what()).find("MPI_Bcast failed"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace rankshape::mpi
