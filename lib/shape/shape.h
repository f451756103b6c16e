// Shaped communicators: relabel_comm() gives a program, right after
// MPI_Init, a cartesian communicator whose rank i is grid position i of a
// q0 x q1 x ... grid chosen so that the program's traffic sits on cheap
// links (every fibre by default; the grid neighbours for a stencil), plus
// one communicator per grid dimension (the fibre through this rank).
//
//   rankshape::ShapedComm shaped = rankshape::relabel_comm(MPI_COMM_WORLD, Grid({4, 4, 4}));
//   MPI_Allreduce(..., shaped.fibre(0).get());   // along dimension 0
//
//   rankshape::ShapeOptions halo;                // a periodic 7-point stencil
//   halo.objective = rankshape::ObjectiveSpec::parse(
//       "", rankshape::Pattern::parse("stencil:periodic"));
//   auto shaped = rankshape::relabel_comm(MPI_COMM_WORLD, Grid({16, 16, 16}), halo);
//   MPI_Cart_shift(shaped.comm().get(), 0, 1, &down, &up);   // neighbours
//
// Steps, all collective over comm: (1) every rank checks its arguments and
// the ranks compare fingerprints of them (grid, options, costs), so a rank
// that passed something else is reported on every rank instead of
// deadlocking; (2) costs come from the chosen source; (3) every rank runs
// the relabelling with the same seed, auto's independent candidates split
// across the ranks (share_across()), so that the labelling is the one a
// single process finds with that seed unless the time limit cuts the
// search short; then the best objective wins (lowest rank on ties: ranks
// differ only when cut short); (4) the winner's labelling is broadcast and
// every rank checks that it holds the identical labelling; (5) the
// communicators are split from comm, the shaped one with the grid's
// cartesian topology attached (MPI_Cart_shift, MPI_Cart_coords,
// MPI_Cart_sub and neighbour collectives work on it), and its nodes (and
// racks, when known) are given to the hierarchical collectives (lib/coll).
#ifndef RANKSHAPE_LIB_SHAPE_SHAPE_H_
#define RANKSHAPE_LIB_SHAPE_SHAPE_H_

#include <mpi.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "lib/measure/hierarchy.h"
#include "lib/measure/pingpong.h"
#include "lib/model/bounds.h"
#include "lib/model/grid.h"
#include "lib/model/labelling.h"
#include "lib/model/objective.h"
#include "lib/mpi/communicator.h"
#include "lib/relabel/relabel.h"

namespace rankshape {

/// Where the costs between ranks come from.
enum class CostSource {
  kAuto,                 // hwloc model on one node; hierarchical measurement on several
  kMeasureDense,         // ping-pong of every rank pair (p rounds)
  kMeasureHierarchical,  // node-to-node by node leaders, core-to-core inside node 0
  kModel,                // hwloc tree inside nodes, inter_node_cost across; no messages
  kFile,                 // a dense or structured cost file (cost_file), read by every rank
  kMatrix,               // a p x p row-major matrix given by the caller (matrix)
};

/// "auto", "measure", "hierarchical", "model", "file", "matrix".
std::string cost_source_name(CostSource source);
/// Parses the names above; throws std::invalid_argument otherwise.
CostSource parse_cost_source(const std::string& name);

struct ShapeOptions {
  CostSource source = CostSource::kAuto;
  std::string cost_file;       // kFile; same content on every rank
  std::vector<double> matrix;  // kMatrix; same values on every rank
  /// Measured sources: what is timed, and which metric becomes the cost.
  /// A partner that does not answer within measurement.stall_seconds (60;
  /// 0: never) ends the process with exit status 3 and a message naming
  /// the ranks: a dead peer would otherwise hang the job for its whole
  /// allocation.
  PingPongOptions measurement = quick_measurement();
  Metric metric = Metric::kMessageTime;
  double message_bytes = 65536;
  double inter_node_cost = 10;  // kModel (and kAuto on one node: unused)
  std::string algorithm = "auto";
  std::uint64_t seed = 1;
  /// Seconds each rank may spend relabelling; the best so far is used.
  double time_limit = 5;
  /// The pattern (objective.pattern: fibres, or a stencil) and how its
  /// step is costed; ObjectiveSpec::parse(name, pattern) builds one.
  ObjectiveSpec objective;
  /// Periods of the cartesian topology on comm(), one 0 or 1 per
  /// dimension; empty: the stencil's periods, or none for fibres.
  std::vector<int> periods;
  /// Not empty: rank 0 writes PREFIX-before.png and PREFIX-after.png,
  /// heatmaps of the costs in the original and the new order with the
  /// fibre boundaries marked (lib/report/heatmap.h).
  std::string heatmap_prefix;
  /// On a job that spans several nodes, hand the shaped communicator's
  /// levels to the hierarchical collectives (coll::dispatch::set_groups,
  /// indexed by new rank): its nodes, and the racks of a structured cost
  /// file whose nodes are this job's. Saves their MPI_Comm_split_type
  /// discovery and adds the racks it cannot see; builds the collectives'
  /// context (a short calibration) inside relabel_comm(). false: leave the
  /// communicator to discovery, e.g. to call set_groups on it yourself.
  bool collective_groups = true;

