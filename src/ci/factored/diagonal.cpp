// The tables the diagonal of a determinant space's Hamiltonian is formed from (ci/factored/diagonal.hpp), without
// listing the determinants: each string's own energy and its determinants' place in the space.
#include "cispmv/ci/factored/diagonal.hpp"

#include "cispmv/ci/slater_condon.hpp"

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace cispmv::impl {

DiagonalTables diagonal_tables(const ci::FciDump& integrals, const ci::DeterminantSpace& space) {
  if (integrals.num_orbitals != space.num_orbitals) {
    throw std::invalid_argument("cispmv::ci::hamiltonian_diagonal: the integrals have " +
                                std::to_string(integrals.num_orbitals) + " orbitals, the space " +
                                std::to_string(space.num_orbitals));
  }
  const ci::SlaterCondon sc(integrals);
  const ci::SpinStrings& A = space.alpha;
  const ci::SpinStrings& B = space.beta;
  DiagonalTables t;
  t.num_orbitals = integrals.num_orbitals;
  t.nkb = B.max_rank() + 1;
  t.na = static_cast<int>(A.size());
  t.nb = static_cast<int>(B.size());
  t.target = space.irrep != 0 ? space.irrep - 1 : -1;
  t.alpha = A.strings;
  t.beta = B.strings;
  t.ea.resize(A.size());
  t.eb.resize(B.size());
  for (std::size_t j = 0; j < A.size(); ++j) t.ea[j] = sc.diagonal({A.strings[j], 0});
  for (std::size_t j = 0; j < B.size(); ++j) t.eb[j] = sc.diagonal({0, B.strings[j]});
  const int n = t.num_orbitals;
  t.coulomb.resize(static_cast<std::size_t>(n) * static_cast<std::size_t>(n));
  for (int p = 0; p < n; ++p) {
    for (int q = 0; q < n; ++q) t.coulomb[static_cast<std::size_t>(p * n + q)] = integrals.two(p, p, q, q);
  }
  const auto nkb = static_cast<std::size_t>(t.nkb);
  t.alpha_base.assign(A.size() * nkb, -1);
  for (std::size_t a = 0; a < A.size(); ++a) {
    for (std::size_t kb = 0; kb < nkb; ++kb) {
      const std::int64_t start = space.block_start[static_cast<std::size_t>(A.rank[a]) * nkb + kb];
      if (start >= 0) t.alpha_base[a * nkb + kb] = start + space.alpha_block_position[a * nkb + kb];
    }
  }
  t.alpha_irrep = A.irrep;
  t.beta_irrep = B.irrep;
  t.beta_rank = B.rank;
  t.beta_position = B.position;
  return t;
}

}  // namespace cispmv::impl
