// relabel_comm() under mpirun at 1, 2, 3, 4, 7 and 8 ranks: every cost
// source, the communicators it returns, identical labelling on all ranks,
// translation, bad arguments reported on every rank, and the levels handed
// to the collectives (several nodes only under SMPI: 4 hosts, ranks dealt
// over them).
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

#include "lib/coll/dispatch.h"
#include "lib/io/formats.h"
#include "lib/measure/pingpong.h"
#include "lib/shape/shape.h"
#include "lib/synth/irregular.h"
#include "tests/testing/files.h"
#include "tests/testing/machines.h"
#include "tests/testing/world.h"

namespace rankshape {
namespace {

using ::rankshape::testing::world_rank;
using ::rankshape::testing::world_size;

using ::rankshape::testing::alternating_machine;

Grid two_rows(int p) { return p % 2 == 0 ? Grid({2, p / 2}) : Grid({p}); }

ShapeOptions quick(CostSource source) {
  ShapeOptions o;
  o.source = source;
  o.time_limit = 2;
  o.measurement.sizes = {8, 1024};
  o.measurement.repetitions = 2;
  o.measurement.retries = 1;  // more ranks than cores: noisy, see measure_mpi_test
  return o;
}

// Everything a shaped communicator promises, checked against MPI itself.
void expect_well_shaped(const ShapedComm& s) {
  const int p = world_size(), me = world_rank();
  const Grid& g = s.grid();
  ASSERT_EQ(s.comm().size(), p);
  const NewRank position = s.new_of(OldRank(me));
  EXPECT_EQ(s.comm().rank(), position.value());
  EXPECT_EQ(s.old_of(position), OldRank(me));
  EXPECT_EQ(s.coords(), g.coords(position));
  for (int i = 0; i < p; ++i) {
    EXPECT_EQ(s.new_of(s.old_of(NewRank(i))), NewRank(i));
  }
  // World ranks, seen through the shaped communicator, follow the labelling.
  std::vector<int> world_of_new(static_cast<std::size_t>(p));
  MPI_Allgather(&me, 1, MPI_INT, world_of_new.data(), 1, MPI_INT, s.comm().get());
  for (int i = 0; i < p; ++i) EXPECT_EQ(world_of_new[i], s.old_of(NewRank(i)).value());
  for (int k = 0; k < g.ndims() && !s.report().after.graph; ++k) {  // a graph has no fibres
    const mpi::Communicator& f = s.fibre(k);
    ASSERT_EQ(f.size(), g.dim(k));
    EXPECT_EQ(f.rank(), s.coords()[static_cast<std::size_t>(k)]);
    std::vector<int> members(static_cast<std::size_t>(f.size()));
    const int mine = position.value();
    MPI_Allgather(&mine, 1, MPI_INT, members.data(), 1, MPI_INT, f.get());
    const int fibre = g.fibre_of(position, k);
    for (int t = 0; t < g.dim(k); ++t) EXPECT_EQ(members[t], g.fibre_member(k, fibre, t).value());
  }
  // The same labelling on every rank.
  std::vector<int> perm(static_cast<std::size_t>(p));
  for (int i = 0; i < p; ++i) perm[i] = s.old_of(NewRank(i)).value();
  std::vector<int> root = perm;
  MPI_Bcast(root.data(), p, MPI_INT, 0, MPI_COMM_WORLD);
  EXPECT_EQ(perm, root);
  EXPECT_LE(s.report().after.value.primary, s.report().before.value.primary * (1 + 1e-12));
}

TEST(RelabelCommTest, CallerMatrixFindsThePlantedNodes) {
  const int p = world_size();
  ShapeOptions o = quick(CostSource::kMatrix);
  o.matrix = alternating_machine(p);
  const ShapedComm s = relabel_comm(MPI_COMM_WORLD, two_rows(p), o);
  expect_well_shaped(s);
  EXPECT_EQ(s.report().cost_source, "matrix");
  if (p >= 6 && p % 2 == 0) {  // at 2 x 2 both dimensions cost alike
    // Each row of the 2 x p/2 grid is one node: no row crosses nodes.
    for (int i = 0; i < p; i += p / 2) {
      for (int j = i; j < i + p / 2; ++j) {
        EXPECT_EQ(s.old_of(NewRank(j)).value() % 2, s.old_of(NewRank(i)).value() % 2);
      }
    }
    EXPECT_LT(s.report().after.value.primary, s.report().before.value.primary);
  }
}

TEST(RelabelCommTest, EveryCostSourceGivesAShapedCommunicator) {
  const int p = world_size();
  const Grid grid = complete_grid(p, {0, 0});
  for (CostSource source : {CostSource::kAuto, CostSource::kMeasureDense,
                            CostSource::kMeasureHierarchical, CostSource::kModel}) {
    SCOPED_TRACE(cost_source_name(source));
    const ShapedComm s = relabel_comm(MPI_COMM_WORLD, grid, quick(source));
    expect_well_shaped(s);
    EXPECT_GE(s.report().measure_seconds, 0);
    EXPECT_GE(s.report().winner, 0);
    EXPECT_LT(s.report().winner, p);
  }
}

// A pair that is slow in every repetition, also when measured again,
// breaks the triangle check (it costs far more than the path through a
// third rank): relabel_comm() falls back to the hwloc model and the node
// membership, and says so in the report, on every rank. The delay, 40 ms,
// must dwarf the least time of the other pairs: MPICH's ranks busy-poll,
// and with 3 of them on a core or two those reach milliseconds (5 ms
// failed 6 of 15 runs beside another busy process).
TEST(RelabelCommTest, InconsistentMeasurementFallsBackToTheModel) {
  const int p = world_size();
  if (p < 3) GTEST_SKIP() << "the triangle check needs a third rank";
  ShapeOptions o = quick(CostSource::kMeasureDense);
  o.measurement.retries = 1;
  const int me = world_rank();
  constexpr double kDelay = 40e-3;
  o.measurement.inject = [me](const PingPongOptions::Step& s) {
    if (me == 1 && s.partner == 0) {
#ifdef SMPI_H
      // Simulated time: without simulated computation (tools/run_mpi.sh) a
      // busy wait on MPI_Wtime would take 500,000 calls.
      smpi_execute(kDelay);
#else
      const double start = MPI_Wtime();
      while (MPI_Wtime() - start < kDelay) {
      }
#endif
    }
  };
  const ShapedComm s = relabel_comm(MPI_COMM_WORLD, complete_grid(p, {0, 0}), o);
  expect_well_shaped(s);
  EXPECT_EQ(s.report().cost_source, "model (measurement inconsistent)");
}

TEST(RelabelCommTest, CostFileIsReadByEveryRank) {
  const int p = world_size();
  const std::string path = testing::scratch_path("shape_costs.txt");
  if (world_rank() == 0) write_dense_costs(path, DenseCosts(p, alternating_machine(p)));
  MPI_Barrier(MPI_COMM_WORLD);
  ShapeOptions o = quick(CostSource::kFile);
  o.cost_file = path;
  const ShapedComm s = relabel_comm(MPI_COMM_WORLD, two_rows(p), o);
  expect_well_shaped(s);
  EXPECT_EQ(s.report().cost_source, "file");
  o.heatmap_prefix = testing::scratch_path("shape_heatmap");
  relabel_comm(MPI_COMM_WORLD, two_rows(p), o);
  if (world_rank() == 0) {
    EXPECT_EQ(testing::read_all(o.heatmap_prefix + "-before.png").substr(1, 3), "PNG");
    EXPECT_EQ(testing::read_all(o.heatmap_prefix + "-after.png").substr(1, 3), "PNG");
  }
  o.heatmap_prefix = testing::scratch_path("no/such/dir/heatmap");
  EXPECT_THROW(relabel_comm(MPI_COMM_WORLD, two_rows(p), o), std::invalid_argument);
  o.heatmap_prefix.clear();
  o.cost_file = testing::scratch_path("no_such_costs.txt");
  EXPECT_THROW(relabel_comm(MPI_COMM_WORLD, two_rows(p), o), std::invalid_argument);
}

TEST(RelabelCommTest, BadArgumentsFailOnEveryRank) {
  const int p = world_size();
  // A grid of the wrong size.
  EXPECT_THROW(relabel_comm(MPI_COMM_WORLD, Grid({p + 1}), quick(CostSource::kModel)),
               std::invalid_argument);
  // Wrong only on the last rank: still every rank hears of it.
  const Grid maybe_wrong = world_rank() == p - 1 ? Grid({p, 2}) : Grid({p});
  try {
    relabel_comm(MPI_COMM_WORLD, maybe_wrong, quick(CostSource::kModel));
    ADD_FAILURE() << "no error";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("rank " + std::to_string(p - 1)), std::string::npos)
        << e.what();
  }
  // Unknown algorithm, bad matrix size.
  ShapeOptions o = quick(CostSource::kModel);
  o.algorithm = "sorting-hat";
  EXPECT_THROW(relabel_comm(MPI_COMM_WORLD, Grid({p}), o), std::invalid_argument);
  o = quick(CostSource::kMatrix);
  o.matrix = {1, 2, 3};
  EXPECT_THROW(relabel_comm(MPI_COMM_WORLD, Grid({p}), o), std::invalid_argument);
  EXPECT_THROW(relabel_comm(MPI_COMM_NULL, Grid({p}), o), std::invalid_argument);
  // Bad measurement options are refused before anyone measures (in the
  // hierarchical form only some ranks would measure, and the rest wait).
  o = quick(CostSource::kMeasureHierarchical);
  o.measurement.sizes = {8};
  EXPECT_THROW(relabel_comm(MPI_COMM_WORLD, Grid({p}), o), std::invalid_argument);
  o = quick(CostSource::kModel);
  o.objective.dimension_weights = {world_rank() == 0 ? 1.0 : 2.0};
  if (p > 1) {
    EXPECT_THROW(relabel_comm(MPI_COMM_WORLD, Grid({p}), o), std::invalid_argument);
  }
  EXPECT_THROW(parse_cost_source("guess"), std::invalid_argument);
  EXPECT_EQ(parse_cost_source("hierarchical"), CostSource::kMeasureHierarchical);
}

// auto's independent candidates split across the ranks (share_across(),
// what relabel_comm() does) give the labelling one process finds with the
// same seed: every candidate's objective arrives, in order, at every rank
// count. 64 ranks on a 2x2 torus of 16-rank nodes with noise, ranks
// scattered: no start reaches the lower bound, so all 4 starts, METIS's
// slabs and the fibre graph run (1 to 6 per rank).
TEST(RelabelCommTest, StartsSplitAcrossRanksGiveOneProcesssLabelling) {
  IrregularSpec spec;
  spec.node_ranks = {16, 16, 16, 16};
  spec.torus = {2, 2};
  spec.noise = 0.2;
  spec.order = RankOrder::kRandom;
  spec.seed = 5;
  const SyntheticMachine machine = generate_irregular(spec);
  RelabelOptions o;
  o.seed = 3;
  o.time_limit = 600;
  const RelabelResult alone = relabel(machine.costs, Grid({8, 8}), o);
  o.share = share_across(MPI_COMM_WORLD);
  const RelabelResult split = relabel(machine.costs, Grid({8, 8}), o);
  ASSERT_FALSE(alone.time_limited);
  ASSERT_FALSE(split.time_limited);
  EXPECT_EQ(split.labelling, alone.labelling);
  int starts = 0, others = 0;
  ASSERT_EQ(split.candidates.size(), alone.candidates.size());
  for (std::size_t i = 0; i < alone.candidates.size(); ++i) {
    EXPECT_EQ(split.candidates[i].name, alone.candidates[i].name);
    EXPECT_EQ(split.candidates[i].objective, alone.candidates[i].objective)
        << alone.candidates[i].name;
    starts += alone.candidates[i].name.rfind("multilevel start", 0) == 0;
    others += alone.candidates[i].name == "metis" || alone.candidates[i].name == "fibre graph";
  }
  EXPECT_EQ(starts, 4);
  EXPECT_EQ(others, 2);
}

TEST(RelabelCommTest, MismatchedArgumentsAcrossRanksAreReportedNotDeadlocked) {
  const int p = world_size();
  if (p < 2) GTEST_SKIP() << "needs two ranks to disagree";
  const int me = world_rank();
  // Same grid size, different shape on rank 1.
  if (p % 2 == 0) {
    const Grid grid = me == 1 ? Grid({p}) : Grid({2, p / 2});
    EXPECT_THROW(relabel_comm(MPI_COMM_WORLD, grid, quick(CostSource::kModel)),
                 std::invalid_argument);
  }
  // Different seeds.
  ShapeOptions o = quick(CostSource::kModel);
  o.seed = me == 1 ? 7 : 1;
  try {
    relabel_comm(MPI_COMM_WORLD, Grid({p}), o);
    ADD_FAILURE() << "no error";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("options"), std::string::npos) << e.what();
  }
  // Different matrices.
  o = quick(CostSource::kMatrix);
  o.matrix = alternating_machine(p);
  if (me == 1) o.matrix[1] = 5;
  EXPECT_THROW(relabel_comm(MPI_COMM_WORLD, Grid({p}), o), std::invalid_argument);
}

