#include "lib/relabel/bisect.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <numeric>
#include <stdexcept>
#include <string>

#include "lib/model/link_load.h"

namespace rankshape {
namespace {

// A subtree of the machine: a single rank (no children) or groups of ranks.
struct TreeNode {
  std::vector<int> ranks;  // every rank below, in order
  std::vector<TreeNode> children;
  /// The children are single ranks in whose costs no groups show (the
  /// cores of a socket): which of them goes where does not matter.
  bool flat = false;
};

// Representative cost between two sets of ranks: the mean over up to 3 x 3
// members spread through each.
double set_cost(const Costs& costs, const std::vector<int>& a, const std::vector<int>& b) {
  const std::size_t sa = std::max<std::size_t>(1, a.size() / 3);
  const std::size_t sb = std::max<std::size_t>(1, b.size() / 3);
  double sum = 0;
  int n = 0;
  for (std::size_t i = 0; i < a.size(); i += sa) {
    for (std::size_t j = 0; j < b.size(); j += sb) {
      sum += costs.cost(OldRank(a[i]), OldRank(b[j]));
      ++n;
    }
  }
  return n > 0 ? sum / n : 0;
}

// The same between a set of ranks and one rank.
double rank_cost(const Costs& costs, const std::vector<int>& a, int b) {
  const std::size_t sa = std::max<std::size_t>(1, a.size() / 3);
  double sum = 0;
  int n = 0;
  for (std::size_t i = 0; i < a.size(); i += sa, ++n) sum += costs.cost(OldRank(a[i]), OldRank(b));
  return n > 0 ? sum / n : 0;
}

// What groupings_by_gaps() found inside the ranks of one node, by the
// cores they run on: on a structured machine, nodes using the same cores
// have the same inside costs.
using GroupingCache = std::map<std::vector<int>, std::vector<std::vector<int>>>;

// Groups inside a set of ranks that their costs show (sockets in a node),
// as a subtree; single ranks when there are none. On a structured machine
// the ranks of one node are taken in core order.
TreeNode ranks_tree(const Costs& costs, std::vector<int> ranks, GroupingCache& cache) {
  TreeNode t;
  const auto* structured = dynamic_cast<const StructuredCosts*>(&costs);
  std::vector<int> cores;
  if (structured) {
    const int node = structured->location(OldRank(ranks[0])).node;
    bool one_node = true;
    for (int r : ranks) one_node &= structured->location(OldRank(r)).node == node;
    if (one_node) {
      std::stable_sort(ranks.begin(), ranks.end(), [&](int a, int b) {
        return structured->location(OldRank(a)).core < structured->location(OldRank(b)).core;
      });
      for (int r : ranks) cores.push_back(structured->location(OldRank(r)).core);
    }
  }
  t.ranks = ranks;
  if (ranks.size() == 1) return t;
  const int n = static_cast<int>(ranks.size());
  const auto compute = [&] {
    std::vector<std::vector<int>> found;
    if (n >= 3 && n <= kMaxGapItems) {
      std::vector<double> m(static_cast<std::size_t>(n) * n);
      for (int i = 0; i < n; ++i) {
        for (int j = 0; j < n; ++j) {
          m[static_cast<std::size_t>(i) * n + j] = costs.cost(OldRank(ranks[i]), OldRank(ranks[j]));
        }
      }
      found = groupings_by_gaps(m, n);
    }
    return found;
  };
  std::vector<std::vector<int>> found;
  if (cores.empty()) {
    found = compute();
  } else {
    auto it = cache.find(cores);
    if (it == cache.end()) it = cache.emplace(cores, compute()).first;
    found = it->second;
  }
  if (found.empty()) {
    for (int r : ranks) t.children.push_back(TreeNode{{r}, {}, false});
    t.flat = true;
    return t;
  }
  // The coarsest grouping found, then recursively inside each group.
  const std::vector<int>& coarsest = found.back();
  std::map<int, std::vector<int>> groups;
  for (int i = 0; i < n; ++i) groups[coarsest[i]].push_back(ranks[i]);
  for (auto& [label, members] : groups) {
    t.children.push_back(ranks_tree(costs, std::move(members), cache));
  }
  return t;
}

// The tree for ranks under levels [0, top] (finest first).
TreeNode level_tree(const Costs& costs, const std::vector<std::vector<int>>& levels, int top,
                    std::vector<int> ranks, GroupingCache& cache) {
  if (top < 0) return ranks_tree(costs, std::move(ranks), cache);
  std::map<int, std::vector<int>> groups;
  for (int r : ranks) groups[levels[top][r]].push_back(r);
  if (groups.size() == 1) return level_tree(costs, levels, top - 1, std::move(ranks), cache);
  TreeNode t;
  t.ranks = std::move(ranks);
  for (auto& [label, members] : groups) {
    t.children.push_back(level_tree(costs, levels, top - 1, std::move(members), cache));
  }
  return t;
}

// Splits children (in the given order) into two halves of about equal rank
// count, each at least one child: the index of the first child of the
// second half.
std::size_t half_point(const std::vector<const TreeNode*>& parts) {
  std::size_t total = 0;
  for (const TreeNode* c : parts) total += c->ranks.size();
  std::size_t best = 1, sum = 0;
  double best_gap = -1;
  for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
    sum += parts[i]->ranks.size();
    const double gap = std::abs(static_cast<double>(sum) - static_cast<double>(total) / 2);
    if (best_gap < 0 || gap < best_gap) {
      best_gap = gap;
      best = i + 1;
    }
  }
  return best;
}

// Orders parts for a split into two halves that are each close inside,
// and returns the index of the first part of the second half. When the
// costs between parts are all alike, the given order stands and the halves
// are as equal in ranks as the parts allow. Otherwise the first half grows
// from one of the two farthest parts, adding the closest part while that
// brings it nearer half the ranks; then parts of equal size trade halves
// while that lowers the cost between the halves.
std::size_t choose_halves(const Costs& costs, std::vector<const TreeNode*>& parts) {
  const int n = static_cast<int>(parts.size());
  if (n <= 2) return half_point(parts);
  std::vector<double> d(static_cast<std::size_t>(n) * n, 0);
  double lo = 0, hi = 0;
  bool first = true;
  for (int i = 0; i < n; ++i) {
    for (int j = i + 1; j < n; ++j) {
      const double c = set_cost(costs, parts[i]->ranks, parts[j]->ranks);
      d[static_cast<std::size_t>(i) * n + j] = d[static_cast<std::size_t>(j) * n + i] = c;
      lo = first ? c : std::min(lo, c);
      hi = first ? c : std::max(hi, c);
      first = false;
    }
  }
  if (hi <= lo * 1.01) return half_point(parts);
  const auto at = [&](int i, int j) { return d[static_cast<std::size_t>(i) * n + j]; };
  const auto ranks = [&](int i) { return static_cast<long long>(parts[i]->ranks.size()); };
  long long total = 0;
  for (int i = 0; i < n; ++i) total += ranks(i);
  int a = 0;
  for (int j = 1; j < n; ++j) {
    if (at(0, j) > at(0, a)) a = j;
  }
  std::vector<char> in_first(static_cast<std::size_t>(n), 0);
  std::vector<int> members = {a};
  in_first[a] = 1;
  long long size = ranks(a);
  for (;;) {
    int best = -1;
    double best_cost = 0;
    for (int j = 0; j < n; ++j) {
      if (in_first[j]) continue;
      double c = 0;
      for (int i : members) c += at(i, j);
      c /= static_cast<double>(members.size());
      if (best < 0 || c < best_cost) {
        best = j;
        best_cost = c;
      }
    }
    if (best < 0 || std::llabs(2 * (size + ranks(best)) - total) >= std::llabs(2 * size - total)) {
      break;
    }
    in_first[best] = 1;
    members.push_back(best);
    size += ranks(best);
  }
  if (members.size() == static_cast<std::size_t>(n)) return half_point(parts);
  const auto across = [&](int i) {
    double c = 0;
    for (int j = 0; j < n; ++j) {
      if (in_first[j] != in_first[i]) c += at(i, j);
    }
    return c;
  };
  for (bool improved = true; improved;) {
    improved = false;
    for (int i = 0; i < n && !improved; ++i) {
      if (!in_first[i]) continue;
      for (int j = 0; j < n && !improved; ++j) {
        if (in_first[j] || ranks(i) != ranks(j)) continue;
        const double before = across(i) + across(j);
        in_first[i] = 0;
        in_first[j] = 1;
        const double after = across(i) + across(j);
        if (after < before - 1e-12 * (1 + before)) {
          improved = true;
        } else {
          in_first[i] = 1;
          in_first[j] = 0;
        }
      }
    }
  }
  std::vector<const TreeNode*> ordered;
  for (int pass = 1; pass >= 0; --pass) {
    for (int i = 0; i < n; ++i) {
      if (in_first[i] == pass) ordered.push_back(parts[i]);
    }
  }
  parts = std::move(ordered);
  std::size_t cut = 0;
  for (int i = 0; i < n; ++i) cut += in_first[i] ? 1 : 0;
  return cut;
}

// The most equal groups one tiling search divides a box among: it tries
// every count on each side of every cut, so its work grows with the cube.
constexpr std::size_t kMaxTilingParts = 512;

// How strongly two parts belong together: 1 for the closest pairs, falling
// with the fourth power of the cost ratio, so that nearest neighbours (hop
// 1 on a torus, the same rack) outweigh everything farther.
double affinity(double cost, double closest) {
  if (cost <= 0) return 1;
  const double r = std::min(1.0, closest / cost);
  return r * r * r * r;
}

class Bisector {
 public:
  Bisector(const Costs& costs, const Stencil& stencil, CutRule rule)
      : costs_(costs), stencil_(stencil), rule_(rule) {
    const Grid& g = stencil.grid();
    coords_.resize(static_cast<std::size_t>(g.size()));
    for (int x = 0; x < g.size(); ++x) coords_[x] = g.coords(NewRank(x));
    axis_weight_.assign(static_cast<std::size_t>(g.ndims()), 1.0);
    for (int o = 0; o < stencil.offsets(); ++o) {
      if (stencil.diagonal(o)) continue;
      for (int k = 0; k < g.ndims(); ++k) {
        if (stencil.delta(o)[k] != 0) axis_weight_[k] = stencil.weight(o);
      }
    }
    perm_.assign(static_cast<std::size_t>(g.size()), OldRank(-1));
    stamp_of_.assign(static_cast<std::size_t>(g.size()), 0);
    part_of_.assign(static_cast<std::size_t>(g.size()), 0);
    m_ = stencil.offsets();
    neighbours_.resize(static_cast<std::size_t>(g.size()) * m_);
    for (int x = 0; x < g.size(); ++x) {
      for (int o = 0; o < m_; ++o) {
        neighbours_[static_cast<std::size_t>(x) * m_ + o] = stencil.neighbour(coords_[x], x, o);
      }
    }
  }

