/// \file io_matrix_market.cpp
/// Matrix Market reader and writer (see cispmv/io.hpp).
///
/// The reader streams the file in large blocks, parses each line in place with std::from_chars
/// (no copy, no allocation per line or per entry), stores the entries once in coordinate arrays
/// of the size announced by the size line, and then sorts them into CSR by counting: O(nnz).

#include "cispmv/io.hpp"
#include "cispmv/memory_budget.hpp"
#include "file_handle.hpp"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <limits>
#include <memory>
#include <sstream>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

// Floating-point std::from_chars / std::to_chars arrived in libstdc++ 11 and libc++ 17; older
// toolchains (the CUDA <= 11 ones of the k20 preset) fall back to strtod / snprintf.
#if defined(__cpp_lib_to_chars) && __cpp_lib_to_chars >= 201611L
#define CISPMV_HAS_FLOAT_CHARCONV 1
#else
#define CISPMV_HAS_FLOAT_CHARCONV 0
#endif

namespace cispmv {

namespace {

constexpr std::int64_t max_ordinal = std::numeric_limits<int>::max();

using impl::FilePtr;
using impl::open_file;

bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }

/// Shortens a token for an error message so that a garbage line cannot produce a huge message.
std::string quote(std::string_view token) {
  constexpr std::size_t max_shown = 40;
  if (token.size() > max_shown) return "'" + std::string(token.substr(0, max_shown)) + "...'";
  return "'" + std::string(token) + "'";
}

/// Reads a text file in large blocks and hands out its lines as views into the block, so that
/// parsing copies nothing per line. A line longer than the block grows the block.
class LineReader {
 public:
  /// `size_hint`: the file's size when known (0 otherwise): a small file gets a small buffer.
  LineReader(std::FILE* file, const std::string& path, std::uint64_t size_hint = 0)
      : file_(file),
        path_(path),
        buffer_(size_hint > 0 && size_hint < block_size ? static_cast<std::size_t>(size_hint) + 1 : block_size) {}

  /// The next line without its end-of-line characters; false at the end of the file.
  bool next(std::string_view& line) {
    for (;;) {
      const char* begin = buffer_.data() + begin_;
      if (const void* nl = std::memchr(begin, '\n', end_ - begin_)) {
        const char* stop = static_cast<const char*>(nl);
        line = std::string_view(begin, static_cast<std::size_t>(stop - begin));
        begin_ = static_cast<std::size_t>(stop - buffer_.data()) + 1;
        ++line_number_;
        return true;
      }
      if (eof_) {
        if (begin_ == end_) return false;
        line = std::string_view(begin, end_ - begin_);  // last line without a newline
        begin_ = end_;
        ++line_number_;
        return true;
      }
      refill();
    }
  }

  /// 1-based number of the line last returned (0 before the first).
  std::size_t line_number() const { return line_number_; }

 private:
  static constexpr std::size_t block_size = std::size_t(1) << 22;
  static constexpr std::size_t max_line = std::size_t(1) << 24;

  void refill() {
    const std::size_t rest = end_ - begin_;
    if (begin_ > 0) std::memmove(buffer_.data(), buffer_.data() + begin_, rest);
    begin_ = 0;
    end_ = rest;
    if (end_ == buffer_.size()) {
      // no Matrix Market line is this long: a binary file or an endless stream (/dev/zero)
      if (buffer_.size() >= max_line) {
        throw ParseError(
            path_, line_number_ + 1,
            "a line longer than " + std::to_string(max_line >> 20) + " MiB: not a Matrix Market text file");
      }
      buffer_.resize(buffer_.size() * 2);
    }
    const std::size_t want = buffer_.size() - end_;
    const std::size_t got = std::fread(buffer_.data() + end_, 1, want, file_);
    if (got < want) {
      if (std::ferror(file_)) throw std::runtime_error("read_matrix_market: read error on '" + path_ + "'");
      eof_ = true;
    }
    end_ += got;
  }

