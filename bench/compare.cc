// compare: the ordering comparison harness's MPI program ("on my machine,
// which ordering wins, and by how much?"). On the ranks it runs on (this
// machine, the emulated cluster, an SMPI platform) it gets the costs once,
// computes every ordering of the grid through the same interface, builds
// the shaped communicators of each (lib/shape's shape_comm) and times real
// kernels on them:
//   mpirun -np P compare --out DIR [--grid 0,0,0] [--costs auto]
//          [--orderings identity,kl,...] [--kernels allreduce,bcast,mm3d,summa]
// bench/harness.sh drives it on each testbed and draws the plots.
//
// Orderings: every relabel() algorithm but brute-force (identity,
// round-robin, random, node-aware, kl, hill-climb, multilevel, auto, metis,
// scotch), computed by rank 0 with --time-limit each (the same costs and
// seed for all), and Open MPI's TreeMatch: MPI_Dist_graph_create with
// reorder = 1 on the grid's fibre graph (every rank an edge to each member
// of its fibres), Open MPI builds only. An ordering that cannot run here
// (round-robin and node-aware without nodes, TreeMatch elsewhere) is listed
// as skipped, with the reason. Open MPI's TreeMatch calls exit() when it
// cannot map (e.g. "Not enough slots/constraints" on the emulated
// cluster), which no caller can catch: bench/harness.sh runs it alone
// first and passes --treematch-failed when that fails.
//
// Kernels, each run --warmup times untimed and --reps times after a
// barrier; the time kept is the median over repetitions of the slowest rank:
//   allreduce, bcast  along each grid dimension of size > 1 at once (every
//                     fibre of the dimension runs the collective), at each
//                     --sizes, natively (impl native) and through lib/coll's
//                     dispatch (impl rankshape); then along every dimension
//                     in turn (row dim -1), as one step of a cartesian
//                     program;
//   mm3d              lib/matmul's 3D multiplication, n x n x n (3-dim grids);
//   summa             lib/matmul's SUMMA, panel --panel (2-dim grids).
// The prediction a kernel's time is set against: the worst fibre cost of
// its dimension for a fibre collective along one dimension, the objective
// for every dimension in turn and for the products. The second prediction,
// the link load (lib/model/link_load.h), counts what the fibres of a
// dimension send at once through the links a node or rack shares, which
// pair costs measured one message at a time do not see: the dimension's
// link load, or their sum. Its levels are the ones the costs know (nodes,
// racks), then those found in the costs by their largest jump.
//
// Output (rank 0, each file written atomically):
//   DIR/orderings.csv  ordering,algorithm,status,objective,objective_vs_identity,
//                      relabel_seconds,time_limited
//   DIR/kernels.csv    ordering,kernel,impl,dim,bytes,seconds,speedup_vs_identity,predicted,
//                      link_load
//                      (dim -1: every dimension in turn; for the products,
//                      dim -1 and bytes = n)
//   DIR/summary.json   the run (testbed, ranks, grid, costs, timings) and, per
//                      kernel row, Spearman's rank correlation between
//                      predicted and measured time over the orderings (and
//                      between link load and time); the levels of links
//   DIR/heatmap-ORDERING.png  the costs in each ordering, fibre boundaries
//                      marked (--heatmaps)
//   DIR/costs.txt      the costs used (structured when the source knows the
//                      machine, else dense), and
//   DIR/labelling-ORDERING.txt  each ordering, for cmd/evaluate to score
//                      offline (e.g. under another objective)
#include <fmt/format.h>
#include <mpi.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "cmd/mpi_main.h"
#include "lib/coll/dispatch.h"
#include "lib/coll/workload.h"
#include "lib/io/atomic_file.h"
#include "lib/io/formats.h"
#include "lib/matmul/grid_comm.h"
#include "lib/matmul/mm3d.h"
#include "lib/matmul/summa.h"
#include "lib/model/link_load.h"
#include "lib/mpi/communicator.h"
#include "lib/relabel/relabel.h"
#include "lib/report/heatmap.h"
#include "lib/shape/shape.h"

