#pragma once
/// \file baselines/kokkos_kernels.hpp
/// The baseline: KokkosSparse::spmv on the same CSR data, with no copy (target CiSpmv::kokkos_kernels,
/// built when Kokkos Kernels is found; CiSpmv::spmv does not depend on it). Works with Kokkos Kernels
/// 3.4 and 4.x: the one API that differs, choosing an algorithm (4.x: KokkosSparse::SPMVHandle), is
/// behind KokkosKernelsSpmv.

#include <KokkosKernels_config.h>
#include <KokkosSparse_CrsMatrix.hpp>
#include <KokkosSparse_spmv.hpp>

#include "cispmv/formats/csr.hpp"

#include <stdexcept>
#include <string>

#if __has_include(<KokkosSparse_spmv_handle.hpp>)
#include <KokkosSparse_spmv_handle.hpp>
/// Kokkos Kernels 4.x: spmv takes an execution-space instance and an algorithm handle.
#define CISPMV_KOKKOS_KERNELS_SPMV_HANDLE 1
#else
#define CISPMV_KOKKOS_KERNELS_SPMV_HANDLE 0
#endif

namespace cispmv {

/// A KokkosSparse::CrsMatrix that shares A's Views (no allocation, no copy).
template <class Scalar, class Ordinal, class Offset, class Device>
auto as_kokkos_kernels(const CsrMatrix<Scalar, Ordinal, Offset, Device>& A) {
  using device_type = typename CsrMatrix<Scalar, Ordinal, Offset, Device>::device_type;
  using KkMatrix = KokkosSparse::CrsMatrix<Scalar, Ordinal, device_type, void, Offset>;
  return KkMatrix("cispmv::as_kokkos_kernels", A.num_rows, A.num_cols, A.nnz(), A.values, A.row_ptr, A.col_idx);
}

/// The version of the Kokkos Kernels cispmv was built against ("4.6.2"; 3.x has no version macros).
inline std::string kokkos_kernels_version() {
#if defined(KOKKOSKERNELS_VERSION_MAJOR) && defined(KOKKOSKERNELS_VERSION_MINOR) && defined(KOKKOSKERNELS_VERSION_PATCH)
  return std::to_string(KOKKOSKERNELS_VERSION_MAJOR) + "." + std::to_string(KOKKOSKERNELS_VERSION_MINOR) + "." +
         std::to_string(KOKKOSKERNELS_VERSION_PATCH);
#else
  return "3.x";
#endif
}

/// Kokkos Kernels' SpMV algorithms the benchmarks time.
enum class KokkosKernelsAlgorithm {
  default_algorithm,  ///< what KokkosSparse::spmv does unasked (native kernels: ETI and TPLs are off)
  merge_path          ///< 4.x only: the native merge-path kernel (SPMV_NATIVE_MERGE_PATH)
};

/// Whether the Kokkos Kernels cispmv was built against has `algorithm` (3.4 has no merge path).
constexpr bool kokkos_kernels_has(KokkosKernelsAlgorithm algorithm) {
  return algorithm == KokkosKernelsAlgorithm::default_algorithm || CISPMV_KOKKOS_KERNELS_SPMV_HANDLE;
}

/// y = beta*y + alpha*A*x by KokkosSparse::spmv ("N" mode) with one algorithm, for repeated products
/// with the same A, x and y types (4.x keeps its SPMVHandle, so the algorithm's set-up is done once).
/// Kokkos Kernels 3.4 takes no execution-space instance and runs on the default instance of A's
/// space, so `exec` is fenced first to keep the caller's ordering. Throws std::invalid_argument for
/// an algorithm this Kokkos Kernels does not have.
template <class Exec, class KkMatrix, class XView, class YView>
class KokkosKernelsSpmv {
 public:
  explicit KokkosKernelsSpmv(KokkosKernelsAlgorithm algorithm = KokkosKernelsAlgorithm::default_algorithm)
#if CISPMV_KOKKOS_KERNELS_SPMV_HANDLE
      : handle_(algorithm == KokkosKernelsAlgorithm::merge_path ? KokkosSparse::SPMV_NATIVE_MERGE_PATH
                                                                : KokkosSparse::SPMV_DEFAULT)
#endif
  {
    if (!kokkos_kernels_has(algorithm)) {
      throw std::invalid_argument("cispmv::KokkosKernelsSpmv: this Kokkos Kernels (3.x) has no merge-path SpMV");
    }
  }

  void apply(const Exec& exec, typename KkMatrix::value_type alpha, const KkMatrix& A, const XView& x,
             typename KkMatrix::value_type beta, const YView& y) {
#if CISPMV_KOKKOS_KERNELS_SPMV_HANDLE
    KokkosSparse::spmv(exec, &handle_, "N", alpha, A, x, beta, y);
#else
    exec.fence();
    KokkosSparse::spmv("N", alpha, A, x, beta, y);
#endif
  }

 private:
#if CISPMV_KOKKOS_KERNELS_SPMV_HANDLE
  KokkosSparse::SPMVHandle<Kokkos::Device<Exec, typename KkMatrix::memory_space>, KkMatrix, XView, YView> handle_;
#endif
};

/// One y = beta*y + alpha*A*x with Kokkos Kernels' default algorithm.
template <class Exec, class KkMatrix, class XView, class YView>
void kokkos_kernels_spmv(const Exec& exec, typename KkMatrix::value_type alpha, const KkMatrix& A, const XView& x,
                         typename KkMatrix::value_type beta, const YView& y) {
  KokkosKernelsSpmv<Exec, KkMatrix, XView, YView>().apply(exec, alpha, A, x, beta, y);
}

}  // namespace cispmv
