// A program's traffic as a weighted graph over its ranks: the "graph"
// pattern's input (lib/model/objective.h). Vertex x is the program's rank x
// (a new rank: the position a labelling fills); an edge's weight is what
// the pair sends in both directions together (lib/io/traffic.h makes it
// from bytes and messages).
//
// Weights are held in whole units (unit_weight() each), so that link loads
// add and subtract exactly under incremental evaluation. The unit is 1
// unless the weights add up to more than 2^60; then it is the power of two
// that brings the total under 2^60, every weight rounded to it (at least
// one unit, so no edge vanishes).
//
// Example: vertices 3, edges {0,1,5} {1,0,2} {1,2,1}: the duplicate pair is
// summed, giving adjacency 0: (1, 7); 1: (0, 7) (2, 1); 2: (1, 1).
#ifndef RANKSHAPE_LIB_MODEL_TRAFFIC_GRAPH_H_
#define RANKSHAPE_LIB_MODEL_TRAFFIC_GRAPH_H_

#include <cstddef>
#include <cstdint>
#include <vector>

namespace rankshape {

struct WeightedEdge {
  int a = 0;
  int b = 0;
  double weight = 0;
};

class TrafficGraph {
 public:
  /// Most vertices a graph may have.
  static constexpr int kMaxVertices = 1 << 24;

  /// Builds the symmetric graph: both orders of a pair and repeats are
  /// summed, zero weights dropped. Throws std::invalid_argument for a
  /// vertex count outside [1, kMaxVertices], an end outside [0, vertices),
  /// an edge from a vertex to itself, or a weight that is negative or not
  /// finite (the message names the edge).
  TrafficGraph(int vertices, std::vector<WeightedEdge> edges);

  int vertices() const { return static_cast<int>(offsets_.size()) - 1; }
  /// Undirected edges.
  std::int64_t edges() const { return static_cast<std::int64_t>(neighbours_.size()) / 2; }
  /// The adjacency of x is the entries [begin(x), end(x)), sorted by
  /// neighbour: neighbour(i) and units(i).
  std::size_t begin(int x) const { return offsets_[static_cast<std::size_t>(x)]; }
  std::size_t end(int x) const { return offsets_[static_cast<std::size_t>(x) + 1]; }
  int degree(int x) const { return static_cast<int>(end(x) - begin(x)); }
  int neighbour(std::size_t i) const { return neighbours_[i]; }
  std::int64_t units(std::size_t i) const { return units_[i]; }
  double weight(std::size_t i) const { return static_cast<double>(units_[i]) * unit_weight_; }
  double unit_weight() const { return unit_weight_; }
  /// The sum of all edge weights (each edge once).
  double total_weight() const { return static_cast<double>(total_units_) * unit_weight_; }
  /// What x sends and receives in all: the sum of its edges' weights.
  double vertex_weight(int x) const;

 private:
  std::vector<std::size_t> offsets_;
  std::vector<int> neighbours_;
  std::vector<std::int64_t> units_;
  double unit_weight_ = 1;
  std::int64_t total_units_ = 0;
};

}  // namespace rankshape

#endif  // RANKSHAPE_LIB_MODEL_TRAFFIC_GRAPH_H_
