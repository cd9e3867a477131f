#pragma once
/// \file hybrid.hpp
/// The paper's hybrid ELLPACK + CSR format for CI matrices (section 4.1, Algorithm 6).

#include <Kokkos_Core.hpp>

#include "cispmv/boundary.hpp"
#include "cispmv/formats/csr.hpp"
#include "cispmv/impl/convert_helpers.hpp"
#include "cispmv/impl/format_types.hpp"
#include "cispmv/memory_model.hpp"

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
/// - Reference region: `reference_values(r, k)`, `reference_col_idx(r, k)`, k < boundary, LayoutRight
///   (row-major), because Algorithm 7 gives each row to one warp whose 32 lanes read entries
///   k, k+1, ..., k+31 of that row: consecutive addresses. `reference_row_length(r)` =
///   min(row length, boundary); slots k >= reference_row_length(r) are padding: column -1, value 0.
///   Padding exists only in rows shorter than boundary, whose expansion part is then empty.
/// - Expansion region: CSR (`expansion_row_ptr`, `expansion_col_idx`, `expansion_values`) of the remaining entries;
///   expansion_row_ptr replaces the paper's StartArr / EndArr pair (start = expansion_row_ptr(r),
///   end = expansion_row_ptr(r+1)).
///
/// Compact variant: `ReferenceIndex = std::uint16_t` stores the reference-region column indices in 16 bits
/// (the reference region of a CI matrix is narrow: BOUNDARY columns well under 65,535), so a
/// reference nonzero costs 10 bytes instead of 12 in double precision. Padding is then 0xFFFF
/// (ReferenceIndex(-1)), and to_hybrid refuses matrices whose reference-region columns do not fit.
template <class Scalar, class Ordinal = int, class Offset = std::size_t, class Device = Kokkos::DefaultExecutionSpace,
          class ReferenceIndex = Ordinal>
struct HybridMatrix : impl::FormatTypes<Scalar, Ordinal, Offset, Device> {
  static_assert(std::is_integral_v<ReferenceIndex> && sizeof(ReferenceIndex) <= sizeof(Ordinal),
                "cispmv::HybridMatrix: ReferenceIndex must be an integer type no wider than Ordinal");
  using typename impl::FormatTypes<Scalar, Ordinal, Offset, Device>::device_type;
  using reference_ordinal_type = ReferenceIndex;
  using reference_values_type = Kokkos::View<Scalar**, Kokkos::LayoutRight, device_type>;
  using reference_index_type = Kokkos::View<ReferenceIndex**, Kokkos::LayoutRight, device_type>;
  using row_length_type = Kokkos::View<Ordinal*, device_type>;
  using row_map_type = Kokkos::View<Offset*, device_type>;
  using index_type = Kokkos::View<Ordinal*, device_type>;
  using values_type = Kokkos::View<Scalar*, device_type>;
  template <class OtherDevice>
  using rebind_device = HybridMatrix<Scalar, Ordinal, Offset, OtherDevice, ReferenceIndex>;

  static constexpr const char* format_name = std::is_same_v<ReferenceIndex, Ordinal> ? "hybrid" : "hybrid16";
  /// The value marking a padded reference-region slot (-1, or all ones for unsigned ReferenceIndex).
  static constexpr ReferenceIndex padding_index = static_cast<ReferenceIndex>(-1);

  Ordinal num_rows = 0;
  Ordinal num_cols = 0;
  Ordinal boundary = 0;            ///< BOUNDARY: reference-region slots per row
  Ordinal reference_x_extent = 0;  ///< 1 + the largest reference-region column: the part of x that region reads
  std::size_t reference_nnz = 0;   ///< nonzeros in the reference region (Table 3, "Ref. Non-Zeros")

  // reference region (ELLPACK)
  reference_values_type reference_values;  ///< NonZerosEntries(num_rows, boundary), row-major
  reference_index_type reference_col_idx;  ///< ELLPACK_Column(num_rows, boundary), padding_index in padding
  row_length_type reference_row_length;    ///< min(row length, boundary)
  // expansion region (CSR)
  row_map_type expansion_row_ptr;  ///< num_rows + 1 offsets (StartArr / EndArr)
  index_type expansion_col_idx;    ///< CSR_Column
  values_type expansion_values;    ///< Value

  KOKKOS_INLINE_FUNCTION std::size_t expansion_nnz() const { return expansion_values.extent(0); }
  KOKKOS_INLINE_FUNCTION std::size_t nnz() const { return reference_nnz + expansion_values.extent(0); }

