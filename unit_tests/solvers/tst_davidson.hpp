// The Davidson eigensolver on every backend: against the dense Jacobi solver on random symmetric matrices, its
// kernels against host loops, an exact basis, uncoupled blocks (with and without named blocks), a matrix-free
// operator, an OperatorRef, the start rows' search on the backend, and NaN never taken for convergence. Compiled once
// per backend with TEST_EXECSPACE and TEST_CATEGORY defined (backend_<name>.hpp).
#include <gtest/gtest.h>
#include <Kokkos_Core.hpp>

#include "cispmv/ci.hpp"
#include "cispmv/convert.hpp"
#include "cispmv/operator_ref.hpp"
#include "cispmv/spmv.hpp"
#include "solvers/davidson_fixtures.hpp"
#include "test_utils.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace {
using namespace cispmv::test;
}  // namespace

TEST(TEST_CATEGORY, DavidsonMatchesJacobiOnRandomSymmetricMatrix) {
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

// Start vectors given by the caller: eigenvectors converge at once (no correction), a dependent one is dropped,
// start vectors that span fewer directions than the roots are refused, and a rough start converges to the same roots.
TEST(TEST_CATEGORY, DavidsonStartsFromTheCallersVectors) {
  const int n = 160;
  const auto A = random_symmetric(n, 2024);
  const auto dense = dense_of(A);
  const auto exact = cispmv::solvers::jacobi_eigen(dense, n);
  auto eigenvector = [&](int c, double* out) {
    for (int i = 0; i < n; ++i) out[i] = exact.vectors[static_cast<std::size_t>(c) * n + i];
  };
  cispmv::solvers::DavidsonOptions opts;
  opts.num_roots = 2;
  opts.residual_tolerance = 1e-9;
  opts.random_start = false;
  opts.start_count = 3;  // the two eigenvectors and the first again: dropped
  opts.start_fill = [&](int c, double* out) { eigenvector(c % 2, out); };
  const auto res = davidson_on_backend(A, A, opts);
  ASSERT_TRUE(res.converged);
  EXPECT_EQ(res.iterations, 0);
  EXPECT_LE(res.num_spmv, 2);  // the two kept vectors' products (one block read, or one each); none for the third
  for (int c = 0; c < 2; ++c) EXPECT_NEAR(res.eigenvalues[c], exact.values[c], 1e-12);
  opts.start_count = 2;  // both the same vector: one direction for two roots
  opts.start_fill = [&](int, double* out) { eigenvector(0, out); };
  EXPECT_THROW(davidson_on_backend(A, A, opts), std::invalid_argument);
  opts.start_fill = [&](int c, double* out) {  // rough: the eigenvectors plus 10 % of a smooth perturbation
    eigenvector(c, out);
    for (int i = 0; i < n; ++i) out[i] += 0.1 * std::sin(0.3 * i + c);
  };
  const auto rough = davidson_on_backend(A, A, opts);
  ASSERT_TRUE(rough.converged);
  for (int c = 0; c < 2; ++c) EXPECT_NEAR(rough.eigenvalues[c], exact.values[c], 1e-11);
}

// Davidson's kernels against host loops, on more rows than one chunk of multi_dot and of block_dots
// (23,849: three chunks, the last one short) and more columns than one pass of combine (19: 8, 8, 3); a restart's
// combination in place, and its refusal of more columns than it holds.
TEST(TEST_CATEGORY, DavidsonDotsAndCombinationsMatchHostLoops) {
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
  // a restart's basis in place: P(:, 0:ncols) = P(:, 0:m) Y(:, 0:ncols) (rows of the last 64-row block short)
  const auto P0 = Kokkos::create_mirror(Kokkos::HostSpace(), P);  // (hP may be P itself)
  Kokkos::deep_copy(P0, P);
  std::vector<std::size_t> rows;
  for (std::size_t i = 0; i < n; i += 331) rows.push_back(i);
  rows.push_back(n - 1);
  for (const int ncols : {1, 7, m}) {
    Kokkos::deep_copy(P, P0);
    impl::combine_in_place(TEST_EXECSPACE(), P, Y, m, ncols);
    const auto h_new = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), P);
    for (const std::size_t i : rows) {
      for (int c = 0; c < m; ++c) {
        double e = P0(i, c);  // the columns past ncols keep their values
        if (c < ncols) {
          e = 0.0;
          for (int j = 0; j < m; ++j) e += P0(i, j) * hY(j, c);
        }
        ASSERT_NEAR(h_new(i, c), e, 1e-12) << "row " << i << ", column " << c << ", ncols " << ncols;
      }
    }
  }
  EXPECT_THROW(impl::combine_in_place(TEST_EXECSPACE(), P, Y, m, impl::in_place_columns + 1), std::logic_error);
}

