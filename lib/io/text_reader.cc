#include "lib/io/text_reader.h"

#include <sys/stat.h>

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>

namespace rankshape {

TextReader::TextReader(std::istream& in, std::string name) : in_(in), name_(std::move(name)) {}

bool TextReader::next(TextLine& line) {
  std::string raw;
  while (std::getline(in_, raw)) {
    ++line_number_;
    line.number = line_number_;
    line.tokens.clear();
    std::size_t i = 0;
    while (i < raw.size()) {
      const char c = raw[i];
      if (c == '#') break;
      if (c == ' ' || c == '\t' || c == ',' || c == '\r') {
        ++i;
        continue;
      }
      if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f) {
        throw InputError(name_, line_number_, static_cast<int>(i) + 1,
                         "unexpected byte 0x" + std::string(1, "0123456789abcdef"[(c >> 4) & 0xf]) +
                             std::string(1, "0123456789abcdef"[c & 0xf]) +
                             " (files must be plain ASCII text)");
      }
      std::size_t j = i;
      while (j < raw.size() && raw[j] != ' ' && raw[j] != '\t' && raw[j] != ',' && raw[j] != '#' &&
             raw[j] != '\r') {
        ++j;
      }
      line.tokens.push_back(Token{raw.substr(i, j - i), static_cast<int>(i) + 1});
      i = j;
    }
    if (!line.tokens.empty()) return true;
  }
  if (in_.bad()) throw InputError(name_, line_number_, 0, "read error");
  return false;
}

void TextReader::fail(const TextLine& line, const Token* token, const std::string& message) const {
  throw InputError(name_, line.number, token ? token->column : 0, message);
}

double TextReader::to_double(const TextLine& line, const Token& token) const {
  double value = 0;
  const char* begin = token.text.data();
  const char* end = begin + token.text.size();
  const auto [ptr, ec] = std::from_chars(begin, end, value);
  if (ec == std::errc::result_out_of_range) {
    fail(line, &token, "number '" + token.text + "' is out of range for a double");
  }
  if (ec != std::errc() || ptr != end) {
    // from_chars does not take inf/nan spellings with signs consistently;
    // name them explicitly for a clearer message.
    fail(line, &token, "expected a number, got '" + token.text + "'");
  }
  if (std::isnan(value)) fail(line, &token, "value is NaN");
  if (std::isinf(value)) fail(line, &token, "value is infinite");
  return value;
}

std::int64_t TextReader::to_int(const TextLine& line, const Token& token, std::int64_t min,
                                std::int64_t max) const {
  std::int64_t value = 0;
  const char* begin = token.text.data();
  const char* end = begin + token.text.size();
  const auto [ptr, ec] = std::from_chars(begin, end, value);
  if (ec != std::errc() || ptr != end) {
    fail(line, &token, "expected a whole number, got '" + token.text + "'");
  }
  if (value < min || value > max) {
    fail(line, &token,
         token.text + " is outside [" + std::to_string(min) + ", " + std::to_string(max) + "]");
  }
  return value;
}

std::ifstream open_input(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    throw InputError(path, 0, 0, std::string("cannot open: ") + std::strerror(errno));
  }
  if (S_ISDIR(st.st_mode)) throw InputError(path, 0, 0, "is a directory, expected a file");
  std::ifstream in(path);
  if (!in) throw InputError(path, 0, 0, std::string("cannot open: ") + std::strerror(errno));
  return in;
}

}  // namespace rankshape