  std::FILE* file_;
  const std::string& path_;
  std::vector<char> buffer_;
  std::size_t begin_ = 0;
  std::size_t end_ = 0;
  std::size_t line_number_ = 0;
  bool eof_ = false;
};

/// Splits a line into whitespace-separated tokens one at a time.
class Tokens {
 public:
  explicit Tokens(std::string_view line) : p_(line.data()), end_(line.data() + line.size()) {}

  /// The next token, or an empty view at the end of the line.
  std::string_view next() {
    while (p_ != end_ && is_blank(*p_)) ++p_;
    const char* start = p_;
    while (p_ != end_ && !is_blank(*p_)) ++p_;
    return std::string_view(start, static_cast<std::size_t>(p_ - start));
  }

  /// What is left of the line, without leading blanks (empty if only blanks remain).
  std::string_view rest() {
    while (p_ != end_ && is_blank(*p_)) ++p_;
    const char* stop = end_;
    while (stop != p_ && is_blank(stop[-1])) --stop;
    return std::string_view(p_, static_cast<std::size_t>(stop - p_));
  }

 private:
  const char* p_;
  const char* end_;
};

/// True for a line with only blanks, or a `%` comment.
bool is_skippable(std::string_view line) {
  for (char c : line) {
    if (c == '%') return true;
    if (!is_blank(c)) return false;
  }
  return true;
}

/// Parses a whole token as a decimal int64 (optional sign). Returns false for anything else;
/// `out_of_range` is set for a number of digits beyond int64.
bool parse_int64(std::string_view token, std::int64_t& value, bool& out_of_range) {
  out_of_range = false;
  const char* p = token.data();
  const char* const end = p + token.size();
  const bool negative = p != end && *p == '-';
  if (p != end && (*p == '+' || *p == '-')) ++p;
  if (p == end) return false;
  // Indices are the bulk of a Matrix Market file: a plain digit loop is faster than from_chars.
  std::uint64_t v = 0;
  constexpr std::uint64_t limit = std::uint64_t(std::numeric_limits<std::int64_t>::max());
  for (; p != end; ++p) {
    const auto digit = static_cast<unsigned>(*p - '0');
    if (digit > 9) return false;
    if (v > (limit - digit) / 10) {
      // Keep scanning: a token with a non-digit later is malformed rather than out of range.
      for (++p; p != end; ++p) {
        if (static_cast<unsigned>(*p - '0') > 9) return false;
      }
      out_of_range = true;
      return false;
    }
    v = v * 10 + digit;
  }
  value = negative ? -static_cast<std::int64_t>(v) : static_cast<std::int64_t>(v);
  return true;
}

/// Parses a whole token as a double. Returns false for text that is not a number; `overflow` is
/// set for a number too large for double. Underflow to a subnormal or zero is accepted.
bool parse_double(std::string_view token, double& value, bool& overflow) {
  overflow = false;
  if (token.empty()) return false;
#if CISPMV_HAS_FLOAT_CHARCONV
  const char* begin = token.data();
  if (*begin == '+') ++begin;
  if (begin != token.data() && begin != token.data() + token.size() && (*begin == '+' || *begin == '-')) {
    return false;  // "+-1.5", "++1": one sign at most
  }
  const char* end = token.data() + token.size();
  const auto result = std::from_chars(begin, end, value, std::chars_format::general);
  if (result.ec == std::errc() && result.ptr == end && begin != end) return true;
  if (result.ec != std::errc::result_out_of_range || result.ptr != end) return false;
    // from_chars reports both overflow and underflow as out of range without a value; strtod tells
    // them apart (a subnormal written by %.17g must read back).
#endif
  const std::string copy(token);
  char* stop = nullptr;
  errno = 0;
  value = std::strtod(copy.c_str(), &stop);
  if (stop != copy.c_str() + copy.size()) return false;
  // strtod accepts hexadecimal floats, which Matrix Market does not have.
  if (copy.find_first_of("xX") != std::string::npos) return false;
  if (errno == ERANGE && std::isinf(value)) overflow = true;
  return true;
}

enum class Field { real, integer, pattern };

struct Header {
  Field field = Field::real;
  bool symmetric = false;
};

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  return out;
}

