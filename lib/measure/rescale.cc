#include "lib/measure/rescale.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <stdexcept>
#include <string>

#include "lib/measure/fit.h"

namespace rankshape {
namespace {

using Pair = std::pair<int, int>;
using Class = std::pair<int, int>;  // the two nodes, lower first
constexpr double kNone = std::numeric_limits<double>::infinity();

Class class_of(const std::vector<int>& node_of, int a, int b) {
  return {std::min(node_of[a], node_of[b]), std::max(node_of[a], node_of[b])};
}

void check_sizes(std::size_t m, int p, const std::vector<int>& node_of, const char* what) {
  if (p < 0 || m != static_cast<std::size_t>(p) * p) {
    throw std::invalid_argument(std::string(what) + ": a matrix of " + std::to_string(m) +
                                " entries for " + std::to_string(p) + " ranks");
  }
  if (!node_of.empty() && static_cast<int>(node_of.size()) != p) {
    throw std::invalid_argument(std::string(what) + ": nodes for " +
                                std::to_string(node_of.size()) + " ranks, not " +
                                std::to_string(p));
  }
}

void check_pairs(const std::vector<Pair>& pairs, int p, const char* what) {
  for (const auto& [a, b] : pairs) {
    if (a < 0 || b >= p || a >= b) {
      throw std::invalid_argument(std::string(what) + ": pair (" + std::to_string(a) + ", " +
                                  std::to_string(b) + ") is not a < b among " + std::to_string(p) +
                                  " ranks");
    }
  }
}

// What a class's references tell in one pass: how slow the host is (pass
// over kept time, median, at least 1) and their least kept time.
struct Slowdown {
  std::vector<double> ratios;
  double least = kNone;

  void add(double before, double now) {
    ratios.push_back(now / before);
    least = std::min(least, before);
  }
  // A pass time rescaled, never below the references' least (nor above
  // the time itself).
  double rescale(double now) const {
    return std::max(now / std::max(1.0, median(ratios)), std::min(now, least));
  }
};

}  // namespace

std::vector<Pair> reference_pairs(const std::vector<double>& m, int p,
                                  const std::vector<int>& node_of, const std::vector<Pair>& again,
                                  int per_class) {
  check_sizes(m.size(), p, node_of, "reference_pairs");
  check_pairs(again, p, "reference_pairs");
  if (per_class < 1) throw std::invalid_argument("reference_pairs: per_class must be >= 1");
  if (node_of.empty()) return {};
  std::set<Class> wanted;
  for (const auto& [a, b] : again) wanted.insert(class_of(node_of, a, b));
  const std::set<Pair> measured_again(again.begin(), again.end());
  std::map<Class, std::vector<std::pair<double, Pair>>> candidates;
  for (int a = 0; a < p; ++a) {
    for (int b = a + 1; b < p; ++b) {
      const Class c = class_of(node_of, a, b);
      const double t = m[static_cast<std::size_t>(a) * p + b];
      if ((wanted.count(c) || c.first == c.second) && !measured_again.count({a, b}) &&
          std::isfinite(t)) {
        candidates[c].push_back({t, {a, b}});
      }
    }
  }
  // A node whose pairs are all measured again borrows the references of
  // the other nodes' insides (nodes alike); pairs between nodes do not
  // (racks differ).
  std::vector<std::pair<double, Pair>> inside;
  for (const auto& [c, list] : candidates) {
    if (c.first == c.second) inside.insert(inside.end(), list.begin(), list.end());
  }
  const auto take = [per_class](std::vector<std::pair<double, Pair>> list, std::vector<Pair>& out) {
    const auto n = std::min<std::size_t>(list.size(), static_cast<std::size_t>(per_class));
    std::partial_sort(list.begin(), list.begin() + static_cast<std::ptrdiff_t>(n), list.end());
    for (std::size_t i = 0; i < n; ++i) out.push_back(list[i].second);
  };
  std::vector<Pair> out;
  for (const Class& c : wanted) {
    const auto found = candidates.find(c);
    if (found != candidates.end()) {
      take(found->second, out);
    } else if (c.first == c.second) {
      take(inside, out);
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

int merge_pass(std::vector<std::vector<double>>& kept, const std::vector<std::vector<double>>& pass,
               int p, const std::vector<int>& node_of, const std::vector<Pair>& again,
               const std::vector<Pair>& references) {
  if (kept.size() != pass.size()) {
    throw std::invalid_argument("merge_pass: " + std::to_string(kept.size()) + " sizes kept, " +
                                std::to_string(pass.size()) + " measured");
  }
  for (std::size_t s = 0; s < kept.size(); ++s) {
    check_sizes(kept[s].size(), p, node_of, "merge_pass");
    check_sizes(pass[s].size(), p, node_of, "merge_pass");
  }
  check_pairs(again, p, "merge_pass");
  check_pairs(references, p, "merge_pass");
  if (!references.empty() && node_of.empty()) {
    throw std::invalid_argument("merge_pass: references without the nodes they stand for");
  }
  const auto at = [p](int a, int b) { return static_cast<std::size_t>(a) * p + b; };
  const auto keep = [&](std::vector<double>& m, int a, int b, double t) {
    m[at(a, b)] = m[at(b, a)] = std::min(m[at(a, b)], t);
  };
  std::set<Pair> rescaled;
  for (std::size_t s = 0; s < kept.size(); ++s) {
    // Per class, from the references before this pass changes them; a
    // class inside a node without references of its own uses those of
    // every node's inside, as reference_pairs chose them.
    std::map<Class, Slowdown> by_class;
    Slowdown inside;
    for (const auto& [a, b] : references) {
      const double before = kept[s][at(a, b)], now = pass[s][at(a, b)];
      if (!(before > 0) || !std::isfinite(before) || !std::isfinite(now)) continue;
      const Class c = class_of(node_of, a, b);
      by_class[c].add(before, now);
      if (c.first == c.second) inside.add(before, now);
    }
    for (const auto& [a, b] : references) keep(kept[s], a, b, pass[s][at(a, b)]);
    for (const auto& [a, b] : again) {
      const double now = pass[s][at(a, b)];
      if (!std::isfinite(now)) continue;
      double best = now;
      if (!node_of.empty()) {
        const Class c = class_of(node_of, a, b);
        const auto found = by_class.find(c);
        if (found != by_class.end()) {
          best = found->second.rescale(now);
        } else if (c.first == c.second && !inside.ratios.empty()) {
          best = inside.rescale(now);
        }
      }
      if (best < now && best < kept[s][at(a, b)]) rescaled.insert({a, b});
      keep(kept[s], a, b, best);
    }
  }
  return static_cast<int>(rescaled.size());
}

}  // namespace rankshape
