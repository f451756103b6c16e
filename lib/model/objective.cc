#include "lib/model/objective.h"

#include <algorithm>
#include <stdexcept>

namespace rankshape {
namespace {

template <class C>
double cost_of_members(const C& costs, const OldRank* members, int n, FibreCost kind) {
  double result = 0;
  for (int i = 0; i < n; ++i) {
    for (int j = i + 1; j < n; ++j) {
      const double c = costs.cost(members[i], members[j]);
      result = kind == FibreCost::kSumOfPairs ? result + c : std::max(result, c);
    }
  }
  return result;
}

void gather_members(const Grid& grid, const Labelling& labelling, int k, int f,
                    std::vector<OldRank>& out) {
  out.resize(grid.dim(k));
  for (int t = 0; t < grid.dim(k); ++t) out[t] = labelling.old_of(grid.fibre_member(k, f, t));
}

void check_spec(const ObjectiveSpec& spec, const Grid& grid) {
  if (spec.dimension_weights.empty()) return;
  if (static_cast<int>(spec.dimension_weights.size()) != grid.ndims()) {
    throw std::invalid_argument("objective has " + std::to_string(spec.dimension_weights.size()) +
                                " dimension weights for a grid of " + std::to_string(grid.ndims()) +
                                " dimensions");
  }
  for (double w : spec.dimension_weights) {
    if (!(w >= 0) || w > 1e300)
      throw std::invalid_argument("dimension weights must be finite and >= 0");
  }
}

void check_sizes(const Costs& costs, const Grid& grid, const Labelling& labelling) {
  if (costs.size() != grid.size() || labelling.size() != grid.size()) {
    throw std::invalid_argument("size mismatch: costs for " + std::to_string(costs.size()) +
                                " ranks, grid " + grid.to_string() + " of " +
                                std::to_string(grid.size()) + " positions, labelling of " +
                                std::to_string(labelling.size()) + " ranks");
  }
}

ObjectiveValue combine_values(const ObjectiveSpec& spec, const std::vector<double>& dim_max,
                              double total) {
  ObjectiveValue v;
  v.total = total;
  switch (spec.aggregate) {
    case Aggregate::kSumOfDimensionMax:
      for (double m : dim_max) v.primary += m;
      break;
    case Aggregate::kMaxOverAllFibres:
      for (double m : dim_max) v.primary = std::max(v.primary, m);
      break;
    case Aggregate::kSumOfAllFibres:
      v.primary = total;
      break;
  }
  return v;
}

}  // namespace

ObjectiveSpec ObjectiveSpec::parse(std::string_view text) {
  ObjectiveSpec spec;
  const std::size_t colon = text.find(':');
  const std::string_view aggregate = text.substr(0, colon);
  const std::string_view fibre =
      colon == std::string_view::npos ? std::string_view("pairs") : text.substr(colon + 1);
  if (aggregate == "sum-max") {
    spec.aggregate = Aggregate::kSumOfDimensionMax;
  } else if (aggregate == "thesis-max") {
    spec.aggregate = Aggregate::kMaxOverAllFibres;
  } else if (aggregate == "total") {
    spec.aggregate = Aggregate::kSumOfAllFibres;
  } else {
    throw std::invalid_argument("unknown objective '" + std::string(text) +
                                "': expected sum-max, thesis-max or total, optionally "
                                "followed by :pairs or :max-pair");
  }
  if (fibre == "pairs") {
    spec.fibre = FibreCost::kSumOfPairs;
  } else if (fibre == "max-pair") {
    spec.fibre = FibreCost::kMaxPair;
  } else {
    throw std::invalid_argument("unknown fibre cost '" + std::string(fibre) + "' in objective '" +
                                std::string(text) + "': expected pairs or max-pair");
  }
  return spec;
}

std::string ObjectiveSpec::name() const {
  std::string s;
  switch (aggregate) {
    case Aggregate::kSumOfDimensionMax:
      s = "sum-max";
      break;
    case Aggregate::kMaxOverAllFibres:
      s = "thesis-max";
      break;
    case Aggregate::kSumOfAllFibres:
      s = "total";
      break;
  }
  return s + (fibre == FibreCost::kSumOfPairs ? ":pairs" : ":max-pair");
}

double fibre_cost(const Costs& costs, const Grid& grid, const Labelling& labelling, int k, int f,
                  FibreCost kind) {
  std::vector<OldRank> members;
  gather_members(grid, labelling, k, f, members);
  return visit_costs(
      costs, [&](const auto& c) { return cost_of_members(c, members.data(), grid.dim(k), kind); });
}

Evaluation evaluate(const Costs& costs, const Grid& grid, const Labelling& labelling,
                    const ObjectiveSpec& spec) {
  check_sizes(costs, grid, labelling);
  check_spec(spec, grid);
  Evaluation e;
  std::vector<double> dim_max;
  double total = 0;
  std::vector<OldRank> members;
  for (int k = 0; k < grid.ndims(); ++k) {
    DimensionSummary summary;
    double sum = 0;
    for (int f = 0; f < grid.fibre_count(k); ++f) {
      gather_members(grid, labelling, k, f, members);
      const double c = spec.weight(k) * visit_costs(costs, [&](const auto& concrete) {
                         return cost_of_members(concrete, members.data(), grid.dim(k), spec.fibre);
                       });
      sum += c;
      if (f == 0 || c > summary.worst) {
        summary.worst = c;
        summary.worst_fibre = f;
      }
    }
    summary.mean = sum / grid.fibre_count(k);
    total += sum;
    dim_max.push_back(summary.worst);
    e.dimensions.push_back(summary);
  }
  e.value = combine_values(spec, dim_max, total);
  return e;
}

IncrementalObjective::IncrementalObjective(const Costs& costs, Grid grid, Labelling labelling,
                                           ObjectiveSpec spec)
    : costs_(costs), grid_(std::move(grid)), labelling_(std::move(labelling)), spec_(spec) {
  check_sizes(costs_, grid_, labelling_);
  check_spec(spec_, grid_);
  scratch_dim_max_.resize(grid_.ndims());
  fibre_costs_.resize(grid_.ndims());
  top_.resize(grid_.ndims());
  for (int k = 0; k < grid_.ndims(); ++k) {
    fibre_costs_[k].resize(grid_.fibre_count(k));
    for (int f = 0; f < grid_.fibre_count(k); ++f) {
      fibre_costs_[k][f] =
          spec_.weight(k) * rankshape::fibre_cost(costs_, grid_, labelling_, k, f, spec_.fibre);
    }
    rebuild_top(k);
  }
  std::vector<double> dim_max(grid_.ndims());
  total_ = 0;
  for (int k = 0; k < grid_.ndims(); ++k) {
    dim_max[k] = fibre_costs_[k][top_[k][0]];
    for (double c : fibre_costs_[k]) total_ += c;
  }
  value_ = combine(dim_max, total_);
}

Evaluation IncrementalObjective::evaluation() const {
  Evaluation e;
  e.value = value_;
  for (int k = 0; k < grid_.ndims(); ++k) {
    DimensionSummary s;
    s.worst_fibre = top_[k][0];
    s.worst = fibre_costs_[k][s.worst_fibre];
    double sum = 0;
    for (double c : fibre_costs_[k]) sum += c;
    s.mean = sum / grid_.fibre_count(k);
    e.dimensions.push_back(s);
  }
  return e;
}

void IncrementalObjective::rebuild_top(int k) {
  std::array<int, kTop>& top = top_[k];
  top.fill(-1);
  const std::vector<double>& fc = fibre_costs_[k];
  for (int f = 0; f < static_cast<int>(fc.size()); ++f) {
    // Insertion into a short list sorted by decreasing cost.
    int i = kTop;
    while (i > 0 && (top[i - 1] == -1 || fc[top[i - 1]] < fc[f])) --i;
    if (i == kTop) continue;
    for (int j = kTop - 1; j > i; --j) top[j] = top[j - 1];
    top[i] = f;
  }
}

ObjectiveValue IncrementalObjective::combine(const std::vector<double>& dim_max,
                                             double total) const {
  return combine_values(spec_, dim_max, total);
}

IncrementalObjective::Move IncrementalObjective::swap_move(NewRank a, NewRank b) const {
  Move m;
  m.n = 2;
  m.pos = {a, b, NewRank()};
  m.arriving = {labelling_.old_of(b), labelling_.old_of(a), OldRank()};
  return m;
}

IncrementalObjective::Move IncrementalObjective::cycle_move(NewRank a, NewRank b, NewRank c) const {
  Move m;
  m.n = 3;
  m.pos = {a, b, c};
  m.arriving = {labelling_.old_of(c), labelling_.old_of(a), labelling_.old_of(b)};
  return m;
}

double IncrementalObjective::moved_fibre_cost(const Move& move, int k, int f) const {
  // The fibre's members after the move: unchanged positions keep their rank.
  const int q = grid_.dim(k);
  return visit_costs(costs_, [&](const auto& c) {
    if (spec_.fibre == FibreCost::kMaxPair) {
      OldRank members[512];
      std::vector<OldRank> large;
      OldRank* m = members;
      if (q > 512) {
        large.resize(q);
        m = large.data();
      }
      for (int t = 0; t < q; ++t) {
        const NewRank pos = grid_.fibre_member(k, f, t);
        m[t] = labelling_.old_of(pos);
        for (int i = 0; i < move.n; ++i) {
          if (move.pos[i] == pos) m[t] = move.arriving[i];
        }
      }
      return spec_.weight(k) * cost_of_members(c, m, q, FibreCost::kMaxPair);
    }
    // Sum of pairs. A swap or 3-cycle keeps every fibre's size, and with at
    // most three positions at most one rank leaves a fibre and one arrives.
    // New cost = old - (row sum of the leaver) + (row sum of the arrival over
    // the members that stay) = old - row(out) + row(in) - D(in, out).
    OldRank out(-1), in(-1);
    for (int i = 0; i < move.n; ++i) {
      if (grid_.fibre_of(move.pos[i], k) == f) {
        // The rank now at pos[i] leaves unless it arrives elsewhere in f.
        const OldRank here = labelling_.old_of(move.pos[i]);
        bool stays = false;
        for (int j = 0; j < move.n; ++j) {
          if (move.arriving[j] == here && grid_.fibre_of(move.pos[j], k) == f) stays = true;
        }
        if (!stays) out = here;
        // The rank arriving at pos[i] is new to f unless it was already in f.
        if (grid_.fibre_of(labelling_.new_of(move.arriving[i]), k) != f) in = move.arriving[i];
      }
    }
    if (out.value() < 0) return fibre_costs_[k][f];
    double delta = -c.cost(in, out);
    for (int t = 0; t < q; ++t) {
      const OldRank member = labelling_.old_of(grid_.fibre_member(k, f, t));
      delta += c.cost(in, member) - c.cost(out, member);
    }
    return fibre_costs_[k][f] + spec_.weight(k) * delta;
  });
}

ObjectiveValue IncrementalObjective::value_after(const Move& move) const {
  std::vector<double>& dim_max = scratch_dim_max_;  // no allocation per candidate
  double total = total_;
  for (int k = 0; k < grid_.ndims(); ++k) {
    std::array<int, 3> changed{-1, -1, -1};
    int n_changed = 0;
    double best = 0;
    for (int i = 0; i < move.n; ++i) {
      const int f = grid_.fibre_of(move.pos[i], k);
      if (std::find(changed.begin(), changed.begin() + n_changed, f) !=
          changed.begin() + n_changed) {
        continue;
      }
      changed[n_changed++] = f;
      const double c = moved_fibre_cost(move, k, f);
      total += c - fibre_costs_[k][f];
      best = std::max(best, c);
    }
    for (int f : top_[k]) {
      if (f == -1) break;
      if (std::find(changed.begin(), changed.begin() + n_changed, f) ==
          changed.begin() + n_changed) {
        best = std::max(best, fibre_costs_[k][f]);
        break;
      }
    }
    dim_max[k] = best;
  }
  return combine(dim_max, total);
}

void IncrementalObjective::apply(const Move& move) {
  std::vector<std::array<int, 3>> changed(grid_.ndims(), {-1, -1, -1});
  for (int k = 0; k < grid_.ndims(); ++k) {
    for (int i = 0; i < move.n; ++i) changed[k][i] = grid_.fibre_of(move.pos[i], k);
  }
  if (move.n == 2) {
    labelling_.swap_positions(move.pos[0], move.pos[1]);
  } else {
    labelling_.cycle_positions(move.pos[0], move.pos[1], move.pos[2]);
  }
  // Re-cost changed fibres from scratch so that rounding never accumulates.
  std::vector<double> dim_max(grid_.ndims());
  total_ = 0;
  for (int k = 0; k < grid_.ndims(); ++k) {
    for (int i = 0; i < move.n; ++i) {
      const int f = changed[k][i];
      fibre_costs_[k][f] =
          spec_.weight(k) * rankshape::fibre_cost(costs_, grid_, labelling_, k, f, spec_.fibre);
    }
    rebuild_top(k);
    dim_max[k] = fibre_costs_[k][top_[k][0]];
    for (double c : fibre_costs_[k]) total_ += c;
  }
  value_ = combine(dim_max, total_);
}

void IncrementalObjective::check_positions(std::initializer_list<NewRank> positions) const {
  for (const NewRank n : positions) {
    if (n.value() < 0 || n.value() >= grid_.size()) {
      throw std::out_of_range("position " + std::to_string(n.value()) + " outside grid " +
                              grid_.to_string());
    }
  }
}

ObjectiveValue IncrementalObjective::value_after_swap(NewRank a, NewRank b) const {
  check_positions({a, b});
  if (a == b) return value_;
  return value_after(swap_move(a, b));
}

ObjectiveValue IncrementalObjective::value_after_cycle(NewRank a, NewRank b, NewRank c) const {
  check_positions({a, b, c});
  if (a == b || b == c || a == c) {
    throw std::invalid_argument("a 3-cycle needs three distinct positions");
  }
  return value_after(cycle_move(a, b, c));
}

void IncrementalObjective::apply_swap(NewRank a, NewRank b) {
  check_positions({a, b});
  if (a != b) apply(swap_move(a, b));
}

void IncrementalObjective::apply_cycle(NewRank a, NewRank b, NewRank c) {
  check_positions({a, b, c});
  if (a == b || b == c || a == c) {
    throw std::invalid_argument("a 3-cycle needs three distinct positions");
  }
  apply(cycle_move(a, b, c));
}

}  // namespace rankshape