  // flat: the parts are interchangeable single ranks (TreeNode::flat).
  // How the equal groups of one level share their region under kBoxes:
  // not yet decided, tiled by boxes, or halved.
  enum class Mode { kUndecided, kTile, kHalve };

  void place(std::vector<const TreeNode*> parts, std::vector<int> region, bool flat = false,
             Mode mode = Mode::kUndecided) {
    while (parts.size() == 1 && !parts[0]->children.empty()) {
      flat = parts[0]->flat;
      mode = Mode::kUndecided;  // a new level
      std::vector<const TreeNode*> below;
      for (const TreeNode& c : parts[0]->children) below.push_back(&c);
      parts = std::move(below);
    }
    if (parts.size() == 1) {  // a single rank
      perm_[region.at(0)] = OldRank(parts[0]->ranks[0]);
      return;
    }
    const bool equal = std::all_of(parts.begin(), parts.end(), [&](const TreeNode* t) {
      return t->ranks.size() == parts[0]->ranks.size();
    });
    // How many parts go first: for equal parts a multiple of n / f (f the
    // smallest prime factor of n), so that 25 nodes split 10 | 15 and stay
    // in rows of 5; otherwise halves grown by closeness.
    std::size_t cut;
    int across = -1;  // the dimension a tiling cuts across
    if (equal) {
      const std::size_t n = parts.size();
      std::size_t f = 2;
      while (n % f != 0) ++f;
      cut = n / f * (f / 2);
      if (rule_ == CutRule::kBoxes && !flat && n <= kMaxTilingParts) {
        if (mode == Mode::kUndecided) {
          mode = tiling_beats_halving(region, static_cast<int>(n)) ? Mode::kTile : Mode::kHalve;
        }
        if (mode == Mode::kTile) {
          const Tiling& t = tiling_of(region, static_cast<int>(n));
          cut = static_cast<std::size_t>(t.first);
          across = t.dim;
        }
      }
    } else {
      cut = choose_halves(costs_, parts);
    }
    std::size_t first_size = 0;
    for (std::size_t i = 0; i < cut; ++i) first_size += parts[i]->ranks.size();
    std::vector<int> second =
        across >= 0 ? split_across(region, first_size, across) : split(region, first_size);
    if (!flat) cut = assign_sides(parts, cut, equal, region, second);
    place(std::vector<const TreeNode*>(parts.begin(), parts.begin() + static_cast<long>(cut)),
          std::move(region), flat, mode);
    place(std::vector<const TreeNode*>(parts.begin() + static_cast<long>(cut), parts.end()),
          std::move(second), flat, mode);
  }

