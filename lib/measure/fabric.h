// Fabrics narrower than the links into them: an oversubscribed backbone
// between the nodes of a rack (or between racks), which ping-pong pairs
// timed a few at a time never fill.
//
// For one level of the machine (nodes), one representative per group (its
// lowest rank) exchanges a large message with the representative of
// another group of the same parent (a rack; the whole job when there is
// none): the i-th group of a parent with G groups pairs with the
// (i + G/2)-th, so that the flows cross the parent's middle, as in a
// bisection test. Two timings, each the least over repetitions:
//  - alone: one message, from one representative to its partner, while the
//    others wait (the links' speed: one way, so that a fabric whose two
//    directions share it shows too);
//  - together: every pair of every parent exchanges at once, both ways
//    (the slowest pair).
// With F messages in flight in the busiest parent, the fabric passes them in
// `together`; alone one message takes `alone`. Where together / alone (the
// slowdown) reaches kMinFabricSlowdown, a message through the fabric costs
// slowdown / F of one message alone: LinkLevel::fabric_cost is that ratio
// times the level's flow cost.
//
// Worked example (SMPI's lvl2-node64-core16: 10 Gb/s per node into one
// 160 Gb/s backbone): 32 pairs of nodes, 64 messages of 1 MiB in flight,
// each gets 2.5 Gb/s instead of 10: slowdown about 4, ratio 4 / 64 = 1/16,
// the backbone's width in node links.
#ifndef RANKSHAPE_LIB_MEASURE_FABRIC_H_
#define RANKSHAPE_LIB_MEASURE_FABRIC_H_

#include <vector>

#include "lib/mpi/communicator.h"

namespace rankshape {

/// Smallest slowdown read as a fabric narrower than the links: below it the
/// flows barely slow each other (a fabric as wide as its links, or noise),
/// and the level's busiest group bounds its traffic alone.
constexpr double kMinFabricSlowdown = 1.5;

struct FabricOptions {
  double bytes = 1 << 20;  // per message: large enough to be bandwidth-bound
  int warmup = 1;
  int repetitions = 5;
};

/// One level's fabric, as measured.
struct FabricMeasurement {
  int groups = 0;
  int flows = 0;        // messages at once in the parent with the most pairs (2 per pair)
  double alone = 0;     // seconds: one message, the others waiting
  double together = 0;  // seconds: every pair exchanging at once, the slowest pair
  double slowdown = 0;  // together / alone (0: nothing timed)
  double ratio = 0;     // slowdown / flows from kMinFabricSlowdown on, else 0
};

/// Who exchanges with whom (group_of[r]: the group of rank r;
/// parent_of_rank[r]: its group of the level above, empty for the whole job
/// as one parent): partner[r] is the rank r exchanges with, -1 for none.
/// Pure.
struct FabricPairs {
  std::vector<int> partner;
  int alone_a = -1, alone_b = -1;  // the message timed alone goes from a to b (-1: none)
  int flows = 0;
};
FabricPairs fabric_pairs(const std::vector<int>& group_of, const std::vector<int>& parent_of_rank);

/// Collective over comm; every rank passes the same groups and parents
/// (one entry per rank of comm each; parents empty: the whole job). With
/// no two groups in one parent nothing is timed (slowdown and ratio 0).
/// Throws std::invalid_argument for groups or parents of the wrong size or
/// bad options, mpi::MpiError when MPI fails.
FabricMeasurement measure_fabric(const mpi::Communicator& comm, const std::vector<int>& group_of,
                                 const std::vector<int>& parent_of_rank,
                                 const FabricOptions& options = {});

}  // namespace rankshape

#endif  // RANKSHAPE_LIB_MEASURE_FABRIC_H_
