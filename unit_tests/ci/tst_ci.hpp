// Real CI Hamiltonians on every backend: the energies of FCIDUMP files against PySCF's (unit_tests/data/
// make_fcidump_refs.py says how every file and energy was made) in every format and with the factored Hamiltonian,
// whatever the orbital order, excited roots by the block Davidson; and the Hamiltonian built on the backend against
// the host build. Compiled once per backend with TEST_EXECSPACE and TEST_CATEGORY defined (backend_<name>.hpp).
#include <gtest/gtest.h>
#include <Kokkos_Core.hpp>

#include "ci/ci_fixtures.hpp"
#include "cispmv/ci.hpp"
#include "cispmv/convert.hpp"
#include "cispmv/spmv.hpp"
#include "solvers/davidson_fixtures.hpp"
#include "test_utils.hpp"

#include <algorithm>
#include <cmath>
#include <iostream>
#include <string>
#include <vector>

namespace {

using namespace cispmv::test;

// Builds the reference's space and Hamiltonian, solves for all of its roots and checks
// eigenvalue + core energy against PySCF within 1e-8 Eh; `format` picks the SpMV format.
// With `scramble`, the orbitals are first renumbered (reversed within the irrep-blocked order): the
// reference determinant and every count and energy must not notice.
void check_against_pyscf(const std::string& name, const std::string& format = "csr", double tolerance = 1e-6,
                         bool scramble = false) {
  const Reference ref = reference_named(name);
  ASSERT_FALSE(ref.energies.empty());
  cispmv::ci::FciDump dump = cispmv::ci::read_fcidump(std::string(CISPMV_TEST_DATA_DIR) + "/" + ref.fcidump);
  if (scramble) {
    auto order = cispmv::ci::irrep_blocked_order(dump);
    std::reverse(order.begin(), order.end());
    dump = cispmv::ci::permute_orbitals(dump, order);
  }
  const auto space = cispmv::ci::make_determinant_space(dump, ref.level, ref.restrict_to_isym);
  ASSERT_EQ(space.size(), ref.determinants) << name;
  const auto H = cispmv::ci::build_hamiltonian(dump, space);

  cispmv::solvers::DavidsonOptions opts;
  opts.num_roots = static_cast<int>(ref.energies.size());
  opts.residual_tolerance = tolerance;
  cispmv::solvers::DavidsonResult<TEST_EXECSPACE::memory_space> result;
  if (format == "hybrid") {
    result = davidson_on_backend(cispmv::to_hybrid(H), H, opts);
  } else if (format == "sell") {
    result = davidson_on_backend(cispmv::to_sliced_ell(H), H, opts);
  } else if (format == "csell") {
    result = davidson_on_backend(cispmv::to_compressed_sell(H), H, opts);
  } else if (format == "factored") {  // the Hamiltonian never assembled on the backend (H: the diagonal)
    const cispmv::ci::FactoredHamiltonian<TEST_EXECSPACE> F(TEST_EXECSPACE(), dump, space);
    const auto diagonal =
        Kokkos::create_mirror_view_and_copy(TEST_EXECSPACE::memory_space(), cispmv::ci::csr_diagonal(H));
    result = cispmv::solvers::davidson(TEST_EXECSPACE(), F, diagonal, opts);
  } else {
    result = davidson_on_backend(H, H, opts);
  }
  ASSERT_TRUE(result.converged) << name;
  for (std::size_t c = 0; c < ref.energies.size(); ++c) {
    EXPECT_NEAR(result.eigenvalues[c] + dump.core_energy, ref.energies[c], 1e-8)
        << name << " (" << ref.method << ") root " << c + 1;
  }
  std::cout << "  [" << name << " " << format << "] determinants " << space.size() << ", nnz " << H.nnz()
            << ", iterations " << result.iterations << ", SpMVs " << result.num_spmv << ", spmv "
            << 100.0 * result.spmv_share() << "% of " << result.total_seconds
            << " s, E0 - E0(PySCF) = " << result.eigenvalues[0] + dump.core_energy - ref.energies[0] << "\n";
}

}  // namespace

TEST(TEST_CATEGORY, CiFullCiOfH2MatchesPySCF) { check_against_pyscf("h2_sto3g"); }

// Every truncated and full CI of the reference table again with the orbitals renumbered.
TEST(TEST_CATEGORY, CiEnergiesDoNotDependOnTheOrbitalOrder) {
  for (const char* name : {"h2_sto3g", "lih_sto3g", "h2o_631g_cisd", "h2o_631g_cisd_a1", "h2o_631g_fc_cisd",
                           "h2o_631gd_cisd", "h2o_631gd_cisd_a1", "h2o_631g_pitzer_cisd_a1"}) {
    check_against_pyscf(name, "csr", 1e-6, true);
  }
}

