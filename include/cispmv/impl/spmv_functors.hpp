#pragma once
// SpMV kernels: one functor per format, each with two launch shapes (Kokkos Kernels SPMV_Functor):
//   operator()(row)    thread per row (RangePolicy): the paper's Algorithms 1-5
//   operator()(team)   vector per row (TeamPolicy): TeamThreadRange over the team's rows,
//                      ThreadVectorRange over the row's entries, parallel_reduce in registers,
//                      one lane writes y(row): the paper's Algorithm 7 and its CSR analogue.
// Launch parameters (vector length, rows per team) are chosen in launch.hpp, never here.

#include <Kokkos_Core.hpp>

#include "cispmv/csr.hpp"
#include "cispmv/ell.hpp"
#include "cispmv/hybrid.hpp"
#include "cispmv/sliced_ell.hpp"

namespace cispmv::impl {

/// How y is updated: compile-time, so the kernels carry no branch on beta (beta == 0 never reads
/// y, so NaN in y is overwritten as BLAS requires).
enum BetaCase : int { beta_zero = 0, beta_one = 1, beta_general = 2 };

/// What every SpMV functor shares: operands, the y update, and the walk over a team's rows.
template <class Exec, class Matrix, class XView, class YView, int Beta>
struct SpmvFunctorBase {
  /// Kernels that take SpmvOptions::unroll (independent accumulators per lane) say so.
  static constexpr bool unrolled = false;
  /// Kernels that can stage the reference part of x in team scratch memory say so.
  static constexpr bool can_stage_x = false;
  using value_type = typename Matrix::value_type;
  using ordinal_type = typename Matrix::ordinal_type;
  using size_type = typename Matrix::size_type;
  using team_member = typename Kokkos::TeamPolicy<Exec>::member_type;

  Matrix A;
  XView x;
  YView y;
  value_type alpha;
  value_type beta;
  ordinal_type rows_per_team = 1;
  int vector_length = 1;  ///< lanes per row in the vector kernels (the team's vector length)

  SpmvFunctorBase(const Matrix& A_, const XView& x_, const YView& y_, value_type alpha_, value_type beta_)
      : A(A_), x(x_), y(y_), alpha(alpha_), beta(beta_) {}

  KOKKOS_FORCEINLINE_FUNCTION void update(const ordinal_type row, const value_type sum) const {
    if constexpr (Beta == beta_zero) {
      y(row) = alpha * sum;
    } else if constexpr (Beta == beta_one) {
      y(row) += alpha * sum;
    } else {
      y(row) = beta * y(row) + alpha * sum;
    }
  }

  /// Vector shape: each thread (a vector of lanes) of the team takes one of the team's rows;
  /// row_sum(row, sum) reduces the row over ThreadVectorRange; one lane writes y(row).
  template <class RowSum>
  KOKKOS_INLINE_FUNCTION void for_team_rows(const team_member& team, const RowSum& row_sum) const {
    const ordinal_type first = static_cast<ordinal_type>(team.league_rank()) * rows_per_team;
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, rows_per_team), [&](const ordinal_type i) {
      const ordinal_type row = first + i;
      if (row >= A.num_rows) return;
      value_type sum = 0;
      row_sum(row, sum);
      Kokkos::single(Kokkos::PerThread(team), [&]() { update(row, sum); });
    });
  }
};

/// Reads matrix data that each SpMV uses exactly once. On CUDA this is a cache-streaming load
/// (__ldcs: evict-first), so the stream of matrix values and indices does not push the gathered
/// entries of x out of L1/L2; elsewhere a plain load.
template <class T>
KOKKOS_FORCEINLINE_FUNCTION T load_once(const T& ref) {
#if defined(__CUDA_ARCH__)
  return __ldcs(&ref);
#else
  return ref;
#endif
}

