#pragma once
// The ELLPACK and ELLPACK-R kernels: Algorithms 2 and 3, and ELLPACK-R's vector kernel; on CPUs their rows walked
// ell_host_rows at a time.

#include <Kokkos_Core.hpp>

#include "cispmv/formats/ell.hpp"
#include "cispmv/impl/kernels/common.hpp"

namespace cispmv::impl {

/// Rows the CPU shape of the ELLPACK kernels walks together: entry k of each row, then entry k + 1, so that a thread
/// reads the column-major arrays front to back. A thread per row strides them by the row count, a cache line and a
/// page an entry. paper32k-1 on 2 cores: ELLPACK ~620 ms a product a thread per row; blocks of 32 / 128 / 512 / 1,024
/// / 2,048 rows 122 / 101 / 63 / 54 / 46 ms (CSR 24): the longer a slot's run, the fewer pages a block touches. Each
/// row's sum is added in the order of the thread-per-row loop, so the results are the same.
inline constexpr int ell_host_rows = 1024;

// -------------------------------------------------------------------------------------- ELLPACK
/// ELLPACK: Algorithm 2 (thread per row, stops at the first padding slot). No vector kernel:
/// the column-major block is laid out for thread per row.
template <class Exec, class S, class O, class D, class XView, class YView, int Beta, int Unroll>
struct SpmvFunctor<Exec, EllMatrix<S, O, D>, XView, YView, Beta, Unroll>
    : SpmvFunctorBase<Exec, EllMatrix<S, O, D>, XView, YView, Beta> {
  using Base = SpmvFunctorBase<Exec, EllMatrix<S, O, D>, XView, YView, Beta>;
  using Base::Base;
  static constexpr bool has_vector_kernel = false;
  static constexpr bool has_host_slice_kernel = true;  // rows ell_host_rows at a time on CPUs
  static O host_slices(const EllMatrix<S, O, D>& A) { return (A.num_rows + ell_host_rows - 1) / ell_host_rows; }

  KOKKOS_INLINE_FUNCTION void operator()(const O row) const {
    S sum = 0;
    for (O k = 0; k < this->A.width; ++k) {
      const O c = this->A.col_idx(row, k);
      if (c == -1) break;
      sum += this->A.values(row, k) * this->x(c);
    }
    this->update(row, sum);
  }

  /// CPUs: rows [s ell_host_rows, (s + 1) ell_host_rows), slot by slot, up to the block's longest row (padding is
  /// at the end of a row).
  KOKKOS_INLINE_FUNCTION void operator()(SliceTag, const O s) const {
    const O first = s * ell_host_rows;
    const O n = first + ell_host_rows <= this->A.num_rows ? O(ell_host_rows) : this->A.num_rows - first;
    S sum[ell_host_rows] = {};
    for (O k = 0; k < this->A.width; ++k) {
      bool live = false;
      for (O i = 0; i < n; ++i) {
        const O c = this->A.col_idx(first + i, k);
        if (c == -1) continue;
        sum[i] += this->A.values(first + i, k) * this->x(c);
        live = true;
      }
      if (!live) break;
    }
    for (O i = 0; i < n; ++i) this->update(first + i, sum[i]);
  }
};

// ------------------------------------------------------------------------------------ ELLPACK-R
/// ELLPACK-R: Algorithm 3 (thread per row, row_length iterations) and a vector kernel.
template <class Exec, class S, class O, class D, class XView, class YView, int Beta, int Unroll>
struct SpmvFunctor<Exec, EllRMatrix<S, O, D>, XView, YView, Beta, Unroll>
    : SpmvFunctorBase<Exec, EllRMatrix<S, O, D>, XView, YView, Beta> {
  using Base = SpmvFunctorBase<Exec, EllRMatrix<S, O, D>, XView, YView, Beta>;
  using Base::Base;
  static constexpr bool has_vector_kernel = true;
  static constexpr bool has_host_slice_kernel = true;  // rows ell_host_rows at a time on CPUs
  static O host_slices(const EllRMatrix<S, O, D>& A) { return (A.num_rows + ell_host_rows - 1) / ell_host_rows; }

  KOKKOS_INLINE_FUNCTION void operator()(const O row) const {
    S sum = 0;
    const O end = this->A.row_length(row);
    for (O k = 0; k < end; ++k) sum += this->A.values(row, k) * this->x(this->A.col_idx(row, k));
    this->update(row, sum);
  }

  /// CPUs: rows [first, last), at most ell_host_rows of them, slot by slot up to the longest.
  KOKKOS_INLINE_FUNCTION void walk_rows(const O first, const O last) const {
    const O n = last - first;
    S sum[ell_host_rows] = {};
    O longest = 0;
    for (O i = 0; i < n; ++i)
      longest = this->A.row_length(first + i) > longest ? this->A.row_length(first + i) : longest;
    for (O k = 0; k < longest; ++k) {
      for (O i = 0; i < n; ++i) {
        if (k < this->A.row_length(first + i))
          sum[i] += this->A.values(first + i, k) * this->x(this->A.col_idx(first + i, k));
      }
    }
    for (O i = 0; i < n; ++i) this->update(first + i, sum[i]);
  }

  KOKKOS_INLINE_FUNCTION void operator()(SliceTag, const O s) const {
    const O first = s * ell_host_rows;
    walk_rows(first, first + ell_host_rows <= this->A.num_rows ? first + ell_host_rows : this->A.num_rows);
  }

  KOKKOS_INLINE_FUNCTION void operator()(const typename Base::team_member& team) const {
    if constexpr (!is_gpu_space_v<Exec>) {
      // a CPU team is one thread of one lane (vector_launch) that takes rows_per_team rows: the walk above
      const O first = static_cast<O>(team.league_rank()) * this->rows_per_team;
      const O last = first + this->rows_per_team <= this->A.num_rows ? first + this->rows_per_team : this->A.num_rows;
      for (O r = first; r < last; r += ell_host_rows)
        walk_rows(r, r + ell_host_rows <= last ? r + ell_host_rows : last);
      return;
    }
    this->for_team_rows(team, [&](const O row, S& sum) {
      Kokkos::parallel_reduce(
          Kokkos::ThreadVectorRange(team, this->A.row_length(row)),
          [&](const O k, S& lsum) { lsum += this->A.values(row, k) * this->x(this->A.col_idx(row, k)); }, sum);
    });
  }
};

}  // namespace cispmv::impl
