// Fuzzes the placement reader and what is made from a placement: launcher
// files and commands. Any input is either refused with an InputError or
// read into a placement that writes back and reads again unchanged, and
// from which every launcher form can be written.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "lib/io/formats.h"
#include "lib/io/launch_files.h"
#include "tests/fuzz/support.h"

namespace rankshape {
namespace {

bool same(const Placement& a, const Placement& b) {
  if (a.size() != b.size()) return false;
  for (int r = 0; r < a.size(); ++r) {
    if (a.of(OldRank(r)).host != b.of(OldRank(r)).host) return false;
    if (a.of(OldRank(r)).core != b.of(OldRank(r)).core) return false;
  }
  return true;
}

// The labelling that reverses the ranks: hosts then alternate or split
// runs, which is where Hydra's and Slurm's core lists differ.
Labelling reversed(int p) {
  std::vector<OldRank> perm;
  for (int i = p - 1; i >= 0; --i) perm.emplace_back(i);
  return Labelling(std::move(perm));
}

}  // namespace
}  // namespace rankshape

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace rankshape;
  const auto placement =
      fuzz::read_input(data, size, [](const std::string& file) { return read_placement(file); });
  if (!placement) return 0;
  const int p = placement->size();
  fuzz::check(p >= 1, "an empty placement accepted");
  const std::string written = fuzz::scratch_path("written");
  write_placement(written, *placement);
  fuzz::check(same(read_placement(written, p), *placement),
              "a written placement read back changed");
  for (const Labelling& labelling : {Labelling::identity(p), reversed(p)}) {
    for (const LaunchFormat format :
         {LaunchFormat::kOpenMpi, LaunchFormat::kMpich, LaunchFormat::kSlurm}) {
      const std::string text = launch_file_text(*placement, labelling, format);
      fuzz::check(!text.empty(), "an empty launcher file");
      const auto cores = core_binding_list(*placement, labelling, format);
      fuzz::check(!(format == LaunchFormat::kOpenMpi && cores), "a core list for Open MPI");
      (void)launch_command(*placement, labelling, format, "launch.txt");
    }
  }
  return 0;
}
