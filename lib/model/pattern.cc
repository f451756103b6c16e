#include "lib/model/pattern.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <stdexcept>

namespace rankshape {
namespace {

constexpr const char* kSyntax =
    "expected fibres, graph or stencil[:OPTION,...] with options periodic, periodic=1x0..., "
    "points=N, "
    "diagonals, weights=WxW..., diagonal-weight=W";

[[noreturn]] void bad(std::string_view text, const std::string& why) {
  throw std::invalid_argument("pattern '" + std::string(text) + "': " + why + " (" + kSyntax + ")");
}

double parse_number(std::string_view text, std::string_view part) {
  double value = 0;
  const char* end = part.data() + part.size();
  const auto [ptr, ec] = std::from_chars(part.data(), end, value);
  if (part.empty() || ec != std::errc() || ptr != end) {
    bad(text, "'" + std::string(part) + "' is not a number");
  }
  return value;
}

// "1x0x1" -> its parts (also "X" between them).
std::vector<std::string_view> split_list(std::string_view text, std::string_view list) {
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  for (std::size_t i = 0; i <= list.size(); ++i) {
    if (i == list.size() || list[i] == 'x' || list[i] == 'X') {
      parts.push_back(list.substr(start, i - start));
      start = i + 1;
    }
  }
  for (std::string_view part : parts) {
    if (part.empty()) bad(text, "empty entry in list '" + std::string(list) + "'");
  }
  return parts;
}

void check_weight(double w, const std::string& what) {
  if (!std::isfinite(w) || !(w > 0)) {
    throw std::invalid_argument(what + " must be a finite number > 0");
  }
}

// Shortest text that reads back to the same double.
std::string shortest(double v) {
  char buf[64];
  const auto [ptr, ec] = std::to_chars(buf, buf + sizeof buf, v);
  return ec == std::errc() ? std::string(buf, ptr) : std::to_string(v);
}

int power(int base, int exponent) {
  int r = 1;
  for (int i = 0; i < exponent; ++i) r *= base;
  return r;
}

}  // namespace

Pattern Pattern::parse(std::string_view text) {
  Pattern p;
  if (text == "fibres") return p;
  if (text == "graph") {
    p.kind = PatternKind::kGraph;
    return p;
  }
  constexpr std::string_view kStencil = "stencil";
  if (text.substr(0, kStencil.size()) != kStencil) bad(text, "unknown pattern");
  p.kind = PatternKind::kStencil;
  std::string_view rest = text.substr(kStencil.size());
  if (rest.empty()) return p;
  if (rest[0] != ':') bad(text, "unknown pattern");
  rest.remove_prefix(1);
  std::map<std::string, int> seen;
  bool weight_given = false;
  std::size_t start = 0;
  for (std::size_t i = 0; i <= rest.size(); ++i) {
    if (i < rest.size() && rest[i] != ',') continue;
    const std::string_view option = rest.substr(start, i - start);
    start = i + 1;
    if (option.empty()) bad(text, "empty option");
    const std::size_t eq = option.find('=');
    const std::string key(option.substr(0, eq));
    const std::string_view value =
        eq == std::string_view::npos ? std::string_view() : option.substr(eq + 1);
    const bool has_value = eq != std::string_view::npos;
    const std::string family = key == "diagonals" ? "points" : key;
    if (++seen[family] > 1) {
      bad(text, key == "diagonals" || key == "points" ? "give points or diagonals once"
                                                      : "option '" + key + "' given twice");
    }
    if (key == "periodic") {
      if (!has_value) {
        p.stencil.all_periodic = true;
        continue;
      }
      for (std::string_view part : split_list(text, value)) {
        if (part != "0" && part != "1")
          bad(text, "periods are 0 or 1, got '" + std::string(part) + "'");
        p.stencil.periods.push_back(part == "1");
      }
    } else if (key == "points") {
      if (!has_value) bad(text, "points needs a value, e.g. points=9");
      const double n = parse_number(text, value);
      if (n != std::floor(n) || n < 3 || n > 1e6) bad(text, "points must be a whole number >= 3");
      p.stencil.points = static_cast<int>(n);
    } else if (key == "diagonals") {
      if (has_value) bad(text, "diagonals takes no value");
      p.stencil.diagonals = true;
    } else if (key == "weights") {
      if (!has_value) bad(text, "weights needs a value, e.g. weights=2x1");
      for (std::string_view part : split_list(text, value)) {
        const double w = parse_number(text, part);
        try {
          check_weight(w, "a weight");
        } catch (const std::invalid_argument& e) {
          bad(text, e.what());
        }
        p.stencil.weights.push_back(w);
      }
    } else if (key == "diagonal-weight") {
      if (!has_value) bad(text, "diagonal-weight needs a value");
      const double w = parse_number(text, value);
      try {
        check_weight(w, "diagonal-weight");
      } catch (const std::invalid_argument& e) {
        bad(text, e.what());
      }
      p.stencil.diagonal_weight = w;
      weight_given = true;
    } else {
      bad(text, "unknown option '" + key + "'");
    }
  }
  if (weight_given && !p.stencil.diagonals && p.stencil.points == 0) {
    bad(text, "diagonal-weight needs diagonals (or points=3^d)");
  }
  return p;
}

std::string Pattern::name() const {
  if (kind == PatternKind::kFibres) return "fibres";
  if (kind == PatternKind::kGraph) return "graph";
  std::vector<std::string> options;
  const StencilSpec& s = stencil;
  if (s.all_periodic) options.push_back("periodic");
  if (!s.periods.empty()) {
    std::string list;
    for (bool b : s.periods) list += (list.empty() ? "" : "x") + std::string(b ? "1" : "0");
    options.push_back("periodic=" + list);
  }
  if (s.diagonals) options.push_back("diagonals");
  if (s.points != 0) options.push_back("points=" + std::to_string(s.points));
  if (!s.weights.empty()) {
    std::string list;
    for (double w : s.weights) list += (list.empty() ? "" : "x") + shortest(w);
    options.push_back("weights=" + list);
  }
  if ((s.diagonals || s.points != 0) && s.diagonal_weight != 1) {
    options.push_back("diagonal-weight=" + shortest(s.diagonal_weight));
  }
  std::string out = "stencil";
  for (std::size_t i = 0; i < options.size(); ++i) out += (i == 0 ? ":" : ",") + options[i];
  return out;
}

Pattern Pattern::with_default_periods(const std::vector<bool>& periods) const {
  Pattern p = *this;
  if (p.is_stencil() && !p.stencil.periods_given()) p.stencil.periods = periods;
  return p;
}

Stencil::Stencil(const StencilSpec& spec, const Grid& grid) : grid_(grid) {
  const int d = grid.ndims();
  const auto count = [](std::size_t n, const char* what) { return std::to_string(n) + " " + what; };
  if (!spec.periods.empty() && static_cast<int>(spec.periods.size()) != d) {
    throw std::invalid_argument("the stencil's periods name " +
                                count(spec.periods.size(), "dimensions") + ", the grid " +
                                grid.to_string() + " has " + std::to_string(d));
  }
  if (!spec.weights.empty() && static_cast<int>(spec.weights.size()) != d) {
    throw std::invalid_argument("the stencil's weights name " +
                                count(spec.weights.size(), "dimensions") + ", the grid " +
                                grid.to_string() + " has " + std::to_string(d));
  }
  const int faces = 2 * d + 1, all = d <= 12 ? power(3, d) : -1;
  bool diagonals = spec.diagonals;
  if (spec.points != 0) {
    if (spec.points == all) {
      diagonals = true;
    } else if (spec.points != faces) {
      throw std::invalid_argument("a stencil on " + std::to_string(d) + " dimensions has " +
                                  std::to_string(faces) + " points (along the axes) or " +
                                  std::to_string(all) + " (with the diagonals), not " +
                                  std::to_string(spec.points));
    }
  }
  if (diagonals && all < 0) {
    throw std::invalid_argument("diagonal stencils are limited to 12 dimensions");
  }
  for (double w : spec.weights) check_weight(w, "a stencil weight");
  check_weight(spec.diagonal_weight, "the diagonal weight");
  periods_.assign(static_cast<std::size_t>(d), spec.all_periodic);
  for (int k = 0; k < static_cast<int>(spec.periods.size()); ++k) periods_[k] = spec.periods[k];
  for (int k = 0; k < d; ++k) {
    const double w = spec.weights.empty() ? 1.0 : spec.weights[static_cast<std::size_t>(k)];
    for (int sign : {-1, 1}) {
      std::vector<int> delta(static_cast<std::size_t>(d), 0);
      delta[static_cast<std::size_t>(k)] = sign;
      deltas_.push_back(std::move(delta));
      weights_.push_back(w);
    }
  }
  if (diagonals) {
    // Every offset with two or more non-zero parts, in lexicographic order.
    std::vector<int> delta(static_cast<std::size_t>(d), -1);
    for (int i = 0; i < all; ++i) {
      int nonzero = 0;
      for (int c : delta) nonzero += c != 0;
      if (nonzero >= 2) {
        deltas_.push_back(delta);
        weights_.push_back(spec.diagonal_weight);
      }
      for (int k = d - 1; k >= 0; --k) {  // odometer over {-1, 0, 1}^d
        if (++delta[static_cast<std::size_t>(k)] <= 1) break;
        delta[static_cast<std::size_t>(k)] = -1;
      }
    }
  }
  finish();
}

Stencil::Stencil(const Grid& grid, std::vector<bool> periods, std::vector<std::vector<int>> deltas,
                 std::vector<double> weights)
    : grid_(grid),
      periods_(std::move(periods)),
      deltas_(std::move(deltas)),
      weights_(std::move(weights)) {
  const auto d = static_cast<std::size_t>(grid.ndims());
  if (periods_.size() != d || deltas_.size() != weights_.size()) {
    throw std::invalid_argument("stencil: periods, offsets and weights do not fit the grid");
  }
  for (std::size_t o = 0; o < deltas_.size(); ++o) {
    const std::vector<int>& delta = deltas_[o];
    if (delta.size() != d ||
        std::all_of(delta.begin(), delta.end(), [](int c) { return c == 0; }) ||
        std::any_of(delta.begin(), delta.end(), [](int c) { return c < -1 || c > 1; })) {
      throw std::invalid_argument(
          "stencil: offsets have one entry in {-1, 0, 1} per dimension, not all 0");
    }
    if (std::count(deltas_.begin(), deltas_.end(), delta) != 1) {
      throw std::invalid_argument("stencil: an offset is given twice");
    }
    check_weight(weights_[o], "a stencil weight");
  }
  finish();
}

void Stencil::finish() {
  if (weights_.empty()) throw std::invalid_argument("stencil: no offsets");
  const double lightest = *std::min_element(weights_.begin(), weights_.end());
  const double heaviest = *std::max_element(weights_.begin(), weights_.end());
  if (heaviest > kMaxWeightRatio * lightest) {
    throw std::invalid_argument("stencil weights differ by more than a factor of 1e6");
  }
  // The largest unit that every weight is a whole multiple of, when their
  // ratios are fractions with denominators up to 1024 (2.5 and 3: 0.5);
  // else 1/1024 of the lightest, rounding the others.
  unit_weight_ = lightest / 1024;
  for (int m = 1; m <= 1024; ++m) {
    const double unit = lightest / m;
    const bool whole = std::all_of(weights_.begin(), weights_.end(), [&](double w) {
      return std::abs(w / unit - std::round(w / unit)) <= 1e-9 * (w / unit);
    });
    if (whole) {
      unit_weight_ = unit;
      break;
    }
  }
  units_.clear();
  for (double w : weights_) units_.push_back(std::llround(w / unit_weight_));
  opposite_.assign(weights_.size(), -1);
  for (std::size_t o = 0; o < deltas_.size(); ++o) {
    std::vector<int> minus = deltas_[o];
    for (int& c : minus) c = -c;
    const auto it = std::find(deltas_.begin(), deltas_.end(), minus);
    if (it == deltas_.end() ||
        weights_[static_cast<std::size_t>(it - deltas_.begin())] != weights_[o]) {
      throw std::invalid_argument("stencil: every offset needs its opposite, with the same weight");
    }
    opposite_[o] = static_cast<int>(it - deltas_.begin());
  }
}

bool Stencil::diagonal(int o) const {
  const std::vector<int>& delta = deltas_[static_cast<std::size_t>(o)];
  return std::count_if(delta.begin(), delta.end(), [](int c) { return c != 0; }) > 1;
}

int Stencil::neighbour(const std::vector<int>& coords, int x, int o) const {
  const std::vector<int>& delta = deltas_[static_cast<std::size_t>(o)];
  int y = x;
  for (int k = 0; k < grid_.ndims(); ++k) {
    const int step = delta[static_cast<std::size_t>(k)];
    if (step == 0) continue;
    const int q = grid_.dim(k);
    int c = coords[static_cast<std::size_t>(k)] + step;
    if (c < 0 || c >= q) {
      if (!periods_[static_cast<std::size_t>(k)]) return -1;
      c = (c + q) % q;
    }
    y += (c - coords[static_cast<std::size_t>(k)]) * grid_.stride(k);
  }
  return y;
}

int Stencil::neighbour(int x, int o) const { return neighbour(grid_.coords(NewRank(x)), x, o); }

}  // namespace rankshape
