#pragma once
/// \file sliced_ell.hpp
/// Sliced ELLPACK and Sliced ELLPACK-R storage (paper, sections 3.4 and 3.5).

#include <Kokkos_Core.hpp>

#include "cispmv/impl/format_types.hpp"

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
template <class Scalar, class Ordinal = int, class Offset = std::size_t,
          class Device = Kokkos::DefaultExecutionSpace>
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
  std::size_t num_nonzeros = 0;      ///< entries that are not padding
  slice_ptr_type slice_ptr;  ///< num_slices + 1 offsets into values / col_idx
  values_type values;        ///< slices one after another, column-major inside a slice
  index_type col_idx;        ///< same layout, -1 in padding

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
template <class Scalar, class Ordinal = int, class Offset = std::size_t,
          class Device = Kokkos::DefaultExecutionSpace>
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

}  // namespace cispmv
