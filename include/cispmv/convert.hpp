#pragma once
/// \file convert.hpp
/// Conversions between formats. Every format is built on the host from a host CSR matrix in
/// O(nnz) work (the paper scans the dense matrix, O(rows*cols)), in parallel over rows on the
/// default host execution space, and converts back to CSR exactly. to_device / to_host move any
/// format between memory spaces.

#include <Kokkos_Core.hpp>

#include "cispmv/csr.hpp"
#include "cispmv/ell.hpp"
#include "cispmv/hybrid.hpp"
#include "cispmv/sliced_ell.hpp"

#include <algorithm>
#include <cstddef>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace cispmv {

using HostExecSpace = Kokkos::DefaultHostExecutionSpace;

// ----------------------------------------------------------------------------------- moving
/// The same matrix with its Views in `Device`'s memory space (a deep copy; no copy if already there).
template <class Device, class Matrix>
auto to_device(const Matrix& A) {
  return A.template map_views<Device>([](const auto& v) { return impl::mirror_to<Device>(v); });
}

/// The same matrix in host memory.
template <class Matrix>
auto to_host(const Matrix& A) {
  return to_device<HostExecSpace>(A);
}

/// Bytes held by the matrix's View allocations (what the device really stores).
template <class Matrix>
std::size_t allocated_bytes(const Matrix& A) {
  std::size_t bytes = 0;
  (void)A.template map_views<typename Matrix::device_type>([&](const auto& v) {
    bytes += impl::view_bytes(v);
    return v;
  });
  return bytes;
}

/// Casts the values (e.g. double to float); the structure is shared with A.
template <class NewScalar, class S, class O, class Off, class D>
CsrMatrix<NewScalar, O, Off, D> cast_values(const CsrMatrix<S, O, Off, D>& A) {
  CsrMatrix<NewScalar, O, Off, D> B;
  B.num_rows = A.num_rows;
  B.num_cols = A.num_cols;
  B.row_ptr = A.row_ptr;
  B.col_idx = A.col_idx;
  B.values = typename CsrMatrix<NewScalar, O, Off, D>::values_type(
      Kokkos::view_alloc(A.values.label(), Kokkos::WithoutInitializing), A.values.extent(0));
  const auto src = A.values;
  const auto dst = B.values;
  Kokkos::parallel_for(
      "cispmv::cast_values", Kokkos::RangePolicy<typename D::execution_space>(0, src.extent(0)),
      KOKKOS_LAMBDA(const std::size_t k) { dst(k) = static_cast<NewScalar>(src(k)); });
  Kokkos::fence();
  return B;
}

// --------------------------------------------------------------------------------------- COO
/// Coordinate (triplet) matrix in host memory: an input and exchange format.
template <class Scalar = double, class Ordinal = int>
struct CooMatrix {
  Ordinal num_rows = 0;
  Ordinal num_cols = 0;
  std::vector<Ordinal> row_idx;
  std::vector<Ordinal> col_idx;
  std::vector<Scalar> values;
};

