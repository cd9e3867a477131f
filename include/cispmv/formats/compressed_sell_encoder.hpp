#pragma once
/// \file formats/compressed_sell_encoder.hpp
/// Building Compressed Sliced ELLPACK (formats/compressed_sell.hpp) from CSR, and back: the two row passes that
/// count and fill the slots (CompressedSellEncoder), the rows sorted by length inside windows
/// (sort_rows_in_windows), the entry points to_compressed_sell and, for a matrix given as blocks of rows that never
/// exists whole, to_compressed_sell_by_blocks; the automatic choices they make (sort window, lanes per row, values
/// inline), and to_csr of a csell matrix. The value table and its orders: formats/compressed_sell_table.hpp.

#include <Kokkos_Core.hpp>

#include "cispmv/formats/compressed_sell.hpp"
#include "cispmv/formats/compressed_sell_table.hpp"
#include "cispmv/formats/csr.hpp"
#include "cispmv/impl/backend.hpp"
#include "cispmv/impl/convert_helpers.hpp"
#include "cispmv/impl/format_types.hpp"
#include "cispmv/impl/hash.hpp"
#include "cispmv/impl/launch.hpp"

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
namespace impl {

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

/// csell's automatic sort window: whole slices, at least default_sort_rows rows. H200, windows of
/// 64 / 256 / 1,024 / 4,096 rows against none: paper32k-1 (8 lanes) 0.115 / 0.116 / 0.115 / 0.117 ms
/// against 0.119; frozen-core FCI (4 lanes) 0.316 / 0.327 / 0.340 / 0.340 against 0.320;
/// all-electron FCI (thread per row) 2.46 / 2.55 / 2.72 / 2.86 against 2.51. Wider windows remove
/// more padding but spread a warp's rows, and their gathers of x, over more of a CI Hamiltonian's
/// rows (which share columns with their neighbours).
/// With values inline (`values_inline`: no value table, so not a CI Hamiltonian; random columns
/// share nothing with their neighbours' rows) windows of inline_sort_rows: H200, loads ahead:
/// scaled-1048576 (thread per row, unroll 8) 64 / 256 / 1,024 / 4,096 rows 3.98 / 3.94 / 3.72 /
/// 3.72 ms; paper32k-1 (4 lanes) 0.094-0.096 / 0.093-0.097 / 0.091-0.094 / 0.091-0.095.
/// A CI Hamiltonian encoded with its values inline for several vectors per product
/// (block_values_inline) takes the inline window too: H200, frozen-core FCI, 8 vectors, lane shape:
/// 0.790 ms against 0.864 in the matrix's order.
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
/// are 8 contiguous bytes of a warp's 128. H200, values inline against the table (rows in the
/// matrix's order): frozen-core FCI 8 vectors 0.864 against 1.00 ms, 16 vectors 1.32 against 1.50;
/// all-electron FCI 8 vectors 8.26 against 9.32 (7.46 with the rows sorted), for 2.5x the bytes of
/// C. One vector keeps the table: its kernel waits on bytes and on its gathers' latency, and there 4
/// bytes per entry win.
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

// ------------------------------------------------------- the steps of to_compressed_sell_by_blocks
/// The arguments of to_compressed_sell_by_blocks, checked before any block is asked for: each wrong
/// one throws std::invalid_argument with its value.
template <class Matrix>
void check_compressed_sell_arguments(const typename Matrix::ordinal_type num_rows,
                                     const typename Matrix::ordinal_type num_cols,
                                     const typename Matrix::ordinal_type block_rows,
                                     const typename Matrix::ordinal_type slice_height, const std::size_t table_size,
                                     const typename Matrix::ordinal_type row_lanes,
                                     const typename Matrix::ordinal_type sort_window) {
  using Ordinal = typename Matrix::ordinal_type;
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
  if (sort_window < -1 || sort_window > max_sort_window || (sort_window > 1 && sort_window % slice_rows != 0)) {
    throw std::invalid_argument(
        "cispmv::to_compressed_sell: sort_window must be -1 (automatic), 0 or 1 (rows in matrix order) or a "
        "multiple of the " +
        std::to_string(slice_rows) + " rows of a slice up to " + std::to_string(max_sort_window) + ", got " +
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
}

/// A num_rows x num_cols matrix given as blocks of block_rows rows (to_compressed_sell_by_blocks's
/// `block`), each block checked for its shape as it comes (and by the count pass for its order).
template <class Scalar, class Ordinal, class Offset, class Device>
struct CsrRowBlocks {
  using Csr = CsrMatrix<Scalar, Ordinal, Offset, Device>;
  Ordinal num_rows;
  Ordinal num_cols;
  Ordinal block_rows;
  Ordinal count;  ///< blocks
  const std::function<Csr(Ordinal, Ordinal)>& block;

  CsrRowBlocks(Ordinal num_rows_, Ordinal num_cols_, Ordinal block_rows_,
               const std::function<Csr(Ordinal, Ordinal)>& block_)
      : num_rows(num_rows_),
        num_cols(num_cols_),
        block_rows(block_rows_),
        count(num_rows_ == 0
                  ? 0
                  : static_cast<Ordinal>((static_cast<long long>(num_rows_) + block_rows_ - 1) / block_rows_)),
        block(block_) {}

  /// Rows [first, first + n) (fewer at the end of the matrix).
  Csr rows(const Ordinal first, const Ordinal n) const {
    const Ordinal end = static_cast<Ordinal>(std::min<long long>(num_rows, static_cast<long long>(first) + n));
    const Csr A = block(first, end);
    if (A.num_rows != end - first || A.num_cols != num_cols) {
      throw std::invalid_argument("cispmv::to_compressed_sell: rows [" + std::to_string(first) + ", " +
                                  std::to_string(end) + ") came as a " + std::to_string(A.num_rows) + " x " +
                                  std::to_string(A.num_cols) + " block of a matrix with " + std::to_string(num_cols) +
                                  " columns");
    }
    return A;
  }
  /// Block b.
  Csr get(const Ordinal b) const { return rows(b * block_rows, block_rows); }
};

/// The value table to_compressed_sell starts from (frequent_values: most frequent first), and in
/// `coverage` the share of the sampled entries it covers (left as it is where nothing is sampled).
/// With one block the samples are its values; with more, the first rows (an eighth or more of a
/// block) of up to 8 blocks spread over the matrix; with min_table_coverage above 1 (values inline
/// whatever they cover) nothing is sampled and the table is empty.
template <class Scalar, class Ordinal, class Offset, class Device>
std::vector<Scalar> sampled_value_table(const CsrRowBlocks<Scalar, Ordinal, Offset, Device>& blocks,
                                        const Ordinal slice_height, const std::size_t table_size,
                                        const double min_table_coverage, const std::size_t max_samples,
                                        double& coverage) {
  using Mem = typename CompressedSellMatrix<Scalar, Ordinal, Offset, Device>::memory_space;
  if (min_table_coverage > 1.0 || blocks.count == 0) return {};
  if (blocks.count == 1) return frequent_values(blocks.get(0), table_size, &coverage, max_samples);
  const Ordinal sampled = std::min<Ordinal>(blocks.count, 8);
  const Ordinal block_rows = blocks.block_rows;
  const Ordinal sample_rows = std::max<Ordinal>(std::min<Ordinal>(block_rows, slice_height), block_rows / sampled);
  const std::size_t quota = std::max<std::size_t>(1, max_samples / static_cast<std::size_t>(sampled));
  Kokkos::View<Scalar*, Mem> samples(Kokkos::view_alloc("csell::samples", Kokkos::WithoutInitializing),
                                     quota * static_cast<std::size_t>(sampled));
  std::size_t filled = 0;
  for (Ordinal i = 0; i < sampled; ++i) {
    const Ordinal b = static_cast<Ordinal>(static_cast<long long>(i) * blocks.count / sampled);
    filled += sample_values(blocks.rows(b * block_rows, sample_rows), quota, samples, filled);
  }
  CsrMatrix<Scalar, Ordinal, Offset, Device> S;
  S.values = Kokkos::subview(samples, std::make_pair(std::size_t{0}, filled));
  return frequent_values(S, table_size, &coverage, filled + 1);
}

/// Puts the value table (and its keys) in the order of the values' first use that the count pass
/// recorded (encode.first_use; values never used go last, in frequency order), and gives the fill
/// pass the indices of that order.
template <class Scalar, class Encoder>
void order_table_by_first_use(std::vector<Scalar>& table, std::vector<std::uint64_t>& keys, Encoder& encode) {
  const auto first = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), encode.first_use);
  std::vector<std::size_t> order(table.size());
  std::iota(order.begin(), order.end(), std::size_t(0));
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return first(a) < first(b); });
  std::vector<Scalar> reordered(table.size());
  for (std::size_t i = 0; i < table.size(); ++i) reordered[i] = table[order[i]];
  table.swap(reordered);
  for (std::size_t i = 0; i < table.size(); ++i) keys[i] = value_bits(table[i]);
  encode.index = ValueIndexMap<typename Encoder::Matrix::device_type>(keys);
  encode.first_use = {};
}

