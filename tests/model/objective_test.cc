#include "lib/model/objective.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "lib/util/random.h"
#include "tests/testing/machines.h"

namespace rankshape {
namespace {

ObjectiveSpec spec_of(FibreCost fibre, Aggregate aggregate) {
  ObjectiveSpec s;
  s.fibre = fibre;
  s.aggregate = aggregate;
  return s;
}

const ObjectiveSpec kAllSpecs[] = {
    spec_of(FibreCost::kSumOfPairs, Aggregate::kSumOfDimensionMax),
    spec_of(FibreCost::kSumOfPairs, Aggregate::kMaxOverAllFibres),
    spec_of(FibreCost::kSumOfPairs, Aggregate::kSumOfAllFibres),
    spec_of(FibreCost::kMaxPair, Aggregate::kSumOfDimensionMax),
    spec_of(FibreCost::kMaxPair, Aggregate::kMaxOverAllFibres),
    spec_of(FibreCost::kMaxPair, Aggregate::kSumOfAllFibres),
};

DenseCosts two_nodes_of_two() {
  // {0,1} and {2,3} are nodes: 1 inside, 10 across.
  return DenseCosts(4, {0, 1, 10, 10, 1, 0, 10, 10, 10, 10, 0, 1, 10, 10, 1, 0});
}

Labelling from(std::initializer_list<int> perm) {
  std::vector<OldRank> v;
  for (int o : perm) v.emplace_back(o);
  return Labelling(std::move(v));
}

TEST(ObjectiveTest, WorkedExampleFromTheHeader) {
  const DenseCosts d = two_nodes_of_two();
  const Grid g({2, 2});
  const Evaluation id = evaluate(d, g, Labelling::identity(4), ObjectiveSpec{});
  EXPECT_EQ(id.value.primary, 11);
  EXPECT_EQ(id.value.total, 22);
  EXPECT_EQ(id.dimensions[0].worst, 10);
  EXPECT_EQ(id.dimensions[1].worst, 1);
  EXPECT_EQ(id.dimensions[1].mean, 1);
  const Evaluation transposed = evaluate(d, g, from({0, 2, 1, 3}), ObjectiveSpec{});
  EXPECT_EQ(transposed.value.primary, 11);
  // 1-D grid of 4 split as 2x2 the other way: one fibre per node is best.
  const Evaluation thesis = evaluate(d, g, Labelling::identity(4),
                                     spec_of(FibreCost::kSumOfPairs, Aggregate::kMaxOverAllFibres));
  EXPECT_EQ(thesis.value.primary, 10);
  const Evaluation max_pair = evaluate(d, Grid({4}), Labelling::identity(4),
                                       spec_of(FibreCost::kMaxPair, Aggregate::kSumOfDimensionMax));
  EXPECT_EQ(max_pair.value.primary, 10);
  EXPECT_EQ(evaluate(d, Grid({4}), Labelling::identity(4), ObjectiveSpec{}).value.primary, 42);
}

TEST(ObjectiveTest, TotalBreaksTiesOnThePrimary) {
  const ObjectiveValue a{5, 10}, b{5, 9}, c{4, 100};
  EXPECT_TRUE(b < a);
  EXPECT_TRUE(c < b);
  EXPECT_FALSE(a < a);
}

TEST(ObjectiveTest, ParsesNames) {
  for (const ObjectiveSpec& s : kAllSpecs) {
    const ObjectiveSpec back = ObjectiveSpec::parse(s.name());
    EXPECT_EQ(back.fibre, s.fibre);
    EXPECT_EQ(back.aggregate, s.aggregate);
  }
  EXPECT_EQ(ObjectiveSpec::parse("thesis-max").fibre, FibreCost::kSumOfPairs);
  EXPECT_THROW(ObjectiveSpec::parse("fastest"), std::invalid_argument);
  EXPECT_THROW(ObjectiveSpec::parse("sum-max:min"), std::invalid_argument);
  const ObjectiveSpec links = ObjectiveSpec::parse("thesis-max:max-pair+links");
  EXPECT_TRUE(links.link_load);
  EXPECT_EQ(links.fibre, FibreCost::kMaxPair);
  EXPECT_EQ(links.name(), "thesis-max:max-pair+links");
  EXPECT_EQ(ObjectiveSpec::parse("sum-max+links").name(), "sum-max:pairs+links");
  EXPECT_FALSE(ObjectiveSpec::parse("sum-max").link_load);
  EXPECT_THROW(ObjectiveSpec::parse("total+links"), std::invalid_argument);
  EXPECT_THROW(ObjectiveSpec::parse("sum-max+link"), std::invalid_argument);
}

TEST(ObjectiveTest, LinksTakeTheLargerOfWorstFibreAndLinkLoad) {
  // Racks {0,1} and {2,3} (cost 10 across, 1 inside): identity's dimension
  // 0 crosses them with pair cost 10 per fibre and link load 40 * 1 = 40
  // (flow cost 40 given, each rack's load 1/2 + 1/2), dimension 1 stays
  // inside (pair cost 1, link load 0).
  ObjectiveSpec s = ObjectiveSpec::parse("sum-max+links");
  LinkLevel racks;
  racks.group_of = {0, 0, 1, 1};
  racks.groups = 2;
  racks.flow_cost = 40;
  s.links = std::make_shared<const std::vector<LinkLevel>>(std::vector<LinkLevel>{racks});
  const Evaluation e = evaluate(two_nodes_of_two(), Grid({2, 2}), Labelling::identity(4), s);
  EXPECT_EQ(e.link_load, (std::vector<double>{40, 0}));
  EXPECT_EQ(e.value.primary, 40 + 1);  // max(10, 40) + max(1, 0)
  // The tie-break adds every group's load: 22 for the pairs, 40 * (1 + 1).
  EXPECT_EQ(e.value.total, 22 + 80);
  EXPECT_EQ(e.dimensions[0].worst, 10);  // the pairs' own figure stays
  // Without levels given, they are found in the costs (racks at the jump
  // from 1 to 10; one message between them costs 10).
  const Evaluation found = evaluate(two_nodes_of_two(), Grid({2, 2}), Labelling::identity(4),
                                    ObjectiveSpec::parse("sum-max+links"));
  EXPECT_EQ(found.link_load, (std::vector<double>{10, 0}));
  EXPECT_TRUE(evaluate(two_nodes_of_two(), Grid({2, 2}), Labelling::identity(4), ObjectiveSpec{})
                  .link_load.empty());
  // Levels without +links, and levels of the wrong size, are refused.
  ObjectiveSpec no_flag = s;
  no_flag.link_load = false;
  EXPECT_THROW(evaluate(two_nodes_of_two(), Grid({2, 2}), Labelling::identity(4), no_flag),
               std::invalid_argument);
  racks.group_of = {0, 1};
  s.links = std::make_shared<const std::vector<LinkLevel>>(std::vector<LinkLevel>{racks});
  EXPECT_THROW(evaluate(two_nodes_of_two(), Grid({2, 2}), Labelling::identity(4), s),
               std::invalid_argument);
}

TEST(ObjectiveTest, DimensionWeightsScaleFibreCosts) {
  ObjectiveSpec s;
  s.dimension_weights = {2, 0.5};
  const Evaluation e = evaluate(two_nodes_of_two(), Grid({2, 2}), Labelling::identity(4), s);
  EXPECT_EQ(e.value.primary, 2 * 10 + 0.5 * 1);
  s.dimension_weights = {1};
  EXPECT_THROW(evaluate(two_nodes_of_two(), Grid({2, 2}), Labelling::identity(4), s),
               std::invalid_argument);
}

TEST(ObjectiveTest, SizeMismatchIsReported) {
  EXPECT_THROW(evaluate(two_nodes_of_two(), Grid({3}), Labelling::identity(3), ObjectiveSpec{}),
               std::invalid_argument);
}

DenseCosts random_costs(int p, SplitMix64& rng, bool with_ties) {
  std::vector<double> m(static_cast<std::size_t>(p) * p, 0);
  for (int a = 0; a < p; ++a) {
    for (int b = a + 1; b < p; ++b) {
      const double c = with_ties ? static_cast<double>(rng.below(3)) : rng.uniform() * 100;
      m[a * p + b] = m[b * p + a] = c;
    }
  }
  return DenseCosts(p, std::move(m));
}

Labelling random_labelling(int p, SplitMix64& rng) {
  std::vector<OldRank> v;
  for (int i = 0; i < p; ++i) v.emplace_back(i);
  shuffle(v, rng);
  return Labelling(std::move(v));
}

// A deliberately naive reference: group positions into fibres by their
// coordinates other than k, then cost every fibre from its definition.
ObjectiveValue reference(const Costs& c, const Grid& g, const Labelling& l,
                         const ObjectiveSpec& s) {
  std::vector<double> dim_max;
  double total = 0, all_max = 0;
  for (int k = 0; k < g.ndims(); ++k) {
    std::map<std::vector<int>, std::vector<OldRank>> fibres;
    for (int p = 0; p < g.size(); ++p) {
      std::vector<int> key = g.coords(NewRank(p));
      key[k] = -1;
      fibres[key].push_back(l.old_of(NewRank(p)));
    }
    double m = 0;
    for (const auto& [key, members] : fibres) {
      double fc = 0;
      for (std::size_t i = 0; i < members.size(); ++i) {
        for (std::size_t j = i + 1; j < members.size(); ++j) {
          const double x = c.cost(members[i], members[j]);
          fc = s.fibre == FibreCost::kSumOfPairs ? fc + x : std::max(fc, x);
        }
      }
      fc *= s.weight(k);
      m = std::max(m, fc);
      total += fc;
    }
    dim_max.push_back(m);
    all_max = std::max(all_max, m);
  }
  ObjectiveValue v;
  v.total = total;
  switch (s.aggregate) {
    case Aggregate::kSumOfDimensionMax:
      for (double m : dim_max) v.primary += m;
      break;
    case Aggregate::kMaxOverAllFibres:
      v.primary = all_max;
      break;
    case Aggregate::kSumOfAllFibres:
      v.primary = total;
      break;
    case Aggregate::kStep:
    case Aggregate::kGraphCost:
      ADD_FAILURE() << "not a fibres objective";
      break;
  }
  return v;
}

void expect_near(const ObjectiveValue& got, const ObjectiveValue& want, const std::string& what) {
  EXPECT_NEAR(got.primary, want.primary, 1e-9 * std::max(1.0, std::abs(want.primary))) << what;
  EXPECT_NEAR(got.total, want.total, 1e-9 * std::max(1.0, std::abs(want.total))) << what;
}

const std::vector<std::vector<int>> kGrids = {
    {1}, {2}, {7}, {2, 2}, {3, 1}, {2, 3}, {4, 3}, {1, 5, 1}, {2, 2, 2}, {3, 2, 2}, {2, 3, 2, 2}};

TEST(ObjectiveTest, FullEvaluationMatchesTheDefinition) {
  SplitMix64 rng(7);
  for (const auto& dims : kGrids) {
    const Grid g(dims);
    for (const ObjectiveSpec& s : kAllSpecs) {
      const DenseCosts c = random_costs(g.size(), rng, false);
      const Labelling l = random_labelling(g.size(), rng);
      expect_near(evaluate(c, g, l, s).value, reference(c, g, l, s),
                  g.to_string() + " " + s.name());
    }
  }
}

// A structured machine of 12 nodes of 6 cores in 3 racks of uneven size,
// every cost random (rack matrix, or a node matrix), 60 ranks placed at
// random so that some cores stay empty.
StructuredCosts random_structured(SplitMix64& rng, bool node_matrix) {
  StructuredSpec s;
  s.cores_per_node = 6;
  s.nodes = 12;
  s.racks = 3;
  s.node_rack = {0, 0, 0, 0, 0, 1, 1, 1, 2, 2, 2, 2};
  const auto symmetric = [&](int n, auto& out, double scale) {
    out.assign(static_cast<std::size_t>(n) * n, 0);
    for (int a = 0; a < n; ++a) {
      for (int b = a; b < n; ++b) {
        const double c = 1 + rng.uniform() * scale;
        out[static_cast<std::size_t>(a) * n + b] = static_cast<float>(c);
        out[static_cast<std::size_t>(b) * n + a] = static_cast<float>(c);
      }
    }
  };
  symmetric(s.cores_per_node, s.core_costs, 2);
  symmetric(s.racks, s.rack_costs, 50);
  if (node_matrix) symmetric(s.nodes, s.node_costs, 50);
  std::vector<int> slots(static_cast<std::size_t>(s.nodes * s.cores_per_node));
  for (std::size_t i = 0; i < slots.size(); ++i) slots[i] = static_cast<int>(i);
  shuffle(slots, rng);
  for (int r = 0; r < 60; ++r) {
    s.ranks.push_back(
        {slots[static_cast<std::size_t>(r)] / 6, slots[static_cast<std::size_t>(r)] % 6});
  }
  return StructuredCosts(std::move(s));
}

// Long fibres on a structured machine are costed by racks (or node pairs)
// and not pair by pair: the values must still be the definition's, with
// several members per node and none.
TEST(ObjectiveTest, LongFibresOnStructuredMachinesMatchTheDefinition) {
  SplitMix64 rng(11);
  for (const bool node_matrix : {false, true}) {
    for (const auto& dims : std::vector<std::vector<int>>{{60}, {30, 2}, {2, 30}, {4, 15}}) {
      const Grid g(dims);
      for (const ObjectiveSpec& s : kAllSpecs) {
        const StructuredCosts c = random_structured(rng, node_matrix);
        for (const Labelling& l : {Labelling::identity(60), random_labelling(60, rng)}) {
          expect_near(evaluate(c, g, l, s).value, reference(c, g, l, s),
                      g.to_string() + " " + s.name() + (node_matrix ? " node matrix" : ""));
        }
      }
    }
  }
}

// The exact incremental values against full recomputation, on many random
// cases: every grid, every objective, with and without ties, swaps within
// and across fibres, and 3-cycles; applied moves keep the state exact.
TEST(IncrementalObjectiveTest, MovesMatchFullRecomputation) {
  SplitMix64 rng(2024);
  int checked = 0;
  for (const auto& dims : kGrids) {
    const Grid g(dims);
    if (g.size() < 2) continue;
    for (const ObjectiveSpec& s : kAllSpecs) {
      for (const bool ties : {false, true}) {
        const DenseCosts c = random_costs(g.size(), rng, ties);
        ObjectiveSpec weighted = s;
        if (ties) {  // half the cases also weight the dimensions unequally
          for (int k = 0; k < g.ndims(); ++k) weighted.dimension_weights.push_back(1.0 + k * 2.5);
        }
        IncrementalObjective inc(c, g, random_labelling(g.size(), rng), weighted);
        for (int step = 0; step < 60; ++step) {
          const NewRank a(static_cast<int>(rng.below(g.size())));
          NewRank b(static_cast<int>(rng.below(g.size())));
          if (g.size() >= 3 && step % 2 == 1) {
            NewRank x(static_cast<int>(rng.below(g.size())));
            while (x == a) x = NewRank(static_cast<int>(rng.below(g.size())));
            NewRank y(static_cast<int>(rng.below(g.size())));
            while (y == a || y == x) y = NewRank(static_cast<int>(rng.below(g.size())));
            Labelling moved = inc.labelling();
            moved.cycle_positions(a, x, y);
            const ObjectiveValue want = reference(c, g, moved, weighted);
            expect_near(inc.value_after_cycle(a, x, y), want,
                        "cycle " + g.to_string() + " " + s.name());
            if (step % 3 == 0) {
              inc.apply_cycle(a, x, y);
              expect_near(inc.value(), want, "applied cycle");
            }
          } else {
            Labelling moved = inc.labelling();
            moved.swap_positions(a, b);
            const ObjectiveValue want = reference(c, g, moved, weighted);
            expect_near(inc.value_after_swap(a, b), want, "swap " + g.to_string() + " " + s.name());
            if (step % 3 == 0) {
              inc.apply_swap(a, b);
              expect_near(inc.value(), want, "applied swap");
            }
          }
          ++checked;
        }
        expect_near(inc.value(), reference(c, g, inc.labelling(), weighted), "final state");
        const Evaluation e = inc.evaluation();
        const Evaluation full = evaluate(c, g, inc.labelling(), weighted);
        for (int k = 0; k < g.ndims(); ++k) {
          EXPECT_NEAR(e.dimensions[k].worst, full.dimensions[k].worst,
                      1e-9 * (1 + full.dimensions[k].worst));
          EXPECT_NEAR(e.dimensions[k].mean, full.dimensions[k].mean,
                      1e-9 * (1 + full.dimensions[k].mean));
        }
      }
    }
  }
  EXPECT_GT(checked, 5000);
}

// Random levels: every item in one of `groups` groups, each used.
LinkLevel random_level(int p, int groups, double flow_cost, SplitMix64& rng) {
  LinkLevel level;
  level.groups = groups;
  level.flow_cost = flow_cost;
  for (int r = 0; r < p; ++r)
    level.group_of.push_back(r < groups ? r : static_cast<int>(rng.below(groups)));
  return level;
}

// With the link load, incremental values against evaluate() (which calls
// link_load(), a separate implementation), including applied moves.
TEST(IncrementalObjectiveTest, LinkLoadMovesMatchFullEvaluation) {
  SplitMix64 rng(99);
  int checked = 0, decided = 0, dimensions = 0;
  for (const auto& dims : kGrids) {
    const Grid g(dims);
    if (g.size() < 4) continue;
    for (const char* name : {"sum-max+links", "thesis-max+links", "sum-max:max-pair+links"}) {
      // Flow costs (pair costs are up to 100) that decide some dimensions,
      // not all.
      const DenseCosts c = random_costs(g.size(), rng, false);
      ObjectiveSpec s = ObjectiveSpec::parse(name);
      s.links = std::make_shared<const std::vector<LinkLevel>>(std::vector<LinkLevel>{
          random_level(g.size(), 2 + static_cast<int>(rng.below(g.size() / 2)), 40, rng),
          random_level(g.size(), 2, 120, rng)});
      IncrementalObjective inc(c, g, random_labelling(g.size(), rng), s);
      for (int step = 0; step < 80; ++step) {
        const NewRank a(static_cast<int>(rng.below(g.size())));
        NewRank x(static_cast<int>(rng.below(g.size())));
        while (x == a) x = NewRank(static_cast<int>(rng.below(g.size())));
        NewRank y(static_cast<int>(rng.below(g.size())));
        while (y == a || y == x) y = NewRank(static_cast<int>(rng.below(g.size())));
        Labelling moved = inc.labelling();
        if (step % 2 == 0) {
          moved.swap_positions(a, x);
          const ObjectiveValue want = evaluate(c, g, moved, s).value;
          expect_near(inc.value_after_swap(a, x), want, "swap " + g.to_string() + " " + name);
          if (step % 4 == 0) inc.apply_swap(a, x);
        } else {
          moved.cycle_positions(a, x, y);
          const ObjectiveValue want = evaluate(c, g, moved, s).value;
          expect_near(inc.value_after_cycle(a, x, y), want, "cycle " + g.to_string() + " " + name);
          if (step % 3 == 0) inc.apply_cycle(a, x, y);
        }
        expect_near(inc.value(), evaluate(c, g, inc.labelling(), s).value, "state");
        ++checked;
      }
      const Evaluation e = inc.evaluation();
      const Evaluation full = evaluate(c, g, inc.labelling(), s);
      ASSERT_EQ(e.link_load.size(), full.link_load.size());
      for (int k = 0; k < g.ndims(); ++k) {
        EXPECT_NEAR(e.link_load[k], full.link_load[k], 1e-12 * (1 + full.link_load[k]));
        if (full.link_load[k] > full.dimensions[k].worst) ++decided;
        ++dimensions;
      }
    }
  }
  EXPECT_GT(checked, 1500);
  EXPECT_GT(decided, 3);  // the link load decides some dimensions, not all
  EXPECT_LT(decided, dimensions - 3);
}

TEST(IncrementalObjectiveTest, RejectsDegenerateCycles) {
  const DenseCosts c = two_nodes_of_two();
  IncrementalObjective inc(c, Grid({2, 2}), Labelling::identity(4), ObjectiveSpec{});
  EXPECT_THROW(inc.value_after_cycle(NewRank(0), NewRank(0), NewRank(1)), std::invalid_argument);
  EXPECT_EQ(inc.value_after_swap(NewRank(2), NewRank(2)).primary, inc.value().primary);
  EXPECT_THROW(inc.value_after_swap(NewRank(0), NewRank(4)), std::out_of_range);
  EXPECT_THROW(inc.apply_cycle(NewRank(-1), NewRank(1), NewRank(2)), std::out_of_range);
}

TEST(IncrementalObjectiveTest, WorksOnStructuredCosts) {
  StructuredSpec s = testing::flat_machine(4, 4, 25);
  SplitMix64 rng(3);
  std::vector<int> slots(16);
  for (int i = 0; i < 16; ++i) slots[i] = i;
  shuffle(slots, rng);
  for (int r = 0; r < 16; ++r) s.ranks.push_back({slots[r] / 4, slots[r] % 4});
  const StructuredCosts c(std::move(s));
  const Grid g({4, 4});
  IncrementalObjective inc(c, g, Labelling::identity(16), ObjectiveSpec{});
  for (int step = 0; step < 200; ++step) {
    const NewRank a(static_cast<int>(rng.below(16))), b(static_cast<int>(rng.below(16)));
    Labelling moved = inc.labelling();
    moved.swap_positions(a, b);
    expect_near(inc.value_after_swap(a, b), reference(c, g, moved, ObjectiveSpec{}), "structured");
    inc.apply_swap(a, b);
  }
  // Grouping each node's ranks into one row gives the optimum: rows cost
  // 6 * 1, columns 6 * 25.
  std::vector<OldRank> by_node(16);
  for (int r = 0; r < 16; ++r) {
    by_node[c.location(OldRank(r)).node * 4 + c.location(OldRank(r)).core] = OldRank(r);
  }
  EXPECT_EQ(evaluate(c, g, Labelling(by_node), ObjectiveSpec{}).value.primary, 6 * 25 + 6 * 1);
}

}  // namespace
}  // namespace rankshape
