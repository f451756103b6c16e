// synth: writes a synthetic hierarchical machine (costs + placement) with a
// known structure, for tests, benchmarks and examples.
#include <iostream>

#include "cmd/cli.h"
#include "cmd/commands.h"
#include "lib/io/formats.h"
#include "lib/synth/machine.h"

namespace rankshape::cmd {

int synth_main(int argc, char** argv) {
  CLI::App app(
      "Writes a synthetic machine: racks x nodes x sockets x cores, a cost per level, "
      "optional noise, and a placement of ranks on cores.",
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
  std::string planted_out;
  app.add_option("--planted", planted_out,
                 "labelling file to write that puts the ranks back in block order (new rank i = "
                 "core i of the machine): the planted answer for a scrambled placement");
  return cli::run(app, argc, argv, [&] {
    m.order = parse_rank_order(order);
    const SyntheticMachine s = generate_machine(m);
    if (format == "dense") {
      write_dense_costs(costs_out, s.costs);
    } else {
      write_structured_costs(costs_out, s.costs);
    }
    if (!placement_out.empty()) write_placement(placement_out, s.placement);
    if (!planted_out.empty()) write_labelling(planted_out, block_order(s.costs));
    std::cout << "synth: " << s.costs.size() << " ranks on " << m.racks << " rack(s) x "
              << m.nodes_per_rack << " node(s) x " << m.sockets_per_node << " socket(s) x "
              << m.cores_per_socket << " core(s), " << rank_order_name(m.order) << " placement -> "
              << costs_out << (placement_out.empty() ? "" : ", " + placement_out) << "\n";
  });
}

}  // namespace rankshape::cmd
