// The vector files of `cispmv ci --save-vectors / --start-vectors` (ci_vectors.hpp).
#include "ci_vectors.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <stdexcept>

namespace cispmv::app {

namespace {

constexpr char tag[16] = {'c', 'i', 's', 'p', 'm', 'v', '-', 'v', 'e', 'c', 't', 'o', 'r', 's', '1', '\n'};
constexpr std::int64_t chunk_rows = std::int64_t(1) << 24;  // 128 MiB of doubles a read or write

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};
using File = std::unique_ptr<std::FILE, FileCloser>;

std::int64_t header_bytes(std::int64_t count) {
  return static_cast<std::int64_t>(sizeof(tag)) + 2 * static_cast<std::int64_t>(sizeof(std::int64_t)) +
         count * static_cast<std::int64_t>(sizeof(double));
}

}  // namespace

VectorFile open_vector_file(const std::string& path) {
  File f(std::fopen(path.c_str(), "rb"));
  if (!f) throw std::invalid_argument("--start-vectors: cannot open " + path + ": " + std::strerror(errno));
  char got[sizeof(tag)] = {};
  VectorFile v;
  v.path = path;
  if (std::fread(got, 1, sizeof(got), f.get()) != sizeof(got) || std::memcmp(got, tag, sizeof(tag)) != 0) {
    throw std::invalid_argument("--start-vectors: " + path +
                                " is not a cispmv vector file (cispmv ci --save-vectors writes them)");
  }
  if (std::fread(&v.rows, sizeof(v.rows), 1, f.get()) != 1 || std::fread(&v.count, sizeof(v.count), 1, f.get()) != 1)
    throw std::invalid_argument("--start-vectors: " + path + " ends inside its header");
  constexpr std::int64_t most = std::int64_t(1) << 40;
  if (v.rows < 1 || v.rows > most || v.count < 1 || v.count > 10000) {
    throw std::invalid_argument("--start-vectors: " + path + " declares " + std::to_string(v.count) + " vectors of " +
                                std::to_string(v.rows) + " rows, which no cispmv space has");
  }
  v.energies.resize(static_cast<std::size_t>(v.count));
  if (std::fread(v.energies.data(), sizeof(double), v.energies.size(), f.get()) != v.energies.size())
    throw std::invalid_argument("--start-vectors: " + path + " ends inside its header");
  if (std::fseek(f.get(), 0, SEEK_END) != 0) throw std::invalid_argument("--start-vectors: cannot seek in " + path);
  const long long length = std::ftell(f.get());
  const long long expected = header_bytes(v.count) + v.count * v.rows * static_cast<std::int64_t>(sizeof(double));
  if (length != expected) {
    throw std::invalid_argument("--start-vectors: " + path + " has " + std::to_string(length) + " bytes; " +
                                std::to_string(v.count) + " vectors of " + std::to_string(v.rows) + " rows take " +
                                std::to_string(expected) + " (truncated or not written by cispmv)");
  }
  return v;
}

void read_vector(const VectorFile& file, std::int64_t c, double* values) {
  File f(std::fopen(file.path.c_str(), "rb"));
  const long long at = header_bytes(file.count) + c * file.rows * static_cast<std::int64_t>(sizeof(double));
  if (!f || std::fseek(f.get(), at, SEEK_SET) != 0)
    throw std::runtime_error("--start-vectors: cannot read " + file.path);
  for (std::int64_t first = 0; first < file.rows; first += chunk_rows) {
    const auto n = static_cast<std::size_t>(std::min(chunk_rows, file.rows - first));
    if (std::fread(values + first, sizeof(double), n, f.get()) != n)
      throw std::runtime_error("--start-vectors: " + file.path + " could not be read to its end");
  }
}

void check_vector_file_writable(const std::string& path) {
  const std::string partial = path + ".partial";
  File f(std::fopen(partial.c_str(), "wb"));
  if (!f) throw std::runtime_error("--save-vectors: cannot write " + partial + ": " + std::strerror(errno));
  f.reset();
  std::remove(partial.c_str());
}

double write_vector_file(const std::string& path, std::int64_t rows, const std::vector<double>& energies,
                         const std::function<void(std::int64_t, std::int64_t, std::int64_t, double*)>& fill) {
  const std::string partial = path + ".partial";
  const auto count = static_cast<std::int64_t>(energies.size());
  const auto fail = [&](const std::string& what) {
    const std::string why = std::strerror(errno);
    std::remove(partial.c_str());
    return std::runtime_error("--save-vectors: " + what + " " + partial + ": " + why + " (" + path +
                              " was left as it was)");
  };
  {
    File f(std::fopen(partial.c_str(), "wb"));
    if (!f) throw fail("cannot write");
    bool ok = std::fwrite(tag, 1, sizeof(tag), f.get()) == sizeof(tag) &&
              std::fwrite(&rows, sizeof(rows), 1, f.get()) == 1 &&
              std::fwrite(&count, sizeof(count), 1, f.get()) == 1 &&
              std::fwrite(energies.data(), sizeof(double), energies.size(), f.get()) == energies.size();
    std::vector<double> buffer(static_cast<std::size_t>(std::min(rows, chunk_rows)));
    for (std::int64_t c = 0; ok && c < count; ++c) {
      for (std::int64_t first = 0; ok && first < rows; first += chunk_rows) {
        const std::int64_t n = std::min(chunk_rows, rows - first);
        fill(c, first, n, buffer.data());
        ok = std::fwrite(buffer.data(), sizeof(double), static_cast<std::size_t>(n), f.get()) ==
             static_cast<std::size_t>(n);
      }
    }
    if (!ok || std::fflush(f.get()) != 0) throw fail("writing");
    if (std::fclose(f.release()) != 0) throw fail("closing");
  }
  if (std::rename(partial.c_str(), path.c_str()) != 0) throw fail("renaming");
  return static_cast<double>(header_bytes(count) + count * rows * static_cast<std::int64_t>(sizeof(double)));
}

}  // namespace cispmv::app
