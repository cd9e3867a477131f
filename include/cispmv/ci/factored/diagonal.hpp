#pragma once
/// \file ci/factored/diagonal.hpp
/// The diagonal of a determinant space's Hamiltonian formed where the eigensolver keeps its vectors, never on the
/// host: FactoredDiagonal, a team per alpha string that writes its determinants' diagonal elements, and
/// DiagonalTables, the per-string energies and addressing it reads (built on the host in O(strings), in
/// src/ci/factored/diagonal.cpp). A space of 451.7M determinants takes milliseconds on a GPU where forming the
/// 3.6 GB on the host and copying them took seconds.

#include <Kokkos_Core.hpp>

#include "cispmv/ci/determinants.hpp"
#include "cispmv/ci/fcidump.hpp"
#include "cispmv/impl/backend.hpp"
#include "cispmv/impl/bits.hpp"
#include "cispmv/impl/convert_helpers.hpp"

#include <cstdint>
#include <vector>

namespace cispmv::impl {

/// What the diagonal of a space needs, per string and per orbital pair, in the space's own addressing.
struct DiagonalTables {
  int num_orbitals = 0, nkb = 0, na = 0, nb = 0;
  int target = -1;                         ///< the irrep (0..7) of the space's determinants, -1 without a restriction
  std::vector<std::uint64_t> alpha, beta;  ///< the strings, by id
  std::vector<double> ea, eb;              ///< each string's own energy (the Slater-Condon diagonal of it alone)
  std::vector<double> coulomb;             ///< (pp|qq) at [p * num_orbitals + q]
  std::vector<std::int64_t> alpha_base;    ///< at [ja * nkb + kb]: the index of ja's first determinant of beta rank kb
  std::vector<std::uint8_t> alpha_irrep, beta_irrep, beta_rank;
  std::vector<std::int32_t> beta_position;  ///< the offset of a beta string inside its block (SpinStrings::position)
};

/// The tables of `space` with `integrals`; std::invalid_argument when their numbers of orbitals differ.
DiagonalTables diagonal_tables(const ci::FciDump& integrals, const ci::DeterminantSpace& space);

/// d(a, b) = E(a) + E(b) + sum over occupied p of a and q of b of (pp|qq): a team per alpha string, its Coulomb row
/// J_a(q) = sum_p (pp|qq) in team scratch, then a thread per beta string of the space's blocks. The sums in the
/// order of the host's Slater-Condon rules (p and q ascending).
template <class Exec>
struct FactoredDiagonal {
  using Mem = typename Exec::memory_space;
  using Policy = Kokkos::TeamPolicy<Exec>;
  using Member = typename Policy::member_type;
  using Scratch = Kokkos::View<double*, typename Exec::scratch_memory_space, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

  int n = 0, nkb = 0, nb = 0, target = -1;
  Kokkos::View<const std::uint64_t*, Mem> alpha, beta;
  Kokkos::View<const double*, Mem> ea, eb, coulomb;
  Kokkos::View<const std::int64_t*, Mem> alpha_base;
  Kokkos::View<const std::uint8_t*, Mem> alpha_irrep, beta_irrep, beta_rank;
  Kokkos::View<const std::int32_t*, Mem> beta_position;
  Kokkos::View<double*, Mem> d;

  static std::size_t scratch_bytes(int orbitals) { return Scratch::shmem_size(static_cast<std::size_t>(orbitals)); }

  KOKKOS_INLINE_FUNCTION void operator()(const Member& team) const {
    const int a = team.league_rank();
    const Scratch row(team.team_scratch(0), static_cast<std::size_t>(n));
    const std::uint64_t sa = alpha(a);
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, n), [&](const int q) {
      double sum = 0.0;
      for (std::uint64_t s = sa; s != 0; s &= s - 1) sum += coulomb(lowest_bit(s) * n + q);
      row(q) = sum;
    });
    team.team_barrier();
    const double e = ea(a);
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, nb), [&](const int b) {
      const std::int64_t base = alpha_base(static_cast<std::int64_t>(a) * nkb + beta_rank(b));
      if (base < 0 || (target >= 0 && (alpha_irrep(a) ^ beta_irrep(b)) != target)) return;
      double cross = 0.0;
      for (std::uint64_t s = beta(b); s != 0; s &= s - 1) cross += row(lowest_bit(s));
      d(base + beta_position(b)) = e + eb(b) + cross;
    });
  }
};

}  // namespace cispmv::impl

namespace cispmv::ci {

/// The diagonal of the space's Hamiltonian (without the core energy), in the space's order, formed on `exec` in its
/// memory from per-string energies and the Coulomb terms between the spins (PySCF's make_hdiag): the Davidson's
/// preconditioner when the matrix is never assembled. O(strings) on the host; no determinant is listed. Throws
/// std::invalid_argument when the integrals and the space have different numbers of orbitals.
template <class Exec>
Kokkos::View<double*, typename Exec::memory_space> hamiltonian_diagonal(const Exec& exec, const FciDump& integrals,
                                                                        const DeterminantSpace& space) {
  using Mem = typename Exec::memory_space;
  const impl::DiagonalTables t = impl::diagonal_tables(integrals, space);
  impl::FactoredDiagonal<Exec> f;
  f.n = t.num_orbitals;
  f.nkb = t.nkb;
  f.nb = t.nb;
  f.target = t.target;
  f.alpha = impl::view_of<std::uint64_t, Mem>("cispmv::ci::diagonal::alpha", t.alpha);
  f.beta = impl::view_of<std::uint64_t, Mem>("cispmv::ci::diagonal::beta", t.beta);
  f.ea = impl::view_of<double, Mem>("cispmv::ci::diagonal::ea", t.ea);
  f.eb = impl::view_of<double, Mem>("cispmv::ci::diagonal::eb", t.eb);
  f.coulomb = impl::view_of<double, Mem>("cispmv::ci::diagonal::coulomb", t.coulomb);
  f.alpha_base = impl::view_of<std::int64_t, Mem>("cispmv::ci::diagonal::alpha_base", t.alpha_base);
  f.alpha_irrep = impl::view_of<std::uint8_t, Mem>("cispmv::ci::diagonal::alpha_irrep", t.alpha_irrep);
  f.beta_irrep = impl::view_of<std::uint8_t, Mem>("cispmv::ci::diagonal::beta_irrep", t.beta_irrep);
  f.beta_rank = impl::view_of<std::uint8_t, Mem>("cispmv::ci::diagonal::beta_rank", t.beta_rank);
  f.beta_position = impl::view_of<std::int32_t, Mem>("cispmv::ci::diagonal::beta_position", t.beta_position);
  f.d =
      Kokkos::View<double*, Mem>(Kokkos::view_alloc("cispmv::ci::diagonal", Kokkos::WithoutInitializing), space.size());
  if (t.na > 0 && t.nb > 0) {
    using Policy = typename impl::FactoredDiagonal<Exec>::Policy;
    const int team = impl::is_gpu_space_v<Exec> ? 256 : 1;
    Kokkos::parallel_for(
        "cispmv::ci::hamiltonian_diagonal",
        Policy(exec, t.na, team)
            .set_scratch_size(0, Kokkos::PerTeam(impl::FactoredDiagonal<Exec>::scratch_bytes(t.num_orbitals))),
        f);
  }
  return f.d;
}

}  // namespace cispmv::ci
