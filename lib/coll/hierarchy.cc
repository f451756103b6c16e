#include "lib/coll/hierarchy.h"

#include <algorithm>
#include <charconv>
#include <functional>
#include <map>
#include <numeric>
#include <stdexcept>
#include <string>

#include "lib/mpi/error.h"

namespace rankshape::coll {
namespace {

// MPI_Comm_split that leaves non-members (color < 0) without a communicator.
std::optional<mpi::Communicator> split(MPI_Comm comm, int color, int key) {
  MPI_Comm out = MPI_COMM_NULL;
  mpi::check(MPI_Comm_split(comm, color < 0 ? MPI_UNDEFINED : color, key, &out), "MPI_Comm_split");
  if (out == MPI_COMM_NULL) return std::nullopt;
  return mpi::Communicator(out, mpi::Ownership::kTake);
}

// Group ids renumbered 0, 1, ... in order of their lowest rank.
std::vector<int> normalised(const std::vector<int>& groups) {
  std::map<int, int> index;
  std::vector<int> out;
  out.reserve(groups.size());
  for (int g : groups)
    out.push_back(index.emplace(g, static_cast<int>(index.size())).first->second);
  return out;
}

}  // namespace

std::vector<std::vector<int>> Hierarchy::node_groups(MPI_Comm comm) {
  const mpi::Communicator c(comm, mpi::Ownership::kBorrow);
  const mpi::Communicator node = c.split_by_node();
  // A node is named by its lowest rank.
  int lowest = c.rank();
  mpi::check(MPI_Allreduce(MPI_IN_PLACE, &lowest, 1, MPI_INT, MPI_MIN, node.get()),
             "MPI_Allreduce");
  return {c.allgather(lowest)};
}

std::vector<std::vector<int>> Hierarchy::pretend_groups(const std::string& spec, int size) {
  const std::size_t colon = spec.find(':');
  const std::string kind = spec.substr(0, colon);
  int n = 0;
  const char* first = spec.data() + (colon == std::string::npos ? spec.size() : colon + 1);
  const char* last = spec.data() + spec.size();
  const auto [ptr, ec] = std::from_chars(first, last, n);
  if (colon == std::string::npos || (kind != "blocks" && kind != "dealt") || ec != std::errc() ||
      ptr != last || n < 1) {
    throw std::invalid_argument("'" + spec + "': expected blocks:N or dealt:N with N >= 1");
  }
  std::vector<int> groups(static_cast<std::size_t>(size));
  for (int r = 0; r < size; ++r) {
    groups[static_cast<std::size_t>(r)] = kind == "blocks" ? r / n : r % n;
  }
  return {groups};
}

Hierarchy::Hierarchy(MPI_Comm comm, std::vector<std::vector<int>> groups)
    : own_(mpi::Communicator(comm, mpi::Ownership::kBorrow).dup()), groups_(std::move(groups)) {
  mpi::check(MPI_Comm_size(comm, &size_), "MPI_Comm_size");
  mpi::check(MPI_Comm_rank(comm, &rank_), "MPI_Comm_rank");
  const auto p = static_cast<std::size_t>(size_);
  const int depth = static_cast<int>(groups_.size());
  for (auto& level : groups_) {
    if (level.size() != p) {
      throw std::invalid_argument("a group table has " + std::to_string(level.size()) +
                                  " entries for " + std::to_string(size_) + " ranks");
    }
    level = normalised(level);
  }
  // Nesting: one level j group lies inside one level j + 1 group.
  for (int j = 0; j + 1 < depth; ++j) {
    std::map<int, int> outer;
    for (std::size_t r = 0; r < p; ++r) {
      const auto [it, added] = outer.emplace(groups_[j][r], groups_[j + 1][r]);
      if (!added && it->second != groups_[j + 1][r]) {
        throw std::invalid_argument("group tables do not nest: a level " + std::to_string(j) +
                                    " group spans two level " + std::to_string(j + 1) + " groups");
      }
    }
  }
  // Leaders: the lowest rank of each group.
  leader_.assign(static_cast<std::size_t>(depth), std::vector<int>(p));
  for (int j = 0; j < depth; ++j) {
    std::map<int, int> lowest;
    for (std::size_t r = 0; r < p; ++r) lowest.emplace(groups_[j][r], static_cast<int>(r));
    for (std::size_t r = 0; r < p; ++r) leader_[j][r] = lowest[groups_[j][r]];
  }
  // Members and colour of every level (top: one colour).
  const auto member = [&](int j, std::size_t r) {
    return j == 0 || leader_[static_cast<std::size_t>(j - 1)][r] == static_cast<int>(r);
  };
  const auto colour = [&](int j, std::size_t r) {
    return j < depth ? groups_[static_cast<std::size_t>(j)][r] : 0;
  };
  rank_in_level_.assign(static_cast<std::size_t>(depth + 1), std::vector<int>(p, -1));
  levels_.clear();
  for (int j = 0; j <= depth; ++j) {
    std::map<int, int> next;
    for (std::size_t r = 0; r < p; ++r) {
      if (member(j, r)) rank_in_level_[j][r] = next[colour(j, r)]++;
    }
    const auto me = static_cast<std::size_t>(rank_);
    levels_.push_back(split(comm, member(j, me) ? colour(j, me) : -1, rank_));
    levels_down_.push_back(split(comm, member(j, me) ? colour(j, me) : -1, rank_));
  }
  rank_in_group_leaders_.assign(p, -1);
  int next_leader = 0;
  for (std::size_t r = 0; r < p; ++r) {
    if (member(std::min(depth, 1), r)) rank_in_group_leaders_[r] = next_leader++;
  }
  group_leaders_ =
      split(comm, member(std::min(depth, 1), static_cast<std::size_t>(rank_)) ? 0 : -1, rank_);
  // Hierarchical order, by expanding each top member down the levels.
  span_.assign(static_cast<std::size_t>(depth + 1), std::vector<int>(p, 0));
  // members[j][c]: the level j members of colour c, in rank order.
  std::vector<std::map<int, std::vector<int>>> members(static_cast<std::size_t>(depth + 1));
  for (int j = 0; j <= depth; ++j) {
    for (std::size_t r = 0; r < p; ++r) {
      if (member(j, r)) members[j][colour(j, r)].push_back(static_cast<int>(r));
    }
  }
  // expand(r, j): the comm ranks that r represents at level j: itself at
  // level 0; above, the members of the level j - 1 group it leads.
  std::vector<int> order;
  const std::function<void(int, int)> expand = [&](int r, int j) {
    const std::size_t before = order.size();
    if (j == 0) {
      order.push_back(r);
    } else {
      for (int q : members[j - 1][colour(j - 1, static_cast<std::size_t>(r))]) expand(q, j - 1);
    }
    span_[j][r] = static_cast<int>(order.size() - before);
  };
  for (int r : members[depth][0]) expand(r, depth);
  order_ = std::move(order);
  position_.assign(p, 0);
  for (std::size_t i = 0; i < p; ++i) position_[order_[i]] = static_cast<int>(i);
  for (std::size_t i = 0; i < p; ++i) ordered_ = ordered_ && order_[i] == static_cast<int>(i);
  int groups0 = depth > 0 ? *std::max_element(groups_[0].begin(), groups_[0].end()) + 1 : 1;
  useful_ = depth > 0 && groups0 > 1 && groups0 < size_;
}

int Hierarchy::span(int r, int j) const {
  return span_[static_cast<std::size_t>(j)][static_cast<std::size_t>(r)];
}

}  // namespace rankshape::coll
