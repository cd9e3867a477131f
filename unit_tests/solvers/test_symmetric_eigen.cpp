// The dense symmetric eigensolver of the Davidson's projected problem: Jacobi's pairs, and uncoupled blocks
// solved alone.
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

TEST(SymmetricEigen, JacobiEigenpairsSatisfyTheEigenEquation) {
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
TEST(SymmetricEigen, BlockwiseEigenSolvesUncoupledBlocksAlone) {
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
