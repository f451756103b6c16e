#include "lib/relabel/relabel.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <optional>
#include <set>
#include <string>
#include <thread>

#include "lib/relabel/deadline.h"
#include "lib/relabel/metis_split.h"
#include "lib/relabel/search.h"
#include "lib/synth/irregular.h"
#include "lib/synth/machine.h"
#include "lib/util/random.h"
#include "tests/testing/machines.h"

namespace rankshape {
namespace {

DenseCosts random_costs(int p, std::uint64_t seed) {
  SplitMix64 rng(seed);
  std::vector<double> m(static_cast<std::size_t>(p) * p, 0);
  for (int a = 0; a < p; ++a) {
    for (int b = a + 1; b < p; ++b) m[a * p + b] = m[b * p + a] = 1 + rng.uniform() * 99;
  }
  return DenseCosts(p, std::move(m));
}

// The optimum by the definition, independent of brute_force().
ObjectiveValue exhaustive_optimum(const Costs& c, const Grid& g, const ObjectiveSpec& s) {
  std::vector<OldRank> perm;
  for (int i = 0; i < g.size(); ++i) perm.emplace_back(i);
  ObjectiveValue best = evaluate(c, g, Labelling(perm), s).value;
  while (std::next_permutation(perm.begin(), perm.end())) {
    const ObjectiveValue v = evaluate(c, g, Labelling(perm), s).value;
    if (v < best) best = v;
  }
  return best;
}

const std::vector<std::vector<int>> kTinyGrids = {{2, 2}, {2, 3}, {3, 2}, {2, 2, 2}, {7}, {2, 4}};

TEST(BruteForceTest, FindsTheOptimum) {
  std::uint64_t seed = 1;
  for (const auto& dims : kTinyGrids) {
    const Grid g(dims);
    for (const ObjectiveSpec& s : {ObjectiveSpec{}, ObjectiveSpec::parse("thesis-max"),
                                   ObjectiveSpec::parse("sum-max:max-pair")}) {
      const DenseCosts c = random_costs(g.size(), seed++);
      const ObjectiveValue best = exhaustive_optimum(c, g, s);
      const ObjectiveValue got = evaluate(c, g, brute_force(c, g, s), s).value;
      EXPECT_EQ(got.primary, best.primary) << g.to_string() << " " << s.name();
      EXPECT_EQ(got.total, best.total) << g.to_string() << " " << s.name();
    }
  }
  EXPECT_THROW(brute_force(random_costs(10, 1), Grid({10}), ObjectiveSpec{}),
               std::invalid_argument);
}

// The engine's default answer on tiny problems is the optimum, and the
// general search (hill-climbing from several seeds, multilevel) reaches it
// too on these instances.
TEST(RelabelTest, TinyProblemsAreSolvedOptimally) {
  std::uint64_t seed = 100;
  int searched_optimal = 0, searched = 0;
  for (const auto& dims : kTinyGrids) {
    const Grid g(dims);
    for (int instance = 0; instance < 4; ++instance) {
      const DenseCosts c = random_costs(g.size(), seed++);
      const ObjectiveValue best = exhaustive_optimum(c, g, ObjectiveSpec{});
      RelabelOptions o;
      EXPECT_EQ(relabel(c, g, o).after.value.primary, best.primary);
      for (const char* algorithm : {"hill-climb", "multilevel"}) {
        double found = 1e300;
        for (std::uint64_t s = 1; s <= 8; ++s) {
          o.algorithm = algorithm;
          o.seed = s;
          found = std::min(found, relabel(c, g, o).after.value.primary);
        }
        ++searched;
        searched_optimal += found <= best.primary * (1 + 1e-12);
      }
    }
  }
  // Local search is not exact; on these instances it misses rarely.
  EXPECT_GE(searched_optimal, searched * 9 / 10) << searched_optimal << " of " << searched;
}

struct Planted {
  MachineSpec machine;
  std::vector<int> grid;
};

// Scrambled hierarchical machines whose grids align with the hierarchy: the
// engine must do at least as well as the unscrambled (block) layout.
TEST(RelabelTest, PlantedMachinesReachThePlantedLayout) {
  const auto spec = [](int racks, int nodes, int sockets, int cores, RankOrder order) {
    MachineSpec m = machine_shape(racks, nodes, sockets, cores, order);
    m.seed = static_cast<std::uint64_t>(racks * 1000 + nodes * 100 + cores);
    return m;
  };
  const std::vector<Planted> cases = {
      {spec(1, 4, 1, 4, RankOrder::kRandom), {4, 4}},
      {spec(2, 2, 2, 4, RankOrder::kRandom), {2, 4, 4}},
      {spec(2, 4, 2, 4, RankOrder::kRandom), {4, 4, 4}},
      {spec(2, 4, 2, 4, RankOrder::kRoundRobin), {4, 16}},
      {spec(2, 4, 2, 8, RankOrder::kRandom), {8, 16}},
      {spec(4, 8, 2, 16, RankOrder::kRandom), {8, 8, 16}},
      {spec(3, 3, 1, 3, RankOrder::kRandom), {3, 3, 3}},
  };
  for (const Planted& c : cases) {
    const SyntheticMachine m = generate_machine(c.machine);
    const Grid g(c.grid);
    const double planted =
        evaluate(m.costs, g, block_order(m.costs), ObjectiveSpec{}).value.primary;
    RelabelOptions o;
    const RelabelResult structured = relabel(m.costs, g, o);
    EXPECT_LE(structured.after.value.primary, planted * (1 + 1e-12))
        << g.to_string() << " " << rank_order_name(c.machine.order);
    EXPECT_LT(structured.after.value.primary, structured.before.value.primary + 1e-9);
    // Without the structure (a dense matrix, clustering instead of nodes).
    const RelabelResult dense = relabel(to_dense(m.costs), g, o);
    EXPECT_LE(dense.after.value.primary, planted * (1 + 1e-12)) << "dense " << g.to_string();
    // The bound holds; the structured form knows the levels, so its bound
    // is at least the dense one's.
    ASSERT_TRUE(structured.bound.has_value());
    EXPECT_LE(structured.bound->primary, structured.after.value.primary * (1 + 1e-12));
    EXPECT_GE(structured.bound->primary, dense.bound->primary * (1 - 1e-12));
  }
}

// Where the fibres fit the machine's levels (a row per node; a row per rack
// of 4 nodes of 8; rows in nodes and columns in racks) the planted layout
// reaches the lower bound, and auto stops there: it proves the answer
// optimal instead of running its other candidates.
TEST(RelabelTest, AutoStopsAtTheLowerBound) {
  for (const auto& [machine, grid] :
       {std::pair{machine_shape(1, 4, 1, 4, RankOrder::kRandom), std::vector<int>{4, 4}},
        std::pair{machine_shape(4, 4, 1, 8, RankOrder::kRandom), std::vector<int>{4, 32}},
        std::pair{machine_shape(4, 4, 1, 8, RankOrder::kRandom), std::vector<int>{4, 4, 8}}}) {
    const SyntheticMachine m = generate_machine(machine);
    const Grid g(grid);
    const RelabelResult r = relabel(m.costs, g, RelabelOptions{});
    ASSERT_TRUE(r.bound.has_value());
    EXPECT_TRUE(reaches(r.after.value.primary, r.bound->primary)) << g.to_string();
    EXPECT_NE(r.algorithm.find("optimal: at the lower bound"), std::string::npos) << r.algorithm;
    EXPECT_EQ(r.algorithm.find("metis"), std::string::npos) << r.algorithm;
  }
  // A machine the grid does not fit: no proof, every candidate runs.
  const SyntheticMachine m = generate_machine(machine_shape(2, 3, 1, 10, RankOrder::kRandom));
  const RelabelResult r = relabel(m.costs, Grid({6, 10}), RelabelOptions{});
  EXPECT_EQ(r.algorithm.find("optimal"), std::string::npos) << r.algorithm;
  EXPECT_GT(r.after.value.primary, r.bound->primary);
}

// Machines whose levels do not fit the grid (issue 26's): auto is no worse
// than the machine's own order nor than METIS's slabs. The first was 2,853
// against 2,691 and 2,529 before both became candidates.
TEST(RelabelTest, AutoIsNoWorseThanTheMachinesOrderNorMetis) {
  struct Case {
    MachineSpec machine;
    std::vector<int> grid;
  };
  const std::vector<Case> cases = {
      {machine_shape(3, 5, 1, 12, RankOrder::kRandom), {12, 15}},
      {machine_shape(1, 9, 1, 24, RankOrder::kBlock), {6, 6, 6}},
      {machine_shape(2, 3, 1, 10, RankOrder::kRandom), {6, 10}},
  };
  for (const Case& c : cases) {
    const SyntheticMachine m = generate_machine(c.machine);
    const Grid g(c.grid);
    const double machine_order =
        evaluate(m.costs, g, block_order(m.costs), ObjectiveSpec{}).value.primary;
    RelabelOptions metis;
    metis.algorithm = "metis";
    const double slabs = relabel(m.costs, g, metis).after.value.primary;
    const RelabelResult automatic = relabel(m.costs, g, RelabelOptions{});
    EXPECT_LE(automatic.after.value.primary, machine_order * (1 + 1e-12)) << g.to_string();
    EXPECT_LE(automatic.after.value.primary, slabs * (1 + 1e-12)) << g.to_string();
    // The report: what ran, in order, for how long; one chosen, the result.
    ASSERT_FALSE(automatic.candidates.empty());
    EXPECT_EQ(automatic.candidates.front().name, "node-aware");
    double seconds = 0;
    int chosen = 0;
    for (const CandidateRun& run : automatic.candidates) {
      EXPECT_GE(run.seconds, 0);
      seconds += run.seconds;
      if (!run.chosen) continue;
      ++chosen;
      EXPECT_EQ(run.objective, automatic.after.value.primary) << run.name;
    }
    EXPECT_EQ(chosen, 1) << g.to_string();
    EXPECT_LE(seconds, automatic.seconds);
  }
}

TEST(RelabelTest, OtherObjectivesAndUnequalNodes) {
  const SyntheticMachine s = generate_machine(machine_shape(2, 4, 2, 4, RankOrder::kRandom));
  const Grid g({4, 4, 4});
  for (const char* name : {"total", "thesis-max", "sum-max:max-pair"}) {
    RelabelOptions o;
    o.objective = ObjectiveSpec::parse(name);
    const double planted = evaluate(s.costs, g, block_order(s.costs), o.objective).value.primary;
    // Max-pair fibre costs are flat (one link decides), which leaves local
    // search few signals: there the engine ends 2% above the planted layout
    // (52 against 51), a known loss recorded in docs/relabel.md ("Quality and speed").
    const double slack = o.objective.fibre == FibreCost::kMaxPair ? 1.05 : 1 + 1e-12;
    EXPECT_LE(relabel(s.costs, g, o).after.value.primary, planted * slack) << name;
  }
  // 12 ranks on nodes of 8 and 4: no equal groups, clustering takes over.
  StructuredSpec spec = testing::flat_machine(2, 8, 100);
  std::vector<int> slots = {0, 8, 1, 9, 2, 10, 3, 11, 4, 5, 6, 7};  // interleaved
  for (int slot : slots) spec.ranks.push_back({slot / 8, slot % 8});
  const StructuredCosts uneven(std::move(spec));
  const Grid row_per_node({3, 4});
  // Best: the 4 ranks of node 1 fill one row (3 rows: 2 from node 0, 1 from
  // node 1): rows cost 6 each, columns 2 x 100 + 1 each.
  const RelabelResult r = relabel(uneven, row_per_node, RelabelOptions{});
  EXPECT_EQ(r.after.value.primary, 6 + 201);
}

TEST(RelabelTest, ClusteringStopsAtTheDeadline) {
  // 2 x 509 (prime): groups of 509 by clustering, no known levels.
  const DenseCosts c = random_costs(1018, 5);
  RelabelOptions o;
  o.algorithm = "multilevel";
  o.time_limit = 0;
  const RelabelResult r = relabel(c, Grid({2, 509}), o);
  EXPECT_TRUE(r.time_limited);
  EXPECT_EQ(r.labelling.size(), 1018);
}

TEST(RelabelTest, SameSeedSameLabelling) {
  MachineSpec m = machine_shape(2, 4, 2, 4, RankOrder::kRandom);
  m.noise = 0.2;
  const SyntheticMachine s = generate_machine(m);
  const Grid g({4, 4, 4});
  for (const std::string& a : relabel_algorithms()) {
    if (a == "brute-force") continue;
    RelabelOptions o;
    o.algorithm = a;
    o.seed = 7;
    const RelabelResult first = relabel(s.costs, g, o);
    const RelabelResult second = relabel(s.costs, g, o);
    ASSERT_FALSE(first.time_limited) << a;
    EXPECT_EQ(first.labelling, second.labelling) << a;
  }
}

// auto's independent candidates on several threads (for fibres the
// multilevel starts, METIS's slabs and the fibre graph): the labelling one
// thread gives, for fibres and for a stencil, and the same candidates in
// order.
TEST(RelabelTest, ThreadsGiveTheSameLabelling) {
  MachineSpec m = machine_shape(2, 3, 2, 6, RankOrder::kRandom);
  m.noise = 0.2;
  const SyntheticMachine s = generate_machine(m);
  const Grid g({6, 12});
  for (const char* pattern : {"fibres", "stencil"}) {
    RelabelOptions o;
    o.seed = 5;
    o.objective = ObjectiveSpec::parse("", Pattern::parse(pattern));
    const RelabelResult one = relabel(s.costs, g, o);
    ASSERT_FALSE(one.time_limited) << pattern;
    o.threads = 3;  // 6 candidates (fibres) and 2 (stencil) over 3 threads
    const RelabelResult many = relabel(s.costs, g, o);
    EXPECT_EQ(many.labelling, one.labelling) << pattern;
    EXPECT_EQ(many.algorithm, one.algorithm) << pattern;
    ASSERT_EQ(many.candidates.size(), one.candidates.size()) << pattern;
    std::set<std::string> names;
    for (std::size_t i = 0; i < one.candidates.size(); ++i) {
      EXPECT_EQ(many.candidates[i].name, one.candidates[i].name);
      EXPECT_EQ(many.candidates[i].objective, one.candidates[i].objective);
      names.insert(one.candidates[i].name);
    }
    if (std::string(pattern) == "fibres") {
      EXPECT_TRUE(names.count("metis") && names.count("fibre graph"));
    }
  }
}

// METIS keeps its random state in globals: calls on several threads at
// once (auto's candidates) must still give each seed its one answer.
TEST(RelabelTest, MetisGivesOneAnswerPerSeedOnThreadsAtOnce) {
  const SyntheticMachine s = generate_machine(machine_shape(2, 4, 2, 8, RankOrder::kRandom));
  const Grid g({8, 16});
  const Deadline forever(600);
  std::vector<Labelling> alone;
  for (std::uint64_t seed = 1; seed <= 6; ++seed) {
    alone.push_back(metis_layout(s.costs, g, seed, forever));
  }
  std::vector<int> differ(4, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int round = 0; round < 5; ++round) {
        for (std::uint64_t seed = 1; seed <= 6; ++seed) {
          differ[t] += !(metis_layout(s.costs, g, seed, forever) == alone[seed - 1]);
        }
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(differ, std::vector<int>(4, 0));
}

// With a dense matrix and the nodes given (a placement), auto still tries
// the machine's node-by-node order, for fibres and for stencils, and ends
// no worse than it.
TEST(RelabelTest, AutoTriesTheMachinesOrderFromKnownNodes) {
  const SyntheticMachine s = generate_machine(machine_shape(2, 3, 2, 6, RankOrder::kRandom));
  const DenseCosts dense = to_dense(s.costs);
  for (const char* pattern : {"fibres", "stencil"}) {
    RelabelOptions o;
    o.objective = ObjectiveSpec::parse("", Pattern::parse(pattern));
    o.levels = machine_levels(s.costs);
    const RelabelResult r = relabel(dense, Grid({6, 12}), o);
    const auto machine =
        std::find_if(r.candidates.begin(), r.candidates.end(),
                     [](const CandidateRun& c) { return c.name == "machine order"; });
    ASSERT_NE(machine, r.candidates.end()) << pattern;
    EXPECT_LE(r.after.value.primary, machine->objective) << pattern;
  }
}

// "+links": every algorithm runs with the link load in the objective, the
// value reported is the link-aware one (with the known levels), and the
// searches do not end worse than they start. On a scrambled 3-level
// machine whose rack links are dear, the searches improve on the
// identity's link load.
TEST(RelabelTest, LinkLoadObjective) {
  MachineSpec spec = machine_shape(4, 4, 1, 4, RankOrder::kRandom);  // 64 ranks
  spec.seed = 5;
  const SyntheticMachine m = generate_machine(spec);
  const Grid g({4, 4, 4});
  const std::vector<std::vector<int>> levels = machine_levels(m.costs);
  ObjectiveSpec reference = ObjectiveSpec::parse("sum-max+links").with_links(m.costs, levels);
  ASSERT_FALSE(reference.links->empty());
  for (const std::string& a : relabel_algorithms()) {
    if (a == "brute-force") continue;
    RelabelOptions o;
    o.algorithm = a;
    o.time_limit = 2;
    o.objective = ObjectiveSpec::parse("sum-max+links");
    const RelabelResult r = relabel(m.costs, g, o);
    EXPECT_DOUBLE_EQ(r.after.value.primary,
                     evaluate(m.costs, g, r.labelling, reference).value.primary)
        << a;
    EXPECT_EQ(r.after.link_load.size(), 3u) << a;
    if (a == "auto" || a == "hill-climb" || a == "multilevel") {
      EXPECT_LT(r.after.value.primary, r.before.value.primary) << a;
      EXPECT_LT(r.after.link_load[0] + r.after.link_load[1] + r.after.link_load[2],
                r.before.link_load[0] + r.before.link_load[1] + r.before.link_load[2])
          << a;
    }
  }
}

TEST(RelabelTest, EveryAlgorithmReturnsAPermutationOnOddShapes) {
  for (const auto& dims : std::vector<std::vector<int>>{
           {1}, {2}, {7}, {13}, {1, 7}, {7, 1, 1}, {3, 5}, {2, 2, 3}, {11, 2}}) {
    const Grid g(dims);
    const DenseCosts c = random_costs(g.size(), static_cast<std::uint64_t>(g.size()));
    std::vector<int> nodes(g.size());
    for (int r = 0; r < g.size(); ++r) nodes[r] = r % 2;
    for (const std::string& a : relabel_algorithms()) {
      if (a == "brute-force" && g.size() > kMaxBruteForce) continue;
      RelabelOptions o;
      o.algorithm = a;
      o.levels = {nodes};
      const RelabelResult r = relabel(c, g, o);
      ASSERT_EQ(r.labelling.size(), g.size()) << a << " " << g.to_string();
      // Labelling's constructor already refuses non-permutations; the
      // result must also evaluate consistently.
      EXPECT_EQ(r.after.value.primary, evaluate(c, g, r.labelling, ObjectiveSpec{}).value.primary);
      // Searches start from (or compare with) the identity; baselines need not.
      if (a == "auto" || a == "hill-climb" || a == "multilevel" || a == "brute-force") {
        EXPECT_LE(r.after.value.primary, r.before.value.primary * (1 + 1e-9))
            << a << " made " << g.to_string() << " worse";
      }
    }
  }
}

TEST(RelabelTest, BaselinesBehaveAsDocumented) {
  MachineSpec m;
  m.nodes_per_rack = 4;
  m.cores_per_socket = 4;
  const SyntheticMachine s = generate_machine(m);  // block placement
  const Grid g({4, 4});
  RelabelOptions o;
  o.algorithm = "round-robin";
  // New ranks 0..3 are the first rank of nodes 0..3.
  const Labelling rr = relabel(s.costs, g, o).labelling;
  for (int i = 0; i < 16; ++i) EXPECT_EQ(rr.old_of(NewRank(i)), OldRank((i % 4) * 4 + i / 4));
  o.algorithm = "node-aware";
  const RelabelResult na = relabel(s.costs, g, o);
  EXPECT_EQ(na.after.value.primary, 6 * 1 + 6 * 10);  // rows inside nodes
  o.algorithm = "random";
  EXPECT_NE(relabel(s.costs, g, o).labelling, Labelling::identity(16));
  // Dense costs carry no nodes: node-aware must say what it needs.
  try {
    o = RelabelOptions{};
    o.algorithm = "node-aware";
    relabel(to_dense(s.costs), g, o);
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("needs node membership"), std::string::npos);
  }
}

TEST(RelabelTest, RejectsBadOptions) {
  const DenseCosts c = random_costs(6, 1);
  RelabelOptions o;
  o.algorithm = "simulated-annealing";
  EXPECT_THROW(relabel(c, Grid({2, 3}), o), std::invalid_argument);
  EXPECT_THROW(relabel(c, Grid({2, 2}), RelabelOptions{}), std::invalid_argument);
  o = RelabelOptions{};
  o.time_limit = -1;
  EXPECT_THROW(relabel(c, Grid({2, 3}), o), std::invalid_argument);
  o = RelabelOptions{};
  o.levels = {{0, 0, 1}};
  EXPECT_THROW(relabel(c, Grid({2, 3}), o), std::invalid_argument);
}

TEST(RelabelTest, AnExhaustedBudgetStillGivesAValidAnswer) {
  const SyntheticMachine s = generate_machine(machine_shape(2, 8, 2, 8, RankOrder::kRandom));
  RelabelOptions o;
  o.time_limit = 0;
  const RelabelResult r = relabel(s.costs, Grid({16, 16}), o);
  EXPECT_TRUE(r.time_limited);
  EXPECT_EQ(r.labelling.size(), 256);
  EXPECT_LE(r.after.value.primary, r.before.value.primary);
}

// 100 ranks on 48-core nodes (48, 48, 4) in two islands, scattered: not a
// tree Scotch's tree-leaf target can describe, so it maps onto the cost
// matrix. Every algorithm gives a permutation; auto beats the job's order
// and is no worse than the machine's own node-by-node order nor than any
// other algorithm, Scotch included (issue 26's goal).
TEST(RelabelTest, UnevenNodesAndIslandsAreMappedByEveryAlgorithm) {
  IrregularSpec m;
  m.node_ranks = {48, 48, 4};
  m.islands = {2, 1};
  m.order = RankOrder::kRandom;
  const SyntheticMachine s = generate_irregular(m);
  const Grid grid({10, 10});
  double best_other = evaluate(s.costs, grid, block_order(s.costs), ObjectiveSpec{}).value.primary;
  std::optional<RelabelResult> automatic;
  for (const char* algorithm : {"auto", "scotch", "metis", "node-aware", "bisect", "multilevel"}) {
    RelabelOptions o;
    o.algorithm = algorithm;
    RelabelResult r = relabel(s.costs, grid, o);
    EXPECT_EQ(r.labelling.size(), 100) << algorithm;
    if (o.algorithm == "auto") {
      automatic = std::move(r);
      continue;
    }
    best_other = std::min(best_other, r.after.value.primary);
    if (o.algorithm == "scotch") {
      EXPECT_NE(r.algorithm.find("deco"), std::string::npos) << r.algorithm;
    }
  }
  ASSERT_TRUE(automatic.has_value());
  EXPECT_LT(automatic->after.value.primary, automatic->before.value.primary);
  EXPECT_LE(automatic->after.value.primary, best_other) << automatic->algorithm;
  EXPECT_NE(automatic->algorithm.find("restart round"), std::string::npos) << automatic->algorithm;
  EXPECT_FALSE(automatic->time_limited);
}

}  // namespace
}  // namespace rankshape
