// A cartesian process grid q0 x q1 x ... x q(d-1).
//
// Positions are row-major with the last dimension fastest, as MPI_Cart_create
// numbers them. A fibre along dimension k is the set of q_k positions that
// agree on every coordinate but k. Example, grid 2x3 (positions 0..5):
//   0 1 2        dimension 0 has 3 fibres: {0,3} {1,4} {2,5}
//   3 4 5        dimension 1 has 2 fibres: {0,1,2} {3,4,5}
// Fibre f of dimension k holds base(f) + t * stride(k), t = 0..q_k-1, with
// stride(k) = q(k+1) * ... * q(d-1).
#ifndef RANKSHAPE_LIB_MODEL_GRID_H_
#define RANKSHAPE_LIB_MODEL_GRID_H_

#include <string>
#include <string_view>
#include <vector>

#include "lib/model/rank.h"

namespace rankshape {

class Grid {
 public:
  /// Throws std::invalid_argument for no dimensions, a dimension < 1, or a
  /// size that does not fit in a 32-bit rank.
  explicit Grid(std::vector<int> dims);

  /// Parses "16x16x16" (also "16X16", "16,16", "16 16"; a single "64" is a
  /// 1-D grid). Throws std::invalid_argument naming the bad part.
  static Grid parse(std::string_view text);

  int ndims() const { return static_cast<int>(dims_.size()); }
  int size() const { return size_; }
  int dim(int k) const { return dims_[k]; }
  const std::vector<int>& dims() const { return dims_; }
  /// Distance in positions between neighbours along dimension k.
  int stride(int k) const { return strides_[k]; }
  /// Number of fibres along dimension k (= size / dim(k)).
  int fibre_count(int k) const { return size_ / dims_[k]; }

  std::vector<int> coords(NewRank position) const;
  NewRank position(const std::vector<int>& coords) const;

  /// Index in [0, fibre_count(k)) of the fibre of dimension k through position.
  int fibre_of(NewRank position, int k) const {
    const int p = position.value();
    const int s = strides_[k];
    return (p / (s * dims_[k])) * s + p % s;
  }
  /// Member t (0 <= t < dim(k)) of fibre f of dimension k; t is the coordinate.
  NewRank fibre_member(int k, int f, int t) const {
    const int s = strides_[k];
    return NewRank((f / s) * s * dims_[k] + f % s + t * s);
  }
  /// "16x16x16".
  std::string to_string() const;

 private:
  std::vector<int> dims_;
  std::vector<int> strides_;
  int size_ = 1;
};

/// Chooses grid dimensions for p ranks in ndims dimensions, like
/// MPI_Dims_create: as balanced as possible, larger dimensions first.
/// With node_size > 0 it first maximises the number of dimensions whose
/// fibres fit inside a node under block placement (trailing dimensions whose
/// product divides node_size), then balances, among shapes whose largest
/// dimension is at most twice that of the balanced shape. Throws std::invalid_argument
/// for p < 1 or ndims outside [1, kMaxChooseDims].
constexpr int kMaxChooseDims = 8;
std::vector<int> choose_dims(int p, int ndims, int node_size = 0);

}  // namespace rankshape

#endif  // RANKSHAPE_LIB_MODEL_GRID_H_
