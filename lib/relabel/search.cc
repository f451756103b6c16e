#include "lib/relabel/search.h"

#include <algorithm>
#include <numeric>
#include <stdexcept>

namespace rankshape {

Labelling brute_force(const Costs& costs, const Grid& grid, const ObjectiveSpec& spec) {
  const int p = grid.size();
  if (p > kMaxBruteForce) {
    throw std::invalid_argument("brute force is limited to " + std::to_string(kMaxBruteForce) +
                                " ranks, got " + std::to_string(p));
  }
  std::vector<int> perm(p);
  std::iota(perm.begin(), perm.end(), 0);
  std::vector<OldRank> as_ranks(p);
  const auto to_labelling = [&] {
    for (int i = 0; i < p; ++i) as_ranks[i] = OldRank(perm[i]);
    return Labelling(as_ranks);
  };
  Labelling best = to_labelling();
  ObjectiveValue best_value = evaluate(costs, grid, best, spec).value;
  while (std::next_permutation(perm.begin(), perm.end())) {
    Labelling l = to_labelling();
    const ObjectiveValue v = evaluate(costs, grid, l, spec).value;
    if (v < best_value) {
      best_value = v;
      best = std::move(l);
    }
  }
  return best;
}

SearchStats hill_climb(IncrementalObjective& state, const Deadline& deadline, SplitMix64& rng,
                       const Neighbourhood& hints, std::int64_t stall_limit,
                       std::int64_t max_evaluations) {
  SearchStats stats;
  const Grid& grid = state.grid();
  const int p = grid.size();
  if (p < 2 || !state.can_improve()) return stats;
  if (stall_limit <= 0) stall_limit = std::min<std::int64_t>(20LL * p, 100000);
  // Candidates drawn per focus before choosing again.
  constexpr int kPerFocus = 64;
  std::int64_t stall = 0;
  std::int64_t round = 0;
  const auto random_position = [&] { return NewRank(static_cast<int>(rng.below(p))); };
  while (stall < stall_limit && (max_evaluations <= 0 || stats.evaluations < max_evaluations)) {
    if (deadline.passed()) {
      stats.time_limited = true;
      break;
    }
    const SearchFocus focus = state.focus(round++, rng);
    const NewRank s_max = focus.position;
    for (int attempt = 0; attempt < kPerFocus && stall < stall_limit; ++attempt) {
      NewRank s1 = random_position();
      if (!hints.empty() && rng.below(2) == 0) {
        // A rank close to one the focus talks with.
        const NewRank m = state.partner(focus, rng);
        const auto& near = hints.near[hints.list_of[state.labelling().old_of(m).value()]];
        if (!near.empty()) s1 = state.labelling().new_of(OldRank(near[rng.below(near.size())]));
      }
      if (state.pointless(focus, s1)) {
        ++stall;
        continue;
      }
      ObjectiveValue after;
      NewRank s2 = s1;
      const bool cycle = p >= 3 && rng.below(2) == 0;
      if (cycle) {
        while (s2 == s1 || s2 == s_max) s2 = random_position();
        after = state.value_after_cycle(s_max, s1, s2);
      } else {
        after = state.value_after_swap(s_max, s1);
      }
      ++stats.evaluations;
      if (improves(after, state.value())) {
        if (cycle) {
          state.apply_cycle(s_max, s1, s2);
        } else {
          state.apply_swap(s_max, s1);
        }
        ++stats.moves;
        stall = 0;
        break;
      }
      ++stall;
    }
  }
  return stats;
}

}  // namespace rankshape
