// evaluate: how good is a labelling for a grid or a traffic graph on a
// machine? Prints the objective and per-dimension worst and mean fibre costs
// (for a stencil: the busiest rank and the neighbour pairs each level of
// links cuts; for a graph: the communication cost and the edges each level
// cuts), optionally as JSON.
#include <fmt/format.h>

#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>

#include "cmd/cli.h"
#include "cmd/commands.h"
#include "cmd/report.h"
#include "cmd/traffic_input.h"
#include "lib/io/atomic_file.h"
#include "lib/io/formats.h"
#include "lib/model/bounds.h"
#include "lib/model/objective.h"
#include "lib/relabel/relabel.h"

namespace rankshape::cmd {

int evaluate_main(int argc, char** argv) {
  CLI::App app("Evaluates labellings of a cartesian grid or a traffic graph on a machine's costs.",
               "evaluate");
  std::string costs_path, grid_text, pattern_text = "fibres", objective_name;
  std::vector<std::string> perm_paths;
  std::string json_path;
  cli::TrafficInput traffic;
  app.add_option("--costs", costs_path, "cost file (dense or structured)")->required();
  CLI::Option* grid_option =
      app.add_option("--grid", grid_text, "grid, e.g. 4x4x4 (its size must equal the rank count)");
  traffic.add_to(app, grid_option);
  app.add_option("--perm", perm_paths,
                 "labelling file(s) to compare (line i = old rank at new rank i); the identity "
                 "is always evaluated first");
  app.add_option("--pattern", pattern_text, cli::pattern_help())->capture_default_str();
  app.add_option("--objective", objective_name, cli::objective_help());
  app.add_option("--json", json_path, "also write the results as JSON here");
  return cli::run(app, argc, argv, [&] {
    Warnings warnings;
    const std::unique_ptr<Costs> costs = read_costs(costs_path, &warnings);
    for (const std::string& w : warnings) std::cerr << "evaluate: warning: " << w << "\n";
    if (grid_text.empty() && !traffic.given()) {
      throw std::invalid_argument(
          "give --grid (a cartesian program) or --traffic (a traffic "
          "graph)");
    }
    if (traffic.given()) {
      if (app.count("--pattern") > 0 && pattern_text != "graph") {
        throw std::invalid_argument("--traffic evaluates a traffic graph: --pattern " +
                                    pattern_text + " is for --grid");
      }
      pattern_text = "graph";
      grid_text = std::to_string(costs->size());
    }
    const Grid grid = Grid::parse(grid_text);
    if (grid.size() != costs->size()) {
      throw std::invalid_argument("grid " + grid.to_string() + " has " +
                                  std::to_string(grid.size()) + " positions but " + costs_path +
                                  " has " + std::to_string(costs->size()) + " ranks");
    }
    // +links: a structured file's nodes and racks, then levels found in
    // the costs (a dense file's levels are all found in the costs).
    std::vector<std::vector<int>> levels;
    if (const auto* s = dynamic_cast<const StructuredCosts*>(costs.get()))
      levels = machine_levels(*s);
    ObjectiveSpec spec = ObjectiveSpec::parse(objective_name, Pattern::parse(pattern_text));
    if (spec.is_graph() && !traffic.given()) {
      throw std::invalid_argument("--pattern graph needs --traffic");
    }
    if (traffic.given()) spec.graph = traffic.read(costs->size());
    spec = spec.with_links(*costs, levels);
    std::vector<std::pair<std::string, Labelling>> labellings;
    labellings.emplace_back("identity", Labelling::identity(grid.size()));
    for (const std::string& path : perm_paths) {
      labellings.emplace_back(path, read_labelling(path, grid.size()));
    }
    nlohmann::json report = {{"costs", costs_path},      {"p", grid.size()},
                             {"grid", grid.to_string()}, {"pattern", spec.pattern.name()},
                             {"objective", spec.name()}, {"labellings", nlohmann::json::array()}};
    const std::optional<LowerBound> bound = objective_lower_bound(*costs, grid, spec);
    if (bound) {
      std::cout << cli::bound_text(*bound, nullptr);
      report["lower_bound"] = cli::bound_json(*bound);
    }
    double identity_primary = 0;
    for (const auto& [name, labelling] : labellings) {
      const Evaluation e = evaluate(*costs, grid, labelling, spec);
      if (name == "identity") identity_primary = e.value.primary;
      std::cout << fmt::format("{}: objective {:.6g} (total {:.6g})", name, e.value.primary,
                               e.value.total);
      if (name != "identity" && e.value.primary > 0) {
        std::cout << fmt::format(", {:.3g}x better than identity",
                                 identity_primary / e.value.primary);
      }
      if (bound && reaches(e.value.primary, bound->primary)) std::cout << ", optimal";
      std::cout << "\n";
      cli::print_evaluation(std::cout, grid, e);
      auto [key, details] = cli::evaluation_json(grid, e);
      report["labellings"].push_back({{"name", name},
                                      {"objective", e.value.primary},
                                      {"total", e.value.total},
                                      {key, std::move(details)}});
    }
    if (!json_path.empty()) {
      write_file_atomically(json_path, [&](std::ostream& out) { out << report.dump(2) << "\n"; });
    }
  });
}

}  // namespace rankshape::cmd
