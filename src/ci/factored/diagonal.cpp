// The diagonal of a determinant space's Hamiltonian, without assembling it or listing the determinants: the factored
// Hamiltonian's preconditioner (PySCF's make_hdiag), from per-string energies and the Coulomb terms between the spins.
#include "cispmv/ci/factored.hpp"

#include "cispmv/ci/slater_condon.hpp"
#include "cispmv/impl/bits.hpp"

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace cispmv::ci {

std::vector<double> hamiltonian_diagonal(const FciDump& integrals, const DeterminantSpace& space) {
  if (integrals.num_orbitals != space.num_orbitals) {
    throw std::invalid_argument("cispmv::ci::hamiltonian_diagonal: the integrals have " +
                                std::to_string(integrals.num_orbitals) + " orbitals, the space " +
                                std::to_string(space.num_orbitals));
  }
  // d(a, b) = E(a) + E(b) + sum over occupied i of a and j of b of (ii|jj): each string's own energy (the
  // Slater-Condon diagonal of the string alone) and the Coulomb terms between the spins
  const SlaterCondon sc(integrals);
  const SpinStrings& A = space.alpha;
  const SpinStrings& B = space.beta;
  std::vector<double> ea(A.size()), eb(B.size());
  for (std::size_t j = 0; j < A.size(); ++j) ea[j] = sc.diagonal({A.strings[j], 0});
  for (std::size_t j = 0; j < B.size(); ++j) eb[j] = sc.diagonal({0, B.strings[j]});
  const int n = integrals.num_orbitals;
  std::vector<double> d(space.size());
  // by alpha string: its Coulomb row J_a(q) = sum over its occupied p of (pp|qq), then each of its determinants
  Kokkos::parallel_for(
      "cispmv::ci::hamiltonian_diagonal",
      Kokkos::RangePolicy<Kokkos::DefaultHostExecutionSpace, Kokkos::Schedule<Kokkos::Dynamic>>(0, A.size()),
      [&](const std::size_t ja) {
        std::vector<double> coulomb(static_cast<std::size_t>(n), 0.0);
        for (std::uint64_t s = A.strings[ja]; s != 0; s &= s - 1) {
          const int p = cispmv::impl::lowest_bit(s);
          for (int q = 0; q < n; ++q) coulomb[static_cast<std::size_t>(q)] += integrals.two(p, p, q, q);
        }
        space.for_each_determinant_of(static_cast<std::int32_t>(ja), [&](std::int32_t jb, std::size_t i) {
          double cross = 0.0;
          for (std::uint64_t s = B.strings[static_cast<std::size_t>(jb)]; s != 0; s &= s - 1) {
            cross += coulomb[static_cast<std::size_t>(cispmv::impl::lowest_bit(s))];
          }
          d[i] = ea[ja] + eb[static_cast<std::size_t>(jb)] + cross;
        });
      });
  return d;
}

}  // namespace cispmv::ci
