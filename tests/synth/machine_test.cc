#include "lib/synth/machine.h"

#include <gtest/gtest.h>

#include <set>
#include <stdexcept>
#include <string>

namespace rankshape {
namespace {

MachineSpec header_example() {
  MachineSpec m;
  m.racks = 2;
  m.nodes_per_rack = 2;
  m.sockets_per_node = 1;
  m.cores_per_socket = 2;
  m.same_socket = 1;
  m.same_node = 2;
  m.same_rack = 10;
  m.other_rack = 40;
  return m;
}

TEST(SyntheticMachineTest, BlockPlacementHasTheHeaderCosts) {
  const SyntheticMachine s = generate_machine(header_example());
  EXPECT_EQ(s.costs.size(), 8);
  EXPECT_EQ(s.costs.cost(OldRank(0), OldRank(1)), 1);
  EXPECT_EQ(s.costs.cost(OldRank(0), OldRank(2)), 10);
  EXPECT_EQ(s.costs.cost(OldRank(0), OldRank(4)), 40);
  EXPECT_EQ(s.placement.of(OldRank(0)).host, "r0n0");
  EXPECT_EQ(s.placement.of(OldRank(5)).host, "r1n0");
  EXPECT_EQ(s.placement.of(OldRank(5)).core, 1);
}

TEST(SyntheticMachineTest, SocketsSplitANode) {
  MachineSpec m = header_example();
  m.racks = 1;
  m.nodes_per_rack = 1;
  m.sockets_per_node = 2;
  const SyntheticMachine s = generate_machine(m);
  EXPECT_EQ(s.costs.cost(OldRank(0), OldRank(1)), 1);  // same socket
  EXPECT_EQ(s.costs.cost(OldRank(1), OldRank(2)), 2);  // other socket
  EXPECT_EQ(s.placement.of(OldRank(3)).host, "n0");
}

TEST(SyntheticMachineTest, RoundRobinDealsRanksAcrossNodes) {
  MachineSpec m = header_example();
  m.order = RankOrder::kRoundRobin;
  const SyntheticMachine s = generate_machine(m);
  for (int r = 0; r < 8; ++r) {
    EXPECT_EQ(s.costs.location(OldRank(r)).node, r % 4) << r;
    EXPECT_EQ(s.costs.location(OldRank(r)).core, r / 4) << r;
  }
  EXPECT_EQ(s.costs.cost(OldRank(0), OldRank(4)), 1);
}

TEST(SyntheticMachineTest, RandomIsAScrambleAndDeterministic) {
  MachineSpec m = header_example();
  m.nodes_per_rack = 8;
  m.cores_per_socket = 8;
  m.order = RankOrder::kRandom;
  m.seed = 42;
  const SyntheticMachine a = generate_machine(m);
  const SyntheticMachine b = generate_machine(m);
  std::set<std::pair<int, int>> slots;
  bool moved = false;
  for (int r = 0; r < a.costs.size(); ++r) {
    const RankLocation l = a.costs.location(OldRank(r));
    slots.insert({l.node, l.core});
    EXPECT_EQ(l.node, b.costs.location(OldRank(r)).node);
    EXPECT_EQ(l.core, b.costs.location(OldRank(r)).core);
    moved |= l.node * 8 + l.core != r;
  }
  EXPECT_EQ(slots.size(), 128u);  // every core used once
  EXPECT_TRUE(moved);
  m.seed = 43;
  const SyntheticMachine c = generate_machine(m);
  int same = 0;
  for (int r = 0; r < 128; ++r)
    same += c.costs.location(OldRank(r)).node == a.costs.location(OldRank(r)).node;
  EXPECT_LT(same, 64);
}

TEST(SyntheticMachineTest, NoiseStaysWithinItsBoundsAndKeepsLevelsApart) {
  MachineSpec m = header_example();
  m.nodes_per_rack = 4;
  m.cores_per_socket = 4;
  m.noise = 0.1;
  const SyntheticMachine s = generate_machine(m);
  bool varied = false;
  for (int a = 0; a < s.costs.size(); ++a) {
    for (int b = 0; b < s.costs.size(); ++b) {
      if (a == b) continue;
      const RankLocation la = s.costs.location(OldRank(a)), lb = s.costs.location(OldRank(b));
      const double base =
          la.node == lb.node ? 1 : (s.costs.rack_of(la.node) == s.costs.rack_of(lb.node) ? 10 : 40);
      const double c = s.costs.cost(OldRank(a), OldRank(b));
      EXPECT_GE(c, base * 0.9 - 1e-6);
      EXPECT_LE(c, base * 1.1 + 1e-6);
      varied |= c != base;
    }
  }
  EXPECT_TRUE(varied);
}

TEST(SyntheticMachineTest, RejectsBadSpecs) {
  MachineSpec m = header_example();
  m.cores_per_socket = 0;
  EXPECT_THROW(generate_machine(m), std::invalid_argument);
  m = header_example();
  m.noise = 1;
  EXPECT_THROW(generate_machine(m), std::invalid_argument);
  m = header_example();
  m.same_rack = -1;
  EXPECT_THROW(generate_machine(m), std::invalid_argument);
  m = header_example();
  m.racks = 65536;
  m.nodes_per_rack = 65536;
  EXPECT_THROW(generate_machine(m), std::invalid_argument);
  m = header_example();
  m.racks = 1 << 20;
  m.nodes_per_rack = 1 << 20;
  m.cores_per_socket = 1 << 20;
  EXPECT_THROW(generate_machine(m), std::invalid_argument);  // no overflow
  m = header_example();
  m.nodes_per_rack = 20000;
  m.noise = 0.1;
  EXPECT_THROW(generate_machine(m), std::invalid_argument);  // node matrix too big
  // Valid counts whose machine would not fit are refused before allocating,
  // with what is too large in the message.
  const auto message = [](const MachineSpec& spec) {
    try {
      generate_machine(spec);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  m = header_example();
  m.racks = 100000;  // 80 GB of rack costs
  EXPECT_NE(message(m).find("racks are supported"), std::string::npos) << message(m);
  m = header_example();
  m.racks = 1;
  m.nodes_per_rack = 1 << 20;
  m.cores_per_socket = 64;  // 2^26 ranks
  EXPECT_NE(message(m).find("ranks are supported"), std::string::npos) << message(m);
  EXPECT_EQ(parse_rank_order("round-robin"), RankOrder::kRoundRobin);
  EXPECT_THROW(parse_rank_order("spiral"), std::invalid_argument);
}

TEST(SyntheticMachineTest, SixtyFourThousandRanksStayCompact) {
  const SyntheticMachine s = generate_machine(machine_shape(16, 64, 2, 32, RankOrder::kRandom));
  EXPECT_EQ(s.costs.size(), 65536);
  EXPECT_LT(s.costs.memory_bytes(), 1u << 20);
}

TEST(SyntheticMachineTest, BlockOrderUndoesTheScramble) {
  MachineSpec m = header_example();
  m.order = RankOrder::kRandom;
  m.seed = 5;
  const SyntheticMachine s = generate_machine(m);
  const Labelling planted = block_order(s.costs);
  for (int i = 0; i < s.costs.size(); ++i) {
    const RankLocation l = s.costs.location(planted.old_of(NewRank(i)));
    EXPECT_EQ(l.node * 2 + l.core, i);
  }
  m.order = RankOrder::kBlock;
  EXPECT_EQ(block_order(generate_machine(m).costs), Labelling::identity(8));
}

}  // namespace
}  // namespace rankshape
