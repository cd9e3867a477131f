// CI on every backend: the Davidson solver against the dense Jacobi solver, and real CI
// Hamiltonians from FCIDUMP files against the energies of PySCF (unit_tests/data/make_fcidump_refs.py
// says how every file and energy was made). Compiled once per backend with TEST_EXECSPACE and
// TEST_CATEGORY defined (backend_<name>.hpp).
#include <gtest/gtest.h>
#include <Kokkos_Core.hpp>

#include "cispmv/ci.hpp"
#include "cispmv/convert.hpp"
#include "cispmv/spmv.hpp"
#include "test_utils.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <functional>
#include <iostream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace {

// One line of ci_references.txt.
struct CiReference {
  std::string name, fcidump, method;
  int level = 0;
  bool restrict_to_isym = false;
  std::size_t determinants = 0;
  std::vector<double> energies;
};

CiReference ci_reference(const std::string& name) {
  std::ifstream in(std::string(CISPMV_TEST_DATA_DIR) + "/ci_references.txt");
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream ls(line);
    CiReference r;
    int restrict_flag = 0, nroots = 0;
    ls >> r.name >> r.fcidump >> r.level >> restrict_flag >> r.method >> r.determinants >> nroots;
    if (r.name != name) continue;
    r.restrict_to_isym = restrict_flag != 0;
    r.energies.resize(static_cast<std::size_t>(nroots));
    for (double& e : r.energies) ls >> e;
    return r;
  }
  ADD_FAILURE() << "no reference '" << name << "' in ci_references.txt";
  return {};
}

// The lowest eigenpairs of a host CSR matrix by Davidson in `Format` on TEST_EXECSPACE.
template <class HostMatrix>
auto davidson_on_backend(const HostMatrix& A_host, const cispmv::HostCsr& H,
                         const cispmv::solvers::DavidsonOptions& opts) {
  const auto A = cispmv::to_device<TEST_EXECSPACE>(A_host);
  const auto diagonal =
      Kokkos::create_mirror_view_and_copy(TEST_EXECSPACE::memory_space(), cispmv::ci::csr_diagonal(H));
  return cispmv::solvers::davidson(TEST_EXECSPACE(), A, diagonal, opts);
}

// Builds the reference's space and Hamiltonian, solves for all of its roots and checks
// eigenvalue + core energy against PySCF within 1e-8 Eh; `format` picks the SpMV format.
// With `scramble`, the orbitals are first renumbered (reversed within the irrep-blocked order): the
// reference determinant and every count and energy must not notice.
void check_against_pyscf(const std::string& name, const std::string& format = "csr", double tolerance = 1e-6,
                         bool scramble = false) {
  const CiReference ref = ci_reference(name);
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

// Dense row-major copy of a host CSR matrix.
std::vector<double> dense_of(const cispmv::HostCsr& A) {
  std::vector<double> d(static_cast<std::size_t>(A.num_rows) * A.num_cols, 0.0);
  for (int r = 0; r < A.num_rows; ++r) {
    for (std::size_t k = A.row_ptr(r); k < A.row_ptr(r + 1); ++k) {
      d[static_cast<std::size_t>(r) * A.num_cols + A.col_idx(k)] += A.values(k);
    }
  }
  return d;
}

// Random sparse symmetric matrix with a spread-out diagonal (CI-like: diagonally dominant-ish, so
// Davidson's preconditioner has something to work with, with close low-lying eigenvalues).
cispmv::HostCsr random_symmetric(int n, std::uint64_t seed, double density = 0.1) {
  cispmv::test::Rng rng(seed);
  std::vector<std::vector<std::pair<int, double>>> rows(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    rows[i].push_back({i, 0.05 * i + 0.3 * rng.uniform()});
    for (int j = 0; j < i; ++j) {
      if (rng.uniform() < density) {
        const double v = 0.2 * (rng.uniform() - 0.5);
        rows[i].push_back({j, v});
        rows[j].push_back({i, v});
      }
    }
  }
  std::size_t nnz = 0;
  for (auto& r : rows) {
    std::sort(r.begin(), r.end());
    nnz += r.size();
  }
  cispmv::HostCsr A("random_symmetric", n, n, nnz);
  std::size_t k = 0;
  for (int i = 0; i < n; ++i) {
    A.row_ptr(i) = k;
    for (const auto& [c, v] : rows[i]) {
      A.col_idx(k) = c;
      A.values(k) = v;
      ++k;
    }
  }
  A.row_ptr(n) = k;
  return A;
}

}  // namespace

TEST(TEST_CATEGORY, CiDavidsonMatchesJacobiOnRandomSymmetricMatrix) {
  const int n = 160;
  const auto A = random_symmetric(n, 2024);
  cispmv::validate(A);
  const auto dense = dense_of(A);
  const auto exact = cispmv::solvers::jacobi_eigen(dense, n);
  for (const int max_subspace : {0, 12}) {  // 12 forces restarts
    cispmv::solvers::DavidsonOptions opts;
    opts.num_roots = 4;
    opts.residual_tolerance = 1e-9;
    opts.max_subspace = max_subspace;
    opts.max_iterations = 500;
    const auto res = davidson_on_backend(A, A, opts);
    ASSERT_TRUE(res.converged) << "max_subspace " << max_subspace;
    std::cout << "  [random n=" << n << ", max_subspace " << max_subspace << "] iterations " << res.iterations
              << ", restarts " << res.restarts << ", SpMVs " << res.num_spmv << ", " << res.total_seconds << " s\n";
    if (max_subspace == 12) {
      EXPECT_GT(res.restarts, 0);
    }
    EXPECT_GT(res.num_spmv, 0);
    EXPECT_GT(res.spmv_seconds, 0.0);
    EXPECT_LE(res.spmv_seconds, res.total_seconds);
    auto X = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), res.eigenvectors);
    for (int c = 0; c < 4; ++c) {
      EXPECT_NEAR(res.eigenvalues[c], exact.values[c], 1e-12) << "root " << c << ", max_subspace " << max_subspace;
      EXPECT_LT(res.residual_norms[c], 1e-9);
      // The Ritz vector is the eigenvector up to sign; check ||A x - lambda x|| on the host.
      double r2 = 0.0, x2 = 0.0;
      for (int i = 0; i < n; ++i) {
        double ax = 0.0;
        for (int j = 0; j < n; ++j) ax += dense[static_cast<std::size_t>(i) * n + j] * X(j, c);
        r2 += (ax - res.eigenvalues[c] * X(i, c)) * (ax - res.eigenvalues[c] * X(i, c));
        x2 += X(i, c) * X(i, c);
      }
      EXPECT_NEAR(x2, 1.0, 1e-12);
      EXPECT_LT(std::sqrt(r2), 1e-8);
    }
  }
  // 18 roots: an iteration's corrections outnumber one block of the block Gram-Schmidt (16 columns)
  cispmv::solvers::DavidsonOptions opts;
  opts.num_roots = 18;
  opts.residual_tolerance = 1e-9;
  opts.max_iterations = 500;
  const auto res = davidson_on_backend(A, A, opts);
  ASSERT_TRUE(res.converged);
  for (int c = 0; c < 18; ++c) EXPECT_NEAR(res.eigenvalues[c], exact.values[c], 1e-11) << "root " << c;
}

