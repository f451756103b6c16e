// Mapping a traffic graph (the "graph" pattern) onto a hierarchical
// machine, top-down along its levels (racks, then nodes):
//  1. the graph's vertices are split into as many parts as the level has
//     groups, each part the size of its group: the lowest cut among METIS
//     k-way and recursive bisection (multilevel: coarsening, an initial
//     partition, refinement), with loose and tight balance, coarsening by
//     heavy edges and at random, each made exact by moving the vertices that
//     lose least; for many equal parts also recursive prime splits and a
//     bottom-up grouping as TreeMatch's; the split METIS gives, the
//     recursive one and the grouping each refined by Kernighan-Lin swaps
//     between two parts at a time, the best then split again two parts at
//     a time (each pair's union by METIS; until the deadline);
//  2. the parts are assigned to the groups by the objective: the quotient
//     graph (the traffic between parts) mapped onto the costs between the
//     groups, exhaustively for up to 8 groups and by hill-climbing above
//     (groups of equal size only; unequal groups keep METIS's order);
//  3. each part continues inside its group, one level down; inside the
//     finest groups the vertices take the group's ranks in order.
// The result is meant to be refined by hill-climbing on the full objective
// (relabel() does), which also sees costs inside a node.
// Levels come from the caller (nodes, racks: finest first), and above them
// from the costs (link_levels(): racks behind measured node-to-node
// costs). A machine without levels is one group: the split starts at the
// ranks.
#ifndef RANKSHAPE_LIB_RELABEL_GRAPH_MAP_H_
#define RANKSHAPE_LIB_RELABEL_GRAPH_MAP_H_

#include <cstdint>
#include <vector>

#include "lib/model/objective.h"
#include "lib/relabel/deadline.h"

namespace rankshape {

struct GraphMapOptions {
  std::uint64_t seed = 1;
  /// Step 2: assign parts to groups by the objective. Without it part i
  /// goes to group i (the plain METIS mapping, a peer baseline).
  bool assign_parts = true;
  /// Step 1 also tries the bottom-up grouping (as TreeMatch's); off, the
  /// splits are METIS's alone (the plain METIS mapping).
  bool group_bottom_up = true;
  /// Step 1 by METIS too. Off (a quick first answer, milliseconds at 1,024
  /// ranks), equal parts come from the bottom-up grouping alone; METIS
  /// still makes unequal ones.
  bool metis = true;
  /// METIS calls per split (at least 1, at most 8): k-way and recursive
  /// bisection in turn, loose then tight balance, heavy-edge then random
  /// matching. Fewer make a faster, rougher map (at 1,024 ranks on 8 racks
  /// of 8 nodes: 2 take about 0.02 s, 8 0.06 s). With refine_splits, a
  /// split into many equal parts that recursive prime splits also make
  /// gets one direct k-way call; below 8 only where its parts have 30
  /// vertices or more (where METIS coarsens).
  int metis_attempts = 8;
  /// Each split's parts refined by Kernighan-Lin swaps between two parts
  /// at a time, so that sizes stay exact (refine_pairs() below). Off for
  /// the plain METIS mapping.
  bool refine_splits = true;
  /// With refine_splits, each split's best also split again two parts at a
  /// time: every pair of parts that share edges, heaviest first, has its
  /// union split by METIS into the same two sizes, kept where that cuts
  /// less; in up to 4 rounds, until one changes nothing. Swaps stop where
  /// no single swap gains; a fresh bisection of the pair moves whole regions
  /// (on a random geometric graph of 1,024 vertices on 64 nodes of 16: a
  /// fast map's objective 5% lower, for about 25 ms more).
  bool resplit_pairs = true;
  /// Bottom-up instead of top-down, where every level's groups are equal:
  /// the vertices into parts of a node's size first, those parts into
  /// groups of a rack's size (METIS on the quotient graph), and so on; then
  /// steps 2 and 3 from the top. On a 32x32 mesh over 8 racks of 8 nodes of
  /// 16 this finds the 4x4 blocks per node and 8x16 per rack that a
  /// top-down split's jagged rack boundaries miss.
  bool bottom_up = false;
};

/// The labelling: position (graph vertex) x runs on old rank perm[x].
/// Throws std::invalid_argument if graph and costs disagree on the rank
/// count or a level does not label every rank, std::runtime_error if METIS
/// fails.
Labelling graph_map(const Costs& costs, const TrafficGraph& graph,
                    const std::vector<std::vector<int>>& levels, const GraphMapOptions& options,
                    const Deadline& deadline);

/// Kernighan-Lin refinement of a partition (part[v] in [0, k) for every
/// vertex v) by swaps between two parts at a time, so every part keeps
/// its size: the pairs of parts that share edges, heaviest first, in up to
/// 4 rounds, until one gains nothing. A pass over parts A and B takes the
/// vertices of each with edges to the other (at most 64, the most
/// connected), makes the best swap left even when it loses (a swap of x
/// and y gains d(x) + d(y) - 2 w(x, y), d: weight to the other part minus
/// weight to its own), locks both, and keeps the best prefix. graph_map()
/// runs it on every split (GraphMapOptions::refine_splits). Returns the cut
/// weight (in graph units) removed. Throws std::invalid_argument for k
/// outside [1, vertices], a part outside [0, k), a part count other than
/// the vertices', or a weight beyond 32 bits (graph_map() scales weights
/// to 32 bits for METIS and refines those).
/// Example: two 4-cliques {0,1,2,3} and {4,5,6,7} of weight 10, joined by
/// 3-4 of weight 1, split {0,1,2,4} | {3,5,6,7} (cut 61): one pass swaps 4
/// and 3 (gain 60), leaving the cliques apart (cut 1).
std::int64_t refine_pairs(const TrafficGraph& graph, int k, std::vector<int>& part,
                          const Deadline& deadline);

/// How many levels graph_map() splits along for these costs and known
/// levels (1 or less: one split into nodes, where its bottom-up way is
/// the same as top-down). Throws std::invalid_argument where graph_map()
/// does for a level.
int graph_map_depth(const Costs& costs, const std::vector<std::vector<int>>& levels);

/// Boundary refinement on the full objective (state's pattern must be a
/// graph): for every vertex x, the swaps of x with a vertex among its
/// heaviest neighbours and theirs that sits on another node one of x's
/// neighbours is on (node_of: node of every old rank); each vertex's best
/// swap is kept, and the kept swaps are made in order of gain (each checked
/// again, none touching a vertex already moved in the sweep). Up to
/// `passes` sweeps, fewer when one changes nothing. Catches what random
/// hill-climbing misses: on a mesh, the swaps that straighten a jagged
/// boundary between two nodes pair two boundary vertices. Returns the
/// moves applied.
std::int64_t refine_boundaries(IncrementalObjective& state, const std::vector<int>& node_of,
                               const Deadline& deadline, int passes);

}  // namespace rankshape

#endif  // RANKSHAPE_LIB_RELABEL_GRAPH_MAP_H_
