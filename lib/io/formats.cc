#include "lib/io/formats.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <limits>
#include <map>
#include <optional>
#include <set>

#include "lib/io/atomic_file.h"
#include "lib/io/input_error.h"
#include "lib/io/text_reader.h"

namespace rankshape {
namespace {

constexpr const char* kStructuredMagic = "rankshape-structured";
// Values reserved ahead of reading a matrix (8 MiB of doubles).
constexpr std::size_t kReserveLimit = std::size_t{1} << 20;

// Rethrows a model validation error as an error about the whole file.
template <class F>
auto validated(const std::string& path, F&& make) {
  try {
    return make();
  } catch (const std::invalid_argument& e) {
    throw InputError(path, 0, 0, e.what());
  }
}

// Reads n rows of n numbers, one row per line.
template <class T>
std::vector<T> read_square(TextReader& reader, int n, const std::string& what) {
  std::vector<T> m;
  // The header's count is not trusted for memory: grow with what is read.
  m.reserve(std::min<std::size_t>(static_cast<std::size_t>(n) * n, kReserveLimit));
  TextLine line;
  for (int row = 0; row < n; ++row) {
    if (!reader.next(line)) {
      throw InputError(
          reader.name(), reader.line_number(), 0,
          what + " ends after " + std::to_string(row) + " rows, expected " + std::to_string(n));
    }
    if (static_cast<int>(line.tokens.size()) != n) {
      reader.fail(line, nullptr,
                  what + " row " + std::to_string(row) + " has " +
                      std::to_string(line.tokens.size()) + " values, expected " +
                      std::to_string(n));
    }
    for (const Token& t : line.tokens) {
      const double v = reader.to_double(line, t);
      if (v < 0) reader.fail(line, &t, what + " entry " + t.text + " is negative");
      if (v > kMaxCost) reader.fail(line, &t, what + " entry " + cost_too_large_message(v));
      if (v > static_cast<double>(std::numeric_limits<T>::max())) {
        reader.fail(line, &t, what + " entry " + t.text + " is too large");
      }
      m.push_back(static_cast<T>(v));
    }
  }
  return m;
}

template <class T>
void write_square(std::ostream& out, const std::vector<T>& m, int n) {
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j) {
      if (j) out << ' ';
      out << format_number(m[static_cast<std::size_t>(i) * n + j]);
    }
    out << '\n';
  }
}

std::string first_token(const std::string& path) {
  std::ifstream in = open_input(path);
  TextReader reader(in, path);
  TextLine line;
  if (!reader.next(line)) throw InputError(path, 0, 0, "file is empty: no costs in it");
  return line.tokens[0].text;
}

}  // namespace

std::string format_number(double value) {
  char buf[64];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, value);
  return ec == std::errc() ? std::string(buf, end) : std::to_string(value);
}

