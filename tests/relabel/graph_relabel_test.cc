// Relabelling a traffic graph: planted clusters found by every mapping
// algorithm, nodes of unequal size, the time-free algorithms' answers
// valid for any graph, and what is refused.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <string>

#include "lib/relabel/graph_map.h"
#include "lib/relabel/relabel.h"
#include "lib/synth/machine.h"
#include "lib/util/random.h"

namespace rankshape {
namespace {

// `clusters` groups of `size` ranks, members spread over the rank range
// (rank r is in cluster r % clusters): a heavy clique inside each, a light
// ring through all ranks.
std::shared_ptr<const TrafficGraph> clusters_graph(int clusters, int size) {
  const int p = clusters * size;
  std::vector<WeightedEdge> edges;
  for (int a = 0; a < p; ++a) {
    for (int b = a + clusters; b < p; b += clusters) edges.push_back({a, b, 1000});
    edges.push_back({a, (a + 1) % p, 1});
  }
  return std::make_shared<const TrafficGraph>(p, std::move(edges));
}

// A random geometric graph: n points in the unit square, an edge between
// two closer than the radius, heavier the closer. METIS's splits of it
// leave swaps to gain.
std::shared_ptr<const TrafficGraph> random_geometric(int n, double radius, std::uint64_t seed) {
  SplitMix64 rng(seed);
  std::vector<std::pair<double, double>> points(static_cast<std::size_t>(n));
  for (auto& [x, y] : points) {
    x = rng.uniform();
    y = rng.uniform();
  }
  std::vector<WeightedEdge> edges;
  for (int a = 0; a < n; ++a) {
    for (int b = a + 1; b < n; ++b) {
      const auto& pa = points[static_cast<std::size_t>(a)];
      const auto& pb = points[static_cast<std::size_t>(b)];
      const double d = std::hypot(pa.first - pb.first, pa.second - pb.second);
      if (d < radius) edges.push_back({a, b, 1000 * (1.2 - d / radius)});
    }
  }
  return std::make_shared<const TrafficGraph>(n, std::move(edges));
}

RelabelOptions graph_options(std::shared_ptr<const TrafficGraph> graph, const std::string& algo) {
  RelabelOptions o;
  o.algorithm = algo;
  o.objective = ObjectiveSpec::parse("", Pattern::parse("graph"));
  o.objective.graph = std::move(graph);
  return o;
}

// The nodes the members of every cluster run on.
std::vector<std::set<int>> nodes_of_clusters(const StructuredCosts& costs, const Labelling& l,
                                             int clusters) {
  std::vector<std::set<int>> out(static_cast<std::size_t>(clusters));
  for (int x = 0; x < l.size(); ++x) {
    out[static_cast<std::size_t>(x % clusters)].insert(costs.location(l.old_of(NewRank(x))).node);
  }
  return out;
}

// 8 clusters of 16 on 2 racks of 4 nodes of 16 cores, ranks scattered
// over the cores: each cluster must land on a node of its own.
TEST(GraphRelabelTest, EveryMappingPutsEachClusterOnItsNode) {
  MachineSpec m = machine_shape(2, 4, 2, 8, RankOrder::kRandom);
  m.seed = 7;
  const SyntheticMachine machine = generate_machine(m);
  const auto graph = clusters_graph(8, 16);
  for (const char* algorithm : {"auto", "multilevel", "metis"}) {
    const RelabelResult r = relabel(machine.costs, Grid({128}), graph_options(graph, algorithm));
    std::set<int> used;
    for (const std::set<int>& nodes : nodes_of_clusters(machine.costs, r.labelling, 8)) {
      ASSERT_EQ(nodes.size(), 1u) << algorithm;
      used.insert(*nodes.begin());
    }
    EXPECT_EQ(used.size(), 8u) << algorithm;
    ASSERT_TRUE(r.after.graph);
    // Only the ring crosses nodes: 128 edges of weight 1, 32 out of each node.
    EXPECT_EQ(r.after.graph->levels[0].crossing_pairs, 128) << algorithm;
    EXPECT_EQ(r.after.graph->levels[0].busiest_load, 32) << algorithm;
    EXPECT_LT(r.after.value.primary, r.before.value.primary) << algorithm;
  }
}

// The parts go to groups by the costs between groups: two pairs of
// clusters that talk a lot share a rack when the parts are assigned, which
// METIS's order alone need not do.
TEST(GraphRelabelTest, ClustersThatTalkShareARack) {
  MachineSpec m = machine_shape(2, 2, 1, 8, RankOrder::kRandom);
  m.seed = 3;
  const SyntheticMachine machine = generate_machine(m);
  // Clusters 0..3 of 8 (rank r in cluster r % 4); clusters 0 and 3, 1 and 2
  // exchange medium traffic.
  std::vector<WeightedEdge> edges;
  for (int a = 0; a < 32; ++a) {
    for (int b = a + 4; b < 32; b += 4) edges.push_back({a, b, 1000});
  }
  for (int i = 0; i < 8; ++i) {
    edges.push_back({4 * i, 4 * i + 3, 100});
    edges.push_back({4 * i + 1, 4 * i + 2, 100});
  }
  const auto graph = std::make_shared<const TrafficGraph>(32, std::move(edges));
  const RelabelResult r = relabel(machine.costs, Grid({32}), graph_options(graph, "multilevel"));
  const auto nodes = nodes_of_clusters(machine.costs, r.labelling, 4);
  const auto rack = [&](int cluster) {
    return machine.costs.rack_of(*nodes[static_cast<std::size_t>(cluster)].begin());
  };
  for (const auto& n : nodes) ASSERT_EQ(n.size(), 1u);
  EXPECT_EQ(rack(0), rack(3));
  EXPECT_EQ(rack(1), rack(2));
  EXPECT_NE(rack(0), rack(1));
  EXPECT_EQ(r.after.graph->levels[1].crossing_pairs, 0);  // nothing between racks
}

// Nodes of 6 and 5 ranks (dense costs, nodes given): parts of those sizes.
TEST(GraphRelabelTest, NodesOfUnequalSize) {
  const int p = 11;
  std::vector<int> node(static_cast<std::size_t>(p));
  for (int r = 0; r < p; ++r) node[r] = r % 2;  // 6 ranks on node 0, 5 on node 1
  std::vector<double> m(static_cast<std::size_t>(p) * p, 0);
  for (int a = 0; a < p; ++a) {
    for (int b = 0; b < p; ++b) {
      if (a != b) m[static_cast<std::size_t>(a) * p + b] = node[a] == node[b] ? 1 : 50;
    }
  }
  const DenseCosts costs(p, m);
  // A path 0-1-...-10: the best split cuts it once.
  std::vector<WeightedEdge> edges;
  for (int x = 0; x + 1 < p; ++x) edges.push_back({x, x + 1, 10});
  RelabelOptions o = graph_options(std::make_shared<const TrafficGraph>(p, edges), "multilevel");
  o.levels = {node};
  const RelabelResult r = relabel(costs, Grid({p}), o);
  ASSERT_TRUE(r.after.graph);
  EXPECT_EQ(r.after.graph->levels[0].crossing_pairs, 1);
  EXPECT_EQ(r.after.graph->communication, 9 * 10 * 1 + 10 * 50);
}

// Every algorithm that takes a graph returns a permutation, and the
// searching ones do no worse than the job's order, on a random graph.
TEST(GraphRelabelTest, EveryGraphAlgorithmGivesAValidLabelling) {
  MachineSpec m = machine_shape(1, 3, 1, 3, RankOrder::kRandom);
  const SyntheticMachine machine = generate_machine(m);
  SplitMix64 rng(11);
  std::vector<WeightedEdge> edges;
  for (int i = 0; i < 20; ++i) {
    const int a = static_cast<int>(rng.below(9)), b = static_cast<int>(rng.below(9));
    if (a != b) edges.push_back({a, b, static_cast<double>(1 + rng.below(100))});
  }
  const auto graph = std::make_shared<const TrafficGraph>(9, edges);
  const RelabelResult exact =
      relabel(machine.costs, Grid({9}), graph_options(graph, "brute-force"));
  for (const std::string& algorithm : relabel_algorithms()) {
    if (algorithm == "kl" || algorithm == "node-aware" || algorithm == "bisect") continue;
    const RelabelResult r = relabel(machine.costs, Grid({9}), graph_options(graph, algorithm));
    std::vector<int> seen;
    for (int x = 0; x < 9; ++x) seen.push_back(r.labelling.old_of(NewRank(x)).value());
    std::sort(seen.begin(), seen.end());
    for (int x = 0; x < 9; ++x) EXPECT_EQ(seen[x], x) << algorithm;
    EXPECT_GE(r.after.value.primary, exact.after.value.primary - 1e-9) << algorithm;
    if (algorithm == "auto" || algorithm == "multilevel" || algorithm == "hill-climb") {
      EXPECT_LE(r.after.value.primary, r.before.value.primary) << algorithm;
    }
  }
}

// A 2-D mesh of rows x cols, unit weights, row-major vertices.
std::shared_ptr<const TrafficGraph> mesh(int rows, int cols) {
  std::vector<WeightedEdge> edges;
  for (int r = 0; r < rows; ++r) {
    for (int c = 0; c < cols; ++c) {
      if (c + 1 < cols) edges.push_back({r * cols + c, r * cols + c + 1, 1});
      if (r + 1 < rows) edges.push_back({r * cols + c, (r + 1) * cols + c, 1});
    }
  }
  return std::make_shared<const TrafficGraph>(rows * cols, std::move(edges));
}

// 32x32 on 8 racks of 8 nodes of 16: 4x4 blocks per node, 8x16 per rack,
// the least any mapping can cut (448 edges across nodes, 128 across racks,
// what VieM and TreeMatch reach too). A top-down split leaves jagged rack
// boundaries; bottom-up finds it.
TEST(GraphRelabelTest, MeshGetsBlocksPerNodeAndRack) {
  const SyntheticMachine machine = generate_machine(machine_shape(8, 8, 1, 16));
  const RelabelResult r = relabel(machine.costs, Grid({1024}), graph_options(mesh(32, 32), "auto"));
  ASSERT_TRUE(r.after.graph);
  EXPECT_EQ(r.after.graph->levels[0].crossing_pairs, 448);
  EXPECT_EQ(r.after.graph->levels[1].crossing_pairs, 128);
}

// 64x64 on 256 nodes of 16, top-down, without refinement: straight 4x4
// blocks (1,920 edges across nodes, the least possible), as TreeMatch's
// grouping finds; METIS's splits into 256 parts leave jagged blocks.
TEST(GraphRelabelTest, GraphMapGivesStraightBlocksOnALargeMesh) {
  const SyntheticMachine machine = generate_machine(machine_shape(1, 256, 1, 16));
  const RelabelOptions o = graph_options(mesh(64, 64), "auto");
  const std::vector<std::vector<int>> levels = machine_levels(machine.costs);
  const Labelling l = graph_map(machine.costs, *o.objective.graph, levels, {}, Deadline(60));
  const Evaluation e =
      evaluate(machine.costs, Grid({4096}), l, o.objective.with_links(machine.costs, levels));
  ASSERT_TRUE(e.graph);
  EXPECT_EQ(e.graph->levels[0].crossing_pairs, 1920);
}

// With no time at all, auto still answers with the grouping (no METIS):
// on 32x32 over 8 racks of 8 nodes of 16, ranks scattered, the straight
// blocks per node and rack of the test above, not the job's order.
TEST(GraphRelabelTest, NoBudgetStillGetsTheGrouping) {
  MachineSpec m = machine_shape(8, 8, 1, 16, RankOrder::kRandom);
  m.seed = 3;
  const SyntheticMachine machine = generate_machine(m);
  RelabelOptions o = graph_options(mesh(32, 32), "auto");
  o.time_limit = 0;
  const RelabelResult r = relabel(machine.costs, Grid({1024}), o);
  EXPECT_TRUE(r.time_limited);
  EXPECT_NE(r.algorithm.find("grouping"), std::string::npos) << r.algorithm;
  // Only the grouping ran (and the refinement, which stops at once).
  ASSERT_EQ(r.candidates.size(), 2u);
  EXPECT_EQ(r.candidates[0].name, "grouping");
  EXPECT_TRUE(r.candidates[0].chosen);
  EXPECT_EQ(r.candidates[1].name, "refinement");
  ASSERT_TRUE(r.after.graph);
  EXPECT_EQ(r.after.graph->levels[0].crossing_pairs, 448);
  EXPECT_EQ(r.after.graph->levels[1].crossing_pairs, 128);
}

// With its budget, auto tries the grouping, the fast start, then the full
// starts, and keeps the best, refined: every candidate is reported, and
// the answer is no worse than any of them.
TEST(GraphRelabelTest, AutoReportsEveryStartAndKeepsTheBest) {
  MachineSpec m = machine_shape(2, 4, 2, 8, RankOrder::kRandom);
  m.seed = 5;
  const SyntheticMachine machine = generate_machine(m);
  const RelabelResult r =
      relabel(machine.costs, Grid({128}), graph_options(clusters_graph(8, 16), "auto"));
  EXPECT_FALSE(r.time_limited);
  std::vector<std::string> names;
  for (const CandidateRun& c : r.candidates) {
    names.push_back(c.name);
    EXPECT_LE(r.after.value.primary, c.objective * (1 + 1e-12)) << c.name;
  }
  ASSERT_GE(names.size(), 4u);
  EXPECT_EQ(names[0], "grouping");
  EXPECT_EQ(names[1], "graph map (fast)");
  EXPECT_EQ(names[2], "graph map top-down start 1/4");
  EXPECT_EQ(names[3], "graph map bottom-up start 1/4");
  EXPECT_EQ(names.back(), "refinement");
}

// Splitting two parts at a time again (GraphMapOptions::resplit_pairs)
// cuts less than swaps alone: a random geometric graph of 512 vertices on 32
// nodes of 16 (one split into 32 parts: 491,674 against 499,176 when
// written, 1.5% less).
TEST(GraphRelabelTest, ResplittingPairsCutsLessThanSwapsAlone) {
  const SyntheticMachine machine = generate_machine(machine_shape(1, 32, 1, 16));
  const auto graph = random_geometric(512, 0.08, 11);
  const RelabelOptions o = graph_options(graph, "auto");
  const std::vector<std::vector<int>> levels = machine_levels(machine.costs);
  const auto across = [&](bool resplit) {
    GraphMapOptions options;
    options.resplit_pairs = resplit;
    const Labelling l = graph_map(machine.costs, *graph, levels, options, Deadline(60));
    const Evaluation e =
        evaluate(machine.costs, Grid({512}), l, o.objective.with_links(machine.costs, levels));
    return e.graph->levels[0].total_load;
  };
  EXPECT_LT(across(true), across(false));
}

// A map begun is finished past its deadline (each split one METIS call):
// with no time at all, graph_map still puts each planted cluster on a node
// of its own, where the vertices it had not placed kept the job's order.
TEST(GraphRelabelTest, GraphMapFinishesPastItsDeadline) {
  MachineSpec m = machine_shape(2, 4, 2, 8, RankOrder::kRandom);
  m.seed = 7;
  const SyntheticMachine machine = generate_machine(m);
  const Labelling l = graph_map(machine.costs, *clusters_graph(8, 16),
                                machine_levels(machine.costs), {}, Deadline(0));
  for (const std::set<int>& nodes : nodes_of_clusters(machine.costs, l, 8)) {
    EXPECT_EQ(nodes.size(), 1u);
  }
}

// One METIS call per split still finds planted clusters (graph_map alone,
// its splits not refined by swaps).
TEST(GraphRelabelTest, OneMetisAttemptFindsTheClusters) {
  MachineSpec m = machine_shape(2, 4, 2, 8, RankOrder::kRandom);
  m.seed = 7;
  const SyntheticMachine machine = generate_machine(m);
  GraphMapOptions options;
  options.metis_attempts = 1;
  options.refine_splits = false;
  const Labelling l = graph_map(machine.costs, *clusters_graph(8, 16),
                                machine_levels(machine.costs), options, Deadline(60));
  for (const std::set<int>& nodes : nodes_of_clusters(machine.costs, l, 8)) {
    EXPECT_EQ(nodes.size(), 1u);
  }
}

// NPB FT's traffic at 64 ranks, as profiled: heavy pairs (2i, 2i+1), light
// all-to-all among the even and among the odd ranks. On 2 racks of 2
// nodes of 16 the best layout splits every heavy pair across the racks and
// keeps each half whole; coarsening by heavy edges alone never can.
TEST(GraphRelabelTest, HeavyPairsThatShouldSplitDo) {
  std::vector<WeightedEdge> edges;
  for (int a = 0; a < 64; ++a) {
    if (a % 2 == 0) edges.push_back({a, a + 1, 1.16e6});
    for (int b = a + 2; b < 64; b += 2) edges.push_back({a, b, 1.31e5});
  }
  const auto graph = std::make_shared<const TrafficGraph>(64, std::move(edges));
  const SyntheticMachine machine = generate_machine(machine_shape(2, 2, 1, 16));
  std::vector<OldRank> halves;  // evens on rack 0 (ranks 0-31), odds on rack 1
  for (int v = 0; v < 64; ++v) halves.emplace_back(v / 2 + (v % 2) * 32);
  const ObjectiveSpec spec = graph_options(graph, "auto").objective;
  const double planted = evaluate(machine.costs, Grid({64}), Labelling(halves), spec).value.primary;
  const RelabelResult r = relabel(machine.costs, Grid({64}), graph_options(graph, "auto"));
  EXPECT_LE(r.after.value.primary, planted * (1 + 1e-12));
  EXPECT_LT(r.after.value.primary, 0.7 * r.before.value.primary);
}

// Two boundary vertices exchanged between 4x4 blocks: the boundary
// refinement puts them back.
TEST(GraphRelabelTest, BoundaryRefinementStraightensABoundary) {
  const SyntheticMachine machine = generate_machine(machine_shape(1, 4, 1, 16));
  const auto graph = mesh(8, 8);
  const ObjectiveSpec spec =
      graph_options(graph, "auto")
          .objective.with_links(machine.costs, machine_levels(machine.costs));
  // 4x4 blocks: vertex (r, c) on node (r / 4) * 2 + c / 4, core (r % 4) * 4 + c % 4.
  std::vector<OldRank> blocks(64);
  for (int v = 0; v < 64; ++v) {
    const int r = v / 8, c = v % 8;
    blocks[v] = OldRank(((r / 4) * 2 + c / 4) * 16 + (r % 4) * 4 + c % 4);
  }
  IncrementalObjective state(machine.costs, Grid({64}), Labelling(blocks), spec);
  const double best = state.value().primary;
  state.apply_swap(NewRank(3 * 8 + 3), NewRank(3 * 8 + 4));  // (3,3) and (3,4) trade nodes
  ASSERT_GT(state.value().primary, best);
  const std::vector<int> node_of = machine_levels(machine.costs)[0];
  EXPECT_GE(refine_boundaries(state, node_of, Deadline(10), 4), 1);
  EXPECT_DOUBLE_EQ(state.value().primary, best);
}

// The cut weight of a partition (each edge once).
std::int64_t cut_of(const TrafficGraph& g, const std::vector<int>& part) {
  std::int64_t cut = 0;
  for (int v = 0; v < g.vertices(); ++v) {
    for (std::size_t e = g.begin(v); e < g.end(v); ++e) {
      if (part[static_cast<std::size_t>(g.neighbour(e))] != part[static_cast<std::size_t>(v)]) {
        cut += g.units(e);
      }
    }
  }
  return cut / 2;
}

// The header's example: two cliques split wrongly come apart in one swap.
TEST(GraphRelabelTest, PairRefinementSwapsTheCliquesApart) {
  std::vector<WeightedEdge> edges;
  for (int base : {0, 4}) {
    for (int a = base; a < base + 4; ++a) {
      for (int b = a + 1; b < base + 4; ++b) edges.push_back({a, b, 10});
    }
  }
  edges.push_back({3, 4, 1});
  const TrafficGraph g(8, std::move(edges));
  std::vector<int> part = {0, 0, 0, 1, 0, 1, 1, 1};
  ASSERT_EQ(cut_of(g, part), 61);
  EXPECT_EQ(refine_pairs(g, 2, part, Deadline(10)), 60);
  EXPECT_EQ(part, (std::vector<int>{0, 0, 0, 0, 1, 1, 1, 1}));
}

// Every single swap loses here (the best by 2), a pass of swaps gains 3:
// it takes the losing swap first and keeps the ones after it.
TEST(GraphRelabelTest, PairRefinementTakesALosingSwapToGainLater) {
  const TrafficGraph g(8, {{0, 1, 3},
                           {0, 2, 3},
                           {0, 3, 3},
                           {0, 6, 2},
                           {1, 2, 2},
                           {1, 5, 2},
                           {2, 4, 2},
                           {2, 7, 1},
                           {3, 7, 3},
                           {4, 5, 4},
                           {6, 7, 5}});
  const std::vector<int> start = {0, 0, 0, 0, 1, 1, 1, 1};
  ASSERT_EQ(cut_of(g, start), 10);
  for (int x = 0; x < 4; ++x) {
    for (int y = 4; y < 8; ++y) {
      std::vector<int> swapped = start;
      std::swap(swapped[static_cast<std::size_t>(x)], swapped[static_cast<std::size_t>(y)]);
      ASSERT_GE(cut_of(g, swapped), 12) << x << " " << y;
    }
  }
  std::vector<int> part = start;
  EXPECT_EQ(refine_pairs(g, 2, part, Deadline(10)), 3);
  EXPECT_EQ(cut_of(g, part), 7);
  EXPECT_EQ(std::count(part.begin(), part.end(), 0), 4);
}

// On random graphs and partitions (equal and unequal parts): sizes stay,
// the gain reported is the cut removed, and once a call gains nothing no
// swap of two vertices with edges across (a pass's candidates) gains.
TEST(GraphRelabelTest, PairRefinementKeepsSizesAndEndsWithNoGainingSwap) {
  SplitMix64 rng(11);
  for (int trial = 0; trial < 40; ++trial) {
    const int n = 20 + static_cast<int>(rng.next() % 60), k = 2 + static_cast<int>(rng.next() % 5);
    std::vector<WeightedEdge> edges;
    for (int a = 0; a < n; ++a) {
      for (int b = a + 1; b < n; ++b) {
        if (rng.next() % 8 == 0)
          edges.push_back({a, b, 1.0 + static_cast<double>(rng.next() % 100)});
      }
    }
    const TrafficGraph g(n, std::move(edges));
    std::vector<int> part(static_cast<std::size_t>(n));
    for (int v = 0; v < n; ++v)
      part[static_cast<std::size_t>(v)] = static_cast<int>(rng.next() % k);
    std::vector<int> sizes(static_cast<std::size_t>(k), 0);
    for (int p : part) ++sizes[static_cast<std::size_t>(p)];
    for (std::int64_t gain = 1; gain > 0;) {
      const std::int64_t before = cut_of(g, part);
      gain = refine_pairs(g, k, part, Deadline(10));
      ASSERT_GE(gain, 0);
      ASSERT_EQ(before - cut_of(g, part), gain) << "trial " << trial;
    }
    for (int p = 0; p < k; ++p) {
      EXPECT_EQ(std::count(part.begin(), part.end(), p), sizes[static_cast<std::size_t>(p)]);
    }
    const std::int64_t cut = cut_of(g, part);
    const auto across = [&](int v, int other) {
      for (std::size_t e = g.begin(v); e < g.end(v); ++e) {
        if (part[static_cast<std::size_t>(g.neighbour(e))] == other) return true;
      }
      return false;
    };
    for (int x = 0; x < n; ++x) {
      for (int y = x + 1; y < n; ++y) {
        const int px = part[static_cast<std::size_t>(x)], py = part[static_cast<std::size_t>(y)];
        if (px == py || !across(x, py) || !across(y, px)) continue;
        std::vector<int> swapped = part;
        std::swap(swapped[static_cast<std::size_t>(x)], swapped[static_cast<std::size_t>(y)]);
        EXPECT_GE(cut_of(g, swapped), cut) << "trial " << trial << ": " << x << " " << y;
      }
    }
  }
}

TEST(GraphRelabelTest, PairRefinementRefusesBadParts) {
  const TrafficGraph g(3, {{0, 1, 1}, {1, 2, 1}});
  std::vector<int> part = {0, 1, 2};
  EXPECT_THROW(refine_pairs(g, 2, part, Deadline(1)), std::invalid_argument);
  part = {0, 1};
  EXPECT_THROW(refine_pairs(g, 2, part, Deadline(1)), std::invalid_argument);
  part = {0, 0, 0};
  EXPECT_THROW(refine_pairs(g, 0, part, Deadline(1)), std::invalid_argument);
  EXPECT_THROW(refine_pairs(g, 4, part, Deadline(1)), std::invalid_argument);
  const TrafficGraph heavy(2, {{0, 1, 4e9}});
  part = {0, 1};
  EXPECT_THROW(refine_pairs(heavy, 2, part, Deadline(1)), std::invalid_argument);
}

// One level of nodes: graph_map splits along one level, and auto makes no
// bottom-up start (it would map as top-down does).
TEST(GraphRelabelTest, OneLevelMakesNoBottomUpStart) {
  const SyntheticMachine machine = generate_machine(machine_shape(1, 4, 1, 16));
  EXPECT_EQ(graph_map_depth(machine.costs, machine_levels(machine.costs)), 1);
  const RelabelResult r =
      relabel(machine.costs, Grid({64}), graph_options(clusters_graph(4, 16), "auto"));
  ASSERT_GE(r.candidates.size(), 4u);
  for (const CandidateRun& c : r.candidates) {
    EXPECT_EQ(c.name.find("bottom-up"), std::string::npos) << c.name;
  }
  EXPECT_EQ(r.candidates[2].name, "graph map top-down start 1/4");
  EXPECT_EQ(r.candidates[3].name, "graph map top-down start 2/4");
  EXPECT_THROW(graph_map_depth(machine.costs, {std::vector<int>(3, 0)}), std::invalid_argument);
}

// --algorithm metis is the plain METIS peer: parts in machine order, no
// grouping, no swaps; and a map with no METIS call asked still makes one.
TEST(GraphRelabelTest, MetisPeerIsPlainAndZeroAttemptsStillMap) {
  MachineSpec m = machine_shape(2, 4, 2, 8, RankOrder::kRandom);
  m.seed = 9;
  const SyntheticMachine machine = generate_machine(m);
  const auto graph = random_geometric(128, 0.14, 5);
  GraphMapOptions plain;
  plain.assign_parts = false;
  plain.group_bottom_up = false;
  plain.refine_splits = false;
  const Labelling expected =
      graph_map(machine.costs, *graph, machine_levels(machine.costs), plain, Deadline(60));
  const RelabelResult r = relabel(machine.costs, Grid({128}), graph_options(graph, "metis"));
  for (int x = 0; x < 128; ++x) {
    EXPECT_EQ(r.labelling.old_of(NewRank(x)).value(), expected.old_of(NewRank(x)).value()) << x;
  }
  GraphMapOptions none;
  none.metis_attempts = 0;
  const Labelling l =
      graph_map(machine.costs, *graph, machine_levels(machine.costs), none, Deadline(60));
  std::set<int> ranks;
  for (int x = 0; x < 128; ++x) ranks.insert(l.old_of(NewRank(x)).value());
  EXPECT_EQ(ranks.size(), 128u);
}

TEST(GraphRelabelTest, OneRank) {
  const DenseCosts costs(1, {0});
  const RelabelResult r = relabel(
      costs, Grid({1}),
      graph_options(std::make_shared<const TrafficGraph>(1, std::vector<WeightedEdge>{}), "auto"));
  EXPECT_EQ(r.labelling.size(), 1);
  EXPECT_EQ(r.after.value.primary, 0);
}

TEST(GraphRelabelTest, RefusesGridAlgorithmsAndGrids) {
  const DenseCosts costs(4, {0, 1, 1, 1, 1, 0, 1, 1, 1, 1, 0, 1, 1, 1, 1, 0});
  const auto graph =
      std::make_shared<const TrafficGraph>(4, std::vector<WeightedEdge>{{0, 1, 1}, {2, 3, 1}});
  const auto message = [&](const Grid& grid, const std::string& algorithm) {
    try {
      relabel(costs, grid, graph_options(graph, algorithm));
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_EQ(message(Grid({2, 2}), "auto"),
            "a traffic graph is relabelled on a 1-D grid of its ranks, not 2x2");
  EXPECT_NE(message(Grid({4}), "kl").find("kl lays out a cartesian grid"), std::string::npos);
  EXPECT_NE(message(Grid({4}), "bisect").find("bisect lays out a cartesian grid"),
            std::string::npos);
  const auto wrong = std::make_shared<const TrafficGraph>(5, std::vector<WeightedEdge>{});
  EXPECT_THROW(graph_map(costs, *wrong, {}, GraphMapOptions{}, Deadline(10)),
               std::invalid_argument);
}

}  // namespace
}  // namespace rankshape