/// Host CSR from COO: rows sorted by column, duplicate (row, column) entries summed.
/// Throws std::invalid_argument on mismatched array sizes or an index out of range.
template <class Offset = std::size_t, class Scalar, class Ordinal>
HostCsrMatrix<Scalar, Ordinal, Offset> from_coo(const CooMatrix<Scalar, Ordinal>& coo) {
  const std::size_t n = coo.values.size();
  if (coo.row_idx.size() != n || coo.col_idx.size() != n) {
    throw std::invalid_argument("cispmv::from_coo: row_idx, col_idx and values have " +
                                std::to_string(coo.row_idx.size()) + ", " + std::to_string(coo.col_idx.size()) +
                                " and " + std::to_string(n) + " entries; they must agree");
  }
  if (coo.num_rows < 0 || coo.num_cols < 0) throw std::invalid_argument("cispmv::from_coo: negative shape");
  for (std::size_t k = 0; k < n; ++k) {
    if (coo.row_idx[k] < 0 || coo.row_idx[k] >= coo.num_rows || coo.col_idx[k] < 0 || coo.col_idx[k] >= coo.num_cols) {
      throw std::invalid_argument("cispmv::from_coo: entry " + std::to_string(k) + " at (" +
                                  std::to_string(coo.row_idx[k]) + ", " + std::to_string(coo.col_idx[k]) +
                                  ") is outside the " + std::to_string(coo.num_rows) + " x " +
                                  std::to_string(coo.num_cols) + " matrix");
    }
  }
  // counting sort by row, then sort each row by column and merge duplicates
  std::vector<Offset> start(static_cast<std::size_t>(coo.num_rows) + 1, 0);
  for (std::size_t k = 0; k < n; ++k) ++start[coo.row_idx[k] + 1];
  std::partial_sum(start.begin(), start.end(), start.begin());
  std::vector<std::pair<Ordinal, Scalar>> entries(n);
  {
    std::vector<Offset> next(start.begin(), start.end() - 1);
    for (std::size_t k = 0; k < n; ++k) entries[next[coo.row_idx[k]]++] = {coo.col_idx[k], coo.values[k]};
  }
  std::vector<Offset> kept(static_cast<std::size_t>(coo.num_rows) + 1, 0);
  for (Ordinal r = 0; r < coo.num_rows; ++r) {
    auto first = entries.begin() + start[r], last = entries.begin() + start[r + 1];
    std::stable_sort(first, last, [](const auto& a, const auto& b) { return a.first < b.first; });
    Offset out = start[r];
    for (auto it = first; it != last; ++it) {
      if (out > start[r] && entries[out - 1].first == it->first) {
        entries[out - 1].second += it->second;
      } else {
        entries[out++] = *it;
      }
    }
    kept[r + 1] = out - start[r];
  }
  std::partial_sum(kept.begin(), kept.end(), kept.begin());
  HostCsrMatrix<Scalar, Ordinal, Offset> A("coo", coo.num_rows, coo.num_cols, kept.back());
  for (Ordinal r = 0; r < coo.num_rows; ++r) {
    A.row_ptr(r + 1) = kept[r + 1];
    for (Offset k = 0; k < kept[r + 1] - kept[r]; ++k) {
      A.col_idx(kept[r] + k) = entries[start[r] + k].first;
      A.values(kept[r] + k) = entries[start[r] + k].second;
    }
  }
  return A;
}

/// COO triplets of a host CSR matrix, row by row.
template <class Scalar, class Ordinal, class Offset>
CooMatrix<Scalar, Ordinal> to_coo(const HostCsrMatrix<Scalar, Ordinal, Offset>& A) {
  CooMatrix<Scalar, Ordinal> coo;
  coo.num_rows = A.num_rows;
  coo.num_cols = A.num_cols;
  coo.row_idx.reserve(A.nnz());
  coo.col_idx.reserve(A.nnz());
  coo.values.reserve(A.nnz());
  for (Ordinal r = 0; r < A.num_rows; ++r) {
    for (Offset k = A.row_ptr(r); k < A.row_ptr(r + 1); ++k) {
      coo.row_idx.push_back(r);
      coo.col_idx.push_back(A.col_idx(k));
      coo.values.push_back(A.values(k));
    }
  }
  return coo;
}

namespace impl {

template <class Ordinal, class Offset, class RowPtr>
Ordinal max_row_length(const RowPtr& row_ptr, Ordinal num_rows) {
  Ordinal longest = 0;
  Kokkos::parallel_reduce(
      "cispmv::max_row_length", Kokkos::RangePolicy<HostExecSpace>(0, num_rows),
      [&](const Ordinal r, Ordinal& m) { m = std::max(m, static_cast<Ordinal>(row_ptr(r + 1) - row_ptr(r))); },
      Kokkos::Max<Ordinal>(longest));
  return std::max<Ordinal>(0, longest);  // Max starts from the lowest value (no rows)
}

template <class Offset>
Offset exclusive_scan_in_place(std::vector<Offset>& v) {
  Offset sum = 0;
  for (auto& e : v) {
    const Offset n = e;
    e = sum;
    sum += n;
  }
  return sum;
}

template <class To, class From>
To checked_size(From n, const char* what) {
  if (n > static_cast<From>(std::numeric_limits<To>::max())) {
    throw std::overflow_error(std::string("cispmv: ") + what + " (" + std::to_string(n) +
                              ") does not fit the Offset type; use Offset = std::size_t");
  }
  return static_cast<To>(n);
}

}  // namespace impl

