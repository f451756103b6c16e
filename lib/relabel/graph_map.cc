#include "lib/relabel/graph_map.h"

#include <metis.h>

#include <algorithm>
#include <limits>
#include <map>
#include <mutex>
#include <numeric>
#include <stdexcept>
#include <string>
#include <tuple>

#include "lib/relabel/groups.h"
#include "lib/relabel/metis_lock.h"
#include "lib/relabel/search.h"

namespace rankshape {
namespace {

// Largest sum of edge weights handed to METIS, whose indices and weights
// are 32-bit: weights are scaled down to fit (each at least 1).
constexpr double kMetisWeightBudget = 1 << 30;
// Seeds tried per split, each with k-way and recursive bisection, loose
// and tight, heavy-edge and random matching.
constexpr int kMetisSeeds = 1;
// The METIS variants per seed (GraphMapOptions::metis_attempts).
constexpr int kMetisAttempts = 8;
// METIS's k-way coarsens a graph to about 30 vertices per part before its
// initial partition; with fewer it bisects the whole graph recursively
// (one call into 64 parts of 16 took 20 ms at 1,024 vertices).
constexpr int kMetisCoarsestPerPart = 30;
// assign()'s hill-climbing over more than 8 groups (a torus, measured
// costs) stops after this many candidates per part without a gain. The
// default, 20, stopped early: on tori of 64 and 256 nodes, 300 gave
// objectives 2-4% lower (random geometric, power-law, 2-D and 3-D meshes
// at 1,024 ranks, random geometric at 4,096) for 0-27% more time.
constexpr int kAssignStallPerPart = 300;
// Neighbours per vertex that refine_boundaries() considers (the heaviest).
constexpr std::size_t kBoundaryNeighbours = 8;
// refine_pairs(): rounds over all pairs of parts at most, and the boundary
// vertices per side that one pair's Kernighan-Lin pass considers (those
// with the most weight to the other side).
constexpr int kPairRounds = 4;
constexpr std::size_t kPairCandidates = 64;
// resplit_pairs(): rounds at most (each after the first only over the pairs
// with a part changed in the round before). On the random geometric graph
// at 1,024 ranks they stop by themselves after 4 to 10; with 4 at most every
// full run's objective on two and three levels was the same as with 16, and
// a fast map's 0.1% higher on two levels. The cap bounds their work (a
// round costs about as much as the split, in a fixed number of METIS calls,
// so the answer does not depend on the machine's speed): at 65,536 ranks and
// a million edges a fast map's resplits of racks alone took longer than the
// default 10 s budget with 16.
constexpr int kResplitRounds = 4;
// METIS calls per pair's new split (k-way and recursive bisection): on the
// random geometric graph at 1,024 ranks on 8 racks of 8 nodes, 2 gave a
// fast map 4.8% better than 1 for 25% more time; 4 little more than 2.
constexpr int kResplitAttempts = 2;

// A split's vertices as METIS takes them: local indices, adjacency with
// 32-bit weights.
struct LocalGraph {
  std::vector<idx_t> xadj = {0}, adjncy, adjwgt;
  int vertices() const { return static_cast<int>(xadj.size()) - 1; }
};

// One Kernighan-Lin pass between parts a and b (see refine_pairs());
// returns the gain made (>= 0).
std::int64_t kl_pair(const LocalGraph& g, int a, int b, std::vector<int>& part,
                     std::vector<std::vector<int>>& members, std::vector<int>& slot) {
  // Each side's candidates with d = weight to the other side minus weight
  // to its own: a swap of x and y gains d(x) + d(y) - 2 w(x, y).
  std::vector<int> side[2];
  std::vector<std::int64_t> d[2];
  const int parts[2] = {a, b};
  for (int s = 0; s < 2; ++s) {
    std::vector<std::pair<std::int64_t, int>> boundary;  // (-weight to the other side, vertex)
    for (int v : members[static_cast<std::size_t>(parts[s])]) {
      std::int64_t out = 0;
      for (idx_t e = g.xadj[v]; e < g.xadj[v + 1]; ++e) {
        if (part[g.adjncy[e]] == parts[1 - s]) out += g.adjwgt[e];
      }
      if (out > 0) boundary.emplace_back(-out, v);
    }
    std::sort(boundary.begin(), boundary.end());
    if (boundary.size() > kPairCandidates) boundary.resize(kPairCandidates);
    for (const auto& entry : boundary) side[s].push_back(entry.second);
  }
  const std::size_t na = side[0].size(), nb = side[1].size();
  if (na == 0 || nb == 0) return 0;
  const std::size_t m = na + nb;
  for (std::size_t i = 0; i < na; ++i)
    slot[static_cast<std::size_t>(side[0][i])] = static_cast<int>(i);
  for (std::size_t i = 0; i < nb; ++i)
    slot[static_cast<std::size_t>(side[1][i])] = static_cast<int>(na + i);
  // w: the weights among the candidates (m x m); d as above.
  std::vector<std::int64_t> w(m * m, 0);
  for (int s = 0; s < 2; ++s) {
    d[s].assign(side[s].size(), 0);
    for (std::size_t i = 0; i < side[s].size(); ++i) {
      const int v = side[s][i];
      const std::size_t row = s == 0 ? i : na + i;
      for (idx_t e = g.xadj[v]; e < g.xadj[v + 1]; ++e) {
        const int u = g.adjncy[e];
        if (part[u] == parts[1 - s]) d[s][i] += g.adjwgt[e];
        if (part[u] == parts[s]) d[s][i] -= g.adjwgt[e];
        if (slot[u] >= 0) w[row * m + static_cast<std::size_t>(slot[u])] = g.adjwgt[e];
      }
    }
  }
  std::vector<char> locked(m, 0);
  std::vector<std::pair<std::size_t, std::size_t>> swaps;
  std::int64_t sum = 0, best_sum = 0;
  std::size_t best_prefix = 0;
  for (std::size_t step = 0; step < std::min(na, nb); ++step) {
    std::int64_t best = std::numeric_limits<std::int64_t>::min();
    std::size_t bx = 0, by = 0;
    for (std::size_t x = 0; x < na; ++x) {
      if (locked[x]) continue;
      for (std::size_t y = 0; y < nb; ++y) {
        if (locked[na + y]) continue;
        const std::int64_t gain = d[0][x] + d[1][y] - 2 * w[x * m + na + y];
        if (gain > best) {
          best = gain;
          bx = x;
          by = y;
        }
      }
    }
    locked[bx] = locked[na + by] = 1;
    swaps.emplace_back(bx, by);
    sum += best;
    if (sum > best_sum) {
      best_sum = sum;
      best_prefix = swaps.size();
    }
    // As if side[0][bx] had moved to b and side[1][by] to a.
    for (std::size_t x = 0; x < na; ++x) {
      if (!locked[x]) d[0][x] += 2 * w[x * m + bx] - 2 * w[x * m + na + by];
    }
    for (std::size_t y = 0; y < nb; ++y) {
      if (!locked[na + y]) d[1][y] += 2 * w[(na + y) * m + na + by] - 2 * w[(na + y) * m + bx];
    }
  }
  for (int v : side[0]) slot[static_cast<std::size_t>(v)] = -1;
  for (int v : side[1]) slot[static_cast<std::size_t>(v)] = -1;
  for (std::size_t i = 0; i < best_prefix; ++i) {
    const int x = side[0][swaps[i].first], y = side[1][swaps[i].second];
    part[static_cast<std::size_t>(x)] = b;
    part[static_cast<std::size_t>(y)] = a;
    auto& ma = members[static_cast<std::size_t>(a)];
    auto& mb = members[static_cast<std::size_t>(b)];
    *std::find(ma.begin(), ma.end(), x) = y;
    *std::find(mb.begin(), mb.end(), y) = x;
  }
  return best_sum;
}

// Kernighan-Lin between two parts at a time, by swaps, so that every
// part keeps its size: the pairs that share edges, heaviest first, in
// rounds until one gains nothing. A pass over parts A and B takes the
// vertices of each with edges to the other (at most kPairCandidates, the
// most connected to it), makes the best swap left even when it loses,
// locks both, and keeps the best prefix of its swaps. Returns the cut
// weight removed.
std::int64_t refine_pairs_local(const LocalGraph& g, int k, std::vector<int>& part,
                                const Deadline& deadline) {
  const int n = g.vertices();
  std::vector<std::vector<int>> members(static_cast<std::size_t>(k));
  for (int v = 0; v < n; ++v) members[static_cast<std::size_t>(part[v])].push_back(v);
  std::vector<int> slot(static_cast<std::size_t>(n), -1);  // index in the pass, or -1
  std::int64_t total = 0;
  for (int round = 0; round < kPairRounds && !deadline.passed(); ++round) {
    // edges: ((a, b), weight) for every edge between parts a < b; pairs:
    // (-weight a and b share, (a, b)), heaviest first.
    std::vector<std::pair<std::pair<int, int>, std::int64_t>> edges;
    for (int v = 0; v < n; ++v) {
      for (idx_t e = g.xadj[v]; e < g.xadj[v + 1]; ++e) {
        const int a = part[v], b = part[g.adjncy[e]];
        if (a < b) edges.push_back({{a, b}, g.adjwgt[e]});
      }
    }
    std::sort(edges.begin(), edges.end());
    std::vector<std::pair<std::int64_t, std::pair<int, int>>> pairs;
    for (std::size_t i = 0; i < edges.size(); ++i) {
      if (i == 0 || edges[i].first != edges[i - 1].first) pairs.push_back({0, edges[i].first});
      pairs.back().first -= edges[i].second;
    }
    std::sort(pairs.begin(), pairs.end());
    std::int64_t gained = 0;
    for (const auto& [unused_weight, ab] : pairs) {
      if (deadline.passed()) break;
      gained += kl_pair(g, ab.first, ab.second, part, members, slot);
    }
    total += gained;
    if (gained == 0) break;
  }
  return total;
}

// The levels that nest: every group of a level lies inside one group of
// the next level up; a level that does not is dropped with those above it.
std::vector<std::vector<int>> nesting(const std::vector<std::vector<int>>& levels) {
  std::vector<std::vector<int>> kept;
  for (const auto& level : levels) {
    if (!kept.empty()) {
      std::map<int, int> parent;
      bool nests = true;
      for (std::size_t r = 0; r < level.size() && nests; ++r) {
        const auto [it, fresh] = parent.emplace(kept.back()[r], level[r]);
        nests = fresh || it->second == level[r];
      }
      if (!nests) break;
    }
    kept.push_back(level);
  }
  return kept;
}

class Mapper {
 public:
  Mapper(const Costs& costs, const TrafficGraph& graph, std::vector<std::vector<int>> levels,
         const GraphMapOptions& options, const Deadline& deadline)
      : costs_(costs),
        graph_(graph),
        levels_(std::move(levels)),
        options_(options),
        deadline_(deadline),
        local_of_(static_cast<std::size_t>(graph.vertices()), -1),
        perm_(static_cast<std::size_t>(graph.vertices())) {}

