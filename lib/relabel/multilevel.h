// Multilevel relabelling: coarsen, solve the coarse problem, uncoarsen,
// refine.
//
// Coarsening groups g ranks that belong together: the nodes (then racks) of
// a structured machine when every group has the same size, otherwise
// clusters of g mutually close ranks (g a prime factor of a grid
// dimension). Each group will fill a box b (b_k divides q_k, prod b_k = g)
// of the grid, so the coarse problem is the grid q / b over groups, with
// coarse costs the average member distance (kept structured above 4,096
// groups of a structured machine: structured_coarse_costs()), dimension k
// weighted by b_k^2 (a fine fibre of dimension k takes b_k members of
// every group on its coarse fibre; times g / b_k more under the "total"
// objective). Coarse problems recurse; tiny ones (p <= 6) are solved
// exactly. Above 16,384 ranks with no usable known level, plain
// hill-climbing from the identity takes over (clustering is quadratic).
// Inside a box, members are arranged by solving the box's own problem on
// their costs (once per distinct set of cores on a structured machine).
// Each level ends with hill-climbing.
//
// Example: 16 ranks on 4 nodes of 4, grid 4x4. Candidate boxes for a node
// are 1x4 (a row), 4x1 (a column) and 2x2. With a row box the coarse grid is
// 4x1: one coarse fibre of the 4 nodes along dimension 0 (weight 1), and
// every row is one node: rows cost 6 * intra, columns 6 * inter.
#ifndef RANKSHAPE_LIB_RELABEL_MULTILEVEL_H_
#define RANKSHAPE_LIB_RELABEL_MULTILEVEL_H_

#include <functional>
#include <string>
#include <vector>

#include "lib/model/objective.h"
#include "lib/relabel/deadline.h"
#include "lib/relabel/search.h"
#include "lib/util/random.h"

namespace rankshape {

/// levels: known hierarchy, finest first: levels[j][r] is the group (node,
/// then rack, ...) of old rank r at level j; may be empty. When a level's
/// groups differ in size (or fit no box), ranks are clustered by cost
/// instead.
/// progress (may be empty) hears about each box shape tried at the top.
Labelling multilevel(const Costs& costs, const Grid& grid, const ObjectiveSpec& spec,
                     const std::vector<std::vector<int>>& levels, const Deadline& deadline,
                     SplitMix64& rng, SearchStats& stats,
                     const std::function<void(const std::string&)>& progress = {});

/// Every box shape b for a group of g ranks in grid: prod b_k = g and b_k
/// divides q_k.
std::vector<std::vector<int>> box_shapes(int g, const Grid& grid);

/// boxes sorted by a rough estimate of the objective when every group fills
/// one box, best first (stable): pairs inside a group cost c_in, pairs
/// across groups c_out.
std::vector<std::vector<int>> rank_box_shapes(std::vector<std::vector<int>> boxes, const Grid& grid,
                                              const ObjectiveSpec& spec, double c_in, double c_out);

/// Places group members in boxes: position x with coordinates c lies in the
/// box of coarse position c / b at local position c % b; the coarse
/// labelling names the group there, the group's inner labelling names the
/// member. inner[group] is a labelling of the box grid over member indices.
Labelling compose(const Grid& grid, const std::vector<int>& box, const Labelling& coarse,
                  const std::vector<std::vector<int>>& members,
                  const std::vector<Labelling>& inner);

}  // namespace rankshape

#endif  // RANKSHAPE_LIB_RELABEL_MULTILEVEL_H_
