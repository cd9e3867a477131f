#pragma once
// The Compressed Sliced ELLPACK kernel: thread per lane of the layout (consecutive lanes of a slice
// on consecutive GPU lanes, so each step of a warp reads two 64-byte runs of 16-bit words), columns
// rebuilt from deltas in a register, values looked up in the value table through the read-only
// cache (or read inline when the matrix has no table; on GPUs each group of entries' loads then go
// out while the group before it gathers x), then the row's few entries of the rest R.
// A matrix with one lane per row runs thread per row; with row_lanes L > 1, a vector of L lanes per
// row (the vector shape) whose sums are reduced in registers.

#include <Kokkos_Core.hpp>

#include "cispmv/formats/compressed_sell.hpp"
#include "cispmv/impl/kernels/common.hpp"
#include "cispmv/impl/kernels/host_simd.hpp"
#include "cispmv/impl/launch.hpp"

#include <cstdint>

namespace cispmv::impl {

/// Where a walk of csell's C (csell_walk_lane) reads each entry's value.
enum class CsellValues {
  inline_values,  ///< the matrix's values inline (no table)
  table_early,    ///< through the table, looked up as the entry's group is loaded
  table_late,     ///< through the table: the group loads its indices, each visit looks its value up
  matrix,         ///< whichever the matrix has (A.uses_table, read per entry: uniform, no divergence)
};

/// visit(value, column) for each entry of C in lane `lane` of csell matrix A, |Unroll| at a time: each group's
/// delta and value (or index) loads first, then its columns, then its visits, so the gathers of x they make
/// are independent and each thread keeps several loads in flight (a row's columns form a chain of additions,
/// but the additions are cheap; the loads are what waits). Unroll < 0: the next group's loads are requested
/// before this group's visits, so the matrix stream's latency (DRAM) overlaps the gathers' (L1 / L2); ptxas
/// then issues each group's loads together before its gathers, whatever else the kernel holds (with Unroll > 0
/// inside Kokkos's grid-stride loop it interleaved them with the gathers, each gather waiting on a load
/// requested after the previous one). H > 0: the slice height known at compile time (offsets in the loads'
/// immediates). Jump slots (Matrix::jump_delta) only advance the column.
///
/// Measured, H200: the single-vector kernel with values inline, ahead against the plain loop at the same
/// shape: paper32k-1 4 lanes, 4 at a time 0.093-0.096 ms against 0.123-0.124; scaled-1048576 thread per
/// row, 8 at a time 3.72-4.00 against 4.41-4.45 (at 4 ahead loses there: 4.62-4.91 against 4.30-4.46). With
/// a table the plain loop with late lookups wins (its index -> table chain already overlaps the gathers;
/// ahead 1-4 % slower), and the ahead walk lives in a kernel of its own: in one kernel with the table's
/// loop its registers cost the table's kernels up to 35 % (frozen core 0.299 -> 0.406 ms).
template <int Unroll, CsellValues Source, int H = 0, class Matrix, class Table, class Visit>
KOKKOS_FORCEINLINE_FUNCTION void csell_walk_lane(const Matrix& A, const Table& table,
                                                 const typename Matrix::ordinal_type lane, const Visit& visit) {
  using S = typename Matrix::value_type;
  using O = typename Matrix::ordinal_type;
  using Off = typename Matrix::size_type;
  using Index = typename Matrix::compact_view::non_const_value_type;
  // what a group holds per entry: the value, or its index where the visit looks it up
  using Raw = std::conditional_t<Source == CsellValues::table_late, Index, S>;
  const O h = H > 0 ? static_cast<O>(H) : A.slice_height;
  const O s = lane / h;
  const Off step = static_cast<Off>(h);
  Off idx = A.slice_ptr(s) + static_cast<Off>(lane - s * h);
  const O length = A.row_length(lane);
  O col = A.first_col(lane);
  const auto value = [&](const Off at) {
    if constexpr (Source == CsellValues::inline_values) {
      return load_once(A.inline_values(at));
    } else if constexpr (Source == CsellValues::matrix) {
      return A.uses_table ? table(load_once(A.value_index(at))) : load_once(A.inline_values(at));
    } else {
      return table(load_once(A.value_index(at)));
    }
  };
  const auto raw = [&](const Off at) -> Raw {
    if constexpr (Source == CsellValues::table_late) {
      return load_once(A.value_index(at));
    } else {
      return value(at);
    }
  };
  const auto resolve = [&](const Raw r) -> S {
    if constexpr (Source == CsellValues::table_late) {
      return table(r);
    } else {
      return r;
    }
  };
  constexpr O unroll = Unroll < 0 ? -Unroll : Unroll;
  const auto load_group = [&](const Off at, std::uint16_t* d, Raw* v) {
    for (O u = 0; u < unroll; ++u) {
      d[u] = load_once(A.col_delta(at + u * step));
      v[u] = raw(at + u * step);
    }
  };
  const auto visit_group = [&](const std::uint16_t* d, const Raw* v) {
    O c[unroll];
    for (O u = 0; u < unroll; ++u) c[u] = col += static_cast<O>(d[u]);
    for (O u = 0; u < unroll; ++u) {
      if (d[u] != Matrix::jump_delta) visit(resolve(v[u]), c[u]);
    }
  };
  O k = 0;
  if constexpr (Unroll < 0) {
    if (length >= unroll) {
      std::uint16_t d[unroll];
      Raw v[unroll];
      load_group(idx, d, v);
      for (k = unroll;; k += unroll) {  // entries k - unroll .. k - 1 are in d and v, idx is the first's slot
        const bool more = k + unroll <= length;
        std::uint16_t next_d[unroll] = {};  // zeroed: read only when `more`, but compilers cannot tell
        Raw next_v[unroll] = {};
        if (more) load_group(idx + unroll * step, next_d, next_v);
        visit_group(d, v);
        idx += unroll * step;
        if (!more) break;
        for (O u = 0; u < unroll; ++u) {
          d[u] = next_d[u];
          v[u] = next_v[u];
        }
      }
    }
  } else {
    for (; k + unroll <= length; k += unroll, idx += unroll * step) {
      std::uint16_t d[unroll];
      Raw v[unroll];
      load_group(idx, d, v);
      visit_group(d, v);
    }
  }
  for (; k < length; ++k, idx += step) {
    const std::uint16_t d = load_once(A.col_delta(idx));
    col += static_cast<O>(d);
    if (d != Matrix::jump_delta) visit(value(idx), col);
  }
}

/// visit(value, column) for each entry of row `row` of csell matrix A's rest R.
template <class Matrix, class Visit>
KOKKOS_FORCEINLINE_FUNCTION void csell_walk_rest(const Matrix& A, const typename Matrix::ordinal_type row,
                                                 const Visit& visit) {
  using Off = typename Matrix::size_type;
  const Off rest_end = A.rest_row_ptr(row + 1);
  for (Off k = A.rest_row_ptr(row); k < rest_end; ++k) visit(A.rest_values(k), A.rest_col_idx(k));
}

template <class Exec, class S, class O, class Off, class D, class XView, class YView, int Beta, int Unroll>
struct SpmvFunctor<Exec, CompressedSellMatrix<S, O, Off, D>, XView, YView, Beta, Unroll>
    : SpmvFunctorBase<Exec, CompressedSellMatrix<S, O, Off, D>, XView, YView, Beta> {
  using Matrix = CompressedSellMatrix<S, O, Off, D>;
  using Base = SpmvFunctorBase<Exec, Matrix, XView, YView, Beta>;
  /// The vector shape: a vector of A.row_lanes lanes per row (its length is the matrix's, see
  /// vector_length_from_matrix), Unroll entries decoded together per lane.
  static constexpr bool has_vector_kernel = true;
  static constexpr bool vector_length_from_matrix = true;
  static constexpr bool unrolled = true;
  static constexpr bool has_host_slice_kernel = true;
  static constexpr bool scalar_unrolled = true;
  /// Thread per row: 4 entries decoded together with a table, 8 with values inline (see impl::row_scalar_unroll).
  static int default_scalar_unroll(const Matrix& A) {
    return A.uses_table ? row_scalar_unroll : row_scalar_inline_unroll;
  }
  /// Values inline run csell_walk_lane's loop ahead, launched as Unroll = -4 or -8 (see
  /// SpmvFunctorBase::has_ahead_loop).
  static constexpr bool has_ahead_loop = true;
  static bool runs_ahead(const Matrix& A) { return !A.uses_table; }
  static constexpr bool has_row_block_launch = true;
  /// The plain loop's row blocks (Unroll > 0) launch with bounds for 4 blocks of 256 threads per SM (blocks of at
  /// most 256 rows, SpmvOptions::rows_per_team capped there; 512 and 1,024 never won): told the block size, ptxas
  /// takes 64 registers instead of 44 and keeps more of a thread's loads in flight (ncu, frozen core: 4 blocks
  /// instead of 5, long-scoreboard stalls per instruction 14.1 against 18.2, the same L1 wavefronts). H200, ms,
  /// unroll 4 with a table, frozen-core / all-electron FCI: no bounds 0.2835-0.2885 / 2.075-2.108, bounds for 4
  /// blocks 0.2624-0.2653 / 2.107-2.118 (the all-electron launches drifted 4 % within the process), 5 blocks
  /// 0.272 / 2.084, 3 blocks 0.284 / 2.299, 2 blocks 0.332 / 2.906. The loop ahead (Unroll < 0, 84 registers at 8)
  /// loses with bounds: scaled-1048576 3.75 ms without, 3.92 for 3 blocks, 4.61 for 4.
  static constexpr int row_block_min_blocks = Unroll > 0 ? 4 : 0;
  /// Rows of a slice the host shape carries at once (their columns and sums live in registers / L1).
  static constexpr int host_lanes = 8;
  /// x86-64 CPUs with AVX-512: the slice walk in vector registers (impl::host_simd), where the types allow.
  static constexpr bool has_host_simd = host_simd::supports<S, O>;
  static_assert(Matrix::jump_delta == host_simd::jump_delta, "cispmv: the AVX-512 walks skip csell's jump slots");

  /// The value table, read at scattered places: the read-only data path (__ldg on CUDA).
  Kokkos::View<const S*, typename Matrix::device_type, Kokkos::MemoryTraits<Kokkos::RandomAccess>> table;

  SpmvFunctor(const Matrix& A_, const XView& x_, const YView& y_, S alpha_, S beta_)
      : Base(A_, x_, y_, alpha_, beta_), table(A_.value_table) {}

  /// Thread per row: the row's lanes one after the other, then its entries of R.
  KOKKOS_INLINE_FUNCTION void operator()(const O row) const {
    const O lanes = this->A.row_lanes;
    if (lanes == 1) {  // uniform over the matrix; the loop below cost this case 10-30 % on an H200
      finish_row(row, lane_sum(row));
      return;
    }
    S sum = 0;
    for (O j = 0; j < lanes; ++j) sum += lane_sum(row * lanes + j);
    finish_row(row, sum);
  }

  /// Vector per row (A.row_lanes lanes, the team's vector length): each lane sums its lane of the
  /// layout and its share of R (entries j, j + L, ...), the row's lanes are reduced in registers.
  KOKKOS_INLINE_FUNCTION void operator()(const typename Base::team_member& team) const {
    const Matrix& A = this->A;
    const O lanes = A.row_lanes;
    const O first = static_cast<O>(team.league_rank()) * this->rows_per_team;
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, this->rows_per_team), [&](const O i) {
      const O row = first + i;
      if (row >= A.num_rows) return;
      S sum = 0;
      Kokkos::parallel_reduce(
          Kokkos::ThreadVectorRange(team, lanes),
          [&](const O j, S& part) {
            S s = lane_sum(row * lanes + j);
            const Off rest_end = A.rest_row_ptr(row + 1);
            for (Off k = A.rest_row_ptr(row) + static_cast<Off>(j); k < rest_end; k += static_cast<Off>(lanes))
              s += A.rest_values(k) * this->x(A.rest_col_idx(k));
            part += s;
          },
          sum);
      Kokkos::single(Kokkos::PerThread(team), [&]() { this->update(row, sum); });
    });
  }

  /// Lane `lane` of the layout: its entries of C, Unroll at a time (csell_walk_lane; Unroll < 0: values
  /// inline, -Unroll at a time, their loads one group ahead; the plan launches those only for matrices
  /// without a table). With a table the group loads its indices and each entry looks its value up as it
  /// gathers x (CsellValues::table_late).
  KOKKOS_INLINE_FUNCTION S lane_sum(const O lane) const {
    S sum = 0;
    const auto add = [&](const S v, const O col) { sum += v * this->x(col); };
    if constexpr (Unroll < 0) {
      csell_walk_lane<Unroll, CsellValues::inline_values>(this->A, table, lane, add);
    } else if (this->A.uses_table) {  // uniform over the matrix: no divergence
      csell_walk_lane<Unroll, CsellValues::table_late>(this->A, table, lane, add);
    } else {
      csell_walk_lane<Unroll, CsellValues::inline_values>(this->A, table, lane, add);
    }
    return sum;
  }

  /// Thread per row as blocks of consecutive rows (GPUs, SpmvOptions::rows_per_team).
  KOKKOS_INLINE_FUNCTION void operator()(RowBlockTag, const typename Base::team_member& team) const {
    const O row = static_cast<O>(team.league_rank()) * static_cast<O>(team.team_size()) + team.team_rank();
    if (row < this->A.num_rows) (*this)(row);
  }

  /// The CPU shape: slice s, host_lanes lanes at a time, entry k of each of them before entry k + 1.
  /// The k-th entries of consecutive lanes are adjacent (column-major slice), so each step reads
  /// 2 x host_lanes consecutive 16-bit words and the slice streams through the cache once. Padding
  /// (k >= a lane's length) and jump slots are masked with a select, not a branch; padding's delta is
  /// 0, so its column stays a valid one of the row (or 0) and its gathers stay in range. A row's
  /// lanes (A.row_lanes, all in one slice) are added up as they come.
  KOKKOS_INLINE_FUNCTION void operator()(SliceTag, const O s) const {
    const Matrix& A = this->A;
    const O h = A.slice_height;
    const O first_row = s * h;  // the slice's first lane
    const O rows = A.num_lanes() - first_row < h ? A.num_lanes() - first_row : h;
    const Off base = A.slice_ptr(s);
    constexpr int L = host_lanes;
    S carry = 0;  // the current row's lanes so far
    for (O l0 = 0; l0 < rows; l0 += L) {
      const int n = rows - l0 < L ? static_cast<int>(rows - l0) : L;
      O col[L], len[L];
      S sum[L];
      for (int i = 0; i < L; ++i) {
        col[i] = i < n ? A.first_col(first_row + l0 + i) : 0;
        len[i] = i < n ? A.row_length(first_row + l0 + i) : 0;
        sum[i] = 0;
      }
      O row_width = 0;  // the longest of these rows: the slice's padding beyond it is skipped
      for (int i = 0; i < n; ++i) row_width = len[i] > row_width ? len[i] : row_width;
#if CISPMV_HOST_SIMD
      // AVX-512: 32 rows at once where the slice has them (one group), else 8 (L of them)
      if constexpr (has_host_simd) {
        if (this->host_walk != 0 && n == L) {
          const int wide = host_simd::registers * host_simd::rows_per_register;
          const int group = rows - l0 >= wide ? wide : L;
          O width = row_width;
          for (int i = L; i < group; ++i) {
            const O l = A.row_length(first_row + l0 + i);
            width = l > width ? l : width;
          }
          S sums[host_simd::registers * host_simd::rows_per_register];
          const host_simd::Group<S> g{A.col_delta.data(),
                                      A.uses_table ? A.value_index.data() : nullptr,
                                      A.uses_table ? nullptr : A.inline_values.data(),
                                      A.uses_table ? table.data() : nullptr,
                                      this->x.data(),
                                      static_cast<std::size_t>(base) + static_cast<std::size_t>(l0),
                                      static_cast<std::size_t>(h),
                                      static_cast<int>(width),
                                      A.first_col.data() + first_row + l0,
                                      A.row_length.data() + first_row + l0,
                                      sums};
          host_simd::walk(g, group, static_cast<host_simd::Walk>(this->host_walk));
          for (int i = 0; i < group; ++i) finish_lane(first_row + l0 + i, sums[i], carry);
          l0 += group - L;  // the loop adds L
          continue;
        }
      }
#endif
      if (A.uses_table) {  // uniform over the matrix
        walk<true>(base + static_cast<Off>(l0), h, n, row_width, col, len, sum);
      } else {
        walk<false>(base + static_cast<Off>(l0), h, n, row_width, col, len, sum);
      }
      for (int i = 0; i < n; ++i) finish_lane(first_row + l0 + i, sum[i], carry);
    }
  }

 private:
  // the host slice shape: lane `lane`'s sum of C; a row's lanes (A.row_lanes) are added up as they come
  KOKKOS_FORCEINLINE_FUNCTION void finish_lane(const O lane, const S sum, S& carry) const {
    const O row_lanes = this->A.row_lanes;
    if (row_lanes == 1) {
      finish_row(lane, sum);
    } else {
      carry += sum;
      if ((lane + 1) % row_lanes == 0) {
        finish_row(lane / row_lanes, carry);
        carry = 0;
      }
    }
  }
  // one entry of the slice layout at `at`, the k-th slot of its row
  template <bool UsesTable>
  KOKKOS_FORCEINLINE_FUNCTION void entry(const Off at, const O k, O& col, const O len, S& sum) const {
    const std::uint16_t d = this->A.col_delta(at);
    col += static_cast<O>(d);
    const S v = UsesTable ? table(this->A.value_index(at)) : this->A.inline_values(at);
    const S product = v * this->x(col);
    sum += (k < len && d != Matrix::jump_delta) ? product : S(0);
  }
  // slots 0 .. width-1 of n rows whose slot k starts at at + k * h; all host_lanes rows with a
  // compile-time trip count (the common case), the slice's last few rows without
  template <bool UsesTable>
  KOKKOS_FORCEINLINE_FUNCTION void walk(const Off at, const O h, const int n, const O width, O* col, const O* len,
                                        S* sum) const {
    constexpr int L = host_lanes;
    if (n == L) {
      for (O k = 0; k < width; ++k) {
        const Off row_at = at + static_cast<Off>(k) * static_cast<Off>(h);
        for (int i = 0; i < L; ++i) entry<UsesTable>(row_at + static_cast<Off>(i), k, col[i], len[i], sum[i]);
      }
    } else {
      for (O k = 0; k < width; ++k) {
        const Off row_at = at + static_cast<Off>(k) * static_cast<Off>(h);
        for (int i = 0; i < n; ++i) entry<UsesTable>(row_at + static_cast<Off>(i), k, col[i], len[i], sum[i]);
      }
    }
  }
  // the row's entries of the rest R, then y
  KOKKOS_FORCEINLINE_FUNCTION void finish_row(const O row, S sum) const {
    csell_walk_rest(this->A, row, [&](const S v, const O col) { sum += v * this->x(col); });
    this->update(row, sum);
  }
};