DenseCosts read_dense_costs(const std::string& path, Warnings* warnings) {
  std::ifstream in = open_input(path);
  TextReader reader(in, path);
  TextLine line;
  std::vector<double> m;
  int p = 0;
  int rows = 0;
  while (reader.next(line)) {
    const int n = static_cast<int>(line.tokens.size());
    if (rows == 0) {
      p = n;
      if (p > DenseCosts::kMaxRanks) {
        reader.fail(line, nullptr,
                    "row of " + std::to_string(p) + " values: a dense matrix is limited to " +
                        std::to_string(DenseCosts::kMaxRanks) +
                        " ranks; use the structured form (rankshape-structured) instead");
      }
      // Every value takes at least two bytes of text: reserve only what the
      // file can hold, so a long first line cannot claim gigabytes.
      const std::size_t readable = std::filesystem::file_size(path) / 2;
      m.reserve(std::min(static_cast<std::size_t>(p) * p, readable));
    } else if (n != p) {
      reader.fail(line, nullptr,
                  "row " + std::to_string(rows) + " has " + std::to_string(n) +
                      " values, but the first row has " + std::to_string(p));
    }
    if (rows == p) {
      reader.fail(
          line, nullptr,
          "more rows than columns (" + std::to_string(p) + "): a cost matrix must be square");
    }
    for (const Token& t : line.tokens) {
      const double v = reader.to_double(line, t);
      if (v < 0) reader.fail(line, &t, "cost " + t.text + " is negative");
      if (v > kMaxCost) reader.fail(line, &t, "cost " + cost_too_large_message(v));
      m.push_back(v);
    }
    ++rows;
  }
  if (rows == 0) throw InputError(path, 0, 0, "file is empty: expected a p x p cost matrix");
  if (rows != p) {
    throw InputError(path, reader.line_number(), 0,
                     "matrix has " + std::to_string(rows) + " rows but " + std::to_string(p) +
                         " columns: a cost matrix must be square");
  }
  // Repair what measurement noise produces, and say so.
  double worst_asymmetry = 0;
  int wa = 0, wb = 0, nonzero_diagonal = 0;
  const auto up = static_cast<std::size_t>(p);
  for (std::size_t a = 0; a < up; ++a) {
    if (m[a * up + a] != 0) ++nonzero_diagonal;
    m[a * up + a] = 0;
    for (std::size_t b = a + 1; b < up; ++b) {
      const double x = m[a * up + b], y = m[b * up + a];
      if (x != y) {
        const double diff = std::abs(x - y);
        if (diff > worst_asymmetry) {
          worst_asymmetry = diff;
          wa = static_cast<int>(a);
          wb = static_cast<int>(b);
        }
        m[a * up + b] = m[b * up + a] = 0.5 * x + 0.5 * y;
      }
    }
  }
  if (warnings && worst_asymmetry > 0) {
    warnings->push_back(path + ": matrix is not symmetric (largest difference " +
                        format_number(worst_asymmetry) + " between ranks " + std::to_string(wa) +
                        " and " + std::to_string(wb) + "); using the mean of D(a,b) and D(b,a)");
  }
  if (warnings && nonzero_diagonal > 0) {
    warnings->push_back(path + ": " + std::to_string(nonzero_diagonal) +
                        " non-zero diagonal entries set to 0 (a rank costs nothing to itself)");
  }
  return validated(path, [&] { return DenseCosts(p, std::move(m)); });
}