  /// The same matrix with every View replaced by f(View) (see CsrMatrix::map_views).
  template <class OtherDevice, class F>
  rebind_device<OtherDevice> map_views(F&& f) const {
    rebind_device<OtherDevice> out;
    out.num_rows = num_rows;
    out.num_cols = num_cols;
    out.boundary = boundary;
    out.reference_x_extent = reference_x_extent;
    out.reference_nnz = reference_nnz;
    out.reference_values = f(reference_values);
    out.reference_col_idx = f(reference_col_idx);
    out.reference_row_length = f(reference_row_length);
    out.expansion_row_ptr = f(expansion_row_ptr);
    out.expansion_col_idx = f(expansion_col_idx);
    out.expansion_values = f(expansion_values);
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

// ------------------------------------------------------------------------------ conversions
/// The paper's hybrid format from host CSR (Algorithm 6 in O(nnz)): the first `boundary` nonzeros of
/// each row (in stored order; cispmv's CSR rows are column-sorted) go to the reference region, the
/// rest to the expansion region. 0 <= boundary <= number of columns; see choose_boundary for the
/// automatic choice.
/// `to_hybrid<std::uint16_t>(A, boundary)` builds the compact variant with 16-bit reference-region
/// column indices (see HybridMatrix) and throws std::invalid_argument if a reference-region column
/// does not fit.
template <class ReferenceIndex = void, class Scalar, class Ordinal, class Offset>
auto to_hybrid(const HostCsrMatrix<Scalar, Ordinal, Offset>& A, Ordinal boundary) {
  using ReferenceIndexType = std::conditional_t<std::is_void_v<ReferenceIndex>, Ordinal, ReferenceIndex>;
  if (boundary < 0 || boundary > A.num_cols) {
    throw std::invalid_argument("cispmv::to_hybrid: BOUNDARY = " + std::to_string(boundary) + " is outside [0, " +
                                std::to_string(A.num_cols) + "] (the number of columns)");
  }
  HybridMatrix<Scalar, Ordinal, Offset, HostExecSpace, ReferenceIndexType> H;
  H.num_rows = A.num_rows;
  H.num_cols = A.num_cols;
  H.boundary = boundary;
  H.reference_row_length = decltype(H.reference_row_length)(
      Kokkos::view_alloc("hybrid::reference_row_length", Kokkos::WithoutInitializing), A.num_rows);
  H.expansion_row_ptr =
      decltype(H.expansion_row_ptr)("hybrid::expansion_row_ptr", static_cast<std::size_t>(A.num_rows) + 1);
  std::size_t reference_nnz = 0;
  Kokkos::parallel_reduce(
      "cispmv::to_hybrid::count", Kokkos::RangePolicy<HostExecSpace>(0, A.num_rows),
      [&](const Ordinal r, std::size_t& n) {
        const Offset len = A.row_ptr(r + 1) - A.row_ptr(r);
        const Ordinal in_ref = static_cast<Ordinal>(std::min<Offset>(len, static_cast<Offset>(boundary)));
        H.reference_row_length(r) = in_ref;
        H.expansion_row_ptr(r + 1) = len - static_cast<Offset>(in_ref);
        n += static_cast<std::size_t>(in_ref);
      },
      reference_nnz);
  H.reference_nnz = reference_nnz;
  Ordinal reference_x_extent = 0;
  Kokkos::parallel_reduce(
      "cispmv::to_hybrid::reference_x_extent", Kokkos::RangePolicy<HostExecSpace>(0, A.num_rows),
      [&](const Ordinal r, Ordinal& w) {
        for (Offset j = A.row_ptr(r); j < A.row_ptr(r) + static_cast<Offset>(H.reference_row_length(r)); ++j) {
          w = std::max(w, static_cast<Ordinal>(A.col_idx(j) + 1));
        }
      },
      Kokkos::Max<Ordinal>(reference_x_extent));
  H.reference_x_extent = std::max<Ordinal>(0, reference_x_extent);  // Max starts from the lowest value
  for (Ordinal r = 0; r < A.num_rows; ++r) H.expansion_row_ptr(r + 1) += H.expansion_row_ptr(r);
  const Offset expansion_nnz = H.expansion_row_ptr(A.num_rows);
  H.reference_values = decltype(H.reference_values)("hybrid::reference_values", A.num_rows, boundary);
  H.reference_col_idx = decltype(H.reference_col_idx)(
      Kokkos::view_alloc("hybrid::reference_col_idx", Kokkos::WithoutInitializing), A.num_rows, boundary);
  Kokkos::deep_copy(H.reference_col_idx, H.padding_index);
  if constexpr (!std::is_same_v<ReferenceIndexType, Ordinal>) {
    // every reference-region column must fit ReferenceIndex and differ from the padding marker
    Ordinal widest = -1, widest_row = -1;
    for (Ordinal r = 0; r < A.num_rows; ++r) {
      const Offset end =
          A.row_ptr(r) + std::min<Offset>(A.row_ptr(r + 1) - A.row_ptr(r), static_cast<Offset>(boundary));
      for (Offset j = A.row_ptr(r); j < end; ++j) {
        if (A.col_idx(j) > widest) widest = A.col_idx(j), widest_row = r;
      }
    }
    if (widest >= static_cast<Ordinal>(H.padding_index)) {
      throw std::invalid_argument("cispmv::to_hybrid: reference-region column " + std::to_string(widest) + " (row " +
                                  std::to_string(widest_row) + ") does not fit " +
                                  std::to_string(8 * sizeof(ReferenceIndexType)) + "-bit indices (at most " +
                                  std::to_string(H.padding_index - 1) +
                                  "); use the default index type or a smaller BOUNDARY");
    }
  }
  H.expansion_col_idx = decltype(H.expansion_col_idx)(
      Kokkos::view_alloc("hybrid::expansion_col_idx", Kokkos::WithoutInitializing), expansion_nnz);
  H.expansion_values = decltype(H.expansion_values)(
      Kokkos::view_alloc("hybrid::expansion_values", Kokkos::WithoutInitializing), expansion_nnz);
  Kokkos::parallel_for("cispmv::to_hybrid::fill", Kokkos::RangePolicy<HostExecSpace>(0, A.num_rows),
                       [&](const Ordinal r) {
                         Offset j = A.row_ptr(r);
                         for (Ordinal k = 0; k < H.reference_row_length(r); ++k, ++j) {
                           H.reference_values(r, k) = A.values(j);
                           H.reference_col_idx(r, k) = static_cast<ReferenceIndexType>(A.col_idx(j));
                         }
                         for (Offset e = H.expansion_row_ptr(r); j < A.row_ptr(r + 1); ++j, ++e) {
                           H.expansion_values(e) = A.values(j);
                           H.expansion_col_idx(e) = A.col_idx(j);
                         }
                       });
  return H;
}

/// Hybrid format with the automatic BOUNDARY (choose_boundary).
template <class ReferenceIndex = void, class Scalar, class Ordinal, class Offset>
auto to_hybrid(const HostCsrMatrix<Scalar, Ordinal, Offset>& A) {
  return to_hybrid<ReferenceIndex>(A, choose_boundary(A).boundary);
}

/// Host CSR from the hybrid format: each row is its reference-region entries followed by its
/// expansion-region entries, i.e. the original row.
template <class Scalar, class Ordinal, class Offset, class ReferenceIndex>
HostCsrMatrix<Scalar, Ordinal, Offset> to_csr(
    const HybridMatrix<Scalar, Ordinal, Offset, HostExecSpace, ReferenceIndex>& H) {
  return impl::csr_from_rows<HostCsrMatrix<Scalar, Ordinal, Offset>>(
      "csr", H.num_rows, H.num_cols,
      [&](Ordinal r) {
        return static_cast<Offset>(H.reference_row_length(r)) + (H.expansion_row_ptr(r + 1) - H.expansion_row_ptr(r));
      },
      [&](Ordinal r, Offset j) {
        const Offset in_ref = static_cast<Offset>(H.reference_row_length(r));
        if (j < in_ref)
          return std::make_pair(static_cast<Ordinal>(H.reference_col_idx(r, j)), H.reference_values(r, j));
        const Offset e = H.expansion_row_ptr(r) + (j - in_ref);
        return std::make_pair(H.expansion_col_idx(e), H.expansion_values(e));
      });
}

/// The paper's formula for the proposed format (section 4.1, Table 5).
template <class S, class O, class Off, class D, class R>
std::size_t paper_model_bytes(const HybridMatrix<S, O, Off, D, R>& A, PaperMemoryModel m = {}) {
  return m.hybrid(static_cast<std::size_t>(A.num_rows), static_cast<std::size_t>(A.boundary), A.expansion_nnz());
}

}  // namespace cispmv

#include "cispmv/impl/kernels/hybrid.hpp"
