// Irregular synthetic machines: what real allocations look like and planted
// machines are not. Nodes may hold different numbers of ranks (100 ranks on
// 48-core nodes: 48, 48, 4), racks ("islands") may hold different numbers
// of nodes, nodes may sit on a torus with no hierarchy at all, some nodes
// may have slower links, and every cost may carry noise. They are the
// instances on which relabelling is benchmarked beyond the aligned planted
// machines (bench/irregular_bench.sh).
//
// Example: node_ranks {3, 3, 2}, islands {2, 1}, costs (socket 1, node 2,
// rack 10, network 40), block placement: ranks 0-2 on node 0, 3-5 on node
// 1, 6-7 on node 2; nodes 0 and 1 form island 0, node 2 island 1. Ranks 0
// and 3 cost 10 (one island), ranks 0 and 6 cost 40. With torus {2, 2}
// instead of islands (4 nodes), nodes 0 and 3 are two hops apart and cost
// 2 x 10.
#ifndef RANKSHAPE_LIB_SYNTH_IRREGULAR_H_
#define RANKSHAPE_LIB_SYNTH_IRREGULAR_H_

#include <cstdint>
#include <string_view>
#include <vector>

#include "lib/synth/machine.h"

namespace rankshape {

struct IrregularSpec {
  /// Ranks on each node, at least 1 each; a node has as many cores as the
  /// fullest node, split evenly over its sockets.
  std::vector<int> node_ranks;
  int sockets_per_node = 1;
  /// Nodes per island (rack), in node order; they must add up to the node
  /// count. Empty: one island.
  std::vector<int> islands;
  /// Nodes on a torus of these dimensions (their product is the node
  /// count), with no islands: two nodes h hops apart cost h x same_rack.
  std::vector<int> torus;
  /// This many nodes, chosen at random, have links slow_factor times
  /// dearer: a pair of nodes costs its base cost times the larger factor.
  int slow_nodes = 0;
  double slow_factor = 2;
  double same_socket = 1;
  double same_node = 2;
  double same_rack = 10;   // nodes of one island; one hop on a torus
  double other_rack = 40;  // nodes of different islands
  double noise = 0;        // as MachineSpec::noise
  RankOrder order = RankOrder::kBlock;
  std::uint64_t seed = 1;
};

/// Parses a count list: comma-separated items N or N*K (K times N), each a
/// whole number >= 1, e.g. "48*2,4" = {48, 48, 4}. Throws
/// std::invalid_argument naming `what` and the bad item.
std::vector<int> parse_count_list(std::string_view text, std::string_view what);

/// Throws std::invalid_argument for an empty or non-positive node list,
/// islands that do not add up to the nodes, a torus whose size is not the
/// node count or that comes with islands, more slow nodes than nodes, a
/// slow factor below 1, negative costs, noise outside [0, 1), or the
/// limits of machine.h. Host names are "r<island>n<node in island>" ("n<node>"
/// with one island or a torus).
SyntheticMachine generate_irregular(const IrregularSpec& spec);

}  // namespace rankshape

#endif  // RANKSHAPE_LIB_SYNTH_IRREGULAR_H_
