#pragma once
/// \file ci/determinants.hpp
/// Slater determinants as pairs of 64-bit occupation strings, and the truncated-CI determinant space
/// (CIS, CISD, CISDT, ..., full CI) of Mahmoud et al. 2018, section 2.2, ordered by excitation level so
/// that the reference region of the CI matrix comes first.

#include "cispmv/impl/hash.hpp"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace cispmv::ci {

struct FciDump;

/// Orbitals a determinant can hold: occupation strings are 64-bit words.
inline constexpr int max_orbitals = 64;

/// One Slater determinant: bit p of `alpha` (`beta`) is set when spatial orbital p holds an alpha (beta)
/// electron. Sign convention (what the Hamiltonian's fermionic signs refer to): with spin-orbitals
/// numbered alpha 0..n-1 then beta n..2n-1, the determinant is a+_{p1} a+_{p2} ... |0> with p1 < p2 < ...
struct Determinant {
  std::uint64_t alpha = 0;
  std::uint64_t beta = 0;
  friend bool operator==(const Determinant& a, const Determinant& b) { return a.alpha == b.alpha && a.beta == b.beta; }
  friend bool operator!=(const Determinant& a, const Determinant& b) { return !(a == b); }
};

/// Excitation level of `d` relative to `reference`: the number of electrons moved out of the reference,
/// alpha plus beta (a single excitation is level 1, a double level 2); half the number of spin-orbitals
/// in which the two determinants differ.
inline int excitation_level(const Determinant& reference, const Determinant& d) {
  return __builtin_popcountll(reference.alpha & ~d.alpha) + __builtin_popcountll(reference.beta & ~d.beta);
}

/// Irreducible representation of an occupation string, 0-based (0..7): XOR of (orbsym[p] - 1) over the
/// occupied orbitals, the direct product in D2h and its subgroups with Molpro's irrep numbering.
std::uint32_t string_irrep(std::uint64_t string, const std::vector<int>& orbsym);

/// The occupation strings of one spin that a DeterminantSpace is made of, numbered by excitation
/// rank from the reference's string of that spin (rank k: k electrons moved from reference-occupied to
/// reference-empty orbitals), then by enumeration order within the rank (holes outer, particles inner,
/// both in increasing bit order). This numbering is the address space of the string-driven
/// Hamiltonian builder (ci/hamiltonian.hpp).
struct SpinStrings {
  std::vector<std::uint64_t> strings;  ///< by id
  std::vector<std::size_t>
      rank_offset;                  ///< max_rank() + 2 entries: ids of rank k are [rank_offset[k], rank_offset[k+1])
  std::vector<std::uint8_t> rank;   ///< per id
  std::vector<std::uint8_t> irrep;  ///< per id, 0..7
  /// Per id: position among the strings of its rank, and (in a space restricted to one irrep) of
  /// its irrep: the offset of a beta string inside its block of the space.
  std::vector<std::int32_t> position;
  std::size_t size() const { return strings.size(); }
  int max_rank() const { return static_cast<int>(rank_offset.size()) - 2; }
};

/// The determinants of a truncated CI, ordered by excitation level from a reference determinant.
///
/// Order: `determinants[level_offset[l] .. level_offset[l+1])` are the determinants of excitation
/// level l (level 0 is the reference alone). Within a level: by the number of alpha excitations
/// (ascending), then by the alpha string id, then by the beta string id (SpinStrings). So the space is
/// a union of blocks (alpha rank ka, beta rank kb) with ka + kb <= max_level, each an alpha-major
/// product of the strings of those ranks (restricted to pairs of irrep product `irrep`), and the index
/// of a determinant is computed, not searched: index_of(). The order is deterministic and does not
/// depend on the number of threads.
struct DeterminantSpace {
  int num_orbitals = 0;
  int num_alpha = 0;
  int num_beta = 0;
  int max_level = 0;        ///< the truncation actually applied (requested level clamped to the largest possible)
  int irrep = 0;            ///< 1..8: only determinants of this irrep are kept; 0: no restriction
  std::vector<int> orbsym;  ///< irrep (1..8) of each orbital; all 1 when none was given
  Determinant reference;    ///< what the excitation levels count from (see ci/reference.hpp)
  /// The determinants and their strings' ids, one by one (SpaceListing::determinants); empty for a space built
  /// with SpaceListing::strings, which is addressed through its strings and blocks alone (index_of): what the
  /// factored Hamiltonian needs, at no memory per determinant.
  std::vector<Determinant> determinants;
  std::vector<std::size_t> level_offset;  ///< max_level + 2 entries: start of each level, then size()
  std::size_t num_determinants = 0;       ///< size()

