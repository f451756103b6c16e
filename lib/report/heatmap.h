// Heatmap pictures of a cost matrix, so that a person sees the machine's
// structure and what a relabelling did to it.
//
// Row and column i show the rank at grid position i: order.old_of(NewRank(i)).
// With the identity labelling that is the job's own order; with a good
// labelling every fibre of the grid becomes a dark (cheap) square on the
// diagonal. Example: 8 ranks on 2 nodes of 4 cores, scrambled; the planted
// labelling gathers the scattered cheap pairs into two dark 4 x 4 blocks.
//
// The picture is an 8-bit palette PNG (a viridis-like map, cheap = dark, plus
// three grey levels for grid lines), written atomically.
#ifndef RANKSHAPE_LIB_REPORT_HEATMAP_H_
#define RANKSHAPE_LIB_REPORT_HEATMAP_H_

#include <string>

#include "lib/model/costs.h"
#include "lib/model/grid.h"
#include "lib/model/labelling.h"

namespace rankshape {

/// How cost values map to colours.
enum class HeatmapScale {
  kAuto,    // log when the positive off-diagonal values span more than 100x
  kLinear,  // from the smallest to the largest off-diagonal value
  kLog,     // from the smallest positive to the largest off-diagonal value
};

struct HeatmapOptions {
  /// Largest image side. Above this many ranks, one pixel shows the mean cost
  /// of a block of ceil(p / max_pixels) x ceil(p / max_pixels) ranks.
  int max_pixels = 1024;
  /// Small matrices are upscaled by an integer factor to about this side
  /// (but never beyond max_pixels), so that 16 ranks are not 16 pixels.
  int min_pixels = 512;
  /// A downsampled block is averaged over at most this many evenly spread
  /// positions per side (16 cost evaluations for 4), so that 65,536 ranks
  /// cost about 8 million evaluations, not 4 billion.
  int samples_per_side = 4;
  HeatmapScale scale = HeatmapScale::kAuto;
};

/// Where ranks fall in the image.
struct HeatmapGeometry {
  int ranks_per_cell = 1;   // > 1: downsampled
  int pixels_per_cell = 1;  // > 1: upscaled
  int cells = 0;            // cells per side
  int side() const { return cells * pixels_per_cell; }
  /// The pixel column (or row) at the left (top) edge of grid position
  /// `position`; a grid line before that position is drawn there.
  int pixel_of(int position) const {
    return static_cast<int>(static_cast<long long>(position) * pixels_per_cell / ranks_per_cell);
  }
};

/// The geometry write_heatmap_png uses for p ranks. Throws
/// std::invalid_argument for p < 1 or options out of range.
HeatmapGeometry heatmap_geometry(int p, const HeatmapOptions& options);

/// Grid lines are drawn for a level only if they are at least this many
/// pixels apart.
constexpr int kHeatmapMinLineSpacing = 6;

/// Encodes the heatmap of costs in the order given as PNG bytes.
///
/// With a grid (nullable), lines separate consecutive blocks of
/// grid->stride(k) positions for k = 0..d-2: the finest level bounds the
/// fibres of the last dimension, the coarsest (k = 0) the slabs of the first.
/// A level is drawn when its lines are at least kHeatmapMinLineSpacing pixels
/// apart. Among the drawn levels, the finest is 1 pixel wide, the next 2 and
/// the rest 3 (columns pixel_of(b) - width / 2 onwards); the coarsest drawn
/// level is white, the next light grey, the rest grey.
///
/// Throws std::invalid_argument if the labelling or the grid does not have
/// costs.size() ranks, and std::runtime_error if encoding fails.
std::string encode_heatmap_png(const Costs& costs, const Labelling& order, const Grid* grid,
                               const HeatmapOptions& options = {});

/// Writes encode_heatmap_png(...) to path through a temporary file beside it
/// and a rename: nothing half-written is left behind. Throws
/// std::runtime_error naming path if the file cannot be written.
void write_heatmap_png(const std::string& path, const Costs& costs, const Labelling& order,
                       const Grid* grid, const HeatmapOptions& options = {});

/// PREFIX-before.png (the identity order) and PREFIX-after.png (labelling),
/// both with grid's boundaries; if the second cannot be written, the first
/// is removed, so no half of the pair is left behind.
void write_heatmap_pair(const std::string& prefix, const Costs& costs, const Labelling& labelling,
                        const Grid& grid);

}  // namespace rankshape

#endif  // RANKSHAPE_LIB_REPORT_HEATMAP_H_