// ----------------------------------------------------------------------------------- ELLPACK
/// ELLPACK (padded to the longest row) from host CSR.
template <class Scalar, class Ordinal, class Offset>
EllMatrix<Scalar, Ordinal, HostExecSpace> to_ell(const HostCsrMatrix<Scalar, Ordinal, Offset>& A) {
  EllMatrix<Scalar, Ordinal, HostExecSpace> E;
  E.num_rows = A.num_rows;
  E.num_cols = A.num_cols;
  E.width = impl::max_row_length<Ordinal, Offset>(A.row_ptr, A.num_rows);
  E.num_nonzeros = A.nnz();
  E.values = decltype(E.values)("ell::values", A.num_rows, E.width);
  E.col_idx = decltype(E.col_idx)(Kokkos::view_alloc("ell::col_idx", Kokkos::WithoutInitializing), A.num_rows, E.width);
  Kokkos::deep_copy(E.col_idx, Ordinal(-1));
  Kokkos::parallel_for(
      "cispmv::to_ell", Kokkos::RangePolicy<HostExecSpace>(0, A.num_rows), [&](const Ordinal r) {
        Ordinal k = 0;
        for (Offset j = A.row_ptr(r); j < A.row_ptr(r + 1); ++j, ++k) {
          E.values(r, k) = A.values(j);
          E.col_idx(r, k) = A.col_idx(j);
        }
      });
  return E;
}

/// ELLPACK-R (ELLPACK + row lengths) from host CSR.
template <class Scalar, class Ordinal, class Offset>
EllRMatrix<Scalar, Ordinal, HostExecSpace> to_ellr(const HostCsrMatrix<Scalar, Ordinal, Offset>& A) {
  EllRMatrix<Scalar, Ordinal, HostExecSpace> E;
  static_cast<EllMatrix<Scalar, Ordinal, HostExecSpace>&>(E) = to_ell(A);
  E.row_length = decltype(E.row_length)(Kokkos::view_alloc("ellr::row_length", Kokkos::WithoutInitializing), A.num_rows);
  Kokkos::parallel_for(
      "cispmv::to_ellr", Kokkos::RangePolicy<HostExecSpace>(0, A.num_rows),
      [&](const Ordinal r) { E.row_length(r) = static_cast<Ordinal>(A.row_ptr(r + 1) - A.row_ptr(r)); });
  return E;
}

