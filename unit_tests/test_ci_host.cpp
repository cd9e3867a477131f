// Host-only tests of the CI pieces: the FCIDUMP reader, the determinant space, the Slater-Condon
// rules against a second-quantised brute force, the dense Jacobi solver and the `ci` command.
#include <gtest/gtest.h>

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

std::string data_path(const std::string& name) { return std::string(CISPMV_TEST_DATA_DIR) + "/" + name; }

// The message of the cispmv::ParseError that parsing `text` throws ("" if none); the error's file
// and line must agree with its message, as for every reader.
std::string parse_error(const std::string& text) {
  std::istringstream in(text);
  try {
    cispmv::ci::parse_fcidump(in, "test.fcidump");
  } catch (const cispmv::ParseError& e) {
    EXPECT_EQ(e.file(), "test.fcidump");
    const std::string where = e.line() > 0 ? "test.fcidump:" + std::to_string(e.line()) + ": " : "test.fcidump: ";
    EXPECT_EQ(std::string(e.what()), where + e.problem());
    return e.what();
  }
  return "";
}

// A model Hamiltonian with random integrals that have the 8-fold permutational symmetry of real
// orbitals; with `orbsym`, integrals that the point group forbids are zero (so that the irrep-
// restricted space is a block of the full one).
FciDump random_model(int norb, int nelec, std::uint64_t seed, const std::vector<int>& orbsym = {}) {
  cispmv::test::Rng rng(seed);
  FciDump d(norb, nelec);
  if (!orbsym.empty()) d.orbsym = orbsym;
  auto sym = [&](int p) { return d.orbsym[p] - 1; };
  for (int p = 0; p < norb; ++p) {
    for (int q = 0; q <= p; ++q) {
      d.set_one(p, q, sym(p) == sym(q) ? rng.uniform() - 0.5 - (p == q ? 2.0 * (norb - p) : 0.0) : 0.0);
    }
  }
  for (int p = 0; p < norb; ++p) {
    for (int q = 0; q <= p; ++q) {
      for (int r = 0; r < norb; ++r) {
        for (int s = 0; s <= r; ++s) {
          const bool allowed = (sym(p) ^ sym(q) ^ sym(r) ^ sym(s)) == 0;
          if (FciDump::pair_index(p, q) >= FciDump::pair_index(r, s)) {
            d.set_two(p, q, r, s, allowed ? 0.5 * (rng.uniform() - 0.5) + (p == q && r == s ? 0.3 : 0.0) : 0.0);
          }
        }
      }
    }
  }
  d.core_energy = rng.uniform();
  return d;
}

// Second-quantised Hamiltonian on the whole Fock space of 2n spin-orbitals (alpha p -> p, beta p ->
// n + p), built by applying creation and annihilation operators one at a time: independent of the
// Slater-Condon code. H[bra][ket] for states as bit masks.
std::map<std::pair<std::uint64_t, std::uint64_t>, double> brute_force_hamiltonian(const FciDump& d) {
  const int n = d.num_orbitals;
  const int ns = 2 * n;
  auto spatial = [&](int p) { return p % n; };
  auto spin = [&](int p) { return p / n; };
  // Applies a_p (create = false) or a+_p to |state>, returning false when the result is zero.
  auto apply = [](std::uint64_t& state, double& sign, int p, bool create) {
    const std::uint64_t b = std::uint64_t{1} << p;
    if (((state & b) != 0) == create) return false;
    if (__builtin_popcountll(state & (b - 1)) & 1) sign = -sign;
    state ^= b;
    return true;
  };
  std::map<std::pair<std::uint64_t, std::uint64_t>, double> H;
  for (std::uint64_t ket = 0; ket < (std::uint64_t{1} << ns); ++ket) {
    for (int p = 0; p < ns; ++p) {
      for (int q = 0; q < ns; ++q) {
        if (spin(p) != spin(q)) continue;
        std::uint64_t s = ket;
        double sign = 1.0;
        if (!apply(s, sign, q, false) || !apply(s, sign, p, true)) continue;
        H[{s, ket}] += sign * d.one(spatial(p), spatial(q));
      }
    }
    // 1/2 sum_pqrs <pq|rs> a+_p a+_q a_s a_r with <pq|rs> = (pr|qs).
    for (int p = 0; p < ns; ++p) {
      for (int q = 0; q < ns; ++q) {
        for (int r = 0; r < ns; ++r) {
          if (spin(p) != spin(r)) continue;
          for (int s = 0; s < ns; ++s) {
            if (spin(q) != spin(s)) continue;
            std::uint64_t st = ket;
            double sign = 1.0;
            if (!apply(st, sign, r, false) || !apply(st, sign, s, false) || !apply(st, sign, q, true) ||
                !apply(st, sign, p, true)) {
              continue;
            }
            H[{st, ket}] += 0.5 * sign * d.two(spatial(p), spatial(r), spatial(q), spatial(s));
          }
        }
      }
    }
  }
  return H;
}

struct Reference {
  std::string name, fcidump, method;
  int level = 0;
  bool restrict_to_isym = false;
  std::size_t determinants = 0;
  std::vector<double> energies;
};

std::vector<Reference> read_references() {
  std::ifstream in(data_path("ci_references.txt"));
  EXPECT_TRUE(in.good()) << "cannot open ci_references.txt";
  std::vector<Reference> refs;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream ls(line);
    Reference r;
    int restrict_flag = 0, nroots = 0;
    ls >> r.name >> r.fcidump >> r.level >> restrict_flag >> r.method >> r.determinants >> nroots;
    r.restrict_to_isym = restrict_flag != 0;
    r.energies.resize(static_cast<std::size_t>(nroots));
    for (double& e : r.energies) ls >> e;
    EXPECT_FALSE(ls.fail()) << "malformed reference line: " << line;
    refs.push_back(r);
  }
  return refs;
}

}  // namespace

// ------------------------------------------------------------------------------------- FCIDUMP
TEST(CiHost, FciDumpParsesMultiLineNamelistInAnyOrder) {
  const std::string text =
      " &FCI\n"
      "  NELEC=2, MS2=0,\n"
      "  ORBSYM=1,\n"
      "   2,1,\n"
      "  NORB=3, ISYM=1, UHF=.FALSE.,\n"
      " /\n"
      "  0.5D+00  1 2 3 1\n"
      "  -1.25E0  2 1 0 0\n"
      "  0.75     3 0 0 0\n"
      "\n"
      "  0.125    0 0 0 0\n";
  std::istringstream in(text);
  const FciDump d = cispmv::ci::parse_fcidump(in, "inline");
  EXPECT_EQ(d.num_orbitals, 3);
  EXPECT_EQ(d.num_electrons, 2);
  EXPECT_EQ(d.ms2, 0);
  EXPECT_EQ(d.isym, 1);
  EXPECT_EQ(d.orbsym, (std::vector<int>{1, 2, 1}));
  EXPECT_EQ(d.core_energy, 0.125);
  // (12|31) = 0.5 in 1-based notation: every one of the 8 permutations (0-based 0 1 2 0).
  for (const auto& idx : std::vector<std::vector<int>>{{0, 1, 2, 0},
                                                       {1, 0, 2, 0},
                                                       {0, 1, 0, 2},
                                                       {1, 0, 0, 2},
                                                       {2, 0, 0, 1},
                                                       {0, 2, 0, 1},
                                                       {2, 0, 1, 0},
                                                       {0, 2, 1, 0}}) {
    EXPECT_EQ(d.two(idx[0], idx[1], idx[2], idx[3]), 0.5);
  }
  EXPECT_EQ(d.two(0, 0, 1, 1), 0.0);  // not in the file: zero
  EXPECT_EQ(d.one(1, 0), -1.25);
  EXPECT_EQ(d.one(0, 1), -1.25);
  EXPECT_EQ(d.one(2, 2), 0.0);  // the orbital energy line is not h
}

