// Truncated-CI determinant spaces (CIS, CISD, ..., full CI), ordered by excitation level.
#include "cispmv/ci/determinants.hpp"
#include "cispmv/ci/fcidump.hpp"
#include "cispmv/ci/reference.hpp"
#include "cispmv/ci/string_addressing.hpp"
#include "cispmv/errors.hpp"

#include <algorithm>
#include <array>
#include <limits>
#include <stdexcept>
#include <string>

namespace cispmv::ci {

namespace {

std::uint64_t low_bits(int n) { return n >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << n) - 1; }

// Calls f(mask) for every n-bit mask with k bits set, in increasing numeric order (Gosper's hack).
template <class F>
void for_each_combination(int n, int k, F&& f) {
  if (k < 0 || k > n) return;
  if (k == 0) {
    f(std::uint64_t{0});
    return;
  }
  if (n == 64) {  // only k == 64 is reachable here: a full string of 64 orbitals has no virtuals
    f(~std::uint64_t{0});
    return;
  }
  const std::uint64_t limit = std::uint64_t{1} << n;
  for (std::uint64_t x = low_bits(k); x < limit;) {
    f(x);
    const std::uint64_t c = x & (~x + 1);
    const std::uint64_t r = x + c;
    if (r == 0) break;
    x = (((r ^ x) >> 2) / c) | r;
  }
}

// C(n, k) (ci::binomial, exact) as a double: counts below multiply several of them, which may pass 2^63
double binomial_count(int n, int k) { return static_cast<double>(binomial(n, k)); }

// OR of list[b] over the set bits b of `mask`: a combination of positions in `list` as orbitals.
std::uint64_t scatter(std::uint64_t mask, const std::vector<int>& list) {
  std::uint64_t s = 0;
  for (; mask != 0; mask &= mask - 1) s |= std::uint64_t{1} << list[static_cast<std::size_t>(__builtin_ctzll(mask))];
  return s;
}

// The strings of one spin up to excitation rank `max_rank` from `reference`: rank k moves k electrons
// from the reference's occupied orbitals to its empty ones. Holes outer, particles inner, both in
// increasing order of their position masks (for the lowest orbitals occupied, increasing bit order).
SpinStrings make_spin_strings(int norb, std::uint64_t reference, int max_rank, const std::vector<int>& orbsym,
                              bool by_irrep) {
  std::vector<int> occ, vir;
  for (int p = 0; p < norb; ++p) ((reference >> p) & 1u ? occ : vir).push_back(p);
  const int nel = static_cast<int>(occ.size());
  const int nvir = static_cast<int>(vir.size());
  SpinStrings out;
  out.rank_offset.push_back(0);
  for (int k = 0; k <= max_rank; ++k) {
    const double count = binomial_count(nel, k) * binomial_count(nvir, k);
    if (count + static_cast<double>(out.strings.size()) >
        static_cast<double>(std::numeric_limits<std::int32_t>::max())) {
      throw std::invalid_argument("cispmv::make_determinant_space: " + std::to_string(count) +
                                  " strings of excitation rank " + std::to_string(k) + " is more than supported");
    }
    out.strings.reserve(out.strings.size() + static_cast<std::size_t>(count));
    for_each_combination(nel, k, [&](std::uint64_t holes) {
      const std::uint64_t kept = reference ^ scatter(holes, occ);
      for_each_combination(nvir, k,
                           [&](std::uint64_t particles) { out.strings.push_back(kept | scatter(particles, vir)); });
    });
    out.rank_offset.push_back(out.strings.size());
  }
  const std::size_t n = out.strings.size();
  out.rank.resize(n);
  out.irrep.resize(n);
  out.position.resize(n);
  for (int k = 0; k <= max_rank; ++k) {
    std::array<std::int32_t, 8> next{};
    for (std::size_t id = out.rank_offset[k]; id < out.rank_offset[k + 1]; ++id) {
      const std::uint32_t sym = string_irrep(out.strings[id], orbsym);
      out.rank[id] = static_cast<std::uint8_t>(k);
      out.irrep[id] = static_cast<std::uint8_t>(sym);
      out.position[id] = next[by_irrep ? sym : 0]++;
    }
  }
  return out;
}

// Strings of each rank and irrep: [rank][irrep].
std::vector<std::array<double, 8>> histogram(const SpinStrings& s) {
  std::vector<std::array<double, 8>> h(static_cast<std::size_t>(s.max_rank()) + 1);
  for (auto& row : h) row.fill(0.0);
  for (std::size_t id = 0; id < s.size(); ++id) h[s.rank[id]][s.irrep[id]] += 1.0;
  return h;
}

struct SpaceShape {
  SpinStrings alpha, beta;
  int level = 0;
  double total = 0;
};

SpaceShape space_shape(int num_orbitals, int num_alpha, int num_beta, int max_level, const std::vector<int>& orbsym,
                       int irrep, const Determinant& reference) {
  const std::string where = "cispmv::make_determinant_space: ";
  if (num_orbitals < 1 || num_orbitals > max_orbitals) {
    throw std::invalid_argument(where + std::to_string(num_orbitals) +
                                " orbitals; determinants are 64-bit strings, so 1..64 are supported");
  }
  if (num_alpha < 0 || num_alpha > num_orbitals || num_beta < 0 || num_beta > num_orbitals) {
    throw std::invalid_argument(where + std::to_string(num_alpha) + " alpha and " + std::to_string(num_beta) +
                                " beta electrons do not fit in " + std::to_string(num_orbitals) + " orbitals");
  }
  if (max_level < 0) throw std::invalid_argument(where + "negative excitation level " + std::to_string(max_level));
  if (irrep < 0 || irrep > 8) throw std::invalid_argument(where + "irrep " + std::to_string(irrep) + " not in 0..8");
  if (orbsym.size() != static_cast<std::size_t>(num_orbitals)) {
    throw std::invalid_argument(where + "orbsym has " + std::to_string(orbsym.size()) + " entries for " +
                                std::to_string(num_orbitals) + " orbitals");
  }
  for (int s : orbsym) {
    if (s < 1 || s > 8) throw std::invalid_argument(where + "orbsym value " + std::to_string(s) + " not in 1..8");
  }
  const std::uint64_t mask = low_bits(num_orbitals);
  if ((reference.alpha & ~mask) != 0 || (reference.beta & ~mask) != 0 ||
      __builtin_popcountll(reference.alpha) != num_alpha || __builtin_popcountll(reference.beta) != num_beta) {
    throw std::invalid_argument(where + "the reference determinant has " +
                                std::to_string(__builtin_popcountll(reference.alpha)) + " alpha and " +
                                std::to_string(__builtin_popcountll(reference.beta)) + " beta electrons, the space " +
                                std::to_string(num_alpha) + " and " + std::to_string(num_beta) + " in " +
                                std::to_string(num_orbitals) + " orbitals");
  }
  SpaceShape shape;
  const int max_rank_alpha = std::min(num_alpha, num_orbitals - num_alpha);
  const int max_rank_beta = std::min(num_beta, num_orbitals - num_beta);
  shape.level = std::min(max_level, max_rank_alpha + max_rank_beta);
  shape.alpha = make_spin_strings(num_orbitals, reference.alpha, std::min(shape.level, max_rank_alpha), orbsym, false);
  shape.beta =
      make_spin_strings(num_orbitals, reference.beta, std::min(shape.level, max_rank_beta), orbsym, irrep != 0);
  const auto ha = histogram(shape.alpha);
  const auto hb = histogram(shape.beta);
  const std::uint32_t target = irrep == 0 ? 0 : static_cast<std::uint32_t>(irrep - 1);
  for (int ka = 0; ka <= shape.alpha.max_rank(); ++ka) {
    for (int kb = 0; kb <= shape.beta.max_rank() && ka + kb <= shape.level; ++kb) {
      for (std::uint32_t sa = 0; sa < 8; ++sa) {
        double nb = 0.0;
        for (std::uint32_t sb = 0; sb < 8; ++sb) nb += (irrep == 0 || (sa ^ sb) == target) ? hb[kb][sb] : 0.0;
        shape.total += ha[ka][sa] * nb;
      }
    }
  }
  return shape;
}

}  // namespace

