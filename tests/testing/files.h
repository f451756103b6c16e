// Scratch files for tests, under Bazel's TEST_TMPDIR.
#ifndef RANKSHAPE_TESTS_TESTING_FILES_H_
#define RANKSHAPE_TESTS_TESTING_FILES_H_

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

namespace rankshape::testing {

/// A fresh path in the test's scratch directory (the file is not created).
inline std::string scratch_path(const std::string& name) {
  const char* dir = std::getenv("TEST_TMPDIR");
  return std::string(dir ? dir : "/tmp") + "/" + name;
}

/// Writes text to a scratch file and returns its path.
inline std::string write_scratch(const std::string& name, const std::string& text) {
  const std::string path = scratch_path(name);
  std::ofstream(path) << text;
  return path;
}

inline std::string read_all(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace rankshape::testing

#endif  // RANKSHAPE_TESTS_TESTING_FILES_H_
