// Extreme but valid inputs (issue 9): every algorithm returns a labelling
// that is a permutation, evaluates to what it reports and, for the
// searches, is no worse than the job's own order, on all-equal costs, costs
// spanning twelve orders of magnitude, one node only, one rank per node,
// p = 1, 2 and primes, and grids with dimensions of size 1. Also: the
// structured form at 1,048,576 ranks evaluates within a small memory
// footprint.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <tuple>
#include <vector>

#include "lib/io/formats.h"
#include "lib/relabel/relabel.h"
#include "lib/relabel/search.h"
#include "lib/synth/machine.h"
#include "tests/testing/files.h"

namespace rankshape {
namespace {

bool is_search(const std::string& a) {
  return a == "auto" || a == "hill-climb" || a == "multilevel" || a == "brute-force";
}

// Runs every algorithm that applies; returns the best objective reached.
double run_all(const Costs& costs, const Grid& grid, const std::vector<int>& node_of,
               const std::string& what) {
  double best = INFINITY;
  for (const std::string& a : relabel_algorithms()) {
    if (a == "brute-force" && grid.size() > kMaxBruteForce) continue;
    RelabelOptions o;
    o.algorithm = a;
    o.levels = {node_of};
    const RelabelResult r = relabel(costs, grid, o);
    EXPECT_EQ(r.labelling.size(), grid.size()) << what << ": " << a;
    const double value = evaluate(costs, grid, r.labelling, o.objective).value.primary;
    EXPECT_TRUE(std::isfinite(value)) << what << ": " << a;
    EXPECT_DOUBLE_EQ(r.after.value.primary, value) << what << ": " << a;
    if (is_search(a)) {
      EXPECT_LE(r.after.value.primary, r.before.value.primary * (1 + 1e-9))
          << what << ": " << a << " made it worse";
    }
    best = std::min(best, value);
  }
  return best;
}

TEST(ExtremesTest, AllEqualCostsLeaveNothingToGain) {
  const int p = 24;
  std::vector<double> m(static_cast<std::size_t>(p) * p, 3.5);
  for (int a = 0; a < p; ++a) m[static_cast<std::size_t>(a) * p + a] = 0;
  const DenseCosts costs(p, std::move(m));
  std::vector<int> node(p);
  for (int r = 0; r < p; ++r) node[r] = r / 6;
  const Grid grid({2, 3, 4});
  // Every fibre of q ranks costs q(q-1)/2 pairs x 3.5, whatever the order.
  const double every_order = 3.5 * (1 + 3 + 6);
  EXPECT_DOUBLE_EQ(run_all(costs, grid, node, "all equal"), every_order);
}

TEST(ExtremesTest, CostsSpanningTwelveOrdersOfMagnitude) {
  MachineSpec m = machine_shape(2, 4, 2, 4, RankOrder::kRandom);
  m.same_socket = 1e-9;
  m.same_node = 1e-6;
  m.same_rack = 1e-3;
  m.other_rack = 1e3;
  const SyntheticMachine s = generate_machine(m);
  const Grid grid({4, 4, 4});
  const double planted =
      evaluate(s.costs, grid, block_order(s.costs), ObjectiveSpec{}).value.primary;
  const double best = run_all(s.costs, grid, machine_levels(s.costs)[0], "twelve orders");
  // The searches find the planted layout: no cost is lost to rounding.
  EXPECT_LE(best, planted * (1 + 1e-9));
  // Files keep every value exactly, dense and structured.
  const std::string structured_path = testing::scratch_path("twelve-orders-structured.txt");
  const std::string dense_path = testing::scratch_path("twelve-orders-dense.txt");
  write_structured_costs(structured_path, s.costs);
  write_dense_costs(dense_path, s.costs);
  const auto structured = read_costs(structured_path);
  const auto dense = read_costs(dense_path);
  for (int a = 0; a < s.costs.size(); ++a) {
    for (int b = 0; b < s.costs.size(); ++b) {
      ASSERT_EQ(structured->cost(OldRank(a), OldRank(b)), s.costs.cost(OldRank(a), OldRank(b)));
      ASSERT_EQ(dense->cost(OldRank(a), OldRank(b)), s.costs.cost(OldRank(a), OldRank(b)));
    }
  }
}

TEST(ExtremesTest, OneNodeOnlyAndOneRankPerNode) {
  for (const auto& [nodes, cores, dims] : std::vector<std::tuple<int, int, std::vector<int>>>{
           {1, 12, {3, 4}},      // one node: nothing crosses the network
           {12, 1, {3, 4}},      // one rank per node: every pair does
           {1, 1, {1}},          // p = 1
           {2, 1, {2}},          // p = 2 on two nodes
           {1, 2, {1, 2, 1}},    // p = 2, dimensions of size 1
           {17, 1, {17}},        // prime, one rank per node
           {1, 13, {13, 1}}}) {  // prime, one node
    MachineSpec m = machine_shape(1, nodes, 1, cores, RankOrder::kRandom);
    const SyntheticMachine s = generate_machine(m);
    const Grid grid(dims);
    run_all(s.costs, grid, machine_levels(s.costs)[0],
            std::to_string(nodes) + " nodes x " + std::to_string(cores) + " cores, grid " +
                grid.to_string());
  }
}

TEST(ExtremesTest, AMillionRanksEvaluateInLittleMemory) {
  // 16,384 nodes x 64 cores in 16 racks: 1,048,576 ranks.
  const SyntheticMachine s = generate_machine(machine_shape(16, 1024, 2, 32));
  ASSERT_EQ(s.costs.size(), 1 << 20);
  // 8 bytes of location per rank plus the small matrices: under 10 MiB.
  EXPECT_LT(s.costs.memory_bytes(), std::size_t{10} << 20);
  const Grid grid({128, 64, 128});
  const Evaluation e = evaluate(s.costs, grid, Labelling::identity(grid.size()), ObjectiveSpec{});
  // Block order: a fibre of dimension 2 spans two nodes of one rack.
  EXPECT_TRUE(std::isfinite(e.value.primary));
  EXPECT_GT(e.value.primary, 0);
  ASSERT_EQ(e.dimensions.size(), 3u);
}

}  // namespace
}  // namespace rankshape
