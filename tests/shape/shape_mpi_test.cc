// relabel_comm() under mpirun at 1, 2, 3, 4, 7 and 8 ranks: every cost
// source, the communicators it returns, identical labelling on all ranks,
// translation, and bad arguments reported on every rank.
#include <gtest/gtest.h>

#include <numeric>
#include <string>
#include <vector>

#include "lib/io/formats.h"
#include "lib/measure/pingpong.h"
#include "lib/shape/shape.h"
#include "tests/testing/files.h"

namespace rankshape {
namespace {

int world_rank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}
int world_size() {
  int p = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  return p;
}

// Two "nodes": old ranks alternate between them (a scrambled job), cost 1
// inside a node and 100 across.
std::vector<double> alternating_machine(int p) {
  std::vector<double> m(static_cast<std::size_t>(p) * p, 0);
  for (int a = 0; a < p; ++a) {
    for (int b = 0; b < p; ++b) {
      if (a != b) m[static_cast<std::size_t>(a) * p + b] = a % 2 == b % 2 ? 1 : 100;
    }
  }
  return m;
}

Grid two_rows(int p) { return p % 2 == 0 ? Grid({2, p / 2}) : Grid({p}); }

ShapeOptions quick(CostSource source) {
  ShapeOptions o;
  o.source = source;
  o.time_limit = 2;
  o.measurement.sizes = {8, 1024};
  o.measurement.repetitions = 2;
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
  for (int k = 0; k < g.ndims(); ++k) {
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
