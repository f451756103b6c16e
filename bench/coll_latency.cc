// coll_latency: an OSU-style latency table of the collectives, the MPI
// library's own (native) and rankshape's dispatched choice side by side in
// one run:
//   mpirun -np P coll_latency --out latency.csv [--modes native,rankshape]
//          [--label tuned] [--collectives ...] [--sizes ...]
// For every collective and size (4 B to 16 MiB in x4 steps by default) and
// every mode, the call runs `warmup` times untimed and then `reps` times,
// each repetition started together (at one simulated instant under SMPI,
// else after a barrier of rankshape's own, the same whatever the library);
// the time kept is the median over repetitions of the slowest rank
// (workload.h). Repetitions shrink with the size, as in the OSU
// benchmarks, so that every size costs about the same: --reps up to 8 KiB,
// then inversely proportional to the size, never below --min-reps. E.g.
// --reps 100: 100 at 8 KiB, 12 at 64 KiB, 5 (the minimum) at 1 MiB and
// beyond.
//
// The same binary gives every baseline: run it under Open MPI's defaults
// with --label tuned, and again with `--mca coll_han_priority 100` and
// --label han, and the native column of the second run is HAN's.
// The rankshape mode follows RANKSHAPE_COLL, RANKSHAPE_COLL_TABLE and
// RANKSHAPE_COLL_GROUPS (dispatch.h); --rack-nodes gives it racks as well.
// --relabel DIMS (e.g. 8x8x4) times both modes on the communicator that
// relabel_comm() returns for that grid and --pattern (fibres, or a stencil
// such as stencil:periodic), costs found as a program's would be (auto):
// a relabelled program's ranks are no longer in node order, and rankshape
// gets its nodes from relabel_comm() (set_groups), not from discovery.
//
// Output (rank 0, written atomically at the end): CSV rows
//   collective,bytes,mode,label,seconds,choice,first_seconds,predicted_seconds
// bytes as coll_tune counts them (message, or block per rank); barrier has
// one row with bytes 0; choice is dispatch::last_choice() for rankshape
// (quoted: it may hold commas) and empty for native; seconds: the median
// of the repetitions; first_seconds: the first call of that size alone,
// before the warm-up (rankshape's includes its trial, dispatch.h, where it
// is the first size of its class; barrier's trial is made by the untimed
// barrier that builds the context); predicted_seconds: the cost model's
// price of rankshape's choice (dispatch::last_predicted(); empty for
// native, -1 where the call was not decided).
// Where rankshape's first call of a size made a trial, the log (standard
// output) gets a line "# trial COLLECTIVE BYTES (us, predicted in brackets): CONFIG US (US); ..."
// of what it timed (dispatch::last_trials(), native first), so that a report can show what the
// choice was made from.
#include <fmt/format.h>
#include <mpi.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdint>
#include <iostream>
#include <optional>
#include <ostream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "cmd/mpi_main.h"
#include "lib/coll/config.h"
#include "lib/coll/dispatch.h"
#include "lib/coll/hierarchy.h"
#include "lib/coll/workload.h"
#include "lib/io/atomic_file.h"
#include "lib/model/grid.h"
#include "lib/model/objective.h"
#include "lib/model/pattern.h"
#include "lib/shape/shape.h"

namespace {

using namespace rankshape;
using namespace rankshape::coll;

struct Args {
  std::string out, label = "tuned", relabel, pattern = "fibres";
  std::vector<std::string> collectives = {
      "bcast",    "reduce", "allreduce", "gather", "scatter", "allgather", "reduce_scatter_block",
      "alltoall", "barrier"};
  std::vector<std::string> modes = {"native", "rankshape"};
  std::vector<std::int64_t> sizes;
  int reps = 100, min_reps = 5, warmup = 10, rack_nodes = 0;
  double max_buffer_mib = 256;
};

std::vector<std::int64_t> default_sizes() {
  std::vector<std::int64_t> s;
  for (std::int64_t b = 4; b <= (16 << 20); b *= 4) s.push_back(b);
  return s;
}

constexpr std::int64_t kSmall = 8 << 10;

/// Timed repetitions for messages of `bytes`: the same on every rank (it
/// depends on arguments only).
int reps_for(const Args& a, std::int64_t bytes) {
  if (bytes <= kSmall) return a.reps;
  const std::int64_t scaled = static_cast<std::int64_t>(a.reps) * kSmall / bytes;
  return static_cast<int>(std::max<std::int64_t>(a.min_reps, scaled));
}

/// Untimed repetitions: a tenth of the timed ones, at least one (the first
/// dispatched call of a size decides its configuration).
int warmup_for(const Args& a, std::int64_t bytes) {
  if (a.warmup == 0) return 0;
  return std::max(1, std::min(a.warmup, reps_for(a, bytes) / 10));
}

/// The trial line of the log: what rankshape's last call timed.
void trials_line(Collective c, std::int64_t key, std::ostream& out) {
  std::vector<std::string> timed;
  for (const dispatch::Trial& t : dispatch::last_trials()) {
    timed.push_back(
        fmt::format("{} {:.2f} ({:.2f})", t.config, t.seconds * 1e6, t.predicted * 1e6));
  }
  out << fmt::format("# trial {} {} (us, predicted in brackets): {}\n", collective_name(c), key,
                     fmt::join(timed, "; "));
}

/// A CSV field: quoted when it holds a comma, a quote or a line break.
std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char ch : s) {
    if (ch == '"') out += '"';
    out += ch;
  }
  return out + "\"";
}