  SpinStrings alpha, beta;                      ///< the strings of each spin, by id
  std::vector<std::int32_t> alpha_id, beta_id;  ///< per determinant: its strings' ids (when listed)
  /// Start of block (alpha rank ka, beta rank kb) at [ka * (beta.max_rank() + 1) + kb]; -1 when
  /// ka + kb > max_level.
  std::vector<std::int64_t> block_start;
  /// Offset of the first determinant of alpha string ja inside block (rank(ja), kb), at
  /// [ja * (beta.max_rank() + 1) + kb].
  std::vector<std::int64_t> alpha_block_position;

  std::size_t size() const { return num_determinants; }
  /// Whether `determinants`, `alpha_id` and `beta_id` hold every determinant (SpaceListing::determinants).
  bool listed() const { return determinants.size() == num_determinants; }
  /// f(alpha id, beta id, index) for every determinant of the space, alpha string by alpha string (each one's
  /// determinants in blocks of one beta rank): the space walked through its strings, listed or not.
  template <class F>
  void for_each_determinant(F&& f) const;
  /// f(beta id, index) for every determinant of alpha string `ja`.
  template <class F>
  void for_each_determinant_of(std::int32_t ja, F&& f) const;
  /// Number of determinants of excitation level `level` (0 when the level is out of range).
  std::size_t level_size(int level) const {
    return level < 0 || level > max_level ? 0 : level_offset[level + 1] - level_offset[level];
  }
  /// Index of the determinant of alpha string id `ja` and beta string id `jb`, or -1 when it is not
  /// in the space (level beyond max_level or, if restricted, another irrep). O(1).
  std::int64_t index_of(std::int32_t ja, std::int32_t jb) const {
    const int ka = alpha.rank[static_cast<std::size_t>(ja)];
    const int kb = beta.rank[static_cast<std::size_t>(jb)];
    const std::size_t nb = static_cast<std::size_t>(beta.max_rank()) + 1;
    const std::int64_t start = block_start[static_cast<std::size_t>(ka) * nb + static_cast<std::size_t>(kb)];
    if (start < 0) return -1;
    if (irrep != 0 && (alpha.irrep[static_cast<std::size_t>(ja)] ^ beta.irrep[static_cast<std::size_t>(jb)]) !=
                          static_cast<std::uint32_t>(irrep - 1)) {
      return -1;
    }
    return start + alpha_block_position[static_cast<std::size_t>(ja) * nb + static_cast<std::size_t>(kb)] +
           beta.position[static_cast<std::size_t>(jb)];
  }
};

/// Whether make_determinant_space lists the determinants one by one (the assembled Hamiltonian's builders and
/// everything that walks rows need them) or only builds the strings and blocks that address them (O(strings):
/// the factored Hamiltonian's whole need, for spaces of billions of determinants).
enum class SpaceListing { determinants, strings };

template <class F>
void DeterminantSpace::for_each_determinant_of(std::int32_t ja, F&& f) const {
  const std::size_t nkb = static_cast<std::size_t>(beta.max_rank()) + 1;
  const std::uint32_t target = irrep == 0 ? 0 : static_cast<std::uint32_t>(irrep - 1);
  const auto a = static_cast<std::size_t>(ja);
  for (std::size_t kb = 0; kb < nkb; ++kb) {
    const std::int64_t start = block_start[static_cast<std::size_t>(alpha.rank[a]) * nkb + kb];
    if (start < 0) continue;
    const std::int64_t base = start + alpha_block_position[a * nkb + kb];
    for (std::size_t jb = beta.rank_offset[kb]; jb < beta.rank_offset[kb + 1]; ++jb) {
      if (irrep != 0 && (alpha.irrep[a] ^ beta.irrep[jb]) != target) continue;
      f(static_cast<std::int32_t>(jb), static_cast<std::size_t>(base + beta.position[jb]));
    }
  }
}

