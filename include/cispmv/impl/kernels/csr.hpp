#pragma once
// The CSR kernel: Algorithm 1 (thread per row) and the CSR-vector kernel (vector per row).

#include <Kokkos_Core.hpp>

#include "cispmv/formats/csr.hpp"
#include "cispmv/impl/kernels/common.hpp"

namespace cispmv::impl {

// ------------------------------------------------------------------------------------------ CSR
/// CSR: Algorithm 1 (thread per row) and the CSR-vector kernel (vector per row).
template <class Exec, class S, class O, class Off, class D, class XView, class YView, int Beta, int Unroll>
struct SpmvFunctor<Exec, CsrMatrix<S, O, Off, D>, XView, YView, Beta, Unroll>
    : SpmvFunctorBase<Exec, CsrMatrix<S, O, Off, D>, XView, YView, Beta> {
  using Base = SpmvFunctorBase<Exec, CsrMatrix<S, O, Off, D>, XView, YView, Beta>;
  using Base::Base;
  static constexpr bool has_vector_kernel = true;
  static constexpr bool unrolled = true;
  static constexpr bool prefers_vector_on_gpu = true;

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

/// CSR, several vectors: thread per row, vector per row with K partial sums per lane, or the lane
/// shape (one, two or four columns per lane; the row's entries read in step by its lanes).
template <class Exec, class S, class O, class Off, class D, class XView, class YView, int K>
struct SpmvBlockFunctor<Exec, CsrMatrix<S, O, Off, D>, XView, YView, K>
    : SpmvBlockFunctorBase<Exec, CsrMatrix<S, O, Off, D>, XView, YView, K> {
  using Base = SpmvBlockFunctorBase<Exec, CsrMatrix<S, O, Off, D>, XView, YView, K>;
  using Base::Base;
  static constexpr bool has_vector_kernel = true;
  static constexpr bool has_lane_kernel = true;
  /// One column per lane by default: the more rows a warp holds, the more separate runs of the
  /// row-major arrays it reads at once (H100: pairs were 2x slower on the FCI Hamiltonians).
  int automatic_lane_columns() const { return 1; }

  /// The lane shape (SpmvBlockFunctorBase::for_lanes): the row's entries 4 at a time, their loads
  /// before their gathers of X.
  template <int Width, int Loads>
  KOKKOS_INLINE_FUNCTION void operator()(LaneTag<Width, Loads>, const std::int64_t t) const {
    this->template for_lanes<Width, Loads>(t, [&](const O row, const auto& visit) {
      constexpr int unroll = 4;
      const Off end = this->A.row_ptr(row + 1);
      Off k = this->A.row_ptr(row);
      for (; k + unroll <= end; k += unroll) {
        S v[unroll];
        O c[unroll];
        for (int u = 0; u < unroll; ++u) {
          v[u] = load_once(this->A.values(k + u));
          c[u] = load_once(this->A.col_idx(k + u));
        }
        for (int u = 0; u < unroll; ++u) visit(v[u], c[u]);
      }
      for (; k < end; ++k) visit(load_once(this->A.values(k)), load_once(this->A.col_idx(k)));
    });
  }

  KOKKOS_INLINE_FUNCTION void operator()(const O row) const {
    S sum[K];
    for (int j = 0; j < K; ++j) sum[j] = 0;
    const Off end = this->A.row_ptr(row + 1);
    for (Off k = this->A.row_ptr(row); k < end; ++k) this->add(sum, this->A.values(k), this->A.col_idx(k));
    this->update(row, sum);
  }

  KOKKOS_INLINE_FUNCTION void operator()(const typename Base::team_member& team) const {
    this->for_team_rows(team, [&](const O row, const int lane, S* part) {
      const Off end = this->A.row_ptr(row + 1);
      for (Off k = this->A.row_ptr(row) + static_cast<Off>(lane); k < end; k += static_cast<Off>(this->vector_length))
        this->add(part, load_once(this->A.values(k)), load_once(this->A.col_idx(k)));
    });
  }
};

}  // namespace cispmv::impl
