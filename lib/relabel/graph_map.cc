#include "lib/relabel/graph_map.h"

#include <metis.h>

#include <algorithm>
#include <map>
#include <numeric>
#include <stdexcept>
#include <string>

#include "lib/relabel/groups.h"
#include "lib/relabel/search.h"

namespace rankshape {
namespace {

// Largest sum of edge weights handed to METIS, whose indices and weights
// are 32-bit: weights are scaled down to fit (each at least 1).
constexpr double kMetisWeightBudget = 1 << 30;

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
    place(vertices, slots, static_cast<int>(levels_.size()) - 1);
    return Labelling(std::move(perm_));
  }

 private:
  // Places vertices on slots (old ranks, as many), splitting by level j and
  // the levels below it.
  void place(const std::vector<int>& vertices, std::vector<int> slots, int j) {
    if (j < 0 || deadline_.passed() || vertices.size() == 1) {
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
    std::vector<std::vector<int>> parts = split(vertices, sizes, j);
    const std::vector<int> group_of_part = assign(parts, groups);
    for (std::size_t i = 0; i < parts.size(); ++i) {
      place(parts[i], groups[static_cast<std::size_t>(group_of_part[i])], j - 1);
    }
  }

  // Splits vertices into parts of the given sizes, keeping heavy edges
  // inside parts.
  std::vector<std::vector<int>> split(const std::vector<int>& vertices,
                                      const std::vector<int>& sizes, int j) {
    const int n = static_cast<int>(vertices.size());
    const int k = static_cast<int>(sizes.size());
    for (int i = 0; i < n; ++i) local_of_[static_cast<std::size_t>(vertices[i])] = i;
    std::vector<idx_t> xadj = {0}, adjncy, adjwgt;
    double total = 0;
    for (int v : vertices) {
      for (std::size_t e = graph_.begin(v); e < graph_.end(v); ++e) {
        if (local_of_[static_cast<std::size_t>(graph_.neighbour(e))] >= 0) {
          total += static_cast<double>(graph_.units(e));
        }
      }
    }
    const double scale = total > kMetisWeightBudget ? kMetisWeightBudget / total : 1.0;
    for (int v : vertices) {
      for (std::size_t e = graph_.begin(v); e < graph_.end(v); ++e) {
        const int u = local_of_[static_cast<std::size_t>(graph_.neighbour(e))];
        if (u < 0) continue;
        adjncy.push_back(u);
        adjwgt.push_back(std::max<idx_t>(
            1, static_cast<idx_t>(static_cast<double>(graph_.units(e)) * scale + 0.5)));
      }
      xadj.push_back(static_cast<idx_t>(adjncy.size()));
    }
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
      idx_t nvtxs = n, ncon = 1, nparts = k, objval = 0;
      std::vector<real_t> targets;
      for (int s : sizes) targets.push_back(static_cast<real_t>(s) / static_cast<real_t>(n));
      idx_t metis_options[METIS_NOPTIONS];
      METIS_SetDefaultOptions(metis_options);
      metis_options[METIS_OPTION_SEED] =
          static_cast<idx_t>((options_.seed + static_cast<std::uint64_t>(j)) % 1000003);
      std::vector<idx_t> result(static_cast<std::size_t>(n), 0);
      const int status = METIS_PartGraphKway(&nvtxs, &ncon, xadj.data(), adjncy.data(), nullptr,
                                             nullptr, adjwgt.data(), &nparts, targets.data(),
                                             nullptr, metis_options, &objval, result.data());
      if (status != METIS_OK) {
        throw std::runtime_error("METIS_PartGraphKway failed with status " +
                                 std::to_string(status));
      }
      for (int i = 0; i < n; ++i) part[static_cast<std::size_t>(i)] = static_cast<int>(result[i]);
      balance(xadj, adjncy, adjwgt, sizes, part);
    }
    std::vector<std::vector<int>> parts(static_cast<std::size_t>(k));
    for (int i = 0; i < n; ++i) {
      parts[static_cast<std::size_t>(part[static_cast<std::size_t>(i)])].push_back(vertices[i]);
    }
    for (int v : vertices) local_of_[static_cast<std::size_t>(v)] = -1;
    return parts;
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
      hill_climb(state, deadline_, rng, Neighbourhood{});
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

}  // namespace

Labelling graph_map(const Costs& costs, const TrafficGraph& graph,
                    const std::vector<std::vector<int>>& levels, const GraphMapOptions& options,
                    const Deadline& deadline) {
  if (graph.vertices() != costs.size()) {
    throw std::invalid_argument("the traffic graph has " + std::to_string(graph.vertices()) +
                                " ranks, the costs " + std::to_string(costs.size()));
  }
  for (const auto& level : levels) {
    if (static_cast<int>(level.size()) != costs.size()) {
      throw std::invalid_argument("a hierarchy level labels " + std::to_string(level.size()) +
                                  " ranks, expected " + std::to_string(costs.size()));
    }
  }
  std::vector<std::vector<int>> used = levels;
  if (used.empty()) {
    for (const LinkLevel& l : link_levels(costs, {})) used.push_back(l.group_of);
  }
  return Mapper(costs, graph, nesting(used), options, deadline).run();
}

}  // namespace rankshape
