// Recursive bisection for stencils: compact regions of the grid for every
// rack, node and socket, also when their sizes do not divide the grid.
//
// The machine is a tree: the racks, the nodes in each, and inside a node
// the groups its core costs show (sockets), down to single ranks. Where a
// tree node's children are not all alike (the nodes of a torus), they are
// ordered so that each half is close inside: grown from the two farthest
// children, then improved by swaps. The grid is cut to match: a tree node
// whose children split into halves of a and b ranks cuts its region of
// a + b positions into a part of a and one of b, across the region's
// longest dimension (lengths divided by the stencil's weight along them,
// and by two along a periodic dimension the region spans whole, where a cut
// opens two faces). When a is not a multiple of the slab across that
// dimension, the last slab is shared, filled line by line: the parts stay
// boxes joined along one face.
//
// The third rule tiles instead: where equal groups share a box region, it
// chooses the cut (the dimension, and how many groups go to each side) by
// exact search over straight cuts that leave every part a box: the
// busiest part's messages out first, then the sum over parts (so a rack's
// shape is settled before its nodes'). A 50x20 rack of 25 nodes of 40 is
// cut into 10x4 boxes (28 pairs out of the busiest, 280 inside the rack),
// where halving gives a mix of 8x5, 4x10 and staircase parts (30 and
// 318). Where only thin boxes tile a region, halving may do better; relabel
// keeps whichever rule's labelling the objective prefers. Regions that are
// not boxes (groups of unequal size) are cut as kBothParts does.
//
// Example: 10x10x10 on 25 nodes of 40, racks of 5 nodes. Racks: 400 | 600
// across dimension 0 (4x10x10 | 6x10x10), then 200 | 200 (4x5x10 twice);
// a rack's 200 positions split 80 | 120 (4x5x4 | 4x5x6), and so on down to
// nodes of 2x5x4 or 4x5x2 (76 neighbour pairs out of each, where the
// 10x2x2 boxes that tile the grid cut 88).
#ifndef RANKSHAPE_LIB_RELABEL_BISECT_H_
#define RANKSHAPE_LIB_RELABEL_BISECT_H_

#include <vector>

#include "lib/model/costs.h"
#include "lib/model/labelling.h"
#include "lib/model/pattern.h"

namespace rankshape {

/// How a split chooses the dimension to cut across.
enum class CutRule {
  kBusierPart,  // the fewest messages out of the busier part (then both)
  kBothParts,   // the fewest messages out of both parts together (then the busier)
  kBoxes,       // equal groups: the best tiling by boxes; else as kBothParts
};

/// levels: known hierarchy, finest first (levels[j][r] = group of old rank
/// r at level j), completed by the levels found in the costs above it
/// (link_levels() in lib/model/link_load.h: racks where a measured file
/// names only nodes; with nothing known, up to kMaxGapItems ranks, beyond
/// which the ranks stay in their order).
/// Inside the finest groups, groups found in their members' costs (up to
/// kMaxGapItems members). Neither rule is best everywhere (8x8x16 over
/// nodes of 32: kBusierPart leaves the busiest node 48 pairs out, kBothParts
/// 56; 100x100 over nodes of 40 in racks of 25: kBothParts cuts 3,172 pairs
/// with the busiest node at 30, kBusierPart 3,218 and 36), so relabel's
/// bisect tries all three. Throws std::invalid_argument if costs and grid
/// disagree on p or a level does not label every rank.
Labelling bisect(const Costs& costs, const Stencil& stencil,
                 const std::vector<std::vector<int>>& levels, CutRule rule = CutRule::kBusierPart);

}  // namespace rankshape

#endif  // RANKSHAPE_LIB_RELABEL_BISECT_H_