  /// Fewer sizes and repetitions than PingPongOptions' defaults: enough
  /// for the structure, cheap enough to run at the start of every job.
  static PingPongOptions quick_measurement();
};

struct ShapeReport {
  std::string cost_source;  // as used, e.g. "model" when auto chose it
  std::string algorithm;    // as run by the winning rank
  int winner = 0;           // rank of comm whose labelling won
  std::uint64_t winner_seed = 0;
  bool time_limited = false;  // the winner's search hit the time limit
  Evaluation before;          // identity order
  Evaluation after;           // the labelling used
  /// Lower bounds on the objective, whatever the labelling (fibres with
  /// pair costs, and stencils; lib/model/bounds.h): after is optimal when it
  /// reaches bound->primary.
  std::optional<LowerBound> bound;
  double measure_seconds = 0;  // getting the costs (MPI_Wtime)
  double relabel_seconds = 0;  // relabelling, choosing and checking the winner
  /// Group tables given to the collectives on comm() (nodes, racks); 0
  /// when none were (one node, or options.collective_groups off).
  int collective_levels = 0;
};

/// The costs between a job's ranks as relabel_comm() gets them (its step
/// 2), for callers that choose the labelling themselves: job_costs() once,
/// then any number of labellings through shape_comm() (e.g. the ordering
/// comparison harness, bench/compare.cc).
struct JobCosts {
  std::shared_ptr<const Costs> costs;
  /// Nodes (then racks) of every old rank, finest first, when the source
  /// knows them (structured costs, measurement); empty for a dense matrix.
  std::vector<std::vector<int>> levels;
  std::string source;  // as used, e.g. "model" when auto chose it
  double seconds = 0;  // MPI_Wtime spent getting them
  /// Where the ranks run, when the source gathered it (measured, modelled).
  std::optional<JobLayout> layout;
};

/// What relabel_comm() returns: owns its communicators (freed with it).
class ShapedComm {
 public:
  ShapedComm(ShapedComm&&) noexcept = default;
  ShapedComm& operator=(ShapedComm&&) noexcept = default;

  /// Rank i of this communicator is grid position i; it carries the
  /// grid's cartesian topology (dims, and periods as options.periods says).
  const mpi::Communicator& comm() const { return comm_; }
  /// The fibre through this rank along dimension k; its rank is coords()[k].
  const mpi::Communicator& fibre(int k) const { return fibres_.at(static_cast<std::size_t>(k)); }
  const Grid& grid() const { return grid_; }
  const std::vector<int>& coords() const { return coords_; }
  /// Old ranks are those of the communicator given to relabel_comm().
  const Labelling& labelling() const { return labelling_; }
  NewRank new_of(OldRank old_rank) const { return labelling_.new_of(old_rank); }
  OldRank old_of(NewRank new_rank) const { return labelling_.old_of(new_rank); }
  const ShapeReport& report() const { return report_; }

 private:
  friend ShapedComm shape_comm(MPI_Comm, const Grid&, const Labelling&, const JobCosts&,
                               const ShapeOptions&, ShapeReport);
  ShapedComm(mpi::Communicator comm, std::vector<mpi::Communicator> fibres, Grid grid,
             Labelling labelling, ShapeReport report);