TEST(RelabelCommTest, InterCommunicatorsAreRefused) {
  const int p = world_size();
  if (p < 2) GTEST_SKIP() << "an inter-communicator needs two groups";
  if (mpi::simulated()) GTEST_SKIP() << "SMPI has no MPI_Intercomm_create";
  const int me = world_rank();
  MPI_Comm half = MPI_COMM_NULL, inter = MPI_COMM_NULL;
  MPI_Comm_split(MPI_COMM_WORLD, me % 2, me, &half);
  MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, me % 2 == 0 ? 1 : 0, 99, &inter);
  EXPECT_THROW(relabel_comm(inter, Grid({1}), quick(CostSource::kModel)), std::invalid_argument);
  MPI_Comm_free(&inter);
  MPI_Comm_free(&half);
}

// Where the world's ranks run, as MPI_Comm_split_type sees it: the node of
// every world rank (nodes in order of their first rank) and its index there.
struct Nodes {
  int count = 0;
  int largest = 0;  // ranks on the fullest node
  std::vector<int> of, index;
};
Nodes world_nodes() {
  MPI_Comm node = MPI_COMM_NULL;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, world_rank(), MPI_INFO_NULL, &node);
  int leader = world_rank(), index = 0;
  MPI_Allreduce(MPI_IN_PLACE, &leader, 1, MPI_INT, MPI_MIN, node);
  MPI_Comm_rank(node, &index);
  MPI_Comm_free(&node);
  const auto p = static_cast<std::size_t>(world_size());
  std::vector<int> leaders(p);
  Nodes n;
  n.index.resize(p);
  MPI_Allgather(&leader, 1, MPI_INT, leaders.data(), 1, MPI_INT, MPI_COMM_WORLD);
  MPI_Allgather(&index, 1, MPI_INT, n.index.data(), 1, MPI_INT, MPI_COMM_WORLD);
  std::vector<int> first;  // leader of each node, in order
  for (int l : leaders) {
    auto it = std::find(first.begin(), first.end(), l);
    n.of.push_back(static_cast<int>(it - first.begin()));
    if (it == first.end()) first.push_back(l);
  }
  n.count = static_cast<int>(first.size());
  for (int i : n.index) n.largest = std::max(n.largest, i + 1);
  return n;
}

