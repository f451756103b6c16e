// with_found_racks: the node leaders' round trips give the levels above the
// nodes. One host has no racks to find, so the test plants them: round
// trips between the two halves of the leaders are slowed (PingPongOptions::
// inject), and the halves must come back as two racks over every rank of
// their nodes, the same tables on every rank, that a Hierarchy accepts.
#include <gtest/gtest.h>
#include <mpi.h>

#include <stdexcept>
#include <vector>

#include "lib/coll/hierarchy.h"
#include "lib/coll/racks.h"
#include "tests/testing/clock.h"
#include "tests/testing/world.h"

namespace rankshape::coll {
namespace {

using Tables = std::vector<std::vector<int>>;

using ::rankshape::testing::hold_for;
using ::rankshape::testing::world_rank;
using ::rankshape::testing::world_size;

// Options whose round trips between leader halves [0, half) and [half, n)
// are slow; my_leader: this rank's index among the leaders (-1: none).
PingPongOptions planted(int my_leader, int half) {
  PingPongOptions o = rack_pingpong_options();
  o.inject = [my_leader, half](const PingPongOptions::Step& s) {
    // 2 x 3 ms more a round trip between the halves: far above any pair
    // inside a half, even on a host with more ranks than CPUs.
    if (my_leader >= 0 && (my_leader < half) != (s.partner < half)) hold_for(3e-3);
  };
  return o;
}

// Every rank's tables equal rank 0's.
void expect_same_everywhere(const Tables& tables) {
  std::vector<int> flat;
  for (const auto& t : tables) flat.insert(flat.end(), t.begin(), t.end());
  int length = static_cast<int>(flat.size());
  std::vector<int> lengths(static_cast<std::size_t>(world_size()));
  ASSERT_EQ(MPI_Allgather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, MPI_COMM_WORLD),
            MPI_SUCCESS);
  for (int l : lengths) ASSERT_EQ(l, length);
  std::vector<int> first = flat;
  ASSERT_EQ(MPI_Bcast(first.data(), length, MPI_INT, 0, MPI_COMM_WORLD), MPI_SUCCESS);
  EXPECT_EQ(flat, first);
}

// Each rank a node of its own: p leaders, slowed between [0, half) and the
// rest. Racks need 3 nodes or more and none alone in its rack.
TEST(RacksTest, PlantedHalvesOfSingleRankNodesBecomeTwoRacks) {
  const int p = world_size(), me = world_rank(), half = (p + 1) / 2;
  std::vector<int> nodes(static_cast<std::size_t>(p));
  for (int r = 0; r < p; ++r) nodes[static_cast<std::size_t>(r)] = r;
  const Tables found = with_found_racks(MPI_COMM_WORLD, {nodes}, planted(me, half));
  expect_same_everywhere(found);
  if (p < 4) {  // fewer than 3 nodes, or a rack of one node (3 ranks)
    EXPECT_EQ(found, Tables{nodes});
    return;
  }
  ASSERT_EQ(found.size(), 2u);
  EXPECT_EQ(found[0], nodes);
  for (int r = 0; r < p; ++r) {
    EXPECT_EQ(found[1][static_cast<std::size_t>(r)] == found[1][0], r < half) << "rank " << r;
  }
  const Hierarchy h(MPI_COMM_WORLD, found);
  EXPECT_EQ(h.depth(), 2);
}

// Nodes of two ranks: leaders are the even ranks, and a rack holds every
// rank of its nodes (7 ranks: the last node has one).
TEST(RacksTest, RacksOfTwoRankNodesHoldAllTheirRanks) {
  const int p = world_size(), me = world_rank();
  std::vector<int> nodes(static_cast<std::size_t>(p));
  for (int r = 0; r < p; ++r) nodes[static_cast<std::size_t>(r)] = r / 2;
  const int leaders = (p + 1) / 2, half = (leaders + 1) / 2;
  const Tables found =
      with_found_racks(MPI_COMM_WORLD, {nodes}, planted(me % 2 == 0 ? me / 2 : -1, half));
  expect_same_everywhere(found);
  if (leaders < 4) {
    EXPECT_EQ(found, Tables{nodes});
    return;
  }
  ASSERT_EQ(found.size(), 2u);
  for (int r = 0; r < p; ++r) {
    EXPECT_EQ(found[1][static_cast<std::size_t>(r)] == found[1][0], r / 2 < half) << "rank " << r;
  }
  const Hierarchy h(MPI_COMM_WORLD, found);
  EXPECT_EQ(h.depth(), 2);
}

// Two tiers planted over 8 single-rank nodes: 2 x 1 ms more a round trip
// inside a pair of nodes, 2 x 2 ms between the pairs of a half, 2 x 8 ms
// between the halves (levels are found from the largest jump in time down,
// so the pairs need a time of their own, 2x below the next). Two levels
// come back above the nodes: the pairs, then the halves (whose table is
// built after the pairs' is added: racks.cc once read a moved table there).
TEST(RacksTest, PlantedPairsInHalvesBecomeTwoLevels) {
  const int p = world_size(), me = world_rank();
  std::vector<int> nodes(static_cast<std::size_t>(p));
  for (int r = 0; r < p; ++r) nodes[static_cast<std::size_t>(r)] = r;
  PingPongOptions o = rack_pingpong_options();
  o.inject = [me, p](const PingPongOptions::Step& s) {
    if ((me < p / 2) != (s.partner < p / 2)) {
      hold_for(8e-3);
    } else {
      hold_for(me / 2 != s.partner / 2 ? 2e-3 : 1e-3);
    }
  };
  const Tables found = with_found_racks(MPI_COMM_WORLD, {nodes}, o);
  expect_same_everywhere(found);
  EXPECT_NO_THROW(Hierarchy(MPI_COMM_WORLD, found));
  if (p != 8) return;  // other counts: pairs or halves of one node, or too few nodes
  ASSERT_EQ(found.size(), 3u) << ::testing::PrintToString(found);
  for (int r = 0; r < p; ++r) {
    EXPECT_EQ(found[1][static_cast<std::size_t>(r)] == found[1][0], r < 2) << "rank " << r;
    EXPECT_EQ(found[2][static_cast<std::size_t>(r)] == found[2][0], r < 4) << "rank " << r;
  }
}

// Nothing planted on one host: whatever is found, every rank agrees and the
// tables nest (a Hierarchy takes them).
TEST(RacksTest, UnplantedTablesAgreeAndNest) {
  const int p = world_size();
  std::vector<int> nodes(static_cast<std::size_t>(p));
  for (int r = 0; r < p; ++r) nodes[static_cast<std::size_t>(r)] = r;
  const Tables found = with_found_racks(MPI_COMM_WORLD, {nodes});
  expect_same_everywhere(found);
  ASSERT_GE(found.size(), 1u);
  EXPECT_EQ(found[0], nodes);
  EXPECT_NO_THROW(Hierarchy(MPI_COMM_WORLD, found));
}

TEST(RacksTest, ATableThatDoesNotPlaceEveryRankIsRejectedOnEveryRank) {
  const std::vector<int> short_table(static_cast<std::size_t>(world_size() + 1), 0);
  EXPECT_THROW(with_found_racks(MPI_COMM_WORLD, {short_table}), std::invalid_argument);
  EXPECT_THROW(with_found_racks(MPI_COMM_WORLD, {}), std::invalid_argument);
}

}  // namespace
}  // namespace rankshape::coll