Header parse_header(std::string_view line, const std::string& path) {
  auto fail = [&](const std::string& what) { throw ParseError(path, 1, what); };
  Tokens tokens(line);
  const std::string banner(tokens.next());
  if (lower(banner) != "%%matrixmarket") {
    fail("expected the header '%%MatrixMarket matrix coordinate <field> <symmetry>', found " + quote(line));
  }
  const std::string object = lower(tokens.next());
  const std::string format = lower(tokens.next());
  const std::string field = lower(tokens.next());
  const std::string symmetry = lower(tokens.next());
  if (object.empty() || format.empty() || field.empty() || symmetry.empty()) {
    fail("incomplete header " + quote(line) + ": expected '%%MatrixMarket matrix coordinate <field> <symmetry>'");
  }
  if (!tokens.rest().empty()) fail("unexpected text " + quote(tokens.rest()) + " after the header");
  if (object != "matrix") fail("unsupported object '" + object + "': only 'matrix' is supported");
  if (format == "array") fail("unsupported format 'array' (dense): only 'coordinate' is supported");
  if (format != "coordinate") fail("bad header: unknown format '" + format + "' (expected 'coordinate')");
  Header h;
  if (field == "real" || field == "double") {
    h.field = Field::real;
  } else if (field == "integer") {
    h.field = Field::integer;
  } else if (field == "pattern") {
    h.field = Field::pattern;
  } else if (field == "complex") {
    fail("unsupported field 'complex': only real, integer and pattern are supported");
  } else {
    fail("bad header: unknown field '" + field + "' (expected real, integer or pattern)");
  }
  if (symmetry == "general") {
    h.symmetric = false;
  } else if (symmetry == "symmetric") {
    h.symmetric = true;
  } else if (symmetry == "skew-symmetric" || symmetry == "hermitian") {
    fail("unsupported symmetry '" + symmetry + "': only general and symmetric are supported");
  } else {
    fail("bad header: unknown symmetry '" + symmetry + "' (expected general or symmetric)");
  }
  return h;
}

struct SizeLine {
  std::int64_t rows = 0, cols = 0, entries = 0;
};

SizeLine parse_size_line(std::string_view line, std::size_t line_number, const std::string& path) {
  auto fail = [&](const std::string& what) { throw ParseError(path, line_number, what); };
  Tokens tokens(line);
  const char* names[3] = {"rows", "columns", "entries"};
  std::int64_t values[3] = {0, 0, 0};
  for (int i = 0; i < 3; ++i) {
    const std::string_view token = tokens.next();
    if (token.empty()) {
      fail("size line has " + std::to_string(i) + " number" + (i == 1 ? "" : "s") +
           ", expected 3: 'rows columns entries'");
    }
    bool out_of_range = false;
    if (!parse_int64(token, values[i], out_of_range)) {
      if (out_of_range) fail("number of " + std::string(names[i]) + " " + quote(token) + " is too large");
      fail("expected the number of " + std::string(names[i]) + " (a non-negative integer) on the size line, found " +
           quote(token));
    }
    if (values[i] < 0) fail("negative number of " + std::string(names[i]) + " " + std::to_string(values[i]));
  }
  if (!tokens.rest().empty()) {
    fail("unexpected text " + quote(tokens.rest()) + " after the size line 'rows columns entries'");
  }
  for (int i = 0; i < 2; ++i) {
    if (values[i] > max_ordinal) {
      fail("number of " + std::string(names[i]) + " " + std::to_string(values[i]) + " exceeds the limit " +
           std::to_string(max_ordinal) + " (2^31 - 1) of the int index type");
    }
  }
  return {values[0], values[1], values[2]};
}

/// One entry of the file, 0-based.
struct Entry {
  int row = 0, col = 0;
  double value = 1.0;
};