/// The communicator timed: MPI_COMM_WORLD, or its relabelling for --relabel
/// (held in `shaped`).
MPI_Comm timed_comm(const Args& a, std::optional<ShapedComm>& shaped) {
  if (a.relabel.empty()) return MPI_COMM_WORLD;
  ShapeOptions o;
  o.objective = ObjectiveSpec::parse("", Pattern::parse(a.pattern));
  // --rack-nodes sets the groups itself, after relabel_comm().
  o.collective_groups = a.rack_nodes == 0;
  const Grid grid = Grid::parse(a.relabel);
  const double start = MPI_Wtime();
  shaped.emplace(relabel_comm(MPI_COMM_WORLD, grid, o));
  const double seconds = MPI_Wtime() - start;
  int world_rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  if (world_rank == 0) {
    const ShapeReport& r = shaped->report();
    std::cout << fmt::format(
        "# relabelled {} for {}: costs {}, algorithm {}, objective {:.6g} -> {:.6g}, {:.3f} s; "
        "new rank r is old rank:{}\n",
        a.relabel, a.pattern, r.cost_source, r.algorithm, r.before.value.primary,
        r.after.value.primary, seconds, [&] {
          std::string list;
          for (int n = 0; n < grid.size(); ++n) {
            list += fmt::format(" {}", shaped->old_of(NewRank(n)).value());
          }
          return list;
        }());
  }
  return shaped->comm().get();
}

