#include "lib/io/traffic.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "lib/io/atomic_file.h"
#include "lib/io/input_error.h"
#include "lib/io/text_reader.h"

namespace rankshape {
namespace {

// Largest bytes or messages count of one pair (both directions together):
// 2^53, the largest whole number a double holds exactly.
constexpr std::int64_t kMaxCount = std::int64_t{1} << 53;
constexpr std::int64_t kMaxIndex = kMaxTrafficRanks - 1;

enum class Format { kRankshape, kMonitoring, kMatrix };

std::string format_name(Format f) {
  switch (f) {
    case Format::kRankshape:
      return "rankshape's traffic format";
    case Format::kMonitoring:
      return "Open MPI monitoring output";
    case Format::kMatrix:
      return "an ompi_monitoring_prof.so matrix";
  }
  return "?";
}

bool ends_with(std::string_view s, std::string_view tail) {
  return s.size() >= tail.size() && s.substr(s.size() - tail.size()) == tail;
}

bool is_monitoring_kind(const std::string& k) {
  return k == "E" || k == "I" || k == "S" || k == "R" || k == "C" || k == "D" || k == "O2A" ||
         k == "A2O" || k == "A2A";
}

// Sums over both directions, keyed by the pair (lower rank first).
class Sums {
 public:
  // Adds one directed count at a line of reader; fails there when a pair's
  // total passes kMaxCount. Self traffic never crosses a link: skipped.
  void add(const TextReader& reader, const TextLine& line, int from, int to, std::int64_t bytes,
           std::int64_t messages) {
    highest_ = std::max({highest_, from, to});
    if (from == to || (bytes == 0 && messages == 0)) return;
    const auto key = (static_cast<std::uint64_t>(std::min(from, to)) << 32) |
                     static_cast<std::uint64_t>(std::max(from, to));
    auto& [b, m] = sums_[key];  // each <= kMaxCount before: no overflow
    b += bytes;
    m += messages;
    if (b > kMaxCount || m > kMaxCount) {
      reader.fail(line, nullptr,
                  "the traffic between ranks " + std::to_string(std::min(from, to)) + " and " +
                      std::to_string(std::max(from, to)) + " passes 2^53 bytes or messages");
    }
  }
  int highest() const { return highest_; }

  Traffic result(int ranks) const {
    Traffic t;
    t.ranks = ranks;
    t.pairs.reserve(sums_.size());
    for (const auto& [key, v] : sums_) {
      t.pairs.push_back({static_cast<int>(key >> 32), static_cast<int>(key & 0xffffffffu),
                         static_cast<double>(v.first), static_cast<double>(v.second)});
    }
    std::sort(t.pairs.begin(), t.pairs.end(), [](const TrafficPair& x, const TrafficPair& y) {
      return std::make_pair(x.a, x.b) < std::make_pair(y.a, y.b);
    });
    return t;
  }

