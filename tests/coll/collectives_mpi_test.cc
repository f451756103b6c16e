// Hierarchical collectives against the MPI library's own results, over
// hierarchies (real nodes; groups of 3 ranks as contiguous blocks and
// dealt round-robin, as after relabelling; three levels), collectives,
// datatypes (int, double, contiguous and strided derived types), operations
// (sum, max, and a user-defined non-commutative one), counts (0, 1, odd,
// large) and every root. Run at many rank counts by tests/coll/BUILD.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "lib/coll/collectives.h"
#include "lib/coll/config.h"
#include "lib/coll/hierarchy.h"
#include "tests/testing/world.h"

namespace rankshape::coll {
namespace {

using ::rankshape::testing::world_rank;
using ::rankshape::testing::world_size;

struct Shape {
  std::string name;
  std::vector<std::vector<int>> groups;
};

std::vector<Shape> shapes() {
  const int p = world_size();
  std::vector<int> blocks(p), dealt(p), racks(p), pairs(p), pairs_dealt(p), racks_dealt(p);
  for (int r = 0; r < p; ++r) {
    blocks[r] = r / 3;
    dealt[r] = r % 3;
    pairs[r] = r / 2;
    racks[r] = r / 4;
    pairs_dealt[r] = r % 4;      // nodes {0,4,8..} {1,5,..} ...
    racks_dealt[r] = r % 4 % 2;  // nests: racks {nodes 0, 2} {nodes 1, 3}
  }
  return {{"nodes", Hierarchy::node_groups(MPI_COMM_WORLD)},
          {"flat", {}},
          {"blocks of 3", {blocks}},
          {"dealt over 3", {dealt}},
          {"3 levels", {pairs, racks}},
          {"3 levels dealt", {pairs_dealt, racks_dealt}}};
}

// x -> a x + b, composed: (f . g)(x) = f(g(x)); associative, not commutative.
void compose(void* in, void* inout, int* len, MPI_Datatype*) {
  auto* f = static_cast<std::uint32_t*>(in);
  auto* g = static_cast<std::uint32_t*>(inout);
  for (int i = 0; i < *len; ++i) {
    const std::uint32_t a = f[2 * i] * g[2 * i], b = f[2 * i] * g[2 * i + 1] + f[2 * i + 1];
    g[2 * i] = a;
    g[2 * i + 1] = b;
  }
}

// Element-wise sum of triples of ints: a user-defined commutative operation
// (MPI's predefined ones take only predefined types).
void sum_triples(void* in, void* inout, int* len, MPI_Datatype*) {
  const int* a = static_cast<const int*>(in);
  int* b = static_cast<int*>(inout);
  for (int i = 0; i < 3 * *len; ++i) b[i] += a[i];
}

struct Type {
  std::string name;
  MPI_Datatype type;
  int ints;  // ints of storage per element (extent / sizeof int)
};

class CollectivesTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    MPI_Type_contiguous(3, MPI_INT, &triple_);
    MPI_Type_commit(&triple_);
    MPI_Type_vector(2, 1, 3, MPI_INT, &strided_);  // ints 0 and 3 of 4
    MPI_Type_commit(&strided_);
    MPI_Type_contiguous(2, MPI_UINT32_T, &affine_);
    MPI_Type_commit(&affine_);
    MPI_Op_create(compose, 0, &compose_);
    MPI_Op_create(sum_triples, 1, &sum_triples_);
  }
  static void TearDownTestSuite() {
    MPI_Type_free(&triple_);
    MPI_Type_free(&strided_);
    MPI_Type_free(&affine_);
    MPI_Op_free(&compose_);
    MPI_Op_free(&sum_triples_);
  }
  static std::vector<Type> types() {
    return {{"int", MPI_INT, 1}, {"triple", triple_, 3}, {"strided", strided_, 4}};
  }
  // Deterministic contents for rank r, n ints; sentinel-filled elsewhere.
  static std::vector<int> data(int r, std::size_t n, int salt) {
    std::vector<int> v(n);
    for (std::size_t i = 0; i < n; ++i)
      v[i] = static_cast<int>((r + 1) * 131 + i * 7 + salt) % 1000;
    return v;
  }
  static inline MPI_Datatype triple_, strided_, affine_;
  static inline MPI_Op compose_, sum_triples_;
  // Operations that apply to a type: predefined ones to int, ours to triples.
  static std::vector<MPI_Op> ops_for(const Type& t) {
    if (t.type == MPI_INT) return {MPI_SUM, MPI_MAX};
    if (t.type == triple_) return {sum_triples_};
    return {};
  }
};

