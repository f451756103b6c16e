// How the commands show an evaluation: per-dimension lines for people, and
// the same figures as JSON for scripts.
#ifndef RANKSHAPE_CMD_REPORT_H_
#define RANKSHAPE_CMD_REPORT_H_

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <ostream>

#include "lib/model/objective.h"

namespace rankshape::cli {

/// "  dimension k (size q, n fibres): worst W, mean M[, link load L]" per
/// dimension.
inline void print_dimensions(std::ostream& out, const Grid& grid, const Evaluation& e) {
  for (int k = 0; k < grid.ndims(); ++k) {
    const DimensionSummary& d = e.dimensions[k];
    out << fmt::format("  dimension {} (size {}, {} fibres): worst {:.6g}, mean {:.6g}", k,
                       grid.dim(k), grid.fibre_count(k), d.worst, d.mean);
    if (!e.link_load.empty()) out << fmt::format(", link load {:.6g}", e.link_load[k]);
    out << "\n";
  }
}

/// [{dimension, size, fibres, worst, mean, worst_fibre[, link_load]}, ...]
inline nlohmann::json dimensions_json(const Grid& grid, const Evaluation& e) {
  nlohmann::json dims = nlohmann::json::array();
  for (int k = 0; k < grid.ndims(); ++k) {
    const DimensionSummary& d = e.dimensions[k];
    dims.push_back({{"dimension", k},
                    {"size", grid.dim(k)},
                    {"fibres", grid.fibre_count(k)},
                    {"worst", d.worst},
                    {"mean", d.mean},
                    {"worst_fibre", d.worst_fibre}});
    if (!e.link_load.empty()) dims.back()["link_load"] = e.link_load[k];
  }
  return dims;
}

}  // namespace rankshape::cli

#endif  // RANKSHAPE_CMD_REPORT_H_
