// Lower bounds on the fibres and stencil objectives, so that a user sees
// how far an answer can still be from the best one, and auto (for fibres)
// can stop once it has reached one.
//
// Fibres.
// A rank a sits in one fibre of each dimension k, with q_k - 1 partners
// there, and its partners in different dimensions are different ranks (two
// grid positions share at most one fibre). So the partners of a, over all
// dimensions, are Q = sum_k (q_k - 1) distinct ranks: at best its Q
// cheapest. For weights l_k, sum_k l_k (cost of a's partners in dimension k)
// is therefore at least R_a(l): the Q cheapest costs of a, ascending, dealt
// out in blocks of q_k - 1 to the dimensions by decreasing l_k (the
// rearrangement inequality). Every pair is seen from both ends, so
//   total   = sum_k w_k C_k          >= (1/2) sum_a R_a(w_k)
// with C_k the sum of dimension k's fibre costs. A dimension's worst fibre
// is at least its mean, C_k / (p / q_k), so
//   sum-max >= sum_k w_k q_k C_k / p >= (1/2p) sum_a R_a(w_k q_k)
// and, per dimension, worst_k >= w_k (q_k / 2p) sum_a S_a(q_k - 1), with
// S_a(m) the sum of a's m cheapest costs (what dimension k gets alone).
// thesis-max (one max over all fibres) is at least each dimension's bound
// and the sum-max bound over the number of dimensions, which is loose where
// one dimension must take the expensive pairs (16 nodes of 16, grid 16x16:
// 660, where the best is 1,200). "+links" only adds
// to a dimension's cost, so the bounds hold for it too.
//
// That per-rank bound is reached when each rank's fibres hold its cheapest
// partners and all fibres of a dimension cost the same: machines whose
// nodes (or racks) hold whole fibres. It is loose where two dimensions
// compete for one level: on racks of 4 nodes of 8 with a 4x4x8 grid, every
// rank's 24 rack partners could serve both 4-wide dimensions one rank at a
// time, but fibres are closed, and one dimension must leave the rack.
//
// For structured costs a second bound counts per group instead: every pair
// costs at least its level's least cost (same node, same rack, across), and
// a node or rack of s ranks holds at most W(s) weighted fibre pairs
// (packing whole fibres per dimension, s - 1 partners per member, and an
// entropy bound: Han's inequality over a uniform member's coordinates), so
//   sum_k l_k C_k >= m2 sum_k l_k P_k - (m2 - m1) sum_racks W - (m1 - m0) sum_nodes W
// with P_k all dimension-k pairs. On the 4x4x8 example (costs 1, 10, 40)
// it gives 328, the planted layout's sum-max (28 + 60 + 240); the per-rank
// bound gives 148. The larger of the two is reported.
//
// Worked example: 2 nodes of 2 ranks (1 inside, 10 across), grid 2x2. Each
// rank has Q = 2 partners, costs 1 and 10; l = (2, 2) for sum-max, so R_a =
// 2 * 1 + 2 * 10 = 22 and sum-max >= 4 * 22 / 8 = 11: the best labelling's
// 1 + 10, which is optimal. Each dimension alone: worst >= 2 * 4 * 1 / 8 =
// 1 (it could have the cheap pairs if the other did not).
//
// Stencils. A step is at least its busiest rank and at least its shared
// links (objective.h), so a bound on each bounds the step:
// - Busiest rank: position x is held by some rank a, which pays at least
//   R_a(x): x's neighbour weights, heaviest first, against a's cheapest
//   costs (distinct neighbours are distinct ranks). The busiest rank costs
//   at least max_x min_a R_a(x), and the ranks together sum_x min_a R_a(x).
// - Links: a group (node, rack) of s ranks holds s positions. Along
//   dimension k, every line that the set meets without filling it has an
//   end inside, so it sends 1 message out (2 when periodic). The lines a
//   set meets, x_k per dimension, obey Loomis-Whitney, prod_k x_k >=
//   s^(d-1). Two bounds on a level's busiest group follow:
//   - alone: at most min(s / q_k, (s - x_k) / (q_k - 1)) of a set's lines
//     are full, and a full line along k meets q_k lines of every other
//     dimension; U(s), the least a set of s sends out under these
//     constraints (relaxed to real x_k, bound by Lagrange duality), bounds
//     each group. On a periodic 4x4, U(4) = 8 (a 2x2 block or a row:
//     exact).
//   - together: a line met by n of the level's groups carries at least
//     2 (n - 1) messages between them (periodic: 2 n, none when one group
//     fills it), so the groups send at least twice the lines they meet,
//     less 2 per line (periodic: per full line); the busiest at least the
//     mean. On a 10x10x10 over 25 nodes of 40 that is 46.2 per node,
//     where U(40) is only 26 (a set in a corner): the busiest node sends
//     at least 47 (rankshape finds 68).
//   The links then cost at least sum_l flow_cost(l) times the busiest
//   group's bound. Diagonal neighbours are left out.
// For structured costs the ranks' sum is also at least low * M + (mid -
// low) * (messages leaving nodes) + (top - mid) * (messages leaving racks),
// M all messages, as for fibres. The tie-break total adds every level's
// bounds on all its groups' and its busiest group's messages out; fabrics
// are left out (they only add).
//
// Worked example (objective.h's): nodes {0,1} and {2,3}, 1 inside, 10
// across, grid 4 ("stencil"). Positions 1 and 2 have two neighbours, so
// some rank pays at least 1 + 10 = 11; a node of 2 holds two positions of
// the line and sends at least 1 message, 10. The step is at least
// max(11, 10) = 11, the identity's: optimal. Total: the ranks at least
// 1 + 11 + 11 + 1 = 24, the links 10 * (1 + 1 + 1) = 30: 54, also the
// identity's.
#ifndef RANKSHAPE_LIB_MODEL_BOUNDS_H_
#define RANKSHAPE_LIB_MODEL_BOUNDS_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "lib/model/costs.h"
#include "lib/model/grid.h"
#include "lib/model/objective.h"

