#pragma once
/// \file solvers/symmetric_eigen.hpp
/// A small dense symmetric eigensolver (cyclic Jacobi) for Davidson's projected matrices.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <numeric>
#include <stdexcept>
#include <string>
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

}  // namespace cispmv::solvers
