#include "lib/relabel/relabel.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <exception>
#include <functional>
#include <map>
#include <mutex>
#include <numeric>
#include <optional>
#include <stdexcept>
#include <thread>

#include "lib/relabel/bisect.h"
#include "lib/relabel/deadline.h"
#include "lib/relabel/graph_map.h"
#include "lib/relabel/groups.h"
#include "lib/relabel/kl.h"
#include "lib/relabel/metis_split.h"
#include "lib/relabel/multilevel.h"
#include "lib/relabel/scotch_map.h"
#include "lib/relabel/search.h"

namespace rankshape {

const std::vector<std::string>& relabel_algorithms() {
  static const std::vector<std::string> names = {
      "auto",       "identity",   "random", "round-robin", "node-aware",  "kl",
      "hill-climb", "multilevel", "metis",  "scotch",      "brute-force", "bisect"};
  return names;
}

std::vector<std::vector<int>> machine_levels(const StructuredCosts& costs) {
  std::vector<int> node(costs.size()), rack(costs.size());
  for (int r = 0; r < costs.size(); ++r) {
    node[r] = costs.location(OldRank(r)).node;
    rack[r] = costs.rack_of(node[r]);
  }
  std::vector<std::vector<int>> levels = {std::move(node)};
  if (costs.spec().racks > 1) levels.push_back(std::move(rack));
  return levels;
}

namespace {

Labelling from_ints(const std::vector<int>& perm) {
  std::vector<OldRank> v;
  v.reserve(perm.size());
  for (int o : perm) v.emplace_back(o);
  return Labelling(std::move(v));
}

// Members of each node in machine order (by core on a structured machine,
// else by rank), nodes ordered by their first member.
std::vector<std::vector<int>> node_members(const Costs& costs, const std::vector<int>& node_of) {
  std::map<int, std::vector<int>> by_node;
  for (int r = 0; r < static_cast<int>(node_of.size()); ++r) by_node[node_of[r]].push_back(r);
  const auto* structured = dynamic_cast<const StructuredCosts*>(&costs);
  std::vector<std::vector<int>> out;
  for (auto& [node, members] : by_node) {
    if (structured) order_by_core(*structured, members);
    out.push_back(std::move(members));
  }
  std::sort(out.begin(), out.end());
  return out;
}

// The machine's own order on a structured machine: its nodes in order
// (racks one after another), each node's ranks by core. Where a job is
// scattered, node-aware's nodes (ordered by their first rank) scatter the
// racks too: 180 ranks on 3 racks of 5 nodes of 12, a 12x15 grid, cost
// 3,366 in node-aware's best boxes and 2,691 in the machine's order.
// Without a structured file, the known levels (a placement's hosts)
// give the order: coarsest group first, then rank. None when neither is
// known.
std::optional<Labelling> machine_order(const Costs& costs,
                                       const std::vector<std::vector<int>>& levels) {
  std::vector<int> ranks(static_cast<std::size_t>(costs.size()));
  std::iota(ranks.begin(), ranks.end(), 0);
  if (const auto* structured = dynamic_cast<const StructuredCosts*>(&costs)) {
    std::stable_sort(ranks.begin(), ranks.end(), [&](int a, int b) {
      const RankLocation& la = structured->location(OldRank(a));
      const RankLocation& lb = structured->location(OldRank(b));
      return std::pair(la.node, la.core) < std::pair(lb.node, lb.core);
    });
    return from_ints(ranks);
  }
  if (levels.empty()) return std::nullopt;
  std::stable_sort(ranks.begin(), ranks.end(), [&](int a, int b) {
    for (auto level = levels.rbegin(); level != levels.rend(); ++level) {
      if ((*level)[a] != (*level)[b]) return (*level)[a] < (*level)[b];
    }
    return false;
  });
  return from_ints(ranks);
}

// Chooses between labellings: the better objective value; where a stencil
// without diagonals ties two labellings, the same stencil with its diagonal
// neighbours decides. Such ties are real: a strip and a 2x2 block per node
// of a periodic 4x4 over 4 nodes of 4 give isomorphic neighbour graphs, but
// the blocks also suit corner exchanges, which many programs make too.
class Chooser {
 public:
  Chooser(const Costs& costs, const Grid& grid, const ObjectiveSpec& spec)
      : costs_(costs), grid_(grid), spec_(spec) {
    if (spec.is_stencil() && !spec.stencil && !spec.pattern.stencil.diagonals &&
        spec.pattern.stencil.points != static_cast<int>(std::pow(3, grid.ndims()))) {
      ObjectiveSpec wide = spec;
      wide.pattern.stencil.diagonals = true;
      wide.pattern.stencil.points = 0;
      wide_ = std::move(wide);
    }
  }
  ObjectiveValue value(const Labelling& l) const { return evaluate(costs_, grid_, l, spec_).value; }
  /// True if a (value va) is better than b (value vb).
  bool better(const Labelling& a, const ObjectiveValue& va, const Labelling& b,
              const ObjectiveValue& vb) const {
    if (improves(va, vb)) return true;
    if (improves(vb, va) || !wide_) return false;
    return improves(evaluate(costs_, grid_, a, *wide_).value,
                    evaluate(costs_, grid_, b, *wide_).value);
  }

