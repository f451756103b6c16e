#include "lib/model/costs.h"

#include <cmath>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>

namespace rankshape {
namespace {

[[noreturn]] void fail(const std::string& message) { throw std::invalid_argument(message); }

std::string entry_name(const char* matrix, std::size_t i, std::size_t j) {
  std::ostringstream os;
  os << matrix << "[" << i << "][" << j << "]";
  return os.str();
}

template <class T>
void check_square_matrix(const char* name, const std::vector<T>& m, int n, bool zero_diagonal) {
  const auto un = static_cast<std::size_t>(n);
  if (m.size() != un * un) {
    fail(std::string(name) + " has " + std::to_string(m.size()) + " entries, expected " +
         std::to_string(n) + "x" + std::to_string(n));
  }
  for (std::size_t i = 0; i < un; ++i) {
    for (std::size_t j = 0; j < un; ++j) {
      const double v = m[i * un + j];
      if (std::isnan(v)) fail(entry_name(name, i, j) + " is NaN");
      if (std::isinf(v)) fail(entry_name(name, i, j) + " is infinite");
      if (v < 0) fail(entry_name(name, i, j) + " is negative (" + std::to_string(v) + ")");
      if (v > kMaxCost) fail(entry_name(name, i, j) + " " + cost_too_large_message(v));
      if (j > i && v != m[j * un + i]) {
        fail(entry_name(name, i, j) + " differs from " + entry_name(name, j, i) +
             ": costs must be symmetric");
      }
      if (zero_diagonal && i == j && v != 0) {
        fail(entry_name(name, i, j) + " is not zero: a rank costs nothing to itself");
      }
    }
  }
}

}  // namespace

void check_cost(const std::string& what, double value, double most) {
  if (!(value >= 0) || value > most) {
    std::ostringstream os;
    os << what << " " << value << " is not a cost (finite, >= 0, at most " << most << ")";
    fail(os.str());
  }
}

std::string cost_too_large_message(double cost) {
  std::ostringstream os;
  os << "is " << cost << ", above the largest cost accepted (" << kMaxCost
     << "): sums of such costs overflow; express costs in a larger unit";
  return os.str();
}

DenseCosts::DenseCosts(int p, std::vector<double> row_major)
    : p_(p), values_(std::move(row_major)) {
  if (p < 1) fail("a cost matrix needs at least one rank, got " + std::to_string(p));
  if (p > kMaxRanks) {
    fail("a dense cost matrix for " + std::to_string(p) + " ranks would need " +
         std::to_string(static_cast<double>(p) * p * 8 / (1 << 30)) + " GiB; the limit is " +
         std::to_string(kMaxRanks) + " ranks: use the structured form (nodes x cores) instead");
  }
  check_square_matrix("cost", values_, p, /*zero_diagonal=*/true);
}

DenseCosts::DenseCosts(int p, std::vector<double> row_major, Trusted)
    : p_(p), values_(std::move(row_major)) {
  if (p < 1 || values_.size() != static_cast<std::size_t>(p) * p) {
    fail("a trusted cost matrix needs p >= 1 and p * p entries");
  }
}

StructuredCosts::StructuredCosts(StructuredSpec spec) : spec_(std::move(spec)) {
  const StructuredSpec& s = spec_;
  if (s.cores_per_node < 1) fail("cores per node must be at least 1");
  if (s.nodes < 1) fail("the machine needs at least one node");
  if (s.racks < 1) fail("the machine needs at least one rack");
  if (s.ranks.empty()) fail("the machine has no ranks placed on it");
  if (s.ranks.size() > static_cast<std::size_t>(INT32_MAX)) fail("too many ranks");
  check_square_matrix("core-costs", s.core_costs, s.cores_per_node, /*zero_diagonal=*/false);
  if (!s.node_rack.empty()) {
    if (s.node_rack.size() != static_cast<std::size_t>(s.nodes)) {
      fail("node-racks lists " + std::to_string(s.node_rack.size()) + " nodes, expected " +
           std::to_string(s.nodes));
    }
    for (std::size_t n = 0; n < s.node_rack.size(); ++n) {
      if (s.node_rack[n] < 0 || s.node_rack[n] >= s.racks) {
        fail("node " + std::to_string(n) + " is in rack " + std::to_string(s.node_rack[n]) +
             ", outside [0, " + std::to_string(s.racks) + ")");
      }
    }
  }
  check_cost("node-fabric", s.node_fabric, kMaxFabric);
  check_cost("rack-fabric", s.rack_fabric, kMaxFabric);
  if (s.rack_fabric > 0 && s.racks == 1) fail("rack-fabric needs racks: the machine has one");
  if (s.node_costs.empty()) {
    if (s.rack_costs.empty()) fail("the machine needs node-costs or rack-costs");
    check_square_matrix("rack-costs", s.rack_costs, s.racks, /*zero_diagonal=*/false);
  } else {
    check_square_matrix("node-costs", s.node_costs, s.nodes, /*zero_diagonal=*/false);
    if (!s.rack_costs.empty()) {
      check_square_matrix("rack-costs", s.rack_costs, s.racks, /*zero_diagonal=*/false);
    }
  }
  for (std::size_t r = 0; r < s.ranks.size(); ++r) {
    const RankLocation& loc = s.ranks[r];
    if (loc.node < 0 || loc.node >= s.nodes) {
      fail("rank " + std::to_string(r) + " is on node " + std::to_string(loc.node) +
           ", outside [0, " + std::to_string(s.nodes) + ")");
    }
    if (loc.core < 0 || loc.core >= s.cores_per_node) {
      fail("rank " + std::to_string(r) + " is on core " + std::to_string(loc.core) +
           ", outside [0, " + std::to_string(s.cores_per_node) + ")");
    }
  }
}

std::size_t StructuredCosts::memory_bytes() const {
  return sizeof(*this) + spec_.core_costs.capacity() * sizeof(double) +
         spec_.node_costs.capacity() * sizeof(float) +
         spec_.node_rack.capacity() * sizeof(std::int32_t) +
         spec_.rack_costs.capacity() * sizeof(double) +
         spec_.ranks.capacity() * sizeof(RankLocation);
}

DenseCosts to_dense(const Costs& costs) {
  const int p = costs.size();
  if (p > DenseCosts::kMaxRanks) {
    fail("cannot make a dense matrix of " + std::to_string(p) + " ranks (limit " +
         std::to_string(DenseCosts::kMaxRanks) + ")");
  }
  std::vector<double> m(static_cast<std::size_t>(p) * p);
  for (int a = 0; a < p; ++a) {
    for (int b = 0; b < p; ++b) {
      m[static_cast<std::size_t>(a) * p + b] = costs.cost(OldRank(a), OldRank(b));
    }
  }
  return DenseCosts(p, std::move(m));
}

}  // namespace rankshape
