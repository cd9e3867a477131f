// The determinant space: counts per level and per irrep against binomials, brute force and PySCF's script,
// the index of every determinant, and the reference determinant (aufbau, or on request).
#include <gtest/gtest.h>

#include "ci/ci_fixtures.hpp"
#include "cispmv/ci.hpp"
#include "cispmv/convert.hpp"
#include "cispmv/io.hpp"
#include "cispmv/memory_budget.hpp"
#include "commands.hpp"
#include "test_utils.hpp"

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace {
using cispmv::ci::Determinant;
using cispmv::ci::FciDump;
using namespace cispmv::test;
}  // namespace

TEST(DeterminantSpace, DeterminantCountPerLevelMatchesBinomials) {
  struct Case {
    int norb, na, nb, level;
  };
  for (const Case c :
       {Case{6, 2, 2, 4}, Case{8, 3, 3, 2}, Case{7, 4, 2, 3}, Case{10, 5, 5, 1}, Case{5, 0, 3, 9}, Case{12, 4, 4, 8}}) {
    const auto space = cispmv::ci::make_determinant_space(c.norb, c.na, c.nb, c.level);
    const auto expected = cispmv::ci::count_determinants_per_level(c.norb, c.na, c.nb, space.max_level);
    ASSERT_EQ(space.level_offset.size(), expected.size() + 1);
    for (int l = 0; l <= space.max_level; ++l) {
      EXPECT_EQ(space.level_size(l), expected[l]) << c.norb << " orbitals, level " << l;
      for (std::size_t i = space.level_offset[l]; i < space.level_offset[l + 1]; ++i) {
        ASSERT_EQ(cispmv::ci::excitation_level(space.reference, space.determinants[i]), l);
        ASSERT_EQ(__builtin_popcountll(space.determinants[i].alpha), c.na);
        ASSERT_EQ(__builtin_popcountll(space.determinants[i].beta), c.nb);
      }
    }
    EXPECT_TRUE(space.determinants[0] == space.reference);
    std::set<std::pair<std::uint64_t, std::uint64_t>> unique;
    for (const auto& d : space.determinants) unique.insert({d.alpha, d.beta});
    EXPECT_EQ(unique.size(), space.size());
  }
  // The closed-shell examples of the issue: CIS, CISD, CISDT of 10 electrons in 19 orbitals.
  EXPECT_EQ(cispmv::ci::make_determinant_space(19, 5, 5, 1).size(), 1u + 2u * 5u * 14u);
  EXPECT_EQ(cispmv::ci::make_determinant_space(19, 5, 5, 2).size(), 1u + 140u + 2u * 10u * 91u + 70u * 70u);
  // Full CI: all C(n, na) C(n, nb) determinants.
  EXPECT_EQ(cispmv::ci::make_determinant_space(8, 4, 4, 100).size(), 70u * 70u);
}

TEST(DeterminantSpace, IrrepRestrictedSpaceMatchesBruteForceCount) {
  const std::vector<int> orbsym = {1, 3, 1, 2, 4, 1, 3, 2, 1};
  const int norb = 9, na = 3, nb = 3;
  for (int irrep = 1; irrep <= 4; ++irrep) {
    for (int level = 0; level <= 6; ++level) {
      const auto space = cispmv::ci::make_determinant_space(norb, na, nb, level, orbsym, irrep);
      std::size_t count = 0;
      const Determinant ref{0x7, 0x7};
      for (std::uint64_t a = 0; a < (1u << norb); ++a) {
        if (__builtin_popcountll(a) != na) continue;
        for (std::uint64_t b = 0; b < (1u << norb); ++b) {
          if (__builtin_popcountll(b) != nb) continue;
          const Determinant d{a, b};
          if (cispmv::ci::excitation_level(ref, d) > level) continue;
          if ((cispmv::ci::string_irrep(a, orbsym) ^ cispmv::ci::string_irrep(b, orbsym)) !=
              static_cast<unsigned>(irrep - 1)) {
            continue;
          }
          ++count;
        }
      }
      EXPECT_EQ(space.size(), count) << "irrep " << irrep << " level " << level;
      for (const auto& d : space.determinants) {
        ASSERT_EQ(cispmv::ci::string_irrep(d.alpha, orbsym) ^ cispmv::ci::string_irrep(d.beta, orbsym),
                  static_cast<unsigned>(irrep - 1));
      }
    }
  }
}

TEST(DeterminantSpace, DeterminantCountsMatchThePySCFScript) {
  // make_fcidump_refs.py counts every reference space independently with itertools.
  for (const auto& ref : read_references()) {
    const FciDump d = cispmv::ci::read_fcidump(data_path(ref.fcidump));
    const auto space = cispmv::ci::make_determinant_space(d, ref.level, ref.restrict_to_isym);
    EXPECT_EQ(space.size(), ref.determinants) << ref.name;
  }
}

TEST(DeterminantSpace, DeterminantIndexFindsEveryDeterminantAndNothingElse) {
  const auto space = cispmv::ci::make_determinant_space(10, 4, 4, 3);
  const cispmv::ci::DeterminantIndex index(space.determinants);
  for (std::size_t i = 0; i < space.size(); ++i) ASSERT_EQ(index.find(space.determinants[i]), std::int64_t(i));
  EXPECT_EQ(index.find(Determinant{0xF0, 0xF0}), -1);  // level 4: outside CISDT
}

