// Search for stencils: compact boxes per node and rack on aligned and
// misaligned machines, scattered placements, a torus of nodes, uneven
// nodes; auto never worse than the job's order. Structural checks use
// bisect (deterministic, no time limit); auto runs on small cases only.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <numeric>
#include <set>
#include <string>
#include <vector>

#include "lib/model/objective.h"
#include "lib/relabel/bisect.h"
#include "lib/relabel/relabel.h"
#include "lib/util/random.h"
#include "tests/testing/machines.h"

namespace rankshape {
namespace {

// racks x nodes x cores, 1 inside a node, 10 across nodes of a rack, 40
// across racks; ranks in block order, or shuffled with `seed`.
StructuredCosts machine(int racks, int nodes, int cores, std::uint64_t seed = 0) {
  StructuredSpec s;
  s.cores_per_node = cores;
  s.core_costs.assign(static_cast<std::size_t>(cores) * cores, 1);
  for (int c = 0; c < cores; ++c) s.core_costs[static_cast<std::size_t>(c) * cores + c] = 0;
  s.nodes = racks * nodes;
  s.racks = racks;
  for (int n = 0; n < s.nodes; ++n) s.node_rack.push_back(n / nodes);
  s.rack_costs.assign(static_cast<std::size_t>(racks) * racks, 40);
  for (int r = 0; r < racks; ++r) s.rack_costs[static_cast<std::size_t>(r) * racks + r] = 10;
  std::vector<int> slots(static_cast<std::size_t>(s.nodes * cores));
  std::iota(slots.begin(), slots.end(), 0);
  if (seed != 0) {
    SplitMix64 rng(seed);
    shuffle(slots, rng);
  }
  for (int slot : slots) s.ranks.push_back({slot / cores, slot % cores});
  return StructuredCosts(std::move(s));
}

ObjectiveSpec spec_for(const Costs& costs, const std::string& pattern,
                       const std::vector<std::vector<int>>& levels) {
  return ObjectiveSpec::parse("", Pattern::parse(pattern)).with_links(costs, levels);
}

// Neighbour pairs crossing nodes (level 0) and the busiest node's share.
std::pair<std::int64_t, std::int64_t> node_cut(const StructuredCosts& c, const Grid& g,
                                               const Labelling& l, const std::string& pattern) {
  const ObjectiveSpec s = spec_for(c, pattern, machine_levels(c));
  const Evaluation e = evaluate(c, g, l, s);
  return {e.stencil->levels[0].crossing_pairs, e.stencil->levels[0].busiest_pairs};
}

Labelling bisect_on(const StructuredCosts& c, const Grid& g, const std::string& pattern,
                    CutRule rule = CutRule::kBusierPart) {
  return bisect(c, Stencil(Pattern::parse(pattern).stencil, g), machine_levels(c), rule);
}

// The demo machine of the halo issue: 4 racks of 8 nodes of 32, grid
// 8x8x16. A box per node cuts 704 pairs; 4x4x2 boxes (node grid 2x2x8)
// leave the busiest node 48 of them, where 2x4x4 boxes (4x2x4) leave 56.
// The ranks' placement does not matter.
TEST(StencilSearchTest, DemoMachineGetsABoxPerNode) {
  for (std::uint64_t seed : {0, 7}) {
    const StructuredCosts c = machine(4, 8, 32, seed);
    const Grid g({8, 8, 16});
    const Labelling l = bisect_on(c, g, "stencil");
    const auto [crossing, busiest] = node_cut(c, g, l, "stencil");
    EXPECT_EQ(crossing, 704) << "seed " << seed;
    EXPECT_EQ(busiest, 48) << "seed " << seed;
  }
}

RelabelResult run(const Costs& c, const Grid& g, const std::string& algorithm,
                  const std::string& pattern) {
  RelabelOptions o;
  o.algorithm = algorithm;
  o.objective = ObjectiveSpec::parse("", Pattern::parse(pattern));
  o.time_limit = 60;
  return relabel(c, g, o);
}

// Node sizes that divide the grid: node-aware tiles it with the best box,
// 60x60 on 36-core nodes with 6x6 boxes (24 pairs out of each node), 12x12
// on 8-core nodes with 2x4 boxes (12).
TEST(StencilSearchTest, AlignedNodesGetTheBestBoxes) {
  {
    const StructuredCosts c = machine(4, 25, 36, 3);
    const Grid g({60, 60});
    const auto [crossing, busiest] =
        node_cut(c, g, run(c, g, "node-aware", "stencil").labelling, "stencil");
    EXPECT_EQ(busiest, 24);
    EXPECT_EQ(crossing, 2 * 9 * 60);
  }
  {
    const StructuredCosts c = machine(2, 9, 8, 4);
    const Grid g({12, 12});
    const auto [crossing, busiest] =
        node_cut(c, g, run(c, g, "node-aware", "stencil").labelling, "stencil");
    EXPECT_EQ(busiest, 12);
    EXPECT_EQ(crossing, 5 * 12 + 2 * 12);
  }
}

// 10x10x10 on 25 nodes of 40: the only boxes that tile the grid are 10x2x2
// (80 pairs out of an inner node); bisection's regions do better.
TEST(StencilSearchTest, MisalignedNodesBeatEveryTilingBox) {
  const StructuredCosts c = machine(5, 5, 40, 9);
  const Grid g({10, 10, 10});
  const auto [box_crossing, box_busiest] =
      node_cut(c, g, run(c, g, "node-aware", "stencil").labelling, "stencil");
  EXPECT_EQ(box_busiest, 80);
  const auto [crossing, busiest] = node_cut(c, g, bisect_on(c, g, "stencil"), "stencil");
  EXPECT_LT(busiest, box_busiest);
  EXPECT_LT(crossing, box_crossing);
}

// A prime dimension: 13x8 on 13 nodes of 8. One row per node cuts 96
// pairs, 16 from each node; bisection finds less.
TEST(StencilSearchTest, PrimeDimension) {
  const StructuredCosts c = machine(1, 13, 8, 5);
  const Grid g({13, 8});
  const auto [crossing, busiest] = node_cut(c, g, bisect_on(c, g, "stencil"), "stencil");
  EXPECT_LT(crossing, 96);
  EXPECT_LE(busiest, 16);
}

// Uneven nodes (100 ranks on nodes of 48, 48 and 4) on a 10x10 grid: a
// valid labelling whose nodes are contiguous regions cutting few pairs.
TEST(StencilSearchTest, UnevenNodes) {
  StructuredSpec s = testing::flat_machine(3, 48, 10);
  for (int r = 0; r < 100; ++r) s.ranks.push_back({r < 48 ? 0 : r < 96 ? 1 : 2, r % 48});
  const StructuredCosts c(std::move(s));
  const Grid g({10, 10});
  const Labelling l = bisect_on(c, g, "stencil");
  const auto [crossing, busiest] = node_cut(c, g, l, "stencil");
  // Slabs of 4.8 rows and a corner of 4: about 10 + 10 + 4 pairs.
  EXPECT_LE(crossing, 26);
  EXPECT_LE(busiest, 22);
}

// Uneven nodes given as levels over a dense matrix, in any order: bisect
// and auto give a valid labelling. (Whole sides of unequal groups once
// swapped places even when they held different numbers of ranks, and the
// regions no longer fitted: std::length_error, a range error or a crash.)
TEST(StencilSearchTest, UnevenKnownNodesInAnyOrder) {
  SplitMix64 rng(21);
  for (const Grid& g : {Grid({12}), Grid({4, 4}), Grid({3, 5}), Grid({2, 3, 3})}) {
    const int p = g.size();
    for (int trial = 0; trial < 25; ++trial) {
      std::vector<int> node(static_cast<std::size_t>(p));
      std::map<std::uint64_t, int> dense;  // node labels 0.. in order of first use
      for (int& n : node) {
        n = dense.emplace(rng.below(5), static_cast<int>(dense.size())).first->second;
      }
      std::vector<double> m(static_cast<std::size_t>(p) * p, 0);
      for (int a = 0; a < p; ++a) {
        for (int b = 0; b < p; ++b) {
          if (a != b) {
            m[static_cast<std::size_t>(a) * p + b] = node[a] == node[b]           ? 1
                                                     : node[a] % 2 == node[b] % 2 ? 10
                                                                                  : 30;
          }
        }
      }
      const DenseCosts costs(p, m);
      std::string weights;
      for (int k = 0; k < g.ndims(); ++k) weights += (k ? "x" : "") + std::string("2");
      for (const char* algorithm : {"bisect", "auto"}) {
        for (const std::string& pattern :
             {"stencil:weights=" + weights, std::string("stencil:periodic,diagonals")}) {
          RelabelOptions o;
          o.algorithm = algorithm;
          o.objective = ObjectiveSpec::parse("", Pattern::parse(pattern));
          o.levels = {node};
          EXPECT_NO_THROW(relabel(costs, g, o))
              << g.to_string() << " " << algorithm << " " << pattern << " trial " << trial;
        }
      }
    }
  }
}

// A torus of nodes (no racks): 4x4 nodes of 4 cores, node costs by hops.
// An 8x8 periodic grid gets a 2x2 box per node, and neighbouring boxes sit
// on neighbouring nodes: no neighbour pair crosses more than one hop.
TEST(StencilSearchTest, TorusOfNodes) {
  StructuredSpec s;
  s.cores_per_node = 4;
  s.core_costs = {0, 1, 1, 1, 1, 0, 1, 1, 1, 1, 0, 1, 1, 1, 1, 0};
  s.nodes = 16;
  s.node_costs.assign(256, 0);
  const auto hops = [](int a, int b) {
    const int dx = std::abs(a / 4 - b / 4), dy = std::abs(a % 4 - b % 4);
    return std::min(dx, 4 - dx) + std::min(dy, 4 - dy);
  };
  for (int a = 0; a < 16; ++a) {
    for (int b = 0; b < 16; ++b)
      s.node_costs[static_cast<std::size_t>(a) * 16 + b] = 10.0f * static_cast<float>(hops(a, b));
  }
  std::vector<int> slots(64);
  std::iota(slots.begin(), slots.end(), 0);
  SplitMix64 rng(11);
  shuffle(slots, rng);
  for (int slot : slots) s.ranks.push_back({slot / 4, slot % 4});
  const StructuredCosts c(std::move(s));
  const Grid g({8, 8});
  const Labelling l = bisect_on(c, g, "stencil:periodic");
  const auto [crossing, busiest] = node_cut(c, g, l, "stencil:periodic");
  EXPECT_EQ(crossing, 64);
  EXPECT_EQ(busiest, 8);
  const Stencil st(Pattern::parse("stencil:periodic").stencil, g);
  int far = 0;
  for (int x = 0; x < 64; ++x) {
    for (int o = 0; o < st.offsets(); ++o) {
      const int y = st.neighbour(x, o);
      far += hops(c.location(l.old_of(NewRank(x))).node, c.location(l.old_of(NewRank(y))).node) > 1;
    }
  }
  EXPECT_EQ(far, 0);
}

// Periodic 4x4 over 4 nodes of 4, ranks dealt round-robin: strips and 2x2
// blocks tie on the objective; auto gives every node a 2x2 block.
TEST(StencilSearchTest, AutoPrefersBlocksOverStripsOnTies) {
  StructuredSpec s = testing::flat_machine(4, 4, 10);
  for (int r = 0; r < 16; ++r) s.ranks.push_back({r % 4, r / 4});
  const StructuredCosts c(std::move(s));
  const Grid g({4, 4});
  for (const char* pattern : {"stencil:periodic", "stencil"}) {
    RelabelOptions o;
    o.objective = ObjectiveSpec::parse("", Pattern::parse(pattern));
    o.time_limit = 30;
    const RelabelResult r = relabel(c, g, o);
    std::map<int, std::set<int>> rows, cols;
    for (int x = 0; x < 16; ++x) {
      const int node = c.location(r.labelling.old_of(NewRank(x))).node;
      rows[node].insert(x / 4);
      cols[node].insert(x % 4);
    }
    for (const auto& [node, in_rows] : rows) {
      EXPECT_EQ(in_rows.size(), 2u) << pattern << " node " << node;
      EXPECT_EQ(cols[node].size(), 2u) << pattern << " node " << node;
    }
  }
}

// auto is never worse than the job's own order, on small random machines
// and grids, for every stencil option.
TEST(StencilSearchTest, AutoNeverWorseThanIdentity) {
  SplitMix64 rng(21);
  const char* patterns[] = {"stencil", "stencil:periodic", "stencil:diagonals",
                            "stencil:periodic,points=9,weights=3x1"};
  for (int trial = 0; trial < 8; ++trial) {
    const int nodes = 2 + static_cast<int>(rng.below(3));
    const StructuredCosts c = machine(1, nodes, 6, 1 + trial);
    const int p = nodes * 6;
    const Grid g(choose_dims(p, 2));
    RelabelOptions o;
    o.objective = ObjectiveSpec::parse("", Pattern::parse(patterns[trial % 4]));
    o.seed = static_cast<std::uint64_t>(trial);
    const RelabelResult r = relabel(c, g, o);
    EXPECT_FALSE(improves(r.before.value, r.after.value))
        << g.to_string() << " " << patterns[trial % 4];
    ASSERT_TRUE(r.after.stencil.has_value());
  }
}

// True if the positions of every node form a box.
bool nodes_are_boxes(const StructuredCosts& c, const Grid& g, const Labelling& l) {
  std::map<int, std::pair<std::vector<int>, std::vector<int>>> box;  // node: lo, hi
  std::map<int, std::int64_t> count;
  for (int x = 0; x < g.size(); ++x) {
    const int node = c.location(l.old_of(NewRank(x))).node;
    const std::vector<int> at = g.coords(NewRank(x));
    auto [it, fresh] = box.try_emplace(node, at, at);
    for (std::size_t k = 0; k < at.size() && !fresh; ++k) {
      it->second.first[k] = std::min(it->second.first[k], at[k]);
      it->second.second[k] = std::max(it->second.second[k], at[k]);
    }
    ++count[node];
  }
  for (const auto& [node, lohi] : box) {
    std::int64_t cells = 1;
    for (std::size_t k = 0; k < lohi.first.size(); ++k) cells *= lohi.second[k] - lohi.first[k] + 1;
    if (cells != count[node]) return false;
  }
  return true;
}

// A 50x20 grid on 25 nodes of 40 (no 5x8 tiling): the tiling rule cuts it
// into boxes, the busiest node sending the fewest messages out that any
// tiling allows, no more than halving's.
TEST(StencilSearchTest, TilingRuleCutsBoxes) {
  const StructuredCosts c = machine(1, 25, 40, 2);
  const Grid g({50, 20});
  const Labelling tiled = bisect_on(c, g, "stencil", CutRule::kBoxes);
  EXPECT_TRUE(nodes_are_boxes(c, g, tiled));
  const auto [crossing, busiest] = node_cut(c, g, tiled, "stencil");
  EXPECT_EQ(busiest, 24);  // a 10x4 box on the grid's edge, 8x5 inside
  for (CutRule halving : {CutRule::kBusierPart, CutRule::kBothParts}) {
    const Labelling l = bisect_on(c, g, "stencil", halving);
    EXPECT_GE(node_cut(c, g, l, "stencil").second, busiest);
  }
}

// 100x100 on 10 racks of 25 nodes of 40, where the best rack regions
// (25x40 and 50x20) leave some racks no 5x8 tiling: the tiling rule keeps
// halving's racks (busiest 120 pairs) and tiles their nodes with boxes.
TEST(StencilSearchTest, TilingRuleSettlesRacksThenNodes) {
  const StructuredCosts c = machine(10, 25, 40, 11);
  const Grid g({100, 100});
  const ObjectiveSpec s = spec_for(c, "stencil", machine_levels(c));
  const Evaluation tiled = evaluate(c, g, bisect_on(c, g, "stencil", CutRule::kBoxes), s);
  const Evaluation halved = evaluate(c, g, bisect_on(c, g, "stencil", CutRule::kBothParts), s);
  EXPECT_EQ(tiled.stencil->levels[1].busiest_pairs, 120);
  EXPECT_EQ(tiled.stencil->levels[1].busiest_pairs, halved.stencil->levels[1].busiest_pairs);
  EXPECT_EQ(tiled.stencil->levels[0].crossing_pairs, 3060);
  EXPECT_EQ(tiled.stencil->levels[0].busiest_pairs, 26);
  EXPECT_TRUE(nodes_are_boxes(c, g, bisect_on(c, g, "stencil", CutRule::kBoxes)));
  EXPECT_LT(tiled.stencil->levels[0].crossing_pairs, halved.stencil->levels[0].crossing_pairs);
}

// Measured costs name the nodes but not the racks (measure writes node
// costs): bisect finds the racks in them and keeps each a box. 10x10x10 on
// 5 racks of 5 nodes of 40 tiles as a 2x10x10 slab and four 8x5x5 pillars
// (busiest rack 105 pairs out); blind to the racks it left one 208.
TEST(StencilSearchTest, BisectFindsRacksAboveKnownNodes) {
  StructuredSpec s;
  s.cores_per_node = 40;
  s.core_costs.assign(40 * 40, 1);
  for (int c = 0; c < 40; ++c) s.core_costs[static_cast<std::size_t>(c) * 40 + c] = 0;
  s.nodes = 25;
  s.node_costs.assign(25 * 25, 0);
  for (int a = 0; a < 25; ++a) {
    for (int b = 0; b < 25; ++b) {
      if (a != b) s.node_costs[static_cast<std::size_t>(a) * 25 + b] = a / 5 == b / 5 ? 10 : 40;
    }
  }
  for (int slot = 0; slot < 1000; ++slot) s.ranks.push_back({slot / 40, slot % 40});
  const StructuredCosts c(std::move(s));
  ASSERT_EQ(machine_levels(c).size(), 1u);  // the nodes only
  std::vector<int> rack_of(1000);
  for (int r = 0; r < 1000; ++r) rack_of[r] = r / 200;
  const Grid g({10, 10, 10});
  const Evaluation e = evaluate(c, g, bisect_on(c, g, "stencil", CutRule::kBoxes),
                                spec_for(c, "stencil", {machine_levels(c)[0], rack_of}));
  EXPECT_EQ(e.stencil->levels[1].busiest_pairs, 105);
  EXPECT_EQ(e.stencil->levels[1].crossing_pairs, 260);
  EXPECT_EQ(e.stencil->levels[0].busiest_pairs, 68);
}

TEST(StencilSearchTest, BisectRefusesMismatchedInput) {
  const StructuredCosts c = machine(1, 2, 4);
  EXPECT_THROW(bisect(c, Stencil(StencilSpec{}, Grid({3, 3})), {}), std::invalid_argument);
  EXPECT_THROW(bisect(c, Stencil(StencilSpec{}, Grid({2, 4})), {{0, 1}}), std::invalid_argument);
}

// Dense costs with no levels given: bisect finds the nodes in the costs.
TEST(StencilSearchTest, BisectFindsLevelsInDenseCosts) {
  const int p = 16;
  std::vector<double> m(static_cast<std::size_t>(p) * p, 0);
  for (int a = 0; a < p; ++a) {
    for (int b = 0; b < p; ++b) {
      if (a != b) m[static_cast<std::size_t>(a) * p + b] = a % 4 == b % 4 ? 1 : 30;
    }
  }
  const DenseCosts c(p, m);
  const Grid g({4, 4});
  const Labelling l = bisect(c, Stencil(StencilSpec{}, g), {});
  std::vector<int> node_of(p);
  for (int r = 0; r < p; ++r) node_of[r] = r % 4;
  const Evaluation e = evaluate(c, g, l, spec_for(c, "stencil", {node_of}));
  EXPECT_EQ(e.stencil->levels[0].crossing_pairs, 8);  // 2x2 blocks: the least possible
}

}  // namespace
}  // namespace rankshape
