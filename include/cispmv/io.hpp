#pragma once
/// \file io.hpp
/// Reading and writing CSR matrices: Matrix Market text files (`.mtx`) and the cispmv binary
/// format (`.cispmv`) for matrices too large for text (10^9 nonzeros are 12 GB in binary and about
/// 31 GB in Matrix Market, which also takes minutes to parse).
///
/// All functions work on `HostCsr` (double values, int column indices, std::size_t row offsets).
/// Readers return matrices whose rows are sorted by column without duplicates and that pass
/// cispmv::validate. Malformed or corrupt files throw cispmv::ParseError; files that cannot be
/// opened, read or written throw std::runtime_error; arguments that make no sense (a non-symmetric
/// matrix written as symmetric, an unknown extension) throw std::invalid_argument.

#include "cispmv/errors.hpp"
#include "cispmv/formats/csr.hpp"

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace cispmv {

// ------------------------------------------------------------------------------ Matrix Market

/// Reads a Matrix Market file: `%%MatrixMarket matrix coordinate real|integer|pattern
/// general|symmetric`.
///
/// Indices are 1-based; `%` comment lines and blank lines may appear anywhere after the header;
/// pattern entries get the value 1.0; in a symmetric file every off-diagonal entry (i, j) also
/// stands for (j, i) (entries above the diagonal are accepted and mirrored the same way);
/// duplicate entries are summed. Rows and columns must fit in int (at most 2^31 - 1).
/// The file is read once into coordinate arrays of the announced size and then sorted into CSR by
/// counting, O(nnz) with no per-entry allocation. Every malformed line throws ParseError naming
/// the line and what was expected; nothing is skipped or truncated silently.
HostCsr read_matrix_market(const std::string& path);

/// Writes `A` as `%%MatrixMarket matrix coordinate real general` (or `symmetric`), values printed
/// as `%.17g` so that reading the file back gives the same doubles bit for bit.
///
/// With `symmetric = true` only the lower triangle is written; `A` must then be square and
/// exactly symmetric (same pattern, bit-identical values), else std::invalid_argument names the
/// first entry without its mirror.
void write_matrix_market(const std::string& path, const HostCsr& A, bool symmetric = false);

// ------------------------------------------------------------------------------ binary format

/// File extension of the cispmv binary format.
inline constexpr const char* binary_extension = ".cispmv";

/// Writes `A` in the cispmv binary format (extension `.cispmv`).
///
/// Layout (all integers in the byte order of the writing machine, which the reader checks):
/// \code
///   offset  bytes  field
///        0      8  magic "\x89CISPMV\n" (non-ASCII first byte and a newline: text-mode
///                  transfers and text tools damage it detectably)
///        8      4  format version (uint32) = 1
///       12      4  byte-order marker 0x01020304 (uint32)
///       16      1  sizeof(value) = 8 (IEEE 754 binary64)
///       17      1  sizeof(ordinal) = 4 (column index, int32)
///       18      1  sizeof(offset) = 8 (row offset, uint64)
///       19      5  reserved, zero
///       24      8  rows (int64)
///       32      8  cols (int64)
///       40      8  nnz (int64)
///       48      8  XXH64 checksum of the row_ptr bytes
///       56      8  XXH64 checksum of the col_idx bytes (without padding)
///       64      8  XXH64 checksum of the values bytes
///       72      8  XXH64 checksum of header bytes 0..71
///       80         row_ptr: (rows + 1) x uint64
///                  col_idx: nnz x int32, zero-padded to a multiple of 8 bytes
///                  values:  nnz x float64
/// \endcode
/// The file size is therefore exactly determined by the header, which lets the reader reject a
/// truncated or corrupt file before allocating anything. XXH64 is the public xxHash64 algorithm,
/// implemented in this library.
void write_binary(const std::string& path, const HostCsr& A);

/// Reads a file written by write_binary and runs cispmv::validate on the result.
///
/// Throws ParseError naming the file and the problem for a bad magic, an unknown version, the
/// other byte order, type sizes other than 8/4/8, a header checksum mismatch, sizes that do not
/// match the file length (truncated or trailing data; checked before any allocation), an array
/// checksum mismatch, or an invalid CSR structure.
HostCsr read_binary(const std::string& path);

/// Reads either format: the file's first bytes decide (binary magic or `%%MatrixMarket`); where
/// they match neither, the extension (`.mtx`, `.cispmv`) picks the reader that reports the error.
HostCsr read_matrix(const std::string& path);

/// Writes `A` in the format named by the extension of `path`: `.mtx` (Matrix Market, general) or
/// `.cispmv` (binary); any other extension throws std::invalid_argument.
void write_matrix(const std::string& path, const HostCsr& A);

/// The XXH64 hash (xxHash, 64-bit variant) of `size` bytes, as stored in the binary format's
/// header; exposed for tests and tools that verify files.
std::uint64_t xxhash64(const void* data, std::size_t size, std::uint64_t seed = 0) noexcept;

}  // namespace cispmv
