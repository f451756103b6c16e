// Fuzzes the traffic readers: rankshape's format and Open MPI's monitoring
// output (told apart by the first line), and the same bytes read as an
// ompi_monitoring_prof.so matrix of bytes. Any input is either refused with
// an InputError or read into traffic whose pairs are sorted, distinct and
// inside the job, and which writes back and reads again unchanged.
#include <cstdint>
#include <fstream>
#include <string>

#include "lib/io/input_error.h"
#include "lib/io/traffic.h"
#include "tests/fuzz/support.h"

namespace rankshape {
namespace {

bool same(const Traffic& a, const Traffic& b) {
  if (a.ranks != b.ranks || a.pairs.size() != b.pairs.size()) return false;
  for (std::size_t i = 0; i < a.pairs.size(); ++i) {
    const TrafficPair &x = a.pairs[i], &y = b.pairs[i];
    if (x.a != y.a || x.b != y.b || x.bytes != y.bytes || x.messages != y.messages) return false;
  }
  return true;
}

void check_traffic(const Traffic& t) {
  fuzz::check(t.ranks >= 1 && t.ranks <= kMaxTrafficRanks, "a job size out of range accepted");
  for (std::size_t i = 0; i < t.pairs.size(); ++i) {
    const TrafficPair& p = t.pairs[i];
    fuzz::check(0 <= p.a && p.a < p.b && p.b < t.ranks, "a pair outside the job or not a < b");
    fuzz::check(p.bytes > 0 || p.messages > 0, "an empty pair kept");
    fuzz::check(p.bytes >= 0 && p.messages >= 0, "a negative count");
    fuzz::check(
        i == 0 || t.pairs[i - 1].a < p.a || (t.pairs[i - 1].a == p.a && t.pairs[i - 1].b < p.b),
        "pairs not sorted or repeated");
  }
  const std::string written = fuzz::scratch_path("written.traffic");
  write_traffic(written, t);
  fuzz::check(same(read_traffic({written}, t.ranks), t), "written traffic read back changed");
}

}  // namespace
}  // namespace rankshape

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace rankshape;
  const auto traffic =
      fuzz::read_input(data, size, [](const std::string& file) { return read_traffic({file}); });
  if (traffic) check_traffic(*traffic);
  // The same bytes under a matrix's name (written with a stream: libFuzzer's
  // timer signals interrupt std::filesystem::copy_file).
  const std::string named = fuzz::scratch_path("fuzz_size.mat");
  {
    std::ofstream out(named, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
    out.close();
    fuzz::check(static_cast<bool>(out), "cannot write the input to " + named);
  }
  try {
    check_traffic(read_traffic({named}));
  } catch (const InputError&) {
  }
  return 0;
}
