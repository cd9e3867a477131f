// Every format x kernel x {double, float} on this backend against the host oracle (tier 2).
#include "test_utils.hpp"

namespace {

using namespace cispmv;
using cispmv::test::expect_all_formats_match_oracle;
using cispmv::test::paper_example;
using cispmv::test::random_irregular;

template <class Scalar>
class SpmvTest : public ::testing::Test {};
using ScalarTypes = ::testing::Types<double, float>;
TYPED_TEST_SUITE(SpmvTest, ScalarTypes);

// Paper example, every format and kernel: y equals the hand result exactly (small integers).
TEST(TEST_CATEGORY, PaperExampleGivesHandResultInEveryFormatAndKernel) {
  const auto A = paper_example();
  Kokkos::View<double*, Kokkos::HostSpace> hx("x", 5);
  for (int i = 0; i < 5; ++i) hx(i) = i + 1;
  const double hand[6] = {1, 21, 33, 18, 28, 40};
  auto x = Kokkos::create_mirror_view_and_copy(TEST_MEMSPACE(), hx);
  auto run = [&](const auto& host_format, Kernel kernel) {
    SCOPED_TRACE(std::string(std::decay_t<decltype(host_format)>::format_name) + " " + kernel_name(kernel));
    const auto D = to_device<TEST_EXECSPACE>(host_format);
    Kokkos::View<double*, TEST_MEMSPACE> y("y", 6);
    SpmvOptions opts;
    opts.kernel = kernel;
    spmv(TEST_EXECSPACE(), 1.0, D, x, 0.0, y, opts);
    auto hy = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), y);
    for (int r = 0; r < 6; ++r) EXPECT_EQ(hy(r), hand[r]) << "row " << r;
  };
  for (Kernel k : {Kernel::scalar, Kernel::vector}) {
    run(A, k);
    run(to_ellr(A), k);
    run(to_sliced_ellr(A, 2), k);
    for (int b : {0, 1, 2}) run(to_hybrid(A, b), k);
  }
  run(to_ell(A), Kernel::scalar);
  run(to_sliced_ell(A, 2), Kernel::scalar);
}

// Larger than a warp, empty rows, rows much longer than BOUNDARY and than 32, every beta case.
TYPED_TEST(SpmvTest, RandomIrregularMatrixMatchesHostOracle) {
  using Scalar = TypeParam;
  const auto A = random_irregular<Scalar>(257, 300, 11, 120);
  for (Scalar beta : {Scalar(0), Scalar(1), Scalar(-0.5)}) {
    expect_all_formats_match_oracle<TEST_EXECSPACE>(A, 16, Scalar(1.5), beta, 21);
  }
}

TYPED_TEST(SpmvTest, BoundaryZeroPutsEverythingInTheExpansionRegion) {
  using Scalar = TypeParam;
  const auto A = random_irregular<Scalar>(100, 80, 12, 70);
  const auto H = to_hybrid(A, 0);
  EXPECT_EQ(H.reference_nnz, 0u);
  EXPECT_EQ(H.expansion_nnz(), A.nnz());
  expect_all_formats_match_oracle<TEST_EXECSPACE>(A, 0, Scalar(1), Scalar(0), 22);
}

TYPED_TEST(SpmvTest, BoundaryBeyondLongestRowPutsEverythingInTheReferenceRegion) {
  using Scalar = TypeParam;
  const auto A = random_irregular<Scalar>(100, 80, 13, 70);
  const int longest = static_cast<int>(compute_stats(A, 0, 0.0).longest_row_length);
  for (int b : {longest, 80}) {
    const auto H = to_hybrid(A, b);
    EXPECT_EQ(H.expansion_nnz(), 0u);
    EXPECT_EQ(H.reference_nnz, A.nnz());
    expect_all_formats_match_oracle<TEST_EXECSPACE>(A, b, Scalar(-2), Scalar(1), 23);
  }
}

TYPED_TEST(SpmvTest, OneByOneAndEmptyMatricesWork) {
  using Scalar = TypeParam;
  CooMatrix<Scalar, int> one;
  one.num_rows = one.num_cols = 1;
  one.row_idx = {0};
  one.col_idx = {0};
  one.values = {Scalar(3)};
  expect_all_formats_match_oracle<TEST_EXECSPACE>(from_coo(one), 1, Scalar(2), Scalar(-0.5), 24);
  CooMatrix<Scalar, int> none;
  expect_all_formats_match_oracle<TEST_EXECSPACE>(from_coo(none), 0, Scalar(1), Scalar(0), 25);
}

TYPED_TEST(SpmvTest, IntOffsetsAndSlicesOfOddHeightMatchReference) {
  using Scalar = TypeParam;
  const auto A = random_irregular<Scalar, int>(150, 150, 14, 90);
  expect_all_formats_match_oracle<TEST_EXECSPACE>(A, 8, Scalar(1), Scalar(-0.5), 26, 7);
}