// Dispatched collectives on the shaped communicator give MPI's results,
// and every rank chose the same way.
void expect_collectives_work(const ShapedComm& s) {
  const int p = world_size();
  MPI_Comm comm = s.comm().get();
  const int me = s.comm().rank();
  std::vector<int> send(1000), ours(1000), theirs(1000);
  for (std::size_t i = 0; i < send.size(); ++i) send[i] = static_cast<int>((me + 1) * 31 + i);
  ASSERT_EQ(coll::dispatch::allreduce(send.data(), ours.data(), 1000, MPI_INT, MPI_SUM, comm),
            MPI_SUCCESS);
  MPI_Allreduce(send.data(), theirs.data(), 1000, MPI_INT, MPI_SUM, comm);
  EXPECT_EQ(ours, theirs);
  const std::size_t choice = std::hash<std::string>()(coll::dispatch::last_choice());
  unsigned long mine = static_cast<unsigned long>(choice), low = mine, high = mine;
  MPI_Allreduce(&mine, &low, 1, MPI_UNSIGNED_LONG, MPI_MIN, comm);
  MPI_Allreduce(&mine, &high, 1, MPI_UNSIGNED_LONG, MPI_MAX, comm);
  EXPECT_EQ(low, high) << "ranks chose differently: " << coll::dispatch::last_choice();
  // Blocks land at their new rank whatever order the levels imply.
  std::vector<int> all(static_cast<std::size_t>(p) * 3, -1), expected;
  const int block[3] = {me, me * 7, -me};
  ASSERT_EQ(coll::dispatch::allgather(block, 3, MPI_INT, all.data(), 3, MPI_INT, comm),
            MPI_SUCCESS);
  for (int r = 0; r < p; ++r) expected.insert(expected.end(), {r, r * 7, -r});
  EXPECT_EQ(all, expected);
}

