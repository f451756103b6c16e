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

namespace {

// Position in fibre f of dimension k whose rank costs most to the others,
// judged on up to kSample of them (long fibres would cost O(q^2)).
constexpr int kSample = 256;

NewRank worst_member(const IncrementalObjective& s, int k, int f) {
  const Grid& g = s.grid();
  const int q = g.dim(k);
  const int stride = q > kSample ? q / kSample : 1;
  NewRank worst = g.fibre_member(k, f, 0);
  double worst_cost = -1;
  for (int t = 0; t < q; ++t) {
    const NewRank pos = g.fibre_member(k, f, t);
    const OldRank r = s.labelling().old_of(pos);
    double sum = 0;
    visit_costs(s.costs(), [&](const auto& c) {
      for (int u = 0; u < q; u += stride) {
        sum += c.cost(r, s.labelling().old_of(g.fibre_member(k, f, u)));
      }
    });
    if (sum > worst_cost) {
      worst_cost = sum;
      worst = pos;
    }
  }
  return worst;
}

}  // namespace

SearchStats hill_climb(IncrementalObjective& state, const Deadline& deadline, SplitMix64& rng,
                       const Neighbourhood& hints, std::int64_t stall_limit) {
  SearchStats stats;
  const Grid& grid = state.grid();
  const int p = grid.size();
  if (p < 2) return stats;
  if (stall_limit <= 0) stall_limit = std::min<std::int64_t>(20LL * p, 100000);
  std::vector<int> dims;
  // Only dimensions with several fibres can change: in a dimension with one
  // fibre every rank is in it whatever the labelling.
  for (int k = 0; k < grid.ndims(); ++k) {
    if (grid.dim(k) > 1 && grid.fibre_count(k) > 1) dims.push_back(k);
  }
  if (dims.empty()) return stats;
  // Candidates drawn per chosen fibre before choosing again.
  constexpr int kPerFibre = 64;
  std::int64_t stall = 0;
  std::size_t next_dim = 0;
  const auto random_position = [&] { return NewRank(static_cast<int>(rng.below(p))); };
  while (stall < stall_limit) {
    if (deadline.passed()) {
      stats.time_limited = true;
      break;
    }
    const int k = dims[next_dim++ % dims.size()];
    const int f =
        rng.below(4) == 0 ? static_cast<int>(rng.below(grid.fibre_count(k))) : state.worst_fibre(k);
    const NewRank s_max = worst_member(state, k, f);
    for (int attempt = 0; attempt < kPerFibre && stall < stall_limit; ++attempt) {
      NewRank s1 = random_position();
      if (!hints.empty() && rng.below(2) == 0) {
        // A rank close to another member of the fibre.
        const NewRank m = grid.fibre_member(k, f, static_cast<int>(rng.below(grid.dim(k))));
        const auto& near = hints.near[hints.list_of[state.labelling().old_of(m).value()]];
        if (!near.empty()) s1 = state.labelling().new_of(OldRank(near[rng.below(near.size())]));
      }
      if (grid.fibre_of(s1, k) == f) {
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
