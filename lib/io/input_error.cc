#include "lib/io/input_error.h"

namespace rankshape {
namespace {

std::string locate(const std::string& file, int line, int column, const std::string& message) {
  std::string s = file;
  if (line > 0) s += ":" + std::to_string(line);
  if (line > 0 && column > 0) s += ":" + std::to_string(column);
  return s + ": " + message;
}

}  // namespace

InputError::InputError(const std::string& file, int line, int column, const std::string& message)
    : std::runtime_error(locate(file, line, column, message)),
      file_(file),
      line_(line),
      column_(column) {}

}  // namespace rankshape
