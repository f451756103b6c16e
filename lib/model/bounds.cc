#include "lib/model/bounds.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
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

// An upper bound on sum_k l_k e_k(S) over the sets S of s grid positions,
// with e_k(S) the dimension-k fibre pairs inside S: the most weighted pairs
// a node or rack of s ranks can hold. The least of three bounds:
//   - each dimension alone, packing S with whole fibres;
//   - every member has at most s - 1 partners in S;
//   - entropy: for X uniform on S, Han's inequality gives
//     sum_k H(X_k | X_-k) <= H(X) = log s, and H(X_k | X_-k) is the mean
//     over members a of log t_k(a), t_k(a) the members on a's dimension-k
//     fibre, while 2 e_k(S) = sum_a (t_k(a) - 1). Maximising the convex
//     sum_k l_k (t_k - 1) under a mean budget of logs gives at most s/2
//     times the upper concave hull, at log s, of the points
//     (sum_{k in F} log q_k, sum_{k in F} l_k (q_k - 1)) over the sets of
//     dimensions F, with q_k = min(q_k, s).
// On a 256x256 grid, S of 64: 2,016 (one fibre, exact); of 4,096: 783,360
// (16 whole fibres hold 552,960).
class GroupPairs {
 public:
  GroupPairs(const Grid& grid, std::vector<double> factor)
      : grid_(grid), factor_(std::move(factor)) {}

  double most(std::int64_t s) {
    const auto known = memo_.find(s);
    if (known != memo_.end()) return known->second;
    const int d = grid_.ndims();
    const double size = static_cast<double>(s);
    double packing = 0, heaviest = 0;
    for (int k = 0; k < d; ++k) {
      const std::int64_t q = grid_.dim(k);
      const double whole = static_cast<double>(s / q), rest = static_cast<double>(s % q);
      packing += factor_[k] * (whole * q * (q - 1) / 2.0 + rest * (rest - 1) / 2);
      heaviest = std::max(heaviest, factor_[k]);
    }
    double best = std::min(packing, heaviest * size * (size - 1) / 2);
    if (d <= kMostDimensionsForEntropy) best = std::min(best, size / 2 * entropy_hull(s));
    memo_.emplace(s, best);
    return best;
  }

 private:
  static constexpr int kMostDimensionsForEntropy = 12;  // 4,096 sets of dimensions

  double entropy_hull(std::int64_t s) const {
    const int d = grid_.ndims();
    std::vector<std::pair<double, double>> points;  // (budget, weighted partners)
    for (std::uint32_t set = 0; set < (1u << d); ++set) {
      double x = 0, y = 0;
      for (int k = 0; k < d; ++k) {
        if ((set >> k & 1u) == 0) continue;
        const double q = static_cast<double>(std::min<std::int64_t>(grid_.dim(k), s));
        x += std::log(q);
        y += factor_[k] * (q - 1);
      }
      points.emplace_back(x, y);
    }
    const double budget = std::log(static_cast<double>(s));
    double hull = 0;
    for (const auto& [x1, y1] : points) {
      if (x1 > budget + 1e-12) continue;
      hull = std::max(hull, y1);
      for (const auto& [x2, y2] : points) {
        if (x2 > budget && y2 > y1) {
          hull = std::max(hull, y1 + (y2 - y1) * (budget - x1) / (x2 - x1));
        }
      }
    }
    return hull;
  }

  const Grid& grid_;
  std::vector<double> factor_;
  std::map<std::int64_t, double> memo_;
};

// What level_bound() needs from the machine, found once for all factors:
// the ranks on each node and rack, and the least cost of each level (same
// node, same rack, across racks), non-decreasing.
struct Levels {
  std::vector<std::int64_t> on_node, on_rack;
  double low = 0, mid = 0, top = 0;
  bool one_rank = false;
};