constexpr int kSentinel = -77;

// Roots 0, a middle one and the last: 0 is every level's leader, the others
// are not (MPICH busy-polls, so every root at 16 ranks on 2 cores is slow).
std::vector<int> roots(int p) {
  std::vector<int> r = {0};
  if (p > 2) r.push_back(p / 2);
  if (p > 1) r.push_back(p - 1);
  return r;
}
const int kCounts[] = {0, 1, 7, 3001};

// Ours and MPI's results, from identical inputs, must be equal where the
// type's map has data. The strided type's gaps (ints 1 and 2 of every 4)
// are not compared: SMPI's own bcast copies whole extents and so writes
// them (a simulator shortcut; ours leaves them alone).
void expect_same(const std::string& what, const std::vector<int>& ours,
                 const std::vector<int>& native, int ints_per_element = 1) {
  ASSERT_EQ(ours.size(), native.size()) << what;
  for (std::size_t i = 0; i < ours.size(); ++i) {
    if (ints_per_element == 4 && (i % 4 == 1 || i % 4 == 2)) continue;
    ASSERT_EQ(ours[i], native[i]) << what << " at int " << i;
  }
}

TEST_F(CollectivesTest, RootedCollectivesMatchMpi) {
  const int p = world_size(), me = world_rank();
  for (const Shape& s : shapes()) {
    const Hierarchy h(MPI_COMM_WORLD, s.groups);
    for (const Type& t : types()) {
      for (int count : kCounts) {
        const std::size_t n = static_cast<std::size_t>(count) * t.ints;
        for (int root : roots(p)) {
          const std::string what = s.name + " " + t.name + " count " + std::to_string(count) +
                                   " root " + std::to_string(root);
          // bcast
          std::vector<int> ours = me == root ? data(root, n, 1) : std::vector<int>(n, kSentinel);
          std::vector<int> native = ours;
          ASSERT_EQ(bcast(ours.data(), count, t.type, root, h), MPI_SUCCESS) << what;
          MPI_Bcast(native.data(), count, t.type, root, MPI_COMM_WORLD);
          expect_same("bcast " + what, ours, native, t.ints);
          // reduce, with and without MPI_IN_PLACE at the root
          for (MPI_Op op : ops_for(t)) {
            for (bool in_place : {false, true}) {
              std::vector<int> send = data(me, n, 2);
              std::vector<int> a(n, kSentinel), b(n, kSentinel);
              const bool use_in_place = in_place && me == root;
              if (use_in_place) a = b = send;
              ASSERT_EQ(reduce(use_in_place ? MPI_IN_PLACE : send.data(), a.data(), count, t.type,
                               op, root, h),
                        MPI_SUCCESS);
              // The reference never uses MPI_IN_PLACE: MPICH 4.0 crashes on
              // it at roots other than 0 (pmodels/mpich#6540).
              MPI_Reduce(send.data(), b.data(), count, t.type, op, root, MPI_COMM_WORLD);
              if (me == root) {
                expect_same("reduce " + what, a, b, t.ints);
              }
            }
          }
          // gather / scatter (root in place, too)
          for (bool in_place : {false, true}) {
            std::vector<int> send = data(me, n, 3);
            std::vector<int> a(n * p, kSentinel), b(n * p, kSentinel);
            const bool use_in_place = in_place && me == root;
            if (use_in_place) {
              std::copy(send.begin(), send.end(), a.begin() + static_cast<std::ptrdiff_t>(n) * me);
              std::copy(send.begin(), send.end(), b.begin() + static_cast<std::ptrdiff_t>(n) * me);
            }
            ASSERT_EQ(gather(use_in_place ? MPI_IN_PLACE : send.data(), count, t.type, a.data(),
                             count, t.type, root, h),
                      MPI_SUCCESS);
            MPI_Gather(use_in_place ? MPI_IN_PLACE : send.data(), count, t.type, b.data(), count,
                       t.type, root, MPI_COMM_WORLD);
            if (me == root) {
              expect_same("gather " + what, a, b, t.ints);
            }

            std::vector<int> all = me == root ? data(root, n * p, 4) : std::vector<int>();
            std::vector<int> c(n, kSentinel), d(n, kSentinel);
            void* recv_c = use_in_place ? MPI_IN_PLACE : static_cast<void*>(c.data());
            void* recv_d = use_in_place ? MPI_IN_PLACE : static_cast<void*>(d.data());
            ASSERT_EQ(scatter(all.data(), count, t.type, recv_c, count, t.type, root, h),
                      MPI_SUCCESS);
            MPI_Scatter(all.data(), count, t.type, recv_d, count, t.type, root, MPI_COMM_WORLD);
            expect_same("scatter " + what, c, d, t.ints);
          }
        }
      }
    }
  }
}