TEST(CiHost, FciDumpAcceptsAmpersandEndOnTheHeaderLine) {
  std::istringstream in("&FCI NORB=2,NELEC=2,MS2=0,ORBSYM=1,1,ISYM=1,&END\n 1.0 1 1 1 1\n");
  const FciDump d = cispmv::ci::parse_fcidump(in, "inline");
  EXPECT_EQ(d.num_orbitals, 2);
  EXPECT_EQ(d.two(0, 0, 0, 0), 1.0);
}

TEST(CiHost, FciDumpErrorsNameTheFileTheLineAndWhatWasExpected) {
  const std::string head = " &FCI NORB=2,NELEC=2,MS2=0,\n  ORBSYM=1,1,\n  ISYM=1,\n &END\n";
  std::string e = parse_error(head + " 0.5 1 1 1 1\n 0.25 1 3 0 0\n");
  EXPECT_NE(e.find("test.fcidump:6:"), std::string::npos) << e;
  EXPECT_NE(e.find("outside 1..NORB"), std::string::npos) << e;

  e = parse_error(head + " 0.5 1 1 1\n");
  EXPECT_NE(e.find("test.fcidump:5:"), std::string::npos) << e;
  EXPECT_NE(e.find("value i j k l"), std::string::npos) << e;

  e = parse_error(head + " 0.5 1 1 1 1\n\n abc 1 1 0 0\n");
  EXPECT_NE(e.find("test.fcidump:7:"), std::string::npos) << e;
  EXPECT_NE(e.find("real number"), std::string::npos) << e;

  e = parse_error(head + " 0.5 1 x 1 1\n");
  EXPECT_NE(e.find("test.fcidump:5:"), std::string::npos) << e;

  e = parse_error(head + " 0.5 0 1 1 1\n");
  EXPECT_NE(e.find("test.fcidump:5:"), std::string::npos) << e;
  EXPECT_NE(e.find("expected the indices"), std::string::npos) << e;

  e = parse_error(" &FCI NELEC=2,\n  ORBSYM=1,1,\n /\n");
  EXPECT_NE(e.find("no NORB"), std::string::npos) << e;

  e = parse_error(" &FCI NORB=2,NELEC=2,\n  ORBSYM=1,\n /\n");
  EXPECT_NE(e.find("test.fcidump:2:"), std::string::npos) << e;
  EXPECT_NE(e.find("ORBSYM"), std::string::npos) << e;

  e = parse_error(" &FCI NORB=2,NELEC=2,\n  ORBSYM=0,1,\n /\n");  // PySCF's 0-based ids
  EXPECT_NE(e.find("test.fcidump:2:"), std::string::npos) << e;
  EXPECT_NE(e.find("1..8"), std::string::npos) << e;

  e = parse_error(" &FCI NORB=2,NELEC=2,\n 0.5 1 1 1 1\n");
  EXPECT_NE(e.find("&END"), std::string::npos) << e;

  e = parse_error("0.5 1 1 1 1\n");
  EXPECT_NE(e.find("test.fcidump:1:"), std::string::npos) << e;
  EXPECT_NE(e.find("&FCI"), std::string::npos) << e;

  e = parse_error(" &FCI NORB=65,NELEC=2 /\n");
  EXPECT_NE(e.find("test.fcidump:1:"), std::string::npos) << e;

  e = parse_error(" &FCI NORB=2,NELEC=2,MS2=1 /\n");
  EXPECT_NE(e.find("MS2"), std::string::npos) << e;

  EXPECT_THROW(cispmv::ci::read_fcidump(data_path("no_such_file.fcidump")), std::runtime_error);
}

// Hostile FCIDUMPs (issue 13): every one is refused with its line, none is read silently wrong.
TEST(CiHost, FciDumpRefusesWhatWouldBeReadSilentlyWrong) {
  const std::string head = " &FCI NORB=2,NELEC=2,MS2=0,\n  ORBSYM=1,1,\n  ISYM=1,\n &END\n";
  struct Case {
    std::string text, expect;
  };
  const std::vector<Case> cases = {
      {head + " nan 1 1 1 1\n", "test.fcidump:5: expected a real number"},
      {head + " 0.5 1 1 1 1\n inf 0 0 0 0\n", "test.fcidump:6:"},
      {head + " -Infinity 1 1 0 0\n", "no hexadecimal, inf or nan"},
      {head + " 0x1p3 1 1 1 1\n", "no hexadecimal"},
      {head + " 1e400 1 1 1 1\n", "out of the range of a double"},
      {head + " 0.5 1 1 1 1\n 0.6 1 1 1 1\n", "test.fcidump:6: the two-electron integral given twice"},
      {head + " 0.5 2 1 1 1\n 0.6 1 2 1 1\n", "given twice with different values"},  // (21|11) = (12|11)
      {head + " 0.5 2 1 0 0\n 0.4 1 2 0 0\n", "the one-electron integral given twice"},
      {head + " 9.0 0 0 0 0\n 9.5 0 0 0 0\n", "the core energy (0 0 0 0) given twice"},
      {" &FCI NORB=4294967298,NELEC=2 /\n", "out of range"},
      {" &FCI NORB=2,NELEC=4294967298 /\n", "out of range"},
      {" &FCI NORB=2,NELEC=2,NORB=3 /\n", "NORB is given twice in the &FCI namelist (first on line 1)"},
      {"garbage &FCI NORB=2,NELEC=2 /\n", "text before the '&FCI' namelist header: 'garbage '"},
      {std::string("\x01\x02"
                   "binary\0junk\n",
                   14),
       "got '\\x01\\x02binary\\x00junk'"},
      {std::string(3000, 'x') + "\n", "... (2920 more characters)"},
  };
  for (const auto& c : cases) {
    const std::string e = parse_error(c.text);
    EXPECT_NE(e.find(c.expect), std::string::npos) << "input " << c.text.substr(0, 60) << "\n got: " << e;
  }
  // the same integral twice with the same value (files that list every permutation) is fine
  std::istringstream same(head + " 0.5 2 1 1 1\n 0.5 1 2 1 1\n 0.5 1 1 2 1\n 1.0 0 0 0 0\n");
  const FciDump d = cispmv::ci::parse_fcidump(same, "same.fcidump");
  EXPECT_EQ(d.two(1, 0, 0, 0), 0.5);
  EXPECT_TRUE(d.has_core_energy);
  std::istringstream none(head + " 0.5 1 1 1 1\n");
  EXPECT_FALSE(cispmv::ci::parse_fcidump(none, "none.fcidump").has_core_energy);
  // a directory and a line without end (what /dev/zero is) are refused, fast
  try {
    cispmv::ci::read_fcidump(CISPMV_TEST_DATA_DIR);
    ADD_FAILURE() << "read a directory";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("is a directory"), std::string::npos) << e.what();
  }
  const std::string endless(std::size_t{3} << 20, '\0');
  const std::string e = parse_error(endless);
  EXPECT_NE(e.find("a line longer than 1 MiB"), std::string::npos) << e.substr(0, 200);
}

