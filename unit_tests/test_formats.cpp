// Tier 1: the formats' arrays on the paper's 6x5 example equal the paper's listings exactly;
// round trips back to CSR are exact; the paper's reports (Tables 3-5) are reproduced.
#include "test_utils.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <vector>

namespace {

using namespace cispmv;
using cispmv::test::paper_example;
using cispmv::test::random_irregular;

template <class View>
std::vector<double> flat(const View& v) {
  std::vector<double> out;
  if constexpr (View::rank == 1) {
    for (std::size_t i = 0; i < v.extent(0); ++i) out.push_back(static_cast<double>(v(i)));
  } else {
    for (std::size_t i = 0; i < v.extent(0); ++i)
      for (std::size_t j = 0; j < v.extent(1); ++j) out.push_back(static_cast<double>(v(i, j)));
  }
  return out;
}
using V = std::vector<double>;

TEST(PaperExample, CsrArraysEqualThePaperListing) {
  const auto A = paper_example();
  EXPECT_EQ(flat(A.values), (V{1, 2, 3, 4, 5, 6, 7, 8}));
  EXPECT_EQ(flat(A.col_idx), (V{0, 2, 4, 1, 4, 2, 3, 4}));
  EXPECT_EQ(flat(A.row_ptr), (V{0, 1, 3, 5, 6, 7, 8}));
}

TEST(PaperExample, EllpackArraysEqualThePaperListing) {
  const auto E = to_ellr(paper_example());
  EXPECT_EQ(E.width, 2);
  EXPECT_EQ(flat(E.values), (V{1, 0, 2, 3, 4, 5, 6, 0, 7, 0, 8, 0}));       // NonZerosEntries, by row
  EXPECT_EQ(flat(E.col_idx), (V{0, -1, 2, 4, 1, 4, 2, -1, 3, -1, 4, -1}));  // Column, by row
  EXPECT_EQ(flat(E.row_length), (V{1, 2, 2, 1, 1, 1}));                     // RowLength (ELLPACK-R)
  EXPECT_EQ(E.values.stride(1), 6u) << "LayoutLeft: consecutive rows of one slot are adjacent";
}

TEST(PaperExample, SlicedEllpackSlicesEqualThePaperListing) {
  const auto S = to_sliced_ellr(paper_example(), 2);
  // Slice1 = [[1,0],[2,3]], Slice2 = [[4,5],[6,0]], Slice3 = [[7],[8]], each stored column-major.
  EXPECT_EQ(flat(S.slice_ptr), (V{0, 4, 8, 10}));
  EXPECT_EQ(flat(S.values), (V{1, 2, 0, 3, 4, 6, 5, 0, 7, 8}));
  EXPECT_EQ(flat(S.col_idx), (V{0, 2, -1, 4, 1, 2, 4, -1, 3, 4}));
  EXPECT_EQ(flat(S.row_length), (V{1, 2, 2, 1, 1, 1}));
}

TEST(PaperExample, HybridSplitsTheFirstBoundaryNonzerosOfEachRow) {
  const auto H = to_hybrid(paper_example(), 1);
  EXPECT_EQ(flat(H.reference_values), (V{1, 2, 4, 6, 7, 8}));
  EXPECT_EQ(flat(H.reference_col_idx), (V{0, 2, 1, 2, 3, 4}));
  EXPECT_EQ(flat(H.reference_row_length), (V{1, 1, 1, 1, 1, 1}));
  EXPECT_EQ(flat(H.expansion_row_ptr), (V{0, 0, 1, 2, 2, 2, 2}));
  EXPECT_EQ(flat(H.expansion_col_idx), (V{4, 4}));
  EXPECT_EQ(flat(H.expansion_values), (V{3, 5}));
  EXPECT_EQ(H.reference_nnz, 6u);
  const auto H2 = to_hybrid(paper_example(), 2);  // rows of length 1 are padded with column -1
  EXPECT_EQ(flat(H2.reference_col_idx), (V{0, -1, 2, 4, 1, 4, 2, -1, 3, -1, 4, -1}));
  EXPECT_EQ(H2.expansion_nnz(), 0u);
}

template <class Host>
void expect_same_csr(const Host& B, const HostCsr& A) {
  EXPECT_EQ(flat(B.row_ptr), flat(A.row_ptr));
  EXPECT_EQ(flat(B.col_idx), flat(A.col_idx));
  EXPECT_EQ(flat(B.values), flat(A.values));
}

TEST(Conversions, EveryFormatRoundTripsToCsrExactly) {
  for (std::uint64_t seed : {1, 2, 3}) {
    const auto A = random_irregular<double>(131, 97, seed, 90);
    expect_same_csr(to_csr(to_ell(A)), A);
    expect_same_csr(to_csr(to_ellr(A)), A);
    expect_same_csr(to_csr(to_sliced_ell(A, 32)), A);
    expect_same_csr(to_csr(to_sliced_ellr(A, 5)), A);
    for (int b : {0, 3, 40, 97}) expect_same_csr(to_csr(to_hybrid(A, b)), A);
    expect_same_csr(from_coo(to_coo(A)), A);
  }
}

TEST(Conversions, CooDuplicatesAreSummedAndBadIndicesNamed) {
  CooMatrix<double, int> coo;
  coo.num_rows = 2;
  coo.num_cols = 3;
  coo.row_idx = {1, 0, 1};
  coo.col_idx = {2, 1, 2};
  coo.values = {1.5, 2, 2.5};
  const auto A = from_coo(coo);
  EXPECT_EQ(flat(A.row_ptr), (V{0, 1, 2}));
  EXPECT_EQ(flat(A.values), (V{2, 4}));
  coo.col_idx[0] = 3;
  try {
    from_coo(coo);
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("(1, 3)"), std::string::npos) << e.what();
  }
}

TEST(Conversions, BoundaryOutOfRangeIsRejectedWithItsValue) {
  const auto A = paper_example();
  try {
    to_hybrid(A, 6);
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("BOUNDARY = 6"), std::string::npos) << e.what();
  }
  EXPECT_THROW(to_hybrid(A, -1), std::invalid_argument);
  EXPECT_THROW(to_sliced_ell(A, 0), std::invalid_argument);
}

TEST(Conversions, ValidateNamesTheBrokenInvariant) {
  auto A = paper_example();
  A.col_idx(3) = 7;
  try {
    validate(A);
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("column index 7 of row 2"), std::string::npos) << e.what();
  }
}