/// The count pass over every block (CompressedSellEncoder::Count; a block with unsorted rows throws
/// std::invalid_argument): each lane's slots of C and first column, each row's entries of R, and with
/// ValueTableOrder::first_use each value's first entry. Returns the entries of each block, which the
/// fill pass checks the blocks come with again.
template <class Encoder, class Blocks>
std::vector<std::size_t> count_compressed_sell(Encoder& encode, const Blocks& blocks) {
  using Exec = typename Encoder::Matrix::execution_space;
  using Ordinal = typename Encoder::Matrix::ordinal_type;
  std::size_t nnz_total = 0;
  std::vector<std::size_t> block_nnz(static_cast<std::size_t>(blocks.count));
  for (Ordinal b = 0; b < blocks.count; ++b) {
    encode.A = blocks.get(b);
    encode.row_offset = b * blocks.block_rows;
    const Ordinal unsorted = first_unsorted_row(encode.A);
    if (unsorted < encode.A.num_rows) {
      throw std::invalid_argument("cispmv::to_compressed_sell: row " +
                                  std::to_string(b * blocks.block_rows + unsorted) +
                                  " is not sorted by column without duplicates");
    }
    block_nnz[static_cast<std::size_t>(b)] = static_cast<std::size_t>(encode.A.nnz());
    encode.position_offset = nnz_total;
    Kokkos::parallel_for(
        "cispmv::to_compressed_sell::count",
        Kokkos::RangePolicy<Exec, typename Encoder::Count, Kokkos::IndexType<Ordinal>>(0, encode.A.num_rows), encode);
    nnz_total += static_cast<std::size_t>(encode.A.nnz());
  }
  encode.A = typename Encoder::Csr{};
  return block_nnz;
}

