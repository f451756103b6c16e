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
#include <cstdint>
#include <utility>
#include <vector>

#include "lib/coll/config.h"

namespace rankshape::coll {

struct LinkCost {
  double alpha = 0;  // seconds per message
  double beta = 0;   // seconds per byte, one message at a time
  /// Seconds per byte when every member of every level communicator sends
  /// at once (links and switches shared); 0: the same as beta.
  double beta_loaded = 0;

  double loaded() const { return beta_loaded > beta ? beta_loaded : beta; }
  /// Seconds per byte with `senders` of a level's `members` sending at
  /// once: from beta (one) to loaded() (all), in proportion.
  double beta_with(double senders, double members) const {
    if (members <= 1 || senders <= 1) return beta;
    return beta + (loaded() - beta) * (std::min(senders, members) - 1) / (members - 1);
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
