// Who talks to whom in one step of a program on a cartesian grid, and so
// what a labelling must keep on cheap links.
//
//   fibres   each rank with every other rank of its fibre, one dimension at
//            a time (collectives along dimensions, SUMMA, 3D matrix
//            multiplication); the default
//   stencil  each rank with its grid neighbours, all at once (halo
//            exchange: MPI_Cart_shift, MPI_Neighbor_alltoall): at distance 1
//            along every dimension (2d neighbours: 5 points in 2D, 7 in 3D),
//            optionally also the diagonal ones (9 points in 2D, 27 in 3D),
//            wrapping around periodic dimensions
//   graph    any weighted traffic graph over the ranks (a profiled or
//            declared pattern); the graph itself comes with the objective
//            (ObjectiveSpec::graph), its grid is 1-D with one position per
//            rank
//
// Text form (Pattern::parse, name):
//   fibres
//   graph
//   stencil[:OPTION[,OPTION]...]
//     periodic           every dimension wraps around
//     periodic=1x0x1     per dimension: 1 wraps, 0 does not
//     points=N           N = 2d+1 (the neighbours along the axes, default) or
//                        3^d (with the diagonal ones)
//     diagonals          the same as points=3^d
//     weights=4x1x1      per dimension: what one message to a neighbour
//                        along it weighs (its halo's size; default 1)
//     diagonal-weight=W  what one message to a diagonal neighbour weighs
//                        (default 1)
// e.g. "stencil:periodic,points=9,weights=2x1". Options name no dimension
// count, so one text fits grids of any dimension; Stencil checks it against
// the grid (a periods or weights list must have one entry per dimension).
//
// Worked example: grid 3x3, "stencil" (no periods). Position 4 (the
// centre, coordinates (1,1)) has neighbours 1, 7 (dimension 0) and 3, 5
// (dimension 1); corner 0 has only 3 and 1. With "stencil:periodic", corner
// 0 also has 6 (up, wrapping) and 2 (left, wrapping).
#ifndef RANKSHAPE_LIB_MODEL_PATTERN_H_
#define RANKSHAPE_LIB_MODEL_PATTERN_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "lib/model/grid.h"

namespace rankshape {

enum class PatternKind {
  kFibres,
  kStencil,
  kGraph,
};

/// The stencil's options as given (Stencil checks them against a grid).
struct StencilSpec {
  /// Empty: by `all_periodic`; else one flag per dimension.
  std::vector<bool> periods;
  bool all_periodic = false;
  /// 0: not given (the axes only); else 2d+1 or 3^d, checked against d.
  int points = 0;
  bool diagonals = false;
  /// Empty: all 1; else one per dimension, each > 0.
  std::vector<double> weights;
  double diagonal_weight = 1;
  /// True when periods were given ("periodic" or "periodic=..."): a
  /// program's own periods (MPI_Cart_create's) then do not replace them.
  bool periods_given() const { return all_periodic || !periods.empty(); }
};

struct Pattern {
  PatternKind kind = PatternKind::kFibres;
  StencilSpec stencil;  // kStencil only

  /// Parses the text form above. Throws std::invalid_argument naming the
  /// bad part and listing what is accepted.
  static Pattern parse(std::string_view text);
  /// The text form, options in a fixed order; parse(name()) gives back an
  /// equal pattern.
  std::string name() const;
  bool is_stencil() const { return kind == PatternKind::kStencil; }
  bool is_graph() const { return kind == PatternKind::kGraph; }
  /// This pattern with the given periods when it is a stencil whose text
  /// named none (the MPI_Cart_create drop-in passes the program's).
  Pattern with_default_periods(const std::vector<bool>& periods) const;

  friend bool operator==(const Pattern& a, const Pattern& b) { return a.name() == b.name(); }
  friend bool operator!=(const Pattern& a, const Pattern& b) { return !(a == b); }
};

/// Largest ratio between the largest and the smallest stencil weight.
constexpr double kMaxWeightRatio = 1e6;

/// A stencil laid on one grid: the neighbour offsets, their weights, and
/// neighbour lookup. Offsets come in +/- pairs of equal weight, so the
/// stencil's graph is symmetric: if y is x's neighbour by offset o, x is
/// y's by the opposite offset (opposite(o)).
class Stencil {
 public:
  /// Throws std::invalid_argument if the spec does not fit the grid: a
  /// periods or weights list of another length, points that are neither
  /// 2d+1 nor 3^d, a weight that is not finite and > 0, or weights more
  /// than kMaxWeightRatio apart.
  Stencil(const StencilSpec& spec, const Grid& grid);
  /// A stencil with explicit offsets and weights (the coarse problems of
  /// multilevel search): deltas[o] has one entry per dimension in {-1, 0,
  /// 1}, not all 0, and the opposite of every offset is present with the
  /// same weight. Throws std::invalid_argument otherwise.
  Stencil(const Grid& grid, std::vector<bool> periods, std::vector<std::vector<int>> deltas,
          std::vector<double> weights);

  const Grid& grid() const { return grid_; }
  int offsets() const { return static_cast<int>(weights_.size()); }
  const std::vector<int>& delta(int o) const { return deltas_[static_cast<std::size_t>(o)]; }
  double weight(int o) const { return weights_[static_cast<std::size_t>(o)]; }
  /// The weight in whole units: link loads add these, so that incremental
  /// and full evaluations agree exactly. The unit is the largest that every
  /// weight is a multiple of when their ratios are fractions with
  /// denominators up to 1024 (weights 2.5 and 3: unit 0.5), else 1/1024 of
  /// the smallest weight, the others rounded to it.
  std::int64_t units(int o) const { return units_[static_cast<std::size_t>(o)]; }
  /// What one unit weighs: weight(o) is about units(o) * unit_weight().
  double unit_weight() const { return unit_weight_; }
  int opposite(int o) const { return opposite_[static_cast<std::size_t>(o)]; }
  bool periodic(int k) const { return periods_[static_cast<std::size_t>(k)]; }
  const std::vector<bool>& periods() const { return periods_; }
  /// True for offsets with more than one non-zero component.
  bool diagonal(int o) const;

  /// The neighbour of position x by offset o, or -1 where a non-periodic
  /// dimension ends. In a periodic dimension of size 1 or 2 a position can
  /// be its own neighbour or have the same neighbour twice: the messages
  /// are still sent, and counted.
  int neighbour(int x, int o) const;
  /// The same from x's coordinates (coords.size() == ndims).
  int neighbour(const std::vector<int>& coords, int x, int o) const;

 private:
  void finish();

  Grid grid_;
  std::vector<bool> periods_;
  std::vector<std::vector<int>> deltas_;
  std::vector<double> weights_;
  std::vector<std::int64_t> units_;
  double unit_weight_ = 1;
  std::vector<int> opposite_;
};

}  // namespace rankshape

#endif  // RANKSHAPE_LIB_MODEL_PATTERN_H_
