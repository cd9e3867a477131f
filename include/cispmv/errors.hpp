#pragma once
/// \file errors.hpp
/// The one error type of every cispmv reader (Matrix Market, binary `.cispmv`, FCIDUMP).

#include <cstddef>
#include <stdexcept>
#include <string>

namespace cispmv {

/// `text` as an error message may quote it: at most `limit` characters (then "... (N more)"), and
/// every byte that is not printable ASCII as \xNN, so that a binary file or a 64 KB line never
/// reaches the terminal raw.
inline std::string quote_excerpt(const std::string& text, std::size_t limit = 80) {
  static const char* hex = "0123456789abcdef";
  std::string out = "'";
  for (std::size_t i = 0; i < text.size() && i < limit; ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
    } else {
      out += "\\x";
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  out += "'";
  if (text.size() > limit) out += "... (" + std::to_string(text.size() - limit) + " more characters)";
  return out;
}

/// A malformed or corrupt input file.
///
/// `what()` reads "<file>:<line>: <problem>" for text files (as compilers report errors) and
/// "<file>: <problem>" where no line applies (binary files, whole-file problems), where `line()` is 0.
class ParseError : public std::runtime_error {
 public:
  /// `line` is 1-based; 0 where no line applies.
  ParseError(const std::string& file, std::size_t line, const std::string& problem)
      : std::runtime_error(file + (line > 0 ? ":" + std::to_string(line) : std::string()) + ": " + problem),
        file_(file),
        line_(line),
        problem_(problem) {}
  /// The path of the file (or the name of the stream), as given to the reader.
  const std::string& file() const noexcept { return file_; }
  /// 1-based line number of the problem; 0 where none applies.
  std::size_t line() const noexcept { return line_; }
  /// The problem alone, without file and line.
  const std::string& problem() const noexcept { return problem_; }

 private:
  std::string file_;
  std::size_t line_;
  std::string problem_;
};

}  // namespace cispmv
