#pragma once
/// \file formats/compressed_sell.hpp
/// Compressed Sliced ELLPACK ("csell"): cispmv's own format for CI matrices. Sliced ELLPACK's
/// coalesced layout with 16-bit column deltas and 16-bit indices into a per-matrix table of values,
/// 4 bytes per stored nonzero instead of 12, lossless. Its kernel: impl/kernels/compressed_sell.hpp.

#include <Kokkos_Core.hpp>

#include "cispmv/formats/csr.hpp"
#include "cispmv/impl/backend.hpp"
#include "cispmv/impl/convert_helpers.hpp"
#include "cispmv/impl/format_types.hpp"
#include "cispmv/impl/hash.hpp"
#include "cispmv/impl/launch.hpp"
#include "cispmv/memory_model.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

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

namespace impl {

/// csell's table order for execution space Exec (H100 and its host's 16 cores, frozen-core H2O/6-31G
/// full CI, perf/results/2026-11-24-h100-session6): a GPU's lookups are faster with the hot values
/// packed first (0.381 against 0.392 ms: the few lines they fill stay in L1); a CPU's with values
/// that neighbouring rows use together sharing lines (11.1 against 12.1 ms).
template <class Exec>
constexpr ValueTableOrder default_table_order() {
  return is_gpu_space_v<Exec> ? ValueTableOrder::frequency : ValueTableOrder::first_use;
}

/// csell's table order for a matrix multiplied many times on Exec (FormatParams::for_space: plans,
/// `cispmv run`, the benchmarks): on GPUs the co-occurrence order, whose ordering pass (a sample of
/// the layout's steps counted on the host, then every slot's index remapped: on our 2 cores 0.25 s for
/// the frozen-core FCI's 10^8 entries, beside a conversion of 0.85 s) a few thousand products repay. H200, session 20
/// (perf/results/2026-11-26-session20/), the library's plan, ms per product, frequency against
/// co-occurrence order: frozen-core FCI 0.2972 / 0.2854 (0.3029 / 0.2916 in a second run), all-electron
/// FCI 2.226 / 2.071. The rest as default_table_order (`cispmv ci`'s few dozen products keep that).
template <class Exec>
constexpr ValueTableOrder repeated_products_table_order() {
  return is_gpu_space_v<Exec> ? ValueTableOrder::cooccurrence : default_table_order<Exec>();
}

/// The bits of a value, for bit-exact table lookups (0.0 and -0.0, and NaN payloads, stay apart).
template <class Scalar>
KOKKOS_INLINE_FUNCTION std::uint64_t value_bits(Scalar v) {
  using Bits = std::conditional_t<sizeof(Scalar) == 8, std::uint64_t, std::uint32_t>;
  Bits b;
  memcpy(&b, &v, sizeof(Scalar));  // the one type pun C++17 allows, in host and CUDA device code
  return static_cast<std::uint64_t>(b);
}

/// A read-only open-addressing map from value bits to a table index (power-of-two size, at most half
/// full) in the memory of `Device`: the converter's lookup, safe from many threads on any backend.
template <class Device>
struct ValueIndexMap {
  Kokkos::View<const std::uint64_t*, Device> keys;
  Kokkos::View<const std::int32_t*, Device> slots;  ///< the table index of keys(s), -1 where empty
  std::uint64_t mask = 0;

  ValueIndexMap() = default;
  /// Built on the host from the table's keys (value_bits of each value, in table order), then copied.
  explicit ValueIndexMap(const std::vector<std::uint64_t>& table_keys) {
    std::size_t size = 16;
    while (size < 2 * table_keys.size()) size *= 2;
    mask = size - 1;
    Kokkos::View<std::uint64_t*, Kokkos::HostSpace> k("csell::index_keys", size);
    Kokkos::View<std::int32_t*, Kokkos::HostSpace> s(
        Kokkos::view_alloc("csell::index_slots", Kokkos::WithoutInitializing), size);
    Kokkos::deep_copy(s, -1);
    for (std::size_t i = 0; i < table_keys.size(); ++i) {
      std::uint64_t at = splitmix64_mix(table_keys[i]) & mask;
      while (s(at) >= 0) at = (at + 1) & mask;
      k(at) = table_keys[i];
      s(at) = static_cast<std::int32_t>(i);
    }
    keys = mirror_to<Device>(k);
    slots = mirror_to<Device>(s);
  }
  /// The index of `key`, or -1.
  KOKKOS_INLINE_FUNCTION std::int32_t find(std::uint64_t key) const {
    std::uint64_t at = splitmix64_mix(key) & mask;
    while (slots(at) >= 0) {
      if (keys(at) == key) return slots(at);
      at = (at + 1) & mask;
    }
    return -1;
  }
};

/// The value table of A: its most frequent values (by bits), at most `max_size`, most frequent first,
/// ties by bits (deterministic). Frequencies are counted on at most `max_samples` entries spread evenly
/// over the matrix (all of them for smaller matrices): the table is a choice of what to compress, so a
/// sample suffices, and the encoding stays exact whatever the table holds. A matrix in device memory
/// is sampled there; only the samples come to the host.
template <class Scalar, class Ordinal, class Offset, class Device>
std::vector<Scalar> frequent_values(const CsrMatrix<Scalar, Ordinal, Offset, Device>& A, std::size_t max_size,
                                    double* coverage = nullptr, std::size_t max_samples = std::size_t(1) << 25) {
  using Exec = typename CsrMatrix<Scalar, Ordinal, Offset, Device>::execution_space;
  const std::size_t nnz = A.nnz();
  const std::size_t stride = std::max<std::size_t>(1, (nnz + max_samples - 1) / std::max<std::size_t>(1, max_samples));
  const std::size_t count = nnz == 0 ? 0 : (nnz - 1) / stride + 1;
  Kokkos::View<std::uint64_t*, typename Exec::memory_space> sampled(
      Kokkos::view_alloc("cispmv::frequent_values::samples", Kokkos::WithoutInitializing), count);
  const auto values = A.values;
  Kokkos::parallel_for(
      "cispmv::frequent_values::sample",
      Kokkos::RangePolicy<Exec, Kokkos::IndexType<std::int64_t>>(0, static_cast<std::int64_t>(count)),
      KOKKOS_LAMBDA(const std::int64_t i) { sampled(i) = value_bits(values(static_cast<std::size_t>(i) * stride)); });
  const auto bits = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), sampled);  // no copy on the host
  std::sort(bits.data(), bits.data() + count);
  std::vector<std::pair<std::size_t, std::uint64_t>> counted;  // (count, bits)
  for (std::size_t i = 0; i < count;) {
    std::size_t j = i;
    while (j < count && bits(j) == bits(i)) ++j;
    counted.emplace_back(j - i, bits(i));
    i = j;
  }
  const std::size_t keep = std::min(max_size, counted.size());
  std::partial_sort(
      counted.begin(), counted.begin() + static_cast<std::ptrdiff_t>(keep), counted.end(),
      [](const auto& a, const auto& b) { return a.first > b.first || (a.first == b.first && a.second < b.second); });
  std::vector<Scalar> table(keep);
  std::size_t covered = 0;
  for (std::size_t i = 0; i < keep; ++i) covered += counted[i].first;
  if (coverage != nullptr) *coverage = count == 0 ? 1.0 : static_cast<double>(covered) / static_cast<double>(count);
  for (std::size_t i = 0; i < keep; ++i) {
    using Bits = std::conditional_t<sizeof(Scalar) == 8, std::uint64_t, std::uint32_t>;
    const Bits b = static_cast<Bits>(counted[i].second);
    std::memcpy(&table[i], &b, sizeof(Scalar));
  }
  return table;
}

