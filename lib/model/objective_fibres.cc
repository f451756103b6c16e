// The fibres pattern: full evaluation and the incremental state (see
// objective.h).
#include <algorithm>
#include <stdexcept>

#include "lib/model/objective_state.h"

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

// A fibre on a structured machine, its members grouped by node: the pairs
// inside a node go through the core costs one by one, the others by pairs
// of racks (pairs of nodes with a node matrix), weighted by how many
// members each holds. Exact, and at 1,048,576 ranks on a 128x128x64 grid
// it is what makes a full evaluation affordable: a fibre of 128 ranks
// scattered over as many nodes of 16 racks costs 16 x 16 rack pairs
// instead of 8,128 pair costs, and one of node boxes (32 nodes of 4) 192
// core pairs and 32 x 32 node pairs at most. Short fibres keep the plain
// loop.
constexpr int kGroupedFibre = 24;

double cost_of_members(const StructuredCosts& costs, const OldRank* members, int n,
                       FibreCost kind) {
  if (n <= kGroupedFibre) return cost_of_members<StructuredCosts>(costs, members, n, kind);
  const StructuredSpec& spec = costs.spec();
  double result = 0;
  const auto add = [&](double cost, double pairs) {
    if (pairs <= 0) return;
    result = kind == FibreCost::kSumOfPairs ? result + cost * pairs : std::max(result, cost);
  };
  thread_local std::vector<RankLocation> at;
  at.resize(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) at[static_cast<std::size_t>(i)] = costs.location(members[i]);
  std::sort(at.begin(), at.end(), [](const RankLocation& a, const RankLocation& b) {
    return a.node != b.node ? a.node < b.node : a.core < b.core;
  });
  struct Group {
    int key;        // node, then rack
    double count;   // members there
    double inside;  // pairs among them on one node
  };
  thread_local std::vector<Group> groups;
  groups.clear();
  for (std::size_t i = 0; i < at.size();) {
    std::size_t end = i;
    while (end < at.size() && at[end].node == at[i].node) ++end;
    for (std::size_t a = i; a < end; ++a) {
      for (std::size_t b = a + 1; b < end; ++b) {
        add(spec.core_costs[static_cast<std::size_t>(at[a].core) * spec.cores_per_node +
                            at[b].core],
            1);
      }
    }
    const double count = static_cast<double>(end - i);
    groups.push_back({at[i].node, count, count * (count - 1) / 2});
    i = end;
  }
  if (!spec.node_costs.empty()) {
    for (std::size_t a = 0; a < groups.size(); ++a) {
      for (std::size_t b = a + 1; b < groups.size(); ++b) {
        add(costs.node_cost(groups[a].key, groups[b].key), groups[a].count * groups[b].count);
      }
    }
    return result;
  }
  // Nodes into racks: pairs within a rack but not a node cost the rack's
  // diagonal entry, pairs across racks their entry.
  for (Group& g : groups) g.key = costs.rack_of(g.key);
  std::sort(groups.begin(), groups.end(),
            [](const Group& a, const Group& b) { return a.key < b.key; });
  std::size_t racks = 0;
  for (std::size_t i = 0; i < groups.size(); ++i) {
    if (racks > 0 && groups[racks - 1].key == groups[i].key) {
      groups[racks - 1].count += groups[i].count;
      groups[racks - 1].inside += groups[i].inside;
    } else {
      groups[racks++] = groups[i];
    }
  }
  const auto rack_cost = [&](int a, int b) {
    return spec.rack_costs[static_cast<std::size_t>(a) * spec.racks + b];
  };
  for (std::size_t a = 0; a < racks; ++a) {
    const Group& g = groups[a];
    add(rack_cost(g.key, g.key), g.count * (g.count - 1) / 2 - g.inside);
    for (std::size_t b = a + 1; b < racks; ++b) {
      add(rack_cost(g.key, groups[b].key), g.count * groups[b].count);
    }
  }
  return result;
}

void gather_members(const Grid& grid, const Labelling& labelling, int k, int f,
                    std::vector<OldRank>& out) {
  out.resize(grid.dim(k));
  for (int t = 0; t < grid.dim(k); ++t) out[t] = labelling.old_of(grid.fibre_member(k, f, t));
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
    case Aggregate::kStep:  // not fibres objectives: check_spec() refuses them
    case Aggregate::kGraphCost:
      v.primary = total;
      break;
  }
  return v;
}

}  // namespace