TEST(TEST_CATEGORY, CiFullCiOfLiHMatchesPySCF) { check_against_pyscf("lih_sto3g"); }

TEST(TEST_CATEGORY, CiFullCiOfLiHMatchesPySCFInOtherFormats) {
  check_against_pyscf("lih_sto3g", "hybrid");
  check_against_pyscf("lih_sto3g", "sell");
}

TEST(TEST_CATEGORY, CiCisdOfH2OMatchesPySCF) {
  check_against_pyscf("h2o_631g_cisd");         // 2241 determinants, all irreps
  check_against_pyscf("h2o_631g_cisd_a1");      // 679 determinants of A1
  check_against_pyscf("h2o_631g_fc_cisd");      // frozen O 1s, A1
  check_against_pyscf("h2o_631gd_cisd_a1");     // 6-31G(d), 19 orbitals, A1
  check_against_pyscf("h2o_631g_pitzer_cisd");  // orbitals in irrep-blocked order (Psi4, Molpro)
  check_against_pyscf("h2o_631g_pitzer_cisd_a1");
}

TEST(TEST_CATEGORY, CiFullCiOfFrozenCoreH2OInA1MatchesPySCF) {
  // 61,441 determinants, 25 million nonzeros: the largest test. A residual of 1e-5 bounds the
  // energy error by about 1e-10 / gap (gap 0.37 Eh), well inside 1e-8 Eh, with fewer SpMVs.
  check_against_pyscf("h2o_631g_fc_fci", "csr", 1e-5);
}

// Excited states by the block Davidson (the corrections of an iteration multiplied together, the
// matrix read once for all of them in CSR, the hybrid format and csell; one by one in Sliced
// ELLPACK): the lowest 5 roots, degenerate ones included (LiH's 4th and 5th), against PySCF.
TEST(TEST_CATEGORY, CiExcitedStatesMatchPySCFWithBlockProducts) {
  for (const char* format : {"csr", "hybrid", "csell", "sell"}) check_against_pyscf("lih_sto3g_5roots", format);
  // 61,441 determinants; the closest roots are 0.038 Eh apart, so a residual of 1e-5 bounds each
  // energy error by ~3e-9 Eh
  check_against_pyscf("h2o_631g_fc_fci_5roots", "csell", 1e-5);
}

// The Davidson on the factored Hamiltonian: PySCF's energies, full CI of the frozen-core water (61,441
// determinants of A1) and LiH's lowest 5 roots, degenerate ones included.
TEST(TEST_CATEGORY, CiFactoredHamiltonianMatchesPySCF) {
  check_against_pyscf("lih_sto3g_5roots", "factored");
  check_against_pyscf("h2o_631g_pitzer_cisd_a1", "factored");
  check_against_pyscf("h2o_631g_fc_fci", "factored", 1e-5);
}

// The Hamiltonian built on TEST_EXECSPACE (the device builder, no host CSR) is the host build: the
// same rows, columns and values (to the last bits the backend's arithmetic may change); with a drop
// tolerance that empties a tenth of the slots and a packing buffer of a few rows, the packed rows
// are the undropped matrix filtered by value.
TEST(TEST_CATEGORY, CiHamiltonianBuiltOnTheBackendIsTheHostBuildAndPacksDroppedElements) {
  const auto dump = cispmv::ci::read_fcidump(std::string(CISPMV_TEST_DATA_DIR) + "/h2o_631g.fcidump");
  const auto space = cispmv::ci::make_determinant_space(dump, 2, false);
  const cispmv::HostCsr full = cispmv::ci::build_hamiltonian(dump, space, 0.0);
  for (const double tolerance : {0.0, 1e-14, 2e-3}) {
    cispmv::ci::HamiltonianOptions opts;
    opts.drop_tolerance = tolerance;
    opts.compaction_buffer = 5000;
    const auto H = cispmv::ci::build_hamiltonian(TEST_EXECSPACE(), dump, space, opts);
    const auto row_ptr = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), H.row_ptr);
    const auto col_idx = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), H.col_idx);
    const auto values = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), H.values);
    ASSERT_EQ(H.num_rows, full.num_rows);
    ASSERT_EQ(row_ptr(static_cast<std::size_t>(H.num_rows)), H.nnz());
    std::size_t k = 0, dropped = 0;
    for (int r = 0; r < full.num_rows; ++r) {
      ASSERT_EQ(row_ptr(static_cast<std::size_t>(r)), k) << "tolerance " << tolerance << " row " << r;
      for (std::size_t f = full.row_ptr(r); f < full.row_ptr(r + 1); ++f) {
        const double v = full.values(f);
        if (full.col_idx(f) != r && !(std::abs(v) >= tolerance)) {
          ++dropped;
          continue;
        }
        ASSERT_EQ(col_idx(k), full.col_idx(f)) << "tolerance " << tolerance << " row " << r;
        ASSERT_NEAR(values(k), v, 1e-13 * (1.0 + std::abs(v))) << "tolerance " << tolerance << " row " << r;
        ++k;
      }
    }
    ASSERT_EQ(k, H.nnz());
    if (tolerance > 1e-3) {
      EXPECT_GT(dropped, full.nnz() / 20) << "the test should exercise the packing of many rows";
    }
  }
}