/// The first row of A whose columns are not strictly increasing (A.num_rows if none).
template <class Scalar, class Ordinal, class Offset, class Device>
Ordinal first_unsorted_row(const CsrMatrix<Scalar, Ordinal, Offset, Device>& A) {
  using Exec = typename CsrMatrix<Scalar, Ordinal, Offset, Device>::execution_space;
  const auto row_ptr = A.row_ptr;
  const auto col_idx = A.col_idx;
  Ordinal unsorted = A.num_rows;
  Kokkos::parallel_reduce(
      "cispmv::to_compressed_sell::check", Kokkos::RangePolicy<Exec, Kokkos::IndexType<Ordinal>>(0, A.num_rows),
      KOKKOS_LAMBDA(const Ordinal r, Ordinal& first) {
        for (Offset k = row_ptr(r) + 1; k < row_ptr(r + 1); ++k) {
          if (col_idx(k) <= col_idx(k - 1)) {
            first = r < first ? r : first;
            return;
          }
        }
      },
      Kokkos::Min<Ordinal>(unsorted));
  return unsorted;
}

/// Up to `quota` of A's values, evenly strided, into samples(at, ...); returns how many.
template <class Scalar, class Ordinal, class Offset, class Device, class Samples>
std::size_t sample_values(const CsrMatrix<Scalar, Ordinal, Offset, Device>& A, std::size_t quota,
                          const Samples& samples, std::size_t at) {
  using Exec = typename CsrMatrix<Scalar, Ordinal, Offset, Device>::execution_space;
  const std::size_t nnz = A.nnz();
  const std::size_t stride = std::max<std::size_t>(1, (nnz + quota - 1) / quota);
  const std::size_t count = nnz == 0 ? 0 : (nnz - 1) / stride + 1;
  const auto values = A.values;
  Kokkos::parallel_for(
      "cispmv::to_compressed_sell::samples",
      Kokkos::RangePolicy<Exec, Kokkos::IndexType<std::int64_t>>(0, static_cast<std::int64_t>(count)),
      KOKKOS_LAMBDA(const std::int64_t j) {
        samples(at + static_cast<std::size_t>(j)) = values(static_cast<std::size_t>(j) * stride);
      });
  return count;
}

/// The two row passes of to_compressed_sell, on the matrix's own execution space. Count: each row's
/// entries of C (jump slots included), its first column and its entries of R. Fill: the slots.
template <class Scalar, class Ordinal, class Offset, class Device>
struct CompressedSellEncoder {
  using Csr = CsrMatrix<Scalar, Ordinal, Offset, Device>;
  using Matrix = CompressedSellMatrix<Scalar, Ordinal, Offset, Device>;
  struct Count {};
  struct Fill {};
  Csr A;
  Matrix C;
  ValueIndexMap<typename Csr::device_type> index;
  Kokkos::View<Offset*, typename Csr::device_type> rest_count;  ///< row r's entries of R at r + 1
  /// With ValueTableOrder::first_use: the first entry (CSR position) of each table value, filled
  /// by the count pass (empty otherwise).
  Kokkos::View<unsigned long long*, typename Csr::device_type> first_use;
  /// A is rows row_offset.. of the matrix (to_compressed_sell_by_blocks), whose entries before it
  /// number position_offset.
  Ordinal row_offset = 0;
  unsigned long long position_offset = 0;
  /// With rows sorted in windows (sort_rows_in_windows): the layout row of each matrix row, where the
  /// fill pass writes it (the count pass writes by matrix row). Empty: the same.
  Kokkos::View<Ordinal*, typename Csr::device_type> position;

  /// f(k, kept, jumps before it, its delta after the jumps, table index) for the entries of row r
  /// that lane `lane` of `lanes` holds: the row's CSR entries lane, lane + lanes, ... in order.
  template <class F>
  KOKKOS_INLINE_FUNCTION void for_each_entry(const Ordinal r, const Ordinal lane, const Ordinal lanes, F&& f) const {
    std::int64_t previous = -1;
    const Offset end = A.row_ptr(r + 1);
    for (Offset k = A.row_ptr(r) + static_cast<Offset>(lane); k < end; k += static_cast<Offset>(lanes)) {
      const std::int64_t c = A.col_idx(k);
      const std::int32_t slot = C.uses_table ? index.find(value_bits(A.values(k))) : 0;
      std::int64_t gap = previous < 0 ? 0 : c - previous;
      std::int64_t jumps = 0;
      while (gap > Matrix::max_delta) {  // the gaps of a row add up to < num_cols: few slots per row
        gap -= Matrix::jump_delta;
        ++jumps;
      }
      const bool kept = slot >= 0;
      f(k, kept, kept ? jumps : 0, gap, slot);
      if (kept) previous = c;
    }
  }

  KOKKOS_INLINE_FUNCTION void operator()(Count, const Ordinal r) const {
    Offset rest = 0;
    const bool record = first_use.extent(0) > 0;
    const Ordinal row = r + row_offset;  // in C
    const Ordinal lanes = C.row_lanes;
    for (Ordinal lane = 0; lane < lanes; ++lane) {
      Ordinal kept = 0;
      bool first = true;
      const Ordinal at_lane = row * lanes + lane;
      C.first_col(at_lane) = 0;
      for_each_entry(r, lane, lanes, [&](Offset k, bool keep, std::int64_t jumps, std::int64_t, std::int32_t slot) {
        if (!keep) {
          ++rest;
          return;
        }
        const auto at = static_cast<unsigned long long>(k) + position_offset;
        if (record && first_use(slot) > at) Kokkos::atomic_fetch_min(&first_use(slot), at);  // rarely taken
        if (first) C.first_col(at_lane) = A.col_idx(k);
        first = false;
        kept += static_cast<Ordinal>(1 + jumps);
      });
      C.row_length(at_lane) = kept;
    }
    rest_count(static_cast<std::size_t>(row) + 1) = rest;
  }

