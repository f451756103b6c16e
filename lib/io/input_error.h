// Errors in input files, located to file, line and column so that a user can
// jump straight to the problem ("costs.txt:12:7: expected a number, got 'x'").
#ifndef RANKSHAPE_LIB_IO_INPUT_ERROR_H_
#define RANKSHAPE_LIB_IO_INPUT_ERROR_H_

#include <stdexcept>
#include <string>

namespace rankshape {

class InputError : public std::runtime_error {
 public:
  /// line and column are 1-based; 0 means "the whole file" / "the whole line".
  InputError(const std::string& file, int line, int column, const std::string& message);

  const std::string& file() const { return file_; }
  int line() const { return line_; }
  int column() const { return column_; }

 private:
  std::string file_;
  int line_;
  int column_;
};

}  // namespace rankshape

#endif  // RANKSHAPE_LIB_IO_INPUT_ERROR_H_
