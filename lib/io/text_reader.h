// Line-oriented reading of the project's text formats: '#' starts a comment,
// values are separated by whitespace or commas, blank lines are skipped.
// Every token carries its line and column for error messages.
#ifndef RANKSHAPE_LIB_IO_TEXT_READER_H_
#define RANKSHAPE_LIB_IO_TEXT_READER_H_

#include <cstdint>
#include <fstream>
#include <istream>
#include <string>
#include <string_view>
#include <vector>

#include "lib/io/input_error.h"

namespace rankshape {

struct Token {
  std::string text;
  int column = 0;  // 1-based
};

/// One non-blank line split into tokens.
struct TextLine {
  int number = 0;  // 1-based
  std::vector<Token> tokens;
};

class TextReader {
 public:
  /// name is used in error messages (usually the file path).
  TextReader(std::istream& in, std::string name);

  /// Reads the next line with at least one token; false at end of input.
  bool next(TextLine& line);
  /// Line number of the last line read (for errors at end of input).
  int line_number() const { return line_number_; }
  const std::string& name() const { return name_; }

  /// Strict conversions: the whole token must be a finite number in range.
  double to_double(const TextLine& line, const Token& token) const;
  std::int64_t to_int(const TextLine& line, const Token& token, std::int64_t min,
                      std::int64_t max) const;
  /// Throws InputError at the token (or at the line when token is null).
  [[noreturn]] void fail(const TextLine& line, const Token* token,
                         const std::string& message) const;

 private:
  std::istream& in_;
  std::string name_;
  int line_number_ = 0;
};

/// Opens path for reading; throws InputError if it does not exist, is a
/// directory or cannot be read.
std::ifstream open_input(const std::string& path);

}  // namespace rankshape

#endif  // RANKSHAPE_LIB_IO_TEXT_READER_H_
