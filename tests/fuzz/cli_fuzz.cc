// Fuzzes the command lines of relabel, evaluate and synth, run in-process
// on small, valid input files. The first byte picks the command; the rest
// is its arguments, separated by NUL bytes. Whatever the arguments, the
// command returns 0, 1 (bad input) or 2 (bad usage), never crashes or
// throws, and leaves no temporary file behind (outputs are written whole
// or not at all).
//
// Every run happens inside the scratch folder: inputs with an argument
// holding a '/' are skipped, so the files a command writes can only land
// there; they are removed after each run and the input files written
// afresh before it. synth inputs with a number above 6 are skipped too
// (at most 6^4 = 1,296 ranks): a valid machine of many thousand ranks,
// dense, takes seconds to write, which would pass for a hang; the limits
// on size are unit-tested instead.
#include <unistd.h>

#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "cmd/commands.h"
#include "tests/fuzz/support.h"

namespace rankshape {
namespace {

// 12 ranks: 2 nodes of 2 sockets of 3 cores, the same machine twice over.
constexpr const char* kDense =
    "0 1 1 2 2 2 9 9 9 9 9 9\n1 0 1 2 2 2 9 9 9 9 9 9\n1 1 0 2 2 2 9 9 9 9 9 9\n"
    "2 2 2 0 1 1 9 9 9 9 9 9\n2 2 2 1 0 1 9 9 9 9 9 9\n2 2 2 1 1 0 9 9 9 9 9 9\n"
    "9 9 9 9 9 9 0 1 1 2 2 2\n9 9 9 9 9 9 1 0 1 2 2 2\n9 9 9 9 9 9 1 1 0 2 2 2\n"
    "9 9 9 9 9 9 2 2 2 0 1 1\n9 9 9 9 9 9 2 2 2 1 0 1\n9 9 9 9 9 9 2 2 2 1 1 0\n";
constexpr const char* kStructured =
    "rankshape-structured 1\ncores-per-node 6\nnodes 2\nranks 12\ncore-costs\n"
    "0 1 1 2 2 2\n1 0 1 2 2 2\n1 1 0 2 2 2\n2 2 2 0 1 1\n2 2 2 1 0 1\n2 2 2 1 1 0\n"
    "rack-costs\n9\nrank-locations list\n"
    "0 0\n1 3\n0 1\n1 4\n0 2\n1 5\n0 3\n1 0\n0 4\n1 1\n0 5\n1 2\n";
constexpr const char* kPerm = "11\n10\n9\n8\n7\n6\n5\n4\n3\n2\n1\n0\n";
constexpr const char* kPlacement =
    "0 a 0\n1 a 1\n2 a 2\n3 a 3\n4 a 4\n5 a 5\n6 b 0\n7 b 1\n8 b 2\n9 b 3\n10 b 4\n11 b 5\n";

const std::vector<std::pair<std::string, const char*>>& input_files() {
  static const std::vector<std::pair<std::string, const char*>> files = {
      {"dense.txt", kDense},
      {"structured.txt", kStructured},
      {"perm.txt", kPerm},
      {"placement.txt", kPlacement}};
  return files;
}

void prepare_folder() {
  static const bool entered = [] {
    fuzz::check(::chdir(fuzz::scratch_dir().c_str()) == 0, "cannot enter the scratch folder");
    return true;
  }();
  (void)entered;
  for (const auto& [name, text] : input_files()) {
    std::ofstream(name, std::ios::trunc) << text;
  }
}

// Checks for leftovers of atomic writes, then removes what the run wrote.
void clean_folder() {
  std::set<std::string> keep;
  for (const auto& file : input_files()) keep.insert(file.first);
  std::vector<std::filesystem::path> written;
  for (const auto& entry : std::filesystem::directory_iterator(".")) {
    const std::string name = entry.path().filename().string();
    fuzz::check(name.find(".tmp.") == std::string::npos, "a temporary file left behind: " + name);
    if (!keep.count(name)) written.push_back(entry.path());
  }
  for (const auto& path : written) std::filesystem::remove_all(path);
}

// Swaps std::cout and std::cerr for a sink while a command runs.
class Silenced {
 public:
  Silenced() : out_(std::cout.rdbuf(sink_.rdbuf())), err_(std::cerr.rdbuf(sink_.rdbuf())) {}
  ~Silenced() {
    std::cout.rdbuf(out_);
    std::cerr.rdbuf(err_);
  }
  Silenced(const Silenced&) = delete;
  Silenced& operator=(const Silenced&) = delete;

 private:
  std::ostringstream sink_;
  std::streambuf* out_;
  std::streambuf* err_;
};

// Whether a number anywhere in text (as in "--racks=1e3" or "0x40")
// exceeds limit in magnitude.
bool holds_number_above(const std::string& text, double limit) {
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (!std::isdigit(static_cast<unsigned char>(text[i])) && text[i] != '.') continue;
    const double number = std::strtod(text.c_str() + i, nullptr);
    if (!(std::fabs(number) <= limit)) return true;
  }
  return false;
}

}  // namespace
}  // namespace rankshape

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace rankshape;
  constexpr std::size_t kMaxArgs = 24;
  if (size == 0 || size > 4096) return 0;
  enum Command { kRelabel, kEvaluate, kSynth };
  const auto command = static_cast<Command>(data[0] % 3);
  static const char* const kNames[] = {"relabel", "evaluate", "synth"};
  std::vector<std::string> args = {kNames[command]};
  std::string current;
  for (std::size_t i = 1; i <= size; ++i) {
    if (i == size || data[i] == '\0') {
      args.push_back(current);
      current.clear();
    } else {
      current += static_cast<char>(data[i]);
    }
  }
  if (args.size() > kMaxArgs) return 0;
  // No '/': every file stays in the scratch folder. No ".tmp.": an output
  // named like the atomic writer's temporaries would pass for a leftover.
  for (const std::string& a : args) {
    if (a.find('/') != std::string::npos || a.find(".tmp.") != std::string::npos) return 0;
    if (command == kSynth && holds_number_above(a, 6)) return 0;
  }
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  const int argc = static_cast<int>(args.size());

  prepare_folder();
  int status;
  {
    Silenced quiet;
    switch (command) {
      case kRelabel:
        status = cmd::relabel_main(argc, argv.data());
        break;
      case kEvaluate:
        status = cmd::evaluate_main(argc, argv.data());
        break;
      default:
        status = cmd::synth_main(argc, argv.data());
    }
  }
  fuzz::check(status == 0 || status == 1 || status == 2,
              "exit status " + std::to_string(status) + " is not 0, 1 or 2");
  clean_folder();
  return 0;
}
