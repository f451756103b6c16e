// The stencil pattern: full evaluation and the incremental state (see
// objective.h).
//
// A position's cost is re-computed whole, summing its neighbours in offset
// order, in evaluate_stencil() and in the incremental state alike, so that
// both give the same bits. Link loads are sums of whole units
// (Stencil::units), so adding and removing messages is exact; the sums of
// squares behind the concentration are kept in 128 bits.
#include <algorithm>
#include <climits>
#include <set>
#include <stdexcept>
#include <unordered_map>

#include "lib/model/objective_state.h"

namespace rankshape::detail {
namespace {

using Wide = __int128;

// The cost of position x: sum over its neighbours y of w(x->y) D(old(x),
// old(y)), old() giving the rank at a position.
template <class C, class OldAt>
double position_cost(const C& costs, const Stencil& stencil, const std::vector<int>& coords, int x,
                     OldAt&& old_at) {
  double sum = 0;
  const OldRank me = old_at(x);
  for (int o = 0; o < stencil.offsets(); ++o) {
    const int y = stencil.neighbour(coords, x, o);
    if (y < 0) continue;
    sum += stencil.weight(o) * costs.cost(me, old_at(y));
  }
  return sum;
}

// Advances row-major coordinates by one position.
void next_coords(const Grid& grid, std::vector<int>& coords) {
  for (int k = grid.ndims() - 1; k >= 0; --k) {
    if (++coords[static_cast<std::size_t>(k)] < grid.dim(k)) return;
    coords[static_cast<std::size_t>(k)] = 0;
  }
}

std::uint64_t pair_key(int from, int to, int groups) {
  return static_cast<std::uint64_t>(from) * static_cast<std::uint64_t>(groups) +
         static_cast<std::uint64_t>(to);
}

// The value from its parts: the busiest rank, and per level its flow cost,
// busiest load, total load, sum of squared pair loads and busiest parent's
// fabric load (in units).
ObjectiveValue combine(const ObjectiveSpec& spec, const Stencil& stencil, double busiest_rank,
                       double rank_sum, const std::vector<LinkLevel>& levels,
                       const std::vector<std::int64_t>& max_load,
                       const std::vector<std::int64_t>& load_sum, const std::vector<Wide>& squares,
                       const std::vector<std::int64_t>& fabric) {
  ObjectiveValue v;
  if (spec.aggregate != Aggregate::kStep) {
    v.primary = v.total = rank_sum;
    return v;
  }
  const double unit = stencil.unit_weight();
  double links = 0;  // the busiest group's term, summed over the levels
  v.total = rank_sum;
  for (std::size_t l = 0; l < levels.size(); ++l) {
    const double flow = levels[l].flow_cost;
    const double through_fabric = levels[l].fabric_cost * unit * static_cast<double>(fabric[l]);
    links += flow * unit * static_cast<double>(max_load[l]) + through_fabric;
    v.total += flow * unit * static_cast<double>(load_sum[l] + max_load[l]) + through_fabric;
    v.concentration += flow * unit * unit * static_cast<double>(squares[l]);
  }
  v.primary = std::max(busiest_rank, links);
  return v;
}

const std::vector<LinkLevel>& no_levels() {
  static const std::vector<LinkLevel> none;
  return none;
}

const std::vector<LinkLevel>& levels_of(const ObjectiveSpec& spec) {
  return spec.aggregate == Aggregate::kStep && spec.links ? *spec.links : no_levels();
}

// The stencil under change (see IncrementalObjective).
class StencilState final : public PatternState {
 public:
  StencilState(const Costs& costs, const Grid& grid, Labelling labelling,
               const ObjectiveSpec& spec);

  ObjectiveValue value() const override { return value_; }
  const Labelling& labelling() const override { return labelling_; }
  Evaluation evaluation() const override;
  ObjectiveValue value_after(const Move& move) const override;
  void apply(const Move& move) override;
  bool can_improve() const override { return grid_.size() >= 2; }
  SearchFocus focus(std::int64_t round, SplitMix64& rng) const override;
  NewRank partner(const SearchFocus& focus, SplitMix64& rng) const override;
  bool pointless(const SearchFocus& focus, NewRank other) const override {
    return other == focus.position;
  }