Levels least_level_costs(const StructuredCosts& costs) {
  const StructuredSpec& s = costs.spec();
  const int cores = s.cores_per_node;
  Levels v;
  v.on_node.assign(static_cast<std::size_t>(s.nodes), 0);
  v.on_rack.assign(static_cast<std::size_t>(s.racks), 0);
  std::vector<std::int64_t> on_core(static_cast<std::size_t>(s.nodes) * cores, 0);
  for (int r = 0; r < costs.size(); ++r) {
    const RankLocation& at = costs.location(OldRank(r));
    ++v.on_node[at.node];
    ++v.on_rack[costs.rack_of(at.node)];
    ++on_core[static_cast<std::size_t>(at.node) * cores + at.core];
  }
  const double inf = std::numeric_limits<double>::infinity();
  double m[3] = {inf, inf, inf};  // least cost: same node, same rack, across racks
  for (int n = 0; n < s.nodes; ++n) {
    for (int a = 0; a < cores; ++a) {
      const std::int64_t here = on_core[static_cast<std::size_t>(n) * cores + a];
      if (here == 0) continue;
      for (int b = a; b < cores; ++b) {
        const std::int64_t there = on_core[static_cast<std::size_t>(n) * cores + b];
        if (there > (a == b ? 1 : 0)) {
          m[0] = std::min(m[0], s.core_costs[static_cast<std::size_t>(a) * cores + b]);
        }
      }
    }
  }
  if (!s.node_costs.empty()) {
    for (int x = 0; x < s.nodes; ++x) {
      for (int y = 0; y < s.nodes; ++y) {
        if (y == x || v.on_node[x] == 0 || v.on_node[y] == 0) continue;
        const int level = costs.rack_of(x) == costs.rack_of(y) ? 1 : 2;
        m[level] = std::min(m[level], costs.node_cost(x, y));
      }
    }
  } else {
    for (int a = 0; a < s.racks; ++a) {
      for (int b = 0; b < s.racks; ++b) {
        if (v.on_rack[a] == 0 || v.on_rack[b] == 0) continue;
        const double c = s.rack_costs[static_cast<std::size_t>(a) * s.racks + b];
        m[a == b ? 1 : 2] = std::min(m[a == b ? 1 : 2], c);
      }
    }
  }
  // Levels no pair reaches take the next level's least cost.
  for (int l = 1; l >= 0; --l) m[l] = std::min(m[l], m[l + 1]);
  v.one_rank = m[0] == inf;
  if (v.one_rank) return v;
  v.top = m[2] != inf ? m[2] : m[1] != inf ? m[1] : m[0];
  v.mid = std::min(m[1], v.top);
  v.low = std::min(m[0], v.mid);
  return v;
}

// For a structured machine: every pair costs at least the least cost of
// its level (same node m0 = low, same rack m1 = mid, across racks m2 = top,
// made non-decreasing: least_level_costs()), so
//   sum_k l_k C_k >= m2 sum_k l_k P_k - (m2 - m1) sum_racks W(rack)
//                                     - (m1 - m0) sum_nodes W(node)
// with P_k all dimension-k pairs and W a group's most weighted pairs
// (GroupPairs). This sees what the per-rank bound does not: fibres are
// closed, so a rack cannot give every member its cheapest partners in two
// dimensions at once.
double level_bound(const Levels& v, const Grid& grid, const std::vector<double>& factor) {
  if (v.one_rank) return 0;
  double all_pairs = 0;
  for (int k = 0; k < grid.ndims(); ++k) {
    const double q = grid.dim(k);
    all_pairs += factor[k] * grid.fibre_count(k) * q * (q - 1) / 2;
  }
  GroupPairs most(grid, factor);
  double held = 0;
  for (std::int64_t n : v.on_node) held += (v.mid - v.low) * (n > 0 ? most.most(n) : 0);
  for (std::int64_t r : v.on_rack) held += (v.top - v.mid) * (r > 0 ? most.most(r) : 0);
  return v.top * all_pairs - held;
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
  double by_levels = 0;  // sum-max from the machine's levels, structured costs only
  if (const auto* structured = dynamic_cast<const StructuredCosts*>(&costs)) {
    const Levels levels = least_level_costs(*structured);
    b.total = std::max(b.total, level_bound(levels, grid, by_weight));
    by_levels = level_bound(levels, grid, by_mean) / p;
  }
  double sum_of_dimensions = 0, worst_dimension = 0;
  for (int k = 0; k < d; ++k) {
    b.dimension.push_back(spec.weight(k) * grid.dim(k) * alone[k] / (2 * p));
    sum_of_dimensions += b.dimension.back();
    worst_dimension = std::max(worst_dimension, b.dimension.back());
  }
  const double sum_max = std::max({means / (2 * p), sum_of_dimensions, by_levels});
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