StructuredCosts read_structured_costs(const std::string& path) {
  std::ifstream in = open_input(path);
  TextReader reader(in, path);
  TextLine line;
  if (!reader.next(line) || line.tokens[0].text != kStructuredMagic || line.tokens.size() != 2 ||
      line.tokens[1].text != "1") {
    throw InputError(path, line.number, 1,
                     std::string("expected the header '") + kStructuredMagic + " 1'");
  }
  StructuredSpec spec;
  std::optional<int> cores, nodes, racks, ranks;
  std::set<std::string> seen;
  constexpr std::int64_t kMaxCount = INT32_MAX;
  const auto need = [&](const std::optional<int>& v, const char* name, const char* section) {
    if (!v) {
      reader.fail(line, &line.tokens[0],
                  std::string("'") + section + "' needs '" + name + "' to be given before it");
    }
    return *v;
  };
  while (reader.next(line)) {
    const Token& key = line.tokens[0];
    if (!seen.insert(key.text).second) reader.fail(line, &key, "'" + key.text + "' given twice");
    // Section keywords stand alone on their line; their data follows.
    const auto no_argument = [&] {
      if (line.tokens.size() != 1) {
        reader.fail(line, &line.tokens[1],
                    "'" + key.text + "' takes no value on its line; its rows follow");
      }
    };
    const auto count_arg = [&](std::int64_t min) {
      if (line.tokens.size() != 2) reader.fail(line, &key, "'" + key.text + "' takes one number");
      return static_cast<int>(reader.to_int(line, line.tokens[1], min, kMaxCount));
    };
    if (key.text == "cores-per-node") {
      cores = count_arg(1);
    } else if (key.text == "nodes") {
      nodes = count_arg(1);
    } else if (key.text == "racks") {
      racks = count_arg(1);
    } else if (key.text == "ranks") {
      ranks = count_arg(1);
      if (*ranks > kMaxStructuredRanks) {
        reader.fail(line, &line.tokens[1],
                    "at most " + std::to_string(kMaxStructuredRanks) +
                        " ranks are supported in a structured file");
      }
    } else if (key.text == "core-costs") {
      no_argument();
      spec.core_costs =
          read_square<double>(reader, need(cores, "cores-per-node", "core-costs"), "core-costs");
    } else if (key.text == "node-costs") {
      no_argument();
      spec.node_costs =
          read_square<float>(reader, need(nodes, "nodes", "node-costs"), "node-costs");
    } else if (key.text == "rack-costs") {
      no_argument();
      // Without a 'racks' line the machine is one rack.
      spec.rack_costs = read_square<double>(reader, racks.value_or(1), "rack-costs");
    } else if (key.text == "node-racks") {
      no_argument();
      const int n = need(nodes, "nodes", "node-racks");
      const int r = racks.value_or(1);
      TextLine values;
      while (static_cast<int>(spec.node_rack.size()) < n) {
        if (!reader.next(values)) {
          throw InputError(path, reader.line_number(), 0,
                           "node-racks ends after " + std::to_string(spec.node_rack.size()) +
                               " nodes, expected " + std::to_string(n));
        }
        for (const Token& t : values.tokens) {
          if (static_cast<int>(spec.node_rack.size()) == n) {
            reader.fail(values, &t, "node-racks has more than " + std::to_string(n) + " values");
          }
          spec.node_rack.push_back(static_cast<std::int32_t>(reader.to_int(values, t, 0, r - 1)));
        }
      }
    } else if (key.text == "node-fabric" || key.text == "rack-fabric") {
      if (line.tokens.size() != 2) reader.fail(line, &key, "'" + key.text + "' takes one cost");
      const Token& t = line.tokens[1];
      const double v = reader.to_double(line, t);
      if (v < 0) reader.fail(line, &t, key.text + " " + t.text + " is negative");
      if (v > kMaxFabric) {
        reader.fail(line, &t,
                    key.text + " " + t.text + " is above " + format_number(kMaxFabric) +
                        ": a fraction of one message's cost alone");
      }
      (key.text == "node-fabric" ? spec.node_fabric : spec.rack_fabric) = v;
    } else if (key.text == "rank-locations") {
      const int c = need(cores, "cores-per-node", "rank-locations");
      const int n = need(nodes, "nodes", "rank-locations");
      const int p = need(ranks, "ranks", "rank-locations");
      if (line.tokens.size() != 2) {
        reader.fail(line, &key, "'rank-locations' takes 'block' or 'list'");
      }
      const std::string& mode = line.tokens[1].text;
      if (mode == "block") {
        if (static_cast<std::int64_t>(n) * c < p) {
          reader.fail(line, &line.tokens[1],
                      std::to_string(p) + " ranks do not fit on " + std::to_string(n) +
                          " nodes of " + std::to_string(c) + " cores");
        }
        for (int r = 0; r < p; ++r) spec.ranks.push_back({r / c, r % c});
      } else if (mode == "list") {
        TextLine entry;
        for (int r = 0; r < p; ++r) {
          if (!reader.next(entry)) {
            throw InputError(path, reader.line_number(), 0,
                             "rank-locations ends after " + std::to_string(r) +
                                 " ranks, expected " + std::to_string(p));
          }
          if (entry.tokens.size() != 2) {
            reader.fail(entry, nullptr, "expected 'node core' for rank " + std::to_string(r));
          }
          const auto node =
              static_cast<std::int32_t>(reader.to_int(entry, entry.tokens[0], 0, n - 1));
          const auto core =
              static_cast<std::int32_t>(reader.to_int(entry, entry.tokens[1], 0, c - 1));
          spec.ranks.push_back({node, core});
        }
      } else {
        reader.fail(line, &line.tokens[1], "expected 'block' or 'list', got '" + mode + "'");
      }
    } else {
      reader.fail(line, &key,
                  "unknown keyword '" + key.text +
                      "' (expected cores-per-node, nodes, racks, ranks, core-costs, node-costs, "
                      "rack-costs, node-racks, node-fabric, rack-fabric or rank-locations)");
    }
  }
  for (const char* required :
       {"cores-per-node", "nodes", "ranks", "core-costs", "rank-locations"}) {
    if (!seen.count(required)) {
      throw InputError(path, 0, 0, std::string("missing '") + required + "'");
    }
  }
  if (!seen.count("node-costs") && !seen.count("rack-costs")) {
    throw InputError(path, 0, 0, "missing 'node-costs' or 'rack-costs': no inter-node costs");
  }
  spec.cores_per_node = *cores;
  spec.nodes = *nodes;
  spec.racks = racks.value_or(1);
  return validated(path, [&] { return StructuredCosts(std::move(spec)); });
}