namespace rankshape {
namespace {

using matmul::Block;
using matmul::GridComm;
using matmul::MatmulSizes;
using matmul::Piece;

const std::vector<std::string> kOrderings = {"identity", "round-robin", "random",     "node-aware",
                                             "kl",       "hill-climb",  "multilevel", "auto",
                                             "metis",    "scotch",      "treematch"};
const std::vector<std::string> kKernels = {"allreduce", "bcast", "mm3d", "summa"};

struct Args {
  std::string out;
  std::string testbed = "local";
  std::string grid = "0,0,0";
  std::string costs = "auto";
  std::string cost_file;
  std::string objective = "sum-max";
  std::vector<std::string> orderings = kOrderings;
  std::vector<std::string> kernels = kKernels;
  std::vector<std::string> impls = {"native", "rankshape"};
  std::vector<std::int64_t> sizes = {8, 65536, 1 << 20};
  int reps = 5;
  int warmup = 1;
  std::int64_t matmul_n = 512;
  std::int64_t panel = 64;
  bool no_compute = false;
  double time_limit = 2;
  std::uint64_t seed = 1;
  bool heatmaps = false;
  std::string treematch_failed;  // why TreeMatch is not run (a probe failed)
};

struct Ordering {
  std::string name;
  std::string algorithm;  // as run
  std::string status = "ok";
  std::optional<Labelling> labelling;
  double relabel_seconds = 0;
  bool time_limited = false;
  Evaluation evaluation;
  std::vector<double> link_load;  // per dimension
};

struct KernelRow {
  std::string ordering, kernel, impl;
  int dim = -1;
  std::int64_t bytes = 0;
  double seconds = 0;
  double predicted = 0;
  double link_load = 0;
};

void bcast_string(const mpi::Communicator& comm, std::string& s, int root) {
  int length = static_cast<int>(s.size());
  mpi::check(MPI_Bcast(&length, 1, MPI_INT, root, comm.get()), "MPI_Bcast");
  s.resize(static_cast<std::size_t>(length));
  mpi::check(MPI_Bcast(s.data(), length, MPI_CHAR, root, comm.get()), "MPI_Bcast");
}

Labelling labelling_of(const std::vector<int>& old_of_new) {
  std::vector<OldRank> old;
  old.reserve(old_of_new.size());
  for (int r : old_of_new) old.push_back(OldRank(r));
  return Labelling(std::move(old));
}

// Open MPI's TreeMatch through the standard interface: a distributed graph
// of the grid's fibres (positions taken as old ranks, i.e. the identity),
// reorder = 1. The new rank it gives each process is that process's grid
// position. Collective over comm.
Ordering treematch(const mpi::Communicator& comm, const Grid& grid) {
  Ordering o;
  o.name = "treematch";
#ifdef OMPI_MAJOR_VERSION
  const int me = comm.rank();
  std::vector<int> neighbours, weights;
  for (int k = 0; k < grid.ndims(); ++k) {
    const int f = grid.fibre_of(NewRank(me), k);
    for (int t = 0; t < grid.dim(k); ++t) {
      const int other = grid.fibre_member(k, f, t).value();
      if (other != me) neighbours.push_back(other);
    }
  }
  const int degree = static_cast<int>(neighbours.size());
  // Open MPI refuses null arrays even for degree 0 (one rank, or size-1 dims).
  neighbours.push_back(me);
  weights.assign(neighbours.size(), 1);
  mpi::check(MPI_Barrier(comm.get()), "MPI_Barrier");
  const double start = MPI_Wtime();
  MPI_Comm graph = MPI_COMM_NULL;
  mpi::check(MPI_Dist_graph_create(comm.get(), 1, &me, &degree, neighbours.data(), weights.data(),
                                   MPI_INFO_NULL, 1, &graph),
             "MPI_Dist_graph_create");
  double seconds = MPI_Wtime() - start;
  const mpi::Communicator owned(graph, mpi::Ownership::kTake);
  mpi::check(MPI_Allreduce(MPI_IN_PLACE, &seconds, 1, MPI_DOUBLE, MPI_MAX, comm.get()),
             "MPI_Allreduce");
  const int position = owned.rank();
  std::vector<int> position_of(static_cast<std::size_t>(comm.size()));
  mpi::check(MPI_Allgather(&position, 1, MPI_INT, position_of.data(), 1, MPI_INT, comm.get()),
             "MPI_Allgather");
  std::vector<int> old_of_new(position_of.size());
  for (std::size_t old = 0; old < position_of.size(); ++old) {
    old_of_new[static_cast<std::size_t>(position_of[old])] = static_cast<int>(old);
  }
  o.labelling = labelling_of(old_of_new);
  o.relabel_seconds = seconds;
  o.algorithm = o.labelling == Labelling::identity(comm.size())
                    ? "treematch (MPI_Dist_graph_create kept the order)"
                    : "treematch (MPI_Dist_graph_create, reorder = 1)";
#else
  (void)comm;
  (void)grid;
  o.status = "skipped: TreeMatch is Open MPI's; this build uses another MPI";
#endif
  return o;
}

// One ordering from the relabelling engine, computed by rank 0 and sent to
// every rank (the search is serial; every rank running it would cost p
// times as much real time under SMPI).
Ordering engine_ordering(const mpi::Communicator& comm, const std::string& name,
                         const JobCosts& costs, const Grid& grid, const ObjectiveSpec& objective,
                         const Args& a) {
  Ordering o;
  o.name = name;
  std::vector<int> old_of_new(static_cast<std::size_t>(comm.size()));
  if (comm.rank() == 0) {
    RelabelOptions ro;
    ro.algorithm = name;
    ro.seed = a.seed;
    ro.time_limit = a.time_limit;
    ro.levels = costs.levels;
    ro.objective = objective;
    const auto start = std::chrono::steady_clock::now();
    try {
      const RelabelResult r = relabel(*costs.costs, grid, ro);
      o.algorithm = r.algorithm;
      o.time_limited = r.time_limited;
      for (int i = 0; i < comm.size(); ++i) old_of_new[i] = r.labelling.old_of(NewRank(i)).value();
    } catch (const std::invalid_argument& e) {
      o.status = std::string("skipped: ") + e.what();
    }
    o.relabel_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
  bcast_string(comm, o.status, 0);
  bcast_string(comm, o.algorithm, 0);
  if (o.status == "ok") {
    mpi::check(MPI_Bcast(old_of_new.data(), comm.size(), MPI_INT, 0, comm.get()), "MPI_Bcast");
    o.labelling = labelling_of(old_of_new);
  }
  int limited = o.time_limited ? 1 : 0;
  mpi::check(MPI_Bcast(&limited, 1, MPI_INT, 0, comm.get()), "MPI_Bcast");
  mpi::check(MPI_Bcast(&o.relabel_seconds, 1, MPI_DOUBLE, 0, comm.get()), "MPI_Bcast");
  o.time_limited = limited != 0;
  return o;
}

Block filled(const Piece& p, bool values) {
  Block b(p.rows.size, p.cols.size);
  if (values) {
    for (std::size_t i = 0; i < b.data.size(); ++i)
      b.data[i] = 1.0 / static_cast<double>(1 + i % 7);
  }
  return b;
}

// The kernels on one shaped communicator; rows in the order they ran.
std::vector<KernelRow> time_kernels(const ShapedComm& s, const Ordering& o, const Args& a) {
  std::vector<KernelRow> rows;
  const Grid& grid = s.grid();
  double links = 0;  // every dimension in turn
  for (double l : o.link_load) links += l;
  const MPI_Comm all = s.comm().get();
  const auto wants = [&](const std::vector<std::string>& list, const std::string& what) {
    return std::find(list.begin(), list.end(), what) != list.end();
  };
  for (const auto& [name, collective] : {std::pair{"allreduce", coll::Collective::kAllreduce},
                                         std::pair{"bcast", coll::Collective::kBcast}}) {
    if (!wants(a.kernels, name)) continue;
    for (int k = 0; k < grid.ndims(); ++k) {
      if (grid.dim(k) == 1) continue;  // nothing to send
      for (std::int64_t bytes : a.sizes) {
        coll::Workload w(collective, bytes, s.fibre(k).get());
        for (const std::string& impl : a.impls) {
          const bool native = impl == "native";
          const double t = coll::time_collective(all, a.warmup, a.reps, [&] {
            native ? w.run_native() : w.run(coll::dispatch::calls());
          });
          // The objective's part for this dimension: its worst fibre, or
          // its link load when larger and the objective counts it.
          const auto uk = static_cast<std::size_t>(k);
          const double part =
              o.evaluation.link_load.empty()
                  ? o.evaluation.dimensions[uk].worst
                  : std::max(o.evaluation.dimensions[uk].worst, o.evaluation.link_load[uk]);
          rows.push_back({o.name, name, impl, k, bytes, t, part, o.link_load[uk]});
        }
      }
    }
    // Every dimension in turn, as a cartesian program's step does: what
    // the objective (by default the sum over dimensions of the worst
    // fibre) predicts. Row dim -1.
    for (std::int64_t bytes : a.sizes) {
      std::vector<coll::Workload> steps;
      for (int k = 0; k < grid.ndims(); ++k) {
        if (grid.dim(k) > 1) steps.emplace_back(collective, bytes, s.fibre(k).get());
      }
      if (steps.empty()) break;
      for (const std::string& impl : a.impls) {
        const bool native = impl == "native";
        const double t = coll::time_collective(all, a.warmup, a.reps, [&] {
          for (coll::Workload& w : steps) native ? w.run_native() : w.run(coll::dispatch::calls());
        });
        rows.push_back({o.name, name, impl, -1, bytes, t, o.evaluation.value.primary, links});
      }
    }
  }
  const bool compute = !a.no_compute;
  const std::int64_t n = a.matmul_n;
  if (wants(a.kernels, "mm3d") && grid.ndims() == 3) {
    const GridComm g = GridComm::shaped(s);
    const MatmulSizes ms{n, n, n};
    const Block pa = filled(matmul::piece_a_3d(ms, g.dims(), g.coords()), compute);
    const Block pb = filled(matmul::piece_b_3d(ms, g.dims(), g.coords()), compute);
    const double t = coll::time_collective(
        all, a.warmup, a.reps, [&] { matmul::multiply_3d(g, ms, pa, pb, nullptr, compute); });
    rows.push_back({o.name, "mm3d", "rankshape", -1, n, t, o.evaluation.value.primary, links});
  }
  if (wants(a.kernels, "summa") && grid.ndims() == 2) {
    const GridComm g = GridComm::shaped(s);
    const Piece piece_a{matmul::part(n, g.dim(0), g.coord(0)),
                        matmul::part(n, g.dim(1), g.coord(1))};
    const Block pa = filled(piece_a, compute);
    const Block pb = filled(piece_a, compute);  // square: B's blocks are shaped as A's
    const double t = coll::time_collective(all, a.warmup, a.reps, [&] {
      matmul::summa(g, n, n, n, pa, pb, a.panel, nullptr, compute);
    });
    rows.push_back({o.name, "summa", "rankshape", -1, n, t, o.evaluation.value.primary, links});
  }
  return rows;
}

// Spearman's rank correlation (average ranks for ties); nullopt for fewer
// than 3 points or a constant series.
std::optional<double> spearman(const std::vector<double>& x, const std::vector<double>& y) {
  const std::size_t n = x.size();
  if (n < 3) return std::nullopt;
  const auto ranks = [n](const std::vector<double>& v) {
    std::vector<std::size_t> order(n);
    for (std::size_t i = 0; i < n; ++i) order[i] = i;
    std::sort(order.begin(), order.end(),
              [&](std::size_t i, std::size_t j) { return v[i] < v[j]; });
    std::vector<double> r(n);
    for (std::size_t i = 0; i < n;) {
      std::size_t j = i;
      while (j + 1 < n && v[order[j + 1]] == v[order[i]]) ++j;
      for (std::size_t t = i; t <= j; ++t) r[order[t]] = (static_cast<double>(i + j) / 2) + 1;
      i = j + 1;
    }
    return r;
  };
  const std::vector<double> rx = ranks(x), ry = ranks(y);
  const auto mean = [n](const std::vector<double>& v) {
    double s = 0;
    for (double e : v) s += e;
    return s / static_cast<double>(n);
  };
  const double mx = mean(rx), my = mean(ry);
  double sxy = 0, sxx = 0, syy = 0;
  for (std::size_t i = 0; i < n; ++i) {
    sxy += (rx[i] - mx) * (ry[i] - my);
    sxx += (rx[i] - mx) * (rx[i] - mx);
    syy += (ry[i] - my) * (ry[i] - my);
  }
  if (sxx == 0 || syy == 0) return std::nullopt;
  return sxy / std::sqrt(sxx * syy);
}

std::string number(double v) { return fmt::format("{:.6g}", v); }

// Progress lines: flushed, so that a long run's log shows where it is.
template <typename... T>
void say(fmt::format_string<T...> format, T&&... args) {
  fmt::print(format, std::forward<T>(args)...);
  std::fflush(stdout);
}

int run(const Args& a) {
  const double wall_start = MPI_Wtime();
  const auto real_start = std::chrono::steady_clock::now();
  const mpi::Communicator comm = mpi::Communicator(MPI_COMM_WORLD, mpi::Ownership::kBorrow).dup();
  const int p = comm.size();

  std::string error;
  std::optional<Grid> grid;
  try {
    std::vector<int> dims;
    std::istringstream in(a.grid);
    for (std::string d; std::getline(in, d, ',');) {
      std::size_t used = 0;
      dims.push_back(std::stoi(d, &used));
      if (used != d.size()) throw std::invalid_argument("'" + d + "' is not a whole number");
    }
    grid = complete_grid(p, dims);
  } catch (const std::exception& e) {
    error = "--grid '" + a.grid + "': " + e.what();
  }
  agree_on_errors(comm.get(), error);

  ShapeOptions so;
  so.objective = ObjectiveSpec::parse(a.objective);
  so.source = parse_cost_source(a.costs);
  so.cost_file = a.cost_file;
  so.seed = a.seed;
  const JobCosts costs = job_costs(comm.get(), so);
  if (comm.rank() == 0) {
    say("compare: {} ranks, grid {}, costs {} ({:.3f} s), {} level(s) of the machine known\n", p,
        grid->to_string(), costs.source, costs.seconds, costs.levels.size());
  }

  const std::vector<LinkLevel> link_levels_found = link_levels(*costs.costs, costs.levels);
  // The objective's link load (with +links) counts the same levels.
  if (so.objective.link_load) {
    so.objective.links = std::make_shared<const std::vector<LinkLevel>>(link_levels_found);
  }
  if (comm.rank() == 0) {
    for (const LinkLevel& l : link_levels_found) {
      say("compare: links shared by {} groups ({}), one message between two {:.4g}\n", l.groups,
          l.detected ? "found in the costs" : "known", l.flow_cost);
    }
  }
  std::vector<Ordering> orderings;
  for (const std::string& name : a.orderings) {
    if (name == "treematch" && !a.treematch_failed.empty()) {
      Ordering o;
      o.name = name;
      o.status = "skipped: " + a.treematch_failed;
      orderings.push_back(o);
    } else {
      orderings.push_back(name == "treematch"
                              ? treematch(comm, *grid)
                              : engine_ordering(comm, name, costs, *grid, so.objective, a));
    }
    Ordering& o = orderings.back();
    if (o.labelling) {
      o.evaluation = evaluate(*costs.costs, *grid, *o.labelling, so.objective);
      // With +links the evaluation has it already, on the same levels.
      o.link_load = so.objective.link_load ? o.evaluation.link_load
                                           : link_load(*grid, *o.labelling, link_levels_found);
    }
    if (comm.rank() == 0) {
      say("compare: {:<11} {}{}\n", o.name, o.status == "ok" ? o.algorithm : o.status,
          o.labelling ? fmt::format(", objective {:.6g}, {:.2f} s", o.evaluation.value.primary,
                                    o.relabel_seconds)
                      : "");
    }
  }

  std::filesystem::path out(a.out);
  std::vector<KernelRow> rows;
  for (Ordering& o : orderings) {
    if (!o.labelling) continue;
    ShapeReport report;
    report.algorithm = o.algorithm;
    if (a.heatmaps) {
      // Rank 0 draws; a failure there must end every rank, not leave them
      // waiting in shape_comm().
      std::string failed;
      if (comm.rank() == 0) {
        try {
          write_heatmap_png((out / ("heatmap-" + o.name + ".png")).string(), *costs.costs,
                            *o.labelling, &*grid);
        } catch (const std::exception& e) {
          failed = e.what();
        }
      }
      agree_on_errors(comm.get(), failed);
    }
    const ShapedComm s = shape_comm(comm.get(), *grid, *o.labelling, costs, so, report);
    std::vector<KernelRow> mine = time_kernels(s, o, a);
    if (comm.rank() == 0) {
      for (const KernelRow& r : mine) {
        say("compare: {:<11} {:<9} {:<9} dim {:>2} {:>8} B  {:.6g} s\n", r.ordering, r.kernel,
            r.impl, r.dim, r.bytes, r.seconds);
      }
    }
    rows.insert(rows.end(), mine.begin(), mine.end());
  }
  if (comm.rank() != 0) return 0;

  // Identity's time and objective, for the ratios.
  using Key = std::tuple<std::string, std::string, int, std::int64_t>;
  const auto key = [](const KernelRow& r) { return Key{r.kernel, r.impl, r.dim, r.bytes}; };
  std::map<Key, double> identity_time;
  std::map<Key, std::vector<const KernelRow*>> by_key;
  for (const KernelRow& r : rows) {
    if (r.ordering == "identity") identity_time[key(r)] = r.seconds;
    by_key[key(r)].push_back(&r);
  }
  std::optional<double> identity_objective;
  for (const Ordering& o : orderings) {
    if (o.name == "identity" && o.labelling) identity_objective = o.evaluation.value.primary;
  }

  if (const auto* structured = dynamic_cast<const StructuredCosts*>(costs.costs.get())) {
    write_structured_costs((out / "costs.txt").string(), *structured);
  } else {
    write_dense_costs((out / "costs.txt").string(), *costs.costs);
  }
  for (const Ordering& o : orderings) {
    if (o.labelling)
      write_labelling((out / ("labelling-" + o.name + ".txt")).string(), *o.labelling);
  }
  write_file_atomically((out / "orderings.csv").string(), [&](std::ostream& f) {
    f << "ordering,algorithm,status,objective,objective_vs_identity,relabel_seconds,time_limited\n";
    for (const Ordering& o : orderings) {
      // Commas would break the columns; the names never need them.
      std::string algorithm = o.algorithm, status = o.status;
      std::replace(algorithm.begin(), algorithm.end(), ',', ';');
      std::replace(status.begin(), status.end(), ',', ';');
      if (!o.labelling) {
        f << o.name << "," << algorithm << "," << status << ",,,,\n";
        continue;
      }
      const double v = o.evaluation.value.primary;
      f << o.name << "," << algorithm << "," << status << "," << number(v) << ","
        << (identity_objective && *identity_objective > 0 ? number(v / *identity_objective) : "")
        << "," << number(o.relabel_seconds) << "," << (o.time_limited ? 1 : 0) << "\n";
    }
  });
  write_file_atomically((out / "kernels.csv").string(), [&](std::ostream& f) {
    f << "ordering,kernel,impl,dim,bytes,seconds,speedup_vs_identity,predicted,link_load\n";
    for (const KernelRow& r : rows) {
      const auto it = identity_time.find(key(r));
      f << r.ordering << "," << r.kernel << "," << r.impl << "," << r.dim << "," << r.bytes << ","
        << number(r.seconds) << ","
        << (it != identity_time.end() && r.seconds > 0 ? number(it->second / r.seconds) : "") << ","
        << number(r.predicted) << "," << number(r.link_load) << "\n";
    }
  });

  nlohmann::json summary;
  summary["testbed"] = a.testbed;
  summary["ranks"] = p;
  summary["grid"] = grid->dims();
  summary["cost_source"] = costs.source;
  summary["measure_seconds"] = costs.seconds;
  summary["objective"] = so.objective.name();
  summary["time_limit"] = a.time_limit;
  summary["reps"] = a.reps;
  summary["sizes"] = a.sizes;
  summary["matmul_n"] = a.matmul_n;
  summary["compute"] = !a.no_compute;
  nlohmann::json listed = nlohmann::json::array();
  for (const Ordering& o : orderings) {
    nlohmann::json j = {{"ordering", o.name}, {"algorithm", o.algorithm}, {"status", o.status}};
    if (o.labelling) {
      j["objective"] = o.evaluation.value.primary;
      j["relabel_seconds"] = o.relabel_seconds;
      j["time_limited"] = o.time_limited;
    }
    listed.push_back(j);
  }
  summary["orderings"] = listed;
  nlohmann::json levels = nlohmann::json::array();
  for (const LinkLevel& l : link_levels_found) {
    levels.push_back({{"groups", l.groups},
                      {"flow_cost", l.flow_cost},
                      {"source", l.detected ? "found in the costs" : "known"}});
  }
  summary["link_levels"] = levels;
  nlohmann::json correlations = nlohmann::json::array();
  for (const auto& [k, list] : by_key) {
    // On the values as written (6 digits): orderings whose fibres are alike
    // take the same simulated time up to rounding, and that is a tie.
    const auto written = [](double v) { return std::stod(number(v)); };
    std::vector<double> predicted, loads, measured;
    for (const KernelRow* r : list) {
      predicted.push_back(written(r->predicted));
      loads.push_back(written(r->link_load));
      measured.push_back(written(r->seconds));
    }
    const auto best = [&](auto field) {
      return (*std::min_element(
                  list.begin(), list.end(),
                  [&](const KernelRow* x, const KernelRow* y) { return field(x) < field(y); }))
          ->ordering;
    };
    const std::optional<double> rho = spearman(predicted, measured);
    const std::optional<double> rho_links = spearman(loads, measured);
    correlations.push_back(
        {{"kernel", std::get<0>(k)},
         {"impl", std::get<1>(k)},
         {"dim", std::get<2>(k)},
         {"bytes", std::get<3>(k)},
         {"spearman", rho ? nlohmann::json(*rho) : nlohmann::json()},
         {"spearman_link_load", rho_links ? nlohmann::json(*rho_links) : nlohmann::json()},
         {"orderings", list.size()},
         {"best_measured", best([](const KernelRow* r) { return r->seconds; })},
         {"best_objective", best([](const KernelRow* r) { return r->predicted; })}});
  }
  summary["correlations"] = correlations;
  // Real time, and MPI_Wtime's (simulated time under SMPI, as is
  // measure_seconds).
  summary["wall_seconds"] =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - real_start).count();
  summary["mpi_wtime_seconds"] = MPI_Wtime() - wall_start;
  write_file_atomically((out / "summary.json").string(),
                        [&](std::ostream& f) { f << summary.dump(2) << "\n"; });
  say("compare: wrote {}/orderings.csv, kernels.csv and summary.json\n", a.out);
  return 0;
}

}  // namespace
}  // namespace rankshape

