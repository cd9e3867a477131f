#pragma once
// Shared test helpers: deterministic random matrices, the paper's example, allclose, and the
// "every format x kernel against the host oracle" driver.

#include <gtest/gtest.h>
#include <Kokkos_Core.hpp>

#include "cispmv/cispmv.hpp"
#include "cispmv/impl/hash.hpp"

#include <cmath>
#include <cstdint>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

namespace cispmv::test {

/// splitmix64 (cispmv/impl/hash.hpp): tiny, deterministic on every platform.
struct Rng {
  impl::SplitMix64 rng;
  explicit Rng(std::uint64_t seed) : rng(seed) {}
  std::uint64_t next() { return rng.next(); }
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }  // [0, 1)
  int below(int n) { return static_cast<int>(next() % static_cast<std::uint64_t>(n)); }
};

/// The 6 x 5 example of the paper, sections 3.2-3.4 (8 nonzeros). Section 3.1 prints its matrix
/// with an extra 3 in row 3, but its Value/Column/RowPtr listing (8 entries) and every later section
/// use this one.
inline HostCsr paper_example() {
  CooMatrix<double, int> coo;
  coo.num_rows = 6;
  coo.num_cols = 5;
  coo.row_idx = {0, 1, 1, 2, 2, 3, 4, 5};
  coo.col_idx = {0, 2, 4, 1, 4, 2, 3, 4};
  coo.values = {1, 2, 3, 4, 5, 6, 7, 8};
  return from_coo(coo);
}

/// rows x cols with `per_row` entries per row at random distinct columns, values drawn from
/// `distinct` values (a CI matrix's few distinct integrals), sorted rows.
inline HostCsr few_valued(int rows, int cols, int per_row, int distinct, std::uint64_t seed, int spread = 0) {
  Rng rng(seed);
  CooMatrix<double, int> coo;
  coo.num_rows = rows;
  coo.num_cols = cols;
  for (int r = 0; r < rows; ++r) {
    std::vector<int> picked;
    const int length = spread > 0 ? per_row - spread + rng.below(2 * spread + 1) : per_row;  // per_row +- spread
    while (static_cast<int>(picked.size()) < length) {
      const int c = rng.below(cols);
      if (std::find(picked.begin(), picked.end(), c) == picked.end()) picked.push_back(c);
    }
    for (int c : picked) {
      coo.row_idx.push_back(r);
      coo.col_idx.push_back(c);
      coo.values.push_back(0.125 * (1 + rng.below(distinct)) - 0.0625 * distinct);
    }
  }
  return from_coo(coo);
}

/// Random irregular matrix: row lengths drawn from a mix of empty rows, short rows (< a warp) and
/// rows far longer than a warp (up to max_len), distinct sorted columns, values in +-[0.5, 1.5].
template <class Scalar = double, class Offset = std::size_t>
HostCsrMatrix<Scalar, int, Offset> random_irregular(int rows, int cols, std::uint64_t seed, int max_len) {
  Rng rng(seed);
  CooMatrix<Scalar, int> coo;
  coo.num_rows = rows;
  coo.num_cols = cols;
  std::vector<char> used(cols, 0);
  for (int r = 0; r < rows; ++r) {
    const int kind = rng.below(10);
    int len = kind == 0 ? 0 : kind < 5 ? rng.below(8) + 1 : rng.below(max_len + 1);
    len = std::min(len, cols);
    std::vector<int> picked;
    while (static_cast<int>(picked.size()) < len) {
      const int c = rng.below(cols);
      if (!used[c]) {
        used[c] = 1;
        picked.push_back(c);
      }
    }
    for (int c : picked) {
      used[c] = 0;
      coo.row_idx.push_back(r);
      coo.col_idx.push_back(c);
      const double v = 0.5 + rng.uniform();
      coo.values.push_back(static_cast<Scalar>(rng.below(2) ? v : -v));
    }
  }
  return from_coo<Offset>(coo);
}

template <class Scalar>
Kokkos::View<Scalar*, Kokkos::HostSpace> random_vector(std::size_t n, std::uint64_t seed) {
  Kokkos::View<Scalar*, Kokkos::HostSpace> v("x", n);
  Rng rng(seed);
  for (std::size_t i = 0; i < n; ++i) v(i) = static_cast<Scalar>(2.0 * rng.uniform() - 1.0);
  return v;
}

