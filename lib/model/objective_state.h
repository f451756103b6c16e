// Inside IncrementalObjective: one state class per pattern behind a common
// interface, and the per-pattern full evaluations. Not for use outside
// lib/model (objective.h is the interface).
#ifndef RANKSHAPE_LIB_MODEL_OBJECTIVE_STATE_H_
#define RANKSHAPE_LIB_MODEL_OBJECTIVE_STATE_H_

#include <algorithm>
#include <array>
#include <cstdint>
#include <memory>
#include <set>
#include <utility>
#include <vector>

#include "lib/model/objective.h"

namespace rankshape::detail {

/// A swap (n = 2) or 3-cycle (n = 3): pos[i] receives old rank arriving[i].
struct Move {
  int n = 0;
  std::array<NewRank, 3> pos;
  std::array<OldRank, 3> arriving;

  /// The old rank at position x after the move (before: labelling).
  OldRank old_at(const Labelling& labelling, NewRank x) const {
    for (int i = 0; i < n; ++i) {
      if (pos[i] == x) return arriving[i];
    }
    return labelling.old_of(x);
  }
};

/// Hill-climbing's move to relieve the links: the level whose busiest group
/// costs most (its flow cost times the group's load), and of 8 members of
/// that group drawn at random the one that sends most out of it
/// (sent_out(r, l): old rank r's traffic leaving its group at level l, in
/// any unit). LevelState has `order` (a set of (load, group), busiest
/// last) and `members` (the old ranks of each group). A random position if
/// the busiest group has no members.
template <class LevelState, class SentOut>
NewRank member_of_busiest_group(const std::vector<LinkLevel>& levels,
                                const std::vector<LevelState>& states, const Labelling& labelling,
                                SplitMix64& rng, SentOut sent_out) {
  std::size_t heaviest = 0;
  double weight = -1;
  for (std::size_t l = 0; l < levels.size(); ++l) {
    const double w = levels[l].flow_cost * static_cast<double>(states[l].order.rbegin()->first);
    if (w > weight) {
      weight = w;
      heaviest = l;
    }
  }
  const LevelState& s = states[heaviest];
  const std::vector<int>& members = s.members[static_cast<std::size_t>(s.order.rbegin()->second)];
  int best = static_cast<int>(rng.below(static_cast<std::uint64_t>(labelling.size())));
  std::int64_t best_out = -1;
  for (int tries = 0; tries < 8 && !members.empty(); ++tries) {
    const int r = members[rng.below(members.size())];
    const std::int64_t out = sent_out(r, heaviest);
    if (out > best_out) {
      best_out = out;
      best = labelling.new_of(OldRank(r)).value();
    }
  }
  return NewRank(best);
}

/// Fills a summary's fabric figures from every parent's traffic through a
/// level's fabric (in units of `unit`); returns the busiest parent's traffic
/// in units (0 without a fabric).
inline std::int64_t summarise_fabric(const LinkLevel& level, const std::vector<std::int64_t>& load,
                                     double unit, LevelTraffic& traffic) {
  traffic.fabric_cost = level.fabric_cost;
  if (level.fabric_cost == 0 || load.empty()) return 0;
  const auto most = std::max_element(load.begin(), load.end());
  traffic.busiest_parent = static_cast<int>(most - load.begin());
  traffic.busiest_fabric_load = static_cast<double>(*most) * unit;
  return *most;
}

/// The fabric a level's groups share (LinkLevel::fabric_cost) under
/// change: every parent's traffic through its fabric, each message or edge
/// between groups once per parent it crosses (LinkLevel::for_each_fabric).
/// A move's changes are gathered with add(), then read by busiest_after()
/// or applied by apply(), which both clear them. Idle (busiest() 0) when the
/// level has no fabric cost.
class FabricState {
 public:
  /// load: every parent's traffic before any change.
  FabricState(const LinkLevel& level, std::vector<std::int64_t> load);
  /// The busiest parent's traffic.
  std::int64_t busiest() const { return order_.empty() ? 0 : order_.rbegin()->first; }
  /// Every parent's traffic (empty when idle).
  const std::vector<std::int64_t>& loads() const { return load_; }
  /// Gathers units more (or fewer, negative) between groups a != b.
  void add(int a, int b, std::int64_t units) const;
  /// busiest() after the gathered changes, which are dropped.
  std::int64_t busiest_after() const;
  /// Makes the gathered changes.
  void apply();

 private:
  void clear() const;

  const LinkLevel* level_ = nullptr;              // null when idle
  std::vector<std::int64_t> load_;                // [parent]
  std::set<std::pair<std::int64_t, int>> order_;  // (load, parent)
  mutable std::vector<std::int64_t> delta_;       // [parent]
  mutable std::vector<int> touched_;
  mutable std::vector<char> marked_;  // [parent]
};

/// Every parent's traffic through a level's fabric, from the traffic
/// between groups: add(a, b, units) for each message or edge.
class FabricLoads {
 public:
  explicit FabricLoads(const LinkLevel& level)
      : level_(level), load_(static_cast<std::size_t>(std::max(1, level.parents)), 0) {}
  void add(int a, int b, std::int64_t units) {
    level_.for_each_fabric(a, b, [&](int p) { load_[static_cast<std::size_t>(p)] += units; });
  }
  const std::vector<std::int64_t>& loads() const { return load_; }

 private:
  const LinkLevel& level_;
  std::vector<std::int64_t> load_;  // [parent]
};

class PatternState {
 public:
  virtual ~PatternState() = default;
  virtual ObjectiveValue value() const = 0;
  virtual const Labelling& labelling() const = 0;
  virtual Evaluation evaluation() const = 0;
  virtual ObjectiveValue value_after(const Move& move) const = 0;
  virtual void apply(const Move& move) = 0;
  virtual bool can_improve() const = 0;
  virtual SearchFocus focus(std::int64_t round, SplitMix64& rng) const = 0;
  virtual NewRank partner(const SearchFocus& focus, SplitMix64& rng) const = 0;
  virtual bool pointless(const SearchFocus& focus, NewRank other) const = 0;
};

/// spec is checked, and has its links when it asks for them.
std::unique_ptr<PatternState> make_fibre_state(const Costs& costs, const Grid& grid,
                                               Labelling labelling, const ObjectiveSpec& spec);
std::unique_ptr<PatternState> make_stencil_state(const Costs& costs, const Grid& grid,
                                                 Labelling labelling, const ObjectiveSpec& spec);
/// The graph pattern: spec.graph is set, its vertices are the positions.
std::unique_ptr<PatternState> make_graph_state(const Costs& costs, Labelling labelling,
                                               const ObjectiveSpec& spec);

Evaluation evaluate_fibres(const Costs& costs, const Grid& grid, const Labelling& labelling,
                           const ObjectiveSpec& spec);
Evaluation evaluate_stencil(const Costs& costs, const Grid& grid, const Labelling& labelling,
                            const ObjectiveSpec& spec);
Evaluation evaluate_graph(const Costs& costs, const Labelling& labelling,
                          const ObjectiveSpec& spec);

}  // namespace rankshape::detail

#endif  // RANKSHAPE_LIB_MODEL_OBJECTIVE_STATE_H_