int main(int argc, char** argv) {
  using namespace rankshape;
  MPI_Init(&argc, &argv);
  Args a;
  CLI::App app{"Times kernels on the shaped communicators of every ordering", "compare"};
  app.add_option("--out", a.out, "Results folder (must exist)")->required();
  app.add_option("--testbed", a.testbed, "Label of the testbed, for the report");
  app.add_option("--grid", a.grid, "Grid dimensions, 0 = chosen (as MPI_Dims_create)");
  app.add_option("--costs", a.costs, "auto, measure, hierarchical, model or file")
      ->check(CLI::IsMember({"auto", "measure", "hierarchical", "model", "file"}));
  app.add_option("--cost-file", a.cost_file, "Dense or structured cost file (--costs file)");
  app.add_option("--objective", a.objective,
                 "Objective the searches minimise and the prediction (as relabel's, e.g. "
                 "sum-max or sum-max+links)");
  app.add_option("--orderings", a.orderings, "Orderings to compare")
      ->delimiter(',')
      ->check(CLI::IsMember(kOrderings));
  app.add_option("--kernels", a.kernels, "Kernels to time")
      ->delimiter(',')
      ->check(CLI::IsMember(kKernels));
  app.add_option("--impls", a.impls, "Collective implementations: native, rankshape")
      ->delimiter(',')
      ->check(CLI::IsMember({"native", "rankshape"}));
  app.add_option("--sizes", a.sizes, "Message sizes of the fibre collectives, bytes")
      ->delimiter(',')
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{1} << 30));
  app.add_option("--reps", a.reps, "Timed repetitions")->check(CLI::Range(1, 100000));
  app.add_option("--warmup", a.warmup, "Untimed repetitions first")->check(CLI::Range(0, 1000));
  app.add_option("--matmul-n", a.matmul_n, "Matrix order of mm3d and summa")
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{1} << 20));
  app.add_option("--panel", a.panel, "SUMMA's panel width")
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{1} << 20));
  app.add_flag("--no-compute", a.no_compute, "Skip the local products (communication only)");
  app.add_option("--time-limit", a.time_limit, "Seconds each ordering may search")
      ->check(CLI::Range(0.0, 1e6));
  app.add_option("--seed", a.seed, "Seed of the searches");
  app.add_flag("--heatmaps", a.heatmaps, "Write DIR/heatmap-ORDERING.png");
  app.add_option("--treematch-failed", a.treematch_failed,
                 "List TreeMatch as skipped for this reason (Open MPI's TreeMatch ends the "
                 "process on some layouts; bench/harness.sh probes it first)");
  return parse_run_finalize(app, argc, argv, [&] {
    // Only rank 0 writes, so only its view of the folder matters.
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    std::string error;
    if (rank == 0 && !std::filesystem::is_directory(a.out)) {
      error = "--out " + a.out + " is not a directory";
    } else if (a.costs == "file" && a.cost_file.empty()) {
      error = "--costs file needs --cost-file";
    } else {
      try {
        ObjectiveSpec::parse(a.objective);
      } catch (const std::invalid_argument& e) {
        error = std::string("--objective: ") + e.what();
      }
    }
    agree_on_errors(MPI_COMM_WORLD, error);
    return run(a);
  });
}