int run(const Args& a) {
  if (a.relabel.empty() && a.pattern != "fibres") {
    throw std::invalid_argument("--pattern needs --relabel");
  }
  std::optional<ShapedComm> shaped;
  const MPI_Comm comm = timed_comm(a, shaped);
  int rank = 0, p = 0;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &p);
  std::vector<Collective> which;
  for (const std::string& name : a.collectives) {
    const auto c = collective_named(name);
    if (!c) throw std::invalid_argument("--collectives: unknown collective '" + name + "'");
    which.push_back(*c);
  }
  bool native = false, rankshape = false;
  for (const std::string& m : a.modes) {
    if (m == "native") {
      native = true;
    } else if (m == "rankshape") {
      rankshape = true;
    } else {
      throw std::invalid_argument("--modes: unknown mode '" + m + "' (native, rankshape)");
    }
  }
  if (a.label.find_first_of(",\"\n") != std::string::npos) {
    throw std::invalid_argument("--label: no commas, quotes or line breaks");
  }
  // The dispatcher's context (hierarchy, table or calibration) is built by
  // its first call: here, untimed.
  if (rankshape) {
    if (a.rack_nodes > 0) {
      dispatch::set_groups(comm,
                           Hierarchy::with_coarser(Hierarchy::machine_groups(comm), a.rack_nodes));
    }
    if (dispatch::barrier(comm) != MPI_SUCCESS) {
      throw std::runtime_error("the first dispatched call failed (see rankshape's message)");
    }
  }
  std::ostringstream csv;
  csv << "collective,bytes,mode,label,seconds,choice,first_seconds,predicted_seconds\n";
  if (rank == 0) {
    std::cout << fmt::format("# coll_latency: {} ranks, label {}\n", p, a.label);
    std::cout << fmt::format("{:<21} {:>9} {:>5} {:>12} {:>12}  {}\n", "collective", "bytes",
                             "reps", native ? "native_us" : "", rankshape ? "rankshape_us" : "",
                             rankshape ? "choice" : "");
  }
  std::vector<std::string> skipped;  // "COLLECTIVE BYTES"
  for (Collective c : which) {
    for (std::int64_t bytes : a.sizes) {
      const bool barrier = c == Collective::kBarrier;
      if (barrier && bytes != a.sizes.front()) continue;
      if (Workload::total_footprint(c, bytes, p) > a.max_buffer_mib * (1 << 20) * p) {
        skipped.push_back(fmt::format("{} {}", collective_name(c), bytes));
        continue;
      }
      const std::int64_t key = barrier ? 0 : bytes;
      const int reps = reps_for(a, key), warmup = warmup_for(a, key);
      Workload work(c, bytes, comm);
      double native_s = -1, rankshape_s = -1;
      std::string choice;
      // The first call alone, then the warm-up and the timed repetitions:
      // rankshape's first call of a size makes its trial (dispatch.h).
      if (native) {
        const auto call = [&] { work.run_native(); };
        const double first = time_collective(comm, 0, 1, call);
        native_s = time_collective(comm, warmup, reps, call);
        csv << fmt::format("{},{},native,{},{:.9g},,{:.9g},\n", collective_name(c), key, a.label,
                           native_s, first);
      }
      if (rankshape) {
        const auto call = [&] { work.run(dispatch::calls()); };
        const double first = time_collective(comm, 0, 1, call);
        if (rank == 0 && !dispatch::last_trials().empty()) trials_line(c, key, std::cout);
        rankshape_s = time_collective(comm, warmup, reps, call);
        choice = dispatch::last_choice();
        csv << fmt::format("{},{},rankshape,{},{:.9g},{},{:.9g},{:.9g}\n", collective_name(c), key,
                           a.label, rankshape_s, csv_field(choice), first,
                           dispatch::last_predicted());
      }
      if (rank == 0) {
        const auto us = [](double s) {
          return s < 0 ? std::string() : fmt::format("{:.2f}", s * 1e6);
        };
        std::cout << fmt::format("{:<21} {:>9} {:>5} {:>12} {:>12}  {}\n", collective_name(c), key,
                                 reps, us(native_s), us(rankshape_s), choice)
                  << std::flush;
      }
    }
  }
  if (rank == 0) {
    // Every pair named: bench/coll_selectors.sh reads them back, so that a
    // run without them counts as complete when its columns are reused.
    if (!skipped.empty()) {
      std::cout << fmt::format(
          "# {} (collective, size) pairs skipped: buffers over {} MiB per rank on average: {}\n",
          skipped.size(), a.max_buffer_mib, fmt::join(skipped, ", "));
    }
    const std::string text = csv.str();
    write_file_atomically(a.out, [&](std::ostream& out) { out << text; });
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  CLI::App app(
      "OSU-style latency of the collectives: the MPI library's own and rankshape's dispatched "
      "choice, per collective and message size.",
      "coll_latency");
  Args a;
  a.sizes = default_sizes();
  app.add_option("--out", a.out, "CSV to write (rank 0)")->required();
  app.add_option("--label", a.label, "the label column (e.g. tuned, han)")->capture_default_str();
  app.add_option("--modes", a.modes, "native (PMPI_ call), rankshape (dispatch.h)")
      ->delimiter(',')
      ->capture_default_str();
  app.add_option("--collectives", a.collectives, "which collectives")
      ->delimiter(',')
      ->capture_default_str();
  app.add_option("--sizes", a.sizes, "message (or block) sizes in bytes")
      ->delimiter(',')
      ->check(CLI::Range(std::int64_t{0}, std::int64_t{1} << 30))
      ->capture_default_str();
  app.add_option("--reps", a.reps, "timed repetitions up to 8 KiB; fewer beyond")
      ->check(CLI::Range(1, 1000000))
      ->capture_default_str();
  app.add_option("--min-reps", a.min_reps, "timed repetitions at least")
      ->check(CLI::Range(1, 1000000))
      ->capture_default_str();
  app.add_option("--warmup", a.warmup, "untimed repetitions at most (a tenth of the timed ones)")
      ->check(CLI::Range(0, 1000000))
      ->capture_default_str();
  app.add_option(
         "--max-buffer-mib", a.max_buffer_mib,
         "skip sizes whose buffers need more per rank, on average over the ranks (a gather's "
         "root holds a block of every rank, the others one)")
      ->capture_default_str();
  app.add_option("--rack-nodes", a.rack_nodes,
                 "rankshape mode: a second level of racks of this many consecutive nodes "
                 "(0: nodes only, or RANKSHAPE_COLL_GROUPS)")
      ->check(CLI::Range(0, 1 << 20))
      ->capture_default_str();
  app.add_option("--relabel", a.relabel,
                 "time on relabel_comm()'s communicator for this grid (e.g. 8x8x4), not on "
                 "MPI_COMM_WORLD");
  app.add_option("--pattern", a.pattern,
                 "with --relabel: the traffic it relabels for (fibres, stencil, stencil:periodic, "
                 "...)")
      ->capture_default_str();
  return parse_run_finalize(app, argc, argv, [&] { return run(a); });
}
