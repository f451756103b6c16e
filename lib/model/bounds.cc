#include "lib/model/bounds.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <stdexcept>
#include <string>
#include <utility>

namespace rankshape {
namespace {

// One rank's costs to the others, cheapest first, as runs of equal cost
// (cost, how many ranks); at least the `want` cheapest.
using Runs = std::vector<std::pair<double, std::int64_t>>;

// What the bounds need from one rank's cheapest costs: prefix sums at a few
// counts (S_a(m) = the sum of its m cheapest).
class Prefixes {
 public:
  explicit Prefixes(std::vector<std::int64_t> counts) : counts_(std::move(counts)) {
    std::sort(counts_.begin(), counts_.end());
    counts_.erase(std::unique(counts_.begin(), counts_.end()), counts_.end());
    sums_.resize(counts_.size());
  }
  // Fills the sums from ascending runs that hold at least the largest count.
  void fill(const Runs& runs) {
    std::size_t next = 0;
    std::int64_t taken = 0;
    double sum = 0;
    const auto record_up_to = [&](std::int64_t available, double cost) {
      for (; next < counts_.size() && counts_[next] <= available; ++next) {
        sums_[next] = sum + cost * static_cast<double>(counts_[next] - taken);
      }
    };
    record_up_to(0, 0);
    for (const auto& [cost, count] : runs) {
      if (next == counts_.size()) return;
      record_up_to(taken + count, cost);
      taken += count;
      sum += cost * static_cast<double>(count);
    }
    if (next < counts_.size()) {
      throw std::logic_error("fibre_lower_bound: fewer partners than the grid gives a rank");
    }
  }
  double sum(std::int64_t count) const {
    const auto it = std::lower_bound(counts_.begin(), counts_.end(), count);
    return sums_[static_cast<std::size_t>(it - counts_.begin())];
  }

 private:
  std::vector<std::int64_t> counts_;
  std::vector<double> sums_;
};

// Dimensions dealt the cheapest partners first: by decreasing factor.
struct Deal {
  std::vector<double> factor;     // l_k, in dealing order
  std::vector<std::int64_t> end;  // cumulative partners after each block
};

Deal deal(const Grid& grid, const std::vector<double>& factor_of_dimension) {
  std::vector<int> order(static_cast<std::size_t>(grid.ndims()));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int a, int b) { return factor_of_dimension[a] > factor_of_dimension[b]; });
  Deal d;
  std::int64_t end = 0;
  for (int k : order) {
    end += grid.dim(k) - 1;
    d.factor.push_back(factor_of_dimension[k]);
    d.end.push_back(end);
  }
  return d;
}

// R_a(l): the blocks of a's cheapest costs, each times its factor.
double rearranged(const Prefixes& prefixes, const Deal& d) {
  double r = 0;
  std::int64_t start = 0;
  for (std::size_t i = 0; i < d.end.size(); ++i) {
    r += d.factor[i] * (prefixes.sum(d.end[i]) - prefixes.sum(start));
    start = d.end[i];
  }
  return r;
}

// Calls visit(runs) once per rank with that rank's costs to the others, cheapest
// first, at least `want` of them.
template <typename Visit>
void for_each_rank_dense(const Costs& costs, std::int64_t want, Visit&& visit) {
  const int p = costs.size();
  std::vector<double> row;
  Runs runs;
  for (int a = 0; a < p; ++a) {
    row.clear();
    for (int b = 0; b < p; ++b) {
      if (b != a) row.push_back(costs.cost(OldRank(a), OldRank(b)));
    }
    const auto middle = row.begin() + want;
    if (middle != row.end()) std::nth_element(row.begin(), middle, row.end());
    std::sort(row.begin(), middle);
    runs.clear();
    for (auto it = row.begin(); it != middle; ++it) runs.emplace_back(*it, 1);
    visit(runs);
  }
}