  Labelling run() {
    std::vector<int> vertices(static_cast<std::size_t>(graph_.vertices()));
    std::iota(vertices.begin(), vertices.end(), 0);
    std::vector<int> slots = vertices;
    if (!(options_.bottom_up && bottom_up(vertices))) {
      place(vertices, slots, static_cast<int>(levels_.size()) - 1);
    }
    return Labelling(std::move(perm_));
  }

 private:
  // Bottom-up: the vertices into parts of a finest group's size, those
  // parts (the quotient graph's vertices) into groups of the next level's
  // size, and so on; then the parts go to the machine's groups top-down by
  // the objective (assign()). False, and nothing done, unless every level's
  // groups are equal.
  bool bottom_up(const std::vector<int>& all) {
    const std::size_t levels = levels_.size();
    if (levels == 0) return false;
    // phys[l][g]: the ranks of group g of level l, groups in order of first rank.
    std::vector<std::vector<std::vector<int>>> phys(levels);
    for (std::size_t l = 0; l < levels; ++l) {
      std::map<int, int> index_of;
      for (int r : all) {
        const auto [it, fresh] = index_of.emplace(levels_[l][static_cast<std::size_t>(r)],
                                                  static_cast<int>(phys[l].size()));
        if (fresh) phys[l].emplace_back();
        phys[l][static_cast<std::size_t>(it->second)].push_back(r);
      }
      for (const auto& g : phys[l]) {
        if (g.size() != phys[l][0].size()) return false;
      }
      if (l > 0 && phys[l - 1].size() % phys[l].size() != 0) return false;
    }
    // virt[l][g]: the vertices of virtual group g of level l; kids[l][g]:
    // its groups of level l - 1.
    std::vector<std::vector<std::vector<int>>> virt(levels), kids(levels);
    virt[0] = split(graph_, all,
                    std::vector<int>(phys[0].size(), static_cast<int>(phys[0][0].size())), 0);
    for (std::size_t l = 1; l < levels; ++l) {
      const int below = static_cast<int>(virt[l - 1].size());
      std::vector<int> part_of(static_cast<std::size_t>(graph_.vertices()));
      for (int g = 0; g < below; ++g) {
        for (int v : virt[l - 1][static_cast<std::size_t>(g)])
          part_of[static_cast<std::size_t>(v)] = g;
      }
      std::vector<WeightedEdge> edges;
      for (int v : all) {
        for (std::size_t e = graph_.begin(v); e < graph_.end(v); ++e) {
          const int a = part_of[static_cast<std::size_t>(v)];
          const int b = part_of[static_cast<std::size_t>(graph_.neighbour(e))];
          if (a < b) edges.push_back({a, b, graph_.weight(e)});
        }
      }
      const TrafficGraph quotient(below, std::move(edges));
      std::vector<int> items(static_cast<std::size_t>(below));
      std::iota(items.begin(), items.end(), 0);
      const int groups = static_cast<int>(phys[l].size());
      kids[l] =
          split(quotient, items, std::vector<int>(static_cast<std::size_t>(groups), below / groups),
                static_cast<int>(l));
      for (const auto& members : kids[l]) {
        std::vector<int> vertices;
        for (int g : members) {
          const auto& v = virt[l - 1][static_cast<std::size_t>(g)];
          vertices.insert(vertices.end(), v.begin(), v.end());
        }
        virt[l].push_back(std::move(vertices));
      }
    }
    // Top-down onto the machine.
    const std::size_t top = levels - 1;
    std::vector<int> everything(virt[top].size());
    std::iota(everything.begin(), everything.end(), 0);
    std::vector<int> physical(phys[top].size());
    std::iota(physical.begin(), physical.end(), 0);
    place_virtual(phys, virt, kids, top, everything, physical);
    return true;
  }