/// After the count pass (and the row sort): C's slices sized by their longest lane (offsets summed in
/// 64 bits, then checked against Offset), R's row pointer by prefix sum over the entries of R per row
/// (`rest`, row r's at r + 1) in place, C.compressed_nnz, and C's slots and R allocated (padding: delta
/// and index 0).
template <class Matrix, class RestCount>
void allocate_compressed_sell(Matrix& C, const RestCount& rest) {
  using Ordinal = typename Matrix::ordinal_type;
  using Offset = typename Matrix::size_type;
  using Rows = Kokkos::RangePolicy<typename Matrix::execution_space, Kokkos::IndexType<Ordinal>>;
  const Ordinal slice_height = C.slice_height;
  const Ordinal lanes_total = C.num_rows * C.row_lanes;
  const Ordinal num_slices =
      static_cast<Ordinal>((static_cast<long long>(lanes_total) + slice_height - 1) / slice_height);
  const auto row_length = C.row_length;
  const Ordinal rows = lanes_total;
  Kokkos::View<std::uint64_t*, typename Matrix::memory_space> slice_offsets("csell::slice_offsets",
                                                                            static_cast<std::size_t>(num_slices) + 1);
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
  (void)checked_size<Offset>(total, "Compressed Sliced ELLPACK size");
  C.slice_ptr = typename Matrix::slice_ptr_type(Kokkos::view_alloc("csell::slice_ptr", Kokkos::WithoutInitializing),
                                                static_cast<std::size_t>(num_slices) + 1);
  const auto slice_ptr = C.slice_ptr;
  Kokkos::parallel_for(
      "cispmv::to_compressed_sell::slice_ptr", Rows(0, num_slices + 1),
      KOKKOS_LAMBDA(const Ordinal s) { slice_ptr(s) = static_cast<Offset>(slice_offsets(s)); });
  Offset rest_total = 0;
  Kokkos::parallel_scan(
      "cispmv::to_compressed_sell::rest_row_ptr", Rows(0, C.num_rows),
      KOKKOS_LAMBDA(const Ordinal r, Offset& partial, const bool final) {
        const Offset count = rest(static_cast<std::size_t>(r) + 1);
        partial += count;
        if (final) rest(static_cast<std::size_t>(r) + 1) = partial;
      },
      rest_total);
  C.rest_row_ptr = rest;
  C.compressed_nnz = C.num_nonzeros - static_cast<std::size_t>(rest_total);  // jump slots are in row_length, not here
  const std::size_t slots = static_cast<std::size_t>(total);
  C.col_delta = typename Matrix::compact_view("csell::col_delta", slots);                         // padding: 0
  C.value_index = typename Matrix::compact_view("csell::value_index", C.uses_table ? slots : 0);  // padding: 0
  C.inline_values = typename Matrix::values_type("csell::inline_values", C.uses_table ? 0 : slots);
  C.rest_col_idx = typename Matrix::ordinal_view(Kokkos::view_alloc("csell::rest_col_idx", Kokkos::WithoutInitializing),
                                                 static_cast<std::size_t>(rest_total));
  C.rest_values = typename Matrix::values_type(Kokkos::view_alloc("csell::rest_values", Kokkos::WithoutInitializing),
                                               static_cast<std::size_t>(rest_total));
}

