// Fuzzes the labelling reader. Any input is either refused with an
// InputError or read into a permutation whose two directions agree and
// which writes back and reads again unchanged.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "lib/io/formats.h"
#include "lib/io/input_error.h"
#include "tests/fuzz/support.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace rankshape;
  const auto labelling =
      fuzz::read_input(data, size, [](const std::string& file) { return read_labelling(file); });
  if (!labelling) return 0;
  const int p = labelling->size();
  fuzz::check(p >= 1, "an empty labelling accepted");
  for (int n = 0; n < p; ++n) {
    const OldRank o = labelling->old_of(NewRank(n));
    fuzz::check(o.value() >= 0 && o.value() < p, "an old rank outside [0, p)");
    fuzz::check(labelling->new_of(o).value() == n, "old_of and new_of disagree");
  }
  // The size check of the reader: the right size passes, another fails.
  const std::string path = fuzz::input_path();
  (void)read_labelling(path, p);
  bool refused = false;
  try {
    (void)read_labelling(path, p + 1);
  } catch (const InputError&) {
    refused = true;
  }
  fuzz::check(refused, "a labelling of p ranks accepted for p + 1");
  const std::string written = fuzz::scratch_path("written");
  write_labelling(written, *labelling);
  fuzz::check(read_labelling(written).old_ranks() == labelling->old_ranks(),
              "a written labelling read back changed");
  return 0;
}