TEST(Conversions, AutomaticBoundaryFindsTheReferenceRegion) {
  // 400 rows: the first 40 columns hold exactly 12 nonzeros per row, the other 360 a few each.
  cispmv::test::Rng rng(9);
  CooMatrix<double, int> coo;
  coo.num_rows = coo.num_cols = 400;
  for (int r = 0; r < 400; ++r) {
    std::vector<char> used(400, 0);
    for (int k = 0; k < 12;) {
      const int c = rng.below(40);
      if (!used[c]) used[c] = 1, ++k;
    }
    for (int k = 0, n = 2 + rng.below(6); k < n;) {
      const int c = 40 + rng.below(360);
      if (!used[c]) used[c] = 1, ++k;
    }
    for (int c = 0; c < 400; ++c) {
      if (used[c]) coo.row_idx.push_back(r), coo.col_idx.push_back(c), coo.values.push_back(1.0);
    }
  }
  const auto choice = choose_boundary(from_coo(coo));
  EXPECT_TRUE(choice.reference_detected);
  EXPECT_EQ(choice.reference_width, 40);
  EXPECT_EQ(choice.boundary, 12);
  // no two-level structure: BOUNDARY = the shortest row (the largest value with no padding)
  const auto flat_choice = choose_boundary(paper_example());
  EXPECT_EQ(flat_choice.boundary, 1);
}

// Table 5, "Pro. Model" column, from the Table 3 statistics (ROWS = 32768, BOUNDARY = 655).
TEST(PaperReports, ProposedModelMemoryReproducesTable5) {
  const std::size_t expansion_nnz[10] = {9678327, 9673031, 9666827, 9670529, 9669733,
                                         9673530, 9666857, 9670234, 9661419, 9670316};
  const double table5[10] = {356.76, 356.70, 356.63, 356.67, 356.66, 356.70, 356.63, 356.67, 356.57, 356.67};
  const PaperMemoryModel paper;
  for (int m = 0; m < 10; ++m) {
    const double mib = to_mib(paper.hybrid(32768, 655, expansion_nnz[m]));
    EXPECT_NEAR(mib, table5[m], 0.005 + 1e-9) << "matrix " << m + 1;
  }
  EXPECT_EQ(paper.hybrid(32768, 655, 9678327), 374089620u);
  // The paper's own CSR formula gives 356.51 for matrix 1 where Table 5 prints 356.44: Table 5's
  // CSR, ELL and Sliced ELL columns do not follow its formulas (see README), so only this is asserted.
  EXPECT_NEAR(to_mib(paper.csr(32768, 31141367)), 356.51, 0.005);
}

// Table 4 sparsities from the Table 3 counts, with the paper's reference width of 10% of the columns.
TEST(PaperReports, RegionSparsityReproducesTable4) {
  MatrixStats s;
  s.rows = s.cols = 32768;
  s.reference_nnz = 21463040;
  s.expansion_nnz = 9678327;
  s.nnz = s.reference_nnz + s.expansion_nnz;
  set_region_sparsity(s, 0.1 * 32768);
  EXPECT_NEAR(s.reference_sparsity, 0.800110, 5e-7);
  EXPECT_NEAR(s.expansion_sparsity, 0.989985, 5e-7);
  EXPECT_NEAR(s.total_sparsity, 0.970997, 5e-7);
}

TEST(PaperReports, AllocatedBytesAgreeWithTheFormulasWhereTheLayoutsAgree) {
  const auto A = random_irregular<double, unsigned>(64, 64, 4, 40);  // 32-bit offsets as the paper
  const PaperMemoryModel paper;
  EXPECT_EQ(allocated_bytes(A), paper_model_bytes(A));
  const auto E = to_ell(A);
  EXPECT_EQ(allocated_bytes(E), paper_model_bytes(E));
  // ELLPACK-R adds NonZerosCount, which the paper's ELLPACK formula does not count
  const auto ER = to_ellr(A);
  EXPECT_EQ(allocated_bytes(ER), paper_model_bytes(ER) + 64 * sizeof(int));
  // Sliced ELLPACK adds the slice offsets
  const auto S = to_sliced_ell(A, 8);
  EXPECT_EQ(allocated_bytes(S), paper_model_bytes(S) + 9 * sizeof(unsigned));
  // hybrid: our reference_row_length + expansion_row_ptr (2*ROWS + 1 words) replace the paper's three
  // per-row arrays (3*ROWS words)
  const auto H = to_hybrid(A, 5);
  EXPECT_EQ(allocated_bytes(H) + 64 * sizeof(unsigned) - sizeof(unsigned), paper_model_bytes(H));
}

TEST(PaperReports, StatsCountRegionsLongestRowAndEmptyRows) {
  const auto s = compute_stats(paper_example(), 1, 0.5 * 5);
  EXPECT_EQ(s.nnz, 8u);
  EXPECT_EQ(s.reference_nnz, 6u);
  EXPECT_EQ(s.expansion_nnz, 2u);
  EXPECT_EQ(s.longest_row_length, 2);
  EXPECT_EQ(s.longest_row, 1);
  EXPECT_EQ(s.rows_over_boundary, 2);
  EXPECT_EQ(s.empty_rows, 0);
  EXPECT_DOUBLE_EQ(s.total_sparsity, 1.0 - 8.0 / 30.0);
}

}  // namespace

// ------------------------------------------------------------------------------- the registry
namespace {

using namespace cispmv;

TEST(Registry, NamesAreUniqueAndParseBack) {
  std::vector<std::string> names = format_names();
  ASSERT_EQ(names.size(), format_registry.size());
  for (const FormatInfo& info : format_registry) {
    EXPECT_EQ(parse_format(info.name), info.format);
    EXPECT_STREQ(format_info(info.format).name, info.name);
  }
  std::sort(names.begin(), names.end());
  EXPECT_EQ(std::unique(names.begin(), names.end()), names.end());
  try {
    parse_format("coo");
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("hybrid"), std::string::npos) << e.what();  // lists the names
  }
}

// The registry's kernel list is the kernels' own: the ELLPACK layouts have no vector kernel.
TEST(Registry, KernelsAreWhatTheFunctorsProvide) {
  EXPECT_EQ(format_kernels(Format::ell), std::vector<Kernel>{Kernel::scalar});
  EXPECT_EQ(format_kernels(Format::sell), std::vector<Kernel>{Kernel::scalar});
  for (Format f : {Format::csr, Format::ellr, Format::sellr, Format::hybrid, Format::hybrid16, Format::csell}) {
    EXPECT_EQ(format_kernels(f), (std::vector<Kernel>{Kernel::scalar, Kernel::vector})) << format_info(f).name;
  }
}