TEST_F(CollectivesTest, AllToAllCollectivesMatchMpi) {
  const int p = world_size(), me = world_rank();
  for (const Shape& s : shapes()) {
    const Hierarchy h(MPI_COMM_WORLD, s.groups);
    for (const Type& t : types()) {
      for (int count : kCounts) {
        const std::size_t n = static_cast<std::size_t>(count) * t.ints;
        const std::string what = s.name + " " + t.name + " count " + std::to_string(count);
        for (MPI_Op op : ops_for(t)) {
          for (bool in_place : {false, true}) {
            std::vector<int> send = data(me, n, 5);
            std::vector<int> a(n, kSentinel), b(n, kSentinel);
            if (in_place) a = b = send;
            ASSERT_EQ(
                allreduce(in_place ? MPI_IN_PLACE : send.data(), a.data(), count, t.type, op, h),
                MPI_SUCCESS);
            MPI_Allreduce(in_place ? MPI_IN_PLACE : send.data(), b.data(), count, t.type, op,
                          MPI_COMM_WORLD);
            expect_same("allreduce " + what, a, b, t.ints);

            std::vector<int> blocks = data(me, n * p, 6);
            std::vector<int> c(n, kSentinel), d(n, kSentinel);
            std::vector<int> c_in = blocks, d_in = blocks;
            ASSERT_EQ(reduce_scatter_block(in_place ? MPI_IN_PLACE : blocks.data(),
                                           in_place ? c_in.data() : c.data(), count, t.type, op, h),
                      MPI_SUCCESS);
            MPI_Reduce_scatter_block(in_place ? MPI_IN_PLACE : blocks.data(),
                                     in_place ? d_in.data() : d.data(), count, t.type, op,
                                     MPI_COMM_WORLD);
            if (in_place) {
              c.assign(c_in.begin(), c_in.begin() + static_cast<std::ptrdiff_t>(n));
              d.assign(d_in.begin(), d_in.begin() + static_cast<std::ptrdiff_t>(n));
            }
            expect_same("reduce_scatter_block " + what, c, d, t.ints);
          }
        }
        for (bool in_place : {false, true}) {
          std::vector<int> send = data(me, n, 7);
          std::vector<int> a(n * p, kSentinel), b(n * p, kSentinel);
          if (in_place) {
            std::copy(send.begin(), send.end(), a.begin() + static_cast<std::ptrdiff_t>(n) * me);
            std::copy(send.begin(), send.end(), b.begin() + static_cast<std::ptrdiff_t>(n) * me);
          }
          ASSERT_EQ(allgather(in_place ? MPI_IN_PLACE : send.data(), count, t.type, a.data(), count,
                              t.type, h),
                    MPI_SUCCESS);
          MPI_Allgather(in_place ? MPI_IN_PLACE : send.data(), count, t.type, b.data(), count,
                        t.type, MPI_COMM_WORLD);
          expect_same("allgather " + what, a, b, t.ints);

          std::vector<int> blocks = data(me, n * p, 8);
          std::vector<int> c(n * p, kSentinel), d(n * p, kSentinel);
          if (in_place) c = d = blocks;
          ASSERT_EQ(alltoall(in_place ? MPI_IN_PLACE : blocks.data(), count, t.type, c.data(),
                             count, t.type, h),
                    MPI_SUCCESS);
          MPI_Alltoall(in_place ? MPI_IN_PLACE : blocks.data(), count, t.type, d.data(), count,
                       t.type, MPI_COMM_WORLD);
          expect_same("alltoall " + what, c, d, t.ints);
        }
      }
    }
    EXPECT_EQ(barrier(h), MPI_SUCCESS);
    EXPECT_EQ(barrier(h, *Config::parse("flat=linear")), MPI_SUCCESS);
  }
}

