#pragma once
/// \file formats/csr.hpp
/// Compressed Sparse Row storage (paper, section 3.1: Value, Column, RowPtr), its checks and its
/// memory model. Its kernel: impl/kernels/csr.hpp.

#include <Kokkos_Core.hpp>

#include "cispmv/impl/format_types.hpp"
#include "cispmv/memory_model.hpp"

#include <cstddef>
#include <sstream>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace cispmv {

/// CSR matrix as a struct of Views (paper, section 3.1).
///
/// Layout: the entries of row r are `col_idx(k)`, `values(k)` for `row_ptr(r) <= k < row_ptr(r+1)`;
/// `row_ptr` has `num_rows + 1` entries, `row_ptr(0) == 0`, `row_ptr(num_rows) == nnz()`.
/// Column indices within a row need not be sorted; duplicates are allowed by the kernels (they add up)
/// but the converters of cispmv never produce them. `Offset` is `int` or `std::size_t`: use
/// `std::size_t` beyond 2^31 - 1 nonzeros.
template <class Scalar, class Ordinal = int, class Offset = std::size_t, class Device = Kokkos::DefaultExecutionSpace>
struct CsrMatrix : impl::FormatTypes<Scalar, Ordinal, Offset, Device> {
  using typename impl::FormatTypes<Scalar, Ordinal, Offset, Device>::device_type;
  using row_map_type = Kokkos::View<Offset*, device_type>;
  using index_type = Kokkos::View<Ordinal*, device_type>;
  using values_type = Kokkos::View<Scalar*, device_type>;
  template <class OtherDevice>
  using rebind_device = CsrMatrix<Scalar, Ordinal, Offset, OtherDevice>;

  static constexpr const char* format_name = "csr";

  Ordinal num_rows = 0;
  Ordinal num_cols = 0;
  row_map_type row_ptr;  ///< num_rows + 1 offsets (RowPtr)
  index_type col_idx;    ///< nnz column indices (Column)
  values_type values;    ///< nnz values (Value)

  CsrMatrix() = default;
  /// Allocates (without initialising) a matrix of the given shape; row_ptr is zeroed.
  CsrMatrix(const std::string& label, Ordinal rows, Ordinal cols, Offset nnz)
      : num_rows(rows),
        num_cols(cols),
        row_ptr(label + "::row_ptr", static_cast<std::size_t>(rows) + 1),
        col_idx(Kokkos::view_alloc(label + "::col_idx", Kokkos::WithoutInitializing), nnz),
        values(Kokkos::view_alloc(label + "::values", Kokkos::WithoutInitializing), nnz) {}

  KOKKOS_INLINE_FUNCTION Offset nnz() const { return static_cast<Offset>(values.extent(0)); }

  /// The same matrix with every View replaced by f(View): used to move it between memory spaces
  /// (see to_device) and to sum its allocations (see allocated_bytes).
  template <class OtherDevice, class F>
  rebind_device<OtherDevice> map_views(F&& f) const {
    rebind_device<OtherDevice> out;
    out.num_rows = num_rows;
    out.num_cols = num_cols;
    out.row_ptr = f(row_ptr);
    out.col_idx = f(col_idx);
    out.values = f(values);
    return out;
  }
};

/// A CSR matrix in host memory: what readers and generators produce and what the converters take.
template <class Scalar = double, class Ordinal = int, class Offset = std::size_t>
using HostCsrMatrix = CsrMatrix<Scalar, Ordinal, Offset, Kokkos::DefaultHostExecutionSpace>;

/// The host CSR matrix of the readers, writers, the generator and the CI Hamiltonian builder:
/// double values, int column indices, std::size_t row offsets.
using HostCsr = HostCsrMatrix<double, int, std::size_t>;

/// Checks the CSR invariants on a host-accessible matrix and throws std::invalid_argument naming
/// the first violation (row_ptr not starting at 0 or decreasing, sizes that disagree, a column
/// index out of range). O(rows + nnz).
template <class Scalar, class Ordinal, class Offset, class Device>
void validate(const CsrMatrix<Scalar, Ordinal, Offset, Device>& A) {
  using Matrix = CsrMatrix<Scalar, Ordinal, Offset, Device>;
  static_assert(Kokkos::SpaceAccessibility<Kokkos::HostSpace, typename Matrix::memory_space>::accessible,
                "cispmv::validate: the matrix must be host-accessible (copy it to the host first)");
  auto fail = [](const std::string& what) { throw std::invalid_argument("cispmv::validate(csr): " + what); };
  if (A.num_rows < 0 || A.num_cols < 0) {
    fail("negative shape " + std::to_string(A.num_rows) + " x " + std::to_string(A.num_cols));
  }
  if (A.row_ptr.extent(0) != static_cast<std::size_t>(A.num_rows) + 1) {
    fail("row_ptr has " + std::to_string(A.row_ptr.extent(0)) +
         " entries, expected num_rows + 1 = " + std::to_string(static_cast<std::size_t>(A.num_rows) + 1));
  }
  if (A.col_idx.extent(0) != A.values.extent(0)) {
    fail("col_idx has " + std::to_string(A.col_idx.extent(0)) + " entries but values has " +
         std::to_string(A.values.extent(0)));
  }
  if (A.row_ptr(0) != 0) fail("row_ptr(0) = " + std::to_string(A.row_ptr(0)) + ", expected 0");
  for (Ordinal r = 0; r < A.num_rows; ++r) {
    if (A.row_ptr(r + 1) < A.row_ptr(r)) {
      fail("row_ptr decreases at row " + std::to_string(r) + " (" + std::to_string(A.row_ptr(r)) + " > " +
           std::to_string(A.row_ptr(r + 1)) + ")");
    }
  }
  if (static_cast<std::size_t>(A.row_ptr(A.num_rows)) != A.values.extent(0)) {
    fail("row_ptr(num_rows) = " + std::to_string(A.row_ptr(A.num_rows)) + " but there are " +
         std::to_string(A.values.extent(0)) + " values");
  }
  for (Ordinal r = 0; r < A.num_rows; ++r) {
    for (Offset k = A.row_ptr(r); k < A.row_ptr(r + 1); ++k) {
      const Ordinal c = A.col_idx(k);
      if (c < 0 || c >= A.num_cols) {
        std::ostringstream os;
        os << "column index " << c << " of row " << r << " (entry " << k << ") is outside [0, " << A.num_cols << ")";
        fail(os.str());
      }
    }
  }
}

/// The paper's formula for CSR (Table 5).
template <class S, class O, class Off, class D>
std::size_t paper_model_bytes(const CsrMatrix<S, O, Off, D>& A, PaperMemoryModel m = {}) {
  return m.csr(static_cast<std::size_t>(A.num_rows), A.nnz());
}

/// Host CSR (a deep copy) from a host CSR: the identity conversion, so that every format has to_csr.
template <class Scalar, class Ordinal, class Offset>
HostCsrMatrix<Scalar, Ordinal, Offset> to_csr(const HostCsrMatrix<Scalar, Ordinal, Offset>& A) {
  return A.template map_views<Kokkos::DefaultHostExecutionSpace>([](const auto& v) {
    auto copy = Kokkos::create_mirror(Kokkos::HostSpace(), v);
    Kokkos::deep_copy(copy, v);
    return copy;
  });
}

}  // namespace cispmv

#include "cispmv/impl/kernels/csr.hpp"
