#include "lib/shape/shape.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <exception>
#include <fstream>
#include <functional>
#include <iostream>
#include <iterator>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <stdexcept>
#include <utility>

#include "lib/coll/dispatch.h"
#include "lib/io/formats.h"
#include "lib/measure/hierarchy.h"
#include "lib/relabel/relabel.h"
#include "lib/report/heatmap.h"

namespace rankshape {
namespace {

// FNV-1a, for fingerprints that ranks compare (not for security).
class Fingerprint {
 public:
  Fingerprint& add(const void* data, std::size_t bytes) {
    const auto* b = static_cast<const unsigned char*>(data);
    for (std::size_t i = 0; i < bytes; ++i) {
      hash_ ^= b[i];
      hash_ *= 1099511628211ULL;
    }
    return *this;
  }
  template <typename T>
  Fingerprint& add(const T& value) {
    return add(&value, sizeof value);
  }
  Fingerprint& add(const std::string& s) {
    add(s.size());
    return add(s.data(), s.size());
  }
  std::uint64_t value() const { return hash_; }

 private:
  std::uint64_t hash_ = 1469598103934665603ULL;
};

// Ends on every rank together: if any rank has a non-empty error, all throw
// std::invalid_argument with the first failing rank's message.
void agree(const mpi::Communicator& comm, const std::string& error,
           const std::string& prefix = "relabel_comm: ") {
  const int mine = error.empty() ? comm.size() : comm.rank();
  int first = 0, failing = error.empty() ? 0 : 1, count = 0;
  mpi::check(MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, comm.get()), "MPI_Allreduce");
  if (first == comm.size()) return;
  mpi::check(MPI_Allreduce(&failing, &count, 1, MPI_INT, MPI_SUM, comm.get()), "MPI_Allreduce");
  int length = comm.rank() == first ? static_cast<int>(error.size()) : 0;
  mpi::check(MPI_Bcast(&length, 1, MPI_INT, first, comm.get()), "MPI_Bcast");
  std::string text = comm.rank() == first ? error : std::string(length, ' ');
  mpi::check(MPI_Bcast(text.data(), length, MPI_CHAR, first, comm.get()), "MPI_Bcast");
  std::string where = "rank " + std::to_string(first);
  if (count > 1) where += " (and " + std::to_string(count - 1) + " more)";
  throw std::invalid_argument(prefix + where + ": " + text);
}

// Runs f, turning what it throws into an error string for agree(). MPI
// errors are not caught: a failing MPI call is reported as it is.
template <typename F>
std::string capture(F&& f) {
  try {
    f();
  } catch (const mpi::MpiError&) {
    throw;
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

// Every rank must hold the same value as rank 0; names what differs.
void agree_with_root(const mpi::Communicator& comm, std::uint64_t value, const std::string& what) {
  std::uint64_t root = value;
  mpi::check(MPI_Bcast(&root, 1, MPI_UINT64_T, 0, comm.get()), "MPI_Bcast");
  agree(comm, root == value ? "" : what + " differ(s) from rank 0's");
}

std::uint64_t options_fingerprint(const ShapeOptions& o) {
  Fingerprint f;
  f.add(static_cast<int>(o.source)).add(o.algorithm).add(o.seed).add(o.time_limit);
  f.add(o.objective.name()).add(static_cast<int>(o.metric)).add(o.message_bytes);
  f.add(o.objective.pattern.name()).add(o.periods.size());
  for (int period : o.periods) f.add(period);
  for (double w : o.objective.dimension_weights) f.add(w);
  f.add(o.measurement.stall_seconds);
  f.add(o.inter_node_cost).add(o.measurement.repetitions).add(o.measurement.warmup);
  f.add(o.heatmap_prefix);
  f.add(o.measurement.sweeps).add(o.measurement.seed);
  f.add(static_cast<int>(o.measurement.pacing)).add(o.measurement.retries);
  f.add(o.collective_groups);
  for (std::size_t s : o.measurement.sizes) f.add(s);
  return f.value();
}

std::uint64_t file_fingerprint(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  Fingerprint f;
  char chunk[1 << 16];
  while (in.read(chunk, sizeof chunk) || in.gcount() > 0) {
    f.add(chunk, static_cast<std::size_t>(in.gcount()));
  }
  return f.value();
}

std::vector<std::vector<int>> node_levels(const JobLayout& layout) {
  if (layout.nodes <= 1) return {};
  return {layout.node_of};
}

// Throws std::invalid_argument for options that cannot give costs.
void check_cost_options(int p, const ShapeOptions& options) {
  check_pingpong_options(options.measurement);
  if (options.source == CostSource::kMatrix &&
      options.matrix.size() != static_cast<std::size_t>(p) * p) {
    throw std::invalid_argument("the cost matrix has " + std::to_string(options.matrix.size()) +
                                " entries; a " + std::to_string(p) + "-rank job needs " +
                                std::to_string(static_cast<long long>(p) * p));
  }
}

// The hwloc model inside nodes and inter_node_cost across (s.layout set).
// With a measurement's warning (rank 0's; not empty): the measurement broke
// the structure costs must have (lib/measure/consistency.h), so the model
// and the node membership stand in rather than costs that would mislead
// the search; rank 0 says so on stderr and the source reads
// "model (measurement inconsistent)".
JobCosts model_instead(const mpi::Communicator& comm, const ShapeOptions& o, JobCosts s,
                       const std::string& warning) {
  // Each rank reads its own node's topology; rank 0's core costs are used
  // everywhere so that all ranks optimise the same costs.
  std::optional<StructuredCosts> local;
  agree(comm, capture([&] { local = model_from_topology(*s.layout, o.inter_node_cost, ""); }));
  StructuredSpec spec = local->spec();
  mpi::check(MPI_Bcast(spec.core_costs.data(), static_cast<int>(spec.core_costs.size()), MPI_DOUBLE,
                       0, comm.get()),
             "MPI_Bcast");
  s.costs = std::make_unique<StructuredCosts>(std::move(spec));
  s.levels = machine_levels(static_cast<const StructuredCosts&>(*s.costs));
  s.source = warning.empty() ? "model" : "model (measurement inconsistent)";
  if (comm.rank() == 0 && !warning.empty()) {
    std::cerr << "rankshape: warning: the measured costs are not consistent (" << warning
              << "); using the hwloc model and node membership instead\n";
  }
  return s;
}

// Step (2) without its timing; the options are checked and agreed on.
JobCosts costs_from_source(const mpi::Communicator& comm, const ShapeOptions& o) {
  JobCosts s;
  PingPongOptions ping = o.measurement;
  ping.result_on_every_rank = true;
  switch (o.source) {
    case CostSource::kFile: {
      std::string error = capture([&] { s.costs = read_costs(o.cost_file); });
      if (error.empty() && s.costs->size() != comm.size()) {
        error = o.cost_file + " has " + std::to_string(s.costs->size()) + " ranks, comm has " +
                std::to_string(comm.size());
      }
      agree(comm, error);
      agree_with_root(comm, file_fingerprint(o.cost_file), "the content of " + o.cost_file);
      if (auto* st = dynamic_cast<const StructuredCosts*>(s.costs.get())) {
        s.levels = machine_levels(*st);
      }
      s.source = "file";
      return s;
    }
    case CostSource::kMatrix: {
      std::string error =
          capture([&] { s.costs = std::make_unique<DenseCosts>(comm.size(), o.matrix); });
      agree(comm, error);
      Fingerprint f;
      f.add(o.matrix.data(), o.matrix.size() * sizeof(double));
      agree_with_root(comm, f.value(), "the cost matrix");
      s.source = "matrix";
      return s;
    }
    case CostSource::kMeasureDense: {
      const JobLayout& layout = s.layout.emplace(gather_layout(comm));
      PingPongOptions dense = ping;
      dense.node_of = layout.node_of;
      const PingPongResult r = measure_pingpong(comm, dense);
      if (!r.consistent()) return model_instead(comm, o, std::move(s), r.warning());
      s.costs = std::make_unique<DenseCosts>(costs_from(r, o.metric, o.message_bytes));
      s.levels = node_levels(layout);
      s.source = "measure";
      return s;
    }
    case CostSource::kAuto:
    case CostSource::kMeasureHierarchical:
    case CostSource::kModel: {
      const JobLayout& layout = s.layout.emplace(gather_layout(comm));
      const bool model =
          o.source == CostSource::kModel || (o.source == CostSource::kAuto && layout.nodes == 1);
      if (model) return model_instead(comm, o, std::move(s), "");
      HierarchicalResult h = measure_hierarchical(comm, layout, ping, o.metric, o.message_bytes);
      if (!h.consistent) return model_instead(comm, o, std::move(s), h.warning);
      s.costs = std::make_unique<StructuredCosts>(std::move(*h.costs));
      s.source = "hierarchical";
      s.levels = machine_levels(static_cast<const StructuredCosts&>(*s.costs));
      return s;
    }
  }
  throw std::logic_error("unknown cost source");
}

JobCosts get_costs(const mpi::Communicator& comm, const ShapeOptions& o) {
  const double started = MPI_Wtime();
  JobCosts s = costs_from_source(comm, o);
  s.seconds = MPI_Wtime() - started;
  return s;
}

// True when every group of `fine` lies inside one group of `coarse` (both
// give a group per rank).
bool nests(const std::vector<int>& fine, const std::vector<int>& coarse) {
  std::map<int, int> coarse_of;
  for (std::size_t r = 0; r < fine.size(); ++r) {
    if (coarse_of.emplace(fine[r], coarse[r]).first->second != coarse[r]) return false;
  }
  return true;
}

int distinct(const std::vector<int>& groups) {
  return static_cast<int>(std::set<int>(groups.begin(), groups.end()).size());
}

// The levels for the collectives on the shaped communicator, finest first,
// indexed by new rank: the job's nodes, then the racks of a structured
// cost file when its nodes are the job's (a file may describe another
// placement, and its racks then say nothing about this job). A level that
// is one group, or whose groups are exactly those of the level below (at
// level 0: single ranks), is left out; if none is left, the nodes are kept
// (the collectives then run natively, as discovery would decide). Empty
// when the job runs on one node. The same on every rank: it depends only on
// gathered data.
//
// Example: 8 ranks dealt over 4 nodes (node r % 4), racks {0, 1} of nodes
// {0, 1} and {2, 3}, labelling new -> old = 0 4 1 5 2 6 3 7: nodes by new
// rank 0 0 1 1 2 2 3 3, racks 0 0 0 0 1 1 1 1.
std::vector<std::vector<int>> collective_levels(const JobLayout& layout,
                                                const std::vector<std::vector<int>>& cost_levels,
                                                const Labelling& labelling) {
  if (layout.nodes <= 1) return {};
  const std::vector<int>& nodes = layout.node_of;
  std::vector<std::vector<int>> by_old = {nodes};
  if (cost_levels.size() >= 2 && cost_levels[0].size() == nodes.size() &&
      cost_levels[1].size() == nodes.size() && nests(nodes, cost_levels[0]) &&
      nests(cost_levels[0], nodes) && nests(nodes, cost_levels[1])) {
    by_old.push_back(cost_levels[1]);
  }
  std::vector<std::vector<int>> kept;
  int below = static_cast<int>(nodes.size());  // groups of the level below
  for (std::vector<int>& level : by_old) {
    const int groups = distinct(level);
    if (groups > 1 && groups < below) {
      below = groups;
      kept.push_back(std::move(level));
    }
  }
  if (kept.empty()) kept.push_back(nodes);
  std::vector<std::vector<int>> by_new(kept.size(), std::vector<int>(nodes.size()));
  for (std::size_t j = 0; j < kept.size(); ++j) {
    for (int r = 0; r < static_cast<int>(nodes.size()); ++r) {
      by_new[j][static_cast<std::size_t>(r)] =
          kept[j][static_cast<std::size_t>(labelling.old_of(NewRank(r)).value())];
    }
  }
  return by_new;
}

}  // namespace

void agree_on_errors(MPI_Comm comm, const std::string& local_error) {
  agree(mpi::Communicator(comm, mpi::Ownership::kBorrow), local_error, "");
}

std::string cost_source_name(CostSource source) {
  switch (source) {
    case CostSource::kAuto:
      return "auto";
    case CostSource::kMeasureDense:
      return "measure";
    case CostSource::kMeasureHierarchical:
      return "hierarchical";
    case CostSource::kModel:
      return "model";
    case CostSource::kFile:
      return "file";
    case CostSource::kMatrix:
      return "matrix";
  }
  return "?";
}

CostSource parse_cost_source(const std::string& name) {
  for (CostSource s :
       {CostSource::kAuto, CostSource::kMeasureDense, CostSource::kMeasureHierarchical,
        CostSource::kModel, CostSource::kFile, CostSource::kMatrix}) {
    if (cost_source_name(s) == name) return s;
  }
  throw std::invalid_argument("unknown cost source '" + name +
                              "': expected auto, measure, hierarchical, model, file or matrix");
}

PingPongOptions ShapeOptions::quick_measurement() {
  PingPongOptions o;
  o.sizes = {8, 65536};
  o.repetitions = 5;
  o.warmup = 1;
  return o;
}

ShapedComm::ShapedComm(mpi::Communicator comm, std::vector<mpi::Communicator> fibres, Grid grid,
                       Labelling labelling, ShapeReport report)
    : comm_(std::move(comm)),
      fibres_(std::move(fibres)),
      grid_(std::move(grid)),
      coords_(grid_.coords(NewRank(comm_.rank()))),
      labelling_(std::move(labelling)),
      report_(std::move(report)) {}

std::vector<int> topology_periods(const Grid& grid, const ShapeOptions& options) {
  if (!options.periods.empty()) {
    if (static_cast<int>(options.periods.size()) != grid.ndims()) {
      throw std::invalid_argument(std::to_string(options.periods.size()) + " periods for grid " +
                                  grid.to_string() + " of " + std::to_string(grid.ndims()) +
                                  " dimensions");
    }
    for (int period : options.periods) {
      if (period != 0 && period != 1) throw std::invalid_argument("periods are 0 or 1");
    }
    return options.periods;
  }
  std::vector<int> periods(static_cast<std::size_t>(grid.ndims()), 0);
  if (options.objective.is_stencil()) {
    const std::shared_ptr<const Stencil> stencil = options.objective.stencil_on(grid);
    for (int k = 0; k < grid.ndims(); ++k) periods[k] = stencil->periodic(k) ? 1 : 0;
  }
  return periods;
}

Grid complete_grid(int p, const std::vector<int>& dims) {
  if (dims.empty()) throw std::invalid_argument("a grid needs at least one dimension");
  long long fixed = 1;
  int free = 0;
  for (int d : dims) {
    if (d < 0) throw std::invalid_argument("grid dimensions must be >= 0 (0: choose)");
    if (d == 0) {
      ++free;
    } else if ((fixed *= d) > p) {
      break;  // refused below; also keeps the product from overflowing
    }
  }
  if (p < 1 || fixed > p || p % fixed != 0) {
    std::string text;
    for (int d : dims) text += (text.empty() ? "" : "x") + std::to_string(d);
    throw std::invalid_argument("grid " + text + ": its fixed dimensions give " +
                                std::to_string(fixed) + " positions, which do not divide " +
                                std::to_string(p) + " ranks");
  }
  if (free == 0) return Grid(dims);
  const std::vector<int> chosen = choose_dims(static_cast<int>(p / fixed), free);
  std::vector<int> out = dims;
  std::size_t next = 0;
  for (int& d : out) {
    if (d == 0) d = chosen[next++];
  }
  return Grid(std::move(out));
}

namespace {

// Steps (1) and (2) of relabel_comm() for the cost options: checked on every
// rank, agreed on, then the costs.
JobCosts checked_costs(const mpi::Communicator& comm, const ShapeOptions& options) {
  agree(comm, capture([&] { check_cost_options(comm.size(), options); }));
  agree_with_root(comm, options_fingerprint(options), "the options");
  return get_costs(comm, options);
}

#ifndef SMPI_H
// Vertex x's neighbours and their weights, scaled so that the heaviest
// edge of the graph weighs 2^20 (MPI takes int weights; they are hints).
std::pair<std::vector<int>, std::vector<int>> topology_neighbours(const TrafficGraph& graph,
                                                                  int x) {
  std::int64_t heaviest = 1;
  for (int v = 0; v < graph.vertices(); ++v) {
    for (std::size_t i = graph.begin(v); i < graph.end(v); ++i) {
      heaviest = std::max(heaviest, graph.units(i));
    }
  }
  constexpr double kScale = 1 << 20;
  std::vector<int> neighbours, weights;
  for (std::size_t i = graph.begin(x); i < graph.end(x); ++i) {
    neighbours.push_back(graph.neighbour(i));
    weights.push_back(std::max(
        1, static_cast<int>(kScale * static_cast<double>(graph.units(i)) / heaviest + 0.5)));
  }
  return {neighbours, weights};
}
#endif

std::uint64_t graph_fingerprint(const TrafficGraph& graph) {
  Fingerprint f;
  f.add(graph.vertices()).add(graph.edges()).add(graph.unit_weight());
  for (int v = 0; v < graph.vertices(); ++v) {
    for (std::size_t i = graph.begin(v); i < graph.end(v); ++i) {
      f.add(graph.neighbour(i)).add(graph.units(i));
    }
  }
  return f.value();
}

}  // namespace

JobCosts job_costs(MPI_Comm raw, const ShapeOptions& options) {
  const mpi::Communicator borrowed(raw, mpi::Ownership::kBorrow);
  return checked_costs(borrowed.dup(), options);
}

ShapedComm shape_comm(MPI_Comm raw, const Grid& grid, const Labelling& labelling,
                      const JobCosts& costs, const ShapeOptions& options, ShapeReport report) {
  const mpi::Communicator borrowed(raw, mpi::Ownership::kBorrow);
  // Our own copy, so that errors return as codes and our traffic cannot
  // match the program's messages.
  const mpi::Communicator comm = borrowed.dup();
  const int p = comm.size();
  const int me = comm.rank();
  agree(comm, capture([&] {
          const auto positions = [](int n) { return std::to_string(n) + " positions"; };
          if (grid.size() != p) {
            throw std::invalid_argument("grid " + grid.to_string() + " has " +
                                        positions(grid.size()) + " but the communicator has " +
                                        std::to_string(p) + " ranks");
          }
          if (labelling.size() != p) {
            throw std::invalid_argument("the labelling has " + positions(labelling.size()) +
                                        " but the communicator has " + std::to_string(p) +
                                        " ranks");
          }
          if (!costs.costs || costs.costs->size() != p) {
            throw std::invalid_argument("the costs are not those of a " + std::to_string(p) +
                                        "-rank job");
          }
          if (!options.objective.is_graph()) topology_periods(grid, options);
        }));
  Fingerprint held;
  for (int d : grid.dims()) held.add(d);
  for (const OldRank& r : labelling.old_ranks()) held.add(r.value());
  agree_with_root(comm, held.value(), "the grid or the labelling");

  if (report.algorithm.empty()) report.algorithm = "given";
  if (report.cost_source.empty()) report.cost_source = costs.source;
  if (report.measure_seconds == 0) report.measure_seconds = costs.seconds;
  const ObjectiveSpec objective = options.objective.with_links(*costs.costs, costs.levels);
  report.before = evaluate(*costs.costs, grid, Labelling::identity(p), objective);
  report.after = evaluate(*costs.costs, grid, labelling, objective);
  // relabel_comm() passes the bound its search computed.
  if (!report.bound) report.bound = objective_lower_bound(*costs.costs, grid, objective);
  if (!options.heatmap_prefix.empty()) {
    agree(comm, me != 0 ? "" : capture([&] {
            write_heatmap_pair(options.heatmap_prefix, *costs.costs, labelling, grid);
          }));
  }

  // (5) Communicators: new rank = grid position, with the grid's topology
  // attached, then one fibre per dimension.
  const NewRank position = labelling.new_of(OldRank(me));
  std::vector<mpi::Communicator> fibres;
  std::optional<mpi::Communicator> shaped_topology;
  if (objective.is_graph()) {
#ifdef SMPI_H
    // SimGrid 3.32 has no distributed graphs: the order alone.
    shaped_topology.emplace(comm.split(0, position.value()));
#else
    // A traffic graph: vertex `position`'s neighbours, not a grid.
    const auto [neighbours, weights] = topology_neighbours(*objective.graph, position.value());
    shaped_topology.emplace(comm.split(0, position.value()).distributed_graph(neighbours, weights));
#endif
  } else {
    shaped_topology.emplace(
        comm.split(0, position.value()).cartesian(grid.dims(), topology_periods(grid, options)));
    for (int k = 0; k < grid.ndims(); ++k) {
      fibres.push_back(shaped_topology->split(grid.fibre_of(position, k),
                                              grid.coords(position)[static_cast<std::size_t>(k)]));
    }
  }
  mpi::Communicator shaped = std::move(*shaped_topology);
  if (shaped.rank() != position.value()) {
    throw std::logic_error("shape_comm: the split communicator lost the ordering");
  }
  // (6) The collectives on the shaped communicator learn its levels before
  // their first call. Every rank computes the same tables, so set_groups
  // fails on every rank alike, if at all.
  if (options.collective_groups) {
    const JobLayout layout = costs.layout ? *costs.layout : gather_layout(comm);
    std::vector<std::vector<int>> levels = collective_levels(layout, costs.levels, labelling);
    report.collective_levels = static_cast<int>(levels.size());
    if (!levels.empty()) {
      agree(comm, capture([&] { coll::dispatch::set_groups(shaped.get(), std::move(levels)); }));
    }
  }
  return ShapedComm(std::move(shaped), std::move(fibres), grid, labelling, std::move(report));
}

ShapedComm relabel_comm(MPI_Comm raw, const Grid& grid, const ShapeOptions& options) {
  // Validates comm itself (null, inter-communicator) before any collective.
  const mpi::Communicator borrowed(raw, mpi::Ownership::kBorrow);
  // Our own copy, so that errors return as codes and our traffic cannot
  // match the program's messages.
  const mpi::Communicator comm = borrowed.dup();
  const int p = comm.size();
  const int me = comm.rank();

  // (1) Arguments: valid here, and the same on every rank.
  agree(comm, capture([&] {
          if (grid.size() != p) {
            throw std::invalid_argument(
                "grid " + grid.to_string() + " has " + std::to_string(grid.size()) +
                " positions but the communicator has " + std::to_string(p) + " ranks");
          }
          if (!(options.time_limit >= 0)) throw std::invalid_argument("time limit must be >= 0");
          if (options.objective.is_graph()) {
            if (!options.objective.graph) throw std::invalid_argument("no traffic graph given");
            if (options.objective.graph->vertices() != p) {
              throw std::invalid_argument(
                  "the traffic graph has " + std::to_string(options.objective.graph->vertices()) +
                  " vertices but the communicator has " + std::to_string(p) + " ranks");
            }
          } else {
            topology_periods(grid, options);
          }
          if (options.objective.is_stencil()) options.objective.stencil_on(grid);
          const auto& names = relabel_algorithms();
          if (std::find(names.begin(), names.end(), options.algorithm) == names.end()) {
            throw std::invalid_argument("unknown algorithm '" + options.algorithm + "'");
          }
        }));
  Fingerprint grid_print;
  for (int d : grid.dims()) grid_print.add(d);
  agree_with_root(comm, grid_print.value(), "the grid " + grid.to_string());
  if (options.objective.is_graph()) {
    agree_with_root(comm, graph_fingerprint(*options.objective.graph), "the traffic graph");
  }

  // (2) Costs (their options checked and agreed on first).
  const JobCosts costs = checked_costs(comm, options);

  // (3) Every rank searches with the same seed, auto's starts split among
  // them; the best objective wins (they differ only when cut short).
  const double relabel_started = MPI_Wtime();
  RelabelOptions ro;
  ro.algorithm = options.algorithm;
  ro.seed = options.seed;
  ro.share = share_across(comm.get());
  ro.time_limit = options.time_limit;
  ro.objective = options.objective;
  // Algorithms that need nodes get them when the source knows them; a dense
  // matrix from the caller or a dense file has none.
  ro.levels = costs.levels;
  std::optional<RelabelResult> result;
  agree(comm, capture([&] { result = relabel(*costs.costs, grid, ro); }));
  const RelabelResult& mine = *result;
  struct {
    double value;
    int rank;
  } local{mine.after.value.primary, me}, best{0, 0};
  mpi::check(MPI_Allreduce(&local, &best, 1, MPI_DOUBLE_INT, MPI_MINLOC, comm.get()),
             "MPI_Allreduce");

  // (4) The winner's labelling everywhere (shape_comm() checks that every
  // rank holds the identical one).
  std::vector<int> perm(static_cast<std::size_t>(p));
  if (me == best.rank) {
    for (int i = 0; i < p; ++i) perm[i] = mine.labelling.old_of(NewRank(i)).value();
  }
  mpi::check(MPI_Bcast(perm.data(), p, MPI_INT, best.rank, comm.get()), "MPI_Bcast");
  std::vector<OldRank> old_ranks;
  old_ranks.reserve(perm.size());
  for (int v : perm) old_ranks.push_back(OldRank(v));
  std::unique_ptr<Labelling> labelling;
  agree(comm, capture([&] { labelling = std::make_unique<Labelling>(std::move(old_ranks)); }));
  ShapeReport report;
  report.winner = best.rank;
  report.winner_seed = options.seed;
  int facts[2] = {mine.time_limited ? 1 : 0, 0};
  mpi::check(MPI_Bcast(facts, 2, MPI_INT, best.rank, comm.get()), "MPI_Bcast");
  report.time_limited = facts[0] != 0;
  int name_length = me == best.rank ? static_cast<int>(mine.algorithm.size()) : 0;
  mpi::check(MPI_Bcast(&name_length, 1, MPI_INT, best.rank, comm.get()), "MPI_Bcast");
  report.algorithm = me == best.rank ? mine.algorithm : std::string(name_length, ' ');
  mpi::check(MPI_Bcast(report.algorithm.data(), name_length, MPI_CHAR, best.rank, comm.get()),
             "MPI_Bcast");
  report.cost_source = costs.source;
  report.measure_seconds = costs.seconds;
  report.bound = mine.bound;  // the same on every rank: same costs, grid and objective
  report.relabel_seconds = MPI_Wtime() - relabel_started;
  return shape_comm(comm.get(), grid, *labelling, costs, options, std::move(report));
}

RelabelOptions::Share share_across(MPI_Comm comm) {
  return [comm](int n, const std::function<std::optional<RelabelOptions::Found>(int)>& make) {
    int size = 1, me = 0;
    mpi::check(MPI_Comm_size(comm, &size), "MPI_Comm_size");
    mpi::check(MPI_Comm_rank(comm, &me), "MPI_Comm_rank");
    int all = n;
    mpi::check(MPI_Allreduce(&n, &all, 1, MPI_INT, MPI_MAX, comm), "MPI_Allreduce");
    std::vector<std::optional<RelabelOptions::Found>> mine(static_cast<std::size_t>(all));
    std::exception_ptr error;
    for (int s = me; s < n; s += size) {
      try {
        mine[static_cast<std::size_t>(s)] = make(s);
      } catch (...) {
        if (!error) error = std::current_exception();
      }
    }
    int failed = error ? 1 : 0, any = 0;
    mpi::check(MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, comm), "MPI_Allreduce");
    if (error) std::rethrow_exception(error);
    if (any) throw std::runtime_error("a candidate of auto failed on another rank");
    // Each candidate from its rank: its length (0: none) and seconds, then
    // its old ranks.
    std::vector<std::optional<RelabelOptions::Found>> out(static_cast<std::size_t>(n));
    std::vector<int> perm;
    for (int s = 0; s < all; ++s) {
      const int owner = s % size;
      const std::optional<RelabelOptions::Found>& l = mine[static_cast<std::size_t>(s)];
      double head[2] = {owner == me && l ? static_cast<double>(l->labelling.size()) : 0,
                        owner == me && l ? l->seconds : 0};
      mpi::check(MPI_Bcast(head, 2, MPI_DOUBLE, owner, comm), "MPI_Bcast");
      const int length = static_cast<int>(head[0]);
      if (length == 0) continue;
      perm.resize(static_cast<std::size_t>(length));
      if (owner == me) {
        for (int x = 0; x < length; ++x) perm[x] = l->labelling.old_of(NewRank(x)).value();
      }
      mpi::check(MPI_Bcast(perm.data(), length, MPI_INT, owner, comm), "MPI_Bcast");
      if (s >= n) continue;
      std::vector<OldRank> old_ranks;
      old_ranks.reserve(perm.size());
      for (int v : perm) old_ranks.emplace_back(v);
      out[static_cast<std::size_t>(s)] =
          RelabelOptions::Found{Labelling(std::move(old_ranks)), head[1]};
    }
    return out;
  };
}

}  // namespace rankshape