double fibre_cost(const Costs& costs, const Grid& grid, const Labelling& labelling, int k, int f,
                  FibreCost kind) {
  std::vector<OldRank> members;
  gather_members(grid, labelling, k, f, members);
  return visit_costs(
      costs, [&](const auto& c) { return cost_of_members(c, members.data(), grid.dim(k), kind); });
}

namespace detail {
namespace {

// The fibres pattern under change (see IncrementalObjective).
class FibreState final : public PatternState {
 public:
  FibreState(const Costs& costs, const Grid& grid, Labelling labelling, const ObjectiveSpec& spec);

  ObjectiveValue value() const override { return value_; }
  const Labelling& labelling() const override { return labelling_; }
  Evaluation evaluation() const override;
  ObjectiveValue value_after(const Move& move) const override;
  void apply(const Move& move) override;
  bool can_improve() const override;
  SearchFocus focus(std::int64_t round, SplitMix64& rng) const override;
  NewRank partner(const SearchFocus& focus, SplitMix64& rng) const override;
  bool pointless(const SearchFocus& focus, NewRank other) const override;

 private:
  double moved_fibre_cost(const Move& move, int k, int f) const;
  void rebuild_top(int k);
  ObjectiveValue combine(const std::vector<double>& dim_max, double total) const;
  NewRank worst_member(int k, int f) const;

  // Enough top fibres per dimension that a move (at most 3 fibres per
  // dimension) always leaves one unchanged entry to compare against.
  static constexpr int kTop = 4;

  // Link load ("+links"): the load of every group of every level in every
  // dimension, and the moved fibres' part of it.
  // Loads are kept as whole numbers, sum of m (q - m) (divided by q when
  // read), so that moves applied and undone leave no rounding behind.
  bool has_links() const { return spec_.link_load && spec_.links != nullptr; }
  struct LinkChange {
    double worst = 0;        // the dimension's link load after the move
    double total_delta = 0;  // change of its part of the tie-break
  };
  void add_fibre_load(int k, int f, std::int64_t sign);
  void refresh_link_figures(int k);
  double dimension_link_load(int k) const;
  double link_total() const;
  LinkChange link_load_after(const Move& move, int k, const std::array<int, 3>& fibres,
                             int n) const;
  std::vector<std::vector<std::vector<std::int64_t>>> group_load_;  // [k][level][group]
  std::vector<std::vector<std::int64_t>> load_max_, load_sum_;      // [k][level]
  mutable std::vector<std::int64_t> scratch_delta_;                 // [group]
  mutable std::vector<char> scratch_touched_;                       // [group]
  mutable std::vector<int> scratch_list_;
  mutable std::vector<int> scratch_members_;

  const Costs& costs_;
  Grid grid_;
  Labelling labelling_;
  ObjectiveSpec spec_;
  std::vector<std::vector<double>> fibre_costs_;  // [k][f]
  std::vector<std::array<int, kTop>> top_;        // [k]: best fibres, -1 = none
  double total_ = 0;
  ObjectiveValue value_;
  mutable std::vector<double> scratch_dim_max_;  // value_after's work space
};

}  // namespace

Evaluation evaluate_fibres(const Costs& costs, const Grid& grid, const Labelling& labelling,
                           const ObjectiveSpec& spec) {
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
    std::vector<double> spread;
    e.link_load = link_load(grid, labelling, *spec.links, &spread);
    for (int k = 0; k < grid.ndims(); ++k) {
      dim_max[k] = std::max(dim_max[k], e.link_load[k]);
      total += spread[k];
    }
  }
  e.value = combine_values(spec, dim_max, total);
  return e;
}

