#include "lib/relabel/groups.h"

#include <algorithm>
#include <limits>
#include <map>
#include <numeric>
#include <stdexcept>

#include "lib/relabel/kl.h"

namespace rankshape {

std::optional<Grouping> grouping_from_labels(const std::vector<int>& labels) {
  std::map<int, std::vector<int>> by_label;
  for (int i = 0; i < static_cast<int>(labels.size()); ++i) by_label[labels[i]].push_back(i);
  if (by_label.empty()) return std::nullopt;
  Grouping g;
  g.group_size = static_cast<int>(by_label.begin()->second.size());
  g.group_of.assign(labels.size(), -1);
  std::vector<std::vector<int>> members;
  for (auto& [label, items] : by_label) {
    if (static_cast<int>(items.size()) != g.group_size) return std::nullopt;
    members.push_back(std::move(items));
  }
  std::sort(members.begin(), members.end());
  for (int k = 0; k < static_cast<int>(members.size()); ++k) {
    for (int item : members[k]) g.group_of[item] = k;
  }
  g.members = std::move(members);
  return g;
}

namespace {

Grouping from_members(std::vector<std::vector<int>> members, int n) {
  Grouping g;
  g.group_size = members.empty() ? 0 : static_cast<int>(members[0].size());
  for (auto& m : members) std::sort(m.begin(), m.end());
  std::sort(members.begin(), members.end());
  g.group_of.assign(n, -1);
  for (int k = 0; k < static_cast<int>(members.size()); ++k) {
    for (int item : members[k]) g.group_of[item] = k;
  }
  g.members = std::move(members);
  return g;
}

// KL over all pairs of groups costs O(groups^2 * g^3) per pass; above this
// many groups the greedy clusters stand as they are.
constexpr std::size_t kMaxGroupsForKl = 128;
constexpr int kMaxGroupSizeForKl = 64;

}  // namespace

Grouping cluster_items(const Costs& costs, int g, SplitMix64& rng, const Deadline& deadline) {
  const int n = costs.size();
  if (g < 1 || n % g != 0) {
    throw std::invalid_argument("cluster_items: " + std::to_string(n) +
                                " items do not split into groups of " + std::to_string(g));
  }
  std::vector<int> order(n);
  std::iota(order.begin(), order.end(), 0);
  shuffle(order, rng);
  std::vector<char> taken(n, 0);
  std::vector<double> to_group(n, 0);  // cost of each item to the growing group
  std::vector<std::vector<int>> members;
  visit_costs(costs, [&](const auto& c) {
    for (int seed : order) {
      if (taken[seed]) continue;
      std::vector<int> group = {seed};
      taken[seed] = 1;
      std::fill(to_group.begin(), to_group.end(), 0.0);
      for (int x = 0; x < n; ++x) {
        if (!taken[x]) to_group[x] = c.cost(OldRank(seed), OldRank(x));
      }
      while (static_cast<int>(group.size()) < g) {
        int best = -1;
        double best_cost = std::numeric_limits<double>::infinity();
        for (int x = 0; x < n; ++x) {
          if (!taken[x] && to_group[x] < best_cost) {
            best_cost = to_group[x];
            best = x;
          }
        }
        taken[best] = 1;
        group.push_back(best);
        for (int x = 0; x < n; ++x) {
          if (!taken[x]) to_group[x] += c.cost(OldRank(best), OldRank(x));
        }
      }
      members.push_back(std::move(group));
    }
  });
  if (g > 1 && g <= kMaxGroupSizeForKl && members.size() > 1 && members.size() <= kMaxGroupsForKl) {
    refine_partition_kl(costs, members, deadline);
  }
  return from_members(std::move(members), n);
}

DenseCosts coarse_costs(const Costs& costs, const Grouping& grouping) {
  const int m = static_cast<int>(grouping.members.size());
  std::vector<double> out(static_cast<std::size_t>(m) * m, 0.0);
  const auto* structured = dynamic_cast<const StructuredCosts*>(&costs);
  // Groups that each lie in one node, no two in the same node: the cost
  // between members of two groups is the cost between their nodes.
  bool node_groups = structured != nullptr;
  std::vector<char> node_taken(structured ? structured->spec().nodes : 0, 0);
  for (int a = 0; a < m && node_groups; ++a) {
    const int node = structured->location(OldRank(grouping.members[a][0])).node;
    for (int item : grouping.members[a]) {
      node_groups &= structured->location(OldRank(item)).node == node;
    }
    node_groups &= !node_taken[node];
    node_taken[node] = 1;
  }
  for (int a = 0; a < m; ++a) {
    for (int b = a + 1; b < m; ++b) {
      double avg;
      if (node_groups) {
        avg = structured->node_cost(structured->location(OldRank(grouping.members[a][0])).node,
                                    structured->location(OldRank(grouping.members[b][0])).node);
      } else {
        double sum = 0;
        for (int x : grouping.members[a]) {
          for (int y : grouping.members[b]) sum += costs.cost(OldRank(x), OldRank(y));
        }
        avg = sum / (static_cast<double>(grouping.members[a].size()) * grouping.members[b].size());
      }
      out[static_cast<std::size_t>(a) * m + b] = out[static_cast<std::size_t>(b) * m + a] = avg;
    }
  }
  return DenseCosts(m, std::move(out), DenseCosts::Trusted{});
}

std::optional<StructuredCosts> structured_coarse_costs(const Costs& costs,
                                                       const Grouping& grouping) {
  const auto* structured = dynamic_cast<const StructuredCosts*>(&costs);
  if (structured == nullptr || grouping.members.empty()) return std::nullopt;
  const StructuredSpec& fine = structured->spec();
  // Whether every group lies in one place (by `where`), no two in the same.
  const auto one_place_each = [&](auto where, int places) {
    std::vector<char> taken(static_cast<std::size_t>(places), 0);
    for (const auto& members : grouping.members) {
      const int place = where(members[0]);
      for (int item : members) {
        if (where(item) != place) return false;
      }
      if (taken[static_cast<std::size_t>(place)]) return false;
      taken[static_cast<std::size_t>(place)] = 1;
    }
    return true;
  };
  const auto node_of = [&](int r) { return structured->location(OldRank(r)).node; };
  const auto rack_of = [&](int r) { return structured->rack_of(node_of(r)); };
  StructuredSpec coarse;
  coarse.cores_per_node = 1;
  coarse.core_costs = {0.0};  // one group per node: never used
  coarse.racks = fine.racks;
  coarse.rack_costs = fine.rack_costs;
  if (one_place_each(node_of, fine.nodes)) {
    coarse.nodes = fine.nodes;
    coarse.node_costs = fine.node_costs;
    coarse.node_rack = fine.node_rack;
    for (const auto& members : grouping.members) coarse.ranks.push_back({node_of(members[0]), 0});
  } else if (fine.node_costs.empty() && one_place_each(rack_of, fine.racks)) {
    coarse.nodes = static_cast<int>(grouping.members.size());
    for (const auto& members : grouping.members) {
      coarse.node_rack.push_back(rack_of(members[0]));
      coarse.ranks.push_back({static_cast<std::int32_t>(coarse.ranks.size()), 0});
    }
  } else {
    return std::nullopt;
  }
  return StructuredCosts(std::move(coarse));
}

double mean_cost_inside(const Costs& costs, const std::vector<int>& members) {
  double sum = 0;
  for (int x : members) {
    for (int y : members) sum += costs.cost(OldRank(x), OldRank(y));
  }
  const double n = static_cast<double>(members.size());
  return sum / std::max(1.0, n * (n - 1));
}

void order_by_core(const StructuredCosts& costs, std::vector<int>& members) {
  std::stable_sort(members.begin(), members.end(), [&](int a, int b) {
    return costs.location(OldRank(a)).core < costs.location(OldRank(b)).core;
  });
}

std::vector<std::vector<int>> nearest_items(const Costs& costs, int k) {
  const int n = costs.size();
  std::vector<std::vector<int>> out(n);
  std::vector<std::pair<double, int>> row;
  for (int a = 0; a < n; ++a) {
    row.clear();
    for (int b = 0; b < n; ++b) {
      if (b != a) row.emplace_back(costs.cost(OldRank(a), OldRank(b)), b);
    }
    const int take = std::min<int>(k, static_cast<int>(row.size()));
    std::partial_sort(row.begin(), row.begin() + take, row.end());
    for (int i = 0; i < take; ++i) out[a].push_back(row[i].second);
  }
  return out;
}

}  // namespace rankshape
