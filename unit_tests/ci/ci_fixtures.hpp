#pragma once
// Fixtures of the CI tests: the test data folder, the message a malformed FCIDUMP raises, random model Hamiltonians
// with the symmetries of real orbitals, the second-quantised brute force that the Slater-Condon rules are checked
// against, and PySCF's reference energies (unit_tests/data/ci_references.txt).
#include <gtest/gtest.h>

#include "cispmv/ci.hpp"
#include "cispmv/errors.hpp"
#include "test_utils.hpp"

#include <cmath>
#include <cstdint>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace cispmv::test {

using cispmv::ci::Determinant;
using cispmv::ci::FciDump;

inline std::string data_path(const std::string& name) { return std::string(CISPMV_TEST_DATA_DIR) + "/" + name; }

// The message of the cispmv::ParseError that parsing `text` throws ("" if none); the error's file
// and line must agree with its message, as for every reader.
inline std::string parse_error(const std::string& text) {
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
inline FciDump random_model(int norb, int nelec, std::uint64_t seed, const std::vector<int>& orbsym = {}) {
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
inline std::map<std::pair<std::uint64_t, std::uint64_t>, double> brute_force_hamiltonian(const FciDump& d) {
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

inline std::vector<Reference> read_references() {
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

/// The reference of ci_references.txt named `name` (a failure, and an empty reference, if there is none).
inline Reference reference_named(const std::string& name) {
  for (const Reference& r : read_references()) {
    if (r.name == name) return r;
  }
  ADD_FAILURE() << "no reference '" << name << "' in ci_references.txt";
  return {};
}

}  // namespace cispmv::test
