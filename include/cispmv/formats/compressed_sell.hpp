#pragma once
/// \file formats/compressed_sell.hpp
/// Compressed Sliced ELLPACK ("csell"): cispmv's own format for CI matrices. Sliced ELLPACK's
/// coalesced layout with 16-bit column deltas and 16-bit indices into a per-matrix table of values,
/// 4 bytes per stored nonzero instead of 12, lossless. This header holds the format itself: the
/// matrix (CompressedSellMatrix, its layout documented there), the orders its value table may take
/// (ValueTableOrder) and its memory footprint. Building it from CSR, the automatic choices that
/// building makes, and the way back to CSR: formats/compressed_sell_encoder.hpp. Its kernel:
/// impl/kernels/compressed_sell.hpp.

#include <Kokkos_Core.hpp>

#include "cispmv/impl/format_types.hpp"
#include "cispmv/memory_model.hpp"

#include <cstddef>
#include <cstdint>

namespace cispmv {

/// Compressed Sliced ELLPACK matrix: A = C + R, where C holds nearly every entry in 4 bytes and the
/// rest R (entries C cannot encode) is a small CSR.
///
/// Why. A CI Hamiltonian's off-diagonal elements are signed two-electron integrals or small sums of
/// them: a few thousand distinct values cover ~95 % of the entries (H2O/6-31G frozen core: the 4,096
/// most frequent cover 94.8 %, 65,536 cover 95.8 %), and the gaps between consecutive columns of a
/// row are small (all < 65,536, 90 % < 256). SpMV is memory-bound, so bytes per nonzero are time.
///
/// Layout of C (Sliced ELLPACK, paper section 3.4, with compressed entries).
/// - Rows are cut into slices of `slice_height` consecutive rows (32: a warp, one row per lane).
///   Slice s occupies `[slice_ptr(s), slice_ptr(s+1))` of `col_delta` and `value_index`; entry k of
///   local row i is at `slice_ptr(s) + k*slice_height + i`, so the lanes of a warp read consecutive
///   16-bit words. Slots past a row's `row_length(r)` are padding (delta 0, index 0) and are never read.
/// - Columns: row r's k-th stored entry has column `first_col(r) + col_delta(e_0) + ... + col_delta(e_k)`;
///   the first entry's delta is 0. A delta is the gap to the previous entry *of C* in the row, at most
///   65,534. A gap wider than that is bridged by *jump* slots, `col_delta == 65,535` (`jump_delta`): the
///   column advances by 65,535 and the slot adds nothing. A row's gaps add up to less than num_cols, so
///   jumps add at most num_cols / 65,535 slots to a row (25 for the 1.66M-column H2O full CI).
/// - Lanes per row (`row_lanes`, L: a power of two that divides slice_height, 1 by default). With
///   L > 1 a row's entries of C are dealt to L lanes as Algorithm 7 deals them to a vector's lanes:
///   lane j holds the row's entries j, j + L, j + 2L, ... (counted over the row's CSR entries). Each
///   lane is a row of the layout above (its own first column, length, deltas and jumps), and the L
///   lanes of row r are the layout rows r*L .. r*L + L-1, adjacent in one slice: so a slice holds
///   slice_height / L rows, `first_col` and `row_length` have num_rows * L entries, and a warp of
///   lanes reads consecutive 16-bit words at each step while its x gathers are a row's neighbouring
///   columns. What it is for: matrices with too few rows to fill a GPU with a thread each
///   (paper32k-1: 32K rows of ~950 entries); the kernel then reduces a row's lanes in registers
///   (the vector shape, a vector of L lanes per row).
/// - Rows sorted by length inside windows (`row_order`, SELL-C-sigma's sigma; empty by default: the
///   matrix's order). A warp steps until the longest of its rows ends, so rows of different lengths
///   in one slice leave lanes idle (paper32k-1, 8 lanes per row: 8.1 % of a warp's steps). With
///   sort_window w > 1 (whole slices) the rows of each window [k*w, (k+1)*w) are laid out longest
///   first (ties in matrix order), which never adds padding and takes the least a window allows: layout row p (its
///   lanes, first column, length and R) is matrix row `row_order(p)`, and the kernels write y(row_order(p)); x is read
///   as it is, so a row's gathers are unchanged and a warp's rows stay within one window of the matrix.
/// - Values: `value_table(value_index(e))`. The table holds the most frequent values of the matrix, at
///   most 65,536 of them, bit-exact (0.0 and -0.0 are different entries; NaN payloads are kept), by
///   default most frequent first on GPUs and in the order the rows first use them on CPUs
///   (ValueTableOrder; on GPUs, for many products, the hot values grouped into lines by the warp steps
///   that read them together: ValueTableOrder::cooccurrence).
///   Where the table would cover less than half of the entries (random values, as in the generated
///   suite), there is no table: `uses_table` is false and `inline_values(e)` holds each value in the
///   same sliced layout (10 bytes per nonzero instead of 4: only the columns compress).
/// - R: `rest_row_ptr` / `rest_col_idx` / `rest_values`, CSR of every entry whose value is not in the
///   table.
/// The product is exact up to summation order: each lane of a row adds its C entries in column
/// order, the row adds its lanes, then its R entries.
template <class Scalar, class Ordinal = int, class Offset = std::size_t, class Device = Kokkos::DefaultExecutionSpace>
struct CompressedSellMatrix : impl::FormatTypes<Scalar, Ordinal, Offset, Device> {
  using typename impl::FormatTypes<Scalar, Ordinal, Offset, Device>::device_type;
  using compact_type = std::uint16_t;
  using compact_view = Kokkos::View<compact_type*, device_type>;
  using slice_ptr_type = Kokkos::View<Offset*, device_type>;
  using ordinal_view = Kokkos::View<Ordinal*, device_type>;
  using values_type = Kokkos::View<Scalar*, device_type>;
  template <class OtherDevice>
  using rebind_device = CompressedSellMatrix<Scalar, Ordinal, Offset, OtherDevice>;

