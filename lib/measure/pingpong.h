// Pairwise ping-pong measurement over a communicator.
//
// Rounds pair the ranks; the lower rank of each pair times round trips for
// every message size (warm-up first). Descheduling only ever adds time, so
// each pair and size keeps the minimum over its repetitions and sweeps,
// not a median: a median still follows a pair whose partner loses its CPU
// in most repetitions, as happens when ranks outnumber cores. The fit
// t = l + g * bytes comes from those minima; the smallest size's is the
// startup latency.
//
// Pacing: on a quiet machine every rank measures at once (the randomised
// perfect pairings of schedule.h, q = 2^ceil(log2 p) rounds per sweep).
// When a host has more ranks than CPUs (host_load.h), at most as many
// ranks as it has CPUs measure at once (capped_rounds), each pair in three
// rounds at different times, and the others sleep instead of busy-polling
// (quiet_wait, quiet_barrier).
//
// Consistency: rank 0 checks every size's times (consistency.h); pairs
// that break the structure, and pairs inside a node dearer than some pair
// across, are measured again with twice the repetitions, up to `retries`
// times (0.25 s, 0.5 s, 1 s, ... later), keeping the minimum, beside
// reference pairs that tell whether the host as a whole is slow then
// (rescale.h: such a pair keeps its time divided by the slowdown). Pairs still
// suspect after that, and a measurement whose inside-node pairs are not
// cheaper than its across-node ones, are reported
// (PingPongResult::consistent()).
#ifndef RANKSHAPE_LIB_MEASURE_PINGPONG_H_
#define RANKSHAPE_LIB_MEASURE_PINGPONG_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "lib/model/costs.h"
#include "lib/mpi/communicator.h"

namespace rankshape {

/// How many ranks measure at once.
enum class Pacing {
  kAuto,      // kAllPairs, or kCapped when a host has more ranks than CPUs
  kAllPairs,  // every rank in every round (perfect pairings)
  kCapped,    // at most a host's CPUs (kAuto), or two measuring ranks per host (forced)
};

/// "auto", "all", "capped"; throws std::invalid_argument otherwise.
Pacing parse_pacing(const std::string& name);

struct PingPongOptions {
  /// Message sizes in bytes; at least two different ones; the first is used
  /// for the startup latency.
  std::vector<std::size_t> sizes = {8, 4096, 65536, 262144};
  int repetitions = 10;
  int warmup = 2;
  /// Full sweeps, each with its own schedule; the minimum per pair is kept.
  int sweeps = 1;
  Pacing pacing = Pacing::kAuto;
  /// Passes that measure suspect pairs again (consistency.h); 0: none.
  /// Five wait 7.75 s in all: most slow phases of a host end by then
  /// (rescale.h: 9 of 10 seen on CI's machine lasted under 7 s).
  int retries = 5;
  /// Node of every rank of the communicator (e.g. JobLayout::node_of), for
  /// the check that pairs inside a node are the cheaper; empty: no check.
  std::vector<int> node_of;
  std::uint64_t seed = 1;  // schedule alpha, beta (the same on every rank)
  /// Seconds one step may wait for a partner before the run ends; <= 0 off.
  double stall_seconds = 60;
  /// false: only rank 0 gets the matrices (the others get p and seconds),
  /// which saves p^2 memory per rank, e.g. for 1,024 simulated nodes.
  bool result_on_every_rank = true;
  /// Fault injection for tests: called on both sides of every round trip,
  /// between a rank's send and receive (initiator) or receive and send
  /// (responder), so a delay here lengthens that round trip as a slow rank
  /// or a noisy link would.
  struct Step {
    int sweep = 0, round = 0, partner = 0, repetition = 0;  // repetition counts warm-up
  };
  std::function<void(const Step&)> inject;
  /// Rank 0 hears progress lines (rounds done, time left).
  std::function<void(const std::string&)> progress;
};

/// What was measured, as p x p row-major matrices (symmetric, zero
/// diagonal), in seconds and seconds per byte.
struct PingPongResult {
  int p = 0;
  std::vector<double> startup;            // one-way time of the smallest message
  std::vector<double> latency;            // l of the fit
  std::vector<double> inverse_bandwidth;  // g of the fit
  double worst_r_squared = 1;             // over all pairs
  double mean_r_squared = 1;
  double seconds = 0;  // MPI_Wtime (simulated under SMPI)
  // On every rank:
  std::string host_load;  // e.g. "1 host: 8 ranks on 2 CPUs"
  bool oversubscribed = false;
  std::string pacing;  // what was done, e.g. "capped: ..."
  int rounds = 0;      // measuring rounds, re-measurements included
  int suspects = 0;    // pairs the first check found
  int remeasured = 0;  // pair measurements repeated, over all passes
  /// Pairs measured again that keep a time rescaled by their references'
  /// slowdown (rescale.h), over all passes; rank 0 only.
  int rescaled = 0;
  /// Pairs (a < b) still breaking the structure after the last pass.
  std::vector<std::pair<int, int>> inconsistent;
  /// Pairs inside a node were not cheaper than pairs across, in the median.
  bool inverted = false;
  bool consistent() const { return inconsistent.empty() && !inverted; }
  /// One line for people, e.g. "1 of 28 pairs break the structure after
  /// being measured again (2-5)"; empty when consistent.
  std::string warning() const;
};

/// Throws std::invalid_argument for options measure_pingpong() refuses.
void check_pingpong_options(const PingPongOptions& options);

/// Collective over comm. Throws std::invalid_argument for bad options (the
/// same on every rank, so no rank is left waiting).
PingPongResult measure_pingpong(const mpi::Communicator& comm, const PingPongOptions& options);

enum class Metric {
  kStartup,           // "latency": one-way time of the smallest message
  kInverseBandwidth,  // "inverse-bandwidth": seconds per byte
  kMessageTime,       // "time": l + g * m for m-byte messages
};

/// Parses "latency", "inverse-bandwidth" or "time".
Metric parse_metric(const std::string& name);
std::string metric_name(Metric metric);

/// The row-major p x p matrix of one metric, negatives clamped to 0.
std::vector<double> metric_matrix(const PingPongResult& result, Metric metric,
                                  double message_bytes);

/// The matrix of one metric as costs. Negative fitted values (noise on tiny
/// differences) are clamped to 0.
DenseCosts costs_from(const PingPongResult& result, Metric metric, double message_bytes);

}  // namespace rankshape

#endif  // RANKSHAPE_LIB_MEASURE_PINGPONG_H_
