// The configuration language, the cost model's choices and the tuning
// table, in one process.
#include "lib/coll/model.h"

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "lib/coll/config.h"
#include "lib/coll/table.h"
#include "lib/io/input_error.h"

namespace rankshape::coll {
namespace {

// 16 nodes of 8 ranks: shared memory inside (0.5 us, 10 GB/s), a network
// between (20 us, 1 GB/s).
Model two_levels() {
  Model m;
  m.sizes = {8, 16};
  m.links = {{0.5e-6, 1e-10}, {20e-6, 1e-9}};
  m.gamma = 2e-10;
  m.ranks = 128;
  return m;
}

TEST(ConfigTest, EveryCandidateDescribesItselfAndParsesBack) {
  for (Collective c : kAllCollectives) {
    EXPECT_EQ(collective_named(collective_name(c)), c);
    for (int depth : {0, 1, 2}) {
      const auto all = candidates(c, depth, 16 << 20);
      ASSERT_FALSE(all.empty());
      EXPECT_FALSE(all.front().hierarchical);
      for (const Config& config : all) {
        const auto back = Config::parse(config.describe());
        ASSERT_TRUE(back.has_value()) << config.describe();
        EXPECT_EQ(*back, config) << config.describe();
      }
    }
  }
  EXPECT_FALSE(collective_named("allreduc").has_value());
  for (const char* bad : {"", "nativ", "hierarchical levels=", "hierarchical levels=ring,foo",
                          "hierarchical segment=0", "hierarchical segment=12x",
                          "hierarchical  segment=4", "hierarchical colour=red"}) {
    EXPECT_FALSE(Config::parse(bad).has_value()) << bad;
  }
}

TEST(ConfigTest, AReduceThenABcastAndFlatAlgorithmsDescribeThemselvesAndParseBack) {
  const std::string text = "reduce+bcast(hierarchical levels=knomial,native;native)";
  const auto composed = Config::parse(text);
  ASSERT_TRUE(composed.has_value());
  EXPECT_TRUE(composed->hierarchical);
  ASSERT_EQ(composed->parts.size(), 2u);
  EXPECT_EQ(composed->parts[0], *Config::parse("hierarchical levels=knomial,native"));
  EXPECT_FALSE(composed->parts[1].hierarchical);
  EXPECT_EQ(composed->describe(), text);
  EXPECT_FALSE(*composed == *Config::parse("hierarchical levels=knomial,native"));
  const auto flat = Config::parse("flat=rabenseifner");
  ASSERT_TRUE(flat.has_value());
  EXPECT_TRUE(flat->hierarchical);
  EXPECT_EQ(flat->flat, Algorithm::kRabenseifner);
  EXPECT_EQ(flat->describe(), "flat=rabenseifner");
  EXPECT_TRUE(applies(*flat, Collective::kReduce));
  EXPECT_TRUE(applies(*flat, Collective::kAllreduce));
  EXPECT_FALSE(applies(*flat, Collective::kBcast));
  EXPECT_TRUE(applies(*composed, Collective::kAllreduce));
  EXPECT_FALSE(applies(*composed, Collective::kReduce));
  for (const char* bad :
       {"flat=", "flat=native", "flat=fast", "flat=ring ", "reduce+bcast(native)",
        "reduce+bcast(native;native", "reduce+bcast(native;nativ)",
        "reduce+bcast(native;native;native)", "reduce+bcast(reduce+bcast(native;native);native)"}) {
    EXPECT_FALSE(Config::parse(bad).has_value()) << bad;
  }
}

TEST(ConfigTest, AReduceScatterThenAnAllgatherDescribesItselfAndParsesBack) {
  const std::string text = "reduce_scatter_block+allgather(hierarchical;native)";
  const auto composed = Config::parse(text);
  ASSERT_TRUE(composed.has_value());
  EXPECT_EQ(composed->composition, Config::Composition::kReduceScatterAllgather);
  ASSERT_EQ(composed->parts.size(), 2u);
  EXPECT_TRUE(composed->parts[0].hierarchical);
  EXPECT_FALSE(composed->parts[1].hierarchical);
  EXPECT_EQ(composed->describe(), text);
  // The same parts composed the other way are another configuration.
  const auto other = Config::parse("reduce+bcast(hierarchical;native)");
  ASSERT_TRUE(other.has_value());
  EXPECT_FALSE(*composed == *other);
  EXPECT_TRUE(applies(*composed, Collective::kAllreduce));
  EXPECT_FALSE(applies(*composed, Collective::kReduceScatterBlock));
  // Its parts are a reduce_scatter_block's and an allgather's, which run
  // no per-level algorithms.
  EXPECT_FALSE(applies(*Config::parse("reduce_scatter_block+allgather(hierarchical levels=knomial,"
                                      "native;native)"),
                       Collective::kAllreduce));
  EXPECT_FALSE(applies(*Config::parse("reduce_scatter_block+allgather(flat=ring;native)"),
                       Collective::kAllreduce));
  for (const char* bad :
       {"reduce_scatter_block+allgather(native)", "reduce_scatter_block+allgather(native;native",
        "reduce_scatter_block+allgather(native;reduce+bcast(native;native))",
        "reduce_scatter_block+bcast(native;native)"}) {
    EXPECT_FALSE(Config::parse(bad).has_value()) << bad;
  }
}

TEST(ConfigTest, TextbookFlatAlgorithmsFollowMpichsRules) {
  const auto named = [](Collective c, std::int64_t bytes, int ranks) {
    const auto flat = textbook_flat(c, bytes, bytes / 4, ranks);  // ints, as a trial's
    return flat ? flat->describe() : std::string("none");
  };
  EXPECT_EQ(named(Collective::kBcast, 8, 256), "flat=binomial");
  EXPECT_EQ(named(Collective::kBcast, 64 << 10, 256), "flat=scatter-allgather");
  EXPECT_EQ(named(Collective::kBcast, 64 << 10, 7), "flat=binomial");
  EXPECT_EQ(named(Collective::kReduce, 2048, 256), "flat=binomial");
  EXPECT_EQ(named(Collective::kReduce, 2049, 256), "flat=rabenseifner");
  EXPECT_EQ(named(Collective::kAllreduce, 8, 256), "flat=recursive-doubling");
  EXPECT_EQ(named(Collective::kAllreduce, 1 << 20, 256), "flat=rabenseifner");
  EXPECT_EQ(named(Collective::kAlltoall, 8, 256), "none");
  EXPECT_EQ(named(Collective::kBarrier, 0, 256), "flat=linear");  // depth 2, not MPICH's
  EXPECT_TRUE(applies(*Config::parse("flat=linear"), Collective::kBarrier));
  EXPECT_FALSE(applies(*Config::parse("flat=linear"), Collective::kBcast));
  // Rabenseifner needs an element for every rank of the largest power of
  // two: 1,024 ints on 4,096 ranks (or 3,000) stay on the tree.
  EXPECT_EQ(named(Collective::kReduce, 4 << 10, 4096), "flat=binomial");
  EXPECT_EQ(named(Collective::kAllreduce, 4 << 10, 3000), "flat=recursive-doubling");
  EXPECT_EQ(named(Collective::kReduce, 16 << 10, 4096), "flat=rabenseifner");
  EXPECT_EQ(named(Collective::kAllreduce, 8 << 10, 3000), "flat=rabenseifner");
  EXPECT_EQ(textbook_flat(Collective::kReduce, 64 << 10, 1, 256)->describe(), "flat=binomial");
  for (Collective c : {Collective::kBcast, Collective::kReduce, Collective::kAllreduce}) {
    EXPECT_TRUE(applies(*textbook_flat(c, 1 << 20, 1 << 18, 256), c));
  }
}

TEST(ConfigTest, CandidatesCoverEveryLevelChoiceAndOnlyUsefulPipelines) {
  // bcast on 2 levels + top: 6^3 algorithm combinations, native, and
  // pipelines of 8 KiB .. 4 MiB segments that give at least two segments.
  EXPECT_EQ(candidates(Collective::kBcast, 2, 0).size(), 1u + 216u);
  EXPECT_EQ(candidates(Collective::kBcast, 2, 16 << 10).size(), 1u + 216u + 1u);
  EXPECT_EQ(candidates(Collective::kBcast, 2, 16 << 20).size(), 1u + 216u + 5u);
  // allreduce: native, binomial, k-nomial or chain below the top, six
  // choices at the top; reduce: six choices per level.
  EXPECT_EQ(candidates(Collective::kAllreduce, 1, 0).size(), 1u + 4u * 6u);
  EXPECT_EQ(candidates(Collective::kReduce, 1, 0).size(), 1u + 6u * 6u);
  // gather: native or hierarchical (native levels) only.
  EXPECT_EQ(candidates(Collective::kGather, 2, 1 << 20).size(), 2u);
  EXPECT_EQ(candidates(Collective::kBarrier, 0, 0).size(), 1u);
  // Where the MPI library cannot pipeline, no pipelines.
  EXPECT_EQ(candidates(Collective::kBcast, 2, 16 << 20, false).size(), 1u + 216u);
}

TEST(ModelTest, NoPipelineIsChosenWhereTheyCannotRun) {
  Model m = two_levels();
  m.links = {{0.5e-6, 1e-9}, {2e-6, 1e-9}};
  EXPECT_GT(choose(Collective::kReduce, m, 16 << 20).config.segment_bytes, 0);
  m.pipelines = false;
  EXPECT_EQ(choose(Collective::kReduce, m, 16 << 20).config.segment_bytes, 0);
  EXPECT_EQ(choose(Collective::kReduce, m, 16 << 20, 0.05, true).config.segment_bytes, 0);
}

TEST(ModelTest, LoadedLinksSlowWhatSendsAllAtOnce) {
  // The network's bandwidth per message falls 4x when every node sends (an
  // oversubscribed backbone), as measured by calibrate().
  const Model quiet = two_levels();
  Model busy = quiet;
  busy.links[1].beta_loaded = 4 * busy.links[1].beta;
  EXPECT_EQ(busy.links[1].beta_with(1, 16), busy.links[1].beta);
  // The backbone carries 4 senders at full speed: 8 get half of it each.
  EXPECT_EQ(busy.links[1].beta_with(4, 16), busy.links[1].beta);
  EXPECT_DOUBLE_EQ(busy.links[1].beta_with(8, 16), 2 * busy.links[1].beta);
  EXPECT_EQ(busy.links[1].beta_with(16, 16), busy.links[1].beta_loaded);
  EXPECT_EQ(busy.links[1].beta_with(64, 16), busy.links[1].beta_loaded);
  EXPECT_EQ(quiet.links[1].loaded(), quiet.links[1].beta);  // 0: not measured
  const std::int64_t mib = 1 << 20;
  Config ring, binomial;
  ring.hierarchical = binomial.hierarchical = true;
  ring.levels = {Algorithm::kNative, Algorithm::kRing};
  binomial.levels = {Algorithm::kNative, Algorithm::kBinomial};
  // Between the leaders: a ring (every leader sends) pays the whole 4x on
  // its network bandwidth term (not on the node's part, nor on reducing); a
  // binomial bcast less (only its last step, 8 senders, is slowed).
  const double ring_ratio = predict(Collective::kAllreduce, ring, busy, mib) /
                            predict(Collective::kAllreduce, ring, quiet, mib);
  EXPECT_GT(ring_ratio, 2.5);
  const double tree_ratio = predict(Collective::kBcast, binomial, busy, mib) /
                            predict(Collective::kBcast, binomial, quiet, mib);
  EXPECT_GT(tree_ratio, 1.15);
  EXPECT_LT(tree_ratio, ring_ratio);
  // Native allreduce sends from every rank: it slows by more than the
  // hierarchical one, whose network phase has one rank per node.
  Config plain;
  plain.hierarchical = true;
  EXPECT_GT(predict(Collective::kAllreduce, Config{}, busy, mib) /
                predict(Collective::kAllreduce, Config{}, quiet, mib),
            predict(Collective::kAllreduce, plain, busy, mib) /
                predict(Collective::kAllreduce, plain, quiet, mib));
}

TEST(ModelTest, FlatCostsFollowTheTextbookFormulas) {
  // One level of 8 ranks, everything alike: binomial bcast is 3 steps.
  Model flat;
  flat.sizes = {8};
  flat.links = {{1e-6, 1e-9}};
  flat.ranks = 8;
  const double m = 1000;
  EXPECT_NEAR(predict(Collective::kBcast, Config{}, flat, 1000),
              std::min(3 * (1e-6 + m * 1e-9), (3 + 7) * 1e-6 + 2.0 * 7 / 8 * m * 1e-9), 1e-12);
  EXPECT_NEAR(predict(Collective::kBarrier, Config{}, flat, 0), 3e-6, 1e-12);
  // Pairwise alltoall: 7 exchanges.
  EXPECT_NEAR(predict(Collective::kAlltoall, Config{}, flat, 1000), 7 * (1e-6 + m * 1e-9), 1e-12);
}

TEST(ModelTest, ScatteredGroupsGoHierarchical) {
  // Ranks dealt over the nodes (as after relabelling for another pattern):
  // every flat step crosses the network, with all ranks of a node at once.
  Model m = two_levels();
  m.contiguous = false;
  for (Collective c : kAllCollectives) {
    for (std::int64_t bytes : {std::int64_t{8}, std::int64_t{1} << 20}) {
      // Gather, scatter and alltoall of large blocks are bound by the
      // root's (or each node's) bytes either way.
      const bool root_bound =
          c == Collective::kGather || c == Collective::kScatter || c == Collective::kAlltoall;
      if (root_bound && bytes > 8) continue;
      const Choice choice = choose(c, m, bytes);
      EXPECT_TRUE(choice.config.hierarchical) << collective_name(c) << " " << bytes;
      EXPECT_LT(choice.predicted, choice.native_predicted * 0.95) << collective_name(c);
      EXPECT_NEAR(choice.predicted, predict(c, choice.config, m, bytes), 1e-15);
    }
  }
}

TEST(ModelTest, SmallAllToAllCrossesTheNetworkLessOftenHierarchically) {
  // Contiguous nodes: a flat pairwise alltoall pays 120 network latencies,
  // the hierarchical one 15 (node leaders exchange in bulk).
  const Choice c = choose(Collective::kAlltoall, two_levels(), 8);
  EXPECT_TRUE(c.config.hierarchical);
  EXPECT_LT(c.predicted, 0.5 * c.native_predicted);
}

TEST(ModelTest, AReduceThenABcastCostsItsParts) {
  const Model m = two_levels();
  const Config tree = *Config::parse("hierarchical levels=knomial,knomial");
  Config composed;
  composed.hierarchical = true;
  composed.parts = {tree, Config{}};
  EXPECT_DOUBLE_EQ(
      predict(Collective::kAllreduce, composed, m, 4096),
      predict(Collective::kReduce, tree, m, 4096) + predict(Collective::kBcast, Config{}, m, 4096));
}

TEST(ModelTest, AReduceScatterThenAnAllgatherCostsItsPartsOfABlockPerRank) {
  const Model m = two_levels();
  ASSERT_GT(m.ranks, 1);
  Config composed;
  composed.hierarchical = true;
  composed.composition = Config::Composition::kReduceScatterAllgather;
  composed.parts = {Config{}, *Config::parse("hierarchical")};
  const std::int64_t block = (std::int64_t{1} << 20) / m.ranks;
  EXPECT_DOUBLE_EQ(predict(Collective::kAllreduce, composed, m, std::int64_t{1} << 20),
                   predict(Collective::kReduceScatterBlock, Config{}, m, block) +
                       predict(Collective::kAllgather, composed.parts[1], m, block));
}

// A trial times the model's two best, then the best of each other
// algorithm at the top that it prices within 2x of its best.
TEST(ModelTest, TrialsTakeTheTwoBestAndEachOtherTopWithinTwice) {
  std::vector<std::pair<double, Config>> ranked;
  for (const auto& [seconds, text] : std::vector<std::pair<double, std::string>>{
           {1.0, "hierarchical levels=chain,knomial"},
           {1.01, "hierarchical levels=native,knomial"},
           {1.05, "hierarchical levels=chain,native"},  // native at the top: never on its own
           {1.1, "hierarchical levels=chain,binomial"},
           {1.2, "hierarchical levels=native,binomial"},  // a top already tried
           {1.5, "hierarchical levels=knomial,knomial"},
           {1.9, "hierarchical levels=chain,scatter-allgather"},
           {2.5, "hierarchical levels=chain,chain"}}) {  // over 2x the best
    ranked.emplace_back(seconds, *Config::parse(text));
  }
  std::vector<std::string> tried;
  for (const Config& config : worth_trying(ranked, 1)) tried.push_back(config.describe());
  EXPECT_EQ(tried, (std::vector<std::string>{"hierarchical levels=chain,knomial",
                                             "hierarchical levels=native,knomial",
                                             "hierarchical levels=chain,binomial",
                                             "hierarchical levels=chain,scatter-allgather"}));
  // The two best are tried whatever they run; fewer when fewer are ranked.
  EXPECT_EQ(worth_trying({ranked[2]}, 1).size(), 1u);
  EXPECT_TRUE(worth_trying({}, 1).empty());
  // On the model's own ranking: the best two, then distinct other tops.
  const Model m = two_levels();
  const auto own = rank_hierarchical(Collective::kBcast, m, 16 << 20);
  const std::vector<Config> picked = worth_trying(own, m.depth());
  ASSERT_GE(picked.size(), 2u);
  EXPECT_EQ(picked[0], own[0].second);
  EXPECT_EQ(picked[1], own[1].second);
  for (std::size_t i = 2; i < picked.size(); ++i) {
    EXPECT_NE(picked[i].level(1), Algorithm::kNative);
    for (std::size_t j = 0; j < i; ++j) EXPECT_NE(picked[i].level(1), picked[j].level(1));
  }
}

TEST(ModelTest, NoGainMeansNative) {
  // All links alike: a hierarchy only adds steps to a gather.
  Model m = two_levels();
  m.links[0] = m.links[1];
  const Choice gather = choose(Collective::kGather, m, 1 << 10);
  EXPECT_FALSE(gather.config.hierarchical);
  EXPECT_EQ(gather.predicted, gather.native_predicted);
  // Forced, it is the best hierarchical configuration all the same.
  EXPECT_TRUE(choose(Collective::kGather, m, 1 << 10, 0.05, true).config.hierarchical);
}

TEST(ModelTest, KnomialTreesPayFewerLatenciesForSmallMessages) {
  // 16 members, radix 4: 2 rounds of 3 messages each, where a binomial
  // tree takes 4 rounds of one; at 1 MiB the tripled bytes cost more.
  const LinkCost l{20e-6, 1e-9};
  Model m;
  m.sizes = {16};
  m.links = {l};
  m.ranks = 16;
  Config knomial, binomial;
  knomial.hierarchical = binomial.hierarchical = true;
  knomial.levels = {Algorithm::kKnomial};
  binomial.levels = {Algorithm::kBinomial};
  EXPECT_NEAR(predict(Collective::kBcast, knomial, m, 8), 2 * (20e-6 + 3 * 8 * 1e-9), 1e-12);
  EXPECT_NEAR(predict(Collective::kBcast, binomial, m, 8), 4 * (20e-6 + 8 * 1e-9), 1e-12);
  EXPECT_GT(predict(Collective::kBcast, knomial, m, 1 << 20),
            predict(Collective::kBcast, binomial, m, 1 << 20));
  EXPECT_LT(predict(Collective::kReduce, knomial, m, 8),
            predict(Collective::kReduce, binomial, m, 8));
  // At the top of an allreduce a tree is its reduce then its bcast: the
  // allreduce's candidates include its own reduce followed by bcast.
  for (const Config& tree : {knomial, binomial}) {
    EXPECT_NEAR(predict(Collective::kAllreduce, tree, m, 8),
                predict(Collective::kReduce, tree, m, 8) + predict(Collective::kBcast, tree, m, 8),
                1e-12);
  }
}

TEST(ModelTest, ScatteredGroupsMakeNativePayTheSlowLink) {
  Model blocked = two_levels();
  Model scattered = blocked;
  scattered.contiguous = false;
  const double a = predict(Collective::kAllreduce, Config{}, blocked, 8);
  const double b = predict(Collective::kAllreduce, Config{}, scattered, 8);
  EXPECT_GT(b, a);
  // The hierarchical configurations do not depend on the numbering.
  Config h;
  h.hierarchical = true;
  EXPECT_EQ(predict(Collective::kAllreduce, h, blocked, 8),
            predict(Collective::kAllreduce, h, scattered, 8));
}

TEST(ModelTest, PipelinesPayTheSlowestStagePerExtraSegment) {
  // Both levels bandwidth-bound and alike: cut in segments, the intra-node
  // stage hides behind the network stage.
  Model m = two_levels();
  m.links = {{0.5e-6, 1e-9}, {2e-6, 1e-9}};
  Config plain, one, many;
  plain.hierarchical = one.hierarchical = many.hierarchical = true;
  one.segment_bytes = 16 << 20;
  many.segment_bytes = 1 << 20;
  const std::int64_t bytes = 16 << 20;
  // One segment is the unpipelined sum.
  EXPECT_NEAR(predict(Collective::kBcast, one, m, bytes),
              predict(Collective::kBcast, plain, m, bytes), 1e-12);
  EXPECT_LT(predict(Collective::kBcast, many, m, bytes),
            0.7 * predict(Collective::kBcast, plain, m, bytes));
  // What the model picks (a pipeline, or the chain, itself a pipeline)
  // beats the unpipelined levels.
  EXPECT_LT(choose(Collective::kBcast, m, bytes).predicted,
            0.7 * predict(Collective::kBcast, plain, m, bytes));
}

TEST(ModelTest, ChainReducePaysEachLinkOnceButEveryHop) {
  // Unpipelined levels (SMPI): at 16 MiB the chain's segments cross each
  // top-level link once, where the tree sends the whole message log2(16)
  // times; at 4 B it pays 15 hops of latency against the tree's 4.
  Model m = two_levels();
  m.pipelines = false;
  const Config tree = *Config::parse("hierarchical levels=binomial,binomial");
  const Config chain = *Config::parse("hierarchical levels=binomial,chain");
  EXPECT_LT(predict(Collective::kReduce, chain, m, 16 << 20),
            0.5 * predict(Collective::kReduce, tree, m, 16 << 20));
  EXPECT_GT(predict(Collective::kReduce, chain, m, 4),
            3 * predict(Collective::kReduce, tree, m, 4));
}

TEST(ModelTest, LargeMessagesPayTheirOwnLatency) {
  // A rendezvous from 64 KiB: 40 us more per message between nodes. A
  // 512 KiB binomial bcast pays it in each of its 4 network steps; a
  // scatter, then a ring allgather, only in its scatter's first 3 steps
  // (256 KiB down to 64 KiB), not in its last one nor its ring of 32 KiB
  // pieces.
  Model eager = two_levels();
  eager.links[0].beta = 0;  // the network alone
  Model rendezvous = eager;
  rendezvous.links[1].alpha_large = 60e-6;
  const Config tree = *Config::parse("hierarchical levels=native,binomial");
  const Config ring = *Config::parse("hierarchical levels=native,scatter-allgather");
  const std::int64_t bytes = 512 << 10;
  EXPECT_NEAR(predict(Collective::kBcast, tree, rendezvous, bytes) -
                  predict(Collective::kBcast, tree, eager, bytes),
              4 * 40e-6, 1e-9);
  EXPECT_NEAR(predict(Collective::kBcast, ring, rendezvous, bytes) -
                  predict(Collective::kBcast, ring, eager, bytes),
              3 * 40e-6, 1e-9);
  // Small messages never pay it.
  EXPECT_DOUBLE_EQ(predict(Collective::kBcast, tree, rendezvous, 1024),
                   predict(Collective::kBcast, tree, eager, 1024));
  EXPECT_EQ(rendezvous.links[1].alpha_at(65535), 20e-6);
  EXPECT_EQ(rendezvous.links[1].alpha_at(65536), 60e-6);
  EXPECT_EQ(eager.links[1].alpha_at(65536), 20e-6);  // 0: as alpha
}

TEST(ModelTest, AChainWithOneSegmentHasOneLinkBusyAtATime) {
  // A loaded backbone slows a chain only by the segments in flight: one
  // 64 KiB segment crosses its 15 links one after the other, unslowed.
  Model m = two_levels();
  m.links[0].beta = 0;
  m.links[1].beta_loaded = 4 * m.links[1].beta;
  m.pipelines = false;
  const Config chain = *Config::parse("hierarchical levels=native,chain");
  EXPECT_NEAR(predict(Collective::kBcast, chain, m, 65536),
              15 * (20e-6 + 65536 * 1e-9) + 3 * 0.5e-6, 1e-9);
  // 64 segments: 15 of the 16 leaders sending, 15/16 of the fully loaded
  // speed's cost each.
  EXPECT_NEAR(predict(Collective::kBcast, chain, m, 64 * 65536),
              (15 + 63) * (20e-6 + 65536 * 3.75e-9) + 3 * 0.5e-6, 1e-9);
}

TEST(ModelTest, ABinaryTreeBeatsTheChainOnlyWhereTheBackboneIsShared) {
  // 16 leaders, 4 MiB: binary_segment_bytes gives 128 KiB, 32 segments
  // down a tree of depth 4: 4 + 32 - 1 steps.
  EXPECT_EQ(binary_segment_bytes(16 << 20), 256 << 10);
  EXPECT_EQ(binary_segment_bytes(4 << 20), 128 << 10);
  EXPECT_EQ(binary_segment_bytes(1 << 20), 64 << 10);
  EXPECT_EQ(binary_segment_bytes(1), 8 << 10);
  EXPECT_EQ(binary_segment_bytes(std::int64_t{1} << 40), 1 << 20);
  Model m = two_levels();
  m.links[0].beta = 0;
  m.pipelines = false;
  const Config chain = *Config::parse("hierarchical levels=native,chain");
  const Config binary = *Config::parse("hierarchical levels=native,binary");
  const std::int64_t bytes = 4 << 20;
  const double seg = 128 << 10;
  // Every link its own: a parent's two sends share its link, 2x the
  // chain's bandwidth per step, and the chain wins.
  EXPECT_NEAR(predict(Collective::kBcast, binary, m, bytes),
              (3 + 32) * (20e-6 + seg * 2e-9) + 3 * 0.5e-6, 1e-9);
  EXPECT_LT(predict(Collective::kBcast, chain, m, bytes),
            predict(Collective::kBcast, binary, m, bytes));
  // A backbone 4x oversubscribed bounds both by what all 15 edges move at
  // once (3.75x each): the tree's 4 + 32 - 1 steps beat the chain's
  // 15 + 64 - 1 of 64 KiB.
  m.links[1].beta_loaded = 4 * m.links[1].beta;
  EXPECT_NEAR(predict(Collective::kBcast, binary, m, bytes),
              (3 + 32) * (20e-6 + seg * 3.75e-9) + 3 * 0.5e-6, 1e-9);
  EXPECT_NEAR(predict(Collective::kBcast, chain, m, bytes),
              (15 + 63) * (20e-6 + 65536 * 3.75e-9) + 3 * 0.5e-6, 1e-9);
  EXPECT_GT(predict(Collective::kBcast, chain, m, bytes),
            predict(Collective::kBcast, binary, m, bytes));
}

TEST(TableTest, RoundTripsAndLooksUpTheNearestSize) {
  TuningTable t;
  t.models.push_back(two_levels());
  t.models[0].links[1].beta_loaded = 3e-9;
  t.models[0].links[1].alpha_large = 50e-6;
  TableEntry small{Collective::kBcast, {8, 16}, 1024, Config{}, 1e-5, 1e-5, 1e-5};
  TableEntry big = small;
  big.bytes = 1 << 20;
  big.config = *Config::parse("hierarchical levels=native,chain segment=65536");
  t.entries = {small, big};
  const TuningTable back = parse_table(table_json(t), "t.json");
  ASSERT_EQ(back.entries.size(), 2u);
  EXPECT_EQ(back.entries[1].config, big.config);
  ASSERT_TRUE(back.model({8, 16}).has_value());
  EXPECT_DOUBLE_EQ(back.model({8, 16})->links[1].alpha, 20e-6);
  EXPECT_DOUBLE_EQ(back.model({8, 16})->links[1].loaded(), 3e-9);
  EXPECT_DOUBLE_EQ(back.model({8, 16})->links[0].loaded(), 1e-10);
  EXPECT_DOUBLE_EQ(back.model({8, 16})->links[1].alpha_at(1 << 20), 50e-6);
  EXPECT_DOUBLE_EQ(back.model({8, 16})->links[0].alpha_at(1 << 20), 0.5e-6);
  // Tables written before loaded links were measured: loaded is beta.
  const TuningTable old = parse_table(R"({"format": "rankshape-coll-table", "version": 1,
      "models": [{"sizes": [2, 3], "alpha": [1e-6, 1e-5], "beta": [1e-10, 1e-9], "gamma": 0}],
      "entries": []})",
                                      "old.json");
  ASSERT_TRUE(old.model({2, 3}).has_value());
  EXPECT_DOUBLE_EQ(old.model({2, 3})->links[1].loaded(), 1e-9);
  EXPECT_DOUBLE_EQ(old.model({2, 3})->links[1].alpha_at(1 << 20), 1e-5);  // and alpha
  EXPECT_FALSE(back.model({8, 8}).has_value());
  EXPECT_EQ(back.lookup(Collective::kBcast, {8, 16}, 2000), Config{});
  EXPECT_EQ(back.lookup(Collective::kBcast, {8, 16}, 512 << 10), big.config);
  EXPECT_FALSE(back.lookup(Collective::kReduce, {8, 16}, 1024).has_value());
  EXPECT_FALSE(back.lookup(Collective::kBcast, {4, 32}, 1024).has_value());
  // merge replaces entries with the same key and keeps the others.
  TuningTable update;
  TableEntry replaced = small;
  replaced.config = big.config;
  update.entries = {replaced};
  TuningTable merged = back;
  merged.merge(update);
  ASSERT_EQ(merged.entries.size(), 2u);
  EXPECT_EQ(merged.lookup(Collective::kBcast, {8, 16}, 1024), big.config);
}

