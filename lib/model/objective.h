// How good a labelling is for a cartesian program.
//
// A cartesian algorithm communicates along one dimension at a time, and each
// step lasts as long as its slowest fibre. The default objective is therefore
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
// which pair costs measured one message at a time do not see.
//
// Worked example: costs D = 1 inside nodes {0,1} and {2,3}, 10 across; grid
// 2x2 (fibres of dim 0: {0,2} {1,3}; of dim 1: {0,1} {2,3}). The identity
// gives dim 0 fibres cost 10 and 10, dim 1 fibres 1 and 1: T = 10 + 1 = 11,
// total = 22. The grid transposed (perm 0,2,1,3) gives the same T: with two
// dimensions of two, one dimension must cross nodes.
#ifndef RANKSHAPE_LIB_MODEL_OBJECTIVE_H_
#define RANKSHAPE_LIB_MODEL_OBJECTIVE_H_

#include <array>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "lib/model/costs.h"
#include "lib/model/grid.h"
#include "lib/model/labelling.h"
#include "lib/model/link_load.h"

namespace rankshape {

enum class FibreCost {
  kSumOfPairs,  // "pairs": total traffic cost inside the fibre
  kMaxPair,     // "max-pair": the slowest link inside the fibre
};

enum class Aggregate {
  kSumOfDimensionMax,  // "sum-max": default, one step per dimension
  kMaxOverAllFibres,   // "thesis-max": van Duijn's single max over all fibres
  kSumOfAllFibres,     // "total": every fibre counts
};

struct ObjectiveSpec {
  FibreCost fibre = FibreCost::kSumOfPairs;
  Aggregate aggregate = Aggregate::kSumOfDimensionMax;
  /// Optional per-dimension factors on fibre costs (empty = all 1). Coarse
  /// levels of the multilevel search use them: a coarse fibre stands for
  /// fine fibres carrying b_k^2 times its pair costs.
  std::vector<double> dimension_weights;
  /// "+links": a dimension costs max(worst fibre, link load). Only with
  /// sum-max and thesis-max.
  bool link_load = false;
  /// The levels the link load counts. Null with link_load set: evaluate()
  /// and IncrementalObjective find them in the costs (link_levels(costs,
  /// {})); relabel() passes the known nodes and racks.
  std::shared_ptr<const std::vector<LinkLevel>> links;

  double weight(int k) const {
    return dimension_weights.empty() ? 1.0 : dimension_weights[static_cast<std::size_t>(k)];
  }

  /// Parses "sum-max", "thesis-max", "total", optionally followed by
  /// ":pairs" or ":max-pair" (e.g. "thesis-max:max-pair"), then optionally
  /// "+links" (not with total). Throws std::invalid_argument listing the
  /// accepted names.
  static ObjectiveSpec parse(std::string_view text);
  /// The name parse() accepts, e.g. "sum-max:pairs" or "sum-max:pairs+links".
  std::string name() const;
  /// This spec with the link load's levels filled in when link_load is set
  /// and they are missing: known levels (finest first), then those found in
  /// the costs.
  ObjectiveSpec with_links(const Costs& costs, const std::vector<std::vector<int>>& known) const;
  /// This spec without the link load (for coarse and partial problems,
  /// whose items are not the ranks the levels describe).
  ObjectiveSpec pairs_only() const;
};

/// An objective value: smaller is better; primary first, total breaks ties.
/// total is the sum of all fibre costs; with +links it adds, for every
/// dimension, every group's load times its level's flow cost, so that
/// search sees progress when a group other than the busiest sheds load.
struct ObjectiveValue {
  double primary = 0;
  double total = 0;

