// The graph pattern: full evaluation and the incremental state (see
// objective.h). Link loads are sums of the graph's whole units, so adding
// and removing edges is exact; the communication cost is a long double sum
// of per-edge terms.
#include <algorithm>
#include <set>
#include <stdexcept>

#include "lib/model/objective_state.h"

namespace rankshape::detail {
namespace {

const std::vector<LinkLevel>& levels_of(const ObjectiveSpec& spec) {
  static const std::vector<LinkLevel> none;
  return spec.aggregate == Aggregate::kGraphCost && spec.links ? *spec.links : none;
}

// The value from its parts: the communication cost, and per level the
// busiest group's load, the sum of all groups' loads and the busiest
// parent's fabric load (in units).
ObjectiveValue combine(const ObjectiveSpec& spec, double unit, double communication,
                       const std::vector<std::int64_t>& max_load,
                       const std::vector<std::int64_t>& load_sum,
                       const std::vector<std::int64_t>& fabric) {
  ObjectiveValue v;
  v.primary = v.total = communication;
  const std::vector<LinkLevel>& levels = levels_of(spec);
  for (std::size_t l = 0; l < levels.size(); ++l) {
    const double flow = levels[l].flow_cost * unit;
    const double through_fabric = levels[l].fabric_cost * unit * static_cast<double>(fabric[l]);
    v.primary += flow * static_cast<double>(max_load[l]) + through_fabric;
    v.total += flow * static_cast<double>(load_sum[l]) + through_fabric;
  }
  return v;
}

// w(x, y) D(x, y) for adjacency entry i of x, old() giving the rank at a
// position.
template <class C, class OldAt>
double edge_cost(const C& costs, const TrafficGraph& graph, int x, std::size_t i, OldAt&& old_at) {
  return graph.weight(i) * costs.cost(old_at(x), old_at(graph.neighbour(i)));
}

// Sum of w D over x's edges.
template <class C, class OldAt>
double vertex_cost(const C& costs, const TrafficGraph& graph, int x, OldAt&& old_at) {
  double sum = 0;
  for (std::size_t i = graph.begin(x); i < graph.end(x); ++i) {
    sum += edge_cost(costs, graph, x, i, old_at);
  }
  return sum;
}

class GraphState final : public PatternState {
 public:
  GraphState(const Costs& costs, Labelling labelling, const ObjectiveSpec& spec);

  ObjectiveValue value() const override { return value_; }
  const Labelling& labelling() const override { return labelling_; }
  Evaluation evaluation() const override {
    Evaluation e = evaluate_graph(costs_, labelling_, spec_);
    e.value = value_;
    return e;
  }
  ObjectiveValue value_after(const Move& move) const override;
  void apply(const Move& move) override;
  bool can_improve() const override { return labelling_.size() >= 2 && graph_.edges() > 0; }
  SearchFocus focus(std::int64_t round, SplitMix64& rng) const override;
  NewRank partner(const SearchFocus& focus, SplitMix64& rng) const override;
  bool pointless(const SearchFocus& focus, NewRank other) const override {
    return other == focus.position;
  }

 private:
  struct Level {
    std::vector<std::int64_t> load;                // [group] units over its links
    std::vector<std::int64_t> edges_out;           // [group] edges leaving it
    std::set<std::pair<std::int64_t, int>> order;  // (load, group)
    std::int64_t load_sum = 0;
    std::vector<std::vector<int>> members;  // [group] old ranks
  };

  // Calls f(x, i) for every edge (adjacency entry i of x) with an end at a
  // moved position, each edge once.
  template <class F>
  void for_each_moved_edge(const Move& move, F&& f) const;
  // The communication cost's change under the move.
  double communication_delta(const Move& move) const;
  // Adds the move's load changes on level l to the work arrays.
  void link_delta(std::size_t l, const Move& move) const;
  void clear_delta() const;
  ObjectiveValue recompute_value() const;

  const Costs& costs_;
  ObjectiveSpec spec_;
  const TrafficGraph& graph_;
  Labelling labelling_;
  long double communication_ = 0;
  std::vector<Level> levels_;
  std::vector<FabricState> fabrics_;  // [level]
  ObjectiveValue value_;

