// Pairwise communication costs between the ranks of a job.
//
// Two representations behind one interface:
//  - DenseCosts: a symmetric p x p matrix, for measured small jobs;
//  - StructuredCosts: a hierarchical machine (racks, nodes, cores) plus the
//    placement of every rank, for large jobs. 65,536 ranks on 1,024 nodes of
//    64 cores take well under 1 MB with rack-level costs, ~4.5 MB with a full
//    node-to-node matrix (stored as float).
#ifndef RANKSHAPE_LIB_MODEL_COSTS_H_
#define RANKSHAPE_LIB_MODEL_COSTS_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "lib/model/rank.h"

namespace rankshape {

/// Largest cost accepted. Objectives add up to about 1e16 costs (every
/// pair of a fibre, every fibre, every dimension): below this, no sum
/// overflows to infinity, where every labelling would look the same.
constexpr double kMaxCost = 1e280;
/// "is C, above the largest cost accepted (...)": the end of a message
/// naming a cost above kMaxCost.
std::string cost_too_large_message(double cost);
/// Throws std::invalid_argument naming `what` unless value is finite,
/// >= 0 and at most `most`.
void check_cost(const std::string& what, double value, double most = kMaxCost);
/// Largest node-fabric or rack-fabric accepted: a fabric a million times
/// narrower than one link is no machine's.
constexpr double kMaxFabric = 1e6;

/// Cost of communication between two ranks: symmetric, non-negative, finite,
/// at most kMaxCost, zero from a rank to itself. Units are the caller's
/// (seconds, bytes/s^-1..).
class Costs {
 public:
  virtual ~Costs() = default;
  /// Number of ranks p.
  virtual int size() const = 0;
  /// Cost between old ranks a and b (both in [0, p)).
  virtual double cost(OldRank a, OldRank b) const = 0;
  /// Bytes held by this representation, for memory budgets and reports.
  virtual std::size_t memory_bytes() const = 0;
};

/// A dense symmetric matrix, stored in full for fast row access.
class DenseCosts final : public Costs {
 public:
  /// Largest p accepted: beyond this a dense matrix needs more than 2 GiB;
  /// use StructuredCosts instead.
  static constexpr int kMaxRanks = 16384;

  /// Takes a row-major p x p matrix. Throws std::invalid_argument if the
  /// matrix is not square, not symmetric, has a non-zero diagonal, or holds a
  /// negative, NaN, infinite or above-kMaxCost entry (the message names the
  /// entry).
  DenseCosts(int p, std::vector<double> row_major);

  /// For matrices symmetric, finite and non-negative by construction (the
  /// averages of valid costs): skips the O(p^2) validation, which dominates
  /// the multilevel search's coarsening otherwise. Only the size is checked.
  struct Trusted {};
  DenseCosts(int p, std::vector<double> row_major, Trusted);

  int size() const override { return p_; }
  double cost(OldRank a, OldRank b) const override {
    return values_[static_cast<std::size_t>(a.value()) * p_ + b.value()];
  }
  std::size_t memory_bytes() const override { return values_.size() * sizeof(double); }
  /// Row a of the matrix (p entries).
  const double* row(OldRank a) const {
    return values_.data() + static_cast<std::size_t>(a.value()) * p_;
  }

 private:
  int p_;
  std::vector<double> values_;
};

/// Where one rank runs: node index and core index within the node.
struct RankLocation {
  std::int32_t node = 0;
  std::int32_t core = 0;
};

/// Everything that defines a structured machine; validated by StructuredCosts.
///
/// cost(a, b) for a != b:
///   same node            -> core_costs[core a][core b]
///   else if node_costs   -> node_costs[node a][node b]
///   else                 -> rack_costs[rack of node a][rack of node b]
/// The diagonal of rack_costs is the cost between two different nodes of one
/// rack; the diagonal of core_costs is the cost between two ranks sharing a
/// core (oversubscription). node_costs' diagonal is unused.
struct StructuredSpec {
  int cores_per_node = 0;
  std::vector<double> core_costs;  // cores_per_node^2, symmetric
  int nodes = 0;
  std::vector<float> node_costs;  // nodes^2 or empty
  int racks = 1;
  std::vector<std::int32_t> node_rack;  // rack of each node; empty = all rack 0
  std::vector<double> rack_costs;       // racks^2; required if node_costs empty
  std::vector<RankLocation> ranks;      // location of each old rank
  /// The fabrics narrower than the links into them (LinkLevel::
  /// fabric_cost), as fractions of one message alone: what one message
  /// leaving a node costs the fabric that joins the nodes of its rack (of
  /// the machine, with one rack) when they all send at once, over what a
  /// message between two of those nodes costs alone; rack_fabric the same
  /// between racks. 0: none known. measure_fabric() measures node_fabric.
  double node_fabric = 0;
  double rack_fabric = 0;
};

class StructuredCosts final : public Costs {
 public:
  /// Validates the spec; throws std::invalid_argument naming the problem.
  explicit StructuredCosts(StructuredSpec spec);

  int size() const override { return static_cast<int>(spec_.ranks.size()); }
  double cost(OldRank a, OldRank b) const override {
    if (a == b) return 0.0;
    const RankLocation& la = spec_.ranks[a.value()];
    const RankLocation& lb = spec_.ranks[b.value()];
    if (la.node == lb.node) {
      return spec_.core_costs[static_cast<std::size_t>(la.core) * spec_.cores_per_node + lb.core];
    }
    return node_cost(la.node, lb.node);
  }
  /// Cost between two different nodes.
  double node_cost(int node_a, int node_b) const {
    if (!spec_.node_costs.empty()) {
      return spec_.node_costs[static_cast<std::size_t>(node_a) * spec_.nodes + node_b];
    }
    return spec_
        .rack_costs[static_cast<std::size_t>(rack_of(node_a)) * spec_.racks + rack_of(node_b)];
  }
  int rack_of(int node) const { return spec_.node_rack.empty() ? 0 : spec_.node_rack[node]; }
  std::size_t memory_bytes() const override;
  const StructuredSpec& spec() const { return spec_; }
  const RankLocation& location(OldRank r) const { return spec_.ranks[r.value()]; }

 private:
  StructuredSpec spec_;
};

/// Calls f with the concrete type of costs, so that hot loops inline
/// cost() instead of paying a virtual call per pair.
template <class F>
decltype(auto) visit_costs(const Costs& costs, F&& f) {
  if (const auto* dense = dynamic_cast<const DenseCosts*>(&costs)) return f(*dense);
  if (const auto* structured = dynamic_cast<const StructuredCosts*>(&costs)) return f(*structured);
  return f(costs);
}

/// Materialises any costs as a dense matrix. Throws std::invalid_argument if
/// p exceeds DenseCosts::kMaxRanks.
DenseCosts to_dense(const Costs& costs);

}  // namespace rankshape

#endif  // RANKSHAPE_LIB_MODEL_COSTS_H_
