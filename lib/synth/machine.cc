#include "lib/synth/machine.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <stdexcept>
#include <vector>

#include "lib/util/random.h"

namespace rankshape {

RankOrder parse_rank_order(std::string_view text) {
  if (text == "block") return RankOrder::kBlock;
  if (text == "round-robin") return RankOrder::kRoundRobin;
  if (text == "random") return RankOrder::kRandom;
  throw std::invalid_argument("unknown placement order '" + std::string(text) +
                              "': expected block, round-robin or random");
}

std::string rank_order_name(RankOrder order) {
  switch (order) {
    case RankOrder::kBlock:
      return "block";
    case RankOrder::kRoundRobin:
      return "round-robin";
    case RankOrder::kRandom:
      return "random";
  }
  return "?";
}

namespace {

void check(bool ok, const std::string& message) {
  if (!ok) throw std::invalid_argument(message);
}

std::string host_name(int rack, int node_in_rack, int racks, int nodes_per_rack) {
  const int width = static_cast<int>(std::to_string(std::max(nodes_per_rack, racks) - 1).size());
  char buf[64];
  if (racks == 1) {
    std::snprintf(buf, sizeof buf, "n%0*d", width, node_in_rack);
  } else {
    std::snprintf(buf, sizeof buf, "r%0*dn%0*d", width, rack, width, node_in_rack);
  }
  return buf;
}

}  // namespace

SyntheticMachine generate_machine(const MachineSpec& m) {
  check(m.racks >= 1 && m.nodes_per_rack >= 1 && m.sockets_per_node >= 1 && m.cores_per_socket >= 1,
        "racks, nodes per rack, sockets per node and cores per socket must all be at least 1");
  check(m.same_socket >= 0 && m.same_node >= 0 && m.same_rack >= 0 && m.other_rack >= 0,
        "level costs must not be negative");
  check(std::isfinite(m.same_socket + m.same_node + m.same_rack + m.other_rack),
        "level costs must be finite");
  check(m.noise >= 0 && m.noise < 1, "noise must be in [0, 1)");
  const std::int64_t cores64 = static_cast<std::int64_t>(m.sockets_per_node) * m.cores_per_socket;
  const std::int64_t nodes64 = static_cast<std::int64_t>(m.racks) * m.nodes_per_rack;
  check(cores64 <= kMaxCoresPerNode,
        "at most " + std::to_string(kMaxCoresPerNode) + " cores per node are supported");
  check(m.racks <= kMaxRacks, "at most " + std::to_string(kMaxRacks) +
                                  " racks are supported (the rack-to-rack matrix is racks^2 "
                                  "costs); group racks into larger ones");
  check(nodes64 <= kMaxSyntheticRanks / cores64,
        "at most " + std::to_string(kMaxSyntheticRanks) + " ranks are supported, asked for " +
            std::to_string(nodes64) + " nodes x " + std::to_string(cores64) +
            " cores; every rank needs a location and a host name in memory");
  check(m.noise == 0 || nodes64 <= kMaxNoisyNodes,
        "noise needs a full node-to-node matrix; at most " + std::to_string(kMaxNoisyNodes) +
            " nodes are supported with noise");
  const int cores = static_cast<int>(cores64);
  const int nodes = static_cast<int>(nodes64);
  const int p = cores * nodes;

  SplitMix64 rng(m.seed);
  const auto noisy = [&](double base) { return noisy_cost(base, m.noise, rng); };

  StructuredSpec spec;
  spec.cores_per_node = cores;
  spec.nodes = nodes;
  spec.racks = m.racks;
  spec.core_costs = core_cost_matrix(cores, m.cores_per_socket, m.same_socket, m.same_node, noisy);
  spec.node_rack.resize(nodes);
  for (int n = 0; n < nodes; ++n) spec.node_rack[n] = n / m.nodes_per_rack;
  spec.rack_costs.assign(static_cast<std::size_t>(m.racks) * m.racks, m.other_rack);
  for (int r = 0; r < m.racks; ++r) {
    spec.rack_costs[static_cast<std::size_t>(r) * m.racks + r] = m.same_rack;
  }
  if (m.noise > 0) {
    // Noise needs a cost per node pair: the full node matrix.
    spec.node_costs.assign(static_cast<std::size_t>(nodes) * nodes, 0);
    for (int a = 0; a < nodes; ++a) {
      for (int b = a + 1; b < nodes; ++b) {
        const bool same_rack = spec.node_rack[a] == spec.node_rack[b];
        const auto c = static_cast<float>(noisy(same_rack ? m.same_rack : m.other_rack));
        spec.node_costs[static_cast<std::size_t>(a) * nodes + b] = c;
        spec.node_costs[static_cast<std::size_t>(b) * nodes + a] = c;
      }
    }
  }

  // slot s = node * cores + core; rank r goes to slot slot_of[r].
  std::vector<int> slot_of(p);
  for (int r = 0; r < p; ++r) {
    switch (m.order) {
      case RankOrder::kBlock:
      case RankOrder::kRandom:
        slot_of[r] = r;
        break;
      case RankOrder::kRoundRobin:
        slot_of[r] = (r % nodes) * cores + r / nodes;
        break;
    }
  }
  if (m.order == RankOrder::kRandom) shuffle(slot_of, rng);

  spec.ranks.resize(p);
  std::vector<HostCore> where(p);
  for (int r = 0; r < p; ++r) {
    const int node = slot_of[r] / cores;
    const int core = slot_of[r] % cores;
    spec.ranks[r] = {node, core};
    where[r] = {
        host_name(node / m.nodes_per_rack, node % m.nodes_per_rack, m.racks, m.nodes_per_rack),
        core};
  }
  return SyntheticMachine{StructuredCosts(std::move(spec)), Placement(std::move(where))};
}

double noisy_cost(double base, double noise, SplitMix64& rng) {
  return noise == 0 ? base : base * (1 + noise * (2 * rng.uniform() - 1));
}

std::vector<double> core_cost_matrix(int cores, int per_socket, double same_socket,
                                     double same_node, const std::function<double(double)>& noisy) {
  std::vector<double> out(static_cast<std::size_t>(cores) * cores, 0);
  for (int a = 0; a < cores; ++a) {
    for (int b = a + 1; b < cores; ++b) {
      const double c = noisy(a / per_socket == b / per_socket ? same_socket : same_node);
      out[static_cast<std::size_t>(a) * cores + b] = c;
      out[static_cast<std::size_t>(b) * cores + a] = c;
    }
  }
  return out;
}

Labelling block_order(const StructuredCosts& costs) {
  std::vector<OldRank> perm;
  for (int r = 0; r < costs.size(); ++r) perm.emplace_back(r);
  std::stable_sort(perm.begin(), perm.end(), [&](OldRank a, OldRank b) {
    const RankLocation& la = costs.location(a);
    const RankLocation& lb = costs.location(b);
    return la.node != lb.node ? la.node < lb.node : la.core < lb.core;
  });
  return Labelling(std::move(perm));
}

}  // namespace rankshape
