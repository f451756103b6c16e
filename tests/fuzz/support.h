// What every fuzz target shares: a private scratch folder (the readers take
// paths, so each input is written to a file there first) and a check that
// ends the run the way libFuzzer and the replay test both report: abort().
#ifndef RANKSHAPE_TESTS_FUZZ_SUPPORT_H_
#define RANKSHAPE_TESTS_FUZZ_SUPPORT_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "lib/io/input_error.h"

namespace rankshape::fuzz {

/// A folder of this process's own (in TEST_TMPDIR under Bazel, else in
/// /dev/shm when there is one), removed when the process exits normally.
const std::string& scratch_dir();
/// scratch_dir() + "/" + name.
std::string scratch_path(const std::string& name);
/// Where write_input() and read_input() put the input: scratch_path("input").
std::string input_path();
/// Writes the input to input_path() and returns that path.
std::string write_input(const std::uint8_t* data, std::size_t size);

/// read(path) of the input written to a file, or nothing when the reader
/// refuses it the documented way (InputError); any other exception escapes
/// and fails the run.
template <class Read>
auto read_input(const std::uint8_t* data, std::size_t size, Read read)
    -> std::optional<decltype(read(std::string()))> {
  const std::string path = write_input(data, size);
  try {
    return read(path);
  } catch (const InputError&) {
    return std::nullopt;
  }
}

/// Prints "fuzz check failed: what" and aborts when ok is false: a broken
/// promise of the code under test, found by the fuzzer or replayed.
void check(bool ok, const std::string& what);

}  // namespace rankshape::fuzz

#endif  // RANKSHAPE_TESTS_FUZZ_SUPPORT_H_
