// How the commands show an evaluation: per-dimension lines (fibres) or a
// stencil's figures for people, and the same figures as JSON for scripts.
#ifndef RANKSHAPE_CMD_REPORT_H_
#define RANKSHAPE_CMD_REPORT_H_

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <utility>

#include "lib/model/bounds.h"
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

/// "; fabric cost F: busiest parent P with load L" for a level with a
/// shared fabric (LinkLevel::fabric_cost), else nothing.
inline std::string fabric_text(const LevelTraffic& t) {
  if (t.fabric_cost == 0) return "";
  return fmt::format("; fabric cost {:.6g}: busiest parent {} with load {:.6g}", t.fabric_cost,
                     t.busiest_parent, t.busiest_fabric_load);
}

/// A level's figures in JSON: those of every pattern, with the names of
/// its pairs (neighbour pairs, edges) given.
inline nlohmann::json level_json(const LevelTraffic& t, const char* crossing, const char* busiest) {
  return {{"groups", t.groups},
          {"flow_cost", t.flow_cost},
          {crossing, t.crossing_pairs},
          {busiest, t.busiest_pairs},
          {"busiest_group", t.busiest_group},
          {"busiest_load", t.busiest_load},
          {"total_load", t.total_load},
          {"fabric_cost", t.fabric_cost},
          {"busiest_parent", t.busiest_parent},
          {"busiest_fabric_load", t.busiest_fabric_load}};
}

/// A stencil's figures, for people: the busiest rank, then per level of
/// shared links the neighbour pairs it cuts and the busiest group's share.
inline void print_stencil(std::ostream& out, const StencilSummary& s) {
  out << fmt::format("  ranks: busiest {:.6g} (position {}), mean {:.6g}; {} neighbour messages\n",
                     s.busiest_rank, s.busiest_position, s.mean_rank, s.messages);
  for (std::size_t l = 0; l < s.levels.size(); ++l) {
    const LevelTraffic& t = s.levels[l];
    out << fmt::format(
        "  level {} ({} groups, flow cost {:.6g}): {} neighbour pairs across, busiest group {} "
        "with {} (load {:.6g}){}\n",
        l, t.groups, t.flow_cost, t.crossing_pairs, t.busiest_group, t.busiest_pairs,
        t.busiest_load, fabric_text(t));
  }
}

/// {busiest_rank, busiest_position, mean_rank, messages, concentration,
///  levels: [{groups, flow_cost, crossing_pairs, busiest_pairs,
///            busiest_group, busiest_load, total_load, fabric_cost,
///            busiest_parent, busiest_fabric_load}, ...]}
inline nlohmann::json stencil_json(const Evaluation& e) {
  const StencilSummary& s = *e.stencil;
  nlohmann::json levels = nlohmann::json::array();
  for (const LevelTraffic& t : s.levels) {
    levels.push_back(level_json(t, "crossing_pairs", "busiest_pairs"));
  }
  return {{"busiest_rank", s.busiest_rank},
          {"busiest_position", s.busiest_position},
          {"mean_rank", s.mean_rank},
          {"messages", s.messages},
          {"concentration", e.value.concentration},
          {"levels", levels}};
}

/// A traffic graph's figures, for people: the communication cost, the
/// busiest rank, then per level the edges it cuts and the busiest group's
/// load.
inline void print_graph(std::ostream& out, const GraphSummary& s) {
  out << fmt::format(
      "  communication {:.6g} ({} edges, weight {:.6g}); busiest rank {:.6g} (position {})\n",
      s.communication, s.edges, s.weight, s.busiest_rank, s.busiest_position);
  for (std::size_t l = 0; l < s.levels.size(); ++l) {
    const LevelTraffic& t = s.levels[l];
    out << fmt::format(
        "  level {} ({} groups, flow cost {:.6g}): {} edges across (weight {:.6g}), busiest "
        "group {} with load {:.6g}{}\n",
        l, t.groups, t.flow_cost, t.crossing_pairs, t.total_load / 2, t.busiest_group,
        t.busiest_load, fabric_text(t));
  }
}

