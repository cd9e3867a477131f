// Several vectors at once (rank-2 X and Y): every format x block shape x {double, float} on this
// backend against the host oracle, column by column (tier 2). Apart from tst_spmv.hpp so that the two
// compile side by side (the multi-vector kernels are many: block widths x lane shapes x layouts).
#include "test_utils.hpp"

namespace {

using namespace cispmv;
using cispmv::test::paper_example;
using cispmv::test::random_irregular;

template <class Scalar>
class SpmvBlockTest : public ::testing::Test {};
using ScalarTypes = ::testing::Types<double, float>;
TYPED_TEST_SUITE(SpmvBlockTest, ScalarTypes);

}  // namespace

namespace {

using namespace cispmv;

// Y = beta*Y + alpha*A*X for k columns at once, k = 1 .. 21 (one, several and more than one block of
// 16 columns; widths that are and are not compiled ones), in both layouts, every beta case, every
// format and kernel of the registry, against the host oracle column by column.
template <class Exec, class Layout, class HostFormat, class Scalar>
void expect_block_matches_oracle(const HostFormat& host_format, const HostCsrMatrix<Scalar, int, std::size_t>& oracle,
                                 const SpmvOptions& opts, int k, Scalar alpha, Scalar beta) {
  SCOPED_TRACE(std::string("format ") + HostFormat::format_name + ", kernel " + kernel_name(opts.kernel) + ", shape " +
               block_shape_name(opts.block_shape) + ", k " + std::to_string(k) + ", beta " + std::to_string(beta) +
               (std::is_same_v<Layout, Kokkos::LayoutRight> ? ", LayoutRight" : ", LayoutLeft"));
  const auto A = to_device<Exec>(host_format);
  using HostBlock = Kokkos::View<Scalar**, Layout, Kokkos::HostSpace>;
  HostBlock hx("x", oracle.num_cols, k), hy("y", oracle.num_rows, k);
  std::vector<Kokkos::View<Scalar*, Kokkos::HostSpace>> expected;
  double beta_y = 0;
  for (int j = 0; j < k; ++j) {
    const auto xj = cispmv::test::random_vector<Scalar>(oracle.num_cols, 100 + 2 * j);
    const auto yj = cispmv::test::random_vector<Scalar>(oracle.num_rows, 101 + 2 * j);
    for (int i = 0; i < oracle.num_cols; ++i) hx(i, j) = xj(i);
    for (int i = 0; i < oracle.num_rows; ++i) {
      hy(i, j) = beta == Scalar(0) ? std::numeric_limits<Scalar>::quiet_NaN() : yj(i);  // must not be read
      beta_y = std::max(beta_y, std::abs(static_cast<double>(beta * yj(i))));
    }
    expected.emplace_back("expected", oracle.num_rows);
    Kokkos::deep_copy(expected.back(), yj);
    host_oracle_spmv(alpha, oracle, xj, beta, expected.back());
  }
  const auto x = Kokkos::create_mirror_view_and_copy(typename Exec::memory_space(), hx);
  const auto y = Kokkos::create_mirror_view_and_copy(typename Exec::memory_space(), hy);
  const SpmvPlan<Exec, std::remove_const_t<decltype(A)>> plan(Exec(), A, opts);
  plan.apply(alpha, x, beta, y);
  Exec().fence();
  const auto y_host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), y);  // whole: a GPU copies no strided
  for (int j = 0; j < k; ++j) {
    SCOPED_TRACE("column " + std::to_string(j));
    Kokkos::View<Scalar*, Kokkos::HostSpace> got("got", oracle.num_rows);
    for (int i = 0; i < oracle.num_rows; ++i) got(i) = y_host(i, j);
    const auto xj = cispmv::test::random_vector<Scalar>(oracle.num_cols, 100 + 2 * j);
    EXPECT_TRUE(cispmv::test::allclose(got, expected[j], spmv_tolerance(oracle, xj, alpha, beta_y)));
  }
}