  Labelling labelling() { return Labelling(std::move(perm_)); }

 private:
  // The ranks already placed next to `side` (neighbours outside both
  // sides), once per neighbouring pair.
  std::vector<int> terminals(const std::vector<int>& side) const {
    std::vector<int> out;
    for (int x : side) {
      for (int o = 0; o < stencil_.offsets(); ++o) {
        const int y = stencil_.neighbour(coords_[x], x, o);
        if (y >= 0 && stamp_of_[y] != stamp_ && perm_[y].value() >= 0)
          out.push_back(perm_[y].value());
      }
    }
    return out;
  }

  // Decides which parts go to the first side (parts[0, cut) after the
  // call): equal parts trade places (Kernighan-Lin style swaps) while that
  // raises the affinity inside each side plus the affinity of each part to
  // the ranks already placed next to its side; unequal groups can only
  // swap sides whole, and only when both sides hold as many ranks (each
  // side's region has its size). Returns how many parts now go first.
  std::size_t assign_sides(std::vector<const TreeNode*>& parts, std::size_t cut, bool equal,
                           const std::vector<int>& first, const std::vector<int>& second) {
    ++stamp_;
    for (int x : first) stamp_of_[x] = stamp_;
    for (int x : second) stamp_of_[x] = stamp_;
    const std::vector<int> near_first = terminals(first), near_second = terminals(second);
    const int n = static_cast<int>(parts.size());
    // Representative costs between parts, and from parts to terminals
    // (sampled: up to 16 terminals per side, weighted to their count).
    std::vector<double> d(static_cast<std::size_t>(n) * n, 0);
    double closest = 0;
    const auto note = [&](double c) {
      if (c > 0 && (closest == 0 || c < closest)) closest = c;
    };
    for (int i = 0; i < n; ++i) {
      for (int j = i + 1; j < n; ++j) {
        const double c = set_cost(costs_, parts[i]->ranks, parts[j]->ranks);
        d[static_cast<std::size_t>(i) * n + j] = d[static_cast<std::size_t>(j) * n + i] = c;
        note(c);
      }
    }
    const auto sample = [](const std::vector<int>& v) {
      std::vector<int> out;
      const std::size_t step = std::max<std::size_t>(1, v.size() / 16);
      for (std::size_t i = 0; i < v.size(); i += step) out.push_back(v[i]);
      return out;
    };
    const std::vector<int> t_first = sample(near_first), t_second = sample(near_second);
    std::vector<double> to_first(static_cast<std::size_t>(n), 0), to_second(to_first);
    std::vector<std::vector<double>> raw_first(static_cast<std::size_t>(n)), raw_second(raw_first);
    for (int i = 0; i < n; ++i) {
      for (int t : t_first) {
        raw_first[i].push_back(rank_cost(costs_, parts[i]->ranks, t));
        note(raw_first[i].back());
      }
      for (int t : t_second) {
        raw_second[i].push_back(rank_cost(costs_, parts[i]->ranks, t));
        note(raw_second[i].back());
      }
    }
    const double w_first =
        t_first.empty() ? 0 : static_cast<double>(near_first.size()) / t_first.size();
    const double w_second =
        t_second.empty() ? 0 : static_cast<double>(near_second.size()) / t_second.size();
    for (int i = 0; i < n; ++i) {
      for (double c : raw_first[i]) to_first[i] += w_first * affinity(c, closest);
      for (double c : raw_second[i]) to_second[i] += w_second * affinity(c, closest);
    }
    std::vector<double> a(d.size(), 0);
    for (std::size_t i = 0; i < d.size(); ++i) a[i] = affinity(d[i], closest);
    const auto at = [&](int i, int j) { return a[static_cast<std::size_t>(i) * n + j]; };
    std::vector<char> in_first(static_cast<std::size_t>(n), 0);
    for (std::size_t i = 0; i < cut; ++i) in_first[i] = 1;
    if (equal) {
      // side[0][i], side[1][i]: affinity of part i to the parts of the
      // second and the first side (itself excluded: a(i, i) counts 0).
      std::vector<double> side[2] = {std::vector<double>(static_cast<std::size_t>(n), 0),
                                     std::vector<double>(static_cast<std::size_t>(n), 0)};
      for (int i = 0; i < n; ++i) {
        for (int j = 0; j < n; ++j) {
          if (j != i) side[in_first[j] ? 1 : 0][i] += at(i, j);
        }
      }
      const auto pull = [&](int i, bool first_side) {
        return first_side ? to_first[i] + side[1][i] : to_second[i] + side[0][i];
      };
      for (int pass = 0; pass < 8; ++pass) {
        bool improved = false;
        for (int i = 0; i < n; ++i) {
          if (!in_first[i]) continue;
          int best_j = -1;
          double best_gain = 1e-12;
          for (int j = 0; j < n; ++j) {
            if (in_first[j]) continue;
            // Gain of exchanging i (first side) and j (second side).
            const double gain = pull(i, false) - at(i, j) - pull(i, true) + pull(j, true) -
                                at(i, j) - pull(j, false);
            if (gain > best_gain) {
              best_gain = gain;
              best_j = j;
            }
          }
          if (best_j < 0) continue;
          in_first[i] = 0;
          in_first[best_j] = 1;
          for (int x = 0; x < n; ++x) {
            if (x != i) {
              side[1][x] -= at(x, i);
              side[0][x] += at(x, i);
            }
            if (x != best_j) {
              side[0][x] -= at(x, best_j);
              side[1][x] += at(x, best_j);
            }
          }
          improved = true;
        }
        if (!improved) break;
      }
    } else if (first.size() == second.size()) {
      double keep = 0, swap = 0;
      for (int i = 0; i < n; ++i) {
        keep += in_first[i] ? to_first[i] : to_second[i];
        swap += in_first[i] ? to_second[i] : to_first[i];
      }
      if (swap > keep + 1e-12) {
        for (char& f : in_first) f = !f;
      }
    }
    std::vector<const TreeNode*> ordered;
    for (int pass = 1; pass >= 0; --pass) {
      for (int i = 0; i < n; ++i) {
        if (in_first[i] == pass) ordered.push_back(parts[i]);
      }
    }
    parts = std::move(ordered);
    return static_cast<std::size_t>(std::count(in_first.begin(), in_first.end(), 1));
  }

