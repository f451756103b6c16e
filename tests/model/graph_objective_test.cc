// The graph pattern: the traffic graph's construction, the header's worked
// example, a reference written from the definition (edge list, not the
// adjacency), and incremental values against it over random moves.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "lib/model/objective.h"
#include "lib/util/random.h"

namespace rankshape {
namespace {

Labelling from(std::vector<int> perm) {
  std::vector<OldRank> v;
  for (int o : perm) v.emplace_back(o);
  return Labelling(std::move(v));
}

ObjectiveSpec graph_spec(std::shared_ptr<const TrafficGraph> graph,
                         const std::string& objective = "") {
  ObjectiveSpec s = ObjectiveSpec::parse(objective, Pattern::parse("graph"));
  s.graph = std::move(graph);
  return s;
}

TEST(TrafficGraphTest, SumsBothDirectionsAndRepeats) {
  const TrafficGraph g(3, {{0, 1, 5}, {1, 0, 2}, {1, 2, 1}, {2, 0, 0}});
  EXPECT_EQ(g.vertices(), 3);
  EXPECT_EQ(g.edges(), 2);
  ASSERT_EQ(g.degree(0), 1);
  EXPECT_EQ(g.neighbour(g.begin(0)), 1);
  EXPECT_EQ(g.weight(g.begin(0)), 7);
  ASSERT_EQ(g.degree(1), 2);
  EXPECT_EQ(g.neighbour(g.begin(1)), 0);
  EXPECT_EQ(g.neighbour(g.begin(1) + 1), 2);
  EXPECT_EQ(g.weight(g.begin(1) + 1), 1);
  EXPECT_EQ(g.degree(2), 1);  // the zero-weight edge is dropped
  EXPECT_EQ(g.total_weight(), 8);
  EXPECT_EQ(g.vertex_weight(1), 8);
  EXPECT_EQ(g.unit_weight(), 1);
}

TEST(TrafficGraphTest, HugeWeightsKeepExactUnits) {
  // 3 * 2^59 bytes in all: the unit doubles once, to 2.
  const double big = std::ldexp(1.0, 59);
  const TrafficGraph g(3, {{0, 1, big}, {1, 2, 2 * big}, {0, 2, 1}});
  EXPECT_EQ(g.unit_weight(), 2);
  EXPECT_EQ(g.weight(g.begin(0)), big);
  EXPECT_EQ(g.weight(g.begin(0) + 1), 2);  // 1 byte rounds up to one unit, never to none
}

TEST(TrafficGraphTest, RejectsBadEdges) {
  const auto message = [](int n, std::vector<WeightedEdge> e) {
    try {
      TrafficGraph g(n, std::move(e));
    } catch (const std::invalid_argument& err) {
      return std::string(err.what());
    }
    return std::string("accepted");
  };
  EXPECT_EQ(message(0, {}), "a traffic graph needs 1 to 16777216 vertices, got 0");
  EXPECT_EQ(message(2, {{0, 2, 1}}), "edge 0 - 2 names a vertex outside 0..1");
  EXPECT_EQ(message(2, {{1, 1, 1}}), "edge 1 - 1 joins a vertex to itself");
  EXPECT_NE(message(2, {{0, 1, -1}}).find("edge 0 - 1 has weight -1"), std::string::npos);
  EXPECT_NE(message(2, {{0, 1, NAN}}).find("must be finite and >= 0"), std::string::npos);
  EXPECT_EQ(message(3, {{0, 1, 1e308}, {1, 2, 1e308}}), "the edge weights add up to infinity");
}

// The header's example: nodes {0,1} {2,3} (1 inside, 10 across), edges 0-1
// weight 5 and 1-2 weight 1.
TEST(GraphObjectiveTest, WorkedExampleFromTheHeader) {
  const DenseCosts d(4, {0, 1, 10, 10, 1, 0, 10, 10, 10, 10, 0, 1, 10, 10, 1, 0});
  const auto graph =
      std::make_shared<const TrafficGraph>(4, std::vector<WeightedEdge>{{0, 1, 5}, {1, 2, 1}});
  const ObjectiveSpec s = graph_spec(graph);
  EXPECT_EQ(s.name(), "cost");
  const Grid line({4});
  const Evaluation id = evaluate(d, line, Labelling::identity(4), s);
  EXPECT_EQ(id.value.primary, 25);
  EXPECT_EQ(id.value.total, 5 + 10 + 10 * 2);  // both nodes' loads
  ASSERT_TRUE(id.graph);
  EXPECT_EQ(id.graph->communication, 15);
  EXPECT_EQ(id.graph->weight, 6);
  EXPECT_EQ(id.graph->edges, 2);
  EXPECT_EQ(id.graph->busiest_rank, 15);  // rank 1: 5 * 1 + 1 * 10
  EXPECT_EQ(id.graph->busiest_position, 1);
  ASSERT_EQ(id.graph->levels.size(), 1u);
  EXPECT_EQ(id.graph->levels[0].crossing_pairs, 1);
  EXPECT_EQ(id.graph->levels[0].busiest_load, 1);
  // Positions 0..3 on old ranks 0, 2, 1, 3 split both edges: 5 * 10 +
  // 1 * 10, and each node sends both edges' weight out: + 10 * 6.
  EXPECT_EQ(evaluate(d, line, from({0, 2, 1, 3}), s).value.primary, 120);
  // "total": the communication cost alone.
  EXPECT_EQ(evaluate(d, line, Labelling::identity(4), graph_spec(graph, "total")).value.primary,
            15);
}

TEST(GraphObjectiveTest, RefusesWhatDoesNotFit) {
  const DenseCosts d(2, {0, 1, 1, 0});
  const Grid line({2});
  const auto message = [&](const ObjectiveSpec& s) {
    try {
      evaluate(d, line, Labelling::identity(2), s);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_EQ(message(graph_spec(nullptr)),
            "the graph pattern needs a traffic graph (a traffic file)");
  EXPECT_EQ(message(graph_spec(
                std::make_shared<const TrafficGraph>(3, std::vector<WeightedEdge>{{0, 1, 1}}))),
            "the traffic graph has 3 ranks, the job 2");
  EXPECT_THROW(ObjectiveSpec::parse("step", Pattern::parse("graph")), std::invalid_argument);
  ObjectiveSpec fibres = ObjectiveSpec::parse("", Pattern::parse("fibres"));
  fibres.graph = std::make_shared<const TrafficGraph>(2, std::vector<WeightedEdge>{{0, 1, 1}});
  EXPECT_EQ(message(fibres), "a traffic graph given with the fibres pattern");
}

struct Edge {
  int a, b;
  double w;
};

// The objective from its definition, over an edge list.
ObjectiveValue reference(const DenseCosts& c, const std::vector<Edge>& edges, const Labelling& l,
                         const std::vector<LinkLevel>& levels, bool cost) {
  double comm = 0;
  for (const Edge& e : edges) comm += e.w * c.cost(l.old_of(NewRank(e.a)), l.old_of(NewRank(e.b)));
  ObjectiveValue v;
  v.primary = v.total = comm;
  if (!cost) return v;
  for (const LinkLevel& level : levels) {
    std::vector<double> load(static_cast<std::size_t>(level.groups), 0);
    for (const Edge& e : edges) {
      const int ga = level.group_of[l.old_of(NewRank(e.a)).value()];
      const int gb = level.group_of[l.old_of(NewRank(e.b)).value()];
      if (ga == gb) continue;
      load[ga] += e.w;
      load[gb] += e.w;
    }
    double all = 0;
    for (double x : load) all += x;
    // Each edge between groups once through each parent's fabric it crosses.
    std::vector<double> parent_load(static_cast<std::size_t>(level.parents), 0);
    for (const Edge& e : edges) {
      const int ga = level.group_of[l.old_of(NewRank(e.a)).value()];
      const int gb = level.group_of[l.old_of(NewRank(e.b)).value()];
      if (ga == gb) continue;
      const int pa = level.parent_of.empty() ? 0 : level.parent_of[ga];
      const int pb = level.parent_of.empty() ? 0 : level.parent_of[gb];
      parent_load[pa] += e.w;
      if (pb != pa) parent_load[pb] += e.w;
    }
    const double fabric =
        level.fabric_cost * *std::max_element(parent_load.begin(), parent_load.end());
    v.primary += level.flow_cost * *std::max_element(load.begin(), load.end()) + fabric;
    v.total += level.flow_cost * all + fabric;
  }
  return v;
}

void expect_near(const ObjectiveValue& got, const ObjectiveValue& want, const std::string& what) {
  EXPECT_NEAR(got.primary, want.primary, 1e-9 * (1 + std::fabs(want.primary))) << what;
  EXPECT_NEAR(got.total, want.total, 1e-9 * (1 + std::fabs(want.total))) << what;
}

// Incremental values against the definition over random swaps and
// 3-cycles, on sparse and dense random graphs, with and without links.
TEST(GraphObjectiveTest, MovesMatchTheDefinition) {
  SplitMix64 rng(2026);
  int checked = 0;
  for (int trial = 0; trial < 12; ++trial) {
    const int p = 3 + static_cast<int>(rng.below(40));
    std::vector<double> m(static_cast<std::size_t>(p) * p, 0);
    for (int a = 0; a < p; ++a) {
      for (int b = a + 1; b < p; ++b) m[a * p + b] = m[b * p + a] = 1 + rng.below(100);
    }
    const DenseCosts c(p, m);
    std::vector<Edge> edges;
    std::vector<WeightedEdge> given;
    const int count = trial % 3 == 0 ? p * p : 2 * p;  // dense, or sparse with repeats
    for (int i = 0; i < count; ++i) {
      const int a = static_cast<int>(rng.below(p));
      const int b = static_cast<int>(rng.below(p));
      if (a == b) continue;
      const double w = static_cast<double>(1 + rng.below(1000));
      edges.push_back({a, b, w});
      given.push_back({a, b, w});
    }
    const auto graph = std::make_shared<const TrafficGraph>(p, given);
    const bool cost = trial % 4 != 3;
    ObjectiveSpec s = graph_spec(graph, cost ? "cost" : "total");
    std::vector<LinkLevel> levels;
    if (cost) {
      for (int groups : {std::max(2, p / 4), 2}) {
        LinkLevel level;
        level.groups = groups;
        level.flow_cost = 1 + static_cast<double>(rng.below(50));
        for (int r = 0; r < p; ++r) level.group_of.push_back(r % groups);
        // Fabrics on some trials: the finer level's in two parents, the
        // coarser's in the whole job.
        if (trial % 2 == 1) {
          level.fabric_cost = 1 + static_cast<double>(rng.below(20));
          if (groups >= 3) {
            level.parents = 2;
            for (int g = 0; g < groups; ++g) level.parent_of.push_back(g % 2);
          }
        }
        levels.push_back(std::move(level));
      }
      s.links = std::make_shared<const std::vector<LinkLevel>>(levels);
    }
    std::vector<int> perm(static_cast<std::size_t>(p));
    for (int i = 0; i < p; ++i) perm[i] = i;
    shuffle(perm, rng);
    IncrementalObjective inc(c, Grid({p}), from(perm), s);
    for (int step = 0; step < 200; ++step) {
      const NewRank a(static_cast<int>(rng.below(p)));
      NewRank x(static_cast<int>(rng.below(p)));
      while (x == a) x = NewRank(static_cast<int>(rng.below(p)));
      NewRank y(static_cast<int>(rng.below(p)));
      while (y == a || y == x) y = NewRank(static_cast<int>(rng.below(p)));
      Labelling moved = inc.labelling();
      if (step % 2 == 0) {
        moved.swap_positions(a, x);
        expect_near(inc.value_after_swap(a, x), reference(c, edges, moved, levels, cost), "swap");
        if (step % 4 == 0) inc.apply_swap(a, x);
      } else {
        moved.cycle_positions(a, x, y);
        expect_near(inc.value_after_cycle(a, x, y), reference(c, edges, moved, levels, cost),
                    "cycle");
        if (step % 3 == 0) inc.apply_cycle(a, x, y);
      }
      expect_near(inc.value(), reference(c, edges, inc.labelling(), levels, cost), "state");
      ++checked;
    }
    const Evaluation e = inc.evaluation();
    const Evaluation full = evaluate(c, Grid({p}), inc.labelling(), s);
    ASSERT_TRUE(e.graph && full.graph);
    expect_near(e.value, full.value, "evaluation");
  }
  EXPECT_EQ(checked, 12 * 200);
}

}  // namespace
}  // namespace rankshape