  friend bool operator<(const ObjectiveValue& a, const ObjectiveValue& b) {
    if (a.primary != b.primary) return a.primary < b.primary;
    return a.total < b.total;
  }
};

/// True if candidate is better than current by more than rounding: the
/// incremental and full values of one labelling may differ in the last
/// bits, and search must not chase such differences forever.
inline bool improves(const ObjectiveValue& candidate, const ObjectiveValue& current) {
  const auto tolerance = [](double x) { return 1e-10 * (x < 0 ? -x : x) + 1e-300; };
  if (candidate.primary < current.primary - tolerance(current.primary)) return true;
  if (candidate.primary > current.primary + tolerance(current.primary)) return false;
  return candidate.total < current.total - tolerance(current.total);
}

struct DimensionSummary {
  double worst = 0;     // cost of the most expensive fibre
  double mean = 0;      // mean fibre cost
  int worst_fibre = 0;  // index of the most expensive fibre
};

struct Evaluation {
  ObjectiveValue value;
  std::vector<DimensionSummary> dimensions;
  /// Link load per dimension; empty without "+links".
  std::vector<double> link_load;
};

/// Cost of fibre f of dimension k under a labelling (unweighted).
double fibre_cost(const Costs& costs, const Grid& grid, const Labelling& labelling, int k, int f,
                  FibreCost kind);

/// Full evaluation from scratch: O(sum_k p * q_k) cost lookups. Throws
/// std::invalid_argument if costs, grid and labelling disagree on p.
Evaluation evaluate(const Costs& costs, const Grid& grid, const Labelling& labelling,
                    const ObjectiveSpec& spec);

/// The objective of a labelling under change, with exact incremental values
/// for pair swaps and 3-cycles: only the fibres of the moved positions are
/// re-costed (O(d * q) lookups for sums of pairs, O(d * q^2) for max pair).
/// apply_*() re-costs the moved fibres from scratch (no drift over many
/// moves) and rescans the per-dimension maxima, O(p / q) per dimension.
/// With +links, each level adds O(q log q + groups) per dimension to a
/// candidate move (none when the moved ranks share a group) and O(groups)
/// to an applied one.
/// Values agree with evaluate() up to floating-point rounding (~1e-12
/// relative). Holds a reference to costs: they must outlive this object.
/// Positions outside the grid throw std::out_of_range. Not thread-safe,
/// even for const calls (they share a work buffer).
class IncrementalObjective {
 public:
  IncrementalObjective(const Costs& costs, Grid grid, Labelling labelling, ObjectiveSpec spec);

  ObjectiveValue value() const { return value_; }
  const Labelling& labelling() const { return labelling_; }
  const Grid& grid() const { return grid_; }
  /// Weighted cost of fibre f of dimension k.
  double fibre_cost(int k, int f) const { return fibre_costs_[k][f]; }
  /// The most expensive fibre of dimension k.
  int worst_fibre(int k) const { return top_[k][0]; }
  const ObjectiveSpec& spec() const { return spec_; }
  const Costs& costs() const { return costs_; }
  Evaluation evaluation() const;

  /// Value after exchanging the old ranks at positions a and b (not applied).
  ObjectiveValue value_after_swap(NewRank a, NewRank b) const;
  /// Value after Labelling::cycle_positions(a, b, c) (not applied).
  ObjectiveValue value_after_cycle(NewRank a, NewRank b, NewRank c) const;
  void apply_swap(NewRank a, NewRank b);
  void apply_cycle(NewRank a, NewRank b, NewRank c);

 private:
  // Up to three positions and the old rank each receives.
  struct Move {
    int n = 0;
    std::array<NewRank, 3> pos;
    std::array<OldRank, 3> arriving;
  };
  Move swap_move(NewRank a, NewRank b) const;
  Move cycle_move(NewRank a, NewRank b, NewRank c) const;
  ObjectiveValue value_after(const Move& move) const;
  void apply(const Move& move);
  double moved_fibre_cost(const Move& move, int k, int f) const;
  void rebuild_top(int k);
  ObjectiveValue combine(const std::vector<double>& dim_max, double total) const;
  void check_positions(std::initializer_list<NewRank> positions) const;

  // Enough top fibres per dimension that a move (at most 3 fibres per
  // dimension) always leaves one unchanged entry to compare against.
  static constexpr int kTop = 4;

  // Link load ("+links"): the load of every group of every level in every
  // dimension, and the moved fibres' part of it.
  // Loads are kept as whole numbers, sum of m (q - m) (divided by q when
  // read), so that moves applied and undone leave no rounding behind.
  bool has_links() const { return spec_.link_load && spec_.links != nullptr; }
  struct LinkChange {
    double worst = 0;        // the dimension's link load after the move
    double total_delta = 0;  // change of its part of the tie-break
  };
  void add_fibre_load(int k, int f, std::int64_t sign);
  void refresh_link_figures(int k);
  double dimension_link_load(int k) const;
  double link_total() const;
  LinkChange link_load_after(const Move& move, int k, const std::array<int, 3>& fibres,
                             int n) const;
  std::vector<std::vector<std::vector<std::int64_t>>> group_load_;  // [k][level][group]
  std::vector<std::vector<std::int64_t>> load_max_, load_sum_;      // [k][level]
  mutable std::vector<std::int64_t> scratch_delta_;                 // [group]
  mutable std::vector<char> scratch_touched_;                       // [group]
  mutable std::vector<int> scratch_list_;
  mutable std::vector<int> scratch_members_;

  const Costs& costs_;
  Grid grid_;
  Labelling labelling_;
  ObjectiveSpec spec_;
  std::vector<std::vector<double>> fibre_costs_;  // [k][f]
  std::vector<std::array<int, kTop>> top_;        // [k]: best fibres, -1 = none
  double total_ = 0;
  ObjectiveValue value_;
  mutable std::vector<double> scratch_dim_max_;  // value_after's work space
};

}  // namespace rankshape

#endif  // RANKSHAPE_LIB_MODEL_OBJECTIVE_H_
