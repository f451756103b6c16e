// The relabelling engine's entry point: one interface over every algorithm.
//
// Algorithms (relabel_algorithms() lists them):
//   identity      the job's own order
//   random        a seeded shuffle
//   round-robin   new ranks dealt across nodes in turn (needs nodes)
//   node-aware    every node fills a box of the grid, the box shape chosen by
//                 the objective (Gropp's nodecart idea; needs nodes)
//   kl            top-down multi-way Kernighan-Lin: slabs of dimension 0,
//                 then of dimension 1 inside each slab, ... (no refinement)
//   hill-climb    randomised triplet hill-climbing from the identity
//   multilevel    coarsen / solve / uncoarsen / refine (see multilevel.h)
//   metis         top-down like kl, with METIS k-way splits (metis_split.h)
//   scotch        Scotch's static mapping, a peer (scotch_map.h)
//   brute-force   exhaustive, p <= 9
//   bisect        recursive bisection of the grid along the machine's tree
//                 (bisect.h): compact regions per rack, node and socket,
//                 also where their sizes do not divide the grid; made for
//                 stencils
//   auto          brute force for p <= 8; otherwise, for fibres, the best
//                 of node-aware, the machine's order, multilevel runs from
//                 several seeds (4 up to 1,024 ranks, 2 below 4,096, then
//                 1), METIS's slabs (up to 1,024 ranks) and, up to 256
//                 ranks, the fibres laid out as a traffic graph
//                 (graph_map.h) with restarts from new seeds until two
//                 rounds in a row find nothing better; for a stencil,
//                 the best of bisect, node-aware, the machine's order and
//                 multilevel (2 starts up to 1,024 ranks, 1 up to 16,384,
//                 then none), refined by hill-climbing. The machine's
//                 order: a structured file's nodes in order, or the known
//                 levels' groups (a placement's hosts)
// For a traffic graph (the graph pattern, on a 1-D grid of its ranks): auto
// (brute force for p <= 8, else the best of a quick grouping without METIS,
// which even a zero budget gets, then while the budget lasts a fast
// graph_map() (2 METIS calls per split) and full ones top-down and
// bottom-up (top-down alone on one level) from 4 seeds up to 4,096 ranks,
// 1 above, each begun only if the time left fits it; refined) and
// multilevel (one seed) map it with graph_map.h; metis keeps METIS's parts
// in machine order; scotch maps the graph; kl, node-aware and bisect lay
// out grids and are refused.
// Every grid algorithm works on any grid pattern (RelabelOptions::objective.pattern):
// they all keep the labelling the objective judges best. Among labellings
// a stencil ties, auto and node-aware take the one that is best for the
// same stencil with its diagonal neighbours.
// Nodes come from a structured cost file or from RelabelOptions::levels.
// Results are deterministic for a given seed unless the time limit cut the
// search short (RelabelResult::time_limited says so).
#ifndef RANKSHAPE_LIB_RELABEL_RELABEL_H_
#define RANKSHAPE_LIB_RELABEL_RELABEL_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "lib/model/bounds.h"
#include "lib/model/objective.h"

namespace rankshape {

struct RelabelOptions {
  std::string algorithm = "auto";
  std::uint64_t seed = 1;
  /// Wall-clock budget in seconds; the best labelling so far is returned
  /// when it runs out.
  double time_limit = 10;
  ObjectiveSpec objective;
  /// Known hierarchy, finest first: levels[j][r] = group of old rank r at
  /// level j (node, rack, ...). Empty: taken from structured costs.
  std::vector<std::vector<int>> levels;
  /// Receives short progress lines (may be empty; called from one thread
  /// at a time).
  std::function<void(const std::string&)> progress;
  /// Threads auto may use: its independent candidates (see share) run at
  /// once. They are weighed in order afterwards, so a seed gives the
  /// same labelling for any count unless the time limit cuts the search
  /// short.
  int threads = 1;
  /// One independent candidate's labelling and the seconds it took.
  struct Found {
    Labelling labelling;
    double seconds = 0;
  };
  /// Where auto's independent candidates run (its multilevel starts, and
  /// for fibres METIS's slabs and the fibre graph with them, then its
  /// restart rounds): given their count n and make(s) (candidate s, or
  /// none when skipped), returns all n results in order. Empty: on
  /// `threads` threads. relabel_comm() splits them across its ranks
  /// (share_across() in lib/shape/shape.h); the results are weighed in
  /// order either way, so a seed gives the same labelling.
  using Share = std::function<std::vector<std::optional<Found>>(
      int n, const std::function<std::optional<Found>(int)>& make)>;
  Share share;
};

/// One candidate an auto run tried.
struct CandidateRun {
  std::string name;
  double seconds = 0;  // from the end of the one before
  double objective = 0;
  bool chosen = false;  // the one the result comes from (before refinement)
};

struct RelabelResult {
  Labelling labelling;
  std::string algorithm;  // as run, e.g. "auto(multilevel x4)"
  double seconds = 0;
  bool time_limited = false;
  std::int64_t evaluations = 0;  // incremental move evaluations
  Evaluation before;             // identity
  Evaluation after;
  /// Peak resident memory of the child process the run used (Scotch runs
  /// in one, so that its time limit holds), pages shared with this process
  /// included; 0 when there was none.
  std::size_t child_peak_bytes = 0;
  /// Lower bounds on the objective for this grid and machine, whatever the
  /// labelling (lib/model/bounds.h): fibres with pair costs, and stencils.
  std::optional<LowerBound> bound;
  /// What auto (and multilevel on a traffic graph) tried, in order, for
  /// how long, and what won; empty for the other algorithms.
  std::vector<CandidateRun> candidates;
};

/// Names accepted in RelabelOptions::algorithm.
const std::vector<std::string>& relabel_algorithms();

/// Finds a labelling of grid over costs. Throws std::invalid_argument for
/// an unknown algorithm, a size mismatch, a negative time limit, or an
/// algorithm that needs nodes when none are known.
RelabelResult relabel(const Costs& costs, const Grid& grid, const RelabelOptions& options);

/// The hierarchy a structured machine implies: node of every rank, then
/// rack of every rank when there is more than one rack.
std::vector<std::vector<int>> machine_levels(const StructuredCosts& costs);

}  // namespace rankshape

#endif  // RANKSHAPE_LIB_RELABEL_RELABEL_H_
