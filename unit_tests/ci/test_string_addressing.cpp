// Strings in increasing value (ci/string_addressing.hpp): their count and order, every string's address, the single
// replacements' targets and signs against operators applied one by one, the dense positions of a space's
// determinants (full and one irrep), and the refusals.
#include <gtest/gtest.h>

#include "cispmv/ci.hpp"

#include <cstdint>
#include <set>
#include <stdexcept>
#include <vector>

TEST(StringAddressing, StringsAreEveryOneInIncreasingValueAtTheirAddress) {
  EXPECT_EQ(cispmv::ci::binomial(64, 32), 1832624140942590534LL);
  EXPECT_EQ(cispmv::ci::binomial(5, 7), 0);
  for (const auto& [n, k] : {std::pair{6, 3}, std::pair{10, 1}, std::pair{9, 0}, std::pair{7, 7}}) {
    const auto strings = cispmv::ci::all_strings(n, k);
    ASSERT_EQ(static_cast<std::int64_t>(strings.size()), cispmv::ci::binomial(n, k));
    std::int64_t brute = 0;  // every k-bit value below 2^n, counted in order
    for (std::uint64_t v = 0; v < (std::uint64_t(1) << n); ++v) {
      if (__builtin_popcountll(v) != k) continue;
      ASSERT_EQ(strings[static_cast<std::size_t>(brute)], v);
      EXPECT_EQ(cispmv::ci::string_address(v), brute);
      ++brute;
    }
  }
  EXPECT_THROW(cispmv::ci::all_strings(65, 2), std::invalid_argument);
  EXPECT_THROW(cispmv::ci::string_links(64, 32), std::invalid_argument);  // beyond 2^31 strings
}

TEST(StringAddressing, ReplacementsAreTheOperatorsAppliedOneByOne) {
  const int n = 7, k = 3;
  const auto strings = cispmv::ci::all_strings(n, k);
  const auto t = cispmv::ci::string_links(n, k);
  ASSERT_EQ(t.per_string, k * (n - k + 1));
  ASSERT_EQ(t.source.size(), strings.size() * static_cast<std::size_t>(t.per_string));
  for (std::size_t K = 0; K < strings.size(); ++K) {
    std::set<int> pairs;
    for (int l = 0; l < t.per_string; ++l) {
      const std::size_t e = K * static_cast<std::size_t>(t.per_string) + static_cast<std::size_t>(l);
      const int r = t.pair[e] / n, s = t.pair[e] % n;
      pairs.insert(t.pair[e]);
      // a+_r a_s on I, creators in increasing order: signs from the occupied orbitals below each
      std::uint64_t I = strings[static_cast<std::size_t>(t.source[e])];
      int sign = 1;
      ASSERT_TRUE(I & (std::uint64_t(1) << s));
      if (__builtin_popcountll(I & ((std::uint64_t(1) << s) - 1)) % 2) sign = -sign;
      I ^= std::uint64_t(1) << s;
      ASSERT_FALSE(I & (std::uint64_t(1) << r));
      if (__builtin_popcountll(I & ((std::uint64_t(1) << r) - 1)) % 2) sign = -sign;
      I ^= std::uint64_t(1) << r;
      EXPECT_EQ(I, strings[K]);
      EXPECT_EQ(sign, t.sign[e]);
    }
    EXPECT_EQ(pairs.size(), static_cast<std::size_t>(t.per_string));  // each (r, s) once
  }
}

TEST(StringAddressing, DensePositionsPlaceEveryDeterminantOnce) {
  const std::vector<int> orbsym{1, 1, 2, 3, 1, 4, 2, 1};
  for (const int irrep : {0, 1, 3}) {
    const auto space = cispmv::ci::make_determinant_space(8, 3, 2, 5, orbsym, irrep);
    const auto position = cispmv::ci::dense_positions(space);
    ASSERT_EQ(position.size(), space.size());
    const auto alpha = cispmv::ci::all_strings(8, 3), beta = cispmv::ci::all_strings(8, 2);
    std::set<std::int64_t> seen;
    space.for_each_determinant([&](std::int32_t ja, std::int32_t jb, std::size_t i) {
      const std::int64_t p = position[i];
      ASSERT_TRUE(seen.insert(p).second);
      EXPECT_EQ(alpha[static_cast<std::size_t>(p / 28)], space.alpha.strings[static_cast<std::size_t>(ja)]);
      EXPECT_EQ(beta[static_cast<std::size_t>(p % 28)], space.beta.strings[static_cast<std::size_t>(jb)]);
    });
    if (irrep == 0) {
      EXPECT_EQ(seen.size(), 56u * 28u);  // the full space: a permutation of the dense array
    }
  }
}
