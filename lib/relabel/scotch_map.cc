#include "lib/relabel/scotch_map.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

// scotch.h uses FILE and fixed-width types without including their headers.
#include <scotch/scotch.h>

#include <cstdint>
#include <cstring>

#include "lib/relabel/in_child.h"

namespace rankshape {
namespace {

// Edge ends of the guest graph: 32-bit indices, and 1 GiB of them at most.
constexpr std::int64_t kMaxScotchEdges = std::int64_t{1} << 28;

void check(int code, const char* call) {
  if (code != 0) throw std::runtime_error(std::string("Scotch: ") + call + " failed");
}

// RAII over Scotch's C objects.
struct Graph {
  SCOTCH_Graph g;
  Graph() { check(SCOTCH_graphInit(&g), "SCOTCH_graphInit"); }
  ~Graph() { SCOTCH_graphExit(&g); }
};
struct Arch {
  SCOTCH_Arch a;
  Arch() { check(SCOTCH_archInit(&a), "SCOTCH_archInit"); }
  ~Arch() { SCOTCH_archExit(&a); }
};
struct Context {
  SCOTCH_Context c;
  Context() { check(SCOTCH_contextInit(&c), "SCOTCH_contextInit"); }
  ~Context() { SCOTCH_contextExit(&c); }
};
struct Strat {
  SCOTCH_Strat s;
  Strat() { check(SCOTCH_stratInit(&s), "SCOTCH_stratInit"); }
  ~Strat() { SCOTCH_stratExit(&s); }
};

// Costs are real numbers; Scotch wants integer loads. Scale so that the
// smallest positive cost is 16 (ratios kept to ~6%), capped to stay in int.
std::vector<SCOTCH_Num> integer_costs(const std::vector<double>& costs) {
  double smallest = 0;
  for (double c : costs) {
    if (c > 0 && (smallest == 0 || c < smallest)) smallest = c;
  }
  std::vector<SCOTCH_Num> out;
  for (double c : costs) {
    const double scaled = smallest > 0 ? std::round(16.0 * c / smallest) : 1.0;
    out.push_back(static_cast<SCOTCH_Num>(std::clamp(scaled, 1.0, 1e8)));
  }
  return out;
}

// The child's answer: repaired, the target's length, the target, then the
// old rank at each position (native ints: parent and child are one binary).
std::string encode(const ScotchOutcome& o) {
  std::string bytes;
  const auto put = [&bytes](std::int32_t v) {
    bytes.append(reinterpret_cast<const char*>(&v), sizeof v);
  };
  put(o.repaired);
  put(static_cast<std::int32_t>(o.target.size()));
  bytes += o.target;
  for (const OldRank& r : o.labelling.old_ranks()) put(r.value());
  return bytes;
}

ScotchOutcome decode(const std::string& bytes, int p) {
  std::size_t at = 0;
  const auto get = [&]() {
    std::int32_t v = 0;
    if (at + sizeof v > bytes.size()) throw std::runtime_error("Scotch's child answer is short");
    std::memcpy(&v, bytes.data() + at, sizeof v);
    at += sizeof v;
    return v;
  };
  ScotchOutcome o{Labelling::identity(p), 0, ""};
  o.repaired = get();
  const std::int32_t length = get();
  if (length < 0 || at + static_cast<std::size_t>(length) > bytes.size()) {
    throw std::runtime_error("Scotch's child answer is short");
  }
  o.target = bytes.substr(at, static_cast<std::size_t>(length));
  at += static_cast<std::size_t>(length);
  std::vector<OldRank> perm;
  perm.reserve(static_cast<std::size_t>(p));
  for (int x = 0; x < p; ++x) perm.push_back(OldRank(get()));
  if (at != bytes.size()) throw std::runtime_error("Scotch's child answer is too long");
  o.labelling = Labelling(std::move(perm));
  return o;
}

}  // namespace

std::optional<ScotchOutcome> scotch_map_within(const Costs& costs, const Grid& grid,
                                               std::uint64_t seed, double seconds,
                                               std::size_t* child_peak_bytes, ScotchGuest guest) {
  const ChildRun run =
      run_in_child([&] { return encode(scotch_map(costs, grid, seed, guest)); }, seconds);
  if (child_peak_bytes) *child_peak_bytes = run.peak_rss_bytes;
  if (!run.answer) return std::nullopt;
  return decode(*run.answer, grid.size());
}

ScotchOutcome scotch_map(const Costs& costs, const Grid& grid, std::uint64_t seed,
                         ScotchGuest guest) {
  const Stencil* stencil = guest.stencil;
  const int p = grid.size();
  if (costs.size() != p) throw std::invalid_argument("scotch_map: size mismatch");
  ScotchOutcome out{Labelling::identity(p), 0, ""};
  // Scotch 7 works with threads; a deterministic context with our seed
  // makes the same seed give the same mapping. Building a decomposition
  // architecture draws from Scotch's global generator: seed it too.
  SCOTCH_randomSeed(static_cast<SCOTCH_Num>(seed % 2147483647));
  SCOTCH_randomReset();
  Context context;
  check(SCOTCH_contextOptionSetNum(&context.c, SCOTCH_OPTIONNUMDETERMINISTIC, 1),
        "SCOTCH_contextOptionSetNum");
  SCOTCH_contextRandomSeed(&context.c, static_cast<SCOTCH_Num>(seed % 2147483647));

  // Target architecture and, for each terminal, the old rank that sits there.
  Arch arch;
  std::vector<int> rank_at_terminal(p, -1);
  Graph target;        // kept alive while arch refers to it
  Graph bound_target;  // target bound to the context
  std::vector<SCOTCH_Num> tv, te, tw;
  if (const auto* s = dynamic_cast<const StructuredCosts*>(&costs)) {
    const StructuredSpec& spec = s->spec();
    // Nodes ordered by rack. A tree-leaf target needs every rack to hold
    // as many nodes and every core one rank.
    std::vector<std::vector<int>> racks(spec.racks);
    for (int n = 0; n < spec.nodes; ++n) racks[s->rack_of(n)].push_back(n);
    const std::size_t per_rack = racks[0].size();
    bool tree =
        spec.node_costs.empty() && static_cast<std::int64_t>(spec.nodes) * spec.cores_per_node == p;
    for (const auto& r : racks) tree = tree && r.size() == per_rack;
    if (!tree) {
      // Map onto the cost matrix instead, where it fits.
      if (p <= kMaxScotchDense) return scotch_map(to_dense(costs), grid, seed, guest);
      throw std::invalid_argument(
          "scotch needs a regular tree (rack-level costs, equal racks, every core used) above " +
          std::to_string(kMaxScotchDense) + " ranks; this machine is not one");
    }
    std::vector<int> terminal_of_slot(static_cast<std::size_t>(spec.nodes) * spec.cores_per_node);
    int t = 0;
    for (const auto& r : racks) {
      for (int n : r) {
        for (int c = 0; c < spec.cores_per_node; ++c) {
          terminal_of_slot[static_cast<std::size_t>(n) * spec.cores_per_node + c] = t++;
        }
      }
    }
    for (int r = 0; r < p; ++r) {
      const RankLocation& l = s->location(OldRank(r));
      int& slot =
          rank_at_terminal[terminal_of_slot[static_cast<std::size_t>(l.node) * spec.cores_per_node +
                                            l.core]];
      if (slot != -1) throw std::invalid_argument("scotch needs one rank per core");
      slot = r;
    }
    double inside = 0;  // tleaf has one cost per level: the mean core cost
    const int c = spec.cores_per_node;
    for (double v : spec.core_costs) inside += v;
    inside = c > 1 ? inside / (static_cast<double>(c) * (c - 1)) : 0;
    double across = 0;
    for (int a = 0; a < spec.racks; ++a) {
      for (int b = 0; b < spec.racks; ++b) {
        if (a != b) across += spec.rack_costs[static_cast<std::size_t>(a) * spec.racks + b];
      }
    }
    across = spec.racks > 1 ? across / (static_cast<double>(spec.racks) * (spec.racks - 1)) : 0;
    const double in_rack = spec.rack_costs[0];
    const std::vector<SCOTCH_Num> links = integer_costs({across, in_rack, inside});
    const std::vector<SCOTCH_Num> sizes = {spec.racks, static_cast<SCOTCH_Num>(per_rack), c};
    check(SCOTCH_archTleaf(&arch.a, 3, sizes.data(), links.data()), "SCOTCH_archTleaf");
    out.target = "tleaf " + std::to_string(spec.racks) + "x" + std::to_string(per_rack) + "x" +
                 std::to_string(c);
  } else {
    if (p > kMaxScotchDense) {
      throw std::invalid_argument("scotch on dense costs is limited to " +
                                  std::to_string(kMaxScotchDense) + " ranks");
    }
    // A complete target graph weighted by the costs.
    std::vector<double> w;
    tv.push_back(0);
    for (int a = 0; a < p; ++a) {
      for (int b = 0; b < p; ++b) {
        if (a == b) continue;
        te.push_back(b);
        w.push_back(costs.cost(OldRank(a), OldRank(b)));
      }
      tv.push_back(static_cast<SCOTCH_Num>(te.size()));
    }
    tw = integer_costs(w);
    check(SCOTCH_graphBuild(&target.g, 0, p, tv.data(), nullptr, nullptr, nullptr,
                            static_cast<SCOTCH_Num>(te.size()), te.data(), tw.data()),
          "SCOTCH_graphBuild (target)");
    check(SCOTCH_contextBindGraph(&context.c, &target.g, &bound_target.g),
          "SCOTCH_contextBindGraph (target)");
    check(SCOTCH_archBuild2(&arch.a, &bound_target.g, p, nullptr), "SCOTCH_archBuild2");
    for (int r = 0; r < p; ++r) rank_at_terminal[r] = r;
    out.target = "deco";
  }

  // Guest: the traffic graph, the stencil's neighbour graph (each neighbour
  // once, weighing its messages in the stencil's units), or a clique per
  // fibre.
  std::vector<SCOTCH_Num> verts = {0}, edges, weights;
  if (const TrafficGraph* graph = guest.graph) {
    if (graph->vertices() != p) throw std::invalid_argument("scotch_map: size mismatch");
    // Scotch's mapping costs are weight times distance sums in SCOTCH_Num
    // (32 bits here): the heaviest edge weighs 1,024, the others in
    // proportion (at least 1). Larger weights overflow: at 1,024 ranks with
    // weights summing to 2^30, Scotch returned mappings worse than the
    // job's order, or crashed.
    std::int64_t heaviest = 1;
    for (int x = 0; x < p; ++x) {
      for (std::size_t e = graph->begin(x); e < graph->end(x); ++e) {
        heaviest = std::max(heaviest, graph->units(e));
      }
    }
    const double scale = 1024.0 / static_cast<double>(heaviest);
    for (int x = 0; x < p; ++x) {
      for (std::size_t e = graph->begin(x); e < graph->end(x); ++e) {
        edges.push_back(graph->neighbour(e));
        weights.push_back(std::max<SCOTCH_Num>(
            1, static_cast<SCOTCH_Num>(static_cast<double>(graph->units(e)) * scale + 0.5)));
      }
      verts.push_back(static_cast<SCOTCH_Num>(edges.size()));
    }
  } else if (stencil) {
    std::vector<int> seen;
    for (int x = 0; x < p; ++x) {
      const std::vector<int> coords = grid.coords(NewRank(x));
      seen.clear();
      const std::size_t first = edges.size();
      for (int o = 0; o < stencil->offsets(); ++o) {
        const int y = stencil->neighbour(coords, x, o);
        if (y < 0 || y == x) continue;
        const auto at = std::find(seen.begin(), seen.end(), y);
        if (at == seen.end()) {
          seen.push_back(y);
          edges.push_back(y);
          weights.push_back(static_cast<SCOTCH_Num>(stencil->units(o)));
        } else {
          weights[first + static_cast<std::size_t>(at - seen.begin())] +=
              static_cast<SCOTCH_Num>(stencil->units(o));
        }
      }
      verts.push_back(static_cast<SCOTCH_Num>(edges.size()));
    }
  } else {
    std::int64_t edge_count = 0;
    for (int k = 0; k < grid.ndims(); ++k)
      edge_count += static_cast<std::int64_t>(p) * (grid.dim(k) - 1);
    if (edge_count > kMaxScotchEdges) {
      throw std::invalid_argument("scotch: the grid's fibre cliques have " +
                                  std::to_string(edge_count) + " edge ends, over the limit of " +
                                  std::to_string(kMaxScotchEdges) + " (fibres too long)");
    }
    edges.reserve(static_cast<std::size_t>(edge_count));
    for (int x = 0; x < p; ++x) {
      for (int k = 0; k < grid.ndims(); ++k) {
        const int f = grid.fibre_of(NewRank(x), k);
        for (int t = 0; t < grid.dim(k); ++t) {
          const int y = grid.fibre_member(k, f, t).value();
          if (y != x) edges.push_back(y);
        }
      }
      verts.push_back(static_cast<SCOTCH_Num>(edges.size()));
    }
  }
  Graph guest_graph;
  check(SCOTCH_graphBuild(&guest_graph.g, 0, p, verts.data(), nullptr, nullptr, nullptr,
                          static_cast<SCOTCH_Num>(edges.size()), edges.data(),
                          weights.empty() ? nullptr : weights.data()),
        "SCOTCH_graphBuild (guest)");
  Strat strat;
  check(SCOTCH_stratGraphMapBuild(&strat.s, SCOTCH_STRATQUALITY, p, 0.0),
        "SCOTCH_stratGraphMapBuild");
  Graph bound;
  check(SCOTCH_contextBindGraph(&context.c, &guest_graph.g, &bound.g), "SCOTCH_contextBindGraph");
  std::vector<SCOTCH_Num> part(p, -1);
  check(SCOTCH_graphMap(&bound.g, &arch.a, &strat.s, part.data()), "SCOTCH_graphMap");

  // Scotch may overload a terminal; move extras to free terminals.
  std::vector<int> used(p, 0);
  std::vector<int> position_of_terminal(p, -1), extras;
  for (int x = 0; x < p; ++x) {
    const int t = static_cast<int>(part[x]);
    if (t >= 0 && t < p && position_of_terminal[t] == -1) {
      position_of_terminal[t] = x;
    } else {
      extras.push_back(x);
    }
  }
  std::vector<OldRank> perm(p);
  int next_free = 0;
  for (int t = 0; t < p; ++t) {
    if (position_of_terminal[t] != -1) perm[position_of_terminal[t]] = OldRank(rank_at_terminal[t]);
  }
  for (int x : extras) {
    while (position_of_terminal[next_free] != -1) ++next_free;
    position_of_terminal[next_free] = x;
    perm[x] = OldRank(rank_at_terminal[next_free]);
  }
  out.repaired = static_cast<int>(extras.size());
  out.labelling = Labelling(std::move(perm));
  return out;
}

}  // namespace rankshape