// A communicator whose rank order is not launch order, as relabel_comm()'s
// may be: MPI_COMM_WORLD reversed, in groups of 2 of its own ranks, and 3
// levels (pairs in racks of 4). Rank 0 leads its groups; the other pairs'
// leader is their higher rank, launched first (world rank); the top is in
// launch order, where rank 0's group, the highest world ranks, comes last.
// Results equal MPI's on that communicator, at every root.
TEST_F(CollectivesTest, ReversedCommunicatorLeadsInLaunchOrderAndMatchesMpi) {
  const int p = world_size(), me = world_rank();
  MPI_Comm reversed = MPI_COMM_NULL;
  ASSERT_EQ(MPI_Comm_split(MPI_COMM_WORLD, 0, p - 1 - me, &reversed), MPI_SUCCESS);
  std::vector<int> pairs(p), racks(p);
  for (int r = 0; r < p; ++r) {
    pairs[r] = r / 2;
    racks[r] = r / 4;
  }
  for (const auto& groups : {std::vector<std::vector<int>>{pairs}, {pairs, racks}}) {
    const Hierarchy h(reversed, groups);
    const std::string what = std::to_string(groups.size() + 1) + " levels, ";
    for (int j = 0; j < h.depth(); ++j) EXPECT_EQ(h.lead(0, j), 0) << what << "level " << j;
    const int top_group = groups.size() == 1 ? 2 : 4;
    EXPECT_EQ(h.rank_in_level(0, h.depth()), (p + top_group - 1) / top_group - 1) << what;
    if (p >= 4) {
      EXPECT_EQ(h.lead(2, 0), 3) << what << "leader of reversed ranks 2 and 3";
    }
    const int n = 7;
    const std::vector<int> mine = data(me, n, 1), blocks = data(me, n * p, 2);
    for (int root : roots(p)) {
      std::vector<int> a = root == me ? mine : std::vector<int>(n, kSentinel), b = a;
      ASSERT_EQ(bcast(a.data(), n, MPI_INT, root, h), MPI_SUCCESS);
      MPI_Bcast(b.data(), n, MPI_INT, root, reversed);
      expect_same(what + "bcast root " + std::to_string(root), a, b);
      a.assign(n, kSentinel);
      b = a;
      ASSERT_EQ(reduce(mine.data(), a.data(), n, MPI_INT, MPI_SUM, root, h), MPI_SUCCESS);
      MPI_Reduce(mine.data(), b.data(), n, MPI_INT, MPI_SUM, root, reversed);
      expect_same(what + "reduce root " + std::to_string(root), a, b);
      a.assign(static_cast<std::size_t>(n) * p, kSentinel);
      b = a;
      ASSERT_EQ(gather(mine.data(), n, MPI_INT, a.data(), n, MPI_INT, root, h), MPI_SUCCESS);
      MPI_Gather(mine.data(), n, MPI_INT, b.data(), n, MPI_INT, root, reversed);
      expect_same(what + "gather root " + std::to_string(root), a, b);
      a.assign(n, kSentinel);
      b = a;
      ASSERT_EQ(scatter(blocks.data(), n, MPI_INT, a.data(), n, MPI_INT, root, h), MPI_SUCCESS);
      MPI_Scatter(blocks.data(), n, MPI_INT, b.data(), n, MPI_INT, root, reversed);
      expect_same(what + "scatter root " + std::to_string(root), a, b);
    }
    std::vector<int> a(n, kSentinel), b = a;
    ASSERT_EQ(allreduce(mine.data(), a.data(), n, MPI_INT, MPI_SUM, h), MPI_SUCCESS);
    MPI_Allreduce(mine.data(), b.data(), n, MPI_INT, MPI_SUM, reversed);
    expect_same(what + "allreduce", a, b);
    a.assign(static_cast<std::size_t>(n) * p, kSentinel);
    b = a;
    ASSERT_EQ(allgather(mine.data(), n, MPI_INT, a.data(), n, MPI_INT, h), MPI_SUCCESS);
    MPI_Allgather(mine.data(), n, MPI_INT, b.data(), n, MPI_INT, reversed);
    expect_same(what + "allgather", a, b);
    a.assign(a.size(), kSentinel);
    b.assign(b.size(), kSentinel);
    ASSERT_EQ(alltoall(blocks.data(), n, MPI_INT, a.data(), n, MPI_INT, h), MPI_SUCCESS);
    MPI_Alltoall(blocks.data(), n, MPI_INT, b.data(), n, MPI_INT, reversed);
    expect_same(what + "alltoall", a, b);
    a.assign(n, kSentinel);
    b = a;
    ASSERT_EQ(reduce_scatter_block(blocks.data(), a.data(), n, MPI_INT, MPI_SUM, h), MPI_SUCCESS);
    MPI_Reduce_scatter_block(blocks.data(), b.data(), n, MPI_INT, MPI_SUM, reversed);
    expect_same(what + "reduce_scatter_block", a, b);
    EXPECT_EQ(barrier(h), MPI_SUCCESS);
  }
  MPI_Comm_free(&reversed);
}