TEST(CiHost, FciDumpReadsThePySCFFiles) {
  const FciDump h2 = cispmv::ci::read_fcidump(data_path("h2_sto3g.fcidump"));
  EXPECT_EQ(h2.num_orbitals, 2);
  EXPECT_EQ(h2.num_electrons, 2);
  EXPECT_NEAR(h2.core_energy, 1.0 / (0.74 / 0.52917721092), 1e-6);  // nuclear repulsion 1/R
  const FciDump h2o = cispmv::ci::read_fcidump(data_path("h2o_631g.fcidump"));
  EXPECT_EQ(h2o.num_orbitals, 13);
  EXPECT_EQ(h2o.num_electrons, 10);
  EXPECT_EQ(h2o.orbsym.size(), 13u);
  EXPECT_EQ(h2o.orbsym[0], 1);  // O 1s is a1
}

// --------------------------------------------------------------------------- determinant space
TEST(CiHost, DeterminantCountPerLevelMatchesBinomials) {
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

TEST(CiHost, IrrepRestrictedSpaceMatchesBruteForceCount) {
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

TEST(CiHost, DeterminantCountsMatchThePySCFScript) {
  // make_fcidump_refs.py counts every reference space independently with itertools.
  for (const auto& ref : read_references()) {
    const FciDump d = cispmv::ci::read_fcidump(data_path(ref.fcidump));
    const auto space = cispmv::ci::make_determinant_space(d, ref.level, ref.restrict_to_isym);
    EXPECT_EQ(space.size(), ref.determinants) << ref.name;
  }
}

TEST(CiHost, DeterminantIndexFindsEveryDeterminantAndNothingElse) {
  const auto space = cispmv::ci::make_determinant_space(10, 4, 4, 3);
  const cispmv::ci::DeterminantIndex index(space.determinants);
  for (std::size_t i = 0; i < space.size(); ++i) ASSERT_EQ(index.find(space.determinants[i]), std::int64_t(i));
  EXPECT_EQ(index.find(Determinant{0xF0, 0xF0}), -1);  // level 4: outside CISDT
}

// ------------------------------------------------------------------------------ Slater-Condon
TEST(CiHost, ExcitationSignCountsOccupiedOrbitalsBetween) {
  EXPECT_EQ(cispmv::ci::excitation_sign(0b1011, 0, 2), -1.0);  // orbital 1 in between
  EXPECT_EQ(cispmv::ci::excitation_sign(0b1011, 3, 2), 1.0);   // nothing between 2 and 3
  EXPECT_EQ(cispmv::ci::excitation_sign(0b1111, 0, 5), -1.0);  // orbitals 1, 2, 3 in between
  EXPECT_EQ(cispmv::ci::excitation_sign(0b10111, 4, 0), 1.0);  // orbitals 1, 2 in between (symmetric in i, a)
}

TEST(CiHost, SlaterCondonMatchesSecondQuantisedBruteForce) {
  // 5 orbitals, 10 spin-orbitals, every electron-count sector with at least 2 electrons of some spin.
  const FciDump ints = random_model(5, 4, 1234);
  const auto bf = brute_force_hamiltonian(ints);
  const cispmv::ci::SlaterCondon sc(ints);
  auto brute = [&](const Determinant& bra, const Determinant& ket) {
    const auto it = bf.find({bra.alpha | (bra.beta << 5), ket.alpha | (ket.beta << 5)});
    return it == bf.end() ? 0.0 : it->second;
  };
  int compared = 0;
  for (const auto& [na, nb] :
       std::vector<std::pair<int, int>>{{2, 2}, {3, 1}, {1, 3}, {3, 2}, {4, 1}, {2, 0}, {3, 3}}) {
    const auto space = cispmv::ci::make_determinant_space(5, na, nb, 100);
    const auto H = cispmv::ci::build_hamiltonian(ints, space, 0.0);
    cispmv::validate(H);
    std::vector<double> dense(space.size() * space.size(), 0.0);
    for (std::size_t r = 0; r < space.size(); ++r) {
      for (std::size_t k = H.row_ptr(r); k < H.row_ptr(r + 1); ++k)
        dense[r * space.size() + H.col_idx(k)] = H.values(k);
    }
    for (std::size_t i = 0; i < space.size(); ++i) {
      for (std::size_t j = 0; j < space.size(); ++j) {
        const double expected = brute(space.determinants[i], space.determinants[j]);
        ASSERT_NEAR(sc.element(space.determinants[i], space.determinants[j]), expected, 1e-12)
            << "na " << na << " nb " << nb << " element " << i << "," << j;
        ASSERT_NEAR(dense[i * space.size() + j], expected, 1e-12)
            << "CSR, na " << na << " nb " << nb << " element " << i << "," << j;
        ++compared;
      }
    }
  }
  EXPECT_GT(compared, 10000);
}

TEST(CiHost, TruncatedAndSymmetryRestrictedMatricesAreBlocksOfTheBruteForce) {
  const std::vector<int> orbsym = {1, 2, 1, 3, 4, 1};
  const FciDump ints = random_model(6, 6, 99, orbsym);
  const auto bf = brute_force_hamiltonian(ints);
  for (int irrep = 0; irrep <= 4; ++irrep) {
    for (int level = 1; level <= 3; ++level) {
      const auto space = cispmv::ci::make_determinant_space(6, 3, 3, level, orbsym, irrep);
      const auto H = cispmv::ci::build_hamiltonian(ints, space, 0.0);
      cispmv::validate(H);
      std::size_t nonzero_expected = 0;
      for (std::size_t i = 0; i < space.size(); ++i) {
        std::map<int, double> row;
        for (std::size_t k = H.row_ptr(i); k < H.row_ptr(i + 1); ++k) row[H.col_idx(k)] = H.values(k);
        for (std::size_t j = 0; j < space.size(); ++j) {
          const auto& a = space.determinants[i];
          const auto& b = space.determinants[j];
          const auto it = bf.find({a.alpha | (a.beta << 6), b.alpha | (b.beta << 6)});
          const double expected = it == bf.end() ? 0.0 : it->second;
          const auto got = row.find(static_cast<int>(j));
          ASSERT_NEAR(got == row.end() ? 0.0 : got->second, expected, 1e-12)
              << "irrep " << irrep << " level " << level << " element " << i << "," << j;
          nonzero_expected += std::abs(expected) > 1e-12;
        }
      }
      EXPECT_LE(nonzero_expected, H.nnz());
    }
  }
}

// The string-driven builder against the brute force for references other than the lowest orbitals,
// with integrals that obey ORBSYM (symmetry-forbidden elements skipped) and with one that breaks it
// (every element computed), in restricted and unrestricted spaces; index_of inverts the space.
TEST(CiHost, BuilderMatchesBruteForceForAnyReferenceWithAndWithoutSymmetricIntegrals) {
  const std::vector<int> orbsym = {2, 1, 3, 1, 4, 1};
  for (const bool broken : {false, true}) {
    FciDump ints = random_model(6, 6, 7, orbsym);
    if (broken) ints.set_two(0, 1, 2, 2, 0.05);  // irreps 2 x 1 x 3 x 3: not totally symmetric
    const auto bf = brute_force_hamiltonian(ints);
    const Determinant references[] = {{0b000111, 0b000111}, {0b101010, 0b010101}, {0b110001, 0b100011}};
    for (const Determinant& ref : references) {
      for (int irrep : {0, 1, 2}) {
        for (int level = 1; level <= 4; ++level) {
          if (irrep != 0) {  // the reference must be in the space
            const auto sym = cispmv::ci::string_irrep(ref.alpha, orbsym) ^ cispmv::ci::string_irrep(ref.beta, orbsym);
            if (static_cast<int>(sym) != irrep - 1) continue;
          }
          const auto space = cispmv::ci::make_determinant_space(6, 3, 3, level, orbsym, irrep, ref);
          ASSERT_TRUE(space.determinants[0] == ref);
          for (std::size_t i = 0; i < space.size(); ++i) {
            ASSERT_EQ(space.index_of(space.alpha_id[i], space.beta_id[i]), static_cast<std::int64_t>(i));
            ASSERT_LE(cispmv::ci::excitation_level(ref, space.determinants[i]), space.max_level);
          }
          // every pair of strings outside the space has no index
          std::size_t inside = 0;
          for (std::size_t ja = 0; ja < space.alpha.size(); ++ja) {
            for (std::size_t jb = 0; jb < space.beta.size(); ++jb) {
              inside += space.index_of(static_cast<std::int32_t>(ja), static_cast<std::int32_t>(jb)) >= 0;
            }
          }
          ASSERT_EQ(inside, space.size());
          const auto H = cispmv::ci::build_hamiltonian(ints, space, 0.0);
          cispmv::validate(H);
          for (std::size_t i = 0; i < space.size(); ++i) {
            std::map<int, double> row;
            for (std::size_t k = H.row_ptr(i); k < H.row_ptr(i + 1); ++k) {
              if (k > H.row_ptr(i)) {
                ASSERT_LT(H.col_idx(k - 1), H.col_idx(k)) << "row " << i << " not sorted";
              }
              row[H.col_idx(k)] = H.values(k);
            }
            for (std::size_t j = 0; j < space.size(); ++j) {
              const auto& a = space.determinants[i];
              const auto& b = space.determinants[j];
              const auto it = bf.find({a.alpha | (a.beta << 6), b.alpha | (b.beta << 6)});
              const double expected = it == bf.end() ? 0.0 : it->second;
              const auto got = row.find(static_cast<int>(j));
              ASSERT_NEAR(got == row.end() ? 0.0 : got->second, expected, 1e-12)
                  << "broken " << broken << " irrep " << irrep << " level " << level << " element " << i << "," << j;
            }
          }
        }
      }
    }
  }
}

// The reference: aufbau on the self-consistent Fock diagonal finds the Hartree-Fock determinant of
// PySCF's files in any orbital order, and every level then has PySCF's determinant count.
TEST(CiHost, ReferenceIsTheAufbauDeterminantInAnyOrbitalOrder) {
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

TEST(CiHost, ReferenceOnRequestIsCheckedAndHonoursTheIrrep) {
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

TEST(CiHost, HamiltonianIsExactlySymmetricWithSortedRowsAndStoredDiagonal) {
  const FciDump d = cispmv::ci::read_fcidump(data_path("h2o_631g.fcidump"));
  const auto space = cispmv::ci::make_determinant_space(d, 2, false);
  const auto H = cispmv::ci::build_hamiltonian(d, space);
  cispmv::validate(H);
  std::map<std::pair<int, int>, double> entries;
  for (int r = 0; r < H.num_rows; ++r) {
    bool has_diagonal = false;
    for (std::size_t k = H.row_ptr(r); k < H.row_ptr(r + 1); ++k) {
      if (k > H.row_ptr(r)) {
        ASSERT_LT(H.col_idx(k - 1), H.col_idx(k));
      }
      has_diagonal |= H.col_idx(k) == r;
      if (H.col_idx(k) != r) {
        ASSERT_GE(std::abs(H.values(k)), 1e-14);
      }
      entries[{r, H.col_idx(k)}] = H.values(k);
    }
    ASSERT_TRUE(has_diagonal) << "row " << r;
  }
  for (const auto& [rc, v] : entries) {
    const auto it = entries.find({rc.second, rc.first});
    ASSERT_TRUE(it != entries.end());
    ASSERT_EQ(it->second, v);  // bit for bit: write_matrix_market(symmetric) relies on it
  }
  // <HF|H|HF> + core energy is the RHF energy; singles do not couple to HF (Brillouin).
  const cispmv::ci::SlaterCondon sc(d);
  for (std::size_t i = space.level_offset[1]; i < space.level_offset[2]; ++i) {
    EXPECT_NEAR(sc.element(space.determinants[i], space.reference), 0.0, 1e-7);
  }
}

TEST(CiHost, HamiltonianBuildIsDeterministic) {
  const FciDump d = cispmv::ci::read_fcidump(data_path("lih_sto3g.fcidump"));
  const auto space = cispmv::ci::make_determinant_space(d, 4, false);
  const auto A = cispmv::ci::build_hamiltonian(d, space);
  const auto B = cispmv::ci::build_hamiltonian(d, space);
  ASSERT_EQ(A.nnz(), B.nnz());
  for (std::size_t k = 0; k < A.nnz(); ++k) {
    ASSERT_EQ(A.col_idx(k), B.col_idx(k));
    ASSERT_EQ(A.values(k), B.values(k));
  }
}

// ------------------------------------------------------------------------------------- Jacobi
namespace {
// The pairs of a dense symmetric eigensolver: ascending, A v = lambda v, orthonormal vectors.
void expect_eigenpairs(const std::vector<double>& a, int n, const cispmv::solvers::SymmetricEigen& eig) {
  ASSERT_EQ(eig.values.size(), static_cast<std::size_t>(n));
  ASSERT_EQ(eig.vectors.size(), static_cast<std::size_t>(n) * n);
  for (int k = 0; k < n; ++k) {
    if (k > 0) {
      EXPECT_LE(eig.values[k - 1], eig.values[k]);
    }
    for (int i = 0; i < n; ++i) {
      double av = 0.0;
      for (int j = 0; j < n; ++j) av += a[i * n + j] * eig.vectors[k * n + j];
      EXPECT_NEAR(av, eig.values[k] * eig.vectors[k * n + i], 1e-13) << "pair " << k << ", row " << i;
    }
    for (int l = 0; l < n; ++l) {
      double dot = 0.0;
      for (int i = 0; i < n; ++i) dot += eig.vectors[k * n + i] * eig.vectors[l * n + i];
      EXPECT_NEAR(dot, k == l ? 1.0 : 0.0, 1e-13) << "pairs " << k << ", " << l;
    }
  }
}
}  // namespace

TEST(CiHost, JacobiEigenpairsSatisfyTheEigenEquation) {
  cispmv::test::Rng rng(7);
  for (int n : {1, 2, 5, 30}) {
    std::vector<double> a(static_cast<std::size_t>(n) * n);
    for (int i = 0; i < n; ++i) {
      for (int j = 0; j <= i; ++j) a[i * n + j] = a[j * n + i] = rng.uniform() - 0.5;
    }
    const auto eig = cispmv::solvers::jacobi_eigen(a, n);
    expect_eigenpairs(a, n, eig);
    double trace = 0.0, sum = 0.0;
    for (int i = 0; i < n; ++i) trace += a[i * n + i];
    for (int k = 0; k < n; ++k) sum += eig.values[k];
    EXPECT_NEAR(trace, sum, 1e-12);
  }
  // Degenerate spectrum: diag(1, 1, 2) rotated.
  const double c = std::cos(0.3), s = std::sin(0.3);
  const std::vector<double> a = {
      c * c + 2 * s * s, c * s - 2 * s * c, 0, c * s - 2 * s * c, s * s + 2 * c * c, 0, 0, 0, 1};
  const auto eig = cispmv::solvers::jacobi_eigen(a, 3);
  EXPECT_NEAR(eig.values[0], 1.0, 1e-15);
  EXPECT_NEAR(eig.values[1], 1.0, 1e-15);
  EXPECT_NEAR(eig.values[2], 2.0, 1e-15);
  EXPECT_THROW(cispmv::solvers::jacobi_eigen({1.0, 2.0}, 2), std::invalid_argument);
}

// Blocks that no entry couples are solved alone: the same spectrum as the whole matrix, every
// eigenvector exactly zero outside its block; an entry between two blocks (or a row without a block)
// takes the whole-matrix solve, whose vectors then mix the blocks.
TEST(CiHost, BlockwiseEigenSolvesUncoupledBlocksAlone) {
  cispmv::test::Rng rng(11);
  const int n = 9;
  const std::vector<int> block = {2, 0, 1, 0, 2, 2, 1, 0, 2};  // interleaved, as a Davidson basis is
  std::vector<double> a(static_cast<std::size_t>(n) * n, 0.0);
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j <= i; ++j) {
      if (block[i] == block[j]) a[i * n + j] = a[j * n + i] = rng.uniform() - 0.5 + (i == j ? block[i] : 0.0);
    }
  }
  const auto whole = cispmv::solvers::jacobi_eigen(a, n);
  const auto parts = cispmv::solvers::blockwise_eigen(a, n, block);
  expect_eigenpairs(a, n, parts);
  for (int k = 0; k < n; ++k) {
    EXPECT_NEAR(parts.values[k], whole.values[k], 1e-14) << "pair " << k;
    int owner = 0;  // the row of the pair's largest component
    for (int i = 1; i < n; ++i) {
      if (std::abs(parts.vectors[k * n + i]) > std::abs(parts.vectors[k * n + owner])) owner = i;
    }
    for (int i = 0; i < n; ++i) {
      if (block[i] != block[owner]) {
        EXPECT_EQ(parts.vectors[k * n + i], 0.0) << "pair " << k << ", row " << i;
      }
    }
  }
  // one entry between blocks 0 and 1 (rows 1 and 2): solved whole, the same pairs as jacobi_eigen
  std::vector<double> coupled = a;
  coupled[1 * n + 2] = coupled[2 * n + 1] = 0.25;
  const auto c_whole = cispmv::solvers::jacobi_eigen(coupled, n);
  const auto c_parts = cispmv::solvers::blockwise_eigen(coupled, n, block);
  EXPECT_EQ(c_parts.values, c_whole.values);
  EXPECT_EQ(c_parts.vectors, c_whole.vectors);
  std::vector<int> unlabelled = block;
  unlabelled[4] = -1;
  EXPECT_EQ(cispmv::solvers::blockwise_eigen(a, n, unlabelled).vectors, whole.vectors);
  EXPECT_THROW(cispmv::solvers::blockwise_eigen(a, n, std::vector<int>(n - 1, 0)), std::invalid_argument);
  EXPECT_THROW(cispmv::solvers::blockwise_eigen({1.0, 2.0}, 2, {0, 0}), std::invalid_argument);
}

// The tile kernel's product W = A B (8 columns), in portable C++ and, where the CPU has it, in AVX-512,
// against the sums written out, for row counts around its groups of 4.
TEST(CiHost, FactoredTileIsTheProduct) {
  cispmv::test::Rng rng(11);
  for (const int rows : {1, 3, 4, 7, 41, 64}) {
    for (const int k : {8, 24}) {
      std::vector<double> A(static_cast<std::size_t>(rows) * k), B(8 * static_cast<std::size_t>(k)), want(8 * rows);
      for (double& v : A) v = rng.uniform() - 0.5;
      for (double& v : B) v = rng.uniform() - 0.5;
      for (int r = 0; r < rows; ++r) {
        for (int j = 0; j < 8; ++j) {
          double s = 0.0;
          for (int c = 0; c < k; ++c) s += A[r * k + c] * B[8 * c + j];
          want[8 * r + j] = s;
        }
      }
      std::vector<double> W(8 * rows, std::numeric_limits<double>::quiet_NaN());
      cispmv::impl::factored_tile(A.data(), rows, k, B.data(), W.data());
      for (int i = 0; i < 8 * rows; ++i) ASSERT_NEAR(W[i], want[i], 1e-14) << "portable, rows " << rows << " k " << k;
#if CISPMV_HOST_SIMD
      if (cispmv::impl::host_simd::avx512_available()) {
        std::fill(W.begin(), W.end(), std::numeric_limits<double>::quiet_NaN());
        cispmv::impl::host_simd::factored_tile_avx512(A.data(), rows, k, B.data(), W.data());
        for (int i = 0; i < 8 * rows; ++i) ASSERT_NEAR(W[i], want[i], 1e-14) << "AVX-512, rows " << rows << " k " << k;
      }
#endif
    }
  }
}

// ------------------------------------------------------------------------------- the command
TEST(CiHost, CiCommandPrintsCountsStatisticsAndEnergies) {
  cispmv::app::CiCommandOptions opts;
  opts.fcidump = data_path("h2_sto3g.fcidump");
  opts.level = 2;
  opts.roots = 2;
  std::ostringstream out;
  EXPECT_EQ(cispmv::app::ci_command(opts, out), 0);
  const std::string text = out.str();
  EXPECT_NE(text.find("determinants: 4"), std::string::npos) << text;
  EXPECT_NE(text.find("full CI"), std::string::npos) << text;
  EXPECT_NE(text.find("-1.1372838345"), std::string::npos) << text;  // PySCF: -1.137283834489
  EXPECT_NE(text.find("-0.5307733570"), std::string::npos) << text;  // PySCF: -0.530773357001
  EXPECT_NE(text.find("spmv"), std::string::npos) << text;

  // every irrep (H2O/6-31G CISD, C2v): each irrep is searched (DavidsonOptions::row_blocks), and the
  // ground state is PySCF's (ci_references.txt, h2o_631g_cisd)
  {
    cispmv::app::CiCommandOptions all = opts;
    all.fcidump = data_path("h2o_631g.fcidump");
    all.level = 2;
    all.roots = 1;
    all.restrict_to_isym = false;
    std::ostringstream out1;
    EXPECT_EQ(cispmv::app::ci_command(all, out1), 0);
    const std::string t = out1.str();
    EXPECT_NE(t.find("determinants: 2241"), std::string::npos) << t;
    EXPECT_NE(t.find("irreps: 4, each searched; in 4 the next root lies above"), std::string::npos) << t;
    EXPECT_NE(t.find("-76.1140864984"), std::string::npos) << t;  // PySCF: -76.114086498352

    // the same integrals under an ORBSYM they break (orbitals 3 and 4, of irreps 3 and 1, swapped):
    // the irreps are coupled, so they are no blocks and the Davidson searches the space as one
    const FciDump h2o = cispmv::ci::read_fcidump(all.fcidump);
    const auto space = cispmv::ci::make_determinant_space(h2o, 2, false);
    EXPECT_TRUE(cispmv::ci::irreps_uncoupled(h2o, space));
    FciDump broken = h2o;
    std::swap(broken.orbsym[2], broken.orbsym[3]);
    const auto broken_space = cispmv::ci::make_determinant_space(broken, 2, false);
    EXPECT_FALSE(cispmv::ci::irreps_uncoupled(broken, broken_space));
    std::ifstream in(all.fcidump);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const std::string orbsym = "ORBSYM=1,1,3,1,2,1,3,3,2,1,1,3,1";
    ASSERT_NE(text.find(orbsym), std::string::npos);
    text.replace(text.find(orbsym), orbsym.size(), "ORBSYM=1,1,1,3,2,1,3,3,2,1,1,3,1");
    const std::string path = ::testing::TempDir() + "cispmv_h2o_broken_orbsym.fcidump";
    std::ofstream(path) << text;
    all.fcidump = path;
    std::ostringstream outb;
    EXPECT_EQ(cispmv::app::ci_command(all, outb), 0);
    const std::string tb = outb.str();
    EXPECT_NE(tb.find("the integrals break ORBSYM"), std::string::npos) << tb;
    EXPECT_EQ(tb.find("irreps: 4"), std::string::npos) << tb;
    EXPECT_NE(tb.find("-76.1140864984"), std::string::npos) << tb;
  }

  // --write-mtx: a symmetric Matrix Market file that reads back as the same matrix.
  const std::string mtx = ::testing::TempDir() + "cispmv_ci_lih.mtx";
  opts.fcidump = data_path("lih_sto3g.fcidump");
  opts.level = 4;
  opts.roots = 1;
  opts.write_mtx = mtx;
  opts.format = "hybrid";
  std::ostringstream out2;
  EXPECT_EQ(cispmv::app::ci_command(opts, out2), 0);
  EXPECT_NE(out2.str().find("-7.8823243789"), std::string::npos) << out2.str();  // PySCF: -7.882324378884
  EXPECT_NE(out2.str().find("format hybrid"), std::string::npos) << out2.str();
  const auto back = cispmv::read_matrix_market(mtx);
  const FciDump lih = cispmv::ci::read_fcidump(opts.fcidump);
  const auto H = cispmv::ci::build_hamiltonian(lih, cispmv::ci::make_determinant_space(lih, 4, true));
  ASSERT_EQ(back.nnz(), H.nnz());
  for (std::size_t k = 0; k < H.nnz(); ++k) {
    ASSERT_EQ(back.col_idx(k), H.col_idx(k));
    ASSERT_EQ(back.values(k), H.values(k));
  }
  std::remove(mtx.c_str());
  opts.write_mtx.clear();

  opts.format = "no-such-format";
  EXPECT_THROW(cispmv::app::ci_command(opts, out), std::invalid_argument);
  opts.format = "csr";
  opts.roots = 226;  // LiH full CI has 225 determinants
  EXPECT_THROW(cispmv::app::ci_command(opts, out), std::invalid_argument);
}

TEST(CiHost, CiCommandRefusesWhatDoesNotFitAtOnce) {
  // the message of the MemoryBudgetError that ci_command throws (a test failure if it runs)
  auto refusal = [](const cispmv::app::CiCommandOptions& o, std::ostringstream& out) -> std::string {
    try {
      cispmv::app::ci_command(o, out);
      ADD_FAILURE() << "no refusal";
    } catch (const cispmv::MemoryBudgetError& e) {
      return e.what();
    }
    return {};
  };
  cispmv::app::CiCommandOptions opts;
  opts.fcidump = data_path("h2o_631gd.fcidump");  // 19 orbitals: full CI has 135M determinants
  opts.level = 10;
  opts.restrict_to_isym = false;
  opts.max_memory = "100M";
  std::ostringstream out;
  const auto start = std::chrono::steady_clock::now();
  std::string msg = refusal(opts, out);
  EXPECT_NE(msg.find("not enough host memory"), std::string::npos) << msg;
  EXPECT_NE(msg.find("determinants"), std::string::npos) << msg;
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 5.0);
  // the space (3.2 GB) would fit 8 GB, its matrix (~3 TB) not by far: refused before the space is built
  opts.max_memory = "8G";
  std::ostringstream early;
  msg = refusal(opts, early);
  EXPECT_NE(msg.find("estimated before building the space"), std::string::npos) << msg;
  EXPECT_NE(msg.find("TB"), std::string::npos) << msg;
  EXPECT_EQ(early.str().find("determinants: "), std::string::npos) << "the space was built: " << early.str();
  // the space fits, the matrix (1.2 GB) does not: refused after the estimate, before the build
  opts.fcidump = data_path("h2o_631g_fc.fcidump");
  opts.max_memory = "200M";
  msg = refusal(opts, out);
  EXPECT_NE(msg.find("matrix"), std::string::npos) << msg;
  EXPECT_NE(msg.find("What would fit"), std::string::npos) << msg;
  EXPECT_NE(msg.find("--all-irreps"), std::string::npos) << msg;
  EXPECT_EQ(out.str().find("hamiltonian count pass"), std::string::npos) << "building started: " << out.str();
}

// Rows of the Hamiltonian as csell built in blocks of rows: the same rows, diagonal and columns as the
// CSR builder's, for the whole width and for a column window. Blocks of 320 rows: 10 over the 3,051
// rows, the last one short (every block builds the strings' excitation lists again: at 96 rows the test
// took 39 s in CI's sanitized -O0 build, 16 s at 320).
TEST(CiHost, HamiltonianCsellBuiltInBlocksHoldsTheBuildersRows) {
  using Exec = Kokkos::DefaultHostExecutionSpace;
  using Keep = cispmv::ci::HamiltonianOptions::ColumnWindow::Keep;
  const auto dump = cispmv::ci::read_fcidump(data_path("h2o_631g_fc.fcidump"));
  const auto reference = cispmv::ci::choose_reference(dump, true, {});
  const auto space = cispmv::ci::make_determinant_space(dump, 3, true, reference.determinant);
  const std::int64_t first = 100, end = static_cast<std::int64_t>(space.size()) - 50;
  for (const Keep keep : {Keep::all, Keep::inside, Keep::outside}) {
    SCOPED_TRACE(keep == Keep::all ? "all columns" : keep == Keep::inside ? "inside" : "outside");
    cispmv::ci::HamiltonianOptions o;
    o.columns.keep = keep;
    o.columns.first = first;
    o.columns.end = end;
    Kokkos::View<double*, Kokkos::HostSpace> diagonal("diagonal", static_cast<std::size_t>(end - first));
    int blocks = 0;
    const auto C = cispmv::ci::build_hamiltonian_csell(Exec(), dump, space, first, end, 320, o, diagonal,
                                                       [&](const cispmv::HostCsr&) { ++blocks; });
    EXPECT_GT(blocks, 2 * ((end - first) / 320));  // each block counted and filled, and samples
    const cispmv::HostCsr want = cispmv::ci::build_hamiltonian_rows(Exec(), dump, space, first, end, o);
    const cispmv::HostCsr got = cispmv::to_csr(C);
    ASSERT_EQ(got.num_cols, want.num_cols);
    ASSERT_EQ(got.nnz(), want.nnz());
    for (int r = 0; r <= want.num_rows; ++r) ASSERT_EQ(got.row_ptr(r), want.row_ptr(r));
    for (std::size_t k = 0; k < want.nnz(); ++k) {
      ASSERT_EQ(got.col_idx(k), want.col_idx(k));
      ASSERT_EQ(got.values(k), want.values(k));
    }
    const auto d = cispmv::ci::csr_diagonal(Exec(), want, keep == Keep::inside ? 0 : first);
    for (std::size_t i = 0; i < d.extent(0); ++i) ASSERT_EQ(diagonal(i), d(i)) << i;
  }
}

// A matrix whose CSR does not fit beside its csell, though its csell does: built as csell in blocks
// of rows (never a whole CSR), with the same energy.
TEST(CiHost, CiCommandBuildsCsellInBlocksWhenItsCsrDoesNotFit) {
  cispmv::app::CiCommandOptions opts;
  opts.fcidump = data_path("h2o_631g_fc.fcidump");  // A1 full CI: 61,441 determinants, ~300 MB of CSR
  opts.level = 8;
  opts.roots = 6;  // (up to 5 roots --format auto takes the factored Hamiltonian for full CI)
  opts.max_memory = "320M";
  std::ostringstream out;
  ASSERT_EQ(cispmv::app::ci_command(opts, out), 0) << out.str();
  const std::string text = out.str();
  EXPECT_NE(text.find("csell is built in blocks of"), std::string::npos) << text;
  EXPECT_NE(text.find("as csell in blocks of rows"), std::string::npos) << text;
  EXPECT_EQ(text.find("hamiltonian count pass"), std::string::npos) << "a whole CSR was built: " << text;
  EXPECT_NE(text.find("-76.1199551879"), std::string::npos) << text;  // PySCF: -76.119955187921
  // with the memory for both, the usual way
  opts.max_memory = "8G";
  std::ostringstream whole;
  ASSERT_EQ(cispmv::app::ci_command(opts, whole), 0);
  EXPECT_EQ(whole.str().find("in blocks of"), std::string::npos) << whole.str();
  // csell asked for explicitly under the same budget; other formats are still refused
  opts.max_memory = "320M";
  opts.format = "csell";
  std::ostringstream asked;
  ASSERT_EQ(cispmv::app::ci_command(opts, asked), 0);
  EXPECT_NE(asked.str().find("in blocks of"), std::string::npos) << asked.str();
  opts.format = "sell";
  std::ostringstream refused;
  EXPECT_THROW(cispmv::app::ci_command(opts, refused), cispmv::MemoryBudgetError);
}

// A matrix that does not fit at all, though the Davidson's vectors do: --format auto takes the factored
// Hamiltonian (never assembled) and finds PySCF's energy; where the vectors do not fit either, the
// refusal before the space is built stands; --format factored refuses --write-mtx.
TEST(CiHost, CiCommandTakesTheFactoredHamiltonianWhereTheMatrixDoesNotFit) {
  cispmv::app::CiCommandOptions opts;
  opts.fcidump = data_path("h2o_631g_fc.fcidump");  // A1 full CI: 61,441 determinants, ~300 MB of CSR
  opts.level = 8;
  opts.max_memory = "100M";  // the vectors: ~30 MB
  opts.json = "-";
  std::ostringstream out;
  ASSERT_EQ(cispmv::app::ci_command(opts, out), 0) << out.str();
  std::string text = out.str();
  EXPECT_NE(text.find("\"assembled\": false"), std::string::npos) << text;
  EXPECT_NE(text.find("-76.11995518"), std::string::npos) << text;  // PySCF: -76.119955187921
  opts.json.clear();
  std::ostringstream report;
  ASSERT_EQ(cispmv::app::ci_command(opts, report), 0);
  text = report.str();
  EXPECT_NE(text.find("the factored Hamiltonian, never assembled"), std::string::npos) << text;
  EXPECT_EQ(text.find("hamiltonian count pass"), std::string::npos) << "the matrix was built: " << text;
  // the vectors do not fit either: refused before the space is built
  opts.max_memory = "20M";
  std::ostringstream refused;
  EXPECT_THROW(cispmv::app::ci_command(opts, refused), cispmv::MemoryBudgetError);
  EXPECT_EQ(refused.str().find("determinants: "), std::string::npos) << refused.str();
  // asked for by name, with a file for the matrix it never builds
  opts.max_memory.clear();
  opts.format = "factored";
  opts.write_mtx = "never-written.mtx";
  std::ostringstream bad;
  EXPECT_THROW(cispmv::app::ci_command(opts, bad), std::invalid_argument);
}

TEST(CiHost, CiCommandWritesJsonAndHonoursTheRequestedReference) {
  cispmv::app::CiCommandOptions opts;
  opts.fcidump = data_path("h2o_631g_pitzer.fcidump");
  opts.level = 2;
  opts.json = "-";
  std::ostringstream out;
  ASSERT_EQ(cispmv::app::ci_command(opts, out), 0);
  const std::string text = out.str();
  ASSERT_EQ(text.find("cispmv ci:"), std::string::npos) << "text report mixed into JSON";
  ASSERT_NE(text.find("\"energies\""), std::string::npos) << text;
  EXPECT_NE(text.find("-76.11408649"), std::string::npos) << text;  // PySCF: -76.114086498352
  EXPECT_NE(text.find("\"determinants\": 679"), std::string::npos) << text;
  // an explicit reference: the same determinant as the automatic one, in the file's numbering
  opts.json.clear();
  opts.occupied_alpha = "1-3,8,10";
  opts.occupied_beta = "1-3,8,10";
  std::ostringstream out2;
  ASSERT_EQ(cispmv::app::ci_command(opts, out2), 0);
  EXPECT_NE(out2.str().find("given occupied orbitals"), std::string::npos) << out2.str();
  EXPECT_NE(out2.str().find("-76.1140864984"), std::string::npos) << out2.str();
  opts.occupied_beta.clear();
  EXPECT_THROW(cispmv::app::ci_command(opts, out2), std::invalid_argument);
  opts.occupied_alpha.clear();
  opts.max_memory = "lots";
  EXPECT_THROW(cispmv::app::ci_command(opts, out2), std::invalid_argument);
}

namespace {

TEST(CiHost, HamiltonianSpecsParseAndMalformedOnesSayWhatIsWrong) {
  const auto spec = cispmv::ci::parse_hamiltonian_spec("fcidump:dir/h2o.fcidump:10");
  EXPECT_EQ(spec.fcidump, "dir/h2o.fcidump");
  EXPECT_EQ(spec.level, 10);
  EXPECT_TRUE(spec.restrict_to_isym);
  const auto all = cispmv::ci::parse_hamiltonian_spec("fcidump:c:/x.fcidump:2:all-irreps");
  EXPECT_EQ(all.fcidump, "c:/x.fcidump");
  EXPECT_FALSE(all.restrict_to_isym);
  for (const char* bad : {"fcidump:", "fcidump:h2o.fcidump", "fcidump::2", "fcidump:h2o.fcidump:0",
                          "fcidump:h2o.fcidump:two", "fcidump:h2o.fcidump:99999", "fci:h2o.fcidump:2"}) {
    try {
      cispmv::ci::parse_hamiltonian_spec(bad);
      ADD_FAILURE() << "no error for '" << bad << "'";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("fcidump:FILE:LEVEL"), std::string::npos) << e.what();
    }
  }
  // the LiH full CI through the spec equals the one built by hand
  const cispmv::HostCsr H = cispmv::ci::build_hamiltonian(
      cispmv::ci::parse_hamiltonian_spec("fcidump:" + data_path("lih_sto3g.fcidump") + ":4"));
  EXPECT_EQ(H.num_rows, 225);
}

}  // namespace

