// How good a labelling is for a program on a cartesian grid: the time of
// one communication step of its pattern (lib/model/pattern.h), as the
// costs between ranks predict it.
//
// Fibres. A cartesian algorithm communicates along one dimension at a time,
// and each step lasts as long as its slowest fibre. The default objective
// is therefore
//   T = sum over dimensions k of (max over fibres f of dimension k of cost(f))
// with cost(f) = sum of D(a, b) over unordered pairs {a, b} in f. Options:
// the thesis's single max over all fibres of all dimensions, the plain sum of
// all fibre costs, and fibre cost = the most expensive pair. Values compare
// first on that primary figure, then on the sum of all fibre costs, so that
// local search sees progress on plateaus of the max.
//
// With "+links" (e.g. "sum-max+links") a dimension costs the larger of its
// worst fibre and its link load (lib/model/link_load.h): what every fibre
// of the dimension sends at once through the links a node or rack shares,
// which pair costs measured one message at a time do not see (the fabrics
// between groups, LinkLevel::fabric_cost, count for stencils and graphs
// only).
//
// Worked example: costs D = 1 inside nodes {0,1} and {2,3}, 10 across; grid
// 2x2 (fibres of dim 0: {0,2} {1,3}; of dim 1: {0,1} {2,3}). The identity
// gives dim 0 fibres cost 10 and 10, dim 1 fibres 1 and 1: T = 10 + 1 = 11,
// total = 22. The grid transposed (perm 0,2,1,3) gives the same T: with two
// dimensions of two, one dimension must cross nodes.
//
// Stencils. In a halo exchange every rank sends to all its neighbours at
// once, and the step lasts as long as its slowest part: the busiest rank,
// whose messages leave one after another, or the shared links, which all
// messages leaving a node (or a rack) cross. A message leaving a rack
// crosses its node's links and then the rack's: the busiest node's and the
// busiest rack's delays add. (SMPI, lvl3-rack8-node8-core16, 32x32 grid:
// with the busiest rack at 64 messages out, cutting the busiest node from
// 34 to 16 shortened the step from 11.2 to 7.8 ms, which a max over the
// levels, decided by the rack, did not see.) The "step" objective is
//   T = max(max over ranks x of cost(x),
//           sum over levels l of max over groups g of l of flow_cost(l) * load(g))
// with cost(x) = sum over x's neighbours y of w(x->y) D(x, y), and load(g)
// = the weights of the messages from g's ranks to ranks outside g; levels
// and flow costs as for "+links" (nodes and racks, known or found in the
// costs). Ties break on the total: the sum of every rank's cost, and at
// every level flow_cost times the sum of its groups' loads plus its busiest
// group's load (so that, where racks decide the step, the busiest node is
// still kept light); then on how concentrated the traffic between groups is
// (the sum over ordered pairs of groups of flow_cost * load(g->h)^2):
// spreading the same messages over more pairs of nodes is never slower, and
// faster wherever two nodes share one path. "total" is the sum of every
// rank's cost alone.
//
// Where a level's groups share a fabric narrower than their links (an
// oversubscribed backbone: LinkLevel::fabric_cost), every message between
// two groups also crosses the fabric of its sender's parent and, in another
// parent, its receiver's, and the level adds
//   fabric_cost(l) * max over parents P of the weight of the messages through P's fabric
// to the links' sum (and to the total): there all the traffic between
// groups counts, not only the busiest group's.
//
// Worked example: the same machine, grid 4 (1-D, "stencil"). The identity
// puts nodes {0,1} and {2,3} side by side: position costs 1, 1 + 10,
// 10 + 1, 1 (busiest 11); node 0 sends one message across (load 1, flow
// cost 10): T = max(11, 10) = 11, total = 24 + 10 * (2 + 1) = 54.
// Alternating nodes (perm 0,2,1,3) crosses at every pair: costs 10, 20, 20,
// 10 and node loads 3: T = max(20, 30) = 30, total = 60 + 10 * (6 + 3) = 150.
// Two levels: 2 racks of 2 nodes of 2 ranks (1 inside a node, 10 between
// nodes of a rack, 100 between racks), grid 8, identity: the busiest rank (position 3)
// costs 1 + 100; the busiest node sends 2 messages out (flow cost 10) and
// each rack 1 (flow cost 100), so T = max(101, 20 + 100) = 120.
// A fabric: 4 nodes of 2 ranks (1 inside, 10 across, fabric cost 2.5),
// grid 8, identity: nodes send 1, 2, 2, 1 messages out, so T = max(11,
// 10 * 2 + 2.5 * 6) = 35; with node 0 at both ends (perm 0,2,3,4,5,6,7,1)
// every node sends 2: no busier node, but T = 20 + 2.5 * 8 = 40.
//
// Graphs. A traffic graph (lib/model/traffic_graph.h) says what every pair
// of ranks sends over a run, not in which steps. The "cost" objective is
// the run's communication cost plus what the shared links add:
//   T = sum over edges {x, y} of w(x, y) D(x, y)
//       + sum over levels l of flow_cost(l) * max over groups g of l of load(g)
//       (+ fabric_cost(l) * the busiest parent's fabric traffic, as for stencils:
//       each edge between groups once per parent it crosses)
// with load(g) = the weight of the edges with one end in g and the other
// outside. The first term is what Scotch, TreeMatch and VieM minimise; the
// second is the wait at the busiest node's and rack's shared links, which
// pair costs measured one message at a time do not see. Ties break on the first term plus every
// group's load times its flow cost. "total" is the first term alone.
//
// Worked example: the same machine (nodes {0,1} {2,3}, D = 1 inside, 10
// across), graph 0-1 weight 5, 1-2 weight 1, identity: T = 5 * 1 + 1 * 10 +
// 10 * 1 (each node sends weight 1 out) = 25.
#ifndef RANKSHAPE_LIB_MODEL_OBJECTIVE_H_
#define RANKSHAPE_LIB_MODEL_OBJECTIVE_H_