// ---------------------------------------------------------------------------- Sliced ELLPACK
/// Sliced ELLPACK from host CSR; slice_height > 0 (default: 32, a warp).
template <class Scalar, class Ordinal, class Offset>
SlicedEllMatrix<Scalar, Ordinal, Offset, HostExecSpace> to_sliced_ell(
    const HostCsrMatrix<Scalar, Ordinal, Offset>& A, Ordinal slice_height = 32) {
  if (slice_height <= 0) {
    throw std::invalid_argument("cispmv::to_sliced_ell: slice_height must be positive, got " +
                                std::to_string(slice_height));
  }
  SlicedEllMatrix<Scalar, Ordinal, Offset, HostExecSpace> S;
  S.num_rows = A.num_rows;
  S.num_cols = A.num_cols;
  S.slice_height = slice_height;
  S.num_nonzeros = A.nnz();
  const Ordinal num_slices = static_cast<Ordinal>((static_cast<long long>(A.num_rows) + slice_height - 1) / slice_height);
  std::vector<std::size_t> slice_size(num_slices);
  Kokkos::parallel_for(
      "cispmv::to_sliced_ell::widths", Kokkos::RangePolicy<HostExecSpace>(0, num_slices), [&](const Ordinal s) {
        Ordinal width = 0;
        const Ordinal end = std::min<Ordinal>(A.num_rows, (s + 1) * slice_height);
        for (Ordinal r = s * slice_height; r < end; ++r) {
          width = std::max(width, static_cast<Ordinal>(A.row_ptr(r + 1) - A.row_ptr(r)));
        }
        slice_size[s] = static_cast<std::size_t>(width) * static_cast<std::size_t>(slice_height);
      });
  const std::size_t total = impl::exclusive_scan_in_place(slice_size);
  S.slice_ptr = decltype(S.slice_ptr)(Kokkos::view_alloc("sell::slice_ptr", Kokkos::WithoutInitializing), num_slices + 1);
  for (Ordinal s = 0; s < num_slices; ++s) S.slice_ptr(s) = impl::checked_size<Offset>(slice_size[s], "slice offset");
  S.slice_ptr(num_slices) = impl::checked_size<Offset>(total, "Sliced ELLPACK size");
  S.values = decltype(S.values)("sell::values", total);
  S.col_idx = decltype(S.col_idx)(Kokkos::view_alloc("sell::col_idx", Kokkos::WithoutInitializing), total);
  Kokkos::deep_copy(S.col_idx, Ordinal(-1));
  Kokkos::parallel_for(
      "cispmv::to_sliced_ell", Kokkos::RangePolicy<HostExecSpace>(0, A.num_rows), [&](const Ordinal r) {
        const Ordinal s = r / slice_height;
        Offset idx = S.slice_ptr(s) + static_cast<Offset>(r - s * slice_height);
        for (Offset j = A.row_ptr(r); j < A.row_ptr(r + 1); ++j, idx += static_cast<Offset>(slice_height)) {
          S.values(idx) = A.values(j);
          S.col_idx(idx) = A.col_idx(j);
        }
      });
  return S;
}

/// Sliced ELLPACK-R (Sliced ELLPACK + row lengths) from host CSR.
template <class Scalar, class Ordinal, class Offset>
SlicedEllRMatrix<Scalar, Ordinal, Offset, HostExecSpace> to_sliced_ellr(
    const HostCsrMatrix<Scalar, Ordinal, Offset>& A, Ordinal slice_height = 32) {
  SlicedEllRMatrix<Scalar, Ordinal, Offset, HostExecSpace> S;
  static_cast<SlicedEllMatrix<Scalar, Ordinal, Offset, HostExecSpace>&>(S) = to_sliced_ell(A, slice_height);
  S.row_length =
      decltype(S.row_length)(Kokkos::view_alloc("sellr::row_length", Kokkos::WithoutInitializing), A.num_rows);
  Kokkos::parallel_for(
      "cispmv::to_sliced_ellr", Kokkos::RangePolicy<HostExecSpace>(0, A.num_rows),
      [&](const Ordinal r) { S.row_length(r) = static_cast<Ordinal>(A.row_ptr(r + 1) - A.row_ptr(r)); });
  return S;
}

