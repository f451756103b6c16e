// traffic_replay: the time of a program's traffic replayed under several
// labellings of the same job, side by side in one run:
//   mpirun -np P traffic_replay --traffic app.traffic --labelling identity
//       --labelling auto=auto.perm --out replay.csv
// The traffic graph (rankshape's traffic format or any form `relabel
// --traffic` reads) says what every pair of the program's ranks sends over
// a run. A replay step sends it all at once, scaled down so that the
// heaviest pair sends --max-bytes: every pair {a, b} trades w(a, b) * scale
// bytes each way (nonblocking sends and receives, then one wait for all),
// w = bytes + --bytes-per-message * messages as `relabel` weighs it. For
// each labelling (NAME=FILE: line i is the old rank that takes the program's
// rank i, as `relabel --perm` writes; "identity": the job's order) the
// ranks are renumbered, --warmup steps run, then --reps timed ones; the time
// kept is the slowest rank's mean step time. Under SimGrid SMPI the times
// are simulated (deterministic) and the buffers shared
// (lib/mpi/message_buffer.h).
// Output (rank 0, written atomically at the end): CSV rows
//   labelling,seconds,pairs,bytes
// with the pairs that exchange and the bytes one step sends in all.
#include <fmt/format.h>
#include <mpi.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdint>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench/exchange.h"
#include "cmd/mpi_main.h"
#include "lib/io/atomic_file.h"
#include "lib/io/formats.h"
#include "lib/io/traffic.h"
#include "lib/mpi/communicator.h"
#include "lib/mpi/error.h"

namespace {

using namespace rankshape;

struct Args {
  std::vector<std::string> traffic, labellings;
  std::string out;
  double max_bytes = 1 << 20;
  double bytes_per_message = kDefaultBytesPerMessage;
  int reps = 3, warmup = 1;
};

int run(const Args& a) {
  const mpi::Communicator world(MPI_COMM_WORLD, mpi::Ownership::kBorrow);
  const int p = world.size();
  if (a.reps < 1 || a.warmup < 0) throw std::invalid_argument("--reps >= 1 and --warmup >= 0");
  if (!(a.max_bytes >= 1) || a.max_bytes > (1 << 30)) {
    throw std::invalid_argument("--max-bytes from 1 to 1 GiB");
  }
  // Every rank reads the traffic: the same graph everywhere.
  const TrafficGraph graph = traffic_graph(read_traffic(a.traffic, p), a.bytes_per_message);
  double heaviest = 0;
  for (int v = 0; v < p; ++v) {
    for (std::size_t i = graph.begin(v); i < graph.end(v); ++i) {
      heaviest = std::max(heaviest, graph.weight(i));
    }
  }
  const double scale = heaviest > 0 ? a.max_bytes / heaviest : 0;
  std::ostringstream csv;
  csv << "labelling,seconds,pairs,bytes\n";
  for (const std::string& spec : a.labellings) {
    const std::size_t eq = spec.find('=');
    const std::string name = spec.substr(0, eq);
    if (eq == std::string::npos && name != "identity") {
      throw std::invalid_argument("--labelling NAME=FILE or identity, got '" + spec + "'");
    }
    const Labelling labelling =
        eq == std::string::npos ? Labelling::identity(p) : read_labelling(spec.substr(eq + 1), p);
    const int me = labelling.new_of(OldRank(world.rank())).value();
    const mpi::Communicator comm(mpi::split_comm(world.get(), 0, me), mpi::Ownership::kTake);
    std::vector<bench::ExchangePeer> peers;
    std::int64_t bytes = 0;
    for (std::size_t i = graph.begin(me); i < graph.end(me); ++i) {
      const auto size = static_cast<std::size_t>(std::max(1.0, graph.weight(i) * scale + 0.5));
      peers.push_back({graph.neighbour(i), graph.neighbour(i), 0, size});
      bytes += static_cast<std::int64_t>(size);
    }
    const double seconds = bench::timed_exchange(comm, peers, a.reps, a.warmup);
    std::int64_t all_bytes = 0;
    mpi::check(MPI_Allreduce(&bytes, &all_bytes, 1, MPI_INT64_T, MPI_SUM, comm.get()),
               "MPI_Allreduce");
    csv << fmt::format("{},{:.9g},{},{}\n", name, seconds, graph.edges(), all_bytes);
    if (world.rank() == 0) {
      std::cerr << fmt::format("traffic_replay: {}: {:.6g} s per step\n", name, seconds);
    }
  }
  if (world.rank() == 0) {
    if (a.out.empty()) {
      std::cout << csv.str();
    } else {
      write_file_atomically(a.out, [&](std::ostream& out) { out << csv.str(); });
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  Args a;
  CLI::App app("The time of a program's traffic replayed under several labellings of the job.",
               "traffic_replay");
  app.add_option("--traffic", a.traffic, "traffic file(s), as relabel --traffic reads them")
      ->required();
  app.add_option("--labelling", a.labellings,
                 "NAME=FILE (line i: old rank that takes rank i) or identity; repeatable")
      ->required();
  app.add_option("--max-bytes", a.max_bytes, "what the heaviest pair sends each way in a step")
      ->capture_default_str();
  app.add_option("--bytes-per-message", a.bytes_per_message,
                 "what one message weighs in bytes, as for relabel")
      ->capture_default_str();
  app.add_option("--reps", a.reps, "timed steps")->capture_default_str();
  app.add_option("--warmup", a.warmup, "untimed steps first")->capture_default_str();
  app.add_option("--out", a.out, "CSV to write (rank 0); stdout if not given");
  return parse_run_finalize(app, argc, argv, [&] { return run(a); });
}
