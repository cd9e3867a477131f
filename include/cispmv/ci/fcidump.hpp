#pragma once
/// \file ci/fcidump.hpp
/// Molecular-orbital integrals in the FCIDUMP format of Knowles and Handy (as written by PySCF, Psi4,
/// Molpro): the input of the CI Hamiltonian builder (ci/hamiltonian.hpp).

#include <cstddef>
#include <istream>
#include <string>
#include <vector>

namespace cispmv::ci {

/// The contents of an FCIDUMP file: a real, spin-free Hamiltonian over `num_orbitals` spatial orbitals,
///   H = core_energy + sum_pq h(p,q) E_pq + 1/2 sum_pqrs (pq|rs) (E_pq E_rs - delta_qr E_ps).
///
/// Storage: orbitals are 0-based here (the file is 1-based). `one_electron` is the full symmetric
/// num_orbitals x num_orbitals matrix, row-major. `two_electron` holds each (pq|rs) once, in chemists'
/// notation, with the 8-fold permutational symmetry of real orbitals folded away:
///   pq = p*(p+1)/2 + q for p >= q,  rs likewise,  two_electron[pq*(pq+1)/2 + rs] for pq >= rs.
/// Integrals the file does not list are zero.
/// How ORBSYM numbers the irreps. Molpro's (1..8, the Knowles-Handy convention: irrep g's product with h is
/// ((g - 1) XOR (h - 1)) + 1), or PySCF's own irrep ids (0..7, its FCIDUMP writer's default, molpro_orbsym=False:
/// the product is g XOR h). Both number D2h and its subgroups so that the product is a XOR; they differ in which
/// label has which number, not in which determinants share an irrep. `automatic`: PySCF's where a value is 0,
/// else Molpro's. ISYM is 1 for the totally symmetric irrep in both (PySCF always writes ISYM=1).
enum class OrbsymNumbering { automatic, molpro, pyscf };

struct FciDump {
  int num_orbitals = 0;     ///< NORB
  int num_electrons = 0;    ///< NELEC
  int ms2 = 0;              ///< MS2 = N_alpha - N_beta
  int isym = 1;             ///< ISYM: irrep of the target state, 1..8 (Molpro numbering)
  std::vector<int> orbsym;  ///< ORBSYM: irrep of each orbital, 1..8; all 1 when the file has none
  /// The numbering the file's ORBSYM was read in (molpro or pyscf; automatic when the file has none). orbsym is
  /// Molpro-style 1..8 either way: a PySCF id g is g + 1 here.
  OrbsymNumbering orbsym_numbering = OrbsymNumbering::automatic;
  double core_energy = 0.0;          ///< the `value 0 0 0 0` line (nuclear repulsion + frozen core)
  bool has_core_energy = false;      ///< the file has that line (without it, 0: worth a warning)
  std::vector<double> one_electron;  ///< h(p,q), row-major, symmetric
  std::vector<double> two_electron;  ///< (pq|rs), packed as described above
  /// Orbital energies from the `e i 0 0 0` lines (Molpro writes them), indexed by orbital; empty when
  /// the file has none. Not part of the Hamiltonian: they order the orbitals for the reference
  /// determinant (ci/reference.hpp).
  std::vector<double> orbital_energies;

  /// An empty Hamiltonian (all integrals zero, ORBSYM all 1) over `norb` orbitals with `nelec`
  /// electrons: what the reader fills in, and what tests fill with model integrals.
  FciDump(int norb, int nelec, int ms2_value = 0);
  FciDump() = default;

  /// Index of the pair (p, q) in the packed triangle: symmetric in p and q.
  static std::size_t pair_index(int p, int q) {
    return p >= q ? static_cast<std::size_t>(p) * (p + 1) / 2 + q : static_cast<std::size_t>(q) * (q + 1) / 2 + p;
  }
  /// Index of (pq|rs) in `two_electron`: invariant under the 8 permutations of real orbitals.
  static std::size_t eri_index(int p, int q, int r, int s) {
    const std::size_t pq = pair_index(p, q);
    const std::size_t rs = pair_index(r, s);
    return pq >= rs ? pq * (pq + 1) / 2 + rs : rs * (rs + 1) / 2 + pq;
  }

  /// h(p, q), 0-based.
  double one(int p, int q) const { return one_electron[static_cast<std::size_t>(p) * num_orbitals + q]; }
  /// (pq|rs) in chemists' notation, 0-based.
  double two(int p, int q, int r, int s) const { return two_electron[eri_index(p, q, r, s)]; }
  /// Sets h(p, q) and h(q, p).
  void set_one(int p, int q, double value);
  /// Sets (pq|rs) and its 7 permutational partners.
  void set_two(int p, int q, int r, int s, double value);
};

/// The same Hamiltonian with its orbitals renumbered: orbital p of the result is orbital
/// `order[p]` of `dump` (integrals, ORBSYM and orbital energies follow). Throws std::invalid_argument
/// when `order` is not a permutation of 0..NORB-1.
FciDump permute_orbitals(const FciDump& dump, const std::vector<int>& order);

/// The orbital order of Pitzer (irrep-blocked) files, as Psi4 and Molpro write them: by irrep, in
/// order within an irrep. `permute_orbitals(dump, irrep_blocked_order(dump))` is that file.
std::vector<int> irrep_blocked_order(const FciDump& dump);

/// Reads an FCIDUMP file. The &FCI namelist may span lines, its keys come in any order, values may
/// carry trailing commas, and it ends at `&END` or `/`. Integral lines are `value i j k l`:
/// i j k l > 0 a two-electron integral (ij|kl), `i j 0 0` a one-electron integral, `i 0 0 0` an orbital
/// energy (kept in `orbital_energies` when every orbital has one), `0 0 0 0` the core energy. Throws cispmv::ParseError
/// naming the file, the line and what was expected on a malformed namelist, a missing NORB or NELEC, an unreadable
/// integral line or an index outside 1..NORB.
/// ORBSYM in the given numbering (OrbsymNumbering).
FciDump read_fcidump(const std::string& path, OrbsymNumbering numbering = OrbsymNumbering::automatic);

/// Parses FCIDUMP text from a stream; `source_name` names it in error messages.
FciDump parse_fcidump(std::istream& in, const std::string& source_name,
                      OrbsymNumbering numbering = OrbsymNumbering::automatic);

/// "Molpro's (1..8)", "PySCF's (0..7)" or "none given".
std::string orbsym_numbering_name(OrbsymNumbering numbering);

}  // namespace cispmv::ci
