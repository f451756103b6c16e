#include "tests/fuzz/support.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <system_error>

namespace rankshape::fuzz {
namespace {

std::string make_scratch_dir() {
  // Bazel's test folder when there is one (it is cleaned even after a
  // crash); else memory-backed /dev/shm, since fuzzers write a file a run.
  std::string base = "/tmp";
  if (const char* tmp = std::getenv("TMPDIR"); tmp && *tmp) base = tmp;
  if (::access("/dev/shm", W_OK) == 0) base = "/dev/shm";
  if (const char* test = std::getenv("TEST_TMPDIR"); test && *test) base = test;
  std::string dir = base + "/rankshape-fuzz-XXXXXX";
  if (!::mkdtemp(dir.data())) throw std::runtime_error("cannot create a scratch folder in " + base);
  return dir;
}

void remove_scratch_dir() {
  std::error_code ignored;
  std::filesystem::remove_all(scratch_dir(), ignored);
}

}  // namespace

const std::string& scratch_dir() {
  // Never destroyed: the exit handler that removes the folder needs it.
  static const std::string* const dir = [] {
    const auto* d = new std::string(make_scratch_dir());
    std::atexit(remove_scratch_dir);
    return d;
  }();
  return *dir;
}

std::string scratch_path(const std::string& name) { return scratch_dir() + "/" + name; }

std::string input_path() { return scratch_path("input"); }

std::string write_input(const std::uint8_t* data, std::size_t size) {
  const std::string path = input_path();
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  out.close();
  check(static_cast<bool>(out), "cannot write the input to " + path);
  return path;
}

void check(bool ok, const std::string& what) {
  if (ok) return;
  std::fprintf(stderr, "fuzz check failed: %s\n", what.c_str());
  std::abort();
}

}  // namespace rankshape::fuzz
