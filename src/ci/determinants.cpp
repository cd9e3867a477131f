// Truncated-CI determinant spaces (CIS, CISD, ..., full CI), ordered by excitation level.
#include "cispmv/ci/determinants.hpp"
#include "cispmv/ci/fcidump.hpp"
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

double binomial(int n, int k) {
  if (k < 0 || k > n) return 0.0;
  double b = 1.0;
  for (int i = 1; i <= k; ++i) b = b * (n - k + i) / i;
  return b;
}

// The occupation strings of one spin with `nel` electrons, grouped by excitation rank from the
// reference string (lowest `nel` orbitals): rank k moves k electrons from the lowest `nel` orbitals
// to the others. Holes outer, particles inner, both in increasing bit order.
std::vector<std::vector<std::uint64_t>> strings_by_rank(int norb, int nel, int max_rank) {
  const std::uint64_t reference = low_bits(nel);
  std::vector<std::vector<std::uint64_t>> out(static_cast<std::size_t>(max_rank) + 1);
  for (int k = 0; k <= max_rank; ++k) {
    const double count = binomial(nel, k) * binomial(norb - nel, k);
    if (count > static_cast<double>(std::numeric_limits<std::int32_t>::max())) {
      throw std::invalid_argument("cispmv::make_determinant_space: " + std::to_string(count) +
                                  " strings of excitation rank " + std::to_string(k) + " is more than supported");
    }
    out[k].reserve(static_cast<std::size_t>(count));
    for_each_combination(nel, k, [&](std::uint64_t holes) {
      for_each_combination(
          norb - nel, k, [&](std::uint64_t particles) { out[k].push_back((reference ^ holes) | (particles << nel)); });
    });
  }
  return out;
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
                                        const std::vector<int>& orbsym, int irrep) {
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
  if (!orbsym.empty() && orbsym.size() != static_cast<std::size_t>(num_orbitals)) {
    throw std::invalid_argument(where + "orbsym has " + std::to_string(orbsym.size()) + " entries for " +
                                std::to_string(num_orbitals) + " orbitals");
  }
  if (irrep != 0 && orbsym.empty()) throw std::invalid_argument(where + "an irrep restriction needs orbsym");

  DeterminantSpace space;
  space.num_orbitals = num_orbitals;
  space.num_alpha = num_alpha;
  space.num_beta = num_beta;
  space.irrep = irrep;
  space.orbsym = orbsym.empty() ? std::vector<int>(static_cast<std::size_t>(num_orbitals), 1) : orbsym;
  for (int s : space.orbsym) {
    if (s < 1 || s > 8) throw std::invalid_argument(where + "orbsym value " + std::to_string(s) + " not in 1..8");
  }
  space.reference = {low_bits(num_alpha), low_bits(num_beta)};
  const int max_rank_alpha = std::min(num_alpha, num_orbitals - num_alpha);
  const int max_rank_beta = std::min(num_beta, num_orbitals - num_beta);
  space.max_level = std::min(max_level, max_rank_alpha + max_rank_beta);
  const int level = space.max_level;

  const auto alpha = strings_by_rank(num_orbitals, num_alpha, std::min(level, max_rank_alpha));
  const auto beta = strings_by_rank(num_orbitals, num_beta, std::min(level, max_rank_beta));

  // Irrep of every string, and per rank a histogram over irreps, to count the space before filling it.
  auto irreps_of = [&](const std::vector<std::vector<std::uint64_t>>& strings) {
    std::vector<std::vector<std::uint32_t>> sym(strings.size());
    std::vector<std::array<double, 8>> hist(strings.size());
    for (std::size_t k = 0; k < strings.size(); ++k) {
      hist[k].fill(0.0);
      sym[k].resize(strings[k].size());
      for (std::size_t s = 0; s < strings[k].size(); ++s) {
        sym[k][s] = string_irrep(strings[k][s], space.orbsym);
        hist[k][sym[k][s]] += 1.0;
      }
    }
    return std::make_pair(sym, hist);
  };
  const auto [alpha_sym, alpha_hist] = irreps_of(alpha);
  const auto [beta_sym, beta_hist] = irreps_of(beta);
  const std::uint32_t target = irrep == 0 ? 0 : static_cast<std::uint32_t>(irrep - 1);

  double total = 0.0;
  for (int l = 0; l <= level; ++l) {
    for (int ka = 0; ka <= l; ++ka) {
      const int kb = l - ka;
      if (ka >= static_cast<int>(alpha.size()) || kb >= static_cast<int>(beta.size())) continue;
      for (std::uint32_t sa = 0; sa < 8; ++sa) {
        if (irrep == 0) {
          double nb = 0.0;
          for (std::uint32_t sb = 0; sb < 8; ++sb) nb += beta_hist[kb][sb];
          total += alpha_hist[ka][sa] * nb;
        } else {
          total += alpha_hist[ka][sa] * beta_hist[kb][sa ^ target];
        }
      }
    }
  }
  if (total > static_cast<double>(std::numeric_limits<int>::max() - 1)) {
    throw std::invalid_argument(where + "the space has " + std::to_string(total) +
                                " determinants, more than int matrix indices allow");
  }

  space.determinants.reserve(static_cast<std::size_t>(total));
  space.level_offset.assign(static_cast<std::size_t>(level) + 2, 0);
  for (int l = 0; l <= level; ++l) {
    space.level_offset[l] = space.determinants.size();
    for (int ka = 0; ka <= l; ++ka) {
      const int kb = l - ka;
      if (ka >= static_cast<int>(alpha.size()) || kb >= static_cast<int>(beta.size())) continue;
      for (std::size_t a = 0; a < alpha[ka].size(); ++a) {
        for (std::size_t b = 0; b < beta[kb].size(); ++b) {
          if (irrep != 0 && (alpha_sym[ka][a] ^ beta_sym[kb][b]) != target) continue;
          space.determinants.push_back({alpha[ka][a], beta[kb][b]});
        }
      }
    }
  }
  space.level_offset[static_cast<std::size_t>(level) + 1] = space.determinants.size();
  return space;
}

DeterminantSpace make_determinant_space(const FciDump& dump, int max_level, bool restrict_to_isym) {
  const int nalpha = (dump.num_electrons + dump.ms2) / 2;
  const int nbeta = (dump.num_electrons - dump.ms2) / 2;
  if ((dump.num_electrons + dump.ms2) % 2 != 0) {
    throw std::invalid_argument("cispmv::make_determinant_space: NELEC = " + std::to_string(dump.num_electrons) +
                                " and MS2 = " + std::to_string(dump.ms2) + " differ in parity");
  }
  return make_determinant_space(dump.num_orbitals, nalpha, nbeta, max_level, dump.orbsym,
                                restrict_to_isym ? dump.isym : 0);
}

std::vector<std::size_t> count_determinants_per_level(int num_orbitals, int num_alpha, int num_beta, int max_level) {
  std::vector<std::size_t> counts;
  for (int l = 0; l <= max_level; ++l) {
    double c = 0.0;
    for (int ka = 0; ka <= l; ++ka) {
      const int kb = l - ka;
      c += binomial(num_alpha, ka) * binomial(num_orbitals - num_alpha, ka) * binomial(num_beta, kb) *
           binomial(num_orbitals - num_beta, kb);
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
