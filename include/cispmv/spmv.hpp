#pragma once
/// \file spmv.hpp
/// The public SpMV entry point: y = beta*y + alpha*A*x for every cispmv format, in one call. For
/// repeated products with one matrix, make a plan once (plan.hpp) and apply it.

#include <Kokkos_Core.hpp>

#include "cispmv/options.hpp"
#include "cispmv/plan.hpp"

namespace cispmv {

/// y = beta*y + alpha*A*x on execution space `exec`, for any cispmv format (CsrMatrix, EllMatrix,
/// EllRMatrix, SlicedEllMatrix, SlicedEllRMatrix, HybridMatrix): SpmvPlan(exec, A, opts).apply(...).
///
/// beta == 0 does not read y. `opts.kernel` picks thread per row (scalar) or vector per row; formats
/// without a vector kernel (ELLPACK, Sliced ELLPACK) throw std::invalid_argument when asked for one.
/// Throws std::invalid_argument when x or y does not match A's shape or an option is out of range.
/// The call is asynchronous with respect to the host, like any Kokkos kernel on `exec`.
template <class Exec, class Matrix, class XView, class YView>
void spmv(const Exec& exec, typename Matrix::value_type alpha, const Matrix& A, const XView& x,
          typename Matrix::value_type beta, const YView& y, const SpmvOptions& opts = {}) {
  static_assert(Kokkos::is_execution_space<Exec>::value, "cispmv::spmv: first argument must be an execution space");
  SpmvPlan<Exec, Matrix>(exec, A, opts).apply(alpha, x, beta, y);
}

/// spmv on the matrix's own default execution space instance.
template <class Matrix, class XView, class YView>
void spmv(typename Matrix::value_type alpha, const Matrix& A, const XView& x, typename Matrix::value_type beta,
          const YView& y, const SpmvOptions& opts = {}) {
  spmv(typename Matrix::execution_space(), alpha, A, x, beta, y, opts);
}

}  // namespace cispmv