TEST_F(CollectivesTest, NonCommutativeReductionsKeepRankOrderOnOrderedHierarchies) {
  const int p = world_size(), me = world_rank();
  for (const Shape& s : shapes()) {
    const Hierarchy h(MPI_COMM_WORLD, s.groups);
    if (!h.ordered()) continue;  // dispatch.h sends these to the native call
    for (int count : {1, 5}) {
      std::vector<std::uint32_t> send(2 * static_cast<std::size_t>(count));
      for (std::size_t i = 0; i < send.size(); ++i)
        send[i] = 3 + 2 * me + 5 * static_cast<std::uint32_t>(i);
      std::vector<std::uint32_t> a(send.size()), b(send.size());
      ASSERT_EQ(allreduce(send.data(), a.data(), count, affine_, compose_, h), MPI_SUCCESS);
      MPI_Allreduce(send.data(), b.data(), count, affine_, compose_, MPI_COMM_WORLD);
      EXPECT_EQ(a, b) << s.name;
      for (int root : roots(p)) {
        std::vector<std::uint32_t> c(send.size()), d(send.size());
        ASSERT_EQ(reduce(send.data(), c.data(), count, affine_, compose_, root, h), MPI_SUCCESS);
        MPI_Reduce(send.data(), d.data(), count, affine_, compose_, root, MPI_COMM_WORLD);
        if (me == root) {
          EXPECT_EQ(c, d) << s.name << " root " << root;
        }
      }
      std::vector<std::uint32_t> blocks(send.size() * p);
      for (std::size_t i = 0; i < blocks.size(); ++i)
        blocks[i] = 1 + 2 * me + 3 * static_cast<std::uint32_t>(i);
      std::vector<std::uint32_t> e(send.size()), f(send.size());
      ASSERT_EQ(reduce_scatter_block(blocks.data(), e.data(), count, affine_, compose_, h),
                MPI_SUCCESS);
      MPI_Reduce_scatter_block(blocks.data(), f.data(), count, affine_, compose_, MPI_COMM_WORLD);
      EXPECT_EQ(e, f) << s.name;
    }
  }
}

