#pragma once
/// \file davidson.hpp
/// Davidson's eigensolver for the lowest roots of a real symmetric matrix in any cispmv format, with
/// cispmv::spmv as its matrix-vector product (the inner loop of CI; Mahmoud et al. 2018, section 2),
/// and the small dense symmetric Jacobi eigensolver it uses for the projected problem.

#include <Kokkos_Core.hpp>

#include <cispmv/spmv.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <numeric>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace cispmv {

// ------------------------------------------------------------------------------- dense Jacobi
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
    throw std::invalid_argument("cispmv::jacobi_eigen: the matrix has " + std::to_string(a.size()) +
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

// ---------------------------------------------------------------------------------- Davidson
/// Settings of davidson().
///
/// Convergence: a root is converged when its residual ||A x - theta x||_2 (x normalised) is below
/// `residual_tolerance`. The eigenvalue error is then about residual^2 / gap, so the default 1e-6
/// gives energies to ~1e-11 Eh for gaps of 0.1 Eh; 1e-5 suffices for 1e-8 Eh.
struct DavidsonOptions {
  int num_roots = 1;                  ///< lowest eigenvalues wanted
  double residual_tolerance = 1e-6;   ///< on the 2-norm of every root's residual
  int max_iterations = 200;           ///< subspace expansions (each one SpMV per unconverged root)
  int max_subspace = 0;               ///< basis size that triggers a restart; 0: max(24, 8 * num_roots)
  int restart_size = 0;               ///< Ritz vectors kept at a restart; 0: 2 * num_roots
  /// Start vectors: unit vectors on this many smallest diagonal entries (0: num_roots; at least
  /// num_roots, at most max_subspace). More of them guard against missing a root whose eigenvector
  /// is (nearly) orthogonal to the first guesses, e.g. in a block the guesses do not couple to.
  int num_guesses = 0;
  double denominator_guard = 1e-4;    ///< |theta - D_i| is raised to at least this in (D - theta)^-1
  double linear_dependence = 1e-10;   ///< a correction whose norm drops below this (relative) is discarded
  SpmvOptions spmv = {};              ///< passed to every cispmv::spmv call
};

/// Result of davidson(): eigenpairs, convergence and the time split.
template <class MemorySpace>
struct DavidsonResult {
  std::vector<double> eigenvalues;     ///< num_roots lowest Ritz values, ascending
  std::vector<double> residual_norms;  ///< final ||A x - theta x|| per root
  std::vector<double> max_residual_history;  ///< largest residual of the wanted roots, per iteration
  /// num_rows x num_roots Ritz vectors (orthonormal columns), in the matrix's memory space.
  Kokkos::View<double**, Kokkos::LayoutLeft, MemorySpace> eigenvectors;
  bool converged = false;
  int iterations = 0;  ///< subspace expansions done
  int restarts = 0;
  int num_spmv = 0;
  int subspace_size = 0;         ///< basis size at the end
  double total_seconds = 0.0;    ///< the whole solve, fenced
  double spmv_seconds = 0.0;     ///< inside cispmv::spmv, fenced before and after each call
  double spmv_share() const { return total_seconds > 0 ? spmv_seconds / total_seconds : 0.0; }
};

namespace impl {

template <class Exec, class X, class Y>
double davidson_dot(const Exec& exec, const X& x, const Y& y) {
  double sum = 0.0;
  Kokkos::parallel_reduce(
      "cispmv::davidson::dot", Kokkos::RangePolicy<Exec>(exec, 0, x.extent(0)),
      KOKKOS_LAMBDA(const std::size_t i, double& s) { s += x(i) * y(i); }, sum);
  return sum;
}

/// One step of modified Gram-Schmidt fused with the dot product the next step needs:
/// t -= h v, then returns <next, t> with the updated t (next may be t itself: its squared norm).
/// Halves the kernel launches of MGS without changing its arithmetic.
template <class Exec, class V, class T, class N>
double davidson_mgs_step(const Exec& exec, const double h, const V& v, const T& t, const N& next) {
  double sum = 0.0;
  Kokkos::parallel_reduce(
      "cispmv::davidson::mgs", Kokkos::RangePolicy<Exec>(exec, 0, t.extent(0)),
      KOKKOS_LAMBDA(const std::size_t i, double& s) {
        const double ti = t(i) - h * v(i);
        t(i) = ti;
        s += next(i) * ti;
      },
      sum);
  return sum;
}

template <class Exec, class X>
void davidson_scale(const Exec& exec, const double alpha, const X& x) {
  Kokkos::parallel_for(
      "cispmv::davidson::scale", Kokkos::RangePolicy<Exec>(exec, 0, x.extent(0)),
      KOKKOS_LAMBDA(const std::size_t i) { x(i) *= alpha; });
}

/// out[c] = sum_i P(i, c) * Q(i, c) for c < value_count when `q_is_vector` is false, else
/// sum_i P(i, c) * q(i): all the dot products one step needs (a row of V^T A V, the residual norms)
/// in a single reduction.
template <class Basis, class Vec>
struct DavidsonMultiDot {
  using value_type = double[];
  unsigned value_count;
  Basis P, Q;
  Vec q;
  bool q_is_vector;

  KOKKOS_INLINE_FUNCTION void operator()(const std::size_t i, value_type sum) const {
    if (q_is_vector) {
      const double qi = q(i);
      for (unsigned c = 0; c < value_count; ++c) sum[c] += P(i, c) * qi;
    } else {
      for (unsigned c = 0; c < value_count; ++c) sum[c] += P(i, c) * Q(i, c);
    }
  }
  KOKKOS_INLINE_FUNCTION void init(value_type sum) const {
    for (unsigned c = 0; c < value_count; ++c) sum[c] = 0.0;
  }
  KOKKOS_INLINE_FUNCTION void join(volatile double* dst, const volatile double* src) const {
    for (unsigned c = 0; c < value_count; ++c) dst[c] += src[c];
  }
};

template <class Exec, class Basis, class Vec>
std::vector<double> davidson_multi_dot(const Exec& exec, const Basis& P, const Basis& Q, const Vec& q, int count,
                                       bool q_is_vector) {
  std::vector<double> out(static_cast<std::size_t>(count), 0.0);
  if (count == 0) return out;
  const auto Pc = Kokkos::subview(P, Kokkos::ALL(), Kokkos::make_pair(0, count));
  const auto Qc = Kokkos::subview(Q, Kokkos::ALL(), Kokkos::make_pair(0, q_is_vector ? 1 : count));
  using Sub = std::remove_const_t<decltype(Pc)>;
  DavidsonMultiDot<Sub, Vec> f{static_cast<unsigned>(count), Pc, Qc, q, q_is_vector};
  Kokkos::parallel_reduce("cispmv::davidson::multi_dot", Kokkos::RangePolicy<Exec>(exec, 0, P.extent(0)), f,
                          Kokkos::View<double*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged>(out.data(), out.size()));
  exec.fence();
  return out;
}

/// out(:, c) = sum_{j < m} (P(:, j) - shift[c] * Q(:, j)) * Y(j, c) for c < ncols: the Ritz vectors
/// (shift 0, Q unused) and the residuals AV y - theta V y of the projected solution.
template <class Exec, class Basis, class Small, class Shift>
void davidson_combine(const Exec& exec, const Basis& P, const Basis& Q, const Small& Y, const Shift& shift, int m,
                      int ncols, const Basis& out, bool use_q) {
  Kokkos::parallel_for(
      "cispmv::davidson::combine", Kokkos::RangePolicy<Exec>(exec, 0, P.extent(0)), KOKKOS_LAMBDA(const std::size_t i) {
        for (int c = 0; c < ncols; ++c) {
          double sum = 0.0;
          for (int j = 0; j < m; ++j) {
            const double p = use_q ? P(i, j) - shift(c) * Q(i, j) : P(i, j);
            sum += p * Y(j, c);
          }
          out(i, c) = sum;
        }
      });
}

}  // namespace impl

/// Lowest `opts.num_roots` eigenpairs of the symmetric matrix `A` (any cispmv format) by Davidson's
/// method with the diagonal preconditioner t = (D - theta)^-1 r.
///
/// `diagonal` holds A's diagonal in a memory space `exec` can access (csr_diagonal gives it for CSR).
/// The basis V and the products AV = A V are LayoutLeft Views of num_rows x max_subspace in A's memory
/// space; every operation runs on `exec`, only the projected matrix G = V^T A V lives on the host,
/// where jacobi_eigen solves it. Start: unit vectors on the smallest diagonal entries. Each
/// iteration: Ritz pairs of G, residuals, stop if all wanted residuals are below the tolerance, else
/// one preconditioned correction per unconverged root, orthogonalised against V by modified
/// Gram-Schmidt applied twice (one pass loses orthogonality when the correction is nearly in the
/// span), discarded when (nearly) linearly dependent, normalised and appended; its product with A
/// is one cispmv::spmv. When the basis would exceed max_subspace it restarts from the lowest
/// restart_size Ritz vectors (AV is combined the same way: no extra SpMV). Like any Krylov-type
/// method it cannot leave an invariant subspace that holds all its start vectors (a block of the
/// matrix they do not couple to, e.g. another symmetry): see DavidsonOptions::num_guesses. Throws
/// std::invalid_argument on a non-square matrix, a diagonal of the wrong size or impossible options.
template <class Exec, class Matrix, class DiagView>
DavidsonResult<typename Matrix::memory_space> davidson(const Exec& exec, const Matrix& A, const DiagView& diagonal,
                                                       const DavidsonOptions& opts = {}) {
  using memory_space = typename Matrix::memory_space;
  using Basis = Kokkos::View<double**, Kokkos::LayoutLeft, memory_space>;
  using Vec = Kokkos::View<double*, memory_space>;
  static_assert(std::is_same_v<typename Matrix::value_type, double>, "cispmv::davidson: double matrices only");
  static_assert(Kokkos::SpaceAccessibility<Exec, memory_space>::accessible,
                "cispmv::davidson: the matrix's memory space is not accessible from this execution space");
  static_assert(Kokkos::SpaceAccessibility<Exec, typename DiagView::memory_space>::accessible,
                "cispmv::davidson: the diagonal is not accessible from this execution space");

  Kokkos::Timer total_timer;
  const std::size_t n = static_cast<std::size_t>(A.num_rows);
  const int k = opts.num_roots;
  if (A.num_rows != A.num_cols) {
    throw std::invalid_argument("cispmv::davidson: the matrix is " + std::to_string(A.num_rows) + " x " +
                                std::to_string(A.num_cols) + ", not square");
  }
  if (diagonal.extent(0) != n) {
    throw std::invalid_argument("cispmv::davidson: the diagonal has " + std::to_string(diagonal.extent(0)) +
                                " entries for " + std::to_string(n) + " rows");
  }
  if (k < 1 || static_cast<std::size_t>(k) > n) {
    throw std::invalid_argument("cispmv::davidson: num_roots = " + std::to_string(k) + " for a matrix of " +
                                std::to_string(n) + " rows");
  }
  const std::size_t wanted_sub =
      static_cast<std::size_t>(opts.max_subspace > 0 ? opts.max_subspace : std::max(24, 8 * k));
  const int max_sub = static_cast<int>(std::min(n, wanted_sub));
  const int keep = std::min(max_sub - k, std::max(k, opts.restart_size > 0 ? opts.restart_size : 2 * k));
  // A restart keeps at least the wanted roots and leaves room for one correction per root, unless
  // the basis may grow to span the whole space.
  if (static_cast<std::size_t>(max_sub) < n && keep < k) {
    throw std::invalid_argument("cispmv::davidson: max_subspace = " + std::to_string(max_sub) +
                                " is too small for " + std::to_string(k) + " roots (need >= 2 * num_roots)");
  }

  const int guesses = std::min(max_sub, std::max(k, opts.num_guesses));
  Kokkos::Profiling::pushRegion("cispmv::davidson");

  DavidsonResult<memory_space> res;
  // Every allocation is left uninitialised (each entry is written before it is read) and bound to
  // `exec`, so that nothing runs on another execution space behind the caller's back.
  const int ncols = std::max(k, keep);
  auto alloc = [&](const char* label) { return Kokkos::view_alloc(exec, std::string(label), Kokkos::WithoutInitializing); };
  Basis V(alloc("cispmv::davidson::V"), n, max_sub);
  Basis AV(alloc("cispmv::davidson::AV"), n, max_sub);
  Basis R(alloc("cispmv::davidson::R"), n, ncols);  // residuals
  Basis W(alloc("cispmv::davidson::W"), n, ncols);  // scratch of the restart
  Basis Y(alloc("cispmv::davidson::Y"), max_sub, ncols);  // Ritz coefficients, copied from the host
  Vec theta(alloc("cispmv::davidson::theta"), ncols);
  auto Y_host = Kokkos::create_mirror_view(Y);
  auto theta_host = Kokkos::create_mirror_view(theta);
  std::vector<double> G(static_cast<std::size_t>(max_sub) * max_sub, 0.0);  // V^T A V, row-major on the host
  auto g = [&](int i, int j) -> double& { return G[static_cast<std::size_t>(i) * max_sub + j]; };

  auto column = [](const Basis& B, int j) { return Kokkos::subview(B, Kokkos::ALL(), j); };
  auto apply = [&](int j) {
    exec.fence();
    Kokkos::Timer t;
    spmv(exec, 1.0, A, column(V, j), 0.0, column(AV, j), opts.spmv);
    exec.fence();
    res.spmv_seconds += t.seconds();
    ++res.num_spmv;
  };
  // Orthonormalises column m of V against columns 0..m-1 by modified Gram-Schmidt, twice (one pass
  // loses orthogonality when the correction is nearly in the span); false when it is linearly
  // dependent. Each MGS step is fused with the next step's dot product.
  auto orthonormalise = [&](int m) {
    auto t = column(V, m);
    const double norm0 = std::sqrt(impl::davidson_dot(exec, t, t));
    if (!(norm0 > 0.0) || !std::isfinite(norm0)) return false;
    double h = m > 0 ? impl::davidson_dot(exec, column(V, 0), t) : norm0 * norm0;
    for (int pass = 0; pass < 2; ++pass) {
      for (int j = 0; j < m; ++j) {
        if (j + 1 < m) {
          h = impl::davidson_mgs_step(exec, h, column(V, j), t, column(V, j + 1));
        } else if (pass == 0) {
          h = impl::davidson_mgs_step(exec, h, column(V, j), t, column(V, 0));
        } else {
          h = impl::davidson_mgs_step(exec, h, column(V, j), t, t);  // h = |t|^2
        }
      }
    }
    const double norm = std::sqrt(h);
    if (!(norm > opts.linear_dependence * norm0)) return false;
    impl::davidson_scale(exec, 1.0 / norm, t);
    return true;
  };
  // Adds A V(:, j) and the new row/column of G for the columns [first, m).
  auto extend_projection = [&](int first, int m) {
    for (int j = first; j < m; ++j) {
      apply(j);
      const std::vector<double> row = impl::davidson_multi_dot(exec, V, V, column(AV, j), j + 1, true);
      for (int i = 0; i <= j; ++i) g(i, j) = g(j, i) = row[i];
    }
  };

  // Initial guesses: unit vectors on the smallest diagonal entries (ties by row, for determinism).
  {
    auto d_host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), diagonal);
    std::vector<std::size_t> order(n);
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::partial_sort(order.begin(), order.begin() + guesses, order.end(), [&](std::size_t x, std::size_t y) {
      return d_host(x) < d_host(y) || (d_host(x) == d_host(y) && x < y);
    });
    Kokkos::View<std::size_t*, memory_space> guess_rows(alloc("cispmv::davidson::guess_rows"), guesses);
    auto guess_rows_host = Kokkos::create_mirror_view(guess_rows);
    for (int c = 0; c < guesses; ++c) guess_rows_host(c) = order[c];
    Kokkos::deep_copy(exec, guess_rows, guess_rows_host);
    Kokkos::parallel_for(
        "cispmv::davidson::guess", Kokkos::RangePolicy<Exec>(exec, 0, n), KOKKOS_LAMBDA(const std::size_t i) {
          for (int c = 0; c < guesses; ++c) V(i, c) = i == guess_rows(c) ? 1.0 : 0.0;
        });
    exec.fence();
  }
  int m = guesses;
  extend_projection(0, m);

  std::vector<double> residual(static_cast<std::size_t>(k), 0.0);
  while (true) {
    // Ritz pairs of the projected problem.
    std::vector<double> Gm(static_cast<std::size_t>(m) * m);
    for (int i = 0; i < m; ++i) {
      for (int j = 0; j < m; ++j) Gm[static_cast<std::size_t>(i) * m + j] = g(i, j);
    }
    const SymmetricEigen eig = jacobi_eigen(Gm, m);
    const int nvec = std::min(m, std::max(k, keep));
    for (int c = 0; c < nvec; ++c) {
      theta_host(c) = eig.values[c];
      for (int j = 0; j < m; ++j) Y_host(j, c) = eig.vectors[static_cast<std::size_t>(c) * m + j];
    }
    Kokkos::deep_copy(exec, Y, Y_host);
    Kokkos::deep_copy(exec, theta, theta_host);
    exec.fence();  // the host mirrors are rewritten later in this iteration

    // Residuals r_c = (AV - theta_c V) y_c of the wanted roots.
    impl::davidson_combine(exec, AV, V, Y, theta, m, k, R, true);
    const std::vector<double> r2 = impl::davidson_multi_dot(exec, R, R, column(R, 0), k, false);
    double worst = 0.0;
    for (int c = 0; c < k; ++c) {
      residual[c] = std::sqrt(r2[c]);
      worst = std::max(worst, residual[c]);
    }
    res.max_residual_history.push_back(worst);
    const bool done = worst < opts.residual_tolerance;
    // A full basis spans the space: its Ritz pairs are exact, nothing to add.
    if (done || res.iterations >= opts.max_iterations || static_cast<std::size_t>(m) == n) {
      res.converged = done || static_cast<std::size_t>(m) == n;
      break;
    }

    int unconverged = 0;
    for (int c = 0; c < k; ++c) unconverged += residual[c] >= opts.residual_tolerance;

    // Restart: V <- V Y(:, 0:keep), AV <- AV Y(:, 0:keep), G <- diag(theta).
    if (m + unconverged > max_sub && m > nvec) {
      const auto first_nvec = Kokkos::make_pair(0, nvec);
      impl::davidson_combine(exec, V, V, Y, theta, m, nvec, W, false);
      Kokkos::deep_copy(exec, Kokkos::subview(V, Kokkos::ALL(), first_nvec), Kokkos::subview(W, Kokkos::ALL(), first_nvec));
      impl::davidson_combine(exec, AV, AV, Y, theta, m, nvec, W, false);
      Kokkos::deep_copy(exec, Kokkos::subview(AV, Kokkos::ALL(), first_nvec), Kokkos::subview(W, Kokkos::ALL(), first_nvec));
      std::fill(G.begin(), G.end(), 0.0);
      for (int c = 0; c < nvec; ++c) g(c, c) = eig.values[c];
      for (int c = 0; c < nvec; ++c) {
        for (int j = 0; j < nvec; ++j) Y_host(j, c) = j == c ? 1.0 : 0.0;
      }
      Kokkos::deep_copy(exec, Y, Y_host);
      exec.fence();
      m = nvec;
      ++res.restarts;
    }

    // Preconditioned corrections t = (D - theta)^-1 r for the unconverged roots, appended to V.
    const int first = m;
    for (int c = 0; c < k; ++c) {
      if (residual[c] < opts.residual_tolerance) continue;
      if (m == max_sub) break;  // only when max_sub == n < 2 * num_roots: no room for more
      auto t = column(V, m);
      auto r = column(R, c);
      const double th = eig.values[c];
      const double guard = opts.denominator_guard;
      Kokkos::parallel_for(
          "cispmv::davidson::precondition", Kokkos::RangePolicy<Exec>(exec, 0, n), KOKKOS_LAMBDA(const std::size_t i) {
            double den = diagonal(i) - th;
            if (den < guard && den > -guard) den = den < 0 ? -guard : guard;
            t(i) = r(i) / den;
          });
      if (orthonormalise(m)) ++m;
    }
    if (m == first) {
      // Every correction lay in the span: the basis cannot grow, so the solve has stagnated.
      break;
    }
    extend_projection(first, m);
    ++res.iterations;
  }

  // Ritz vectors of the wanted roots.
  res.eigenvalues.assign(theta_host.data(), theta_host.data() + k);
  res.residual_norms = residual;
  res.subspace_size = m;
  res.eigenvectors = Basis(alloc("cispmv::davidson::eigenvectors"), n, k);
  impl::davidson_combine(exec, V, V, Y, theta, m, k, res.eigenvectors, false);
  exec.fence();
  res.total_seconds = total_timer.seconds();
  Kokkos::Profiling::popRegion();
  return res;
}

}  // namespace cispmv