 private:
  struct Level {
    std::vector<std::int64_t> load;                // [group] units sent out
    std::vector<std::int64_t> messages;            // [group] messages sent out
    std::set<std::pair<std::int64_t, int>> order;  // (load, group)
    std::int64_t load_sum = 0;
    std::unordered_map<std::uint64_t, std::int64_t> pairs;  // from * groups + to -> units
    Wide squares = 0;
    std::vector<std::vector<int>> members;  // [group] old ranks
  };
  // A change to the links of one level: load and message deltas per
  // group, unit deltas per ordered pair of groups.
  struct LinkDelta {
    std::vector<int> groups;  // touched, each once
    std::vector<std::pair<std::uint64_t, std::int64_t>> pairs;
  };

  double cost_at(int x, const Move* move) const;
  // Calls f(from, to, offset) for every message with an end at a moved
  // position, each once.
  template <class F>
  void for_each_moved_message(const Move& move, F&& f) const;
  void affected_positions(const Move& move) const;
  void link_delta(std::size_t l, const Move& move, bool after, std::int64_t sign) const;
  ObjectiveValue recompute_value() const;

  const Costs& costs_;
  Grid grid_;
  ObjectiveSpec spec_;
  std::shared_ptr<const Stencil> stencil_;
  Labelling labelling_;
  std::vector<double> cost_;                // [position]
  std::set<std::pair<double, int>> order_;  // (cost, position)
  long double rank_sum_ = 0;
  std::vector<Level> levels_;
  std::vector<FabricState> fabrics_;  // [level]
  ObjectiveValue value_;

