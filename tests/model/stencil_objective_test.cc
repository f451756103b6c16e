// The stencil objective: the header's worked example, a reference
// implementation written from the definition (coordinates, not Stencil),
// and incremental values against it over thousands of random moves.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>

#include "lib/model/objective.h"
#include "lib/util/random.h"
#include "tests/testing/machines.h"

namespace rankshape {
namespace {

DenseCosts two_nodes_of_two() {
  // {0,1} and {2,3} are nodes: 1 inside, 10 across.
  return DenseCosts(4, {0, 1, 10, 10, 1, 0, 10, 10, 10, 10, 0, 1, 10, 10, 1, 0});
}

Labelling from(std::vector<int> perm) {
  std::vector<OldRank> v;
  for (int o : perm) v.emplace_back(o);
  return Labelling(std::move(v));
}

ObjectiveSpec stencil_spec(const std::string& pattern, const std::string& objective = "") {
  return ObjectiveSpec::parse(objective, Pattern::parse(pattern));
}

TEST(StencilObjectiveTest, WorkedExampleFromTheHeader) {
  const DenseCosts d = two_nodes_of_two();
  const Grid line({4});
  const ObjectiveSpec s = stencil_spec("stencil");
  EXPECT_EQ(s.name(), "step");
  const Evaluation id = evaluate(d, line, Labelling::identity(4), s);
  EXPECT_EQ(id.value.primary, 11);
  EXPECT_EQ(id.value.total, 54);
  ASSERT_TRUE(id.stencil);
  EXPECT_EQ(id.stencil->busiest_rank, 11);
  EXPECT_EQ(id.stencil->busiest_position, 1);
  EXPECT_EQ(id.stencil->messages, 6);
  ASSERT_EQ(id.stencil->levels.size(), 1u);
  EXPECT_EQ(id.stencil->levels[0].flow_cost, 10);
  EXPECT_EQ(id.stencil->levels[0].crossing_pairs, 1);
  EXPECT_EQ(id.stencil->levels[0].busiest_pairs, 1);
  EXPECT_EQ(id.stencil->levels[0].busiest_load, 1);
  const Evaluation alternating = evaluate(d, line, from({0, 2, 1, 3}), s);
  EXPECT_EQ(alternating.value.primary, 30);
  EXPECT_EQ(alternating.value.total, 150);
  EXPECT_EQ(alternating.stencil->levels[0].crossing_pairs, 3);
  EXPECT_EQ(alternating.stencil->levels[0].busiest_pairs, 3);
  // "total": the ranks' costs alone.
  EXPECT_EQ(
      evaluate(d, line, Labelling::identity(4), stencil_spec("stencil", "total")).value.primary,
      24);
}

// The header's second example: 2 racks of 2 nodes of 2 ranks (1 inside a
// node, 10 between nodes of a rack, 100 between racks), grid 8, identity.
// The busiest node (ranks 2, 3) sends 2 messages out (flow cost 10), each
// rack 1 (flow cost 100): the levels add to 20 + 100 = 120, more than the
// busiest rank's 1 + 100 (position 3). A max over levels would say 101.
TEST(StencilObjectiveTest, LevelsAddUp) {
  std::vector<double> m(64, 0);
  for (int a = 0; a < 8; ++a) {
    for (int b = 0; b < 8; ++b) {
      if (a != b) m[a * 8 + b] = a / 2 == b / 2 ? 1 : a / 4 == b / 4 ? 10 : 100;
    }
  }
  const DenseCosts c(8, m);
  const ObjectiveSpec s =
      stencil_spec("stencil").with_links(c, {{0, 0, 1, 1, 2, 2, 3, 3}, {0, 0, 0, 0, 1, 1, 1, 1}});
  const Evaluation e = evaluate(c, Grid({8}), Labelling::identity(8), s);
  ASSERT_TRUE(e.stencil);
  EXPECT_EQ(e.stencil->busiest_rank, 101);
  ASSERT_EQ(e.stencil->levels.size(), 2u);
  EXPECT_EQ(e.stencil->levels[0].flow_cost, 10);
  EXPECT_EQ(e.stencil->levels[0].busiest_load, 2);
  EXPECT_EQ(e.stencil->levels[1].flow_cost, 100);
  EXPECT_EQ(e.stencil->levels[1].busiest_load, 1);
  EXPECT_EQ(e.value.primary, 120);
}

// The worked example of objective.h: a fabric every node's messages cross
// adds the traffic of all nodes, so that of two labellings whose busiest
// node sends as much, the one sending less in all is faster.
TEST(StencilObjectiveTest, AFabricAddsTheTrafficOfAllGroups) {
  StructuredSpec m = testing::flat_machine(4, 2, 10);
  for (int n = 0; n < 4; ++n) m.ranks.insert(m.ranks.end(), {{n, 0}, {n, 1}});
  m.node_fabric = 0.25;  // of the flow cost 10
  const StructuredCosts c(m);
  const std::vector<int> nodes = {0, 0, 1, 1, 2, 2, 3, 3};
  const ObjectiveSpec s = stencil_spec("stencil").with_links(c, {nodes});
  ASSERT_EQ(s.links->size(), 1u);
  EXPECT_EQ((*s.links)[0].fabric_cost, 2.5);
  // Identity: nodes send 1, 2, 2 and 1 messages out; T = max(11, 10 * 2 +
  // 2.5 * 6) = 35.
  const Evaluation id = evaluate(c, Grid({8}), Labelling::identity(8), s);
  EXPECT_EQ(id.stencil->busiest_rank, 11);
  EXPECT_EQ(id.stencil->levels[0].busiest_load, 2);
  EXPECT_EQ(id.stencil->levels[0].busiest_fabric_load, 6);
  EXPECT_EQ(id.value.primary, 35);
  // Node 0 at both ends (perm 0,2,3,4,5,6,7,1): every node sends 2, the
  // busiest no more than before, but 8 in all: 20 + 20 = 40.
  const Evaluation mixed = evaluate(c, Grid({8}), from({0, 2, 3, 4, 5, 6, 7, 1}), s);
  EXPECT_EQ(mixed.stencil->levels[0].busiest_load, 2);
  EXPECT_EQ(mixed.stencil->levels[0].busiest_fabric_load, 8);
  EXPECT_EQ(mixed.value.primary, 40);
  // Without the fabric both steps last as long as their busiest node.
  m.node_fabric = 0;
  const StructuredCosts plain(m);
  const ObjectiveSpec without = stencil_spec("stencil").with_links(plain, {nodes});
  EXPECT_EQ(evaluate(plain, Grid({8}), Labelling::identity(8), without).value.primary, 20);
  EXPECT_EQ(evaluate(plain, Grid({8}), from({0, 2, 3, 4, 5, 6, 7, 1}), without).value.primary, 20);
}

TEST(StencilObjectiveTest, ObjectiveNamesFollowThePattern) {
  EXPECT_EQ(stencil_spec("stencil", "total").name(), "total");
  EXPECT_THROW(stencil_spec("stencil", "sum-max"), std::invalid_argument);
  EXPECT_THROW(stencil_spec("stencil", "sum-max+links"), std::invalid_argument);
  EXPECT_EQ(ObjectiveSpec::parse("", Pattern{}).name(), "sum-max:pairs");
  EXPECT_THROW(ObjectiveSpec::parse("step"), std::invalid_argument);
  ObjectiveSpec fibre_step;
  fibre_step.aggregate = Aggregate::kStep;
  EXPECT_THROW(evaluate(two_nodes_of_two(), Grid({4}), Labelling::identity(4), fibre_step),
               std::invalid_argument);
  ObjectiveSpec weighted = stencil_spec("stencil");
  weighted.dimension_weights = {2};
  EXPECT_THROW(evaluate(two_nodes_of_two(), Grid({4}), Labelling::identity(4), weighted),
               std::invalid_argument);
  // A stencil that does not fit the grid is refused with the reason.
  EXPECT_THROW(evaluate(two_nodes_of_two(), Grid({2, 2}), Labelling::identity(4),
                        stencil_spec("stencil:periodic=1")),
               std::invalid_argument);
}

// The demo machine's figures from the halo issue: 8x8x16 over 32 nodes of
// 32 ranks, a 2x4x4 box per node, cuts 704 neighbour pairs; the busiest
// node sends 56.
TEST(StencilObjectiveTest, BoxesPerNodeCutWhatGeometrySays) {
  StructuredSpec m = testing::flat_machine(32, 32, 10);
  for (int r = 0; r < 1024; ++r) m.ranks.push_back({r / 32, r % 32});
  const StructuredCosts c(std::move(m));
  const Grid g({8, 8, 16});
  std::vector<int> perm(1024);
  for (int x = 0; x < 1024; ++x) {
    const std::vector<int> co = g.coords(NewRank(x));
    const int node = (co[0] / 2) * 8 + (co[1] / 4) * 4 + co[2] / 4;
    const int core = (co[0] % 2) * 16 + (co[1] % 4) * 4 + co[2] % 4;
    perm[x] = node * 32 + core;
  }
  ObjectiveSpec s = stencil_spec("stencil");
  std::vector<int> node_of(1024);
  for (int r = 0; r < 1024; ++r) node_of[r] = r / 32;
  s = s.with_links(c, {node_of});
  const Evaluation e = evaluate(c, g, from(perm), s);
  ASSERT_EQ(e.stencil->levels.size(), 1u);
  EXPECT_EQ(e.stencil->levels[0].crossing_pairs, 704);
  EXPECT_EQ(e.stencil->levels[0].busiest_pairs, 56);
  EXPECT_EQ(e.stencil->messages, 2 * (7 * 8 * 16 + 8 * 7 * 16 + 8 * 8 * 15));
  // The job's own order puts slabs of 32 (2 rows of 16) on each node.
  const Evaluation id = evaluate(c, g, Labelling::identity(1024), s);
  EXPECT_EQ(id.stencil->levels[0].crossing_pairs, 7 * 8 * 16 + 8 * 3 * 16);
  EXPECT_GT(id.value.primary, e.value.primary);
}

// Periodic 4x4 over 4 nodes of 4: a 2x2 block and a strip per node give
// isomorphic neighbour graphs (each node a 4-cycle of ranks, the nodes a
// ring, four messages between neighbouring nodes), so the objective ties
// them exactly; relabelling tells them apart (relabel_test).
TEST(StencilObjectiveTest, StripsAndBlocksTieOnAPeriodic4x4) {
  StructuredSpec m = testing::flat_machine(4, 4, 10);
  for (int r = 0; r < 16; ++r) m.ranks.push_back({r / 4, r % 4});
  const StructuredCosts c(std::move(m));
  const Grid g({4, 4});
  std::vector<int> node_of(16);
  for (int r = 0; r < 16; ++r) node_of[r] = r / 4;
  const ObjectiveSpec s = stencil_spec("stencil:periodic").with_links(c, {node_of});
  const Evaluation strips = evaluate(c, g, Labelling::identity(16), s);
  std::vector<int> perm(16);
  for (int x = 0; x < 16; ++x) {
    const int row = x / 4, col = x % 4;
    perm[x] = ((row / 2) * 2 + col / 2) * 4 + (row % 2) * 2 + col % 2;
  }
  const Evaluation blocks = evaluate(c, g, from(perm), s);
  EXPECT_EQ(strips.value.primary, blocks.value.primary);
  EXPECT_EQ(strips.value.total, blocks.value.total);
  EXPECT_EQ(strips.value.concentration, blocks.value.concentration);
  EXPECT_EQ(strips.stencil->levels[0].crossing_pairs, 16);
  EXPECT_EQ(blocks.stencil->levels[0].crossing_pairs, 16);
}

// A line of 6 over nodes {0,1} {2,3} {4,5}: two labellings with the same
// busiest rank, link load and total. The first sends three messages each
// way between nodes 1 and 2 and one between 0 and 1 (pair loads 1, 1, 3, 3:
// squares 20), the second two between every neighbouring pair of nodes
// (2, 2, 2, 2: squares 16); times the flow cost 10.
TEST(StencilObjectiveTest, ConcentrationBreaksTies) {
  std::vector<double> m(36, 0);
  for (int a = 0; a < 6; ++a) {
    for (int b = 0; b < 6; ++b) {
      if (a != b) m[a * 6 + b] = a / 2 == b / 2 ? 1 : 10;
    }
  }
  const DenseCosts c(6, m);
  const ObjectiveSpec s = stencil_spec("stencil").with_links(c, {{0, 0, 1, 1, 2, 2}});
  const Evaluation a = evaluate(c, Grid({6}), from({0, 1, 2, 4, 3, 5}), s);
  const Evaluation b = evaluate(c, Grid({6}), from({0, 2, 4, 5, 3, 1}), s);
  EXPECT_EQ(a.value.primary, 40);
  EXPECT_EQ(b.value.primary, 40);
  EXPECT_EQ(a.value.total, b.value.total);
  EXPECT_EQ(a.value.concentration, 200);
  EXPECT_EQ(b.value.concentration, 160);
  EXPECT_TRUE(improves(b.value, a.value));
  EXPECT_FALSE(improves(a.value, b.value));
}

// ---- The reference: the definition, from coordinates. ----

struct Reference {
  ObjectiveValue value;
  double busiest = 0;
  std::vector<std::int64_t> crossing, busiest_pairs;
};

struct Case {
  std::vector<bool> periods;
  bool diagonals = false;
  std::vector<double> weights;
  double diagonal_weight = 1;
  std::string text() const {
    std::string t = "stencil:periodic=";
    for (std::size_t k = 0; k < periods.size(); ++k)
      t += (k ? "x" : "") + std::string(periods[k] ? "1" : "0");
    t += ",weights=";
    for (std::size_t k = 0; k < weights.size(); ++k) {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%g", weights[k]);
      t += (k ? "x" : "") + std::string(buf);
    }
    if (diagonals) {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%g", diagonal_weight);
      t += ",diagonals,diagonal-weight=" + std::string(buf);
    }
    return t;
  }
};

Reference reference(const Costs& c, const Grid& g, const Labelling& l, const Case& cs,
                    const std::vector<LinkLevel>& levels, bool step) {
  const int d = g.ndims();
  std::vector<std::vector<int>> offsets;
  std::vector<int> delta(d, -1);
  for (;;) {
    int nonzero = 0;
    for (int v : delta) nonzero += v != 0;
    if (nonzero == 1 || (nonzero > 1 && cs.diagonals)) offsets.push_back(delta);
    int k = d - 1;
    while (k >= 0 && ++delta[k] > 1) delta[k--] = -1;
    if (k < 0) break;
  }
  Reference r;
  double sum = 0;
  std::vector<std::map<int, double>> load(levels.size());
  std::vector<std::map<int, std::int64_t>> messages(levels.size());
  std::vector<std::map<std::pair<int, int>, double>> pairs(levels.size());
  // Each parent's fabric carries the messages from its groups to others and
  // those from other parents to its groups.
  std::vector<std::map<int, double>> through_fabric(levels.size());
  for (int x = 0; x < g.size(); ++x) {
    const std::vector<int> cx = g.coords(NewRank(x));
    double cost = 0;
    for (const auto& off : offsets) {
      std::vector<int> cy = cx;
      bool inside = true;
      int nonzero = 0, axis = 0;
      for (int k = 0; k < d; ++k) {
        if (off[k] != 0) {
          ++nonzero;
          axis = k;
        }
        cy[k] += off[k];
        if (cy[k] < 0 || cy[k] >= g.dim(k)) {
          if (!cs.periods[k]) inside = false;
          cy[k] = (cy[k] + g.dim(k)) % g.dim(k);
        }
      }
      if (!inside) continue;
      const double w = nonzero == 1 ? cs.weights[axis] : cs.diagonal_weight;
      const OldRank a = l.old_of(NewRank(x)), b = l.old_of(g.position(cy));
      cost += w * c.cost(a, b);
      for (std::size_t lv = 0; lv < levels.size(); ++lv) {
        const int ga = levels[lv].group_of[a.value()], gb = levels[lv].group_of[b.value()];
        if (ga == gb) continue;
        load[lv][ga] += w;
        messages[lv][ga] += 1;
        pairs[lv][{ga, gb}] += w;
        const int pa = levels[lv].parent_of.empty() ? 0 : levels[lv].parent_of[ga];
        const int pb = levels[lv].parent_of.empty() ? 0 : levels[lv].parent_of[gb];
        through_fabric[lv][pa] += w;
        if (pb != pa) through_fabric[lv][pb] += w;
      }
    }
    sum += cost;
    r.busiest = std::max(r.busiest, cost);
  }
  if (!step) {
    r.value.primary = r.value.total = sum;
    return r;
  }
  double links = 0;  // busiest group's flow, summed over levels
  r.value.total = sum;
  for (std::size_t lv = 0; lv < levels.size(); ++lv) {
    double most = 0, all = 0, sq = 0;
    std::int64_t crossing = 0, busiest_messages = 0;
    for (const auto& [group, w] : load[lv]) {
      most = std::max(most, w);
      all += w;
    }
    for (const auto& [group, n] : messages[lv]) {
      crossing += n;
      busiest_messages = std::max(busiest_messages, n);
    }
    for (const auto& [pair, w] : pairs[lv]) sq += w * w;
    double busiest_parent = 0;
    for (const auto& [parent, w] : through_fabric[lv]) busiest_parent = std::max(busiest_parent, w);
    links += levels[lv].flow_cost * most + levels[lv].fabric_cost * busiest_parent;
    r.value.total += levels[lv].flow_cost * (all + most) + levels[lv].fabric_cost * busiest_parent;
    r.value.concentration += levels[lv].flow_cost * sq;
    r.crossing.push_back(crossing / 2);
    r.busiest_pairs.push_back(busiest_messages);
  }
  r.value.primary = std::max(r.busiest, links);
  return r;
}

void expect_near(const ObjectiveValue& got, const ObjectiveValue& want, const std::string& what) {
  EXPECT_NEAR(got.primary, want.primary, 1e-9 * (1 + std::abs(want.primary))) << what;
  EXPECT_NEAR(got.total, want.total, 1e-9 * (1 + std::abs(want.total))) << what;
  EXPECT_NEAR(got.concentration, want.concentration, 1e-9 * (1 + std::abs(want.concentration)))
      << what;
}

DenseCosts random_costs(int p, SplitMix64& rng) {
  std::vector<double> m(static_cast<std::size_t>(p) * p, 0);
  for (int a = 0; a < p; ++a) {
    for (int b = a + 1; b < p; ++b) {
      const double v = 1 + static_cast<double>(rng.below(100));
      m[a * p + b] = m[b * p + a] = v;
    }
  }
  return DenseCosts(p, std::move(m));
}

Labelling random_labelling(int p, SplitMix64& rng) {
  std::vector<int> perm(p);
  for (int i = 0; i < p; ++i) perm[i] = i;
  shuffle(perm, rng);
  return from(perm);
}

LinkLevel random_level(int p, int groups, double flow_cost, SplitMix64& rng) {
  LinkLevel level;
  level.groups = groups;
  level.flow_cost = flow_cost;
  for (int r = 0; r < p; ++r) {
    level.group_of.push_back(r < groups ? r : static_cast<int>(rng.below(groups)));
  }
  return level;
}

// The level with a shared fabric: in one parent (the whole job) or, when
// it has groups enough, in two with the groups drawn at random.
LinkLevel with_fabric(LinkLevel level, double fabric_cost, SplitMix64& rng) {
  level.fabric_cost = fabric_cost;
  if (level.groups >= 3) {
    level.parents = 2;
    for (int g = 0; g < level.groups; ++g) {
      level.parent_of.push_back(g < 2 ? g : static_cast<int>(rng.below(2)));
    }
  }
  return level;
}

Case random_case(int d, SplitMix64& rng) {
  const double weights[] = {0.5, 1, 2.5, 3};
  Case cs;
  for (int k = 0; k < d; ++k) {
    cs.periods.push_back(rng.below(2) == 1);
    cs.weights.push_back(weights[rng.below(4)]);
  }
  cs.diagonals = d >= 2 && rng.below(2) == 1;
  cs.diagonal_weight = weights[rng.below(4)];
  return cs;
}

const std::vector<std::vector<int>> kGrids = {{2},    {5},       {4, 3},    {2, 2},       {3, 3},
                                              {1, 4}, {2, 1, 3}, {2, 3, 2}, {3, 2, 2, 2}, {6, 5}};

TEST(StencilObjectiveTest, FullEvaluationMatchesTheDefinition) {
  SplitMix64 rng(11);
  int checked = 0;
  for (const auto& dims : kGrids) {
    const Grid g(dims);
    for (int trial = 0; trial < 12; ++trial) {
      const Case cs = random_case(g.ndims(), rng);
      const DenseCosts c = random_costs(g.size(), rng);
      const Labelling l = random_labelling(g.size(), rng);
      const bool step = trial % 3 != 0;
      ObjectiveSpec s = stencil_spec(cs.text(), step ? "step" : "total");
      std::vector<LinkLevel> levels;
      if (step && g.size() >= 3) {
        levels = {random_level(g.size(), 2 + static_cast<int>(rng.below(g.size() / 2)), 7, rng),
                  random_level(g.size(), 2, 25, rng)};
        if (trial % 2 == 0) levels[0] = with_fabric(levels[0], 3, rng);
        s.links = std::make_shared<const std::vector<LinkLevel>>(levels);
      } else if (step) {
        s.links = std::make_shared<const std::vector<LinkLevel>>();
      }
      const Reference want = reference(c, g, l, cs, levels, step);
      const Evaluation e = evaluate(c, g, l, s);
      expect_near(e.value, want.value, g.to_string() + " " + cs.text());
      EXPECT_NEAR(e.stencil->busiest_rank, want.busiest, 1e-9 * (1 + want.busiest));
      ASSERT_EQ(e.stencil->levels.size(), levels.size());
      for (std::size_t lv = 0; lv < levels.size(); ++lv) {
        EXPECT_EQ(e.stencil->levels[lv].crossing_pairs, want.crossing[lv]);
        EXPECT_EQ(e.stencil->levels[lv].busiest_pairs, want.busiest_pairs[lv]);
      }
      ++checked;
    }
  }
  EXPECT_EQ(checked, 12 * static_cast<int>(kGrids.size()));
}

// Incremental values against the definition over thousands of random
// swaps and 3-cycles, with and without links, periods, diagonals and
// weights; applied moves keep the state exact, and its evaluation agrees
// with a full one.
TEST(StencilObjectiveTest, MovesMatchTheDefinition) {
  SplitMix64 rng(2026);
  int checked = 0, link_decided = 0;
  for (const auto& dims : kGrids) {
    const Grid g(dims);
    if (g.size() < 3) continue;
    for (int trial = 0; trial < 6; ++trial) {
      const Case cs = random_case(g.ndims(), rng);
      const bool step = trial != 5;
      ObjectiveSpec s = stencil_spec(cs.text(), step ? "step" : "total");
      std::vector<LinkLevel> levels;
      if (step) {
        levels = {random_level(g.size(), 2 + static_cast<int>(rng.below(g.size() / 2)),
                               trial % 2 ? 60 : 8, rng),
                  random_level(g.size(), 2, 150, rng)};
        // Fabrics: the nodes' in one or two parents, the racks' in the job.
        if (trial == 1 || trial == 2) levels[0] = with_fabric(levels[0], trial == 1 ? 4 : 30, rng);
        if (trial == 2) levels[1] = with_fabric(levels[1], 20, rng);
        s.links = std::make_shared<const std::vector<LinkLevel>>(levels);
      }
      const DenseCosts c = random_costs(g.size(), rng);
      IncrementalObjective inc(c, g, random_labelling(g.size(), rng), s);
      for (int step_no = 0; step_no < 80; ++step_no) {
        const NewRank a(static_cast<int>(rng.below(g.size())));
        NewRank x(static_cast<int>(rng.below(g.size())));
        while (x == a) x = NewRank(static_cast<int>(rng.below(g.size())));
        NewRank y(static_cast<int>(rng.below(g.size())));
        while (y == a || y == x) y = NewRank(static_cast<int>(rng.below(g.size())));
        Labelling moved = inc.labelling();
        if (step_no % 2 == 0) {
          moved.swap_positions(a, x);
          const Reference want = reference(c, g, moved, cs, levels, step);
          expect_near(inc.value_after_swap(a, x), want.value,
                      "swap " + g.to_string() + " " + cs.text());
          if (step_no % 4 == 0) inc.apply_swap(a, x);
        } else {
          moved.cycle_positions(a, x, y);
          const Reference want = reference(c, g, moved, cs, levels, step);
          expect_near(inc.value_after_cycle(a, x, y), want.value,
                      "cycle " + g.to_string() + " " + cs.text());
          if (step_no % 3 == 0) inc.apply_cycle(a, x, y);
        }
        const Reference now = reference(c, g, inc.labelling(), cs, levels, step);
        expect_near(inc.value(), now.value, "state " + g.to_string() + " " + cs.text());
        if (step && now.value.primary > now.busiest) ++link_decided;
        ++checked;
      }
      const Evaluation e = inc.evaluation();
      const Evaluation full = evaluate(c, g, inc.labelling(), s);
      ASSERT_TRUE(e.stencil && full.stencil);
      EXPECT_NEAR(e.stencil->busiest_rank, full.stencil->busiest_rank, 1e-9);
      EXPECT_EQ(e.stencil->busiest_position, full.stencil->busiest_position);
      EXPECT_NEAR(e.stencil->mean_rank, full.stencil->mean_rank,
                  1e-9 * (1 + full.stencil->mean_rank));
      EXPECT_EQ(e.stencil->messages, full.stencil->messages);
      ASSERT_EQ(e.stencil->levels.size(), full.stencil->levels.size());
      for (std::size_t lv = 0; lv < e.stencil->levels.size(); ++lv) {
        EXPECT_EQ(e.stencil->levels[lv].crossing_pairs, full.stencil->levels[lv].crossing_pairs);
        EXPECT_EQ(e.stencil->levels[lv].busiest_pairs, full.stencil->levels[lv].busiest_pairs);
        EXPECT_EQ(e.stencil->levels[lv].busiest_load, full.stencil->levels[lv].busiest_load);
        EXPECT_EQ(e.stencil->levels[lv].total_load, full.stencil->levels[lv].total_load);
        EXPECT_EQ(e.stencil->levels[lv].busiest_fabric_load,
                  full.stencil->levels[lv].busiest_fabric_load);
        EXPECT_EQ(e.stencil->levels[lv].busiest_parent, full.stencil->levels[lv].busiest_parent);
      }
    }
  }
  EXPECT_GT(checked, 3000);
  EXPECT_GT(link_decided, 100);  // the links decide some steps, the ranks others
  EXPECT_LT(link_decided, checked - 100);
}

TEST(StencilObjectiveTest, WorksOnStructuredCosts) {
  StructuredSpec m = testing::flat_machine(4, 4, 25);
  SplitMix64 rng(5);
  std::vector<int> slots(16);
  for (int i = 0; i < 16; ++i) slots[i] = i;
  shuffle(slots, rng);
  for (int r = 0; r < 16; ++r) m.ranks.push_back({slots[r] / 4, slots[r] % 4});
  const StructuredCosts c(std::move(m));
  const Grid g({4, 4});
  std::vector<int> node_of(16);
  for (int r = 0; r < 16; ++r) node_of[r] = c.location(OldRank(r)).node;
  const ObjectiveSpec s = stencil_spec("stencil:periodic,diagonals").with_links(c, {node_of});
  IncrementalObjective inc(c, g, Labelling::identity(16), s);
  for (int step = 0; step < 300; ++step) {
    const NewRank a(static_cast<int>(rng.below(16))), b(static_cast<int>(rng.below(16)));
    Labelling moved = inc.labelling();
    moved.swap_positions(a, b);
    expect_near(inc.value_after_swap(a, b), evaluate(c, g, moved, s).value, "structured");
    inc.apply_swap(a, b);
  }
  expect_near(inc.value(), evaluate(c, g, inc.labelling(), s).value, "structured final");
}

}  // namespace
}  // namespace rankshape