  static constexpr const char* format_name = "csell";
  static constexpr Ordinal default_slice_height = 32;
  /// Largest column gap of an entry's delta; the one above marks a jump slot.
  static constexpr std::int64_t max_delta = 65534;
  static constexpr std::uint16_t jump_delta = 65535;
  /// Most values the 16-bit index addresses.
  static constexpr std::size_t max_table_size = 65536;

  Ordinal num_rows = 0;
  Ordinal num_cols = 0;
  Ordinal slice_height = default_slice_height;
  Ordinal row_lanes = 1;           ///< lanes per row (a power of two dividing slice_height)
  std::size_t num_nonzeros = 0;    ///< entries of C and R, without padding
  std::size_t compressed_nnz = 0;  ///< entries of C (jump slots not counted)
  slice_ptr_type slice_ptr;        ///< num_slices + 1 offsets into col_delta / value_index
  compact_view col_delta;          ///< gap to the previous entry of C in the lane (0 for the first, and padding)
  compact_view value_index;        ///< index into value_table (0 in padding)
  ordinal_view first_col;          ///< column of each lane's first entry of C (0 for a lane without any)
  ordinal_view row_length;         ///< slots of C (entries and jumps) per lane, num_rows * row_lanes
  bool uses_table = true;          ///< values through value_table (else inline_values)
  values_type value_table;         ///< the distinct values C refers to (order: ValueTableOrder)
  values_type inline_values;       ///< without a table: the values, laid out as col_delta
  slice_ptr_type rest_row_ptr;     ///< R: num_rows + 1 offsets (by layout row)
  ordinal_view rest_col_idx;       ///< R: columns
  values_type rest_values;         ///< R: values
  ordinal_view row_order;          ///< matrix row of each layout row; empty: the same (no sorting)

  KOKKOS_INLINE_FUNCTION std::size_t nnz() const { return num_nonzeros; }
  KOKKOS_INLINE_FUNCTION Ordinal num_slices() const { return static_cast<Ordinal>(slice_ptr.extent(0)) - 1; }
  /// Rows of the layout: num_rows * row_lanes lanes.
  KOKKOS_INLINE_FUNCTION Ordinal num_lanes() const { return num_rows * row_lanes; }
  /// The slot of lane `lane`'s first entry; its k-th is slice_height * k further.
  KOKKOS_INLINE_FUNCTION Offset lane_start(const Ordinal lane) const {
    const Ordinal s = lane / slice_height;
    return slice_ptr(s) + static_cast<Offset>(lane - s * slice_height);
  }
  std::size_t rest_nnz() const { return rest_values.extent(0); }
  /// The matrix row (of y) that layout row `row` holds.
  KOKKOS_INLINE_FUNCTION Ordinal row_of(const Ordinal row) const {
    return row_order.extent(0) == 0 ? row : row_order(row);
  }

  /// The same matrix with every View replaced by f(View) (see CsrMatrix::map_views).
  template <class OtherDevice, class F>
  rebind_device<OtherDevice> map_views(F&& f) const {
    rebind_device<OtherDevice> out;
    out.num_rows = num_rows;
    out.num_cols = num_cols;
    out.slice_height = slice_height;
    out.row_lanes = row_lanes;
    out.num_nonzeros = num_nonzeros;
    out.compressed_nnz = compressed_nnz;
    out.uses_table = uses_table;
    out.slice_ptr = f(slice_ptr);
    out.col_delta = f(col_delta);
    out.value_index = f(value_index);
    out.first_col = f(first_col);
    out.row_length = f(row_length);
    out.value_table = f(value_table);
    out.inline_values = f(inline_values);
    out.rest_row_ptr = f(rest_row_ptr);
    out.rest_col_idx = f(rest_col_idx);
    out.rest_values = f(rest_values);
    out.row_order = f(row_order);
    return out;
  }
};

/// The order of csell's value table: it decides which values share a cache line; the entries and
/// the product are the same either way.
enum class ValueTableOrder {
  automatic,     ///< frequency for a GPU, first_use for a CPU (impl::default_table_order)
  first_use,     ///< in the order of each value's first entry, row by row
  frequency,     ///< most frequent first, ties by bits
  cooccurrence,  ///< frequency, then the hot values regrouped so that those a warp step reads together share lines
                 ///< (impl::order_table_by_cooccurrence; for GPUs and matrices multiplied many times)
};

/// Not in the paper: the allocated bytes (values_table, both 16-bit arrays with padding, per-row
/// arrays, R), so that Table 5 shows what the format really stores.
template <class S, class O, class Off, class D>
std::size_t paper_model_bytes(const CompressedSellMatrix<S, O, Off, D>& A, PaperMemoryModel = {}) {
  std::size_t bytes = 0;
  (void)A.template map_views<D>([&](const auto& v) {
    bytes += impl::view_bytes(v);
    return v;
  });
  return bytes;
}

}  // namespace cispmv

#include "cispmv/impl/kernels/compressed_sell.hpp"
