#pragma once
// The Compressed Sliced ELLPACK kernel: thread per row (consecutive rows on consecutive lanes, so
// each step of a warp reads two 64-byte runs of 16-bit words), columns rebuilt from deltas in a
// register, values looked up in the value table through the read-only cache (or read inline when
// the matrix has no table), then the row's few entries of the rest R.

#include <Kokkos_Core.hpp>

#include "cispmv/formats/compressed_sell.hpp"
#include "cispmv/impl/kernels/common.hpp"

namespace cispmv::impl {

template <class Exec, class S, class O, class Off, class D, class XView, class YView, int Beta, int Unroll>
struct SpmvFunctor<Exec, CompressedSellMatrix<S, O, Off, D>, XView, YView, Beta, Unroll>
    : SpmvFunctorBase<Exec, CompressedSellMatrix<S, O, Off, D>, XView, YView, Beta> {
  using Matrix = CompressedSellMatrix<S, O, Off, D>;
  using Base = SpmvFunctorBase<Exec, Matrix, XView, YView, Beta>;
  static constexpr bool has_vector_kernel = false;

  /// The value table, read at scattered places: the read-only data path (__ldg on CUDA).
  Kokkos::View<const S*, typename Matrix::device_type, Kokkos::MemoryTraits<Kokkos::RandomAccess>> table;

  SpmvFunctor(const Matrix& A_, const XView& x_, const YView& y_, S alpha_, S beta_)
      : Base(A_, x_, y_, alpha_, beta_), table(A_.value_table) {}

  KOKKOS_INLINE_FUNCTION void operator()(const O row) const {
    const Matrix& A = this->A;
    const O h = A.slice_height;
    const O s = row / h;
    Off idx = A.slice_ptr(s) + static_cast<Off>(row - s * h);
    const O length = A.row_length(row);
    O col = A.first_col(row);
    S sum = 0;
    if (A.uses_table) {  // uniform over the matrix: no divergence
      for (O k = 0; k < length; ++k, idx += static_cast<Off>(h)) {
        col += static_cast<O>(load_once(A.col_delta(idx)));
        sum += table(load_once(A.value_index(idx))) * this->x(col);
      }
    } else {
      for (O k = 0; k < length; ++k, idx += static_cast<Off>(h)) {
        col += static_cast<O>(load_once(A.col_delta(idx)));
        sum += load_once(A.inline_values(idx)) * this->x(col);
      }
    }
    const Off rest_end = A.rest_row_ptr(row + 1);
    for (Off k = A.rest_row_ptr(row); k < rest_end; ++k) sum += A.rest_values(k) * this->x(A.rest_col_idx(k));
    this->update(row, sum);
  }
};

}  // namespace cispmv::impl
