#pragma once
/// \file host_oracle.hpp
/// The host oracle: a serial CSR SpMV (paper, Algorithm 1) that every kernel is tested against, and
/// the error bound of a kernel's result against it.

#include "cispmv/formats/csr.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

namespace cispmv {

/// y = beta*y + alpha*A*x on the host, serially, row by row in stored order (beta == 0 does not
/// read y). x and y are host-accessible rank-1 Views (or anything with operator() and extent(0)).
template <class Scalar, class Ordinal, class Offset, class Device, class XView, class YView>
void host_oracle_spmv(Scalar alpha, const CsrMatrix<Scalar, Ordinal, Offset, Device>& A, const XView& x, Scalar beta,
                      const YView& y) {
  if (x.extent(0) != static_cast<std::size_t>(A.num_cols) || y.extent(0) != static_cast<std::size_t>(A.num_rows)) {
    throw std::invalid_argument("cispmv::host_oracle_spmv: size mismatch: A is " + std::to_string(A.num_rows) + " x " +
                                std::to_string(A.num_cols) + ", x has " + std::to_string(x.extent(0)) +
                                " entries, y has " + std::to_string(y.extent(0)));
  }
  for (Ordinal r = 0; r < A.num_rows; ++r) {
    Scalar sum = 0;
    for (Offset k = A.row_ptr(r); k < A.row_ptr(r + 1); ++k) sum += A.values(k) * x(A.col_idx(k));
    y(r) = (beta == Scalar(0) ? Scalar(0) : beta * y(r)) + alpha * sum;
  }
}

/// Error bound of one row's dot product in precision Scalar, as Kokkos Kernels' spmv tests use:
/// max_row_length * max|a| * max|x| * eps, scaled by |alpha| (plus |beta*y| rounding).
template <class Scalar, class Ordinal, class Offset, class Device, class XView>
double spmv_tolerance(const CsrMatrix<Scalar, Ordinal, Offset, Device>& A, const XView& x, double alpha = 1.0,
                      double beta_y_max = 0.0) {
  double amax = 0, xmax = 0;
  Offset longest = 0;
  for (Ordinal r = 0; r < A.num_rows; ++r) {
    longest = std::max(longest, A.row_ptr(r + 1) - A.row_ptr(r));
  }
  for (Offset k = 0; k < A.nnz(); ++k) amax = std::max(amax, std::abs(static_cast<double>(A.values(k))));
  for (std::size_t i = 0; i < x.extent(0); ++i) xmax = std::max(xmax, std::abs(static_cast<double>(x(i))));
  const double eps = std::numeric_limits<Scalar>::epsilon();
  return (static_cast<double>(longest) + 2.0) * (std::abs(alpha) * amax * xmax + beta_y_max) * eps;
}

}  // namespace cispmv
