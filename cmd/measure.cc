// measure: an MPI program that measures what the ranks of this job cost
// each other and writes files that relabel reads unchanged:
//   mpirun -np P measure --out DIR [--mode dense|hierarchical|model] ...
//   relabel --costs DIR/costs.txt --placement DIR/placement.txt --grid ... --perm ...
#include <fmt/format.h>
#include <mpi.h>
#include <sys/stat.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstring>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cmd/cli.h"
#include "lib/io/atomic_file.h"
#include "lib/io/formats.h"
#include "lib/measure/bsp.h"
#include "lib/measure/hierarchy.h"
#include "lib/measure/pingpong.h"
#include "lib/model/grid.h"
#include "lib/mpi/communicator.h"

namespace {

using namespace rankshape;

struct Args {
  std::string out, mode = "dense", metric = "time", topology;
  std::vector<std::size_t> sizes = {8, 4096, 65536, 262144};
  double message_bytes = 65536, stall_seconds = 60, inter_node = 10;
  int reps = 10, warmup = 2, sweeps = 1, retries = 5;
  std::string pacing = "auto";
  bool bsp = false;
  std::string grid;
  std::vector<std::size_t> bsp_words = {64, 1024, 16384};
  std::uint64_t seed = 1;
};

void make_directory(const std::string& dir) {
  if (::mkdir(dir.c_str(), 0777) != 0 && errno != EEXIST) {
    throw std::runtime_error("cannot create " + dir + ": " + std::strerror(errno));
  }
}

nlohmann::json bsp_json(const BspParameters& b) {
  return {{"r_flops", b.r},
          {"g_seconds_per_word", b.g},
          {"l_seconds", b.l},
          {"r_squared", b.r_squared}};
}

// BSP r, g, l of the whole job and, with --grid, of the fibres of every
// dimension (world rank = grid position; the worst fibre per dimension).
nlohmann::json measure_bsp_summary(const Args& a, const mpi::Communicator& world) {
  nlohmann::json out = {{"communicator", bsp_json(measure_bsp(world, a.bsp_words, a.reps))}};
  if (a.grid.empty()) return out;
  const Grid grid = Grid::parse(a.grid);
  if (grid.size() != world.size()) {
    throw std::invalid_argument("grid " + grid.to_string() + " has " + std::to_string(grid.size()) +
                                " positions for " + std::to_string(world.size()) + " ranks");
  }
  nlohmann::json dims = nlohmann::json::array();
  for (int k = 0; k < grid.ndims(); ++k) {
    const NewRank me(world.rank());
    const mpi::Communicator fibre =
        world.split(grid.fibre_of(me, k), grid.coords(me)[static_cast<std::size_t>(k)]);
    BspParameters b = measure_bsp(fibre, a.bsp_words, a.reps);
    double worst[2] = {b.g, b.l};
    mpi::check(MPI_Allreduce(MPI_IN_PLACE, worst, 2, MPI_DOUBLE, MPI_MAX, world.get()),
               "MPI_Allreduce");
    dims.push_back({{"dimension", k},
                    {"size", grid.dim(k)},
                    {"worst_g_seconds_per_word", worst[0]},
                    {"worst_l_seconds", worst[1]}});
  }
  out["fibres"] = dims;
  return out;
}

// What the ping-pong saw and did: the machine's load, the pacing, the
// consistency passes.
nlohmann::json measurement_json(const PingPongResult& r) {
  nlohmann::json pairs = nlohmann::json::array();
  for (const auto& [a, b] : r.inconsistent) pairs.push_back({a, b});
  return {{"hosts", r.host_load},         {"oversubscribed", r.oversubscribed},
          {"pacing", r.pacing},           {"rounds", r.rounds},
          {"suspect_pairs", r.suspects},  {"remeasured_pairs", r.remeasured},
          {"rescaled_pairs", r.rescaled}, {"inconsistent_pairs", pairs},
          {"inverted", r.inverted},       {"seconds", r.seconds}};
}

int run(const Args& a, const mpi::Communicator& world) {
  const double started = MPI_Wtime();
  const bool root = world.rank() == 0;
  PingPongOptions o;
  o.sizes = a.sizes;
  o.repetitions = a.reps;
  o.warmup = a.warmup;
  o.sweeps = a.sweeps;
  o.pacing = parse_pacing(a.pacing);
  o.retries = a.retries;
  o.seed = a.seed;
  o.stall_seconds = a.stall_seconds;
  o.result_on_every_rank = false;  // only rank 0 writes
  o.progress = [started](const std::string& line) {
    if (MPI_Wtime() - started >= 2.0) std::cerr << "measure: " << line << "\n";
  };
  const Metric metric = parse_metric(a.metric);
  const JobLayout layout = gather_layout(world);
  nlohmann::json summary = {{"mode", a.mode},
                            {"p", world.size()},
                            {"nodes", layout.nodes},
                            {"metric", metric_name(metric)},
                            {"message_bytes", a.message_bytes},
                            {"sizes", a.sizes},
                            {"repetitions", a.reps},
                            {"warmup", a.warmup},
                            {"seed", a.seed},
                            {"retries", a.retries},
                            {"simulated_time", mpi::simulated()}};
  const std::string costs_path = a.out + "/costs.txt";
  std::string warning;  // why the measurement is inconsistent; empty when it is not
  if (a.mode == "dense") {
    o.node_of = layout.node_of;
    const PingPongResult r = measure_pingpong(world, o);
    summary["fit"] = {{"worst_r_squared", r.worst_r_squared}, {"mean_r_squared", r.mean_r_squared}};
    summary["rounds_seconds"] = r.seconds;
    summary["measurement"] = measurement_json(r);
    summary["consistent"] = r.consistent();
    warning = r.warning();
    if (root && r.oversubscribed) {
      std::cerr << "measure: more ranks than CPUs (" << r.host_load << "); pacing " << r.pacing
                << "\n";
    }
    if (root) write_dense_costs(costs_path, costs_from(r, metric, a.message_bytes));
  } else if (a.mode == "hierarchical") {
    const HierarchicalResult r = measure_hierarchical(world, layout, o, metric, a.message_bytes);
    summary["fit"] = {{"nodes_worst_r_squared", r.nodes.worst_r_squared},
                      {"inner_node_worst_r_squared", r.inner_node.worst_r_squared}};
    if (root) {
      summary["measurement"] = {{"between_nodes", measurement_json(r.nodes)},
                                {"inside_node_0", measurement_json(r.inner_node)}};
    }
    summary["consistent"] = r.consistent;
    const FabricMeasurement& f = r.fabric;
    summary["fabric"] = {{"nodes", f.groups},        {"flows", f.flows},
                         {"alone_seconds", f.alone}, {"together_seconds", f.together},
                         {"slowdown", f.slowdown},   {"ratio", f.ratio}};
    warning = r.warning;
    if (root) write_structured_costs(costs_path, *r.costs);
  } else {
    const StructuredCosts c = model_from_topology(layout, a.inter_node, a.topology);
    summary["inter_node_cost"] = a.inter_node;
    if (root) write_structured_costs(costs_path, c);
  }
  if (root && !warning.empty()) {
    summary["warning"] = warning;
    std::cerr << "measure: warning: the costs are not consistent: " << warning
              << " (see summary.json; relabel_comm() would use the hwloc model instead)\n";
  }
  if (a.bsp) summary["bsp"] = measure_bsp_summary(a, world);
  summary["seconds"] = MPI_Wtime() - started;
  if (root) {
    write_placement(a.out + "/placement.txt", layout.placement);
    write_file_atomically(a.out + "/summary.json",
                          [&](std::ostream& out) { out << summary.dump(2) << "\n"; });
    std::cout << fmt::format(
        "measure: {} ranks on {} node(s), {} mode, metric {}: {}/costs.txt, "
        "{}/placement.txt, {}/summary.json ({:.3g} s{})\n",
        world.size(), layout.nodes, a.mode, metric_name(metric), a.out, a.out, a.out,
        summary["seconds"].get<double>(), mpi::simulated() ? " simulated" : "");
  }
  world.barrier();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  CLI::App app(
      "Measures pairwise communication costs of this MPI job and writes costs, placement "
      "and a JSON summary for relabel.",
      "measure");
  Args a;
  app.add_option("--out", a.out, "output folder (created if missing)")->required();
  app.add_option("--mode", a.mode,
                 "dense: every pair by ping-pong; hierarchical: node-to-node by one rank per "
                 "node and inside node 0; model: hwloc topology, no messages")
      ->check(CLI::IsMember({"dense", "hierarchical", "model"}))
      ->capture_default_str();
  app.add_option("--metric", a.metric,
                 "latency (smallest message), inverse-bandwidth (s/byte) or time (l + g m)")
      ->check(CLI::IsMember({"latency", "inverse-bandwidth", "time"}))
      ->capture_default_str();
  app.add_option("--message-bytes", a.message_bytes, "m for --metric time")
      ->check(CLI::Range(0.0, 1e12))
      ->capture_default_str();
  app.add_option("--sizes", a.sizes, "message sizes in bytes (at least two different)")
      ->delimiter(',')
      ->capture_default_str();
  app.add_option("--reps", a.reps, "timed repetitions per size")
      ->check(CLI::Range(1, 1000000))
      ->capture_default_str();
  app.add_option("--warmup", a.warmup, "untimed repetitions first")
      ->check(CLI::Range(0, 1000000))
      ->capture_default_str();
  app.add_option("--seed", a.seed, "seed of the partner schedule")->capture_default_str();
  app.add_option("--sweeps", a.sweeps, "full sweeps; the least time per pair is kept")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  app.add_option("--pacing", a.pacing,
                 "auto: fewer pairs at once when a host has more ranks than CPUs; all: every "
                 "rank in every round; capped: at most two measuring ranks per host at a time")
      ->check(CLI::IsMember({"auto", "all", "capped"}))
      ->capture_default_str();
  app.add_option("--retries", a.retries,
                 "passes that measure again the pairs breaking the costs' structure")
      ->check(CLI::Range(0, 100))
      ->capture_default_str();
  app.add_flag("--bsp", a.bsp, "also measure BSP r, g, l (into summary.json)");
  cli::add_version_flag(app);
  app.add_option("--grid", a.grid, "with --bsp: also g and l of every dimension's fibres");
  app.add_option("--bsp-words", a.bsp_words, "with --bsp: h-relation sizes in 8-byte words")
      ->delimiter(',')
      ->capture_default_str();
  app.add_option("--stall-seconds", a.stall_seconds,
                 "end the run when a partner does not answer for this long (0: never)")
      ->capture_default_str();
  app.add_option("--inter-node-cost", a.inter_node, "model mode: cost between nodes")
      ->capture_default_str();
  app.add_option("--topology", a.topology, "model mode: hwloc XML to use instead of this machine");
  int status = 0;
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // Every rank sees the same arguments; only rank 0 speaks.
    status = rank == 0 ? app.exit(e) : (e.get_exit_code() == 0 ? 0 : 2);
    MPI_Finalize();
    return status == 0 ? 0 : 2;
  }
  try {
    const mpi::Communicator world(MPI_COMM_WORLD, mpi::Ownership::kBorrow);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    if (rank == 0) make_directory(a.out);
    status = run(a, world);
  } catch (const std::invalid_argument& e) {
    // Bad options are seen alike by every rank: end together.
    if (rank == 0) std::cerr << "measure: error: " << e.what() << "\n";
    MPI_Finalize();
    return 1;
  } catch (const std::exception& e) {
    // Anything else may have left other ranks inside a collective.
    std::cerr << "measure: rank " << rank << ": error: " << e.what() << "\n";
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  MPI_Finalize();
  return status;
}