  mpi::Communicator comm_;
  std::vector<mpi::Communicator> fibres_;
  Grid grid_;
  std::vector<int> coords_;
  Labelling labelling_;
  ShapeReport report_;
};

/// Collective over comm. Throws std::invalid_argument (the same on every
/// rank) for MPI_COMM_NULL, an inter-communicator, a grid whose size is not
/// comm's size, bad options or costs (a stencil or periods that do not fit
/// the grid), or arguments that differ between ranks, or when the
/// collectives refuse the groups (e.g. an unreadable RANKSHAPE_COLL_TABLE);
/// mpi::MpiError (MPI error class and text) when MPI fails.
ShapedComm relabel_comm(MPI_Comm comm, const Grid& grid, const ShapeOptions& options = {});

/// The same for any traffic: rank i of comm() takes the role of vertex i of
/// graph (the program's rank i in the traffic it was recorded or declared
/// with), placed so that heavy edges sit on cheap links (the "graph"
/// pattern; options.objective's text "cost" or "total" chooses how it is
/// judged, its pattern is ignored). comm() carries a distributed graph
/// topology with vertex i's neighbours (MPI_Dist_graph_neighbors, neighbour
/// collectives) and the edges' weights scaled to int (none under SMPI,
/// which has no distributed graphs); grid() is 1-D, p
/// positions, and there are no fibres. Every rank must pass the same graph
/// (checked). Throws as relabel_comm() does, and std::invalid_argument when
/// the graph's vertices are not comm's ranks.
ShapedComm relabel_graph_comm(MPI_Comm comm, std::shared_ptr<const TrafficGraph> graph,
                              const ShapeOptions& options = {});

/// Collective over comm: the traffic graph of the edges every rank declares
/// for itself (rank r: an edge to each of partners, weighing weights[i];
/// weights empty: 1 each), the same on every rank. An edge declared by both
/// ends counts twice, as traffic both ways does. Throws
/// std::invalid_argument on every rank if any rank names a partner outside
/// comm or itself, a weight that is negative or not finite, or weights of
/// another count.
std::shared_ptr<const TrafficGraph> gather_graph(MPI_Comm comm, const std::vector<int>& partners,
                                                 const std::vector<double>& weights = {});

/// Collective over comm: steps (1) and (2) of relabel_comm() (the cost
/// options checked and agreed on, then the costs), the same on every rank.
/// Throws as relabel_comm() does.
JobCosts job_costs(MPI_Comm comm, const ShapeOptions& options = {});

/// Collective over comm: steps (4) to (6) of relabel_comm() with a
/// labelling the caller chose (old ranks are comm's): every rank must hold
/// the same one (checked), the report evaluates it and the identity on
/// costs, and report.algorithm is `report.algorithm` as given (default
/// "given"). Uses options.objective, heatmap_prefix and collective_groups.
/// Throws std::invalid_argument on every rank for a grid or labelling that
/// does not fit comm, or labellings that differ between ranks.
ShapedComm shape_comm(MPI_Comm comm, const Grid& grid, const Labelling& labelling,
                      const JobCosts& costs, const ShapeOptions& options = {},
                      ShapeReport report = {});

/// For RelabelOptions::share: auto's independent candidates (multilevel
/// starts, METIS's slabs, the fibre graph, restart rounds) split across
/// comm's ranks (candidate s on rank s % size), each result then broadcast
/// from its rank, so every rank returns all of them, as one process would
/// compute them with the same seed. Collective over comm at every call:
/// every rank must run the same relabel() (relabel_comm() makes sure), the
/// counts may differ (a rank whose deadline passed asks for none; the
/// largest count is run). A candidate that throws on any rank throws on
/// every rank. comm must outlive the returned function's use.
RelabelOptions::Share share_across(MPI_Comm comm);

/// Collective over comm: if any rank's local_error is not empty, throws
/// std::invalid_argument on every rank, "rank R: message" for the first
/// failing rank R (and how many more failed). For checks made before relabel_comm() (e.g. parsing).
void agree_on_errors(MPI_Comm comm, const std::string& local_error);

/// The periods of the cartesian topology relabel_comm() attaches: options'
/// periods, else the stencil's, else all 0. Throws std::invalid_argument
/// for periods of another length or not 0 or 1, or a stencil that does not
/// fit the grid.
std::vector<int> topology_periods(const Grid& grid, const ShapeOptions& options);

/// The dimensions for relabel_comm() when the program fixes only some:
/// like MPI_Dims_create, zeros are filled in (balanced, larger first).
Grid complete_grid(int p, const std::vector<int>& dims);

}  // namespace rankshape

#endif  // RANKSHAPE_LIB_SHAPE_SHAPE_H_