  // Places the virtual groups `mine` of level l on the physical groups
  // `theirs` of level l (as many), then their insides.
  void place_virtual(const std::vector<std::vector<std::vector<int>>>& phys,
                     const std::vector<std::vector<std::vector<int>>>& virt,
                     const std::vector<std::vector<std::vector<int>>>& kids, std::size_t l,
                     const std::vector<int>& mine, const std::vector<int>& theirs) {
    std::vector<std::vector<int>> parts, groups;
    for (int g : mine) parts.push_back(virt[l][static_cast<std::size_t>(g)]);
    for (int g : theirs) groups.push_back(phys[l][static_cast<std::size_t>(g)]);
    const std::vector<int> group_of_part = assign(parts, groups);
    for (std::size_t i = 0; i < mine.size(); ++i) {
      const int target = theirs[static_cast<std::size_t>(group_of_part[i])];
      if (l == 0) {
        std::vector<int> slots = phys[0][static_cast<std::size_t>(target)];
        if (const auto* s = dynamic_cast<const StructuredCosts*>(&costs_)) order_by_core(*s, slots);
        const auto& vertices = parts[i];
        for (std::size_t k = 0; k < vertices.size(); ++k) {
          perm_[static_cast<std::size_t>(vertices[k])] = OldRank(slots[k]);
        }
        continue;
      }
      // The physical groups of level l - 1 inside the target.
      const int label =
          levels_[l][static_cast<std::size_t>(phys[l][static_cast<std::size_t>(target)][0])];
      std::vector<int> inside;
      for (std::size_t g = 0; g < phys[l - 1].size(); ++g) {
        if (levels_[l][static_cast<std::size_t>(phys[l - 1][g][0])] == label) {
          inside.push_back(static_cast<int>(g));
        }
      }
      place_virtual(phys, virt, kids, l - 1, kids[l][static_cast<std::size_t>(mine[i])], inside);
    }
  }
  // Places vertices on slots (old ranks, as many), splitting by level j and
  // the levels below it. A map once begun is finished: past the deadline
  // each split is its first METIS call, unrefined (the vertices left in the
  // job's order would make the whole map worthless).
  void place(const std::vector<int>& vertices, std::vector<int> slots, int j) {
    if (j < 0 || vertices.size() == 1) {
      if (const auto* s = dynamic_cast<const StructuredCosts*>(&costs_)) order_by_core(*s, slots);
      for (std::size_t i = 0; i < vertices.size(); ++i) {
        perm_[static_cast<std::size_t>(vertices[i])] = OldRank(slots[i]);
      }
      return;
    }
    // The level's groups among the slots, in order of first member.
    std::map<int, int> index_of;
    std::vector<std::vector<int>> groups;
    for (int r : slots) {
      const auto [it, fresh] = index_of.emplace(levels_[static_cast<std::size_t>(j)][r],
                                                static_cast<int>(groups.size()));
      if (fresh) groups.emplace_back();
      groups[static_cast<std::size_t>(it->second)].push_back(r);
    }
    if (groups.size() == 1) {
      place(vertices, std::move(slots), j - 1);
      return;
    }
    std::vector<int> sizes;
    for (const auto& g : groups) sizes.push_back(static_cast<int>(g.size()));
    std::vector<std::vector<int>> parts = split(graph_, vertices, sizes, j);
    const std::vector<int> group_of_part = assign(parts, groups);
    for (std::size_t i = 0; i < parts.size(); ++i) {
      place(parts[i], groups[static_cast<std::size_t>(group_of_part[i])], j - 1);
    }
  }

