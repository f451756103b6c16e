#include "lib/model/link_load.h"

#include <algorithm>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <string>

namespace rankshape {
namespace {

// Most levels groupings_by_gaps() adds on top of the known ones (nodes, racks,
// then pods and the like: a real machine has few).
constexpr int kMaxDetectedLevels = 4;

int find_root(std::vector<int>& parent, int x) {
  while (parent[x] != x) {
    parent[x] = parent[parent[x]];
    x = parent[x];
  }
  return x;
}

// Labels renumbered 0.. in order of first appearance; returns the count.
int renumber(std::vector<int>& labels) {
  std::vector<int> sorted = labels;
  std::sort(sorted.begin(), sorted.end());
  sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
  std::vector<int> new_of(sorted.size(), -1);
  int next = 0;
  for (int& l : labels) {
    const auto i = static_cast<std::size_t>(std::lower_bound(sorted.begin(), sorted.end(), l) -
                                            sorted.begin());
    if (new_of[i] < 0) new_of[i] = next++;
    l = new_of[i];
  }
  return next;
}

std::vector<int> first_members(const LinkLevel& level) {
  std::vector<int> first(static_cast<std::size_t>(level.groups), -1);
  for (std::size_t r = 0; r < level.group_of.size(); ++r) {
    int& f = first[static_cast<std::size_t>(level.group_of[r])];
    if (f < 0) f = static_cast<int>(r);
  }
  return first;
}

// Mean cost between representatives of different groups of `level` that
// share a group of `above` (all pairs when above is null or no pair does).
double flow_cost(const Costs& costs, const LinkLevel& level, const LinkLevel* above) {
  const std::vector<int> reps = first_members(level);
  double inside = 0, any = 0;
  long long inside_pairs = 0, any_pairs = 0;
  for (std::size_t a = 0; a < reps.size(); ++a) {
    for (std::size_t b = a + 1; b < reps.size(); ++b) {
      const double c = costs.cost(OldRank(reps[a]), OldRank(reps[b]));
      any += c;
      ++any_pairs;
      if (above != nullptr && above->group_of[static_cast<std::size_t>(reps[a])] ==
                                  above->group_of[static_cast<std::size_t>(reps[b])]) {
        inside += c;
        ++inside_pairs;
      }
    }
  }
  if (inside_pairs > 0) return inside / static_cast<double>(inside_pairs);
  return any_pairs > 0 ? any / static_cast<double>(any_pairs) : 0.0;
}

// The partition of the ranks that labels gives, as labels renumbered in
// order of first appearance (two labellings of one partition compare equal).
std::vector<int> partition(std::vector<int> labels) {
  renumber(labels);
  return labels;
}

// Parents from the next level up, when it nests the level's groups (every
// member of a group in one group above).
void set_parents(LinkLevel& level, const LinkLevel& above) {
  std::vector<int> parent(static_cast<std::size_t>(level.groups), -1);
  for (std::size_t r = 0; r < level.group_of.size(); ++r) {
    int& p = parent[static_cast<std::size_t>(level.group_of[r])];
    if (p < 0) p = above.group_of[r];
    if (p != above.group_of[r]) return;  // not nested: the whole job is the parent
  }
  level.parent_of = std::move(parent);
  level.parents = above.groups;
}

// The fabric costs a structured file gives (as fractions of the flow
// cost), on the levels that group the ranks as its nodes and racks do.
void set_fabrics(const Costs& costs, std::vector<LinkLevel>& levels) {
  const auto* structured = dynamic_cast<const StructuredCosts*>(&costs);
  if (structured == nullptr) return;
  const StructuredSpec& spec = structured->spec();
  if (spec.node_fabric == 0 && spec.rack_fabric == 0) return;
  std::vector<int> node(spec.ranks.size()), rack(spec.ranks.size());
  for (std::size_t r = 0; r < spec.ranks.size(); ++r) {
    node[r] = spec.ranks[r].node;
    rack[r] = structured->rack_of(spec.ranks[r].node);
  }
  node = partition(std::move(node));
  rack = partition(std::move(rack));
  // Groups are numbered in order of first member already (link_levels()),
  // so equal partitions are equal vectors. With one node per rack the
  // nodes' level is also the racks': the nodes' fabric then.
  for (LinkLevel& level : levels) {
    if (level.group_of == node) {
      level.fabric_cost = spec.node_fabric * level.flow_cost;
    } else if (spec.racks > 1 && level.group_of == rack) {
      level.fabric_cost = spec.rack_fabric * level.flow_cost;
    }
  }
}

}  // namespace

std::vector<std::vector<int>> groupings_by_gaps(const std::vector<double>& costs, int n) {
  if (n < 0 || costs.size() != static_cast<std::size_t>(n) * static_cast<std::size_t>(n)) {
    throw std::invalid_argument("groupings_by_gaps: " + std::to_string(costs.size()) +
                                " costs for " + std::to_string(n) + " items");
  }
  if (n < 3) return {};  // one pair or none: no jump to find
  const auto at = [&](int a, int b) {
    return costs[static_cast<std::size_t>(a) * static_cast<std::size_t>(n) +
                 static_cast<std::size_t>(b)];
  };
  std::vector<double> values;
  values.reserve(static_cast<std::size_t>(n) * static_cast<std::size_t>(n - 1) / 2);
  for (int a = 0; a < n; ++a) {
    for (int b = a + 1; b < n; ++b) values.push_back(at(a, b));
  }
  std::sort(values.begin(), values.end());
  // The largest jump among values[0 .. end), as the value below it.
  const auto largest_jump = [&](std::size_t end) -> std::optional<std::size_t> {
    double best_ratio = kMinLevelGap;
    std::optional<std::size_t> at_index;
    for (std::size_t j = 0; j + 1 < end; ++j) {
      const double lo = values[j], hi = values[j + 1];
      if (hi <= lo) continue;
      const double ratio = lo > 0 ? hi / lo : std::numeric_limits<double>::infinity();
      if (ratio >= best_ratio) {
        best_ratio = ratio;
        at_index = j;
      }
    }
    return at_index;
  };
  // The largest jump first, then the largest below it, and so on: a finer
  // level (nodes under racks) whose jump is smaller than a coarser one's.
  std::vector<double> thresholds;
  for (std::size_t end = values.size();
       thresholds.size() < static_cast<std::size_t>(kMaxDetectedLevels);) {
    const std::optional<std::size_t> j = largest_jump(end);
    if (!j) break;
    thresholds.push_back(values[*j]);
    end = *j + 1;
  }
  std::vector<std::vector<int>> out;
  int finer_groups = n;
  for (auto t = thresholds.rbegin(); t != thresholds.rend(); ++t) {
    std::vector<int> parent(static_cast<std::size_t>(n));
    std::iota(parent.begin(), parent.end(), 0);
    for (int a = 0; a < n; ++a) {
      for (int b = a + 1; b < n; ++b) {
        if (at(a, b) <= *t) parent[find_root(parent, a)] = find_root(parent, b);
      }
    }
    std::vector<int> labels(static_cast<std::size_t>(n));
    for (int a = 0; a < n; ++a) labels[a] = find_root(parent, a);
    const int groups = renumber(labels);
    if (groups < 2 || groups >= finer_groups) continue;
    // A group of one is no level of a machine but an outlier of the
    // measurement (4 racks whose costs differ by contention give 3 groups).
    std::vector<int> size(static_cast<std::size_t>(groups), 0);
    for (int l : labels) ++size[static_cast<std::size_t>(l)];
    if (*std::min_element(size.begin(), size.end()) < 2) continue;
    finer_groups = groups;
    out.push_back(std::move(labels));
  }
  return out;
}

void check_level(const LinkLevel& level, int p) {
  if (level.group_of.size() != static_cast<std::size_t>(p)) {
    throw std::invalid_argument("a link level places " + std::to_string(level.group_of.size()) +
                                " ranks, expected " + std::to_string(p));
  }
  if (level.groups < 1) {
    throw std::invalid_argument("a link level has " + std::to_string(level.groups) + " groups");
  }
  for (int g : level.group_of) {
    if (g < 0 || g >= level.groups) {
      throw std::invalid_argument("a link level puts a rank in group " + std::to_string(g) +
                                  ", outside 0.." + std::to_string(level.groups - 1));
    }
  }
  check_cost("a link level's flow cost", level.flow_cost);
  check_cost("a link level's fabric cost", level.fabric_cost);
  if (level.parents < 1 || (level.parent_of.empty() && level.parents != 1) ||
      (!level.parent_of.empty() &&
       level.parent_of.size() != static_cast<std::size_t>(level.groups))) {
    throw std::invalid_argument(
        "a link level of " + std::to_string(level.groups) + " groups has parents for " +
        std::to_string(level.parent_of.size()) + " of them in " + std::to_string(level.parents));
  }
  for (int parent : level.parent_of) {
    if (parent < 0 || parent >= level.parents) {
      throw std::invalid_argument("a link level puts a group in parent " + std::to_string(parent) +
                                  ", outside 0.." + std::to_string(level.parents - 1));
    }
  }
}

std::vector<LinkLevel> link_levels(const Costs& costs, const std::vector<std::vector<int>>& known) {
  const int p = costs.size();
  std::vector<LinkLevel> levels;
  for (std::size_t j = 0; j < known.size(); ++j) {
    if (known[j].size() != static_cast<std::size_t>(p)) {
      throw std::invalid_argument("level " + std::to_string(j) + " places " +
                                  std::to_string(known[j].size()) + " ranks, the costs have " +
                                  std::to_string(p));
    }
    LinkLevel level;
    level.group_of = known[j];
    level.groups = renumber(level.group_of);
    if (level.groups >= 2 && level.groups < p) levels.push_back(std::move(level));
  }
  // Coarser levels from the costs between the top level's groups.
  LinkLevel top;
  if (!levels.empty()) {
    top = levels.back();
  } else if (p <= kMaxGapItems) {
    top.group_of.resize(static_cast<std::size_t>(p));
    std::iota(top.group_of.begin(), top.group_of.end(), 0);
    top.groups = p;
  }
  for (int added = 0; added < kMaxDetectedLevels && top.groups > 2 && top.groups <= kMaxGapItems;) {
    const std::vector<int> reps = first_members(top);
    const int g = top.groups;
    std::vector<double> between(static_cast<std::size_t>(g) * static_cast<std::size_t>(g), 0.0);
    for (int a = 0; a < g; ++a) {
      for (int b = 0; b < g; ++b) {
        if (a != b) {
          between[static_cast<std::size_t>(a) * static_cast<std::size_t>(g) +
                  static_cast<std::size_t>(b)] = costs.cost(OldRank(reps[a]), OldRank(reps[b]));
        }
      }
    }
    const std::vector<std::vector<int>> found = groupings_by_gaps(between, g);
    if (found.empty()) break;
    LinkLevel next;
    for (const std::vector<int>& coarse : found) {
      if (added == kMaxDetectedLevels) break;
      next.group_of.resize(top.group_of.size());
      for (std::size_t r = 0; r < top.group_of.size(); ++r) {
        next.group_of[r] = coarse[static_cast<std::size_t>(top.group_of[r])];
      }
      next.groups = renumber(next.group_of);
      next.detected = true;
      levels.push_back(next);
      ++added;
    }
    top = std::move(next);
  }
  for (std::size_t l = 0; l < levels.size(); ++l) {
    levels[l].flow_cost =
        flow_cost(costs, levels[l], l + 1 < levels.size() ? &levels[l + 1] : nullptr);
    if (l + 1 < levels.size()) set_parents(levels[l], levels[l + 1]);
  }
  set_fabrics(costs, levels);
  return levels;
}

std::vector<double> link_load(const Grid& grid, const Labelling& labelling,
                              const std::vector<LinkLevel>& levels, std::vector<double>* spread) {
  const int p = grid.size();
  if (labelling.size() != p) {
    throw std::invalid_argument("size mismatch: grid of " + std::to_string(p) +
                                " positions, labelling of " + std::to_string(labelling.size()));
  }
  for (const LinkLevel& level : levels) check_level(level, p);
  std::vector<double> result(static_cast<std::size_t>(grid.ndims()), 0.0);
  if (spread) spread->assign(static_cast<std::size_t>(grid.ndims()), 0.0);
  std::vector<int> members;
  for (int k = 0; k < grid.ndims(); ++k) {
    const int q = grid.dim(k);
    if (q == 1) continue;
    for (const LinkLevel& level : levels) {
      std::vector<std::int64_t> load(static_cast<std::size_t>(level.groups), 0);  // times q
      for (int f = 0; f < grid.fibre_count(k); ++f) {
        members.clear();
        for (int t = 0; t < q; ++t) {
          const OldRank old = labelling.old_of(grid.fibre_member(k, f, t));
          members.push_back(level.group_of[static_cast<std::size_t>(old.value())]);
        }
        for_each_group_share(members, [&](int g, std::int64_t share) {
          load[static_cast<std::size_t>(g)] += share;
        });
      }
      const std::int64_t worst = *std::max_element(load.begin(), load.end());
      if (spread) {
        std::int64_t sum = 0;
        for (std::int64_t x : load) sum += x;
        (*spread)[static_cast<std::size_t>(k)] += level.flow_cost * static_cast<double>(sum) / q;
      }
      result[static_cast<std::size_t>(k)] = std::max(
          result[static_cast<std::size_t>(k)], level.flow_cost * static_cast<double>(worst) / q);
    }
  }
  return result;
}

}  // namespace rankshape