  // The weight of the messages from part (marked with `mark`) to
  // positions outside it.
  double boundary(const std::vector<int>& part, int mark) {
    for (int x : part) part_of_[x] = mark;
    double out = 0;
    for (int x : part) {
      for (int o = 0; o < m_; ++o) {
        const int y = neighbours_[static_cast<std::size_t>(x) * m_ + o];
        if (y >= 0 && part_of_[y] != mark) out += stencil_.weight(o);
      }
    }
    return out;
  }

  // Keeps the first `size` positions of region in it (a compact part) and
  // returns the rest. The cut runs across the dimension that leaves the
  // busier part the fewest messages out (a node's halo); ties go to the
  // longest dimension, measured in what a cut across it costs per position
  // of length (a periodic dimension spanned whole opens two faces).
  std::vector<int> split(std::vector<int>& region, std::size_t size) {
    const Grid& g = stencil_.grid();
    const int d = g.ndims();
    const Box box = box_of(region);
    const std::vector<int>& extent = box.extent;
    const auto sorted_for = [&](int cut) { return sorted_across(region, box, cut); };
    std::vector<int> best;
    double best_halo = 0, best_then = 0, best_length = 0;
    for (int k = 0; k < d; ++k) {
      if (extent[k] < 2) continue;
      double length = extent[k] / axis_weight_[k];
      if (stencil_.periodic(k) && extent[k] == g.dim(k)) length /= 2;
      std::vector<int> v = sorted_for(k);
      const std::vector<int> first(v.begin(), v.begin() + static_cast<long>(size));
      const std::vector<int> second(v.begin() + static_cast<long>(size), v.end());
      const double out_first = boundary(first, ++mark_);
      const double out_second = boundary(second, ++mark_);
      const double busier = std::max(out_first, out_second), both = out_first + out_second;
      const double key = rule_ == CutRule::kBusierPart ? busier : both;
      const double then = rule_ == CutRule::kBusierPart ? both : busier;
      const auto less = [](double a, double b) { return a < b - 1e-9 * (1 + std::abs(b)); };
      if (best.empty() || less(key, best_halo) ||
          (!less(best_halo, key) &&
           (less(then, best_then) || (!less(best_then, then) && length > best_length)))) {
        best = std::move(v);
        best_halo = key;
        best_then = then;
        best_length = length;
      }
    }
    if (best.empty()) best = region;  // a single position cannot be split
    region = std::move(best);
    std::vector<int> rest(region.begin() + static_cast<long>(size), region.end());
    region.resize(size);
    return rest;
  }

