// Heatmap rendering in three steps:
//  1. cell values: one value per cell of the (possibly downsampled) matrix,
//     the mean cost over (sampled) pairs of distinct ranks in the cell;
//  2. colours: cell values to palette indices on a linear or log scale;
//  3. pixels: each cell becomes a square of pixels, grid lines go on top, and
//     libpng encodes the palette image into memory.
// Example: p = 4096, max_pixels 1024: cells of 4 x 4 ranks, all 16 pairs
// evaluated (samples_per_side = 4); p = 65,536: cells of 64 x 64 ranks, of
// which positions 8, 24, 40 and 56 of each side are sampled.
#include "lib/report/heatmap.h"

#include <png.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <new>
#include <ostream>
#include <stdexcept>
#include <vector>

#include "lib/io/atomic_file.h"

namespace rankshape {
namespace {

// Palette layout: kMapLevels colours of the map, then the line colours.
constexpr int kMapLevels = 253;
constexpr int kLineGrey = 253;
constexpr int kLineLightGrey = 254;
constexpr int kLineWhite = 255;
// Largest accepted max_pixels: a 16,384-pixel side is 256 MiB of pixels.
constexpr int kMaxSide = 16384;

struct Rgb {
  double r, g, b;
};

// Matplotlib's viridis at 10 evenly spaced points (#440154 ... #fde725):
// perceptually uniform, lightness rising monotonically, so darker = cheaper
// also in grey print and for colour-blind readers. Interpolated linearly.
constexpr std::array<Rgb, 10> kViridis = {{{68, 1, 84},
                                           {72, 40, 120},
                                           {62, 73, 137},
                                           {49, 104, 142},
                                           {38, 130, 142},
                                           {31, 158, 137},
                                           {53, 183, 121},
                                           {110, 206, 88},
                                           {181, 222, 43},
                                           {253, 231, 37}}};

Rgb map_colour(double t) {
  const double x = std::clamp(t, 0.0, 1.0) * (kViridis.size() - 1);
  const std::size_t i = std::min(static_cast<std::size_t>(x), kViridis.size() - 2);
  const double f = x - static_cast<double>(i);
  const Rgb& a = kViridis[i];
  const Rgb& b = kViridis[i + 1];
  return {a.r + f * (b.r - a.r), a.g + f * (b.g - a.g), a.b + f * (b.b - a.b)};
}

// Positions sampled from [begin, end): all of them if there are at most
// `samples`, else `samples` evenly spread ones (the middles of equal parts).
std::vector<int> sample_positions(int begin, int end, int samples) {
  const long long len = end - begin;
  const long long k = std::min<long long>(samples, len);
  std::vector<int> out;
  for (long long t = 0; t < k; ++t)
    out.push_back(begin + static_cast<int>((2 * t + 1) * len / (2 * k)));
  return out;
}

// Mean cost per cell, row-major cells x cells; NaN where a cell holds no pair
// of distinct ranks (a diagonal cell of one rank).
template <class C>
std::vector<double> cell_values(const C& costs, const Labelling& order, const HeatmapGeometry& g,
                                int samples_per_side) {
  const int p = order.size();
  std::vector<std::vector<OldRank>> samples(g.cells);
  for (int i = 0; i < g.cells; ++i) {
    const int begin = i * g.ranks_per_cell;
    const int end = std::min(p, begin + g.ranks_per_cell);
    for (int pos : sample_positions(begin, end, samples_per_side)) {
      samples[i].push_back(order.old_of(NewRank(pos)));
    }
  }
  const std::size_t n = static_cast<std::size_t>(g.cells);
  std::vector<double> values(n * n, std::numeric_limits<double>::quiet_NaN());
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = i; j < n; ++j) {
      double sum = 0;
      int count = 0;
      for (OldRank a : samples[i]) {
        for (OldRank b : samples[j]) {
          if (a == b) continue;  // the diagonal is not a cost
          sum += costs.cost(a, b);
          ++count;
        }
      }
      if (count > 0) values[i * n + j] = values[j * n + i] = sum / count;
    }
  }
  return values;
}

