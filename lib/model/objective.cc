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
  if (spec.link_load && spec.aggregate == Aggregate::kSumOfAllFibres) {
    throw std::invalid_argument("+links needs sum-max or thesis-max, not total");
  }
  if (spec.links) {
    if (!spec.link_load) throw std::invalid_argument("link levels given without +links");
    for (const LinkLevel& level : *spec.links) check_level(level, grid.size());
  }
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

ObjectiveSpec ObjectiveSpec::parse(std::string_view full) {
  ObjectiveSpec spec;
  std::string_view text = full;
  constexpr std::string_view kLinks = "+links";
  if (text.size() >= kLinks.size() && text.substr(text.size() - kLinks.size()) == kLinks) {
    spec.link_load = true;
    text.remove_suffix(kLinks.size());
  }
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
    throw std::invalid_argument("unknown objective '" + std::string(full) +
                                "': expected sum-max, thesis-max or total, optionally "
                                "followed by :pairs or :max-pair, then optionally +links");
  }
  if (fibre == "pairs") {
    spec.fibre = FibreCost::kSumOfPairs;
  } else if (fibre == "max-pair") {
    spec.fibre = FibreCost::kMaxPair;
  } else {
    throw std::invalid_argument("unknown fibre cost '" + std::string(fibre) + "' in objective '" +
                                std::string(full) + "': expected pairs or max-pair");
  }
  if (spec.link_load && spec.aggregate == Aggregate::kSumOfAllFibres) {
    throw std::invalid_argument("objective '" + std::string(full) +
                                "': +links needs sum-max or thesis-max, not total");
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
  return s + (fibre == FibreCost::kSumOfPairs ? ":pairs" : ":max-pair") +
         (link_load ? "+links" : "");
}

ObjectiveSpec ObjectiveSpec::with_links(const Costs& costs,
                                        const std::vector<std::vector<int>>& known) const {
  ObjectiveSpec spec = *this;
  if (spec.link_load && !spec.links) {
    spec.links = std::make_shared<const std::vector<LinkLevel>>(link_levels(costs, known));
  }
  return spec;
}

ObjectiveSpec ObjectiveSpec::pairs_only() const {
  ObjectiveSpec spec = *this;
  spec.link_load = false;
  spec.links.reset();
  return spec;
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
  if (spec.link_load) {
    const ObjectiveSpec with = spec.with_links(costs, {});
    std::vector<double> spread;
    e.link_load = link_load(grid, labelling, *with.links, &spread);
    for (int k = 0; k < grid.ndims(); ++k) {
      dim_max[k] = std::max(dim_max[k], e.link_load[k]);
      total += spread[k];
    }
  }
  e.value = combine_values(spec, dim_max, total);
  return e;
}

IncrementalObjective::IncrementalObjective(const Costs& costs, Grid grid, Labelling labelling,
                                           ObjectiveSpec spec)
    : costs_(costs),
      grid_(std::move(grid)),
      labelling_(std::move(labelling)),
      spec_(spec.with_links(costs, {})) {
  check_sizes(costs_, grid_, labelling_);
  check_spec(spec_, grid_);
  if (has_links()) {
    group_load_.resize(grid_.ndims());
    int most_groups = 0;
    for (const LinkLevel& level : *spec_.links) most_groups = std::max(most_groups, level.groups);
    scratch_delta_.assign(most_groups, 0);
    scratch_touched_.assign(most_groups, 0);
    load_max_.assign(grid_.ndims(), std::vector<std::int64_t>(spec_.links->size(), 0));
    load_sum_ = load_max_;
    for (int k = 0; k < grid_.ndims(); ++k) {
      for (const LinkLevel& level : *spec_.links) group_load_[k].emplace_back(level.groups, 0);
      for (int f = 0; f < grid_.fibre_count(k); ++f) add_fibre_load(k, f, 1);
      refresh_link_figures(k);
    }
  }
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
    dim_max[k] = std::max(fibre_costs_[k][top_[k][0]], dimension_link_load(k));
    for (double c : fibre_costs_[k]) total_ += c;
  }
  total_ += link_total();
  value_ = combine(dim_max, total_);
}

void IncrementalObjective::add_fibre_load(int k, int f, std::int64_t sign) {
  const int q = grid_.dim(k);
  for (std::size_t l = 0; l < spec_.links->size(); ++l) {
    const LinkLevel& level = (*spec_.links)[l];
    scratch_members_.resize(q);
    for (int t = 0; t < q; ++t) {
      scratch_members_[t] = level.group_of[labelling_.old_of(grid_.fibre_member(k, f, t)).value()];
    }
    std::vector<std::int64_t>& load = group_load_[k][l];
    for_each_group_share(scratch_members_,
                         [&](int g, std::int64_t share) { load[g] += sign * share; });
  }
}