// relabel_comm() gives the shaped communicator's nodes to the collectives:
// with several nodes a context already exists when relabel_comm() returns,
// so set_groups() refuses a second table (which it would accept without
// that call); on one node nothing is set and the first collective decides.
TEST(RelabelCommTest, CollectivesLearnTheShapedCommunicatorsNodes) {
  const int p = world_size();
  const Nodes nodes = world_nodes();
  const Grid grid = complete_grid(p, {0, 0});
  const std::size_t before = coll::dispatch::contexts();
  {
    const ShapedComm s = relabel_comm(MPI_COMM_WORLD, grid, quick(CostSource::kModel));
    expect_well_shaped(s);
    if (nodes.count > 1) {
      EXPECT_EQ(s.report().collective_levels, 1);
      EXPECT_EQ(coll::dispatch::contexts(), before + 1);
      EXPECT_THROW(coll::dispatch::set_groups(s.comm().get(), {std::vector<int>(p, 0)}),
                   std::logic_error);
    } else {
      EXPECT_EQ(s.report().collective_levels, 0);
      EXPECT_EQ(coll::dispatch::contexts(), before);
    }
    expect_collectives_work(s);
    EXPECT_EQ(coll::dispatch::contexts(), before + 1);
  }
  EXPECT_EQ(coll::dispatch::contexts(), before);  // freed with the communicator
  // Switched off: the caller may give its own groups.
  ShapeOptions o = quick(CostSource::kModel);
  o.collective_groups = false;
  const ShapedComm s = relabel_comm(MPI_COMM_WORLD, grid, o);
  EXPECT_EQ(s.report().collective_levels, 0);
  EXPECT_EQ(coll::dispatch::contexts(), before);
  std::vector<int> pairs(static_cast<std::size_t>(p));
  for (int r = 0; r < p; ++r) pairs[static_cast<std::size_t>(r)] = r / 2;
  coll::dispatch::set_groups(s.comm().get(), {pairs});
  expect_collectives_work(s);
}

