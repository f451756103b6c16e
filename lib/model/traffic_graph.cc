#include "lib/model/traffic_graph.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>

namespace rankshape {
namespace {

std::string edge_name(const WeightedEdge& e) {
  return "edge " + std::to_string(e.a) + " - " + std::to_string(e.b);
}

// Largest total the units may reach: loads, which count an edge at both of
// its groups, then stay below 2^61.
constexpr double kMaxTotalUnits = 1152921504606846976.0;  // 2^60

}  // namespace

TrafficGraph::TrafficGraph(int vertices, std::vector<WeightedEdge> edges) {
  if (vertices < 1 || vertices > kMaxVertices) {
    throw std::invalid_argument("a traffic graph needs 1 to " + std::to_string(kMaxVertices) +
                                " vertices, got " + std::to_string(vertices));
  }
  double total = 0;
  for (WeightedEdge& e : edges) {
    if (e.a < 0 || e.a >= vertices || e.b < 0 || e.b >= vertices) {
      throw std::invalid_argument(edge_name(e) + " names a vertex outside 0.." +
                                  std::to_string(vertices - 1));
    }
    if (e.a == e.b) throw std::invalid_argument(edge_name(e) + " joins a vertex to itself");
    if (!(e.weight >= 0) || !std::isfinite(e.weight)) {
      throw std::invalid_argument(edge_name(e) + " has weight " + std::to_string(e.weight) +
                                  ": weights must be finite and >= 0");
    }
    if (e.a > e.b) std::swap(e.a, e.b);
    total += e.weight;
  }
  if (!std::isfinite(total)) throw std::invalid_argument("the edge weights add up to infinity");
  std::sort(edges.begin(), edges.end(), [](const WeightedEdge& x, const WeightedEdge& y) {
    return x.a != y.a ? x.a < y.a : x.b < y.b;
  });
  // Merge repeats.
  std::size_t kept = 0;
  for (std::size_t i = 0; i < edges.size(); ++i) {
    if (kept > 0 && edges[kept - 1].a == edges[i].a && edges[kept - 1].b == edges[i].b) {
      edges[kept - 1].weight += edges[i].weight;
    } else {
      edges[kept++] = edges[i];
    }
  }
  edges.resize(kept);
  edges.erase(std::remove_if(edges.begin(), edges.end(),
                             [](const WeightedEdge& e) { return e.weight == 0; }),
              edges.end());
  while (total / unit_weight_ > kMaxTotalUnits) unit_weight_ *= 2;

  std::vector<std::size_t> degree(static_cast<std::size_t>(vertices), 0);
  for (const WeightedEdge& e : edges) {
    ++degree[static_cast<std::size_t>(e.a)];
    ++degree[static_cast<std::size_t>(e.b)];
  }
  offsets_.assign(static_cast<std::size_t>(vertices) + 1, 0);
  for (int x = 0; x < vertices; ++x) offsets_[x + 1] = offsets_[x] + degree[x];
  neighbours_.resize(offsets_.back());
  units_.resize(offsets_.back());
  std::vector<std::size_t> next(offsets_.begin(), offsets_.end() - 1);
  // Edges sorted by (a, b) fill every list in neighbour order: x's smaller
  // neighbours (edges (a, x)) come before its larger ones (edges (x, b)).
  for (const WeightedEdge& e : edges) {
    const auto u = std::max<std::int64_t>(1, std::llround(e.weight / unit_weight_));
    total_units_ += u;
    neighbours_[next[e.a]] = e.b;
    units_[next[e.a]++] = u;
    neighbours_[next[e.b]] = e.a;
    units_[next[e.b]++] = u;
  }
}

double TrafficGraph::vertex_weight(int x) const {
  std::int64_t sum = 0;
  for (std::size_t i = begin(x); i < end(x); ++i) sum += units_[i];
  return static_cast<double>(sum) * unit_weight_;
}

}  // namespace rankshape