std::uint32_t string_irrep(std::uint64_t string, const std::vector<int>& orbsym) {
  std::uint32_t sym = 0;
  while (string != 0) {
    const int p = __builtin_ctzll(string);
    sym ^= static_cast<std::uint32_t>(orbsym[static_cast<std::size_t>(p)] - 1);
    string &= string - 1;
  }
  return sym;
}

DeterminantSpace make_determinant_space(int num_orbitals, int num_alpha, int num_beta, int max_level,
                                        const std::vector<int>& orbsym_in, int irrep, const Determinant& reference,
                                        const SpaceListing listing) {
  const std::string where = "cispmv::make_determinant_space: ";
  if (irrep != 0 && orbsym_in.empty()) throw std::invalid_argument(where + "an irrep restriction needs orbsym");
  const std::vector<int> orbsym =
      orbsym_in.empty() ? std::vector<int>(static_cast<std::size_t>(std::max(0, num_orbitals)), 1) : orbsym_in;
  SpaceShape shape = space_shape(num_orbitals, num_alpha, num_beta, max_level, orbsym, irrep, reference);
  if (listing == SpaceListing::determinants && shape.total > static_cast<double>(std::numeric_limits<int>::max() - 1)) {
    throw std::invalid_argument(where + "the space has " + std::to_string(shape.total) +
                                " determinants, more than int matrix indices allow");
  }

  DeterminantSpace space;
  space.num_orbitals = num_orbitals;
  space.num_alpha = num_alpha;
  space.num_beta = num_beta;
  space.irrep = irrep;
  space.orbsym = orbsym;
  space.reference = reference;
  space.max_level = shape.level;
  space.alpha = std::move(shape.alpha);
  space.beta = std::move(shape.beta);
  const SpinStrings& A = space.alpha;
  const SpinStrings& B = space.beta;
  const int level = space.max_level;
  const std::size_t nkb = static_cast<std::size_t>(B.max_rank()) + 1;
  const std::uint32_t target = irrep == 0 ? 0 : static_cast<std::uint32_t>(irrep - 1);

  // Beta strings per (rank, irrep) and per rank: what one alpha string pairs with in a block.
  const auto hb = histogram(B);
  auto partners = [&](std::size_t kb, std::uint32_t alpha_irrep) {
    if (irrep != 0) return static_cast<std::int64_t>(hb[kb][alpha_irrep ^ target]);
    return static_cast<std::int64_t>(B.rank_offset[kb + 1] - B.rank_offset[kb]);
  };
  // Offsets of each alpha string inside its blocks, and the blocks' sizes.
  space.alpha_block_position.assign(A.size() * nkb, 0);
  std::vector<std::int64_t> block_size(static_cast<std::size_t>(A.max_rank() + 1) * nkb, 0);
  for (int ka = 0; ka <= A.max_rank(); ++ka) {
    for (std::size_t kb = 0; kb < nkb; ++kb) {
      std::int64_t at = 0;
      for (std::size_t ja = A.rank_offset[ka]; ja < A.rank_offset[ka + 1]; ++ja) {
        space.alpha_block_position[ja * nkb + kb] = at;
        at += partners(kb, A.irrep[ja]);
      }
      block_size[static_cast<std::size_t>(ka) * nkb + kb] = at;
    }
  }
  // Blocks in the order of the space: by level, then by alpha rank.
  space.block_start.assign(static_cast<std::size_t>(A.max_rank() + 1) * nkb, -1);
  space.level_offset.assign(static_cast<std::size_t>(level) + 2, 0);
  std::int64_t total = 0;
  for (int l = 0; l <= level; ++l) {
    space.level_offset[static_cast<std::size_t>(l)] = static_cast<std::size_t>(total);
    for (int ka = 0; ka <= std::min(l, A.max_rank()); ++ka) {
      const int kb = l - ka;
      if (kb > B.max_rank()) continue;
      const std::size_t b = static_cast<std::size_t>(ka) * nkb + static_cast<std::size_t>(kb);
      space.block_start[b] = total;
      total += block_size[b];
    }
  }
  space.level_offset[static_cast<std::size_t>(level) + 1] = static_cast<std::size_t>(total);
  space.num_determinants = static_cast<std::size_t>(total);
  if (listing == SpaceListing::strings) return space;

  space.determinants.resize(static_cast<std::size_t>(total));
  space.alpha_id.resize(static_cast<std::size_t>(total));
  space.beta_id.resize(static_cast<std::size_t>(total));
  space.for_each_determinant([&](std::int32_t ja, std::int32_t jb, std::size_t i) {
    space.determinants[i] = {A.strings[static_cast<std::size_t>(ja)], B.strings[static_cast<std::size_t>(jb)]};
    space.alpha_id[i] = ja;
    space.beta_id[i] = jb;
  });
  return space;
}