std::unique_ptr<Costs> read_costs(const std::string& path, Warnings* warnings) {
  if (first_token(path) == kStructuredMagic) {
    return std::make_unique<StructuredCosts>(read_structured_costs(path));
  }
  return std::make_unique<DenseCosts>(read_dense_costs(path, warnings));
}

void write_dense_costs(const std::string& path, const Costs& costs) {
  const int p = costs.size();
  if (p > DenseCosts::kMaxRanks) {
    throw std::invalid_argument("refusing to write a dense matrix of " + std::to_string(p) +
                                " ranks (limit " + std::to_string(DenseCosts::kMaxRanks) +
                                "); write the structured form instead");
  }
  write_file_atomically(path, [&](std::ostream& out) {
    out << "# rankshape dense costs: " << p << " x " << p << ", row a column b = D(a, b)\n";
    for (int a = 0; a < p; ++a) {
      for (int b = 0; b < p; ++b) {
        if (b) out << ' ';
        out << format_number(costs.cost(OldRank(a), OldRank(b)));
      }
      out << '\n';
    }
  });
}

void write_structured_costs(const std::string& path, const StructuredCosts& costs) {
  const StructuredSpec& s = costs.spec();
  write_file_atomically(path, [&](std::ostream& out) {
    out << kStructuredMagic << " 1\n";
    out << "cores-per-node " << s.cores_per_node << "\nnodes " << s.nodes << "\nracks " << s.racks
        << "\nranks " << s.ranks.size() << "\n";
    out << "core-costs\n";
    write_square(out, s.core_costs, s.cores_per_node);
    if (!s.node_rack.empty()) {
      out << "node-racks\n";
      for (std::size_t n = 0; n < s.node_rack.size(); ++n) {
        out << s.node_rack[n] << ((n + 1) % 32 == 0 || n + 1 == s.node_rack.size() ? '\n' : ' ');
      }
    }
    if (!s.rack_costs.empty()) {
      out << "rack-costs\n";
      write_square(out, s.rack_costs, s.racks);
    }
    if (!s.node_costs.empty()) {
      out << "node-costs\n";
      write_square(out, s.node_costs, s.nodes);
    }
    if (s.node_fabric > 0) out << "node-fabric " << format_number(s.node_fabric) << "\n";
    if (s.rack_fabric > 0) out << "rack-fabric " << format_number(s.rack_fabric) << "\n";
    bool block = true;
    for (std::size_t r = 0; r < s.ranks.size() && block; ++r) {
      const auto c = static_cast<std::size_t>(s.cores_per_node);
      block =
          s.ranks[r].node == static_cast<int>(r / c) && s.ranks[r].core == static_cast<int>(r % c);
    }
    if (block) {
      out << "rank-locations block\n";
    } else {
      out << "rank-locations list\n";
      for (const RankLocation& l : s.ranks) out << l.node << ' ' << l.core << '\n';
    }
  });
}

