#pragma once
/// \file ci.hpp
/// The CI Hamiltonian matrix in a determinant space (Slater-Condon rules; Mahmoud et al. 2018,
/// section 2.1), its structure statistics, and the `cispmv ci` command.

#include <cispmv/csr.hpp>
#include <cispmv/determinants.hpp>
#include <cispmv/fcidump.hpp>

#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

namespace cispmv {

/// Matrix elements <bra|H|ket> of the FCIDUMP Hamiltonian without its core energy, by the
/// Slater-Condon rules, with the fermionic signs of the ordering documented at Determinant.
///
/// Coulomb J(p,q) = (pp|qq) and exchange K(p,q) = (pq|qp) are tabulated so that a diagonal element
/// costs O(N_electrons^2) table reads. The evaluator refers to `integrals`, which must outlive it.
class SlaterCondon {
 public:
  explicit SlaterCondon(const FciDump& integrals);

  /// <d|H|d>.
  double diagonal(const Determinant& d) const;
  /// <bra|H|ket> for any two determinants with the same electron counts: zero beyond double
  /// excitations. O(N_electrons) for singles, O(1) for doubles, after O(1) bit work to classify.
  double element(const Determinant& bra, const Determinant& ket) const;

  /// Single excitation i -> a within the string `same` (the spin that is excited), with `other` the
  /// string of the other spin: <a+_a a_i D|H|D> including the sign.
  double single(std::uint64_t same, std::uint64_t other, int i, int a) const;
  /// Same-spin double excitation i -> a, j -> b within `same` (i != j, a != b, all four distinct
  /// as spin-orbitals), including the sign of the determinant a+_b a_j a+_a a_i D in canonical order.
  double double_same_spin(std::uint64_t same, int i, int j, int a, int b) const;
  /// Opposite-spin double excitation: alpha i -> a, beta j -> b.
  double double_opposite_spin(std::uint64_t alpha, std::uint64_t beta, int i, int a, int j, int b) const;

  const FciDump& integrals() const { return *integrals_; }

 private:
  const FciDump* integrals_;
  int n_ = 0;
  std::vector<double> coulomb_;   // J(p,q) = (pp|qq), row-major
  std::vector<double> exchange_;  // K(p,q) = (pq|qp), row-major
};

/// Sign (+1 or -1) of moving an electron from orbital i to orbital a in the occupation string `s`:
/// (-1) to the number of occupied orbitals strictly between i and a.
inline double excitation_sign(std::uint64_t s, int i, int a) {
  const int lo = i < a ? i : a;
  const int hi = i < a ? a : i;
  const std::uint64_t between = ((std::uint64_t{1} << hi) - 1) & ~((std::uint64_t{2} << lo) - 1);
  return (__builtin_popcountll(s & between) & 1) ? -1.0 : 1.0;
}

/// The CI Hamiltonian of `integrals` in `space` (without the core energy) as a host CSR matrix:
/// symmetric, both triangles stored, the diagonal always stored, off-diagonal elements with
/// |H_ij| < drop_tolerance dropped, column indices sorted within each row.
///
/// Assembled in parallel on Kokkos::DefaultHostExecutionSpace in two passes (count the nonzeros of
/// each row, prefix sum, fill). The connected determinants of a row are generated, not searched:
/// all single and double excitations of the row's determinant that keep the excitation level within
/// the truncation (and the irrep, if restricted) are looked up in a DeterminantIndex, so the work is
/// O(rows x excitations per row), never O(rows^2).
HostCsrMatrix<double, int, std::size_t> build_hamiltonian(const FciDump& integrals, const DeterminantSpace& space,
                                                          double drop_tolerance = 1e-14);

/// The diagonal of a host CSR matrix (zero where a row stores none): the Davidson preconditioner.
Kokkos::View<double*, Kokkos::HostSpace> csr_diagonal(const HostCsrMatrix<double, int, std::size_t>& A);

/// Structure of a CI matrix over its excitation levels: the blocks that the paper's reference region
/// (low levels, dense-ish) and expansion region (high levels, very sparse) are made of.
struct CiStructureStats {
  std::size_t rows = 0;
  std::size_t nnz = 0;
  std::size_t min_row_length = 0;
  std::size_t max_row_length = 0;
  double mean_row_length = 0.0;
  std::size_t max_row = 0;  ///< a row of maximal length (the first)
  /// Rows of levels 0..1 (reference and singles): nonzeros in the square block of those rows and
  /// columns, and everywhere else.
  std::size_t leading_block_rows = 0;
  std::size_t leading_block_nnz = 0;
  std::size_t rest_nnz = 0;
  std::vector<std::size_t> level_rows;                  ///< determinants per level
  std::vector<std::size_t> level_nnz;                   ///< nonzeros in the rows of each level
  std::vector<std::vector<std::size_t>> level_block_nnz;  ///< [row level][column level] nonzeros
};

/// Computes CiStructureStats of a CI matrix whose rows are ordered as `space`.
CiStructureStats ci_structure_stats(const HostCsrMatrix<double, int, std::size_t>& A, const DeterminantSpace& space);

/// Options of `cispmv ci FCIDUMP --level N [--roots k] [--format csr] [--write-mtx out.mtx]`.
struct CiCommandOptions {
  std::string fcidump;           ///< path of the FCIDUMP file
  int level = 2;                 ///< maximum excitation level (2 = CISD; >= NELEC = full CI)
  int roots = 1;                 ///< number of lowest eigenvalues
  std::string format = "csr";    ///< sparse format the Davidson SpMV runs on
  std::string write_mtx;         ///< if not empty, write the matrix there (Matrix Market, symmetric)
  bool restrict_to_isym = true;  ///< keep only determinants of irrep ISYM (no-op when ORBSYM is all 1)
  double residual_tolerance = 1e-6;  ///< Davidson convergence: residual 2-norm of every root
  int max_iterations = 200;          ///< Davidson iterations
  double drop_tolerance = 1e-14;     ///< off-diagonal |H_ij| below this are not stored
};

/// Runs the `ci` command: reads the FCIDUMP, builds the space and the Hamiltonian, prints the
/// determinant count, nonzeros, structure statistics, the energies (eigenvalue + core energy, 10
/// decimals) of each root and the timings to `out`; returns 0 on success, 1 when Davidson did not
/// converge. Throws std::runtime_error / std::invalid_argument on bad input (the caller prints it).
int run_ci_command(const CiCommandOptions& options, std::ostream& out);

}  // namespace cispmv
