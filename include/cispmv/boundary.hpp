#pragma once
/// \file boundary.hpp
/// The automatic choice of BOUNDARY, the split of the paper's hybrid format (section 4.1): where a
/// CI matrix's dense leading column band (the reference region) ends.

#include <Kokkos_Core.hpp>

#include "cispmv/formats/csr.hpp"

#include <algorithm>
#include <limits>
#include <numeric>
#include <tuple>
#include <utility>
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
namespace impl {

/// The split w of choose_boundary: the w in [1, num_cols) that maximises the between-class variance
/// w (n - w) (left - right)^2 of the column densities left = prefix(w) / w and right = (total - prefix(w)) / (n - w)
/// among those with left > right (0 if none), prefix(w) being the nonzeros of the columns below w. Where prefix is
/// constant (between two occupied columns) the variance has no maximum inside the run where left > right, so only
/// the first w of each run is a candidate: w = 1 and w = c + 1 for each occupied column c. A table of every column
/// where it costs no more than the entries (O(nnz + cols)), else the occupied columns sorted (O(nnz log nnz), so that
/// a matrix of one row and 2^31 - 1 columns takes no table of 2^31 entries; `sorted` takes that way whatever the
/// sizes, for the tests). Returns (split, left, right).
template <class Scalar, class Ordinal, class Offset>
std::tuple<Ordinal, double, double> boundary_split(const HostCsrMatrix<Scalar, Ordinal, Offset>& A,
                                                   bool sorted = false) {
  const double n = static_cast<double>(A.num_cols);
  const auto nnz = static_cast<std::size_t>(A.nnz());
  // (column, nonzeros of the columns up to it), ascending
  std::vector<std::pair<Ordinal, double>> runs;
  if (!sorted && static_cast<std::size_t>(A.num_cols) <= 4 * nnz + 1024) {
    std::vector<double> count(static_cast<std::size_t>(A.num_cols), 0.0);
    for (std::size_t k = 0; k < nnz; ++k) count[static_cast<std::size_t>(A.col_idx(k))] += 1.0;
    double sum = 0.0;
    for (Ordinal c = 0; c < A.num_cols; ++c) {
      if (count[static_cast<std::size_t>(c)] == 0.0) continue;
      sum += count[static_cast<std::size_t>(c)];
      runs.emplace_back(c, sum);
    }
  } else {
    std::vector<Ordinal> cols(nnz);
    for (std::size_t k = 0; k < nnz; ++k) cols[k] = A.col_idx(k);
    std::sort(cols.begin(), cols.end());
    for (std::size_t k = 0; k < nnz; ++k) {
      if (k + 1 < nnz && cols[k + 1] == cols[k]) continue;
      runs.emplace_back(cols[k], static_cast<double>(k + 1));
    }
  }
  const double total = runs.empty() ? 0.0 : runs.back().second;
  double best = 0.0, best_left = 0.0, best_right = 0.0;
  Ordinal split = 0;
  auto consider = [&](Ordinal w, double prefix) {
    if (w < 1 || w >= A.num_cols) return;
    const double left = prefix / w;
    const double right = (total - prefix) / (n - w);
    const double between = static_cast<double>(w) * (n - w) * (left - right) * (left - right);
    if (left > right && between > best) {
      best = between;
      split = w;
      best_left = left;
      best_right = right;
    }
  };
  const bool zero_occupied = !runs.empty() && runs.front().first == 0;
  consider(1, zero_occupied ? runs.front().second : 0.0);
  for (const auto& [c, prefix] : runs) {
    if (c + 1 > 1) consider(c + 1, prefix);
  }
  return {split, best_left, best_right};
}

}  // namespace impl

/// Chooses BOUNDARY from the matrix structure.
///
/// Rule. Any BOUNDARY <= the shortest row length stores the matrix with no padding at all, so all of
/// them minimise stored bytes (paper's formula and ours); larger values only add padding. Among
/// those, cispmv takes the largest one that keeps the ELLPACK block inside the *reference region*
/// (paper, section 4): the leading block of columns whose density is much higher than the rest.
/// That block is detected as the two-level step that best fits the column densities (the split
/// maximising between-class variance, accepted if its left density is >= 4x its right density:
/// impl::boundary_split); BOUNDARY = min over rows of the row's nonzeros in that block. Without such a block,
/// BOUNDARY = the shortest row length. For the paper's matrices (every row has 655 nonzeros in the first 10% of
/// the columns) this gives 655.
template <class Scalar, class Ordinal, class Offset>
BoundaryChoice<Ordinal> choose_boundary(const HostCsrMatrix<Scalar, Ordinal, Offset>& A) {
  BoundaryChoice<Ordinal> choice;
  choice.reference_width = A.num_cols;
  if (A.num_rows == 0 || A.num_cols == 0) return choice;
  const auto [split, left, right] = impl::boundary_split(A);
  if (split > 0 && left >= 4.0 * right) {
    choice.reference_detected = true;
    choice.reference_width = split;
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