// Palette index of every cell. The range is taken over the cells, not the
// raw costs, so that a downsampled picture uses the whole map.
std::vector<std::uint8_t> cell_colours(const std::vector<double>& values, HeatmapScale scale) {
  double lo = std::numeric_limits<double>::infinity(), hi = 0;
  double lo_positive = std::numeric_limits<double>::infinity();
  for (double v : values) {
    if (std::isnan(v)) continue;
    lo = std::min(lo, v);
    hi = std::max(hi, v);
    if (v > 0) lo_positive = std::min(lo_positive, v);
  }
  // Log scale when positive costs span more than two orders of magnitude
  // (e.g. shared memory against a congested network); zeros then take the
  // darkest colour.
  const bool any_positive = lo_positive <= hi && hi > 0;
  const bool log_scale = any_positive && (scale == HeatmapScale::kLog ||
                                          (scale == HeatmapScale::kAuto && hi > 100 * lo_positive));
  const double from = log_scale ? std::log(lo_positive) : lo;
  const double to = log_scale ? std::log(hi) : hi;
  std::vector<std::uint8_t> out(values.size(), 0);
  if (!(to > from)) return out;  // one value (or none): all the darkest colour
  for (std::size_t c = 0; c < values.size(); ++c) {
    const double v = values[c];
    if (std::isnan(v)) continue;
    const double x = log_scale ? (v > 0 ? std::log(v) : from) : v;
    const double t = std::clamp((x - from) / (to - from), 0.0, 1.0);
    out[c] = static_cast<std::uint8_t>(std::lround(t * (kMapLevels - 1)));
  }
  return out;
}

void draw_grid_lines(const Grid& grid, const HeatmapGeometry& g,
                     std::vector<std::uint8_t>* pixels) {
  const int side = g.side();
  // Levels k = d-2 (finest: fibres of the last dimension) .. 0 (coarsest).
  std::vector<int> drawn;
  for (int k = grid.ndims() - 2; k >= 0; --k) {
    const double spacing =
        static_cast<double>(grid.stride(k)) * g.pixels_per_cell / g.ranks_per_cell;
    if (spacing >= kHeatmapMinLineSpacing) drawn.push_back(k);
  }
  const int m = static_cast<int>(drawn.size());
  for (int r = 0; r < m; ++r) {  // finest first, so coarser lines go on top
    const int k = drawn[r];
    const int width = std::min(r + 1, 3);
    const int from_coarsest = m - 1 - r;
    const std::uint8_t colour = from_coarsest == 0   ? kLineWhite
                                : from_coarsest == 1 ? kLineLightGrey
                                                     : kLineGrey;
    const int stride = grid.stride(k);
    for (long long b = stride; b < grid.size(); b += stride) {
      const int first = g.pixel_of(static_cast<int>(b)) - width / 2;
      for (int x = std::max(first, 0); x < std::min(first + width, side); ++x) {
        for (int y = 0; y < side; ++y) {
          (*pixels)[static_cast<std::size_t>(y) * side + x] = colour;  // column
          (*pixels)[static_cast<std::size_t>(x) * side + y] = colour;  // row
        }
      }
    }
  }
}

// libpng reports errors through a callback that must not return; it jumps
// back to encode_png's setjmp with the message kept here.
struct PngState {
  std::string* out;
  char error[256];
};

[[noreturn]] void on_png_error(png_structp png, png_const_charp message) {
  auto* state = static_cast<PngState*>(png_get_error_ptr(png));
  std::snprintf(state->error, sizeof state->error, "%s", message);
  png_longjmp(png, 1);
}

void on_png_warning(png_structp, png_const_charp) {}

void on_png_write(png_structp png, png_bytep data, png_size_t length) {
  auto* state = static_cast<PngState*>(png_get_io_ptr(png));
  bool ok = true;
  try {
    state->out->append(reinterpret_cast<const char*>(data), length);
  } catch (const std::bad_alloc&) {
    ok = false;
  }
  if (!ok) png_error(png, "out of memory");
}

void on_png_flush(png_structp) {}

// Everything after setjmp, in its own frame so that no local of encode_png
// changes between setjmp and a longjmp.
void write_png_body(png_structp png, png_infop info, const std::vector<std::uint8_t>& pixels,
                    int side) {
  png_set_IHDR(png, info, side, side, 8, PNG_COLOR_TYPE_PALETTE, PNG_INTERLACE_NONE,
               PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  std::array<png_color, 256> palette{};
  for (int i = 0; i < kMapLevels; ++i) {
    const Rgb c = map_colour(static_cast<double>(i) / (kMapLevels - 1));
    palette[i] = {static_cast<png_byte>(std::lround(c.r)), static_cast<png_byte>(std::lround(c.g)),
                  static_cast<png_byte>(std::lround(c.b))};
  }
  palette[kLineGrey] = {150, 150, 150};
  palette[kLineLightGrey] = {205, 205, 205};
  palette[kLineWhite] = {255, 255, 255};
  png_set_PLTE(png, info, palette.data(), static_cast<int>(palette.size()));
  // Palette images compress best unfiltered; no time stamp, so the same
  // input gives the same bytes.
  png_set_filter(png, PNG_FILTER_TYPE_BASE, PNG_FILTER_NONE);
  png_set_compression_level(png, 9);
  png_write_info(png, info);
  for (int y = 0; y < side; ++y) {
    png_write_row(png, pixels.data() + static_cast<std::size_t>(y) * side);
  }
  png_write_end(png, info);
}

// Returns false with state->error set if libpng fails.
bool encode_png(const std::vector<std::uint8_t>& pixels, int side, PngState* state) {
  png_structp png =
      png_create_write_struct(PNG_LIBPNG_VER_STRING, state, on_png_error, on_png_warning);
  if (png == nullptr) {
    std::snprintf(state->error, sizeof state->error, "cannot create a PNG writer");
    return false;
  }
  png_infop info = png_create_info_struct(png);
  if (info == nullptr) {
    png_destroy_write_struct(&png, nullptr);
    std::snprintf(state->error, sizeof state->error, "cannot create a PNG writer");
    return false;
  }
  if (setjmp(png_jmpbuf(png))) {
    png_destroy_write_struct(&png, &info);
    return false;
  }
  png_set_write_fn(png, state, on_png_write, on_png_flush);
  write_png_body(png, info, pixels, side);
  png_destroy_write_struct(&png, &info);
  return true;
}

}  // namespace