// Every launch shape the vector kernels accept: rows per team, lanes per row (GPU; the host uses
// one lane), and independent accumulators per lane.
TYPED_TEST(SpmvTest, EveryLaunchShapeMatchesHostOracle) {
  using Scalar = TypeParam;
  const auto A = random_irregular<Scalar>(203, 160, 15, 100);
  const auto H = to_hybrid(A, 10);
  const auto H16 = to_hybrid<std::uint16_t>(A, 10);
  for (int rpt : {1, 3, 8, 64}) {
    for (int vl : {0, 1, 4, 32}) {
      for (int unroll : {1, 2, 4, 8}) {
        const SpmvOptions o{Kernel::vector, rpt, vl, unroll};
        cispmv::test::expect_matches_oracle<TEST_EXECSPACE>(A, A, o, Scalar(1), Scalar(0), 27);
        for (int stage : {0, 1}) {
          for (int team : {0, 2}) {
            SpmvOptions h = o;
            h.stage_reference_x =
                stage ? StageReferenceX::on : StageReferenceX::off;  // x's reference part in scratch, or not
            h.team_size = team;
            h.team_cache = team ? TeamCache::shared : TeamCache::l1;  // the L1 / shared split: any result alike
            cispmv::test::expect_matches_oracle<TEST_EXECSPACE>(H, A, h, Scalar(1), Scalar(0.5), 27);
            cispmv::test::expect_matches_oracle<TEST_EXECSPACE>(H16, A, h, Scalar(-1), Scalar(1), 27);
          }
        }
      }
    }
  }
}

TEST(TEST_CATEGORY, HybridRecordsTheWidthOfItsReferenceRegion) {
  const auto H = to_hybrid(paper_example(), 1);  // reference columns 0, 2, 1, 2, 3, 4
  EXPECT_EQ(H.reference_x_extent, 5);
  EXPECT_EQ(to_hybrid(paper_example(), 0).reference_x_extent, 0);
}

TEST(TEST_CATEGORY, CompactHybridRefusesColumnsBeyond16Bits) {
  CooMatrix<double, int> coo;
  coo.num_rows = 2;
  coo.num_cols = 70000;
  coo.row_idx = {0, 1, 1};
  coo.col_idx = {5, 69999, 69998};
  coo.values = {1, 2, 3};
  const auto A = from_coo(coo);
  try {
    to_hybrid<std::uint16_t>(A, 2);
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("69999"), std::string::npos) << e.what();
  }
  EXPECT_THROW(to_hybrid<std::uint16_t>(A, 1), std::invalid_argument);  // row 1 starts at column 69998
  EXPECT_NO_THROW(to_hybrid<std::uint16_t>(A, 0));                      // nothing in the reference region
}

TEST(TEST_CATEGORY, SizeMismatchThrowsWithTheSizes) {
  const auto A = to_device<TEST_EXECSPACE>(to_hybrid(paper_example(), 1));
  Kokkos::View<double*, TEST_MEMSPACE> x("x", 4), y("y", 6), good_x("x", 5), short_y("y", 5);
  try {
    spmv(TEST_EXECSPACE(), 1.0, A, x, 0.0, y);
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("6 x 5"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("x has 4"), std::string::npos) << e.what();
  }
  EXPECT_THROW(spmv(TEST_EXECSPACE(), 1.0, A, good_x, 0.0, short_y), std::invalid_argument);
  SpmvOptions bad;
  bad.vector_length = 3;
  EXPECT_THROW(spmv(TEST_EXECSPACE(), 1.0, A, good_x, 0.0, y, bad), std::invalid_argument);
  SpmvOptions bad_lanes;
  bad_lanes.lane_columns = 3;
  try {
    spmv(TEST_EXECSPACE(), 1.0, A, good_x, 0.0, y, bad_lanes);
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("lane_columns=3"), std::string::npos) << e.what();
  }
}

TEST(TEST_CATEGORY, VectorKernelOnPlainEllpackIsRefused) {
  const auto E = to_device<TEST_EXECSPACE>(to_ell(paper_example()));
  Kokkos::View<double*, TEST_MEMSPACE> x("x", 5), y("y", 6);
  SpmvOptions opts;
  opts.kernel = Kernel::vector;
  EXPECT_THROW(spmv(TEST_EXECSPACE(), 1.0, E, x, 0.0, y, opts), std::invalid_argument);
}

}  // namespace