 private:
  const Costs& costs_;
  const Grid& grid_;
  const ObjectiveSpec& spec_;
  std::optional<ObjectiveSpec> wide_;
};

const std::vector<int>& require_nodes(const RelabelOptions& o, const std::string& algorithm) {
  if (o.levels.empty()) {
    throw std::invalid_argument(algorithm +
                                " needs node membership: give structured costs (or a placement "
                                "file to the relabel command)");
  }
  return o.levels[0];
}

Labelling round_robin(const Costs& costs, const RelabelOptions& o) {
  const std::vector<std::vector<int>> nodes = node_members(costs, require_nodes(o, "round-robin"));
  std::vector<int> perm;
  for (std::size_t t = 0; perm.size() < static_cast<std::size_t>(costs.size()); ++t) {
    for (const auto& members : nodes) {
      if (t < members.size()) perm.push_back(members[t]);
    }
  }
  return from_ints(perm);
}

// Box shapes node-aware evaluates in full for a stencil.
constexpr std::size_t kStencilBoxes = 8;
// node_aware() on fibres evaluates every box shape up to this many ranks x
// shapes (each evaluation is O(p): 0.4 s at a million ranks, where 64-rank
// nodes in 128x128x64 fit 28 shapes), else this many over p, best by
// rank_box_shapes() first.
constexpr double kNodeAwareRankEvaluations = 1 << 22;

// The mean cost between the first members of two groups, over at most
// kCostSampleGroups groups spread evenly (all of them on 1,024 nodes or
// fewer, O(1) on a million ranks).
constexpr std::size_t kCostSampleGroups = 1024;
double mean_cost_between(const Costs& costs, const std::vector<std::vector<int>>& groups) {
  const std::size_t step = (groups.size() + kCostSampleGroups - 1) / kCostSampleGroups;
  std::vector<int> firsts;
  for (std::size_t g = 0; g < groups.size(); g += step) firsts.push_back(groups[g][0]);
  return mean_cost_inside(costs, firsts);
}

// The weight of the messages an inner box of this shape sends out: per
// offset, the positions whose neighbour by it lies outside the box
// (opposite faces wrap into the box where it spans a periodic dimension).
double box_messages_out(const Stencil& stencil, const std::vector<int>& box) {
  double out = 0;
  for (int o = 0; o < stencil.offsets(); ++o) {
    double inside = 1;
    for (std::size_t k = 0; k < box.size(); ++k) {
      const int step = std::abs(stencil.delta(o)[k]);
      const bool wraps = stencil.periodic(static_cast<int>(k)) &&
                         box[k] == stencil.grid().dim(static_cast<int>(k));
      inside *= wraps ? box[k] : box[k] - step;
    }
    double all = 1;
    for (int b : box) all *= b;
    out += stencil.weight(o) * (all - inside);
  }
  return out;
}

// Every node fills a box of the grid (nodes in order, cores in row-major
// order inside the box); the box shape with the best objective wins (for a
// stencil, among the kStencilBoxes shapes that send the least out). Nodes
// of unequal size, or sizes no box fits, fall back to block order.
Labelling node_aware(const Costs& costs, const Grid& grid, const RelabelOptions& o,
                     const Deadline& deadline) {
  const std::vector<std::vector<int>> nodes = node_members(costs, require_nodes(o, "node-aware"));
  std::vector<int> block;
  for (const auto& m : nodes) block.insert(block.end(), m.begin(), m.end());
  Labelling best = from_ints(block);
  const std::size_t size = nodes[0].size();
  const bool equal =
      std::all_of(nodes.begin(), nodes.end(), [&](const auto& m) { return m.size() == size; });
  if (!equal || nodes.size() < 2) return best;
  const Chooser chooser(costs, grid, o.objective);
  ObjectiveValue best_value = chooser.value(best);
  std::vector<std::vector<int>> boxes = box_shapes(static_cast<int>(size), grid);
  if (o.objective.is_stencil() && boxes.size() > kStencilBoxes) {
    // Only the boxes whose messages out are fewest are worth evaluating in
    // full (each evaluation is O(p); 128-rank nodes fit dozens of shapes).
    const std::shared_ptr<const Stencil> stencil = o.objective.stencil_on(grid);
    std::vector<std::pair<double, std::size_t>> ranked;
    for (std::size_t i = 0; i < boxes.size(); ++i) {
      ranked.emplace_back(box_messages_out(*stencil, boxes[i]), i);
    }
    std::stable_sort(ranked.begin(), ranked.end());
    std::vector<std::vector<int>> kept;
    for (std::size_t i = 0; i < kStencilBoxes; ++i) kept.push_back(boxes[ranked[i].second]);
    boxes = std::move(kept);
  } else if (!o.objective.is_stencil() &&
             static_cast<double>(grid.size()) * static_cast<double>(boxes.size()) >
                 kNodeAwareRankEvaluations) {
    // Fibres on a huge grid: the shapes best by box_estimate's rough cost.
    boxes = rank_box_shapes(std::move(boxes), grid, o.objective, mean_cost_inside(costs, nodes[0]),
                            mean_cost_between(costs, nodes));
    boxes.resize(std::max<std::size_t>(
        1, static_cast<std::size_t>(kNodeAwareRankEvaluations / grid.size())));
  }
  const Labelling in_order = Labelling::identity(static_cast<int>(size));
  const std::vector<Labelling> inner(nodes.size(), in_order);
  for (const auto& box : boxes) {
    // Each shape is a full evaluation (1 s at a million ranks): the time
    // limit ends the list.
    if (deadline.passed()) break;
    Labelling l =
        compose(grid, box, Labelling::identity(static_cast<int>(nodes.size())), nodes, inner);
    const ObjectiveValue v = chooser.value(l);
    if (chooser.better(l, v, best, best_value)) {
      best = std::move(l);
      best_value = v;
    }
  }
  return best;
}

// Top-down KL: split the ranks into q0 equal slabs with the cheapest
// insides, then every slab into q1, ...; the last split yields the fibres of
// the last dimension.
void kl_split(const Costs& costs, const Grid& grid, int k, std::vector<int> ranks, int first,
              std::vector<int>& perm, const Deadline& deadline) {
  const int n = static_cast<int>(ranks.size());
  if (k == grid.ndims() || grid.dim(k) == 1 || n == 1) {
    if (k < grid.ndims() && grid.dim(k) == 1) {
      kl_split(costs, grid, k + 1, std::move(ranks), first, perm, deadline);
      return;
    }
    for (int i = 0; i < n; ++i) perm[first + i] = ranks[i];
    return;
  }
  const int parts = grid.dim(k);
  const int size = n / parts;
  std::vector<std::vector<int>> groups(parts);
  for (int i = 0; i < n; ++i) groups[i / size].push_back(ranks[i]);
  if (size > 1) refine_partition_kl(costs, groups, deadline);
  for (int j = 0; j < parts; ++j) {
    kl_split(costs, grid, k + 1, std::move(groups[j]), first + j * size, perm, deadline);
  }
}

Labelling kl_layout(const Costs& costs, const Grid& grid, const Deadline& deadline) {
  std::vector<int> ranks(grid.size()), perm(grid.size());
  std::iota(ranks.begin(), ranks.end(), 0);
  kl_split(costs, grid, 0, std::move(ranks), 0, perm, deadline);
  return from_ints(perm);
}

Neighbourhood hints_for(const Costs& costs, const RelabelOptions& o) {
  Neighbourhood h;
  if (!o.levels.empty()) {
    if (std::optional<Grouping> g = grouping_from_labels(o.levels[0])) {
      h.list_of = g->group_of;
      h.near = g->members;
      return h;
    }
  }
  if (costs.size() <= DenseCosts::kMaxRanks) {
    h.near = nearest_items(costs, 8);
    h.list_of.resize(costs.size());
    std::iota(h.list_of.begin(), h.list_of.end(), 0);
  }
  return h;
}

// The stencil bisect() cuts the grid for: the objective's, or for fibres
// the faces-only stencil (bisect is made for stencils; for fibres it gives
// compact boxes all the same).
std::shared_ptr<const Stencil> bisect_stencil(const Grid& grid, const ObjectiveSpec& spec) {
  if (spec.is_stencil()) return spec.stencil_on(grid);
  return std::make_shared<const Stencil>(StencilSpec{}, grid);
}

// The largest job auto runs multilevel search on for a stencil.
constexpr int kStencilMultilevelMax = 16384;
// auto's final hill-climbing for a stencil: candidates per rank at most.
constexpr std::int64_t kRefineEvaluationsPerRank = 5;

// Recursive bisection under every cut rule; the best by the objective.
Labelling best_bisection(const Costs& costs, const Grid& grid, const RelabelOptions& o) {
  const std::shared_ptr<const Stencil> stencil = bisect_stencil(grid, o.objective);
  const Chooser chooser(costs, grid, o.objective);
  Labelling best = bisect(costs, *stencil, o.levels, CutRule::kBusierPart);
  for (CutRule rule : {CutRule::kBothParts, CutRule::kBoxes}) {
    Labelling other = bisect(costs, *stencil, o.levels, rule);
    if (chooser.better(other, chooser.value(other), best, chooser.value(best)))
      best = std::move(other);
  }
  return best;
}

// Most ranks for which auto tries METIS's slabs for fibres: they took
// 0.03 s at 512 ranks, 0.39 s at 1,024 and 1.6 s at 2,048
// (bench/results/relabel_quality.md), and win on machines whose nodes do
// not fit the grid (1,000 ranks on 48-core nodes, 10x10x10: 972 against
// 1,053 for the machine's order; bench/results/irregular.md).
constexpr int kMetisCandidateRanks = 1024;

// The fibres as a traffic graph: every pair of ranks that share a fibre
// talks, with its dimension's weight. graph_map() then lays them out as
// VieM and Scotch would (communication times distance, along the
// machine's levels, top-down and bottom-up), and hill-climbing refines the
// better on the objective: on 100 ranks on nodes of 48, 48 and 4, 10x10,
// it finds 396 where the grid searches stop at 450
// (bench/results/irregular.md).
Labelling fibre_graph_layout(const Costs& costs, const Grid& grid, const RelabelOptions& o,
                             std::uint64_t seed, const Deadline& deadline, SplitMix64& rng,
                             SearchStats& stats) {
  const int p = grid.size();
  std::vector<WeightedEdge> edges;
  int stride = p;
  for (int k = 0; k < grid.ndims(); ++k) {
    const int d = grid.dims()[static_cast<std::size_t>(k)];
    stride /= d;  // row-major: dimension k moves by stride
    for (int x = 0; x < p; ++x) {
      const int c = (x / stride) % d;
      for (int c2 = c + 1; c2 < d; ++c2) {
        edges.push_back({x, x + (c2 - c) * stride, o.objective.weight(k)});
      }
    }
  }
  const TrafficGraph graph(p, std::move(edges));
  const Chooser chooser(costs, grid, o.objective);
  ObjectiveSpec total_spec = o.objective.pairs_only();
  total_spec.aggregate = Aggregate::kSumOfAllFibres;
  std::optional<Labelling> best;
  for (const bool bottom_up : {false, true}) {
    GraphMapOptions options;
    options.seed = seed;
    options.bottom_up = bottom_up;
    // Refined on the total first, as the mapping was made, then on the
    // objective.
    IncrementalObjective gather(costs, grid, graph_map(costs, graph, o.levels, options, deadline),
                                total_spec);
    const SearchStats gathered = hill_climb(gather, deadline, rng, hints_for(costs, o));
    IncrementalObjective state(costs, grid, gather.labelling(), o.objective);
    const SearchStats refined = hill_climb(state, deadline, rng, hints_for(costs, o));
    stats.evaluations += gathered.evaluations + refined.evaluations;
    stats.moves += gathered.moves + refined.moves;
    if (!best || chooser.better(state.labelling(), chooser.value(state.labelling()), *best,
                                chooser.value(*best))) {
      best = state.labelling();
    }
  }
  return std::move(*best);
}

// auto's restarts for fibres end after this many rounds in a row that
// found nothing better.
constexpr int kQuietRounds = 2;
// Most ranks for which auto lays the fibres out as a traffic graph and
// restarts: on the irregular suite (bench/results/irregular.md) they found
// better labellings at 63 to 180 ranks, and nothing at 221 to 2,000 ranks,
// where they took 1 to 10 s while a program calling relabel_comm() waits.
constexpr int kRestartRanks = 256;

// make(s) for every s < n, on up to `threads` threads (this one among
// them), each s taken up when a thread is free; the results in order of s.
// The first exception is rethrown once all threads are done.
template <class Make>
auto run_at_once(int n, int threads, Make make) {
  std::vector<decltype(make(0))> out(static_cast<std::size_t>(n));
  std::atomic<int> next{0};
  std::mutex failed;
  std::exception_ptr error;
  const auto work = [&] {
    for (int s; (s = next++) < n;) {
      try {
        out[static_cast<std::size_t>(s)] = make(s);
      } catch (...) {
        const std::lock_guard<std::mutex> lock(failed);
        if (!error) error = std::current_exception();
      }
    }
  };
  std::vector<std::thread> helpers;
  for (int t = 1; t < std::min(threads, n); ++t) helpers.emplace_back(work);
  work();
  for (std::thread& t : helpers) t.join();
  if (error) std::rethrow_exception(error);
  return out;
}

// Auto's independent candidates, job(s, stats, say) for every s < n, on up
// to o.threads threads or across relabel_comm()'s ranks (o.share), each
// with its own statistics (added to stats), progress lines one at a time.
// A job taken up past the deadline, or after one that `ends` the search,
// is skipped (empty), as a single thread going in order would; the caller
// weighs the others in order, so a seed gives one answer either way.
using Job = std::function<Labelling(int s, SearchStats& stats,
                                    const std::function<void(const std::string&)>& say)>;
std::vector<std::optional<RelabelOptions::Found>> run_wave(
    const RelabelOptions& o, int n, const Deadline& deadline, SearchStats& stats,
    const std::function<void(const std::string&)>& say,
    const std::function<bool(const Labelling&)>& ends, const Job& job) {
  std::vector<SearchStats> each(static_cast<std::size_t>(n));
  std::mutex saying;
  const std::function<void(const std::string&)> say_one = [&](const std::string& line) {
    const std::lock_guard<std::mutex> lock(saying);
    say(line);
  };
  std::atomic<bool> ended{false}, skipped{false};
  const std::function<std::optional<RelabelOptions::Found>(int)> make =
      [&](int s) -> std::optional<RelabelOptions::Found> {
    if (s > 0 && (ended || deadline.passed())) {
      skipped = skipped || !ended;
      return std::nullopt;
    }
    const double started = deadline.elapsed();
    RelabelOptions::Found found{job(s, each[static_cast<std::size_t>(s)], say_one), 0};
    found.seconds = deadline.elapsed() - started;
    if (ends && ends(found.labelling)) ended = true;
    return found;
  };
  std::vector<std::optional<RelabelOptions::Found>> out =
      o.share ? o.share(n, make) : run_at_once(n, o.threads, make);
  if (out.size() != static_cast<std::size_t>(n)) {
    throw std::logic_error("RelabelOptions::share returned " + std::to_string(out.size()) +
                           " results for " + std::to_string(n) + " candidates");
  }
  for (const SearchStats& e : each) {
    stats.evaluations += e.evaluations;
    stats.moves += e.moves;
    stats.time_limited |= e.time_limited;
  }
  if (skipped) stats.time_limited = true;
  return out;
}

// Multilevel start s: from seed o.seed + s * golden.
Labelling multilevel_start(const Costs& costs, const Grid& grid, const RelabelOptions& o, int s,
                           const Deadline& deadline, SearchStats& stats,
                           const std::function<void(const std::string&)>& say) {
  SplitMix64 start_rng(o.seed + 0x9e3779b97f4a7c15ULL * static_cast<std::uint64_t>(s));
  return multilevel(costs, grid, o.objective, o.levels, deadline, start_rng, stats, say);
}

// What an auto run tries, for RelabelResult::candidates and the progress
// lines: each candidate's seconds (from the end of the one before) and
// objective.
class CandidateLog {
 public:
  CandidateLog(const Deadline& clock, std::vector<CandidateRun>& out,
               std::function<void(const std::string&)> say)
      : clock_(clock), out_(out), say_(std::move(say)), since_(clock.elapsed()) {}

