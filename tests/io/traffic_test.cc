#include "lib/io/traffic.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include "lib/io/input_error.h"
#include "tests/testing/files.h"
#include "tests/testing/input_errors.h"

namespace rankshape {
namespace {

using testing::expect_input_error;
using testing::scratch_path;
using testing::write_scratch;

struct Pair {
  int a, b;
  double bytes, messages;
  bool operator==(const Pair& o) const {
    return a == o.a && b == o.b && bytes == o.bytes && messages == o.messages;
  }
};

std::vector<Pair> pairs_of(const Traffic& t) {
  std::vector<Pair> out;
  for (const TrafficPair& p : t.pairs) out.push_back({p.a, p.b, p.bytes, p.messages});
  return out;
}

void PrintTo(const Pair& p, std::ostream* os) {
  *os << "{" << p.a << ", " << p.b << ", " << p.bytes << ", " << p.messages << "}";
}

TEST(TrafficTest, HeaderExampleSumsBothDirections) {
  const std::string path = write_scratch("example.traffic",
                                         "rankshape-traffic 1\n"
                                         "ranks 3\n"
                                         "# from to bytes messages\n"
                                         "0 1 300 3\n"
                                         "1 0 100 1\n"
                                         "2 1 0 0   # nothing: dropped\n");
  const Traffic t = read_traffic({path});
  EXPECT_EQ(t.ranks, 3);
  EXPECT_EQ(pairs_of(t), (std::vector<Pair>{{0, 1, 400, 4}}));
  EXPECT_EQ(read_traffic({path}, 3).ranks, 3);
}

// A pair weighs its bytes plus bytes_per_message per message.
TEST(TrafficTest, GraphWeighsBytesAndMessages) {
  Traffic t;
  t.ranks = 3;
  t.pairs = {{0, 1, 400, 4}, {1, 2, 0, 2}};
  const TrafficGraph g = traffic_graph(t, 100);
  EXPECT_EQ(g.vertices(), 3);
  EXPECT_EQ(g.edges(), 2);
  EXPECT_EQ(g.weight(g.begin(0)), 800);
  EXPECT_EQ(g.weight(g.begin(2)), 200);
  EXPECT_EQ(traffic_graph(t, 0).edges(), 1);  // messages of no weight: no edge
  EXPECT_EQ(traffic_graph(t).weight(traffic_graph(t).begin(0)), 400 + 4 * kDefaultBytesPerMessage);
  EXPECT_THROW(traffic_graph(t, -1), std::invalid_argument);
}

// The bundled profiles of mini-apps (data/traffic) read, with the rank
// count their names say, and every rank talks.
TEST(TrafficTest, BundledProfilesRead) {
  const std::vector<std::pair<std::string, std::vector<int>>> apps = {
      {"cg", {16, 32, 64, 128, 256}},
      {"ft", {16, 32, 64, 128, 256}},
      {"hpcg", {16, 32, 64, 128, 256}},
      {"lulesh", {8, 27, 64, 125, 216}},
      {"minife", {16, 32, 64, 128, 256}}};
  for (const auto& [app, sizes] : apps) {
    for (int p : sizes) {
      const std::string path = "data/traffic/" + app + "-" + std::to_string(p) + ".traffic";
      const Traffic t = read_traffic({path}, p);
      std::vector<int> talks(static_cast<std::size_t>(p), 0);
      for (const TrafficPair& pair : t.pairs) talks[pair.a] = talks[pair.b] = 1;
      EXPECT_EQ(std::count(talks.begin(), talks.end(), 1), p) << path;
    }
  }
}

TEST(TrafficTest, WritesWhatItReads) {
  const std::string path = write_scratch("in.traffic",
                                         "rankshape-traffic 1\nranks 5\n"
                                         "4 0 7 1\n3 2 9007199254740992 2\n2 3 0 5\n0 1 1 1\n");
  const Traffic t = read_traffic({path});
  EXPECT_EQ(pairs_of(t),
            (std::vector<Pair>{{0, 1, 1, 1}, {0, 4, 7, 1}, {2, 3, 9007199254740992.0, 7}}));
  const std::string out = scratch_path("out.traffic");
  write_traffic(out, t);
  const Traffic again = read_traffic({out});
  EXPECT_EQ(again.ranks, 5);
  EXPECT_EQ(pairs_of(again), pairs_of(t));
}

TEST(TrafficTest, WritesDirectedCountsAsAProfilerHasThem) {
  const std::string out = scratch_path("directed.traffic");
  write_directed_traffic(out, 3, {{0, 1, 300, 3}, {1, 0, 100, 1}, {2, 0, 0, 1}});
  EXPECT_EQ(pairs_of(read_traffic({out})), (std::vector<Pair>{{0, 1, 400, 4}, {0, 2, 0, 1}}));
  const std::string bad = scratch_path("bad_directed.traffic");
  EXPECT_THROW(write_directed_traffic(bad, 3, {{0, 3, 1, 1}}), std::invalid_argument);
  EXPECT_THROW(write_directed_traffic(bad, 3, {{1, 1, 1, 1}}), std::invalid_argument);
  EXPECT_THROW(write_directed_traffic(bad, 3, {{0, 1, -1, 1}}), std::invalid_argument);
  EXPECT_THROW(write_directed_traffic(bad, 3, {{0, 1, 1, 1}, {0, 1, 2, 2}}), std::invalid_argument);
  EXPECT_THROW(write_directed_traffic(bad, 0, {}), std::invalid_argument);
  EXPECT_FALSE(std::filesystem::exists(bad));
}

TEST(TrafficTest, SeveralFilesAddUp) {
  const std::string a = write_scratch("a.traffic", "rankshape-traffic 1\nranks 2\n0 1 10 1\n");
  const std::string b = write_scratch("b.traffic", "rankshape-traffic 1\nranks 2\n1 0 5 2\n");
  EXPECT_EQ(pairs_of(read_traffic({a, b})), (std::vector<Pair>{{0, 1, 15, 3}}));
  const std::string c = write_scratch("c.traffic", "rankshape-traffic 1\nranks 3\n1 0 5 2\n");
  expect_input_error([&] { read_traffic({a, c}); }, "c.traffic:2:7", "for 3 ranks");
}

TEST(TrafficTest, BadRankshapeFilesAreRefusedWithTheirPlace) {
  const auto file = [](const std::string& text) { return write_scratch("bad.traffic", text); };
  expect_input_error([&] { read_traffic({file("")}); }, "bad.traffic", "file is empty");
  expect_input_error([&] { read_traffic({file("rankshape-traffic 2\nranks 2\n")}); },
                     "bad.traffic:1", "version 1");
  expect_input_error([&] { read_traffic({file("rankshape-traffic 1\n0 1 2 3\n")}); },
                     "bad.traffic:2", "expected 'ranks P'");
  expect_input_error([&] { read_traffic({file("rankshape-traffic 1\nranks 0\n")}); },
                     "bad.traffic:2:7", "is outside [1,");
  const std::string head = "rankshape-traffic 1\nranks 3\n";
  expect_input_error([&] { read_traffic({file(head + "0 3 1 1\n")}); }, "bad.traffic:3:3",
                     "outside the job's 3 ranks");
  expect_input_error([&] { read_traffic({file(head + "1 1 1 1\n")}); }, "bad.traffic:3:3",
                     "with itself");
  expect_input_error([&] { read_traffic({file(head + "0 1 1 1\n\n0 1 2 2\n")}); }, "bad.traffic:5",
                     "again (first on line 3)");
  expect_input_error([&] { read_traffic({file(head + "0 1 1\n")}); }, "bad.traffic:3",
                     "got 3 fields");
  expect_input_error([&] { read_traffic({file(head + "0 1 -4 1\n")}); }, "bad.traffic:3:5",
                     "is outside [0,");
  expect_input_error([&] { read_traffic({file(head + "0 1 1.5 1\n")}); }, "bad.traffic:3:5",
                     "whole number");
  expect_input_error([&] { read_traffic({file(head + "0 1 9007199254740992 0\n1 0 1 0\n")}); },
                     "bad.traffic:4", "passes 2^53");
  expect_input_error([&] { read_traffic({file(head)}, 4); }, "bad.traffic:2:7", "the job has 4");
  expect_input_error([&] { read_traffic({file("hello 1\n")}); }, "bad.traffic:1:1",
                     "not a traffic file");
  expect_input_error([&] { read_traffic({scratch_path("missing.traffic")}); }, "missing.traffic",
                     "");
  expect_input_error([&] { read_traffic({}); }, "", "no traffic file given");
}

// A size histogram as Open MPI writes it after E lines: 66 counts.
std::string histogram(int at, int count) {
  std::string h;
  for (int i = 0; i < 66; ++i) {
    h += (i == at ? std::to_string(count) : "0") + (i < 65 ? "," : "\n");
  }
  return h;
}

// What Open MPI 4.1.4 wrote for a 3-rank ring (each rank r sends 100 (r + 1)
// bytes to r + 1 three times with MPI_Sendrecv, then one MPI_Allreduce of an
// int), run with --mca pml_monitoring_enable 2 --mca
// pml_monitoring_enable_output 3 --mca pml_monitoring_filename prof: the
// files prof.0.prof, prof.1.prof and prof.2.prof, line for line.
std::vector<std::string> ring_monitoring() {
  const std::string tail =
      "O2A\t%\t0 bytes\t0 msgs sent\nA2O\t%\t0 bytes\t0 msgs sent\nA2A\t%\t8 bytes\t1 msgs "
      "sent\n";
  const auto summary = [&](int r) {
    std::string s = "D\tMPI_COMM_WORLD\tprocs: 0,1,2\n" + tail +
                    "D\tMPI_COMM_SELF\tprocs: " + std::to_string(r) + "\n" + tail;
    for (std::size_t i; (i = s.find('%')) != std::string::npos;) s.replace(i, 1, std::to_string(r));
    return s;
  };
  return {
      "# POINT TO POINT\n"
      "E\t0\t1\t300 bytes\t3 msgs sent\t" +
          histogram(7, 3) +
          "I\t0\t1\t4 bytes\t1 msgs sent\n"
          "# OSC\n"
          "# COLLECTIVES\n"
          "C\t0\t1\t4 bytes\t1 msgs sent\n"
          "C\t0\t2\t4 bytes\t1 msgs sent\n" +
          summary(0),
      "# POINT TO POINT\n"
      "E\t1\t2\t600 bytes\t3 msgs sent\t" +
          histogram(8, 3) + "I\t1\t0\t4 bytes\t1 msgs sent\t" + histogram(3, 1) +
          "I\t1\t2\t4 bytes\t1 msgs sent\n"
          "# OSC\n"
          "# COLLECTIVES\n"
          "C\t1\t0\t4 bytes\t1 msgs sent\n"
          "C\t1\t2\t4 bytes\t1 msgs sent\n" +
          summary(1),
      "# POINT TO POINT\n"
      "E\t2\t0\t900 bytes\t3 msgs sent\t" +
          histogram(9, 3) + "I\t2\t1\t4 bytes\t1 msgs sent\t" + histogram(3, 1) +
          "# OSC\n"
          "S\t2\t1\t64 bytes\t2 msgs sent\n"
          "R\t2\t1\t64 bytes\t2 msgs sent\n"
          "# COLLECTIVES\n"
          "C\t2\t0\t4 bytes\t1 msgs sent\n"
          "C\t2\t1\t4 bytes\t1 msgs sent\n" +
          summary(2)};
}

// E (the ring) plus I (the allreduce's messages) plus S (a put added to
// rank 2's file); C, R and the summaries are not counted.
const std::vector<Pair> kRingTraffic = {{0, 1, 308, 5}, {0, 2, 900, 3}, {1, 2, 672, 7}};

TEST(TrafficTest, ReadsOpenMpiMonitoringFilesOneByOneOrConcatenated) {
  const std::vector<std::string> text = ring_monitoring();
  std::vector<std::string> paths;
  for (int r = 0; r < 3; ++r) {
    paths.push_back(write_scratch("prof." + std::to_string(r) + ".prof", text[r]));
  }
  const Traffic each = read_traffic(paths);
  EXPECT_EQ(each.ranks, 3);
  EXPECT_EQ(pairs_of(each), kRingTraffic);
  const Traffic together = read_traffic({write_scratch("all.prof", text[0] + text[1] + text[2])});
  EXPECT_EQ(together.ranks, 3);
  EXPECT_EQ(pairs_of(together), kRingTraffic);
  // Without MPI_COMM_WORLD's line the highest rank decides: rank 0's file
  // alone names ranks 0 to 2.
  EXPECT_EQ(read_traffic({write_scratch("e.prof", "E\t0\t2\t5 bytes\t1 msgs sent\n")}).ranks, 3);
  expect_input_error([&] { read_traffic(paths, 4); }, "prof.0.prof", "MPI_COMM_WORLD has 3 ranks");
}

TEST(TrafficTest, BadMonitoringLinesAreRefused) {
  const auto file = [](const std::string& text) { return write_scratch("bad.prof", text); };
  expect_input_error([&] { read_traffic({file("E\t0\t1\t5 bytes\t1 msgs\n")}); }, "bad.prof:1",
                     "expected 'E from to N bytes M msgs sent'");
  expect_input_error([&] { read_traffic({file("E\t0\t1\t5 octets\t1 msgs sent\n")}); },
                     "bad.prof:1:9", "expected 'bytes'");
  expect_input_error([&] { read_traffic({file("C\t0\t1\t5 bytes\t1 msgs sent\t3\n")}); },
                     "bad.prof:1", "expected 'C from to N bytes M msgs sent'");
  expect_input_error([&] { read_traffic({file("I\t0\t1\t5 bytes\t1 msgs sent\nX\t1\n")}); },
                     "bad.prof:2:1", "unknown line kind 'X'");
  expect_input_error([&] { read_traffic({file("D\tMPI_COMM_WORLD\tranks: 0,1\n")}); },
                     "bad.prof:1:18", "expected 'procs:'");
  expect_input_error(
      [&] {
        read_traffic({file("D\tMPI_COMM_WORLD\tprocs: 0,1\nE\t0\t2\t5 bytes\t1 msgs sent\n")});
      },
      "bad.prof", "rank 2 of a job of 2 ranks");
  const std::string mixed = write_scratch("mixed.traffic", "rankshape-traffic 1\nranks 2\n");
  expect_input_error(
      [&] {
        read_traffic({file("E\t0\t1\t5 bytes\t1 msgs sent\n"), mixed});
      },
      "mixed.traffic", "give files of one format");
}

TEST(TrafficTest, ReadsTheProfilerMatricesByName) {
  // ompi_monitoring_prof.so's matrices: row = sender, "%zu " per count.
  const std::string size =
      write_scratch("monitoring_pml_size.mat", "0 300 0 \n4 0 600 \n900 4 0 \n");
  const std::string msg = write_scratch("monitoring_pml_msg.mat", "0 3 0 \n1 0 3 \n3 1 0 \n");
  const Traffic both = read_traffic({size, msg});
  EXPECT_EQ(both.ranks, 3);
  EXPECT_EQ(pairs_of(both), (std::vector<Pair>{{0, 1, 304, 4}, {0, 2, 900, 3}, {1, 2, 604, 4}}));
  EXPECT_EQ(pairs_of(read_traffic({size})),
            (std::vector<Pair>{{0, 1, 304, 0}, {0, 2, 900, 0}, {1, 2, 604, 0}}));
  expect_input_error([&] { read_traffic({write_scratch("traffic.mat", "0 1\n1 0\n")}); },
                     "traffic.mat", "bytes or messages");
  expect_input_error([&] { read_traffic({write_scratch("monitoring_pml_avg.mat", "0 1\n1 0\n")}); },
                     "monitoring_pml_avg.mat", "bytes or messages");
  expect_input_error(
      [&] {
        read_traffic({size, size});
      },
      "monitoring_pml_size.mat", "a second matrix of bytes");
  const std::string ragged = write_scratch("r_size.mat", "0 1 2\n1 0\n");
  expect_input_error([&] { read_traffic({ragged}); }, "r_size.mat:2", "expected 3 counts");
  const std::string tall = write_scratch("t_size.mat", "0 1\n1 0\n1 1\n");
  expect_input_error([&] { read_traffic({tall}); }, "t_size.mat:3", "more rows");
  const std::string wide = write_scratch("w_size.mat", "0 1 2\n1 0 2\n");
  expect_input_error([&] { read_traffic({wide}); }, "w_size.mat", "2 rows and 3 columns");
  const std::string small = write_scratch("s_msg.mat", "0 1\n1 0\n");
  expect_input_error([&] { read_traffic({size, small}); }, "s_msg.mat", "2 columns, the job 3");
}

}  // namespace
}  // namespace rankshape
