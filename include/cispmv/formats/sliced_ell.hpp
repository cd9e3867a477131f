#pragma once
/// \file sliced_ell.hpp
/// Sliced ELLPACK and Sliced ELLPACK-R storage (paper, sections 3.4 and 3.5).

#include <Kokkos_Core.hpp>

#include "cispmv/formats/csr.hpp"
#include "cispmv/impl/convert_helpers.hpp"
#include "cispmv/impl/format_types.hpp"
#include "cispmv/memory_model.hpp"

#include <cstddef>

namespace cispmv {

/// Sliced ELLPACK matrix (paper, section 3.4): rows are cut into slices of `slice_height`
/// consecutive rows and each slice is an ELLPACK block padded only to its own longest row.
///
/// Layout: slice s holds rows [s*H, s*H + H), H = slice_height, and occupies
/// `[slice_ptr(s), slice_ptr(s+1))` of `values` / `col_idx`; its width is
/// `(slice_ptr(s+1) - slice_ptr(s)) / H`. Inside a slice the block is column-major: entry k of
/// local row i is at `slice_ptr(s) + k*H + i`, so the threads of a warp (consecutive rows) read
/// consecutive addresses. Padded slots, including the rows past num_rows in the last slice, hold
/// column -1 and value 0. The default slice height is a multiple of the warp size (32).
template <class Scalar, class Ordinal = int, class Offset = std::size_t, class Device = Kokkos::DefaultExecutionSpace>
struct SlicedEllMatrix : impl::FormatTypes<Scalar, Ordinal, Offset, Device> {
  using typename impl::FormatTypes<Scalar, Ordinal, Offset, Device>::device_type;
  using slice_ptr_type = Kokkos::View<Offset*, device_type>;
  using index_type = Kokkos::View<Ordinal*, device_type>;
  using values_type = Kokkos::View<Scalar*, device_type>;
  template <class OtherDevice>
  using rebind_device = SlicedEllMatrix<Scalar, Ordinal, Offset, OtherDevice>;

  static constexpr const char* format_name = "sell";
  static constexpr Ordinal default_slice_height = 32;

  Ordinal num_rows = 0;
  Ordinal num_cols = 0;
  Ordinal slice_height = default_slice_height;
  std::size_t num_nonzeros = 0;  ///< entries that are not padding
  slice_ptr_type slice_ptr;      ///< num_slices + 1 offsets into values / col_idx
  values_type values;            ///< slices one after another, column-major inside a slice
  index_type col_idx;            ///< same layout, -1 in padding

  KOKKOS_INLINE_FUNCTION Ordinal num_slices() const { return static_cast<Ordinal>(slice_ptr.extent(0)) - 1; }
  KOKKOS_INLINE_FUNCTION std::size_t nnz() const { return num_nonzeros; }

  /// The same matrix with every View replaced by f(View) (see CsrMatrix::map_views).
  template <class OtherDevice, class F>
  rebind_device<OtherDevice> map_views(F&& f) const {
    rebind_device<OtherDevice> out;
    out.num_rows = num_rows;
    out.num_cols = num_cols;
    out.slice_height = slice_height;
    out.num_nonzeros = num_nonzeros;
    out.slice_ptr = f(slice_ptr);
    out.values = f(values);
    out.col_idx = f(col_idx);
    return out;
  }
};

/// Sliced ELLPACK-R matrix (paper, section 3.5): Sliced ELLPACK plus `row_length(r)`
/// (NonZerosCount) so the kernel runs exactly row_length(r) iterations (Algorithm 5).
template <class Scalar, class Ordinal = int, class Offset = std::size_t, class Device = Kokkos::DefaultExecutionSpace>
struct SlicedEllRMatrix : SlicedEllMatrix<Scalar, Ordinal, Offset, Device> {
  using typename SlicedEllMatrix<Scalar, Ordinal, Offset, Device>::device_type;
  using row_length_type = Kokkos::View<Ordinal*, device_type>;
  template <class OtherDevice>
  using rebind_device = SlicedEllRMatrix<Scalar, Ordinal, Offset, OtherDevice>;

  static constexpr const char* format_name = "sellr";

  row_length_type row_length;  ///< NonZerosCount(num_rows)