TYPED_TEST(SpmvBlockTest, SeveralVectorsAtOnceMatchTheHostOracleInEveryFormat) {
  using Scalar = TypeParam;
  using Exec = TEST_EXECSPACE;
  const auto A = cispmv::test::random_irregular<Scalar>(203, 190, 81, 70);
  FormatParams params;
  params.boundary = 6;
  for (const FormatInfo& info : format_registry) {
    std::vector<Kernel> kernels = format_kernels(info.format);
    kernels.push_back(Kernel::automatic);
    with_host_format(info.format, A, params, [&](const auto& host_format) {
      using Plan = SpmvPlan<Exec, std::remove_const_t<decltype(to_device<Exec>(host_format))>>;
      std::vector<BlockShape> shapes{BlockShape::automatic, BlockShape::rows};
      if (Plan::has_lane_kernel()) shapes.push_back(BlockShape::lanes);  // forced: it runs on the host too
      for (Kernel kernel : kernels) {
        for (BlockShape shape : shapes) {
          // the lane shape with one column per lane and with pairs (2, 4, 8; the odd widths 3, 5 and
          // 21's last 5 columns have an odd row stride, so they take one column per lane)
          const std::vector<int> lane_columns =
              shape == BlockShape::lanes ? std::vector<int>{0, 1, 2, 4, 8} : std::vector<int>{0};
          for (int per_lane : lane_columns) {
            SCOPED_TRACE("lane_columns " + std::to_string(per_lane));
            SpmvOptions opts;
            opts.kernel = kernel;
            opts.block_shape = shape;
            opts.lane_columns = per_lane;
            for (int k : {1, 3, 8, 16, 21}) {
              expect_block_matches_oracle<Exec, Kokkos::LayoutRight>(host_format, A, opts, k, Scalar(1.5), Scalar(0));
            }
            expect_block_matches_oracle<Exec, Kokkos::LayoutRight>(host_format, A, opts, 5, Scalar(1), Scalar(1));
            expect_block_matches_oracle<Exec, Kokkos::LayoutRight>(host_format, A, opts, 2, Scalar(-1), Scalar(-0.5));
            expect_block_matches_oracle<Exec, Kokkos::LayoutRight>(host_format, A, opts, 6, Scalar(-1), Scalar(-0.5));
          }
        }
      }
    });
  }
  // the other layout, as it is (one format: the kernels are the same code for every layout)
  for (Kernel kernel : {Kernel::scalar, Kernel::vector}) {
    for (BlockShape shape : {BlockShape::rows, BlockShape::lanes}) {
      SpmvOptions opts;
      opts.kernel = kernel;
      opts.block_shape = shape;
      expect_block_matches_oracle<Exec, Kokkos::LayoutLeft>(A, A, opts, 5, Scalar(-1), Scalar(-0.5));
    }
  }
  // the formats with a multi-vector kernel read the matrix once per 16 columns; CSR and csell have
  // the lane shape, which the automatic one takes on GPUs for 8 or more columns; asking a format without
  // it for it is an error
  EXPECT_TRUE((SpmvPlan<Exec, CsrMatrix<Scalar, int, std::size_t, Exec>>::has_block_kernel()));
  EXPECT_TRUE((SpmvPlan<Exec, HybridMatrix<Scalar, int, std::size_t, Exec>>::has_block_kernel()));
  EXPECT_TRUE((SpmvPlan<Exec, CompressedSellMatrix<Scalar, int, std::size_t, Exec>>::has_block_kernel()));
  EXPECT_FALSE((SpmvPlan<Exec, EllMatrix<Scalar, int, Exec>>::has_block_kernel()));
  EXPECT_TRUE((SpmvPlan<Exec, CompressedSellMatrix<Scalar, int, std::size_t, Exec>>::has_lane_kernel()));
  EXPECT_FALSE((SpmvPlan<Exec, HybridMatrix<Scalar, int, std::size_t, Exec>>::has_lane_kernel()));
  const auto csell = to_device<Exec>(to_compressed_sell(A));
  const SpmvPlan<Exec, std::remove_const_t<decltype(csell)>> automatic(Exec(), csell);
  EXPECT_EQ(automatic.block_shape(), cispmv::impl::is_gpu_space_v<Exec> ? BlockShape::automatic : BlockShape::rows);
  SpmvOptions lanes;
  lanes.block_shape = BlockShape::lanes;
  const auto hybrid = to_device<Exec>(to_hybrid(A));
  try {
    SpmvPlan<Exec, std::remove_const_t<decltype(hybrid)>> plan(Exec(), hybrid, lanes);
    ADD_FAILURE() << "no exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("no lane shape"), std::string::npos) << e.what();
  }
}