  // The same with the dimension to cut across given (a tiling's cut).
  std::vector<int> split_across(std::vector<int>& region, std::size_t size, int cut) {
    region = sorted_across(region, box_of(region), cut);
    std::vector<int> rest(region.begin() + static_cast<long>(size), region.end());
    region.resize(size);
    return rest;
  }

  // How n equal groups would share region, tiled by boxes (if a tiling
  // exists) or halved: each group's part, at this level only.
  void carve(std::vector<int> region, int n, bool tile, std::vector<std::vector<int>>& out) {
    if (n == 1) {
      out.push_back(std::move(region));
      return;
    }
    const std::size_t size = region.size() / static_cast<std::size_t>(n);
    int first, across = -1;
    if (tile) {
      const Tiling& t = tiling_of(region, n);
      first = t.first;
      across = t.dim;
    } else {
      int f = 2;
      while (n % f != 0) ++f;
      first = n / f * (f / 2);
    }
    const std::size_t first_size = size * static_cast<std::size_t>(first);
    std::vector<int> second =
        across >= 0 ? split_across(region, first_size, across) : split(region, first_size);
    carve(std::move(region), first, tile, out);
    carve(std::move(second), n - first, tile, out);
  }

  // True if tiling region by boxes among n equal groups leaves the busiest
  // group fewer messages out than halving does, or as many with fewer in
  // all (ties go to the boxes). Where racks must be boxes to stay light
  // but a rack's nodes do better in halving's staircase parts (10x10x10
  // on nodes of 40), each level decides for itself.
  bool tiling_beats_halving(const std::vector<int>& region, int n) {
    if (!tiling_of(region, n).possible) return false;
    const auto score = [&](bool tile) {
      std::vector<std::vector<int>> parts;
      carve(region, n, tile, parts);
      std::pair<double, double> busiest_total{0, 0};
      for (const std::vector<int>& part : parts) {
        const double out = boundary(part, ++mark_);
        busiest_total.first = std::max(busiest_total.first, out);
        busiest_total.second += out;
      }
      return busiest_total;
    };
    const auto [t_busiest, t_total] = score(true);
    const auto [h_busiest, h_total] = score(false);
    const auto less = [](double a, double b) { return a < b - 1e-9 * (1 + std::abs(b)); };
    return !less(h_busiest, t_busiest) && (less(t_busiest, h_busiest) || !less(h_total, t_total));
  }