// Configurations that run every per-level algorithm at every level,
// pipelines with several segments (12-byte segments for small counts;
// more would crawl at 16 ranks on 2 cores), a flat algorithm, and
// allreduce as a reduce then a bcast and as a reduce_scatter_block then an
// allgather. Binomial bcast and reduce run
// inside allreduce's first configuration (its levels' way up and down).
std::vector<Config> configs_for(Collective c, int depth, int count) {
  using A = Algorithm;
  std::vector<std::vector<A>> per_level;
  if (c == Collective::kBcast) {
    per_level = {{A::kKnomial}, {A::kScatterAllgather}, {A::kChain}, {A::kChain, A::kBinary}};
  } else if (c == Collective::kReduce) {
    per_level = {{A::kKnomial}, {A::kChain}, {A::kRabenseifner}, {A::kBinary}};
  } else {
    per_level = {{A::kBinomial, A::kRecursiveDoubling},
                 {A::kChain, A::kRing},
                 {A::kBinomial, A::kRabenseifner}};
  }
  std::vector<Config> out;
  for (const auto& choice : per_level) {
    Config config;
    config.hierarchical = true;
    for (int j = 0; j <= depth; ++j) config.levels.push_back(j < depth ? choice[0] : choice.back());
    out.push_back(config);
  }
  Config pipeline;
  pipeline.hierarchical = true;
  pipeline.segment_bytes = count <= 7 ? 12 : 4000;
  out.push_back(pipeline);
  // rankshape's own algorithm on the whole communicator.
  Config flat;
  flat.hierarchical = true;
  flat.flat = c == Collective::kBcast    ? A::kScatterAllgather
              : c == Collective::kReduce ? A::kRabenseifner
                                         : A::kRing;
  out.push_back(flat);
  if (c == Collective::kAllreduce) {
    // A reduce then a bcast: hierarchical then native, and the other way.
    Config knomial;
    knomial.hierarchical = true;
    knomial.levels.assign(static_cast<std::size_t>(depth) + 1, A::kKnomial);
    Config scatter = knomial;
    scatter.levels.assign(static_cast<std::size_t>(depth) + 1, A::kScatterAllgather);
    Config composed;
    composed.hierarchical = true;
    composed.parts = {knomial, Config{}};
    out.push_back(composed);
    composed.parts = {Config{}, scatter};
    out.push_back(composed);
    // A reduce_scatter_block then an allgather of a block per rank: the
    // same two ways.
    Config hierarchical;
    hierarchical.hierarchical = true;
    composed.composition = Config::Composition::kReduceScatterAllgather;
    composed.parts = {hierarchical, Config{}};
    out.push_back(composed);
    composed.parts = {Config{}, hierarchical};
    out.push_back(composed);
  }
  return out;
}

TEST_F(CollectivesTest, EveryLevelAlgorithmAndPipelineMatchesMpi) {
  const int p = world_size(), me = world_rank();
  for (const Shape& s : shapes()) {
    // Real nodes (one, here) and flat add nothing the level algorithms see;
    // MPICH busy-polls, so 16 ranks on 2 cores must be spared them.
    if (s.name == "nodes" || s.name == "flat") continue;
    const Hierarchy h(MPI_COMM_WORLD, s.groups);
    for (const Type& t : types()) {
      for (int count : kCounts) {
        const std::size_t n = static_cast<std::size_t>(count) * t.ints;
        for (int root : {0, p - 1}) {
          const std::string what = s.name + " " + t.name + " count " + std::to_string(count) +
                                   " root " + std::to_string(root);
          for (const Config& config : configs_for(Collective::kBcast, h.depth(), count)) {
            std::vector<int> ours = me == root ? data(root, n, 1) : std::vector<int>(n, kSentinel);
            std::vector<int> native = ours;
            ASSERT_EQ(bcast(ours.data(), count, t.type, root, h, config), MPI_SUCCESS) << what;
            MPI_Bcast(native.data(), count, t.type, root, MPI_COMM_WORLD);
            expect_same("bcast " + config.describe() + " " + what, ours, native, t.ints);
          }
          for (MPI_Op op : ops_for(t)) {
            for (const Config& config : configs_for(Collective::kReduce, h.depth(), count)) {
              std::vector<int> send = data(me, n, 2);
              std::vector<int> a(n, kSentinel), b(n, kSentinel);
              ASSERT_EQ(reduce(send.data(), a.data(), count, t.type, op, root, h, config),
                        MPI_SUCCESS);
              MPI_Reduce(send.data(), b.data(), count, t.type, op, root, MPI_COMM_WORLD);
              if (me == root) {
                expect_same("reduce " + config.describe() + " " + what, a, b, t.ints);
              }
            }
          }
        }
        for (MPI_Op op : ops_for(t)) {
          for (const Config& config : configs_for(Collective::kAllreduce, h.depth(), count)) {
            for (bool in_place : {false, true}) {
              std::vector<int> send = data(me, n, 5);
              std::vector<int> a(n, kSentinel), b(n, kSentinel);
              if (in_place) a = b = send;
              ASSERT_EQ(allreduce(in_place ? MPI_IN_PLACE : send.data(), a.data(), count, t.type,
                                  op, h, config),
                        MPI_SUCCESS);
              MPI_Allreduce(in_place ? MPI_IN_PLACE : send.data(), b.data(), count, t.type, op,
                            MPI_COMM_WORLD);
              expect_same("allreduce " + config.describe() + " " + s.name + " " + t.name +
                              " count " + std::to_string(count),
                          a, b, t.ints);
            }
          }
        }
      }
    }
  }
}

