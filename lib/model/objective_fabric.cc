// FabricState (objective_state.h): the per-parent traffic behind a level's
// fabric term, kept under change like the groups' own loads.
#include <algorithm>

#include "lib/model/objective_state.h"

namespace rankshape::detail {

FabricState::FabricState(const LinkLevel& level, std::vector<std::int64_t> load) {
  if (level.fabric_cost == 0) return;
  level_ = &level;
  load_ = std::move(load);
  delta_.assign(load_.size(), 0);
  marked_.assign(load_.size(), 0);
  for (std::size_t p = 0; p < load_.size(); ++p) order_.emplace(load_[p], static_cast<int>(p));
}

void FabricState::add(int a, int b, std::int64_t units) const {
  if (level_ == nullptr) return;
  level_->for_each_fabric(a, b, [&](int p) {
    const auto i = static_cast<std::size_t>(p);
    if (!marked_[i]) {
      marked_[i] = 1;
      touched_.push_back(p);
    }
    delta_[i] += units;
  });
}

void FabricState::clear() const {
  for (int p : touched_) {
    marked_[static_cast<std::size_t>(p)] = 0;
    delta_[static_cast<std::size_t>(p)] = 0;
  }
  touched_.clear();
}

std::int64_t FabricState::busiest_after() const {
  if (level_ == nullptr) return 0;
  // The changed parents, then the busiest of the others.
  std::int64_t most = 0;
  for (int p : touched_) {
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

void FabricState::apply() {
  for (int p : touched_) {
    std::int64_t& load = load_[static_cast<std::size_t>(p)];
    order_.erase({load, p});
    load += delta_[static_cast<std::size_t>(p)];
    order_.emplace(load, p);
  }
  clear();
}

}  // namespace rankshape::detail