// ------------------------------------------------------------------------------------ the plan
namespace {

using namespace cispmv;

// A plan made once and applied many times gives the one-shot spmv's result every time, with any
// beta, and reports the choices it made.
TEST(TEST_CATEGORY, PlanAppliedManyTimesMatchesOneShotSpmv) {
  const auto hA = cispmv::test::random_irregular<double>(300, 280, 31, 150);
  const auto A = to_device<TEST_EXECSPACE>(to_hybrid(hA, 8));
  const auto hx = cispmv::test::random_vector<double>(280, 32);
  auto x = Kokkos::create_mirror_view_and_copy(TEST_MEMSPACE(), hx);
  Kokkos::View<double*, TEST_MEMSPACE> y_plan("y_plan", 300), y_once("y_once", 300);
  for (Kernel k : {Kernel::scalar, Kernel::vector, Kernel::automatic}) {
    SpmvOptions o;
    o.kernel = k;
    const auto plan = make_spmv_plan(TEST_EXECSPACE(), A, o);
    EXPECT_NE(plan.kernel(), Kernel::automatic);
    EXPECT_NE(plan.description().find("hybrid"), std::string::npos) << plan.description();
    Kokkos::deep_copy(y_plan, 0.0);
    Kokkos::deep_copy(y_once, 0.0);
    for (int rep = 0; rep < 3; ++rep) {  // y = 0.5 y + 2 A x, three times
      plan.apply(2.0, x, 0.5, y_plan);
      spmv(TEST_EXECSPACE(), 2.0, A, x, 0.5, y_once, o);
    }
    Kokkos::fence();
    EXPECT_TRUE(cispmv::test::allclose(y_plan, y_once, 0.0)) << "kernel " << kernel_name(k);
  }
}

TEST(TEST_CATEGORY, PlanResolvesAutomaticChoicesOnce) {
  const auto A = to_device<TEST_EXECSPACE>(cispmv::test::random_irregular<double>(100, 90, 33, 60));
  const auto plan = make_spmv_plan(TEST_EXECSPACE(), A, SpmvOptions{Kernel::vector});
  EXPECT_EQ(plan.kernel(), Kernel::vector);
  EXPECT_GE(plan.rows_per_team(), 1);
  EXPECT_GE(plan.team_size(), 1);
  EXPECT_LE(plan.team_size(), plan.rows_per_team());
  EXPECT_GE(plan.vector_length(), 1);
  EXPECT_EQ(plan.unroll(), impl::default_unroll);  // CSR vector kernel, x never staged
  EXPECT_EQ(plan.scratch_bytes(), 0u);
  if (!impl::is_gpu_space_v<TEST_EXECSPACE>) {
    EXPECT_EQ(plan.vector_length(), 1);  // one lane per row on the host
    EXPECT_EQ(make_spmv_plan(TEST_EXECSPACE(), A).kernel(), Kernel::scalar);
  }
  SpmvOptions bad;
  bad.unroll = 3;
  EXPECT_THROW(make_spmv_plan(TEST_EXECSPACE(), A, bad), std::invalid_argument);
  bad = SpmvOptions{};
  bad.team_size = -1;
  EXPECT_THROW(make_spmv_plan(TEST_EXECSPACE(), A, bad), std::invalid_argument);
}

TEST(TEST_CATEGORY, StagingOnlyWhereTheHybridKernelCanStage) {
  const auto hA = cispmv::test::random_irregular<double>(120, 100, 34, 60);
  const auto H = to_device<TEST_EXECSPACE>(to_hybrid(hA, 6));
  SpmvOptions on{Kernel::vector};
  on.stage_reference_x = StageReferenceX::on;
  const auto staged = make_spmv_plan(TEST_EXECSPACE(), H, on);
  EXPECT_GE(staged.scratch_bytes(), sizeof(double) * static_cast<std::size_t>(H.reference_x_extent));
  EXPECT_NE(staged.description().find("staged"), std::string::npos) << staged.description();
  SpmvOptions off = on;
  off.stage_reference_x = StageReferenceX::off;
  EXPECT_EQ(make_spmv_plan(TEST_EXECSPACE(), H, off).scratch_bytes(), 0u);
  // nothing in the reference region: nothing to stage, and asking for it is an error
  const auto H0 = to_device<TEST_EXECSPACE>(to_hybrid(hA, 0));
  EXPECT_THROW(make_spmv_plan(TEST_EXECSPACE(), H0, on), std::invalid_argument);
}

// Profiling regions are RAII: spmv opens and closes one, and an exception thrown inside a region
// (a failing launch) does not leave it open.
int pushed = 0, popped = 0;
void count_push(const char*) { ++pushed; }
void count_pop() { ++popped; }

TEST(TEST_CATEGORY, ProfilingRegionsCloseEvenWhenAnExceptionLeavesThem) {
  Kokkos::Tools::Experimental::set_push_region_callback(count_push);
  Kokkos::Tools::Experimental::set_pop_region_callback(count_pop);
  const auto A = to_device<TEST_EXECSPACE>(paper_example());
  Kokkos::View<double*, TEST_MEMSPACE> x("x", 5), y("y", 6);
  pushed = popped = 0;
  spmv(TEST_EXECSPACE(), 1.0, A, x, 0.0, y);
  Kokkos::fence();
  EXPECT_EQ(pushed, 1);
  EXPECT_EQ(popped, 1);
  try {
    const impl::ProfilingRegion region("cispmv::test::throwing");
    throw std::runtime_error("a launch failed");
  } catch (const std::runtime_error&) {
  }
  EXPECT_EQ(pushed, 2);
  EXPECT_EQ(popped, 2);
  Kokkos::Tools::Experimental::set_push_region_callback(nullptr);
  Kokkos::Tools::Experimental::set_pop_region_callback(nullptr);
}

}  // namespace