  // Splits vertices into parts of the given sizes, keeping heavy edges
  // inside parts.
  // Past the deadline, the candidates not yet tried are skipped.
  std::vector<std::vector<int>> split(const TrafficGraph& graph, const std::vector<int>& vertices,
                                      const std::vector<int>& sizes, int j) {
    const int k = static_cast<int>(sizes.size());
    const bool equal =
        std::all_of(sizes.begin(), sizes.end(), [&](int s) { return s == sizes[0]; });
    // Built once: the direct split and every candidate's refinement use it.
    LocalGraph local = local_graph(graph, vertices);
    if (!options_.metis && options_.group_bottom_up && k >= 2 && equal) {
      std::vector<std::vector<int>> grouped = agglomerate(graph, vertices, sizes[0]);
      refine(graph, local, vertices, grouped);
      return grouped;
    }
    // Many equal parts: also by recursive splits into a prime number of
    // parts each (2 when it divides), every split exact. METIS's k-way
    // into 256 parts of 16 leaves jagged blocks on a 64x64 mesh, and its
    // recursive bisection repairs its imbalance only at the end. They make
    // the direct split's many calls redundant: with parts that small,
    // METIS's k-way barely coarsens and its own recursive bisection is the
    // same work, done less exactly (at 1,024 ranks into 64 parts one k-way
    // call took 20 ms, all 63 bisections with 2 calls each 10 ms; without
    // the 7 calls after the first, 5 of the quality benchmark's 63
    // objectives were worse, by 0.35% at most, and a full map took half
    // the time). So, with the splits refined, the direct split gets one
    // k-way call there; a fast map makes it only where the parts are large
    // enough for METIS to coarsen (on the power-law graph at 1,024 ranks on
    // 8 racks that call into racks made the fast map 3.5% better than
    // without it, and better than every full start).
    const bool recursive_too = k > 2 && equal && smallest_factor(k) != k;
    const bool coarsens = static_cast<int>(vertices.size()) >= kMetisCoarsestPerPart * k;
    int direct_attempts = std::max(1, options_.metis_attempts);
    if (recursive_too && options_.refine_splits) {
      direct_attempts = options_.metis_attempts >= kMetisAttempts || coarsens ? 1 : 0;
    }
    std::vector<std::vector<int>> best;
    double best_cut = 0;
    const auto consider = [&](std::vector<std::vector<int>> candidate) {
      refine(graph, local, vertices, candidate);
      const double cut = part_cut(graph, candidate);
      if (best.empty() || cut < best_cut) {
        best_cut = cut;
        best = std::move(candidate);
      }
    };
    if (direct_attempts > 0) {
      best = split_direct(local, vertices, sizes, j, direct_attempts);
      best_cut = part_cut(graph, best);
    }
    if (k >= 2 && equal && (best.empty() || !deadline_.passed())) {
      if (recursive_too) {
        std::vector<std::vector<int>> recursive;
        split_recursive(graph, vertices, k, sizes[0], j, recursive);
        consider(std::move(recursive));
      }
      // Not in a fast map: there it changed no objective on the speed
      // benchmark's random geometric and power-law graphs and took about a
      // quarter of the time, and the quick answer is that grouping already,
      // as a whole mapping.
      if (options_.group_bottom_up && options_.metis_attempts >= kMetisAttempts &&
          !deadline_.passed()) {
        consider(agglomerate(graph, vertices, sizes[0]));
      }
    }
    if (k > 2 && options_.refine_splits && options_.resplit_pairs) resplit_pairs(graph, j, best);
    return best;
  }

  // GraphMapOptions::resplit_pairs: a pair's new split is kept where it
  // cuts less between the two (edges to other parts stay cut either way);
  // each round after the first only over the pairs with a part changed in
  // the round before, kResplitRounds at most. On the random geometric graph
  // at 1,024 ranks it took a fast map's objective from 4.85e8 to 4.61e8 on
  // 64 nodes of 16 and from 6.83e8 to 6.20e8 on 8 racks of 8 nodes; a full
  // run's from 4.67e8 to 4.52e8 and from 6.31e8 to 6.09e8.
  void resplit_pairs(const TrafficGraph& graph, int j, std::vector<std::vector<int>>& parts) {
    const int k = static_cast<int>(parts.size());
    std::vector<int> part_of(static_cast<std::size_t>(graph.vertices()), -1);
    for (int i = 0; i < k; ++i) {
      for (int v : parts[static_cast<std::size_t>(i)]) part_of[static_cast<std::size_t>(v)] = i;
    }
    // The weight from the vertices of `from` to those of part `to`.
    const auto weight_to = [&](const std::vector<int>& from, int to) {
      double w = 0;
      for (int v : from) {
        for (std::size_t e = graph.begin(v); e < graph.end(v); ++e) {
          if (part_of[static_cast<std::size_t>(graph.neighbour(e))] == to) w += graph.weight(e);
        }
      }
      return w;
    };
    std::vector<char> changed(static_cast<std::size_t>(k), 1);
    for (int round = 0; round < kResplitRounds && !deadline_.passed(); ++round) {
      // The pairs to try, heaviest first: (-weight, a, b), a < b.
      std::vector<std::tuple<double, int, int>> pairs;
      for (int a = 0; a < k; ++a) {
        for (int v : parts[static_cast<std::size_t>(a)]) {
          for (std::size_t e = graph.begin(v); e < graph.end(v); ++e) {
            const int b = part_of[static_cast<std::size_t>(graph.neighbour(e))];
            if (b > a &&
                (changed[static_cast<std::size_t>(a)] || changed[static_cast<std::size_t>(b)])) {
              pairs.emplace_back(0.0, a, b);
            }
          }
        }
      }
      std::sort(pairs.begin(), pairs.end(), [](const auto& x, const auto& y) {
        return std::tie(std::get<1>(x), std::get<2>(x)) < std::tie(std::get<1>(y), std::get<2>(y));
      });
      pairs.erase(std::unique(pairs.begin(), pairs.end()), pairs.end());
      for (auto& [w, a, b] : pairs) w = -weight_to(parts[static_cast<std::size_t>(a)], b);
      std::sort(pairs.begin(), pairs.end());
      std::fill(changed.begin(), changed.end(), 0);
      bool any = false;
      for (const auto& [minus_w, a, b] : pairs) {
        if (deadline_.passed()) break;
        auto& pa = parts[static_cast<std::size_t>(a)];
        auto& pb = parts[static_cast<std::size_t>(b)];
        // The weight between them now (an earlier pair may have changed it).
        const double before = weight_to(pa, b);
        if (before <= 0) continue;
        std::vector<int> both = pa;
        both.insert(both.end(), pb.begin(), pb.end());
        LocalGraph local = local_graph(graph, both);
        std::vector<std::vector<int>> two =
            split_direct(local, both, {static_cast<int>(pa.size()), static_cast<int>(pb.size())},
                         j + 7 * (round + 1), kResplitAttempts);
        for (int v : two[1]) part_of[static_cast<std::size_t>(v)] = -2;
        const double after = weight_to(two[0], -2);
        const bool better = after < before;
        if (better) {
          pa = std::move(two[0]);
          pb = std::move(two[1]);
          changed[static_cast<std::size_t>(a)] = changed[static_cast<std::size_t>(b)] = 1;
          any = true;
        }
        for (int v : pa) part_of[static_cast<std::size_t>(v)] = a;
        for (int v : pb) part_of[static_cast<std::size_t>(v)] = b;
      }
      if (!any) break;
    }
  }

