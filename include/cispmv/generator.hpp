#pragma once
/// \file generator.hpp
/// Deterministic generator of CI-like sparse matrices (paper, section 4 and Tables 3-4) and the
/// named suite of test matrices (`paper32k-1` .. `paper32k-10`, `scaled-<rows>`).
///
/// Structure of a generated N x N matrix: the *reference region* is the first
/// W = round(reference_fraction * N) columns, where every row has exactly round(reference_density * W)
/// nonzeros (655 for the paper's N = 32768: this is BOUNDARY of the hybrid format); the
/// *expansion region* is the other N - W columns, where row r has a length drawn around the mean
/// expansion_density * (N - W) (rule below). Columns within a row are distinct and sorted.
///
/// Determinism: row r depends only on (seed, r), through a counter-based hash (splitmix64
/// finaliser of (seed, row, stream, counter)) and integer arithmetic for every decision that
/// shapes the pattern, so the matrix is bit-identical for every thread count, execution space,
/// compiler and platform with IEEE doubles. No <random> engine or distribution is used (their
/// output differs between standard libraries).

#include "cispmv/io.hpp"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace cispmv {

/// Parameters of a CI-like matrix. Defaults are the paper's 32,768-row matrices (Tables 3-4).
///
/// Row-length rule of the expansion region: with mean m = expansion_density * (N - W) and a =
/// row_irregularity, row r gets floor(m * (1 + a * u_r) + v_r) entries, u_r uniform in [-1, 1]
/// and v_r uniform in [0, 1) (stochastic rounding), both from the row's hash. Lengths are thus
/// uniform on [m(1 - a), m(1 + a)] with mean m; the longest row is about ref + m(1 + a), which for
/// the defaults (655 + 294.9 * 1.42 = 1074) is 1.13 x the mean row length 950, as in Table 3
/// (a binomial draw alone would give only about 1.07 x).
struct CiMatrixParams {
  /// N: the matrix is N x N, 1 <= N <= 2^31 - 1.
  std::int64_t rows = 32768;
  /// The reference region spans the first W = round(reference_fraction * N) columns (paper: 10%).
  double reference_fraction = 0.1;
  /// Every row has exactly round(reference_density * W) reference nonzeros (paper: sparsity ~80%).
  double reference_density = 0.2;
  /// Mean expansion nonzeros per row = expansion_density * (N - W) (paper: sparsity ~99%).
  double expansion_density = 0.01;
  /// a in [0, 1]: expansion row lengths are uniform on mean * [1 - a, 1 + a] (rule above).
  double row_irregularity = 0.42;
  /// If in [0, N): this row gets the longest expansion part, floor(m(1 + a)) + 1 entries, and
  /// every other row is capped one below, so the matrix's longest row is exactly this one (the
  /// suite uses it to reproduce Table 3's "Row No."). -1: no pinned row. Only for symmetric = false.
  std::int64_t longest_row = -1;
  /// Store the diagonal in every row, valued (row length + u), u in [0, 1), so that the matrix
  /// is strictly diagonally dominant with a positive diagonal (SPD if symmetric), as a CI
  /// Hamiltonian's dominant diagonal; eigensolvers and CG can use it. The diagonal counts as one
  /// of its region's entries, so the row lengths above are unchanged (a region that would have no
  /// entry gets the diagonal alone).
  bool dominant_diagonal = true;
  /// Generate a symmetric matrix: the strict lower triangle is generated with the rules above
  /// restricted to columns < r (row r draws round(reference_density * min(r, W)) reference entries and
  /// a mean of expansion_density * max(r - W, 0) expansion entries), then mirrored, plus the diagonal.
  /// Expansion rows (r >= W) keep the same statistics on average (655 + ~295 for the paper's
  /// sizes; the lower part grows with r, the mirrored part shrinks). The first W rows, however,
  /// receive the mirror of the whole reference region: about reference_density * N entries each (6,554
  /// for N = 32768), as the reference rows of a real CI Hamiltonian; total nnz grows by about
  /// (reference_density - expansion_density) * W * (N - W) (+18.4M, to ~49.6M, for the paper's sizes).
  bool symmetric = false;
  /// Seed of the counter-based generator; row r depends only on (seed, r).
  std::uint64_t seed = 1;
};