// Davidson's kernels against host loops, on more rows than one chunk of multi_dot and of block_dots
// (23,849: three chunks, the last one short) and more columns than one pass of combine (19: 8, 8, 3).
TEST(TEST_CATEGORY, CiDavidsonDotsAndCombinationsMatchHostLoops) {
  namespace impl = cispmv::solvers::impl;
  using Basis = Kokkos::View<double**, Kokkos::LayoutLeft, TEST_MEMSPACE>;
  const std::size_t n = 2 * impl::dot_chunk_rows + 7465;
  const int m = 19;
  Basis P("P", n, m), Q("Q", n, m), out("out", n, m);
  Kokkos::View<double**, Kokkos::LayoutLeft, TEST_MEMSPACE> Y("Y", m, m);
  Kokkos::View<double*, TEST_MEMSPACE> shift("shift", m);
  auto hP = Kokkos::create_mirror_view(P), hQ = Kokkos::create_mirror_view(Q);
  auto hY = Kokkos::create_mirror_view(Y);
  auto hs = Kokkos::create_mirror_view(shift);
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (int j = 0; j < m; ++j) {
    for (std::size_t i = 0; i < n; ++i) {
      hP(i, j) = u(rng);
      hQ(i, j) = u(rng);
    }
    for (int c = 0; c < m; ++c) hY(j, c) = u(rng);
    hs(j) = u(rng);
  }
  Kokkos::deep_copy(P, hP);
  Kokkos::deep_copy(Q, hQ);
  Kokkos::deep_copy(Y, hY);
  Kokkos::deep_copy(shift, hs);
  using Partial = Kokkos::View<double**, Kokkos::LayoutRight, TEST_MEMSPACE>;
  Partial partial("partial", m, 3);
  auto partial_host = Kokkos::create_mirror_view(partial);
  const auto q = Kokkos::subview(Q, Kokkos::ALL(), 4);
  const auto by_vector = impl::multi_dot(TEST_EXECSPACE(), P, Q, q, m, true, partial, partial_host);
  const auto by_column = impl::multi_dot(TEST_EXECSPACE(), P, Q, q, 5, false, partial, partial_host);
  ASSERT_EQ(by_vector.size(), static_cast<std::size_t>(m));
  ASSERT_EQ(by_column.size(), 5u);
  for (int c = 0; c < m; ++c) {
    double v = 0.0, w = 0.0;
    for (std::size_t i = 0; i < n; ++i) {
      v += hP(i, c) * hQ(i, 4);
      w += hP(i, c) * hQ(i, c);
    }
    EXPECT_NEAR(by_vector[c], v, 1e-9) << "column " << c;
    if (c < 5) {
      EXPECT_NEAR(by_column[c], w, 1e-9) << "column " << c;
    }
  }
  // the block forms: P^T Q(:, 2:15) in one pass over P, then Q(:, 2:15) -= P(:, 0:m) H
  const int pc = 13;
  const auto Qb = Kokkos::subview(Q, Kokkos::ALL(), Kokkos::make_pair(2, 2 + pc));
  const std::size_t chunks = (n + impl::block_dot_chunk_rows - 1) / impl::block_dot_chunk_rows;
  Partial block_partial("block_partial", chunks, m * impl::block_dot_columns);
  auto block_partial_host = Kokkos::create_mirror_view(block_partial);
  const auto dots = impl::block_dots(TEST_EXECSPACE(), P, Qb, m, pc, block_partial, block_partial_host);
  ASSERT_EQ(dots.size(), static_cast<std::size_t>(m * pc));
  Kokkos::View<double**, Kokkos::LayoutLeft, TEST_MEMSPACE> H("H", m, impl::block_dot_columns);
  auto hH = Kokkos::create_mirror_view(H);
  for (int j = 0; j < m; ++j) {
    for (int c = 0; c < pc; ++c) {
      double e = 0.0;
      for (std::size_t i = 0; i < n; ++i) e += hP(i, j) * hQ(i, 2 + c);
      ASSERT_NEAR(dots[static_cast<std::size_t>(j) * pc + c], e, 1e-9) << "P column " << j << ", Q column " << c;
      hH(j, c) = 0.25 * u(rng);
    }
  }
  Kokkos::deep_copy(H, hH);
  const auto Q0 = Kokkos::create_mirror(Q);  // a copy even where hQ is Q itself (host backends)
  Kokkos::deep_copy(Q0, Q);
  impl::subtract_block_projection(TEST_EXECSPACE(), P, H, m, pc, Qb);
  const auto h_Q = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), Q);
  for (std::size_t i = 0; i < n; i += 13) {
    for (int c = 0; c < m; ++c) {
      double e = Q0(i, c);
      for (int j = 0; j < m && c >= 2 && c < 2 + pc; ++j) e -= hP(i, j) * hH(j, c - 2);
      ASSERT_NEAR(h_Q(i, c), e, 1e-12) << "row " << i << ", column " << c;
    }
  }
  EXPECT_THROW(
      impl::block_dots(TEST_EXECSPACE(), P, Q, m, impl::block_dot_columns + 1, block_partial, block_partial_host),
      std::logic_error);
  Kokkos::deep_copy(Q, Q0);
  for (const bool use_q : {false, true}) {
    const int ncols = use_q ? m : 3;
    impl::combine(TEST_EXECSPACE(), P, Q, Y, shift, m, ncols, out, use_q);
    const auto h_out = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), out);
    for (std::size_t i = 0; i < n; i += 997) {
      for (int c = 0; c < ncols; ++c) {
        double e = 0.0;
        for (int j = 0; j < m; ++j) e += (use_q ? hP(i, j) - hs(c) * hQ(i, j) : hP(i, j)) * hY(j, c);
        ASSERT_NEAR(h_out(i, c), e, 1e-12) << "row " << i << ", column " << c << ", use_q " << use_q;
      }
    }
  }
}