// ------------------------------------------------------------------------------------ hybrid
/// The paper's hybrid format from host CSR (Algorithm 6 in O(nnz)): the first `boundary` nonzeros of
/// each row (in stored order; cispmv's CSR rows are column-sorted) go to the reference region, the
/// rest to the expansion region. 0 <= boundary <= number of columns; see choose_boundary for the
/// automatic choice.
/// `to_hybrid<std::uint16_t>(A, boundary)` builds the compact variant with 16-bit reference-region
/// column indices (see HybridMatrix) and throws std::invalid_argument if a reference-region column
/// does not fit.
template <class RefIndex = void, class Scalar, class Ordinal, class Offset>
auto to_hybrid(const HostCsrMatrix<Scalar, Ordinal, Offset>& A, Ordinal boundary) {
  using Ref = std::conditional_t<std::is_void_v<RefIndex>, Ordinal, RefIndex>;
  if (boundary < 0 || boundary > A.num_cols) {
    throw std::invalid_argument("cispmv::to_hybrid: BOUNDARY = " + std::to_string(boundary) +
                                " is outside [0, " + std::to_string(A.num_cols) + "] (the number of columns)");
  }
  HybridMatrix<Scalar, Ordinal, Offset, HostExecSpace, Ref> H;
  H.num_rows = A.num_rows;
  H.num_cols = A.num_cols;
  H.boundary = boundary;
  H.ref_row_length = decltype(H.ref_row_length)(Kokkos::view_alloc("hybrid::ref_row_length", Kokkos::WithoutInitializing), A.num_rows);
  H.exp_row_ptr = decltype(H.exp_row_ptr)("hybrid::exp_row_ptr", static_cast<std::size_t>(A.num_rows) + 1);
  std::size_t ref_nnz = 0;
  Kokkos::parallel_reduce(
      "cispmv::to_hybrid::count", Kokkos::RangePolicy<HostExecSpace>(0, A.num_rows),
      [&](const Ordinal r, std::size_t& n) {
        const Offset len = A.row_ptr(r + 1) - A.row_ptr(r);
        const Ordinal in_ref = static_cast<Ordinal>(std::min<Offset>(len, static_cast<Offset>(boundary)));
        H.ref_row_length(r) = in_ref;
        H.exp_row_ptr(r + 1) = len - static_cast<Offset>(in_ref);
        n += static_cast<std::size_t>(in_ref);
      },
      ref_nnz);
  H.ref_nnz = ref_nnz;
  Ordinal ref_width = 0;
  Kokkos::parallel_reduce(
      "cispmv::to_hybrid::ref_width", Kokkos::RangePolicy<HostExecSpace>(0, A.num_rows),
      [&](const Ordinal r, Ordinal& w) {
        for (Offset j = A.row_ptr(r); j < A.row_ptr(r) + static_cast<Offset>(H.ref_row_length(r)); ++j) {
          w = std::max(w, static_cast<Ordinal>(A.col_idx(j) + 1));
        }
      },
      Kokkos::Max<Ordinal>(ref_width));
  H.ref_width = std::max<Ordinal>(0, ref_width);  // Max starts from the lowest value
  for (Ordinal r = 0; r < A.num_rows; ++r) H.exp_row_ptr(r + 1) += H.exp_row_ptr(r);
  const Offset exp_nnz = H.exp_row_ptr(A.num_rows);
  H.ref_values = decltype(H.ref_values)("hybrid::ref_values", A.num_rows, boundary);
  H.ref_col_idx = decltype(H.ref_col_idx)(Kokkos::view_alloc("hybrid::ref_col_idx", Kokkos::WithoutInitializing), A.num_rows, boundary);
  Kokkos::deep_copy(H.ref_col_idx, H.padding_index);
  if constexpr (!std::is_same_v<Ref, Ordinal>) {
    // every reference-region column must fit RefIndex and differ from the padding marker
    Ordinal widest = -1, widest_row = -1;
    for (Ordinal r = 0; r < A.num_rows; ++r) {
      const Offset end = A.row_ptr(r) + std::min<Offset>(A.row_ptr(r + 1) - A.row_ptr(r), static_cast<Offset>(boundary));
      for (Offset j = A.row_ptr(r); j < end; ++j) {
        if (A.col_idx(j) > widest) widest = A.col_idx(j), widest_row = r;
      }
    }
    if (widest >= static_cast<Ordinal>(H.padding_index)) {
      throw std::invalid_argument("cispmv::to_hybrid: reference-region column " + std::to_string(widest) + " (row " +
                                  std::to_string(widest_row) + ") does not fit " + std::to_string(8 * sizeof(Ref)) +
                                  "-bit indices (at most " + std::to_string(H.padding_index - 1) +
                                  "); use the default index type or a smaller BOUNDARY");
    }
  }
  H.exp_col_idx = decltype(H.exp_col_idx)(Kokkos::view_alloc("hybrid::exp_col_idx", Kokkos::WithoutInitializing), exp_nnz);
  H.exp_values = decltype(H.exp_values)(Kokkos::view_alloc("hybrid::exp_values", Kokkos::WithoutInitializing), exp_nnz);
  Kokkos::parallel_for(
      "cispmv::to_hybrid::fill", Kokkos::RangePolicy<HostExecSpace>(0, A.num_rows), [&](const Ordinal r) {
        Offset j = A.row_ptr(r);
        for (Ordinal k = 0; k < H.ref_row_length(r); ++k, ++j) {
          H.ref_values(r, k) = A.values(j);
          H.ref_col_idx(r, k) = static_cast<Ref>(A.col_idx(j));
        }
        for (Offset e = H.exp_row_ptr(r); j < A.row_ptr(r + 1); ++j, ++e) {
          H.exp_values(e) = A.values(j);
          H.exp_col_idx(e) = A.col_idx(j);
        }
      });
  return H;
}

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
      "cispmv::choose_boundary", Kokkos::RangePolicy<HostExecSpace>(0, A.num_rows),
      [&](const Ordinal r, Ordinal& b) {
        Ordinal in_block = 0;
        for (Offset k = A.row_ptr(r); k < A.row_ptr(r + 1); ++k) in_block += A.col_idx(k) < choice.reference_width;
        b = std::min(b, in_block);
      },
      Kokkos::Min<Ordinal>(boundary));
  choice.boundary = boundary;
  return choice;
}