#include <array>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lib/model/costs.h"
#include "lib/model/grid.h"
#include "lib/model/labelling.h"
#include "lib/model/link_load.h"
#include "lib/model/pattern.h"
#include "lib/model/traffic_graph.h"
#include "lib/util/random.h"

namespace rankshape {

enum class FibreCost {
  kSumOfPairs,  // "pairs": total traffic cost inside the fibre
  kMaxPair,     // "max-pair": the slowest link inside the fibre
};

enum class Aggregate {
  kSumOfDimensionMax,  // fibres "sum-max": default, one step per dimension
  kMaxOverAllFibres,   // fibres "thesis-max": van Duijn's single max over all fibres
  kSumOfAllFibres,     // "total": every fibre (every neighbour message) counts
  kStep,               // stencil "step": default, the busiest rank or the shared links
  kGraphCost,          // graph "cost": default, communication cost plus the busiest links
};

struct ObjectiveSpec {
  FibreCost fibre = FibreCost::kSumOfPairs;
  Aggregate aggregate = Aggregate::kSumOfDimensionMax;
  /// Optional per-dimension factors on fibre costs (empty = all 1). Coarse
  /// levels of the multilevel search use them: a coarse fibre stands for
  /// fine fibres carrying b_k^2 times its pair costs. Fibres only.
  std::vector<double> dimension_weights;
  /// "+links": a dimension costs max(worst fibre, link load). Only with
  /// sum-max and thesis-max; always part of a stencil's "step".
  bool link_load = false;
  /// The levels the link load counts. Null with link_load set: evaluate()
  /// and IncrementalObjective find them in the costs (link_levels(costs,
  /// {})); relabel() passes the known nodes and racks.
  std::shared_ptr<const std::vector<LinkLevel>> links;
  /// Who talks to whom: fibres (default) or a stencil.
  Pattern pattern;
  /// A stencil with weights per offset, which no pattern text names (the
  /// coarse problems of multilevel search); null: pattern's stencil.
  std::shared_ptr<const Stencil> stencil;
  /// The graph pattern's traffic (required with it; its vertices are the
  /// grid's positions).
  std::shared_ptr<const TrafficGraph> graph;

  double weight(int k) const {
    return dimension_weights.empty() ? 1.0 : dimension_weights[static_cast<std::size_t>(k)];
  }