  // Parts of `size` built bottom-up, as TreeMatch groups: per prime factor
  // f of size, smallest first, the groups so far are merged f at a time,
  // the heaviest connections first (for f = 2 a greedy heaviest matching).
  // On a 64x64 mesh and nodes of 16 this gives straight 4x4 blocks
  // (dominoes, 2x2, 2x4, 4x4), which METIS's k-way and recursive splits
  // leave jagged; on irregular graphs METIS usually cuts less, and split()
  // keeps whichever cuts least.
  static std::vector<std::vector<int>> agglomerate(const TrafficGraph& graph,
                                                   const std::vector<int>& vertices, int size) {
    std::vector<std::vector<int>> groups;
    std::vector<int> group_of(static_cast<std::size_t>(graph.vertices()), -1);
    for (int v : vertices) {
      group_of[static_cast<std::size_t>(v)] = static_cast<int>(groups.size());
      groups.push_back({v});
    }
    for (int rest = size; rest > 1;) {
      const int f = smallest_factor(rest);
      rest /= f;
      const int m = static_cast<int>(groups.size());
      // The traffic between groups, each pair once (a < b), heaviest first.
      std::vector<std::vector<std::pair<double, int>>> near(static_cast<std::size_t>(m));
      std::vector<std::tuple<double, int, int>> heaviest;  // (-weight, a, b)
      std::vector<std::pair<int, double>> out;             // group a's edges to groups b > a
      for (int a = 0; a < m; ++a) {
        out.clear();
        for (int v : groups[static_cast<std::size_t>(a)]) {
          for (std::size_t e = graph.begin(v); e < graph.end(v); ++e) {
            const int b = group_of[static_cast<std::size_t>(graph.neighbour(e))];
            if (b > a) out.emplace_back(b, graph.weight(e));
          }
        }
        std::sort(out.begin(), out.end());  // by group, each pair's weights in one order
        for (std::size_t i = 0; i < out.size();) {
          const int b = out[i].first;
          double w = 0;
          for (; i < out.size() && out[i].first == b; ++i) w += out[i].second;
          near[static_cast<std::size_t>(a)].emplace_back(w, b);
          near[static_cast<std::size_t>(b)].emplace_back(w, a);
          heaviest.emplace_back(-w, a, b);
        }
      }
      std::sort(heaviest.begin(), heaviest.end());
      // Merged groups: a seed from the heaviest free pair, grown by the
      // free group most connected to it; groups with no free neighbour
      // left fill up in order at the end.
      std::vector<int> merged_into(static_cast<std::size_t>(m), -1);
      std::vector<std::vector<int>> merged;
      std::map<int, double> pull;  // free group -> weight to the growing one
      for (const auto& [w, a, b] : heaviest) {
        if (merged_into[static_cast<std::size_t>(a)] >= 0 ||
            merged_into[static_cast<std::size_t>(b)] >= 0) {
          continue;
        }
        const int id = static_cast<int>(merged.size());
        merged.push_back({});
        pull.clear();
        const auto take = [&](int g) {
          merged_into[static_cast<std::size_t>(g)] = id;
          merged.back().push_back(g);
          if (f == 2) return;  // the seed pair is the whole group: nothing to pull
          pull.erase(g);
          for (const auto& [wg, h] : near[static_cast<std::size_t>(g)]) {
            if (merged_into[static_cast<std::size_t>(h)] < 0) pull[h] += wg;
          }
        };
        take(a);
        take(b);
        while (static_cast<int>(merged.back().size()) < f && !pull.empty()) {
          const auto most =
              std::max_element(pull.begin(), pull.end(),
                               [](const auto& x, const auto& y) { return x.second < y.second; });
          take(most->first);
        }
        if (static_cast<int>(merged.back().size()) < f) {
          // No free neighbour: leave the seed's groups for the fill-up.
          for (int g : merged.back()) merged_into[static_cast<std::size_t>(g)] = -1;
          merged.pop_back();
        }
      }
      std::vector<int> open;
      for (int g = 0; g < m; ++g) {
        if (merged_into[static_cast<std::size_t>(g)] < 0) open.push_back(g);
      }
      for (std::size_t i = 0; i < open.size(); i += static_cast<std::size_t>(f)) {
        merged.emplace_back(open.begin() + static_cast<std::ptrdiff_t>(i),
                            open.begin() + static_cast<std::ptrdiff_t>(i + f));
      }
      std::vector<std::vector<int>> next;
      for (const auto& members : merged) {
        next.emplace_back();
        for (int g : members) {
          for (int v : groups[static_cast<std::size_t>(g)]) {
            group_of[static_cast<std::size_t>(v)] = static_cast<int>(next.size()) - 1;
            next.back().push_back(v);
          }
        }
      }
      groups = std::move(next);
    }
    return groups;
  }

  static int smallest_factor(int k) {
    for (int f = 2; f * f <= k; ++f) {
      if (k % f == 0) return f;
    }
    return k;
  }

  // Appends to out the k parts of `size` that recursive prime splits of
  // vertices give.
  void split_recursive(const TrafficGraph& graph, const std::vector<int>& vertices, int k, int size,
                       int j, std::vector<std::vector<int>>& out) {
    if (k == 1) {
      out.push_back(vertices);
      return;
    }
    const int f = smallest_factor(k);
    LocalGraph local = local_graph(graph, vertices);
    for (const auto& part : split_direct(local, vertices, std::vector<int>(f, size * (k / f)), j,
                                         options_.metis_attempts)) {
      split_recursive(graph, part, k / f, size, j, out);
    }
  }

  // The weight of the edges between different parts (each edge once).
  static double part_cut(const TrafficGraph& graph, const std::vector<std::vector<int>>& parts) {
    std::vector<int> part_of(static_cast<std::size_t>(graph.vertices()), -1);
    for (std::size_t i = 0; i < parts.size(); ++i) {
      for (int v : parts[i]) part_of[static_cast<std::size_t>(v)] = static_cast<int>(i);
    }
    double cut = 0;
    for (const auto& part : parts) {
      for (int v : part) {
        for (std::size_t e = graph.begin(v); e < graph.end(v); ++e) {
          const int other = part_of[static_cast<std::size_t>(graph.neighbour(e))];
          if (other >= 0 && other != part_of[static_cast<std::size_t>(v)]) cut += graph.weight(e);
        }
      }
    }
    return cut / 2;
  }

