#include "lib/measure/consistency.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "lib/measure/fit.h"

namespace rankshape {

ConsistencyCheck check_consistency(const std::vector<double>& m, int p,
                                   const std::vector<int>& node_of, double factor, int max_thirds) {
  if (p < 0 || m.size() != static_cast<std::size_t>(p) * p) {
    throw std::invalid_argument("check_consistency: a matrix of " + std::to_string(m.size()) +
                                " values for " + std::to_string(p) + " ranks");
  }
  if (!node_of.empty() && static_cast<int>(node_of.size()) != p) {
    throw std::invalid_argument("check_consistency: nodes for " + std::to_string(node_of.size()) +
                                " ranks, expected " + std::to_string(p));
  }
  if (!(factor >= 1)) throw std::invalid_argument("check_consistency: factor must be >= 1");
  const auto at = [&](int a, int b) { return m[static_cast<std::size_t>(a) * p + b]; };
  ConsistencyCheck out;
  std::vector<char> flagged(static_cast<std::size_t>(p) * p, 0);
  const auto flag = [&](int a, int b) {
    char& f = flagged[static_cast<std::size_t>(a) * p + b];
    if (!f) out.suspects.emplace_back(a, b);
    f = 1;
  };

  // Thirds: every rank, or an evenly spread sample of max_thirds of them.
  std::vector<int> thirds;
  const int n = std::min(p, std::max(1, max_thirds));
  for (int i = 0; i < n; ++i) thirds.push_back(static_cast<int>(static_cast<long long>(i) * p / n));
  for (int a = 0; a < p; ++a) {
    for (int b = a + 1; b < p; ++b) {
      const double v = at(a, b);
      double best = -1;
      for (int c : thirds) {
        if (c == a || c == b) continue;
        const double path =
            std::max(at(std::min(a, c), std::max(a, c)), at(std::min(b, c), std::max(b, c)));
        if (best < 0 || path < best) best = path;
      }
      if (best > 0 && v > factor * best) {
        flag(a, b);
        ++out.triangle;
      }
    }
  }

  if (!node_of.empty()) {
    std::vector<double> inside, across;
    for (int a = 0; a < p; ++a) {
      for (int b = a + 1; b < p; ++b)
        (node_of[a] == node_of[b] ? inside : across).push_back(at(a, b));
    }
    if (!inside.empty() && !across.empty()) {
      out.inside_median = median(inside);
      out.across_median = median(across);
      const double cheapest_across = *std::min_element(across.begin(), across.end());
      for (int a = 0; a < p; ++a) {
        for (int b = a + 1; b < p; ++b) {
          if (node_of[a] == node_of[b] && at(a, b) >= cheapest_across)
            out.overlap.emplace_back(a, b);
        }
      }
      if (!(out.inside_median < out.across_median)) {
        out.inverted = true;
      } else {
        for (int a = 0; a < p; ++a) {
          for (int b = a + 1; b < p; ++b) {
            if (node_of[a] == node_of[b] && at(a, b) > out.across_median) {
              flag(a, b);
              ++out.node_order;
            }
          }
        }
      }
    }
  }
  std::sort(out.suspects.begin(), out.suspects.end());
  return out;
}

}  // namespace rankshape