  /// Parses "sum-max", "thesis-max", "total", optionally followed by
  /// ":pairs" or ":max-pair" (e.g. "thesis-max:max-pair"), then optionally
  /// "+links" (not with total); the fibres pattern. Throws
  /// std::invalid_argument listing the accepted names.
  static ObjectiveSpec parse(std::string_view text);
  /// The same for a pattern: a stencil takes "step" or "total", a graph
  /// "cost" or "total". An empty text is the pattern's default ("sum-max",
  /// "step", "cost").
  static ObjectiveSpec parse(std::string_view text, const Pattern& pattern);
  /// The name parse() accepts, e.g. "sum-max:pairs", "sum-max:pairs+links"
  /// or "step" (the pattern is named by pattern.name()).
  std::string name() const;
  bool is_stencil() const { return pattern.is_stencil(); }
  bool is_graph() const { return pattern.is_graph(); }
  /// The stencil on grid: `stencil` if set, else the pattern's. Throws
  /// std::invalid_argument for a fibres pattern or a stencil that does not
  /// fit the grid.
  std::shared_ptr<const Stencil> stencil_on(const Grid& grid) const;
  /// This spec with the link load's levels filled in when link_load is set
  /// and they are missing: known levels (finest first), then those found in
  /// the costs.
  ObjectiveSpec with_links(const Costs& costs, const std::vector<std::vector<int>>& known) const;
  /// This spec without the link load (for coarse and partial problems,
  /// whose items are not the ranks the levels describe).
  ObjectiveSpec pairs_only() const;
};

/// An objective value: smaller is better; primary first, total breaks ties,
/// then concentration. total is the sum of all fibre costs; with +links it
/// adds, for every dimension, every group's load times its level's flow
/// cost, so that search sees progress when a group other than the busiest
/// sheds load. For stencils see the file comment; concentration is 0 for
/// fibres.
struct ObjectiveValue {
  double primary = 0;
  double total = 0;
  double concentration = 0;

  friend bool operator<(const ObjectiveValue& a, const ObjectiveValue& b) {
    if (a.primary != b.primary) return a.primary < b.primary;
    if (a.total != b.total) return a.total < b.total;
    return a.concentration < b.concentration;
  }
};

/// True if candidate is better than current by more than rounding: the
/// incremental and full values of one labelling may differ in the last
/// bits, and search must not chase such differences forever.
inline bool improves(const ObjectiveValue& candidate, const ObjectiveValue& current) {
  const auto tolerance = [](double x) { return 1e-10 * (x < 0 ? -x : x) + 1e-300; };
  if (candidate.primary < current.primary - tolerance(current.primary)) return true;
  if (candidate.primary > current.primary + tolerance(current.primary)) return false;
  if (candidate.total < current.total - tolerance(current.total)) return true;
  if (candidate.total > current.total + tolerance(current.total)) return false;
  return candidate.concentration < current.concentration - tolerance(current.concentration);
}

struct DimensionSummary {
  double worst = 0;     // cost of the most expensive fibre
  double mean = 0;      // mean fibre cost
  int worst_fibre = 0;  // index of the most expensive fibre
};

/// One level of shared links (nodes, racks) under a stencil.
struct LevelTraffic {
  int groups = 0;
  double flow_cost = 0;
  /// Messages (neighbour pairs, each direction once) between two groups,
  /// unweighted: a pair of neighbours on two nodes is one crossing pair.
  std::int64_t crossing_pairs = 0;
  /// The most messages one group sends to other groups (= its crossing
  /// pairs), and that group.
  std::int64_t busiest_pairs = 0;
  int busiest_group = 0;
  /// The largest weight one group sends out (its load) and the sum over
  /// groups, in the stencil's weights.
  double busiest_load = 0;
  double total_load = 0;
  /// The fabric the groups share inside their parents (LinkLevel::
  /// fabric_cost; 0: none), and the busiest parent's load on it: the sum of
  /// its groups' loads.
  double fabric_cost = 0;
  double busiest_fabric_load = 0;
  int busiest_parent = 0;
};

/// What a traffic graph costs under a labelling.
struct GraphSummary {
  double communication = 0;  // sum over edges of w D
  double weight = 0;         // sum of the edges' weights
  std::int64_t edges = 0;
  /// The rank whose edges cost most (sum of w D over its edges).
  double busiest_rank = 0;
  int busiest_position = 0;
  /// Per level, finest first; "pairs" are edges here (crossing_pairs: the
  /// edges between groups; busiest_pairs: those of the busiest group) and
  /// loads are weights.
  std::vector<LevelTraffic> levels;
};

/// What a stencil's step costs, rank by rank and link by link.
struct StencilSummary {
  double busiest_rank = 0;  // the largest cost(x): sum of w D over x's neighbours
  int busiest_position = 0;
  double mean_rank = 0;
  std::int64_t messages = 0;         // neighbour messages in one step (both directions)
  std::vector<LevelTraffic> levels;  // the objective's levels, finest first
};

struct Evaluation {
  ObjectiveValue value;
  /// Fibres: one summary per dimension; empty for a stencil.
  std::vector<DimensionSummary> dimensions;
  /// Link load per dimension; empty without "+links".
  std::vector<double> link_load;
  /// Stencils: the step's figures.
  std::optional<StencilSummary> stencil;
  /// Graphs: the traffic's figures.
  std::optional<GraphSummary> graph;
};

/// Cost of fibre f of dimension k under a labelling (unweighted).
double fibre_cost(const Costs& costs, const Grid& grid, const Labelling& labelling, int k, int f,
                  FibreCost kind);

/// Full evaluation from scratch: O(sum_k p * q_k) cost lookups for fibres,
/// O(p * neighbours) for a stencil, O(edges) for a graph. Throws std::invalid_argument if costs,
/// grid and labelling disagree on p, or the spec does not fit the grid.
Evaluation evaluate(const Costs& costs, const Grid& grid, const Labelling& labelling,
                    const ObjectiveSpec& spec);

/// Where local search should try a move: a position whose rank costs much
/// where it is (the worst member of a fibre of dimension `dimension`, or a
/// busy rank of a stencil).
struct SearchFocus {
  NewRank position;
  int dimension = -1;  // fibres: the fibre's dimension and index
  int fibre = -1;
};

namespace detail {
class PatternState;
}

/// The objective of a labelling under change, with exact incremental values
/// for pair swaps and 3-cycles, for every pattern.
/// Fibres: only the fibres of the moved positions are re-costed (O(d * q)
/// lookups for sums of pairs, O(d * q^2) for max pair); apply_*() re-costs
/// the moved fibres from scratch (no drift over many moves) and rescans the
/// per-dimension maxima, O(p / q) per dimension. With +links, each level
/// adds O(q log q + groups) per dimension to a candidate move (none when
/// the moved ranks share a group) and O(groups) to an applied one.
/// Stencils: the moved positions and their neighbours are re-costed
/// (O(m^2) lookups for m neighbours per rank) and the links of the moved
/// positions' messages re-counted in whole units (exact); maxima come from
/// ordered sets, O(m log p) per applied move.
/// Graphs: the moved positions' edges are re-costed and their links
/// re-counted in whole units (O(degree) lookups, O(degree log groups) per
/// applied move).
/// Values agree with evaluate() up to floating-point rounding (~1e-12
/// relative). Holds a reference to costs: they must outlive this object.
/// Positions outside the grid throw std::out_of_range. Not thread-safe,
/// even for const calls (they share a work buffer).
class IncrementalObjective {
 public:
  /// Throws std::invalid_argument as evaluate() does.
  IncrementalObjective(const Costs& costs, Grid grid, Labelling labelling, ObjectiveSpec spec);
  ~IncrementalObjective();
  IncrementalObjective(IncrementalObjective&&) noexcept;