namespace rankshape {

ShapedComm relabel_graph_comm(MPI_Comm comm, std::shared_ptr<const TrafficGraph> graph,
                              const ShapeOptions& options) {
  ShapeOptions o = options;
  o.objective =
      ObjectiveSpec::parse(o.objective.aggregate == Aggregate::kSumOfAllFibres ? "total" : "cost",
                           Pattern::parse("graph"));
  o.objective.graph = std::move(graph);
  o.periods.clear();
  const mpi::Communicator borrowed(comm, mpi::Ownership::kBorrow);
  return relabel_comm(comm, Grid({borrowed.size()}), o);
}

std::shared_ptr<const TrafficGraph> gather_graph(MPI_Comm raw, const std::vector<int>& partners,
                                                 const std::vector<double>& weights) {
  const mpi::Communicator borrowed(raw, mpi::Ownership::kBorrow);
  const mpi::Communicator comm = borrowed.dup();
  const int p = comm.size();
  const int me = comm.rank();
  agree(comm, capture([&] {
          if (!weights.empty() && weights.size() != partners.size()) {
            throw std::invalid_argument(std::to_string(partners.size()) + " partners but " +
                                        std::to_string(weights.size()) + " weights");
          }
          for (std::size_t i = 0; i < partners.size(); ++i) {
            if (partners[i] < 0 || partners[i] >= p || partners[i] == me) {
              throw std::invalid_argument("partner " + std::to_string(partners[i]) +
                                          " is not another rank of the " + std::to_string(p) +
                                          "-rank communicator");
            }
            if (!weights.empty() && (!(weights[i] >= 0) || !std::isfinite(weights[i]))) {
              throw std::invalid_argument("the weight to partner " + std::to_string(partners[i]) +
                                          " is not finite and >= 0");
            }
          }
        }));
  // Every rank's (partner, weight) pairs, in rank order.
  const int mine = static_cast<int>(partners.size());
  std::vector<int> counts(static_cast<std::size_t>(p), 0);
  mpi::check(MPI_Allgather(&mine, 1, MPI_INT, counts.data(), 1, MPI_INT, comm.get()),
             "MPI_Allgather");
  std::vector<int> displs(static_cast<std::size_t>(p), 0);
  long long total = 0;
  for (int r = 0; r < p; ++r) {
    displs[r] = static_cast<int>(total);
    total += counts[r];
  }
  agree(comm, total > 1 << 30 ? "over 2^30 edges declared in all" : "");
  std::vector<int> all_partners(static_cast<std::size_t>(total));
  std::vector<double> all_weights(static_cast<std::size_t>(total));
  std::vector<double> my_weights = weights;
  if (my_weights.empty()) my_weights.assign(partners.size(), 1.0);
  mpi::check(MPI_Allgatherv(partners.data(), mine, MPI_INT, all_partners.data(), counts.data(),
                            displs.data(), MPI_INT, comm.get()),
             "MPI_Allgatherv");
  mpi::check(MPI_Allgatherv(my_weights.data(), mine, MPI_DOUBLE, all_weights.data(), counts.data(),
                            displs.data(), MPI_DOUBLE, comm.get()),
             "MPI_Allgatherv");
  std::vector<WeightedEdge> edges;
  edges.reserve(static_cast<std::size_t>(total));
  for (int r = 0; r < p; ++r) {
    for (int i = displs[r]; i < displs[r] + counts[r]; ++i) {
      edges.push_back(
          {r, all_partners[static_cast<std::size_t>(i)], all_weights[static_cast<std::size_t>(i)]});
    }
  }
  std::shared_ptr<const TrafficGraph> graph;
  agree(comm, capture([&] { graph = std::make_shared<const TrafficGraph>(p, std::move(edges)); }));
  return graph;
}

}  // namespace rankshape