// A structured cost file on the job's own nodes adds its racks as a second
// level (when they are neither one rack nor one per node); a file whose
// nodes are not the job's adds nothing.
TEST(RelabelCommTest, RacksOfACostFileOnTheJobsNodesBecomeALevel) {
  const int p = world_size();
  const Nodes nodes = world_nodes();
  const auto write_machine = [&](const std::string& path, const std::vector<int>& node_of,
                                 const std::vector<int>& index, int count) {
    StructuredSpec spec;
    spec.cores_per_node = *std::max_element(index.begin(), index.end()) + 1;
    spec.core_costs.assign(static_cast<std::size_t>(spec.cores_per_node) * spec.cores_per_node, 1);
    spec.nodes = count;
    spec.racks = count >= 2 ? 2 : 1;
    for (int n = 0; n < count; ++n) spec.node_rack.push_back(n * spec.racks / count);
    spec.rack_costs =
        spec.racks == 2 ? std::vector<double>{10, 100, 100, 10} : std::vector<double>{10};
    for (int r = 0; r < p; ++r) {
      spec.ranks.push_back(
          {node_of[static_cast<std::size_t>(r)], index[static_cast<std::size_t>(r)]});
    }
    if (world_rank() == 0) write_structured_costs(path, StructuredCosts(std::move(spec)));
    MPI_Barrier(MPI_COMM_WORLD);
  };
  ShapeOptions o = quick(CostSource::kFile);
  o.cost_file = testing::scratch_path("shape_racks.txt");
  write_machine(o.cost_file, nodes.of, nodes.index, nodes.count);
  const ShapedComm s = relabel_comm(MPI_COMM_WORLD, complete_grid(p, {0, 0}), o);
  expect_well_shaped(s);
  // Levels left: nodes unless each holds one rank, racks unless they are
  // the nodes; the nodes when neither is left.
  const int node_level = nodes.largest > 1 ? 1 : 0;
  const int rack_level = nodes.count >= 3 ? 1 : 0;
  EXPECT_EQ(s.report().collective_levels,
            nodes.count > 1 ? std::max(1, node_level + rack_level) : 0);
  expect_collectives_work(s);
  // Another placement: ranks alternate over two nodes in the file.
  std::vector<int> alternate(static_cast<std::size_t>(p)), index(static_cast<std::size_t>(p));
  for (int r = 0; r < p; ++r) {
    alternate[static_cast<std::size_t>(r)] = p > 1 ? r % 2 : 0;
    index[static_cast<std::size_t>(r)] = p > 1 ? r / 2 : 0;
  }
  o.cost_file = testing::scratch_path("shape_other_racks.txt");
  write_machine(o.cost_file, alternate, index, p > 1 ? 2 : 1);
  const ShapedComm other = relabel_comm(MPI_COMM_WORLD, complete_grid(p, {0, 0}), o);
  EXPECT_EQ(other.report().collective_levels, nodes.count > 1 ? 1 : 0);
  expect_collectives_work(other);
}

