#include "lib/model/bounds.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
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

// ---- Stencils ----

// One dimension's share of U(s) (bounds.h) as a function of x, the lines
// along it that the set meets: a * x when none of them is full, and a *
// max(x - floor(s / q), (x q - s) / (q - 1)) when some may be (at most
// that many are: each full line takes q positions, and the x - f lines
// that are not full hold at least one each).
struct LineShare {
  double a = 0;  // units out per line met and not filled
  double q = 1, s = 0;
  bool full = false;
  double lo = 1, hi = 1;  // the range of x

  double at(double x) const {
    if (!full) return a * x;
    return a * std::max(x - std::floor(s / q), (x * q - s) / (q - 1));
  }
  // min over x in [lo, hi] of at(x) - lambda log x: convex, so the least
  // of the pieces' stationary points, the break and the ends.
  double least(double lambda) const {
    std::vector<double> xs = {lo, hi};
    if (a > 0) {
      xs.push_back(lambda / a);
      if (full) {
        xs.push_back(s - std::floor(s / q) * (q - 1));  // where the pieces meet
        xs.push_back(lambda * (q - 1) / (a * q));
      }
    }
    double best = std::numeric_limits<double>::infinity();
    for (double x : xs) {
      x = std::clamp(x, lo, hi);
      best = std::min(best, at(x) - lambda * std::log(x));
    }
    return best;
  }
};

// A lower bound on min sum_k share_k(x_k) subject to sum_k log x_k >=
// need: the Lagrangian dual, maximised over lambda by golden section
// (every lambda gives a valid bound, so the search need not be exact).
double least_with_product(const std::vector<LineShare>& shares, double need) {
  double top = 1;
  for (const LineShare& l : shares) top = std::max(top, 2 * l.a * l.hi * l.q);
  const auto dual = [&](double lambda) {
    double d = lambda * need;
    for (const LineShare& l : shares) d += l.least(lambda);
    return d;
  };
  const double golden = (std::sqrt(5.0) - 1) / 2;
  double lo = 0, hi = top;
  double x1 = hi - golden * (hi - lo), x2 = lo + golden * (hi - lo);
  double f1 = dual(x1), f2 = dual(x2);
  double best = std::max({dual(0), f1, f2});
  for (int i = 0; i < 100; ++i) {
    if (f1 < f2) {
      lo = x1;
      x1 = x2;
      f1 = f2;
      x2 = lo + golden * (hi - lo);
      f2 = dual(x2);
      best = std::max(best, f2);
    } else {
      hi = x2;
      x2 = x1;
      f2 = f1;
      x1 = hi - golden * (hi - lo);
      f1 = dual(x1);
      best = std::max(best, f1);
    }
  }
  return best;
}

// Most dimensions whose full lines are told apart case by case (2^n
// cases); beyond, one case allows full lines everywhere without their
// constraint on the other dimensions, which is weaker but still a bound.
constexpr int kMostFullLineCases = 8;

// U(s) for per-message values per dimension (units or weights), before
// rounding up.
double least_out(const Grid& grid, const std::vector<bool>& periods,
                 const std::vector<double>& per_message, std::int64_t s) {
  const std::int64_t p = grid.size();
  if (s <= 0 || s >= p) return 0;
  const int d = grid.ndims();
  std::vector<LineShare> base(static_cast<std::size_t>(d));
  std::vector<int> may_fill;  // dimensions where a set of s can hold a whole line
  for (int k = 0; k < d; ++k) {
    const std::int64_t q = grid.dim(k);
    LineShare& l = base[k];
    l.q = static_cast<double>(q);
    l.s = static_cast<double>(s);
    l.a = q < 2 ? 0 : per_message[k] * (periods[k] ? 2 : 1);
    l.lo = static_cast<double>(std::max<std::int64_t>(1, (s + q - 1) / q));
    l.hi = static_cast<double>(std::min<std::int64_t>(s, p / q));
    if (q >= 2 && s >= q) may_fill.push_back(k);
  }
  const double need = (d - 1) * std::log(static_cast<double>(s));
  const int cases = static_cast<int>(may_fill.size());
  if (cases > kMostFullLineCases) {
    for (int k : may_fill) base[k].full = true;
    return std::max(0.0, least_with_product(base, need));
  }
  double best = std::numeric_limits<double>::infinity();
  for (std::uint32_t mask = 0; mask < (1u << cases); ++mask) {
    std::vector<LineShare> shares = base;
    bool feasible = true;
    for (int i = 0; i < cases; ++i) {
      if ((mask >> i & 1u) == 0) continue;
      const int k = may_fill[static_cast<std::size_t>(i)];
      shares[k].full = true;
      // A full line along k meets q_k lines of every other dimension.
      for (int j = 0; j < d; ++j) {
        if (j != k) shares[j].lo = std::max(shares[j].lo, shares[k].q);
      }
    }
    for (const LineShare& l : shares) feasible = feasible && l.lo <= l.hi;
    if (feasible) best = std::min(best, least_with_product(shares, need));
  }
  return best == std::numeric_limits<double>::infinity() ? 0 : std::max(0.0, best);
}