namespace {

using namespace cispmv;

// Compressed Sliced ELLPACK with a tiny value table: most entries live in the rest R, the kernel
// must add both parts (every beta case, both precisions through the typed test of the registry).
TYPED_TEST(SpmvTest, CompressedSellWithRestEntriesMatchesHostOracle) {
  using Scalar = TypeParam;
  const auto A = cispmv::test::random_irregular<Scalar>(257, 300, 61, 120);
  for (std::size_t table : {std::size_t(1), std::size_t(3), std::size_t(65536)}) {
    const auto C = to_compressed_sell(A, 32, table, 0.0);  // a table, whatever it covers
    for (Scalar beta : {Scalar(0), Scalar(1), Scalar(-0.5)}) {
      cispmv::test::expect_matches_oracle<TEST_EXECSPACE>(C, A, SpmvOptions{}, Scalar(1.5), beta, 62);
    }
  }
  // few entries in many columns: gaps beyond 16 bits, bridged by jump slots
  const auto wide = cispmv::test::random_irregular<Scalar>(100, 400000, 64, 6);
  cispmv::test::expect_matches_oracle<TEST_EXECSPACE>(to_compressed_sell(wide), wide, SpmvOptions{}, Scalar(1),
                                                      Scalar(0.5), 65);
  const auto inline_values = to_compressed_sell(A, 32, 16);  // 16 of ~15,000 values: no table
  EXPECT_FALSE(inline_values.uses_table);
  cispmv::test::expect_matches_oracle<TEST_EXECSPACE>(inline_values, A, SpmvOptions{}, Scalar(1), Scalar(0), 63);
}

// csell's CPU slice kernel with its AVX-512 walk (SpmvOptions::host_simd; x86-64 CPUs with AVX-512)
// and the portable loop: a table read by gathers and by loads, values in the rest R, values inline,
// jump slots, two lanes per row, rows sorted in windows, slices of 8-64 rows (groups of 32 and of 8
// rows, and tails of fewer), every beta case; an x of stride 2 falls back to the portable loop. On
// GPUs, and with the vector kernel, the option has nothing to run: asking for a walk is refused.
TYPED_TEST(SpmvTest, CompressedSellHostSimdMatchesHostOracle) {
  using Scalar = TypeParam;
  using Exec = TEST_EXECSPACE;
  const bool gpu = impl::is_gpu_space_v<Exec>;
  const bool avx512 = impl::host_simd::avx512_available();
  const auto A = cispmv::test::csell_test_matrix<Scalar>(81);
  const auto wide = cispmv::test::random_irregular<Scalar>(300, 400000, 82, 6);  // gaps beyond 16 bits
  std::vector<std::pair<const HostCsrMatrix<Scalar, int, std::size_t>*, decltype(to_compressed_sell(A))>> cases;
  for (int h : {8, 20, 32, 64}) {
    cases.emplace_back(&A, to_compressed_sell(A, h, 65536, 0.0));  // a table
    cases.emplace_back(&A, to_compressed_sell(A, h, 2000, 0.0));   // most values in R
    cases.emplace_back(&A, to_compressed_sell(A, h, 65536, 2.0));  // values inline
    cases.emplace_back(&wide, to_compressed_sell(wide, h, 65536, 0.0));
  }
  cases.emplace_back(&A, to_compressed_sell(A, 32, 65536, 0.0, std::size_t(1) << 22, ValueTableOrder::automatic, 2));
  cases.emplace_back(&A,
                     to_compressed_sell(A, 32, 65536, 2.0, std::size_t(1) << 22, ValueTableOrder::automatic, 1, 64));
  for (const auto& [oracle, C] : cases) {
    SCOPED_TRACE("slice height " + std::to_string(C.slice_height) + (C.uses_table ? ", table" : ", values inline") +
                 ", rest " + std::to_string(C.rest_nnz()) + ", lanes " + std::to_string(C.row_lanes));
    for (HostSimd simd : {HostSimd::automatic, HostSimd::off, HostSimd::gather, HostSimd::loads}) {
      SCOPED_TRACE(std::string("host_simd ") + host_simd_name(simd));
      SpmvOptions o{Kernel::scalar};
      o.host_simd = simd;
      const bool asked = simd == HostSimd::gather || simd == HostSimd::loads;
      if (asked && (gpu || !avx512)) {  // nothing to run: refused, with the reason
        try {
          (void)make_spmv_plan(Exec(), to_device<Exec>(C), o);
          ADD_FAILURE() << "host_simd accepted where no AVX-512 walk can run";
        } catch (const std::invalid_argument& e) {
          EXPECT_NE(std::string(e.what()).find("AVX-512"), std::string::npos) << e.what();
        }
        continue;
      }
      for (Scalar beta : {Scalar(0), Scalar(1), Scalar(-0.5)})
        cispmv::test::expect_matches_oracle<Exec>(C, *oracle, o, Scalar(1.5), beta, 83);
      // the walk the plan chose: values inline, or the table as asked (automatic: as this CPU's
      // gathers and loads compare); none where no walk runs
      using impl::host_simd::Walk;
      const auto plan = make_spmv_plan(Exec(), to_device<Exec>(C), o);
      Walk expected = Walk::none;
      if (!gpu && avx512 && simd != HostSimd::off) {
        const bool gather =
            simd == HostSimd::gather || (simd == HostSimd::automatic && impl::host_simd::table_gathers_pay());
        expected = !C.uses_table ? Walk::inline_values : gather ? Walk::table_gather : Walk::table_loads;
      }
      EXPECT_EQ(plan.host_walk(), expected);
      EXPECT_EQ(plan.description().find("AVX-512") != std::string::npos, expected != Walk::none) << plan.description();
    }
  }
  // x of stride 2 (a strided subview): the portable loop runs, with the same result
  const auto& C = cases.front().second;
  const auto hx = cispmv::test::random_vector<Scalar>(A.num_cols, 84);
  Kokkos::View<Scalar*, Kokkos::HostSpace> expected("expected", A.num_rows);
  host_oracle_spmv(Scalar(1), A, hx, Scalar(0), expected);
  Kokkos::View<Scalar**, Kokkos::LayoutRight, TEST_MEMSPACE> x2("x2", A.num_cols, 2);
  auto hx2 = Kokkos::create_mirror_view(x2);
  for (int i = 0; i < A.num_cols; ++i) hx2(i, 0) = hx(i), hx2(i, 1) = Scalar(1e30);
  Kokkos::deep_copy(x2, hx2);
  const auto strided = Kokkos::subview(x2, Kokkos::ALL, 0);
  Kokkos::View<Scalar*, TEST_MEMSPACE> y("y", A.num_rows);
  spmv(Exec(), Scalar(1), to_device<Exec>(C), strided, Scalar(0), y);
  Exec().fence();
  EXPECT_TRUE(cispmv::test::allclose(y, expected, spmv_tolerance(A, hx, Scalar(1), 0.0)));
  // the vector kernel has no walk: asking for one with it is refused
  SpmvOptions vector{Kernel::vector};
  vector.host_simd = HostSimd::loads;
  EXPECT_THROW((void)make_spmv_plan(Exec(), to_device<Exec>(C), vector), std::invalid_argument);
  // a CPU whose walk reads a table no faster than values inline builds csell with values inline
  EXPECT_EQ(FormatParams::for_space<Kokkos::DefaultHostExecutionSpace>().min_table_coverage > 1.0,
            impl::host_simd::values_inline_pays());
}

// csell's thread-per-row kernel (GPUs; the host runs its slice shape) with every unroll factor: a
// table of 9,000 values, rows whose values partly live in the rest R, and values stored inline.
TYPED_TEST(SpmvTest, CompressedSellEveryUnrollMatchesHostOracle) {
  using Scalar = TypeParam;
  auto A = cispmv::test::random_irregular<Scalar>(1100, 1300, 66, 40);
  for (std::size_t k = 0; k < A.nnz(); ++k) {
    A.values(k) = k % 50 == 7 ? Scalar(0.5) + static_cast<Scalar>(k) : Scalar(0.25) * static_cast<Scalar>(k % 9000);
  }
  const auto table = to_compressed_sell(A, 32, 65536, 0.0);
  ASSERT_TRUE(table.uses_table);
  const auto rest = to_compressed_sell(A, 32, 2000, 0.0);  // most values in R
  ASSERT_GT(rest.rest_nnz(), A.nnz() / 2);
  const auto inline_values = to_compressed_sell(A, 32, 16);  // no table
  ASSERT_FALSE(inline_values.uses_table);
  const bool gpu = impl::is_gpu_space_v<TEST_EXECSPACE>;
  for (const auto* M : {&table, &rest, &inline_values}) {
    for (int unroll : {0, 1, 2, 4, 8}) {
      for (LoadsAhead ahead : {LoadsAhead::automatic, LoadsAhead::off}) {
        SpmvOptions o{Kernel::scalar};
        o.unroll = unroll;
        o.loads_ahead = ahead;
        cispmv::test::expect_matches_oracle<TEST_EXECSPACE>(*M, A, o, Scalar(1.5), Scalar(-0.5), 67);
        const auto plan = make_spmv_plan(TEST_EXECSPACE(), to_device<TEST_EXECSPACE>(*M), o);
        const int automatic = M->uses_table ? impl::row_scalar_unroll : impl::row_scalar_inline_unroll;
        EXPECT_EQ(plan.unroll(), gpu ? (unroll > 0 ? unroll : automatic) : 1);
        EXPECT_EQ(plan.description().find("unroll") != std::string::npos, plan.unroll() > 1) << plan.description();
        // values inline on GPUs, unroll 4 or 8: the loop with its loads a group ahead (Unroll < 0)
        // unless switched off; the plain loop (Unroll > 0) otherwise, values inline or not
        EXPECT_EQ(plan.description().find("loads ahead") != std::string::npos,
                  gpu && !M->uses_table && plan.unroll() >= 4 && ahead == LoadsAhead::automatic)
            << plan.description();
        // GPUs: the plain loop's blocks are compiled with launch bounds (row_block_min_blocks)
        EXPECT_EQ(plan.description().find("launch bounds: 4 blocks per SM") != std::string::npos,
                  gpu && plan.description().find("loads ahead") == std::string::npos)
            << plan.description();
      }
      // GPUs: blocks of impl::gpu_row_block_rows consecutive rows unless asked otherwise
      SpmvOptions o{Kernel::scalar};
      o.unroll = unroll;
      const auto plan = make_spmv_plan(TEST_EXECSPACE(), to_device<TEST_EXECSPACE>(*M), o);
      EXPECT_EQ(
          plan.description().find(std::to_string(impl::gpu_row_block_rows) + " rows per block") != std::string::npos,
          gpu)
          << plan.description();
    }
    // GPUs: blocks of consecutive rows (1,100 rows: the last block is partial); the host ignores it
    for (int rows : {32, 96, 256, 1024}) {
      SpmvOptions o{Kernel::scalar};
      o.rows_per_team = rows;
      o.team_cache = rows == 96 ? TeamCache::shared : TeamCache::automatic;
      cispmv::test::expect_matches_oracle<TEST_EXECSPACE>(*M, A, o, Scalar(1.5), Scalar(-0.5), 68);
      const auto plan = make_spmv_plan(TEST_EXECSPACE(), to_device<TEST_EXECSPACE>(*M), o);
      const std::string d = plan.description();
      const auto at = d.find(" rows per block");
      ASSERT_EQ(at != std::string::npos, gpu) << d;
      if (gpu) {  // as asked, or fewer where the kernel's registers allow fewer threads per block
        const int block = std::stoi(d.substr(d.find_last_of(",:", at) + 1, at));
        EXPECT_TRUE(block == rows ||
                    (rows > impl::gpu_row_block_rows && block >= impl::gpu_row_block_rows && block < rows))
            << d;
        // the plain loop: launch bounds, so blocks of at most impl::gpu_row_block_rows; the loop ahead: none
        const bool bounded = d.find("loads ahead") == std::string::npos;
        EXPECT_EQ(d.find("launch bounds") != std::string::npos, bounded) << d;
        if (bounded) {
          EXPECT_EQ(block, std::min(rows, impl::gpu_row_block_rows)) << d;
        }
      }
    }
  }
  {  // loads_ahead = on: only where the loop ahead exists (values inline on a GPU, unroll 4 or 8)
    SpmvOptions on{Kernel::scalar};
    on.loads_ahead = LoadsAhead::on;
    on.unroll = 4;
    if (gpu) {
      cispmv::test::expect_matches_oracle<TEST_EXECSPACE>(inline_values, A, on, Scalar(1), Scalar(0), 69);
      EXPECT_NE(make_spmv_plan(TEST_EXECSPACE(), to_device<TEST_EXECSPACE>(inline_values), on)
                    .description()
                    .find("loads ahead"),
                std::string::npos);
    }
    for (const auto* M : {&table, &inline_values}) {
      for (int unroll : {2, 4}) {
        on.unroll = unroll;
        if (gpu && !M->uses_table && unroll == 4) continue;
        try {
          (void)make_spmv_plan(TEST_EXECSPACE(), to_device<TEST_EXECSPACE>(*M), on);
          ADD_FAILURE() << "loads_ahead = on accepted where it cannot run (unroll " << unroll << ")";
        } catch (const std::invalid_argument& e) {
          EXPECT_NE(std::string(e.what()).find("loads_ahead = on"), std::string::npos) << e.what();
        }
      }
    }
  }
  if (gpu) {  // a block is at most 1,024 threads
    SpmvOptions o{Kernel::scalar};
    o.rows_per_team = 1025;
    EXPECT_THROW((void)make_spmv_plan(TEST_EXECSPACE(), to_device<TEST_EXECSPACE>(table), o), std::invalid_argument);
  }
  // the vector shape's automatic factor: many per thread while the lanes leave thread slots free, few
  // once they fill the execution space twice over
  const TEST_EXECSPACE exec;
  EXPECT_EQ(impl::default_lanes_unroll(exec, exec.concurrency()), impl::few_lanes_unroll);
  EXPECT_EQ(impl::default_lanes_unroll(exec, 2LL * exec.concurrency() - 1), impl::few_lanes_unroll);
  EXPECT_EQ(impl::default_lanes_unroll(exec, 2LL * exec.concurrency()), impl::many_lanes_unroll);
}

// csell with several lanes per row (row_lanes): every kernel shape (the vector shape reduces a row's
// lanes; thread per row and the host's slice shape add them one after the other) with each unroll
// factor, a table, rows partly in the rest R (shared out over the lanes), values inline, and rows
// shorter than their lanes; several vectors at once; the plan takes the layout's lanes.
TYPED_TEST(SpmvTest, CompressedSellLanesPerRowMatchHostOracle) {
  using Scalar = TypeParam;
  using Exec = TEST_EXECSPACE;
  const auto A = cispmv::test::csell_test_matrix<Scalar>(69);
  const bool gpu = impl::is_gpu_space_v<Exec>;
  for (int lanes : {2, 4, 8, 16, 32}) {
    SCOPED_TRACE(std::to_string(lanes) + " lanes per row");
    const auto table = to_compressed_sell(A, 32, 65536, 0.0, std::size_t(1) << 22, ValueTableOrder::automatic, lanes);
    const auto rest = to_compressed_sell(A, 32, 2000, 0.0, std::size_t(1) << 22, ValueTableOrder::automatic, lanes);
    ASSERT_GT(rest.rest_nnz(), A.nnz() / 2);
    const auto inline_values =
        to_compressed_sell(A, 32, 16, 0.5, std::size_t(1) << 22, ValueTableOrder::automatic, lanes);
    ASSERT_FALSE(inline_values.uses_table);
    for (const auto* M : {&table, &rest, &inline_values}) {
      for (Kernel kernel : {Kernel::automatic, Kernel::scalar, Kernel::vector}) {
        for (int unroll : {0, 1, 2, 8}) {
          SpmvOptions o{kernel};
          o.unroll = unroll;
          for (Scalar beta : {Scalar(0), Scalar(1), Scalar(-0.5)})
            cispmv::test::expect_matches_oracle<Exec>(*M, A, o, Scalar(1.5), beta, 74);
        }
      }
      const auto D = to_device<Exec>(*M);
      const auto automatic = make_spmv_plan(Exec(), D);
      EXPECT_EQ(automatic.kernel(), gpu ? Kernel::vector : Kernel::scalar);  // the lanes' reduction on GPUs
      const auto vector = make_spmv_plan(Exec(), D, SpmvOptions{Kernel::vector});
      EXPECT_EQ(vector.vector_length(), gpu ? lanes : 1) << vector.description();
      EXPECT_EQ(vector.unroll(), impl::default_lanes_unroll(Exec(), 700LL * lanes)) << vector.description();
      EXPECT_EQ(vector.description().find("loads ahead") != std::string::npos,
                gpu && !M->uses_table && vector.unroll() >= 4)
          << vector.description();
      SpmvOptions wrong{Kernel::vector};
      wrong.vector_length = lanes == 32 ? 16 : 2 * lanes;
      try {
        (void)make_spmv_plan(Exec(), D, wrong);
        ADD_FAILURE() << "a vector length other than the layout's lanes was accepted";
      } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find(std::to_string(lanes) + " lanes per row"), std::string::npos) << e.what();
      }
      SpmvOptions same{Kernel::vector};
      same.vector_length = lanes;
      EXPECT_NO_THROW((void)make_spmv_plan(Exec(), D, same));
    }
  }
  // one lane: thread per row on GPUs, as before
  const auto one = to_device<Exec>(to_compressed_sell(A));
  EXPECT_EQ(make_spmv_plan(Exec(), one).kernel(), Kernel::scalar);
  // the automatic lanes: one on a CPU and where the rows fill half a GPU's thread slots; else the
  // most that keep 64 entries each (128 with values inline), at most 32
  EXPECT_EQ(impl::automatic_row_lanes(32768, 32768.0 * 950, 0), 1);
  EXPECT_EQ(impl::automatic_row_lanes(32768, 32768.0 * 950, 270336), 8);
  EXPECT_EQ(impl::automatic_row_lanes(32768, 32768.0 * 950, 270336, 32, true), 4);  // paper32k-1
  EXPECT_EQ(impl::automatic_row_lanes(135167, 135167.0 * 406, 270336, 32, true), 2);
  EXPECT_EQ(impl::automatic_row_lanes(32768, 32768.0 * 5000, 270336, 32, true), 32);
  EXPECT_EQ(impl::automatic_row_lanes(245025, 245025.0 * 406, 270336, 32, true), 1);
  EXPECT_EQ(impl::automatic_row_lanes(245025, 245025.0 * 406, 270336), 1);  // half the slots or more: one
  EXPECT_EQ(impl::automatic_row_lanes(135167, 135167.0 * 406, 270336), 4);
  EXPECT_EQ(impl::automatic_row_lanes(1656369, 1.09e9, 270336), 1);
  EXPECT_EQ(impl::automatic_row_lanes(32768, 32768.0 * 40, 270336), 1);  // short rows: one lane
  EXPECT_EQ(impl::automatic_row_lanes(32768, 32768.0 * 5000, 270336), 32);
  EXPECT_EQ(impl::automatic_row_lanes(1000, 1000.0 * 10, 270336), 1);
  // a row's lanes share a slice: never more lanes than divide the slice height
  EXPECT_EQ(impl::automatic_row_lanes(32768, 32768.0 * 5000, 270336, 16), 16);
  EXPECT_EQ(impl::automatic_row_lanes(32768, 32768.0 * 5000, 270336, 24), 8);
  EXPECT_EQ(impl::automatic_row_lanes(32768, 32768.0 * 5000, 270336, 7), 1);
  EXPECT_EQ(impl::gpu_thread_slots<Exec>(), gpu ? static_cast<long long>(Exec().concurrency()) : 0LL);
  // ... and from a CSR matrix: whether its values go inline is sampled as the encoder decides it
  // 256 rows of ~750 entries (192K), each value its own: the table covers a third of them, so inline
  auto wide = cispmv::test::random_irregular<Scalar>(256, 20000, 75, 3000);
  for (std::size_t k = 0; k < wide.nnz(); ++k) wide.values(k) = Scalar(0.5) + static_cast<Scalar>(k);
  const long long slots = 270336;
  const int inline_lanes = impl::automatic_row_lanes(256, static_cast<double>(wide.nnz()), slots, 32, true);
  const int table_lanes = impl::automatic_row_lanes(256, static_cast<double>(wide.nnz()), slots, 32, false);
  ASSERT_NE(inline_lanes, table_lanes);  // this matrix tells the two apart
  ASSERT_FALSE(to_compressed_sell(wide).uses_table);
  EXPECT_EQ(impl::automatic_row_lanes(wide, slots), inline_lanes);
  EXPECT_EQ(impl::automatic_row_lanes(wide, 0), 1);
  for (std::size_t k = 0; k < wide.nnz(); ++k) wide.values(k) = Scalar(0.5) * static_cast<Scalar>(k % 7);
  ASSERT_TRUE(to_compressed_sell(wide).uses_table);
  EXPECT_EQ(impl::automatic_row_lanes(wide, slots), table_lanes);
}

}  // namespace