/// The fill pass over every block (CompressedSellEncoder::Fill: the slots, and R); a block that comes
/// with other entries than it had in the count pass (`block_nnz`) throws std::invalid_argument.
template <class Encoder, class Blocks>
void fill_compressed_sell(Encoder& encode, const Blocks& blocks, const std::vector<std::size_t>& block_nnz) {
  using Exec = typename Encoder::Matrix::execution_space;
  using Ordinal = typename Encoder::Matrix::ordinal_type;
  for (Ordinal b = 0; b < blocks.count; ++b) {
    encode.A = blocks.get(b);
    encode.row_offset = b * blocks.block_rows;
    if (static_cast<std::size_t>(encode.A.nnz()) != block_nnz[static_cast<std::size_t>(b)]) {
      throw std::invalid_argument("cispmv::to_compressed_sell: rows from " + std::to_string(b * blocks.block_rows) +
                                  " came with " + std::to_string(encode.A.nnz()) + " entries for the fill pass, " +
                                  std::to_string(block_nnz[static_cast<std::size_t>(b)]) + " for the count pass");
    }
    Kokkos::parallel_for(
        "cispmv::to_compressed_sell::fill",
        Kokkos::RangePolicy<Exec, typename Encoder::Fill, Kokkos::IndexType<Ordinal>>(0, encode.A.num_rows), encode);
  }
}

}  // namespace impl