// Every format the registry builds converts back to the same CSR matrix, with its own name.
TEST(Registry, EveryFormatBuildsAndConvertsBackExactly) {
  const auto A = random_irregular<double>(97, 83, 41, 40);
  FormatParams params;
  params.slice_height = 8;
  for (const FormatInfo& info : format_registry) {
    with_host_format(info.format, A, params, [&](const auto& F) {
      EXPECT_STREQ(std::decay_t<decltype(F)>::format_name, info.name);
      const auto B = to_csr(F);
      ASSERT_EQ(B.nnz(), A.nnz()) << info.name;
      for (int r = 0; r <= A.num_rows; ++r) ASSERT_EQ(B.row_ptr(r), A.row_ptr(r)) << info.name;
      for (std::size_t k = 0; k < A.nnz(); ++k) {
        ASSERT_EQ(B.col_idx(k), A.col_idx(k)) << info.name;
        ASSERT_EQ(B.values(k), A.values(k)) << info.name;
      }
    });
  }
}

// csell for block products (FormatParams::for_block_products): one lane, rows sorted in the
// automatic windows; values inline only for a GPU (impl::block_values_inline), the table on a CPU.
// min_table_coverage above 1 drops the table whatever the values cover.
TEST(Registry, CsellForBlockProductsTakesValuesInlineOnlyOnGpus) {
  const auto A = cispmv::test::csell_test_matrix<double>(75);  // a table covers every entry
  const FormatParams host = FormatParams::for_block_products<Kokkos::DefaultHostExecutionSpace>();
  EXPECT_EQ(host.row_lanes, 1);
  EXPECT_EQ(host.sort_window, -1);
  EXPECT_EQ(host.min_table_coverage, 0.5);
  const auto with_table = build_format<Format::csell>(A, host);
  EXPECT_TRUE(with_table.uses_table);
  EXPECT_EQ(with_table.row_order.extent(0), static_cast<std::size_t>(A.num_rows));
  FormatParams inline_params = host;
  inline_params.min_table_coverage = 2;
  const auto inline_values = build_format<Format::csell>(A, inline_params);
  EXPECT_FALSE(inline_values.uses_table);
  EXPECT_EQ(inline_values.rest_nnz(), 0u);
  for (const auto* C : {&with_table, &inline_values}) {
    const auto B = to_csr(*C);
    ASSERT_EQ(B.nnz(), A.nnz());
    for (std::size_t k = 0; k < A.nnz(); ++k) ASSERT_EQ(B.values(k), A.values(k));
  }
#if defined(KOKKOS_ENABLE_CUDA)
  EXPECT_GT(FormatParams::for_block_products<Kokkos::Cuda>().min_table_coverage, 1.0);
  static_assert(impl::block_values_inline<Kokkos::Cuda>);
#endif
  static_assert(!impl::block_values_inline<Kokkos::DefaultHostExecutionSpace>);
}

// Host spaces are not GPUs; the trait asks the memory space, so HIP and SYCL devices count as GPUs.
static_assert(!impl::is_gpu_space_v<Kokkos::DefaultHostExecutionSpace>);
static_assert(!impl::is_gpu_space_v<Kokkos::Serial>);
static_assert(impl::default_table_order<Kokkos::DefaultHostExecutionSpace>() == ValueTableOrder::first_use);
static_assert(impl::repeated_products_table_order<Kokkos::DefaultHostExecutionSpace>() == ValueTableOrder::first_use);
#if defined(KOKKOS_ENABLE_CUDA)
static_assert(impl::is_gpu_space_v<Kokkos::Cuda>);
static_assert(impl::default_table_order<Kokkos::Cuda>() == ValueTableOrder::frequency);
static_assert(impl::repeated_products_table_order<Kokkos::Cuda>() == ValueTableOrder::cooccurrence);
#endif

}  // namespace

