// The Hamiltonian: excitation signs and the Slater-Condon rules against a second-quantised brute force,
// truncated and symmetry-restricted matrices as blocks of it, the builder for any reference, its symmetry,
// determinism, and csell built in blocks of rows.
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

TEST(Hamiltonian, ExcitationSignCountsOccupiedOrbitalsBetween) {
  EXPECT_EQ(cispmv::ci::excitation_sign(0b1011, 0, 2), -1.0);  // orbital 1 in between
  EXPECT_EQ(cispmv::ci::excitation_sign(0b1011, 3, 2), 1.0);   // nothing between 2 and 3
  EXPECT_EQ(cispmv::ci::excitation_sign(0b1111, 0, 5), -1.0);  // orbitals 1, 2, 3 in between
  EXPECT_EQ(cispmv::ci::excitation_sign(0b10111, 4, 0), 1.0);  // orbitals 1, 2 in between (symmetric in i, a)
}

TEST(Hamiltonian, SlaterCondonMatchesSecondQuantisedBruteForce) {
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

TEST(Hamiltonian, TruncatedAndSymmetryRestrictedMatricesAreBlocksOfTheBruteForce) {
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
TEST(Hamiltonian, BuilderMatchesBruteForceForAnyReferenceWithAndWithoutSymmetricIntegrals) {
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

TEST(Hamiltonian, IsExactlySymmetricWithSortedRowsAndStoredDiagonal) {
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

TEST(Hamiltonian, BuildIsDeterministic) {
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

// Rows of the Hamiltonian as csell built in blocks of rows: the same rows, diagonal and columns as the
// CSR builder's, for the whole width and for a column window. Blocks of 320 rows: 10 over the 3,051
// rows, the last one short (every block builds the strings' excitation lists again: at 96 rows the test
// took 39 s in CI's sanitized -O0 build, 16 s at 320).
TEST(Hamiltonian, CsellBuiltInBlocksHoldsTheBuildersRows) {
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
