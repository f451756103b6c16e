// Who sends how much to whom: a job's traffic graph, read from rankshape's
// traffic format or from what Open MPI's monitoring writes.
//
// Formats (docs/file-formats.md has the full text of each):
//  - rankshape's: "rankshape-traffic 1", "ranks P", then one line
//    "from to bytes messages" per directed pair.
//  - Open MPI's monitoring output (--mca pml_monitoring_enable 2
//    --mca pml_monitoring_enable_output 3 --mca pml_monitoring_filename F:
//    one F.<rank>.prof per rank, read one by one or concatenated). Lines
//    "E|I|S <tab> from <tab> to <tab> N bytes <tab> M msgs sent": E the
//    program's point-to-point messages, I those its collectives sent, S its
//    one-sided puts and gets. C (the collectives' own view of the same
//    messages), R (the receiving side of S) and the per-communicator
//    summaries (D, O2A, A2O, A2A) are skipped: counting them would count
//    messages twice. "D MPI_COMM_WORLD procs: 0,1,..." gives the job's size.
//  - The matrices ompi_monitoring_prof.so writes: P lines of P counts, row
//    = sender. Which quantity a matrix holds is in its name: *_size.mat
//    bytes, *_msg.mat messages (give both for both); *_avg.mat is refused.
//
// Direction does not matter for placement: a pair's bytes and messages are
// the sums over both directions. Example: "0 1 300 3" and "1 0 100 1" give
// the pair {0, 1} with 400 bytes in 4 messages.
#ifndef RANKSHAPE_LIB_IO_TRAFFIC_H_
#define RANKSHAPE_LIB_IO_TRAFFIC_H_

#include <cstdint>
#include <string>
#include <vector>

#include "lib/model/traffic_graph.h"

namespace rankshape {

/// Traffic between two ranks, both directions together.
struct TrafficPair {
  int a = 0;  // a < b
  int b = 0;
  double bytes = 0;
  double messages = 0;
};

struct Traffic {
  int ranks = 0;
  /// Sorted by (a, b), each pair once, none with neither bytes nor messages.
  std::vector<TrafficPair> pairs;
};

/// Most ranks a traffic file may declare.
constexpr int kMaxTrafficRanks = 1 << 24;

/// Reads one traffic graph from one or more files, all in one format (told
/// apart by their first line). expected_ranks > 0 is the job's size, which
/// every file must agree with; 0 takes it from the files (rankshape's
/// "ranks" line, Open MPI's MPI_COMM_WORLD line or highest rank + 1, a
/// matrix's order). Throws InputError naming the file, line and column of
/// the first problem.
Traffic read_traffic(const std::vector<std::string>& paths, int expected_ranks = 0);

/// Writes traffic in rankshape's format (one line per pair, a < b),
/// atomically: nothing is left at path on failure.
void write_traffic(const std::string& path, const Traffic& traffic);

/// What one message's latency is worth in bytes, by default: a pair's
/// weight for placement is bytes + this * messages. The latency over the
/// inverse bandwidth of a link (l / g of measure's fit, docs/measure.md) is
/// the right value; 4 KiB is about that on common InfiniBand and Ethernet
/// (1-2 us at 2-4 GB/s, 5 us at 1 GB/s).
constexpr double kDefaultBytesPerMessage = 4096;

/// The traffic as a graph for the "graph" pattern: pair {a, b} weighs
/// bytes + bytes_per_message * messages. Throws std::invalid_argument if
/// bytes_per_message is negative or not finite.
TrafficGraph traffic_graph(const Traffic& traffic,
                           double bytes_per_message = kDefaultBytesPerMessage);

/// One direction of one pair, as a profiler counts it.
struct DirectedTraffic {
  int from = 0;
  int to = 0;
  std::int64_t bytes = 0;
  std::int64_t messages = 0;
};

/// Writes directed counts in rankshape's format, atomically. Throws
/// std::invalid_argument (writing nothing) unless ranks >= 1 and every line
/// names two different ranks below it, counts in [0, 2^53], and no
/// direction of a pair twice.
void write_directed_traffic(const std::string& path, int ranks,
                            const std::vector<DirectedTraffic>& lines);

}  // namespace rankshape

#endif  // RANKSHAPE_LIB_IO_TRAFFIC_H_