/// {communication, weight, edges, busiest_rank, busiest_position,
///  levels: [{groups, flow_cost, crossing_edges, busiest_edges,
///            busiest_group, busiest_load, total_load, fabric_cost,
///            busiest_parent, busiest_fabric_load}, ...]}
inline nlohmann::json graph_json(const GraphSummary& s) {
  nlohmann::json levels = nlohmann::json::array();
  for (const LevelTraffic& t : s.levels) {
    levels.push_back(level_json(t, "crossing_edges", "busiest_edges"));
  }
  return {{"communication", s.communication},
          {"weight", s.weight},
          {"edges", s.edges},
          {"busiest_rank", s.busiest_rank},
          {"busiest_position", s.busiest_position},
          {"levels", levels}};
}

/// Per-dimension lines for fibres, the stencil's or the graph's lines.
inline void print_evaluation(std::ostream& out, const Grid& grid, const Evaluation& e) {
  if (e.graph) {
    print_graph(out, *e.graph);
  } else if (e.stencil) {
    print_stencil(out, *e.stencil);
  } else {
    print_dimensions(out, grid, e);
  }
}

/// The evaluation's details under the key a reader expects: "dimensions"
/// (fibres), "stencil" or "graph", as {key, value}.
inline std::pair<std::string, nlohmann::json> evaluation_json(const Grid& grid,
                                                              const Evaluation& e) {
  if (e.graph) return {"graph", graph_json(*e.graph)};
  if (e.stencil) return {"stencil", stencil_json(e)};
  return {"dimensions", dimensions_json(grid, e)};
}

/// "  lower bound: B (worst fibre per dimension at least D0, D1, ...)" (a
/// stencil: "(busiest rank at least R, shared links at least L)"), then
/// "; reached: optimal" or "; VALUE is G% above it" when given a value:
/// how far from optimal an objective can still be (lib/model/bounds.h).
inline std::string bound_text(const LowerBound& b, const double* value) {
  std::string parts;
  if (b.stencil) {
    parts = fmt::format("busiest rank at least {:.6g}, shared links at least {:.6g}",
                        b.stencil->busiest_rank, b.stencil->links);
  } else {
    parts = "worst fibre per dimension at least ";
    for (std::size_t k = 0; k < b.dimension.size(); ++k) {
      parts += fmt::format("{}{:.6g}", k == 0 ? "" : ", ", b.dimension[k]);
    }
  }
  std::string text = fmt::format("  lower bound: {:.6g} ({})", b.primary, parts);
  if (value != nullptr && reaches(*value, b.primary)) {
    text += "; reached: optimal";
  } else if (value != nullptr && b.primary > 0) {
    text +=
        fmt::format("; {:.6g} is {:.3g}% above it", *value, 100 * (*value - b.primary) / b.primary);
  }
  return text + "\n";
}

/// {primary, total, dimensions: [...]}, or for a stencil {primary, total,
/// busiest_rank, links}
inline nlohmann::json bound_json(const LowerBound& b) {
  nlohmann::json j = {{"primary", b.primary}, {"total", b.total}};
  if (b.stencil) {
    j["busiest_rank"] = b.stencil->busiest_rank;
    j["links"] = b.stencil->links;
  } else {
    j["dimensions"] = b.dimension;
  }
  return j;
}

/// --pattern's help text.
inline const char* pattern_help() {
  return "who talks to whom: fibres (all-to-all along each dimension in turn; default) or "
         "stencil[:OPTION,...] (grid neighbours at once; options periodic, periodic=1x0..., "
         "points=N (2d+1 or 3^d), diagonals, weights=WxW..., diagonal-weight=W; "
         "docs/objective.md, \"Patterns\"); graph is implied by --traffic";
}

/// --objective's help text.
inline const char* objective_help() {
  return "fibres: sum-max (default) | thesis-max | total, optionally :pairs or :max-pair, then "
         "optionally +links; stencil: step (default: the busiest rank or the shared links) | "
         "total; "
         "graph: cost (default: communication cost plus the busiest links) | total";
}

}  // namespace rankshape::cli

#endif  // RANKSHAPE_CMD_REPORT_H_
