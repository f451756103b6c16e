// Fuzzes the cost file readers (dense and structured, told apart by the
// header). Any input is either refused with an InputError or read into a
// valid cost function (symmetric, finite, non-negative, zero to itself)
// that writes back and reads again to exactly the same costs.
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>

#include "lib/io/formats.h"
#include "lib/model/objective.h"
#include "tests/fuzz/support.h"

namespace rankshape {
namespace {

// Pairwise checks cost p^2: above this the readers' limits are still
// exercised, the pairs are not.
constexpr int kCheckedRanks = 64;

void check_valid(const Costs& costs) {
  const int p = costs.size();
  for (int a = 0; a < p; ++a) {
    fuzz::check(costs.cost(OldRank(a), OldRank(a)) == 0, "non-zero cost from a rank to itself");
    for (int b = 0; b < a; ++b) {
      const double c = costs.cost(OldRank(a), OldRank(b));
      fuzz::check(std::isfinite(c) && c >= 0, "a cost that is negative or not finite");
      fuzz::check(c == costs.cost(OldRank(b), OldRank(a)), "asymmetric costs");
    }
  }
}

void check_round_trip(const Costs& costs) {
  const std::string path = fuzz::scratch_path("written");
  if (const auto* s = dynamic_cast<const StructuredCosts*>(&costs)) {
    write_structured_costs(path, *s);
  } else {
    write_dense_costs(path, costs);
  }
  const std::unique_ptr<Costs> again = read_costs(path);
  fuzz::check(again->size() == costs.size(), "written costs read back with another size");
  for (int a = 0; a < costs.size(); ++a) {
    for (int b = 0; b < costs.size(); ++b) {
      fuzz::check(again->cost(OldRank(a), OldRank(b)) == costs.cost(OldRank(a), OldRank(b)),
                  "written costs read back with another value");
    }
  }
}

}  // namespace
}  // namespace rankshape

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace rankshape;
  const auto costs = fuzz::read_input(data, size, [](const std::string& path) {
    Warnings warnings;
    return read_costs(path, &warnings);
  });
  if (!costs) return 0;
  const int p = (*costs)->size();
  fuzz::check(p >= 1, "costs of no ranks accepted");
  if (p > kCheckedRanks) return 0;
  check_valid(**costs);
  check_round_trip(**costs);
  // The objective on a 1-D grid sums every pair once.
  const Evaluation e = evaluate(**costs, Grid({p}), Labelling::identity(p), ObjectiveSpec{});
  fuzz::check(std::isfinite(e.value.primary) && e.value.primary >= 0,
              "objective negative or not finite");
  return 0;
}