// The composition by blocks with counts that are whole multiples of the
// ranks (every element in a block), one more than that (an element for
// MPI's allreduce), and fewer than the ranks (MPI's allreduce alone), in
// place and not. kCounts' primes leave the multiples untested.
TEST_F(CollectivesTest, AReduceScatterThenAnAllgatherMatchesMpiWithAndWithoutARemainder) {
  const int p = world_size(), me = world_rank();
  Config hierarchical;
  hierarchical.hierarchical = true;
  Config composed = hierarchical;
  composed.composition = Config::Composition::kReduceScatterAllgather;
  // rankshape's flat algorithms (level_reduce_scatter_block and
  // level_allgather on the whole communicator) as parts.
  Config halving = hierarchical, doubling = hierarchical;
  halving.flat = Algorithm::kRecursiveHalving;
  doubling.flat = Algorithm::kRecursiveDoubling;
  for (const Shape& s : shapes()) {
    const Hierarchy h(MPI_COMM_WORLD, s.groups);
    for (int count : {5 * p, 5 * p + 1, p - 1}) {
      for (const auto& parts :
           {std::vector<Config>{hierarchical, hierarchical},
            std::vector<Config>{Config{}, Config{}}, std::vector<Config>{halving, doubling}}) {
        composed.parts = parts;
        for (bool in_place : {false, true}) {
          std::vector<int> send = data(me, static_cast<std::size_t>(count), 9);
          std::vector<int> a(static_cast<std::size_t>(count), kSentinel), b = a;
          if (in_place) a = b = send;
          ASSERT_EQ(allreduce(in_place ? MPI_IN_PLACE : send.data(), a.data(), count, MPI_INT,
                              MPI_SUM, h, composed),
                    MPI_SUCCESS);
          MPI_Allreduce(in_place ? MPI_IN_PLACE : send.data(), b.data(), count, MPI_INT, MPI_SUM,
                        MPI_COMM_WORLD);
          EXPECT_EQ(a, b) << composed.describe() << " " << s.name << " count " << count
                          << (in_place ? " in place" : "");
        }
      }
    }
  }
}