// Several vectors on a csell matrix with lanes per row: every block shape and column count.
TYPED_TEST(SpmvBlockTest, CompressedSellLanesPerRowSeveralVectors) {
  using Scalar = TypeParam;
  const auto A = cispmv::test::random_irregular<Scalar>(203, 190, 82, 70);
  for (int lanes : {4, 32}) {
    const auto C = to_compressed_sell(A, 32, 65536, 0.5, std::size_t(1) << 22, ValueTableOrder::automatic, lanes);
    for (BlockShape shape : {BlockShape::automatic, BlockShape::rows, BlockShape::lanes}) {
      for (Kernel kernel : {Kernel::automatic, Kernel::scalar}) {
        SpmvOptions opts{kernel};
        opts.block_shape = shape;
        for (int k : {2, 3, 8, 16, 21})
          expect_block_matches_oracle<TEST_EXECSPACE, Kokkos::LayoutRight>(C, A, opts, k, Scalar(1.5), Scalar(-0.5));
      }
    }
  }
}

// csell with its rows sorted longest first in windows (row_order): every kernel shape writes each
// layout row's sum to its matrix row (y updated in place for beta != 0), with a table, rows partly
// in R, values inline, one lane and eight; and several vectors in every block shape.
TYPED_TEST(SpmvBlockTest, CompressedSellSortedRowsMatchHostOracle) {
  using Scalar = TypeParam;
  using Exec = TEST_EXECSPACE;
  const auto A = cispmv::test::csell_test_matrix<Scalar>(75);
  for (int lanes : {1, 8}) {
    for (int window : {64, 256}) {
      SCOPED_TRACE(std::to_string(lanes) + " lanes per row, windows of " + std::to_string(window));
      const auto order = ValueTableOrder::automatic;
      const auto table = to_compressed_sell(A, 32, 65536, 0.0, std::size_t(1) << 22, order, lanes, window);
      const auto rest = to_compressed_sell(A, 32, 2000, 0.0, std::size_t(1) << 22, order, lanes, window);
      const auto inline_values = to_compressed_sell(A, 32, 16, 0.5, std::size_t(1) << 22, order, lanes, window);
      ASSERT_EQ(table.row_order.extent(0), 700u);
      ASSERT_GT(rest.rest_nnz(), A.nnz() / 2);
      ASSERT_FALSE(inline_values.uses_table);
      for (const auto* M : {&table, &rest, &inline_values}) {
        for (Kernel kernel : {Kernel::automatic, Kernel::scalar, Kernel::vector}) {
          for (int unroll : {0, 2}) {
            SpmvOptions o{kernel};
            o.unroll = unroll;
            for (Scalar beta : {Scalar(0), Scalar(1), Scalar(-0.5)})
              cispmv::test::expect_matches_oracle<Exec>(*M, A, o, Scalar(1.5), beta, 76);
          }
        }
      }
      for (BlockShape shape : {BlockShape::automatic, BlockShape::rows, BlockShape::lanes}) {
        SpmvOptions opts;
        opts.block_shape = shape;
        for (const auto* M : {&table, &inline_values}) {
          for (int k : {2, 5, 8})
            expect_block_matches_oracle<Exec, Kokkos::LayoutRight>(*M, A, opts, k, Scalar(1.5), Scalar(-0.5));
        }
      }
    }
  }
}