  KOKKOS_INLINE_FUNCTION void operator()(Fill, const Ordinal r) const {
    const Ordinal row = position.extent(0) > 0 ? position(r + row_offset) : r + row_offset;  // in C
    const Ordinal lanes = C.row_lanes;
    const Offset step = static_cast<Offset>(C.slice_height);
    Offset rest_at = C.rest_row_ptr(row);
    const bool has_rest = C.rest_row_ptr(row + 1) > rest_at;
    for (Ordinal lane = 0; lane < lanes; ++lane) {
      Offset at = C.lane_start(row * lanes + lane);
      for_each_entry(r, lane, lanes,
                     [&](Offset k, bool keep, std::int64_t jumps, std::int64_t delta, std::int32_t slot) {
                       if (keep) {
                         for (std::int64_t j = 0; j < jumps; ++j) {  // value index / inline value stay 0
                           C.col_delta(at) = Matrix::jump_delta;
                           at += step;
                         }
                         C.col_delta(at) = static_cast<std::uint16_t>(delta);
                         if (C.uses_table) {
                           C.value_index(at) = static_cast<std::uint16_t>(slot);
                         } else {
                           C.inline_values(at) = A.values(k);
                         }
                         at += step;
                       } else if (lanes == 1) {  // one lane meets R's entries in column order
                         C.rest_col_idx(rest_at) = A.col_idx(k);
                         C.rest_values(rest_at) = A.values(k);
                         ++rest_at;
                       }
                     });
    }
    if (lanes > 1 && has_rest) {  // R in column order: the row's entries once more, as one lane
      for_each_entry(r, 0, 1, [&](Offset k, bool keep, std::int64_t, std::int64_t, std::int32_t) {
        if (keep) return;
        C.rest_col_idx(rest_at) = A.col_idx(k);
        C.rest_values(rest_at) = A.values(k);
        ++rest_at;
      });
    }
  }
};

/// Most rows a window of csell's row sort holds (sort_rows_in_windows ranks each row against its
/// window: O(num_rows x window) work).
inline constexpr int max_sort_window = 4096;

/// csell's automatic sort window: whole slices, at least default_sort_rows rows. H200, d745740
/// (perf/results/2026-11-24-session9/), windows of 64 / 256 / 1,024 / 4,096 rows against none:
/// paper32k-1 (8 lanes) 0.115 / 0.116 / 0.115 / 0.117 ms against 0.119; frozen-core FCI (4 lanes)
/// 0.316 / 0.327 / 0.340 / 0.340 against 0.320; all-electron FCI (thread per row) 2.46 / 2.55 / 2.72 /
/// 2.86 against 2.51. Wider windows remove more padding but spread a warp's rows, and their gathers
/// of x, over more of a CI Hamiltonian's rows (which share columns with their neighbours).
/// With values inline (`values_inline`: no value table, so not a CI Hamiltonian; random columns
/// share nothing with their neighbours' rows) windows of inline_sort_rows: H200, session 11, loads
/// ahead (perf/results/2026-11-24-session11/): scaled-1048576 (thread per row, unroll 8) 64 / 256 /
/// 1,024 / 4,096 rows 3.98 / 3.94 / 3.72 / 3.72 ms; paper32k-1 (4 lanes) 0.094-0.096 / 0.093-0.097 /
/// 0.091-0.094 / 0.091-0.095.
/// A CI Hamiltonian encoded with its values inline for several vectors per product
/// (block_values_inline) takes the inline window too: H200, session 12, frozen-core FCI, 8 vectors,
/// lane shape: 0.790 ms against 0.864 in the matrix's order.
inline constexpr int default_sort_rows = 64;
inline constexpr int inline_sort_rows = 1024;
inline int automatic_sort_window(int slice_height, int row_lanes, bool values_inline = false) {
  const int slice_rows = std::max(1, slice_height / std::max(1, row_lanes));
  const int rows = values_inline ? inline_sort_rows : default_sort_rows;
  const int window = (rows + slice_rows - 1) / slice_rows * slice_rows;
  return window <= max_sort_window ? window : 1;
}

/// Several vectors per product on a GPU take csell with its values inline (no value table). Their
/// lane kernel is bound by L1 throughput, not by bytes: per entry it loads the 64-byte row of X (8
/// vectors) and, with a table, one scattered lookup, a 32-byte sector of its own, where inline values
/// are 8 contiguous bytes of a warp's 128. H200, session 12 (perf/results/2026-11-24-session12/),
/// values inline against the table (rows in the matrix's order): frozen-core FCI 8 vectors 0.864
/// against 1.00 ms, 16 vectors 1.32 against 1.50; all-electron FCI 8 vectors 8.26 against 9.32 (7.46
/// with the rows sorted), for 2.5x the bytes of C. One vector keeps the table: its kernel waits on
/// bytes and on its gathers' latency, and there 4 bytes per entry win.
template <class Exec>
inline constexpr bool block_values_inline = is_gpu_space_v<Exec>;

/// Lays C's rows out longest first inside windows of `window` consecutive rows, ties in matrix order
/// (CompressedSellMatrix::row_order). Called between the count and the fill pass of the encoder: it
/// permutes what the count pass wrote by matrix row (each lane's first column and length, and the
/// row's entries of R at rest_count(row + 1)) into layout order, sets C.row_order, and returns each
/// matrix row's layout row (the fill pass's CompressedSellEncoder::position). A row's length is its
/// longest lane's, the steps a warp takes for it. In parallel over rows, O(num_rows x window).
template <class Scalar, class Ordinal, class Offset, class Device, class RestCount>
Kokkos::View<Ordinal*, Device> sort_rows_in_windows(CompressedSellMatrix<Scalar, Ordinal, Offset, Device>& C,
                                                    RestCount& rest_count, const Ordinal window) {
  using Matrix = CompressedSellMatrix<Scalar, Ordinal, Offset, Device>;
  using Exec = typename Matrix::execution_space;
  using Rows = Kokkos::RangePolicy<Exec, Kokkos::IndexType<Ordinal>>;
  const Ordinal n = C.num_rows;
  const Ordinal L = C.row_lanes;
  const auto length = C.row_length;
  const auto first_col = C.first_col;
  const auto rest = rest_count;
  Kokkos::View<Ordinal*, Device> width(Kokkos::view_alloc("csell::row_width", Kokkos::WithoutInitializing), n);
  Kokkos::parallel_for(
      "cispmv::to_compressed_sell::row_width", Rows(0, n), KOKKOS_LAMBDA(const Ordinal r) {
        Ordinal w = 0;
        for (Ordinal j = 0; j < L; ++j) w = length(r * L + j) > w ? length(r * L + j) : w;
        width(r) = w;
      });
  Kokkos::View<Ordinal*, Device> position(Kokkos::view_alloc("csell::position", Kokkos::WithoutInitializing), n);
  Kokkos::View<Ordinal*, Device> order(Kokkos::view_alloc("csell::row_order", Kokkos::WithoutInitializing), n);
  Kokkos::parallel_for(
      "cispmv::to_compressed_sell::sort_windows", Rows(0, n), KOKKOS_LAMBDA(const Ordinal r) {
        const Ordinal begin = r / window * window;
        const Ordinal end = n - begin < window ? n : begin + window;
        const Ordinal w = width(r);
        Ordinal rank = 0;  // rows of the window laid out before r
        for (Ordinal q = begin; q < end; ++q) rank += (width(q) > w || (width(q) == w && q < r)) ? 1 : 0;
        position(r) = begin + rank;
        order(begin + rank) = r;
      });
  const std::size_t n_lanes = static_cast<std::size_t>(n) * static_cast<std::size_t>(L);
  typename Matrix::ordinal_view sorted_length(Kokkos::view_alloc("csell::row_length", Kokkos::WithoutInitializing),
                                              n_lanes);
  typename Matrix::ordinal_view sorted_first(Kokkos::view_alloc("csell::first_col", Kokkos::WithoutInitializing),
                                             n_lanes);
  RestCount sorted_rest("csell::rest_row_ptr", static_cast<std::size_t>(n) + 1);
  Kokkos::parallel_for(
      "cispmv::to_compressed_sell::permute_rows", Rows(0, n), KOKKOS_LAMBDA(const Ordinal p) {
        const Ordinal r = order(p);
        for (Ordinal j = 0; j < L; ++j) {
          sorted_length(p * L + j) = length(r * L + j);
          sorted_first(p * L + j) = first_col(r * L + j);
        }
        sorted_rest(static_cast<std::size_t>(p) + 1) = rest(static_cast<std::size_t>(r) + 1);
      });
  C.row_length = sorted_length;
  C.first_col = sorted_first;
  C.row_order = order;
  rest_count = sorted_rest;
  return position;
}

