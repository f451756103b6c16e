#include "lib/io/formats.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "lib/io/input_error.h"
#include "tests/testing/files.h"
#include "tests/testing/input_errors.h"

namespace rankshape {
namespace {

using testing::expect_input_error;
using testing::read_all;
using testing::scratch_path;
using testing::write_scratch;

TEST(DenseFormatTest, ReadsWhitespaceCommasAndComments) {
  const std::string path = write_scratch("dense.txt",
                                         "# measured latencies\n"
                                         "0, 1.5, 2e-6\n"
                                         "\n"
                                         "1.5 0 3   # inline comment\n"
                                         "2e-6\t3\t0\n");
  Warnings w;
  const DenseCosts d = read_dense_costs(path, &w);
  EXPECT_TRUE(w.empty());
  EXPECT_EQ(d.size(), 3);
  EXPECT_EQ(d.cost(OldRank(0), OldRank(2)), 2e-6);
  EXPECT_EQ(d.cost(OldRank(1), OldRank(2)), 3);
}

TEST(DenseFormatTest, SymmetrisesWithTheMeanAndWarns) {
  const std::string path = write_scratch("asym.txt", "7 1 2\n3 0 4\n2 4 0\n");
  Warnings w;
  const DenseCosts d = read_dense_costs(path, &w);
  EXPECT_EQ(d.cost(OldRank(0), OldRank(1)), 2);
  EXPECT_EQ(d.cost(OldRank(1), OldRank(0)), 2);
  EXPECT_EQ(d.cost(OldRank(0), OldRank(0)), 0);
  ASSERT_EQ(w.size(), 2u);
  EXPECT_NE(w[0].find("not symmetric (largest difference 2 between ranks 0 and 1)"),
            std::string::npos)
      << w[0];
  EXPECT_NE(w[0].find("mean"), std::string::npos);
  EXPECT_NE(w[1].find("1 non-zero diagonal"), std::string::npos) << w[1];
}

TEST(DenseFormatTest, RejectsBadInputWithLocation) {
  const auto read = [](const std::string& name, const std::string& text) {
    const std::string path = write_scratch(name, text);
    return [path] { read_dense_costs(path); };
  };
  const std::string dir = scratch_path("");
  expect_input_error(read("d1", "0 1\n1 0 2\n"), "d1:2",
                     "row 1 has 3 values, but the first row has 2");
  expect_input_error(read("d2", "0 1 2\n1 0 2\n"), "d2:2", "2 rows but 3 columns");
  expect_input_error(read("d3", "0 1\n1 0\n1 1\n"), "d3:3", "more rows than columns");
  expect_input_error(read("d4", "0 nan\nnan 0\n"), "d4:1:3", "value is NaN");
  expect_input_error(read("d5", "0 inf\n1 0\n"), "d5:1:3", "value is infinite");
  expect_input_error(read("d6", "0 1\n-1 0\n"), "d6:2:1", "negative");
  expect_input_error(read("d7", "0 1\n1 x\n"), "d7:2:3", "expected a number, got 'x'");
  expect_input_error(read("d8", "# only a comment\n\n"), "d8", "file is empty");
  expect_input_error(read("d9", "0 1e999\n1 0\n"), "d9:1:3", "out of range");
  expect_input_error(read("d10", "0 1e300\n1e300 0\n"), "d10:1:3",
                     "above the largest cost accepted");
  expect_input_error([] { read_dense_costs(scratch_path("missing.txt")); }, "missing.txt",
                     "cannot open");
  expect_input_error([&] { read_dense_costs(dir); }, "", "is a directory");
}

TEST(DenseFormatTest, WritesWhatItReads) {
  const DenseCosts d(3, {0, 0.1, 1e-7, 0.1, 0, 1.0 / 3, 1e-7, 1.0 / 3, 0});
  const std::string path = scratch_path("roundtrip_dense.txt");
  write_dense_costs(path, d);
  const DenseCosts back = read_dense_costs(path);
  for (int a = 0; a < 3; ++a) {
    for (int b = 0; b < 3; ++b)
      EXPECT_EQ(back.cost(OldRank(a), OldRank(b)), d.cost(OldRank(a), OldRank(b)));
  }
}

constexpr const char* kStructured =
    "rankshape-structured 1\n"
    "# two racks of two nodes of two cores\n"
    "cores-per-node 2\n"
    "nodes 4\n"
    "racks 2\n"
    "ranks 8\n"
    "core-costs\n"
    "0 1\n"
    "1 0\n"
    "node-racks\n"
    "0 0\n"
    "1 1\n"
    "rack-costs\n"
    "10 40\n"
    "40 10\n"
    "rank-locations list\n"
    "0 0\n0 1\n1 0\n1 1\n2 0\n2 1\n3 0\n3 1\n";

TEST(StructuredFormatTest, ReadsAndRoundTrips) {
  const std::string path = write_scratch("s.txt", kStructured);
  const std::unique_ptr<Costs> c = read_costs(path);
  ASSERT_NE(dynamic_cast<StructuredCosts*>(c.get()), nullptr);
  EXPECT_EQ(c->size(), 8);
  EXPECT_EQ(c->cost(OldRank(0), OldRank(1)), 1);
  EXPECT_EQ(c->cost(OldRank(0), OldRank(3)), 10);
  EXPECT_EQ(c->cost(OldRank(0), OldRank(5)), 40);
  const std::string out = scratch_path("s_out.txt");
  write_structured_costs(out, *dynamic_cast<StructuredCosts*>(c.get()));
  // Block locations are written compactly, and read back the same.
  EXPECT_NE(read_all(out).find("rank-locations block"), std::string::npos);
  const StructuredCosts back = read_structured_costs(out);
  for (int a = 0; a < 8; ++a) {
    for (int b = 0; b < 8; ++b)
      EXPECT_EQ(back.cost(OldRank(a), OldRank(b)), c->cost(OldRank(a), OldRank(b)));
  }
}

TEST(StructuredFormatTest, FabricsRoundTrip) {
  std::string text = kStructured;
  text += "node-fabric 2.5\nrack-fabric 1e-6\n";
  const StructuredCosts c = read_structured_costs(write_scratch("fabric.txt", text));
  EXPECT_EQ(c.spec().node_fabric, 2.5);
  EXPECT_EQ(c.spec().rack_fabric, 1e-6);
  const std::string out = scratch_path("fabric_out.txt");
  write_structured_costs(out, c);
  const StructuredCosts back = read_structured_costs(out);
  EXPECT_EQ(back.spec().node_fabric, 2.5);
  EXPECT_EQ(back.spec().rack_fabric, 1e-6);
  // None given, none written.
  write_structured_costs(out, read_structured_costs(write_scratch("plain.txt", kStructured)));
  EXPECT_EQ(read_all(out).find("fabric"), std::string::npos);
}

TEST(StructuredFormatTest, OneRackWhenRacksAreNotGiven) {
  const std::string path = write_scratch("one_rack.txt",
                                         "rankshape-structured 1\n"
                                         "cores-per-node 1\nnodes 3\nranks 3\n"
                                         "core-costs\n0\nrack-costs\n5\n"
                                         "rank-locations block\n");
  const StructuredCosts c = read_structured_costs(path);
  EXPECT_EQ(c.spec().racks, 1);
  EXPECT_EQ(c.cost(OldRank(0), OldRank(2)), 5);
}

TEST(StructuredFormatTest, RejectsBadInputWithLocation) {
  const auto read = [](const std::string& name, std::string text) {
    const std::string path = write_scratch(name, text);
    return [path] { read_structured_costs(path); };
  };
  const std::string s = kStructured;
  const auto replaced = [&](const std::string& from, const std::string& to) {
    std::string t = s;
    t.replace(t.find(from), from.size(), to);
    return t;
  };
  expect_input_error(read("s1", "rankshape-structured 2\n"), "s1:1:1", "header");
  expect_input_error(read("s2", replaced("nodes 4", "nodes four")), "s2:4:7",
                     "expected a whole number");
  expect_input_error(read("s3", replaced("1 0\nnode-racks", "1\nnode-racks")), "s3:9",
                     "core-costs row 1 has 1 values");
  expect_input_error(read("s4", replaced("1 1\nrack-costs", "1 2\nrack-costs")), "s4:12:3",
                     "outside [0, 1]");
  expect_input_error(read("s4b", replaced("10 40\n40 10", "10 1e290\n1e290 10")), "s4b:14:4",
                     "above the largest cost accepted");
  expect_input_error(read("s5", replaced("10 40\n40 10", "10 40\n41 10")), "s5",
                     "must be symmetric");
  expect_input_error(read("s6", replaced("3 0\n3 1\n", "3 0\n")), "s6",
                     "rank-locations ends after 7 ranks");
  expect_input_error(read("s7", replaced("racks 2", "flavour 2")), "s7:5:1",
                     "unknown keyword 'flavour'");
  expect_input_error(read("s8", replaced("ranks 8", "nodes 4")), "s8:6:1", "given twice");
  expect_input_error(read("s9", replaced("2 0\n2 1", "2 0\n2 2")), "s9:22:3", "outside [0, 1]");
  expect_input_error(read("s10", replaced("rank-locations list", "rank-locations spiral")),
                     "s10:16:16", "expected 'block' or 'list'");
  std::string no_racks = s;
  no_racks.erase(no_racks.find("rack-costs"), std::string("rack-costs\n10 40\n40 10\n").size());
  expect_input_error(read("s11", no_racks), "s11", "missing 'node-costs' or 'rack-costs'");
  expect_input_error(read("s13", replaced("ranks 8", "ranks 2000000000")), "s13:6:7",
                     "at most 16777216 ranks");
  expect_input_error(
      read("s14", replaced("rank-locations list", "rank-locations block\nranks-extra")), "s14",
      "unknown keyword 'ranks-extra'");
  expect_input_error(read("s15", replaced("core-costs", "core-costs 7")), "s15:7:12",
                     "takes no value on its line");
  // Node costs are stored as float: larger values are refused where they are.
  expect_input_error(read("s16", replaced("rack-costs\n10 40\n40 10\n",
                                          "node-costs\n0 1 1 1\n1 0 1 1\n1 1 0 1\n1 1 4e39 0\n")),
                     "s16:17:5", "node-costs entry 4e39 is too large");
  expect_input_error(read("s12", replaced("0 1\n1 0\nnode", "0 -1\n-1 0\nnode")), "s12:8:3",
                     "negative");
  expect_input_error(read("s17", s + "node-fabric -1\n"), "s17:25:13",
                     "node-fabric -1 is negative");
  expect_input_error(read("s18", s + "rack-fabric\n"), "s18:25:1", "'rack-fabric' takes one cost");
  expect_input_error(read("s19", s + "node-fabric 1e300\n"), "s19:25:13", "is above 1e+06");
  expect_input_error(read("s20", s + "rack-fabric nan\n"), "s20:25:13", "NaN");
  expect_input_error(read("s21", s + "node-fabric 1\nnode-fabric 2\n"), "s21:26:1", "given twice");
  // A fabric between racks needs racks.
  std::string one_rack = replaced("racks 2", "racks 1");
  one_rack.erase(one_rack.find("node-racks"), std::string("node-racks\n0 0\n1 1\n").size());
  one_rack.replace(one_rack.find("10 40\n40 10\n"), 12, "10\n");
  expect_input_error(read("s22", one_rack + "rack-fabric 0.5\n"), "s22", "rack-fabric needs racks");
}

// read(name, text, p) writes text to a scratch file and returns a call of
// reader on it expecting p ranks.
template <class Reader>
auto reading_with(Reader reader) {
  return [reader](const std::string& name, const std::string& text, int p) {
    const std::string file = write_scratch(name, text);
    return [reader, file, p] { reader(file, p); };
  };
}

TEST(LabellingFormatTest, RoundTripsAndValidates) {
  std::vector<OldRank> perm = {OldRank(2), OldRank(0), OldRank(1)};
  const std::string path = scratch_path("perm.txt");
  write_labelling(path, Labelling(perm));
  EXPECT_EQ(read_labelling(path, 3), Labelling(perm));
  const auto read = reading_with(read_labelling);
  expect_input_error(read("l1", "0\n1\n1\n", 0), "l1:3:1", "old rank 1 already placed on line 2");
  expect_input_error(read("l2", "0\n3\n1\n", 0), "l2:2:1", "outside [0, 3)");
  expect_input_error(read("l3", "0\n1\n", 3), "l3", "labelling has 2 ranks, expected 3");
  expect_input_error(read("l4", "0 1\n", 0), "l4:1:3", "one old rank per line");
  expect_input_error(read("l5", "0\n-1\n", 0), "l5:2:1", "outside");
  expect_input_error(read("l6", "", 0), "l6", "file is empty");
}

TEST(PlacementFormatTest, RoundTripsAndValidates) {
  const Placement pl({{"nodeA", 0}, {"nodeA", 1}, {"nodeB", 0}});
  const std::string path = scratch_path("placement.txt");
  write_placement(path, pl);
  const Placement back = read_placement(path, 3);
  EXPECT_EQ(back.of(OldRank(2)).host, "nodeB");
  EXPECT_EQ(back.of(OldRank(1)).core, 1);
  EXPECT_EQ(back.hosts(), (std::vector<std::string>{"nodeA", "nodeB"}));
  // Lines may come in any order.
  EXPECT_EQ(read_placement(write_scratch("p0", "1 b 0\n0 a 3\n")).of(OldRank(0)).core, 3);
  const auto read = reading_with(read_placement);
  expect_input_error(read("p1", "0 a 0\n0 b 1\n", 0), "p1:2:1", "rank 0 already placed on line 1");
  expect_input_error(read("p2", "0 a 0\n2 b 1\n", 0), "p2", "rank 1 is missing");
  expect_input_error(read("p3", "0 a\n", 0), "p3:1", "expected 'rank host core'");
  expect_input_error(read("p4", "0 a -1\n", 0), "p4:1:5", "outside");
  expect_input_error(read("p5", "0 a 0\n", 2), "p5", "placement has 1 ranks, expected 2");
}

TEST(WritersTest, NothingHalfWrittenOnFailure) {
  const std::string dir = scratch_path("readonly_dir");
  std::filesystem::create_directories(dir);
  std::filesystem::permissions(
      dir, std::filesystem::perms::owner_read | std::filesystem::perms::owner_exec);
  const bool root_ignores_permissions = ::geteuid() == 0;
  if (!root_ignores_permissions) {
    EXPECT_THROW(write_labelling(dir + "/perm.txt", Labelling::identity(3)), std::runtime_error);
    EXPECT_FALSE(std::filesystem::exists(dir + "/perm.txt"));
  }
  EXPECT_THROW(write_labelling(scratch_path("no/such/dir/perm.txt"), Labelling::identity(3)),
               std::runtime_error);
  EXPECT_THROW(write_labelling("/dev/full/perm.txt", Labelling::identity(3)), std::runtime_error);
}

}  // namespace
}  // namespace rankshape