// ------------------------------------------------------------------ options of `cispmv run` / `stats`
// Options that would hang, exhaust memory or time nothing are refused before any work (issue 13).
TEST(CiHost, RunAndStatsRefuseOptionsThatCannotWork) {
  auto refused = [](cispmv::app::RunOptions o, const std::string& expect) {
    o.matrix = data_path("paper_6x5.mtx");
    std::ostringstream out;
    try {
      cispmv::app::run_command(o, out);
      ADD_FAILURE() << "accepted, expected: " << expect;
    } catch (const std::exception& e) {
      EXPECT_NE(std::string(e.what()).find(expect), std::string::npos) << e.what();
    }
    EXPECT_EQ(out.str(), "") << "work was done before the refusal";
  };
  cispmv::app::RunOptions o;
  o.formats = {"ell"};
  o.kernels = {"vector"};
  refused(o, "format 'ell' has none of the kernels asked for (it has: scalar)");
  o = {};
  o.repetitions = 2147483647;
  refused(o, "--repetitions must be in 1..100000");
  o = {};
  o.rows_per_team = 2147483647;
  refused(o, "--rows-per-team must be in 1..1024");
  o = {};
  o.slice_height = 2147483647;
  refused(o, "--slice-height must be in 1..1024");
  o = {};
  o.json = "/nonexistent-folder/out.json";
  refused(o, "cannot write the --json file");
  o = {};
  o.boundary = 2147483647;
  refused(o, "BOUNDARY = 2147483647 is outside [0, 5]");
  std::ostringstream out;
  EXPECT_THROW(cispmv::app::stats_command(data_path("paper_6x5.mtx"), 2147483647, out), std::invalid_argument);
  // one dense row among 200,000: ELLPACK would take 480 GB; it is skipped with the reason, CSR still runs
  {
    cispmv::CooMatrix<double, int> coo;
    coo.num_rows = coo.num_cols = 200000;
    for (int c = 0; c < 200000; ++c) {
      coo.row_idx.push_back(0);
      coo.col_idx.push_back(c);
      coo.values.push_back(1.0);
    }
    for (int r = 1; r < 200000; ++r) {
      coo.row_idx.push_back(r);
      coo.col_idx.push_back(r);
      coo.values.push_back(2.0);
    }
    const std::string path = ::testing::TempDir() + "cispmv_dense_row.cispmv";
    cispmv::write_matrix(path, cispmv::from_coo(coo));
    cispmv::app::RunOptions dense;
    dense.matrix = path;
    dense.formats = {"csr", "ell"};
    dense.repetitions = 1;
    dense.baseline = false;
    std::ostringstream report;
    EXPECT_EQ(cispmv::app::run_command(dense, report), 0);
    EXPECT_NE(report.str().find("skipped: ell: needs ~480 GB"), std::string::npos) << report.str();
    EXPECT_NE(report.str().find("all kernels PASS (1 format(s) skipped)"), std::string::npos) << report.str();
  }
  {  // a format that cannot hold the matrix (hybrid16: a reference-region column beyond 16 bits) is
     // skipped with the converter's reason; the others still run
    cispmv::CooMatrix<double, int> coo;
    coo.num_rows = 4;
    coo.num_cols = 70000;
    for (int r = 0; r < 4; ++r) {
      coo.row_idx.insert(coo.row_idx.end(), {r, r});
      coo.col_idx.insert(coo.col_idx.end(), {r, 69990 + r});
      coo.values.insert(coo.values.end(), {1.0, 2.0});
    }
    const std::string path = ::testing::TempDir() + "cispmv_wide.cispmv";
    cispmv::write_matrix(path, cispmv::from_coo(coo));
    cispmv::app::RunOptions wide;
    wide.matrix = path;
    wide.formats = {"csr", "hybrid16"};
    wide.boundary = 2;
    wide.repetitions = 1;
    wide.baseline = false;
    std::ostringstream report;
    EXPECT_EQ(cispmv::app::run_command(wide, report), 0);
    EXPECT_NE(report.str().find("skipped: hybrid16: "), std::string::npos) << report.str();
    EXPECT_NE(report.str().find("16-bit"), std::string::npos) << report.str();
  }
  // --json -: the JSON alone on stdout, no text report mixed into it
  cispmv::app::RunOptions quiet;
  quiet.matrix = data_path("paper_6x5.mtx");
  quiet.formats = {"csr"};
  quiet.repetitions = 2;
  quiet.json = "-";
  std::ostringstream text;
  testing::internal::CaptureStdout();
  EXPECT_EQ(cispmv::app::run_command(quiet, text), 0);
  const std::string json = testing::internal::GetCapturedStdout();
  EXPECT_EQ(text.str(), "");
  EXPECT_EQ(json.front(), '{') << json.substr(0, 100);
}