/// The most frequent values that ValueTableOrder::cooccurrence regroups (a multiple of 16: whole
/// 128-byte lines of doubles), and about how many warp steps (slots of a slice) it samples, in whole
/// slices spread evenly over the matrix.
inline constexpr int cooccurrence_hot_values = 4096;
inline constexpr std::size_t cooccurrence_sampled_steps = std::size_t(1) << 16;

/// Regroups the hot values of C's table (most frequent first on entry; the first
/// cooccurrence_hot_values of them, whole lines of 16) so that the values a GPU's warp step reads
/// together share 128-byte lines, and remaps C's value indices to match; the product is bit for bit
/// the same. Why (H200, session 20, perf/results/2026-11-26-session20/): a warp's gather costs the
/// L1 about one cycle per ~6 sectors it looks up, and a step of the frozen-core FCI's csell looks
/// up ~18 sectors of the table in frequency order; lines of values that share steps cut that to ~14.5
/// and the product by 4 % (all-electron: 7 %). Even 2^14 sampled steps order the table about as well as
/// all 3.1M (table sectors per step 14.55 against 14.49, our 2 cores); the default takes 2^16. How: the steps of whole
/// slices spread evenly over C, about `sampled_steps` of them (their slots gathered on Device, counted on the host),
/// give, for each pair of hot values, the half-warp steps (16 lanes of a slice at the same slot) that read both. Lines
/// are then filled greedily: the most frequent value not yet placed, then the 15 unplaced values that share most steps
/// with the line so far. Inside each line the values take the 16 bank pairs (position mod 16), the one sharing most
/// steps with the values already placed first, each where those it shares steps with weigh least (half a warp's doubles
/// on one bank pair cost the data pipe a wavefront each; l1_gather_probe.cu there). Lines are 16 values whatever the
/// scalar (for float half a 128-byte line; measured for double only). Tables with fewer than 32 values, or slices not
/// made of half-warps, are left as they are.
template <class Scalar, class Ordinal, class Offset, class Device>
void order_table_by_cooccurrence(CompressedSellMatrix<Scalar, Ordinal, Offset, Device>& C,
                                 std::size_t sampled_steps = cooccurrence_sampled_steps) {
  using Matrix = CompressedSellMatrix<Scalar, Ordinal, Offset, Device>;
  using Exec = typename Matrix::execution_space;
  using Mem = typename Matrix::memory_space;
  constexpr int line = 16;
  const std::size_t table_size = C.value_table.extent(0);
  const int hot = static_cast<int>(std::min<std::size_t>(table_size, cooccurrence_hot_values) / line * line);
  const Ordinal h = C.slice_height;
  const Ordinal num_slices = C.num_slices();
  if (!C.uses_table || hot < 2 * line || h % line != 0 || num_slices <= 0) return;
  // the sampled slices' slots, packed one after the other (gathered where C lives, then copied)
  const auto slice_ptr = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), C.slice_ptr);
  const auto length = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), C.row_length);
  const std::size_t steps =
      static_cast<std::size_t>(slice_ptr(num_slices) - slice_ptr(0)) / static_cast<std::size_t>(h);
  const Ordinal stride = static_cast<Ordinal>(std::clamp<std::size_t>(steps / std::max<std::size_t>(1, sampled_steps),
                                                                      1, static_cast<std::size_t>(num_slices)));
  std::vector<Ordinal> sampled;
  std::vector<std::size_t> packed_at{0};
  for (Ordinal s = 0; s < num_slices; s += stride) {
    sampled.push_back(s);
    packed_at.push_back(packed_at.back() + static_cast<std::size_t>(slice_ptr(s + 1) - slice_ptr(s)));
  }
  const std::size_t n_sampled = sampled.size();
  Kokkos::View<Ordinal*, Kokkos::HostSpace> sampled_host(sampled.data(), n_sampled);
  Kokkos::View<std::size_t*, Kokkos::HostSpace> packed_host(packed_at.data(), n_sampled + 1);
  const auto sampled_dev = Kokkos::create_mirror_view_and_copy(Mem(), sampled_host);
  const auto packed_dev = Kokkos::create_mirror_view_and_copy(Mem(), packed_host);
  Kokkos::View<std::uint16_t*, Mem> delta(Kokkos::view_alloc("csell::sampled_delta", Kokkos::WithoutInitializing),
                                          packed_at.back());
  Kokkos::View<std::uint16_t*, Mem> index(Kokkos::view_alloc("csell::sampled_index", Kokkos::WithoutInitializing),
                                          packed_at.back());
  {
    const auto from_ptr = C.slice_ptr;
    const auto col_delta = C.col_delta;
    const auto value_index = C.value_index;
    using Team = typename Kokkos::TeamPolicy<Exec>::member_type;
    Kokkos::parallel_for(
        "cispmv::to_compressed_sell::cooccurrence_samples",
        Kokkos::TeamPolicy<Exec>(static_cast<int>(n_sampled), Kokkos::AUTO), KOKKOS_LAMBDA(const Team& team) {
          const int i = team.league_rank();
          const std::size_t to = packed_dev(i);
          const std::size_t from = static_cast<std::size_t>(from_ptr(sampled_dev(i)));
          Kokkos::parallel_for(Kokkos::TeamThreadRange(team, packed_dev(i + 1) - to), [&](const std::size_t k) {
            delta(to + k) = col_delta(from + k);
            index(to + k) = value_index(from + k);
          });
        });
  }
  const auto delta_host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), delta);
  const auto index_host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), index);
  // weight(a, b): the sampled half-warp steps that read hot values a and b
  const std::size_t n_hot = static_cast<std::size_t>(hot);
  std::vector<float> weight(n_hot * n_hot, 0.f);
  const Ordinal lanes_total = C.num_lanes();
  for (std::size_t i = 0; i < n_sampled; ++i) {
    const Ordinal first_lane = sampled[i] * h;
    const std::size_t width = (packed_at[i + 1] - packed_at[i]) / static_cast<std::size_t>(h);
    for (std::size_t k = 0; k < width; ++k) {
      for (Ordinal half = 0; half < h; half += line) {
        int v[line];
        int m = 0;
        for (Ordinal l = half; l < half + line && first_lane + l < lanes_total; ++l) {
          if (k >= static_cast<std::size_t>(length(first_lane + l))) continue;  // padding
          const std::size_t slot = packed_at[i] + k * static_cast<std::size_t>(h) + static_cast<std::size_t>(l);
          if (delta_host(slot) == Matrix::jump_delta || index_host(slot) >= hot) continue;
          v[m++] = index_host(slot);
        }
        std::sort(v, v + m);
        m = static_cast<int>(std::unique(v, v + m) - v);
        for (int a = 0; a < m; ++a)  // v is sorted: the upper triangle, mirrored below
          for (int b = a + 1; b < m; ++b)
            weight[static_cast<std::size_t>(v[a]) * n_hot + static_cast<std::size_t>(v[b])] += 1.f;
      }
    }
  }
  constexpr std::size_t tile = 64;  // mirrored tile by tile (a plain transposed loop misses the cache on every write)
  for (std::size_t a0 = 0; a0 < n_hot; a0 += tile)
    for (std::size_t b0 = a0; b0 < n_hot; b0 += tile)
      for (std::size_t a = a0; a < std::min(n_hot, a0 + tile); ++a)
        for (std::size_t b = std::max(b0, a + 1); b < std::min(n_hot, b0 + tile); ++b)
          weight[b * n_hot + a] = weight[a * n_hot + b];
  auto row = [&](int a) { return weight.data() + static_cast<std::size_t>(a) * n_hot; };  // weight(a, .), symmetric
  // lines of 16: seeded by the most frequent value not yet placed, then the 15 that weigh most with them
  std::vector<int> line_of(n_hot, -1);
  std::vector<std::vector<int>> lines;
  std::vector<double> tie(n_hot);
  for (int seed = 0; seed < hot; ++seed) {
    if (line_of[seed] >= 0) continue;
    std::vector<int> members{seed};
    line_of[seed] = static_cast<int>(lines.size());
    const float* seed_row = row(seed);
    for (int u = 0; u < hot; ++u) tie[u] = seed_row[u];
    while (static_cast<int>(members.size()) < line) {
      int best = -1;
      for (int u = 0; u < hot; ++u)
        if (line_of[u] < 0 && (best < 0 || tie[u] > tie[best])) best = u;
      line_of[best] = line_of[seed];
      members.push_back(best);
      const float* best_row = row(best);
      for (int u = 0; u < hot; ++u) tie[u] += best_row[u];
    }
    lines.push_back(std::move(members));
  }
  // inside each line, the bank pairs: the value sharing most with those placed so far first, each to the
  // free position whose values (over all lines placed) share least with it
  std::vector<int> position(n_hot);
  std::vector<double> on_pair(n_hot * line, 0.0);  // (value, position mod 16): weight to values placed there
  for (std::size_t li = 0; li < lines.size(); ++li) {
    auto members = lines[li];
    auto load = [&](int v) {
      double sum = 0;
      for (int c = 0; c < line; ++c) sum += on_pair[static_cast<std::size_t>(v) * line + c];
      return sum;
    };
    std::stable_sort(members.begin(), members.end(), [&](int a, int b) { return load(a) > load(b); });
    bool used[line] = {};
    for (const int v : members) {
      int best = -1;
      for (int c = 0; c < line; ++c) {
        const double here = on_pair[static_cast<std::size_t>(v) * line + c];
        if (!used[c] && (best < 0 || here < on_pair[static_cast<std::size_t>(v) * line + best])) best = c;
      }
      used[best] = true;
      position[v] = static_cast<int>(li) * line + best;
      const float* v_row = row(v);
      for (int u = 0; u < hot; ++u) on_pair[static_cast<std::size_t>(u) * line + best] += v_row[u];
    }
  }
  // the table and the slots' indices, remapped where C lives (padding and jump slots keep index 0)
  Kokkos::View<std::uint16_t*, Kokkos::HostSpace> remap("csell::cooccurrence_remap", table_size);
  for (std::size_t v = 0; v < table_size; ++v) remap(v) = static_cast<std::uint16_t>(v < n_hot ? position[v] : v);
  const auto table_host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), C.value_table);
  Kokkos::View<Scalar*, Kokkos::HostSpace> reordered("csell::value_table", table_size);
  for (std::size_t v = 0; v < table_size; ++v) reordered(remap(v)) = table_host(v);
  Kokkos::deep_copy(C.value_table, reordered);
  const auto remap_dev = Kokkos::create_mirror_view_and_copy(Mem(), remap);
  const Matrix M = C;
  Kokkos::parallel_for(
      "cispmv::to_compressed_sell::cooccurrence_remap",
      Kokkos::RangePolicy<Exec, Kokkos::IndexType<Ordinal>>(0, lanes_total), KOKKOS_LAMBDA(const Ordinal lane) {
        Offset slot = M.lane_start(lane);
        for (Ordinal k = 0; k < M.row_length(lane); ++k, slot += static_cast<Offset>(M.slice_height)) {
          if (M.col_delta(slot) != Matrix::jump_delta) M.value_index(slot) = remap_dev(M.value_index(slot));
        }
      });
  Kokkos::fence();
}

}  // namespace impl