  // The smallest box around a region.
  struct Box {
    std::vector<int> lo, extent;
    std::int64_t cells() const {
      std::int64_t c = 1;
      for (int e : extent) c *= e;
      return c;
    }
  };

  Box box_of(const std::vector<int>& region) const {
    const int d = stencil_.grid().ndims();
    Box b;
    b.lo.assign(static_cast<std::size_t>(d), 0);
    b.extent.assign(static_cast<std::size_t>(d), 0);
    for (int k = 0; k < d; ++k) {
      int lo = coords_[region[0]][k], hi = lo;
      for (int x : region) {
        lo = std::min(lo, coords_[x][k]);
        hi = std::max(hi, coords_[x][k]);
      }
      b.lo[k] = lo;
      b.extent[k] = hi - lo + 1;
    }
    return b;
  }

  // Region in the order of a cut across `cut`: across it first, then the
  // other dimensions, longest first, so that a shared slab fills line by
  // line. Positions sort on one integer key: their row-major index in that
  // order.
  std::vector<int> sorted_across(const std::vector<int>& region, const Box& box, int cut) {
    const int d = stencil_.grid().ndims();
    const std::vector<int>& extent = box.extent;
    std::vector<int> order = {cut};
    for (int k = 0; k < d; ++k) {
      if (k != cut) order.push_back(k);
    }
    std::stable_sort(order.begin() + 1, order.end(),
                     [&](int a, int b) { return extent[a] > extent[b]; });
    keyed_.clear();
    for (int x : region) {
      std::int64_t key = 0;
      for (int k : order) key = key * extent[k] + (coords_[x][k] - box.lo[k]);
      keyed_.emplace_back(key, x);
    }
    std::sort(keyed_.begin(), keyed_.end());
    std::vector<int> v(keyed_.size());
    for (std::size_t i = 0; i < keyed_.size(); ++i) v[i] = keyed_[i].second;
    return v;
  }