/// Hybrid format with the automatic BOUNDARY (choose_boundary).
template <class RefIndex = void, class Scalar, class Ordinal, class Offset>
auto to_hybrid(const HostCsrMatrix<Scalar, Ordinal, Offset>& A) {
  return to_hybrid<RefIndex>(A, choose_boundary(A).boundary);
}

// ------------------------------------------------------------------------------ back to CSR
namespace impl {
/// Builds a host CSR from per-row lengths and a per-row copy function entry(r, j) -> (col, value).
template <class Scalar, class Ordinal, class Offset, class Length, class Entry>
HostCsrMatrix<Scalar, Ordinal, Offset> csr_from_rows(const char* label, Ordinal rows, Ordinal cols,
                                                     const Length& length, const Entry& entry) {
  std::vector<Offset> ptr(static_cast<std::size_t>(rows) + 1, 0);
  for (Ordinal r = 0; r < rows; ++r) ptr[r + 1] = ptr[r] + static_cast<Offset>(length(r));
  HostCsrMatrix<Scalar, Ordinal, Offset> A(label, rows, cols, ptr.back());
  for (Ordinal r = 0; r <= rows; ++r) A.row_ptr(r) = ptr[r];
  Kokkos::parallel_for(
      label, Kokkos::RangePolicy<HostExecSpace>(0, rows), [&](const Ordinal r) {
        for (Offset j = 0; j < ptr[r + 1] - ptr[r]; ++j) {
          const auto e = entry(r, j);
          A.col_idx(ptr[r] + j) = e.first;
          A.values(ptr[r] + j) = e.second;
        }
      });
  return A;
}
}  // namespace impl

/// Host CSR (identity copy) from a host CSR.
template <class Scalar, class Ordinal, class Offset>
HostCsrMatrix<Scalar, Ordinal, Offset> to_csr(const HostCsrMatrix<Scalar, Ordinal, Offset>& A) {
  return to_device<HostExecSpace>(A);
}

/// Host CSR from ELLPACK (real entries are the slots before the first -1).
template <class Offset = std::size_t, class Scalar, class Ordinal>
HostCsrMatrix<Scalar, Ordinal, Offset> to_csr(const EllMatrix<Scalar, Ordinal, HostExecSpace>& E) {
  auto length = [&](Ordinal r) {
    Ordinal k = 0;
    while (k < E.width && E.col_idx(r, k) != -1) ++k;
    return k;
  };
  return impl::csr_from_rows<Scalar, Ordinal, Offset>("csr", E.num_rows, E.num_cols, length, [&](Ordinal r, Offset j) {
    return std::make_pair(E.col_idx(r, j), E.values(r, j));
  });
}