// ------------------------------------------------------------------------------ conversions
/// Compressed Sliced ELLPACK of a num_rows x num_cols matrix that is given as row blocks and never
/// whole: `block(first, end)` returns rows [first, end) as a CSR on Device (rows sorted by column),
/// for blocks of block_rows rows. It is called for every block twice (the count pass, then the fill
/// pass) and, with more than one block, for the first rows (an eighth or more of a block) of up to 8
/// blocks spread over the matrix once before (the value table's samples), so at most one block's CSR
/// exists at a time beside the result: how a matrix whose CSR would not fit is encoded
/// (ci::build_hamiltonian_csell). The parameters are those of to_compressed_sell; with one block this
/// is to_compressed_sell. Blocks of the wrong shape or with unsorted rows throw std::invalid_argument.
/// (`block` is a std::function: CUDA allows no lambda's type among the template arguments of a
/// function that launches kernels.)
template <class Scalar, class Ordinal, class Offset, class Device>
CompressedSellMatrix<Scalar, Ordinal, Offset, Device> to_compressed_sell_by_blocks(
    Ordinal num_rows, Ordinal num_cols, Ordinal block_rows,
    const std::function<CsrMatrix<Scalar, Ordinal, Offset, Device>(Ordinal, Ordinal)>& block, Ordinal slice_height = 32,
    std::size_t table_size = 65536, double min_table_coverage = 0.5, std::size_t max_samples = std::size_t(1) << 22,
    ValueTableOrder table_order = ValueTableOrder::automatic, Ordinal row_lanes = 1, Ordinal sort_window = 1) {
  using Matrix = CompressedSellMatrix<Scalar, Ordinal, Offset, Device>;
  using Encoder = impl::CompressedSellEncoder<Scalar, Ordinal, Offset, Device>;
  using Exec = typename Matrix::execution_space;
  using Mem = typename Matrix::memory_space;
  impl::check_compressed_sell_arguments<Matrix>(num_rows, num_cols, block_rows, slice_height, table_size, row_lanes,
                                                sort_window);
  const impl::CsrRowBlocks<Scalar, Ordinal, Offset, Device> blocks(num_rows, num_cols, block_rows, block);

  Matrix C;
  C.num_rows = num_rows;
  C.num_cols = num_cols;
  C.slice_height = slice_height;
  C.row_lanes = row_lanes;
  double coverage = 0.0;
  std::vector<Scalar> table =
      impl::sampled_value_table(blocks, slice_height, table_size, min_table_coverage, max_samples, coverage);
  C.uses_table = coverage >= min_table_coverage;
  if (sort_window < 0) sort_window = impl::automatic_sort_window(slice_height, row_lanes, !C.uses_table);
  if (!C.uses_table) table.clear();
  std::vector<std::uint64_t> keys(table.size());
  for (std::size_t i = 0; i < table.size(); ++i) keys[i] = impl::value_bits(table[i]);

  // the count pass: each lane's slots and first column, each row's entries of R (by matrix row)
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
  const std::vector<std::size_t> block_nnz = impl::count_compressed_sell(encode, blocks);
  C.num_nonzeros = std::accumulate(block_nnz.begin(), block_nnz.end(), std::size_t(0));

  // the layout: rows sorted in windows, the table in its order, the slices and R sized
  if (sort_window > 1 && num_rows > 1) encode.position = impl::sort_rows_in_windows(C, encode.rest_count, sort_window);
  if (by_first_use) impl::order_table_by_first_use(table, keys, encode);
  Kokkos::View<Scalar*, Kokkos::HostSpace> table_host("csell::value_table", std::max<std::size_t>(1, table.size()));
  for (std::size_t i = 0; i < table.size(); ++i) table_host(i) = table[i];
  C.value_table = impl::mirror_to<Exec>(table_host);
  impl::allocate_compressed_sell(C, encode.rest_count);

  encode.C = C;
  impl::fill_compressed_sell(encode, blocks, block_nnz);
  Kokkos::fence();
  if (table_order == ValueTableOrder::cooccurrence) impl::order_table_by_cooccurrence(C);  // from frequency order
  return C;
}

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

}  // namespace cispmv
