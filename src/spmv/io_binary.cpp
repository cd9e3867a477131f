/// \file io_binary.cpp
/// The cispmv binary format (layout in cispmv/io.hpp), the XXH64 checksum, and the readers and
/// writers that choose a format by file content or extension.

#include "cispmv/io.hpp"
#include "cispmv/memory_budget.hpp"
#include "file_handle.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <limits>
#include <memory>
#include <sstream>
#include <string>
#include <system_error>

namespace cispmv {

// ------------------------------------------------------------------------------ XXH64
// The public xxHash64 algorithm (Yann Collet), written from its specification: four independent
// 64-bit lanes over 32-byte stripes, so it runs at memory speed (a 12 GB file must not spend a
// minute in its checksum, as byte-wise FNV-1a would).

namespace {

constexpr std::uint64_t prime1 = 0x9E3779B185EBCA87ULL;
constexpr std::uint64_t prime2 = 0xC2B2AE3D27D4EB4FULL;
constexpr std::uint64_t prime3 = 0x165667B19E3779F9ULL;
constexpr std::uint64_t prime4 = 0x85EBCA77C2B2AE63ULL;
constexpr std::uint64_t prime5 = 0x27D4EB2F165667C5ULL;

inline std::uint64_t rotl(std::uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

// Little-endian loads: the checksum of the same bytes is the same on every machine.
// Written as one OR of shifted bytes, which compilers turn into a single load on little-endian CPUs.
inline std::uint64_t load64(const unsigned char* p) {
  return std::uint64_t(p[0]) | std::uint64_t(p[1]) << 8 | std::uint64_t(p[2]) << 16 | std::uint64_t(p[3]) << 24 |
         std::uint64_t(p[4]) << 32 | std::uint64_t(p[5]) << 40 | std::uint64_t(p[6]) << 48 | std::uint64_t(p[7]) << 56;
}
inline std::uint64_t load32(const unsigned char* p) {
  return std::uint64_t(p[0]) | std::uint64_t(p[1]) << 8 | std::uint64_t(p[2]) << 16 | std::uint64_t(p[3]) << 24;
}

inline std::uint64_t xxh_round(std::uint64_t acc, std::uint64_t input) {
  acc += input * prime2;
  acc = rotl(acc, 31);
  return acc * prime1;
}

inline std::uint64_t xxh_merge(std::uint64_t acc, std::uint64_t lane) {
  acc ^= xxh_round(0, lane);
  return acc * prime1 + prime4;
}

}  // namespace

std::uint64_t xxhash64(const void* data, std::size_t size, std::uint64_t seed) noexcept {
  const auto* p = static_cast<const unsigned char*>(data);
  const unsigned char* const end = p + size;
  std::uint64_t h;
  if (size >= 32) {
    std::uint64_t v1 = seed + prime1 + prime2;
    std::uint64_t v2 = seed + prime2;
    std::uint64_t v3 = seed;
    std::uint64_t v4 = seed - prime1;
    const unsigned char* const limit = end - 32;
    do {
      v1 = xxh_round(v1, load64(p));
      v2 = xxh_round(v2, load64(p + 8));
      v3 = xxh_round(v3, load64(p + 16));
      v4 = xxh_round(v4, load64(p + 24));
      p += 32;
    } while (p <= limit);
    h = rotl(v1, 1) + rotl(v2, 7) + rotl(v3, 12) + rotl(v4, 18);
    h = xxh_merge(h, v1);
    h = xxh_merge(h, v2);
    h = xxh_merge(h, v3);
    h = xxh_merge(h, v4);
  } else {
    h = seed + prime5;
  }
  h += static_cast<std::uint64_t>(size);
  while (p + 8 <= end) {
    h ^= xxh_round(0, load64(p));
    h = rotl(h, 27) * prime1 + prime4;
    p += 8;
  }
  if (p + 4 <= end) {
    h ^= load32(p) * prime1;
    h = rotl(h, 23) * prime2 + prime3;
    p += 4;
  }
  while (p < end) {
    h ^= (*p) * prime5;
    h = rotl(h, 11) * prime1;
    ++p;
  }
  h ^= h >> 33;
  h *= prime2;
  h ^= h >> 29;
  h *= prime3;
  h ^= h >> 32;
  return h;
}

// ------------------------------------------------------------------------------ binary format

namespace {

static_assert(sizeof(std::size_t) == 8, "the cispmv binary format stores 64-bit row offsets");

constexpr unsigned char magic[8] = {0x89, 'C', 'I', 'S', 'P', 'M', 'V', '\n'};
constexpr std::uint32_t format_version = 1;
constexpr std::uint32_t byte_order_marker = 0x01020304;
constexpr std::uint32_t swapped_byte_order_marker = 0x04030201;
constexpr std::size_t header_bytes = 80;
constexpr std::size_t checksummed_header_bytes = 72;
// Arrays move in blocks of this size: large enough for full disk speed, small enough that an
// error is reported close to where it happened.
constexpr std::size_t io_block = std::size_t(1) << 26;

using impl::FilePtr;
using impl::open_file;

template <class T>
void put(unsigned char* header, std::size_t offset, T value) {
  std::memcpy(header + offset, &value, sizeof(T));
}
template <class T>
T get(const unsigned char* header, std::size_t offset) {
  T value;
  std::memcpy(&value, header + offset, sizeof(T));
  return value;
}

std::string hex(std::uint64_t v) {
  std::ostringstream os;
  os << "0x" << std::hex << v;
  return os.str();
}

std::size_t padding_after_col_idx(std::size_t nnz) {
  return (nnz * sizeof(int)) % 8 == 0 ? 0 : 8 - (nnz * sizeof(int)) % 8;
}

void write_block(std::FILE* f, const void* data, std::size_t bytes, const std::string& path) {
  const auto* p = static_cast<const unsigned char*>(data);
  while (bytes > 0) {
    const std::size_t n = std::min(bytes, io_block);
    if (std::fwrite(p, 1, n, f) != n) {
      throw std::runtime_error("write_binary: write error on '" + path + "': " + std::strerror(errno));
    }
    p += n;
    bytes -= n;
  }
}

void read_block(std::FILE* f, void* data, std::size_t bytes, const std::string& path, const char* what) {
  auto* p = static_cast<unsigned char*>(data);
  while (bytes > 0) {
    const std::size_t n = std::min(bytes, io_block);
    if (std::fread(p, 1, n, f) != n) {
      throw ParseError(path, 0, std::string("truncated file: the data ends inside ") + what);
    }
    p += n;
    bytes -= n;
  }
}

bool has_binary_magic(const unsigned char* bytes, std::size_t n) {
  return n >= sizeof(magic) && std::memcmp(bytes, magic, sizeof(magic)) == 0;
}

std::string lower_extension(const std::string& path) {
  std::string ext = std::filesystem::path(path).extension().string();
  for (char& c : ext) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  return ext;
}

}  // namespace

void write_binary(const std::string& path, const HostCsr& A) {
  validate(A);
  const std::size_t rows = static_cast<std::size_t>(A.num_rows);
  const std::size_t nnz = A.nnz();
  const std::size_t row_ptr_bytes = (rows + 1) * sizeof(std::size_t);
  const std::size_t col_bytes = nnz * sizeof(int);
  const std::size_t val_bytes = nnz * sizeof(double);

  unsigned char header[header_bytes] = {};
  std::memcpy(header, magic, sizeof(magic));
  put<std::uint32_t>(header, 8, format_version);
  put<std::uint32_t>(header, 12, byte_order_marker);
  header[16] = sizeof(double);
  header[17] = sizeof(int);
  header[18] = sizeof(std::size_t);
  put<std::int64_t>(header, 24, A.num_rows);
  put<std::int64_t>(header, 32, A.num_cols);
  put<std::int64_t>(header, 40, static_cast<std::int64_t>(nnz));
  put<std::uint64_t>(header, 48, xxhash64(A.row_ptr.data(), row_ptr_bytes));
  put<std::uint64_t>(header, 56, xxhash64(A.col_idx.data(), col_bytes));
  put<std::uint64_t>(header, 64, xxhash64(A.values.data(), val_bytes));
  put<std::uint64_t>(header, 72, xxhash64(header, checksummed_header_bytes));

  impl::OutputFile file(path, "write_binary");  // the old file stays until this one is complete
  write_block(file.get(), header, header_bytes, path);
  write_block(file.get(), A.row_ptr.data(), row_ptr_bytes, path);
  write_block(file.get(), A.col_idx.data(), col_bytes, path);
  const unsigned char zeros[8] = {};
  write_block(file.get(), zeros, padding_after_col_idx(nnz), path);
  write_block(file.get(), A.values.data(), val_bytes, path);
  file.commit();
}

HostCsr read_binary(const std::string& path) {
  FilePtr file = open_file(path, "rb", "read_binary");
  std::error_code ec;
  const auto file_size = static_cast<std::uint64_t>(std::filesystem::file_size(path, ec));
  if (ec) throw std::runtime_error("read_binary: cannot get the size of '" + path + "': " + ec.message());
  auto fail = [&](const std::string& what) { throw ParseError(path, 0, what); };

  unsigned char header[header_bytes] = {};
  const std::size_t got = std::fread(header, 1, header_bytes, file.get());
  if (got >= sizeof(magic) && !has_binary_magic(header, got)) {
    fail("not a cispmv binary file: bad magic bytes (expected \\x89CISPMV\\n)");
  }
  if (got < header_bytes) {
    fail("truncated file: " + std::to_string(file_size) + " bytes, shorter than the " + std::to_string(header_bytes) +
         "-byte header");
  }
  const auto version = get<std::uint32_t>(header, 8);
  if (version != format_version) {
    fail("unsupported format version " + std::to_string(version) + " (this build reads version " +
         std::to_string(format_version) + ")");
  }
  const auto marker = get<std::uint32_t>(header, 12);
  if (marker == swapped_byte_order_marker) {
    fail("the file was written on a machine of the opposite byte order; byte swapping is not supported");
  }
  if (marker != byte_order_marker) fail("corrupt header: bad byte-order marker " + hex(marker));
  const auto stored_header_sum = get<std::uint64_t>(header, 72);
  const auto header_sum = xxhash64(header, checksummed_header_bytes);
  if (stored_header_sum != header_sum) {
    fail("corrupt header: checksum mismatch (stored " + hex(stored_header_sum) + ", computed " + hex(header_sum) + ")");
  }
  if (header[16] != sizeof(double) || header[17] != sizeof(int) || header[18] != sizeof(std::size_t)) {
    fail("type sizes value/ordinal/offset = " + std::to_string(header[16]) + "/" + std::to_string(header[17]) + "/" +
         std::to_string(header[18]) + " bytes differ from this build's " + std::to_string(sizeof(double)) + "/" +
         std::to_string(sizeof(int)) + "/" + std::to_string(sizeof(std::size_t)));
  }
  for (std::size_t b = 19; b < 24; ++b) {
    if (header[b] != 0) fail("corrupt header: reserved byte " + std::to_string(b) + " is not zero");
  }
  const auto rows = get<std::int64_t>(header, 24);
  const auto cols = get<std::int64_t>(header, 32);
  const auto nnz = get<std::int64_t>(header, 40);
  constexpr std::int64_t max_ordinal = std::numeric_limits<int>::max();
  if (rows < 0 || rows > max_ordinal || cols < 0 || cols > max_ordinal || nnz < 0) {
    fail("corrupt header: rows = " + std::to_string(rows) + ", cols = " + std::to_string(cols) +
         ", nnz = " + std::to_string(nnz) + " (rows and cols must lie in [0, 2^31 - 1])");
  }
  // The header determines the file size exactly; compare before allocating (nnz is first bounded
  // by the file size so that the products below cannot overflow).
  const auto unsigned_rows = static_cast<std::uint64_t>(rows);
  const auto unsigned_nnz = static_cast<std::uint64_t>(nnz);
  std::uint64_t expected = 0;
  if (unsigned_nnz <= file_size / (sizeof(int) + sizeof(double))) {
    expected = header_bytes + (unsigned_rows + 1) * sizeof(std::size_t) + unsigned_nnz * sizeof(int) +
               padding_after_col_idx(static_cast<std::size_t>(nnz)) + unsigned_nnz * sizeof(double);
  }
  if (expected == 0 || file_size < expected) {
    fail("truncated file: the header announces " + std::to_string(rows) + " x " + std::to_string(cols) + " with " +
         std::to_string(nnz) + " nonzeros" +
         (expected > 0 ? " (" + std::to_string(expected) + " bytes)" : std::string()) + " but the file has " +
         std::to_string(file_size) + " bytes");
  }
  if (file_size > expected) {
    fail("unexpected data after the matrix: the file has " + std::to_string(file_size) +
         " bytes, the header accounts for " + std::to_string(expected));
  }

  HostCsr A("cispmv::read_binary", static_cast<int>(rows), static_cast<int>(cols), static_cast<std::size_t>(nnz));
  const std::size_t row_ptr_bytes = (static_cast<std::size_t>(rows) + 1) * sizeof(std::size_t);
  const std::size_t col_bytes = static_cast<std::size_t>(nnz) * sizeof(int);
  const std::size_t val_bytes = static_cast<std::size_t>(nnz) * sizeof(double);
  unsigned char padding[8];
  read_block(file.get(), A.row_ptr.data(), row_ptr_bytes, path, "row_ptr");
  read_block(file.get(), A.col_idx.data(), col_bytes, path, "col_idx");
  read_block(file.get(), padding, padding_after_col_idx(static_cast<std::size_t>(nnz)), path, "col_idx padding");
  read_block(file.get(), A.values.data(), val_bytes, path, "values");
  file.reset();

  const struct {
    const char* name;
    const void* data;
    std::size_t bytes;
    std::size_t offset;
  } arrays[3] = {{"row_ptr", A.row_ptr.data(), row_ptr_bytes, 48},
                 {"col_idx", A.col_idx.data(), col_bytes, 56},
                 {"values", A.values.data(), val_bytes, 64}};
  for (const auto& a : arrays) {
    const auto stored = get<std::uint64_t>(header, a.offset);
    const auto computed = xxhash64(a.data, a.bytes);
    if (stored != computed) {
      fail(std::string("checksum mismatch in ") + a.name + ": the file is corrupt (stored " + hex(stored) +
           ", computed " + hex(computed) + ")");
    }
  }
  for (std::size_t b = 0; b < padding_after_col_idx(static_cast<std::size_t>(nnz)); ++b) {
    if (padding[b] != 0) fail("corrupt file: the padding after col_idx is not zero");
  }
  try {
    validate(A);
  } catch (const std::invalid_argument& e) {
    fail(std::string("invalid CSR structure: ") + e.what());
  }
  // what the format promises beyond CSR's invariants: rows sorted by column without duplicates, and
  // finite values (a round trip through Matrix Market would otherwise change the matrix)
  for (int r = 0; r < A.num_rows; ++r) {
    for (std::size_t k = A.row_ptr(r); k < A.row_ptr(r + 1); ++k) {
      if (k > A.row_ptr(r) && A.col_idx(k) <= A.col_idx(k - 1)) {
        fail("invalid CSR structure: row " + std::to_string(r) +
             " is not sorted by column without duplicates (column " + std::to_string(A.col_idx(k)) + " after " +
             std::to_string(A.col_idx(k - 1)) + ")");
      }
      if (!std::isfinite(A.values(k))) {
        fail("value " + std::to_string(A.values(k)) + " in row " + std::to_string(r) + ", column " +
             std::to_string(A.col_idx(k)) + " is not finite");
      }
    }
  }
  return A;
}

namespace {

/// Whether the first `n` bytes start with the Matrix Market banner (case-insensitive).
bool has_matrix_market_banner(const unsigned char* bytes, std::size_t n) {
  static const char banner[] = "%%matrixmarket";
  if (n < sizeof(banner) - 1) return false;
  for (std::size_t i = 0; i + 1 < sizeof(banner); ++i) {
    if (std::tolower(bytes[i]) != banner[i]) return false;
  }
  return true;
}

/// A pipe, FIFO or character device (`cat m.mtx | cispmv stats /dev/stdin`) can be read once only:
/// its bytes are copied, in one pass, into a temporary file that the readers then read like any
/// other (and which is removed afterwards). The first bytes must already say Matrix Market or cispmv
/// binary, and the copy stops at the memory a matrix could use, so /dev/zero is refused at once.
class StreamCopy {
 public:
  explicit StreamCopy(const std::string& path) {
    FilePtr in = open_file(path, "rb", "read_matrix");
    const char* tmpdir = std::getenv("TMPDIR");
    std::string pattern = std::string(tmpdir != nullptr && *tmpdir != '\0' ? tmpdir : "/tmp") + "/cispmv-stream-XXXXXX";
    const int fd = ::mkstemp(pattern.data());
    if (fd < 0) throw std::runtime_error("read_matrix: cannot create a temporary file for the stream '" + path + "'");
    path_ = pattern;
    FilePtr out(::fdopen(fd, "wb"));
    if (!out) {
      ::close(fd);
      throw std::runtime_error("read_matrix: cannot open a temporary file for the stream '" + path + "'");
    }
    const std::uint64_t limit = host_available_bytes();
    std::vector<unsigned char> block(std::size_t{1} << 20);
    std::uint64_t total = 0;
    for (;;) {
      const std::size_t n = std::fread(block.data(), 1, block.size(), in.get());
      if (total == 0 && n > 0) {
        if (!has_binary_magic(block.data(), n) && !has_matrix_market_banner(block.data(), n)) {
          throw ParseError(path, 0,
                           "a stream that starts with neither a Matrix Market header (%%MatrixMarket) nor the cispmv "
                           "binary magic");
        }
      }
      total += n;
      if (total > limit) {
        throw ParseError(path, 0,
                         "the stream is longer than the " + format_bytes(static_cast<double>(limit)) +
                             " of memory available for a matrix");
      }
      if (n > 0 && std::fwrite(block.data(), 1, n, out.get()) != n) {
        throw std::runtime_error("read_matrix: cannot write the temporary copy of '" + path +
                                 "': " + std::strerror(errno));
      }
      if (n < block.size()) break;
    }
    if (std::ferror(in.get())) throw std::runtime_error("read_matrix: read error on '" + path + "'");
    if (std::fclose(out.release()) != 0) {
      throw std::runtime_error("read_matrix: cannot write the temporary copy of '" + path + "'");
    }
  }
  StreamCopy(const StreamCopy&) = delete;
  StreamCopy& operator=(const StreamCopy&) = delete;
  ~StreamCopy() {
    if (!path_.empty()) std::remove(path_.c_str());
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace

HostCsr read_matrix(const std::string& path) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (!ec && std::filesystem::is_directory(status)) {
    throw std::runtime_error("read_matrix: '" + path + "' is a directory, not a matrix file");
  }
  if (!ec && std::filesystem::exists(status) && !std::filesystem::is_regular_file(status)) {
    const StreamCopy copy(path);
    try {
      return read_matrix(copy.path());
    } catch (const ParseError& e) {  // name the stream, not the temporary file
      throw ParseError(path, e.line(), e.problem());
    }
  }
  unsigned char first[14] = {};
  std::size_t got = 0;
  {
    FilePtr file = open_file(path, "rb", "read_matrix");
    got = std::fread(first, 1, sizeof(first), file.get());
  }
  if (has_binary_magic(first, got)) return read_binary(path);
  if (has_matrix_market_banner(first, got)) return read_matrix_market(path);
  const std::string ext = lower_extension(path);
  if (ext == ".mtx") return read_matrix_market(path);
  if (ext == binary_extension) return read_binary(path);
  throw ParseError(path, 0,
                   "unknown file format: neither a Matrix Market file (%%MatrixMarket header, .mtx) nor a cispmv "
                   "binary file (.cispmv)");
}

void write_matrix(const std::string& path, const HostCsr& A) {
  const std::string ext = lower_extension(path);
  if (ext == ".mtx") {
    write_matrix_market(path, A);
  } else if (ext == binary_extension) {
    write_binary(path, A);
  } else {
    throw std::invalid_argument("write_matrix('" + path + "'): unknown extension '" + ext +
                                "': use .mtx (Matrix Market) or .cispmv (binary)");
  }
}

}  // namespace cispmv
