// FabricState (objective_state.h): the per-parent sums behind a level's
// fabric term, kept under change like the groups' own loads.
#include <algorithm>

#include "lib/model/objective_state.h"

namespace rankshape::detail {

FabricState::FabricState(const LinkLevel& level, const std::vector<std::int64_t>& load) {
  if (level.fabric_cost == 0) return;
  parent_of_ = level.parent_of;
  const auto parents = static_cast<std::size_t>(std::max(1, level.parents));
  load_.assign(parents, 0);
  delta_.assign(parents, 0);
  marked_.assign(parents, 0);
  for (std::size_t g = 0; g < load.size(); ++g) {
    load_[static_cast<std::size_t>(parent(static_cast<int>(g)))] += load[g];
  }
  for (std::size_t p = 0; p < parents; ++p) order_.emplace(load_[p], static_cast<int>(p));
}

void FabricState::gather(const std::vector<int>& touched,
                         const std::vector<std::int64_t>& delta) const {
  for (int g : touched) {
    const int p = parent(g);
    if (!marked_[static_cast<std::size_t>(p)]) {
      marked_[static_cast<std::size_t>(p)] = 1;
      touched_parents_.push_back(p);
    }
    delta_[static_cast<std::size_t>(p)] += delta[static_cast<std::size_t>(g)];
  }
}

void FabricState::clear() const {
  for (int p : touched_parents_) {
    marked_[static_cast<std::size_t>(p)] = 0;
    delta_[static_cast<std::size_t>(p)] = 0;
  }
  touched_parents_.clear();
}

std::int64_t FabricState::busiest_after(const std::vector<int>& touched,
                                        const std::vector<std::int64_t>& delta) const {
  if (order_.empty()) return 0;
  gather(touched, delta);
  std::int64_t most = 0;
  for (int p : touched_parents_) {
    most = std::max(most, load_[static_cast<std::size_t>(p)] + delta_[static_cast<std::size_t>(p)]);
  }
  for (auto it = order_.rbegin(); it != order_.rend(); ++it) {
    if (!marked_[static_cast<std::size_t>(it->second)]) {
      most = std::max(most, it->first);
      break;
    }
  }
  clear();
  return most;
}

void FabricState::apply(const std::vector<int>& touched, const std::vector<std::int64_t>& delta) {
  if (order_.empty()) return;
  gather(touched, delta);
  for (int p : touched_parents_) {
    std::int64_t& load = load_[static_cast<std::size_t>(p)];
    order_.erase({load, p});
    load += delta_[static_cast<std::size_t>(p)];
    order_.emplace(load, p);
  }
  clear();
}

}  // namespace rankshape::detail