Labelling read_labelling(const std::string& path, int expected_size) {
  std::ifstream in = open_input(path);
  TextReader reader(in, path);
  TextLine line;
  std::vector<OldRank> perm;
  std::vector<std::pair<int, int>> where;  // line and column of each entry
  while (reader.next(line)) {
    if (line.tokens.size() != 1) {
      reader.fail(line, &line.tokens[1],
                  "expected one old rank per line (line i = old rank at new rank i)");
    }
    perm.emplace_back(
        static_cast<std::int32_t>(reader.to_int(line, line.tokens[0], 0, INT32_MAX - 1)));
    where.emplace_back(line.number, line.tokens[0].column);
  }
  if (perm.empty()) throw InputError(path, 0, 0, "file is empty: expected one old rank per line");
  const int p = static_cast<int>(perm.size());
  if (expected_size > 0 && p != expected_size) {
    throw InputError(
        path, 0, 0,
        "labelling has " + std::to_string(p) + " ranks, expected " + std::to_string(expected_size));
  }
  std::vector<int> first_line(p, 0);
  for (int i = 0; i < p; ++i) {
    const int o = perm[i].value();
    if (o >= p) {
      throw InputError(path, where[i].first, where[i].second,
                       "old rank " + std::to_string(o) + " is outside [0, " + std::to_string(p) +
                           ") for a labelling of " + std::to_string(p) + " ranks");
    }
    if (first_line[o]) {
      throw InputError(path, where[i].first, where[i].second,
                       "old rank " + std::to_string(o) + " already placed on line " +
                           std::to_string(first_line[o]) + ": a labelling must be a permutation");
    }
    first_line[o] = where[i].first;
  }
  return Labelling(std::move(perm));
}

void write_labelling(const std::string& path, const Labelling& labelling) {
  write_file_atomically(path, [&](std::ostream& out) {
    out << "# rankshape labelling: line i = old rank placed at new rank i\n";
    for (const OldRank o : labelling.old_ranks()) out << o.value() << '\n';
  });
}

Placement read_placement(const std::string& path, int expected_size) {
  std::ifstream in = open_input(path);
  TextReader reader(in, path);
  TextLine line;
  std::map<int, std::pair<HostCore, int>> by_rank;  // rank -> entry, line
  while (reader.next(line)) {
    if (line.tokens.size() != 3) {
      reader.fail(
          line, nullptr,
          "expected 'rank host core', got " + std::to_string(line.tokens.size()) + " fields");
    }
    const int rank = static_cast<int>(reader.to_int(line, line.tokens[0], 0, INT32_MAX - 1));
    const int core = static_cast<int>(reader.to_int(line, line.tokens[2], 0, INT32_MAX));
    const auto [it, inserted] =
        by_rank.emplace(rank, std::make_pair(HostCore{line.tokens[1].text, core}, line.number));
    if (!inserted) {
      reader.fail(line, &line.tokens[0],
                  "rank " + std::to_string(rank) + " already placed on line " +
                      std::to_string(it->second.second));
    }
  }
  if (by_rank.empty())
    throw InputError(path, 0, 0, "file is empty: expected 'rank host core' lines");
  const int p = static_cast<int>(by_rank.size());
  if (expected_size > 0 && p != expected_size) {
    throw InputError(
        path, 0, 0,
        "placement has " + std::to_string(p) + " ranks, expected " + std::to_string(expected_size));
  }
  std::vector<HostCore> entries;
  int expected = 0;
  for (auto& [rank, entry] : by_rank) {
    if (rank != expected) {
      throw InputError(path, 0, 0,
                       "rank " + std::to_string(expected) + " is missing (ranks must be 0.." +
                           std::to_string(p - 1) + ")");
    }
    entries.push_back(std::move(entry.first));
    ++expected;
  }
  return validated(path, [&] { return Placement(std::move(entries)); });
}

void write_placement(const std::string& path, const Placement& placement) {
  write_file_atomically(path, [&](std::ostream& out) {
    out << "# rankshape placement: rank host core\n";
    for (int r = 0; r < placement.size(); ++r) {
      const HostCore& e = placement.of(OldRank(r));
      out << r << ' ' << e.host << ' ' << e.core << '\n';
    }
  });
}

}  // namespace rankshape