/// The common case of an entry line, "i j v" with plain numbers, parsed in one pass without
/// tokenising. Returns false for anything unusual (comments, signs, out-of-range indices, odd
/// numbers, errors): parse_entry_checked then decides, so both accept exactly the same lines.
inline bool parse_entry_fast(std::string_view line, Field field, std::int64_t rows, std::int64_t cols, Entry& e) {
  const char* p = line.data();
  const char* const end = p + line.size();
  while (p != end && is_blank(*p)) ++p;
  std::int64_t index[2] = {0, 0};
  const std::int64_t limit[2] = {rows, cols};
  for (int i = 0; i < 2; ++i) {
    if (i > 0) {
      if (p == end || !is_blank(*p)) return false;
      while (p != end && is_blank(*p)) ++p;
    }
    const char* const start = p;
    std::int64_t v = 0;
    while (p != end && static_cast<unsigned>(*p - '0') <= 9 && p - start < 10) v = v * 10 + (*p++ - '0');
    if (p == start || v < 1 || v > limit[i]) return false;
    index[i] = v;
  }
  if (field != Field::pattern) {
    if (p == end || !is_blank(*p)) return false;
    while (p != end && is_blank(*p)) ++p;
    if (field == Field::real) {
#if CISPMV_HAS_FLOAT_CHARCONV
      const auto result = std::from_chars(p, end, e.value, std::chars_format::general);
      if (result.ec != std::errc() || !std::isfinite(e.value)) return false;
      p = result.ptr;
#else
      return false;
#endif
    } else {
      const bool negative = p != end && *p == '-';
      if (negative) ++p;
      const char* const start = p;
      std::int64_t v = 0;
      while (p != end && static_cast<unsigned>(*p - '0') <= 9 && p - start < 18) v = v * 10 + (*p++ - '0');
      if (p == start) return false;
      e.value = static_cast<double>(negative ? -v : v);
    }
  }
  if (p != end && !is_blank(*p)) return false;
  while (p != end && is_blank(*p)) ++p;
  if (p != end) return false;
  e.row = static_cast<int>(index[0] - 1);
  e.col = static_cast<int>(index[1] - 1);
  return true;
}

/// Parses an entry line token by token and throws ParseError naming what is wrong.
Entry parse_entry_checked(std::string_view line, std::size_t n, Field field, const SizeLine& size,
                          const std::string& path) {
  auto fail = [&](const std::string& what) { throw ParseError(path, n, what); };
  Tokens tokens(line);
  std::int64_t index[2] = {0, 0};
  const std::int64_t limit[2] = {size.rows, size.cols};
  const char* name[2] = {"row", "column"};
  for (int i = 0; i < 2; ++i) {
    const std::string_view token = tokens.next();
    if (token.empty()) fail("expected a " + std::string(name[i]) + " index, found the end of the line");
    bool out_of_range = false;
    if (!parse_int64(token, index[i], out_of_range) && !out_of_range) {
      fail("expected a " + std::string(name[i]) + " index (a positive integer), found " + quote(token));
    }
    if (out_of_range || index[i] < 1 || index[i] > limit[i]) {
      fail(std::string(name[i]) + " index " + std::string(token) + " is outside the allowed range [1, " +
           std::to_string(limit[i]) + "]");
    }
  }
  Entry e;
  if (field != Field::pattern) {
    const char* field_name = field == Field::real ? "real" : "integer";
    const std::string_view token = tokens.next();
    if (token.empty()) {
      fail(std::string("expected a ") + field_name + " value after the column index, found the end of the line");
    }
    if (field == Field::real) {
      bool overflow = false;
      if (!parse_double(token, e.value, overflow)) fail("expected a real value, found " + quote(token));
      if (overflow) fail("value " + quote(token) + " is out of the range of double");
      if (!std::isfinite(e.value)) fail("value " + quote(token) + " is not finite (NaN and Inf are not allowed)");
    } else {
      std::int64_t iv = 0;
      bool out_of_range = false;
      if (!parse_int64(token, iv, out_of_range)) {
        fail(out_of_range ? "integer value " + quote(token) + " is out of the range of int64"
                          : "expected an integer value, found " + quote(token));
      }
      e.value = static_cast<double>(iv);
    }
  }
  if (const std::string_view rest = tokens.rest(); !rest.empty()) {
    fail("unexpected text " + quote(rest) + " after the entry (expected the end of the line" +
         (field == Field::pattern ? ": a pattern file has no values)" : ")"));
  }
  e.row = static_cast<int>(index[0] - 1);
  e.col = static_cast<int>(index[1] - 1);
  return e;
}