TEST(TEST_CATEGORY, DavidsonIsExactOnceTheBasisSpansTheSpace) {
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

TEST(TEST_CATEGORY, DavidsonFindsRootsInUncoupledBlocks) {
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
TEST(TEST_CATEGORY, DavidsonFindsTheLowestRootsOfEveryBlock) {
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
TEST(TEST_CATEGORY, DavidsonWithNamedBlocksFindsTheLowestRoots) {
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

namespace {

/// A plan seen through the operator interface without its block apply (as the factored Hamiltonian is): the
/// Davidson multiplies its vectors one product at a time, or packed (one column of each block in one product).
template <class Plan>
struct OneVectorAtATime {
  using value_type = double;
  using memory_space = typename Plan::memory_space;
  const Plan& plan;
  int products = 0;
  int num_rows() const { return plan.num_rows(); }
  int num_cols() const { return plan.num_cols(); }
  template <class X, class Y>
  void apply(double alpha, const X& x, double beta, const Y& y) const {
    plan.apply(alpha, x, beta, y);
  }
};

}  // namespace

// Named blocks with an operator that multiplies one vector at a time: the new vectors of distinct blocks are
// summed and multiplied once (the operator couples no two blocks), and the roots are those of the block products'
// solve, in fewer products than vectors.
TEST(TEST_CATEGORY, DavidsonPacksTheVectorsOfDistinctBlocksIntoOneProduct) {
  std::vector<int> block_of_row;
  const auto A = uncoupled_blocks(4.0, 20.0, block_of_row);
  const auto exact = cispmv::solvers::jacobi_eigen(dense_of(A), A.num_rows);
  const auto D = cispmv::to_device<TEST_EXECSPACE>(A);
  const cispmv::SpmvPlan<TEST_EXECSPACE, std::decay_t<decltype(D)>> plan(TEST_EXECSPACE(), D, {});
  const OneVectorAtATime<decltype(plan)> op{plan};
  const auto diagonal = Kokkos::create_mirror_view_and_copy(TEST_MEMSPACE(), cispmv::ci::csr_diagonal(A));
  for (const int roots : {1, 5}) {
    cispmv::solvers::DavidsonOptions opts;
    opts.num_roots = roots;
    opts.residual_tolerance = 1e-8;
    opts.row_blocks = block_of_row;
    opts.max_subspace = A.num_rows;  // (no restart: every basis vector is multiplied once)
    const auto packed = cispmv::solvers::davidson(TEST_EXECSPACE(), op, diagonal, opts);
    ASSERT_TRUE(packed.converged) << roots << " roots";
    EXPECT_EQ(packed.guards, 3);
    for (int c = 0; c < roots; ++c) EXPECT_NEAR(packed.eigenvalues[c], exact.values[c], 1e-10) << "root " << c;
    ASSERT_EQ(packed.restarts, 0);
    EXPECT_LT(packed.num_spmv, packed.subspace_size) << "one product per vector";  // (every vector multiplied once)
    opts.stage_products = true;  // the same packing through the operator's memory
    const auto staged = cispmv::solvers::davidson(TEST_EXECSPACE(), op, diagonal, opts);
    ASSERT_TRUE(staged.converged);
    EXPECT_EQ(staged.num_spmv, packed.num_spmv);
    for (int c = 0; c < roots; ++c) EXPECT_NEAR(staged.eigenvalues[c], exact.values[c], 1e-10) << "root " << c;
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

TEST(TEST_CATEGORY, DavidsonSolvesAMatrixFreeOperator) {
  const DiagonalOperator op{40};
  Kokkos::View<double*, TEST_MEMSPACE> diagonal("diagonal", 40);
  fill_one_to_n(diagonal);
  cispmv::solvers::DavidsonOptions opts;
  opts.num_roots = 3;
  const auto res = cispmv::solvers::davidson(TEST_EXECSPACE(), op, diagonal, opts);
  ASSERT_TRUE(res.converged);
  for (int c = 0; c < 3; ++c) EXPECT_NEAR(res.eigenvalues[c], c + 1.0, 1e-12);
}

// OperatorRef (one solver for every operator type): the same iterations, products and roots as the plan it refers
// to, with the block kernel (csr: several vectors in one product) and without it (ELLPACK).
TEST(TEST_CATEGORY, DavidsonThroughAnOperatorRefMatchesTheOperator) {
  const auto A = random_symmetric(200, 77);
  const auto diagonal = Kokkos::create_mirror_view_and_copy(TEST_MEMSPACE(), cispmv::ci::csr_diagonal(A));
  cispmv::solvers::DavidsonOptions opts;
  opts.num_roots = 4;
  opts.residual_tolerance = 1e-9;
  const auto check = [&](const auto& D, const char* format) {
    using Plan = cispmv::SpmvPlan<TEST_EXECSPACE, std::decay_t<decltype(D)>>;
    const Plan plan(TEST_EXECSPACE(), D, {});
    const cispmv::OperatorRef<TEST_MEMSPACE> ref(plan);
    EXPECT_EQ(ref.block_kernel(), cispmv::has_block_apply<Plan>::value) << format;
    EXPECT_EQ(ref.num_rows(), A.num_rows);
    const auto direct = cispmv::solvers::davidson(TEST_EXECSPACE(), plan, diagonal, opts);
    const auto through = cispmv::solvers::davidson(TEST_EXECSPACE(), ref, diagonal, opts);
    ASSERT_TRUE(direct.converged && through.converged) << format;
    EXPECT_EQ(through.iterations, direct.iterations) << format;
    EXPECT_EQ(through.num_spmv, direct.num_spmv) << format;
    for (int c = 0; c < opts.num_roots; ++c)
      EXPECT_NEAR(through.eigenvalues[c], direct.eigenvalues[c], 1e-12) << format << ", root " << c;
  };
  const auto csr = cispmv::to_device<TEST_EXECSPACE>(A);
  using CsrPlan = cispmv::SpmvPlan<TEST_EXECSPACE, std::decay_t<decltype(csr)>>;
  ASSERT_TRUE(cispmv::has_block_apply<CsrPlan>::value);
  check(csr, "csr");
  check(cispmv::to_device<TEST_EXECSPACE>(cispmv::to_ell(A)), "ell");
}

// The start rows' search on the backend (smallest_candidates: used where the diagonal is on a GPU) keeps every row
// at or below its threshold, so the smallest (entry, row) pairs are among them, ties included.
TEST(TEST_CATEGORY, DavidsonFindsTheSmallestDiagonalEntriesOnTheBackend) {
  const std::size_t n = 50000;
  std::vector<double> values(n);
  std::mt19937 rng(5);
  std::uniform_int_distribution<int> level(0, 4000);  // many ties
  for (auto& v : values) v = -3.0 + 0.001 * level(rng);
  Kokkos::View<double*, TEST_MEMSPACE> d("diagonal", n);
  const Kokkos::View<const double*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>> host(values.data(), n);
  Kokkos::deep_copy(d, host);
  std::vector<std::pair<double, std::size_t>> sorted;
  for (std::size_t i = 0; i < n; ++i) sorted.emplace_back(values[i], i);
  std::sort(sorted.begin(), sorted.end());
  for (const std::size_t count : {std::size_t(1), std::size_t(8), std::size_t(300)}) {
    auto found = cispmv::solvers::impl::smallest_candidates(TEST_EXECSPACE(), d, count);
    ASSERT_GE(found.size(), count);
    EXPECT_LE(found.size(), std::max<std::size_t>(4 * count, 1024) + 200) << "a cut near the count (ties aside)";
    double threshold = -1e300;
    for (const auto& f : found) threshold = std::max(threshold, f.first);
    std::size_t below = 0;
    for (const double v : values) below += v <= threshold;
    EXPECT_EQ(found.size(), below) << "every row at or below the threshold";
    std::sort(found.begin(), found.end());
    for (std::size_t j = 0; j < count; ++j) EXPECT_EQ(found[j], sorted[j]) << "count " << count << ", pair " << j;
  }
  EXPECT_EQ(cispmv::solvers::impl::smallest_candidates(TEST_EXECSPACE(), d, n + 5).size(), n);
  values[123] = std::numeric_limits<double>::quiet_NaN();
  Kokkos::deep_copy(d, host);
  EXPECT_TRUE(cispmv::solvers::impl::smallest_candidates(TEST_EXECSPACE(), d, 8).empty()) << "NaN: left to the host";
}

// A NaN in the matrix must not be reported as converged (max(0, NaN) is 0 in a naive test).
TEST(TEST_CATEGORY, DavidsonDoesNotConvergeOnNaN) {
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
