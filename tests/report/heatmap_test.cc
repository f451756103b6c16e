#include "lib/report/heatmap.h"

#include <dirent.h>
#include <gtest/gtest.h>
#include <png.h>

#include <cstdio>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "lib/model/costs.h"
#include "lib/model/grid.h"
#include "lib/model/labelling.h"
#include "lib/synth/machine.h"
#include "tests/testing/files.h"
#include "tests/testing/machines.h"

namespace rankshape {
namespace {

// A decoded picture, RGB.
struct Picture {
  int width = 0;
  int height = 0;
  std::vector<unsigned char> rgb;

  struct Pixel {
    int r, g, b;
    double luminance() const { return 0.299 * r + 0.587 * g + 0.114 * b; }
    bool grey() const { return r == g && g == b; }  // a grid line; the map has no greys
  };
  Pixel at(int x, int y) const {
    const std::size_t i = (static_cast<std::size_t>(y) * width + x) * 3;
    return {rgb[i], rgb[i + 1], rgb[i + 2]};
  }
};

// Decodes with libpng's simplified API; fails the test on a bad file.
Picture decode(const std::string& path) {
  png_image image{};
  image.version = PNG_IMAGE_VERSION;
  Picture out;
  if (!png_image_begin_read_from_file(&image, path.c_str())) {
    ADD_FAILURE() << path << ": " << image.message;
    return out;
  }
  image.format = PNG_FORMAT_RGB;
  out.width = static_cast<int>(image.width);
  out.height = static_cast<int>(image.height);
  out.rgb.resize(PNG_IMAGE_SIZE(image));
  if (!png_image_finish_read(&image, nullptr, out.rgb.data(), 0, nullptr)) {
    ADD_FAILURE() << path << ": " << image.message;
    out = {};
  }
  return out;
}

Picture render(const std::string& name, const Costs& costs, const Labelling& order,
               const Grid* grid = nullptr, const HeatmapOptions& options = {}) {
  const std::string path = testing::scratch_path(name);
  write_heatmap_png(path, costs, order, grid, options);
  return decode(path);
}

// Luminance at the centre of cell (row i, column j).
double cell_luminance(const Picture& pic, const HeatmapGeometry& g, int i, int j) {
  const int half = g.pixels_per_cell / 2;
  return pic.at(j * g.pixels_per_cell + half, i * g.pixels_per_cell + half).luminance();
}

// nodes x cores, cost 1 inside a node and `between` across, block placement.
StructuredCosts block_machine(int nodes, int cores, double between) {
  StructuredSpec s = testing::flat_machine(nodes, cores, between);
  for (int r = 0; r < nodes * cores; ++r) s.ranks.push_back({r / cores, r % cores});
  return StructuredCosts(std::move(s));
}

// Columns at row y that hold grid-line (grey) pixels.
std::set<int> line_columns(const Picture& pic, int y) {
  std::set<int> out;
  for (int x = 0; x < pic.width; ++x) {
    if (pic.at(x, y).grey()) out.insert(x);
  }
  return out;
}

std::vector<std::string> files_starting_with(const std::string& prefix) {
  std::vector<std::string> out;
  const std::string dir = testing::scratch_path("");
  if (DIR* d = opendir(dir.c_str())) {
    while (const dirent* e = readdir(d)) {
      if (std::string(e->d_name).rfind(prefix, 0) == 0) out.push_back(e->d_name);
    }
    closedir(d);
  }
  return out;
}

TEST(HeatmapTest, SmallMatricesAreUpscaledByAnIntegerFactor) {
  const StructuredCosts costs = block_machine(2, 8, 10);
  const HeatmapGeometry g = heatmap_geometry(16, {});
  EXPECT_EQ(g.pixels_per_cell, 32);
  EXPECT_EQ(g.ranks_per_cell, 1);
  const Picture pic = render("small.png", costs, Labelling::identity(16));
  EXPECT_EQ(pic.width, 512);
  EXPECT_EQ(pic.height, 512);
}

TEST(HeatmapTest, LargeMatricesAreDownsampledToAtMostMaxPixels) {
  EXPECT_EQ(heatmap_geometry(1000, {}).side(), 1000);
  EXPECT_EQ(heatmap_geometry(1024, {}).side(), 1024);
  const HeatmapGeometry g = heatmap_geometry(3000, {});
  EXPECT_EQ(g.ranks_per_cell, 3);
  EXPECT_EQ(g.side(), 1000);
  const StructuredCosts costs = block_machine(30, 100, 10);
  const Picture pic = render("large.png", costs, Labelling::identity(3000));
  EXPECT_EQ(pic.width, 1000);
  EXPECT_EQ(pic.height, 1000);
  HeatmapOptions small;
  small.max_pixels = 100;
  EXPECT_EQ(render("max100.png", costs, Labelling::identity(3000), nullptr, small).width, 100);
}

TEST(HeatmapTest, PlantedOrderShowsCheapNodeBlocks) {
  // 2 racks x 4 nodes x 2 sockets x 4 cores, scrambled: 64 ranks, 8 pixels each.
  const SyntheticMachine m = generate_machine(machine_shape(2, 4, 2, 4, RankOrder::kRandom));
  const Labelling planted = block_order(m.costs);
  const HeatmapGeometry g = heatmap_geometry(64, {});
  ASSERT_EQ(g.pixels_per_cell, 8);
  const Picture pic = render("planted.png", m.costs, planted);
  const double same_socket = cell_luminance(pic, g, 0, 1);
  const double same_rack = cell_luminance(pic, g, 0, 8);
  const double other_rack = cell_luminance(pic, g, 0, 40);
  EXPECT_LT(same_socket, same_rack);
  EXPECT_LT(same_rack, other_rack);

  // The first node's block is darker in planted order than in the scramble.
  const Picture scrambled = render("scrambled.png", m.costs, Labelling::identity(64));
  double planted_sum = 0, scrambled_sum = 0;
  for (int i = 0; i < 8; ++i) {
    for (int j = 0; j < 8; ++j) {
      if (i == j) continue;
      planted_sum += cell_luminance(pic, g, i, j);
      scrambled_sum += cell_luminance(scrambled, g, i, j);
    }
  }
  EXPECT_LT(planted_sum, scrambled_sum);
}

TEST(HeatmapTest, DownsampledLargeMachineKeepsTheContrast) {
  // 4 racks x 64 nodes x 2 sockets x 128 cores = 65,536 ranks: 64 x 64 ranks
  // per pixel, 4 pixels per node.
  const SyntheticMachine m = generate_machine(machine_shape(4, 64, 2, 128, RankOrder::kRandom));
  ASSERT_EQ(m.costs.size(), 65536);
  const HeatmapGeometry g = heatmap_geometry(65536, {});
  ASSERT_EQ(g.ranks_per_cell, 64);
  ASSERT_EQ(g.side(), 1024);
  const Labelling planted = block_order(m.costs);
  const Picture pic = render("big-planted.png", m.costs, planted);
  ASSERT_EQ(pic.width, 1024);
  const double in_node = cell_luminance(pic, g, 0, 1);
  const double same_rack = cell_luminance(pic, g, 0, 9);     // node 2, rack 0
  const double other_rack = cell_luminance(pic, g, 0, 300);  // node 75, rack 1
  EXPECT_LT(in_node + 20, same_rack);
  EXPECT_LT(same_rack + 20, other_rack);
  // Scrambled, every block holds a mixture: the node block is not dark.
  const Picture scrambled = render("big-scrambled.png", m.costs, Labelling::identity(65536));
  EXPECT_LT(in_node + 20, cell_luminance(scrambled, g, 0, 1));

  // Grid 16x16x256: slabs of 4,096 positions are 64 pixels apart and drawn;
  // fibres of 256 would be 4 pixels apart and are not.
  const Grid grid({16, 16, 256});
  const Picture lines = render("big-lines.png", m.costs, planted, &grid);
  std::set<int> expected;
  for (int x = 64; x < 1024; x += 64) expected.insert(x);
  EXPECT_EQ(line_columns(lines, 1), expected);
}

TEST(HeatmapTest, GridLinesAtFibreBoundariesCoarsestMostProminent) {
  // 64 ranks at 8 pixels each, grid 4x4x4: fibres of the last dimension
  // every 4 positions (32 px, 1 px light grey), slabs every 16 (128 px,
  // 2 px white).
  const StructuredCosts costs = block_machine(4, 16, 10);
  const Grid grid({4, 4, 4});
  const Picture pic = render("lines.png", costs, Labelling::identity(64), &grid);
  std::set<int> expected;
  for (int b = 4; b < 64; b += 4) {
    if (b % 16 == 0) {
      expected.insert(8 * b - 1);
      expected.insert(8 * b);
    } else {
      expected.insert(8 * b);
    }
  }
  EXPECT_EQ(line_columns(pic, 4), expected);
  EXPECT_EQ(pic.at(32, 4).r, 205);   // finest: light grey
  EXPECT_EQ(pic.at(127, 4).r, 255);  // coarsest: white
  EXPECT_EQ(pic.at(128, 4).r, 255);
  // Horizontal lines too, and the whole column is a line.
  EXPECT_TRUE(pic.at(4, 32).grey());
  for (int y = 0; y < pic.height; ++y) EXPECT_TRUE(pic.at(32, y).grey()) << y;
}

TEST(HeatmapTest, GridLinesTooCloseTogetherAreLeftOut) {
  // 1,024 ranks at 1 pixel each, grid 16x16x4: lines every 4 pixels are
  // left out, every 64 drawn (the only level: 1 px white).
  const StructuredCosts costs = block_machine(16, 64, 10);
  const Grid grid({16, 16, 4});
  const Picture pic = render("sparse-lines.png", costs, Labelling::identity(1024), &grid);
  std::set<int> expected;
  for (int x = 64; x < 1024; x += 64) expected.insert(x);
  EXPECT_EQ(line_columns(pic, 1), expected);
  EXPECT_EQ(pic.at(64, 1).r, 255);
}

TEST(HeatmapTest, RangeExcludesTheDiagonal) {
  // Off-diagonal costs 5..10: 5 is the darkest colour, although 0 (the
  // diagonal) is smaller.
  const DenseCosts costs(3, {0, 5, 10, 5, 0, 7.5, 10, 7.5, 0});
  const HeatmapGeometry g = heatmap_geometry(3, {});
  const Picture pic = render("range.png", costs, Labelling::identity(3));
  const int half = g.pixels_per_cell / 2;
  const Picture::Pixel cheapest = pic.at(g.pixels_per_cell + half, half);
  const Picture::Pixel dearest = pic.at(2 * g.pixels_per_cell + half, half);
  EXPECT_EQ(cheapest.r, 68);
  EXPECT_EQ(cheapest.g, 1);
  EXPECT_EQ(cheapest.b, 84);
  EXPECT_EQ(dearest.r, 253);
  EXPECT_EQ(dearest.g, 231);
  EXPECT_EQ(dearest.b, 37);
}

TEST(HeatmapTest, LogScaleWhenCostsSpanMoreThanTwoOrdersOfMagnitude) {
  // 1, 10 and 1000: on a log scale 10 sits a third of the way up; on a
  // linear scale it is next to the darkest.
  const DenseCosts wide(3, {0, 1, 1000, 1, 0, 10, 1000, 10, 0});
  const HeatmapGeometry g = heatmap_geometry(3, {});
  const Picture automatic = render("auto.png", wide, Labelling::identity(3));
  EXPECT_GT(cell_luminance(automatic, g, 1, 2), cell_luminance(automatic, g, 0, 1) + 30);
  HeatmapOptions linear;
  linear.scale = HeatmapScale::kLinear;
  const Picture lin = render("linear.png", wide, Labelling::identity(3), nullptr, linear);
  EXPECT_LT(cell_luminance(lin, g, 1, 2), cell_luminance(lin, g, 0, 1) + 5);

  // 1 .. 50 is within two orders of magnitude: auto is linear.
  const DenseCosts narrow(3, {0, 1, 50, 1, 0, 10, 50, 10, 0});
  EXPECT_EQ(encode_heatmap_png(narrow, Labelling::identity(3), nullptr),
            encode_heatmap_png(narrow, Labelling::identity(3), nullptr, linear));
}

TEST(HeatmapTest, SameInputGivesIdenticalBytes) {
  const SyntheticMachine m = generate_machine(machine_shape(2, 4, 2, 4, RankOrder::kRandom));
  const Grid grid({4, 16});
  const std::string a = testing::scratch_path("same-a.png");
  const std::string b = testing::scratch_path("same-b.png");
  write_heatmap_png(a, m.costs, block_order(m.costs), &grid);
  write_heatmap_png(b, m.costs, block_order(m.costs), &grid);
  const std::string bytes = testing::read_all(a);
  ASSERT_GT(bytes.size(), 8u);
  EXPECT_EQ(bytes.substr(0, 8), "\x89PNG\r\n\x1a\n");
  EXPECT_EQ(bytes, testing::read_all(b));
}

TEST(HeatmapTest, FailedWriteThrowsNamingThePathAndLeavesNothing) {
  const StructuredCosts costs = block_machine(2, 8, 10);
  const std::string path = testing::scratch_path("no-such-dir/heat.png");
  try {
    write_heatmap_png(path, costs, Labelling::identity(16), nullptr);
    FAIL() << "expected an error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
  }
  EXPECT_TRUE(files_starting_with("no-such-dir").empty());

  // A directory in the way of the rename: the temporary file is removed.
  const std::string dir = testing::scratch_path("in-the-way.png");
  ASSERT_EQ(std::system(("mkdir -p '" + dir + "/x'").c_str()), 0);
  EXPECT_THROW(write_heatmap_png(dir, costs, Labelling::identity(16), nullptr), std::runtime_error);
  EXPECT_EQ(files_starting_with("in-the-way.png").size(), 1u);
}

TEST(HeatmapTest, PairIsWrittenWholeOrNotAtAll) {
  const StructuredCosts costs = block_machine(2, 8, 10);
  const Grid grid({2, 8});
  const std::string prefix = testing::scratch_path("pair");
  write_heatmap_pair(prefix, costs, Labelling::identity(16), grid);
  EXPECT_EQ(files_starting_with("pair-").size(), 2u);
  // A directory where the second picture goes: the first is removed too.
  const std::string blocked = testing::scratch_path("blocked");
  ASSERT_EQ(std::system(("mkdir -p '" + blocked + "-after.png/x'").c_str()), 0);
  EXPECT_THROW(write_heatmap_pair(blocked, costs, Labelling::identity(16), grid),
               std::runtime_error);
  EXPECT_EQ(files_starting_with("blocked-").size(), 1u);  // only the directory
}

TEST(HeatmapTest, MismatchedSizesAreRejected) {
  const StructuredCosts costs = block_machine(2, 8, 10);
  const Grid grid({4, 5});
  EXPECT_THROW(encode_heatmap_png(costs, Labelling::identity(15), nullptr), std::invalid_argument);
  EXPECT_THROW(encode_heatmap_png(costs, Labelling::identity(16), &grid), std::invalid_argument);
  HeatmapOptions bad;
  bad.max_pixels = 0;
  EXPECT_THROW(encode_heatmap_png(costs, Labelling::identity(16), nullptr, bad),
               std::invalid_argument);
}

}  // namespace
}  // namespace rankshape
