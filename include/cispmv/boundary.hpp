#pragma once
/// \file boundary.hpp
/// The automatic choice of BOUNDARY, the split of the paper's hybrid format (section 4.1): where a
/// CI matrix's dense leading column band (the reference region) ends.

#include <Kokkos_Core.hpp>

#include "cispmv/formats/csr.hpp"

#include <algorithm>
#include <limits>
#include <numeric>
#include <vector>

namespace cispmv {

/// Result of the automatic BOUNDARY choice.
template <class Ordinal>
struct BoundaryChoice {
  Ordinal boundary = 0;         ///< the chosen BOUNDARY
  Ordinal reference_width = 0;  ///< detected width of the reference region in columns (num_cols if none)
  bool reference_detected = false;
};

/// Chooses BOUNDARY from the matrix structure.
///
/// Rule. Any BOUNDARY <= the shortest row length stores the matrix with no padding at all, so all of
/// them minimise stored bytes (paper's formula and ours); larger values only add padding. Among
/// those, cispmv takes the largest one that keeps the ELLPACK block inside the *reference region*
/// (paper, section 4): the leading block of columns whose density is much higher than the rest.
/// That block is detected as the two-level step that best fits the column densities (the split
/// maximising between-class variance, accepted if its left density is >= 4x its right density);
/// BOUNDARY = min over rows of the row's nonzeros in that block. Without such a block, BOUNDARY =
/// the shortest row length. For the paper's matrices (every row has 655 nonzeros in the first 10% of
/// the columns) this gives 655. O(nnz + cols).
template <class Scalar, class Ordinal, class Offset>
BoundaryChoice<Ordinal> choose_boundary(const HostCsrMatrix<Scalar, Ordinal, Offset>& A) {
  BoundaryChoice<Ordinal> choice;
  choice.reference_width = A.num_cols;
  if (A.num_rows == 0 || A.num_cols == 0) return choice;
  std::vector<double> prefix(static_cast<std::size_t>(A.num_cols) + 1, 0.0);
  for (Offset k = 0; k < A.nnz(); ++k) prefix[A.col_idx(k) + 1] += 1.0;
  std::partial_sum(prefix.begin(), prefix.end(), prefix.begin());
  const double total = prefix.back();
  double best = 0.0;
  Ordinal split = 0;
  for (Ordinal w = 1; w < A.num_cols; ++w) {
    const double left = prefix[w] / w;
    const double right = (total - prefix[w]) / (A.num_cols - w);
    const double between = static_cast<double>(w) * (A.num_cols - w) * (left - right) * (left - right);
    if (left > right && between > best) {
      best = between;
      split = w;
    }
  }
  if (split > 0) {
    const double left = prefix[split] / split;
    const double right = (total - prefix[split]) / (A.num_cols - split);
    if (left >= 4.0 * right) {
      choice.reference_detected = true;
      choice.reference_width = split;
    }
  }
  Ordinal boundary = std::numeric_limits<Ordinal>::max();
  Kokkos::parallel_reduce(
      "cispmv::choose_boundary", Kokkos::RangePolicy<Kokkos::DefaultHostExecutionSpace>(0, A.num_rows),
      [&](const Ordinal r, Ordinal& b) {
        Ordinal in_block = 0;
        for (Offset k = A.row_ptr(r); k < A.row_ptr(r + 1); ++k) in_block += A.col_idx(k) < choice.reference_width;
        b = std::min(b, in_block);
      },
      Kokkos::Min<Ordinal>(boundary));
  choice.boundary = boundary;
  return choice;
}

}  // namespace cispmv