  // Work space of value_after() and apply().
  mutable std::vector<std::int64_t> load_delta_, edge_delta_;  // [group]
  mutable std::vector<char> group_touched_;                    // [group]
  mutable std::vector<int> touched_;
};

GraphState::GraphState(const Costs& costs, Labelling labelling, const ObjectiveSpec& spec)
    : costs_(costs), spec_(spec), graph_(*spec.graph), labelling_(std::move(labelling)) {
  const int p = labelling_.size();
  const auto old_at = [&](int y) { return labelling_.old_of(NewRank(y)); };
  visit_costs(costs_, [&](const auto& c) {
    for (int x = 0; x < p; ++x) {
      for (std::size_t i = graph_.begin(x); i < graph_.end(x); ++i) {
        if (graph_.neighbour(i) > x) communication_ += edge_cost(c, graph_, x, i, old_at);
      }
    }
  });
  int most_groups = 0;
  for (const LinkLevel& level : levels_of(spec_)) {
    Level s;
    s.load.assign(static_cast<std::size_t>(level.groups), 0);
    s.edges_out.assign(static_cast<std::size_t>(level.groups), 0);
    s.members.resize(static_cast<std::size_t>(level.groups));
    for (int r = 0; r < p; ++r) s.members[static_cast<std::size_t>(level.group_of[r])].push_back(r);
    FabricLoads fabric(level);
    for (int x = 0; x < p; ++x) {
      const int gx = level.group_of[old_at(x).value()];
      for (std::size_t i = graph_.begin(x); i < graph_.end(x); ++i) {
        const int y = graph_.neighbour(i);
        const int gy = level.group_of[old_at(y).value()];
        if (gy == gx) continue;
        s.load[gx] += graph_.units(i);
        s.edges_out[gx] += 1;
        if (y > x) fabric.add(gx, gy, graph_.units(i));  // each edge once
      }
    }
    for (int g = 0; g < level.groups; ++g) {
      s.order.emplace(s.load[g], g);
      s.load_sum += s.load[g];
    }
    fabrics_.emplace_back(level, fabric.loads());
    levels_.push_back(std::move(s));
    most_groups = std::max(most_groups, level.groups);
  }
  load_delta_.assign(static_cast<std::size_t>(most_groups), 0);
  edge_delta_.assign(static_cast<std::size_t>(most_groups), 0);
  group_touched_.assign(static_cast<std::size_t>(most_groups), 0);
  value_ = recompute_value();
}

ObjectiveValue GraphState::recompute_value() const {
  std::vector<std::int64_t> max_load, load_sum, fabric;
  for (std::size_t l = 0; l < levels_.size(); ++l) {
    const Level& s = levels_[l];
    max_load.push_back(s.order.empty() ? 0 : s.order.rbegin()->first);
    load_sum.push_back(s.load_sum);
    fabric.push_back(fabrics_[l].busiest());
  }
  return combine(spec_, graph_.unit_weight(), static_cast<double>(communication_), max_load,
                 load_sum, fabric);
}

template <class F>
void GraphState::for_each_moved_edge(const Move& move, F&& f) const {
  const auto moved = [&](int y) {
    for (int i = 0; i < move.n; ++i) {
      if (move.pos[i].value() == y) return true;
    }
    return false;
  };
  for (int k = 0; k < move.n; ++k) {
    const int x = move.pos[k].value();
    for (std::size_t i = graph_.begin(x); i < graph_.end(x); ++i) {
      const int y = graph_.neighbour(i);
      // An edge between two moved positions is counted from its smaller end.
      if (moved(y) && y < x) continue;
      f(x, i);
    }
  }
}

double GraphState::communication_delta(const Move& move) const {
  return visit_costs(costs_, [&](const auto& c) {
    double delta = 0;
    const auto before = [&](int y) { return labelling_.old_of(NewRank(y)); };
    const auto after = [&](int y) { return move.old_at(labelling_, NewRank(y)); };
    for_each_moved_edge(move, [&](int x, std::size_t i) {
      delta += edge_cost(c, graph_, x, i, after) - edge_cost(c, graph_, x, i, before);
    });
    return delta;
  });
}

void GraphState::link_delta(std::size_t l, const Move& move) const {
  const LinkLevel& level = levels_of(spec_)[l];
  const auto add = [&](int g, std::int64_t units, std::int64_t sign) {
    if (!group_touched_[g]) {
      group_touched_[g] = 1;
      touched_.push_back(g);
    }
    load_delta_[g] += sign * units;
    edge_delta_[g] += sign;
  };
  for_each_moved_edge(move, [&](int x, std::size_t i) {
    const int y = graph_.neighbour(i);
    const int bx = level.group_of[labelling_.old_of(NewRank(x)).value()];
    const int by = level.group_of[labelling_.old_of(NewRank(y)).value()];
    const int ax = level.group_of[move.old_at(labelling_, NewRank(x)).value()];
    const int ay = level.group_of[move.old_at(labelling_, NewRank(y)).value()];
    if (bx != by) {
      add(bx, graph_.units(i), -1);
      add(by, graph_.units(i), -1);
      fabrics_[l].add(bx, by, -graph_.units(i));
    }
    if (ax != ay) {
      add(ax, graph_.units(i), 1);
      add(ay, graph_.units(i), 1);
      fabrics_[l].add(ax, ay, graph_.units(i));
    }
  });
}

void GraphState::clear_delta() const {
  for (int g : touched_) {
    group_touched_[g] = 0;
    load_delta_[g] = 0;
    edge_delta_[g] = 0;
  }
  touched_.clear();
}

ObjectiveValue GraphState::value_after(const Move& move) const {
  const double communication = static_cast<double>(communication_ + communication_delta(move));
  std::vector<std::int64_t> max_load, load_sum, fabric;
  for (std::size_t l = 0; l < levels_.size(); ++l) {
    const Level& s = levels_[l];
    link_delta(l, move);
    fabric.push_back(fabrics_[l].busiest_after());
    std::int64_t most = 0, sum = s.load_sum;
    for (int g : touched_) {
      most = std::max(most, s.load[g] + load_delta_[g]);
      sum += load_delta_[g];
    }
    for (auto it = s.order.rbegin(); it != s.order.rend(); ++it) {
      if (!group_touched_[it->second]) {
        most = std::max(most, it->first);
        break;
      }
    }
    clear_delta();
    max_load.push_back(most);
    load_sum.push_back(sum);
  }
  return combine(spec_, graph_.unit_weight(), communication, max_load, load_sum, fabric);
}

void GraphState::apply(const Move& move) {
  communication_ += communication_delta(move);
  for (std::size_t l = 0; l < levels_.size(); ++l) {
    Level& s = levels_[l];
    link_delta(l, move);
    fabrics_[l].apply();
    for (int g : touched_) {
      s.order.erase({s.load[g], g});
      s.load[g] += load_delta_[g];
      s.edges_out[g] += edge_delta_[g];
      s.load_sum += load_delta_[g];
      s.order.emplace(s.load[g], g);
    }
    clear_delta();
  }
  if (move.n == 2) {
    labelling_.swap_positions(move.pos[0], move.pos[1]);
  } else {
    labelling_.cycle_positions(move.pos[0], move.pos[1], move.pos[2]);
  }
  value_ = recompute_value();
}

// One time in four a rank of the busiest group (at the level that weighs
// most), the one with the most weight leaving it among a few; otherwise
// the costliest of a few random ranks.
SearchFocus GraphState::focus(std::int64_t, SplitMix64& rng) const {
  SearchFocus f;
  const int p = labelling_.size();
  const auto old_at = [&](int y) { return labelling_.old_of(NewRank(y)); };
  const auto random_position = [&] {
    return static_cast<int>(rng.below(static_cast<std::uint64_t>(p)));
  };
  const std::vector<LinkLevel>& levels = levels_of(spec_);
  if (rng.below(4) == 0 && !levels.empty()) {
    f.position =
        member_of_busiest_group(levels, levels_, labelling_, rng, [&](int r, std::size_t l) {
          const int x = labelling_.new_of(OldRank(r)).value();
          std::int64_t out = 0;
          for (std::size_t i = graph_.begin(x); i < graph_.end(x); ++i) {
            if (levels[l].group_of[old_at(graph_.neighbour(i)).value()] != levels[l].group_of[r]) {
              out += graph_.units(i);
            }
          }
          return out;
        });
    return f;
  }
  visit_costs(costs_, [&](const auto& c) {
    int best = random_position();
    double best_cost = vertex_cost(c, graph_, best, old_at);
    for (int tries = 1; tries < 4; ++tries) {
      const int x = random_position();
      const double cost = vertex_cost(c, graph_, x, old_at);
      if (cost > best_cost) {
        best = x;
        best_cost = cost;
      }
    }
    f.position = NewRank(best);
  });
  return f;
}

// A neighbour of the focus: the heaviest of two drawn at random.
NewRank GraphState::partner(const SearchFocus& focus, SplitMix64& rng) const {
  const int x = focus.position.value();
  const auto degree = static_cast<std::uint64_t>(graph_.degree(x));
  if (degree == 0) return focus.position;
  const std::size_t i = graph_.begin(x) + rng.below(degree);
  const std::size_t j = graph_.begin(x) + rng.below(degree);
  return NewRank(graph_.neighbour(graph_.units(i) >= graph_.units(j) ? i : j));
}

}  // namespace

Evaluation evaluate_graph(const Costs& costs, const Labelling& labelling,
                          const ObjectiveSpec& spec) {
  const TrafficGraph& graph = *spec.graph;
  const std::vector<LinkLevel>& levels = levels_of(spec);
  const int p = labelling.size();
  const auto old_at = [&](int y) { return labelling.old_of(NewRank(y)); };
  Evaluation e;
  GraphSummary& s = e.graph.emplace();
  s.weight = graph.total_weight();
  s.edges = graph.edges();
  long double communication = 0;
  visit_costs(costs, [&](const auto& c) {
    for (int x = 0; x < p; ++x) {
      double mine = 0;
      for (std::size_t i = graph.begin(x); i < graph.end(x); ++i) {
        const double cost = edge_cost(c, graph, x, i, old_at);
        mine += cost;
        if (graph.neighbour(i) > x) communication += cost;
      }
      if (x == 0 || mine > s.busiest_rank) {
        s.busiest_rank = mine;
        s.busiest_position = x;
      }
    }
  });
  s.communication = static_cast<double>(communication);
  std::vector<std::int64_t> max_load, load_sum, fabric;
  for (const LinkLevel& level : levels) {
    std::vector<std::int64_t> load(static_cast<std::size_t>(level.groups), 0);
    std::vector<std::int64_t> out(static_cast<std::size_t>(level.groups), 0);
    FabricLoads through_fabric(level);
    for (int x = 0; x < p; ++x) {
      const int gx = level.group_of[old_at(x).value()];
      for (std::size_t i = graph.begin(x); i < graph.end(x); ++i) {
        const int y = graph.neighbour(i);
        const int gy = level.group_of[old_at(y).value()];
        if (gy == gx) continue;
        load[gx] += graph.units(i);
        out[gx] += 1;
        if (y > x) through_fabric.add(gx, gy, graph.units(i));  // each edge once
      }
    }
    LevelTraffic t;
    t.groups = level.groups;
    t.flow_cost = level.flow_cost;
    std::int64_t most = 0, all_load = 0, all_edges = 0;
    for (int g = 0; g < level.groups; ++g) {
      most = std::max(most, load[g]);
      all_load += load[g];
      all_edges += out[g];
      if (out[g] > t.busiest_pairs) {
        t.busiest_pairs = out[g];
        t.busiest_group = g;
      }
    }
    t.crossing_pairs = all_edges / 2;
    t.busiest_load = static_cast<double>(most) * graph.unit_weight();
    t.total_load = static_cast<double>(all_load) * graph.unit_weight();
    fabric.push_back(summarise_fabric(level, through_fabric.loads(), graph.unit_weight(), t));
    s.levels.push_back(t);
    max_load.push_back(most);
    load_sum.push_back(all_load);
  }
  e.value = combine(spec, graph.unit_weight(), s.communication, max_load, load_sum, fabric);
  return e;
}

std::unique_ptr<PatternState> make_graph_state(const Costs& costs, Labelling labelling,
                                               const ObjectiveSpec& spec) {
  return std::make_unique<GraphState>(costs, std::move(labelling), spec);
}

}  // namespace rankshape::detail