// job_costs() once, then shape_comm() with labellings the caller chose
// (what the ordering comparison harness does for every ordering).
TEST(ShapeCommTest, GivenLabellingsShapeTheCommunicator) {
  const int p = world_size(), me = world_rank();
  ShapeOptions o = quick(CostSource::kMatrix);
  o.matrix = alternating_machine(p);
  const JobCosts costs = job_costs(MPI_COMM_WORLD, o);
  ASSERT_TRUE(costs.costs);
  EXPECT_EQ(costs.costs->size(), p);
  EXPECT_EQ(costs.source, "matrix");
  const Grid grid = two_rows(p);
  std::vector<OldRank> reversed;
  for (int i = p - 1; i >= 0; --i) reversed.push_back(OldRank(i));
  for (const Labelling& given : {Labelling::identity(p), Labelling(reversed)}) {
    const ShapedComm s = shape_comm(MPI_COMM_WORLD, grid, given, costs, o);
    expect_well_shaped(s);
    EXPECT_EQ(s.labelling(), given);
    EXPECT_EQ(s.comm().rank(), given.new_of(OldRank(me)).value());
    EXPECT_EQ(s.report().algorithm, "given");
    EXPECT_EQ(s.report().cost_source, "matrix");
    EXPECT_DOUBLE_EQ(s.report().after.value.primary,
                     evaluate(*costs.costs, grid, given, o.objective).value.primary);
  }
}

TEST(ShapeCommTest, LabellingsThatDoNotFitOrDifferFailOnEveryRank) {
  const int p = world_size(), me = world_rank();
  ShapeOptions o = quick(CostSource::kMatrix);
  o.matrix = alternating_machine(p);
  const JobCosts costs = job_costs(MPI_COMM_WORLD, o);
  EXPECT_THROW(shape_comm(MPI_COMM_WORLD, Grid({p}), Labelling::identity(p + 1), costs, o),
               std::invalid_argument);
  EXPECT_THROW(shape_comm(MPI_COMM_WORLD, Grid({p + 1}), Labelling::identity(p), costs, o),
               std::invalid_argument);
  if (p >= 2) {
    // Rank 1 holds another labelling: reported, not a deadlock or a mix.
    std::vector<OldRank> swapped;
    for (int i = 0; i < p; ++i) swapped.push_back(OldRank(i));
    if (me == 1) std::swap(swapped[0], swapped[1]);
    try {
      shape_comm(MPI_COMM_WORLD, Grid({p}), Labelling(swapped), costs, o);
      ADD_FAILURE() << "no error";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("labelling"), std::string::npos) << e.what();
    }
  }
  // Costs of another job size.
  JobCosts wrong = costs;
  wrong.costs = std::make_shared<DenseCosts>(p + 1, alternating_machine(p + 1));
  EXPECT_THROW(shape_comm(MPI_COMM_WORLD, Grid({p}), Labelling::identity(p), wrong, o),
               std::invalid_argument);
}