  template <class OtherDevice, class F>
  rebind_device<OtherDevice> map_views(F&& f) const {
    rebind_device<OtherDevice> out;
    static_cast<SlicedEllMatrix<Scalar, Ordinal, Offset, OtherDevice>&>(out) =
        SlicedEllMatrix<Scalar, Ordinal, Offset, Device>::template map_views<OtherDevice>(f);
    out.row_length = f(row_length);
    return out;
  }
};

// ------------------------------------------------------------------------------ conversions
/// Sliced ELLPACK from host CSR; slice_height > 0 (default: 32, a warp).
template <class Scalar, class Ordinal, class Offset>
SlicedEllMatrix<Scalar, Ordinal, Offset, HostExecSpace> to_sliced_ell(const HostCsrMatrix<Scalar, Ordinal, Offset>& A,
                                                                      Ordinal slice_height = 32) {
  if (slice_height <= 0) {
    throw std::invalid_argument("cispmv::to_sliced_ell: slice_height must be positive, got " +
                                std::to_string(slice_height));
  }
  SlicedEllMatrix<Scalar, Ordinal, Offset, HostExecSpace> S;
  S.num_rows = A.num_rows;
  S.num_cols = A.num_cols;
  S.slice_height = slice_height;
  S.num_nonzeros = A.nnz();
  const Ordinal num_slices =
      static_cast<Ordinal>((static_cast<long long>(A.num_rows) + slice_height - 1) / slice_height);
  std::vector<std::size_t> slice_size(num_slices);
  Kokkos::parallel_for("cispmv::to_sliced_ell::widths", Kokkos::RangePolicy<HostExecSpace>(0, num_slices),
                       [&](const Ordinal s) {
                         Ordinal width = 0;
                         const Ordinal end = std::min<Ordinal>(A.num_rows, (s + 1) * slice_height);
                         for (Ordinal r = s * slice_height; r < end; ++r) {
                           width = std::max(width, static_cast<Ordinal>(A.row_ptr(r + 1) - A.row_ptr(r)));
                         }
                         slice_size[s] = static_cast<std::size_t>(width) * static_cast<std::size_t>(slice_height);
                       });
  const std::size_t total = impl::exclusive_scan_in_place(slice_size);
  S.slice_ptr =
      decltype(S.slice_ptr)(Kokkos::view_alloc("sell::slice_ptr", Kokkos::WithoutInitializing), num_slices + 1);
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
SlicedEllRMatrix<Scalar, Ordinal, Offset, HostExecSpace> to_sliced_ellr(const HostCsrMatrix<Scalar, Ordinal, Offset>& A,
                                                                        Ordinal slice_height = 32) {
  SlicedEllRMatrix<Scalar, Ordinal, Offset, HostExecSpace> S;
  static_cast<SlicedEllMatrix<Scalar, Ordinal, Offset, HostExecSpace>&>(S) = to_sliced_ell(A, slice_height);
  S.row_length =
      decltype(S.row_length)(Kokkos::view_alloc("sellr::row_length", Kokkos::WithoutInitializing), A.num_rows);
  Kokkos::parallel_for(
      "cispmv::to_sliced_ellr", Kokkos::RangePolicy<HostExecSpace>(0, A.num_rows),
      [&](const Ordinal r) { S.row_length(r) = static_cast<Ordinal>(A.row_ptr(r + 1) - A.row_ptr(r)); });
  return S;
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
  return impl::csr_from_rows<HostCsrMatrix<Scalar, Ordinal, Offset>>(
      "csr", S.num_rows, S.num_cols, length, [&](Ordinal r, Offset j) {
        const Offset idx = first(r) + j * h;
        return std::make_pair(S.col_idx(idx), S.values(idx));
      });
}

/// Host CSR from Sliced ELLPACK-R.
template <class Scalar, class Ordinal, class Offset>
HostCsrMatrix<Scalar, Ordinal, Offset> to_csr(const SlicedEllRMatrix<Scalar, Ordinal, Offset, HostExecSpace>& S) {
  const Offset h = static_cast<Offset>(S.slice_height);
  return impl::csr_from_rows<HostCsrMatrix<Scalar, Ordinal, Offset>>(
      "csr", S.num_rows, S.num_cols, [&](Ordinal r) { return S.row_length(r); },
      [&](Ordinal r, Offset j) {
        const Ordinal s = r / S.slice_height;
        const Offset idx = S.slice_ptr(s) + static_cast<Offset>(r - s * S.slice_height) + j * h;
        return std::make_pair(S.col_idx(idx), S.values(idx));
      });
}

/// The paper's formula for Sliced ELLPACK (the ELLPACK formula summed over the slices).
template <class S, class O, class Off, class D>
std::size_t paper_model_bytes(const SlicedEllMatrix<S, O, Off, D>& A, PaperMemoryModel m = {}) {
  return m.sliced_ell(A.values.extent(0));
}

}  // namespace cispmv

#include "cispmv/impl/kernels/sliced_ell.hpp"
