#include "lib/relabel/kl.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace rankshape {
namespace {

double d(const Costs& c, int a, int b) { return c.cost(OldRank(a), OldRank(b)); }

// One KL pass over groups a and b; returns the gain applied (0 if none).
// At the deadline the pass stops early and applies the best prefix of the
// swaps recorded so far (each prefix is a valid exchange).
double improve_pair(const Costs& c, std::vector<int>& a, std::vector<int>& b,
                    const Deadline& deadline) {
  const int n = static_cast<int>(a.size());
  std::vector<double> va(n), vb(n);
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j) {
      va[i] += d(c, a[i], a[j]) - d(c, a[i], b[j]);
      vb[i] += d(c, b[i], b[j]) - d(c, b[i], a[j]);
    }
  }
  std::vector<char> locked_a(n, 0), locked_b(n, 0);
  std::vector<std::pair<int, int>> swaps;
  std::vector<double> gains;
  for (int step = 0; step < n; ++step) {
    if (step % 8 == 7 && deadline.passed()) break;
    double best = -std::numeric_limits<double>::infinity();
    int bi = -1, bj = -1;
    for (int i = 0; i < n; ++i) {
      if (locked_a[i]) continue;
      for (int j = 0; j < n; ++j) {
        if (locked_b[j]) continue;
        const double g = va[i] + vb[j] + 2 * d(c, a[i], b[j]);
        if (g > best) {
          best = g;
          bi = i;
          bj = j;
        }
      }
    }
    locked_a[bi] = locked_b[bj] = 1;
    swaps.emplace_back(bi, bj);
    gains.push_back(best);
    // As if a[bi] and b[bj] had swapped groups.
    for (int i = 0; i < n; ++i) {
      if (!locked_a[i]) va[i] += 2 * d(c, a[i], b[bj]) - 2 * d(c, a[i], a[bi]);
      if (!locked_b[i]) vb[i] += 2 * d(c, b[i], a[bi]) - 2 * d(c, b[i], b[bj]);
    }
  }
  // Best prefix, swaps 0..k inclusive. A prefix that swaps and swaps back
  // sums to zero up to rounding: demand a gain above rounding's reach.
  double scale = 0;
  for (double g : gains) scale += std::abs(g);
  const double tolerance = 1e-9 * scale;
  double sum = 0, best_sum = 0;
  int best_k = -1;
  for (int k = 0; k < static_cast<int>(gains.size()); ++k) {
    sum += gains[k];
    if (sum > best_sum && sum > tolerance) {
      best_sum = sum;
      best_k = k;
    }
  }
  for (int k = 0; k <= best_k; ++k) std::swap(a[swaps[k].first], b[swaps[k].second]);
  if (best_k >= 0) {
    std::sort(a.begin(), a.end());
    std::sort(b.begin(), b.end());
  }
  return best_sum;
}

}  // namespace

double inside_cost(const Costs& costs, const std::vector<std::vector<int>>& groups) {
  double total = 0;
  for (const auto& g : groups) {
    for (std::size_t i = 0; i < g.size(); ++i) {
      for (std::size_t j = i + 1; j < g.size(); ++j) total += d(costs, g[i], g[j]);
    }
  }
  return total;
}

double refine_partition_kl(const Costs& costs, std::vector<std::vector<int>>& groups,
                           const Deadline& deadline) {
  double total_gain = 0;
  bool improved = true;
  while (improved && !deadline.passed()) {
    improved = false;
    for (std::size_t i = 0; i < groups.size() && !deadline.passed(); ++i) {
      for (std::size_t j = i + 1; j < groups.size() && !deadline.passed(); ++j) {
        const double g = improve_pair(costs, groups[i], groups[j], deadline);
        if (g > 0) {
          total_gain += g;
          improved = true;
        }
      }
    }
  }
  return total_gain;
}

}  // namespace rankshape