/// Sorts every row by column and sums duplicates, compacting in place; returns the new nnz.
/// Duplicates are summed in their original order so that the result does not depend on the sort.
std::size_t sort_and_merge_rows(std::size_t* row_ptr, std::int64_t rows, int* col, double* val) {
  struct Keyed {
    int col;
    std::size_t pos;
    double val;
  };
  std::vector<Keyed> scratch;  // reused by every row that needs sorting
  std::size_t write = 0;
  for (std::int64_t r = 0; r < rows; ++r) {
    const std::size_t begin = row_ptr[r];
    const std::size_t end = row_ptr[r + 1];
    row_ptr[r] = write;
    bool canonical = true;
    for (std::size_t k = begin + 1; k < end && canonical; ++k) canonical = col[k - 1] < col[k];
    if (canonical) {
      if (write != begin) {
        std::memmove(col + write, col + begin, (end - begin) * sizeof(int));
        std::memmove(val + write, val + begin, (end - begin) * sizeof(double));
      }
      write += end - begin;
      continue;
    }
    scratch.clear();
    for (std::size_t k = begin; k < end; ++k) scratch.push_back({col[k], k, val[k]});
    std::sort(scratch.begin(), scratch.end(),
              [](const Keyed& a, const Keyed& b) { return a.col < b.col || (a.col == b.col && a.pos < b.pos); });
    for (std::size_t i = 0; i < scratch.size(); ++i) {
      if (i > 0 && scratch[i].col == scratch[i - 1].col) {
        val[write - 1] += scratch[i].val;
      } else {
        col[write] = scratch[i].col;
        val[write] = scratch[i].val;
        ++write;
      }
    }
  }
  row_ptr[rows] = write;
  return write;
}

/// A copy of A whose rows are sorted without duplicates, or A itself if it already is.
HostCsr canonical(const HostCsr& A) {
  bool sorted = true;
  for (int r = 0; r < A.num_rows && sorted; ++r) {
    for (std::size_t k = A.row_ptr(r) + 1; k < A.row_ptr(r + 1) && sorted; ++k)
      sorted = A.col_idx(k - 1) < A.col_idx(k);
  }
  if (sorted) return A;
  HostCsr B("cispmv::canonical", A.num_rows, A.num_cols, A.nnz());
  Kokkos::deep_copy(B.row_ptr, A.row_ptr);
  Kokkos::deep_copy(B.col_idx, A.col_idx);
  Kokkos::deep_copy(B.values, A.values);
  const std::size_t nnz = sort_and_merge_rows(B.row_ptr.data(), B.num_rows, B.col_idx.data(), B.values.data());
  if (nnz == B.nnz()) return B;
  HostCsr C("cispmv::canonical", A.num_rows, A.num_cols, nnz);
  Kokkos::deep_copy(C.row_ptr, B.row_ptr);
  std::copy_n(B.col_idx.data(), nnz, C.col_idx.data());
  std::copy_n(B.values.data(), nnz, C.values.data());
  return C;
}

/// Throws std::invalid_argument naming the first entry of a canonical A without an equal mirror.
void check_symmetric(const HostCsr& A, const std::string& path) {
  if (A.num_rows != A.num_cols) {
    throw std::invalid_argument("write_matrix_market('" + path + "', symmetric): the matrix is " +
                                std::to_string(A.num_rows) + " x " + std::to_string(A.num_cols) + ", not square");
  }
  for (int r = 0; r < A.num_rows; ++r) {
    for (std::size_t k = A.row_ptr(r); k < A.row_ptr(r + 1); ++k) {
      const int c = A.col_idx(k);
      if (c == r) continue;
      const int* first = A.col_idx.data() + A.row_ptr(c);
      const int* last = A.col_idx.data() + A.row_ptr(c + 1);
      const int* hit = std::lower_bound(first, last, r);
      const bool stored = hit != last && *hit == r;
      const double mirror = stored ? A.values(static_cast<std::size_t>(hit - A.col_idx.data())) : 0.0;
      if (stored && mirror == A.values(k)) continue;
      std::ostringstream os;
      os.precision(17);
      os << "A(" << r << ", " << c << ") = " << A.values(k) << " but A(" << c << ", " << r << ")";
      if (stored) {
        os << " = " << mirror;
      } else {
        os << " is not stored";
      }
      throw std::invalid_argument("write_matrix_market('" + path +
                                  "', symmetric): the matrix is not symmetric (0-based indices): " + os.str());
    }
  }
}