// Per dimension, what one message to an axis neighbour along it counts
// (units or weight; 0 where the stencil has no such offset).
std::vector<double> axis_values(const Stencil& stencil, bool units) {
  std::vector<double> v(static_cast<std::size_t>(stencil.grid().ndims()), 0);
  for (int o = 0; o < stencil.offsets(); ++o) {
    if (stencil.diagonal(o)) continue;
    const std::vector<int>& delta = stencil.delta(o);
    const auto k = static_cast<std::size_t>(
        std::find_if(delta.begin(), delta.end(), [](int c) { return c != 0; }) - delta.begin());
    const double value = units ? static_cast<double>(stencil.units(o)) : stencil.weight(o);
    v[k] = v[k] == 0 ? value : std::min(v[k], value);
  }
  return v;
}

// Rounds a bound on whole units up, allowing for the dual's rounding.
std::int64_t whole_units(double bound) {
  return static_cast<std::int64_t>(std::ceil(bound - 1e-9 * std::max(1.0, bound)));
}

// The positions of a grid by what their neighbours look like. Per
// dimension a coordinate is an end or inside (every inner one alike): a
// periodic dimension, or one of size 1, has one kind (translations), and
// both ends are alike where the stencil is symmetric under reflecting
// that dimension (every stencil a pattern names), so at most 2^d kinds
// are visited, not 3^d. For each kind with its count: the weight sent to
// itself, and its distinct neighbours' weights, heaviest first (a
// neighbour reached by two offsets counts once, with both weights).
struct PositionKind {
  double self = 0;
  std::vector<double> weights;
  std::int64_t count = 0;
};

// Whether reflecting dimension k maps the stencil's offsets onto offsets of
// the same weight.
bool mirrored(const Stencil& stencil, int k) {
  std::map<std::vector<int>, double> weight;
  for (int o = 0; o < stencil.offsets(); ++o) weight[stencil.delta(o)] = stencil.weight(o);
  for (const auto& [delta, w] : weight) {
    std::vector<int> image = delta;
    image[static_cast<std::size_t>(k)] = -image[static_cast<std::size_t>(k)];
    const auto it = weight.find(image);
    if (it == weight.end() || it->second != w) return false;
  }
  return true;
}

std::vector<PositionKind> position_kinds(const Stencil& stencil) {
  const Grid& grid = stencil.grid();
  const int d = grid.ndims();
  // Per dimension, (coordinate, how many coordinates it stands for).
  std::vector<std::vector<std::pair<int, std::int64_t>>> choices(static_cast<std::size_t>(d));
  for (int k = 0; k < d; ++k) {
    const int q = grid.dim(k);
    auto& c = choices[static_cast<std::size_t>(k)];
    if (q == 1 || stencil.periodic(k)) {
      c = {{0, q}};
    } else if (mirrored(stencil, k)) {
      c = {{0, 2}};
      if (q >= 3) c.emplace_back(1, q - 2);
    } else {
      c = {{0, 1}, {q - 1, 1}};
      if (q >= 3) c.emplace_back(1, q - 2);
    }
  }
  std::map<std::pair<double, std::vector<double>>, std::int64_t> kinds;
  std::vector<std::size_t> choice(static_cast<std::size_t>(d), 0);
  std::vector<int> coords(static_cast<std::size_t>(d));
  while (true) {
    std::int64_t count = 1;
    int x = 0;
    for (int k = 0; k < d; ++k) {
      const auto& [coordinate, stands_for] =
          choices[static_cast<std::size_t>(k)][choice[static_cast<std::size_t>(k)]];
      coords[static_cast<std::size_t>(k)] = coordinate;
      count *= stands_for;
      x = x * grid.dim(k) + coordinate;
    }
    std::map<int, double> to;
    double self = 0;
    for (int o = 0; o < stencil.offsets(); ++o) {
      const int y = stencil.neighbour(coords, x, o);
      if (y == x) {
        self += stencil.weight(o);
      } else if (y >= 0) {
        to[y] += stencil.weight(o);
      }
    }
    std::vector<double> weights;
    for (const auto& [y, w] : to) weights.push_back(w);
    std::sort(weights.begin(), weights.end(), std::greater<>());
    kinds[{self, std::move(weights)}] += count;
    int k = d - 1;
    while (k >= 0 &&
           ++choice[static_cast<std::size_t>(k)] == choices[static_cast<std::size_t>(k)].size()) {
      choice[static_cast<std::size_t>(k--)] = 0;
    }
    if (k < 0) break;
  }
  std::vector<PositionKind> out;
  for (auto& [key, count] : kinds) out.push_back({key.first, key.second, count});
  return out;
}