TEST(TEST_CATEGORY, CiDavidsonIsExactOnceTheBasisSpansTheSpace) {
  // Tiny dense matrices: the basis reaches the whole space (also with more roots than half the
  // rows, where a restart has no room and the corrections are capped). Dense, because Davidson
  // cannot leave an invariant subspace: a reducible matrix whose guesses lie in one block may hide
  // lower eigenvalues in another (CiDavidsonFindsRootsInUncoupledBlocksWithMoreGuesses).
  for (const int n : {1, 3, 5}) {
    const auto A = random_symmetric(n, 3 + n, 1.0);
    const auto exact = cispmv::solvers::jacobi_eigen(dense_of(A), n);
    for (int roots = 1; roots <= n; ++roots) {
      cispmv::solvers::DavidsonOptions opts;
      opts.num_roots = roots;
      opts.residual_tolerance = 1e-12;
      const auto res = davidson_on_backend(A, A, opts);
      EXPECT_TRUE(res.converged) << "n " << n << ", roots " << roots;
      EXPECT_LE(res.subspace_size, n);
      for (int c = 0; c < roots; ++c) EXPECT_NEAR(res.eigenvalues[c], exact.values[c], 1e-13);
    }
    cispmv::solvers::DavidsonOptions opts;
    opts.num_roots = n + 1;
    EXPECT_THROW(davidson_on_backend(A, A, opts), std::invalid_argument);
  }
  cispmv::solvers::DavidsonOptions opts;
  opts.num_roots = 4;
  opts.max_subspace = 7;  // < 2 * num_roots on a matrix larger than the basis
  EXPECT_THROW(davidson_on_backend(random_symmetric(50, 1), random_symmetric(50, 1), opts), std::invalid_argument);
}

TEST(TEST_CATEGORY, CiDavidsonFindsRootsInUncoupledBlocks) {
  // diag(0, 1) (+) [[0.5, 1], [1, 0.5]]: the lowest eigenvalue -0.5 lives in the second block,
  // whose diagonal entries are not the smallest. One unit guess (row 0) spans an invariant subspace,
  // and here it is an exact eigenvector: its residual is 0 at once, so even a random start vector
  // (the next test shows where one helps) may leave it converged there; more unit guesses do not.
  cispmv::HostCsr A("blocks", 4, 4, 6);
  const std::size_t ptr[] = {0, 1, 2, 4, 6};
  const int col[] = {0, 1, 2, 3, 2, 3};
  const double val[] = {0.0, 1.0, 0.5, 1.0, 1.0, 0.5};
  for (int r = 0; r <= 4; ++r) A.row_ptr(r) = ptr[r];
  for (int k = 0; k < 6; ++k) {
    A.col_idx(k) = col[k];
    A.values(k) = val[k];
  }
  cispmv::solvers::DavidsonOptions opts;
  opts.random_start = false;  // unit vectors only
  const auto one = davidson_on_backend(A, A, opts);
  EXPECT_TRUE(one.converged);
  EXPECT_NEAR(one.eigenvalues[0], 0.0, 1e-14);  // an eigenvalue, not the lowest
  opts.num_guesses = 3;
  const auto three = davidson_on_backend(A, A, opts);
  EXPECT_TRUE(three.converged);
  EXPECT_NEAR(three.eigenvalues[0], -0.5, 1e-12);
}

// Three uncoupled blocks of 60 rows (a CI Hamiltonian's irreducible representations): the first as
// random_symmetric makes it, the later two with their diagonals lifted by `lift` (+0.05 for the third)
// and their couplings multiplied by `coupling`, so that they hold lower eigenvalues than the first
// block's fifth although the five smallest diagonal entries all lie in the first.
cispmv::HostCsr uncoupled_blocks(double lift, double coupling, std::vector<int>& block_of_row) {
  const int b = 60, n = 3 * b;
  const auto blocks = {random_symmetric(b, 11), random_symmetric(b, 12, 0.5), random_symmetric(b, 13, 0.5)};
  std::vector<std::vector<std::pair<int, double>>> rows(static_cast<std::size_t>(n));
  block_of_row.assign(static_cast<std::size_t>(n), 0);
  int offset = 0;
  double shift = 0.0;
  for (const auto& B : blocks) {
    for (int r = 0; r < b; ++r) {
      block_of_row[static_cast<std::size_t>(offset + r)] = offset / b;
      for (std::size_t k = B.row_ptr(r); k < B.row_ptr(r + 1); ++k) {
        const int c = B.col_idx(k);
        const double v = offset == 0 ? B.values(k) : c == r ? B.values(k) + lift + shift : coupling * B.values(k);
        rows[static_cast<std::size_t>(offset + r)].push_back({offset + c, v});
      }
    }
    offset += b;
    shift += 0.05;
  }
  std::size_t nnz = 0;
  for (const auto& r : rows) nnz += r.size();
  cispmv::HostCsr A("blocks", n, n, nnz);
  std::size_t at = 0;
  for (int i = 0; i < n; ++i) {
    A.row_ptr(i) = at;
    for (const auto& [c, v] : rows[static_cast<std::size_t>(i)]) {
      A.col_idx(at) = c;
      A.values(at) = v;
      ++at;
    }
  }
  A.row_ptr(n) = at;
  cispmv::validate(A);
  // the case these tests are for: the five smallest diagonal entries are all in the first block
  std::vector<std::pair<double, int>> diag;
  for (int i = 0; i < n; ++i) {
    for (std::size_t k = A.row_ptr(i); k < A.row_ptr(i + 1); ++k) {
      if (A.col_idx(k) == i) diag.push_back({A.values(k), i});
    }
  }
  std::sort(diag.begin(), diag.end());
  for (int c = 0; c < 5; ++c) EXPECT_LT(diag[static_cast<std::size_t>(c)].second, b);
  return A;
}