namespace rankshape {

/// A stencil step's two parts of LowerBound: the busiest rank, and the
/// shared links.
struct StencilBoundParts {
  double busiest_rank = 0;
  double links = 0;
};

struct LowerBound {
  /// A bound on ObjectiveValue::primary (sum-max, thesis-max, step or
  /// total).
  double primary = 0;
  /// A bound on ObjectiveValue::total (the tie-break).
  double total = 0;
  /// Fibres: per dimension, a bound on its worst fibre (weighted); empty
  /// for a stencil.
  std::vector<double> dimension;
  /// A stencil's two parts; empty for fibres.
  std::optional<StencilBoundParts> stencil;
};

/// The bounds for the fibres pattern with fibre cost "pairs" (any
/// aggregate, with or without +links); nullopt for max-pair, stencils and
/// graphs. Costs O(p^2) lookups for dense costs and O(p cores) for
/// structured ones. Throws std::invalid_argument if costs and grid
/// disagree on the rank count.
std::optional<LowerBound> fibre_lower_bound(const Costs& costs, const Grid& grid,
                                            const ObjectiveSpec& spec);

/// The bounds for a stencil (step or total; links found in the costs
/// when spec has none, as evaluate() finds them); nullopt for other
/// patterns. Costs O(p^2) lookups for dense costs and O(p cores) for
/// structured ones, times the kinds of positions (at most 2^d: ends and
/// inside per open dimension), and per distinct group size up to 2^8
/// small convex problems. Throws std::invalid_argument as
/// fibre_lower_bound().
std::optional<LowerBound> stencil_lower_bound(const Costs& costs, const Grid& grid,
                                              const ObjectiveSpec& spec);

/// The bound for spec's pattern: fibre_lower_bound() or
/// stencil_lower_bound(); nullopt for traffic graphs and max-pair fibres.
std::optional<LowerBound> objective_lower_bound(const Costs& costs, const Grid& grid,
                                                const ObjectiveSpec& spec);

/// U(s): at least how many units (Stencil::units) a set of s of the
/// stencil's positions sends to the others along the axes (see above).
std::int64_t least_units_out(const Stencil& stencil, std::int64_t s);

/// Whether value reaches bound, up to rounding (a relative 1e-9): no
/// labelling can then do better.
bool reaches(double value, double bound);

}  // namespace rankshape

#endif  // RANKSHAPE_LIB_MODEL_BOUNDS_H_