  // Which faces of a box have neighbours outside it ([2k]: the low side of
  // dimension k, [2k + 1]: the high side). A box spanning a periodic
  // dimension whole has no face across it.
  std::vector<char> open_faces(const Box& box) const {
    const Grid& g = stencil_.grid();
    std::vector<char> open(static_cast<std::size_t>(2 * g.ndims()), 0);
    for (int k = 0; k < g.ndims(); ++k) {
      if (stencil_.periodic(k)) {
        open[2 * k] = open[2 * k + 1] = box.extent[k] < g.dim(k);
      } else {
        open[2 * k] = box.lo[k] > 0;
        open[2 * k + 1] = box.lo[k] + box.extent[k] < g.dim(k);
      }
    }
    return open;
  }

  // The best way to cut a box (its extent, its open faces) into n boxes
  // of equal size by straight cuts, if there is one: the fewest messages
  // out of the busiest part, then out of all parts together (diagonal
  // neighbours not counted). Exact over all such cuts, remembered by
  // shape, so a rack's tiling is found once for all racks of its shape.
  struct Tiling {
    bool possible = false;
    double busiest = 0;
    double total = 0;
    int dim = -1;   // the first cut: across this dimension,
    int first = 0;  // with this many parts on its low side
  };

  const Tiling& tiling(const std::vector<int>& extent, const std::vector<char>& open, int n) {
    std::vector<int> key(extent);
    key.insert(key.end(), open.begin(), open.end());
    key.push_back(n);
    const auto found = tilings_.find(key);
    if (found != tilings_.end()) return found->second;
    const int d = static_cast<int>(extent.size());
    std::int64_t cells = 1;
    for (int e : extent) cells *= e;
    const auto area = [&](int k) { return static_cast<double>(cells / extent[k]); };
    Tiling best;
    if (n == 1) {
      best.possible = true;
      for (int k = 0; k < d; ++k) {
        best.busiest += area(k) * axis_weight_[k] * (open[2 * k] + open[2 * k + 1]);
      }
      best.total = best.busiest;
      return tilings_.emplace(std::move(key), best).first->second;
    }
    const std::int64_t size = cells / n;
    const auto less = [](double a, double b) { return a < b - 1e-9 * (1 + std::abs(b)); };
    for (int k = 0; k < d; ++k) {
      const std::int64_t slab = cells / extent[k];
      // Spanning a periodic dimension whole, both sides meet across the wrap.
      const bool whole = stencil_.periodic(k) && extent[k] == stencil_.grid().dim(k);
      for (int a = 1; a < n; ++a) {
        if (a * size % slab != 0) continue;
        const int length = static_cast<int>(a * size / slab);
        std::vector<int> low_extent(extent), high_extent(extent);
        low_extent[k] = length;
        high_extent[k] = extent[k] - length;
        std::vector<char> low_open(open), high_open(open);
        low_open[2 * k + 1] = high_open[2 * k] = 1;
        if (whole) low_open[2 * k] = high_open[2 * k + 1] = 1;
        const Tiling low = tiling(low_extent, low_open, a);
        if (!low.possible) continue;
        const Tiling& high = tiling(high_extent, high_open, n - a);
        if (!high.possible) continue;
        const double busiest = std::max(low.busiest, high.busiest);
        const double total = low.total + high.total;
        if (!best.possible || less(busiest, best.busiest) ||
            (!less(best.busiest, busiest) && less(total, best.total))) {
          best = Tiling{true, busiest, total, k, a};
        }
      }
    }
    return tilings_.emplace(std::move(key), best).first->second;
  }