// Unit start vectors converge to the wrong five; the default start (with its random vector) finds the
// lowest five of the whole matrix (dense Jacobi).
TEST(TEST_CATEGORY, CiDavidsonFindsTheLowestRootsOfEveryBlock) {
  std::vector<int> block_of_row;
  const auto A = uncoupled_blocks(1.0, 8.0, block_of_row);
  const auto exact = cispmv::solvers::jacobi_eigen(dense_of(A), A.num_rows);
  cispmv::solvers::DavidsonOptions opts;
  opts.num_roots = 5;
  opts.residual_tolerance = 1e-8;
  opts.random_start = false;
  const auto units = davidson_on_backend(A, A, opts);
  ASSERT_TRUE(units.converged);
  EXPECT_GT(units.eigenvalues[4], exact.values[4] + 1e-6) << "unit start vectors found every root";
  opts.random_start = true;
  const auto spread = davidson_on_backend(A, A, opts);
  ASSERT_TRUE(spread.converged);
  for (int c = 0; c < 5; ++c) EXPECT_NEAR(spread.eigenvalues[c], exact.values[c], 1e-10) << "root " << c;
  EXPECT_EQ(spread.guards, 0);
}

// The blocks named (DavidsonOptions::row_blocks): each block's smallest diagonal row is a guess and
// each block's lowest pair beyond the roots a guard, so the lowest roots come out with unit guesses
// alone, and where the later blocks lie far above (diagonal +4) with couplings strong enough to bring
// their lowest eigenvalues among the five. 1, 5 and 8 roots; every block's guard settles.
TEST(TEST_CATEGORY, CiDavidsonWithNamedBlocksFindsTheLowestRoots) {
  for (const auto& [lift, coupling] : {std::pair{1.0, 8.0}, std::pair{4.0, 20.0}}) {
    std::vector<int> block_of_row;
    const auto A = uncoupled_blocks(lift, coupling, block_of_row);
    const auto exact = cispmv::solvers::jacobi_eigen(dense_of(A), A.num_rows);
    for (const bool random : {false, true}) {
      for (const int roots : {1, 5, 8}) {
        cispmv::solvers::DavidsonOptions opts;
        opts.num_roots = roots;
        opts.residual_tolerance = 1e-8;
        opts.random_start = random;
        opts.row_blocks = block_of_row;
        const auto res = davidson_on_backend(A, A, opts);
        const std::string what = "lift " + std::to_string(lift) + ", random start " + std::to_string(random) + ", " +
                                 std::to_string(roots) + " roots";
        ASSERT_TRUE(res.converged) << what;
        EXPECT_EQ(res.guards, 3) << what;
        for (int c = 0; c < roots; ++c)
          EXPECT_NEAR(res.eigenvalues[c], exact.values[c], 1e-10) << what << ", root " << c;
      }
    }
  }
  // row_blocks of the wrong size, or a block outside [0, 64): refused
  std::vector<int> block_of_row;
  const auto A = uncoupled_blocks(1.0, 8.0, block_of_row);
  cispmv::solvers::DavidsonOptions opts;
  opts.row_blocks.assign(static_cast<std::size_t>(A.num_rows) - 1, 0);
  EXPECT_THROW(davidson_on_backend(A, A, opts), std::invalid_argument);
  opts.row_blocks = block_of_row;
  opts.row_blocks[7] = 64;
  EXPECT_THROW(davidson_on_backend(A, A, opts), std::invalid_argument);
  opts.row_blocks[7] = -1;
  EXPECT_THROW(davidson_on_backend(A, A, opts), std::invalid_argument);
}

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

