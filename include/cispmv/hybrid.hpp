#pragma once
/// \file hybrid.hpp
/// The paper's hybrid ELLPACK + CSR format for CI matrices (section 4.1, Algorithm 6).

#include <Kokkos_Core.hpp>

#include "cispmv/impl/format_types.hpp"

#include <cstddef>
#include <type_traits>

namespace cispmv {

/// Hybrid ELL+CSR matrix (paper, section 4.1, Algorithm 6): per row, the first `boundary` stored
/// nonzeros form the *reference region* (an ELLPACK block), the rest of the row the *expansion
/// region* (CSR).
///
/// Which entries go to the reference region. The paper's text says "columns 0..BOUNDARY-1" go to
/// ELLPACK, but its Algorithm 6 counts nonzeros (`if c < BOUNDARY`, c = nonzeros seen so far in the
/// row) and its memory formula sizes the block as ROWS x BOUNDARY, which only holds for "the first
/// BOUNDARY nonzeros of each row". Table 5 follows the formula, so cispmv implements the algorithm:
/// reference region = the first min(row length, boundary) nonzeros of each row, in column order.
/// For the paper's matrices (exactly 655 nonzeros per row in the leading 10% of the columns) both
/// readings give the same split with boundary = 655.
///
/// Layout.
/// - Reference region: `ref_values(r, k)`, `ref_col_idx(r, k)`, k < boundary, LayoutRight
///   (row-major), because Algorithm 7 gives each row to one warp whose 32 lanes read entries
///   k, k+1, ..., k+31 of that row: consecutive addresses. `ref_row_length(r)` =
///   min(row length, boundary); slots k >= ref_row_length(r) are padding: column -1, value 0.
///   Padding exists only in rows shorter than boundary, whose expansion part is then empty.
/// - Expansion region: CSR (`exp_row_ptr`, `exp_col_idx`, `exp_values`) of the remaining entries;
///   exp_row_ptr replaces the paper's StartArr / EndArr pair (start = exp_row_ptr(r),
///   end = exp_row_ptr(r+1)).
///
/// Compact variant: `RefIndex = std::uint16_t` stores the reference-region column indices in 16 bits
/// (the reference region of a CI matrix is narrow: BOUNDARY columns well under 65,535), so a
/// reference nonzero costs 10 bytes instead of 12 in double precision. Padding is then 0xFFFF
/// (RefIndex(-1)), and to_hybrid refuses matrices whose reference-region columns do not fit.
template <class Scalar, class Ordinal = int, class Offset = std::size_t,
          class Device = Kokkos::DefaultExecutionSpace, class RefIndex = Ordinal>
struct HybridMatrix : impl::FormatTypes<Scalar, Ordinal, Offset, Device> {
  static_assert(std::is_integral_v<RefIndex> && sizeof(RefIndex) <= sizeof(Ordinal),
                "cispmv::HybridMatrix: RefIndex must be an integer type no wider than Ordinal");
  using typename impl::FormatTypes<Scalar, Ordinal, Offset, Device>::device_type;
  using ref_ordinal_type = RefIndex;
  using ref_values_type = Kokkos::View<Scalar**, Kokkos::LayoutRight, device_type>;
  using ref_index_type = Kokkos::View<RefIndex**, Kokkos::LayoutRight, device_type>;
  using row_length_type = Kokkos::View<Ordinal*, device_type>;
  using row_map_type = Kokkos::View<Offset*, device_type>;
  using index_type = Kokkos::View<Ordinal*, device_type>;
  using values_type = Kokkos::View<Scalar*, device_type>;
  template <class OtherDevice>
  using rebind_device = HybridMatrix<Scalar, Ordinal, Offset, OtherDevice, RefIndex>;

  static constexpr const char* format_name = std::is_same_v<RefIndex, Ordinal> ? "hybrid" : "hybrid16";
  /// The value marking a padded reference-region slot (-1, or all ones for unsigned RefIndex).
  static constexpr RefIndex padding_index = static_cast<RefIndex>(-1);

  Ordinal num_rows = 0;
  Ordinal num_cols = 0;
  Ordinal boundary = 0;     ///< BOUNDARY: reference-region slots per row
  Ordinal ref_width = 0;    ///< 1 + the largest reference-region column: the part of x that region reads
  std::size_t ref_nnz = 0;  ///< nonzeros in the reference region (Table 3, "Ref. Non-Zeros")

  // reference region (ELLPACK)
  ref_values_type ref_values;      ///< NonZerosEntries(num_rows, boundary), row-major
  ref_index_type ref_col_idx;      ///< ELLPACK_Column(num_rows, boundary), padding_index in padding
  row_length_type ref_row_length;  ///< min(row length, boundary)
  // expansion region (CSR)
  row_map_type exp_row_ptr;  ///< num_rows + 1 offsets (StartArr / EndArr)
  index_type exp_col_idx;    ///< CSR_Column
  values_type exp_values;    ///< Value

  KOKKOS_INLINE_FUNCTION std::size_t exp_nnz() const { return exp_values.extent(0); }
  KOKKOS_INLINE_FUNCTION std::size_t nnz() const { return ref_nnz + exp_values.extent(0); }

  /// The same matrix with every View replaced by f(View) (see CsrMatrix::map_views).
  template <class OtherDevice, class F>
  rebind_device<OtherDevice> map_views(F&& f) const {
    rebind_device<OtherDevice> out;
    out.num_rows = num_rows;
    out.num_cols = num_cols;
    out.boundary = boundary;
    out.ref_width = ref_width;
    out.ref_nnz = ref_nnz;
    out.ref_values = f(ref_values);
    out.ref_col_idx = f(ref_col_idx);
    out.ref_row_length = f(ref_row_length);
    out.exp_row_ptr = f(exp_row_ptr);
    out.exp_col_idx = f(exp_col_idx);
    out.exp_values = f(exp_values);
    return out;
  }
};

template <class T>
struct is_hybrid_matrix : std::false_type {};
template <class S, class O, class Off, class D, class R>
struct is_hybrid_matrix<HybridMatrix<S, O, Off, D, R>> : std::true_type {};
/// True for cispmv::HybridMatrix.
template <class T>
inline constexpr bool is_hybrid_matrix_v = is_hybrid_matrix<T>::value;

}  // namespace cispmv