// csell's block walk on CPUs with AVX-512 (impl::host_simd::block_walk, double, 2-16 columns of a
// row-major X; elsewhere and with host_simd off the portable loop): a table, rows mostly in R, values
// inline, rows sorted in windows, jump slots (column gaps beyond 16 bits), a slice's last rows fewer
// than 8, every compiled width and partial ones, every beta case; the same against the oracle either way.
TYPED_TEST(SpmvBlockTest, CompressedSellHostBlockWalkMatchesHostOracle) {
  using Scalar = TypeParam;
  using Exec = TEST_EXECSPACE;
  const auto A = cispmv::test::csell_test_matrix<Scalar>(77);                    // 700 rows: 21 slices and 28 rows
  const auto wide = cispmv::test::random_irregular<Scalar>(301, 400000, 78, 6);  // gaps beyond 16 bits
  const auto order = ValueTableOrder::automatic;
  std::vector<std::pair<const HostCsrMatrix<Scalar, int, std::size_t>*, decltype(to_compressed_sell(A))>> cases;
  cases.emplace_back(&A, to_compressed_sell(A, 32, 65536, 0.0));                                      // a table
  cases.emplace_back(&A, to_compressed_sell(A, 32, 2000, 0.0));                                       // most in R
  cases.emplace_back(&A, to_compressed_sell(A, 32, 65536, 2.0));                                      // values inline
  cases.emplace_back(&A, to_compressed_sell(A, 32, 65536, 0.0, std::size_t(1) << 22, order, 1, 64));  // sorted
  cases.emplace_back(&wide, to_compressed_sell(wide, 32, 65536, 0.0));
  ASSERT_TRUE(cases[0].second.uses_table);
  ASSERT_GT(cases[1].second.rest_nnz(), A.nnz() / 2);
  ASSERT_FALSE(cases[2].second.uses_table);
  for (const auto& [oracle, C] : cases) {
    SCOPED_TRACE((C.uses_table ? std::string("table") : std::string("values inline")) + ", rest " +
                 std::to_string(C.rest_nnz()) + ", " + std::to_string(oracle->num_cols) + " columns");
    for (HostSimd simd : {HostSimd::automatic, HostSimd::off}) {
      SCOPED_TRACE(std::string("host_simd ") + host_simd_name(simd));
      SpmvOptions opts{Kernel::scalar};
      opts.block_shape = BlockShape::rows;
      opts.host_simd = simd;
      for (int k : {2, 4, 5, 8, 9, 16})
        expect_block_matches_oracle<Exec, Kokkos::LayoutRight>(C, *oracle, opts, k, Scalar(1.5), Scalar(0));
      expect_block_matches_oracle<Exec, Kokkos::LayoutRight>(C, *oracle, opts, 7, Scalar(1), Scalar(1));
      expect_block_matches_oracle<Exec, Kokkos::LayoutRight>(C, *oracle, opts, 12, Scalar(-1), Scalar(-0.5));
      expect_block_matches_oracle<Exec, Kokkos::LayoutLeft>(C, *oracle, opts, 5, Scalar(-1), Scalar(-0.5));
    }
  }
}

