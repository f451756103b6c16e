// Fuzzes the short text specifications users type: grids ("16x16x16"),
// objectives ("sum-max:pairs"), collective configurations (tuning tables,
// reports), launcher names, pretended node groups ("blocks:4"), rank
// orders and patterns ("stencil:periodic,points=9", optionally followed by
// "|" and an objective for it). The first byte picks the parser, the rest is the text. Each
// either refuses the text in its documented way (std::invalid_argument or
// no value) or accepts something that prints back to text it accepts
// again, unchanged.
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "lib/coll/config.h"
#include "lib/coll/hierarchy.h"
#include "lib/io/launch_files.h"
#include "lib/model/grid.h"
#include "lib/model/objective.h"
#include "lib/model/pattern.h"
#include "lib/synth/machine.h"
#include "tests/fuzz/support.h"

namespace rankshape {
namespace {

void grid(std::string_view text) {
  const Grid g = Grid::parse(text);
  long long product = 1;
  for (int q : g.dims()) {
    fuzz::check(q >= 1, "a grid dimension below 1");
    product *= q;
  }
  fuzz::check(product == g.size(), "a grid whose size is not the product of its dimensions");
  fuzz::check(Grid::parse(g.to_string()).dims() == g.dims(), "a grid printed and read changed");
}

void objective(std::string_view text) {
  const ObjectiveSpec spec = ObjectiveSpec::parse(text);
  fuzz::check(ObjectiveSpec::parse(spec.name()).name() == spec.name(),
              "an objective printed and read changed");
}

void collective_config(std::string_view text) {
  const auto config = coll::Config::parse(text);
  if (!config) return;
  // Trailing native levels print as nothing: compare what is printed.
  const std::string described = config->describe();
  const auto again = coll::Config::parse(described);
  fuzz::check(again && again->describe() == described,
              "a collective configuration printed and read changed");
}

void launcher(std::string_view text) {
  const LaunchFormat format = parse_launch_format(std::string(text));
  fuzz::check(parse_launch_format(launch_format_name(format)) == format,
              "a launcher name printed and read changed");
}

void pretended_groups(std::string_view text) {
  // Sizes 1 to 64 from the text's length, so the same bytes try several.
  const int size = 1 + static_cast<int>(text.size() % 64);
  const auto tables = coll::Hierarchy::pretend_groups(std::string(text), size);
  fuzz::check(tables.size() == 1 && static_cast<int>(tables[0].size()) == size,
              "pretended groups of the wrong size");
  for (int g : tables[0]) fuzz::check(g >= 0 && g < size, "a pretended group outside [0, size)");
}

void rank_order(std::string_view text) {
  const RankOrder order = parse_rank_order(text);
  fuzz::check(parse_rank_order(rank_order_name(order)) == order,
              "a rank order printed and read changed");
}

// The pattern, printed and read back; a stencil laid on a small grid keeps
// its offsets paired and its neighbours mutual.
void pattern(std::string_view text) {
  const std::size_t bar = text.find('|');
  const Pattern p = Pattern::parse(text.substr(0, bar));
  fuzz::check(Pattern::parse(p.name()).name() == p.name(), "a pattern printed and read changed");
  if (bar != std::string_view::npos) {
    const ObjectiveSpec spec = ObjectiveSpec::parse(text.substr(bar + 1), p);
    fuzz::check(ObjectiveSpec::parse(spec.name(), p).name() == spec.name(),
                "a pattern's objective printed and read changed");
  }
  if (!p.is_stencil()) return;
  std::size_t d = p.stencil.periods.size();
  if (d == 0) d = p.stencil.weights.size();
  if (d == 0) d = 1 + text.size() % 3;
  if (d > 5) return;  // 3^5 positions at most
  std::optional<Stencil> stencil;
  try {
    stencil.emplace(p.stencil, Grid(std::vector<int>(d, 3)));
  } catch (const std::invalid_argument&) {
    return;  // points or weights that do not fit: refused, as documented
  }
  for (int o = 0; o < stencil->offsets(); ++o) {
    const int back = stencil->opposite(o);
    fuzz::check(stencil->weight(back) == stencil->weight(o),
                "an offset's opposite weighs otherwise");
    for (int x = 0; x < stencil->grid().size(); ++x) {
      const int y = stencil->neighbour(x, o);
      fuzz::check(y < 0 || stencil->neighbour(y, back) == x, "a neighbour that is not mutual");
    }
  }
}

void collective_name(std::string_view text) {
  const auto c = coll::collective_named(text);
  if (c) fuzz::check(coll::collective_name(*c) == text, "a collective named otherwise");
}

}  // namespace
}  // namespace rankshape

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace rankshape;
  if (size == 0) return 0;
  const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  using Parser = void (*)(std::string_view);
  constexpr Parser kParsers[] = {
      grid,   objective, collective_config, launcher, pretended_groups, rank_order, collective_name,
      pattern};
  try {
    kParsers[data[0] % (sizeof kParsers / sizeof kParsers[0])](text);
  } catch (const std::invalid_argument&) {
  }
  return 0;
}
