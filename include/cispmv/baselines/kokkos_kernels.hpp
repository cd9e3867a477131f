#pragma once
/// \file baselines/kokkos_kernels.hpp
/// The baseline: KokkosSparse::spmv on the same CSR data, with no copy (target CiSpmv::kokkos_kernels,
/// built when Kokkos Kernels is found; CiSpmv::spmv does not depend on it).

#include <KokkosSparse_CrsMatrix.hpp>
#include <KokkosSparse_spmv.hpp>

#include "cispmv/formats/csr.hpp"

namespace cispmv {

/// A KokkosSparse::CrsMatrix that shares A's Views (no allocation, no copy).
template <class Scalar, class Ordinal, class Offset, class Device>
auto as_kokkos_kernels(const CsrMatrix<Scalar, Ordinal, Offset, Device>& A) {
  using device_type = typename CsrMatrix<Scalar, Ordinal, Offset, Device>::device_type;
  using KkMatrix = KokkosSparse::CrsMatrix<Scalar, Ordinal, device_type, void, Offset>;
  return KkMatrix("cispmv::as_kokkos_kernels", A.num_rows, A.num_cols, A.nnz(), A.values, A.row_ptr, A.col_idx);
}

/// y = beta*y + alpha*A*x by KokkosSparse::spmv ("N" mode, native kernels: ETI and TPLs are off).
/// Kokkos Kernels 3.4 takes no execution-space instance: it runs on the default instance of A's
/// execution space, so `exec` is fenced first to keep the caller's ordering.
template <class Exec, class KkMatrix, class XView, class YView>
void kokkos_kernels_spmv(const Exec& exec, typename KkMatrix::value_type alpha, const KkMatrix& A, const XView& x,
                         typename KkMatrix::value_type beta, const YView& y) {
  exec.fence();
  KokkosSparse::spmv("N", alpha, A, x, beta, y);
}

}  // namespace cispmv
