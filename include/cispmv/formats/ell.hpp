#pragma once
/// \file ell.hpp
/// ELLPACK and ELLPACK-R storage (paper, sections 3.2 and 3.3).

#include <Kokkos_Core.hpp>

#include "cispmv/formats/csr.hpp"
#include "cispmv/impl/convert_helpers.hpp"
#include "cispmv/impl/format_types.hpp"
#include "cispmv/memory_model.hpp"

#include <cstddef>

namespace cispmv {

/// ELLPACK matrix (paper, section 3.2): every row padded to the longest row's length `width`
/// (MaxNonZeros).
///
/// Layout: `values(r, k)` / `col_idx(r, k)` hold the k-th stored entry of row r (NonZerosEntries,
/// Column), k < width. Both are LayoutLeft (column-major), so in the thread-per-row kernel the
/// lanes of a warp, which work on consecutive rows, read consecutive addresses. Padded slots hold
/// column -1 and value 0; a row's real entries come first, so the kernel stops at the first -1
/// (Algorithm 2).
template <class Scalar, class Ordinal = int, class Device = Kokkos::DefaultExecutionSpace>
struct EllMatrix : impl::FormatTypes<Scalar, Ordinal, std::size_t, Device> {
  using typename impl::FormatTypes<Scalar, Ordinal, std::size_t, Device>::device_type;
  using values_type = Kokkos::View<Scalar**, Kokkos::LayoutLeft, device_type>;
  using index_type = Kokkos::View<Ordinal**, Kokkos::LayoutLeft, device_type>;
  template <class OtherDevice>
  using rebind_device = EllMatrix<Scalar, Ordinal, OtherDevice>;

  static constexpr const char* format_name = "ell";

  Ordinal num_rows = 0;
  Ordinal num_cols = 0;
  Ordinal width = 0;             ///< MaxNonZeros: the longest row's length
  std::size_t num_nonzeros = 0;  ///< entries that are not padding
  values_type values;            ///< NonZerosEntries(num_rows, width)
  index_type col_idx;            ///< Column(num_rows, width), -1 in padding

  KOKKOS_INLINE_FUNCTION std::size_t nnz() const { return num_nonzeros; }

  /// The same matrix with every View replaced by f(View) (see CsrMatrix::map_views).
  template <class OtherDevice, class F>
  rebind_device<OtherDevice> map_views(F&& f) const {
    rebind_device<OtherDevice> out;
    out.num_rows = num_rows;
    out.num_cols = num_cols;
    out.width = width;
    out.num_nonzeros = num_nonzeros;
    out.values = f(values);
    out.col_idx = f(col_idx);
    return out;
  }
};

/// ELLPACK-R matrix (paper, section 3.3): ELLPACK plus `row_length(r)` (NonZerosCount), so the
/// kernel runs exactly row_length(r) iterations (Algorithm 3) and never reads padding.
/// Same layout as EllMatrix; padding is still marked with column -1.
template <class Scalar, class Ordinal = int, class Device = Kokkos::DefaultExecutionSpace>
struct EllRMatrix : EllMatrix<Scalar, Ordinal, Device> {
  using typename EllMatrix<Scalar, Ordinal, Device>::device_type;
  using row_length_type = Kokkos::View<Ordinal*, device_type>;
  template <class OtherDevice>
  using rebind_device = EllRMatrix<Scalar, Ordinal, OtherDevice>;

  static constexpr const char* format_name = "ellr";

  row_length_type row_length;  ///< NonZerosCount(num_rows)