  // A candidate, said with the best objective so far: one that just ended
  // (seconds < 0: since the one before), or one that ran for `seconds`
  // elsewhere (a thread, another rank).
  void add(const std::string& name, double objective, double best, double seconds = -1) {
    if (seconds < 0) seconds = clock_.elapsed() - since_;
    out_.push_back({name, seconds, objective, false});
    since_ = clock_.elapsed();
    char line[200];
    std::snprintf(line, sizeof line, "%s: objective %.6g in %.2f s (best so far %.6g)",
                  name.c_str(), objective, out_.back().seconds, best);
    say_(line);
  }
  // Marks the last candidate of that name as the one chosen.
  void chose(const std::string& name) {
    for (auto it = out_.rbegin(); it != out_.rend(); ++it) {
      if (it->name == name) {
        it->chosen = true;
        return;
      }
    }
  }

 private:
  const Deadline& clock_;
  std::vector<CandidateRun>& out_;
  std::function<void(const std::string&)> say_;
  double since_;
};

// auto for stencils: the job's own order, recursive bisection, node-aware
// boxes, the machine's order and multilevel starts, the best of them
// refined by hill-climbing.
Labelling auto_stencil(const Costs& costs, const Grid& grid, const RelabelOptions& o,
                       const Deadline& deadline, SplitMix64& rng, SearchStats& stats,
                       const std::function<void(const std::string&)>& say, CandidateLog& log,
                       std::string& name) {
  const int p = grid.size();
  const Chooser chooser(costs, grid, o.objective);
  Labelling best = Labelling::identity(p);
  ObjectiveValue best_value = chooser.value(best);
  std::string from = "identity";
  // seconds: as CandidateLog::add() takes them.
  const auto consider = [&](Labelling l, const std::string& what, double seconds = -1) {
    const ObjectiveValue v = chooser.value(l);
    if (chooser.better(l, v, best, best_value)) {
      best = std::move(l);
      best_value = v;
      from = what;
    }
    log.add(what, v.primary, best_value.primary, seconds);
  };
  consider(bisect(costs, *o.objective.stencil_on(grid), o.levels, CutRule::kBusierPart),
           "bisect (busier part)");
  consider(bisect(costs, *o.objective.stencil_on(grid), o.levels, CutRule::kBothParts),
           "bisect (both parts)");
  consider(bisect(costs, *o.objective.stencil_on(grid), o.levels, CutRule::kBoxes),
           "bisect (boxes)");
  if (!o.levels.empty()) consider(node_aware(costs, grid, o, deadline), "node-aware");
  if (std::optional<Labelling> machine = machine_order(costs, o.levels)) {
    consider(std::move(*machine), "machine order");
  }
  // Multilevel starts up to kStencilMultilevelMax ranks: above, bisection
  // and node boxes give the layouts it would (and it costs most).
  const int starts = p <= 1024 ? 2 : p <= kStencilMultilevelMax ? 1 : 0;
  int done = 0;
  const Job start = [&](int s, SearchStats& st, const auto& say_one) {
    return multilevel_start(costs, grid, o, s, deadline, st, say_one);
  };
  for (auto& l : run_wave(o, deadline.passed() ? 0 : starts, deadline, stats, say, {}, start)) {
    if (!l) continue;
    ++done;
    consider(std::move(l->labelling),
             "multilevel start " + std::to_string(done) + "/" + std::to_string(starts), l->seconds);
  }
  if (done < starts) stats.time_limited = true;
  // The constructions leave little to local search on large grids: a
  // budget of kRefineEvaluationsPerRank candidates per rank.
  IncrementalObjective state(costs, grid, std::move(best), o.objective);
  const SearchStats refined = hill_climb(state, deadline, rng, hints_for(costs, o), 0,
                                         kRefineEvaluationsPerRank * static_cast<std::int64_t>(p));
  stats.evaluations += refined.evaluations;
  stats.moves += refined.moves;
  stats.time_limited |= refined.time_limited;
  log.chose(from);
  log.add("refinement", state.value().primary, state.value().primary);
  name = "auto(best of bisect, node-aware, machine order and " + std::to_string(done) +
         " multilevel start" + (done == 1 ? "" : "s") + ": " + from + ", refined)";
  if (starts == 0) {
    name = "auto(best of bisect, node-aware and machine order: " + from + ", refined)";
  }
  return state.labelling();
}

// A traffic graph's hill-climbing after graph_map(): candidates per rank at
// most (METIS does not see the costs inside a node; the climb does).
constexpr std::int64_t kGraphRefineEvaluationsPerRank = 20;
// Sweeps of boundary refinement after graph_map().
constexpr int kBoundaryPasses = 8;
// The least time map_graph()'s quick answer gets, whatever the budget.
constexpr double kQuickSeconds = 1.0;

// METIS calls per split in map_graph()'s fast start (k-way and recursive
// bisection, default balance): on irregular graphs most of a full start's
// gain in a third of its time.
constexpr int kFastMetisAttempts = 2;
// A full start's time over the fast one's (0.10 s and 0.05 s on a random
// geometric graph at 1,024 ranks on 8 racks of 8 nodes).
constexpr double kFullOverFast = 2;

// graph_map() top-down and bottom-up from `starts` seeds, the best refined
// along the nodes' boundaries and by hill-climbing. A quick answer comes
// first (the grouping alone, no METIS: milliseconds at 1,024 ranks), so
// that a short budget still gets one; then, while the budget lasts, a
// fast start (kFastMetisAttempts METIS calls per split) and the full
// starts. The quick answer wins only where it is strictly better than all
// of them.
Labelling map_graph(const Costs& costs, const RelabelOptions& o, int starts,
                    const Deadline& deadline, SplitMix64& rng, SearchStats& stats,
                    CandidateLog& log, std::string& from) {
  const TrafficGraph& graph = *o.objective.graph;
  const Grid line({costs.size()});
  const Chooser chooser(costs, line, o.objective);
  Labelling best = Labelling::identity(costs.size());
  ObjectiveValue best_value = chooser.value(best);
  from = "identity";
  GraphMapOptions quick_options;
  quick_options.seed = o.seed;
  quick_options.metis = false;
  // Even past the budget: at least kQuickSeconds for its swaps.
  const Deadline quick_deadline(std::max(deadline.remaining(), kQuickSeconds));
  Labelling quick = graph_map(costs, graph, o.levels, quick_options, quick_deadline);
  const ObjectiveValue quick_value = chooser.value(quick);
  log.add("grouping", quick_value.primary, std::min(quick_value.primary, best_value.primary));
  // A start that meets the deadline finishes its map unrefined (one METIS
  // call per split), overrunning the budget, so one begins only if the time
  // left is at least what the last took (the first full start: kFullOverFast
  // fast ones).
  double expected = 0;
  if (!deadline.passed()) {
    GraphMapOptions options;
    options.seed = o.seed;
    options.metis_attempts = kFastMetisAttempts;
    const double began = deadline.elapsed();
    Labelling l = graph_map(costs, graph, o.levels, options, deadline);
    expected = kFullOverFast * (deadline.elapsed() - began);
    const ObjectiveValue v = chooser.value(l);
    if (improves(v, best_value)) {
      best = std::move(l);
      best_value = v;
      from = "graph map (fast)";
    }
    log.add("graph map (fast)", v.primary, std::min(quick_value.primary, best_value.primary));
  }
  int done = 0;
  const auto fits = [&] { return !deadline.passed() && deadline.remaining() >= expected; };
  // On one level bottom-up maps as top-down does.
  const bool one_level = graph_map_depth(costs, o.levels) <= 1;
  for (int s = 0; s < starts && fits(); ++s, ++done) {
    for (const bool bottom_up : {false, true}) {
      if (bottom_up && one_level) break;
      if (!fits()) {
        stats.time_limited = true;  // this start's bottom-up half skipped
        break;
      }
      GraphMapOptions options;
      options.seed = o.seed + 0x9e3779b97f4a7c15ULL * static_cast<std::uint64_t>(s);
      options.bottom_up = bottom_up;
      const double began = deadline.elapsed();
      Labelling l = graph_map(costs, graph, o.levels, options, deadline);
      expected = deadline.elapsed() - began;
      const ObjectiveValue v = chooser.value(l);
      const std::string what = std::string("graph map ") + (bottom_up ? "bottom-up" : "top-down") +
                               " start " + std::to_string(s + 1) + "/" + std::to_string(starts);
      if (improves(v, best_value)) {
        best = std::move(l);
        best_value = v;
        from = what;
      }
      log.add(what, v.primary, std::min(quick_value.primary, best_value.primary));
    }
  }
  if (improves(quick_value, best_value)) {
    best = std::move(quick);
    best_value = quick_value;
    from = "grouping";
  }
  if (done < starts) stats.time_limited = true;
  IncrementalObjective state(costs, line, std::move(best), o.objective);
  // Boundaries between nodes first (the levels known, else those found in
  // the costs), then random hill-climbing.
  std::vector<int> node_of = o.levels.empty() ? std::vector<int>() : o.levels[0];
  if (node_of.empty() && o.objective.links && !o.objective.links->empty()) {
    node_of = o.objective.links->front().group_of;
  }
  if (!node_of.empty()) stats.moves += refine_boundaries(state, node_of, deadline, kBoundaryPasses);
  const SearchStats refined =
      hill_climb(state, deadline, rng, hints_for(costs, o), 0,
                 kGraphRefineEvaluationsPerRank * static_cast<std::int64_t>(costs.size()));
  stats.evaluations += refined.evaluations;
  stats.moves += refined.moves;
  stats.time_limited |= refined.time_limited;
  log.chose(from);
  log.add("refinement", state.value().primary, state.value().primary);
  return state.labelling();
}

// Checks that the algorithm and grid suit the graph pattern.
void check_graph(const Grid& grid, const std::string& algorithm) {
  if (grid.ndims() != 1) {
    throw std::invalid_argument("a traffic graph is relabelled on a 1-D grid of its ranks, not " +
                                grid.to_string());
  }
  for (const char* grid_only : {"node-aware", "kl", "bisect"}) {
    if (algorithm == grid_only) {
      throw std::invalid_argument(algorithm +
                                  " lays out a cartesian grid; for a traffic graph use auto, "
                                  "multilevel, metis, scotch, hill-climb, round-robin, random, "
                                  "identity or brute-force");
    }
  }
}

}  // namespace

RelabelResult relabel(const Costs& costs, const Grid& grid, const RelabelOptions& options) {
  if (!(options.time_limit >= 0)) throw std::invalid_argument("time limit must be >= 0 seconds");
  const Deadline deadline(options.time_limit);
  if (costs.size() != grid.size()) {
    throw std::invalid_argument("grid " + grid.to_string() + " has " + std::to_string(grid.size()) +
                                " positions but the costs cover " + std::to_string(costs.size()) +
                                " ranks");
  }
  const auto& names = relabel_algorithms();
  if (std::find(names.begin(), names.end(), options.algorithm) == names.end()) {
    std::string list;
    for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
    throw std::invalid_argument("unknown algorithm '" + options.algorithm + "': expected " + list);
  }
  RelabelOptions o = options;
  if (o.levels.empty()) {
    if (const auto* s = dynamic_cast<const StructuredCosts*>(&costs)) o.levels = machine_levels(*s);
  }
  for (const auto& level : o.levels) {
    if (static_cast<int>(level.size()) != costs.size()) {
      throw std::invalid_argument("a hierarchy level labels " + std::to_string(level.size()) +
                                  " ranks, expected " + std::to_string(costs.size()));
    }
  }
  // "+links": the link load counts the known nodes and racks, then the
  // levels found in the costs.
  o.objective = o.objective.with_links(costs, o.levels);
  const bool graph = o.objective.is_graph();
  if (graph) check_graph(grid, o.algorithm);
  const auto say = [&](const std::string& line) {
    if (o.progress) o.progress(line);
  };
  const int p = grid.size();
  SplitMix64 rng(o.seed);
  SearchStats stats;
  RelabelResult result{Labelling::identity(p), o.algorithm, 0, false, 0, {}, {}, 0, {}, {}};
  result.before = evaluate(costs, grid, result.labelling, o.objective);
  result.bound = objective_lower_bound(costs, grid, o.objective);
  CandidateLog log(deadline, result.candidates, say);

  const std::string& a = o.algorithm;
  if (a == "identity") {
  } else if (a == "random") {
    std::vector<int> perm(p);
    std::iota(perm.begin(), perm.end(), 0);
    shuffle(perm, rng);
    result.labelling = from_ints(perm);
  } else if (a == "round-robin") {
    result.labelling = round_robin(costs, o);
  } else if (a == "node-aware") {
    result.labelling = node_aware(costs, grid, o, deadline);
  } else if (a == "kl") {
    result.labelling = kl_layout(costs, grid, deadline);
  } else if (a == "metis" && graph) {
    GraphMapOptions plain;
    plain.seed = o.seed;
    plain.assign_parts = false;
    plain.group_bottom_up = false;
    plain.refine_splits = false;
    result.labelling = graph_map(costs, *o.objective.graph, o.levels, plain, deadline);
    result.algorithm = "metis(parts in machine order)";
  } else if (a == "metis") {
    result.labelling = metis_layout(costs, grid, o.seed, deadline);
  } else if (a == "scotch") {
    const std::shared_ptr<const Stencil> stencil =
        o.objective.is_stencil() ? o.objective.stencil_on(grid) : nullptr;
    if (std::optional<ScotchOutcome> s =
            scotch_map_within(costs, grid, o.seed, deadline.remaining(), &result.child_peak_bytes,
                              {stencil.get(), o.objective.graph.get()})) {
      result.labelling = std::move(s->labelling);
      result.algorithm = "scotch(" + s->target +
                         (s->repaired ? ", " + std::to_string(s->repaired) + " moved" : "") + ")";
    } else {
      result.algorithm = "scotch(stopped at the time limit: identity kept)";
      stats.time_limited = true;
    }
  } else if (a == "brute-force") {
    result.labelling = brute_force(costs, grid, o.objective);
  } else if (a == "bisect") {
    result.labelling = best_bisection(costs, grid, o);
  } else if (a == "hill-climb") {
    IncrementalObjective state(costs, grid, Labelling::identity(p), o.objective);
    stats = hill_climb(state, deadline, rng, hints_for(costs, o));
    result.labelling = state.labelling();
  } else if (a == "multilevel" && graph) {
    std::string from;
    result.labelling = map_graph(costs, o, 1, deadline, rng, stats, log, from);
    result.algorithm = "multilevel(graph map, refined)";
  } else if (a == "multilevel") {
    result.labelling = multilevel(costs, grid, o.objective, o.levels, deadline, rng, stats, say);
  } else if (a == "auto") {
    if (p <= 8) {
      result.labelling = brute_force(costs, grid, o.objective);
      result.algorithm = "auto(brute-force)";
    } else if (graph) {
      const int starts = p <= 4096 ? 4 : 1;
      std::string from;
      result.labelling = map_graph(costs, o, starts, deadline, rng, stats, log, from);
      result.algorithm = "auto(best of identity, grouping and " + std::to_string(starts) +
                         " graph map start" + (starts == 1 ? "" : "s") + ": " + from + ", refined)";
    } else if (o.objective.is_stencil()) {
      result.labelling =
          auto_stencil(costs, grid, o, deadline, rng, stats, say, log, result.algorithm);
    } else {
      Labelling best = result.labelling;
      ObjectiveValue best_value = result.before.value;
      std::string from = "identity";
      // Reaching the lower bound on the objective and on its tie-break
      // proves the best so far optimal: the other candidates are skipped.
      const auto optimal = [&] {
        return result.bound && reaches(best_value.primary, result.bound->primary) &&
               reaches(best_value.total, result.bound->total);
      };
      // seconds: as CandidateLog::add() takes them.
      const auto consider = [&](Labelling l, const std::string& name, double seconds = -1) {
        const ObjectiveValue v = evaluate(costs, grid, l, o.objective).value;
        if (improves(v, best_value)) {
          best = std::move(l);
          best_value = v;
          from = name;
        }
        log.add(name, v.primary, best_value.primary, seconds);
      };
      std::string tried;  // the candidates before multilevel, for the report
      const auto try_one = [&](auto make, const std::string& name) {
        if (optimal()) return;
        tried += name + ", ";
        consider(make(), name);
      };
      if (!o.levels.empty())
        try_one([&] { return node_aware(costs, grid, o, deadline); }, "node-aware");
      if (std::optional<Labelling> machine = machine_order(costs, o.levels)) {
        try_one([&] { return std::move(*machine); }, "machine order");
      }
      const int starts = p <= 1024 ? 4 : p < 4096 ? 2 : 1;
      const auto at_bound = [&](const Labelling& l) {
        if (!result.bound) return false;
        const ObjectiveValue v = evaluate(costs, grid, l, o.objective).value;
        return reaches(v.primary, result.bound->primary) && reaches(v.total, result.bound->total);
      };
      // The multilevel starts, then METIS's slabs, which win where the
      // levels do not fit the grid (180 ranks on 3 racks of 5 nodes of 12,
      // 12x15: 2,529 against 2,691 for the machine's order and 2,853 for
      // multilevel) but cost most (their KL refinement), then the fibres
      // as a traffic graph: one wave, run at once on threads or ranks.
      const bool with_metis = p <= kMetisCandidateRanks, with_graph = p <= kRestartRanks;
      const int wave = optimal() ? 0 : starts + (with_metis ? 1 : 0) + (with_graph ? 1 : 0);
      const Job job = [&](int s, SearchStats& st, const auto& say_one) {
        if (s < starts) return multilevel_start(costs, grid, o, s, deadline, st, say_one);
        if (with_metis && s == starts) return metis_layout(costs, grid, o.seed, deadline);
        return fibre_graph_layout(costs, grid, o, o.seed, deadline, rng, st);
      };
      int done = 0;
      std::string last;
      std::vector<std::optional<RelabelOptions::Found>> found =
          run_wave(o, wave, deadline, stats, say, at_bound, job);
      for (int s = 0; s < wave; ++s) {
        std::optional<RelabelOptions::Found>& l = found[static_cast<std::size_t>(s)];
        if (!l || optimal()) continue;
        std::string name = "fibre graph";
        if (s < starts) {
          name = "multilevel start " + std::to_string(++done) + "/" + std::to_string(starts);
        } else if (with_metis && s == starts) {
          name = "metis";
        }
        if (s >= starts) last += ", " + name;
        consider(std::move(l->labelling), name, l->seconds);
      }
      // Restarts while they pay: each round runs a fibre-graph layout and a
      // multilevel start with new seeds (63 ranks on nodes of 16, 7x9: 291
      // where the first seed gave 345), and keeps the better. They end at
      // the bound, at the deadline, or after kQuietRounds rounds in a row
      // without a better labelling (none above kRestartRanks), so a seed
      // gives one answer unless the budget runs out. Each round has its
      // own seed, so the rounds that may still be needed (kQuietRounds -
      // quiet) run in one wave and are weighed in order: no round runs
      // that one after another would not.
      int rounds = 0;
      int quiet = p <= kRestartRanks ? 0 : kQuietRounds;
      const Job restart = [&](int s, SearchStats& st, const auto& say_one) {
        SplitMix64 round_rng(o.seed +
                             0xbf58476d1ce4e5b9ULL * static_cast<std::uint64_t>(rounds + s + 1));
        Labelling laid =
            fibre_graph_layout(costs, grid, o, round_rng.next(), deadline, round_rng, st);
        if (deadline.passed() || at_bound(laid)) return laid;
        Labelling again =
            multilevel(costs, grid, o.objective, o.levels, deadline, round_rng, st, say_one);
        return improves(evaluate(costs, grid, again, o.objective).value,
                        evaluate(costs, grid, laid, o.objective).value)
                   ? again
                   : laid;
      };
      while (quiet < kQuietRounds && !deadline.passed() && !optimal()) {
        std::vector<std::optional<RelabelOptions::Found>> wave_of_rounds =
            run_wave(o, kQuietRounds - quiet, deadline, stats, say, at_bound, restart);
        for (auto& l : wave_of_rounds) {
          if (!l || optimal() || quiet >= kQuietRounds) break;
          const ObjectiveValue before = best_value;
          consider(std::move(l->labelling), "restart " + std::to_string(++rounds), l->seconds);
          quiet = improves(best_value, before) ? 0 : quiet + 1;
        }
      }
      if (quiet < kQuietRounds && !optimal()) stats.time_limited = true;
      log.chose(from);
      result.labelling = std::move(best);
      result.algorithm = "auto(best of " + tried + std::to_string(done) + " multilevel start" +
                         (done == 1 ? "" : "s") + last + ", " + std::to_string(rounds) +
                         " restart round" + (rounds == 1 ? "" : "s") + ": " + from +
                         (optimal() ? ", optimal: at the lower bound" : "") + ")";
    }
  }
  result.seconds = deadline.elapsed();
  // Some steps (Scotch, brute force, neighbour searches) cannot stop early:
  // any run that ends past its limit says so.
  result.time_limited = stats.time_limited || deadline.passed();
  result.evaluations = stats.evaluations;
  result.after = evaluate(costs, grid, result.labelling, o.objective);
  return result;
}

}  // namespace rankshape