FibreState::FibreState(const Costs& costs, const Grid& grid, Labelling labelling,
                       const ObjectiveSpec& spec)
    : costs_(costs), grid_(grid), labelling_(std::move(labelling)), spec_(spec) {
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

void FibreState::add_fibre_load(int k, int f, std::int64_t sign) {
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

void FibreState::refresh_link_figures(int k) {
  for (std::size_t l = 0; l < spec_.links->size(); ++l) {
    const std::vector<std::int64_t>& load = group_load_[k][l];
    load_max_[k][l] = *std::max_element(load.begin(), load.end());
    load_sum_[k][l] = 0;
    for (std::int64_t x : load) load_sum_[k][l] += x;
  }
}

double FibreState::dimension_link_load(int k) const {
  if (!has_links()) return 0;
  double worst = 0;
  for (std::size_t l = 0; l < spec_.links->size(); ++l) {
    worst = std::max(
        worst, (*spec_.links)[l].flow_cost * static_cast<double>(load_max_[k][l]) / grid_.dim(k));
  }
  return worst;
}

double FibreState::link_total() const {
  if (!has_links()) return 0;
  double total = 0;
  for (int k = 0; k < grid_.ndims(); ++k) {
    for (std::size_t l = 0; l < spec_.links->size(); ++l) {
      total += (*spec_.links)[l].flow_cost * static_cast<double>(load_sum_[k][l]) / grid_.dim(k);
    }
  }
  return total;
}

FibreState::LinkChange FibreState::link_load_after(const Move& move, int k,
                                                   const std::array<int, 3>& fibres, int n) const {
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

Evaluation FibreState::evaluation() const {
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

void FibreState::rebuild_top(int k) {
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

ObjectiveValue FibreState::combine(const std::vector<double>& dim_max, double total) const {
  return combine_values(spec_, dim_max, total);
}

double FibreState::moved_fibre_cost(const Move& move, int k, int f) const {
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

ObjectiveValue FibreState::value_after(const Move& move) const {
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

void FibreState::apply(const Move& move) {
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

bool FibreState::can_improve() const {
  // Only dimensions with several fibres can change: in a dimension with one
  // fibre every rank is in it whatever the labelling.
  if (grid_.size() < 2) return false;
  for (int k = 0; k < grid_.ndims(); ++k) {
    if (grid_.dim(k) > 1 && grid_.fibre_count(k) > 1) return true;
  }
  return false;
}

// Position in fibre f of dimension k whose rank costs most to the others,
// judged on up to kSample of them (long fibres would cost O(q^2)).
NewRank FibreState::worst_member(int k, int f) const {
  constexpr int kSample = 256;
  const int q = grid_.dim(k);
  const int stride = q > kSample ? q / kSample : 1;
  NewRank worst = grid_.fibre_member(k, f, 0);
  double worst_cost = -1;
  for (int t = 0; t < q; ++t) {
    const NewRank pos = grid_.fibre_member(k, f, t);
    const OldRank r = labelling_.old_of(pos);
    double sum = 0;
    visit_costs(costs_, [&](const auto& c) {
      for (int u = 0; u < q; u += stride) {
        sum += c.cost(r, labelling_.old_of(grid_.fibre_member(k, f, u)));
      }
    });
    if (sum > worst_cost) {
      worst_cost = sum;
      worst = pos;
    }
  }
  return worst;
}

// The dimensions that can change in turn; in each the worst fibre (one
// time in four a random one, so that plateaus of the max still move the
// total), and in it the rank that costs most.
SearchFocus FibreState::focus(std::int64_t round, SplitMix64& rng) const {
  std::vector<int> dims;
  for (int k = 0; k < grid_.ndims(); ++k) {
    if (grid_.dim(k) > 1 && grid_.fibre_count(k) > 1) dims.push_back(k);
  }
  SearchFocus f;
  f.dimension = dims[static_cast<std::size_t>(round % static_cast<std::int64_t>(dims.size()))];
  f.fibre = rng.below(4) == 0 ? static_cast<int>(rng.below(grid_.fibre_count(f.dimension)))
                              : top_[f.dimension][0];
  f.position = worst_member(f.dimension, f.fibre);
  return f;
}

NewRank FibreState::partner(const SearchFocus& focus, SplitMix64& rng) const {
  return grid_.fibre_member(focus.dimension, focus.fibre,
                            static_cast<int>(rng.below(grid_.dim(focus.dimension))));
}

bool FibreState::pointless(const SearchFocus& focus, NewRank other) const {
  return grid_.fibre_of(other, focus.dimension) == focus.fibre;
}

std::unique_ptr<PatternState> make_fibre_state(const Costs& costs, const Grid& grid,
                                               Labelling labelling, const ObjectiveSpec& spec) {
  return std::make_unique<FibreState>(costs, grid, std::move(labelling), spec);
}

}  // namespace detail
}  // namespace rankshape