  ObjectiveValue value() const;
  const Labelling& labelling() const;
  const Grid& grid() const { return grid_; }
  const ObjectiveSpec& spec() const { return spec_; }
  const Costs& costs() const { return costs_; }
  Evaluation evaluation() const;

  /// Value after exchanging the old ranks at positions a and b (not applied).
  ObjectiveValue value_after_swap(NewRank a, NewRank b) const;
  /// Value after Labelling::cycle_positions(a, b, c) (not applied).
  ObjectiveValue value_after_cycle(NewRank a, NewRank b, NewRank c) const;
  void apply_swap(NewRank a, NewRank b);
  void apply_cycle(NewRank a, NewRank b, NewRank c);

  /// For local search (lib/relabel/search.h). False when no move can
  /// change the value (e.g. a grid whose every dimension is one fibre).
  bool can_improve() const;
  /// A position worth moving; round counts the calls (fibres visit the
  /// dimensions in turn).
  SearchFocus focus(std::int64_t round, SplitMix64& rng) const;
  /// A position that talks with the focus (a member of its fibre, a
  /// neighbour): ranks close to its rank are good candidates to move in.
  NewRank partner(const SearchFocus& focus, SplitMix64& rng) const;
  /// True if a move between the focus and `other` cannot help (the same
  /// fibre, the same position).
  bool pointless(const SearchFocus& focus, NewRank other) const;

 private:
  void check_positions(std::initializer_list<NewRank> positions) const;

  const Costs& costs_;
  Grid grid_;
  ObjectiveSpec spec_;
  std::unique_ptr<detail::PatternState> state_;
};

}  // namespace rankshape

#endif  // RANKSHAPE_LIB_MODEL_OBJECTIVE_H_
