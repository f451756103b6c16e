// Multi-way Kernighan-Lin (van Duijn, Algorithm 5.1, corrected) for a
// partition into equal-size groups that should be cheap inside.
//
// For each pair of groups (A, B): every unlocked item x has a value
// v(x) = I(x) - E(x), its cost to its own group minus its cost to the other.
// Swapping a in A with b in B lowers the total inside cost by
// gain(a, b) = v(a) + v(b) + 2 D(a, b). Repeatedly pick the best unlocked
// pair, lock it, record the gain and update the values as if swapped
// (v(x) += 2 D(x, b) - 2 D(x, a) for x in A, symmetrically for B); then apply
// the swaps 0..k (inclusive) of the best positive prefix. Passes repeat until
// no pair of groups improves.
//
// Example: D = 1 inside {0,1} and {2,3}, 10 across; start A = {0,2},
// B = {1,3} (inside cost 20). Every item has v = 10 - 11 = -1; swapping 2
// with 1 gains -1 - 1 + 2 * 10 = 18, giving {0,1} {2,3} (inside cost 2).
#ifndef RANKSHAPE_LIB_RELABEL_KL_H_
#define RANKSHAPE_LIB_RELABEL_KL_H_

#include <vector>

#include "lib/model/costs.h"
#include "lib/relabel/deadline.h"

namespace rankshape {

/// Refines groups (equal sizes, items are old-rank indices of costs) in
/// place; returns the reduction of the total inside cost (>= 0).
double refine_partition_kl(const Costs& costs, std::vector<std::vector<int>>& groups,
                           const Deadline& deadline);

/// Total inside cost of a partition: sum over groups of their pair costs.
double inside_cost(const Costs& costs, const std::vector<std::vector<int>>& groups);

}  // namespace rankshape

#endif  // RANKSHAPE_LIB_RELABEL_KL_H_