// csell's pair kernels (one pair of X per lane, slices of 32 rows with one lane each, X's rows K apart:
// impl::PairTag, variant 0 values inline, 1 through the table) against the oracle: a table, rows mostly
// in R, values inline, rows sorted in windows, jump slots; rows shorter and longer than the kernels' groups
// (4 and 12 entries) and not whole groups; 4, 8 and 16 columns take them, 2 columns the 4-column launch's
// variants for X's rows 2 apart (2 and 3), 6 (X's rows not K apart) the generic lane walk; every beta case.
// The variant each matrix and X get, and the automatic lane width, is checked.
TYPED_TEST(SpmvBlockTest, CompressedSellPairKernelsMatchHostOracle) {
  using Scalar = TypeParam;
  using Exec = TEST_EXECSPACE;
  const auto A = cispmv::test::csell_test_matrix<Scalar>(79);
  // gaps beyond 16 bits, rows of up to 40 entries: jump slots among the pair kernel's groups of 12
  const auto wide = cispmv::test::random_irregular<Scalar>(301, 400000, 80, 40);
  const auto order = ValueTableOrder::automatic;
  std::vector<std::tuple<const HostCsrMatrix<Scalar, int, std::size_t>*, decltype(to_compressed_sell(A)), int>> cases;
  cases.emplace_back(&A, to_compressed_sell(A, 32, 65536, 0.0), 1);                                      // a table
  cases.emplace_back(&A, to_compressed_sell(A, 32, 2000, 0.0), 1);                                       // most in R
  cases.emplace_back(&A, to_compressed_sell(A, 32, 65536, 2.0), 0);                                      // inline
  cases.emplace_back(&A, to_compressed_sell(A, 32, 65536, 2.0, std::size_t(1) << 22, order, 1, 64), 0);  // sorted
  cases.emplace_back(&wide, to_compressed_sell(wide, 32, 65536, 2.0), 0);
  cases.emplace_back(&A, to_compressed_sell(A, 32, 65536, 2.0, std::size_t(1) << 22, order, 2), -1);  // 2 lanes a row
  cases.emplace_back(&A, to_compressed_sell(A, 64, 65536, 2.0), -1);                                  // slices of 64
  for (const auto& [oracle, C, variant] : cases) {
    SCOPED_TRACE((C.uses_table ? std::string("table") : std::string("values inline")) + ", rest " +
                 std::to_string(C.rest_nnz()) + ", slices of " + std::to_string(C.slice_height) + ", " +
                 std::to_string(C.row_lanes) + " lane(s) per row, " + std::to_string(oracle->num_cols) + " columns");
    const auto D = to_device<Exec>(C);
    using Block = Kokkos::View<const Scalar**, Kokkos::LayoutRight, typename Exec::memory_space>;
    using Out = Kokkos::View<Scalar**, Kokkos::LayoutRight, typename Exec::memory_space>;
    using F = cispmv::impl::SpmvBlockFunctor<Exec, std::remove_const_t<decltype(D)>, Block, Out, 8>;
    using F4 = cispmv::impl::SpmvBlockFunctor<Exec, std::remove_const_t<decltype(D)>, Block, Out, 4>;
    static_assert(F::pair_variants == 2 && F4::pair_variants == 4);
    const Out y8("y8", oracle->num_rows, 8);
    const Block x8 = Out("x8", oracle->num_cols, 8), x6 = Out("x6", oracle->num_cols, 6);
    const Block x4 = Out("x4", oracle->num_cols, 4), x2 = Out("x2", oracle->num_cols, 2);
    EXPECT_EQ(F(D, x8, y8, 1, 0, 0, 8).pair_variant(), variant);
    EXPECT_EQ(F(D, x6, y8, 1, 0, 0, 6).pair_variant(), -1);  // X's rows 6 apart
    EXPECT_EQ(F(D, x2, y8, 1, 0, 0, 2).pair_variant(), -1);  // 2 apart: the 4-column launch's variants only
    EXPECT_EQ(F4(D, x4, y8, 1, 0, 0, 4).pair_variant(), variant);
    EXPECT_EQ(F4(D, x2, y8, 1, 0, 0, 2).pair_variant(), variant >= 0 ? variant + 2 : -1);
    EXPECT_EQ(F4(D, x6, y8, 1, 0, 0, 4).pair_variant(), -1);
    EXPECT_EQ(F(D, x8, y8, 1, 0, 0, 8).automatic_lane_columns(), variant >= 0 ? 2 : 4);
    EXPECT_EQ(F4(D, x2, y8, 1, 0, 0, 2).automatic_lane_columns(), variant >= 0 ? 2 : 4);
    EXPECT_EQ(F(D, x6, y8, 1, 0, 0, 6).automatic_lane_columns(), 4);
    SpmvOptions opts;
    opts.block_shape = BlockShape::lanes;
    opts.lane_columns = 2;
    for (int k : {2, 4, 6, 8, 16})
      expect_block_matches_oracle<Exec, Kokkos::LayoutRight>(C, *oracle, opts, k, Scalar(1.5), Scalar(0));
    expect_block_matches_oracle<Exec, Kokkos::LayoutRight>(C, *oracle, opts, 8, Scalar(1), Scalar(1));
    expect_block_matches_oracle<Exec, Kokkos::LayoutRight>(C, *oracle, opts, 4, Scalar(-1), Scalar(-0.5));
    expect_block_matches_oracle<Exec, Kokkos::LayoutRight>(C, *oracle, opts, 2, Scalar(1), Scalar(1));
    expect_block_matches_oracle<Exec, Kokkos::LayoutRight>(C, *oracle, opts, 2, Scalar(-1), Scalar(-0.5));
    opts.lane_columns = 0;  // automatic: the pair kernel at 2 and 16 columns too
    expect_block_matches_oracle<Exec, Kokkos::LayoutRight>(C, *oracle, opts, 2, Scalar(1), Scalar(0));
    expect_block_matches_oracle<Exec, Kokkos::LayoutRight>(C, *oracle, opts, 16, Scalar(1), Scalar(0));
  }
}

