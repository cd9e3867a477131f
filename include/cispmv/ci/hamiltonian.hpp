#pragma once
/// \file ci/hamiltonian.hpp
/// The CI Hamiltonian matrix of a determinant space, assembled into CSR, and its diagonal.

#include <Kokkos_Core.hpp>

#include "cispmv/ci/determinants.hpp"
#include "cispmv/ci/fcidump.hpp"
#include "cispmv/formats/csr.hpp"

#include <string>

namespace cispmv::ci {

/// The CI Hamiltonian of `integrals` in `space` (without the core energy) as a host CSR matrix:
/// symmetric, both triangles stored, the diagonal always stored, off-diagonal elements with
/// |H_ij| < drop_tolerance dropped, column indices sorted within each row.
///
/// Assembled in parallel on Kokkos::DefaultHostExecutionSpace in two passes (count the nonzeros of
/// each row, prefix sum, fill). The connected determinants of a row are generated, not searched:
/// all single and double excitations of the row's determinant that keep the excitation level within
/// the truncation (and the irrep, if restricted) are looked up in a DeterminantIndex, so the work is
/// O(rows x excitations per row), never O(rows^2).
HostCsr build_hamiltonian(const FciDump& integrals, const DeterminantSpace& space, double drop_tolerance = 1e-14);

/// The diagonal of a host CSR matrix (zero where a row stores none): the Davidson preconditioner.
Kokkos::View<double*, Kokkos::HostSpace> csr_diagonal(const HostCsr& A);

/// A CI Hamiltonian named where a matrix file would be: `fcidump:FILE:LEVEL[:all-irreps]`, e.g.
/// `fcidump:unit_tests/data/h2o_631g.fcidump:10` (LEVEL >= the number of electrons is full CI). The
/// space keeps the determinants of irrep ISYM (as `cispmv ci` does by default), or of every irrep with
/// `:all-irreps`.
struct HamiltonianSpec {
  std::string fcidump;           ///< path of the FCIDUMP file
  int level = 0;                 ///< maximum excitation level
  bool restrict_to_isym = true;  ///< false with ":all-irreps"
};

/// True when `text` names a Hamiltonian (starts with "fcidump:") rather than a file or suite matrix.
bool is_hamiltonian_spec(const std::string& text);

/// Parses `fcidump:FILE:LEVEL[:all-irreps]` (FILE may itself contain ':'). Throws
/// std::invalid_argument naming the spec and what is wrong (no file, no level, a level that is not a
/// positive integer).
HamiltonianSpec parse_hamiltonian_spec(const std::string& text);

/// Reads the FCIDUMP, builds the space of `spec` and its Hamiltonian (without the core energy), as
/// build_hamiltonian does: what the benchmarks and `cispmv run` multiply with.
HostCsr build_hamiltonian(const HamiltonianSpec& spec);

}  // namespace cispmv::ci
