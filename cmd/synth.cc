// synth: writes a synthetic machine (costs + placement): a regular
// hierarchy with a known structure, or with --node-ranks an irregular one
// (uneven nodes, islands, a torus of nodes, slow nodes), for tests,
// benchmarks and examples.
#include <iostream>

#include "cmd/cli.h"
#include "cmd/commands.h"
#include "lib/io/formats.h"
#include "lib/model/grid.h"
#include "lib/synth/irregular.h"
#include "lib/synth/machine.h"

namespace rankshape::cmd {

int synth_main(int argc, char** argv) {
  CLI::App app(
      "Writes a synthetic machine: racks x nodes x sockets x cores, a cost per level, "
      "optional noise, and a placement of ranks on cores. With --node-ranks, an irregular one: "
      "nodes of uneven size, optionally in islands of uneven size or on a torus, some with "
      "slower links.",
      "synth");
  MachineSpec m;
  std::string order = "block", format = "structured", costs_out, placement_out;
  app.add_option("--racks", m.racks, "racks")->check(CLI::Range(1, 1 << 20));
  app.add_option("--nodes", m.nodes_per_rack, "nodes per rack")->check(CLI::Range(1, 1 << 20));
  app.add_option("--sockets", m.sockets_per_node, "sockets per node")
      ->check(CLI::Range(1, 1 << 20));
  app.add_option("--cores", m.cores_per_socket, "cores per socket")->check(CLI::Range(1, 1 << 20));
  app.add_option("--cost-socket", m.same_socket, "cost between cores of one socket")
      ->capture_default_str();
  app.add_option("--cost-node", m.same_node, "cost between sockets of one node")
      ->capture_default_str();
  app.add_option("--cost-rack", m.same_rack, "cost between nodes of one rack")
      ->capture_default_str();
  app.add_option("--cost-network", m.other_rack, "cost between racks")->capture_default_str();
  app.add_option("--noise", m.noise, "relative noise in [0, 1)")->capture_default_str();
  app.add_option("--order", order, "rank placement: block, round-robin or random")
      ->capture_default_str();
  app.add_option("--seed", m.seed, "seed for noise and random placement")->capture_default_str();
  app.add_option("--format", format, "cost file form: structured or dense")
      ->check(CLI::IsMember({"structured", "dense"}))
      ->capture_default_str();
  app.add_option("--costs", costs_out, "cost file to write")->required();
  app.add_option("--placement", placement_out, "placement file to write (rank host core)");
  std::string node_ranks, islands, torus;
  IrregularSpec irregular;
  app.add_option("--node-ranks", node_ranks,
                 "irregular machine: ranks on each node, e.g. 48*2,4 for 100 ranks on 48-core "
                 "nodes (N*K: K nodes of N); --racks, --nodes and --cores do not apply");
  app.add_option("--islands", islands,
                 "with --node-ranks: nodes per island (rack), in node order, e.g. 5,5,3");
  app.add_option("--torus", torus,
                 "with --node-ranks: the nodes on a torus of these dimensions, e.g. 4x4x4 (no "
                 "islands; h hops cost h x --cost-rack)");
  app.add_option("--slow-nodes", irregular.slow_nodes,
                 "with --node-ranks: nodes, chosen at random, whose links cost --slow-factor "
                 "times more")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--slow-factor", irregular.slow_factor, "cost factor of a slow node's links")
      ->capture_default_str();
  std::string planted_out;
  app.add_option("--planted", planted_out,
                 "labelling file to write that puts the ranks back in block order (new rank i = "
                 "core i of the machine): the planted answer for a scrambled placement");
  return cli::run(app, argc, argv, [&] {
    m.order = parse_rank_order(order);
    const bool irregular_machine = !node_ranks.empty();
    if (!irregular_machine) {
      for (const char* name : {"--islands", "--torus", "--slow-nodes", "--slow-factor"}) {
        if (app.count(name) > 0)
          throw std::invalid_argument(std::string(name) + " needs --node-ranks");
      }
    } else {
      for (const char* name : {"--racks", "--nodes", "--cores"}) {
        if (app.count(name) > 0)
          throw std::invalid_argument(std::string(name) +
                                      " does not apply with --node-ranks, which lists the nodes");
      }
      irregular.node_ranks = parse_count_list(node_ranks, "--node-ranks");
      if (!islands.empty()) irregular.islands = parse_count_list(islands, "--islands");
      if (!torus.empty()) irregular.torus = Grid::parse(torus).dims();
      irregular.sockets_per_node = m.sockets_per_node;
      irregular.same_socket = m.same_socket;
      irregular.same_node = m.same_node;
      irregular.same_rack = m.same_rack;
      irregular.other_rack = m.other_rack;
      irregular.noise = m.noise;
      irregular.order = m.order;
      irregular.seed = m.seed;
    }
    const SyntheticMachine s =
        irregular_machine ? generate_irregular(irregular) : generate_machine(m);
    if (format == "dense") {
      write_dense_costs(costs_out, s.costs);
    } else {
      write_structured_costs(costs_out, s.costs);
    }
    if (!placement_out.empty()) write_placement(placement_out, s.placement);
    if (!planted_out.empty()) write_labelling(planted_out, block_order(s.costs));
    std::cout << "synth: " << s.costs.size() << " ranks on ";
    if (irregular_machine) {
      const StructuredSpec& spec = s.costs.spec();
      std::cout << spec.nodes << " node(s) of up to " << spec.cores_per_node << " cores";
      if (!irregular.torus.empty()) {
        std::cout << " on a " << torus << " torus";
      } else {
        std::cout << " in " << spec.racks << " island(s)";
      }
      if (irregular.slow_nodes > 0) std::cout << ", " << irregular.slow_nodes << " slow";
    } else {
      std::cout << m.racks << " rack(s) x " << m.nodes_per_rack << " node(s) x "
                << m.sockets_per_node << " socket(s) x " << m.cores_per_socket << " core(s)";
    }
    std::cout << ", " << rank_order_name(m.order) << " placement -> " << costs_out
              << (placement_out.empty() ? "" : ", " + placement_out) << "\n";
  });
}

}  // namespace rankshape::cmd