  template <class OtherDevice, class F>
  rebind_device<OtherDevice> map_views(F&& f) const {
    rebind_device<OtherDevice> out;
    static_cast<EllMatrix<Scalar, Ordinal, OtherDevice>&>(out) =
        EllMatrix<Scalar, Ordinal, Device>::template map_views<OtherDevice>(f);
    out.row_length = f(row_length);
    return out;
  }
};

// ------------------------------------------------------------------------------ conversions
/// ELLPACK (padded to the longest row) from host CSR.
template <class Scalar, class Ordinal, class Offset>
EllMatrix<Scalar, Ordinal, HostExecSpace> to_ell(const HostCsrMatrix<Scalar, Ordinal, Offset>& A) {
  EllMatrix<Scalar, Ordinal, HostExecSpace> E;
  E.num_rows = A.num_rows;
  E.num_cols = A.num_cols;
  E.width = impl::max_row_length<Ordinal>(A.row_ptr, A.num_rows);
  E.num_nonzeros = A.nnz();
  E.values = decltype(E.values)("ell::values", A.num_rows, E.width);
  E.col_idx = decltype(E.col_idx)(Kokkos::view_alloc("ell::col_idx", Kokkos::WithoutInitializing), A.num_rows, E.width);
  Kokkos::deep_copy(E.col_idx, Ordinal(-1));
  Kokkos::parallel_for("cispmv::to_ell", Kokkos::RangePolicy<HostExecSpace>(0, A.num_rows), [&](const Ordinal r) {
    Ordinal k = 0;
    for (Offset j = A.row_ptr(r); j < A.row_ptr(r + 1); ++j, ++k) {
      E.values(r, k) = A.values(j);
      E.col_idx(r, k) = A.col_idx(j);
    }
  });
  return E;
}

/// ELLPACK-R (ELLPACK + row lengths) from host CSR.
template <class Scalar, class Ordinal, class Offset>
EllRMatrix<Scalar, Ordinal, HostExecSpace> to_ellr(const HostCsrMatrix<Scalar, Ordinal, Offset>& A) {
  EllRMatrix<Scalar, Ordinal, HostExecSpace> E;
  static_cast<EllMatrix<Scalar, Ordinal, HostExecSpace>&>(E) = to_ell(A);
  E.row_length =
      decltype(E.row_length)(Kokkos::view_alloc("ellr::row_length", Kokkos::WithoutInitializing), A.num_rows);
  Kokkos::parallel_for("cispmv::to_ellr", Kokkos::RangePolicy<HostExecSpace>(0, A.num_rows), [&](const Ordinal r) {
    E.row_length(r) = static_cast<Ordinal>(A.row_ptr(r + 1) - A.row_ptr(r));
  });
  return E;
}

/// Host CSR from ELLPACK (real entries are the slots before the first -1).
template <class Offset = std::size_t, class Scalar, class Ordinal>
HostCsrMatrix<Scalar, Ordinal, Offset> to_csr(const EllMatrix<Scalar, Ordinal, HostExecSpace>& E) {
  auto length = [&](Ordinal r) {
    Ordinal k = 0;
    while (k < E.width && E.col_idx(r, k) != -1) ++k;
    return k;
  };
  return impl::csr_from_rows<HostCsrMatrix<Scalar, Ordinal, Offset>>(
      "csr", E.num_rows, E.num_cols, length,
      [&](Ordinal r, Offset j) { return std::make_pair(E.col_idx(r, j), E.values(r, j)); });
}

/// Host CSR from ELLPACK-R.
template <class Offset = std::size_t, class Scalar, class Ordinal>
HostCsrMatrix<Scalar, Ordinal, Offset> to_csr(const EllRMatrix<Scalar, Ordinal, HostExecSpace>& E) {
  return impl::csr_from_rows<HostCsrMatrix<Scalar, Ordinal, Offset>>(
      "csr", E.num_rows, E.num_cols, [&](Ordinal r) { return E.row_length(r); },
      [&](Ordinal r, Offset j) { return std::make_pair(E.col_idx(r, j), E.values(r, j)); });
}

/// The paper's formula for ELLPACK (equation 1); ELLPACK-R's row lengths are not in it.
template <class S, class O, class D>
std::size_t paper_model_bytes(const EllMatrix<S, O, D>& A, PaperMemoryModel m = {}) {
  return m.ell(static_cast<std::size_t>(A.num_rows), static_cast<std::size_t>(A.width));
}

}  // namespace cispmv

#include "cispmv/impl/kernels/ell.hpp"