/// Buffered text output: formats into a large block and writes it with one fwrite.
class TextWriter {
 public:
  TextWriter(std::FILE* file, const std::string& path) : file_(file), path_(path), buffer_(new char[capacity]) {}

  void put(std::string_view s) {
    if (used_ + s.size() > capacity) flush();
    if (s.size() > capacity) {
      write(s.data(), s.size());
      return;
    }
    std::copy(s.begin(), s.end(), buffer_.get() + used_);
    used_ += s.size();
    flush_if_full();
  }
  void put(std::int64_t v) { used_ = offset(std::to_chars(buffer_.get() + used_, buffer_.get() + capacity, v).ptr); }
  void put(char c) {
    if (used_ >= capacity) flush();  // never taken (see block_size); keeps the bound local
    buffer_[used_++] = c;
    flush_if_full();
  }
  /// `%.17g`: the fewest significant digits with which every double reads back exactly.
  void put(double v) {
#if CISPMV_HAS_FLOAT_CHARCONV
    used_ =
        offset(std::to_chars(buffer_.get() + used_, buffer_.get() + capacity, v, std::chars_format::general, 17).ptr);
#else
    used_ += static_cast<std::size_t>(std::snprintf(buffer_.get() + used_, capacity - used_, "%.17g", v));
#endif
  }
  void flush() {
    write(buffer_.get(), used_);
    used_ = 0;
  }

 private:
  // A number is at most 24 characters and put(char) flushes once block_size is reached, so the
  // slack past block_size always holds the next number.
  static constexpr std::size_t block_size = std::size_t(1) << 22;
  static constexpr std::size_t max_line = std::size_t(1) << 24;
  static constexpr std::size_t capacity = block_size + 128;

  std::size_t offset(const char* p) const { return static_cast<std::size_t>(p - buffer_.get()); }
  void flush_if_full() {
    if (used_ >= block_size) flush();
  }
  void write(const char* data, std::size_t size) {
    if (size > 0 && std::fwrite(data, 1, size, file_) != size) {
      throw std::runtime_error("write_matrix_market: write error on '" + path_ + "': " + std::strerror(errno));
    }
  }

  std::FILE* file_;
  const std::string& path_;
  std::unique_ptr<char[]> buffer_;
  std::size_t used_ = 0;
};

/// The header, the size line and its line number: what the entries are checked against.
struct Preamble {
  Header header;
  SizeLine size;
  std::size_t size_line_number = 0;
};

