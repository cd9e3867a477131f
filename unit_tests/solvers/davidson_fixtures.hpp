#pragma once
// Fixtures of the backend tests of the eigensolver (compiled with TEST_EXECSPACE, backend_<name>.hpp): a Davidson on
// TEST_EXECSPACE from a host matrix, a dense copy of a host matrix, and random sparse symmetric matrices.
#include <gtest/gtest.h>
#include <Kokkos_Core.hpp>

#include "cispmv/ci.hpp"
#include "cispmv/convert.hpp"
#include "cispmv/spmv.hpp"
#include "test_utils.hpp"

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

namespace cispmv::test {

// The lowest eigenpairs of a host CSR matrix by Davidson in `Format` on TEST_EXECSPACE.
template <class HostMatrix>
inline auto davidson_on_backend(const HostMatrix& A_host, const cispmv::HostCsr& H,
                                const cispmv::solvers::DavidsonOptions& opts) {
  const auto A = cispmv::to_device<TEST_EXECSPACE>(A_host);
  const auto diagonal =
      Kokkos::create_mirror_view_and_copy(TEST_EXECSPACE::memory_space(), cispmv::ci::csr_diagonal(H));
  return cispmv::solvers::davidson(TEST_EXECSPACE(), A, diagonal, opts);
}

// Dense row-major copy of a host CSR matrix.
inline std::vector<double> dense_of(const cispmv::HostCsr& A) {
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
inline cispmv::HostCsr random_symmetric(int n, std::uint64_t seed, double density = 0.1) {
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

}  // namespace cispmv::test