// ------------------------------------------------------------------- Compressed Sliced ELLPACK
namespace {

using namespace cispmv;

/// rows x cols with `per_row` entries per row at random distinct columns, values drawn from
/// `distinct` values (a CI matrix's few distinct integrals), sorted rows.
HostCsr few_valued(int rows, int cols, int per_row, int distinct, std::uint64_t seed, int spread = 0) {
  cispmv::test::Rng rng(seed);
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

/// B is A exactly: the same rows, columns and values.
void expect_same_csr(const HostCsr& B, const HostCsr& A) {
  ASSERT_EQ(B.nnz(), A.nnz());
  for (int r = 0; r <= A.num_rows; ++r) ASSERT_EQ(B.row_ptr(r), A.row_ptr(r));
  for (std::size_t k = 0; k < A.nnz(); ++k) {
    ASSERT_EQ(B.col_idx(k), A.col_idx(k)) << "entry " << k;
    ASSERT_EQ(B.values(k), A.values(k)) << "entry " << k;
  }
}

TEST(CompressedSell, CiLikeMatrixStoresNearlyEveryEntryInFourBytes) {
  const HostCsr A = few_valued(640, 5000, 120, 300, 51);
  const auto C = to_compressed_sell(A);
  EXPECT_EQ(C.rest_nnz(), 0u);
  EXPECT_EQ(C.compressed_nnz, A.nnz());
  EXPECT_LE(C.value_table.extent(0), 300u);
  // 2 + 2 bytes per entry, padding, 16 bytes per row, the table: well under 0.4x CSR's 12 bytes
  EXPECT_LT(static_cast<double>(allocated_bytes(C)), 0.4 * static_cast<double>(allocated_bytes(A)));
}

TEST(CompressedSell, RareValuesAndWideGapsGoToTheRestAndRoundTripExactly) {
  // many distinct values with a 4-entry table, and rows whose columns jump by more than 65,535
  CooMatrix<double, int> coo;
  coo.num_rows = 70;
  coo.num_cols = 200000;
  for (int r = 0; r < 70; ++r) {
    for (int c : {r, r + 10, 70000 + r, 150000 + 3 * r}) {
      coo.row_idx.push_back(r);
      coo.col_idx.push_back(c);
      coo.values.push_back(c % 7 == 0 ? 1.0 + r : 2.5);  // 2.5 is frequent, the others are not
    }
  }
  const HostCsr A = from_coo(coo);
  const auto C = to_compressed_sell(A, 32, 4, 0.0);  // a table however little it covers
  EXPECT_TRUE(C.uses_table);
  EXPECT_GT(C.rest_nnz(), 0u);
  EXPECT_EQ(C.compressed_nnz + C.rest_nnz(), A.nnz());
  expect_same_csr(to_csr(C), A);
  for (int lanes : {2, 4, 32}) {  // the same entries dealt to lanes: jumps and R per lane and row
    SCOPED_TRACE(std::to_string(lanes) + " lanes per row");
    const auto CL = to_compressed_sell(A, 32, 4, 0.0, std::size_t(1) << 22, ValueTableOrder::automatic, lanes);
    EXPECT_EQ(CL.compressed_nnz, C.compressed_nnz);
    EXPECT_EQ(CL.rest_nnz(), C.rest_nnz());
    expect_same_csr(to_csr(CL), A);
  }
}

// Lanes per row (row_lanes): lane j of row r is layout row r * L + j and holds the row's entries j,
// j + L, ...; the matrix round-trips exactly for every L, and a wrong L is refused with its value.
TEST(CompressedSell, LanesPerRowDealTheRowsEntries) {
  const HostCsr A = few_valued(150, 3000, 70, 40, 17);
  for (int lanes : {1, 2, 4, 8, 16, 32}) {
    SCOPED_TRACE(std::to_string(lanes) + " lanes per row");
    const auto C = to_compressed_sell(A, 32, 65536, 0.5, std::size_t(1) << 22, ValueTableOrder::automatic, lanes);
    ASSERT_EQ(C.row_lanes, lanes);
    ASSERT_EQ(C.num_lanes(), A.num_rows * lanes);
    ASSERT_EQ(C.row_length.extent(0), static_cast<std::size_t>(A.num_rows) * lanes);
    EXPECT_EQ(C.num_slices(), (A.num_rows * lanes + 31) / 32);
    EXPECT_EQ(C.rest_nnz(), 0u);
    for (int r = 0; r < A.num_rows; ++r) {
      const auto length = static_cast<int>(A.row_ptr(r + 1) - A.row_ptr(r));
      for (int j = 0; j < lanes; ++j) {
        const int lane = r * lanes + j;
        ASSERT_EQ(C.row_length(lane), length > j ? (length - j + lanes - 1) / lanes : 0)
            << "row " << r << " lane " << j;
        if (length > j) {
          ASSERT_EQ(C.first_col(lane), A.col_idx(A.row_ptr(r) + static_cast<std::size_t>(j)));
          ASSERT_EQ(C.value_table(C.value_index(C.lane_start(lane))),
                    A.values(A.row_ptr(r) + static_cast<std::size_t>(j)));
        }
      }
    }
    expect_same_csr(to_csr(C), A);
  }
  for (int bad : {0, 3, 64, -2}) {
    try {
      (void)to_compressed_sell(A, 32, 65536, 0.5, std::size_t(1) << 22, ValueTableOrder::automatic, bad);
      ADD_FAILURE() << bad << " lanes per row were accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("row_lanes"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(std::to_string(bad)), std::string::npos) << e.what();
    }
  }
  EXPECT_THROW((void)to_compressed_sell(A, 16, 65536, 0.5, std::size_t(1) << 22, ValueTableOrder::automatic, 32),
               std::invalid_argument);  // more lanes than a slice's rows
}

// Rows sorted longest first inside windows (sort_window, row_order): a permutation of each window,
// longest first with ties in matrix order, layout row p holding matrix row row_order(p)'s entries;
// the matrix round-trips exactly, no window takes more slots than none, and a bad window is refused.
TEST(CompressedSell, RowsSortedInWindows) {
  const HostCsr A = few_valued(333, 4000, 45, 500, 23, 45);  // 0-90 entries per row
  for (int lanes : {1, 4}) {
    const auto unsorted =
        to_compressed_sell(A, 32, 65536, 0.5, std::size_t(1) << 22, ValueTableOrder::automatic, lanes);
    EXPECT_EQ(unsorted.row_order.extent(0), 0u);
    for (int window : {0, 1, 32 / lanes, 64, 4096}) {  // one slice, several, the whole matrix
      SCOPED_TRACE(std::to_string(lanes) + " lanes, windows of " + std::to_string(window));
      const auto C =
          to_compressed_sell(A, 32, 65536, 0.5, std::size_t(1) << 22, ValueTableOrder::automatic, lanes, window);
      expect_same_csr(to_csr(C), A);
      EXPECT_LE(C.col_delta.extent(0), unsorted.col_delta.extent(0));
      if (window <= 1) {
        EXPECT_EQ(C.row_order.extent(0), 0u);
        continue;
      }
      ASSERT_EQ(C.row_order.extent(0), static_cast<std::size_t>(A.num_rows));
      std::vector<int> seen(static_cast<std::size_t>(A.num_rows), 0);
      auto width = [&](int r) {  // the longest lane of matrix row r
        const int length = static_cast<int>(A.row_ptr(r + 1) - A.row_ptr(r));
        return (length + lanes - 1) / lanes;
      };
      for (int p = 0; p < A.num_rows; ++p) {
        const int r = C.row_order(p);
        ASSERT_EQ(r / window, p / window) << "layout row " << p << " holds row " << r << " of another window";
        ++seen[static_cast<std::size_t>(r)];
        if (p % window > 0) {  // longest first, ties in matrix order
          const int q = C.row_order(p - 1);
          ASSERT_TRUE(width(q) > width(r) || (width(q) == width(r) && q < r)) << "layout rows " << p - 1 << ", " << p;
        }
        const int length = static_cast<int>(A.row_ptr(r + 1) - A.row_ptr(r));
        for (int j = 0; j < lanes && j < length; ++j) {
          ASSERT_EQ(C.first_col(p * lanes + j), A.col_idx(A.row_ptr(r) + static_cast<std::size_t>(j)));
          ASSERT_EQ(C.row_length(p * lanes + j), (length - j + lanes - 1) / lanes);
        }
      }
      for (int r = 0; r < A.num_rows; ++r) {
        ASSERT_EQ(seen[static_cast<std::size_t>(r)], 1) << "row " << r;
      }
      if (window > 32 / lanes) {
        EXPECT_LT(C.col_delta.extent(0), unsorted.col_delta.extent(0));  // less padding
      } else {
        EXPECT_EQ(C.col_delta.extent(0), unsorted.col_delta.extent(0));  // a slice's rows among themselves
      }
    }
  }
  // -1: the automatic window, chosen once the encoder knows whether its values go inline (wider then)
  for (double min_coverage : {0.5, 2.0}) {  // a table; values inline (no table covers 200 %)
    for (int lanes : {1, 4}) {
      const auto automatic =
          to_compressed_sell(A, 32, 65536, min_coverage, std::size_t(1) << 22, ValueTableOrder::automatic, lanes, -1);
      EXPECT_EQ(automatic.uses_table, min_coverage < 1);
      const int window = impl::automatic_sort_window(32, lanes, !automatic.uses_table);
      EXPECT_EQ(window, automatic.uses_table ? 64 : 1024);
      const auto expected = to_compressed_sell(A, 32, 65536, min_coverage, std::size_t(1) << 22,
                                               ValueTableOrder::automatic, lanes, window);
      ASSERT_EQ(automatic.row_order.extent(0), expected.row_order.extent(0));
      for (std::size_t p = 0; p < expected.row_order.extent(0); ++p)
        ASSERT_EQ(automatic.row_order(p), expected.row_order(p)) << "layout row " << p;
      expect_same_csr(to_csr(automatic), A);
    }
  }
  for (int bad : {-2, 4097, 48, 7}) {  // out of range, or not whole slices of 32 rows
    try {
      (void)to_compressed_sell(A, 32, 65536, 0.5, std::size_t(1) << 22, ValueTableOrder::automatic, 1, bad);
      ADD_FAILURE() << "a window of " << bad << " rows was accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("sort_window"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(std::to_string(bad)), std::string::npos) << e.what();
    }
  }
}

// A matrix that exists only as row blocks (a CI Hamiltonian whose CSR would not fit): the same
// matrix, exactly, whatever the blocks; one block is to_compressed_sell itself.
TEST(CompressedSell, RowBlocksEncodeTheSameMatrix) {
  const HostCsr A =
      few_valued(333, 4000, 40, 500, 91, 30);  // 500 values, a table of 64: some in the rest; 10-70 per row
  auto rows = [&](int first, int end) {
    HostCsr B("block", end - first, A.num_cols, A.row_ptr(static_cast<std::size_t>(end)) - A.row_ptr(first));
    for (int r = first; r <= end; ++r) B.row_ptr(static_cast<std::size_t>(r - first)) = A.row_ptr(r) - A.row_ptr(first);
    for (std::size_t k = 0; k < B.nnz(); ++k) {
      B.col_idx(k) = A.col_idx(A.row_ptr(first) + k);
      B.values(k) = A.values(A.row_ptr(first) + k);
    }
    return B;
  };
  for (const int block : {1, 7, 32, 100, 333, 1000}) {
    for (const auto order : {ValueTableOrder::frequency, ValueTableOrder::first_use}) {
      const int lanes = block == 7 || block == 333 ? 4 : 1;     // lanes per row, blocked and whole
      const int window = block == 7 || block == 1000 ? 64 : 1;  // rows sorted across blocks, and in one
      SCOPED_TRACE("blocks of " + std::to_string(block) + " rows, " + std::to_string(lanes) + " lanes, windows of " +
                   std::to_string(window));
      int calls = 0;
      const auto C = to_compressed_sell_by_blocks<double, int, std::size_t, HostExecSpace>(
          A.num_rows, A.num_cols, block,
          [&](int first, int end) {
            ++calls;
            return rows(first, end);
          },
          32, 64, 0.0, std::size_t(1) << 22, order, lanes, window);
      const int blocks = (A.num_rows + block - 1) / block;
      EXPECT_EQ(calls, 2 * blocks + (blocks > 1 ? std::min(blocks, 8) : 1));  // count, fill, samples
      EXPECT_EQ(C.nnz(), A.nnz());
      EXPECT_EQ(C.value_table.extent(0), 64u);
      EXPECT_GT(C.rest_nnz(), 0u);
      expect_same_csr(to_csr(C), A);
      if (block >= A.num_rows) {  // one block: to_compressed_sell's encoding, slot for slot
        const auto W = to_compressed_sell(A, 32, 64, 0.0, std::size_t(1) << 22, order, lanes, window);
        ASSERT_EQ(W.col_delta.extent(0), C.col_delta.extent(0));
        ASSERT_EQ(W.row_order.extent(0), C.row_order.extent(0));
        for (std::size_t p = 0; p < W.row_order.extent(0); ++p) ASSERT_EQ(W.row_order(p), C.row_order(p));
        for (std::size_t e = 0; e < W.col_delta.extent(0); ++e) {
          ASSERT_EQ(W.col_delta(e), C.col_delta(e));
          ASSERT_EQ(W.value_index(e), C.value_index(e));
        }
        for (std::size_t i = 0; i < 64; ++i) EXPECT_EQ(W.value_table(i), C.value_table(i));
      }
    }
  }
  // blocks of the wrong shape, rows out of order (named by their row in the whole matrix), and a
  // block that changes between the passes are refused
  EXPECT_THROW((to_compressed_sell_by_blocks<double, int, std::size_t, HostExecSpace>(
                   A.num_rows, A.num_cols, 50, [&](int first, int end) { return rows(first, end + (end < 333)); })),
               std::invalid_argument);
  try {
    to_compressed_sell_by_blocks<double, int, std::size_t, HostExecSpace>(A.num_rows, A.num_cols, 50,
                                                                          [&](int first, int end) {
                                                                            HostCsr B = rows(first, end);
                                                                            if (first == 150)
                                                                              std::swap(B.col_idx(0), B.col_idx(1));
                                                                            return B;
                                                                          });
    ADD_FAILURE() << "unsorted rows were accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("row 150 "), std::string::npos) << e.what();
  }
  int visits = 0;
  EXPECT_THROW((to_compressed_sell_by_blocks<double, int, std::size_t, HostExecSpace>(
                   A.num_rows, A.num_cols, 400,
                   [&](int first, int end) {
                     HostCsr B = rows(first, end);
                     if (++visits == 3) {  // the fill pass: one entry fewer than the count pass saw
                       const std::size_t fewer = B.nnz() - 1;
                       B.row_ptr(static_cast<std::size_t>(B.num_rows)) = fewer;
                       B.col_idx = Kokkos::subview(B.col_idx, std::make_pair(std::size_t{0}, fewer));
                       B.values = Kokkos::subview(B.values, std::make_pair(std::size_t{0}, fewer));
                     }
                     return B;
                   })),
               std::invalid_argument);
}

// The value table in order of first use (row by row; the CPUs' default) or most frequent first (the
// GPUs'); the entries, the rest and the product are the same either way.
TEST(CompressedSell, ValueTableOrderIsFirstUseOrFrequency) {
  const HostCsr A = few_valued(300, 4000, 40, 200, 77);
  // 64 of 200 values: some go to the rest
  const auto first = to_compressed_sell(A, 32, 64, 0.0, std::size_t(1) << 22, ValueTableOrder::first_use);
  const auto frequent = to_compressed_sell(A, 32, 64, 0.0, std::size_t(1) << 22, ValueTableOrder::frequency);
  ASSERT_EQ(first.value_table.extent(0), 64u);
  ASSERT_EQ(frequent.value_table.extent(0), 64u);
  // the same 64 values (the most frequent), in different orders
  std::map<double, std::size_t> count;
  for (std::size_t k = 0; k < A.nnz(); ++k) ++count[A.values(k)];
  std::set<double> in_table;
  for (std::size_t i = 0; i < 64; ++i) {
    in_table.insert(frequent.value_table(i));
    if (i > 0) {
      EXPECT_GE(count[frequent.value_table(i - 1)], count[frequent.value_table(i)]) << "position " << i;
    }
  }
  std::vector<double> expected_order;  // the table's values as the rows first use them
  for (std::size_t k = 0; k < A.nnz(); ++k) {
    const double v = A.values(k);
    if (in_table.count(v) && std::find(expected_order.begin(), expected_order.end(), v) == expected_order.end())
      expected_order.push_back(v);
  }
  ASSERT_EQ(expected_order.size(), 64u);
  for (std::size_t i = 0; i < 64; ++i) EXPECT_EQ(first.value_table(i), expected_order[i]) << "position " << i;
  EXPECT_NE(expected_order, std::vector<double>(frequent.value_table.data(), frequent.value_table.data() + 64));
  // automatic, on the host: first use
  const auto automatic = to_compressed_sell(A, 32, 64, 0.0);
  for (std::size_t i = 0; i < 64; ++i) EXPECT_EQ(automatic.value_table(i), first.value_table(i));
  // the same layout and rest; each entry's index points at its own value in either table
  EXPECT_EQ(first.compressed_nnz, frequent.compressed_nnz);
  EXPECT_EQ(first.rest_nnz(), frequent.rest_nnz());
  for (std::size_t e = 0; e < first.col_delta.extent(0); ++e) ASSERT_EQ(first.col_delta(e), frequent.col_delta(e));
  for (int r = 0; r < A.num_rows; ++r) {  // the entries' slots (padding and jump slots hold index 0)
    const std::size_t s0 = first.slice_ptr(r / 32) + static_cast<std::size_t>(r % 32);
    for (int k = 0; k < first.row_length(r); ++k) {
      const std::size_t e = s0 + 32 * static_cast<std::size_t>(k);
      if (first.col_delta(e) == first.jump_delta) continue;
      ASSERT_EQ(first.value_table(first.value_index(e)), frequent.value_table(frequent.value_index(e))) << "slot " << e;
    }
  }
  for (const auto* C : {&first, &frequent}) {
    const auto B = to_csr(*C);
    ASSERT_EQ(B.nnz(), A.nnz());
    for (std::size_t k = 0; k < A.nnz(); ++k) {
      ASSERT_EQ(B.col_idx(k), A.col_idx(k)) << "entry " << k;
      ASSERT_EQ(B.values(k), A.values(k)) << "entry " << k;
    }
  }
}

// The co-occurrence order (ValueTableOrder::cooccurrence): values that the same half-warp steps read
// share a 128-byte line of the table, whatever their frequency order; the product is unchanged.
TEST(CompressedSell, CooccurrenceOrderPutsValuesReadTogetherInOneLine) {
  // 64 rows of 48 entries; entry k of row r has value (group k % 3, member r % 16): at every slot the
  // 16 lanes of a half-warp read the 16 values of one group, and no group meets another. All 48
  // values are equally frequent, so frequency order (ties by bits) interleaves the groups.
  CooMatrix<double, int> coo;
  coo.num_rows = 64;
  coo.num_cols = 48;
  auto value = [](int group, int member) { return 1.0 + member + 0.25 * group; };
  for (int r = 0; r < 64; ++r)
    for (int k = 0; k < 48; ++k) {
      coo.row_idx.push_back(r);
      coo.col_idx.push_back(k);
      coo.values.push_back(value(k % 3, r % 16));
    }
  const HostCsr A = from_coo(coo);
  const auto frequent = to_compressed_sell(A, 32, 65536, 0.0, std::size_t(1) << 22, ValueTableOrder::frequency);
  const auto grouped = to_compressed_sell(A, 32, 65536, 0.0, std::size_t(1) << 22, ValueTableOrder::cooccurrence);
  ASSERT_EQ(grouped.value_table.extent(0), 48u);
  auto lines_of_group = [&](const auto& C, int group) {
    std::set<std::size_t> lines;
    for (int member = 0; member < 16; ++member)
      for (std::size_t i = 0; i < C.value_table.extent(0); ++i)
        if (C.value_table(i) == value(group, member)) lines.insert(i / 16);
    return lines;
  };
  for (int group = 0; group < 3; ++group) {
    EXPECT_EQ(lines_of_group(grouped, group).size(), 1u) << "group " << group;
    EXPECT_GT(lines_of_group(frequent, group).size(), 1u) << "group " << group;  // what the order changed
  }
  // the same values, the same layout; every slot's index points at its own value
  std::vector<double> a(frequent.value_table.data(), frequent.value_table.data() + 48);
  std::vector<double> b(grouped.value_table.data(), grouped.value_table.data() + 48);
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  EXPECT_EQ(a, b);
  for (std::size_t e = 0; e < frequent.col_delta.extent(0); ++e) {
    ASSERT_EQ(grouped.col_delta(e), frequent.col_delta(e));
    ASSERT_EQ(grouped.value_table(grouped.value_index(e)), frequent.value_table(frequent.value_index(e)))
        << "slot " << e;
  }
  const auto B = to_csr(grouped);
  ASSERT_EQ(B.nnz(), A.nnz());
  for (std::size_t k = 0; k < A.nnz(); ++k) {
    ASSERT_EQ(B.col_idx(k), A.col_idx(k)) << "entry " << k;
    ASSERT_EQ(B.values(k), A.values(k)) << "entry " << k;
  }
  // fewer than 32 values: left in frequency order
  const auto small = to_compressed_sell(A, 32, 16, 0.0, std::size_t(1) << 22, ValueTableOrder::cooccurrence);
  const auto small_frequent = to_compressed_sell(A, 32, 16, 0.0, std::size_t(1) << 22, ValueTableOrder::frequency);
  for (std::size_t i = 0; i < 16; ++i) EXPECT_EQ(small.value_table(i), small_frequent.value_table(i));
}

// A gap wider than 16 bits is bridged by jump slots, not sent to the rest.
TEST(CompressedSell, WideGapsAreBridgedByJumpSlots) {
  CooMatrix<double, int> coo;
  coo.num_rows = 2;
  coo.num_cols = 2000000;
  coo.row_idx = {0, 0, 0, 1};
  coo.col_idx = {3, 200000, 1999999, 7};
  coo.values = {1.5, 1.5, 1.5, 1.5};
  const HostCsr A = from_coo(coo);
  const auto C = to_compressed_sell(A);
  // 3 -> 200,000 takes 3 jump slots, 200,000 -> 1,999,999 takes 27: nothing goes to the rest
  EXPECT_EQ(C.rest_nnz(), 0u);
  EXPECT_EQ(C.compressed_nnz, 4u);
  EXPECT_EQ(C.row_length(0), 1 + 3 + 1 + 27 + 1);
  EXPECT_EQ(C.row_length(1), 1);
  const auto B = to_csr(C);
  for (std::size_t k = 0; k < A.nnz(); ++k) ASSERT_EQ(B.col_idx(k), A.col_idx(k)) << "entry " << k;
  // the kernels walk the jumps (host: the slice shape) to the same product as the oracle
  Kokkos::View<double*, Kokkos::HostSpace> x("x", 2000000), y("y", 2), expected("expected", 2);
  for (int c = 0; c < 2000000; ++c) x(c) = 1.0 + c % 7;
  host_oracle_spmv(1.0, A, x, 0.0, expected);
  spmv(Kokkos::DefaultHostExecutionSpace(), 1.0, C, x, 0.0, y);
  Kokkos::fence();
  EXPECT_EQ(y(0), expected(0));
  EXPECT_EQ(y(1), expected(1));
}

// Unsorted rows are refused with a message, before any parallel pass (an exception thrown inside a
// host parallel region would end the process).
TEST(CompressedSell, UnsortedRowsAreRefusedNotFatal) {
  HostCsr A("unsorted", 3, 4, 4);
  const int cols[] = {0, 3, 2, 1};
  for (int k = 0; k < 4; ++k) {
    A.col_idx(k) = cols[k];
    A.values(k) = 1.0;
  }
  A.row_ptr(1) = 1;
  A.row_ptr(2) = 3;
  A.row_ptr(3) = 4;
  try {
    (void)to_compressed_sell(A);
    FAIL() << "accepted an unsorted row";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("row 1 is not sorted"), std::string::npos) << e.what();
  }
}

// Random values (every one distinct): no table, values inline, nothing in the rest.
TEST(CompressedSell, RandomValuesAreStoredInlineWithoutATable) {
  const auto A = random_irregular<double>(300, 2000, 71, 200);
  const auto C = to_compressed_sell(A, 32, 16);
  EXPECT_FALSE(C.uses_table);
  EXPECT_EQ(C.rest_nnz(), 0u);
  EXPECT_EQ(C.inline_values.extent(0), C.col_delta.extent(0));
  const auto B = to_csr(C);
  for (std::size_t k = 0; k < A.nnz(); ++k) ASSERT_EQ(B.values(k), A.values(k)) << "entry " << k;
}

TEST(CompressedSell, ValueTableKeepsSignedZerosApartAndRefusesBadArguments) {
  CooMatrix<double, int> coo;
  coo.num_rows = 1;
  coo.num_cols = 3;
  coo.row_idx = {0, 0, 0};
  coo.col_idx = {0, 1, 2};
  coo.values = {0.0, -0.0, 1.0};
  const auto C = to_compressed_sell(from_coo(coo));
  const auto B = to_csr(C);
  EXPECT_FALSE(std::signbit(B.values(0)));
  EXPECT_TRUE(std::signbit(B.values(1)));
  EXPECT_THROW(to_compressed_sell(from_coo(coo), 0), std::invalid_argument);
  EXPECT_THROW(to_compressed_sell(from_coo(coo), 32, 0), std::invalid_argument);
  EXPECT_THROW(to_compressed_sell(from_coo(coo), 32, 65537), std::invalid_argument);
}

}  // namespace