  // split() by METIS, the best of `attempts` calls (see GraphMapOptions);
  // local: the subgraph that vertices induce (local_graph()).
  std::vector<std::vector<int>> split_direct(LocalGraph& local, const std::vector<int>& vertices,
                                             const std::vector<int>& sizes, int j, int attempts) {
    const int n = static_cast<int>(vertices.size());
    const int k = static_cast<int>(sizes.size());
    auto& [xadj, adjncy, adjwgt] = local;
    std::vector<int> part(static_cast<std::size_t>(n), 0);
    if (adjncy.empty()) {
      // No traffic inside: any split is as good; keep the order.
      for (int i = 0, t = 0, filled = 0; i < n; ++i) {
        while (filled == sizes[static_cast<std::size_t>(t)]) {
          ++t;
          filled = 0;
        }
        part[static_cast<std::size_t>(i)] = t;
        ++filled;
      }
    } else {
      // METIS k-way and recursive bisection (often straighter cuts on
      // meshes), with METIS's default imbalance (3%) and nearly none
      // (0.1%: less for balance() to repair, but worse k-way cuts into many
      // parts), coarsening by heavy edges and at random (heavy-edge
      // matching never separates a heavy pair: on NPB FT at 64 ranks the
      // best cut splits every heavy pair (2i, 2i+1) and keeps the columns
      // whole), from kMetisSeeds seeds, each made exact; the one that cuts
      // the least edge weight wins. Past the deadline, the first only.
      std::int64_t best_cut = -1;
      attempts = attempts >= kMetisAttempts ? kMetisAttempts * kMetisSeeds : std::max(1, attempts);
      for (int attempt = 0; attempt < attempts && !(attempt > 0 && deadline_.passed()); ++attempt) {
        const bool recursive = attempt % 2 == 1;
        const bool tight = attempt % 4 >= 2;
        const bool random_matching = attempt % 8 >= 4;
        std::vector<int> candidate =
            metis_parts(xadj, adjncy, adjwgt, sizes, j + 101 * (attempt / 8), recursive, tight,
                        random_matching);
        balance(xadj, adjncy, adjwgt, sizes, candidate);
        const std::int64_t cut = cut_weight(xadj, adjncy, adjwgt, candidate);
        if (best_cut < 0 || cut < best_cut) {
          best_cut = cut;
          part = std::move(candidate);
        }
      }
      if (options_.refine_splits) refine_pairs_local(local, k, part, deadline_);
    }
    std::vector<std::vector<int>> parts(static_cast<std::size_t>(k));
    for (int i = 0; i < n; ++i) {
      parts[static_cast<std::size_t>(part[static_cast<std::size_t>(i)])].push_back(vertices[i]);
    }
    return parts;
  }

  // The subgraph that vertices induce, as METIS takes it: weights scaled
  // to kMetisWeightBudget in all, each at least 1.
  LocalGraph local_graph(const TrafficGraph& graph, const std::vector<int>& vertices) {
    std::vector<int> scratch;
    std::vector<int>& local_of = by_vertex(graph, scratch);
    const int n = static_cast<int>(vertices.size());
    for (int i = 0; i < n; ++i) local_of[static_cast<std::size_t>(vertices[i])] = i;
    LocalGraph local;
    double total = 0;
    for (int v : vertices) {
      for (std::size_t e = graph.begin(v); e < graph.end(v); ++e) {
        if (local_of[static_cast<std::size_t>(graph.neighbour(e))] >= 0) {
          total += static_cast<double>(graph.units(e));
        }
      }
    }
    const double scale = total > kMetisWeightBudget ? kMetisWeightBudget / total : 1.0;
    for (int v : vertices) {
      for (std::size_t e = graph.begin(v); e < graph.end(v); ++e) {
        const int u = local_of[static_cast<std::size_t>(graph.neighbour(e))];
        if (u < 0) continue;
        local.adjncy.push_back(u);
        local.adjwgt.push_back(std::max<idx_t>(
            1, static_cast<idx_t>(static_cast<double>(graph.units(e)) * scale + 0.5)));
      }
      local.xadj.push_back(static_cast<idx_t>(local.adjncy.size()));
    }
    for (int v : vertices) local_of[static_cast<std::size_t>(v)] = -1;
    return local;
  }

  // A per-vertex array of -1s to use and leave as found: the member array
  // for the program's graph, scratch (filled) for a quotient graph.
  std::vector<int>& by_vertex(const TrafficGraph& graph, std::vector<int>& scratch) {
    if (&graph == &graph_) return local_of_;
    scratch.assign(static_cast<std::size_t>(graph.vertices()), -1);
    return scratch;
  }

  // refine_pairs_local() on parts of vertices (their union, whose subgraph
  // is local), in place.
  void refine(const TrafficGraph& graph, const LocalGraph& local, const std::vector<int>& vertices,
              std::vector<std::vector<int>>& parts) {
    if (!options_.refine_splits || parts.size() < 2 || deadline_.passed()) return;
    if (local.adjncy.empty()) return;
    // part[i]: the part of vertices[i].
    std::vector<int> scratch;
    std::vector<int>& part_of = by_vertex(graph, scratch);
    for (std::size_t p = 0; p < parts.size(); ++p) {
      for (int v : parts[p]) part_of[static_cast<std::size_t>(v)] = static_cast<int>(p);
    }
    std::vector<int> part(vertices.size());
    for (std::size_t i = 0; i < vertices.size(); ++i) {
      part[i] = part_of[static_cast<std::size_t>(vertices[i])];
      part_of[static_cast<std::size_t>(vertices[i])] = -1;
    }
    refine_pairs_local(local, static_cast<int>(parts.size()), part, deadline_);
    for (auto& members : parts) members.clear();
    for (std::size_t i = 0; i < vertices.size(); ++i) {
      parts[static_cast<std::size_t>(part[i])].push_back(vertices[i]);
    }
  }

  // METIS's partition into parts of about the given sizes.
  std::vector<int> metis_parts(std::vector<idx_t>& xadj, std::vector<idx_t>& adjncy,
                               std::vector<idx_t>& adjwgt, const std::vector<int>& sizes, int j,
                               bool recursive, bool tight, bool random_matching) const {
    const int n = static_cast<int>(xadj.size()) - 1;
    idx_t nvtxs = n, ncon = 1, nparts = static_cast<idx_t>(sizes.size()), objval = 0;
    std::vector<real_t> targets;
    for (int s : sizes) targets.push_back(static_cast<real_t>(s) / static_cast<real_t>(n));
    idx_t metis_options[METIS_NOPTIONS];
    METIS_SetDefaultOptions(metis_options);
    metis_options[METIS_OPTION_SEED] =
        static_cast<idx_t>((options_.seed + static_cast<std::uint64_t>(j)) % 1000003);
    if (tight) metis_options[METIS_OPTION_UFACTOR] = 1;
    if (random_matching) metis_options[METIS_OPTION_CTYPE] = METIS_CTYPE_RM;
    std::vector<idx_t> result(static_cast<std::size_t>(n), 0);
    const auto call = recursive ? METIS_PartGraphRecursive : METIS_PartGraphKway;
    int status = METIS_OK;
    {
      const std::lock_guard<std::mutex> lock(metis_mutex());
      status = call(&nvtxs, &ncon, xadj.data(), adjncy.data(), nullptr, nullptr, adjwgt.data(),
                    &nparts, targets.data(), nullptr, metis_options, &objval, result.data());
    }
    if (status != METIS_OK) {
      throw std::runtime_error(
          std::string(recursive ? "METIS_PartGraphRecursive" : "METIS_PartGraphKway") +
          " failed with status " + std::to_string(status));
    }
    return std::vector<int>(result.begin(), result.end());
  }

