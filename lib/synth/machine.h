// Synthetic hierarchical machines with known structure: racks x nodes x
// sockets x cores, one cost per level, optional noise, and a placement of
// ranks on cores. They are the planted instances against which relabelling
// and measurement are checked: the best fibres are known by construction.
//
// Example: 2 racks x 2 nodes x 1 socket x 2 cores, costs (socket 1, node 2,
// rack 10, network 40), block placement: ranks 0,1 share a socket (cost 1);
// ranks 0 and 2 are on different nodes of rack 0 (10); ranks 0 and 4 are in
// different racks (40). Round-robin places rank r on node r mod 4.
#ifndef RANKSHAPE_LIB_SYNTH_MACHINE_H_
#define RANKSHAPE_LIB_SYNTH_MACHINE_H_

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "lib/model/costs.h"
#include "lib/model/labelling.h"
#include "lib/model/placement.h"
#include "lib/util/random.h"

namespace rankshape {

enum class RankOrder {
  kBlock,       // consecutive ranks fill a node, then the next
  kRoundRobin,  // consecutive ranks go to consecutive nodes
  kRandom,      // a random scramble of the block order
};

/// Parses "block", "round-robin" or "random".
RankOrder parse_rank_order(std::string_view text);
std::string rank_order_name(RankOrder order);

struct MachineSpec {
  int racks = 1;
  int nodes_per_rack = 1;
  int sockets_per_node = 1;
  int cores_per_socket = 1;
  // Cost between two ranks whose closest common level is...
  double same_socket = 1;  // ...one socket (different cores)
  double same_node = 2;    // ...one node (different sockets)
  double same_rack = 10;   // ...one rack (different nodes)
  double other_rack = 40;  // ...the whole machine (different racks)
  /// Relative noise: every cost is multiplied by 1 + noise * u, u uniform in
  /// [-1, 1], independently per pair of cores in a node and per pair of
  /// nodes (symmetric). 0 = exact. Must be in [0, 1).
  double noise = 0;
  RankOrder order = RankOrder::kBlock;
  std::uint64_t seed = 1;
};

/// The shape of a machine with the default level costs, in one call.
inline MachineSpec machine_shape(int racks, int nodes_per_rack, int sockets_per_node,
                                 int cores_per_socket, RankOrder order = RankOrder::kBlock) {
  MachineSpec m;
  m.racks = racks;
  m.nodes_per_rack = nodes_per_rack;
  m.sockets_per_node = sockets_per_node;
  m.cores_per_socket = cores_per_socket;
  m.order = order;
  return m;
}

struct SyntheticMachine {
  StructuredCosts costs;
  Placement placement;  // host names "r<rack>n<node>" (or "n<node>" with one rack)
};

/// Limits that keep the generated machine in memory: the core matrix is
/// cores^2 doubles (128 MiB at the limit), the rack matrix racks^2 doubles
/// (128 MiB), the noisy node matrix nodes^2 floats (1 GiB), and every rank
/// has a location and a host name (about 100 bytes, 400 MiB at the limit).
constexpr std::int64_t kMaxCoresPerNode = 4096;
constexpr std::int64_t kMaxRacks = 4096;
constexpr std::int64_t kMaxNoisyNodes = 16384;
constexpr std::int64_t kMaxSyntheticRanks = std::int64_t{1} << 22;

/// Throws std::invalid_argument for non-positive counts, negative costs,
/// noise outside [0, 1), or the limits above.
SyntheticMachine generate_machine(const MachineSpec& spec);

/// base x (1 + noise x u), u uniform in [-1, 1] from rng; base, drawing
/// nothing, when noise is 0. Both generators' noise.
double noisy_cost(double base, double noise, SplitMix64& rng);

/// The costs between the cores of one node, row-major (cores x cores, 0 on
/// the diagonal): same_socket between cores of one socket of per_socket
/// cores, same_node across sockets, each pair's passed through noisy once
/// (a < b in order). Both generators share it.
std::vector<double> core_cost_matrix(int cores, int per_socket, double same_socket,
                                     double same_node, const std::function<double(double)>& noisy);

/// The labelling that lists ranks in machine order (node by node, core by
/// core within a node): new rank i is the rank on the i-th core. For a
/// scrambled placement of a full machine this is the planted answer, the
/// block order the scramble destroyed.
Labelling block_order(const StructuredCosts& costs);

}  // namespace rankshape

#endif  // RANKSHAPE_LIB_SYNTH_MACHINE_H_
