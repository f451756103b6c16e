// Searches over labellings on the full objective: exhaustive for tiny
// problems, and randomised triplet hill-climbing (van Duijn, Algorithm 5.2,
// corrected) for everything else.
//
// Hill-climbing, one step: the objective names a position s_max worth
// moving (IncrementalObjective::focus: for fibres the rank with the largest
// cost to the rest of the worst fibre f of a dimension, or one step in four
// of a random fibre, so that plateaus of the max still move the total; for
// stencils a busy rank). Draw candidates: s1 where a move can help (for
// fibres outside f), half the time a rank close to one s_max talks with,
// and either the swap (s_max, s1) or the 3-cycle in which s_max takes s1's
// place, s1 takes s2's and s2 takes s_max's (s2 not in {s_max, s1}).
// Accept the first candidate that lowers the objective (primary, then
// total); every candidate is evaluated incrementally. Stop after
// `stall_limit` candidates in a row without improvement, or at the
// deadline.
#ifndef RANKSHAPE_LIB_RELABEL_SEARCH_H_
#define RANKSHAPE_LIB_RELABEL_SEARCH_H_

#include <cstdint>
#include <vector>

#include "lib/model/objective.h"
#include "lib/relabel/deadline.h"
#include "lib/util/random.h"

namespace rankshape {

/// The largest p brute_force() accepts (9! = 362,880 labellings).
constexpr int kMaxBruteForce = 9;

/// The optimal labelling by exhaustive search (ties: the first found in
/// lexicographic order of perm). Throws std::invalid_argument for p >
/// kMaxBruteForce.
Labelling brute_force(const Costs& costs, const Grid& grid, const ObjectiveSpec& spec);

/// Ranks close to each rank, for targeted candidates: near[list_of[r]]
/// lists ranks near old rank r (its node, or its nearest neighbours).
struct Neighbourhood {
  std::vector<int> list_of;
  std::vector<std::vector<int>> near;
  bool empty() const { return near.empty(); }
};

struct SearchStats {
  std::int64_t evaluations = 0;
  std::int64_t moves = 0;
  bool time_limited = false;
};

/// Improves state in place; see the file comment. stall_limit <= 0 picks
/// 20 * p candidates, at most 100,000. max_evaluations > 0 ends the climb
/// after that many candidates (a budget that, unlike the deadline, gives
/// the same result on every machine).
SearchStats hill_climb(IncrementalObjective& state, const Deadline& deadline, SplitMix64& rng,
                       const Neighbourhood& hints, std::int64_t stall_limit = 0,
                       std::int64_t max_evaluations = 0);

}  // namespace rankshape

#endif  // RANKSHAPE_LIB_RELABEL_SEARCH_H_