// Blocks of a wider row-major buffer (X and Y LayoutStride subviews, as Davidson's): 4, 6 and 8 of 8
// columns load pairs (csell's pair kernel where the block's width is the buffer's: 6 and 8 take K = 8
// with rows 8 apart), 5 of 8 (odd) one column per lane; each column equals the single-vector product
// and the buffer's other columns are left alone.
TEST(TEST_CATEGORY, LaneShapeOnBlocksOfAWiderBufferMatchesOneVectorAtATime) {
  using Exec = TEST_EXECSPACE;
  using Mem = TEST_MEMSPACE;
  const auto hA = cispmv::test::random_irregular<double>(203, 190, 81, 70);
  Kokkos::View<double**, Kokkos::LayoutRight, Mem> xbuf("x", 190, 8), ybuf("y", 203, 8);
  auto hx = Kokkos::create_mirror_view(xbuf);
  for (int j = 0; j < 8; ++j) {
    const auto xj = cispmv::test::random_vector<double>(190, 300 + j);
    for (int i = 0; i < 190; ++i) hx(i, j) = xj(i);
  }
  Kokkos::deep_copy(xbuf, hx);
  const auto check = [&](const auto& A, int width, int per_lane) {
    SCOPED_TRACE(std::string(std::remove_reference_t<decltype(A)>::format_name) + ", " + std::to_string(width) +
                 " columns, lane_columns " + std::to_string(per_lane));
    const auto x = Kokkos::subview(xbuf, Kokkos::ALL(), Kokkos::make_pair(0, width));
    const auto y = Kokkos::subview(ybuf, Kokkos::ALL(), Kokkos::make_pair(0, width));
    Kokkos::deep_copy(ybuf, 7.0);
    SpmvOptions opts;
    opts.block_shape = BlockShape::lanes;
    opts.lane_columns = per_lane;
    const SpmvPlan<Exec, std::remove_const_t<std::remove_reference_t<decltype(A)>>> plan(Exec(), A, opts);
    plan.apply(2.0, x, 0.0, y);
    Kokkos::View<double*, Mem> y1("y1", 203);
    const auto hy = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), ybuf);
    for (int j = 0; j < width; ++j) {
      spmv(Exec(), 2.0, A, Kokkos::subview(xbuf, Kokkos::ALL(), j), 0.0, y1);
      const auto h1 = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), y1);
      for (int i = 0; i < 203; ++i)
        ASSERT_NEAR(hy(i, j), h1(i), 1e-12 * (1 + std::abs(h1(i)))) << "row " << i << ", column " << j;
    }
    for (int j = width; j < 8; ++j) {
      for (int i = 0; i < 203; ++i) ASSERT_EQ(hy(i, j), 7.0) << "row " << i << " of the buffer's column " << j;
    }
  };
  const auto csr = to_device<Exec>(hA);
  const auto csell = to_device<Exec>(to_compressed_sell(hA));
  for (int width : {4, 5, 6, 8}) {
    for (int per_lane : {1, 2, 4, 8}) {
      check(csr, width, per_lane);
      check(csell, width, per_lane);
    }
  }
}

