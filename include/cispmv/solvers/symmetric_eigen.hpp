#pragma once
/// \file solvers/symmetric_eigen.hpp
/// A small dense symmetric eigensolver (cyclic Jacobi) for Davidson's projected matrices.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <numeric>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace cispmv::solvers {

/// Eigenvalues (ascending) and eigenvectors of a real symmetric n x n matrix.
struct SymmetricEigen {
  int n = 0;
  std::vector<double> values;   ///< n eigenvalues, ascending
  std::vector<double> vectors;  ///< column-major n x n: component i of eigenvector k is vectors[k * n + i]
  int sweeps = 0;               ///< Jacobi sweeps used
};

/// Cyclic Jacobi eigensolver for a small dense symmetric matrix `a` (row-major n x n; only its
/// symmetric part matters). Accurate to a few ulps of max|a|, O(n^3) per sweep, typically 6-10
/// sweeps: meant for Davidson's projected matrices (n <= a few hundred) and for tests, where a
/// self-contained solver avoids a LAPACK dependency. Throws std::invalid_argument if a.size() != n*n.
inline SymmetricEigen jacobi_eigen(std::vector<double> a, int n, int max_sweeps = 100) {
  if (n < 0 || a.size() != static_cast<std::size_t>(n) * static_cast<std::size_t>(n)) {
    throw std::invalid_argument("cispmv::solvers::jacobi_eigen: the matrix has " + std::to_string(a.size()) +
                                " entries, expected n*n = " + std::to_string(static_cast<long long>(n) * n));
  }
  const std::size_t N = static_cast<std::size_t>(n);
  auto A = [&](std::size_t i, std::size_t j) -> double& { return a[i * N + j]; };
  for (std::size_t i = 0; i < N; ++i) {
    for (std::size_t j = 0; j < i; ++j) A(i, j) = A(j, i) = 0.5 * (A(i, j) + A(j, i));
  }
  std::vector<double> v(N * N, 0.0);
  for (std::size_t i = 0; i < N; ++i) v[i * N + i] = 1.0;
  double frob = 0.0;
  for (double x : a) frob += x * x;
  frob = std::sqrt(frob);

  SymmetricEigen out;
  out.n = n;
  for (out.sweeps = 0; out.sweeps < max_sweeps; ++out.sweeps) {
    double off = 0.0;
    for (std::size_t p = 0; p < N; ++p) {
      for (std::size_t q = p + 1; q < N; ++q) off += A(p, q) * A(p, q);
    }
    // Off-diagonal mass below the rounding level of the matrix: the diagonal is the spectrum.
    if (std::sqrt(off) <= 1e-17 * frob || off == 0.0) break;
    for (std::size_t p = 0; p < N; ++p) {
      for (std::size_t q = p + 1; q < N; ++q) {
        const double apq = A(p, q);
        if (apq == 0.0) continue;
        // Rotation that zeroes A(p,q); t is the smaller root of t^2 + 2 theta t - 1 = 0 (stable).
        const double theta = (A(q, q) - A(p, p)) / (2.0 * apq);
        const double t = (theta >= 0 ? 1.0 : -1.0) / (std::abs(theta) + std::sqrt(theta * theta + 1.0));
        const double c = 1.0 / std::sqrt(t * t + 1.0);
        const double s = t * c;
        for (std::size_t k = 0; k < N; ++k) {
          const double akp = A(k, p);
          const double akq = A(k, q);
          A(k, p) = c * akp - s * akq;
          A(k, q) = s * akp + c * akq;
        }
        for (std::size_t k = 0; k < N; ++k) {
          const double apk = A(p, k);
          const double aqk = A(q, k);
          A(p, k) = c * apk - s * aqk;
          A(q, k) = s * apk + c * aqk;
        }
        A(p, q) = A(q, p) = 0.0;
        for (std::size_t k = 0; k < N; ++k) {
          const double vkp = v[p * N + k];
          const double vkq = v[q * N + k];
          v[p * N + k] = c * vkp - s * vkq;
          v[q * N + k] = s * vkp + c * vkq;
        }
      }
    }
  }
  std::vector<std::size_t> order(N);
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) { return A(x, x) < A(y, y); });
  out.values.resize(N);
  out.vectors.resize(N * N);
  for (std::size_t k = 0; k < N; ++k) {
    out.values[k] = A(order[k], order[k]);
    std::copy(v.begin() + static_cast<std::ptrdiff_t>(order[k] * N),
              v.begin() + static_cast<std::ptrdiff_t>((order[k] + 1) * N),
              out.vectors.begin() + static_cast<std::ptrdiff_t>(k * N));
  }
  return out;
}