  // The weight of the edges between parts (each edge once).
  static std::int64_t cut_weight(const std::vector<idx_t>& xadj, const std::vector<idx_t>& adjncy,
                                 const std::vector<idx_t>& adjwgt, const std::vector<int>& part) {
    std::int64_t cut = 0;
    for (std::size_t v = 0; v + 1 < xadj.size(); ++v) {
      for (idx_t e = xadj[v]; e < xadj[v + 1]; ++e) {
        if (part[static_cast<std::size_t>(adjncy[e])] != part[v]) cut += adjwgt[e];
      }
    }
    return cut / 2;
  }

  // Makes every part exactly its size: vertices of overfull parts move to
  // parts with room, those that lose the least edge weight first.
  static void balance(const std::vector<idx_t>& xadj, const std::vector<idx_t>& adjncy,
                      const std::vector<idx_t>& adjwgt, const std::vector<int>& sizes,
                      std::vector<int>& part) {
    const int k = static_cast<int>(sizes.size());
    std::vector<int> count(static_cast<std::size_t>(k), 0);
    for (int p : part) ++count[static_cast<std::size_t>(p)];
    std::vector<std::int64_t> conn(static_cast<std::size_t>(k), 0);
    struct Candidate {
      std::int64_t gain;
      int vertex, target;
    };
    std::vector<Candidate> candidates;
    for (;;) {
      bool over = false;
      for (int t = 0; t < k; ++t) over |= count[t] > sizes[t];
      if (!over) return;
      int some_free = -1;
      for (int t = 0; t < k && some_free < 0; ++t) {
        if (count[t] < sizes[t]) some_free = t;
      }
      candidates.clear();
      for (std::size_t v = 0; v < part.size(); ++v) {
        const int own = part[v];
        if (count[static_cast<std::size_t>(own)] <= sizes[static_cast<std::size_t>(own)]) continue;
        for (idx_t e = xadj[v]; e < xadj[v + 1]; ++e) conn[part[adjncy[e]]] += adjwgt[e];
        int target = some_free;
        for (idx_t e = xadj[v]; e < xadj[v + 1]; ++e) {
          const int t = part[adjncy[e]];
          if (count[t] < sizes[t] && conn[t] > conn[target]) target = t;
        }
        candidates.push_back({conn[target] - conn[own], static_cast<int>(v), target});
        for (idx_t e = xadj[v]; e < xadj[v + 1]; ++e) conn[part[adjncy[e]]] = 0;
      }
      std::stable_sort(candidates.begin(), candidates.end(),
                       [](const Candidate& a, const Candidate& b) { return a.gain > b.gain; });
      for (const Candidate& c : candidates) {
        int& from = part[static_cast<std::size_t>(c.vertex)];
        if (count[from] <= sizes[from] || count[c.target] >= sizes[c.target]) continue;
        --count[from];
        ++count[c.target];
        from = c.target;
      }
    }
  }

  // Which group each part goes to: by the objective over the groups' costs
  // when the groups are equal and their costs differ; else part i to
  // group i.
  std::vector<int> assign(const std::vector<std::vector<int>>& parts,
                          const std::vector<std::vector<int>>& groups) {
    const int k = static_cast<int>(parts.size());
    std::vector<int> in_order(static_cast<std::size_t>(k));
    std::iota(in_order.begin(), in_order.end(), 0);
    if (!options_.assign_parts || k > DenseCosts::kMaxRanks) return in_order;
    for (const auto& g : groups) {
      if (g.size() != groups[0].size()) return in_order;
    }
    std::vector<double> between(static_cast<std::size_t>(k) * k, 0);
    bool differ = false;
    for (int a = 0; a < k; ++a) {
      for (int b = 0; b < k; ++b) {
        if (a == b) continue;
        between[static_cast<std::size_t>(a) * k + b] =
            costs_.cost(OldRank(groups[a][0]), OldRank(groups[b][0]));
        differ |= between[static_cast<std::size_t>(a) * k + b] != between[1];
      }
    }
    if (!differ) return in_order;
    std::vector<int> part_of(static_cast<std::size_t>(graph_.vertices()), -1);
    for (int i = 0; i < k; ++i) {
      for (int v : parts[static_cast<std::size_t>(i)]) part_of[static_cast<std::size_t>(v)] = i;
    }
    std::vector<WeightedEdge> quotient;
    for (int i = 0; i < k; ++i) {
      for (int v : parts[static_cast<std::size_t>(i)]) {
        for (std::size_t e = graph_.begin(v); e < graph_.end(v); ++e) {
          const int other = part_of[static_cast<std::size_t>(graph_.neighbour(e))];
          if (other > i) quotient.push_back({i, other, graph_.weight(e)});
        }
      }
    }
    const DenseCosts coarse(k, std::move(between), DenseCosts::Trusted{});
    ObjectiveSpec spec = ObjectiveSpec::parse("total", Pattern::parse("graph"));
    spec.graph = std::make_shared<const TrafficGraph>(k, std::move(quotient));
    const Grid line({k});
    Labelling chosen = Labelling::identity(k);
    if (k <= kMaxBruteForce - 1) {
      chosen = brute_force(coarse, line, spec);
    } else {
      IncrementalObjective state(coarse, line, Labelling::identity(k), spec);
      SplitMix64 rng(options_.seed);
      hill_climb(state, deadline_, rng, Neighbourhood{}, kAssignStallPerPart * k);
      chosen = state.labelling();
    }
    std::vector<int> out(static_cast<std::size_t>(k));
    for (int i = 0; i < k; ++i)
      out[static_cast<std::size_t>(i)] = chosen.old_of(NewRank(i)).value();
    return out;
  }