// The row stride impl::block_buffer_stride gives a caller's row-major buffer for blocks of c columns (the
// block Davidson's): on GPUs the launch's compiled width, so that csell's pair kernel takes the buffer's
// first c columns (c even: the Davidson pads odd blocks); elsewhere c rounded up to even, where it takes
// only 2 and 4. Each block's product equals the single-vector products; the buffer's other columns are
// left alone.
TEST(TEST_CATEGORY, BlockBufferStrideGivesCsellsPairKernelOnGpus) {
  using Exec = TEST_EXECSPACE;
  using Mem = TEST_MEMSPACE;
  using cispmv::impl::block_buffer_stride;
  constexpr bool gpu = cispmv::impl::is_gpu_space_v<Exec>;
  const std::vector<std::pair<int, int>> strides =
      gpu ? std::vector<std::pair<int, int>>{{2, 2}, {3, 4},  {4, 4},   {5, 8},  {6, 8},
                                             {8, 8}, {9, 16}, {10, 16}, {16, 16}}
          : std::vector<std::pair<int, int>>{{2, 2}, {3, 4},  {4, 4},   {5, 6},  {6, 6},
                                             {8, 8}, {9, 10}, {10, 10}, {16, 16}};
  for (const auto& [columns, stride] : strides) EXPECT_EQ(block_buffer_stride<Exec>(columns), stride) << columns;
  static_assert(cispmv::impl::block_width_for(2) == 4 && cispmv::impl::block_width_for(6) == 8 &&
                cispmv::impl::block_width_for(10) == 16 && cispmv::impl::block_width_for(1) == 1);

  const auto hA = cispmv::test::csell_test_matrix<double>(79);
  const int n = hA.num_rows;
  const auto D = to_device<Exec>(to_compressed_sell(hA, 32, 65536, 2.0));  // values inline: pair variant 0
  using Dev = std::remove_const_t<decltype(D)>;
  using Buffer = Kokkos::View<double**, Kokkos::LayoutRight, Mem>;
  const auto run = [&](auto width, const int columns) {
    constexpr int K = decltype(width)::value;
    SCOPED_TRACE(std::to_string(columns) + " columns");
    const int stride = block_buffer_stride<Exec>(columns);
    Buffer xbuf("x", hA.num_cols, stride), ybuf("y", n, stride);
    auto hx = Kokkos::create_mirror_view(xbuf);
    for (int j = 0; j < stride; ++j) {
      const auto xj = cispmv::test::random_vector<double>(hA.num_cols, 500 + j);
      for (int i = 0; i < hA.num_cols; ++i) hx(i, j) = xj(i);
    }
    Kokkos::deep_copy(xbuf, hx);
    Kokkos::deep_copy(ybuf, 7.0);
    const auto x = Kokkos::subview(xbuf, Kokkos::ALL(), Kokkos::make_pair(0, columns));
    const auto y = Kokkos::subview(ybuf, Kokkos::ALL(), Kokkos::make_pair(0, columns));
    using XRandom = Kokkos::View<const double**, typename decltype(x)::array_layout, typename decltype(x)::device_type,
                                 Kokkos::MemoryTraits<Kokkos::RandomAccess>>;
    using F = cispmv::impl::SpmvBlockFunctor<Exec, Dev, XRandom, decltype(y), K>;
    EXPECT_EQ(K, cispmv::impl::block_width_for(columns));              // the launch the plan makes
    const bool rows_k_apart = stride == K || (K == 4 && stride == 2);  // what pair_variant asks of X
    if (gpu) {
      EXPECT_TRUE(rows_k_apart);
    }
    EXPECT_EQ(F(D, x, y, 1, 0, 0, columns).pair_variant() >= 0, rows_k_apart);
    const SpmvPlan<Exec, Dev> plan(Exec(), D, SpmvOptions{});
    plan.apply(1.5, x, 0.0, y);
    const auto hy = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), ybuf);
    Kokkos::View<double*, Mem> y1("y1", n);
    for (int j = 0; j < columns; ++j) {
      spmv(Exec(), 1.5, D, Kokkos::subview(xbuf, Kokkos::ALL(), j), 0.0, y1);
      const auto h1 = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), y1);
      for (int i = 0; i < n; ++i)
        ASSERT_NEAR(hy(i, j), h1(i), 1e-12 * (1 + std::abs(h1(i)))) << "row " << i << ", column " << j;
    }
    for (int j = columns; j < stride; ++j) {
      for (int i = 0; i < n; ++i) ASSERT_EQ(hy(i, j), 7.0) << "row " << i << " of the buffer's column " << j;
    }
  };
  run(std::integral_constant<int, 4>(), 2);
  run(std::integral_constant<int, 4>(), 4);
  run(std::integral_constant<int, 8>(), 6);
  run(std::integral_constant<int, 16>(), 10);
  run(std::integral_constant<int, 16>(), 12);
}

TEST(TEST_CATEGORY, SeveralVectorsWithMismatchedColumnsThrowWithTheSizes) {
  using Exec = TEST_EXECSPACE;
  const auto A = to_device<Exec>(cispmv::test::random_irregular<double>(20, 30, 5, 4));
  Kokkos::View<double**, Kokkos::LayoutRight, Exec::memory_space> x("x", 30, 4), y("y", 20, 3), z("z", 20, 4);
  try {
    spmv(Exec(), 1.0, A, x, 0.0, y);
    ADD_FAILURE() << "no exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("x has 4 columns, y 3"), std::string::npos) << e.what();
  }
  EXPECT_NO_THROW(spmv(Exec(), 1.0, A, x, 0.0, z));
  Kokkos::View<double**, Kokkos::LayoutRight, Exec::memory_space> empty_x("x0", 30, 0), empty_y("y0", 20, 0);
  EXPECT_NO_THROW(spmv(Exec(), 1.0, A, empty_x, 0.0, empty_y));
}

}  // namespace
