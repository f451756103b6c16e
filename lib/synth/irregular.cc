#include "lib/synth/irregular.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <stdexcept>
#include <string>

#include "lib/util/random.h"

namespace rankshape {
namespace {

void check(bool ok, const std::string& message) {
  if (!ok) throw std::invalid_argument(message);
}

// A whole number >= 1 that fills `text`, or 0.
std::int64_t positive(std::string_view text) {
  std::int64_t v = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), v);
  return error == std::errc() && end == text.data() + text.size() && v >= 1 ? v : 0;
}

// Hops between two nodes of a torus (shortest way round every dimension).
int torus_hops(int a, int b, const std::vector<int>& dims) {
  int hops = 0;
  for (int side : dims) {
    const int d = std::abs(a % side - b % side);
    hops += std::min(d, side - d);
    a /= side;
    b /= side;
  }
  return hops;
}

}  // namespace

std::vector<int> parse_count_list(std::string_view text, std::string_view what) {
  const std::string name(what);
  check(!text.empty(), name + " is empty: expected counts such as 48*2,4");
  std::vector<int> out;
  std::int64_t total = 0;
  std::size_t start = 0;
  for (;;) {
    const std::size_t comma = text.find(',', start);
    const std::string_view item = text.substr(
        start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
    const std::size_t star = item.find('*');
    const std::int64_t count = positive(item.substr(0, star));
    const std::int64_t times = star == std::string_view::npos ? 1 : positive(item.substr(star + 1));
    check(count > 0 && count <= kMaxSyntheticRanks && times > 0 && times <= kMaxSyntheticRanks,
          name + ": '" + std::string(item) +
              "' is not a count N or N*K with whole N, K from 1 to " +
              std::to_string(kMaxSyntheticRanks));
    total += times;
    check(total <= kMaxSyntheticRanks,
          name + " has more than " + std::to_string(kMaxSyntheticRanks) + " entries");
    out.insert(out.end(), static_cast<std::size_t>(times), static_cast<int>(count));
    if (comma == std::string_view::npos) return out;
    start = comma + 1;
  }
}

SyntheticMachine generate_irregular(const IrregularSpec& m) {
  const int nodes = static_cast<int>(m.node_ranks.size());
  check(nodes >= 1, "an irregular machine needs at least one node");
  check(m.sockets_per_node >= 1, "sockets per node must be at least 1");
  std::int64_t p64 = 0;
  int fullest = 0;
  for (int n : m.node_ranks) {
    check(n >= 1, "every node must hold at least 1 rank");
    p64 += n;
    fullest = std::max(fullest, n);
  }
  check(p64 <= kMaxSyntheticRanks, "at most " + std::to_string(kMaxSyntheticRanks) +
                                       " ranks are supported, asked for " + std::to_string(p64));
  const int per_socket = (fullest + m.sockets_per_node - 1) / m.sockets_per_node;
  const std::int64_t cores64 = static_cast<std::int64_t>(per_socket) * m.sockets_per_node;
  check(cores64 <= kMaxCoresPerNode,
        "at most " + std::to_string(kMaxCoresPerNode) + " cores per node are supported");
  const int cores = static_cast<int>(cores64);
  check(m.islands.empty() || m.torus.empty(),
        "a machine has islands or a torus of nodes, not both");
  std::vector<std::int32_t> node_island(static_cast<std::size_t>(nodes), 0);
  std::vector<int> first_node = {0};  // first node of every island
  if (!m.islands.empty()) {
    std::int64_t sum = 0;
    for (int size : m.islands) {
      check(size >= 1, "every island must hold at least 1 node");
      sum += size;
      check(sum <= nodes,
            "the islands hold more nodes than the machine has (" + std::to_string(nodes) + ")");
      first_node.push_back(static_cast<int>(sum));
      for (int n = first_node[first_node.size() - 2]; n < sum; ++n)
        node_island[static_cast<std::size_t>(n)] = static_cast<int>(first_node.size()) - 2;
    }
    check(sum == nodes, "the islands hold " + std::to_string(sum) + " nodes, the machine has " +
                            std::to_string(nodes));
  } else {
    first_node.push_back(nodes);
  }
  const int islands = static_cast<int>(first_node.size()) - 1;
  check(islands <= kMaxRacks, "at most " + std::to_string(kMaxRacks) + " islands are supported");
  if (!m.torus.empty()) {
    std::int64_t size = 1;
    for (int side : m.torus) {
      check(side >= 1, "every torus dimension must be at least 1");
      size *= side;
      check(size <= nodes, "the torus has more places than the machine has nodes");
    }
    check(size == nodes, "the torus has " + std::to_string(size) + " places, the machine has " +
                             std::to_string(nodes) + " nodes");
  }
  check(m.slow_nodes >= 0 && m.slow_nodes <= nodes,
        "slow nodes must be between 0 and the node count (" + std::to_string(nodes) + ")");
  check(std::isfinite(m.slow_factor) && m.slow_factor >= 1,
        "the slow factor must be at least 1 (a slow node's links cost that many times more)");
  check(m.same_socket >= 0 && m.same_node >= 0 && m.same_rack >= 0 && m.other_rack >= 0,
        "level costs must not be negative");
  check(std::isfinite(m.same_socket + m.same_node + m.same_rack + m.other_rack),
        "level costs must be finite");
  check(m.noise >= 0 && m.noise < 1, "noise must be in [0, 1)");
  const bool node_matrix = !m.torus.empty() || m.slow_nodes > 0 || m.noise > 0;
  check(!node_matrix || nodes <= kMaxNoisyNodes,
        "a torus, slow nodes and noise need a full node-to-node matrix; at most " +
            std::to_string(kMaxNoisyNodes) + " nodes are supported with them");

  SplitMix64 rng(m.seed);
  const auto noisy = [&](double base) { return noisy_cost(base, m.noise, rng); };
  StructuredSpec spec;
  spec.cores_per_node = cores;
  spec.nodes = nodes;
  spec.racks = islands;
  spec.node_rack = node_island;
  spec.core_costs = core_cost_matrix(cores, per_socket, m.same_socket, m.same_node, noisy);
  spec.rack_costs.assign(static_cast<std::size_t>(islands) * islands, m.other_rack);
  for (int r = 0; r < islands; ++r)
    spec.rack_costs[static_cast<std::size_t>(r) * islands + r] = m.same_rack;
  if (node_matrix) {
    std::vector<double> factor(static_cast<std::size_t>(nodes), 1.0);
    std::vector<int> order(static_cast<std::size_t>(nodes));
    std::iota(order.begin(), order.end(), 0);
    shuffle(order, rng);
    for (int i = 0; i < m.slow_nodes; ++i)
      factor[static_cast<std::size_t>(order[i])] = m.slow_factor;
    spec.node_costs.assign(static_cast<std::size_t>(nodes) * nodes, 0.f);
    for (int a = 0; a < nodes; ++a) {
      for (int b = a + 1; b < nodes; ++b) {
        const double base = !m.torus.empty() ? m.same_rack * torus_hops(a, b, m.torus)
                            : node_island[a] == node_island[b] ? m.same_rack
                                                               : m.other_rack;
        const auto c =
            static_cast<float>(noisy(base) * std::max(factor[static_cast<std::size_t>(a)],
                                                      factor[static_cast<std::size_t>(b)]));
        spec.node_costs[static_cast<std::size_t>(a) * nodes + b] = c;
        spec.node_costs[static_cast<std::size_t>(b) * nodes + a] = c;
      }
    }
  }

  // The machine's slots in order (node by node, core by core); rank r gets
  // slot slot_of[r].
  const int p = static_cast<int>(p64);
  std::vector<RankLocation> slots;
  slots.reserve(static_cast<std::size_t>(p));
  for (int n = 0; n < nodes; ++n) {
    for (int c = 0; c < m.node_ranks[static_cast<std::size_t>(n)]; ++c) slots.push_back({n, c});
  }
  std::vector<int> slot_of(static_cast<std::size_t>(p));
  std::iota(slot_of.begin(), slot_of.end(), 0);
  if (m.order == RankOrder::kRoundRobin) {
    // Deal the ranks over the nodes in turn, skipping nodes already full.
    std::vector<int> next(static_cast<std::size_t>(nodes), 0),
        start(static_cast<std::size_t>(nodes));
    for (int n = 1; n < nodes; ++n) start[n] = start[n - 1] + m.node_ranks[n - 1];
    for (int r = 0, n = 0; r < p; n = (n + 1) % nodes) {
      if (next[n] < m.node_ranks[n]) slot_of[static_cast<std::size_t>(r++)] = start[n] + next[n]++;
    }
  } else if (m.order == RankOrder::kRandom) {
    shuffle(slot_of, rng);
  }

  const bool named_by_island = islands > 1;
  const int width = static_cast<int>(std::to_string(std::max(nodes, islands) - 1).size());
  spec.ranks.resize(static_cast<std::size_t>(p));
  std::vector<HostCore> where(static_cast<std::size_t>(p));
  for (int r = 0; r < p; ++r) {
    const RankLocation at = slots[static_cast<std::size_t>(slot_of[static_cast<std::size_t>(r)])];
    spec.ranks[static_cast<std::size_t>(r)] = at;
    const int island = node_island[static_cast<std::size_t>(at.node)];
    char name[64];
    if (named_by_island) {
      std::snprintf(name, sizeof name, "r%0*dn%0*d", width, island, width,
                    at.node - first_node[static_cast<std::size_t>(island)]);
    } else {
      std::snprintf(name, sizeof name, "n%0*d", width, at.node);
    }
    where[static_cast<std::size_t>(r)] = {name, at.core};
  }
  return SyntheticMachine{StructuredCosts(std::move(spec)), Placement(std::move(where))};
}

}  // namespace rankshape