  const Costs& costs_;
  const TrafficGraph& graph_;
  std::vector<std::vector<int>> levels_;
  GraphMapOptions options_;
  const Deadline& deadline_;
  std::vector<int> local_of_;  // [vertex] index in the split under way, or -1
  std::vector<OldRank> perm_;
};

// The heaviest neighbours of every vertex, at most k each, heaviest first.
std::vector<std::vector<int>> heaviest_neighbours(const TrafficGraph& graph, std::size_t k) {
  std::vector<std::vector<int>> out(static_cast<std::size_t>(graph.vertices()));
  std::vector<std::pair<std::int64_t, int>> row;
  for (int x = 0; x < graph.vertices(); ++x) {
    row.clear();
    for (std::size_t i = graph.begin(x); i < graph.end(x); ++i) {
      row.emplace_back(-graph.units(i), graph.neighbour(i));
    }
    const std::size_t keep = std::min(k, row.size());
    std::partial_sort(row.begin(), row.begin() + static_cast<std::ptrdiff_t>(keep), row.end());
    for (std::size_t i = 0; i < keep; ++i)
      out[static_cast<std::size_t>(x)].push_back(row[i].second);
  }
  return out;
}

}  // namespace

std::int64_t refine_boundaries(IncrementalObjective& state, const std::vector<int>& node_of,
                               const Deadline& deadline, int passes) {
  const TrafficGraph& graph = *state.spec().graph;
  const int p = graph.vertices();
  const std::vector<std::vector<int>> near = heaviest_neighbours(graph, kBoundaryNeighbours);
  const auto node_at = [&](int x) { return node_of[state.labelling().old_of(NewRank(x)).value()]; };
  // True if one of x's heaviest neighbours is on node n.
  const auto talks_to = [&](int x, int n) {
    for (int y : near[static_cast<std::size_t>(x)]) {
      if (node_at(y) == n) return true;
    }
    return false;
  };
  std::int64_t moves = 0;
  std::vector<int> candidates;
  for (int pass = 0; pass < passes; ++pass) {
    bool improved = false;
    // Every vertex's best swap with a vertex of another node that one of
    // its neighbours is on (one of its neighbours, or a neighbour of one),
    // then the swaps in order of gain, each checked again before it is
    // made, and none touching a vertex moved in this pass: the largest
    // gains first, so that a jagged boundary is straightened, not shifted.
    std::vector<std::tuple<double, int, int>> swaps;  // (-gain, x, w)
    for (int x = 0; x < p && !deadline.passed(); ++x) {
      ObjectiveValue best = state.value();
      int chosen = -1;
      for (int via : near[static_cast<std::size_t>(x)]) {
        candidates.assign(1, via);
        const auto& two_hops = near[static_cast<std::size_t>(via)];
        candidates.insert(candidates.end(), two_hops.begin(), two_hops.end());
        for (int w : candidates) {
          if (w == x || node_at(w) == node_at(x) || !talks_to(x, node_at(w))) continue;
          const ObjectiveValue v = state.value_after_swap(NewRank(x), NewRank(w));
          if (improves(v, best)) {
            best = v;
            chosen = w;
          }
        }
      }
      if (chosen >= 0) swaps.emplace_back(best.primary - state.value().primary, x, chosen);
    }
    std::sort(swaps.begin(), swaps.end());
    std::vector<char> moved(static_cast<std::size_t>(p), 0);
    for (const auto& [gain, x, w] : swaps) {
      if (moved[static_cast<std::size_t>(x)] || moved[static_cast<std::size_t>(w)]) continue;
      if (!improves(state.value_after_swap(NewRank(x), NewRank(w)), state.value())) continue;
      state.apply_swap(NewRank(x), NewRank(w));
      moved[static_cast<std::size_t>(x)] = moved[static_cast<std::size_t>(w)] = 1;
      ++moves;
      improved = true;
    }
    if (!improved || deadline.passed()) break;
  }
  return moves;
}

namespace {

// The levels graph_map() splits along: the known ones, then those the
// costs show above them (racks behind measured node-to-node costs), as far
// as they nest.
std::vector<std::vector<int>> levels_to_split(const Costs& costs,
                                              const std::vector<std::vector<int>>& levels) {
  for (const auto& level : levels) {
    if (static_cast<int>(level.size()) != costs.size()) {
      throw std::invalid_argument("a hierarchy level labels " + std::to_string(level.size()) +
                                  " ranks, expected " + std::to_string(costs.size()));
    }
  }
  std::vector<std::vector<int>> used;
  for (const LinkLevel& l : link_levels(costs, levels)) used.push_back(l.group_of);
  if (used.empty()) used = levels;
  return nesting(used);
}

}  // namespace

std::int64_t refine_pairs(const TrafficGraph& graph, int k, std::vector<int>& part,
                          const Deadline& deadline) {
  const int n = graph.vertices();
  if (k < 1 || k > std::max(n, 1) || static_cast<int>(part.size()) != n) {
    throw std::invalid_argument(
        "refine_pairs: a part for each of the " + std::to_string(n) +
        " vertices, in [0, k), 1 <= k <= " + std::to_string(std::max(n, 1)));
  }
  for (int p : part) {
    if (p < 0 || p >= k)
      throw std::invalid_argument("refine_pairs: part " + std::to_string(p) + " outside [0, " +
                                  std::to_string(k) + ")");
  }
  LocalGraph g;
  for (int v = 0; v < n; ++v) {
    for (std::size_t e = graph.begin(v); e < graph.end(v); ++e) {
      if (graph.units(e) > std::numeric_limits<idx_t>::max()) {
        throw std::invalid_argument("refine_pairs: an edge weight beyond 32 bits");
      }
      g.adjncy.push_back(graph.neighbour(e));
      g.adjwgt.push_back(static_cast<idx_t>(graph.units(e)));
    }
    g.xadj.push_back(static_cast<idx_t>(g.adjncy.size()));
  }
  return refine_pairs_local(g, k, part, deadline);
}

int graph_map_depth(const Costs& costs, const std::vector<std::vector<int>>& levels) {
  return static_cast<int>(levels_to_split(costs, levels).size());
}

Labelling graph_map(const Costs& costs, const TrafficGraph& graph,
                    const std::vector<std::vector<int>>& levels, const GraphMapOptions& options,
                    const Deadline& deadline) {
  if (graph.vertices() != costs.size()) {
    throw std::invalid_argument("the traffic graph has " + std::to_string(graph.vertices()) +
                                " ranks, the costs " + std::to_string(costs.size()));
  }
  return Mapper(costs, graph, levels_to_split(costs, levels), options, deadline).run();
}

}  // namespace rankshape