HeatmapGeometry heatmap_geometry(int p, const HeatmapOptions& options) {
  if (p < 1) throw std::invalid_argument("heatmap: no ranks");
  if (options.max_pixels < 1 || options.max_pixels > kMaxSide) {
    throw std::invalid_argument("heatmap: max_pixels must be in [1, " + std::to_string(kMaxSide) +
                                "], not " + std::to_string(options.max_pixels));
  }
  if (options.min_pixels < 0) throw std::invalid_argument("heatmap: negative min_pixels");
  if (options.samples_per_side < 1) {
    throw std::invalid_argument("heatmap: samples_per_side must be at least 1");
  }
  HeatmapGeometry g;
  if (p > options.max_pixels) {
    g.ranks_per_cell = (p + options.max_pixels - 1) / options.max_pixels;
    g.cells = (p + g.ranks_per_cell - 1) / g.ranks_per_cell;
  } else {
    g.cells = p;
    const int wanted = (options.min_pixels + p - 1) / p;
    g.pixels_per_cell = std::max(1, std::min(wanted, options.max_pixels / p));
  }
  return g;
}

std::string encode_heatmap_png(const Costs& costs, const Labelling& order, const Grid* grid,
                               const HeatmapOptions& options) {
  const int p = costs.size();
  if (order.size() != p) {
    throw std::invalid_argument("heatmap: labelling has " + std::to_string(order.size()) +
                                " ranks, costs have " + std::to_string(p));
  }
  if (grid != nullptr && grid->size() != p) {
    throw std::invalid_argument("heatmap: grid " + grid->to_string() + " has " +
                                std::to_string(grid->size()) + " positions, costs have " +
                                std::to_string(p) + " ranks");
  }
  const HeatmapGeometry g = heatmap_geometry(p, options);
  const std::vector<double> values = visit_costs(
      costs, [&](const auto& c) { return cell_values(c, order, g, options.samples_per_side); });
  const std::vector<std::uint8_t> colours = cell_colours(values, options.scale);

  const int side = g.side();
  const int s = g.pixels_per_cell;
  std::vector<std::uint8_t> pixels(static_cast<std::size_t>(side) * side);
  for (int y = 0; y < side; ++y) {
    const std::uint8_t* row = colours.data() + static_cast<std::size_t>(y / s) * g.cells;
    std::uint8_t* out = pixels.data() + static_cast<std::size_t>(y) * side;
    for (int x = 0; x < side; ++x) out[x] = row[x / s];
  }
  if (grid != nullptr) draw_grid_lines(*grid, g, &pixels);

  std::string bytes;
  PngState state{&bytes, {}};
  if (!encode_png(pixels, side, &state)) {
    throw std::runtime_error(std::string("heatmap: PNG encoding failed: ") + state.error);
  }
  return bytes;
}

void write_heatmap_png(const std::string& path, const Costs& costs, const Labelling& order,
                       const Grid* grid, const HeatmapOptions& options) {
  std::string bytes;
  try {
    bytes = encode_heatmap_png(costs, order, grid, options);
  } catch (const std::runtime_error& e) {
    throw std::runtime_error("cannot write " + path + ": " + e.what());
  }
  write_file_atomically(path, [&](std::ostream& out) {
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  });
}

void write_heatmap_pair(const std::string& prefix, const Costs& costs, const Labelling& labelling,
                        const Grid& grid) {
  const std::string before = prefix + "-before.png";
  write_heatmap_png(before, costs, Labelling::identity(labelling.size()), &grid);
  try {
    write_heatmap_png(prefix + "-after.png", costs, labelling, &grid);
  } catch (...) {
    std::remove(before.c_str());
    throw;
  }
}

}  // namespace rankshape