// `cispmv ci` names the FCIDUMP in the errors its libraries raise, says why a space is empty, warns
// of a missing core energy; `cispmv run` refuses vectors that cannot fit and --float beyond float range.
TEST(CiHost, CommandsNameTheInputAndRefuseWhatCannotWork) {
  std::ifstream in(data_path("h2_sto3g.fcidump"));
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto replace = [](std::string s, const std::string& from, const std::string& to) {
    const auto at = s.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return at == std::string::npos ? s : s.replace(at, from.size(), to);
  };
  auto write = [](const std::string& name, const std::string& content) {
    const std::string path = ::testing::TempDir() + name;
    std::ofstream(path) << content;
    return path;
  };
  cispmv::app::CiCommandOptions opts;
  opts.level = 2;
  opts.fcidump = write("cispmv_isym2.fcidump", replace(text, "ISYM=1", "ISYM=2"));  // ORBSYM is all A1
  std::ostringstream out;
  try {
    cispmv::app::ci_command(opts, out);
    ADD_FAILURE() << "an impossible ISYM was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()).rfind(opts.fcidump + ": ", 0), 0u) << e.what();
  }
  // no core-energy line: a warning, and the run goes on
  std::string no_core;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (line.find("  0  0  0  0") == std::string::npos) no_core += line + "\n";
  }
  opts.fcidump = write("cispmv_no_core.fcidump", no_core);
  std::ostringstream warned;
  EXPECT_EQ(cispmv::app::ci_command(opts, warned), 0);
  EXPECT_NE(warned.str().find("warning: " + opts.fcidump + " has no core-energy line"), std::string::npos)
      << warned.str();
  // cispmv run: 2^31 - 1 columns in a 60-byte file; a value beyond float's range with --float
  cispmv::app::RunOptions run;
  run.matrix = write("cispmv_wide.mtx", "%%MatrixMarket matrix coordinate real general\n1 2147483647 1\n1 1 1.0\n");
  ::setenv("CISPMV_MAX_MEMORY", "4G", 1);
  try {
    cispmv::app::run_command(run, out);
    ADD_FAILURE() << "2^31 columns accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("the vectors x and y alone need"), std::string::npos) << e.what();
  }
  ::unsetenv("CISPMV_MAX_MEMORY");
  run.matrix =
      write("cispmv_big_value.mtx", "%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 1e300\n2 2 1\n");
  run.single_precision = true;
  try {
    cispmv::app::run_command(run, out);
    ADD_FAILURE() << "1e300 accepted in float";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("beyond the range of float"), std::string::npos) << e.what();
  }
}