TEST_F(CollectivesTest, NonCommutativePipelinesAndTreesKeepRankOrder) {
  const int p = world_size(), me = world_rank();
  for (const Shape& s : shapes()) {
    const Hierarchy h(MPI_COMM_WORLD, s.groups);
    if (!h.ordered()) continue;
    for (int count : {1, 5, 1301}) {
      std::vector<std::uint32_t> send(2 * static_cast<std::size_t>(count));
      for (std::size_t i = 0; i < send.size(); ++i)
        send[i] = 3 + 2 * me + 5 * static_cast<std::uint32_t>(i);
      for (const Config& config : configs_for(Collective::kAllreduce, h.depth(), count)) {
        // Ring and Rabenseifner fall back to native for these operations.
        std::vector<std::uint32_t> a(send.size()), b(send.size());
        ASSERT_EQ(allreduce(send.data(), a.data(), count, affine_, compose_, h, config),
                  MPI_SUCCESS);
        MPI_Allreduce(send.data(), b.data(), count, affine_, compose_, MPI_COMM_WORLD);
        EXPECT_EQ(a, b) << s.name << " " << config.describe();
      }
      for (const Config& config : configs_for(Collective::kReduce, h.depth(), count)) {
        for (int root : roots(p)) {
          std::vector<std::uint32_t> c(send.size()), d(send.size());
          ASSERT_EQ(reduce(send.data(), c.data(), count, affine_, compose_, root, h, config),
                    MPI_SUCCESS);
          MPI_Reduce(send.data(), d.data(), count, affine_, compose_, root, MPI_COMM_WORLD);
          if (me == root) {
            EXPECT_EQ(c, d) << s.name << " " << config.describe() << " root " << root;
          }
        }
      }
    }
  }
}

TEST_F(CollectivesTest, ProgramMessagesNeverMatchTheCollectivesOwn) {
  const int p = world_size(), me = world_rank();
  if (p < 3) GTEST_SKIP() << "needs a root that is not its group's leader, and a sender";
  std::vector<int> blocks(static_cast<std::size_t>(p));
  for (int r = 0; r < p; ++r) blocks[static_cast<std::size_t>(r)] = r / 3;
  const Hierarchy h(MPI_COMM_WORLD, {blocks});
  // Rank 0 waits for any tag-0 message of the program's; rank 1 (not a
  // leader) broadcasts, which sends to rank 0 on the way up.
  int program_value = -1;
  MPI_Request request = MPI_REQUEST_NULL;
  if (me == 0) MPI_Irecv(&program_value, 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, &request);
  int data = me == 1 ? 4242 : 0;
  ASSERT_EQ(bcast(&data, 1, MPI_INT, 1, h), MPI_SUCCESS);
  EXPECT_EQ(data, 4242);
  if (me == p - 1) {
    const int value = 17;
    MPI_Send(&value, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
  }
  if (me == 0) {
    MPI_Status status;
    MPI_Wait(&request, &status);
    EXPECT_EQ(program_value, 17);
    EXPECT_EQ(status.MPI_SOURCE, p - 1);
  }
}

TEST_F(CollectivesTest, HierarchyOrderAndSpansAreConsistent) {
  const int p = world_size();
  for (const Shape& s : shapes()) {
    const Hierarchy h(MPI_COMM_WORLD, s.groups);
    std::vector<int> seen(static_cast<std::size_t>(p), 0);
    for (int r : h.order()) ++seen[static_cast<std::size_t>(r)];
    EXPECT_EQ(seen, std::vector<int>(static_cast<std::size_t>(p), 1)) << s.name;
    int covered = 0;
    for (int r = 0; r < p; ++r) {
      EXPECT_EQ(h.order()[static_cast<std::size_t>(h.position(r))], r);
      if (h.rank_in_level(r, h.depth()) >= 0) covered += h.span(r, h.depth());
    }
    EXPECT_EQ(covered, p) << s.name;
  }
  std::vector<int> wrong(static_cast<std::size_t>(p) + 1, 0);
  EXPECT_THROW(Hierarchy(MPI_COMM_WORLD, {wrong}), std::invalid_argument);
  if (p >= 4) {
    std::vector<int> fine(static_cast<std::size_t>(p)), coarse(static_cast<std::size_t>(p));
    for (int r = 0; r < p; ++r) {
      fine[static_cast<std::size_t>(r)] = r / 2;
      coarse[static_cast<std::size_t>(r)] = r % 2;  // splits every pair: no nesting
    }
    EXPECT_THROW(Hierarchy(MPI_COMM_WORLD, {fine, coarse}), std::invalid_argument);
  }
}

}  // namespace
}  // namespace rankshape::coll
