// Costs for large jobs without a p x p sweep: nodes from
// MPI_Comm_split_type(MPI_COMM_TYPE_SHARED), node-to-node costs measured by
// one rank per node, core-to-core costs measured inside one representative
// node (node 0) or taken from the hwloc topology tree. Rounds grow with the
// number of nodes, not ranks. The result is the structured form.
#ifndef RANKSHAPE_LIB_MEASURE_HIERARCHY_H_
#define RANKSHAPE_LIB_MEASURE_HIERARCHY_H_

#include <optional>
#include <string>
#include <vector>

#include "lib/measure/fabric.h"
#include "lib/measure/pingpong.h"
#include "lib/model/costs.h"
#include "lib/model/placement.h"
#include "lib/mpi/communicator.h"

namespace rankshape {

/// Where every rank of comm runs, as every rank learns it: the host
/// (MPI_Get_processor_name) and the CPU it runs on now (sched_getcpu);
/// under SMPI the simulated host and the rank's index inside it.
struct JobLayout {
  Placement placement;
  std::vector<int> node_of;        // node index of each rank (nodes in order of first rank)
  std::vector<int> index_in_node;  // rank's index among its node's ranks
  int nodes = 0;
};
JobLayout gather_layout(const mpi::Communicator& comm);

struct HierarchicalResult {
  /// On rank 0, and on every rank when options.result_on_every_rank.
  std::optional<StructuredCosts> costs;
  PingPongResult nodes;       // among node leaders (p = number of nodes)
  PingPongResult inner_node;  // inside node 0 (p = its size; empty when modelled)
  /// The fabric between nodes (inside each rack, when the node costs show
  /// racks); nothing timed for the latency metric, where messages do not
  /// share bandwidth, or on one node.
  FabricMeasurement fabric;
  /// On every rank: both measurements consistent (PingPongResult::
  /// consistent()), and node 0's pairs cheaper than node pairs in the median.
  bool consistent = true;
  std::string warning;  // on every rank: what is not, for people
};

/// Collective. Node-to-node and core-to-core costs by ping-pong, for the
/// chosen metric; ranks not measuring wait in quiet_barrier(). Nodes with fewer ranks than the
/// largest use its cores; core pairs node 0 does not have get node 0's mean core cost.
/// For the time and inverse-bandwidth metrics the fabric between nodes is
/// measured (measure_fabric(), pairing nodes inside the racks the node
/// costs show, as link_levels() finds them) and written as node-fabric.
/// The racks are not written: relabel finds them in the same costs, and
/// given as known levels they steer its search differently
/// (docs/measure.md). Between racks nothing is measured: their
/// representatives' exchange also times each rack's own uplink in both
/// directions, which reads as a fabric.
HierarchicalResult measure_hierarchical(const mpi::Communicator& comm, const JobLayout& layout,
                                        const PingPongOptions& options, Metric metric,
                                        double message_bytes);

/// No messages timed: a rank pair inside a node costs the
/// number of hwloc levels up to the objects they share (1 for two threads
/// of a core, more for cores that only share a cache, a NUMA node or a
/// package), measured on the PUs the ranks of node 0 run on; any pair
/// across nodes costs inter_node. topology_xml, if not empty, replaces the
/// machine's own topology (needed under SMPI, where hwloc sees the host).
StructuredCosts model_from_topology(const JobLayout& layout, double inter_node,
                                    const std::string& topology_xml);

}  // namespace rankshape

#endif  // RANKSHAPE_LIB_MEASURE_HIERARCHY_H_