/// The layout that a parameter set implies (all values exact, as the generator computes them).
struct CiLayout {
  std::int64_t rows = 0;               ///< N
  std::int64_t reference_width = 0;    ///< W: columns [0, W) are the reference region
  std::int64_t reference_per_row = 0;  ///< reference nonzeros of each row (non-symmetric): BOUNDARY
  double expansion_mean = 0;           ///< mean expansion nonzeros of a row (non-symmetric)
  std::int64_t expansion_max = 0;      ///< upper bound of a row's expansion nonzeros (non-symmetric)
};

/// The layout of `params`; throws std::invalid_argument for parameters out of range.
CiLayout ci_layout(const CiMatrixParams& params);

/// Called with the fraction of the work done, in [0, 1], from the calling thread only.
using ProgressCallback = std::function<void(double fraction)>;

/// A ProgressCallback that prints "<label>: 42%" lines to stderr, at most every `interval_s`
/// seconds, and once more (with the elapsed time) at 100%.
ProgressCallback stderr_progress(const std::string& label, double interval_s = 2.0);

/// Generates the matrix of `params` with `exec`, a host execution space (instantiated for
/// Kokkos::DefaultHostExecutionSpace and Kokkos::Serial): a first parallel pass draws every row's
/// length, a prefix sum gives row_ptr, a second pass fills the rows; symmetric matrices add a
/// transpose pass. Memory: the result plus 8 bytes per row (plus the strict lower triangle when
/// symmetric). Scales to 2^20 rows x ~950 nonzeros (1e9 nonzeros, 12 GB: 45 s on 2 cores).
/// Throws std::invalid_argument for bad parameters.
template <class HostExecutionSpace>
HostCsr generate_ci_matrix(const HostExecutionSpace& exec, const CiMatrixParams& params,
                           const ProgressCallback& progress = {});

/// generate_ci_matrix on Kokkos::DefaultHostExecutionSpace.
HostCsr generate_ci_matrix(const CiMatrixParams& params, const ProgressCallback& progress = {});

// ------------------------------------------------------------------------------ named suite

/// Parameters of the paper's matrix `index` (1..10) of Table 3: 32,768 rows, seed = index,
/// expansion_density and row_irregularity chosen so that the expected expansion nonzeros and the
/// longest row equal that matrix's Table 3 entries, and the longest row pinned at Table 3's
/// "Row No." (taken as a 0-based row index). Every row has exactly 655 reference nonzeros.
CiMatrixParams paper_params(int index);

/// Parameters of `scaled-<rows>`: the paper's structure at any size. For N >= 32768 the per-row
/// counts of the 32k matrices are kept (655 reference, ~295 expansion, ~950 per row), so the
/// densities scale as 32768 / N: reference_density = 0.2 * 32768 / N, expansion_density = 0.01 * 32768 / N.
/// Below 32768 rows (where 655 reference columns do not exist) the paper's densities are kept
/// and rows have ~0.029 N nonzeros. row_irregularity = 0.42, seed as given.
CiMatrixParams scaled_params(std::int64_t rows, std::uint64_t seed = 1);

/// Parameters of a suite matrix by name: `paper32k-1` .. `paper32k-10` or `scaled-<rows>` with
/// rows a decimal integer in [1, 2^31 - 1]. Throws std::invalid_argument naming the accepted
/// names for anything else.
CiMatrixParams suite_params(const std::string& name);

/// Generates a suite matrix (see suite_params); `progress` prints progress to stderr.
HostCsr generate_suite_matrix(const std::string& name, bool progress = false);

/// The listed suite: paper32k-1 .. paper32k-10, then scaled-<rows> for rows = 2^15 .. 2^20
/// (scaled-<rows> accepts any other row count as well).
std::vector<std::string> suite_names();

}  // namespace cispmv
