// The FCIDUMP reader: the namelist in any layout, errors that name the file, the line and what was expected,
// hostile files refused, PySCF's files read; and the fcidump:FILE:LEVEL specs of the benchmarks.
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

TEST(FciDump, ParsesMultiLineNamelistInAnyOrder) {
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

TEST(FciDump, AcceptsAmpersandEndOnTheHeaderLine) {
  std::istringstream in("&FCI NORB=2,NELEC=2,MS2=0,ORBSYM=1,1,ISYM=1,&END\n 1.0 1 1 1 1\n");
  const FciDump d = cispmv::ci::parse_fcidump(in, "inline");
  EXPECT_EQ(d.num_orbitals, 2);
  EXPECT_EQ(d.two(0, 0, 0, 0), 1.0);
}

TEST(FciDump, ErrorsNameTheFileTheLineAndWhatWasExpected) {
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

  e = parse_error(" &FCI NORB=2,NELEC=2,\n  ORBSYM=0,8,\n /\n");  // a 0: PySCF's ids, where 8 is no irrep
  EXPECT_NE(e.find("test.fcidump:2:"), std::string::npos) << e;
  EXPECT_NE(e.find("0..7"), std::string::npos) << e;

  e = parse_error(" &FCI NORB=2,NELEC=2,\n  ORBSYM=1,9,\n /\n");
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
TEST(FciDump, RefusesWhatWouldBeReadSilentlyWrong) {
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

// ORBSYM in Molpro's numbering (1..8) or PySCF's own ids (0..7, its default), told apart by a 0 or named: the same
// orbitals' irreps, each PySCF id g read as g + 1; a 0 in a file read as Molpro's is refused.
TEST(FciDump, ReadsOrbsymInEitherNumbering) {
  const std::string tail = "  ISYM=1,\n &END\n 0.5 1 1 1 1\n";
  auto parse = [&](const std::string& orbsym, cispmv::ci::OrbsymNumbering numbering) {
    std::istringstream in(" &FCI NORB=4,NELEC=2,MS2=0,\n  ORBSYM=" + orbsym + "\n" + tail);
    return cispmv::ci::parse_fcidump(in, "test.fcidump", numbering);
  };
  using N = cispmv::ci::OrbsymNumbering;
  const FciDump molpro = parse("1,2,4,3,", N::automatic);
  EXPECT_EQ(molpro.orbsym, (std::vector<int>{1, 2, 4, 3}));
  EXPECT_EQ(molpro.orbsym_numbering, N::molpro);
  const FciDump pyscf = parse("0,1,3,2,", N::automatic);
  EXPECT_EQ(pyscf.orbsym, (std::vector<int>{1, 2, 4, 3}));
  EXPECT_EQ(pyscf.orbsym_numbering, N::pyscf);
  const FciDump named = parse("1,2,3,3,", N::pyscf);  // no 0, read as PySCF's because it is told so
  EXPECT_EQ(named.orbsym, (std::vector<int>{2, 3, 4, 4}));
  EXPECT_THROW(parse("0,1,3,2,", N::molpro), cispmv::ParseError);
  const FciDump none = parse("1,1,1,1,", N::automatic);
  EXPECT_EQ(none.orbsym_numbering, N::molpro);
  EXPECT_EQ(cispmv::ci::orbsym_numbering_name(N::pyscf), "PySCF's (0..7)");
}

TEST(FciDump, ReadsThePySCFFiles) {
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

TEST(FciDump, HamiltonianSpecsParseAndMalformedOnesSayWhatIsWrong) {
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