// The reference: aufbau on the self-consistent Fock diagonal finds the Hartree-Fock determinant of
// PySCF's files in any orbital order, and every level then has PySCF's determinant count.
TEST(DeterminantSpace, ReferenceIsTheAufbauDeterminantInAnyOrbitalOrder) {
  const FciDump h2o = cispmv::ci::read_fcidump(data_path("h2o_631g.fcidump"));
  const auto ref = cispmv::ci::choose_reference(h2o, true);
  EXPECT_TRUE(ref.determinant == (Determinant{0b11111, 0b11111})) << ref.method;
  const auto pitzer_order = cispmv::ci::irrep_blocked_order(h2o);
  cispmv::test::Rng rng(5);
  std::vector<int> random_order(pitzer_order.size());
  for (std::size_t p = 0; p < random_order.size(); ++p) random_order[p] = static_cast<int>(p);
  for (std::size_t p = random_order.size() - 1; p > 0; --p) {
    std::swap(random_order[p], random_order[static_cast<std::size_t>(rng.uniform() * (p + 1)) % (p + 1)]);
  }
  for (const auto& order : {pitzer_order, random_order}) {
    ASSERT_NE(order, cispmv::ci::irrep_blocked_order(FciDump(13, 10)));  // really permuted
    const FciDump permuted = cispmv::ci::permute_orbitals(h2o, order);
    const auto pref = cispmv::ci::choose_reference(permuted, true);
    // the same orbitals, renumbered
    std::uint64_t expected = 0;
    for (std::size_t p = 0; p < order.size(); ++p) {
      if (order[p] < 5) expected |= std::uint64_t{1} << p;
    }
    EXPECT_EQ(pref.determinant.alpha, expected) << pref.method;
    EXPECT_EQ(pref.determinant.beta, expected);
    EXPECT_NEAR(pref.energy, ref.energy, 1e-10);
    for (int level = 1; level <= 4; ++level) {
      for (bool restrict : {false, true}) {
        EXPECT_EQ(cispmv::ci::make_determinant_space(permuted, level, restrict).size(),
                  cispmv::ci::make_determinant_space(h2o, level, restrict).size())
            << "level " << level;
      }
    }
  }
  // the file's orbital energies take precedence; a different order of them moves the reference
  FciDump with_energies = h2o;
  with_energies.orbital_energies.assign(13, 0.0);
  for (int p = 0; p < 13; ++p) with_energies.orbital_energies[static_cast<std::size_t>(p)] = 13 - p;
  const auto reversed = cispmv::ci::choose_reference(with_energies, false);
  EXPECT_EQ(reversed.determinant.alpha, std::uint64_t{0b11111} << 8);
  EXPECT_NE(reversed.method.find("FCIDUMP's orbital energies"), std::string::npos);
}

TEST(DeterminantSpace, ReferenceOnRequestIsCheckedAndHonoursTheIrrep) {
  const FciDump h2o = cispmv::ci::read_fcidump(data_path("h2o_631g.fcidump"));  // ORBSYM 1 1 3 1 2 1 3 3 2 1 1 3 1
  cispmv::ci::ReferenceRequest given;
  given.alpha = cispmv::ci::parse_orbital_list("1-4,6", "--alpha");
  given.beta = cispmv::ci::parse_orbital_list("1-5", "--beta");
  // alpha 5 -> 6 is irrep 2 -> 1: the determinant has irrep 2, not ISYM = 1
  EXPECT_THROW(cispmv::ci::choose_reference(h2o, true, given), std::invalid_argument);
  const auto open = cispmv::ci::choose_reference(h2o, false, given);
  EXPECT_EQ(open.determinant.alpha, 0b101111u);
  EXPECT_EQ(open.method, "given occupied orbitals");
  given.beta = {0, 1, 2, 3};
  try {
    cispmv::ci::choose_reference(h2o, false, given);
    ADD_FAILURE() << "4 beta orbitals accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("5 beta electrons"), std::string::npos) << e.what();
  }
  // DOCC per irrep: 3 a1, 0 a2, 1 b1, 1 b2 (Molpro numbering 1, 2=b1, 3=b2, 4=a2 in C2v; here 1,2,3)
  cispmv::ci::ReferenceRequest docc;
  docc.docc = cispmv::ci::parse_irrep_counts("3,1,1", "--docc");
  const auto by_irrep = cispmv::ci::choose_reference(h2o, true, docc);
  EXPECT_TRUE(by_irrep.determinant == cispmv::ci::choose_reference(h2o, true).determinant);
  EXPECT_NE(cispmv::ci::describe_determinant(by_irrep.determinant, 13, h2o.orbsym).find("DOCC [3,1,1]"),
            std::string::npos);
  docc.docc = {4, 1, 1};  // 12 electrons
  EXPECT_THROW(cispmv::ci::choose_reference(h2o, true, docc), std::invalid_argument);
  for (const char* bad : {"", "1-", "3-1", "1,,2", "0", "65", "a"}) {
    EXPECT_THROW(cispmv::ci::parse_orbital_list(bad, "--alpha"), std::invalid_argument) << bad;
  }
  EXPECT_THROW(cispmv::ci::parse_irrep_counts("1,2,3,4,5,6,7,8,9", "--docc"), std::invalid_argument);
}