// The same for a structured machine, without p^2 lookups: inside a node
// the costs follow the cores present there, outside it the other nodes'
// (or racks') costs, each repeated for the ranks there.
template <typename Visit>
void for_each_rank_structured(const StructuredCosts& costs, Visit&& visit) {
  const StructuredSpec& s = costs.spec();
  const int cores = s.cores_per_node;
  std::vector<std::vector<int>> ranks_on(static_cast<std::size_t>(s.nodes));
  for (int r = 0; r < costs.size(); ++r) ranks_on[costs.location(OldRank(r)).node].push_back(r);
  // Every core's row of core_costs, cheapest first.
  std::vector<std::vector<int>> core_order(static_cast<std::size_t>(cores));
  for (int c = 0; c < cores; ++c) {
    auto& order = core_order[c];
    order.resize(static_cast<std::size_t>(cores));
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int x, int y) {
      return s.core_costs[static_cast<std::size_t>(c) * cores + x] <
             s.core_costs[static_cast<std::size_t>(c) * cores + y];
    });
  }
  std::vector<std::int64_t> rack_ranks(static_cast<std::size_t>(s.racks), 0);
  for (int n = 0; n < s.nodes; ++n) {
    rack_ranks[costs.rack_of(n)] += static_cast<std::int64_t>(ranks_on[n].size());
  }
  std::vector<std::int64_t> on_core(static_cast<std::size_t>(cores));
  Runs outside, inside, merged;
  for (int n = 0; n < s.nodes; ++n) {
    if (ranks_on[n].empty()) continue;
    // The other nodes' ranks, by cost from n.
    outside.clear();
    if (!s.node_costs.empty()) {
      for (int m = 0; m < s.nodes; ++m) {
        if (m != n && !ranks_on[m].empty()) {
          outside.emplace_back(costs.node_cost(n, m),
                               static_cast<std::int64_t>(ranks_on[m].size()));
        }
      }
    } else {
      const int rack = costs.rack_of(n);
      for (int r = 0; r < s.racks; ++r) {
        const std::int64_t count =
            rack_ranks[r] - (r == rack ? static_cast<std::int64_t>(ranks_on[n].size()) : 0);
        if (count > 0) {
          outside.emplace_back(s.rack_costs[static_cast<std::size_t>(rack) * s.racks + r], count);
        }
      }
    }
    std::sort(outside.begin(), outside.end());
    std::fill(on_core.begin(), on_core.end(), 0);
    for (int r : ranks_on[n]) ++on_core[costs.location(OldRank(r)).core];
    for (int r : ranks_on[n]) {
      const int c = costs.location(OldRank(r)).core;
      inside.clear();
      for (int other : core_order[c]) {
        const std::int64_t count = on_core[other] - (other == c ? 1 : 0);
        if (count > 0) {
          inside.emplace_back(s.core_costs[static_cast<std::size_t>(c) * cores + other], count);
        }
      }
      merged.clear();
      std::merge(inside.begin(), inside.end(), outside.begin(), outside.end(),
                 std::back_inserter(merged),
                 [](const auto& x, const auto& y) { return x.first < y.first; });
      visit(merged);
    }
  }
}

}  // namespace

bool reaches(double value, double bound) { return value <= bound + 1e-9 * std::abs(bound); }

std::optional<FibreBound> fibre_lower_bound(const Costs& costs, const Grid& grid,
                                            const ObjectiveSpec& spec) {
  if (spec.is_stencil() || spec.is_graph() || spec.fibre != FibreCost::kSumOfPairs) {
    return std::nullopt;
  }
  if (costs.size() != grid.size()) {
    throw std::invalid_argument("fibre_lower_bound: costs have " + std::to_string(costs.size()) +
                                " ranks but grid " + grid.to_string() + " has " +
                                std::to_string(grid.size()) + " positions");
  }
  const int d = grid.ndims();
  const double p = grid.size();
  std::vector<double> by_weight(static_cast<std::size_t>(d)), by_mean(by_weight.size());
  std::vector<std::int64_t> counts = {0};
  std::int64_t partners = 0;
  for (int k = 0; k < d; ++k) {
    by_weight[k] = spec.weight(k);
    by_mean[k] = spec.weight(k) * grid.dim(k);
    counts.push_back(grid.dim(k) - 1);
    partners += grid.dim(k) - 1;
  }
  const Deal for_total = deal(grid, by_weight), for_means = deal(grid, by_mean);
  counts.insert(counts.end(), for_total.end.begin(), for_total.end.end());
  counts.insert(counts.end(), for_means.end.begin(), for_means.end.end());
  Prefixes prefixes(counts);

  std::vector<double> alone(static_cast<std::size_t>(d), 0);  // sum_a S_a(q_k - 1)
  double total = 0, means = 0;                                // sum_a R_a(...)
  const auto visit = [&](const Runs& runs) {
    prefixes.fill(runs);
    for (int k = 0; k < d; ++k) alone[k] += prefixes.sum(grid.dim(k) - 1);
    total += rearranged(prefixes, for_total);
    means += rearranged(prefixes, for_means);
  };
  if (const auto* structured = dynamic_cast<const StructuredCosts*>(&costs)) {
    for_each_rank_structured(*structured, visit);
  } else {
    for_each_rank_dense(costs, partners, visit);
  }

  FibreBound b;
  b.total = total / 2;
  double sum_of_dimensions = 0, worst_dimension = 0;
  for (int k = 0; k < d; ++k) {
    b.dimension.push_back(spec.weight(k) * grid.dim(k) * alone[k] / (2 * p));
    sum_of_dimensions += b.dimension.back();
    worst_dimension = std::max(worst_dimension, b.dimension.back());
  }
  const double sum_max = std::max(means / (2 * p), sum_of_dimensions);
  switch (spec.aggregate) {
    case Aggregate::kSumOfDimensionMax:
      b.primary = sum_max;
      break;
    case Aggregate::kMaxOverAllFibres:
      b.primary = std::max(worst_dimension, sum_max / d);
      break;
    case Aggregate::kSumOfAllFibres:
      b.primary = b.total;
      break;
    default:
      return std::nullopt;
  }
  return b;
}

}  // namespace rankshape