DeterminantSpace make_determinant_space(int num_orbitals, int num_alpha, int num_beta, int max_level,
                                        const std::vector<int>& orbsym, int irrep) {
  const int n = std::clamp(num_orbitals, 0, max_orbitals);
  return make_determinant_space(num_orbitals, num_alpha, num_beta, max_level, orbsym, irrep,
                                {low_bits(std::clamp(num_alpha, 0, n)), low_bits(std::clamp(num_beta, 0, n))});
}

double count_determinants(int num_orbitals, int num_alpha, int num_beta, int max_level, const std::vector<int>& orbsym,
                          int irrep, const Determinant& reference) {
  const std::vector<int> sym =
      orbsym.empty() ? std::vector<int>(static_cast<std::size_t>(std::max(0, num_orbitals)), 1) : orbsym;
  return space_shape(num_orbitals, num_alpha, num_beta, max_level, sym, irrep, reference).total;
}

namespace {
void check_parity(const FciDump& dump) {
  if ((dump.num_electrons + dump.ms2) % 2 != 0) {
    throw std::invalid_argument("cispmv::make_determinant_space: NELEC = " + std::to_string(dump.num_electrons) +
                                " and MS2 = " + std::to_string(dump.ms2) + " differ in parity");
  }
}
}  // namespace

