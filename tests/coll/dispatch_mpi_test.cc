// dispatch.h: results equal MPI's whatever it chooses, every rank makes
// the same choice, a tuning table's winners are used, contexts are built
// once per communicator and freed with it; trials, and a rank's veto of
// them; the benchmarks' timing.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "lib/coll/calibrate.h"
#include "lib/coll/config.h"
#include "lib/coll/dispatch.h"
#include "lib/coll/hierarchy.h"
#include "lib/coll/table.h"
#include "lib/coll/workload.h"
#include "tests/testing/clock.h"
#include "tests/testing/world.h"

namespace rankshape::coll {
namespace {

using ::rankshape::testing::world_rank;
using ::rankshape::testing::world_size;

std::vector<std::vector<int>> blocks_of(int n) {
  std::vector<int> g(static_cast<std::size_t>(world_size()));
  for (std::size_t r = 0; r < g.size(); ++r) g[r] = static_cast<int>(r) / n;
  return {g};
}
std::vector<std::vector<int>> dealt_over(int n) {
  std::vector<int> g(static_cast<std::size_t>(world_size()));
  for (std::size_t r = 0; r < g.size(); ++r) g[r] = static_cast<int>(r) % n;
  return {g};
}

// A communicator with the given hierarchy (empty: nodes), freed at the end.
class Comm {
 public:
  explicit Comm(std::vector<std::vector<int>> groups) {
    MPI_Comm_dup(MPI_COMM_WORLD, &comm_);
    if (!groups.empty()) dispatch::set_groups(comm_, std::move(groups));
  }
  ~Comm() { MPI_Comm_free(&comm_); }
  MPI_Comm get() const { return comm_; }

