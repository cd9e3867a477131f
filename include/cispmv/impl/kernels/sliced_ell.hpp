#pragma once
// The Sliced ELLPACK and Sliced ELLPACK-R kernels: Algorithms 4 and 5, and Sliced ELLPACK-R's vector kernel.

#include <Kokkos_Core.hpp>

#include "cispmv/formats/sliced_ell.hpp"
#include "cispmv/impl/kernels/common.hpp"

namespace cispmv::impl {

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

}  // namespace cispmv::impl
