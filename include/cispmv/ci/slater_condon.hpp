#pragma once
/// \file ci/slater_condon.hpp
/// Matrix elements of the CI Hamiltonian between Slater determinants by the Slater-Condon rules
/// (Mahmoud et al. 2018, section 2.1).

#include "cispmv/ci/determinants.hpp"
#include "cispmv/ci/fcidump.hpp"

#include <cstdint>
#include <vector>

namespace cispmv::ci {

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

}  // namespace cispmv::ci