// The factored Hamiltonian's product is the assembled one's: y = beta y + alpha H x against the host
// oracle on the assembled CSR, in full, truncated and one-irrep spaces, orbitals in energy and in
// irrep-blocked order, with integrals that obey ORBSYM (pairs of other irreps skipped) and with one
// that breaks it (every pair visited), so that every range, class and list of the operator is read.
TEST(TEST_CATEGORY, CiFactoredHamiltonianIsTheAssembledProduct) {
  struct Case {
    const char* file;
    int level;
    bool restrict_to_isym;
    bool break_symmetry;
    int ms2;  // N_alpha - N_beta: 2 and 4 give alpha and beta strings of different lengths
  };
  for (const Case c : {Case{"lih_sto3g", 4, false, false, 0}, Case{"h2o_631g_fc", 2, true, false, 0},
                       Case{"h2o_631g_fc", 3, false, false, 0}, Case{"h2o_631g_pitzer", 2, true, false, 0},
                       Case{"h2o_631g_pitzer", 2, false, false, 0}, Case{"h2o_631g_fc", 2, true, true, 0},
                       Case{"h2o_631g_fc", 3, false, true, 0}, Case{"h2_sto3g", 2, false, false, 0},
                       Case{"lih_sto3g", 4, false, false, 2}, Case{"h2o_631g_fc", 3, false, false, 2},
                       Case{"h2o_631g_fc", 2, true, false, 4}}) {
    cispmv::ci::FciDump dump = cispmv::ci::read_fcidump(std::string(CISPMV_TEST_DATA_DIR) + "/" + c.file + ".fcidump");
    if (c.break_symmetry) dump.set_two(0, 1, 0, 0, 1e-3);  // orbitals 0 and 1 of different irreps
    dump.ms2 = c.ms2;
    const auto space = cispmv::ci::make_determinant_space(dump, c.level, c.restrict_to_isym);
    const auto H = cispmv::ci::build_hamiltonian(dump, space, 0.0);
    const int n = H.num_rows;
    Kokkos::View<double*, Kokkos::HostSpace> hx("x", n), hy("y", n), want("want", n);
    cispmv::test::Rng rng(17);
    for (int i = 0; i < n; ++i) {
      hx(i) = rng.uniform() - 0.5;
      hy(i) = rng.uniform() - 0.5;
    }
    double scale = 0.0;
    for (int r = 0; r < n; ++r) {
      double sum = 0.0, mag = 0.0;
      for (std::size_t k = H.row_ptr(r); k < H.row_ptr(r + 1); ++k) {
        sum += H.values(k) * hx(H.col_idx(k));
        mag += std::abs(H.values(k) * hx(H.col_idx(k)));
      }
      want(r) = 0.5 * hy(r) + 1.5 * sum;
      scale = std::max(scale, mag);
    }
    // both kernels; the team kernel with teams of 1 or 2 threads on CPUs (on GPUs 256), and 1 or 3 beta
    // strings per thread: chunks of each alpha string's range, a ragged last slot
    using Kernel = cispmv::ci::FactoredOptions::Kernel;
    const int team =
        cispmv::impl::is_gpu_space_v<TEST_EXECSPACE>
            ? 256
            : std::min(2, Kokkos::TeamPolicy<TEST_EXECSPACE>(1, 1).team_size_max(
                              cispmv::impl::FactoredTeamKernel<TEST_EXECSPACE, Kokkos::View<double*, TEST_MEMSPACE>,
                                                               Kokkos::View<double*, TEST_MEMSPACE>>{},
                              Kokkos::ParallelForTag()));
    // the scatter kernel: one team per alpha string, or 3 (a ragged split of the batches and positions;
    // y accumulated atomically), or as many as the backend asks for; batches of 8 and 16
    // the mma kernel: teams of 2, 4 and 3 warps on GPUs (on CPUs 2 threads, each a warp, then 1: no atomics),
    // one team per alpha string, 3 sharing its tiles, or the automatic parts; the tile kernel (teams of one
    // thread) with one team per alpha string or 2 taking every other unit
    const bool gpu = cispmv::impl::is_gpu_space_v<TEST_EXECSPACE>;
    struct Variant {
      Kernel kernel;
      int slots;           // teams: beta strings per thread; scatter and mma: teams per alpha string
      int batch;           // alpha replacements per batch (0: the kernel's own)
      bool lists = false;  // scatter: the replacement lists' walk
      int team = 0;        // team size (0: the test's, above)
      bool gemm = false;   // the same-spin terms as dense products (else in the kernel's teams)
      // with gemm: the dense products' launches beside the alpha-beta kernel (all adds atomic) or after it
      cispmv::ci::FactoredOptions::Launches launches = cispmv::ci::FactoredOptions::Launches::automatic;
      // scatter's table walk on CUDA: adds into one copy of the row or into one a warp (automatic: a warp's where
      // they fit 32 KB, as they do in these spaces)
      cispmv::ci::FactoredOptions::RowCopies rows = cispmv::ci::FactoredOptions::RowCopies::automatic;
      // the teams' order (automatic: largest first on GPUs; `flip` below names the other order)
      cispmv::ci::FactoredOptions::TaskOrder order = cispmv::ci::FactoredOptions::TaskOrder::automatic;
    };
    using Launches = cispmv::ci::FactoredOptions::Launches;
    using Rows = cispmv::ci::FactoredOptions::RowCopies;
    using Order = cispmv::ci::FactoredOptions::TaskOrder;
    const Order flip = gpu ? Order::strings : Order::largest_first;
    const Launches any = Launches::automatic;
    std::vector<Variant> variants{
        Variant{Kernel::rows, 0, 0},
        Variant{Kernel::teams, 1, 0},
        Variant{Kernel::teams, 3, 0},
        Variant{Kernel::teams, 3, 2},
        Variant{Kernel::rows, 0, 2},
        Variant{Kernel::rows, 0, 16},
        Variant{Kernel::scatter, 1, 0},
        Variant{Kernel::scatter, 3, 16},
        Variant{Kernel::scatter, 0, 8},
        Variant{Kernel::scatter, 2, 8, true},
        Variant{Kernel::mma, 1, 0, false, gpu ? 64 : team},
        Variant{Kernel::mma, 3, 0, false, gpu ? 128 : 1, false, any, Rows::automatic, flip},
        Variant{Kernel::mma, 0, 4, false, gpu ? 96 : 1},
        Variant{Kernel::tiles, 1, 0, false, 1},
        Variant{Kernel::tiles, 2, 8, false, 1, false, any, Rows::automatic, flip},
        Variant{Kernel::scatter, 3, 8, false, 0, true},
        Variant{Kernel::tiles, 1, 0, false, 1, true},
        Variant{Kernel::scatter, 1, 8, false, 0, true, Launches::concurrent},
        Variant{Kernel::scatter, 1, 16, false, 0, false, any, Rows::shared, flip},
        Variant{Kernel::scatter, 3, 16, false, gpu ? 64 : 0, false, any, Rows::per_warp, flip}};
    // the dense same-spin products after each kernel on GPUs (automatic: beside it), and after the scatter kernel
    // (serial); on CPUs (their warps emulated, slow under the sanitizers) after the scatter kernel's parts (y
    // accumulated) and the tile kernel's writes, and beside the scatter kernel's one team an alpha string (concurrent:
    // on CPUs one launch after the other, every add atomic)
    if (gpu) {
      variants.insert(variants.end(),
                      {Variant{Kernel::scatter, 1, 0, false, 0, true}, Variant{Kernel::mma, 1, 0, false, 64, true},
                       Variant{Kernel::scatter, 0, 0, false, 0, true, Launches::serial}});
    }
    std::vector<Kernel> ordered;  // kernels whose largest-first order was compared with the string order
    for (const Variant& v : variants) {
      cispmv::ci::FactoredOptions options;
      options.kernel = v.kernel;
      options.team_size = v.team > 0 ? v.team : team;
      options.slots = v.kernel == Kernel::teams ? v.slots : 0;
      options.parts = v.kernel == Kernel::scatter || v.kernel == Kernel::mma || v.kernel == Kernel::tiles ? v.slots : 0;
      options.batch = v.batch;
      options.scatter_lists = v.lists;
      const bool same_spin_kernel = v.kernel == Kernel::scatter || v.kernel == Kernel::mma || v.kernel == Kernel::tiles;
      using Pass = cispmv::ci::FactoredOptions::SameSpinPass;
      options.same_spin_pass = v.gemm ? Pass::gemm : same_spin_kernel ? Pass::lists : Pass::automatic;
      options.launches = v.launches;
      options.row_copies = v.rows;
      options.task_order = v.order;
      const cispmv::ci::FactoredHamiltonian<TEST_EXECSPACE> F(TEST_EXECSPACE(), dump, space, options);
      EXPECT_EQ(F.largest_first(),
                same_spin_kernel && (v.order == Order::largest_first || (v.order == Order::automatic && gpu)));
      // each team's estimated work, in launch order: largest first where asked, the same teams either way (once per
      // kernel and space against the string order; the product below checks that no team is lost or repeated)
      const std::vector<double>& work = F.team_work();
      EXPECT_EQ(work.empty(), !same_spin_kernel);
      if (F.largest_first()) {
        EXPECT_TRUE(std::is_sorted(work.begin(), work.end(), std::greater<double>()));
      }
      if (F.largest_first() && std::find(ordered.begin(), ordered.end(), v.kernel) == ordered.end()) {
        ordered.push_back(v.kernel);
        options.task_order = Order::strings;
        const cispmv::ci::FactoredHamiltonian<TEST_EXECSPACE> G(TEST_EXECSPACE(), dump, space, options);
        std::vector<double> other = G.team_work();
        EXPECT_FALSE(G.largest_first());
        ASSERT_EQ(other.size(), work.size());
        std::sort(other.begin(), other.end(), std::greater<double>());
        EXPECT_EQ(other, work);
      }
      // (copies on CUDA only, in the table's walk; automatic takes them where they fit 32 KB)
      const bool cuda_walk =
          cispmv::impl::warp_mma_runs<TEST_EXECSPACE> && gpu && v.kernel == Kernel::scatter && !v.lists;
      if (!cuda_walk || v.rows == Rows::shared) {
        EXPECT_EQ(F.row_copies(), 1);
      } else if (v.rows == Rows::per_warp) {
        EXPECT_EQ(F.row_copies(), options.team_size / 32);
      } else {
        EXPECT_TRUE(F.row_copies() == 1 || F.row_copies() == options.team_size / 32) << F.row_copies();
      }
      EXPECT_EQ(F.kernel(), v.kernel);
      EXPECT_EQ(F.same_spin_gemm(), v.gemm);
      EXPECT_EQ(F.concurrent_launches(),
                v.gemm && (v.launches == Launches::concurrent || (v.launches == Launches::automatic && gpu)));
      EXPECT_EQ(F.same_spin_flops() > 0.0, v.gemm);
      EXPECT_EQ(F.scatter_lists(), v.lists);
      EXPECT_EQ(F.team_kernel(), v.kernel == Kernel::teams);
      if (v.batch > 0) {
        EXPECT_EQ(F.batch(), v.batch);
      }
      EXPECT_EQ(F.uses_symmetry(),
                !c.break_symmetry && std::string(c.file) != "lih_sto3g" && std::string(c.file) != "h2_sto3g")
          << c.file;
      ASSERT_EQ(F.num_rows(), n);
      const std::string what =
          std::string(c.file) + " MS2 " + std::to_string(c.ms2) + " level " + std::to_string(c.level) + " restricted " +
          std::to_string(c.restrict_to_isym) + " broken symmetry " + std::to_string(c.break_symmetry) + " kernel " +
          (v.kernel == Kernel::teams     ? "teams"
           : v.kernel == Kernel::rows    ? "rows"
           : v.kernel == Kernel::scatter ? "scatter"
           : v.kernel == Kernel::mma     ? "mma"
                                         : "tiles") +
          (v.lists ? " lists" : "") + (v.gemm ? " same-spin gemm" : "") +
          (F.concurrent_launches() ? " concurrent" : "") + " row copies " + std::to_string(F.row_copies()) +
          (F.largest_first() ? " largest first" : "") + " slots/parts " + std::to_string(F.slots()) + " batch " +
          std::to_string(F.batch()) + ": " + std::to_string(n) + " determinants";
      // (not mirrors: those alias hx and hy on the host)
      Kokkos::View<double*, TEST_MEMSPACE> x("x", n), y("y", n);
      Kokkos::deep_copy(x, hx);
      Kokkos::deep_copy(y, hy);
      F.apply(1.5, x, 0.5, y);
      const auto got = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), y);
      double worst = 0.0;
      for (int r = 0; r < n; ++r) worst = std::max(worst, std::abs(got(r) - want(r)));
      EXPECT_LE(worst, 1e-13 * scale) << what;
      // beta = 0 overwrites (a NaN in y must not survive)
      Kokkos::deep_copy(y, std::numeric_limits<double>::quiet_NaN());
      F.apply(1.0, x, 0.0, y);
      const auto got0 = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), y);
      for (int r = 0; r < n; ++r) ASSERT_NEAR(got0(r), (want(r) - 0.5 * hy(r)) / 1.5, 1e-13 * scale) << what;
      if (v.gemm) {
        // two products back to back, the second reading the first's result, no fence between them: on CUDA the dense
        // products' side streams must have added into y before the second product reads it, and the second's scale
        // (beta 0 over NaN) must come before its own side streams add into z. z = H (H x) against the host oracle.
        Kokkos::View<double*, TEST_MEMSPACE> z("z", n);
        Kokkos::deep_copy(z, std::numeric_limits<double>::quiet_NaN());
        Kokkos::deep_copy(y, std::numeric_limits<double>::quiet_NaN());
        F.apply(1.0, x, 0.0, y);
        F.apply(1.0, y, 0.0, z);
        const auto gz = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), z);
        double worst2 = 0.0, scale2 = 0.0;
        int not_finite = 0;
        for (int r = 0; r < n; ++r) {
          not_finite += std::isfinite(gz(r)) ? 0 : 1;
          double sum = 0.0, mag = 0.0;
          for (std::size_t k = H.row_ptr(r); k < H.row_ptr(r + 1); ++k) {
            const double hx1 = (want(H.col_idx(k)) - 0.5 * hy(H.col_idx(k))) / 1.5;  // (H x) at the column
            sum += H.values(k) * hx1;
            mag += std::abs(H.values(k)) * (std::abs(hx1) + scale);  // (the first product's error carried too)
          }
          if (std::isfinite(gz(r))) worst2 = std::max(worst2, std::abs(gz(r) - sum));
          scale2 = std::max(scale2, mag);
        }
        EXPECT_EQ(not_finite, 0) << what << " (H (H x), two products back to back: a NaN of y or z left)";
        EXPECT_LE(worst2, 1e-12 * scale2) << what << " (H (H x), two products back to back)";
      }
      if (same_spin_kernel) {
        // the same-spin terms and the alpha-beta sum (FactoredOptions::terms) add up to the product, and each
        // differs from it (neither is empty, neither the whole)
        double part_sum_worst = 0.0, off_same = 0.0, off_ab = 0.0;
        Kokkos::View<double*, TEST_MEMSPACE> y_same("y_same", n), y_ab("y_ab", n);
        options.terms = cispmv::ci::FactoredOptions::Terms::same_spin;
        cispmv::ci::FactoredHamiltonian<TEST_EXECSPACE>(TEST_EXECSPACE(), dump, space, options)
            .apply(1.0, x, 0.0, y_same);
        options.terms = cispmv::ci::FactoredOptions::Terms::alpha_beta;
        cispmv::ci::FactoredHamiltonian<TEST_EXECSPACE>(TEST_EXECSPACE(), dump, space, options)
            .apply(1.0, x, 0.0, y_ab);
        const auto hs = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), y_same);
        const auto ha = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), y_ab);
        for (int r = 0; r < n; ++r) {
          part_sum_worst = std::max(part_sum_worst, std::abs(hs(r) + ha(r) - got0(r)));
          off_same = std::max(off_same, std::abs(hs(r) - got0(r)));
          off_ab = std::max(off_ab, std::abs(ha(r) - got0(r)));
        }
        EXPECT_LE(part_sum_worst, 1e-13 * scale) << what << " (same-spin + alpha-beta terms)";
        EXPECT_GT(off_same, 1e-6 * scale) << what << " (the same-spin terms alone are the product)";
        EXPECT_GT(off_ab, 1e-6 * scale) << what << " (the alpha-beta terms alone are the product)";
        // without two-electron integrals the alpha-beta sum is zero and the one-electron terms are same-spin
        // terms: the parts are not swapped (the product of one part is not the other's)
        cispmv::ci::FciDump one_body = dump;
        std::fill(one_body.two_electron.begin(), one_body.two_electron.end(), 0.0);
        cispmv::ci::FactoredHamiltonian<TEST_EXECSPACE>(TEST_EXECSPACE(), one_body, space, options)
            .apply(1.0, x, 0.0, y_ab);
        options.terms = cispmv::ci::FactoredOptions::Terms::same_spin;
        cispmv::ci::FactoredHamiltonian<TEST_EXECSPACE>(TEST_EXECSPACE(), one_body, space, options)
            .apply(1.0, x, 0.0, y_same);
        const auto ha1 = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), y_ab);
        const auto hs1 = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), y_same);
        double ab_one_body = 0.0, same_one_body = 0.0;
        for (int r = 0; r < n; ++r) {
          ab_one_body = std::max(ab_one_body, std::abs(ha1(r)));
          same_one_body = std::max(same_one_body, std::abs(hs1(r)));
        }
        EXPECT_EQ(ab_one_body, 0.0) << what << " (alpha-beta terms without two-electron integrals)";
        EXPECT_GT(same_one_body, 1e-6 * scale) << what << " (same-spin terms without two-electron integrals)";
      }
    }
  }
  // a vector of the wrong length is refused
  const auto dump = cispmv::ci::read_fcidump(std::string(CISPMV_TEST_DATA_DIR) + "/h2_sto3g.fcidump");
  const auto space = cispmv::ci::make_determinant_space(dump, 2, false);
  const cispmv::ci::FactoredHamiltonian<TEST_EXECSPACE> F(TEST_EXECSPACE(), dump, space);
  Kokkos::View<double*, TEST_MEMSPACE> x("x", space.size() + 1), y("y", space.size());
  EXPECT_THROW(F.apply(1.0, x, 0.0, y), std::invalid_argument);
  // options a kernel cannot take are refused; `automatic` with the scatter kernel's options takes that kernel
  using Kernel = cispmv::ci::FactoredOptions::Kernel;
  auto with = [](Kernel k, int batch, int team, bool lists) {
    cispmv::ci::FactoredOptions o;
    o.kernel = k;
    o.batch = batch;
    o.team_size = team;
    o.scatter_lists = lists;
    return o;
  };
  auto build = [&](const cispmv::ci::FactoredOptions& o) {
    return cispmv::ci::FactoredHamiltonian<TEST_EXECSPACE>(TEST_EXECSPACE(), dump, space, o);
  };
  EXPECT_THROW(build(with(Kernel::tiles, 4, 0, false)), std::invalid_argument);
  EXPECT_THROW(build(with(Kernel::tiles, 0, 2, false)), std::invalid_argument);
  EXPECT_THROW(build(with(Kernel::mma, 8, 0, false)), std::invalid_argument);
  EXPECT_THROW(build(with(Kernel::scatter, 4, 0, false)), std::invalid_argument);
  EXPECT_THROW(build(with(Kernel::tiles, 8, 0, true)), std::invalid_argument);
  for (const Kernel k : {Kernel::rows, Kernel::teams}) {  // a part of the terms, or the dense same-spin pass, needs
    auto o = with(k, 0, 0, false);                        // scatter, mma or tiles
    o.terms = cispmv::ci::FactoredOptions::Terms::same_spin;
    EXPECT_THROW(build(o), std::invalid_argument);
    o = with(k, 0, 0, false);
    o.same_spin_pass = cispmv::ci::FactoredOptions::SameSpinPass::gemm;
    EXPECT_THROW(build(o), std::invalid_argument);
  }
  // the automatic same-spin pass: in the kernel's teams on CPUs
  if (!cispmv::impl::is_gpu_space_v<TEST_EXECSPACE>) {
    EXPECT_FALSE(build(with(Kernel::scatter, 0, 0, false)).same_spin_gemm());
  }
  if (cispmv::impl::is_gpu_space_v<TEST_EXECSPACE>) {
    EXPECT_THROW(build(with(Kernel::mma, 0, 48, false)), std::invalid_argument);
    EXPECT_THROW(build(with(Kernel::mma, 0, 256, false)), std::invalid_argument);
    // copies of the row a warp need teams of whole warps (CUDA)
    auto o = with(Kernel::scatter, 16, 48, false);
    o.row_copies = cispmv::ci::FactoredOptions::RowCopies::per_warp;
    if (cispmv::impl::warp_mma_runs<TEST_EXECSPACE>) {
      EXPECT_THROW(build(o), std::invalid_argument);
    }
    o.team_size = 64;
    EXPECT_EQ(build(o).row_copies(), cispmv::impl::warp_mma_runs<TEST_EXECSPACE> ? 2 : 1);
  }
  EXPECT_EQ(build(with(Kernel::automatic, 16, 0, false)).kernel(), Kernel::scatter);
  EXPECT_EQ(build(with(Kernel::automatic, 0, 0, true)).kernel(), Kernel::scatter);
  EXPECT_EQ(build(with(Kernel::automatic, 0, 0, false)).kernel(),
            !cispmv::impl::is_gpu_space_v<TEST_EXECSPACE> && cispmv::impl::host_simd::avx512_available()
                ? Kernel::tiles
                : Kernel::scatter);
}