 private:
  MPI_Comm comm_ = MPI_COMM_NULL;
};

// Every rank's last choice is the same.
void expect_agreed(const std::string& what) {
  const std::size_t h = std::hash<std::string>()(dispatch::last_choice());
  unsigned long mine = static_cast<unsigned long>(h), low = mine, high = mine;
  MPI_Allreduce(&mine, &low, 1, MPI_UNSIGNED_LONG, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(&mine, &high, 1, MPI_UNSIGNED_LONG, MPI_MAX, MPI_COMM_WORLD);
  EXPECT_EQ(low, high) << what << ": ranks chose differently";
}

std::vector<int> data(int r, std::size_t n, int salt) {
  std::vector<int> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<int>((r + 3) * 17 + i * 5 + salt) % 997;
  return v;
}

// x -> a x + b composed in rank order (associative, not commutative).
void compose(void* in, void* inout, int* len, MPI_Datatype*) {
  auto* f = static_cast<std::uint32_t*>(in);
  auto* g = static_cast<std::uint32_t*>(inout);
  for (int i = 0; i < *len; ++i) {
    const std::uint32_t a = f[2 * i] * g[2 * i], b = f[2 * i] * g[2 * i + 1] + f[2 * i + 1];
    g[2 * i] = a;
    g[2 * i + 1] = b;
  }
}

// First test in this file: later ones run with this table loaded (the
// settings are read once, at the first dispatched call).
TEST(DispatchTest, TuningTableWinnersAreUsed) {
  const int p = world_size();
  std::string dir = std::getenv("TEST_TMPDIR") ? std::getenv("TEST_TMPDIR") : "/tmp";
  const std::string path = dir + "/rankshape_table.json";
  const auto groups = blocks_of(2);
  const std::vector<int> sizes = level_sizes(Hierarchy(MPI_COMM_WORLD, groups));
  if (world_rank() == 0) {
    TuningTable t;
    Model m;
    m.sizes = sizes;
    m.links.assign(sizes.size(), LinkCost{1e-6, 1e-9});
    t.models.push_back(m);
    t.entries.push_back({Collective::kAllreduce, sizes, 4096,
                         *Config::parse("hierarchical segment=1024"), 0, 0, 0});
    t.entries.push_back({Collective::kBcast, sizes, 4096,
                         *Config::parse("hierarchical levels=binomial,chain"), 0, 0, 0});
    t.entries.push_back({Collective::kBarrier, sizes, 0, Config{}, 0, 0, 0});
    write_table(path, t);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  setenv("RANKSHAPE_COLL_TABLE", path.c_str(), 1);
  const Comm comm(groups);
  const Hierarchy h(MPI_COMM_WORLD, groups);
  const int me = world_rank();
  std::vector<int> send = data(me, 1024, 1), ours(1024), theirs(1024);
  ASSERT_EQ(dispatch::allreduce(send.data(), ours.data(), 1024, MPI_INT, MPI_SUM, comm.get()),
            MPI_SUCCESS);
  const std::string allreduce_choice = dispatch::last_choice();
  MPI_Allreduce(send.data(), theirs.data(), 1024, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  EXPECT_EQ(ours, theirs);
  std::vector<int> b = me == p - 1 ? data(me, 1024, 2) : std::vector<int>(1024, 0);
  ASSERT_EQ(dispatch::bcast(b.data(), 1024, MPI_INT, p - 1, comm.get()), MPI_SUCCESS);
  EXPECT_EQ(b, data(p - 1, 1024, 2));
  const std::string bcast_choice = dispatch::last_choice();
  if (h.useful()) {
    EXPECT_EQ(allreduce_choice, "hierarchical segment=1024");
    EXPECT_EQ(bcast_choice, "hierarchical levels=binomial,chain");
  } else {
    EXPECT_EQ(allreduce_choice, "native");  // one group, or groups of one rank
  }
  ASSERT_EQ(dispatch::barrier(comm.get()), MPI_SUCCESS);
  EXPECT_EQ(dispatch::last_choice(), "native");
  expect_agreed("table");
}

TEST(DispatchTest, ResultsMatchMpiWhateverTheChoice) {
  const int p = world_size(), me = world_rank();
  for (const auto& groups :
       {blocks_of(2), blocks_of(3), dealt_over(3), std::vector<std::vector<int>>{}}) {
    const Comm comm(groups);
    const MPI_Comm c = comm.get();
    for (int count : {0, 1, 7, 3001}) {
      const std::size_t n = static_cast<std::size_t>(count);
      const std::string what = "count " + std::to_string(count);
      for (int root : {0, p - 1}) {
        std::vector<int> b = me == root ? data(root, n, 1) : std::vector<int>(n, -1);
        ASSERT_EQ(dispatch::bcast(b.data(), count, MPI_INT, root, c), MPI_SUCCESS);
        expect_agreed("bcast " + what);
        EXPECT_EQ(b, data(root, n, 1)) << "bcast " << what;

        std::vector<int> send = data(me, n, 2), ours(n, -1), theirs(n, -1);
        ASSERT_EQ(dispatch::reduce(send.data(), ours.data(), count, MPI_INT, MPI_SUM, root, c),
                  MPI_SUCCESS);
        expect_agreed("reduce " + what);
        PMPI_Reduce(send.data(), theirs.data(), count, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD);
        if (me == root) {
          EXPECT_EQ(ours, theirs) << "reduce " << what;
        }

        std::vector<int> all(n * p, -1), all_theirs(n * p, -1);
        ASSERT_EQ(
            dispatch::gather(send.data(), count, MPI_INT, all.data(), count, MPI_INT, root, c),
            MPI_SUCCESS);
        PMPI_Gather(send.data(), count, MPI_INT, all_theirs.data(), count, MPI_INT, root,
                    MPI_COMM_WORLD);
        if (me == root) {
          EXPECT_EQ(all, all_theirs) << "gather " << what;
        }
        std::vector<int> part(n, -1), part_theirs(n, -1);
        const std::vector<int> spread = data(root, n * p, 3);
        ASSERT_EQ(
            dispatch::scatter(spread.data(), count, MPI_INT, part.data(), count, MPI_INT, root, c),
            MPI_SUCCESS);
        PMPI_Scatter(spread.data(), count, MPI_INT, part_theirs.data(), count, MPI_INT, root,
                     MPI_COMM_WORLD);
        EXPECT_EQ(part, part_theirs) << "scatter " << what;
      }
      std::vector<int> send = data(me, n, 4), ours(n, -1), theirs(n, -1);
      ASSERT_EQ(dispatch::allreduce(send.data(), ours.data(), count, MPI_INT, MPI_MAX, c),
                MPI_SUCCESS);
      expect_agreed("allreduce " + what);
      PMPI_Allreduce(send.data(), theirs.data(), count, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
      EXPECT_EQ(ours, theirs) << "allreduce " << what;

      std::vector<int> all(n * p, -1), all_theirs(n * p, -1);
      ASSERT_EQ(dispatch::allgather(send.data(), count, MPI_INT, all.data(), count, MPI_INT, c),
                MPI_SUCCESS);
      PMPI_Allgather(send.data(), count, MPI_INT, all_theirs.data(), count, MPI_INT,
                     MPI_COMM_WORLD);
      EXPECT_EQ(all, all_theirs) << "allgather " << what;

      const std::vector<int> blocks = data(me, n * p, 5);
      std::vector<int> a2a(n * p, -1), a2a_theirs(n * p, -1);
      ASSERT_EQ(dispatch::alltoall(blocks.data(), count, MPI_INT, a2a.data(), count, MPI_INT, c),
                MPI_SUCCESS);
      PMPI_Alltoall(blocks.data(), count, MPI_INT, a2a_theirs.data(), count, MPI_INT,
                    MPI_COMM_WORLD);
      EXPECT_EQ(a2a, a2a_theirs) << "alltoall " << what;

      std::vector<int> rs(n, -1), rs_theirs(n, -1);
      ASSERT_EQ(
          dispatch::reduce_scatter_block(blocks.data(), rs.data(), count, MPI_INT, MPI_SUM, c),
          MPI_SUCCESS);
      PMPI_Reduce_scatter_block(blocks.data(), rs_theirs.data(), count, MPI_INT, MPI_SUM,
                                MPI_COMM_WORLD);
      EXPECT_EQ(rs, rs_theirs) << "reduce_scatter_block " << what;
    }
    ASSERT_EQ(dispatch::barrier(c), MPI_SUCCESS);
  }
}

// Without a table row, the first call of a size class times native and
// the model's best hierarchical configurations and keeps the fastest.
TEST(DispatchTest, TrialsKeepTheFastestOncePerSizeClass) {
  const auto groups = blocks_of(2);
  const Comm comm(groups);
  const bool useful = Hierarchy(MPI_COMM_WORLD, groups).useful();
  std::vector<int> send(1000, 1), recv(1000, 0);
  const auto reduce = [&](int count) {
    ASSERT_EQ(dispatch::reduce(send.data(), recv.data(), count, MPI_INT, MPI_SUM, 0, comm.get()),
              MPI_SUCCESS);
  };
  reduce(100);  // 400 B: the class of up to 512 B
  const std::vector<dispatch::Trial> trials = dispatch::last_trials();
  const std::string choice = dispatch::last_choice();
  const double predicted = dispatch::last_predicted();
  expect_agreed("reduce after a trial");
  if (!useful) {
    EXPECT_TRUE(trials.empty());
    EXPECT_EQ(choice, "native");
    EXPECT_EQ(predicted, -1);  // no hierarchy: not decided
    return;
  }
  // The model's price of the choice, for reports: the same for the next
  // call of that size.
  EXPECT_GT(predicted, 0);
  // Native, the model's 2 best hierarchical, its best for each top-level
  // algorithm of its own that none before runs and that it prices within
  // 2x of its best, the textbook flat one.
  ASSERT_GE(trials.size(), 4u);
  EXPECT_EQ(trials[0].config, "native");
  EXPECT_LE(trials[1].predicted, trials[2].predicted);
  const auto top = [](const std::string& config) { return Config::parse(config)->level(1); };
  for (std::size_t i = 3; i + 1 < trials.size(); ++i) {
    const Algorithm a = top(trials[i].config);
    EXPECT_NE(a, Algorithm::kNative) << trials[i].config;
    for (std::size_t j = 1; j < i; ++j) EXPECT_NE(a, top(trials[j].config)) << trials[i].config;
    EXPECT_GE(trials[i].predicted, trials[2].predicted) << trials[i].config;
    EXPECT_LE(trials[i].predicted, 2 * trials[1].predicted) << trials[i].config;
  }
  EXPECT_EQ(trials.back().config, "flat=binomial");  // 400 B
  std::size_t best = 0;
  for (std::size_t i = 0; i < trials.size(); ++i) {
    EXPECT_GE(trials[i].seconds, 0);
    if (trials[i].seconds < trials[best].seconds) best = i;
  }
  EXPECT_EQ(choice, trials[best].config);
  reduce(100);
  EXPECT_EQ(dispatch::last_predicted(), predicted);
  reduce(120);  // the same class: no trial, the same choice
  EXPECT_TRUE(dispatch::last_trials().empty());
  EXPECT_EQ(dispatch::last_choice(), choice);
  reduce(1000);  // another class
  ASSERT_GE(dispatch::last_trials().size(), 4u);
  EXPECT_EQ(dispatch::last_trials().back().config, "flat=rabenseifner");  // 4,000 B
  expect_agreed("reduce after a second trial");
}

// An allreduce's trial also times this communicator's own reduce then
// bcast of that size, and its own reduce_scatter_block then allgather of
// the message's blocks (Träff, Gropp and Thakur's guidelines), deciding
// them first: later calls of those sizes make no trial of their own.
TEST(DispatchTest, AllreduceTriesItsOwnReduceThenBcast) {
  const auto groups = blocks_of(3);  // the table has allreduce rows for blocks of 2
  const Comm comm(groups);
  const bool useful = Hierarchy(MPI_COMM_WORLD, groups).useful();
  std::vector<int> send = data(world_rank(), 300, 7), sum(300, 0), expected(300, 0);
  ASSERT_EQ(dispatch::allreduce(send.data(), sum.data(), 300, MPI_INT, MPI_SUM, comm.get()),
            MPI_SUCCESS);
  const std::vector<dispatch::Trial> trials = dispatch::last_trials();
  const std::string choice = dispatch::last_choice();
  expect_agreed("allreduce after a trial");
  MPI_Allreduce(send.data(), expected.data(), 300, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  EXPECT_EQ(sum, expected);
  if (!useful) {
    EXPECT_TRUE(trials.empty());
    return;
  }
  // Native, the hierarchies (dispatch.h), the textbook flat one, then the
  // two compositions.
  ASSERT_GE(trials.size(), 6u);
  const std::size_t n = trials.size();
  EXPECT_EQ(trials[0].config, "native");
  EXPECT_EQ(trials[n - 3].config, "flat=recursive-doubling");  // 1,200 B
  ASSERT_EQ(dispatch::reduce(send.data(), sum.data(), 300, MPI_INT, MPI_SUM, 0, comm.get()),
            MPI_SUCCESS);
  EXPECT_TRUE(dispatch::last_trials().empty());
  const std::string reduce_choice = dispatch::last_choice();
  ASSERT_EQ(dispatch::bcast(sum.data(), 300, MPI_INT, 0, comm.get()), MPI_SUCCESS);
  EXPECT_TRUE(dispatch::last_trials().empty());
  EXPECT_EQ(sum, expected);
  EXPECT_EQ(trials[n - 2].config,
            "reduce+bcast(" + reduce_choice + ";" + dispatch::last_choice() + ")");
  // The blocks of 1,200 B over p ranks: ints, as the trial's (300 / p of
  // them, in the size class of 1,200 / p bytes).
  const int block = 300 / world_size();
  std::vector<int> blocks(static_cast<std::size_t>(block) * world_size(), 0);
  ASSERT_EQ(dispatch::reduce_scatter_block(send.data(), blocks.data(), block, MPI_INT, MPI_SUM,
                                           comm.get()),
            MPI_SUCCESS);
  EXPECT_TRUE(dispatch::last_trials().empty());
  const std::string scatter_choice = dispatch::last_choice();
  ASSERT_EQ(dispatch::allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, blocks.data(), block, MPI_INT,
                                comm.get()),
            MPI_SUCCESS);
  EXPECT_TRUE(dispatch::last_trials().empty());
  EXPECT_EQ(trials[n - 1].config, "reduce_scatter_block+allgather(" + scatter_choice + ";" +
                                      dispatch::last_choice() + ")");
  std::size_t best = 0;
  for (std::size_t i = 0; i < trials.size(); ++i) {
    if (trials[i].seconds < trials[best].seconds) best = i;
  }
  EXPECT_EQ(choice, trials[best].config);
  // The composed choice runs when chosen, whatever it is.
  ASSERT_EQ(dispatch::allreduce(MPI_IN_PLACE, send.data(), 300, MPI_INT, MPI_SUM, comm.get()),
            MPI_SUCCESS);
  EXPECT_EQ(send, expected);
}

// Allgather and reduce_scatter_block try rankshape's flat algorithms
// beside native and the hierarchy: recursive doubling (the ring on a count
// of ranks that is not a power of two) and recursive halving (on a power
// of two only).
TEST(DispatchTest, AllgatherAndReduceScatterTryTheirFlatAlgorithms) {
  const int p = world_size(), me = world_rank();
  const auto groups = blocks_of(3);
  const Comm comm(groups);
  const bool useful = Hierarchy(MPI_COMM_WORLD, groups).useful();
  const bool power_of_two = (p & (p - 1)) == 0;
  const auto tried = [](const std::string& config) {
    for (const dispatch::Trial& t : dispatch::last_trials()) {
      if (t.config == config) return true;
    }
    return false;
  };
  std::vector<int> mine = data(me, 10, 3), all(10 * static_cast<std::size_t>(p), 0), expected = all;
  ASSERT_EQ(dispatch::allgather(mine.data(), 10, MPI_INT, all.data(), 10, MPI_INT, comm.get()),
            MPI_SUCCESS);
  expect_agreed("allgather after a trial");
  MPI_Allgather(mine.data(), 10, MPI_INT, expected.data(), 10, MPI_INT, MPI_COMM_WORLD);
  EXPECT_EQ(all, expected);
  EXPECT_EQ(dispatch::last_trials().size(), useful ? 3u : 0u);
  if (useful) {
    EXPECT_TRUE(tried(power_of_two ? "flat=recursive-doubling" : "flat=ring"));
  }
  std::vector<int> send = data(me, 10 * static_cast<std::size_t>(p), 4), block(10, 0), want(10, 0);
  ASSERT_EQ(
      dispatch::reduce_scatter_block(send.data(), block.data(), 10, MPI_INT, MPI_SUM, comm.get()),
      MPI_SUCCESS);
  expect_agreed("reduce_scatter_block after a trial");
  MPI_Reduce_scatter_block(send.data(), want.data(), 10, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  EXPECT_EQ(block, want);
  if (useful) {
    EXPECT_EQ(dispatch::last_trials().size(), power_of_two ? 3u : 2u);
    EXPECT_EQ(tried("flat=recursive-halving"), power_of_two);
  }
}

// A rank that cannot hold a trial's buffers vetoes it on every rank (alone
// it would leave the others waiting in the trial's first run); the model
// decides that size, and another size of the class is tried again.
TEST(DispatchTest, ARankWithoutRoomForATrialVetoesItEverywhere) {
  const auto groups = blocks_of(2);
  const Comm comm(groups);
  const bool useful = Hierarchy(MPI_COMM_WORLD, groups).useful();
  const int last_rank = world_size() - 1;
  std::vector<int> send(2000, 3), recv(2000, 0);
  if (world_rank() == last_rank) dispatch::set_trial_memory(0);
  ASSERT_EQ(dispatch::reduce(send.data(), recv.data(), 2000, MPI_INT, MPI_SUM, 0, comm.get()),
            MPI_SUCCESS);
  dispatch::set_trial_memory(-1);
  EXPECT_TRUE(dispatch::last_trials().empty());
  expect_agreed("reduce with a veto");
  if (world_rank() == 0) {
    EXPECT_EQ(recv[0], 3 * world_size());
    EXPECT_EQ(recv[1999], 3 * world_size());
  }
  // The same size class (up to 8 KiB), now with room everywhere.
  ASSERT_EQ(dispatch::reduce(send.data(), recv.data(), 1900, MPI_INT, MPI_SUM, 0, comm.get()),
            MPI_SUCCESS);
  EXPECT_EQ(dispatch::last_trials().empty(), !useful);
  expect_agreed("reduce after the veto");
  if (world_rank() == 0) {
    EXPECT_EQ(recv[1899], 3 * world_size());
  }
  // No room anywhere: no trial, even for barrier, which needs no buffers.
  dispatch::set_trial_memory(0);
  ASSERT_EQ(dispatch::barrier(comm.get()), MPI_SUCCESS);
  dispatch::set_trial_memory(-1);
  EXPECT_TRUE(dispatch::last_trials().empty());
}

TEST(DispatchTest, NonCommutativeOperationsOnScatteredGroupsRunNatively) {
  const int me = world_rank();
  MPI_Datatype affine;
  MPI_Type_contiguous(2, MPI_UINT32_T, &affine);
  MPI_Type_commit(&affine);
  MPI_Op op;
  MPI_Op_create(compose, 0, &op);
  for (const auto& groups : {blocks_of(2), dealt_over(2)}) {
    const Comm comm(groups);
    const Hierarchy h(MPI_COMM_WORLD, groups);
    std::vector<std::uint32_t> send = {3u + 2u * me, 5u + 7u * me}, ours(2), theirs(2);
    ASSERT_EQ(dispatch::allreduce(send.data(), ours.data(), 1, affine, op, comm.get()),
              MPI_SUCCESS);
    if (!h.ordered()) {
      EXPECT_EQ(dispatch::last_choice(), "native");
    }
    PMPI_Allreduce(send.data(), theirs.data(), 1, affine, op, MPI_COMM_WORLD);
    EXPECT_EQ(ours, theirs);
  }
  MPI_Op_free(&op);
  MPI_Type_free(&affine);
}

TEST(DispatchTest, ContextsAreBuiltOncePerCommunicatorAndFreedWithIt) {
  const std::size_t before = dispatch::contexts();
  {
    const Comm comm({});
    const std::size_t after_first = dispatch::contexts();
    int x = 1;
    for (int i = 0; i < 5; ++i) {
      ASSERT_EQ(dispatch::allreduce(MPI_IN_PLACE, &x, 1, MPI_INT, MPI_SUM, comm.get()),
                MPI_SUCCESS);
    }
    EXPECT_EQ(dispatch::contexts(), before + 1);
    EXPECT_EQ(after_first, before);  // none until the first call
  }
  EXPECT_EQ(dispatch::contexts(), before);
}

TEST(DispatchTest, BadGroupsAreRejected) {
  MPI_Comm comm;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  std::vector<int> wrong(static_cast<std::size_t>(world_size()) + 1, 0);
  EXPECT_THROW(dispatch::set_groups(comm, {wrong}), std::invalid_argument);
  dispatch::set_groups(comm, blocks_of(2));
  EXPECT_THROW(dispatch::set_groups(comm, blocks_of(2)), std::logic_error);
  MPI_Comm_free(&comm);
}

// The benchmarks' timing (workload.h): under SMPI every rank starts each
// repetition at one simulated instant, whenever it left the barrier; else
// each times from its own clock after the barrier.
TEST(StartTogetherTest, RepetitionsStartAtOneInstantWhereTheClockIsShared) {
  StartTogether together(MPI_COMM_WORLD);
  for (int i = 0; i < 3; ++i) {
    const double start = together.next();
    const double now = MPI_Wtime();
    EXPECT_LE(start, now);
    double first = 0, last = 0;
    MPI_Allreduce(&start, &first, 1, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(&start, &last, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    if (StartTogether::clock_shared()) {
      EXPECT_EQ(first, last);
      EXPECT_LT(now - start, 1e-6);  // it waited until the start, no later
    }
  }
  // The time of one repetition is the slowest rank's, the same everywhere.
  const double t = time_collective(MPI_COMM_WORLD, 1, 3, [] { MPI_Barrier(MPI_COMM_WORLD); });
  double low = 0;
  MPI_Allreduce(&t, &low, 1, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
  EXPECT_EQ(low, t);
  EXPECT_GE(t, 0);
}

// Whatever the library's barrier, no rank starts a repetition before the
// last one has arrived: here the last rank comes 50 ms late, and with
// MPI_Barrier replaced by nothing the others would leave at once.
TEST(StartTogetherTest, NoRankStartsBeforeTheLastArrives) {
  StartTogether together(MPI_COMM_WORLD);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  for (int late = 0; late < std::min(size, 3); ++late) {
    double arrived = 0;
    if (rank == late) {
      testing::hold_for(0.05);
      arrived = testing::shared_now();
    }
    together.next();
    const double left = testing::shared_now();
    MPI_Bcast(&arrived, 1, MPI_DOUBLE, late, MPI_COMM_WORLD);
    EXPECT_GE(left, arrived) << "rank " << rank << " left before rank " << late << " arrived";
  }
}

}  // namespace
}  // namespace rankshape::coll