// ------------------------------------------------------------------------------ conversions
/// Compressed Sliced ELLPACK of a num_rows x num_cols matrix that is given as row blocks and never
/// whole: `block(first, end)` returns rows [first, end) as a CSR on Device (rows sorted by column),
/// for blocks of block_rows rows. It is called for every block twice (the count pass, then the fill
/// pass) and, with more than one block, for the first rows (an eighth or more of a block) of up to 8 blocks spread
/// over the matrix once before (the value table's samples), so at most one block's CSR exists at a
/// time beside the result: how a
/// matrix whose CSR would not fit is encoded (ci::build_hamiltonian_csell). The parameters are those
/// of to_compressed_sell; with one block this is to_compressed_sell. Blocks of the wrong shape or
/// with unsorted rows throw std::invalid_argument. (`block` is a std::function: CUDA allows no
/// lambda's type among the template arguments of a function that launches kernels.)
template <class Scalar, class Ordinal, class Offset, class Device>
CompressedSellMatrix<Scalar, Ordinal, Offset, Device> to_compressed_sell_by_blocks(
    Ordinal num_rows, Ordinal num_cols, Ordinal block_rows,
    const std::function<CsrMatrix<Scalar, Ordinal, Offset, Device>(Ordinal, Ordinal)>& block, Ordinal slice_height = 32,
    std::size_t table_size = 65536, double min_table_coverage = 0.5, std::size_t max_samples = std::size_t(1) << 22,
    ValueTableOrder table_order = ValueTableOrder::automatic, Ordinal row_lanes = 1, Ordinal sort_window = 1) {
  using Matrix = CompressedSellMatrix<Scalar, Ordinal, Offset, Device>;
  using Csr = CsrMatrix<Scalar, Ordinal, Offset, Device>;
  using Encoder = impl::CompressedSellEncoder<Scalar, Ordinal, Offset, Device>;
  using Exec = typename Matrix::execution_space;
  using Mem = typename Matrix::memory_space;
  using Rows = Kokkos::RangePolicy<Exec, Kokkos::IndexType<Ordinal>>;
  if (slice_height <= 0) {
    throw std::invalid_argument("cispmv::to_compressed_sell: slice_height must be positive, got " +
                                std::to_string(slice_height));
  }
  if (row_lanes < 1 || row_lanes > slice_height || (row_lanes & (row_lanes - 1)) != 0 ||
      slice_height % row_lanes != 0) {
    throw std::invalid_argument(
        "cispmv::to_compressed_sell: row_lanes must be a power of two that divides slice_height (" +
        std::to_string(slice_height) + "), got " + std::to_string(row_lanes));
  }
  const Ordinal slice_rows = slice_height / row_lanes;  // a window is whole slices: sorting then never adds padding
  if (sort_window < -1 || sort_window > impl::max_sort_window || (sort_window > 1 && sort_window % slice_rows != 0)) {
    throw std::invalid_argument(
        "cispmv::to_compressed_sell: sort_window must be -1 (automatic), 0 or 1 (rows in matrix order) or a "
        "multiple of the " +
        std::to_string(slice_rows) + " rows of a slice up to " + std::to_string(impl::max_sort_window) + ", got " +
        std::to_string(sort_window));
  }
  if (static_cast<long long>(num_rows) * row_lanes > static_cast<long long>(std::numeric_limits<Ordinal>::max())) {
    throw std::invalid_argument("cispmv::to_compressed_sell: " + std::to_string(num_rows) + " rows x " +
                                std::to_string(row_lanes) + " lanes exceed the ordinal type's range");
  }
  if (table_size < 1 || table_size > Matrix::max_table_size) {
    throw std::invalid_argument("cispmv::to_compressed_sell: table_size must be in 1..65536, got " +
                                std::to_string(table_size));
  }
  if (num_rows < 0 || num_cols < 0 || (num_rows > 0 && block_rows <= 0)) {
    throw std::invalid_argument("cispmv::to_compressed_sell: a " + std::to_string(num_rows) + " x " +
                                std::to_string(num_cols) + " matrix in blocks of " + std::to_string(block_rows) +
                                " rows");
  }
  const Ordinal blocks =
      num_rows == 0 ? 0 : static_cast<Ordinal>((static_cast<long long>(num_rows) + block_rows - 1) / block_rows);
  // rows [first, end), their shape checked (and in the count pass their order)
  auto rows_of = [&](Ordinal first, Ordinal rows) {
    const Ordinal end = static_cast<Ordinal>(std::min<long long>(num_rows, static_cast<long long>(first) + rows));
    const Csr A = block(first, end);
    if (A.num_rows != end - first || A.num_cols != num_cols) {
      throw std::invalid_argument("cispmv::to_compressed_sell: rows [" + std::to_string(first) + ", " +
                                  std::to_string(end) + ") came as a " + std::to_string(A.num_rows) + " x " +
                                  std::to_string(A.num_cols) + " block of a matrix with " + std::to_string(num_cols) +
                                  " columns");
    }
    return A;
  };
  auto get = [&](Ordinal b) { return rows_of(b * block_rows, block_rows); };  // block b

  Matrix C;
  C.num_rows = num_rows;
  C.num_cols = num_cols;
  C.slice_height = slice_height;
  C.row_lanes = row_lanes;
  double coverage = 0.0;
  std::vector<Scalar> table;
  if (min_table_coverage > 1.0) {
    // values inline whatever they cover: nothing to sample
  } else if (blocks == 1) {
    table = impl::frequent_values(get(0), table_size, &coverage, max_samples);
  } else if (blocks > 1) {  // samples from the first rows of up to 8 blocks spread over the matrix
    const Ordinal sampled = std::min<Ordinal>(blocks, 8);
    const Ordinal sample_rows = std::max<Ordinal>(std::min<Ordinal>(block_rows, slice_height), block_rows / sampled);
    const std::size_t quota = std::max<std::size_t>(1, max_samples / static_cast<std::size_t>(sampled));
    Kokkos::View<Scalar*, Mem> samples(Kokkos::view_alloc("csell::samples", Kokkos::WithoutInitializing),
                                       quota * static_cast<std::size_t>(sampled));
    std::size_t filled = 0;
    for (Ordinal i = 0; i < sampled; ++i) {
      const Ordinal b = static_cast<Ordinal>(static_cast<long long>(i) * blocks / sampled);
      filled += impl::sample_values(rows_of(b * block_rows, sample_rows), quota, samples, filled);
    }
    Csr S;
    S.values = Kokkos::subview(samples, std::make_pair(std::size_t{0}, filled));
    table = impl::frequent_values(S, table_size, &coverage, filled + 1);
  }
  C.uses_table = coverage >= min_table_coverage;
  if (sort_window < 0) sort_window = impl::automatic_sort_window(slice_height, row_lanes, !C.uses_table);
  if (!C.uses_table) table.clear();
  std::vector<std::uint64_t> keys(table.size());
  for (std::size_t i = 0; i < table.size(); ++i) keys[i] = impl::value_bits(table[i]);

  const std::size_t n = static_cast<std::size_t>(num_rows);
  const std::size_t n_lanes = n * static_cast<std::size_t>(row_lanes);
  C.row_length =
      typename Matrix::ordinal_view(Kokkos::view_alloc("csell::row_length", Kokkos::WithoutInitializing), n_lanes);
  C.first_col = typename Matrix::ordinal_view("csell::first_col", n_lanes);
  Encoder encode;
  encode.C = C;
  encode.index = impl::ValueIndexMap<typename Matrix::device_type>(keys);
  encode.rest_count = Kokkos::View<Offset*, Mem>("csell::rest_row_ptr", n + 1);
  if (table_order == ValueTableOrder::automatic) table_order = impl::default_table_order<Exec>();
  const bool by_first_use = table_order == ValueTableOrder::first_use && table.size() > 1;
  if (by_first_use) {
    encode.first_use = Kokkos::View<unsigned long long*, Mem>(
        Kokkos::view_alloc("csell::first_use", Kokkos::WithoutInitializing), table.size());
    Kokkos::deep_copy(encode.first_use, ~0ull);
  }
  std::size_t nnz_total = 0;
  std::vector<std::size_t> block_nnz(static_cast<std::size_t>(blocks));
  for (Ordinal b = 0; b < blocks; ++b) {  // count: each row's slots of C, first column and entries of R
    encode.A = get(b);
    encode.row_offset = b * block_rows;
    const Ordinal unsorted = impl::first_unsorted_row(encode.A);
    if (unsorted < encode.A.num_rows) {
      throw std::invalid_argument("cispmv::to_compressed_sell: row " + std::to_string(b * block_rows + unsorted) +
                                  " is not sorted by column without duplicates");
    }
    block_nnz[static_cast<std::size_t>(b)] = static_cast<std::size_t>(encode.A.nnz());
    encode.position_offset = nnz_total;
    Kokkos::parallel_for(
        "cispmv::to_compressed_sell::count",
        Kokkos::RangePolicy<Exec, typename Encoder::Count, Kokkos::IndexType<Ordinal>>(0, encode.A.num_rows), encode);
    nnz_total += static_cast<std::size_t>(encode.A.nnz());
  }
  encode.A = Csr{};
  C.num_nonzeros = nnz_total;
  if (sort_window > 1 && num_rows > 1) encode.position = impl::sort_rows_in_windows(C, encode.rest_count, sort_window);
  if (by_first_use) {  // the table in order of first use (values never used last, in frequency order)
    const auto first = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), encode.first_use);
    std::vector<std::size_t> order(table.size());
    std::iota(order.begin(), order.end(), std::size_t(0));
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return first(a) < first(b); });
    std::vector<Scalar> reordered(table.size());
    for (std::size_t i = 0; i < table.size(); ++i) reordered[i] = table[order[i]];
    table.swap(reordered);
    for (std::size_t i = 0; i < table.size(); ++i) keys[i] = impl::value_bits(table[i]);
    encode.index = impl::ValueIndexMap<typename Matrix::device_type>(keys);  // the fill pass's indices
    encode.first_use = {};
  }
  Kokkos::View<Scalar*, Kokkos::HostSpace> table_host("csell::value_table", std::max<std::size_t>(1, table.size()));
  for (std::size_t i = 0; i < table.size(); ++i) table_host(i) = table[i];
  C.value_table = impl::mirror_to<Exec>(table_host);

  // Slices sized by their longest lane of C (offsets summed in 64 bits, then checked against Offset);
  // R's row pointer by prefix sum, in place.
  const Ordinal lanes_total = num_rows * row_lanes;
  const Ordinal num_slices =
      static_cast<Ordinal>((static_cast<long long>(lanes_total) + slice_height - 1) / slice_height);
  const auto row_length = C.row_length;
  const Ordinal rows = lanes_total;
  Kokkos::View<std::uint64_t*, Mem> slice_offsets("csell::slice_offsets", static_cast<std::size_t>(num_slices) + 1);
  std::uint64_t total = 0;
  Kokkos::parallel_scan(
      "cispmv::to_compressed_sell::slices", Rows(0, num_slices),
      KOKKOS_LAMBDA(const Ordinal s, std::uint64_t& partial, const bool final) {
        Ordinal width = 0;
        const Ordinal end = rows - s * slice_height < slice_height ? rows : (s + 1) * slice_height;
        for (Ordinal r = s * slice_height; r < end; ++r) width = row_length(r) > width ? row_length(r) : width;
        partial += static_cast<std::uint64_t>(width) * static_cast<std::uint64_t>(slice_height);
        if (final) slice_offsets(static_cast<std::size_t>(s) + 1) = partial;
      },
      total);
  (void)impl::checked_size<Offset>(total, "Compressed Sliced ELLPACK size");
  C.slice_ptr = typename Matrix::slice_ptr_type(Kokkos::view_alloc("csell::slice_ptr", Kokkos::WithoutInitializing),
                                                static_cast<std::size_t>(num_slices) + 1);
  const auto slice_ptr = C.slice_ptr;
  Kokkos::parallel_for(
      "cispmv::to_compressed_sell::slice_ptr", Rows(0, num_slices + 1),
      KOKKOS_LAMBDA(const Ordinal s) { slice_ptr(s) = static_cast<Offset>(slice_offsets(s)); });
  const auto rest = encode.rest_count;
  Offset rest_total = 0;
  Kokkos::parallel_scan(
      "cispmv::to_compressed_sell::rest_row_ptr", Rows(0, num_rows),
      KOKKOS_LAMBDA(const Ordinal r, Offset& partial, const bool final) {
        const Offset count = rest(static_cast<std::size_t>(r) + 1);
        partial += count;
        if (final) rest(static_cast<std::size_t>(r) + 1) = partial;
      },
      rest_total);
  C.rest_row_ptr = rest;
  C.compressed_nnz = nnz_total - static_cast<std::size_t>(rest_total);  // jump slots are in row_length, not here
  const std::size_t slots = static_cast<std::size_t>(total);
  C.col_delta = typename Matrix::compact_view("csell::col_delta", slots);                         // padding: 0
  C.value_index = typename Matrix::compact_view("csell::value_index", C.uses_table ? slots : 0);  // padding: 0
  C.inline_values = typename Matrix::values_type("csell::inline_values", C.uses_table ? 0 : slots);
  C.rest_col_idx = typename Matrix::ordinal_view(Kokkos::view_alloc("csell::rest_col_idx", Kokkos::WithoutInitializing),
                                                 static_cast<std::size_t>(rest_total));
  C.rest_values = typename Matrix::values_type(Kokkos::view_alloc("csell::rest_values", Kokkos::WithoutInitializing),
                                               static_cast<std::size_t>(rest_total));
  encode.C = C;
  for (Ordinal b = 0; b < blocks; ++b) {  // fill: the slots, and R
    encode.A = get(b);
    encode.row_offset = b * block_rows;
    if (static_cast<std::size_t>(encode.A.nnz()) != block_nnz[static_cast<std::size_t>(b)]) {
      throw std::invalid_argument("cispmv::to_compressed_sell: rows from " + std::to_string(b * block_rows) +
                                  " came with " + std::to_string(encode.A.nnz()) + " entries for the fill pass, " +
                                  std::to_string(block_nnz[static_cast<std::size_t>(b)]) + " for the count pass");
    }
    Kokkos::parallel_for(
        "cispmv::to_compressed_sell::fill",
        Kokkos::RangePolicy<Exec, typename Encoder::Fill, Kokkos::IndexType<Ordinal>>(0, encode.A.num_rows), encode);
  }
  Kokkos::fence();
  if (table_order == ValueTableOrder::cooccurrence) impl::order_table_by_cooccurrence(C);  // from frequency order
  return C;
}