// The dense products' set keeps the kernel's invariants: every segment has some k and the direction of its group's
// first, a group has at most max_segments of them and none comes before a group; a launch's tasks tile its groups.
TEST(CiHost, GatheredGemmSetRefusesWhatTheKernelCannotRun) {
  cispmv::impl::GatheredGemmHost g;
  EXPECT_THROW(g.add_segment(0, 1, 1, 0, 0, false), std::logic_error);  // no group yet
  EXPECT_THROW(g.add_group(0, 5, 0, 0), std::logic_error);
  g.add_group(70, 130, 0, 0);
  EXPECT_THROW(g.add_segment(0, 1, 0, 0, 0, false), std::logic_error);  // no k
  g.add_segment(0, 20, 20, 0, 0, false);
  EXPECT_THROW(g.add_segment(0, 20, 20, 0, 0, true), std::logic_error);  // another direction
  for (int s = 1; s < cispmv::impl::GatheredGemmHost::max_segments; ++s) g.add_segment(0, 20, 20, 0, 0, false);
  EXPECT_THROW(g.add_segment(0, 20, 20, 0, 0, false), std::logic_error);  // past max_segments
  EXPECT_DOUBLE_EQ(g.flops, 2.0 * 70 * 20 * 130 * cispmv::impl::GatheredGemmHost::max_segments);
  g.end_launch();
  ASSERT_EQ(g.launches(), 1u);
  EXPECT_EQ(g.launch_ptr[1], 2 * 3);  // 70 rows and 130 columns in tiles of 64: 2 x 3
  EXPECT_EQ(g.task_i.back(), 64);
  EXPECT_EQ(g.task_j.back(), 128);
  g.add_group(10, 10, 0, 0);
  g.add_segment(0, 10, 10, 0, 0, true);
  g.end_launch();
  EXPECT_EQ(cispmv::impl::GatheredGemmHost::smallest_launch(g.launch_ptr), 1);
  EXPECT_EQ(cispmv::impl::GatheredGemmHost::smallest_launch({0}), 0);
}
