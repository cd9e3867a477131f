#pragma once
/// \file convert.hpp
/// Moving formats between memory spaces (to_device, to_host), their allocated bytes, value casts,
/// and the COO exchange format. Each format's own converters (to_ell, to_sliced_ell, to_hybrid, ...
/// and to_csr back) live in its header under formats/ (csell's in compressed_sell_encoder.hpp):
/// every format is built on the host from a host CSR matrix in O(nnz) work (the paper scans the
/// dense matrix, O(rows*cols)), in parallel over rows, and converts back to CSR exactly. This header
/// includes them all.

#include <Kokkos_Core.hpp>

#include "cispmv/formats/compressed_sell.hpp"
#include "cispmv/formats/compressed_sell_encoder.hpp"
#include "cispmv/formats/csr.hpp"
#include "cispmv/formats/ell.hpp"
#include "cispmv/formats/hybrid.hpp"
#include "cispmv/formats/sliced_ell.hpp"
#include "cispmv/impl/format_types.hpp"

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

}  // namespace cispmv