namespace impl {
/// csell's lanes per row for CSR matrix A on a GPU of `gpu_threads` thread slots (0: one lane):
/// automatic_row_lanes, with whether the values go inline sampled as to_compressed_sell decides it
/// (the most frequent values' coverage against `min_table_coverage`; sampled only where A's rows leave
/// half the slots free, the only case where the answer depends on it).
template <class Scalar, class Ordinal, class Offset, class Device>
int automatic_row_lanes(const CsrMatrix<Scalar, Ordinal, Offset, Device>& A, long long gpu_threads,
                        int slice_height = 32, double min_table_coverage = 0.5) {
  if (gpu_threads <= 0 || A.num_rows <= 0 || 2LL * A.num_rows >= gpu_threads) return 1;
  double coverage = 0;
  frequent_values(A, CompressedSellMatrix<Scalar, Ordinal, Offset, Device>::max_table_size, &coverage,
                  std::size_t(1) << 20);
  return automatic_row_lanes(A.num_rows, static_cast<double>(A.nnz()), gpu_threads, slice_height,
                             coverage < min_table_coverage);
}
}  // namespace impl

/// Compressed Sliced ELLPACK from CSR (rows sorted by column, as every cispmv reader, converter and
/// the CI Hamiltonian builder produce them; unsorted rows throw std::invalid_argument), built where A
/// lives: on the host from a host CSR, on the GPU from a device CSR (no host copy of the matrix; only
/// the value samples and the table cross). O(nnz log(samples)) on the host for the value table and
/// O(nnz) for the rest, in parallel over rows. `table_size` (1..65536) bounds the value table;
/// slice_height > 0. Without a table (its sampled coverage below `min_table_coverage`; above 1: never,
/// and nothing is sampled), values are
/// stored inline. `max_samples`: values sampled for the table (2^22: their sort on the host takes
/// ~0.4 s, more than the rest of a GPU conversion of 10^9 entries; the 4,096 most frequent values of
/// a CI Hamiltonian, ~95 % of its entries, are each sampled hundreds of times). `table_order`: the
/// order of the table's values; automatic: the one for the space the matrix is encoded in (first
/// use costs an atomic minimum per entry whose value's first use is not yet known, about one per
/// table value; cooccurrence, a pass over a sample of the layout after encoding: GPUs, many products,
/// impl::order_table_by_cooccurrence). `row_lanes`: lanes per row (CompressedSellMatrix::row_lanes;
/// impl::automatic_row_lanes gives the one for a GPU). `sort_window`: rows laid out longest first inside windows of
/// that many rows (CompressedSellMatrix::row_order; 0 or 1: in matrix order; -1: impl::automatic_sort_window for
/// whether the values went inline; else whole slices, a multiple of slice_height / row_lanes rows, at
/// most impl::max_sort_window).
template <class Scalar, class Ordinal, class Offset, class Device>
CompressedSellMatrix<Scalar, Ordinal, Offset, Device> to_compressed_sell(
    const CsrMatrix<Scalar, Ordinal, Offset, Device>& A, Ordinal slice_height = 32, std::size_t table_size = 65536,
    double min_table_coverage = 0.5, std::size_t max_samples = std::size_t(1) << 22,
    ValueTableOrder table_order = ValueTableOrder::automatic, Ordinal row_lanes = 1, Ordinal sort_window = 1) {
  return to_compressed_sell_by_blocks<Scalar, Ordinal, Offset, Device>(
      A.num_rows, A.num_cols, std::max<Ordinal>(A.num_rows, 1), [&](Ordinal, Ordinal) { return A; }, slice_height,
      table_size, min_table_coverage, max_samples, table_order, row_lanes, sort_window);
}