/// Reads the header and the size line, and checks the announced sizes against the file's size
/// before anything is allocated.
Preamble read_preamble(LineReader& reader, const std::string& path, std::uint64_t file_size, bool size_known) {
  std::string_view line;
  if (!reader.next(line)) throw ParseError(path, 1, "empty file: expected a '%%MatrixMarket' header");
  Preamble p;
  p.header = parse_header(line, path);
  for (;;) {
    if (!reader.next(line)) {
      throw ParseError(path, reader.line_number() + 1,
                       "missing size line 'rows columns entries': the file ends after the header");
    }
    if (is_skippable(line)) continue;
    p.size_line_number = reader.line_number();
    p.size = parse_size_line(line, p.size_line_number, path);
    break;
  }
  if (p.header.symmetric && p.size.rows != p.size.cols) {
    throw ParseError(path, p.size_line_number,
                     "a symmetric matrix must be square, the size line says " + std::to_string(p.size.rows) + " x " +
                         std::to_string(p.size.cols));
  }
  // Every entry needs at least "i j\n" or "i j v\n": a larger count is a corrupt size line or a
  // truncated file, and must not turn into a huge allocation.
  const std::uint64_t min_entry_bytes = p.header.field == Field::pattern ? 4 : 6;
  if (size_known && static_cast<std::uint64_t>(p.size.entries) > (file_size + 1) / min_entry_bytes) {
    throw ParseError(path, p.size_line_number,
                     "the size line announces " + std::to_string(p.size.entries) + " entries but the file has only " +
                         std::to_string(file_size) + " bytes (at least " + std::to_string(min_entry_bytes) +
                         " per entry): truncated file?");
  }
  // What reading needs (row counts and offsets, the coordinates, the CSR with mirrored entries),
  // against the memory there is: a 60-byte file announcing 2^31 rows is refused here, not by a
  // failed allocation (and a stream, whose size is unknown, is bounded the same way).
  const double rows = static_cast<double>(p.size.rows) + 1, entries = static_cast<double>(p.size.entries);
  const double need = 2 * rows * sizeof(std::size_t) + entries * (2 * sizeof(int) + sizeof(double)) +
                      (p.header.symmetric ? 2 : 1) * entries * (sizeof(int) + sizeof(double));
  const double have = static_cast<double>(host_available_bytes());
  if (need > 0.9 * have) {
    throw ParseError(path, p.size_line_number,
                     "the size line announces " + std::to_string(p.size.rows) + " x " + std::to_string(p.size.cols) +
                         " with " + std::to_string(p.size.entries) + " entries: reading it needs about " +
                         format_bytes(need) + ", " + format_bytes(have) + " of memory are available");
  }
  return p;
}

/// The entries in file order, and how many each row will hold (mirrored entries included).
struct Coordinates {
  std::unique_ptr<int[]> row, col;
  std::unique_ptr<double[]> value;     ///< null for pattern files (every value 1)
  std::vector<std::size_t> row_count;  ///< row_count[r + 1]: entries of row r
  std::size_t entries = 0;
  std::size_t mirrored = 0;  ///< off-diagonal entries of a symmetric file, stored twice
};

/// Reads exactly the announced entries; fewer or more throw ParseError naming the line.
Coordinates read_entries(LineReader& reader, const Preamble& p, const std::string& path) {
  Coordinates c;
  c.entries = static_cast<std::size_t>(p.size.entries);
  c.row.reset(new int[c.entries]);
  c.col.reset(new int[c.entries]);
  if (p.header.field != Field::pattern) c.value.reset(new double[c.entries]);
  c.row_count.assign(static_cast<std::size_t>(p.size.rows) + 1, 0);
  std::size_t count = 0;
  std::string_view line;
  while (reader.next(line)) {
    Entry e;
    if (!parse_entry_fast(line, p.header.field, p.size.rows, p.size.cols, e)) {
      if (is_skippable(line)) continue;
      e = parse_entry_checked(line, reader.line_number(), p.header.field, p.size, path);
    }
    if (count == c.entries) {
      throw ParseError(path, reader.line_number(),
                       "more entries than the " + std::to_string(c.entries) + " announced on line " +
                           std::to_string(p.size_line_number) + " (found " + quote(line) + ")");
    }
    c.row[count] = e.row;
    c.col[count] = e.col;
    if (c.value) c.value[count] = e.value;
    ++c.row_count[static_cast<std::size_t>(e.row) + 1];
    if (p.header.symmetric && e.row != e.col) {
      ++c.row_count[static_cast<std::size_t>(e.col) + 1];
      ++c.mirrored;
    }
    ++count;
  }
  if (count < c.entries) {
    throw ParseError(path, reader.line_number() + 1,
                     "the file ends after " + std::to_string(count) + " of the " + std::to_string(c.entries) +
                         " entries announced on line " + std::to_string(p.size_line_number) + " (truncated file?)");
  }
  return c;
}

