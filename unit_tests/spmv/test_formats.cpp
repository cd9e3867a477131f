// Tier 1: the formats' arrays on the paper's 6x5 example equal the paper's listings exactly;
// round trips back to CSR are exact; the paper's reports (Tables 3-5) are reproduced.
#include "test_utils.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <vector>

namespace {

using namespace cispmv;
using cispmv::test::few_valued;
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
  // the split from a table of every column and from the occupied columns sorted: the same
  for (const auto& A : {from_coo(coo), paper_example(), cispmv::test::random_irregular<double>(300, 2000, 4, 40)}) {
    EXPECT_EQ(cispmv::impl::boundary_split(A), cispmv::impl::boundary_split(A, true));
  }
  // one row of 2^31 - 1 columns (a valid file's size): no table of its columns
  CooMatrix<double, int> wide;
  wide.num_rows = 1;
  wide.num_cols = std::numeric_limits<int>::max();
  wide.row_idx = {0, 0};
  wide.col_idx = {4, 1000000};
  wide.values = {1.0, 2.0};
  const auto wide_choice = choose_boundary(from_coo(wide));
  EXPECT_EQ(wide_choice.boundary, wide_choice.reference_detected ? 1 : 2);
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