/// One lane's share of a row in the vector kernels: entries begin + lane, begin + lane + V, ... of
/// [begin, end), V = vector length, so the V lanes of a row read V consecutive entries at a time
/// (coalesced). Unroll > 1 keeps that many independent accumulators and issues that many strided
/// loads before their first use: more bytes in flight per lane, the limit of a memory-bound kernel
/// whose x loads depend on the column loads. Unroll = 1 is the plain loop of Algorithm 7.
template <int Unroll, class Index, class Entry>
KOKKOS_FORCEINLINE_FUNCTION auto strided_row_sum(const Index begin, const Index end, const int lane, const int V,
                                                 const Entry& entry) -> decltype(entry(begin)) {
  using S = decltype(entry(begin));
  S acc[Unroll];
  for (int u = 0; u < Unroll; ++u) acc[u] = S(0);
  const Index stride = static_cast<Index>(V);
  Index k = begin + static_cast<Index>(lane);
  if constexpr (Unroll > 1) {
    for (; k + static_cast<Index>(Unroll - 1) * stride < end; k += static_cast<Index>(Unroll) * stride) {
      for (int u = 0; u < Unroll; ++u) acc[u] += entry(k + static_cast<Index>(u) * stride);
    }
  }
  for (; k < end; k += stride) acc[0] += entry(k);
  S sum = acc[0];
  for (int u = 1; u < Unroll; ++u) sum += acc[u];
  return sum;
}

template <class Exec, class Matrix, class XView, class YView, int Beta, int Unroll = 1>
struct SpmvFunctor;  // one specialisation per format below

// ------------------------------------------------------------------------------------------ CSR
/// CSR: Algorithm 1 (thread per row) and the CSR-vector kernel (vector per row).
template <class Exec, class S, class O, class Off, class D, class XView, class YView, int Beta, int Unroll>
struct SpmvFunctor<Exec, CsrMatrix<S, O, Off, D>, XView, YView, Beta, Unroll>
    : SpmvFunctorBase<Exec, CsrMatrix<S, O, Off, D>, XView, YView, Beta> {
  using Base = SpmvFunctorBase<Exec, CsrMatrix<S, O, Off, D>, XView, YView, Beta>;
  using Base::Base;
  static constexpr bool has_vector_kernel = true;
  static constexpr bool unrolled = true;

  KOKKOS_INLINE_FUNCTION void operator()(const O row) const {
    S sum = 0;
    const Off end = this->A.row_ptr(row + 1);
    for (Off k = this->A.row_ptr(row); k < end; ++k) sum += this->A.values(k) * this->x(this->A.col_idx(k));
    this->update(row, sum);
  }

  // ThreadVectorRange(team, V) hands lane i exactly the index i, so the lane can walk its strided
  // share of the row (strided_row_sum) and the reduction over lanes stays in registers.
  KOKKOS_INLINE_FUNCTION void operator()(const typename Base::team_member& team) const {
    this->for_team_rows(team, [&](const O row, S& sum) {
      const Off begin = this->A.row_ptr(row), end = this->A.row_ptr(row + 1);
      Kokkos::parallel_reduce(
          Kokkos::ThreadVectorRange(team, this->vector_length),
          [&](const int lane, S& lsum) {
            lsum += strided_row_sum<Unroll>(begin, end, lane, this->vector_length, [&](const Off k) {
              return load_once(this->A.values(k)) * this->x(load_once(this->A.col_idx(k)));
            });
          },
          sum);
    });
  }
};

