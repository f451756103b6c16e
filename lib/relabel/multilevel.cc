#include "lib/relabel/multilevel.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <optional>

#include "lib/relabel/groups.h"

namespace rankshape {
namespace {

// At most this many box shapes are tried in full at the top level; lower
// levels take the best by estimate.
constexpr std::size_t kTopCandidates = 12;
// ... and at most this many over the grid's size (at 1,048,576 ranks: 4,
// about 1 s each).
constexpr double kTopRankEvaluations = 1 << 22;
// Coarse and inner problems right under the top with at most this many
// items also try several box shapes.
constexpr int kBranchBelow = 512;
// Coarse and inner problems this small are solved exactly (6! = 720
// labellings); larger ones would cost more than the search they replace.
constexpr int kExactBelow = 6;

void box_shapes_from(int k, int left, const Grid& grid, std::vector<int>& current,
                     std::vector<std::vector<int>>& out) {
  if (k == grid.ndims()) {
    if (left == 1) out.push_back(current);
    return;
  }
  for (int b = 1; b <= grid.dim(k) && b <= left; ++b) {
    if (grid.dim(k) % b != 0 || left % b != 0) continue;
    current.push_back(b);
    box_shapes_from(k + 1, left / b, grid, current, out);
    current.pop_back();
  }
}

// What a coarse fibre of dimension k stands for. Its pair costs appear b_k^2
// times in each fine fibre through it (b_k members of every group); with
// the total of all fibres as objective it also stands for g / b_k fine
// fibres.
double coarse_weight(const ObjectiveSpec& spec, const std::vector<int>& box, int k) {
  double g = 1;
  for (int b : box) g *= b;
  const double bk = box[k];
  const double per_fibre = spec.fibre == FibreCost::kSumOfPairs ? bk * bk : 1.0;
  return spec.aggregate == Aggregate::kSumOfAllFibres ? per_fibre * g / bk : per_fibre;
}

std::string format_value(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

int smallest_prime_factor(int n) {
  for (int f = 2; f <= n / f; ++f) {
    if (n % f == 0) return f;
  }
  return n;
}

// The stencil of the coarse problem whose items are boxes b of the fine
// grid: coarse offset D (each part in {-1, 0, 1}) weighs the fine messages
// from one box to the box at D, sum over fine offsets d of w(d) times the
// positions x of a box with x + d in the box at D: per dimension b_k - |d_k|
// where D_k = 0, and 1 where D_k = d_k != 0 (the box's last layer). Coarse
// periods are the fine ones.
// Example: 5-point stencil, weights 1, box 2x4: D = (1, 0) weighs 4 (a face
// of 4 pairs), D = (0, 1) weighs 2, diagonals weigh 0 and are left out.
Stencil coarse_stencil(const Stencil& fine, const std::vector<int>& box) {
  const int d = static_cast<int>(box.size());
  std::vector<int> coarse_dims(static_cast<std::size_t>(d));
  for (int k = 0; k < d; ++k) coarse_dims[k] = fine.grid().dim(k) / box[k];
  std::vector<std::vector<int>> deltas;
  std::vector<double> weights;
  std::vector<int> big(static_cast<std::size_t>(d), -1);
  for (;;) {
    if (std::any_of(big.begin(), big.end(), [](int c) { return c != 0; })) {
      double w = 0;
      for (int o = 0; o < fine.offsets(); ++o) {
        double count = 1;
        for (int k = 0; k < d && count > 0; ++k) {
          const int small = fine.delta(o)[k];
          if (big[k] == 0) {
            count *= std::max(0, box[k] - std::abs(small));
          } else {
            count *= small == big[k] ? 1 : 0;
          }
        }
        w += fine.weight(o) * count;
      }
      if (w > 0) {
        deltas.push_back(big);
        weights.push_back(w);
      }
    }
    int k = d - 1;
    while (k >= 0 && ++big[k] > 1) big[k--] = -1;
    if (k < 0) break;
  }
  return Stencil(Grid(coarse_dims), fine.periods(), std::move(deltas), std::move(weights));
}

// The stencil inside one box: the fine offsets, periodic only along
// dimensions the box spans whole.
Stencil inner_stencil(const Stencil& fine, const std::vector<int>& box) {
  std::vector<bool> periods = fine.periods();
  std::vector<std::vector<int>> deltas;
  std::vector<double> weights;
  for (std::size_t k = 0; k < box.size(); ++k) {
    periods[k] = periods[k] && box[k] == fine.grid().dim(static_cast<int>(k));
  }
  for (int o = 0; o < fine.offsets(); ++o) {
    deltas.push_back(fine.delta(o));
    weights.push_back(fine.weight(o));
  }
  return Stencil(Grid(box), periods, std::move(deltas), std::move(weights));
}

// A rough cost of a box shape, to rank shapes before solving: every fibre of
// dimension k holds q_k / b_k groups, b_k members of each; pairs inside a
// group cost c_in, pairs across groups c_out. For a stencil: a box's
// messages out at c_out, those inside at c_in.
double box_estimate(const std::vector<int>& b, const Grid& grid, const ObjectiveSpec& spec,
                    double c_in, double c_out) {
  if (spec.is_stencil()) {
    const std::shared_ptr<const Stencil> fine = spec.stencil_on(grid);
    const Stencil coarse = coarse_stencil(*fine, b);
    double out = 0, all = 0;
    for (int o = 0; o < coarse.offsets(); ++o) out += coarse.weight(o);
    double g = 1;
    for (int x : b) g *= x;
    for (int o = 0; o < fine->offsets(); ++o) all += fine->weight(o) * g;
    return out * c_out + std::max(0.0, all - out) * c_in;
  }
  double total = 0;
  for (int k = 0; k < grid.ndims(); ++k) {
    const double groups = static_cast<double>(grid.dim(k)) / b[k];
    const double bk = b[k];
    double fibre;
    if (spec.fibre == FibreCost::kSumOfPairs) {
      fibre = groups * bk * (bk - 1) / 2 * c_in + groups * (groups - 1) / 2 * bk * bk * c_out;
    } else {
      fibre = groups > 1 ? c_out : (bk > 1 ? c_in : 0);
    }
    if (spec.aggregate == Aggregate::kSumOfAllFibres) fibre *= grid.fibre_count(k);
    total += spec.weight(k) * fibre;
  }
  return total;
}

DenseCosts sub_costs(const Costs& costs, const std::vector<int>& items) {
  const int g = static_cast<int>(items.size());
  std::vector<double> m(static_cast<std::size_t>(g) * g, 0);
  for (int i = 0; i < g; ++i) {
    for (int j = 0; j < g; ++j) {
      if (i != j)
        m[static_cast<std::size_t>(i) * g + j] = costs.cost(OldRank(items[i]), OldRank(items[j]));
    }
  }
  return DenseCosts(g, std::move(m), DenseCosts::Trusted{});
}

Neighbourhood neighbourhood_of(const Grouping& grouping) {
  Neighbourhood h;
  h.list_of = grouping.group_of;
  h.near = grouping.members;
  return h;
}

// How hard a level works: kQuick when only comparing box shapes (short
// hill-climbing), kFull for the answer.
enum class Effort { kQuick, kFull };

Labelling solve(const Costs& costs, const Grid& grid, const ObjectiveSpec& spec,
                const std::vector<std::vector<int>>& levels, const Deadline& deadline,
                SplitMix64& rng, SearchStats& stats, int depth, Effort effort,
                const std::function<void(const std::string&)>& progress = {});

void add(SearchStats& total, const SearchStats& s) {
  total.evaluations += s.evaluations;
  total.moves += s.moves;
  total.time_limited |= s.time_limited;
}

std::int64_t stall_limit(Effort effort, int n) {
  return effort == Effort::kQuick ? std::min<std::int64_t>(256, n) : 0;
}

// What one level of coarsening offers: a grouping, the box shapes worth
// trying and the hierarchy left for the coarse problem.
struct Coarsening {
  Grouping grouping;
  std::vector<std::vector<int>> boxes;
  std::vector<std::vector<int>> coarse_levels;
  std::unique_ptr<const Costs> coarse;  // the groups' costs
};

// Coarse problems up to this many groups stay dense (128 MiB at most), as
// they were before structured coarse costs: the structured form is for the
// sizes a dense matrix holds badly. (Which form searches faster below was
// not measured cleanly: a first A/B on planted-1024 was within noise.)
constexpr std::size_t kDenseCoarseMax = 4096;

// The groups' costs: dense up to kDenseCoarseMax groups, above that
// structured where the machine's structure carries over
// (structured_coarse_costs(): O(groups) memory, where a dense matrix of
// 16,384 nodes takes 2 GiB), else dense if it fits; null if not.
std::unique_ptr<const Costs> coarse_problem(const Costs& costs, const Grouping& g) {
  if (g.members.size() > kDenseCoarseMax) {
    if (std::optional<StructuredCosts> s = structured_coarse_costs(costs, g)) {
      return std::make_unique<const StructuredCosts>(std::move(*s));
    }
  }
  if (g.members.size() > static_cast<std::size_t>(DenseCosts::kMaxRanks)) return nullptr;
  return std::make_unique<const DenseCosts>(coarse_costs(costs, g));
}

std::optional<Coarsening> coarsen(const Costs& costs, const Grid& grid,
                                  const std::vector<std::vector<int>>& levels, SplitMix64& rng,
                                  const Deadline& deadline) {
  const int n = grid.size();
  for (std::size_t li = 0; li < levels.size(); ++li) {
    std::optional<Grouping> g = grouping_from_labels(levels[li]);
    if (!g || g->group_size < 2 || g->members.size() < 2) continue;
    std::vector<std::vector<int>> boxes = box_shapes(g->group_size, grid);
    if (boxes.empty()) continue;
    std::unique_ptr<const Costs> coarse = coarse_problem(costs, *g);
    if (!coarse) continue;
    Coarsening c{std::move(*g), std::move(boxes), {}, std::move(coarse)};
    for (std::size_t lj = li + 1; lj < levels.size(); ++lj) {
      std::vector<int> labels;
      for (const auto& m : c.grouping.members) labels.push_back(levels[lj][m[0]]);
      c.coarse_levels.push_back(std::move(labels));
    }
    return c;
  }
  // No usable known level: cluster by cost, g a prime factor of the largest
  // dimension it can split. Clustering is O(n^2): beyond a dense matrix's
  // size, plain hill-climbing it is.
  if (n > DenseCosts::kMaxRanks) return std::nullopt;
  std::vector<int> order(grid.ndims());
  for (int k = 0; k < grid.ndims(); ++k) order[k] = k;
  std::stable_sort(order.begin(), order.end(),
                   [&](int a, int b) { return grid.dim(a) > grid.dim(b); });
  for (int k : order) {
    const int g = smallest_prime_factor(grid.dim(k));
    if (g < 2 || g >= n) continue;
    Coarsening c{cluster_items(costs, g, rng, deadline), {}, {}, nullptr};
    c.coarse = std::make_unique<const DenseCosts>(coarse_costs(costs, c.grouping));
    for (int j : order) {
      if (grid.dim(j) % g != 0) continue;
      std::vector<int> b(grid.ndims(), 1);
      b[j] = g;
      c.boxes.push_back(std::move(b));
    }
    return c;
  }
  return std::nullopt;
}

Labelling solve(const Costs& costs, const Grid& grid, const ObjectiveSpec& spec,
                const std::vector<std::vector<int>>& levels, const Deadline& deadline,
                SplitMix64& rng, SearchStats& stats, int depth, Effort effort,
                const std::function<void(const std::string&)>& progress) {
  const int n = grid.size();
  if (n <= kExactBelow) return brute_force(costs, grid, spec);
  std::optional<Coarsening> level = coarsen(costs, grid, levels, rng, deadline);
  if (!level) {
    IncrementalObjective state(costs, grid, Labelling::identity(n), spec);
    add(stats, hill_climb(state, deadline, rng, Neighbourhood{}, stall_limit(effort, n)));
    return state.labelling();
  }
  const Grouping& grouping = level->grouping;
  const Costs& coarse = *level->coarse;

  // Rank box shapes by estimate.
  double c_out = 0, c_in = 0;
  const int m = coarse.size();
  visit_costs(coarse, [&](const auto& c) {
    for (int a = 0; a < m; ++a) {
      for (int b = 0; b < m; ++b) c_out += c.cost(OldRank(a), OldRank(b));
    }
  });
  c_out /= std::max(1.0, static_cast<double>(m) * (m - 1));
  c_in = mean_cost_inside(costs, grouping.members[0]);
  std::vector<std::vector<int>> ranked = rank_box_shapes(level->boxes, grid, spec, c_in, c_out);
  // The top level tries several box shapes, and so do small levels right
  // under it (deeper branching would multiply the work at every level).
  const bool try_several = depth == 0 || (depth == 1 && n <= kBranchBelow);
  // Each shape costs a few evaluations of O(n): on huge grids, fewer.
  const std::size_t several = std::clamp<std::size_t>(
      static_cast<std::size_t>(kTopRankEvaluations / std::max(1, n)), 1, kTopCandidates);
  ranked.resize(std::min(ranked.size(), try_several ? several : std::size_t{1}));

  // Groups with identical inner costs (the nodes of a machine, the nodes of
  // a rack) share one inner problem: solve it once per box shape.
  const StructuredCosts* structured_nodes = nullptr;
  if (const auto* sc = dynamic_cast<const StructuredCosts*>(&costs)) {
    bool nodes = true;
    for (const auto& members : grouping.members) {
      for (int r : members) {
        nodes &= sc->location(OldRank(r)).node == sc->location(OldRank(members[0])).node;
      }
    }
    if (nodes) structured_nodes = sc;
  }
  // Members in core order, so that nodes using the same cores pose the same
  // inner problem whatever the order of their ranks.
  std::vector<std::vector<int>> members_in_order = grouping.members;
  if (structured_nodes) {
    for (auto& group : members_in_order) order_by_core(*structured_nodes, group);
  }
  const std::shared_ptr<const Stencil> fine_stencil =
      spec.is_stencil() ? spec.stencil_on(grid) : nullptr;
  const auto build = [&](const std::vector<int>& box, Effort level_effort) {
    std::vector<int> coarse_dims(grid.ndims());
    // Coarse items are groups, not ranks: the link load's levels do not
    // apply there (the fine level's refinement sees it).
    ObjectiveSpec coarse_spec = spec.pairs_only();
    for (int k = 0; k < grid.ndims(); ++k) coarse_dims[k] = grid.dim(k) / box[k];
    if (fine_stencil) {
      coarse_spec.stencil = std::make_shared<const Stencil>(coarse_stencil(*fine_stencil, box));
    } else {
      coarse_spec.dimension_weights.assign(grid.ndims(), 1.0);
      for (int k = 0; k < grid.ndims(); ++k) {
        coarse_spec.dimension_weights[k] = spec.weight(k) * coarse_weight(spec, box, k);
      }
    }
    ObjectiveSpec inner_spec = spec.pairs_only();
    if (fine_stencil) {
      inner_spec.stencil = std::make_shared<const Stencil>(inner_stencil(*fine_stencil, box));
    }
    const Labelling coarse_labelling =
        solve(coarse, Grid(coarse_dims), coarse_spec, level->coarse_levels, deadline, rng, stats,
              depth + 1, level_effort);
    const Grid box_grid(box);
    // On a structured machine a node's inner costs are fixed by its cores.
    std::map<std::vector<int>, Labelling> by_cores;
    std::map<std::vector<double>, Labelling> by_costs;
    std::vector<Labelling> inner;
    inner.reserve(grouping.members.size());
    for (const auto& members : members_in_order) {
      if (grouping.group_size <= 2) {
        inner.push_back(Labelling::identity(grouping.group_size));
        continue;
      }
      const auto solve_inner = [&] {
        return solve(sub_costs(costs, members), box_grid, inner_spec, {}, deadline, rng, stats,
                     depth + 1, level_effort);
      };
      if (structured_nodes) {
        std::vector<int> cores;
        for (int r : members) cores.push_back(structured_nodes->location(OldRank(r)).core);
        auto it = by_cores.find(cores);
        if (it == by_cores.end()) it = by_cores.emplace(std::move(cores), solve_inner()).first;
        inner.push_back(it->second);
      } else {
        std::vector<double> key;
        key.reserve(members.size() * members.size());
        for (int x : members) {
          for (int y : members) key.push_back(costs.cost(OldRank(x), OldRank(y)));
        }
        auto it = by_costs.find(key);
        if (it == by_costs.end()) it = by_costs.emplace(std::move(key), solve_inner()).first;
        inner.push_back(it->second);
      }
    }
    return compose(grid, box, coarse_labelling, members_in_order, inner);
  };

  // Compare box shapes on quick solutions, then solve the best one fully.
  const Effort compare_effort = ranked.size() > 1 ? Effort::kQuick : effort;
  std::optional<Labelling> best;
  ObjectiveValue best_value;
  std::size_t best_box = 0;
  for (std::size_t i = 0; i < ranked.size(); ++i) {
    if (best && deadline.passed()) {
      stats.time_limited = true;
      break;
    }
    Labelling fine = build(ranked[i], compare_effort);
    const ObjectiveValue v = evaluate(costs, grid, fine, spec).value;
    if (progress) {
      progress("multilevel: groups of " + std::to_string(grouping.group_size) + " in box " +
               Grid(ranked[i]).to_string() + " (" + std::to_string(i + 1) + "/" +
               std::to_string(ranked.size()) + "): objective " + format_value(v.primary));
    }
    if (!best || improves(v, best_value)) {
      best = std::move(fine);
      best_value = v;
      best_box = i;
    }
  }
  if (compare_effort != effort && !deadline.passed()) {
    Labelling fine = build(ranked[best_box], effort);
    if (improves(evaluate(costs, grid, fine, spec).value, best_value)) best = std::move(fine);
  }

  IncrementalObjective state(costs, grid, std::move(*best), spec);
  add(stats, hill_climb(state, deadline, rng, neighbourhood_of(grouping), stall_limit(effort, n)));
  return state.labelling();
}

}  // namespace

std::vector<std::vector<int>> box_shapes(int g, const Grid& grid) {
  std::vector<std::vector<int>> out;
  std::vector<int> current;
  box_shapes_from(0, g, grid, current, out);
  return out;
}

std::vector<std::vector<int>> rank_box_shapes(std::vector<std::vector<int>> boxes, const Grid& grid,
                                              const ObjectiveSpec& spec, double c_in,
                                              double c_out) {
  std::vector<std::pair<double, std::size_t>> ranked;
  for (std::size_t i = 0; i < boxes.size(); ++i) {
    ranked.emplace_back(box_estimate(boxes[i], grid, spec, c_in, c_out), i);
  }
  std::stable_sort(ranked.begin(), ranked.end(),
                   [](const auto& x, const auto& y) { return x.first < y.first; });
  std::vector<std::vector<int>> out;
  for (const auto& r : ranked) out.push_back(std::move(boxes[r.second]));
  return out;
}

Labelling compose(const Grid& grid, const std::vector<int>& box, const Labelling& coarse,
                  const std::vector<std::vector<int>>& members,
                  const std::vector<Labelling>& inner) {
  std::vector<int> coarse_dims(grid.ndims());
  for (int k = 0; k < grid.ndims(); ++k) coarse_dims[k] = grid.dim(k) / box[k];
  const Grid coarse_grid(coarse_dims);
  const Grid box_grid(box);
  std::vector<OldRank> perm(grid.size());
  std::vector<int> cc(grid.ndims()), lc(grid.ndims());
  for (int x = 0; x < grid.size(); ++x) {
    const std::vector<int> c = grid.coords(NewRank(x));
    for (int k = 0; k < grid.ndims(); ++k) {
      cc[k] = c[k] / box[k];
      lc[k] = c[k] % box[k];
    }
    const int group = coarse.old_of(coarse_grid.position(cc)).value();
    const int member = inner[group].old_of(box_grid.position(lc)).value();
    perm[x] = OldRank(members[group][member]);
  }
  return Labelling(std::move(perm));
}

Labelling multilevel(const Costs& costs, const Grid& grid, const ObjectiveSpec& spec,
                     const std::vector<std::vector<int>>& levels, const Deadline& deadline,
                     SplitMix64& rng, SearchStats& stats,
                     const std::function<void(const std::string&)>& progress) {
  return solve(costs, grid, spec, levels, deadline, rng, stats, 0, Effort::kFull, progress);
}

}  // namespace rankshape
