#pragma once
// The Compressed Sliced ELLPACK kernel: thread per row (consecutive rows on consecutive lanes, so
// each step of a warp reads two 64-byte runs of 16-bit words), columns rebuilt from deltas in a
// register, values looked up in the value table through the read-only cache (or read inline when
// the matrix has no table), then the row's few entries of the rest R.

#include <Kokkos_Core.hpp>

#include "cispmv/formats/compressed_sell.hpp"
#include "cispmv/impl/kernels/common.hpp"

#include <cstdint>

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
    // Unroll entries by 4: the four delta and index loads go out together, then the four table and x
    // gathers, so each thread keeps several independent loads in flight (a row's columns form a
    // chain of additions, but the additions are cheap; the loads are what waits).
    constexpr O unroll = 4;
    constexpr std::uint16_t jump = Matrix::jump_delta;  // a slot that only advances the column
    const Off step = static_cast<Off>(h);
    O k = 0;
    if (A.uses_table) {  // uniform over the matrix: no divergence
      for (; k + unroll <= length; k += unroll, idx += unroll * step) {
        std::uint16_t d[unroll], v[unroll];
        O c[unroll];
        for (O u = 0; u < unroll; ++u) {
          d[u] = load_once(A.col_delta(idx + u * step));
          v[u] = load_once(A.value_index(idx + u * step));
        }
        for (O u = 0; u < unroll; ++u) c[u] = col += static_cast<O>(d[u]);
        for (O u = 0; u < unroll; ++u) {
          if (d[u] != jump) sum += table(v[u]) * this->x(c[u]);
        }
      }
      for (; k < length; ++k, idx += step) {
        const std::uint16_t d = load_once(A.col_delta(idx));
        col += static_cast<O>(d);
        if (d != jump) sum += table(load_once(A.value_index(idx))) * this->x(col);
      }
    } else {
      for (; k + unroll <= length; k += unroll, idx += unroll * step) {
        std::uint16_t d[unroll];
        O c[unroll];
        S v[unroll];
        for (O u = 0; u < unroll; ++u) {
          d[u] = load_once(A.col_delta(idx + u * step));
          v[u] = load_once(A.inline_values(idx + u * step));
        }
        for (O u = 0; u < unroll; ++u) c[u] = col += static_cast<O>(d[u]);
        for (O u = 0; u < unroll; ++u) {
          if (d[u] != jump) sum += v[u] * this->x(c[u]);
        }
      }
      for (; k < length; ++k, idx += step) {
        const std::uint16_t d = load_once(A.col_delta(idx));
        col += static_cast<O>(d);
        if (d != jump) sum += load_once(A.inline_values(idx)) * this->x(col);
      }
    }
    const Off rest_end = A.rest_row_ptr(row + 1);
    for (Off k = A.rest_row_ptr(row); k < rest_end; ++k) sum += A.rest_values(k) * this->x(A.rest_col_idx(k));
    this->update(row, sum);
  }
};

}  // namespace cispmv::impl