TEST(TableTest, BadTablesNameTheProblem) {
  const auto message = [](const std::string& text) {
    try {
      parse_table(text, "t.json");
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_NE(message("{").find("not JSON"), std::string::npos);
  EXPECT_NE(message("{}").find("not a rankshape tuning table"), std::string::npos);
  const std::string head = R"({"format": "rankshape-coll-table", "version": 1, "models": [], )";
  EXPECT_NE(message(head + R"("entries": [{"collective": "bcats", "sizes": [2], "bytes": 8,
      "config": "native"}]})")
                .find("unknown collective 'bcats'"),
            std::string::npos);
  EXPECT_NE(message(head + R"("entries": [{"collective": "bcast", "sizes": [2, 2], "bytes": 8,
      "config": "hierarchical levels=chain"}]})")
                .find("does not fit"),
            std::string::npos);
  EXPECT_NE(message(head + R"("entries": [{"collective": "bcast", "sizes": [2], "bytes": 8,
      "config": "fast please"}]})")
                .find("bad configuration"),
            std::string::npos);
  const auto entry_with = [&](const std::string& collective, const std::string& config) {
    return head + R"("entries": [{"collective": ")" + collective +
           R"(", "sizes": [2, 2], "bytes": 8, "config": ")" + config + R"("}]})";
  };
  EXPECT_NE(
      message(entry_with("bcast", "reduce+bcast(native;native)")).find("does not apply to bcast"),
      std::string::npos);
  EXPECT_NE(message(entry_with("allreduce", "reduce+bcast(native;hierarchical levels=chain)"))
                .find("does not fit"),
            std::string::npos);
  EXPECT_EQ(
      message(entry_with("allreduce", "reduce+bcast(native;hierarchical levels=chain,knomial)")),
      "accepted");
  EXPECT_NE(message(entry_with("bcast", "flat=ring")).find("does not apply to bcast"),
            std::string::npos);
  // Found in review: a level algorithm that level cannot run for the
  // collective (only the top's leaders would refuse it, at run time).
  EXPECT_NE(message(entry_with("allreduce",
                               "reduce+bcast(native;hierarchical levels=native,rabenseifner)"))
                .find("does not apply to allreduce"),
            std::string::npos);
  EXPECT_NE(message(entry_with("allreduce", "hierarchical levels=ring,ring"))
                .find("does not apply to allreduce"),
            std::string::npos);
  EXPECT_EQ(message(entry_with("allreduce", "hierarchical levels=chain,ring")), "accepted");
  EXPECT_NE(message(entry_with("gather", "hierarchical levels=binomial,native"))
                .find("does not apply to gather"),
            std::string::npos);
  EXPECT_EQ(message(entry_with("allreduce", "reduce+bcast(flat=rabenseifner;flat=knomial)")),
            "accepted");
  EXPECT_EQ(message(entry_with("allreduce", "reduce_scatter_block+allgather(hierarchical;native)")),
            "accepted");
  EXPECT_NE(message(entry_with("reduce_scatter_block",
                               "reduce_scatter_block+allgather(hierarchical;native)"))
                .find("does not apply to reduce_scatter_block"),
            std::string::npos);
  EXPECT_NE(message(head + R"("entries": [{"collective": "bcast"}]})").find("bad tuning table"),
            std::string::npos);
  EXPECT_EQ(message(head + R"("entries": []})"), "accepted");
  // Found by tests/fuzz:table_fuzz: values of the wrong type or range.
  EXPECT_NE(
      message(R"({"format": 1, "models": [], "entries": []})").find("not a rankshape tuning table"),
      std::string::npos);
  EXPECT_NE(message(R"({"format": "rankshape-coll-table", "version": "1"})").find("version"),
            std::string::npos);
  const std::string entry = R"("entries": [{"collective": "bcast", "config": "native", )";
  EXPECT_NE(message(head + entry + R"("sizes": [2, 0], "bytes": 8}]})").find("level size"),
            std::string::npos);
  EXPECT_NE(message(head + entry + R"("sizes": [2, 1e300], "bytes": 8}]})").find("level size"),
            std::string::npos);
  EXPECT_NE(message(head + entry + R"("sizes": [65536, 65536], "bytes": 8}]})").find("2^31"),
            std::string::npos);
  EXPECT_NE(message(head + entry + R"("sizes": [], "bytes": 8}]})").find("list of level sizes"),
            std::string::npos);
  EXPECT_NE(message(head + entry + R"("sizes": [2], "bytes": -8}]})").find("bytes"),
            std::string::npos);
  EXPECT_NE(message(head + entry + R"("sizes": [2], "bytes": 8, "measured": -1}]})")
                .find("measured is negative"),
            std::string::npos);
  const std::string model = R"({"format": "rankshape-coll-table", "version": 1, "entries": [],
      "models": [{"sizes": [2], "beta": [1e-9], "gamma": 0, "alpha": )";
  EXPECT_NE(message(model + "[-1e-6]}]}").find("alpha is negative"), std::string::npos);
  EXPECT_EQ(message(model + "[1e-6]}]}"), "accepted");
}

}  // namespace
}  // namespace rankshape::coll
