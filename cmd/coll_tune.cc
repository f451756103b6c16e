// coll_tune: an MPI program that measures, on this job's machine, the
// candidate configurations of every collective at every message size and
// writes the winners into a tuning table that later runs load
// (RANKSHAPE_COLL_TABLE):
//   mpirun -np P coll_tune --out table.json [--report candidates.csv] ...
// The cost model chooses which candidates to measure (the best few it
// predicts, plus native and plain hierarchical); the report lists every
// measured candidate with its predicted time.
#include <fmt/format.h>
#include <mpi.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "cmd/mpi_main.h"
#include "lib/coll/calibrate.h"
#include "lib/coll/config.h"
#include "lib/coll/hierarchy.h"
#include "lib/coll/model.h"
#include "lib/coll/racks.h"
#include "lib/coll/table.h"
#include "lib/coll/workload.h"
#include "lib/io/atomic_file.h"
#include "lib/mpi/communicator.h"

namespace {

using namespace rankshape;
using namespace rankshape::coll;

struct Args {
  std::string out, report, groups = "nodes", racks = "off";
  std::vector<std::string> collectives = {
      "bcast",    "reduce", "allreduce", "gather", "scatter", "allgather", "reduce_scatter_block",
      "alltoall", "barrier"};
  std::vector<std::int64_t> sizes;
  int reps = 10, warmup = 2, candidates = 3;
  double max_buffer_mib = 256;
  int rack_nodes = 0;
  bool merge = false;
};

std::vector<std::int64_t> default_sizes() {
  std::vector<std::int64_t> s;
  for (std::int64_t b = 4; b <= (16 << 20); b *= 4) s.push_back(b);
  return s;
}

// Group tables: nodes, or blocks:N / dealt:N (emulating nodes).
std::vector<std::vector<int>> groups_of(const std::string& spec, MPI_Comm comm, int p) {
  if (spec == "nodes") return Hierarchy::machine_groups(comm);
  try {
    return Hierarchy::pretend_groups(spec, p);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(std::string("--groups ") + e.what() + " (or nodes)");
  }
}

struct Measured {
  Config config;
  double predicted = 0, seconds = 0;
  double native = 0;  // the winner's: native's time at the same key
};

int run(const Args& a) {
  const mpi::Communicator world(MPI_COMM_WORLD, mpi::Ownership::kBorrow);
  const int rank = world.rank(), p = world.size();
  std::vector<Collective> which;
  for (const std::string& name : a.collectives) {
    const auto c = collective_named(name);
    if (!c) throw std::invalid_argument("--collectives: unknown collective '" + name + "'");
    which.push_back(*c);
  }
  auto groups = groups_of(a.groups, MPI_COMM_WORLD, p);
  if (a.rack_nodes > 0) {
    groups = Hierarchy::with_coarser(std::move(groups), a.rack_nodes);
  } else if (a.groups == "nodes" && a.racks == "auto") {
    // As the dispatcher finds them (RANKSHAPE_COLL_RACKS=auto), so that
    // its hierarchy has the table's levels.
    groups = with_found_racks(MPI_COMM_WORLD, std::move(groups));
  }
  const Hierarchy h(MPI_COMM_WORLD, std::move(groups));
  TuningTable fresh;
  const std::vector<int> sizes = level_sizes(h);
  std::ostringstream report;
  report << "collective,bytes,config,predicted_s,measured_s\n";
  if (!h.useful()) {
    if (rank == 0) {
      std::cerr << "coll_tune: the job spans one node (or every node has one rank): the "
                   "hierarchical collectives do not apply; the table gets no entries\n";
    }
  } else {
    const Model model = calibrate(h);
    fresh.models.push_back(model);
    if (rank == 0) {
      std::cout << fmt::format(
          "# {} ranks, levels {}; alpha (us) / beta (ns/B) / loaded beta per level:", p,
          fmt::join(sizes, "x"));
      for (const LinkCost& l : model.links) {
        std::cout << fmt::format(" {:.2f}/{:.3f}/{:.3f}", l.alpha * 1e6, l.beta * 1e9,
                                 l.loaded() * 1e9);
      }
      std::cout << fmt::format("; gamma {:.3f} ns/B\n", model.gamma * 1e9);
      std::cout << fmt::format("{:<21} {:>9} {:>11} {:>11} {:>11} {:>7}  {}\n", "collective",
                               "bytes", "native_us", "best_us", "predicted", "speedup", "winner");
    }
    // Every (collective, size) measured, once: an allreduce's parts are
    // tuned on demand, and a part asked for later is not measured again.
    std::map<std::pair<Collective, std::int64_t>, std::optional<Measured>> tuned;
    std::function<const std::optional<Measured>&(Collective, std::int64_t)> tune =
        [&](Collective c, std::int64_t bytes) -> const std::optional<Measured>& {
      const auto key = std::make_pair(c, bytes);
      if (const auto it = tuned.find(key); it != tuned.end()) return it->second;
      if (Workload::total_footprint(c, bytes, p) > a.max_buffer_mib * (1 << 20) * p)
        return tuned[key];
      // The model's ranking picks what to measure.
      std::vector<Measured> tried;
      for (const Config& config : candidates(c, h.depth(), bytes, model.pipelines)) {
        tried.push_back({config, predict(c, config, model, bytes), 0});
      }
      std::stable_sort(tried.begin() + 2, tried.end(), [](const Measured& x, const Measured& y) {
        return x.predicted < y.predicted;
      });
      tried.resize(std::min<std::size_t>(tried.size(), 2 + static_cast<std::size_t>(a.candidates)));
      // As a trial does (dispatch.h): rankshape's flat textbook algorithm,
      // and for allreduce its own reduce then bcast, and reduce_scatter_block
      // then allgather where every rank gets at least an int, their parts
      // tuned first (Traeff, Gropp and Thakur: never slower than those).
      if (auto flat = textbook_flat(c, bytes, Workload::count(c, bytes), p)) {
        tried.push_back({*flat, predict(c, *flat, model, bytes), 0});
      }
      if (c == Collective::kAllreduce) {
        const auto compose = [&](Config::Composition how, Collective first, Collective second,
                                 std::int64_t part_bytes) {
          const std::optional<Measured> x = tune(first, part_bytes);
          const std::optional<Measured> y = tune(second, part_bytes);
          if (!x || !y) return;
          Config composed;
          composed.hierarchical = true;
          composed.composition = how;
          composed.parts = {x->config, y->config};
          tried.push_back({composed, predict(c, composed, model, bytes), 0});
        };
        compose(Config::Composition::kReduceBcast, Collective::kReduce, Collective::kBcast, bytes);
        if (bytes / p >= static_cast<std::int64_t>(sizeof(int))) {
          compose(Config::Composition::kReduceScatterAllgather, Collective::kReduceScatterBlock,
                  Collective::kAllgather, bytes / p);
        }
      }
      Workload work(c, bytes, MPI_COMM_WORLD);
      for (Measured& m : tried) {
        m.seconds =
            m.config.hierarchical
                ? time_collective(MPI_COMM_WORLD, a.warmup, a.reps,
                                  [&] { work.run_hierarchical(h, m.config); })
                : time_collective(MPI_COMM_WORLD, a.warmup, a.reps, [&] { work.run_native(); });
        report << fmt::format("{},{},\"{}\",{:.9g},{:.9g}\n", collective_name(c), bytes,
                              m.config.describe(), m.predicted, m.seconds);
      }
      const Measured& best = *std::min_element(
          tried.begin(), tried.end(),
          [](const Measured& x, const Measured& y) { return x.seconds < y.seconds; });
      if (rank == 0) {
        std::cout << fmt::format("{:<21} {:>9} {:>11.2f} {:>11.2f} {:>11.2f} {:>7.2f}  {}\n",
                                 collective_name(c), bytes, tried.front().seconds * 1e6,
                                 best.seconds * 1e6, best.predicted * 1e6,
                                 tried.front().seconds / best.seconds, best.config.describe());
      }
      return tuned[key] =
                 Measured{best.config, best.predicted, best.seconds, tried.front().seconds};
    };
    // The table gets what was asked for; parts tuned on demand are in the
    // report and inside the compositions that use them.
    for (Collective c : which) {
      for (std::int64_t bytes : a.sizes) {
        if (c == Collective::kBarrier && bytes != a.sizes.front()) continue;
        if (const std::optional<Measured>& best = tune(c, bytes)) {
          fresh.entries.push_back(
              {c, sizes, bytes, best->config, best->seconds, best->predicted, best->native});
        }
      }
    }
  }
  // Only rank 0 touches files, after every collective call is done.
  if (rank == 0) {
    TuningTable table;
    if (a.merge && std::ifstream(a.out)) table = read_table(a.out);
    table.merge(fresh);
    write_table(a.out, table);
    if (!a.report.empty()) {
      const std::string text = report.str();
      write_file_atomically(a.report, [&](std::ostream& out) { out << text; });
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  CLI::App app(
      "Measures the candidate configurations of the hierarchical collectives on this job and "
      "writes the fastest per collective and message size into a tuning table.",
      "coll_tune");
  Args a;
  a.sizes = default_sizes();
  app.add_option("--out", a.out, "tuning table (JSON) to write")->required();
  app.add_option("--report", a.report, "CSV of every measured candidate, predicted and measured");
  app.add_option("--collectives", a.collectives, "which collectives")
      ->delimiter(',')
      ->capture_default_str();
  app.add_option("--sizes", a.sizes, "message (or block) sizes in bytes")
      ->delimiter(',')
      ->check(CLI::Range(std::int64_t{0}, std::int64_t{1} << 30))
      ->capture_default_str();
  app.add_option("--reps", a.reps, "timed repetitions per candidate")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  app.add_option("--warmup", a.warmup, "untimed repetitions first")
      ->check(CLI::Range(0, 100000))
      ->capture_default_str();
  app.add_option("--candidates", a.candidates,
                 "hierarchical candidates measured beyond native and plain hierarchical, in the "
                 "model's order")
      ->check(CLI::Range(0, 1000))
      ->capture_default_str();
  app.add_option("--groups", a.groups,
                 "nodes (MPI_Comm_split_type, with sockets below where ranks are bound to them), "
                 "blocks:N or dealt:N")
      ->capture_default_str();
  app.add_option(
         "--max-buffer-mib", a.max_buffer_mib,
         "skip sizes whose buffers need more per rank, on average over the ranks (a gather's "
         "root holds a block of every rank, the others one)")
      ->capture_default_str();
  app.add_option("--rack-nodes", a.rack_nodes,
                 "a level of racks above the groups: this many consecutive groups each")
      ->check(CLI::PositiveNumber);
  app.add_option("--racks", a.racks,
                 "auto: with --groups nodes and no --rack-nodes, find levels above the nodes "
                 "by timing round trips between them, as the dispatcher does with "
                 "RANKSHAPE_COLL_RACKS=auto; off: none")
      ->check(CLI::IsMember({"auto", "off"}))
      ->capture_default_str();
  app.add_flag("--merge", a.merge, "keep the entries of an existing --out for other keys");
  return parse_run_finalize(app, argc, argv, [&] { return run(a); });
}
