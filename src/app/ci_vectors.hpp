#pragma once
// Ritz vectors on disk: `cispmv ci --save-vectors FILE` writes a solve's vectors (converged or not) and
// `--start-vectors FILE` starts a solve from them, so that a solve longer than one job continues in the next, or a
// neighbouring geometry's vectors start this one. The file, little-endian: 16 bytes "cispmv-vectors1\n", the rows
// and the vector count (int64 each), the count's total energies (double), then each vector's rows (double), in the
// space's determinant order. Bad files are refused before the space is built, naming the file and what is wrong.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace cispmv::app {

/// The header of a vector file, read and checked against the file's length.
struct VectorFile {
  std::string path;
  std::int64_t rows = 0, count = 0;
  std::vector<double> energies;  ///< total energies of the vectors, as the solve that wrote them reported
};

/// Opens and checks a vector file (its tag, sizes and length); throws std::invalid_argument naming the file.
VectorFile open_vector_file(const std::string& path);

/// Vector c of the file (rows values) into `values`; throws std::runtime_error where the file cannot be read.
void read_vector(const VectorFile& file, std::int64_t c, double* values);

/// Throws std::runtime_error unless `path` can be written (checked before a long solve, not after it).
void check_vector_file_writable(const std::string& path);

/// Writes `energies.size()` vectors of `rows` values to `path`: fill(c, first, n, out) puts rows first..first+n-1
/// of vector c into out (n <= the chunk it is given). Written to path + ".partial", renamed at the end: an existing
/// file is replaced only by a complete one. Returns the bytes written.
double write_vector_file(const std::string& path, std::int64_t rows, const std::vector<double>& energies,
                         const std::function<void(std::int64_t, std::int64_t, std::int64_t, double*)>& fill);

}  // namespace cispmv::app
