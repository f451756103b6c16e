#include "lib/measure/hierarchy.h"

#include <hwloc.h>
#include <sched.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <optional>
#include <stdexcept>
#include <type_traits>

#include "lib/measure/fit.h"
#include "lib/measure/host_load.h"
#include "lib/model/link_load.h"

namespace rankshape {
namespace {

// Broadcasts a vector of doubles or ints from rank 0 of comm.
template <class T>
void bcast(const mpi::Communicator& comm, std::vector<T>& v) {
  static_assert(std::is_same_v<T, double> || std::is_same_v<T, int>);
  int n = static_cast<int>(v.size());
  mpi::check(MPI_Bcast(&n, 1, MPI_INT, 0, comm.get()), "MPI_Bcast");
  v.resize(static_cast<std::size_t>(n));
  const MPI_Datatype type = std::is_same_v<T, double> ? MPI_DOUBLE : MPI_INT;
  if (n > 0) mpi::check(MPI_Bcast(v.data(), n, type, 0, comm.get()), "MPI_Bcast");
}

// Core costs for every pair of core indices < cores, from node 0's matrix
// of size s (pairs beyond it get the mean).
std::vector<double> core_matrix(const std::vector<double>& measured, int s, int cores) {
  double mean = 0;
  int count = 0;
  for (int a = 0; a < s; ++a) {
    for (int b = 0; b < s; ++b) {
      if (a != b) {
        mean += measured[static_cast<std::size_t>(a) * s + b];
        ++count;
      }
    }
  }
  mean = count ? mean / count : 0;
  std::vector<double> out(static_cast<std::size_t>(cores) * cores, mean);
  for (int a = 0; a < cores; ++a) {
    for (int b = 0; b < cores; ++b) {
      if (a == b) {
        out[static_cast<std::size_t>(a) * cores + b] = 0;
      } else if (a < s && b < s) {
        out[static_cast<std::size_t>(a) * cores + b] =
            measured[static_cast<std::size_t>(a) * s + b];
      }
    }
  }
  return out;
}

StructuredSpec spec_for(const JobLayout& layout, std::vector<double> core_costs, int cores,
                        std::vector<float> node_costs) {
  StructuredSpec s;
  s.cores_per_node = cores;
  s.core_costs = std::move(core_costs);
  s.nodes = layout.nodes;
  s.node_costs = std::move(node_costs);
  for (std::size_t r = 0; r < layout.node_of.size(); ++r) {
    s.ranks.push_back({layout.node_of[r], layout.index_in_node[r]});
  }
  if (s.node_costs.empty() || layout.nodes == 1) {
    s.node_costs.clear();
    s.rack_costs = {0};  // one node: never used
    if (layout.nodes > 1) throw std::logic_error("node costs missing");
  }
  return s;
}

// m = min(m, fresh) element-wise (m empty: fresh).
void keep_least(std::vector<double>& m, const std::vector<double>& fresh) {
  if (m.empty()) {
    m = fresh;
    return;
  }
  for (std::size_t i = 0; i < m.size(); ++i) m[i] = std::min(m[i], fresh[i]);
}

// The values above the diagonal of a square matrix, row by row.
std::vector<double> upper_triangle(const std::vector<double>& m) {
  const auto n = static_cast<std::size_t>(std::llround(std::sqrt(m.size())));
  std::vector<double> v;
  for (std::size_t a = 0; a < n; ++a) {
    for (std::size_t b = a + 1; b < n; ++b) v.push_back(m[a * n + b]);
  }
  return v;
}

// The largest (or smallest) value above the diagonal; -1 when none.
double off_diagonal(const std::vector<double>& m, bool largest) {
  const std::vector<double> v = upper_triangle(m);
  if (v.empty()) return -1;
  return largest ? *std::max_element(v.begin(), v.end()) : *std::min_element(v.begin(), v.end());
}

// The rack of every node, found in the node-to-node costs as link_levels()
// finds the level above nodes (the finest grouping by a jump); empty when
// they show none, or there are too many nodes to sort their pairs.
std::vector<int> racks_in(const std::vector<double>& node_matrix, int nodes) {
  // Only rank 0 runs this: it must not throw while the others wait.
  if (nodes < 3 || nodes > kMaxGapItems ||
      node_matrix.size() != static_cast<std::size_t>(nodes) * static_cast<std::size_t>(nodes)) {
    return {};
  }
  const std::vector<std::vector<int>> found = groupings_by_gaps(node_matrix, nodes);
  return found.empty() ? std::vector<int>() : found.front();
}

int largest_node(const JobLayout& layout) {
  std::vector<int> sizes(layout.nodes, 0);
  for (int n : layout.node_of) ++sizes[n];
  return *std::max_element(sizes.begin(), sizes.end());
}

}  // namespace

JobLayout gather_layout(const mpi::Communicator& comm) {
  const int p = comm.size();
  const mpi::Communicator node = comm.split_by_node();
  const bool simulated = mpi::simulated();
  char name[MPI_MAX_PROCESSOR_NAME] = {};
  int length = 0;
  mpi::check(MPI_Get_processor_name(name, &length), "MPI_Get_processor_name");
  const int cpu = simulated ? node.rank() : std::max(0, sched_getcpu());
  std::vector<char> names(static_cast<std::size_t>(p) * MPI_MAX_PROCESSOR_NAME);
  mpi::check(MPI_Allgather(name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, names.data(),
                           MPI_MAX_PROCESSOR_NAME, MPI_CHAR, comm.get()),
             "MPI_Allgather");
  const std::vector<int> cpus = comm.allgather(cpu);
  // Node identity: the lowest comm rank in each rank's shared-memory node.
  int leader = comm.rank();
  mpi::check(MPI_Allreduce(MPI_IN_PLACE, &leader, 1, MPI_INT, MPI_MIN, node.get()),
             "MPI_Allreduce");
  const std::vector<int> leaders = comm.allgather(leader);
  const std::vector<int> local = comm.allgather(node.rank());
  JobLayout layout{Placement({{"?", 0}}), {}, local, 0};
  std::map<int, int> node_index;
  std::vector<HostCore> entries;
  for (int r = 0; r < p; ++r) {
    const auto [it, added] = node_index.emplace(leaders[r], static_cast<int>(node_index.size()));
    layout.node_of.push_back(it->second);
    const char* host = names.data() + static_cast<std::size_t>(r) * MPI_MAX_PROCESSOR_NAME;
    entries.push_back({std::string(host, strnlen(host, MPI_MAX_PROCESSOR_NAME)), cpus[r]});
  }
  layout.nodes = static_cast<int>(node_index.size());
  layout.placement = Placement(std::move(entries));
  return layout;
}

HierarchicalResult measure_hierarchical(const mpi::Communicator& comm, const JobLayout& layout,
                                        const PingPongOptions& options, Metric metric,
                                        double message_bytes) {
  // On every rank: those that do not measure would otherwise wait forever
  // for those that refuse the options.
  check_pingpong_options(options);
  const int me = comm.rank();
  const mpi::Communicator node = comm.split_by_node();
  const bool leader = node.rank() == 0;
  // Only the leaders get a communicator (MPI_UNDEFINED for the others).
  // A second one for the non-leaders would be unused, and under SimGrid
  // 3.32 with MPICH's selection its creation broadcasts with
  // bcast__SMP_binomial, which with the same non-power-of-two number of
  // ranks on every host (3 of 4 here) sends one message too many; a later
  // collective on comm received it (MPI_ERR_TRUNCATE, node8-core4).
  const std::optional<mpi::Communicator> leaders =
      mpi::split_members(comm.get(), leader ? 0 : -1, me);
  PingPongResult between, inside;
  std::vector<double> node_matrix, core_measured;
  // Leaders are on different nodes, node 0's ranks on one: no node order
  // to check inside either measurement.
  PingPongOptions sub = options;
  sub.node_of.clear();
  // The ranks not measuring wait in quiet barriers, so that on a host with
  // more ranks than CPUs they leave the CPUs to those that measure. Both
  // measurements are taken again, keeping the least value per pair, while
  // node 0's dearest pair costs as much as the cheapest pair between nodes
  // (up to options.retries times): the two are timed apart, so one of them
  // may have run while the host was busy as a whole.
  for (int pass = 0;; ++pass) {
    if (leader) {
      between = measure_pingpong(*leaders, sub);
      if (me == 0) keep_least(node_matrix, metric_matrix(between, metric, message_bytes));
    }
    quiet_barrier(comm);
    if (layout.node_of[me] == 0) {
      inside = measure_pingpong(node, sub);
      if (me == 0) keep_least(core_measured, metric_matrix(inside, metric, message_bytes));
    }
    quiet_barrier(comm);
    int overlap = 0;
    if (me == 0) {
      const double dearest_inside = off_diagonal(core_measured, true);
      const double cheapest_between = off_diagonal(node_matrix, false);
      overlap = dearest_inside >= 0 && cheapest_between >= 0 && dearest_inside >= cheapest_between;
    }
    mpi::check(MPI_Bcast(&overlap, 1, MPI_INT, 0, comm.get()), "MPI_Bcast");
    if (!overlap || pass >= options.retries) break;
    // Later, as the dense mode does (CI: node 0's pairs at 28.9..32.5 us,
    // 12.5 us otherwise, against 29.9 between nodes, in every pass at once).
    wait_before_pass(pass);
  }
  if (layout.node_of[0] != 0) throw std::logic_error("rank 0 must be on node 0");
  HierarchicalResult result{std::nullopt, between, inside, {}, true, ""};
  // Rank 0 checks that node 0's pairs are cheaper than node pairs, in the
  // median, and tells every rank whether all is consistent.
  int consistent = 1;
  if (me == 0) {
    std::vector<std::string> problems;
    if (!between.consistent()) problems.push_back("between nodes: " + between.warning());
    if (!inside.consistent()) problems.push_back("inside node 0: " + inside.warning());
    const auto off_diagonal_median = [](const std::vector<double>& m) {
      const std::vector<double> v = upper_triangle(m);
      return v.empty() ? -1.0 : median(v);
    };
    const double in = off_diagonal_median(core_measured);
    const double across = off_diagonal_median(node_matrix);
    if (in >= 0 && across >= 0 && !(in < across)) {
      problems.push_back("pairs inside node 0 are not cheaper than pairs between nodes (medians " +
                         std::to_string(in) + " and " + std::to_string(across) + ")");
    }
    for (const std::string& s : problems) {
      result.warning += (result.warning.empty() ? "" : "; ") + s;
    }
    consistent = problems.empty() ? 1 : 0;
  }
  mpi::check(MPI_Bcast(&consistent, 1, MPI_INT, 0, comm.get()), "MPI_Bcast");
  result.consistent = consistent != 0;
  if (!result.consistent) {
    int n = static_cast<int>(result.warning.size());
    mpi::check(MPI_Bcast(&n, 1, MPI_INT, 0, comm.get()), "MPI_Bcast");
    result.warning.resize(static_cast<std::size_t>(n));
    mpi::check(MPI_Bcast(result.warning.data(), n, MPI_CHAR, 0, comm.get()), "MPI_Bcast");
  }
  // The fabric between nodes, inside the racks rank 0 finds in the node
  // costs (small messages share no bandwidth: none for latencies).
  if (metric != Metric::kStartup && layout.nodes > 1) {
    std::vector<int> rack_of_node;  // empty: one rack
    if (me == 0) rack_of_node = racks_in(node_matrix, layout.nodes);
    bcast(comm, rack_of_node);
    std::vector<int> rack_of_rank;
    if (!rack_of_node.empty()) {
      for (int n : layout.node_of)
        rack_of_rank.push_back(rack_of_node[static_cast<std::size_t>(n)]);
    }
    FabricOptions fabric;
    fabric.bytes = std::max(fabric.bytes, std::min(message_bytes, 64.0 * (1 << 20)));
    result.fabric = measure_fabric(comm, layout.node_of, rack_of_rank, fabric);
  }
  if (options.result_on_every_rank) {
    bcast(comm, node_matrix);
    bcast(comm, core_measured);
  } else if (me != 0) {
    return result;
  }
  const int cores = largest_node(layout);
  int s0 = 0;
  for (int n : layout.node_of) s0 += n == 0;
  std::vector<float> node_costs(node_matrix.begin(), node_matrix.end());
  StructuredSpec spec =
      spec_for(layout, core_matrix(core_measured, s0, cores), cores, std::move(node_costs));
  spec.node_fabric = result.fabric.ratio;
  result.costs = StructuredCosts(std::move(spec));
  return result;
}

StructuredCosts model_from_topology(const JobLayout& layout, double inter_node,
                                    const std::string& topology_xml) {
  if (!(inter_node >= 0)) throw std::invalid_argument("inter-node cost must be >= 0");
  hwloc_topology_t topo;
  if (hwloc_topology_init(&topo) != 0) throw std::runtime_error("hwloc_topology_init failed");
  if (!topology_xml.empty() && hwloc_topology_set_xml(topo, topology_xml.c_str()) != 0) {
    hwloc_topology_destroy(topo);
    throw std::runtime_error("hwloc cannot read topology " + topology_xml);
  }
  if (hwloc_topology_load(topo) != 0) {
    hwloc_topology_destroy(topo);
    throw std::runtime_error("hwloc_topology_load failed");
  }
  const int cores = largest_node(layout);
  const int pus = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU);
  // PU of every core index of node 0 (its ranks in order); further indices
  // wrap around the PUs.
  std::vector<hwloc_obj_t> pu(cores, nullptr);
  std::vector<int> node0_cpus;
  for (std::size_t r = 0; r < layout.node_of.size(); ++r) {
    if (layout.node_of[r] == 0)
      node0_cpus.push_back(layout.placement.of(OldRank(static_cast<int>(r))).core);
  }
  for (int c = 0; c < cores; ++c) {
    const int cpu = c < static_cast<int>(node0_cpus.size()) ? node0_cpus[c] : c;
    hwloc_obj_t obj = hwloc_get_pu_obj_by_os_index(topo, static_cast<unsigned>(cpu));
    if (!obj) obj = hwloc_get_obj_by_type(topo, HWLOC_OBJ_PU, static_cast<unsigned>(cpu % pus));
    pu[c] = obj;
  }
  std::vector<double> core_costs(static_cast<std::size_t>(cores) * cores, 0);
  for (int a = 0; a < cores; ++a) {
    for (int b = 0; b < cores; ++b) {
      if (a == b) continue;
      const hwloc_obj_t common = hwloc_get_common_ancestor_obj(topo, pu[a], pu[b]);
      // Two ranks on one PU (oversubscribed) still pay a little.
      core_costs[static_cast<std::size_t>(a) * cores + b] =
          pu[a] == pu[b] ? 0.5 : static_cast<double>(pu[a]->depth - common->depth);
    }
  }
  hwloc_topology_destroy(topo);
  std::vector<float> node_costs;
  if (layout.nodes > 1) {
    node_costs.assign(static_cast<std::size_t>(layout.nodes) * layout.nodes,
                      static_cast<float>(inter_node));
    for (int n = 0; n < layout.nodes; ++n)
      node_costs[static_cast<std::size_t>(n) * layout.nodes + n] = 0;
  }
  return StructuredCosts(spec_for(layout, std::move(core_costs), cores, std::move(node_costs)));
}

}  // namespace rankshape