/// Eigenpairs of a real symmetric n x n matrix `a` (row-major) whose rows and columns belong to blocks
/// (`block[i]` >= 0 for row i), ascending. Where no entry couples two blocks (a Davidson's projected
/// matrix over basis vectors that each lie in one irreducible representation), each block's part is
/// solved alone by jacobi_eigen: n_b^3 work per block instead of n^3, and every eigenvector is exactly
/// zero outside its block. Pairs of equal value keep the order of their blocks. Where an entry couples
/// two blocks, or a row has no block (< 0), the matrix is solved whole. Throws std::invalid_argument if
/// a.size() != n*n or block.size() != n.
inline SymmetricEigen blockwise_eigen(std::vector<double> a, int n, const std::vector<int>& block) {
  if (n < 0 || a.size() != static_cast<std::size_t>(n) * static_cast<std::size_t>(n) ||
      block.size() != static_cast<std::size_t>(n)) {
    throw std::invalid_argument("cispmv::solvers::blockwise_eigen: the matrix has " + std::to_string(a.size()) +
                                " entries and " + std::to_string(block.size()) +
                                " block labels for n = " + std::to_string(n));
  }
  const std::size_t N = static_cast<std::size_t>(n);
  int blocks = 0;
  bool split = true;
  for (std::size_t i = 0; i < N && split; ++i) {
    if (block[i] < 0) split = false;
    blocks = std::max(blocks, block[i] + 1);
    for (std::size_t j = i + 1; j < N && split; ++j) {
      if (block[j] != block[i] && (a[i * N + j] != 0.0 || a[j * N + i] != 0.0)) split = false;
    }
  }
  if (!split || blocks <= 1) return jacobi_eigen(std::move(a), n);
  std::vector<std::vector<std::size_t>> members(static_cast<std::size_t>(blocks));
  for (std::size_t i = 0; i < N; ++i) members[static_cast<std::size_t>(block[i])].push_back(i);
  struct Pair {
    double value;
    std::size_t block, index;  // eigenpair `index` of block `block`
  };
  std::vector<SymmetricEigen> parts(members.size());
  std::vector<Pair> pairs;
  SymmetricEigen out;
  out.n = n;
  for (std::size_t b = 0; b < members.size(); ++b) {
    const std::vector<std::size_t>& idx = members[b];
    const std::size_t nb = idx.size();
    if (nb == 0) continue;
    std::vector<double> sub(nb * nb);
    for (std::size_t i = 0; i < nb; ++i) {
      for (std::size_t j = 0; j < nb; ++j) sub[i * nb + j] = a[idx[i] * N + idx[j]];
    }
    parts[b] = jacobi_eigen(std::move(sub), static_cast<int>(nb));
    out.sweeps = std::max(out.sweeps, parts[b].sweeps);
    for (std::size_t k = 0; k < nb; ++k) pairs.push_back({parts[b].values[k], b, k});
  }
  std::stable_sort(pairs.begin(), pairs.end(), [](const Pair& x, const Pair& y) { return x.value < y.value; });
  out.values.resize(N);
  out.vectors.assign(N * N, 0.0);
  for (std::size_t k = 0; k < N; ++k) {
    const Pair& p = pairs[k];
    const std::vector<std::size_t>& idx = members[p.block];
    const std::size_t nb = idx.size();
    out.values[k] = p.value;
    for (std::size_t i = 0; i < nb; ++i) out.vectors[k * N + idx[i]] = parts[p.block].vectors[p.index * nb + i];
  }
  return out;
}

}  // namespace cispmv::solvers