void IncrementalObjective::refresh_link_figures(int k) {
  for (std::size_t l = 0; l < spec_.links->size(); ++l) {
    const std::vector<std::int64_t>& load = group_load_[k][l];
    load_max_[k][l] = *std::max_element(load.begin(), load.end());
    load_sum_[k][l] = 0;
    for (std::int64_t x : load) load_sum_[k][l] += x;
  }
}

double IncrementalObjective::dimension_link_load(int k) const {
  if (!has_links()) return 0;
  double worst = 0;
  for (std::size_t l = 0; l < spec_.links->size(); ++l) {
    worst = std::max(
        worst, (*spec_.links)[l].flow_cost * static_cast<double>(load_max_[k][l]) / grid_.dim(k));
  }
  return worst;
}

double IncrementalObjective::link_total() const {
  if (!has_links()) return 0;
  double total = 0;
  for (int k = 0; k < grid_.ndims(); ++k) {
    for (std::size_t l = 0; l < spec_.links->size(); ++l) {
      total += (*spec_.links)[l].flow_cost * static_cast<double>(load_sum_[k][l]) / grid_.dim(k);
    }
  }
  return total;
}

IncrementalObjective::LinkChange IncrementalObjective::link_load_after(
    const Move& move, int k, const std::array<int, 3>& fibres, int n) const {
  const int q = grid_.dim(k);
  LinkChange change;
  for (std::size_t l = 0; l < spec_.links->size(); ++l) {
    const LinkLevel& level = (*spec_.links)[l];
    // Ranks of one group trading places change no group's count.
    bool one_group = true;
    for (int i = 1; i < move.n; ++i) {
      one_group &=
          level.group_of[move.arriving[i].value()] == level.group_of[move.arriving[0].value()];
    }
    if (one_group) {
      change.worst =
          std::max(change.worst, level.flow_cost * static_cast<double>(load_max_[k][l]) / q);
      continue;
    }
    scratch_list_.clear();
    const auto add = [&](int g, std::int64_t share) {
      if (!scratch_touched_[g]) {
        scratch_touched_[g] = 1;
        scratch_list_.push_back(g);
      }
      scratch_delta_[g] += share;
    };
    for (int i = 0; i < n; ++i) {
      const int f = fibres[i];
      scratch_members_.resize(q);
      for (int t = 0; t < q; ++t) {
        scratch_members_[t] =
            level.group_of[labelling_.old_of(grid_.fibre_member(k, f, t)).value()];
      }
      for_each_group_share(scratch_members_, [&](int g, std::int64_t share) { add(g, -share); });
      for (int t = 0; t < q; ++t) {
        const NewRank pos = grid_.fibre_member(k, f, t);
        OldRank member = labelling_.old_of(pos);
        for (int j = 0; j < move.n; ++j) {
          if (move.pos[j] == pos) member = move.arriving[j];
        }
        scratch_members_[t] = level.group_of[member.value()];
      }
      for_each_group_share(scratch_members_, add);
    }
    const std::vector<std::int64_t>& load = group_load_[k][l];
    std::int64_t most = 0, delta_sum = 0;
    for (int g : scratch_list_) delta_sum += scratch_delta_[g];
    for (int g = 0; g < level.groups; ++g) {
      most = std::max(most, load[g] + (scratch_touched_[g] ? scratch_delta_[g] : 0));
    }
    for (int g : scratch_list_) {
      scratch_touched_[g] = 0;
      scratch_delta_[g] = 0;
    }
    change.worst = std::max(change.worst, level.flow_cost * static_cast<double>(most) / q);
    change.total_delta += level.flow_cost * static_cast<double>(delta_sum) / q;
  }
  return change;
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
    if (has_links()) e.link_load.push_back(dimension_link_load(k));
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
    if (has_links()) {
      const LinkChange links = link_load_after(move, k, changed, n_changed);
      best = std::max(best, links.worst);
      total += links.total_delta;
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
  // Each moved fibre once: its load leaves with the old members, comes
  // back with the new.
  const auto for_each_moved_fibre = [&](auto&& f) {
    for (int k = 0; k < grid_.ndims(); ++k) {
      for (int i = 0; i < move.n; ++i) {
        if (std::find(changed[k].begin(), changed[k].begin() + i, changed[k][i]) ==
            changed[k].begin() + i) {
          f(k, changed[k][i]);
        }
      }
    }
  };
  if (has_links()) for_each_moved_fibre([&](int k, int f) { add_fibre_load(k, f, -1); });
  if (move.n == 2) {
    labelling_.swap_positions(move.pos[0], move.pos[1]);
  } else {
    labelling_.cycle_positions(move.pos[0], move.pos[1], move.pos[2]);
  }
  if (has_links()) {
    for_each_moved_fibre([&](int k, int f) { add_fibre_load(k, f, 1); });
    for (int k = 0; k < grid_.ndims(); ++k) refresh_link_figures(k);
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
    dim_max[k] = std::max(fibre_costs_[k][top_[k][0]], dimension_link_load(k));
    for (double c : fibre_costs_[k]) total_ += c;
  }
  total_ += link_total();
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