// The ranks' part: max_x min_a R_a(x) and sum_x min_a R_a(x).
std::pair<double, double> busiest_and_sum(const Costs& costs,
                                          const std::vector<PositionKind>& kinds) {
  std::size_t want = 0;
  for (const PositionKind& k : kinds) want = std::max(want, k.weights.size());
  double self_cost = std::numeric_limits<double>::infinity();
  for (int a = 0; a < costs.size(); ++a) {
    self_cost = std::min(self_cost, costs.cost(OldRank(a), OldRank(a)));
  }
  std::vector<double> least(kinds.size(), std::numeric_limits<double>::infinity());
  std::vector<double> cheapest;
  const auto visit = [&](const Runs& runs) {
    cheapest.clear();
    for (const auto& [cost, count] : runs) {
      for (std::int64_t i = 0; i < count && cheapest.size() < want; ++i) cheapest.push_back(cost);
      if (cheapest.size() == want) break;
    }
    for (std::size_t i = 0; i < kinds.size(); ++i) {
      double r = 0;
      for (std::size_t j = 0; j < kinds[i].weights.size(); ++j) {
        r += kinds[i].weights[j] * cheapest[j];
      }
      least[i] = std::min(least[i], r);
    }
  };
  if (const auto* structured = dynamic_cast<const StructuredCosts*>(&costs)) {
    for_each_rank_structured(*structured, visit);
  } else {
    for_each_rank_dense(costs, static_cast<std::int64_t>(want), visit);
  }
  double busiest = 0, sum = 0;
  for (std::size_t i = 0; i < kinds.size(); ++i) {
    const double r = least[i] + kinds[i].self * self_cost;
    busiest = std::max(busiest, r);
    sum += r * static_cast<double>(kinds[i].count);
  }
  return {busiest, sum};
}

// What a whole level's groups send out at least, in per-message values
// (units or weights): the busiest group and all of them together (bounds.h,
// "alone" and "together"). Together, along dimension k, a line met by n
// groups carries at least 2 (n - 1) messages between them (2 n when
// periodic and n >= 2: only full lines carry none), so they send at least
// sum_g M(|g|) less 2 v_k per line along k (per full line when periodic),
// with M(s) = min sum_k 2 v_k x_k under Loomis-Whitney and v_k what a
// message along k counts.
struct LevelOut {
  double most = 0, sum = 0;
};

LevelOut least_level_out(const Grid& grid, const std::vector<bool>& periods,
                         const std::vector<double>& per_message,
                         const std::vector<std::int64_t>& sizes) {
  const int d = grid.ndims();
  const std::int64_t p = grid.size();
  std::map<std::int64_t, std::pair<double, double>> memo;  // size -> (U, M)
  LevelOut out;
  double met = 0, groups = 0;
  std::vector<double> full(static_cast<std::size_t>(d), 0);
  for (std::int64_t n : sizes) {
    if (n <= 0) continue;
    auto it = memo.find(n);
    if (it == memo.end()) {
      std::vector<LineShare> shares(static_cast<std::size_t>(d));
      for (int k = 0; k < d; ++k) {
        const std::int64_t q = grid.dim(k);
        shares[k].a = q < 2 ? 0 : 2 * per_message[k];
        shares[k].q = static_cast<double>(q);
        shares[k].lo = static_cast<double>(std::max<std::int64_t>(1, (n + q - 1) / q));
        shares[k].hi = static_cast<double>(std::min<std::int64_t>(n, p / q));
      }
      const double m =
          n >= p ? 0 : least_with_product(shares, (d - 1) * std::log(static_cast<double>(n)));
      it = memo.emplace(n, std::make_pair(least_out(grid, periods, per_message, n), m)).first;
    }
    out.most = std::max(out.most, it->second.first);
    out.sum += it->second.first;
    met += it->second.second;
    groups += 1;
    for (int k = 0; k < d; ++k) full[k] += static_cast<double>(n / grid.dim(k));
  }
  for (int k = 0; k < d; ++k) {
    const std::int64_t q = grid.dim(k);
    if (q < 2) continue;
    const double lines = static_cast<double>(p / q);
    met -= 2 * per_message[k] * (periods[k] ? std::min(lines, full[k]) : lines);
  }
  if (groups > 0) {
    out.most = std::max(out.most, met / groups);
    out.sum = std::max(out.sum, met);
  }
  return out;
}

