// CI-like matrix generator: determinism (seed, thread count, execution space, platform), the
// structure of every row, the symmetric option, the named suite, and paper32k-1 against the
// paper's Table 3.

#include <gtest/gtest.h>
#include <Kokkos_Core.hpp>

#include "cispmv/convert.hpp"
#include "cispmv/generator.hpp"
#include "cispmv/stats.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

namespace {

using cispmv::CiMatrixParams;
using cispmv::HostCsr;

template <class View>
std::vector<typename View::non_const_value_type> to_vector(const View& v) {
  return std::vector<typename View::non_const_value_type>(v.data(), v.data() + v.extent(0));
}

void expect_identical(const HostCsr& A, const HostCsr& B) {
  ASSERT_EQ(A.num_rows, B.num_rows);
  ASSERT_EQ(A.num_cols, B.num_cols);
  ASSERT_EQ(A.nnz(), B.nnz());
  EXPECT_EQ(to_vector(A.row_ptr), to_vector(B.row_ptr));
  EXPECT_EQ(to_vector(A.col_idx), to_vector(B.col_idx));
  EXPECT_EQ(std::memcmp(A.values.data(), B.values.data(), A.nnz() * sizeof(double)), 0);
}

/// One hash of the three arrays: a fingerprint of pattern and values, bit for bit.
std::uint64_t fingerprint(const HostCsr& A) {
  const std::uint64_t parts[3] = {cispmv::xxhash64(A.row_ptr.data(), A.row_ptr.extent(0) * sizeof(std::size_t)),
                                  cispmv::xxhash64(A.col_idx.data(), A.nnz() * sizeof(int)),
                                  cispmv::xxhash64(A.values.data(), A.nnz() * sizeof(double))};
  return cispmv::xxhash64(parts, sizeof(parts));
}

CiMatrixParams small_params(std::int64_t rows, std::uint64_t seed = 1) {
  CiMatrixParams p = cispmv::scaled_params(rows, seed);
  return p;
}

std::size_t row_length(const HostCsr& A, int r) { return A.row_ptr(r + 1) - A.row_ptr(r); }

std::size_t reference_count(const HostCsr& A, int r, std::int64_t reference_width) {
  std::size_t n = 0;
  for (std::size_t k = A.row_ptr(r); k < A.row_ptr(r + 1); ++k) n += A.col_idx(k) < reference_width;
  return n;
}

bool rows_sorted_and_distinct(const HostCsr& A) {
  for (int r = 0; r < A.num_rows; ++r) {
    for (std::size_t k = A.row_ptr(r) + 1; k < A.row_ptr(r + 1); ++k) {
      if (A.col_idx(k - 1) >= A.col_idx(k)) return false;
    }
  }
  return true;
}

/// A(r, c) by binary search in a sorted row; NaN if not stored.
double entry(const HostCsr& A, int r, int c) {
  const int* first = A.col_idx.data() + A.row_ptr(r);
  const int* last = A.col_idx.data() + A.row_ptr(r + 1);
  const int* hit = std::lower_bound(first, last, c);
  return hit != last && *hit == c ? A.values(static_cast<std::size_t>(hit - A.col_idx.data())) : std::nan("");
}

// ------------------------------------------------------------------------------ determinism

TEST(CiGenerator, SameSeedGivesIdenticalMatrices) {
  const CiMatrixParams p = small_params(5000, 3);
  expect_identical(cispmv::generate_ci_matrix(p), cispmv::generate_ci_matrix(p));
}

TEST(CiGenerator, DifferentSeedsGiveDifferentMatrices) {
  const HostCsr A = cispmv::generate_ci_matrix(small_params(3000, 1));
  const HostCsr B = cispmv::generate_ci_matrix(small_params(3000, 2));
  EXPECT_NE(to_vector(A.col_idx), to_vector(B.col_idx));
  EXPECT_NE(fingerprint(A), fingerprint(B));
}

#if defined(KOKKOS_ENABLE_SERIAL)
TEST(CiGenerator, SerialAndParallelHostSpacesGiveIdenticalMatrices) {
  for (const bool symmetric : {false, true}) {
    CiMatrixParams p = small_params(4000, 11);
    p.symmetric = symmetric;
    const HostCsr parallel = cispmv::generate_ci_matrix(Kokkos::DefaultHostExecutionSpace(), p);
    const HostCsr serial = cispmv::generate_ci_matrix(Kokkos::Serial(), p);
    SCOPED_TRACE(symmetric ? "symmetric" : "non-symmetric");
    expect_identical(parallel, serial);
  }
}
#endif

// The generator uses only integer arithmetic and exact floating-point operations for its
// decisions, so these fingerprints must hold on every compiler, platform and thread count.
// A change of the generator's algorithm changes them: update them deliberately, and say so.
TEST(CiGenerator, MatchesRecordedFingerprintsOnEveryPlatform) {
  CiMatrixParams p = small_params(2000, 7);
  const HostCsr A = cispmv::generate_ci_matrix(p);
  EXPECT_EQ(A.nnz(), 116421u);
  EXPECT_EQ(fingerprint(A), 0x2B2A21D89C3C5F6BULL) << "fingerprint 0x" << std::hex << fingerprint(A);
  p.symmetric = true;
  const HostCsr S = cispmv::generate_ci_matrix(p);
  EXPECT_EQ(S.nnz(), 186300u);
  EXPECT_EQ(fingerprint(S), 0x176114EC655F0DC8ULL) << "fingerprint 0x" << std::hex << fingerprint(S);
}

// ------------------------------------------------------------------------------ structure

TEST(CiGenerator, EveryRowHasTheExactReferenceCountAndSortedDistinctColumns) {
  const CiMatrixParams p = small_params(20000, 5);
  const cispmv::CiLayout layout = cispmv::ci_layout(p);
  EXPECT_EQ(layout.reference_width, 2000);
  EXPECT_EQ(layout.reference_per_row, 400);
  const HostCsr A = cispmv::generate_ci_matrix(p);
  cispmv::validate(A);
  EXPECT_TRUE(rows_sorted_and_distinct(A));
  std::size_t expansion_total = 0, longest = 0;
  std::size_t expansion_min = A.nnz(), expansion_max = 0;
  for (int r = 0; r < A.num_rows; ++r) {
    ASSERT_EQ(reference_count(A, r, layout.reference_width), 400u) << "row " << r;
    const std::size_t exp = row_length(A, r) - 400;
    expansion_total += exp;
    expansion_min = std::min(expansion_min, exp);
    expansion_max = std::max(expansion_max, exp);
    longest = std::max(longest, row_length(A, r));
  }
  // Expansion lengths are uniform on m [1 - a, 1 + a] (+1 for the stochastic rounding).
  const double m = layout.expansion_mean;
  const double a = p.row_irregularity;
  EXPECT_NEAR(m, 0.01 * 18000, 1e-9);
  EXPECT_NEAR(static_cast<double>(expansion_total) / A.num_rows, m, 0.01 * m);
  EXPECT_GE(static_cast<double>(expansion_min), std::floor(m * (1 - a)));
  EXPECT_LE(static_cast<std::int64_t>(expansion_max), layout.expansion_max);
  EXPECT_GE(static_cast<double>(expansion_max), m * (1 + a) - 2);  // 20,000 rows reach the top
  const double mean_row = static_cast<double>(A.nnz()) / A.num_rows;
  EXPECT_NEAR(static_cast<double>(longest) / mean_row, (400 + m * (1 + a)) / (400 + m), 0.01);
}

TEST(CiGenerator, DiagonalIsStoredPositiveAndStrictlyDominant) {
  const HostCsr A = cispmv::generate_ci_matrix(small_params(3000, 2));
  for (int r = 0; r < A.num_rows; ++r) {
    const double d = entry(A, r, r);
    ASSERT_FALSE(std::isnan(d)) << "row " << r << " has no diagonal";
    double off = 0;
    for (std::size_t k = A.row_ptr(r); k < A.row_ptr(r + 1); ++k) {
      if (A.col_idx(k) != r) off += std::abs(A.values(k));
    }
    EXPECT_GE(d, static_cast<double>(row_length(A, r)));
    EXPECT_LT(d, static_cast<double>(row_length(A, r)) + 1);
    EXPECT_GT(d, off) << "row " << r;
  }
}

TEST(CiGenerator, OffDiagonalValuesAreNonzeroWithMagnitudeInTenthToOne) {
  const HostCsr A = cispmv::generate_ci_matrix(small_params(2000, 4));
  std::size_t negative = 0, offdiagonal = 0;
  for (int r = 0; r < A.num_rows; ++r) {
    for (std::size_t k = A.row_ptr(r); k < A.row_ptr(r + 1); ++k) {
      if (A.col_idx(k) == r) continue;
      ++offdiagonal;
      const double v = A.values(k);
      ASSERT_GE(std::abs(v), 0.1);
      ASSERT_LE(std::abs(v), 1.0);
      negative += v < 0;
    }
  }
  EXPECT_NEAR(static_cast<double>(negative) / offdiagonal, 0.5, 0.01);
}

TEST(CiGenerator, TheDiagonalDoesNotChangeTheRowLengths) {
  CiMatrixParams p = small_params(6000, 9);
  const HostCsr with = cispmv::generate_ci_matrix(p);
  p.dominant_diagonal = false;
  const HostCsr without = cispmv::generate_ci_matrix(p);
  EXPECT_EQ(to_vector(with.row_ptr), to_vector(without.row_ptr));
  for (std::size_t k = 0; k < without.nnz(); ++k) ASSERT_LE(std::abs(without.values(k)), 1.0);
}

TEST(CiGenerator, PinnedLongestRowIsTheUniqueLongestRow) {
  CiMatrixParams p = small_params(8000, 6);
  p.longest_row = 4321;
  const cispmv::CiLayout layout = cispmv::ci_layout(p);
  const HostCsr A = cispmv::generate_ci_matrix(p);
  const auto pinned = static_cast<std::int64_t>(row_length(A, 4321));
  EXPECT_EQ(pinned, layout.reference_per_row + layout.expansion_max);
  for (int r = 0; r < A.num_rows; ++r) {
    if (r != 4321) {
      ASSERT_LT(static_cast<std::int64_t>(row_length(A, r)), pinned) << "row " << r;
    }
  }
}

TEST(CiGenerator, TinyAndExtremeParametersGiveValidMatrices) {
  for (const std::int64_t rows : {1, 2, 3, 10, 64, 65}) {
    for (const double reference_fraction : {0.0, 0.1, 0.5, 1.0}) {
      for (const double density : {0.0, 0.3, 1.0}) {
        CiMatrixParams p;
        p.rows = rows;
        p.reference_fraction = reference_fraction;
        p.reference_density = density;
        p.expansion_density = density;
        p.row_irregularity = 1.0;
        for (const bool symmetric : {false, true}) {
          p.symmetric = symmetric;
          const HostCsr A = cispmv::generate_ci_matrix(p);
          SCOPED_TRACE("rows " + std::to_string(rows) + " reference_fraction " + std::to_string(reference_fraction) +
                       " density " + std::to_string(density) + (symmetric ? " symmetric" : ""));
          ASSERT_NO_THROW(cispmv::validate(A));
          EXPECT_TRUE(rows_sorted_and_distinct(A));
          for (int r = 0; r < A.num_rows; ++r) EXPECT_FALSE(std::isnan(entry(A, r, r)));
          if (density == 1.0 && !symmetric) {
            const cispmv::CiLayout layout = cispmv::ci_layout(p);
            for (int r = 0; r < A.num_rows; ++r) {
              EXPECT_EQ(reference_count(A, r, layout.reference_width),
                        static_cast<std::size_t>(layout.reference_width));
            }
          }
        }
      }
    }
  }
}

TEST(CiGenerator, InvalidParametersThrowInvalidArgument) {
  auto with = [](auto change) {
    CiMatrixParams p;
    change(p);
    return p;
  };
  const CiMatrixParams bad[] = {with([](CiMatrixParams& p) { p.rows = 0; }),
                                with([](CiMatrixParams& p) { p.rows = std::int64_t(1) << 31; }),
                                with([](CiMatrixParams& p) { p.reference_fraction = 1.5; }),
                                with([](CiMatrixParams& p) { p.reference_density = -0.1; }),
                                with([](CiMatrixParams& p) { p.expansion_density = std::nan(""); }),
                                with([](CiMatrixParams& p) { p.row_irregularity = 2; }),
                                with([](CiMatrixParams& p) { p.longest_row = p.rows; }),
                                with([](CiMatrixParams& p) {
                                  p.longest_row = 3;
                                  p.symmetric = true;
                                })};
  for (const CiMatrixParams& p : bad) {
    EXPECT_THROW(cispmv::ci_layout(p), std::invalid_argument);
    EXPECT_THROW(cispmv::generate_ci_matrix(p), std::invalid_argument);
  }
}

TEST(CiGenerator, ProgressIsReportedInOrderUpToOne) {
  std::vector<double> seen;
  cispmv::generate_ci_matrix(small_params(20000), [&](double f) { seen.push_back(f); });
  ASSERT_GE(seen.size(), 3u);
  EXPECT_TRUE(std::is_sorted(seen.begin(), seen.end()));
  EXPECT_GE(seen.front(), 0.0);
  EXPECT_DOUBLE_EQ(seen.back(), 1.0);
}

// ------------------------------------------------------------------------------ symmetric

TEST(CiGenerator, SymmetricOptionGivesAMatrixEqualToItsTranspose) {
  CiMatrixParams p = small_params(6000, 8);
  p.symmetric = true;
  const cispmv::CiLayout layout = cispmv::ci_layout(p);
  const HostCsr A = cispmv::generate_ci_matrix(p);
  cispmv::validate(A);
  ASSERT_TRUE(rows_sorted_and_distinct(A));
  for (int r = 0; r < A.num_rows; ++r) {
    for (std::size_t k = A.row_ptr(r); k < A.row_ptr(r + 1); ++k) {
      const double mirror = entry(A, A.col_idx(k), r);
      ASSERT_EQ(std::memcmp(&mirror, &A.values(k), sizeof(double)), 0)
          << "A(" << r << ", " << A.col_idx(k) << ") = " << A.values(k) << " but its mirror is " << mirror;
    }
  }
  // Expansion rows keep the non-symmetric statistics on average; reference rows hold the mirror
  // of the whole reference region (about reference_density * N entries).
  double expansion_rows_total = 0, reference_rows_total = 0;
  for (int r = 0; r < A.num_rows; ++r) {
    (r < layout.reference_width ? reference_rows_total : expansion_rows_total) += static_cast<double>(row_length(A, r));
  }
  const double expansion_rows = static_cast<double>(A.num_rows - layout.reference_width);
  EXPECT_NEAR(expansion_rows_total / expansion_rows, layout.reference_per_row + layout.expansion_mean + 1,
              0.02 * (layout.reference_per_row + layout.expansion_mean));
  EXPECT_NEAR(reference_rows_total / layout.reference_width, p.reference_density * p.rows,
              0.05 * p.reference_density * p.rows);
}

// ------------------------------------------------------------------------------ suite

TEST(CiGeneratorSuite, ListsThePaperMatricesAndTheScaledSizes) {
  const std::vector<std::string> names = cispmv::suite_names();
  ASSERT_EQ(names.size(), 16u);
  EXPECT_EQ(names.front(), "paper32k-1");
  EXPECT_EQ(names[9], "paper32k-10");
  EXPECT_EQ(names[10], "scaled-32768");
  EXPECT_EQ(names.back(), "scaled-1048576");
  for (const std::string& name : names) EXPECT_NO_THROW(cispmv::suite_params(name)) << name;
}

TEST(CiGeneratorSuite, UnknownOrMalformedNamesThrowInvalidArgument) {
  for (const char* name : {"", "paper32k-0", "paper32k-11", "paper32k-01", "paper32k-", "paper64k-1", "scaled-",
                           "scaled-0", "scaled-012", "scaled--5", "scaled-+5", "scaled-12x", "scaled-2147483648",
                           "scaled-99999999999", "scaled-1e6", "Scaled-100"}) {
    try {
      cispmv::suite_params(name);
      ADD_FAILURE() << "'" << name << "' was accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("'" + std::string(name) + "'"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("scaled-<rows>"), std::string::npos) << e.what();
    }
  }
  EXPECT_THROW(cispmv::generate_suite_matrix("nonsense"), std::invalid_argument);
  EXPECT_THROW(cispmv::paper_params(0), std::invalid_argument);
}

TEST(CiGeneratorSuite, ScaledMatricesKeepAbout950NonzerosPerRowUpToAMillionRows) {
  for (std::int64_t rows = 32768; rows <= (std::int64_t(1) << 20); rows *= 2) {
    const cispmv::CiLayout layout = cispmv::ci_layout(cispmv::suite_params("scaled-" + std::to_string(rows)));
    EXPECT_EQ(layout.reference_width, std::llround(0.1 * rows));
    EXPECT_EQ(layout.reference_per_row, 655) << rows;
    EXPECT_NEAR(layout.expansion_mean, 294.9, 0.1) << rows;
    EXPECT_EQ(layout.reference_per_row + layout.expansion_max, 1074) << rows;  // 1.13 x the mean row 950
  }
  const cispmv::CiLayout odd = cispmv::ci_layout(cispmv::suite_params("scaled-50000"));
  EXPECT_EQ(odd.reference_per_row, 655);
  EXPECT_NEAR(odd.expansion_mean, 294.9, 0.1);
  // Below 32,768 rows the paper's densities are kept.
  const cispmv::CiLayout small = cispmv::ci_layout(cispmv::suite_params("scaled-4096"));
  EXPECT_EQ(small.reference_width, 410);
  EXPECT_EQ(small.reference_per_row, 82);
  EXPECT_NEAR(small.expansion_mean, 0.01 * (4096 - 410), 1e-9);
}

TEST(CiGeneratorSuite, PaperParametersReproduceTable3Layouts) {
  const std::int64_t expansion_nnz[10] = {9678327, 9673031, 9666827, 9670529, 9669733,
                                          9673530, 9666857, 9670234, 9661419, 9670316};
  const std::int64_t longest[10] = {1074, 1069, 1078, 1068, 1060, 1069, 1079, 1077, 1067, 1064};
  const std::int64_t longest_row[10] = {5314, 6144, 22358, 21549, 4233, 28394, 21836, 20148, 12787, 25678};
  for (int i = 1; i <= 10; ++i) {
    const CiMatrixParams p = cispmv::paper_params(i);
    const cispmv::CiLayout layout = cispmv::ci_layout(p);
    SCOPED_TRACE("paper32k-" + std::to_string(i));
    EXPECT_EQ(p.rows, 32768);
    EXPECT_EQ(p.seed, static_cast<std::uint64_t>(i));
    EXPECT_EQ(layout.reference_width, 3277);
    EXPECT_EQ(layout.reference_per_row, 655);  // 32768 x 655 = 21,463,040 reference nonzeros
    EXPECT_EQ(layout.reference_per_row + layout.expansion_max, longest[i - 1]);
    EXPECT_EQ(p.longest_row, longest_row[i - 1]);
    const double expected_exp = layout.expansion_mean * 32767 + static_cast<double>(layout.expansion_max);
    EXPECT_NEAR(expected_exp, static_cast<double>(expansion_nnz[i - 1]), 1.0);
  }
}

// The paper's first matrix in full (31M nonzeros; about 1 s on 2 cores): Table 3, row 1.
TEST(CiGeneratorSuite, Paper32k1MatchesTable3WithinOnePercent) {
  Kokkos::Timer timer;
  const HostCsr A = cispmv::generate_suite_matrix("paper32k-1");
  const double seconds = timer.seconds();
  ASSERT_EQ(A.num_rows, 32768);
  ASSERT_EQ(A.num_cols, 32768);
  std::size_t ref = 0, longest = 0;
  int longest_at = -1;
  for (int r = 0; r < A.num_rows; ++r) {
    const std::size_t n = reference_count(A, r, 3277);
    ASSERT_EQ(n, 655u) << "row " << r;  // BOUNDARY = 655 for every row
    ref += n;
    if (row_length(A, r) > longest) {
      longest = row_length(A, r);
      longest_at = r;
    }
  }
  const std::size_t exp = A.nnz() - ref;
  std::cout << "[ paper32k-1 ] generated in " << seconds << " s: ref " << ref << ", exp " << exp << ", total "
            << A.nnz() << ", longest " << longest << " at row " << longest_at << ", mean "
            << static_cast<double>(A.nnz()) / A.num_rows << "\n";
  EXPECT_EQ(ref, 21463040u);
  EXPECT_NEAR(static_cast<double>(exp), 9678327.0, 0.01 * 9678327.0);
  EXPECT_NEAR(static_cast<double>(A.nnz()), 31141367.0, 0.01 * 31141367.0);
  EXPECT_EQ(longest, 1074u);
  EXPECT_EQ(longest_at, 5314);
  // Table 4: reference sparsity 1 - 655 / 3276.8 = 0.800110, expansion sparsity 0.989985.
  EXPECT_NEAR(1.0 - static_cast<double>(ref) / (32768.0 * 3276.8), 0.800110, 1e-6);
  EXPECT_NEAR(1.0 - static_cast<double>(exp) / (32768.0 * (32768 - 3276.8)), 0.989985, 1e-4);
  EXPECT_TRUE(rows_sorted_and_distinct(A));
  // The automatic BOUNDARY (issue 3: it must find the paper's 655) and the split it gives.
  const auto choice = cispmv::choose_boundary(A);
  EXPECT_TRUE(choice.reference_detected);
  EXPECT_EQ(choice.reference_width, 3277);
  EXPECT_EQ(choice.boundary, 655);
  const auto stats = cispmv::compute_stats(A, choice.boundary, 3276.8);
  EXPECT_EQ(stats.reference_nnz, 21463040u);
  EXPECT_EQ(stats.expansion_nnz, exp);
  EXPECT_EQ(stats.longest_row, 5314);
}

}  // namespace

// A suite matrix that cannot fit is refused from its parameters, before anything is allocated.
TEST(CiGenerator, SuiteMatricesThatCannotFitAreRefusedUpFront) {
  ::setenv("CISPMV_MAX_MEMORY", "1G", 1);
  for (const char* name : {"scaled-2147483647", "scaled-1048576"}) {
    try {
      (void)cispmv::generate_suite_matrix(name);
      ADD_FAILURE() << name << " was generated";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("of memory are available"), std::string::npos) << e.what();
    }
  }
  ::unsetenv("CISPMV_MAX_MEMORY");
}
