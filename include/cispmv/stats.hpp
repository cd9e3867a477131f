#pragma once
/// \file stats.hpp
/// The paper's reports: matrix statistics (Tables 3 and 4) and memory footprints (Table 5).

#include "cispmv/convert.hpp"
#include "cispmv/csr.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace cispmv {

/// Structure of a matrix split at BOUNDARY (paper, Tables 3 and 4).
struct MatrixStats {
  std::int64_t rows = 0, cols = 0;
  std::size_t nnz = 0;
  std::int64_t boundary = 0;
  std::size_t ref_nnz = 0;  ///< nonzeros in the reference region (hybrid ELLPACK part)
  std::size_t exp_nnz = 0;  ///< nonzeros in the expansion region (hybrid CSR part)
  std::int64_t min_row_length = 0;
  double mean_row_length = 0;
  std::int64_t longest_row_length = 0;  ///< "Length of the longest non-zero row"
  std::int64_t longest_row = -1;        ///< its index ("Row No."; the first such row)
  std::int64_t empty_rows = 0;
  std::int64_t rows_over_boundary = 0;  ///< rows with a non-empty expansion region
  double reference_width = 0;           ///< columns the reference region is taken to span
  double ref_sparsity = 0;    ///< 1 - ref_nnz / (rows * reference_width)  (Table 4)
  double exp_sparsity = 0;    ///< 1 - exp_nnz / (rows * (cols - reference_width))
  double total_sparsity = 0;  ///< 1 - nnz / (rows * cols)
};

/// Region sparsities as the paper computes them (Table 4): the reference region spans
/// `reference_width` columns (the paper uses 10% of the columns, 3276.8 for 32,768, not rounded).
inline void set_region_sparsity(MatrixStats& s, double reference_width) {
  const double rows = static_cast<double>(s.rows);
  s.reference_width = reference_width;
  s.ref_sparsity = reference_width > 0 ? 1.0 - s.ref_nnz / (rows * reference_width) : 0.0;
  const double exp_width = static_cast<double>(s.cols) - reference_width;
  s.exp_sparsity = exp_width > 0 ? 1.0 - s.exp_nnz / (rows * exp_width) : 0.0;
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
    s.ref_nnz += static_cast<std::size_t>(in_ref);
    s.exp_nnz += static_cast<std::size_t>(len - in_ref);
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

// ------------------------------------------------------------------------------------ memory
/// The paper's storage formulas (section 4.1), with its types as defaults: values double, column
/// indices int, row offsets / counts unsigned int. Results in bytes.
struct PaperMemoryModel {
  std::size_t value_bytes = sizeof(double);
  std::size_t index_bytes = sizeof(int);
  std::size_t offset_bytes = sizeof(unsigned int);

  /// CSR: AllNonZeros*(value + index) + (ROWS + 1)*offset.
  std::size_t csr(std::size_t rows, std::size_t nnz) const {
    return nnz * (value_bytes + index_bytes) + (rows + 1) * offset_bytes;
  }
  /// ELLPACK, equation (1): ROWS*MaxNonZeros*(value + index).
  std::size_t ell(std::size_t rows, std::size_t max_nonzeros) const {
    return rows * max_nonzeros * (value_bytes + index_bytes);
  }
  /// Sliced ELLPACK: the sum of the ELLPACK formula over the slices (section 4.1), i.e.
  /// (sum over slices of height * width) * (value + index).
  std::size_t sliced_ell(std::size_t padded_slots) const { return padded_slots * (value_bytes + index_bytes); }
  /// The proposed (hybrid) format: 3*ROWS*offset (AllNonZerosCount, StartArr, EndArr)
  /// + ROWS*BOUNDARY*(value + index) + CSRNonZeros*(value + index).
  std::size_t hybrid(std::size_t rows, std::size_t boundary, std::size_t csr_nonzeros) const {
    return 3 * rows * offset_bytes + rows * boundary * (value_bytes + index_bytes) +
           csr_nonzeros * (value_bytes + index_bytes);
  }
};

/// Mebibytes, as the paper's Table 5 reports ("MB": 2^20 bytes; matrix 1's proposed format,
/// 374,089,620 bytes, prints as 356.76).
inline double to_mib(std::size_t bytes) { return static_cast<double>(bytes) / (1024.0 * 1024.0); }

/// The paper's formula for an actual cispmv matrix of any format (what Table 5 would print for it).
template <class S, class O, class Off, class D>
std::size_t paper_model_bytes(const CsrMatrix<S, O, Off, D>& A, PaperMemoryModel m = {}) {
  return m.csr(A.num_rows, A.nnz());
}
template <class S, class O, class D>
std::size_t paper_model_bytes(const EllMatrix<S, O, D>& A, PaperMemoryModel m = {}) {
  return m.ell(A.num_rows, A.width);
}
template <class S, class O, class Off, class D>
std::size_t paper_model_bytes(const SlicedEllMatrix<S, O, Off, D>& A, PaperMemoryModel m = {}) {
  return m.sliced_ell(A.values.extent(0));
}
template <class S, class O, class Off, class D, class R>
std::size_t paper_model_bytes(const HybridMatrix<S, O, Off, D, R>& A, PaperMemoryModel m = {}) {
  return m.hybrid(A.num_rows, A.boundary, A.exp_nnz());
}

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