  // The tiling of a region (possible only if it is a box).
  const Tiling& tiling_of(const std::vector<int>& region, int n) {
    const Box box = box_of(region);
    if (box.cells() != static_cast<std::int64_t>(region.size())) return no_tiling_;
    return tiling(box.extent, open_faces(box), n);
  }

  const Costs& costs_;
  const Stencil& stencil_;
  CutRule rule_;
  std::vector<std::vector<int>> coords_;
  std::vector<double> axis_weight_;
  std::vector<OldRank> perm_;
  std::vector<int> stamp_of_;  // [position] == stamp_: inside the split being decided
  int stamp_ = 0;
  std::vector<int> part_of_;  // [position]: the mark of the last part boundary() saw
  int mark_ = 0;
  std::vector<std::pair<std::int64_t, int>> keyed_;  // sorted_across()'s work space
  std::map<std::vector<int>, Tiling> tilings_;       // tiling()'s answers by shape
  const Tiling no_tiling_{};
  int m_ = 0;                    // offsets
  std::vector<int> neighbours_;  // [x * m_ + o]: the stencil's neighbour, or -1
};

}  // namespace

Labelling bisect(const Costs& costs, const Stencil& stencil,
                 const std::vector<std::vector<int>>& levels, CutRule rule) {
  const Grid& grid = stencil.grid();
  const int p = grid.size();
  if (costs.size() != p) {
    throw std::invalid_argument("bisect: costs for " + std::to_string(costs.size()) +
                                " ranks, grid " + grid.to_string() + " of " + std::to_string(p));
  }
  for (const auto& level : levels) {
    if (static_cast<int>(level.size()) != p) {
      throw std::invalid_argument("bisect: a level labels " + std::to_string(level.size()) +
                                  " ranks, expected " + std::to_string(p));
    }
  }
  // The known levels (their group numbers kept: the order of a torus's
  // nodes seeds how they are paired), then those the costs show above
  // them: measured costs name the nodes but not the racks, and a split
  // that cannot see the racks cannot keep them boxes (10x10x10 on 5 racks
  // of 5 nodes of 40: busiest rack 208 pairs out instead of 105).
  std::vector<std::vector<int>> known = levels;
  for (LinkLevel& level : link_levels(costs, levels)) {
    if (level.detected) known.push_back(std::move(level.group_of));
  }
  std::vector<int> ranks(static_cast<std::size_t>(p));
  std::iota(ranks.begin(), ranks.end(), 0);
  // Ranks of one finest group in core order on a structured machine, so
  // that the groups inside it (sockets) come out contiguous.
  GroupingCache cache;
  const TreeNode root =
      known.empty() && p > kMaxGapItems
          ? [&] {
              TreeNode t;
              t.ranks = ranks;
              for (int r : ranks) t.children.push_back(TreeNode{{r}, {}, false});
              return t;
            }()
          : level_tree(costs, known, static_cast<int>(known.size()) - 1, ranks, cache);
  Bisector b(costs, stencil, rule);
  std::vector<int> region(static_cast<std::size_t>(p));
  std::iota(region.begin(), region.end(), 0);
  b.place({&root}, std::move(region));
  return b.labelling();
}

}  // namespace rankshape