// The memory-bounded Davidson is the unbounded one: a reference space of every test FCIDUMP solved with the
// subspace unbounded, forced down to its smallest (a Ritz vector and one correction per root: a restart every
// iteration) or to three vectors a pair, and with its vectors staged (kept in the host's execution space, each
// product's x copied to the operator's memory and its y back: the subspace in host memory of `cispmv ci --subspace
// host`) gives the same roots to 1e-10 Eh, excited ones included. The smallest subspace converges more slowly: more
// iterations, the same energies; three vectors a pair, restarted to the Ritz vectors and those of the iteration
// before, nearly as fast as the unbounded one, and faster than restarted to the lowest Ritz vectors.
// The CI spaces multiply through the assembled matrix's plan (block products), the full CI through the factored
// Hamiltonian (one vector a product), so both kinds of operator restart.
template <class Op, class Diagonal, class HostDiagonal>
void expect_bounded_solves_match(const std::string& name, const Reference& ref, const cispmv::ci::FciDump& dump,
                                 const Op& op, const Diagonal& diagonal, const HostDiagonal& host_diagonal,
                                 int roots = 0) {
  SCOPED_TRACE(name);
  const std::size_t size = host_diagonal.extent(0);
  cispmv::solvers::DavidsonOptions opts;
  opts.num_roots = roots > 0 ? roots : static_cast<int>(ref.energies.size());
  opts.residual_tolerance = 1e-7;
  opts.max_iterations = 2000;
  const auto unbounded = cispmv::solvers::davidson(TEST_EXECSPACE(), op, diagonal, opts);
  ASSERT_TRUE(unbounded.converged);
  opts.max_subspace = 2 * opts.num_roots;
  const auto smallest = cispmv::solvers::davidson(TEST_EXECSPACE(), op, diagonal, opts);
  ASSERT_TRUE(smallest.converged);
  EXPECT_EQ(smallest.max_subspace, std::min<int>(2 * opts.num_roots, static_cast<int>(size)));
  // three vectors a pair: a restart to the Ritz vectors and those of the iteration before (GD+k), or to the
  // lowest Ritz vectors alone
  opts.max_subspace = 3 * opts.num_roots;
  const auto previous = cispmv::solvers::davidson(TEST_EXECSPACE(), op, diagonal, opts);
  opts.keep_previous = false;
  const auto lowest = cispmv::solvers::davidson(TEST_EXECSPACE(), op, diagonal, opts);
  opts.keep_previous = true;
  ASSERT_TRUE(previous.converged);
  ASSERT_TRUE(lowest.converged);
  opts.max_subspace = 0;
  opts.stage_products = true;
  const auto staged = cispmv::solvers::davidson(Kokkos::DefaultHostExecutionSpace(), op, host_diagonal, opts);
  ASSERT_TRUE(staged.converged);
  for (std::size_t c = 0; c < static_cast<std::size_t>(opts.num_roots); ++c) {
    EXPECT_NEAR(smallest.eigenvalues[c], unbounded.eigenvalues[c], 1e-10) << "root " << c + 1;
    EXPECT_NEAR(previous.eigenvalues[c], unbounded.eigenvalues[c], 1e-10) << "root " << c + 1;
    EXPECT_NEAR(lowest.eigenvalues[c], unbounded.eigenvalues[c], 1e-10) << "root " << c + 1;
    EXPECT_NEAR(staged.eigenvalues[c], unbounded.eigenvalues[c], 1e-10) << "root " << c + 1;
    EXPECT_NEAR(unbounded.eigenvalues[c] + dump.core_energy, ref.energies[c], 1e-8) << "root " << c + 1;
  }
  if (size > static_cast<std::size_t>(4 * opts.num_roots)) {
    EXPECT_GT(smallest.restarts, 0);  // (a restart every iteration once the basis holds its smallest size)
    // the step of the iteration before is worth more than the next Ritz vectors (here 13 against 17 iterations
    // for LiH's 5 roots, 15 against 23 for the frozen-core full CI's ground state)
    EXPECT_LT(previous.iterations, lowest.iterations);
  }
  EXPECT_EQ(staged.eigenvectors.extent(0), size);
  std::cout << "  [" << name << "] iterations: unbounded " << unbounded.iterations << ", smallest subspace "
            << smallest.iterations << " (" << smallest.restarts << " restarts), three a pair " << previous.iterations
            << " keeping the previous Ritz vectors, " << lowest.iterations << " keeping the lowest, staged "
            << staged.iterations << "\n";
}

