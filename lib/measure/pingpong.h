// Pairwise ping-pong measurement over a communicator.
//
// Every round of the partner schedule (schedule.h) pairs the ranks; the
// lower rank of each pair times round trips for every message size
// (warm-up first), keeps the median one-way time per size after dropping
// stragglers, and fits t = l + g * bytes by least squares. The smallest
// size's median is the startup latency. One sweep takes q = 2^ceil(log2 p)
// rounds; with several sweeps the per-pair median across sweeps is kept.
// Each rank then contributes its own row (4p values) to the p x p matrices
// on every rank, or on rank 0 only.
#ifndef RANKSHAPE_LIB_MEASURE_PINGPONG_H_
#define RANKSHAPE_LIB_MEASURE_PINGPONG_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "lib/model/costs.h"
#include "lib/mpi/communicator.h"

namespace rankshape {

struct PingPongOptions {
  /// Message sizes in bytes; at least two different ones; the first is used
  /// for the startup latency.
  std::vector<std::size_t> sizes = {8, 4096, 65536, 262144};
  int repetitions = 10;
  int warmup = 2;
  /// Full sweeps, each with its own schedule; the median per pair is kept.
  int sweeps = 1;
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
