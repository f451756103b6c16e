#include "lib/model/grid.h"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <stdexcept>
#include <tuple>

namespace rankshape {

Grid::Grid(std::vector<int> dims) : dims_(std::move(dims)) {
  if (dims_.empty()) throw std::invalid_argument("a grid needs at least one dimension");
  std::int64_t size = 1;
  for (std::size_t k = 0; k < dims_.size(); ++k) {
    if (dims_[k] < 1) {
      throw std::invalid_argument("grid dimension " + std::to_string(k) + " is " +
                                  std::to_string(dims_[k]) + "; dimensions must be at least 1");
    }
    size *= dims_[k];
    if (size > INT32_MAX) throw std::invalid_argument("grid has more than 2^31-1 positions");
  }
  size_ = static_cast<int>(size);
  strides_.assign(dims_.size(), 1);
  for (int k = static_cast<int>(dims_.size()) - 2; k >= 0; --k) {
    strides_[k] = strides_[k + 1] * dims_[k + 1];
  }
}

Grid Grid::parse(std::string_view text) {
  std::vector<int> dims;
  std::size_t i = 0;
  const auto is_sep = [](char c) { return c == 'x' || c == 'X' || c == ',' || c == ' '; };
  while (i < text.size()) {
    std::size_t j = i;
    while (j < text.size() && !is_sep(text[j])) ++j;
    const std::string_view part = text.substr(i, j - i);
    int value = 0;
    const auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), value);
    if (part.empty() || ec != std::errc() || end != part.data() + part.size()) {
      throw std::invalid_argument("grid '" + std::string(text) + "': '" + std::string(part) +
                                  "' is not a whole number (expected e.g. 16x16x16)");
    }
    dims.push_back(value);
    i = j + 1;
    if (j + 1 == text.size()) {
      throw std::invalid_argument("grid '" + std::string(text) + "' ends with a separator");
    }
  }
  if (dims.empty()) throw std::invalid_argument("grid is empty (expected e.g. 16x16x16)");
  try {
    return Grid(std::move(dims));
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument("grid '" + std::string(text) + "': " + e.what());
  }
}

std::vector<int> Grid::coords(NewRank position) const {
  std::vector<int> c(dims_.size());
  int p = position.value();
  for (int k = ndims() - 1; k >= 0; --k) {
    c[k] = p % dims_[k];
    p /= dims_[k];
  }
  return c;
}

NewRank Grid::position(const std::vector<int>& coords) const {
  if (coords.size() != dims_.size()) throw std::invalid_argument("coordinate count mismatch");
  int p = 0;
  for (std::size_t k = 0; k < dims_.size(); ++k) {
    if (coords[k] < 0 || coords[k] >= dims_[k]) throw std::out_of_range("coordinate outside grid");
    p = p * dims_[k] + coords[k];
  }
  return NewRank(p);
}

std::string Grid::to_string() const {
  std::string s;
  for (std::size_t k = 0; k < dims_.size(); ++k) {
    if (k) s += 'x';
    s += std::to_string(dims_[k]);
  }
  return s;
}

namespace {

int dims_fitting_in_node(const std::vector<int>& dims, int node_size) {
  if (node_size <= 0) return 0;
  int fitting = 0;
  std::int64_t span = 1;  // positions covered by one fibre of dimension k
  for (int k = static_cast<int>(dims.size()) - 1; k >= 0; --k) {
    span *= dims[k];
    if (node_size % span != 0) break;
    if (dims[k] > 1) ++fitting;
  }
  return fitting;
}

// Walks the factorisations of p into ndims factors without storing them,
// keeping the best. Without a node size only non-increasing tuples are
// visited (the answer is one of them), which keeps the search small.
class DimsSearch {
 public:
  // max_dim bounds every factor (elongated shapes are never worth it).
  DimsSearch(int p, int ndims, int node_size, int max_dim)
      : ndims_(ndims), node_size_(node_size), max_dim_(max_dim) {
    for (int f = 1; f <= p / f; ++f) {
      if (p % f != 0) continue;
      divisors_.push_back(f);
      if (f != p / f) divisors_.push_back(p / f);
    }
    std::sort(divisors_.begin(), divisors_.end());
    current_.reserve(ndims);
    visit(p, p);
  }
  const std::vector<int>& best() const { return best_; }

 private:
  void visit(int left, int bound) {
    if (static_cast<int>(current_.size()) == ndims_ - 1) {
      if ((node_size_ <= 0 && left > bound) || left > max_dim_) return;
      current_.push_back(left);
      consider();
      current_.pop_back();
      return;
    }
    for (int f : divisors_) {
      if (f > left || f > max_dim_) break;
      if (left % f != 0 || (node_size_ <= 0 && f > bound)) continue;
      current_.push_back(f);
      visit(left / f, f);
      current_.pop_back();
    }
  }

  // Best = most dimensions inside a node, then smallest spread (max - min),
  // then non-increasing order (as MPI_Dims_create), then lexicographically
  // largest, so that the answer is deterministic.
  void consider() {
    const auto [lo, hi] = std::minmax_element(current_.begin(), current_.end());
    const auto key = std::make_tuple(-dims_fitting_in_node(current_, node_size_), *hi - *lo,
                                     !std::is_sorted(current_.rbegin(), current_.rend()));
    if (best_.empty() || key < best_key_ || (key == best_key_ && current_ > best_)) {
      best_ = current_;
      best_key_ = key;
    }
  }

  int ndims_;
  int node_size_;
  int max_dim_;
  std::vector<int> divisors_;
  std::vector<int> current_;
  std::vector<int> best_;
  std::tuple<int, int, bool> best_key_;
};

}  // namespace

std::vector<int> choose_dims(int p, int ndims, int node_size) {
  if (p < 1) throw std::invalid_argument("choose_dims: p must be at least 1");
  if (ndims < 1 || ndims > kMaxChooseDims) {
    throw std::invalid_argument("choose_dims: ndims must be in [1, " +
                                std::to_string(kMaxChooseDims) + "]");
  }
  const std::vector<int> balanced = DimsSearch(p, ndims, 0, p).best();
  if (node_size <= 0) return balanced;
  // Fitting fibres into nodes may stretch the shape, but at most to twice
  // the balanced shape's largest dimension.
  const int max_dim = balanced[0] > p / 2 ? p : 2 * balanced[0];
  return DimsSearch(p, ndims, node_size, max_dim).best();
}

}  // namespace rankshape
