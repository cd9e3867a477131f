// CUDA builds only: the same matrices run on the host execution space and on the device, every
// format x kernel; the two results must agree with each other and with the host oracle.
#include "test_utils.hpp"

namespace {

using namespace cispmv;
using Host = Kokkos::DefaultHostExecutionSpace;
using Device = Kokkos::DefaultExecutionSpace;

template <class HostFormat>
void expect_host_and_device_agree(const HostFormat& F, const HostCsr& ref, Kernel kernel) {
  SCOPED_TRACE(std::string(HostFormat::format_name) + " " + kernel_name(kernel));
  const auto hx = cispmv::test::random_vector<double>(ref.num_cols, 77);
  Kokkos::View<double*, Kokkos::HostSpace> y_host("y_host", ref.num_rows), expected("expected", ref.num_rows);
  Kokkos::View<double*, Device::memory_space> y_dev("y_dev", ref.num_rows);
  auto x_dev = Kokkos::create_mirror_view_and_copy(Device::memory_space(), hx);
  SpmvOptions opts;
  opts.kernel = kernel;
  spmv(Host(), 1.0, to_device<Host>(F), hx, 0.0, y_host, opts);
  spmv(Device(), 1.0, to_device<Device>(F), x_dev, 0.0, y_dev, opts);
  Kokkos::fence();
  host_oracle_spmv(1.0, ref, hx, 0.0, expected);
  const double tol = spmv_tolerance(ref, hx);
  EXPECT_TRUE(cispmv::test::allclose(y_dev, y_host, tol));
  EXPECT_TRUE(cispmv::test::allclose(y_dev, expected, tol));
}

TEST(CrossValidation, HostAndDeviceAgreeForEveryFormatAndKernel) {
  for (std::uint64_t seed : {101, 102}) {
    const auto A = cispmv::test::random_irregular<double>(5000, 4000, seed, 900);
    const int boundary = choose_boundary(A).boundary + 40;
    FormatParams params;
    params.boundary = boundary;
    for (const FormatInfo& info : format_registry) {
      with_host_format(info.format, A, params, [&](const auto& F) {
        for (Kernel k : format_kernels(info.format)) expect_host_and_device_agree(F, A, k);
      });
    }
  }
}

}  // namespace