// A stencil: the shaped communicator carries the grid's topology, and
// MPI_Cart_shift names the neighbours the labelling implies (the old rank
// at the neighbouring grid position).
TEST(RelabelCommTest, StencilCommunicatorsAreCartesian) {
  const int p = world_size(), me = world_rank();
  const Grid g = two_rows(p);
  for (const char* text : {"stencil:periodic", "stencil", "stencil:periodic=0x1,diagonals"}) {
    if (g.ndims() == 1 && std::string(text).find("x1") != std::string::npos) continue;
    ShapeOptions o = quick(CostSource::kMatrix);
    o.matrix = alternating_machine(p);
    o.objective = ObjectiveSpec::parse("", Pattern::parse(text));
    const ShapedComm s = relabel_comm(MPI_COMM_WORLD, g, o);
    expect_well_shaped(s);
    ASSERT_TRUE(s.report().after.stencil.has_value()) << text;
    // Its lower bound is reported, and no higher than what was found.
    ASSERT_TRUE(s.report().bound.has_value()) << text;
    EXPECT_TRUE(s.report().bound->stencil.has_value()) << text;
    EXPECT_LE(s.report().bound->primary, s.report().after.value.primary * (1 + 1e-12)) << text;
    if (!mpi::simulated()) {  // SimGrid 3.32 lacks MPI_Topo_test (MPI_Cart_get works)
      int topology = MPI_UNDEFINED;
      ASSERT_EQ(MPI_Topo_test(s.comm().get(), &topology), MPI_SUCCESS);
      ASSERT_EQ(topology, MPI_CART) << text;
    }
    std::vector<int> dims(static_cast<std::size_t>(g.ndims())), periods(dims.size()),
        coords(dims.size());
    ASSERT_EQ(MPI_Cart_get(s.comm().get(), g.ndims(), dims.data(), periods.data(), coords.data()),
              MPI_SUCCESS);
    EXPECT_EQ(dims, g.dims());
    EXPECT_EQ(coords, s.coords());
    const Stencil stencil(Pattern::parse(text).stencil, g);
    for (int k = 0; k < g.ndims(); ++k) {
      EXPECT_EQ(periods[k], stencil.periodic(k) ? 1 : 0) << text;
      int down = -2, up = -2;
      ASSERT_EQ(MPI_Cart_shift(s.comm().get(), k, 1, &down, &up), MPI_SUCCESS);
      const int position = s.new_of(OldRank(me)).value();
      const int want_down = stencil.neighbour(position, 2 * k);
      const int want_up = stencil.neighbour(position, 2 * k + 1);
      EXPECT_EQ(down, want_down < 0 ? MPI_PROC_NULL : want_down) << text << " k " << k;
      EXPECT_EQ(up, want_up < 0 ? MPI_PROC_NULL : want_up) << text << " k " << k;
      // The world rank there is the labelling's old rank at that position.
      int world_down = -1, world_up = -1;
      MPI_Sendrecv(&me, 1, MPI_INT, up, 0, &world_down, 1, MPI_INT, down, 0, s.comm().get(),
                   MPI_STATUS_IGNORE);
      MPI_Sendrecv(&me, 1, MPI_INT, down, 1, &world_up, 1, MPI_INT, up, 1, s.comm().get(),
                   MPI_STATUS_IGNORE);
      if (down != MPI_PROC_NULL) {
        EXPECT_EQ(world_down, s.old_of(NewRank(down)).value());
      }
      if (up != MPI_PROC_NULL) {
        EXPECT_EQ(world_up, s.old_of(NewRank(up)).value());
      }
    }
  }
  // Periods given in the options win for the topology; a stencil or
  // periods that do not fit the grid fail on every rank.
  ShapeOptions o = quick(CostSource::kMatrix);
  o.matrix = alternating_machine(p);
  o.periods.assign(static_cast<std::size_t>(g.ndims()), 1);
  const ShapedComm s = relabel_comm(MPI_COMM_WORLD, g, o);
  std::vector<int> dims(static_cast<std::size_t>(g.ndims())), periods(dims.size()),
      coords(dims.size());
  ASSERT_EQ(MPI_Cart_get(s.comm().get(), g.ndims(), dims.data(), periods.data(), coords.data()),
            MPI_SUCCESS);
  EXPECT_EQ(periods, o.periods);
  o.periods.push_back(0);
  EXPECT_THROW(relabel_comm(MPI_COMM_WORLD, g, o), std::invalid_argument);
  o.periods.clear();
  o.objective = ObjectiveSpec::parse("", Pattern::parse("stencil:weights=1x1x1"));
  try {
    relabel_comm(MPI_COMM_WORLD, g, o);
    ADD_FAILURE() << "a stencil for 3 dimensions on grid " << g.to_string();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("weights name 3 dimensions"), std::string::npos)
        << e.what();
  }
}