 private:
  std::unordered_map<std::uint64_t, std::pair<std::int64_t, std::int64_t>> sums_;
  int highest_ = -1;
};

std::int64_t count(const TextReader& reader, const TextLine& line, const Token& token) {
  return reader.to_int(line, token, 0, kMaxCount);
}

int rank(const TextReader& reader, const TextLine& line, const Token& token, int ranks) {
  const std::int64_t r = reader.to_int(line, token, 0, kMaxIndex);
  if (ranks > 0 && r >= ranks) {
    reader.fail(line, &token,
                "rank " + token.text + " is outside the job's " + std::to_string(ranks) + " ranks");
  }
  return static_cast<int>(r);
}

void expect_word(const TextReader& reader, const TextLine& line, std::size_t i,
                 std::string_view word) {
  if (line.tokens[i].text != word) {
    reader.fail(line, &line.tokens[i],
                "expected '" + std::string(word) + "', got '" + line.tokens[i].text + "'");
  }
}

// "rankshape-traffic 1", "ranks P", then "from to bytes messages" lines;
// the first line was read into line. Returns P.
int read_rankshape(TextReader& reader, TextLine& line, int expected, Sums& sums) {
  if (line.tokens.size() != 2 || line.tokens[1].text != "1") {
    reader.fail(line, nullptr, "expected 'rankshape-traffic 1' (version 1) on the first line");
  }
  if (!reader.next(line) || line.tokens.size() != 2 || line.tokens[0].text != "ranks") {
    reader.fail(line, nullptr, "expected 'ranks P' on the line after 'rankshape-traffic 1'");
  }
  const int ranks = static_cast<int>(reader.to_int(line, line.tokens[1], 1, kMaxTrafficRanks));
  if (expected > 0 && ranks != expected) {
    reader.fail(line, &line.tokens[1],
                "the file is for " + std::to_string(ranks) + " ranks, the job has " +
                    std::to_string(expected));
  }
  std::unordered_map<std::uint64_t, int> seen;  // directed pair -> line
  while (reader.next(line)) {
    if (line.tokens.size() != 4) {
      reader.fail(line, nullptr,
                  "expected 'from to bytes messages', got " + std::to_string(line.tokens.size()) +
                      " fields");
    }
    const int from = rank(reader, line, line.tokens[0], ranks);
    const int to = rank(reader, line, line.tokens[1], ranks);
    if (from == to) reader.fail(line, &line.tokens[1], "a rank's traffic with itself");
    const auto key = (static_cast<std::uint64_t>(from) << 32) | static_cast<std::uint64_t>(to);
    const auto [it, inserted] = seen.emplace(key, line.number);
    if (!inserted) {
      reader.fail(line, nullptr,
                  "traffic from " + std::to_string(from) + " to " + std::to_string(to) +
                      " again (first on line " + std::to_string(it->second) + ")");
    }
    sums.add(reader, line, from, to, count(reader, line, line.tokens[2]),
             count(reader, line, line.tokens[3]));
  }
  return ranks;
}

// Open MPI's monitoring lines; the first was read into line. Returns the
// size of MPI_COMM_WORLD if a D line gives it, else 0.
int read_monitoring(TextReader& reader, TextLine& line, int expected, Sums& sums) {
  int world = 0;
  do {
    const std::string& k = line.tokens[0].text;
    if (!is_monitoring_kind(k)) {
      reader.fail(line, &line.tokens[0],
                  "unknown line kind '" + k +
                      "' in Open MPI monitoring output (expected E, I, S, R, C, D, O2A, A2O or "
                      "A2A)");
    }
    if (k == "D") {  // D <communicator> procs: r0,r1,...
      if (line.tokens.size() < 3) reader.fail(line, nullptr, "expected 'D name procs: ranks'");
      expect_word(reader, line, 2, "procs:");
      for (std::size_t i = 3; i < line.tokens.size(); ++i) {
        rank(reader, line, line.tokens[i], expected);
      }
      if (line.tokens[1].text == "MPI_COMM_WORLD") {
        world = static_cast<int>(line.tokens.size() - 3);
        if (expected > 0 && world != expected) {
          reader.fail(line, nullptr,
                      "MPI_COMM_WORLD has " + std::to_string(world) + " ranks here, the job " +
                          std::to_string(expected));
        }
      }
      continue;
    }
    // O2A/A2O/A2A: kind rank N bytes M msgs sent; the others: kind from to
    // N bytes M msgs sent [size histogram, on E and I lines].
    const std::size_t first = (k == "O2A" || k == "A2O" || k == "A2A") ? 2 : 3;
    const bool histogram = k == "E" || k == "I";
    if (line.tokens.size() < first + 5 || (!histogram && line.tokens.size() != first + 5)) {
      reader.fail(line, nullptr,
                  "expected '" + k + (first == 2 ? " rank" : " from to") + " N bytes M msgs sent'" +
                      (histogram ? " and a size histogram" : ""));
    }
    expect_word(reader, line, first + 1, "bytes");
    expect_word(reader, line, first + 3, "msgs");
    expect_word(reader, line, first + 4, "sent");
    for (std::size_t i = first + 5; i < line.tokens.size(); ++i) {
      count(reader, line, line.tokens[i]);
    }
    const int from = rank(reader, line, line.tokens[1], expected);
    const std::int64_t bytes = count(reader, line, line.tokens[first]);
    const std::int64_t messages = count(reader, line, line.tokens[first + 2]);
    if (first == 2) continue;
    const int to = rank(reader, line, line.tokens[2], expected);
    if (k == "E" || k == "I" || k == "S") sums.add(reader, line, from, to, bytes, messages);
  } while (reader.next(line));
  return world;
}

// A matrix of counts, row = sender; the first line was read into line.
// Returns its order.
int read_matrix(TextReader& reader, TextLine& line, int expected, bool bytes, Sums& sums) {
  const std::size_t n = line.tokens.size();
  if (expected > 0 && n != static_cast<std::size_t>(expected)) {
    reader.fail(line, nullptr,
                "the matrix has " + std::to_string(n) + " columns, the job " +
                    std::to_string(expected) + " ranks");
  }
  if (n > static_cast<std::size_t>(kMaxTrafficRanks)) {
    reader.fail(line, nullptr, "more than " + std::to_string(kMaxTrafficRanks) + " columns");
  }
  int row = 0;
  do {
    if (line.tokens.size() != n) {
      reader.fail(line, nullptr,
                  "expected " + std::to_string(n) + " counts like the first row, got " +
                      std::to_string(line.tokens.size()));
    }
    if (static_cast<std::size_t>(row) == n) {
      reader.fail(line, nullptr, "more rows than the " + std::to_string(n) + " columns");
    }
    for (std::size_t j = 0; j < n; ++j) {
      const std::int64_t c = count(reader, line, line.tokens[j]);
      sums.add(reader, line, row, static_cast<int>(j), bytes ? c : 0, bytes ? 0 : c);
    }
    ++row;
  } while (reader.next(line));
  if (static_cast<std::size_t>(row) != n) {
    throw InputError(reader.name(), 0, 0,
                     "the matrix has " + std::to_string(row) + " rows and " + std::to_string(n) +
                         " columns: expected a square matrix");
  }
  return static_cast<int>(n);
}

}  // namespace

Traffic read_traffic(const std::vector<std::string>& paths, int expected_ranks) {
  if (paths.empty()) throw InputError("", 0, 0, "no traffic file given");
  Sums sums;
  std::optional<Format> format;
  int ranks = expected_ranks;  // 0 until a file says
  std::string ranks_from;      // the file that said
  bool matrix_bytes = false, matrix_messages = false;
  for (const std::string& path : paths) {
    std::ifstream in = open_input(path);
    TextReader reader(in, path);
    TextLine line;
    if (!reader.next(line)) throw InputError(path, 0, 0, "file is empty: no traffic in it");
    const std::string& first = line.tokens[0].text;
    Format f;
    if (first == "rankshape-traffic") {
      f = Format::kRankshape;
    } else if (is_monitoring_kind(first)) {
      f = Format::kMonitoring;
    } else if (first.find_first_not_of("0123456789") == std::string::npos) {
      f = Format::kMatrix;
    } else {
      reader.fail(line, &line.tokens[0],
                  "not a traffic file: expected 'rankshape-traffic 1', Open MPI monitoring lines "
                  "(E, I, ...) or a matrix of counts");
    }
    if (format && *format != f) {
      throw InputError(path, 0, 0,
                       "is " + format_name(f) + ", the files before it " + format_name(*format) +
                           ": give files of one format");
    }
    format = f;
    int found = 0;  // this file's number of ranks, 0: not stated
    if (f == Format::kRankshape) {
      found = read_rankshape(reader, line, ranks, sums);
    } else if (f == Format::kMonitoring) {
      found = read_monitoring(reader, line, ranks, sums);
    } else {
      bool bytes = false;
      if (ends_with(path, "_size.mat")) {
        bytes = true;
      } else if (!ends_with(path, "_msg.mat")) {
        throw InputError(path, 0, 0,
                         "cannot tell whether this matrix holds bytes or messages: "
                         "ompi_monitoring_prof.so names them *_size.mat and *_msg.mat "
                         "(*_avg.mat, average sizes, is not traffic)");
      }
      bool& given = bytes ? matrix_bytes : matrix_messages;
      if (given) {
        throw InputError(path, 0, 0,
                         std::string("a second matrix of ") + (bytes ? "bytes" : "messages") +
                             ": give at most one *_size.mat and one *_msg.mat");
      }
      given = true;
      found = read_matrix(reader, line, ranks, bytes, sums);
    }
    if (found > 0 && ranks > 0 && found != ranks) {
      throw InputError(path, 0, 0,
                       "is for " + std::to_string(found) + " ranks, " +
                           (ranks_from.empty() ? "the job has " : ranks_from + " for ") +
                           std::to_string(ranks));
    }
    if (found > 0 && ranks == 0) {
      ranks = found;
      ranks_from = path;
    }
  }
  if (ranks == 0) ranks = sums.highest() + 1;  // monitoring output without a D line
  if (sums.highest() >= ranks) {
    throw InputError(ranks_from.empty() ? paths.front() : ranks_from, 0, 0,
                     "traffic names rank " + std::to_string(sums.highest()) + " of a job of " +
                         std::to_string(ranks) + " ranks");
  }
  if (ranks < 1) throw InputError(paths.front(), 0, 0, "no ranks in the traffic");
  return sums.result(ranks);
}

void write_traffic(const std::string& path, const Traffic& traffic) {
  write_file_atomically(path, [&](std::ostream& out) {
    out << "rankshape-traffic 1\n"
        << "ranks " << traffic.ranks << '\n'
        << "# from to bytes messages (both directions together)\n";
    for (const TrafficPair& p : traffic.pairs) {
      out << p.a << ' ' << p.b << ' ' << static_cast<std::int64_t>(p.bytes) << ' '
          << static_cast<std::int64_t>(p.messages) << '\n';
    }
  });
}

void write_directed_traffic(const std::string& path, int ranks,
                            const std::vector<DirectedTraffic>& lines) {
  if (ranks < 1 || ranks > kMaxTrafficRanks) {
    throw std::invalid_argument("traffic of " + std::to_string(ranks) + " ranks");
  }
  std::unordered_map<std::uint64_t, int> seen;
  for (const DirectedTraffic& d : lines) {
    if (d.from < 0 || d.from >= ranks || d.to < 0 || d.to >= ranks || d.from == d.to ||
        d.bytes < 0 || d.bytes > kMaxCount || d.messages < 0 || d.messages > kMaxCount) {
      throw std::invalid_argument("traffic from " + std::to_string(d.from) + " to " +
                                  std::to_string(d.to) + " of " + std::to_string(d.bytes) +
                                  " bytes in " + std::to_string(d.messages) +
                                  " messages, in a job of " + std::to_string(ranks));
    }
    const auto key = (static_cast<std::uint64_t>(d.from) << 32) | static_cast<std::uint64_t>(d.to);
    if (!seen.emplace(key, 0).second) {
      throw std::invalid_argument("traffic from " + std::to_string(d.from) + " to " +
                                  std::to_string(d.to) + " twice");
    }
  }
  write_file_atomically(path, [&](std::ostream& out) {
    out << "rankshape-traffic 1\n"
        << "ranks " << ranks << '\n'
        << "# from to bytes messages\n";
    for (const DirectedTraffic& d : lines) {
      out << d.from << ' ' << d.to << ' ' << d.bytes << ' ' << d.messages << '\n';
    }
  });
}

TrafficGraph traffic_graph(const Traffic& traffic, double bytes_per_message) {
  if (!(bytes_per_message >= 0) || !std::isfinite(bytes_per_message)) {
    throw std::invalid_argument("bytes per message must be finite and >= 0");
  }
  std::vector<WeightedEdge> edges;
  edges.reserve(traffic.pairs.size());
  for (const TrafficPair& pair : traffic.pairs) {
    edges.push_back({pair.a, pair.b, pair.bytes + bytes_per_message * pair.messages});
  }
  return TrafficGraph(traffic.ranks, std::move(edges));
}

}  // namespace rankshape