namespace {
// out = c + a b by impl::warp_mma_8x8x4, each lane's fragments read and written where PTX's layout puts them
// (a warp of 32 threads on GPUs, one thread holding the 32 lanes on CPUs)
template <class A, class B, class C>
void warp_mma_of(const A& a, const B& b, const C& c, const C& out) {
  constexpr int Lanes = cispmv::impl::warp_lanes<TEST_EXECSPACE>;
  using Policy = Kokkos::TeamPolicy<TEST_EXECSPACE>;
  Kokkos::parallel_for(
      "warp_mma", Policy(1, Lanes == 1 ? 32 : 1), KOKKOS_LAMBDA(const typename Policy::member_type& m) {
        double fa[Lanes], fb[Lanes], fd[Lanes][2];
        const int lane0 = Lanes == 1 ? m.team_rank() : 0;
        for (int j = 0; j < Lanes; ++j) {
          const int l = lane0 + j;
          fa[j] = a(l / 4, l % 4);
          fb[j] = b(l % 4, l / 4);
          for (int i = 0; i < 2; ++i) fd[j][i] = c(l / 4, 2 * (l % 4) + i);
        }
        cispmv::impl::warp_mma_8x8x4(fa, fb, fd);
        for (int j = 0; j < Lanes; ++j) {
          const int l = lane0 + j;
          for (int i = 0; i < 2; ++i) out(l / 4, 2 * (l % 4) + i) = fd[j][i];
        }
      });
}
}  // namespace