// Pairs (2i, 2i+1) talk heavily, on a machine whose nodes are the even and
// the odd ranks: each pair must land on one node, and every rank of the
// shaped communicator has its vertex's neighbours.
TEST(RelabelGraphCommTest, PairsThatTalkShareANode) {
  const int p = world_size();
  const int me = world_rank();
  ShapeOptions o = quick(CostSource::kMatrix);
  o.matrix = alternating_machine(p);
  std::vector<int> partners;
  std::vector<double> weights;
  if ((me ^ 1) < p) {
    partners.push_back(me ^ 1);
    weights.push_back(1e6);
  }
  if (p > 2) {  // a light ring as well
    partners.push_back((me + 1) % p);
    weights.push_back(1);
  }
  const std::shared_ptr<const TrafficGraph> graph = gather_graph(MPI_COMM_WORLD, partners, weights);
  ASSERT_EQ(graph->vertices(), p);
  const ShapedComm s = relabel_graph_comm(MPI_COMM_WORLD, graph, o);
  expect_well_shaped(s);
  EXPECT_TRUE(s.report().after.graph.has_value());
  if (p >= 4) {
    for (int v = 0; v + 1 < p; v += 2) {
      EXPECT_EQ(s.old_of(NewRank(v)).value() % 2, s.old_of(NewRank(v + 1)).value() % 2) << v;
    }
    EXPECT_LT(s.report().after.value.primary, s.report().before.value.primary);
  }
#ifndef SMPI_H  // SimGrid 3.32 has no distributed graphs
  const int mine = s.comm().rank();
  int in = -1, out = -1, weighted = 0;
  ASSERT_EQ(MPI_Dist_graph_neighbors_count(s.comm().get(), &in, &out, &weighted), MPI_SUCCESS);
  ASSERT_EQ(in, graph->degree(mine));
  ASSERT_EQ(out, in);
  std::vector<int> sources(static_cast<std::size_t>(in) + 1), sw(sources.size()),
      destinations(sources.size()), dw(sources.size());
  ASSERT_EQ(MPI_Dist_graph_neighbors(s.comm().get(), in, sources.data(), sw.data(), out,
                                     destinations.data(), dw.data()),
            MPI_SUCCESS);
  for (int i = 0; i < in; ++i) {
    EXPECT_EQ(sources[i], graph->neighbour(graph->begin(mine) + static_cast<std::size_t>(i)));
  }
#endif
}

TEST(RelabelGraphCommTest, BadOrDifferingGraphsFailOnEveryRank) {
  const int p = world_size();
  const int me = world_rank();
  const auto message = [](const std::function<void()>& f) {
    try {
      f();
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_NE(message([&] { gather_graph(MPI_COMM_WORLD, {me}); }).find("not another rank"),
            std::string::npos);
  EXPECT_NE(message([&] { gather_graph(MPI_COMM_WORLD, {}, {1.0}); }).find("0 partners but 1"),
            std::string::npos);
  ShapeOptions o = quick(CostSource::kMatrix);
  o.matrix = alternating_machine(p);
  const auto wrong = std::make_shared<const TrafficGraph>(p + 1, std::vector<WeightedEdge>{});
  EXPECT_NE(message([&] {
              relabel_graph_comm(MPI_COMM_WORLD, wrong, o);
            }).find("vertices but the communicator has"),
            std::string::npos);
  if (p >= 2) {
    // Rank 1 alone passes another graph: reported, not deadlocked.
    std::vector<WeightedEdge> edges = {{0, 1, me == 1 ? 2.0 : 1.0}};
    const auto differing = std::make_shared<const TrafficGraph>(p, edges);
    EXPECT_NE(message([&] {
                relabel_graph_comm(MPI_COMM_WORLD, differing, o);
              }).find("the traffic graph differ(s) from rank 0's"),
              std::string::npos);
  }
}

TEST(RelabelCommTest, CompleteGridFillsZerosLikeDimsCreate) {
  EXPECT_EQ(complete_grid(12, {0, 0}).dims(), (std::vector<int>{4, 3}));
  EXPECT_EQ(complete_grid(12, {0, 2}).dims(), (std::vector<int>{6, 2}));
  EXPECT_EQ(complete_grid(7, {0, 0}).dims(), (std::vector<int>{7, 1}));
  EXPECT_THROW(complete_grid(12, {5, 0}), std::invalid_argument);
  EXPECT_THROW(complete_grid(12, {-1}), std::invalid_argument);
  EXPECT_THROW(complete_grid(12, {}), std::invalid_argument);
  EXPECT_THROW(complete_grid(12, {65536, 65536, 65536, 65536, 0}), std::invalid_argument);
}

}  // namespace
}  // namespace rankshape
