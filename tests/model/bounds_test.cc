#include "lib/model/bounds.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <numeric>
#include <string>
#include <utility>

#include "lib/util/random.h"
#include "tests/testing/machines.h"

namespace rankshape {
namespace {

ObjectiveSpec with(Aggregate aggregate) {
  ObjectiveSpec s;
  s.aggregate = aggregate;
  return s;
}

const Aggregate kAggregates[] = {Aggregate::kSumOfDimensionMax, Aggregate::kMaxOverAllFibres,
                                 Aggregate::kSumOfAllFibres};

// The best primary over every labelling (p <= 8); the best total too when
// asked.
double optimum(const Costs& costs, const Grid& grid, const ObjectiveSpec& spec,
               double* least_total = nullptr) {
  std::vector<int> perm(static_cast<std::size_t>(grid.size()));
  std::iota(perm.begin(), perm.end(), 0);
  double best = std::numeric_limits<double>::infinity(), total = best;
  do {
    std::vector<OldRank> order;
    for (int o : perm) order.emplace_back(o);
    const ObjectiveValue v = evaluate(costs, grid, Labelling(std::move(order)), spec).value;
    best = std::min(best, v.primary);
    total = std::min(total, v.total);
  } while (std::next_permutation(perm.begin(), perm.end()));
  if (least_total) *least_total = total;
  return best;
}

TEST(FibreLowerBoundTest, WorkedExampleOfTheHeader) {
  // Nodes {0,1} and {2,3}: 1 inside, 10 across; grid 2x2.
  const DenseCosts costs(4, {0, 1, 10, 10, 1, 0, 10, 10, 10, 10, 0, 1, 10, 10, 1, 0});
  const Grid grid({2, 2});
  const std::optional<LowerBound> b = fibre_lower_bound(costs, grid, ObjectiveSpec());
  ASSERT_TRUE(b.has_value());
  EXPECT_DOUBLE_EQ(b->primary, 11);  // reached: 1 + 10
  EXPECT_DOUBLE_EQ(b->total, 22);
  ASSERT_EQ(b->dimension.size(), 2u);
  EXPECT_DOUBLE_EQ(b->dimension[0], 1);
  EXPECT_DOUBLE_EQ(b->dimension[1], 1);
  EXPECT_DOUBLE_EQ(optimum(costs, grid, ObjectiveSpec()), 11);
  // thesis-max: each dimension's bound, and the sum-max bound over 2.
  EXPECT_DOUBLE_EQ(fibre_lower_bound(costs, grid, with(Aggregate::kMaxOverAllFibres))->primary,
                   5.5);
  EXPECT_DOUBLE_EQ(fibre_lower_bound(costs, grid, with(Aggregate::kSumOfAllFibres))->primary, 22);
}

TEST(FibreLowerBoundTest, NeverAboveTheOptimumOfSmallRandomMachines) {
  SplitMix64 rng(7);
  const Grid grids[] = {Grid({2, 2, 2}), Grid({2, 3}), Grid({3, 2}), Grid({7}), Grid({6})};
  for (const Grid& grid : grids) {
    for (int trial = 0; trial < 4; ++trial) {
      const int p = grid.size();
      std::vector<double> m(static_cast<std::size_t>(p) * p, 0);
      for (int a = 0; a < p; ++a) {
        for (int b = a + 1; b < p; ++b) {
          m[static_cast<std::size_t>(a) * p + b] = m[static_cast<std::size_t>(b) * p + a] =
              1 + static_cast<double>(rng.below(20));
        }
      }
      const DenseCosts costs(p, m);
      for (Aggregate aggregate : kAggregates) {
        const ObjectiveSpec spec = with(aggregate);
        const double bound = fibre_lower_bound(costs, grid, spec)->primary;
        EXPECT_GT(bound, 0);
        EXPECT_LE(bound, optimum(costs, grid, spec) * (1 + 1e-12))
            << grid.to_string() << " trial " << trial << " " << spec.name();
      }
    }
  }
}

TEST(FibreLowerBoundTest, ReachedOnAPlantedMachine) {
  // 16 nodes of 16 cores (1 inside, 10 across), ranks in node blocks, grid
  // 16x16: the job's own order puts each row on a node, which is optimal,
  // and the bound says so for sum-max and total. thesis-max's bound only
  // knows that the two dimensions' means add up to the sum-max bound.
  StructuredSpec s = testing::flat_machine(16, 16, 10);
  for (int r = 0; r < 256; ++r) s.ranks.push_back({r / 16, r % 16});
  const StructuredCosts costs(s);
  const Grid grid({16, 16});
  for (Aggregate aggregate : kAggregates) {
    const ObjectiveSpec spec = with(aggregate);
    const Evaluation e = evaluate(costs, grid, Labelling::identity(256), spec);
    const std::optional<LowerBound> b = fibre_lower_bound(costs, grid, spec);
    EXPECT_TRUE(reaches(e.value.total, b->total));
    if (aggregate == Aggregate::kMaxOverAllFibres) {
      EXPECT_DOUBLE_EQ(b->primary, (120 + 1200) / 2.0);
    } else {
      EXPECT_TRUE(reaches(e.value.primary, b->primary)) << e.value.primary << " " << b->primary;
    }
  }
  // Each dimension alone could stay inside nodes (16 * 15 / 2 pairs of cost
  // 1), but not both: the sum-max bound is one inside and one across.
  const std::optional<LowerBound> b = fibre_lower_bound(costs, grid, ObjectiveSpec());
  EXPECT_DOUBLE_EQ(b->dimension[0], 120);
  EXPECT_DOUBLE_EQ(b->dimension[1], 120);
  EXPECT_DOUBLE_EQ(b->primary, 120 + 1200);
  // A scrambled order is far from it.
  std::vector<OldRank> perm;
  for (int r = 0; r < 256; ++r) perm.emplace_back(r);
  SplitMix64 rng(3);
  shuffle(perm, rng);
  const Evaluation scrambled = evaluate(costs, grid, Labelling(perm), ObjectiveSpec());
  EXPECT_FALSE(reaches(scrambled.value.primary, b->primary));
}

// A random small structured machine: uneven nodes, two ranks sharing a
// core, racks, unequal core costs.
StructuredCosts small_structured(SplitMix64& rng, int p) {
  StructuredSpec s;
  s.cores_per_node = 4;
  s.core_costs.resize(16);
  for (int a = 0; a < 4; ++a) {
    for (int b = a; b < 4; ++b) {
      s.core_costs[a * 4 + b] = s.core_costs[b * 4 + a] =
          a == b ? 0.5 : 1 + static_cast<double>(rng.below(3));
    }
  }
  s.nodes = 4;
  s.racks = 2;
  s.node_rack = {0, 0, 1, 1};
  s.rack_costs = {10 + static_cast<double>(rng.below(5)), 40, 40, 12};
  for (int r = 0; r < p; ++r) {
    s.ranks.push_back(
        {static_cast<std::int32_t>(rng.below(4)), static_cast<std::int32_t>(rng.below(4))});
  }
  return StructuredCosts(s);
}

TEST(FibreLowerBoundTest, LevelBoundNeverAboveTheOptimum) {
  // Structured costs add the bound by levels: still never above the best
  // labelling, found by trying them all.
  SplitMix64 rng(5);
  for (const Grid& grid : {Grid({2, 2, 2}), Grid({2, 3}), Grid({3, 2}), Grid({7}), Grid({6})}) {
    for (int trial = 0; trial < 4; ++trial) {
      const StructuredCosts costs = small_structured(rng, grid.size());
      for (Aggregate aggregate : kAggregates) {
        const ObjectiveSpec spec = with(aggregate);
        const LowerBound b = *fibre_lower_bound(costs, grid, spec);
        EXPECT_LE(b.primary, optimum(costs, grid, spec) * (1 + 1e-12))
            << grid.to_string() << " trial " << trial << " " << spec.name();
      }
    }
  }
}

TEST(FibreLowerBoundTest, StructuredIsAtLeastTheDenseBound) {
  // The per-rank part agrees between the two forms; the structured form
  // adds the levels' bound, and no labelling tried goes below it.
  SplitMix64 rng(11);
  const StructuredCosts structured = small_structured(rng, 18);
  const DenseCosts dense = to_dense(structured);
  for (const Grid& grid : {Grid({3, 6}), Grid({2, 3, 3}), Grid({18})}) {
    for (Aggregate aggregate : kAggregates) {
      const ObjectiveSpec spec = with(aggregate);
      const LowerBound a = *fibre_lower_bound(structured, grid, spec);
      const LowerBound b = *fibre_lower_bound(dense, grid, spec);
      EXPECT_GE(a.primary, b.primary * (1 - 1e-12)) << grid.to_string();
      EXPECT_GE(a.total, b.total * (1 - 1e-12));
      for (int k = 0; k < grid.ndims(); ++k) EXPECT_NEAR(a.dimension[k], b.dimension[k], 1e-9);
      for (int trial = 0; trial < 20; ++trial) {
        std::vector<OldRank> perm;
        for (int r = 0; r < 18; ++r) perm.emplace_back(r);
        shuffle(perm, rng);
        EXPECT_GE(evaluate(dense, grid, Labelling(perm), spec).value.primary,
                  a.primary * (1 - 1e-12));
      }
    }
  }
}

TEST(FibreLowerBoundTest, TheLevelsProveAThreeLevelLayoutOptimal) {
  // The header's example: 4 racks of 4 nodes of 8 (costs 1, 10, 40), grid
  // 4x4x8, ranks in block order: rows of 8 on a node, columns of 4 across
  // a rack's nodes, the first dimension across racks: 28 + 60 + 240. The
  // per-rank bound (148) lets both 4-wide dimensions stay in the rack.
  StructuredSpec s = testing::flat_machine(16, 8, 10);
  s.racks = 4;
  s.node_rack.clear();
  for (int n = 0; n < 16; ++n) s.node_rack.push_back(n / 4);
  s.rack_costs.assign(16, 40);
  for (int r = 0; r < 4; ++r) s.rack_costs[r * 4 + r] = 10;
  for (int r = 0; r < 128; ++r) s.ranks.push_back({r / 8, r % 8});
  const StructuredCosts costs(s);
  const Grid grid({4, 4, 8});
  const double planted =
      evaluate(costs, grid, Labelling::identity(128), ObjectiveSpec()).value.primary;
  EXPECT_DOUBLE_EQ(planted, 328);
  EXPECT_NEAR(fibre_lower_bound(costs, grid, ObjectiveSpec())->primary, 328, 1e-9);
  EXPECT_NEAR(fibre_lower_bound(to_dense(costs), grid, ObjectiveSpec())->primary, 148, 1e-9);
}

TEST(FibreLowerBoundTest, NoneForOtherObjectivesAndAClearErrorOnSizes) {
  const DenseCosts costs(4, {0, 1, 10, 10, 1, 0, 10, 10, 10, 10, 0, 1, 10, 10, 1, 0});
  ObjectiveSpec max_pair;
  max_pair.fibre = FibreCost::kMaxPair;
  EXPECT_FALSE(fibre_lower_bound(costs, Grid({2, 2}), max_pair).has_value());
  const ObjectiveSpec stencil = ObjectiveSpec::parse("", Pattern::parse("stencil"));
  EXPECT_FALSE(fibre_lower_bound(costs, Grid({2, 2}), stencil).has_value());
  // +links only adds to a dimension: the same bound.
  EXPECT_DOUBLE_EQ(
      fibre_lower_bound(costs, Grid({2, 2}), ObjectiveSpec::parse("sum-max+links"))->primary, 11);
  EXPECT_THROW(fibre_lower_bound(costs, Grid({3, 2}), ObjectiveSpec()), std::invalid_argument);
}

// ---- Stencils ----

ObjectiveSpec stencil_spec(const std::string& pattern, const std::string& objective = "") {
  return ObjectiveSpec::parse(objective, Pattern::parse(pattern));
}

TEST(StencilLowerBoundTest, WorkedExampleOfTheHeader) {
  // Nodes {0,1} and {2,3}: 1 inside, 10 across; grid 4, "stencil". The
  // identity reaches the bound on the step and on the total.
  const DenseCosts costs(4, {0, 1, 10, 10, 1, 0, 10, 10, 10, 10, 0, 1, 10, 10, 1, 0});
  const Grid grid({4});
  const ObjectiveSpec spec = stencil_spec("stencil");
  const LowerBound b = *stencil_lower_bound(costs, grid, spec);
  ASSERT_TRUE(b.stencil.has_value());
  EXPECT_TRUE(b.dimension.empty());
  EXPECT_DOUBLE_EQ(b.stencil->busiest_rank, 11);
  EXPECT_DOUBLE_EQ(b.stencil->links, 10);
  EXPECT_DOUBLE_EQ(b.primary, 11);
  EXPECT_DOUBLE_EQ(b.total, 54);
  const ObjectiveValue identity = evaluate(costs, grid, Labelling::identity(4), spec).value;
  EXPECT_DOUBLE_EQ(identity.primary, 11);
  EXPECT_DOUBLE_EQ(identity.total, 54);
  // "total" is the ranks' sum alone: 24, also the identity's.
  const LowerBound t = *stencil_lower_bound(costs, grid, stencil_spec("stencil", "total"));
  EXPECT_DOUBLE_EQ(t.primary, 24);
  EXPECT_DOUBLE_EQ(
      evaluate(costs, grid, Labelling::identity(4), stencil_spec("stencil", "total")).value.primary,
      24);
}

// The units a set of positions (bit x set: position x) sends to the others.
std::int64_t units_out(const Stencil& stencil, std::uint32_t set) {
  std::int64_t out = 0;
  for (int x = 0; x < stencil.grid().size(); ++x) {
    if ((set >> x & 1u) == 0) continue;
    for (int o = 0; o < stencil.offsets(); ++o) {
      const int y = stencil.neighbour(x, o);
      if (y >= 0 && (set >> y & 1u) == 0) out += stencil.units(o);
    }
  }
  return out;
}

TEST(StencilLowerBoundTest, NoSetOfPositionsSendsLessThanItsBound) {
  // Every subset of every small grid: the bound is at most the least that
  // a set of its size sends, and exact where the text says so.
  const std::pair<Grid, std::string> cases[] = {
      {Grid({4, 4}), "stencil"},
      {Grid({4, 4}), "stencil:periodic"},
      {Grid({3, 2, 2}), "stencil:periodic=1x0x1"},
      {Grid({2, 2, 2}), "stencil:periodic"},
      {Grid({7}), "stencil"},
      {Grid({2, 6}), "stencil:periodic,weights=2x1"},
      {Grid({3, 5}), "stencil:points=9"},
      {Grid({1, 9}), "stencil:periodic"},
  };
  for (const auto& [grid, text] : cases) {
    const Stencil stencil(Pattern::parse(text).stencil, grid);
    const int p = grid.size();
    std::vector<std::int64_t> least(static_cast<std::size_t>(p) + 1,
                                    std::numeric_limits<std::int64_t>::max());
    for (std::uint32_t set = 0; set < (1u << p); ++set) {
      const int s = __builtin_popcount(set);
      least[s] = std::min(least[s], units_out(stencil, set));
    }
    for (int s = 0; s <= p; ++s) {
      EXPECT_LE(least_units_out(stencil, s), least[s])
          << grid.to_string() << " " << text << " s " << s;
    }
    EXPECT_EQ(least_units_out(stencil, p), 0);
  }
  const Stencil periodic(Pattern::parse("stencil:periodic").stencil, Grid({4, 4}));
  EXPECT_EQ(least_units_out(periodic, 4), 8);  // a 2x2 block or a row
}

TEST(StencilLowerBoundTest, NeverAboveALabellingOrTheOptimum) {
  // Random dense and structured machines, every stencil option and both
  // objectives: no labelling tried scores below the bound, and on 6 ranks
  // none at all (every labelling tried).
  SplitMix64 rng(17);
  for (const Grid& grid :
       {Grid({2, 3}), Grid({1, 6}), Grid({2, 4}), Grid({4, 4}), Grid({3, 6}), Grid({2, 3, 3})}) {
    const int p = grid.size();
    const bool two = grid.ndims() == 2;
    const std::string patterns[] = {
        "stencil", "stencil:periodic", "stencil:diagonals",
        two ? "stencil:periodic=0x1,weights=3x1" : "stencil:periodic=0x1x1,weights=3x1x2",
        "stencil:diagonals,diagonal-weight=0.5"};
    std::vector<double> m(static_cast<std::size_t>(p) * p, 0);
    for (int a = 0; a < p; ++a) {
      for (int b = a + 1; b < p; ++b) {
        m[static_cast<std::size_t>(a) * p + b] = m[static_cast<std::size_t>(b) * p + a] =
            1 + static_cast<double>(rng.below(40));
      }
    }
    const DenseCosts dense(p, m);
    const StructuredCosts structured = small_structured(rng, p);
    for (const Costs* costs :
         {static_cast<const Costs*>(&dense), static_cast<const Costs*>(&structured)}) {
      for (const std::string& text : patterns) {
        for (const std::string objective : {"step", "total"}) {
          const ObjectiveSpec spec = stencil_spec(text, objective);
          const LowerBound b = *stencil_lower_bound(*costs, grid, spec);
          EXPECT_GE(b.primary, 0);
          if (p <= 6) {
            double total = 0;
            EXPECT_LE(b.primary, optimum(*costs, grid, spec, &total) * (1 + 1e-12))
                << grid.to_string() << " " << text << " " << objective;
            EXPECT_LE(b.total, total * (1 + 1e-12))
                << grid.to_string() << " " << text << " " << objective;
          }
          for (int trial = 0; trial < 30; ++trial) {
            std::vector<OldRank> perm;
            for (int r = 0; r < p; ++r) perm.emplace_back(r);
            shuffle(perm, rng);
            const ObjectiveValue v = evaluate(*costs, grid, Labelling(perm), spec).value;
            EXPECT_LE(b.primary, v.primary * (1 + 1e-12))
                << grid.to_string() << " " << text << " " << objective;
            EXPECT_LE(b.total, v.total * (1 + 1e-12))
                << grid.to_string() << " " << text << " " << objective;
          }
        }
      }
    }
  }
}

TEST(StencilLowerBoundTest, BoxesTilingAnOpenGridSendAtLeastTheMean) {
  // 16 nodes of 36 ranks on a 24x24 grid, where 6x6 boxes tile. Each node
  // meets at least 6 + 6 lines (Loomis-Whitney), so the nodes send at least
  // 16 * 2 * 12 - 2 * (24 + 24) = 288 messages out, 18 on average: the
  // busiest node sends at least 18. The boxes' busiest node sends 24.
  StructuredSpec s = testing::flat_machine(16, 36, 10);
  for (int r = 0; r < 576; ++r) s.ranks.push_back({r / 36, r % 36});
  const StructuredCosts costs(s);
  const Grid grid({24, 24});
  const LowerBound b = *stencil_lower_bound(costs, grid, stencil_spec("stencil"));
  EXPECT_DOUBLE_EQ(b.stencil->links, 10 * 18);
  // Rank r of node n at row 6 (n / 4) + (r / 6), column 6 (n % 4) + r % 6.
  std::vector<OldRank> at(576, OldRank(0));
  for (int r = 0; r < 576; ++r) {
    const int n = r / 36, c = r % 36;
    at[static_cast<std::size_t>((6 * (n / 4) + c / 6) * 24 + 6 * (n % 4) + c % 6)] = OldRank(r);
  }
  const Evaluation boxes = evaluate(costs, grid, Labelling(at), stencil_spec("stencil"));
  EXPECT_DOUBLE_EQ(boxes.value.primary, 10 * 24);
  EXPECT_LE(b.primary, boxes.value.primary);
}

TEST(StencilLowerBoundTest, ThePatternPicksTheBound) {
  const DenseCosts costs(4, {0, 1, 10, 10, 1, 0, 10, 10, 10, 10, 0, 1, 10, 10, 1, 0});
  EXPECT_FALSE(stencil_lower_bound(costs, Grid({2, 2}), ObjectiveSpec()).has_value());
  EXPECT_DOUBLE_EQ(objective_lower_bound(costs, Grid({2, 2}), ObjectiveSpec())->primary,
                   fibre_lower_bound(costs, Grid({2, 2}), ObjectiveSpec())->primary);
  EXPECT_TRUE(objective_lower_bound(costs, Grid({4}), stencil_spec("stencil"))->stencil);
  EXPECT_THROW(stencil_lower_bound(costs, Grid({3, 2}), stencil_spec("stencil")),
               std::invalid_argument);
}

}  // namespace
}  // namespace rankshape