/// Compressed Sliced ELLPACK, several vectors: the lane shape on GPUs (one, two or four columns per
/// lane: the 32 / lanes rows of a warp are consecutive rows of one slice, so a step reads consecutive
/// 16-bit words as the single-vector kernel does, and each row's values of X in coalesced loads), thread per row
/// (each entry's column and value decoded once for all K columns, K sums in registers), and the host
/// slice shape with fewer rows at once (K sums each).
template <class Exec, class S, class O, class Off, class D, class XView, class YView, int K>
struct SpmvBlockFunctor<Exec, CompressedSellMatrix<S, O, Off, D>, XView, YView, K>
    : SpmvBlockFunctorBase<Exec, CompressedSellMatrix<S, O, Off, D>, XView, YView, K> {
  using Matrix = CompressedSellMatrix<S, O, Off, D>;
  using Base = SpmvBlockFunctorBase<Exec, Matrix, XView, YView, K>;
  static constexpr bool has_host_slice_kernel = true;
  static constexpr bool has_lane_kernel = true;
  /// Columns per lane where X allows pairs: one pair wherever the pair kernel applies (pair_variant,
  /// pair_lane), else two pairs; lanes from 2 columns (H100, see impl::gpu_lane_min_columns). Consecutive
  /// rows' entries are adjacent in a slice, so the 32 / lanes rows a warp holds read the matrix in coalesced
  /// runs. H200, ms per product, the eigensolver's csell: the pair kernel at 16 columns against two pairs
  /// per lane (the plan's choice before), frozen-core FCI 1.005 against 1.157, all-electron 12.24 against
  /// 13.47. Where the pair kernel does not apply, two pairs (2 columns in rows 2 apart: the generic walk of
  /// one pair 0.597 ms, two pairs 0.492).
  int automatic_lane_columns() const { return pair_variant() >= 0 ? 2 : 4; }
  static constexpr int automatic_lane_min_columns = 2;
  /// Rows of a slice the host shape carries at once: their K sums each stay in registers.
  static constexpr int host_lanes = K >= 8 ? 1 : 8 / K;
  /// x86-64 CPUs with AVX-512: launches of K = 4, 8 or 16 (2 to 16 columns) walk 8 rows at a time in
  /// vector registers (impl::host_simd::block_walk), where the types allow; the plan sets host_walk.
  static constexpr bool has_host_simd = host_simd::supports_block<S, O> && (K == 4 || K == 8 || K == 16);

  Kokkos::View<const S*, typename Matrix::device_type, Kokkos::MemoryTraits<Kokkos::RandomAccess>> table;

  SpmvBlockFunctor(const Matrix& A_, const XView& x_, const YView& y_, S alpha_, S beta_, int first_, int columns_)
      : Base(A_, x_, y_, alpha_, beta_, first_, columns_), table(A_.value_table) {}

  /// The lane shape (SpmvBlockFunctorBase::for_lanes): the row's entries 4 at a time.
  template <int Width, int Loads>
  KOKKOS_INLINE_FUNCTION void operator()(LaneTag<Width, Loads>, const std::int64_t t) const {
    this->template for_lanes<Width, Loads>(t, [&](const O row, const auto& visit) { walk_row<4>(row, visit); });
  }

  /// One pair per lane in slices of pair_slice_height rows with one lane each and X's rows K apart
  /// (pair_lane; else the generic LaneTag<2, 1>): variant 0 values inline and R empty (as the encoder
  /// leaves it without a table), 1 through the table, each a kernel of its own (in one kernel the
  /// table's registers and R's loop cost the inline walk: 42 registers against 32).
  /// Launches of 4 columns also have variants 2 and 3, the same with X's rows 2 apart: two columns
  /// (the plan has no width 2; one lane per row then, instead of the generic walk of two pairs, half
  /// of them masked).
  static constexpr int pair_variants = K == 4 ? 4 : 2;
  int pair_variant() const {
    const Matrix& A = this->A;
    if (A.slice_height != pair_slice_height || A.row_lanes != 1) return -1;
    const auto stride = static_cast<std::int64_t>(this->x.stride(0));
    const int narrow = K == 4 && stride == 2 ? 2 : 0;  // variants 2 and 3: X's rows 2 apart
    if (stride != K && narrow == 0) return -1;
    if (A.uses_table) return narrow + 1;
    return A.rest_nnz() == 0 ? narrow : -1;
  }
  template <int Variant>
  KOKKOS_INLINE_FUNCTION void operator()(PairTag<Variant>, const std::int64_t t) const {
    constexpr bool through_table = Variant % 2 == 1;
    constexpr int x_stride = Variant < 2 ? K : 2;  // X's rows apart
    pair_lane<through_table, x_stride>(t);
  }
  /// On GPUs the pair kernels run as teams of pair_team_size consecutive lanes (SpmvPlan::launch_pair_kernel):
  /// a RangePolicy lets Kokkos choose the block size with the most warps per SM, and at the 69 registers of
  /// the inline kernel that is a block of 32 threads (28 warps; 128 gives as many), so neighbouring rows,
  /// whose gathers share rows of X, run on different SMs. H200, ncu, frozen-core FCI, 8 columns: blocks of 32:
  /// L1 hit rate 22 %, 135M L2 sectors; the raw kernel in blocks of 256: 41 %, 102M.
  static constexpr int pair_team_size = 128;
  template <int Variant>
  KOKKOS_INLINE_FUNCTION void operator()(PairTag<Variant>, const typename Base::team_member& team) const {
    (*this)(PairTag<Variant>(), static_cast<std::int64_t>(team.league_rank()) * team.team_size() + team.team_rank());
  }

  /// Thread per row: each entry decoded once for the K columns (two entries' loads in flight).
  KOKKOS_INLINE_FUNCTION void operator()(const O row) const {
    S sum[K];
    for (int j = 0; j < K; ++j) sum[j] = 0;
    walk_row<2>(row, [&](const S v, const O col) { this->add(sum, v, col); });
    this->update(row, sum);
  }

  /// The CPU shape (see the single-vector kernel): host_lanes rows of slice s, entry k of each
  /// before entry k + 1.
  KOKKOS_INLINE_FUNCTION void operator()(SliceTag, const O s) const {
    const Matrix& A = this->A;
    const O h = A.slice_height;
    const O first_row = s * h;  // the slice's first lane
    const O rows = A.num_lanes() - first_row < h ? A.num_lanes() - first_row : h;
#if CISPMV_HOST_SIMD
    if constexpr (has_host_simd) {
      if (this->host_walk && A.row_lanes == 1) {  // the AVX-512 walk (impl::host_simd::block_walk)
        host_walk_slice(s, first_row, rows);
        return;
      }
    }
#endif
    if (A.row_lanes > 1) {  // the slice's rows one by one, each entry decoded once for the K columns
      for (O row = first_row / A.row_lanes; row < (first_row + rows) / A.row_lanes; ++row) (*this)(row);
      return;
    }
    constexpr int L = host_lanes;
    for (O l0 = 0; l0 < rows; l0 += L) {
      const int n = rows - l0 < L ? static_cast<int>(rows - l0) : L;
      O col[L], len[L];
      S sum[L][K];
      O width = 0;
      for (int i = 0; i < L; ++i) {
        col[i] = i < n ? A.first_col(first_row + l0 + i) : 0;
        len[i] = i < n ? A.row_length(first_row + l0 + i) : 0;
        width = len[i] > width ? len[i] : width;
        for (int j = 0; j < K; ++j) sum[i][j] = 0;
      }
      const Off at = A.slice_ptr(s) + static_cast<Off>(l0);
      for (O k = 0; k < width; ++k) {
        const Off row_at = at + static_cast<Off>(k) * static_cast<Off>(h);
        for (int i = 0; i < n; ++i) {
          if (k >= len[i]) continue;
          const std::uint16_t d = A.col_delta(row_at + i);
          col[i] += static_cast<O>(d);
          if (d != Matrix::jump_delta)
            this->add(sum[i], A.uses_table ? table(A.value_index(row_at + i)) : A.inline_values(row_at + i), col[i]);
        }
      }
      for (int i = 0; i < n; ++i) {
        csell_walk_rest(A, first_row + l0 + i, [&](const S v, const O col) { this->add(sum[i], v, col); });
        this->update(first_row + l0 + i, sum[i]);
      }
    }
  }

 private:
  /// The pair kernel: lane j of a row's 1 << lane_shift lanes gathers columns 2j and 2j + 1 of the launch, so
  /// one load instruction of a warp reads each of its rows' K values of X in one contiguous run (K = 8: 4
  /// lanes x 16 bytes, 8 rows per warp: ~1.5 data-pipe wavefronts per quarter-warp against ~2.75 for two pairs
  /// per lane, whose loads take 32-byte halves of 4 rows at two of a line's four positions) and keeps two
  /// sums. Every lane of a row decodes the row's entries (the same addresses at once: one broadcast load),
  /// pair_unroll<Table> at a time with the next group's loads requested first (csell_walk_lane's Unroll < 0),
  /// with the slice height and X's row stride known at compile time. H200, ms per product, the eigensolver's
  /// csell, frozen-core / all-electron FCI, 8 columns: 12 at a time ahead 0.569 / 6.70 (69 registers), 8 ahead
  /// 0.594-0.596 / 6.72-6.84 (54), 4 ahead 0.615 / 6.91-7.04 (32 with launch bounds), 4 without
  /// 0.732-0.754 / 7.34, 16 ahead 0.576 / 6.84 (80); 4 columns 0.384 / 4.22 at 12, 0.544 / 4.44 at 4 without;
  /// 16 columns 1.005 / 12.24 at 12, 1.295 / 13.84 at 4 without. Through the table, 8 columns: 4 ahead
  /// 0.685 / 7.27, 4 without 0.713 / 7.34, 8 ahead 0.772 / 8.32 (80 registers). A raw CUDA kernel (4 at a
  /// time, no grid-stride loop) 0.590 / 6.09.
  template <bool Table>
  static constexpr int pair_unroll = Table ? -4 : -12;
  template <bool Table, int Stride>
  KOKKOS_FORCEINLINE_FUNCTION void pair_lane(const std::int64_t t) const {
    const Matrix& A = this->A;
    const O row = static_cast<O>(t >> this->lane_shift);
    const int j = static_cast<int>(t & ((std::int64_t(1) << this->lane_shift) - 1));
    if (row >= A.num_rows || 2 * j >= this->columns) return;
    // X's rows are Stride apart (pair_variant): a gather's address is one wide multiply-add
    const S* const xj = this->x.data() + (this->first + 2 * j);
    S s0 = 0, s1 = 0;
    const auto gather = [&](const S v, const O col) {
      S xv[2];
      load_pair(xj + static_cast<std::int64_t>(col) * Stride, xv);
      s0 += v * xv[0];
      s1 += v * xv[1];
    };
    csell_walk_lane<pair_unroll<Table>, Table ? CsellValues::table_early : CsellValues::inline_values,
                    pair_slice_height>(this->A, table, row, gather);
    if constexpr (Table) csell_walk_rest(this->A, row, gather);  // values inline: R is empty (pair_variant)
    this->update_column(row, 2 * j, s0);
    this->update_column(row, 2 * j + 1, s1);
  }
  static constexpr O pair_slice_height = 32;

#if CISPMV_HOST_SIMD
  /// Slice s (its first lane first_row, `rows` rows, one lane each) 8 rows at a time in AVX-512.
  void host_walk_slice(const O s, const O first_row, const O rows) const {
    const Matrix& A = this->A;
    constexpr int Z = K > 8 ? 2 : 1;
    for (O l0 = 0; l0 < rows; l0 += 8) {
      const int n = rows - l0 < 8 ? static_cast<int>(rows - l0) : 8;
      int col[8], len[8];
      int width = 0;
      for (int i = 0; i < 8; ++i) {
        col[i] = i < n ? A.first_col(first_row + l0 + i) : 0;
        len[i] = i < n ? A.row_length(first_row + l0 + i) : 0;
        width = len[i] > width ? len[i] : width;
      }
      alignas(64) S sums[8][8 * Z];
      host_simd::block_walk<Z>(A.col_delta.data(), A.uses_table ? A.value_index.data() : nullptr,
                               A.uses_table ? nullptr : A.inline_values.data(), table.data(),
                               this->x.data() + this->first, static_cast<std::size_t>(this->x.stride(0)), this->columns,
                               static_cast<std::size_t>(A.slice_ptr(s) + static_cast<Off>(l0)),
                               static_cast<std::size_t>(A.slice_height), width, col, len, &sums[0][0]);
      for (int i = 0; i < n; ++i) {
        csell_walk_rest(A, first_row + l0 + i, [&](const S v, const O c) { this->add(sums[i], v, c); });
        this->update(first_row + l0 + i, sums[i]);
      }
    }
  }
#endif

  /// visit(value, column) for each entry of row `row`: its lanes' entries of C, lane by lane, each
  /// lane's in column order, Unroll at a time (their delta, index and table loads go out together,
  /// then their columns, then the visits, so the gathers of X they make are independent), then its
  /// entries of R.
  template <int Unroll, class Visit>
  KOKKOS_FORCEINLINE_FUNCTION void walk_row(const O row, const Visit& visit) const {
    const O lanes = this->A.row_lanes;
    for (O j = 0; j < lanes; ++j) csell_walk_lane<Unroll, CsellValues::matrix>(this->A, table, row * lanes + j, visit);
    csell_walk_rest(this->A, row, visit);
  }
};

}  // namespace cispmv::impl