// ------------------------------------------------------------------------ the automatic choice
namespace {

using namespace cispmv;

TEST(ChooseFormat, ChoosesTheCheapestModelOnTheHostAndEstimatesTheCompressedSizeWithinTenPercent) {
  const HostCsr A = few_valued(2048, 20000, 200, 500, 81);
  const FormatChoice host = choose_format<Kokkos::DefaultHostExecutionSpace>(A);
  ASSERT_EQ(host.candidates.size(), 3u);  // csr, sell, csell (the hybrid format only on GPUs)
  EXPECT_EQ(host.format, host.candidates.front().format) << host.summary();
  for (std::size_t i = 1; i < host.candidates.size(); ++i) {
    EXPECT_LE(host.candidates[i - 1].cost(), host.candidates[i].cost()) << host.summary();
  }
  // ~2.8x fewer bytes than CSR: with the AVX-512 walk (0.5 or 0.3 of copy with a table, 0.85 with values
  // inline, against CSR's 0.85) csell; with the portable loop (0.26, it waits on its gathers) CSR
  EXPECT_EQ(host.format, impl::host_simd::avx512_available() ? Format::csell : Format::csr) << host.summary();
  // for a solver's products the conversion counts too: every candidate but CSR carries its cost
  const FormatChoice solver = choose_format<Kokkos::DefaultHostExecutionSpace>(A, 32, 15.0);
  EXPECT_EQ(solver.products, 15.0);
  for (std::size_t i = 1; i < solver.candidates.size(); ++i) {
    EXPECT_LE(solver.candidates[i - 1].cost(15.0), solver.candidates[i].cost(15.0)) << solver.summary();
  }
  const double csr_bytes = static_cast<double>(A.nnz()) * 12.0;
  for (const auto& c : solver.candidates) {
    if (c.format == Format::csr) {
      EXPECT_EQ(c.setup, 0.0);
    } else {
      EXPECT_GT(c.setup, 10.0 * csr_bytes) << solver.summary();
    }
  }
  EXPECT_NE(solver.summary().find("15 products + conversion"), std::string::npos) << solver.summary();
  EXPECT_THROW(choose_format<Kokkos::DefaultHostExecutionSpace>(A, 0), std::invalid_argument);
  const FormatChoice empty = choose_format<Kokkos::DefaultHostExecutionSpace>(HostCsr("empty", 0, 0, 0));
  EXPECT_EQ(empty.format, Format::csr);
  EXPECT_TRUE(std::isfinite(empty.candidates.front().cost()));
  for (const auto& c : host.candidates) EXPECT_GT(c.bytes, 0.0);
  // the compressed format's estimate is close to its real size (as built for the host: values inline
  // where impl::host_simd::values_inline_pays)
  const auto C = build_format<Format::csell>(A, FormatParams::for_space<Kokkos::DefaultHostExecutionSpace>());
  for (const auto& c : host.candidates) {
    if (c.format == Format::csell) {
      const double real = static_cast<double>(allocated_bytes(C)) + 8.0 * (A.num_rows + A.num_cols);
      EXPECT_NEAR(c.bytes / real, 1.0, 0.1) << host.summary();
    }
  }
  EXPECT_NE(host.summary().find("csr"), std::string::npos);
}

// Several vectors per product: on a CPU the single-vector candidates, each product CSR's single-vector
// cost times its block kernel's measured ratio (impl::host_block_ratios; Sliced ELLPACK: k products);
// on a GPU the block model takes CSR and csell with its values inline (10 bytes per entry, converted in
// 42 CSR reads), and the many reads of a block eigensolver repay csell's conversion.
TEST(ChooseFormat, SeveralVectorsPerProductUseTheBlockModels) {
  using Host = Kokkos::DefaultHostExecutionSpace;
  const HostCsr A = few_valued(2048, 20000, 200, 500, 81);
  const FormatChoice one = choose_format<Host>(A, 32, 20.0);
  const auto cost_of = [](const FormatChoice& c, Format f) {
    for (const auto& e : c.candidates)
      if (e.format == f) return e.cost();
    ADD_FAILURE() << "no " << format_info(f).name << " in " << c.summary();
    return 0.0;
  };
  const bool walk = impl::host_simd::avx512_available();
  for (const int k : {2, 5, 9, 16, 21}) {
    const FormatChoice block = choose_format<Host>(A, 32, 20.0, k);
    ASSERT_EQ(block.candidates.size(), one.candidates.size()) << block.summary();
    EXPECT_EQ(block.vectors, k);
    EXPECT_NE(block.summary().find(std::to_string(k) + " vectors per product"), std::string::npos) << block.summary();
    const double csr1 = cost_of(one, Format::csr);
    EXPECT_NEAR(cost_of(block, Format::csr), csr1 * impl::host_block_ratio(&impl::HostBlockRatio::csr, k), 1e-6 * csr1);
    EXPECT_NEAR(cost_of(block, Format::csell),
                csr1 * impl::host_block_ratio(
                           walk ? &impl::HostBlockRatio::csell_walk : &impl::HostBlockRatio::csell_portable, k),
                1e-6 * csr1);
    EXPECT_NEAR(cost_of(block, Format::sell), k * cost_of(one, Format::sell), 1e-6 * csr1);
    const double vector_bytes = 8.0 * (A.num_rows + A.num_cols);
    for (std::size_t i = 0; i < block.candidates.size(); ++i) {
      const auto& c = block.candidates[i];
      for (const auto& e : one.candidates) {
        if (e.format != c.format) continue;
        EXPECT_DOUBLE_EQ(c.bytes, e.bytes + (k - 1) * vector_bytes);  // the k vectors moved
        EXPECT_EQ(c.setup, e.setup);                                  // the same conversion
      }
      if (i > 0) {
        EXPECT_LE(block.candidates[i - 1].cost(20.0), c.cost(20.0)) << block.summary();
      }
    }
  }
  // the measured ratios: linear between the widths, 16 columns at a time beyond them
  EXPECT_DOUBLE_EQ(impl::host_block_ratio(&impl::HostBlockRatio::csr, 8), 3.65);
  EXPECT_DOUBLE_EQ(impl::host_block_ratio(&impl::HostBlockRatio::csr, 10), (3.65 + 8.47) / 2);
  EXPECT_DOUBLE_EQ(impl::host_block_ratio(&impl::HostBlockRatio::csell_walk, 33),
                   2 * 3.35 + impl::host_block_ratio(&impl::HostBlockRatio::csell_walk, 1));
  // with the walk a wide block favours csell, a narrow one CSR (2 cores: 14 vectors 197 against 600 ms
  // per product, 2 vectors 117 against 71)
  if (walk) {
    EXPECT_LT(cost_of(choose_format<Host>(A, 32, 20.0, 14), Format::csell),
              cost_of(choose_format<Host>(A, 32, 20.0, 14), Format::csr));
    EXPECT_GT(cost_of(choose_format<Host>(A, 32, 20.0, 2), Format::csell),
              cost_of(choose_format<Host>(A, 32, 20.0, 2), Format::csr));
  }
  EXPECT_THROW(choose_format<Host>(A, 32, 20.0, 0), std::invalid_argument);
#if defined(KOKKOS_ENABLE_CUDA)
  const FormatChoice gpu = choose_format<Kokkos::Cuda>(A, 32, 20.0, 5);
  ASSERT_EQ(gpu.candidates.size(), 2u) << gpu.summary();
  const double csr_bytes = static_cast<double>(A.nnz()) * 12.0 + (A.num_rows + 1) * 8.0;
  for (const auto& c : gpu.candidates) {
    if (c.format == Format::csr) {
      EXPECT_EQ(c.efficiency, impl::gpu_block_efficiency_csr);
      EXPECT_EQ(c.setup, 0.0);
    } else {
      EXPECT_EQ(c.format, Format::csell);
      EXPECT_EQ(c.efficiency, impl::gpu_block_efficiency_csell);
      EXPECT_DOUBLE_EQ(c.setup, impl::gpu_inline_csell_conversion_reads * csr_bytes);
      EXPECT_GT(c.bytes, 10.0 * static_cast<double>(A.nnz()));  // values inline, padding included
    }
  }
  // 20 products: csell's 0.42 against CSR's 0.19 at ~10 bytes against ~12 repays its 42 reads
  EXPECT_EQ(gpu.format, Format::csell) << gpu.summary();
  EXPECT_EQ(choose_format<Kokkos::Cuda>(A, 32, 2.0, 5).format, Format::csr);  // two products do not
#endif
}

}  // namespace