  // Work space of value_after() and apply().
  mutable std::vector<char> marked_;  // [position]
  mutable std::vector<int> affected_;
  mutable std::vector<int> coords_;
  mutable std::vector<std::int64_t> load_delta_, message_delta_;  // [group]
  mutable std::vector<char> group_touched_;                       // [group]
  mutable LinkDelta delta_;
};

StencilState::StencilState(const Costs& costs, const Grid& grid, Labelling labelling,
                           const ObjectiveSpec& spec)
    : costs_(costs),
      grid_(grid),
      spec_(spec),
      stencil_(spec.stencil_on(grid)),
      labelling_(std::move(labelling)) {
  const int p = grid_.size();
  cost_.resize(static_cast<std::size_t>(p));
  std::vector<int> coords(static_cast<std::size_t>(grid_.ndims()), 0);
  for (int x = 0; x < p; ++x, next_coords(grid_, coords)) {
    cost_[x] = visit_costs(costs_, [&](const auto& c) {
      return position_cost(c, *stencil_, coords, x,
                           [&](int y) { return labelling_.old_of(NewRank(y)); });
    });
    order_.emplace(cost_[x], x);
    rank_sum_ += cost_[x];
  }
  marked_.assign(static_cast<std::size_t>(p), 0);
  int most_groups = 0;
  for (const LinkLevel& level : levels_of(spec_)) {
    Level s;
    s.load.assign(static_cast<std::size_t>(level.groups), 0);
    s.messages.assign(static_cast<std::size_t>(level.groups), 0);
    s.members.resize(static_cast<std::size_t>(level.groups));
    for (int r = 0; r < p; ++r) s.members[static_cast<std::size_t>(level.group_of[r])].push_back(r);
    levels_.push_back(std::move(s));
    most_groups = std::max(most_groups, level.groups);
  }
  load_delta_.assign(static_cast<std::size_t>(most_groups), 0);
  message_delta_.assign(static_cast<std::size_t>(most_groups), 0);
  group_touched_.assign(static_cast<std::size_t>(most_groups), 0);
  // Every message once, from its sender.
  const std::vector<LinkLevel>& levels = levels_of(spec_);
  std::vector<FabricLoads> fabric;
  for (const LinkLevel& level : levels) fabric.emplace_back(level);
  std::fill(coords.begin(), coords.end(), 0);
  for (int x = 0; x < p; ++x, next_coords(grid_, coords)) {
    for (int o = 0; o < stencil_->offsets(); ++o) {
      const int y = stencil_->neighbour(coords, x, o);
      if (y < 0) continue;
      for (std::size_t l = 0; l < levels.size(); ++l) {
        const int gx = levels[l].group_of[labelling_.old_of(NewRank(x)).value()];
        const int gy = levels[l].group_of[labelling_.old_of(NewRank(y)).value()];
        if (gx == gy) continue;
        levels_[l].load[gx] += stencil_->units(o);
        levels_[l].messages[gx] += 1;
        levels_[l].pairs[pair_key(gx, gy, levels[l].groups)] += stencil_->units(o);
        fabric[l].add(gx, gy, stencil_->units(o));
      }
    }
  }
  for (std::size_t l = 0; l < levels.size(); ++l) {
    Level& s = levels_[l];
    for (int g = 0; g < levels[l].groups; ++g) {
      s.order.emplace(s.load[g], g);
      s.load_sum += s.load[g];
    }
    for (const auto& [key, units] : s.pairs) s.squares += static_cast<Wide>(units) * units;
    fabrics_.emplace_back(levels[l], fabric[l].loads());
  }
  value_ = recompute_value();
}

ObjectiveValue StencilState::recompute_value() const {
  std::vector<std::int64_t> max_load, load_sum, fabric;
  std::vector<Wide> squares;
  for (std::size_t l = 0; l < levels_.size(); ++l) {
    const Level& s = levels_[l];
    max_load.push_back(s.order.empty() ? 0 : s.order.rbegin()->first);
    load_sum.push_back(s.load_sum);
    squares.push_back(s.squares);
    fabric.push_back(fabrics_[l].busiest());
  }
  return combine(spec_, *stencil_, order_.rbegin()->first, static_cast<double>(rank_sum_),
                 levels_of(spec_), max_load, load_sum, squares, fabric);
}

double StencilState::cost_at(int x, const Move* move) const {
  coords_ = grid_.coords(NewRank(x));
  return visit_costs(costs_, [&](const auto& c) {
    return position_cost(c, *stencil_, coords_, x, [&](int y) {
      return move ? move->old_at(labelling_, NewRank(y)) : labelling_.old_of(NewRank(y));
    });
  });
}

template <class F>
void StencilState::for_each_moved_message(const Move& move, F&& f) const {
  const auto moved = [&](int y) {
    for (int i = 0; i < move.n; ++i) {
      if (move.pos[i].value() == y) return true;
    }
    return false;
  };
  std::vector<int> coords;
  for (int i = 0; i < move.n; ++i) {
    const int x = move.pos[i].value();
    coords = grid_.coords(NewRank(x));
    for (int o = 0; o < stencil_->offsets(); ++o) {
      const int y = stencil_->neighbour(coords, x, o);
      if (y < 0) continue;
      f(x, y, o);
      // A message from an unmoved neighbour; between two moved positions
      // it is the other's outgoing one.
      if (!moved(y)) f(y, x, stencil_->opposite(o));
    }
  }
}

void StencilState::affected_positions(const Move& move) const {
  affected_.clear();
  const auto add = [&](int y) {
    if (y >= 0 && !marked_[y]) {
      marked_[y] = 1;
      affected_.push_back(y);
    }
  };
  for (int i = 0; i < move.n; ++i) {
    const int x = move.pos[i].value();
    add(x);
    const std::vector<int> coords = grid_.coords(NewRank(x));
    for (int o = 0; o < stencil_->offsets(); ++o) add(stencil_->neighbour(coords, x, o));
  }
}

// Adds sign times the links of the moved positions' messages, under the
// labelling before (after = false) or after the move, to delta_ and the
// per-group work arrays.
void StencilState::link_delta(std::size_t l, const Move& move, bool after,
                              std::int64_t sign) const {
  const LinkLevel& level = levels_of(spec_)[l];
  const auto group = [&](int x) {
    const OldRank r = after ? move.old_at(labelling_, NewRank(x)) : labelling_.old_of(NewRank(x));
    return level.group_of[r.value()];
  };
  for_each_moved_message(move, [&](int from, int to, int o) {
    const int gf = group(from), gt = group(to);
    if (gf == gt) return;
    if (!group_touched_[gf]) {
      group_touched_[gf] = 1;
      delta_.groups.push_back(gf);
    }
    load_delta_[gf] += sign * stencil_->units(o);
    message_delta_[gf] += sign;
    delta_.pairs.emplace_back(pair_key(gf, gt, level.groups), sign * stencil_->units(o));
    fabrics_[l].add(gf, gt, sign * stencil_->units(o));
  });
}

ObjectiveValue StencilState::value_after(const Move& move) const {
  // Positions whose cost changes: the moved ones and their neighbours.
  affected_positions(move);
  double busiest = 0;
  long double sum = rank_sum_;
  for (int x : affected_) {
    const double c = cost_at(x, &move);
    busiest = std::max(busiest, c);
    sum += static_cast<long double>(c) - cost_[x];
  }
  for (auto it = order_.rbegin(); it != order_.rend(); ++it) {
    if (!marked_[it->second]) {
      busiest = std::max(busiest, it->first);
      break;
    }
  }
  for (int x : affected_) marked_[x] = 0;

  std::vector<std::int64_t> max_load, load_sum, fabric;
  std::vector<Wide> squares;
  for (std::size_t l = 0; l < levels_.size(); ++l) {
    const Level& s = levels_[l];
    delta_.groups.clear();
    delta_.pairs.clear();
    link_delta(l, move, false, -1);
    link_delta(l, move, true, 1);
    fabric.push_back(fabrics_[l].busiest_after());
    std::int64_t most = 0, sum_delta = 0;
    for (int g : delta_.groups) {
      most = std::max(most, s.load[g] + load_delta_[g]);
      sum_delta += load_delta_[g];
    }
    for (auto it = s.order.rbegin(); it != s.order.rend(); ++it) {
      if (!group_touched_[it->second]) {
        most = std::max(most, it->first);
        break;
      }
    }
    for (int g : delta_.groups) {
      group_touched_[g] = 0;
      load_delta_[g] = 0;
      message_delta_[g] = 0;
    }
    std::sort(delta_.pairs.begin(), delta_.pairs.end());
    Wide sq = s.squares;
    for (std::size_t i = 0; i < delta_.pairs.size();) {
      std::size_t j = i;
      std::int64_t d = 0;
      for (; j < delta_.pairs.size() && delta_.pairs[j].first == delta_.pairs[i].first; ++j) {
        d += delta_.pairs[j].second;
      }
      if (d != 0) {
        const auto found = s.pairs.find(delta_.pairs[i].first);
        const Wide before = found == s.pairs.end() ? 0 : found->second;
        sq += (before + d) * (before + d) - before * before;
      }
      i = j;
    }
    max_load.push_back(most);
    load_sum.push_back(s.load_sum + sum_delta);
    squares.push_back(sq);
  }
  return combine(spec_, *stencil_, busiest, static_cast<double>(sum), levels_of(spec_), max_load,
                 load_sum, squares, fabric);
}

void StencilState::apply(const Move& move) {
  // Links: the moved messages' old share out, the new one in.
  for (std::size_t l = 0; l < levels_.size(); ++l) {
    Level& s = levels_[l];
    delta_.groups.clear();
    delta_.pairs.clear();
    link_delta(l, move, false, -1);
    link_delta(l, move, true, 1);
    fabrics_[l].apply();
    for (int g : delta_.groups) {
      s.order.erase({s.load[g], g});
      s.load[g] += load_delta_[g];
      s.messages[g] += message_delta_[g];
      s.load_sum += load_delta_[g];
      s.order.emplace(s.load[g], g);
      group_touched_[g] = 0;
      load_delta_[g] = 0;
      message_delta_[g] = 0;
    }
    for (const auto& [key, d] : delta_.pairs) {
      std::int64_t& units = s.pairs[key];
      s.squares += static_cast<Wide>(units + d) * (units + d) - static_cast<Wide>(units) * units;
      units += d;
      if (units == 0) s.pairs.erase(key);
    }
  }
  affected_positions(move);
  for (int x : affected_) marked_[x] = 0;
  if (move.n == 2) {
    labelling_.swap_positions(move.pos[0], move.pos[1]);
  } else {
    labelling_.cycle_positions(move.pos[0], move.pos[1], move.pos[2]);
  }
  for (int x : affected_) {
    const double c = cost_at(x, nullptr);
    order_.erase({cost_[x], x});
    rank_sum_ += static_cast<long double>(c) - cost_[x];
    cost_[x] = c;
    order_.emplace(c, x);
  }
  value_ = recompute_value();
}

Evaluation StencilState::evaluation() const {
  Evaluation e;
  e.value = value_;
  StencilSummary& s = e.stencil.emplace();
  const double busiest = order_.rbegin()->first;
  s.busiest_rank = busiest;
  s.busiest_position = order_.lower_bound({busiest, INT_MIN})->second;
  s.mean_rank = static_cast<double>(rank_sum_) / grid_.size();
  std::vector<int> coords(static_cast<std::size_t>(grid_.ndims()), 0);
  for (int x = 0; x < grid_.size(); ++x, next_coords(grid_, coords)) {
    for (int o = 0; o < stencil_->offsets(); ++o)
      s.messages += stencil_->neighbour(coords, x, o) >= 0;
  }
  const std::vector<LinkLevel>& levels = levels_of(spec_);
  for (std::size_t l = 0; l < levels.size(); ++l) {
    const Level& st = levels_[l];
    LevelTraffic t;
    t.groups = levels[l].groups;
    t.flow_cost = levels[l].flow_cost;
    std::int64_t all = 0;
    for (int g = 0; g < t.groups; ++g) {
      all += st.messages[g];
      if (st.messages[g] > t.busiest_pairs) {
        t.busiest_pairs = st.messages[g];
        t.busiest_group = g;
      }
    }
    t.crossing_pairs = all / 2;
    t.busiest_load = static_cast<double>(st.order.rbegin()->first) * stencil_->unit_weight();
    t.total_load = static_cast<double>(st.load_sum) * stencil_->unit_weight();
    summarise_fabric(levels[l], fabrics_[l].loads(), stencil_->unit_weight(), t);
    s.levels.push_back(t);
  }
  return e;
}

// One time in four the busiest rank; one in four a rank of the busiest
// group (the level that weighs most), the one with the most messages out
// of it among a few; otherwise the costlier of a few random positions.
SearchFocus StencilState::focus(std::int64_t, SplitMix64& rng) const {
  SearchFocus f;
  const int p = grid_.size();
  const auto random_position = [&] {
    return static_cast<int>(rng.below(static_cast<std::uint64_t>(p)));
  };
  const std::uint64_t choice = rng.below(4);
  if (choice == 0) {
    f.position = NewRank(order_.rbegin()->second);
    return f;
  }
  const std::vector<LinkLevel>& levels = levels_of(spec_);
  if (choice == 1 && !levels.empty()) {
    f.position =
        member_of_busiest_group(levels, levels_, labelling_, rng, [&](int r, std::size_t l) {
          const int x = labelling_.new_of(OldRank(r)).value();
          const std::vector<int> coords = grid_.coords(NewRank(x));
          std::int64_t out = 0;
          for (int o = 0; o < stencil_->offsets(); ++o) {
            const int y = stencil_->neighbour(coords, x, o);
            if (y >= 0 && levels[l].group_of[labelling_.old_of(NewRank(y)).value()] !=
                              levels[l].group_of[r]) {
              ++out;
            }
          }
          return out;
        });
    return f;
  }
  int best = random_position();
  for (int tries = 1; tries < 4; ++tries) {
    const int x = random_position();
    if (cost_[x] > cost_[best]) best = x;
  }
  f.position = NewRank(best);
  return f;
}

NewRank StencilState::partner(const SearchFocus& focus, SplitMix64& rng) const {
  const std::vector<int> coords = grid_.coords(focus.position);
  for (int tries = 0; tries < 8; ++tries) {
    const int o = static_cast<int>(rng.below(static_cast<std::uint64_t>(stencil_->offsets())));
    const int y = stencil_->neighbour(coords, focus.position.value(), o);
    if (y >= 0) return NewRank(y);
  }
  return focus.position;
}

}  // namespace

Evaluation evaluate_stencil(const Costs& costs, const Grid& grid, const Labelling& labelling,
                            const ObjectiveSpec& spec) {
  const std::shared_ptr<const Stencil> stencil = spec.stencil_on(grid);
  const std::vector<LinkLevel>& levels = levels_of(spec);
  Evaluation e;
  StencilSummary& s = e.stencil.emplace();
  std::vector<std::vector<std::int64_t>> load(levels.size()), messages(levels.size());
  std::vector<std::unordered_map<std::uint64_t, std::int64_t>> pairs(levels.size());
  std::vector<FabricLoads> through_fabric;
  for (const LinkLevel& level : levels) through_fabric.emplace_back(level);
  for (std::size_t l = 0; l < levels.size(); ++l) {
    load[l].assign(static_cast<std::size_t>(levels[l].groups), 0);
    messages[l].assign(static_cast<std::size_t>(levels[l].groups), 0);
  }
  double sum = 0;
  std::vector<int> coords(static_cast<std::size_t>(grid.ndims()), 0);
  const auto old_at = [&](int y) { return labelling.old_of(NewRank(y)); };
  for (int x = 0; x < grid.size(); ++x, next_coords(grid, coords)) {
    const double c = visit_costs(costs, [&](const auto& concrete) {
      return position_cost(concrete, *stencil, coords, x, old_at);
    });
    sum += c;
    if (x == 0 || c > s.busiest_rank) {
      s.busiest_rank = c;
      s.busiest_position = x;
    }
    for (int o = 0; o < stencil->offsets(); ++o) {
      const int y = stencil->neighbour(coords, x, o);
      if (y < 0) continue;
      ++s.messages;
      for (std::size_t l = 0; l < levels.size(); ++l) {
        const int gx = levels[l].group_of[old_at(x).value()];
        const int gy = levels[l].group_of[old_at(y).value()];
        if (gx == gy) continue;
        load[l][gx] += stencil->units(o);
        messages[l][gx] += 1;
        pairs[l][pair_key(gx, gy, levels[l].groups)] += stencil->units(o);
        through_fabric[l].add(gx, gy, stencil->units(o));
      }
    }
  }
  s.mean_rank = sum / grid.size();
  std::vector<std::int64_t> max_load, load_sum, fabric;
  std::vector<Wide> squares;
  for (std::size_t l = 0; l < levels.size(); ++l) {
    LevelTraffic t;
    t.groups = levels[l].groups;
    t.flow_cost = levels[l].flow_cost;
    std::int64_t most = 0, all_load = 0, all_messages = 0;
    for (int g = 0; g < t.groups; ++g) {
      most = std::max(most, load[l][g]);
      all_load += load[l][g];
      all_messages += messages[l][g];
      if (messages[l][g] > t.busiest_pairs) {
        t.busiest_pairs = messages[l][g];
        t.busiest_group = g;
      }
    }
    t.crossing_pairs = all_messages / 2;
    t.busiest_load = static_cast<double>(most) * stencil->unit_weight();
    t.total_load = static_cast<double>(all_load) * stencil->unit_weight();
    fabric.push_back(
        summarise_fabric(levels[l], through_fabric[l].loads(), stencil->unit_weight(), t));
    s.levels.push_back(t);
    Wide sq = 0;
    for (const auto& [key, units] : pairs[l]) sq += static_cast<Wide>(units) * units;
    max_load.push_back(most);
    load_sum.push_back(all_load);
    squares.push_back(sq);
  }
  e.value =
      combine(spec, *stencil, s.busiest_rank, sum, levels, max_load, load_sum, squares, fabric);
  return e;
}

std::unique_ptr<PatternState> make_stencil_state(const Costs& costs, const Grid& grid,
                                                 Labelling labelling, const ObjectiveSpec& spec) {
  return std::make_unique<StencilState>(costs, grid, std::move(labelling), spec);
}

}  // namespace rankshape::detail
