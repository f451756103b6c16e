#include "lib/relabel/metis_split.h"

#include <metis.h>

#include <algorithm>
#include <mutex>
#include <numeric>
#include <set>
#include <stdexcept>
#include <string>

#include "lib/relabel/kl.h"
#include "lib/relabel/metis_lock.h"

namespace rankshape {
namespace {

// Neighbours per rank in the graph handed to METIS.
constexpr int kNeighbours = 16;
// KL over all pairs of parts is cubic in the part size; beyond these sizes
// the repaired METIS parts stand.
constexpr std::size_t kMaxPartsForKl = 64;
constexpr std::size_t kMaxPartSizeForKl = 256;

double mean_cost_to(const Costs& costs, int x, const std::vector<int>& group) {
  if (group.empty()) return 0;
  double sum = 0;
  const std::size_t step = std::max<std::size_t>(1, group.size() / 8);  // sample up to ~8
  std::size_t n = 0;
  for (std::size_t i = 0; i < group.size(); i += step, ++n) {
    sum += costs.cost(OldRank(x), OldRank(group[i]));
  }
  return sum / static_cast<double>(n);
}

}  // namespace

std::vector<std::vector<int>> metis_split(const Costs& costs, const std::vector<int>& items,
                                          int parts, std::uint64_t seed, const Deadline& deadline) {
  const int n = static_cast<int>(items.size());
  if (parts < 1 || n % parts != 0) {
    throw std::invalid_argument("metis_split: " + std::to_string(n) + " items do not split into " +
                                std::to_string(parts) + " parts");
  }
  const int size = n / parts;
  std::vector<std::vector<int>> groups(parts);
  if (parts == 1 || size == 1) {
    for (int i = 0; i < n; ++i) groups[i / size].push_back(items[i]);
    return groups;
  }
  // Symmetric k-nearest-neighbour graph with affinity weights.
  double largest = 0;
  std::vector<std::set<int>> adjacent(n);
  std::vector<std::pair<double, int>> row;
  for (int a = 0; a < n; ++a) {
    row.clear();
    for (int b = 0; b < n; ++b) {
      if (b == a) continue;
      const double c = costs.cost(OldRank(items[a]), OldRank(items[b]));
      largest = std::max(largest, c);
      row.emplace_back(c, b);
    }
    const int k = std::min<int>(kNeighbours, static_cast<int>(row.size()));
    std::partial_sort(row.begin(), row.begin() + k, row.end());
    for (int i = 0; i < k; ++i) {
      adjacent[a].insert(row[i].second);
      adjacent[row[i].second].insert(a);
    }
  }
  std::vector<idx_t> xadj = {0}, adjncy, adjwgt;
  for (int a = 0; a < n; ++a) {
    for (int b : adjacent[a]) {
      const double c = costs.cost(OldRank(items[a]), OldRank(items[b]));
      adjncy.push_back(b);
      // 1..1001: the cheapest links weigh most.
      adjwgt.push_back(static_cast<idx_t>(1 + 1000 * (largest > 0 ? 1 - c / largest : 1)));
    }
    xadj.push_back(static_cast<idx_t>(adjncy.size()));
  }
  idx_t nvtxs = n, ncon = 1, nparts = parts, objval = 0;
  idx_t options[METIS_NOPTIONS];
  METIS_SetDefaultOptions(options);
  options[METIS_OPTION_SEED] = static_cast<idx_t>(seed % 1000003);
  std::vector<idx_t> part(n, 0);
  int status = METIS_OK;
  {
    const std::lock_guard<std::mutex> lock(metis_mutex());
    status = METIS_PartGraphKway(&nvtxs, &ncon, xadj.data(), adjncy.data(), nullptr, nullptr,
                                 adjwgt.data(), &nparts, nullptr, nullptr, options, &objval,
                                 part.data());
  }
  if (status != METIS_OK) {
    throw std::runtime_error("METIS_PartGraphKway failed with status " + std::to_string(status));
  }
  for (int a = 0; a < n; ++a) groups[part[a]].push_back(items[a]);
  // Repair sizes: the costliest members of overfull parts move to the
  // closest part with room.
  std::vector<int> surplus;
  for (auto& g : groups) {
    while (static_cast<int>(g.size()) > size) {
      auto worst = std::max_element(g.begin(), g.end(), [&](int x, int y) {
        return mean_cost_to(costs, x, g) < mean_cost_to(costs, y, g);
      });
      surplus.push_back(*worst);
      g.erase(worst);
    }
  }
  for (int x : surplus) {
    int best = -1;
    double best_cost = 0;
    for (int j = 0; j < parts; ++j) {
      if (static_cast<int>(groups[j].size()) >= size) continue;
      const double c = mean_cost_to(costs, x, groups[j]);
      if (best == -1 || c < best_cost) {
        best = j;
        best_cost = c;
      }
    }
    groups[best].push_back(x);
  }
  for (auto& g : groups) std::sort(g.begin(), g.end());
  if (groups.size() <= kMaxPartsForKl && static_cast<std::size_t>(size) <= kMaxPartSizeForKl) {
    refine_partition_kl(costs, groups, deadline);
  }
  return groups;
}

namespace {

void split(const Costs& costs, const Grid& grid, int k, const std::vector<int>& ranks, int first,
           std::uint64_t seed, const Deadline& deadline, std::vector<OldRank>& perm) {
  // Out of time: the splits made so far stand, the ranks of each group keep
  // their order (one more METIS call could take a good part of the budget).
  if (k == grid.ndims() || ranks.size() == 1 || deadline.passed()) {
    for (std::size_t i = 0; i < ranks.size(); ++i) perm[first + i] = OldRank(ranks[i]);
    return;
  }
  const int parts = grid.dim(k);
  const int size = static_cast<int>(ranks.size()) / parts;
  const std::vector<std::vector<int>> groups =
      parts == 1 ? std::vector<std::vector<int>>{ranks}
                 : metis_split(costs, ranks, parts, seed + static_cast<std::uint64_t>(k), deadline);
  for (int j = 0; j < parts; ++j) {
    split(costs, grid, k + 1, groups[j], first + j * size, seed, deadline, perm);
  }
}

}  // namespace

Labelling metis_layout(const Costs& costs, const Grid& grid, std::uint64_t seed,
                       const Deadline& deadline) {
  if (grid.size() > DenseCosts::kMaxRanks) {
    throw std::invalid_argument("metis is limited to " + std::to_string(DenseCosts::kMaxRanks) +
                                " ranks (its neighbour search is quadratic)");
  }
  std::vector<int> ranks(grid.size());
  std::iota(ranks.begin(), ranks.end(), 0);
  std::vector<OldRank> perm(grid.size());
  split(costs, grid, 0, ranks, 0, seed, deadline, perm);
  return Labelling(std::move(perm));
}

}  // namespace rankshape
