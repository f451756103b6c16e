// Scotch (Pellegrini) as a peer: its static mapping of the grid's
// communication graph onto the machine. For fibres the guest graph has a
// clique per fibre, so Scotch minimises the sum over all fibres of their
// pair costs (rankshape's "total" objective); for a stencil it is the
// stencil's neighbour graph, each edge weighing its messages' weights; for a
// traffic graph, that graph (weights scaled to Scotch's 32-bit integers). The target is a tree-leaf
// architecture (racks, nodes, cores) for a structured machine with rack-level costs, equal racks
// and every core used, or a decomposition-defined architecture built from the cost matrix
// otherwise (up to kMaxScotchDense ranks: Scotch computes all distances). Inside a
// node the tree has one cost, the mean core cost: sockets are not seen.
#ifndef RANKSHAPE_LIB_RELABEL_SCOTCH_MAP_H_
#define RANKSHAPE_LIB_RELABEL_SCOTCH_MAP_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "lib/model/costs.h"
#include "lib/model/grid.h"
#include "lib/model/labelling.h"
#include "lib/model/pattern.h"
#include "lib/model/traffic_graph.h"

namespace rankshape {

constexpr int kMaxScotchDense = 4096;

struct ScotchOutcome {
  Labelling labelling;
  /// Positions Scotch put on an already used terminal, moved to free ones
  /// so that the answer is a permutation (0 with a strict balance).
  int repaired = 0;
  std::string target;  // "tleaf ..." or "deco"
};

/// Throws std::invalid_argument when the machine has no Scotch target
/// (above kMaxScotchDense ranks, a machine that is not a regular tree or dense costs), and
/// std::runtime_error naming the Scotch call that failed.
/// The guest graph: the stencil's neighbours (on grid) when stencil is
/// given, the traffic graph when graph is, else the fibres' cliques.
struct ScotchGuest {
  const Stencil* stencil = nullptr;
  const TrafficGraph* graph = nullptr;
};
ScotchOutcome scotch_map(const Costs& costs, const Grid& grid, std::uint64_t seed,
                         ScotchGuest guest = {});

/// scotch_map() in a child process killed after `seconds` (in_child.h), so
/// that a time budget holds although Scotch's mapping is one call that
/// cannot stop early: nothing when it did not finish in time. Throws what
/// scotch_map() throws. `child_peak_bytes`, when given, receives the child's
/// peak resident memory.
std::optional<ScotchOutcome> scotch_map_within(const Costs& costs, const Grid& grid,
                                               std::uint64_t seed, double seconds,
                                               std::size_t* child_peak_bytes = nullptr,
                                               ScotchGuest guest = {});

}  // namespace rankshape

#endif  // RANKSHAPE_LIB_RELABEL_SCOTCH_MAP_H_