/// Counting sort into CSR, directly in the result's arrays: the row counts become row_ptr, then a
/// cursor per row scatters the entries in file order (so duplicates are summed in file order); rows
/// are then sorted and duplicates merged. Frees the coordinates as soon as they are scattered.
HostCsr coordinates_to_csr(Coordinates c, const Preamble& p) {
  const std::size_t total = c.entries + c.mirrored;
  HostCsr A("cispmv::read_matrix_market", static_cast<int>(p.size.rows), static_cast<int>(p.size.cols), total);
  std::size_t* row_ptr = A.row_ptr.data();
  int* col = A.col_idx.data();
  double* val = A.values.data();
  std::vector<std::size_t>& cursor = c.row_count;
  for (std::size_t r = 0; r < static_cast<std::size_t>(p.size.rows); ++r) cursor[r + 1] += cursor[r];
  std::copy(cursor.begin(), cursor.end(), row_ptr);  // cursor(r) == row_ptr(r) from here
  for (std::size_t k = 0; k < c.entries; ++k) {
    const int r = c.row[k];
    const int cc = c.col[k];
    const double v = c.value ? c.value[k] : 1.0;
    std::size_t at = cursor[static_cast<std::size_t>(r)]++;
    col[at] = cc;
    val[at] = v;
    if (p.header.symmetric && r != cc) {
      at = cursor[static_cast<std::size_t>(cc)]++;
      col[at] = r;
      val[at] = v;
    }
  }
  c.row.reset();
  c.col.reset();
  c.value.reset();
  const std::size_t nnz = sort_and_merge_rows(row_ptr, p.size.rows, col, val);
  if (nnz == total) return A;
  // Duplicates were merged: shrink to the exact size, as nnz() is the extent of the arrays.
  HostCsr B("cispmv::read_matrix_market", A.num_rows, A.num_cols, nnz);
  Kokkos::deep_copy(B.row_ptr, A.row_ptr);
  std::copy_n(col, nnz, B.col_idx.data());
  std::copy_n(val, nnz, B.values.data());
  return B;
}

}  // namespace

HostCsr read_matrix_market(const std::string& path) {
  FilePtr file = open_file(path, "rb", "read_matrix_market");
  std::error_code ec;
  const auto file_size = static_cast<std::uint64_t>(std::filesystem::file_size(path, ec));
  LineReader reader(file.get(), path, ec ? 0 : file_size);
  const Preamble preamble = read_preamble(reader, path, file_size, !ec);
  Coordinates coordinates = read_entries(reader, preamble, path);
  file.reset();
  return coordinates_to_csr(std::move(coordinates), preamble);
}

void write_matrix_market(const std::string& path, const HostCsr& A, bool symmetric) {
  validate(A);
  const HostCsr B = symmetric ? canonical(A) : A;
  if (symmetric) check_symmetric(B, path);
  std::size_t entries = 0;
  if (symmetric) {
    for (int r = 0; r < B.num_rows; ++r) {
      for (std::size_t k = B.row_ptr(r); k < B.row_ptr(r + 1); ++k) entries += B.col_idx(k) <= r;
    }
  } else {
    entries = B.nnz();
  }

  impl::OutputFile file(path, "write_matrix_market");  // the old file stays until this one is complete
  TextWriter out(file.get(), path);
  out.put(symmetric ? "%%MatrixMarket matrix coordinate real symmetric\n"
                    : "%%MatrixMarket matrix coordinate real general\n");
  out.put("% written by cispmv\n");
  out.put(static_cast<std::int64_t>(B.num_rows));
  out.put(' ');
  out.put(static_cast<std::int64_t>(B.num_cols));
  out.put(' ');
  out.put(static_cast<std::int64_t>(entries));
  out.put('\n');
  for (int r = 0; r < B.num_rows; ++r) {
    for (std::size_t k = B.row_ptr(r); k < B.row_ptr(r + 1); ++k) {
      const int c = B.col_idx(k);
      if (symmetric && c > r) continue;
      out.put(static_cast<std::int64_t>(r) + 1);
      out.put(' ');
      out.put(static_cast<std::int64_t>(c) + 1);
      out.put(' ');
      out.put(B.values(k));
      out.put('\n');
    }
  }
  out.flush();
  file.commit();
}

}  // namespace cispmv
