// relabel: finds a labelling that puts a program's traffic on cheap links:
// that of a cartesian grid's pattern (every fibre, or every pair of grid
// neighbours), or a traffic graph read from files (--traffic). Writes it,
// and optionally a JSON report and a rankfile.
#include "lib/relabel/relabel.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <thread>

#include "cmd/cli.h"
#include "cmd/commands.h"
#include "cmd/report.h"
#include "cmd/traffic_input.h"
#include "lib/io/atomic_file.h"
#include "lib/io/formats.h"
#include "lib/io/launch_files.h"
#include "lib/report/heatmap.h"

namespace {

std::string algorithm_help() {
  std::string names;
  for (const auto& n : rankshape::relabel_algorithms()) names += (names.empty() ? "" : ", ") + n;
  return "algorithm: " + names +
         " (auto: exact for p <= 8, else the best of node-aware and multilevel search, for a "
         "stencil also of bisect, refined by hill-climbing)";
}

}  // namespace

namespace rankshape::cmd {

int relabel_main(int argc, char** argv) {
  CLI::App app(
      "Relabels the ranks of a job so that its traffic sits on cheap links: that of a cartesian "
      "program (every fibre of its grid, or every pair of grid neighbours for a stencil), or "
      "any traffic graph (--traffic: a profile, Open MPI's monitoring output). Writes the "
      "labelling (line i = old rank placed at new rank i).",
      "relabel");
  std::string costs_path, grid_text, perm_out, report_out, placement_path, rankfile_out;
  std::string heatmap_prefix, launcher = "openmpi";
  RelabelOptions options;
  std::string pattern_text = "fibres", objective_name;
  cli::TrafficInput traffic;
  bool quiet = false;
  app.add_option("--costs", costs_path, "cost file (dense matrix or rankshape-structured)")
      ->required();
  CLI::Option* grid_option = app.add_option(
      "--grid", grid_text, "grid, e.g. 16x16x16; its size must equal the rank count");
  traffic.add_to(app, grid_option);
  app.add_option("--perm", perm_out, "labelling file to write")->required();
  app.add_option("--report", report_out, "JSON report to write");
  app.add_option("--algorithm", options.algorithm, algorithm_help())->capture_default_str();
  app.add_option("--seed", options.seed, "random seed (same seed, same labelling)")
      ->capture_default_str();
  app.add_option("--time-limit", options.time_limit,
                 "seconds; the best labelling found by then is written")
      ->check(CLI::Range(0.0, 1e7))
      ->capture_default_str();
  options.threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  app.add_option("--threads", options.threads,
                 "threads for auto's independent candidates (default: every core; the labelling is "
                 "the same for any count unless the time limit cuts the search short)")
      ->check(CLI::Range(1, 1024))
      ->capture_default_str();
  app.add_option("--pattern", pattern_text, cli::pattern_help())->capture_default_str();
  app.add_option("--objective", objective_name, cli::objective_help());
  app.add_option("--placement", placement_path,
                 "placement file (rank host core): hosts give node membership to dense costs and "
                 "are needed for --rankfile");
  app.add_option("--rankfile", rankfile_out,
                 "launcher file to write (needs --placement): the application's rank i then "
                 "starts where old rank perm[i] ran; the command to use is printed");
  app.add_option("--launcher", launcher,
                 "form of --rankfile: openmpi (rankfile), mpich (Hydra machinefile) or slurm "
                 "(SLURM_HOSTFILE for srun --distribution=arbitrary)")
      ->check(CLI::IsMember({"openmpi", "mpich", "hydra", "slurm"}))
      ->capture_default_str();
  app.add_option("--heatmap", heatmap_prefix,
                 "write PREFIX-before.png (job's order) and PREFIX-after.png (new order): "
                 "cost-matrix pictures, cheap = dark, with the grid's fibre boundaries");
  app.add_flag("--quiet", quiet, "no summary on stdout");
  return cli::run(app, argc, argv, [&] {
    if (grid_text.empty() && !traffic.given()) {
      throw std::invalid_argument(
          "give --grid (a cartesian program) or --traffic (a traffic "
          "graph)");
    }
    if (traffic.given() && app.count("--pattern") > 0 && pattern_text != "graph") {
      throw std::invalid_argument("--traffic relabels a traffic graph: --pattern " + pattern_text +
                                  " is for --grid");
    }
    if (!rankfile_out.empty() && placement_path.empty()) {
      throw std::invalid_argument("--rankfile needs --placement (where each rank runs)");
    }
    Warnings warnings;
    const std::unique_ptr<Costs> costs = read_costs(costs_path, &warnings);
    for (const std::string& w : warnings) std::cerr << "relabel: warning: " << w << "\n";
    std::shared_ptr<const TrafficGraph> graph;
    if (traffic.given()) {
      graph = traffic.read(costs->size());
      pattern_text = "graph";
      grid_text = std::to_string(costs->size());
    }
    const Grid grid = Grid::parse(grid_text);
    if (grid.size() != costs->size()) {
      throw std::invalid_argument("grid " + grid.to_string() + " has " +
                                  std::to_string(grid.size()) + " positions but " + costs_path +
                                  " has " + std::to_string(costs->size()) + " ranks");
    }
    options.objective = ObjectiveSpec::parse(objective_name, Pattern::parse(pattern_text));
    if (options.objective.is_graph() && !graph) {
      throw std::invalid_argument("--pattern graph needs --traffic");
    }
    options.objective.graph = graph;
    std::optional<Placement> placement;
    if (!placement_path.empty()) {
      placement = read_placement(placement_path, costs->size());
      if (!dynamic_cast<const StructuredCosts*>(costs.get())) {
        std::map<std::string, int> host_index;
        std::vector<int> node_of;
        for (const HostCore& e : placement->entries()) {
          node_of.push_back(
              host_index.emplace(e.host, static_cast<int>(host_index.size())).first->second);
        }
        options.levels = {node_of};
      }
    }
    // Progress only for runs long enough to wonder about.
    const auto started = std::chrono::steady_clock::now();
    options.progress = [started](const std::string& line) {
      const double elapsed =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
      if (elapsed >= 2.0) std::cerr << fmt::format("relabel: [{:.1f} s] {}\n", elapsed, line);
    };
    if (quiet) options.progress = nullptr;
    const RelabelResult r = relabel(*costs, grid, options);

    // Pictures first: a bad --heatmap path then leaves no labelling behind.
    if (!heatmap_prefix.empty()) write_heatmap_pair(heatmap_prefix, *costs, r.labelling, grid);
    write_labelling(perm_out, r.labelling);
    std::string launch;
    if (!rankfile_out.empty()) {
      const LaunchFormat format = parse_launch_format(launcher);
      write_launch_file(rankfile_out, *placement, r.labelling, format);
      launch = launch_command(*placement, r.labelling, format, rankfile_out);
    }
    const double before = r.before.value.primary, after = r.after.value.primary;
    if (!report_out.empty()) {
      nlohmann::json report = {{"costs", costs_path},
                               {"p", grid.size()},
                               {"algorithm", options.algorithm},
                               {"algorithm_run", r.algorithm},
                               {"seed", options.seed},
                               {"threads", options.threads},
                               {"time_limit", options.time_limit},
                               {"time_limited", r.time_limited},
                               {"seconds", r.seconds},
                               {"evaluations", r.evaluations},
                               {"pattern", options.objective.pattern.name()},
                               {"objective", options.objective.name()},
                               {"objective_before", before},
                               {"objective_after", after},
                               {"total_before", r.before.value.total},
                               {"total_after", r.after.value.total},
                               {"warnings", warnings}};
      if (graph) {
        report["traffic"] = traffic.paths;
        report["bytes_per_message"] = traffic.bytes_per_message;
      } else {
        report["grid"] = grid.to_string();
      }
      for (const auto& [which, e] :
           {std::pair{"before", &r.before}, std::pair{"after", &r.after}}) {
        auto [key, details] = cli::evaluation_json(grid, *e);
        report[key + "_" + which] = std::move(details);
      }
      if (r.bound) report["lower_bound"] = cli::bound_json(*r.bound);
      nlohmann::json candidates = nlohmann::json::array();
      for (const CandidateRun& c : r.candidates) {
        candidates.push_back({{"name", c.name},
                              {"seconds", c.seconds},
                              {"objective", c.objective},
                              {"chosen", c.chosen}});
      }
      report["candidates"] = std::move(candidates);
      if (!launch.empty()) report["launch_command"] = launch;
      write_file_atomically(report_out, [&](std::ostream& out) { out << report.dump(2) << "\n"; });
    }
    if (!quiet) {
      std::cout << fmt::format("relabel: p = {}, {}, {}\n", grid.size(),
                               graph
                                   ? "traffic graph of " + std::to_string(graph->edges()) + " edges"
                                   : "grid " + grid.to_string(),
                               r.algorithm);
      for (const CandidateRun& c : r.candidates) {
        std::cout << fmt::format("  tried {}: {:.6g} in {:.2f} s{}\n", c.name, c.objective,
                                 c.seconds, c.chosen ? " (chosen)" : "");
      }
      std::cout << fmt::format("  before (identity): {:.6g}\n", before);
      cli::print_evaluation(std::cout, grid, r.before);
      std::cout << fmt::format("  after: {:.6g} ({:.3g}x better) in {:.2f} s{}\n", after,
                               after > 0 ? before / after : 1.0, r.seconds,
                               r.time_limited ? " (time limit reached)" : "");
      cli::print_evaluation(std::cout, grid, r.after);
      if (r.bound) std::cout << cli::bound_text(*r.bound, &after);
      if (!launch.empty()) std::cout << "  start the application with: " << launch << "\n";
    }
  });
}

}  // namespace rankshape::cmd
