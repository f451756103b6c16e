// Predicted time of a collective (Hockney model: a message of m bytes
// between members of a level j communicator costs alpha_j + m beta_j,
// combining m bytes costs m gamma) for each configuration, and the choice
// of the best one. Native is modelled as the best flat algorithm on the
// whole communicator: each step pays the link it crosses when groups are
// contiguous blocks of ranks, the top level's link otherwise.
// Background: ../shared/notes/algorithms.md §3.
#ifndef RANKSHAPE_LIB_COLL_MODEL_H_
#define RANKSHAPE_LIB_COLL_MODEL_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "lib/coll/config.h"

namespace rankshape::coll {

/// Messages of this many bytes or more pay LinkCost::alpha_large: where MPI
/// libraries leave their eager protocol (a rendezvous adds a round trip),
/// and SimGrid's default factors multiply the latency by 11.6.
inline constexpr double kLargeMessageBytes = 65536;

struct LinkCost {
  double alpha = 0;  // seconds per message
  double beta = 0;   // seconds per byte, one message at a time
  /// Seconds per byte when every member of every level communicator sends
  /// at once (links and switches shared); 0: the same as beta.
  double beta_loaded = 0;
  /// Seconds per message of kLargeMessageBytes or more; 0: the same as
  /// alpha. Fitting one alpha and one beta to a small and a large message
  /// would put this jump into beta, and price a 1 MiB message twice its
  /// time (SimGrid's default network: 1.59 ns/B fitted, 0.85 real).
  double alpha_large = 0;

  double loaded() const { return beta_loaded > beta ? beta_loaded : beta; }
  double alpha_at(double bytes) const {
    return bytes >= kLargeMessageBytes && alpha_large > alpha ? alpha_large : alpha;
  }
  /// Seconds per byte with `senders` of a level's `members` sending at
  /// once. What slows a loaded link is capacity they share (a backbone, a
  /// node's link): all members get loaded() each, so `senders` of them get
  /// loaded() * senders / members each, but never more than one alone.
  double beta_with(double senders, double members) const {
    if (members <= 1 || senders <= 1) return beta;
    return std::max(beta, loaded() * std::min(senders, members) / members);
  }
};

struct Model {
  /// Per level, finest first, top last: members of the largest level j
  /// communicator, and the cost of a message between them.
  std::vector<int> sizes;
  std::vector<LinkCost> links;
  double gamma = 0;  // seconds per byte combined
  int ranks = 0;
  /// Groups are contiguous, increasing blocks of ranks.
  bool contiguous = true;
  /// The MPI library runs the pipelined configurations (pipeline.h); not
  /// part of the tuning table.
  bool pipelines = true;

  int depth() const { return static_cast<int>(sizes.size()) - 1; }
};

/// Seconds for collective c with configuration config. bytes: the message
/// (bcast, reduce, allreduce), the block per rank (gather, scatter,
/// allgather, reduce_scatter_block) or per pair (alltoall); ignored for
/// barrier.
double predict(Collective c, const Config& config, const Model& model, std::int64_t bytes);

/// The hierarchical candidates (config.h) with their predicted seconds,
/// the least first (candidates' order among equals).
std::vector<std::pair<double, Config>> rank_hierarchical(Collective c, const Model& model,
                                                         std::int64_t bytes);

/// The hierarchical configurations a trial times (dispatch.h), from the
/// ranking above: its `best` first ones, then for each other algorithm at
/// the top level (not native: priced as the better of two classic ones, it
/// tells nothing apart) that no configuration before runs there, the best
/// one priced within `within` times the best. The model's errors are
/// largest between top-level algorithms (docs/collectives.md).
std::vector<Config> worth_trying(const std::vector<std::pair<double, Config>>& ranked, int depth,
                                 std::size_t best = 2, double within = 2.0);

struct Choice {
  Config config;
  double predicted = 0;         // seconds, for config
  double native_predicted = 0;  // seconds, for native
};

/// The candidate (config.h) with the least predicted time; native unless a
/// hierarchical one is predicted faster by more than `margin` (a fraction)
/// or hierarchical is forced.
Choice choose(Collective c, const Model& model, std::int64_t bytes, double margin = 0.05,
              bool force_hierarchical = false);

}  // namespace rankshape::coll

#endif  // RANKSHAPE_LIB_COLL_MODEL_H_