/// Host CSR from Compressed Sliced ELLPACK: each row's entries of C (from all its lanes) and R merged
/// back in column order, rows in the matrix's order (row_order undone). O(nnz), in parallel over rows (with lanes,
/// O(nnz log) by a sort per row).
template <class Scalar, class Ordinal, class Offset>
HostCsrMatrix<Scalar, Ordinal, Offset> to_csr(const CompressedSellMatrix<Scalar, Ordinal, Offset, HostExecSpace>& C) {
  const std::size_t n = static_cast<std::size_t>(C.num_rows);
  using M = CompressedSellMatrix<Scalar, Ordinal, Offset, HostExecSpace>;
  const Offset h = static_cast<Offset>(C.slice_height);
  const Ordinal L = C.row_lanes;
  // f(column, value) for each entry of C in lane `lane`, in its order
  auto for_lane = [&](Ordinal lane, auto&& f) {
    const Offset base = C.lane_start(lane);
    Ordinal col = C.first_col(lane);
    for (Offset i = 0; i < static_cast<Offset>(C.row_length(lane)); ++i) {
      const std::uint16_t d = C.col_delta(base + i * h);
      col += static_cast<Ordinal>(d);
      if (d == M::jump_delta) continue;  // a jump slot: no entry
      f(col, C.uses_table ? C.value_table(C.value_index(base + i * h)) : C.inline_values(base + i * h));
    }
  };
  std::vector<Offset> ptr(n + 1, 0);  // by matrix row; layout row p is matrix row C.row_of(p)
  for (std::size_t p = 0; p < n; ++p) {
    Offset entries = 0;
    const Ordinal pi = static_cast<Ordinal>(p);
    for (Ordinal j = 0; j < L; ++j) for_lane(pi * L + j, [&](Ordinal, Scalar) { ++entries; });
    ptr[static_cast<std::size_t>(C.row_of(pi)) + 1] = entries + (C.rest_row_ptr(pi + 1) - C.rest_row_ptr(pi));
  }
  for (std::size_t r = 0; r < n; ++r) ptr[r + 1] += ptr[r];
  HostCsrMatrix<Scalar, Ordinal, Offset> A("csr", C.num_rows, C.num_cols, ptr[n]);
  for (std::size_t r = 0; r <= n; ++r) A.row_ptr(r) = ptr[r];
  Kokkos::parallel_for(
      "cispmv::to_csr(csell)", Kokkos::RangePolicy<HostExecSpace>(0, C.num_rows), [&](const Ordinal r) {
        const std::size_t row = static_cast<std::size_t>(C.row_of(r));  // r: the layout row
        const Offset begin = ptr[row], end = ptr[row + 1];
        Offset out = begin;
        for (Ordinal j = 0; j < L; ++j) {
          for_lane(r * L + j, [&](Ordinal col, Scalar v) {
            A.col_idx(out) = col;
            A.values(out) = v;
            ++out;
          });
        }
        for (Offset k = C.rest_row_ptr(r); k < C.rest_row_ptr(r + 1); ++k, ++out) {
          A.col_idx(out) = C.rest_col_idx(k);
          A.values(out) = C.rest_values(k);
        }
        if (L > 1 || C.rest_row_ptr(r + 1) > C.rest_row_ptr(r)) {  // lanes and R interleave: sort by column
          std::vector<std::pair<Ordinal, Scalar>> row;
          row.reserve(static_cast<std::size_t>(end - begin));
          for (Offset k = begin; k < end; ++k) row.emplace_back(A.col_idx(k), A.values(k));
          std::sort(row.begin(), row.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
          for (Offset k = begin; k < end; ++k) {
            A.col_idx(k) = row[static_cast<std::size_t>(k - begin)].first;
            A.values(k) = row[static_cast<std::size_t>(k - begin)].second;
          }
        }
      });
  return A;
}

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
