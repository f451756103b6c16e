#include "lib/coll/config.h"

#include <algorithm>
#include <charconv>
#include <string>
#include <utility>

namespace rankshape::coll {

namespace {

constexpr std::string_view kNames[] = {
    "bcast",    "reduce", "allreduce", "gather", "scatter", "allgather", "reduce_scatter_block",
    "alltoall", "barrier"};

// The algorithms each level can run, for collective c; top: the top level.
std::vector<Algorithm> level_choices(Collective c, bool top) {
  using A = Algorithm;
  switch (c) {
    case Collective::kBcast:
      return {A::kNative, A::kBinomial, A::kKnomial, A::kScatterAllgather, A::kChain, A::kBinary};
    case Collective::kReduce:
      return {A::kNative, A::kBinomial, A::kKnomial, A::kChain, A::kBinary, A::kRabenseifner};
    case Collective::kAllreduce:
      if (top) {
        return {A::kNative,       A::kRecursiveDoubling, A::kRing,
                A::kRabenseifner, A::kBinomial,          A::kKnomial};
      }
      return {A::kNative, A::kBinomial, A::kKnomial, A::kChain};
    default:
      return {A::kNative};
  }
}

// The algorithms a flat configuration can run for collective c: the top
// level's, and for allgather and reduce_scatter_block (whose levels run
// only the MPI library's) the textbook ones.
std::vector<Algorithm> flat_choices(Collective c) {
  using A = Algorithm;
  if (c == Collective::kAllgather) return {A::kRecursiveDoubling, A::kRing};
  if (c == Collective::kReduceScatterBlock) return {A::kRecursiveHalving};
  if (c == Collective::kBarrier) return {A::kLinear};
  return level_choices(c, true);
}

// Config::describe()'s prefixes of the two compositions.
constexpr std::string_view kReduceBcast = "reduce+bcast(";
constexpr std::string_view kReduceScatterAllgather = "reduce_scatter_block+allgather(";

bool pipelined(Collective c) {
  return c == Collective::kBcast || c == Collective::kReduce || c == Collective::kAllreduce;
}

}  // namespace

std::string_view collective_name(Collective c) { return kNames[static_cast<int>(c)]; }

std::optional<Collective> collective_named(std::string_view name) {
  for (Collective c : kAllCollectives) {
    if (collective_name(c) == name) return c;
  }
  return std::nullopt;
}

bool is_reduction(Collective c) {
  return c == Collective::kReduce || c == Collective::kAllreduce ||
         c == Collective::kReduceScatterBlock;
}

std::string Config::describe() const {
  if (!hierarchical) return "native";
  if (parts.size() == 2) {
    return std::string(composition == Composition::kReduceBcast ? kReduceBcast
                                                                : kReduceScatterAllgather) +
           parts[0].describe() + ";" + parts[1].describe() + ")";
  }
  if (flat != Algorithm::kNative) return "flat=" + std::string(algorithm_name(flat));
  std::string out = "hierarchical";
  bool all_native = true;
  for (Algorithm a : levels) all_native = all_native && a == Algorithm::kNative;
  if (!all_native) {
    out += " levels=";
    for (std::size_t j = 0; j < levels.size(); ++j) {
      if (j > 0) out += ',';
      out += algorithm_name(levels[j]);
    }
  }
  if (segment_bytes > 0) out += " segment=" + std::to_string(segment_bytes);
  return out;
}

std::optional<Config> Config::parse(std::string_view text) {
  Config c;
  if (text == "native") return c;
  if (text.substr(0, 5) == "flat=") {
    const auto a = algorithm_named(text.substr(5));
    if (!a || *a == Algorithm::kNative) return std::nullopt;
    c.hierarchical = true;
    c.flat = *a;
    return c;
  }
  for (const auto& [prefix, composition] :
       {std::pair{kReduceBcast, Composition::kReduceBcast},
        std::pair{kReduceScatterAllgather, Composition::kReduceScatterAllgather}}) {
    if (text.substr(0, prefix.size()) != prefix) continue;
    if (text.back() != ')') return std::nullopt;
    text = text.substr(prefix.size(), text.size() - prefix.size() - 1);
    const std::size_t semicolon = text.find(';');
    if (semicolon == std::string_view::npos) return std::nullopt;
    for (std::string_view part : {text.substr(0, semicolon), text.substr(semicolon + 1)}) {
      auto p = parse(part);
      if (!p || !p->parts.empty()) return std::nullopt;
      c.parts.push_back(std::move(*p));
    }
    c.hierarchical = true;
    c.composition = composition;
    return c;
  }
  if (text.substr(0, 12) != "hierarchical") return std::nullopt;
  c.hierarchical = true;
  text.remove_prefix(12);
  while (!text.empty()) {
    if (text.front() != ' ') return std::nullopt;
    text.remove_prefix(1);
    const std::size_t end = text.find(' ');
    const std::string_view field = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view() : text.substr(end);
    if (field.substr(0, 7) == "levels=") {
      std::string_view list = field.substr(7);
      while (true) {
        const std::size_t comma = list.find(',');
        const auto a = algorithm_named(list.substr(0, comma));
        if (!a) return std::nullopt;
        c.levels.push_back(*a);
        if (comma == std::string_view::npos) break;
        list.remove_prefix(comma + 1);
      }
    } else if (field.substr(0, 8) == "segment=") {
      const std::string_view n = field.substr(8);
      const auto [ptr, ec] = std::from_chars(n.data(), n.data() + n.size(), c.segment_bytes);
      if (ec != std::errc() || ptr != n.data() + n.size() || c.segment_bytes <= 0) {
        return std::nullopt;
      }
    } else {
      return std::nullopt;
    }
  }
  return c;
}

bool applies(const Config& config, Collective c) {
  if (!config.parts.empty()) {
    const bool blocks = config.composition == Config::Composition::kReduceScatterAllgather;
    return c == Collective::kAllreduce && config.parts.size() == 2 &&
           applies(config.parts[0],
                   blocks ? Collective::kReduceScatterBlock : Collective::kReduce) &&
           applies(config.parts[1], blocks ? Collective::kAllgather : Collective::kBcast);
  }
  const auto can = [c](Algorithm a, bool top) {
    const std::vector<Algorithm> choices = level_choices(c, top);
    return std::find(choices.begin(), choices.end(), a) != choices.end();
  };
  if (config.flat != Algorithm::kNative) {
    const std::vector<Algorithm> choices = flat_choices(c);
    return std::find(choices.begin(), choices.end(), config.flat) != choices.end();
  }
  for (std::size_t j = 0; j < config.levels.size(); ++j) {
    if (!can(config.levels[j], j + 1 == config.levels.size())) return false;
  }
  return true;
}

std::optional<Config> textbook_flat(Collective c, std::int64_t bytes, std::int64_t count,
                                    int ranks) {
  Config flat;
  flat.hierarchical = true;
  std::int64_t pof2 = 1;
  while (pof2 * 2 <= ranks) pof2 *= 2;
  const bool halves = bytes > (2 << 10) && count >= pof2;  // Rabenseifner's condition
  switch (c) {
    case Collective::kBcast:
      flat.flat =
          bytes < (12 << 10) || ranks < 8 ? Algorithm::kBinomial : Algorithm::kScatterAllgather;
      return flat;
    case Collective::kReduce:
      flat.flat = halves ? Algorithm::kRabenseifner : Algorithm::kBinomial;
      return flat;
    case Collective::kAllreduce:
      flat.flat = halves ? Algorithm::kRabenseifner : Algorithm::kRecursiveDoubling;
      return flat;
    case Collective::kAllgather:
      flat.flat = pof2 == ranks ? Algorithm::kRecursiveDoubling : Algorithm::kRing;
      return flat;
    case Collective::kReduceScatterBlock:
      if (pof2 != ranks) return std::nullopt;
      flat.flat = Algorithm::kRecursiveHalving;
      return flat;
    case Collective::kBarrier:
      // Not MPICH's dissemination (what the MPI library's own barrier
      // does), but depth 2: the fastest where messages cost only latency.
      flat.flat = Algorithm::kLinear;
      return flat;
    default:
      return std::nullopt;
  }
}

std::vector<Config> candidates(Collective c, int depth, std::int64_t bytes, bool pipelines) {
  std::vector<Config> out{Config{}};
  if (depth == 0) return out;
  // Every combination of per-level algorithms (levels 0 .. depth).
  std::vector<std::vector<Algorithm>> combos{{}};
  for (int j = 0; j <= depth; ++j) {
    std::vector<std::vector<Algorithm>> next;
    for (const auto& prefix : combos) {
      for (Algorithm a : level_choices(c, j == depth)) {
        next.push_back(prefix);
        next.back().push_back(a);
      }
    }
    combos = std::move(next);
  }
  for (auto& levels : combos) {
    bool all_native = true;
    for (Algorithm a : levels) all_native = all_native && a == Algorithm::kNative;
    Config h;
    h.hierarchical = true;
    if (!all_native) h.levels = std::move(levels);
    out.push_back(std::move(h));
  }
  // Pipelines with at least two segments.
  if (pipelines && pipelined(c)) {
    for (std::int64_t s = 8 << 10; s <= (4 << 20); s *= 4) {
      if (2 * s > bytes) break;
      Config h;
      h.hierarchical = true;
      h.segment_bytes = s;
      out.push_back(h);
    }
  }
  return out;
}

}  // namespace rankshape::coll