DeterminantSpace make_determinant_space(const FciDump& dump, int max_level, bool restrict_to_isym,
                                        const Determinant& reference, const SpaceListing listing) {
  check_parity(dump);
  return make_determinant_space(dump.num_orbitals, (dump.num_electrons + dump.ms2) / 2,
                                (dump.num_electrons - dump.ms2) / 2, max_level, dump.orbsym,
                                restrict_to_isym ? dump.isym : 0, reference, listing);
}

DeterminantSpace make_determinant_space(const FciDump& dump, int max_level, bool restrict_to_isym) {
  check_parity(dump);
  return make_determinant_space(dump, max_level, restrict_to_isym,
                                choose_reference(dump, restrict_to_isym).determinant);
}

std::vector<std::size_t> count_determinants_per_level(int num_orbitals, int num_alpha, int num_beta, int max_level) {
  std::vector<std::size_t> counts;
  for (int l = 0; l <= max_level; ++l) {
    double c = 0.0;
    for (int ka = 0; ka <= l; ++ka) {
      const int kb = l - ka;
      c += binomial_count(num_alpha, ka) * binomial_count(num_orbitals - num_alpha, ka) * binomial_count(num_beta, kb) *
           binomial_count(num_orbitals - num_beta, kb);
    }
    counts.push_back(static_cast<std::size_t>(c + 0.5));
  }
  return counts;
}

DeterminantIndex::DeterminantIndex(const std::vector<Determinant>& determinants) : determinants_(&determinants) {
  std::size_t capacity = 16;
  while (capacity < 2 * determinants.size()) capacity *= 2;
  slots_.assign(capacity, -1);
  mask_ = capacity - 1;
  for (std::size_t i = 0; i < determinants.size(); ++i) {
    std::size_t slot = hash(determinants[i]) & mask_;
    while (slots_[slot] >= 0) {
      if (determinants[static_cast<std::size_t>(slots_[slot])] == determinants[i]) {
        throw std::invalid_argument("cispmv::DeterminantIndex: determinant " + std::to_string(i) +
                                    " appears twice in the space");
      }
      slot = (slot + 1) & mask_;
    }
    slots_[slot] = static_cast<std::int32_t>(i);
  }
}

}  // namespace cispmv::ci