// -------------------------------------------------------------------------------------- ELLPACK
/// ELLPACK: Algorithm 2 (thread per row, stops at the first padding slot). No vector kernel:
/// the column-major block is laid out for thread per row.
template <class Exec, class S, class O, class D, class XView, class YView, int Beta, int Unroll>
struct SpmvFunctor<Exec, EllMatrix<S, O, D>, XView, YView, Beta, Unroll>
    : SpmvFunctorBase<Exec, EllMatrix<S, O, D>, XView, YView, Beta> {
  using Base = SpmvFunctorBase<Exec, EllMatrix<S, O, D>, XView, YView, Beta>;
  using Base::Base;
  static constexpr bool has_vector_kernel = false;

  KOKKOS_INLINE_FUNCTION void operator()(const O row) const {
    S sum = 0;
    for (O k = 0; k < this->A.width; ++k) {
      const O c = this->A.col_idx(row, k);
      if (c == -1) break;
      sum += this->A.values(row, k) * this->x(c);
    }
    this->update(row, sum);
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

  KOKKOS_INLINE_FUNCTION void operator()(const O row) const {
    S sum = 0;
    const O end = this->A.row_length(row);
    for (O k = 0; k < end; ++k) sum += this->A.values(row, k) * this->x(this->A.col_idx(row, k));
    this->update(row, sum);
  }

  KOKKOS_INLINE_FUNCTION void operator()(const typename Base::team_member& team) const {
    this->for_team_rows(team, [&](const O row, S& sum) {
      Kokkos::parallel_reduce(
          Kokkos::ThreadVectorRange(team, this->A.row_length(row)),
          [&](const O k, S& lsum) { lsum += this->A.values(row, k) * this->x(this->A.col_idx(row, k)); }, sum);
    });
  }
};

// ------------------------------------------------------------------------------- Sliced ELLPACK
/// Sliced ELLPACK: Algorithm 4 (thread per row inside its slice, stops at the first padding slot).
template <class Exec, class S, class O, class Off, class D, class XView, class YView, int Beta, int Unroll>
struct SpmvFunctor<Exec, SlicedEllMatrix<S, O, Off, D>, XView, YView, Beta, Unroll>
    : SpmvFunctorBase<Exec, SlicedEllMatrix<S, O, Off, D>, XView, YView, Beta> {
  using Base = SpmvFunctorBase<Exec, SlicedEllMatrix<S, O, Off, D>, XView, YView, Beta>;
  using Base::Base;
  static constexpr bool has_vector_kernel = false;

  KOKKOS_INLINE_FUNCTION void operator()(const O row) const {
    const O h = this->A.slice_height;
    const O s = row / h;
    const Off begin = this->A.slice_ptr(s) + static_cast<Off>(row - s * h);
    const Off end = this->A.slice_ptr(s + 1);
    S sum = 0;
    for (Off k = begin; k < end; k += h) {
      const O c = this->A.col_idx(k);
      if (c == -1) break;
      sum += this->A.values(k) * this->x(c);
    }
    this->update(row, sum);
  }
};

// ----------------------------------------------------------------------------- Sliced ELLPACK-R
/// Sliced ELLPACK-R: Algorithm 5 (thread per row, row_length iterations) and a vector kernel.
template <class Exec, class S, class O, class Off, class D, class XView, class YView, int Beta, int Unroll>
struct SpmvFunctor<Exec, SlicedEllRMatrix<S, O, Off, D>, XView, YView, Beta, Unroll>
    : SpmvFunctorBase<Exec, SlicedEllRMatrix<S, O, Off, D>, XView, YView, Beta> {
  using Base = SpmvFunctorBase<Exec, SlicedEllRMatrix<S, O, Off, D>, XView, YView, Beta>;
  using Base::Base;
  static constexpr bool has_vector_kernel = true;

  KOKKOS_INLINE_FUNCTION Off first_entry(const O row) const {
    const O s = row / this->A.slice_height;
    return this->A.slice_ptr(s) + static_cast<Off>(row - s * this->A.slice_height);
  }

  KOKKOS_INLINE_FUNCTION void operator()(const O row) const {
    const Off base = first_entry(row);
    const Off h = static_cast<Off>(this->A.slice_height);
    const O end = this->A.row_length(row);
    S sum = 0;
    for (O k = 0; k < end; ++k) {
      const Off idx = base + static_cast<Off>(k) * h;
      sum += this->A.values(idx) * this->x(this->A.col_idx(idx));
    }
    this->update(row, sum);
  }

  KOKKOS_INLINE_FUNCTION void operator()(const typename Base::team_member& team) const {
    this->for_team_rows(team, [&](const O row, S& sum) {
      const Off base = first_entry(row);
      const Off h = static_cast<Off>(this->A.slice_height);
      Kokkos::parallel_reduce(
          Kokkos::ThreadVectorRange(team, this->A.row_length(row)),
          [&](const O k, S& lsum) {
            const Off idx = base + static_cast<Off>(k) * h;
            lsum += this->A.values(idx) * this->x(this->A.col_idx(idx));
          },
          sum);
    });
  }
};

// ------------------------------------------------------------------------------ hybrid ELL + CSR
/// The paper's hybrid format. Thread per row: reference region then expansion region.
/// Vector per row (Algorithm 7): the row's lanes walk its reference-region slots (row-major, so
/// consecutive lanes read consecutive addresses), then its expansion-region CSR entries, each lane
/// accumulating both in registers; one ThreadVectorRange reduction (shuffles, no shared memory, no
/// atomics; the paper used two shared-memory trees) gives the row, and one lane writes y(row) once.
template <class Exec, class S, class O, class Off, class D, class R, class XView, class YView, int Beta, int Unroll>
struct SpmvFunctor<Exec, HybridMatrix<S, O, Off, D, R>, XView, YView, Beta, Unroll>
    : SpmvFunctorBase<Exec, HybridMatrix<S, O, Off, D, R>, XView, YView, Beta> {
  using Base = SpmvFunctorBase<Exec, HybridMatrix<S, O, Off, D, R>, XView, YView, Beta>;
  using Base::Base;
  static constexpr bool has_vector_kernel = true;
  static constexpr bool unrolled = true;

  KOKKOS_INLINE_FUNCTION void operator()(const O row) const {
    S sum = 0;
    const O ref_end = this->A.ref_row_length(row);
    for (O k = 0; k < ref_end; ++k) sum += this->A.ref_values(row, k) * this->x(this->A.ref_col_idx(row, k));
    const Off exp_end = this->A.exp_row_ptr(row + 1);
    for (Off k = this->A.exp_row_ptr(row); k < exp_end; ++k) {
      sum += this->A.exp_values(k) * this->x(this->A.exp_col_idx(k));
    }
    this->update(row, sum);
  }

  static constexpr bool can_stage_x = true;
  using scratch_view =
      Kokkos::View<S*, typename Exec::scratch_memory_space, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  /// Copy x(0 .. ref_width-1) into team scratch first (see SpmvOptions::stage_reference_x): the
  /// reference region of a CI matrix spans few columns, so every team reads them from shared memory.
  bool stage_x = false;

  static std::size_t scratch_bytes(const HybridMatrix<S, O, Off, D, R>& A) { return scratch_view::shmem_size(A.ref_width); }

  KOKKOS_INLINE_FUNCTION void operator()(const typename Base::team_member& team) const {
    if (stage_x) {
      const scratch_view xs(team.team_scratch(0), this->A.ref_width);
      Kokkos::parallel_for(Kokkos::TeamVectorRange(team, this->A.ref_width), [&](const O i) { xs(i) = this->x(i); });
      team.team_barrier();
      team_rows(team, xs);
    } else {
      team_rows(team, this->x);
    }
  }

  template <class RefX>
  KOKKOS_INLINE_FUNCTION void team_rows(const typename Base::team_member& team, const RefX& ref_x) const {
    this->for_team_rows(team, [&](const O row, S& sum) {
      const O ref_end = this->A.ref_row_length(row);
      const Off exp_begin = this->A.exp_row_ptr(row), exp_end = this->A.exp_row_ptr(row + 1);
      Kokkos::parallel_reduce(
          Kokkos::ThreadVectorRange(team, this->vector_length),
          [&](const int lane, S& lsum) {
            lsum += strided_row_sum<Unroll>(O(0), ref_end, lane, this->vector_length, [&](const O k) {
              return load_once(this->A.ref_values(row, k)) * ref_x(load_once(this->A.ref_col_idx(row, k)));
            });
            lsum += strided_row_sum<Unroll>(exp_begin, exp_end, lane, this->vector_length, [&](const Off k) {
              return load_once(this->A.exp_values(k)) * this->x(load_once(this->A.exp_col_idx(k)));
            });
          },
          sum);
    });
  }
};

}  // namespace cispmv::impl
