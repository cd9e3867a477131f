// The baseline (CiSpmv::kokkos_kernels): KokkosSparse::spmv on cispmv's CSR Views, without a copy.
// Compiled only when the build has Kokkos Kernels (CISPMV_ENABLE_KOKKOS_KERNELS).
#include "cispmv/baselines/kokkos_kernels.hpp"
#include "test_utils.hpp"

namespace {

using namespace cispmv;
using cispmv::test::random_irregular;

// The baseline: KokkosSparse::spmv on the same CSR Views agrees with the host oracle.
TEST(TEST_CATEGORY, KokkosKernelsSpmvOnTheSameCsrMatchesHostOracle) {
  const auto hA = random_irregular<double>(300, 280, 16, 150);
  const auto A = to_device<TEST_EXECSPACE>(hA);
  const auto K = as_kokkos_kernels(A);
  EXPECT_EQ(K.values.data(), A.values.data());  // no copy
  const auto hx = cispmv::test::random_vector<double>(280, 5);
  Kokkos::View<double*, Kokkos::HostSpace> expected("expected", 300);
  host_oracle_spmv(2.0, hA, hx, 0.0, expected);
  auto x = Kokkos::create_mirror_view_and_copy(TEST_MEMSPACE(), hx);
  Kokkos::View<double*, TEST_MEMSPACE> y("y", 300);
  kokkos_kernels_spmv(TEST_EXECSPACE(), 2.0, K, x, 0.0, y);
  Kokkos::fence();
  EXPECT_TRUE(cispmv::test::allclose(y, expected, spmv_tolerance(hA, hx, 2.0)));
  // every algorithm this Kokkos Kernels has (4.x: merge path too) through one reused handle
  for (const auto algorithm : {KokkosKernelsAlgorithm::default_algorithm, KokkosKernelsAlgorithm::merge_path}) {
    using Op = KokkosKernelsSpmv<TEST_EXECSPACE, std::remove_const_t<decltype(K)>, decltype(x), decltype(y)>;
    if (!kokkos_kernels_has(algorithm)) {
      EXPECT_THROW(Op{algorithm}, std::invalid_argument);
      continue;
    }
    Op op(algorithm);
    for (int repeat = 0; repeat < 2; ++repeat) {
      Kokkos::deep_copy(y, 0.0);
      op.apply(TEST_EXECSPACE(), 2.0, K, x, 0.0, y);
      Kokkos::fence();
      EXPECT_TRUE(cispmv::test::allclose(y, expected, spmv_tolerance(hA, hx, 2.0)))
          << "algorithm " << static_cast<int>(algorithm) << ", call " << repeat + 1;
    }
  }
}

}  // namespace