// A warp's 8x8x4 product in the fragments of PTX (on a GPU of compute capability 8.0 or later the DMMA
// instruction, before it the same sums through shuffles; on CPUs one thread forming the warp's product):
// D = C + A B entry by entry, every lane's two entries written where the layout says.
TEST(TEST_CATEGORY, WarpMmaIsTheProductInPtxFragments) {
  Kokkos::View<double**, Kokkos::LayoutRight, Kokkos::HostSpace> ha("a", 8, 4);
  Kokkos::View<double**, Kokkos::LayoutRight, Kokkos::HostSpace> hb("b", 4, 8);
  Kokkos::View<double**, Kokkos::LayoutRight, Kokkos::HostSpace> hc("c", 8, 8);
  cispmv::test::Rng rng(5);
  for (int r = 0; r < 8; ++r) {
    for (int k = 0; k < 4; ++k) ha(r, k) = rng.uniform() - 0.5;
    for (int n = 0; n < 8; ++n) hc(r, n) = rng.uniform() - 0.5;
  }
  for (int k = 0; k < 4; ++k) {
    for (int n = 0; n < 8; ++n) hb(k, n) = rng.uniform() - 0.5;
  }
  Kokkos::View<double**, Kokkos::LayoutRight, TEST_MEMSPACE> a("a", 8, 4);
  Kokkos::View<double**, Kokkos::LayoutRight, TEST_MEMSPACE> b("b", 4, 8);
  Kokkos::View<double**, Kokkos::LayoutRight, TEST_MEMSPACE> c("c", 8, 8), out("out", 8, 8);
  Kokkos::deep_copy(a, ha);
  Kokkos::deep_copy(b, hb);
  Kokkos::deep_copy(c, hc);
  Kokkos::deep_copy(out, std::numeric_limits<double>::quiet_NaN());
  warp_mma_of(a, b, c, out);
  const auto got = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), out);
  for (int r = 0; r < 8; ++r) {
    for (int n = 0; n < 8; ++n) {
      double want = hc(r, n);
      for (int k = 0; k < 4; ++k) want += ha(r, k) * hb(k, n);
      EXPECT_NEAR(got(r, n), want, 1e-14) << "D(" << r << ", " << n << ")";
    }
  }
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

