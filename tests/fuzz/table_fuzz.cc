// Fuzzes the collectives' tuning table reader (JSON). Any input is either
// refused with an InputError or read into a table whose models and entries
// are usable (sizes of at least 1, finite non-negative costs) and which
// prints to JSON that reads back to the same table.
#include <cmath>
#include <cstdint>
#include <string>

#include "lib/coll/table.h"
#include "lib/io/input_error.h"
#include "tests/fuzz/support.h"

namespace rankshape {
namespace {

bool usable(double x) { return std::isfinite(x) && x >= 0; }

void check_table(const coll::TuningTable& table) {
  for (const coll::Model& m : table.models) {
    fuzz::check(m.links.size() == m.sizes.size(), "a model without one link cost per level");
    for (int s : m.sizes) fuzz::check(s >= 1, "a model with a level of no members");
    for (const coll::LinkCost& l : m.links) {
      fuzz::check(usable(l.alpha) && usable(l.beta) && usable(l.loaded()),
                  "a link cost that is negative or not finite");
    }
    fuzz::check(usable(m.gamma), "a gamma that is negative or not finite");
  }
  for (const coll::TableEntry& e : table.entries) {
    for (int s : e.sizes) fuzz::check(s >= 1, "an entry with a level of no members");
    fuzz::check(e.bytes >= 0, "an entry of negative size");
    fuzz::check(table.lookup(e.collective, e.sizes, e.bytes).has_value(),
                "an entry that lookup does not find");
  }
}

}  // namespace
}  // namespace rankshape

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace rankshape;
  const std::string text(reinterpret_cast<const char*>(data), size);
  coll::TuningTable table;
  try {
    table = coll::parse_table(text, "fuzz");
  } catch (const InputError&) {
    return 0;
  }
  check_table(table);
  const std::string printed = coll::table_json(table);
  fuzz::check(coll::table_json(coll::parse_table(printed, "printed")) == printed,
              "a table printed and read changed");
  return 0;
}