TEST(TEST_CATEGORY, CiBoundedDavidsonMatchesTheUnboundedOne) {
  for (const char* name :
       {"h2_sto3g", "lih_sto3g_5roots", "h2o_631g_cisd_a1", "h2o_631gd_cisd_a1", "h2o_631g_pitzer_cisd_a1"}) {
    const Reference ref = reference_named(name);
    const cispmv::ci::FciDump dump = cispmv::ci::read_fcidump(data_path(ref.fcidump));
    const auto space = cispmv::ci::make_determinant_space(dump, ref.level, ref.restrict_to_isym);
    const auto H = cispmv::ci::build_hamiltonian(dump, space);
    const auto A = cispmv::to_device<TEST_EXECSPACE>(H);
    const cispmv::SpmvPlan<TEST_EXECSPACE, std::decay_t<decltype(A)>> plan(TEST_EXECSPACE(), A, {});
    const auto host_diagonal = cispmv::ci::csr_diagonal(H);
    const auto diagonal = Kokkos::create_mirror_view_and_copy(TEST_MEMSPACE(), host_diagonal);
    expect_bounded_solves_match(name, ref, dump, plan, diagonal, host_diagonal);
  }
  // the frozen-core full CI (61,441 determinants, ~25M nonzeros) never assembled, its ground state
  const Reference ref = reference_named("h2o_631g_fc_fci");
  const cispmv::ci::FciDump dump = cispmv::ci::read_fcidump(data_path(ref.fcidump));
  const auto space = cispmv::ci::make_determinant_space(dump, ref.level, ref.restrict_to_isym);
  const cispmv::ci::FactoredHamiltonian<TEST_EXECSPACE> F(TEST_EXECSPACE(), dump, space);
  const auto diagonal = cispmv::ci::hamiltonian_diagonal(TEST_EXECSPACE(), dump, space);
  const auto host_diagonal = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), diagonal);
  expect_bounded_solves_match("h2o_631g_fc_fci", ref, dump, F, diagonal, host_diagonal, 1);
}

// The memory plan: the default subspace where the budget holds it, the largest basis that fits a smaller budget,
// never below a Ritz vector and one correction per pair, and `fits` false below that.
TEST(TEST_CATEGORY, DavidsonMemoryPlanSizesTheSubspaceFromTheBudget) {
  cispmv::solvers::DavidsonOptions opts;
  const std::size_t rows = 1000;
  const double vector = rows * sizeof(double);
  const auto plan = [&](double budget, int guards = 0) {
    opts.memory_budget = budget;
    return cispmv::solvers::davidson_memory_plan<TEST_EXECSPACE>(rows, opts, guards, false);
  };
  const auto full = plan(0.0);
  EXPECT_EQ(full.max_subspace, 24);
  EXPECT_EQ(full.restart_size, 2);
  EXPECT_EQ(full.vectors(), 2 * 24 + 1);  // V, AV and the residual (a restart to 2 forms them in place)
  EXPECT_FALSE(full.bounded);
  const auto ten = plan(20.5 * vector);  // V and AV 2 x 9, the residual
  EXPECT_TRUE(ten.fits);
  EXPECT_TRUE(ten.bounded);
  EXPECT_EQ(ten.max_subspace, 9);
  EXPECT_LE(ten.bytes, 20.5 * vector);
  const auto three = plan(7.0 * vector);  // V and AV 2 x 3: restart to the Ritz vector and the previous one
  EXPECT_EQ(three.max_subspace, 3);
  EXPECT_EQ(three.restart_size, 2);
  const auto least = plan(5.0 * vector);  // V and AV 2 x 2, the residual: restart to 1
  EXPECT_TRUE(least.fits);
  EXPECT_EQ(least.max_subspace, 2);
  EXPECT_EQ(least.restart_size, 1);
  EXPECT_FALSE(plan(4.9 * vector).fits);
  opts.num_roots = 3;
  EXPECT_EQ(plan(0.0, 4).max_subspace, 8 * 7);  // roots and the blocks' guards
  EXPECT_TRUE(plan(35.5 * vector, 4).fits);     // V and AV 2 x 14, 7 residuals, and the rows' blocks (4 bytes a row)
  EXPECT_FALSE(plan(35.4 * vector, 4).fits);
  opts.num_roots = 20;  // with 4 guards a restart keeps 48 columns: through a scratch block of 48
  EXPECT_EQ(plan(0.0, 4).work, 24 + 48);
}