namespace {

/// A matrix-free operator, y = beta*y + alpha*D*x with D = diag(1, 2, ..., n): Davidson takes any
/// object with the operator interface, not only cispmv matrices.
struct DiagonalOperator {
  using value_type = double;
  using memory_space = TEST_MEMSPACE;
  int n;
  int num_rows() const { return n; }
  int num_cols() const { return n; }
  template <class X, class Y>
  void apply(double alpha, const X& x, double beta, const Y& y) const {
    Kokkos::parallel_for(
        Kokkos::RangePolicy<TEST_EXECSPACE>(0, n),
        KOKKOS_LAMBDA(const int i) { y(i) = (beta == 0.0 ? 0.0 : beta * y(i)) + alpha * (i + 1.0) * x(i); });
  }
};

/// d(i) = i + 1 (a free function: nvcc forbids device lambdas in gtest's private TestBody).
void fill_one_to_n(const Kokkos::View<double*, TEST_MEMSPACE>& d) {
  Kokkos::parallel_for(
      Kokkos::RangePolicy<TEST_EXECSPACE>(0, d.extent(0)), KOKKOS_LAMBDA(const std::size_t i) { d(i) = i + 1.0; });
}

}  // namespace

TEST(TEST_CATEGORY, CiDavidsonSolvesAMatrixFreeOperator) {
  const DiagonalOperator op{40};
  Kokkos::View<double*, TEST_MEMSPACE> diagonal("diagonal", 40);
  fill_one_to_n(diagonal);
  cispmv::solvers::DavidsonOptions opts;
  opts.num_roots = 3;
  const auto res = cispmv::solvers::davidson(TEST_EXECSPACE(), op, diagonal, opts);
  ASSERT_TRUE(res.converged);
  for (int c = 0; c < 3; ++c) EXPECT_NEAR(res.eigenvalues[c], c + 1.0, 1e-12);
}

// A NaN in the matrix must not be reported as converged (max(0, NaN) is 0 in a naive test).
TEST(TEST_CATEGORY, CiDavidsonDoesNotConvergeOnNaN) {
  auto A = random_symmetric(30, 7);
  A.values(A.row_ptr(3)) = std::numeric_limits<double>::quiet_NaN();
  cispmv::solvers::DavidsonOptions opts;
  opts.max_iterations = 20;
  const auto res = davidson_on_backend(A, A, opts);
  EXPECT_FALSE(res.converged);
  // nor once the basis spans the whole (small) space
  auto B = random_symmetric(6, 9);
  B.values(B.row_ptr(2)) = std::numeric_limits<double>::quiet_NaN();
  opts.max_iterations = 50;
  EXPECT_FALSE(davidson_on_backend(B, B, opts).converged);
}
