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

// All ordered ways to write p as a product of `left` factors.
void factorisations(int p, int left, std::vector<int>& current,
                    std::vector<std::vector<int>>& out) {
  if (left == 1) {
    current.push_back(p);
    out.push_back(current);
    current.pop_back();
    return;
  }
  for (int f = 1; f <= p; ++f) {
    if (p % f != 0) continue;
    current.push_back(f);
    factorisations(p / f, left - 1, current, out);
    current.pop_back();
  }
}

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

}  // namespace

std::vector<int> choose_dims(int p, int ndims, int node_size) {
  if (p < 1) throw std::invalid_argument("choose_dims: p must be at least 1");
  if (ndims < 1) throw std::invalid_argument("choose_dims: ndims must be at least 1");
  std::vector<std::vector<int>> all;
  std::vector<int> current;
  factorisations(p, ndims, current, all);
  // Best = most dimensions inside a node, then smallest spread (max - min),
  // then the order MPI_Dims_create uses (non-increasing).
  const auto key = [&](const std::vector<int>& d) {
    const auto [lo, hi] = std::minmax_element(d.begin(), d.end());
    const bool non_increasing = std::is_sorted(d.rbegin(), d.rend());
    return std::make_tuple(-dims_fitting_in_node(d, node_size), *hi - *lo, !non_increasing);
  };
  return *std::min_element(all.begin(), all.end(), [&](const auto& a, const auto& b) {
    const auto ka = key(a);
    const auto kb = key(b);
    if (ka != kb) return ka < kb;
    return a > b;  // deterministic: lexicographically largest first
  });
}

}  // namespace rankshape
