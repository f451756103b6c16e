// METIS (Karypis and Kumar) where it helps relabelling: splitting ranks into
// equal groups of mutually close ranks. METIS partitions graphs, not cost
// matrices, so each rank is joined to its nearest neighbours with an edge
// whose weight grows as the cost shrinks; METIS k-way then keeps heavy
// edges inside parts. Its parts are only nearly balanced: surplus ranks move
// to the closest part with room, and multi-way Kernighan-Lin polishes.
#ifndef RANKSHAPE_LIB_RELABEL_METIS_SPLIT_H_
#define RANKSHAPE_LIB_RELABEL_METIS_SPLIT_H_

#include <cstdint>
#include <vector>

#include "lib/model/costs.h"
#include "lib/model/grid.h"
#include "lib/model/labelling.h"
#include "lib/relabel/deadline.h"

namespace rankshape {

/// Splits items (old-rank indices of costs) into `parts` groups of equal
/// size (items.size() must be a multiple of parts). O(n^2) cost lookups for
/// the neighbour graph. Throws std::runtime_error if METIS fails.
std::vector<std::vector<int>> metis_split(const Costs& costs, const std::vector<int>& items,
                                          int parts, std::uint64_t seed, const Deadline& deadline);

/// Top-down layout: METIS splits the ranks into q0 slabs, every slab into
/// q1, and so on (the "metis" algorithm). p is limited to
/// DenseCosts::kMaxRanks because of the O(p^2) neighbour search.
Labelling metis_layout(const Costs& costs, const Grid& grid, std::uint64_t seed,
                       const Deadline& deadline);

}  // namespace rankshape

#endif  // RANKSHAPE_LIB_RELABEL_METIS_SPLIT_H_
