// Strings in increasing value, their addresses and single replacements, and the dense positions of a space's
// determinants (ci/string_addressing.hpp).
#include "cispmv/ci/string_addressing.hpp"

#include <limits>
#include <stdexcept>
#include <string>

namespace cispmv::ci {

std::int64_t binomial(int n, int k) {
  if (k < 0 || n < 0 || k > n) return 0;
  if (n > max_orbitals) throw std::invalid_argument("cispmv::ci::binomial: n = " + std::to_string(n) + " > 64");
  k = std::min(k, n - k);
  // C(n, i) = C(n, i - 1) (n - i + 1) / i, exact at every step; C(64, 32) < 2^63
  unsigned __int128 c = 1;
  for (int i = 1; i <= k; ++i) c = c * static_cast<unsigned>(n - i + 1) / static_cast<unsigned>(i);
  if (c > static_cast<unsigned __int128>(std::numeric_limits<std::int64_t>::max())) {
    throw std::overflow_error("cispmv::ci::binomial: C(" + std::to_string(n) + ", " + std::to_string(k) +
                              ") exceeds 64-bit integers");
  }
  return static_cast<std::int64_t>(c);
}

std::vector<std::uint64_t> all_strings(int n, int k) {
  if (n < 0 || n > max_orbitals || k < 0 || k > n) {
    throw std::invalid_argument("cispmv::ci::all_strings: " + std::to_string(k) + " electrons in " + std::to_string(n) +
                                " orbitals (at most 64)");
  }
  std::vector<std::uint64_t> out;
  out.reserve(static_cast<std::size_t>(binomial(n, k)));
  if (k == 0) return {0};
  std::uint64_t s = (k == 64) ? ~0ull : (1ull << k) - 1;
  const std::uint64_t last = s << (n - k);
  while (true) {
    out.push_back(s);
    if (s == last) break;
    // the next larger value with as many bits set (Gosper's hack)
    const std::uint64_t c = s & (~s + 1);
    const std::uint64_t r = s + c;
    s = (((r ^ s) >> 2) / c) | r;
  }
  return out;
}

namespace {
// C(o, i) for o < 64, i <= 64 (0 beyond int64, where no address reaches: an address is below C(64, k) <= C(64, 32))
struct Binomials {
  std::int64_t c[max_orbitals][max_orbitals + 1] = {};
  Binomials() {
    for (int o = 0; o < max_orbitals; ++o) {
      c[o][0] = 1;
      for (int i = 1; i <= o; ++i) c[o][i] = c[o - 1][i - 1] + (i < o ? c[o - 1][i] : 0);
    }
  }
};
}  // namespace

std::int64_t string_address(std::uint64_t string) {
  static const Binomials b;
  std::int64_t a = 0;
  for (int i = 0; string != 0; ++i) {
    const int o = __builtin_ctzll(string);
    a += b.c[o][i + 1];
    string &= string - 1;
  }
  return a;
}

StringLinks string_links(int n, int k) {
  if (n < 1 || n > max_orbitals || k < 0 || k > n) {
    throw std::invalid_argument("cispmv::ci::string_links: " + std::to_string(k) + " electrons in " +
                                std::to_string(n) + " orbitals (1 to 64)");
  }
  if (binomial(n, k) > std::numeric_limits<std::int32_t>::max()) {
    throw std::invalid_argument("cispmv::ci::string_links: C(" + std::to_string(n) + ", " + std::to_string(k) +
                                ") strings exceed 2^31");
  }
  StringLinks t;
  t.num_orbitals = n;
  t.num_electrons = k;
  const std::vector<std::uint64_t> strings = all_strings(n, k);
  t.num_strings = static_cast<std::int64_t>(strings.size());
  t.per_string = k * (n - k + 1);
  const std::size_t total = strings.size() * static_cast<std::size_t>(t.per_string);
  t.source.reserve(total);
  t.pair.reserve(total);
  t.sign.reserve(total);
  for (const std::uint64_t K : strings) {
    for (int r = 0; r < n; ++r) {
      if (!(K & (1ull << r))) continue;
      for (int s = 0; s < n; ++s) {
        if (s != r && (K & (1ull << s))) continue;
        const std::uint64_t I = (K & ~(1ull << r)) | (1ull << s);
        const int lo = std::min(r, s), hi = std::max(r, s);
        const std::uint64_t between = hi - lo > 1 ? (K >> (lo + 1)) & ((1ull << (hi - lo - 1)) - 1) : 0;
        t.source.push_back(static_cast<std::int32_t>(string_address(I)));
        t.pair.push_back(static_cast<std::int16_t>(r * n + s));
        t.sign.push_back(__builtin_popcountll(between) % 2 ? -1 : 1);
      }
    }
  }
  return t;
}

std::vector<std::int64_t> dense_positions(const DeterminantSpace& space) {
  const std::int64_t nb = binomial(space.num_orbitals, space.num_beta);
  const std::int64_t na = binomial(space.num_orbitals, space.num_alpha);
  if (nb > 0 && na > std::numeric_limits<std::int64_t>::max() / nb) {
    throw std::invalid_argument("cispmv::ci::dense_positions: C(n, alpha) x C(n, beta) exceeds 64-bit indices");
  }
  std::vector<std::int64_t> alpha(space.alpha.size()), beta(space.beta.size());
  for (std::size_t j = 0; j < alpha.size(); ++j) alpha[j] = string_address(space.alpha.strings[j]) * nb;
  for (std::size_t j = 0; j < beta.size(); ++j) beta[j] = string_address(space.beta.strings[j]);
  std::vector<std::int64_t> out(space.size());
  space.for_each_determinant([&](std::int32_t ja, std::int32_t jb, std::size_t i) {
    out[i] = alpha[static_cast<std::size_t>(ja)] + beta[static_cast<std::size_t>(jb)];
  });
  return out;
}

}  // namespace cispmv::ci