namespace {

using namespace cispmv;

template <class Host, class Built>
void expect_same_view(const Host& expected, const Built& built, const char* what) {
  const auto got = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), built);
  ASSERT_EQ(expected.extent(0), got.extent(0)) << what;
  for (std::size_t i = 0; i < got.extent(0); ++i) ASSERT_EQ(expected(i), got(i)) << what << " at " << i;
}

// Compressed Sliced ELLPACK encoded on the execution space from a CSR that lives there (the CI
// builder's path on a GPU): the same arrays as the host encoder, entry for entry, and the same
// products; an unsorted row is refused there too.
TYPED_TEST(SpmvTest, CompressedSellEncodedOnTheExecutionSpaceEqualsTheHostEncoding) {
  using Scalar = TypeParam;
  // few distinct values (a table covering most entries, the rest in R), wide gaps (jump slots),
  // and random values (no table)
  auto repeated = cispmv::test::random_irregular<Scalar>(517, 300000, 71, 90);
  for (std::size_t k = 0; k < repeated.nnz(); ++k) {
    repeated.values(k) = k % 97 == 0 ? Scalar(0.001) * static_cast<Scalar>(k) : Scalar(static_cast<int>(k % 29) - 14);
  }
  auto random = cispmv::test::random_irregular<Scalar>(300, 280, 72, 150);
  for (const auto* A : {&repeated, &random}) {
    for (std::size_t table : {std::size_t(16), std::size_t(65536)}) {
      for (auto order : {ValueTableOrder::frequency, ValueTableOrder::first_use, ValueTableOrder::cooccurrence}) {
        const int lanes = order == ValueTableOrder::first_use ? 8 : 1;
        const int window = table == 16 ? 64 : 1;  // rows sorted in windows, or not
        const auto host = to_compressed_sell(*A, 32, table, 0.5, std::size_t(1) << 12, order, lanes, window);
        const auto built = to_compressed_sell(to_device<TEST_EXECSPACE>(*A), 32, table, 0.5, std::size_t(1) << 12,
                                              order, lanes, window);
        EXPECT_EQ(built.uses_table, host.uses_table);
        EXPECT_EQ(built.compressed_nnz, host.compressed_nnz);
        EXPECT_EQ(built.num_nonzeros, A->nnz());
        expect_same_view(host.slice_ptr, built.slice_ptr, "slice_ptr");
        expect_same_view(host.col_delta, built.col_delta, "col_delta");
        expect_same_view(host.value_index, built.value_index, "value_index");
        expect_same_view(host.first_col, built.first_col, "first_col");
        expect_same_view(host.row_length, built.row_length, "row_length");
        expect_same_view(host.value_table, built.value_table, "value_table");
        expect_same_view(host.inline_values, built.inline_values, "inline_values");
        expect_same_view(host.rest_row_ptr, built.rest_row_ptr, "rest_row_ptr");
        expect_same_view(host.rest_col_idx, built.rest_col_idx, "rest_col_idx");
        expect_same_view(host.rest_values, built.rest_values, "rest_values");
        expect_same_view(host.row_order, built.row_order, "row_order");
        cispmv::test::expect_matches_oracle<TEST_EXECSPACE>(to_host(built), *A, SpmvOptions{}, Scalar(1), Scalar(0.5),
                                                            73);
      }
    }
  }
  auto unsorted = random;
  const std::size_t first = unsorted.row_ptr(5);
  ASSERT_GE(unsorted.row_ptr(6) - first, 2u);
  std::swap(unsorted.col_idx(first), unsorted.col_idx(first + 1));
  try {
    (void)to_compressed_sell(to_device<TEST_EXECSPACE>(unsorted));
    ADD_FAILURE() << "an unsorted row was encoded";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("row 5 "), std::string::npos) << e.what();
  }
}

}  // namespace
