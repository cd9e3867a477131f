#pragma once
// The ELLPACK and ELLPACK-R kernels: Algorithms 2 and 3, and ELLPACK-R's vector kernel.

#include <Kokkos_Core.hpp>

#include "cispmv/formats/ell.hpp"
#include "cispmv/impl/kernels/common.hpp"

namespace cispmv::impl {

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

}  // namespace cispmv::impl
