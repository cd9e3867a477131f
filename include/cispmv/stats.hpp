#pragma once
/// \file stats.hpp
/// The paper's reports: matrix statistics (Tables 3 and 4); with memory_model.hpp and each format's
/// paper_model_bytes, its memory footprints (Table 5); and the bytes an SpMV moves.

#include "cispmv/convert.hpp"
#include "cispmv/formats/csr.hpp"
#include "cispmv/memory_model.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace cispmv {

/// Structure of a matrix split at BOUNDARY (paper, Tables 3 and 4).
struct MatrixStats {
  std::int64_t rows = 0, cols = 0;
  std::size_t nnz = 0;
  std::int64_t boundary = 0;
  std::size_t reference_nnz = 0;  ///< nonzeros in the reference region (hybrid ELLPACK part)
  std::size_t expansion_nnz = 0;  ///< nonzeros in the expansion region (hybrid CSR part)
  std::int64_t min_row_length = 0;
  double mean_row_length = 0;
  std::int64_t longest_row_length = 0;  ///< "Length of the longest non-zero row"
  std::int64_t longest_row = -1;        ///< its index ("Row No."; the first such row)
  std::int64_t empty_rows = 0;
  std::int64_t rows_over_boundary = 0;  ///< rows with a non-empty expansion region
  double reference_width = 0;           ///< columns the reference region is taken to span
  double reference_sparsity = 0;        ///< 1 - reference_nnz / (rows * reference_width)  (Table 4)
  double expansion_sparsity = 0;        ///< 1 - expansion_nnz / (rows * (cols - reference_width))
  double total_sparsity = 0;            ///< 1 - nnz / (rows * cols)
};

/// Region sparsities as the paper computes them (Table 4): the reference region spans
/// `reference_width` columns (the paper uses 10% of the columns, 3276.8 for 32,768, not rounded).
inline void set_region_sparsity(MatrixStats& s, double reference_width) {
  const double rows = static_cast<double>(s.rows);
  s.reference_width = reference_width;
  s.reference_sparsity = reference_width > 0 ? 1.0 - s.reference_nnz / (rows * reference_width) : 0.0;
  const double expansion_width = static_cast<double>(s.cols) - reference_width;
  s.expansion_sparsity = expansion_width > 0 ? 1.0 - s.expansion_nnz / (rows * expansion_width) : 0.0;
  s.total_sparsity = s.rows > 0 && s.cols > 0 ? 1.0 - s.nnz / (rows * static_cast<double>(s.cols)) : 0.0;
}

/// Statistics of A split at `boundary` (the first `boundary` nonzeros of a row are the reference
/// region), with the region sparsities computed over `reference_width` columns.
template <class Scalar, class Ordinal, class Offset, class Device>
MatrixStats compute_stats(const CsrMatrix<Scalar, Ordinal, Offset, Device>& A, Ordinal boundary,
                          double reference_width) {
  MatrixStats s;
  s.rows = A.num_rows;
  s.cols = A.num_cols;
  s.nnz = A.nnz();
  s.boundary = boundary;
  s.min_row_length = A.num_rows > 0 ? static_cast<std::int64_t>(A.nnz()) : 0;
  for (Ordinal r = 0; r < A.num_rows; ++r) {
    const auto len = static_cast<std::int64_t>(A.row_ptr(r + 1) - A.row_ptr(r));
    const auto in_ref = std::min<std::int64_t>(len, boundary);
    s.reference_nnz += static_cast<std::size_t>(in_ref);
    s.expansion_nnz += static_cast<std::size_t>(len - in_ref);
    s.min_row_length = std::min(s.min_row_length, len);
    if (len > s.longest_row_length || s.longest_row < 0) {
      s.longest_row_length = len;
      s.longest_row = r;
    }
    s.empty_rows += len == 0;
    s.rows_over_boundary += len > boundary;
  }
  s.mean_row_length = A.num_rows > 0 ? static_cast<double>(A.nnz()) / A.num_rows : 0.0;
  set_region_sparsity(s, reference_width);
  return s;
}

// ------------------------------------------------------------------------------------ traffic
/// Bytes one y = A*x must move through memory at the least, the numerator of every GB/s that
/// cispmv reports (CLI and perf/): all of the format's arrays read once (allocated_bytes, padding
/// included, since a kernel cannot skip what its layout interleaves), x read once and y written
/// once. Re-reads of x (cached or not) are not counted, so GB/s over the copy bandwidth is the
/// fraction of the memory-bound floor reached.
template <class Matrix>
double spmv_traffic_bytes(const Matrix& A) {
  using value_type = typename Matrix::value_type;
  return static_cast<double>(allocated_bytes(A)) +
         static_cast<double>(sizeof(value_type)) * (static_cast<double>(A.num_cols) + A.num_rows);
}

}  // namespace cispmv