template <class F>
void DeterminantSpace::for_each_determinant(F&& f) const {
  for (std::size_t ja = 0; ja < alpha.size(); ++ja) {
    for_each_determinant_of(static_cast<std::int32_t>(ja),
                            [&](std::int32_t jb, std::size_t i) { f(static_cast<std::int32_t>(ja), jb, i); });
  }
}

/// Builds the space of all determinants with `num_alpha` and `num_beta` electrons in `num_orbitals`
/// orbitals whose excitation level from `reference` is at most `max_level` (a level >= the number
/// of electrons gives full CI). With `irrep` in 1..8 only determinants of that irrep are kept (then
/// `orbsym` must give the irrep of every orbital). With SpaceListing::strings the determinants are not listed
/// (DeterminantSpace::determinants). Throws std::invalid_argument on impossible electron counts, a reference with
/// other electron counts, more than 64 orbitals, or a listed space too large for `int` matrix indices (a space of
/// strings alone: for 64-bit indices).
DeterminantSpace make_determinant_space(int num_orbitals, int num_alpha, int num_beta, int max_level,
                                        const std::vector<int>& orbsym, int irrep, const Determinant& reference,
                                        SpaceListing listing = SpaceListing::determinants);

/// As above with the lowest `num_alpha` (`num_beta`) orbitals occupied in the reference: the aufbau
/// determinant when the orbitals are numbered by energy.
DeterminantSpace make_determinant_space(int num_orbitals, int num_alpha, int num_beta, int max_level,
                                        const std::vector<int>& orbsym = {}, int irrep = 0);

/// The space of an FCIDUMP around `reference`: alpha = (NELEC + MS2) / 2, beta = (NELEC - MS2) / 2
/// electrons, and with `restrict_to_isym` only determinants of irrep ISYM (from ORBSYM).
DeterminantSpace make_determinant_space(const FciDump& dump, int max_level, bool restrict_to_isym,
                                        const Determinant& reference,
                                        SpaceListing listing = SpaceListing::determinants);

/// The space of an FCIDUMP around its automatic reference (choose_reference in ci/reference.hpp:
/// aufbau on orbital energies), whatever order the file lists its orbitals in.
DeterminantSpace make_determinant_space(const FciDump& dump, int max_level, bool restrict_to_isym);

/// The number of determinants make_determinant_space would build, without building them (O(strings)).
double count_determinants(int num_orbitals, int num_alpha, int num_beta, int max_level, const std::vector<int>& orbsym,
                          int irrep, const Determinant& reference);

/// Number of determinants of each excitation level 0..max_level of a space without symmetry
/// restriction, from binomial coefficients (a check on make_determinant_space).
std::vector<std::size_t> count_determinants_per_level(int num_orbitals, int num_alpha, int num_beta, int max_level);

/// Hash index from a determinant to its position in a DeterminantSpace: open addressing with linear
/// probing over a power-of-two table of 32-bit positions, at most half full, so that a lookup costs
/// about one cache miss and finding the connected determinants of a row never scans the space.
/// Lookups are const and safe from many threads at once. The index refers to `determinants`, which
/// must outlive it and stay unchanged.
class DeterminantIndex {
 public:
  explicit DeterminantIndex(const std::vector<Determinant>& determinants);
  /// Position of `d`, or -1 when it is not in the space.
  std::int64_t find(const Determinant& d) const {
    std::size_t slot = hash(d) & mask_;
    while (true) {
      const std::int32_t pos = slots_[slot];
      if (pos < 0) return -1;
      if ((*determinants_)[static_cast<std::size_t>(pos)] == d) return pos;
      slot = (slot + 1) & mask_;
    }
  }

 private:
  static std::size_t hash(const Determinant& d) {
    // splitmix64 finaliser of a combination of both strings: neighbouring strings spread evenly.
    return static_cast<std::size_t>(
        impl::splitmix64_mix(d.alpha * impl::splitmix64_gamma ^ (d.beta + 0x632BE59BD9B4E019ull + (d.alpha << 6))));
  }
  const std::vector<Determinant>* determinants_;
  std::vector<std::int32_t> slots_;
  std::size_t mask_ = 0;
};

}  // namespace cispmv::ci