/// |a(i) - b(i)| <= tol for every i, with the first failures listed.
template <class A, class B>
::testing::AssertionResult allclose(const A& a, const B& b, double tol) {
  auto ha = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), a);
  auto hb = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), b);
  if (ha.extent(0) != hb.extent(0)) {
    return ::testing::AssertionFailure() << "extents differ: " << ha.extent(0) << " vs " << hb.extent(0);
  }
  std::ostringstream os;
  int bad = 0;
  for (std::size_t i = 0; i < ha.extent(0); ++i) {
    const double x = static_cast<double>(ha(i)), y = static_cast<double>(hb(i));
    if (!(std::abs(x - y) <= tol)) {  // also catches NaN
      if (bad < 5) os << "\n  [" << i << "] " << x << " vs " << y << " (diff " << std::abs(x - y) << ")";
      ++bad;
    }
  }
  if (bad == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << bad << " of " << ha.extent(0) << " entries differ by more than " << tol << ":"
                                       << os.str();
}

/// Runs y = beta*y + alpha*A*x with `Matrix` (a host format, moved to Exec's memory space) and
/// `kernel`, and compares with the host oracle on the CSR matrix `oracle`.
template <class Exec, class HostFormat, class Scalar, class Offset>
void expect_matches_oracle(const HostFormat& host_format, const HostCsrMatrix<Scalar, int, Offset>& oracle,
                           SpmvOptions opts, Scalar alpha, Scalar beta, std::uint64_t seed) {
  SCOPED_TRACE(std::string("format ") + HostFormat::format_name + ", kernel " + kernel_name(opts.kernel) +
               ", rows/team " + std::to_string(opts.rows_per_team) + ", vector " + std::to_string(opts.vector_length) +
               ", unroll " + std::to_string(opts.unroll) + ", beta " + std::to_string(beta) + ", exec " + Exec::name());
  const auto A = to_device<Exec>(host_format);
  const auto hx = random_vector<Scalar>(oracle.num_cols, seed);
  auto hy0 = random_vector<Scalar>(oracle.num_rows, seed + 1);
  if (beta == Scalar(0)) Kokkos::deep_copy(hy0, std::numeric_limits<Scalar>::quiet_NaN());  // must not be read
  Kokkos::View<Scalar*, Kokkos::HostSpace> expected("expected", oracle.num_rows);
  Kokkos::deep_copy(expected, hy0);
  host_oracle_spmv(alpha, oracle, hx, beta, expected);

  auto x = Kokkos::create_mirror_view_and_copy(typename Exec::memory_space(), hx);
  auto y = Kokkos::create_mirror_view_and_copy(typename Exec::memory_space(), hy0);
  spmv(Exec(), alpha, A, x, beta, y, opts);
  Exec().fence();
  double beta_y = 0;
  for (std::size_t i = 0; i < hy0.extent(0); ++i) {
    if (beta != Scalar(0)) beta_y = std::max(beta_y, std::abs(static_cast<double>(beta * hy0(i))));
  }
  EXPECT_TRUE(allclose(y, expected, spmv_tolerance(oracle, hx, alpha, beta_y)));
}

/// Every format of the registry x each of its kernels (and Kernel::automatic) on Exec against the
/// host oracle, for one matrix.
template <class Exec, class Scalar, class Offset>
void expect_all_formats_match_oracle(const HostCsrMatrix<Scalar, int, Offset>& A, int boundary, Scalar alpha,
                                     Scalar beta, std::uint64_t seed, int slice_height = 32) {
  FormatParams params;
  params.boundary = boundary;
  params.slice_height = slice_height;
  for (const FormatInfo& info : format_registry) {
    if (info.format == Format::hybrid16 && A.num_cols > 65535) continue;  // 16-bit reference columns
    std::vector<Kernel> kernels = format_kernels(info.format);
    kernels.push_back(Kernel::automatic);
    with_host_format(info.format, A, params, [&](const auto& host_format) {
      for (Kernel k : kernels) expect_matches_oracle<Exec>(host_format, A, SpmvOptions{k}, alpha, beta, seed);
    });
  }
}

// 700 x 1300, ~60 entries per row of irregular lengths: most values repeat (a table covers them),
// every 50th is unique (the rest R, or no table when the table is small).
template <class Scalar>
HostCsrMatrix<Scalar, int, std::size_t> csell_test_matrix(std::uint64_t seed) {
  auto A = cispmv::test::random_irregular<Scalar>(700, 1300, seed, 60);
  for (std::size_t k = 0; k < A.nnz(); ++k) {
    A.values(k) = k % 50 == 7 ? Scalar(0.5) + static_cast<Scalar>(k) : Scalar(0.25) * static_cast<Scalar>(k % 9000);
  }
  return A;
}

}  // namespace cispmv::test