/// Host CSR from ELLPACK-R.
template <class Offset = std::size_t, class Scalar, class Ordinal>
HostCsrMatrix<Scalar, Ordinal, Offset> to_csr(const EllRMatrix<Scalar, Ordinal, HostExecSpace>& E) {
  return impl::csr_from_rows<Scalar, Ordinal, Offset>(
      "csr", E.num_rows, E.num_cols, [&](Ordinal r) { return E.row_length(r); },
      [&](Ordinal r, Offset j) { return std::make_pair(E.col_idx(r, j), E.values(r, j)); });
}

/// Host CSR from Sliced ELLPACK.
template <class Scalar, class Ordinal, class Offset>
HostCsrMatrix<Scalar, Ordinal, Offset> to_csr(const SlicedEllMatrix<Scalar, Ordinal, Offset, HostExecSpace>& S) {
  const Offset h = static_cast<Offset>(S.slice_height);
  auto first = [&](Ordinal r) {
    const Ordinal s = r / S.slice_height;
    return S.slice_ptr(s) + static_cast<Offset>(r - s * S.slice_height);
  };
  auto length = [&](Ordinal r) {
    const Offset end = S.slice_ptr(r / S.slice_height + 1);
    Ordinal k = 0;
    for (Offset idx = first(r); idx < end && S.col_idx(idx) != -1; idx += h) ++k;
    return k;
  };
  return impl::csr_from_rows<Scalar, Ordinal, Offset>("csr", S.num_rows, S.num_cols, length, [&](Ordinal r, Offset j) {
    const Offset idx = first(r) + j * h;
    return std::make_pair(S.col_idx(idx), S.values(idx));
  });
}

/// Host CSR from Sliced ELLPACK-R.
template <class Scalar, class Ordinal, class Offset>
HostCsrMatrix<Scalar, Ordinal, Offset> to_csr(const SlicedEllRMatrix<Scalar, Ordinal, Offset, HostExecSpace>& S) {
  const Offset h = static_cast<Offset>(S.slice_height);
  return impl::csr_from_rows<Scalar, Ordinal, Offset>(
      "csr", S.num_rows, S.num_cols, [&](Ordinal r) { return S.row_length(r); },
      [&](Ordinal r, Offset j) {
        const Ordinal s = r / S.slice_height;
        const Offset idx = S.slice_ptr(s) + static_cast<Offset>(r - s * S.slice_height) + j * h;
        return std::make_pair(S.col_idx(idx), S.values(idx));
      });
}

/// Host CSR from the hybrid format: each row is its reference-region entries followed by its
/// expansion-region entries, i.e. the original row.
template <class Scalar, class Ordinal, class Offset, class RefIndex>
HostCsrMatrix<Scalar, Ordinal, Offset> to_csr(const HybridMatrix<Scalar, Ordinal, Offset, HostExecSpace, RefIndex>& H) {
  return impl::csr_from_rows<Scalar, Ordinal, Offset>(
      "csr", H.num_rows, H.num_cols,
      [&](Ordinal r) { return static_cast<Offset>(H.ref_row_length(r)) + (H.exp_row_ptr(r + 1) - H.exp_row_ptr(r)); },
      [&](Ordinal r, Offset j) {
        const Offset in_ref = static_cast<Offset>(H.ref_row_length(r));
        if (j < in_ref) return std::make_pair(static_cast<Ordinal>(H.ref_col_idx(r, j)), H.ref_values(r, j));
        const Offset e = H.exp_row_ptr(r) + (j - in_ref);
        return std::make_pair(H.exp_col_idx(e), H.exp_values(e));
      });
}

}  // namespace cispmv