// Group sizes of one level of links.
std::vector<std::int64_t> group_sizes(const LinkLevel& level) {
  std::vector<std::int64_t> size(static_cast<std::size_t>(level.groups), 0);
  for (int g : level.group_of) ++size[static_cast<std::size_t>(g)];
  return size;
}

}  // namespace

bool reaches(double value, double bound) { return value <= bound + 1e-9 * std::abs(bound); }

std::optional<LowerBound> fibre_lower_bound(const Costs& costs, const Grid& grid,
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

  LowerBound b;
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

std::optional<LowerBound> stencil_lower_bound(const Costs& costs, const Grid& grid,
                                              const ObjectiveSpec& spec) {
  if (!spec.is_stencil()) return std::nullopt;
  if (costs.size() != grid.size()) {
    throw std::invalid_argument("stencil_lower_bound: costs have " + std::to_string(costs.size()) +
                                " ranks but grid " + grid.to_string() + " has " +
                                std::to_string(grid.size()) + " positions");
  }
  const ObjectiveSpec with = spec.links ? spec : spec.with_links(costs, {});
  const std::shared_ptr<const Stencil> stencil = with.stencil_on(grid);
  const std::vector<PositionKind> kinds = position_kinds(*stencil);
  auto [busiest, rank_sum] = busiest_and_sum(costs, kinds);

  const std::vector<double> weights = axis_values(*stencil, false);
  if (const auto* structured = dynamic_cast<const StructuredCosts*>(&costs)) {
    // Every message costs at least its level's least cost (bounds.h).
    const Levels v = least_level_costs(*structured);
    if (!v.one_rank) {
      double messages = 0;
      for (const PositionKind& k : kinds) {
        for (double w : k.weights) messages += w * static_cast<double>(k.count);
      }
      const auto leaving = [&](const std::vector<std::int64_t>& sizes) {
        return least_level_out(grid, stencil->periods(), weights, sizes).sum;
      };
      rank_sum = std::max(rank_sum, v.low * messages + (v.mid - v.low) * leaving(v.on_node) +
                                        (v.top - v.mid) * leaving(v.on_rack));
    }
  }

  LowerBound b;
  b.stencil.emplace();
  b.stencil->busiest_rank = busiest;
  if (with.aggregate != Aggregate::kStep) {
    b.primary = b.total = rank_sum;
    return b;
  }
  double links = 0, links_total = 0;
  if (with.links) {
    const std::vector<double> units = axis_values(*stencil, true);
    for (const LinkLevel& level : *with.links) {
      const LevelOut out = least_level_out(grid, stencil->periods(), units, group_sizes(level));
      const double unit = level.flow_cost * stencil->unit_weight();
      links += unit * static_cast<double>(whole_units(out.most));
      links_total += unit * static_cast<double>(whole_units(out.sum) + whole_units(out.most));
    }
  }
  b.stencil->links = links;
  b.primary = std::max(busiest, links);
  b.total = rank_sum + links_total;
  return b;
}

std::optional<LowerBound> objective_lower_bound(const Costs& costs, const Grid& grid,
                                                const ObjectiveSpec& spec) {
  return spec.is_stencil() ? stencil_lower_bound(costs, grid, spec)
                           : fibre_lower_bound(costs, grid, spec);
}

std::int64_t least_units_out(const Stencil& stencil, std::int64_t s) {
  return whole_units(least_out(stencil.grid(), stencil.periods(), axis_values(stencil, true), s));
}

}  // namespace rankshape
