// Experiment (session 23; built as perf/rb_exp.cpp with a CUDA-only target, not committed there): csell's
// single-vector thread-per-row kernel (RowBlockTag) on a GPU at other occupancies: launch bounds (blocks per SM)
// and block sizes, beside the library's plan; every result checked against the plan to 1e-12.
//   rb_exp MATRIX [iterations]   (MATRIX: a suite name such as scaled-1048576, or fcidump:FILE:LEVEL[:all-irreps])
#include <Kokkos_Core.hpp>

#include "cispmv/ci/hamiltonian.hpp"
#include "cispmv/cispmv.hpp"
#include "cispmv/generator.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

using namespace cispmv;
using HostCsell = CompressedSellMatrix<double, int, std::size_t, Kokkos::DefaultHostExecutionSpace>;
using DevCsell = CompressedSellMatrix<double, int, std::size_t, Kokkos::Cuda>;
using XV = Kokkos::View<const double*, Kokkos::CudaSpace, Kokkos::MemoryTraits<Kokkos::RandomAccess>>;
using YV = Kokkos::View<double*, Kokkos::CudaSpace>;

namespace {

template <class F>
double time_ms(F&& f, int iterations) {
  for (int i = 0; i < 3; ++i) f();
  Kokkos::fence();
  std::vector<double> t;
  for (int r = 0; r < 5; ++r) {
    Kokkos::Timer timer;
    for (int i = 0; i < iterations; ++i) f();
    Kokkos::fence();
    t.push_back(timer.seconds() * 1e3 / iterations);
  }
  std::sort(t.begin(), t.end());
  return t[2];
}

template <int U, int T, int B>
void launch(const DevCsell& D, const XV& x, const YV& y) {
  using F = impl::SpmvFunctor<Kokkos::Cuda, DevCsell, XV, YV, impl::beta_zero, U>;
  using Bounds = std::conditional_t<(B > 0), Kokkos::LaunchBounds<T, B>, Kokkos::LaunchBounds<>>;
  using P = Kokkos::TeamPolicy<Kokkos::Cuda, impl::RowBlockTag, Bounds>;
  const P p((D.num_rows + T - 1) / T, T, 1);
  const F f(D, x, y, 1.0, 0.0);
  impl::TeamCachePreference<P, F>::before_launch(true);
  Kokkos::parallel_for("rb_exp", p, f);
  impl::TeamCachePreference<P, F>::after_launch(true);
}

}  // namespace

int main(int argc, char* argv[]) {
  Kokkos::ScopeGuard guard(argc, argv);
  if (argc < 2) return 2;
  const std::string name = argv[1];
  const int iterations = argc > 2 ? std::atoi(argv[2]) : 20;
  Kokkos::Timer timer;
  HostCsr H = ci::is_hamiltonian_spec(name) ? ci::build_hamiltonian(ci::parse_hamiltonian_spec(name))
                                            : generate_suite_matrix(name);
  const int n = H.num_rows;
  const HostCsell C = build_format<Format::csell>(H, FormatParams::for_space<Kokkos::Cuda>());
  std::printf("matrix %s: %d rows, %zu nonzeros; csell %d lane(s) per row, %s, R %zu, %s (%.1f s)\n", name.c_str(), n,
              C.nnz(), C.row_lanes, C.uses_table ? "table" : "values inline", C.rest_nnz(),
              C.row_order.extent(0) ? "rows sorted" : "matrix order", timer.seconds());
  H = HostCsr();
  const DevCsell D = to_device<Kokkos::Cuda>(C);
  Kokkos::View<double*, Kokkos::CudaSpace> xw("x", D.num_cols);
  {
    auto h = Kokkos::create_mirror_view(xw);
    for (int i = 0; i < D.num_cols; ++i) h(i) = std::sin(0.37 * i + 0.1) + 0.01 * (i % 101);
    Kokkos::deep_copy(xw, h);
  }
  const XV x = xw;
  YV y("y", n);
  SpmvPlan<Kokkos::Cuda, DevCsell> plan(Kokkos::Cuda(), D, SpmvOptions{});
  std::printf("plan: %s\n", plan.description().c_str());
  const double t_plan = time_ms([&] { plan.apply(1.0, x, 0.0, y); }, iterations);
  Kokkos::fence();
  std::vector<double> ref(n);
  {
    auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), y);
    std::copy(h.data(), h.data() + n, ref.begin());
  }
  std::printf("%-40s %.4f ms\n", "library plan", t_plan);
  auto tag = [&](auto l, const char* what) {
    Kokkos::deep_copy(y, 0.0);
    const double t = time_ms([&] { l(D, x, y); }, iterations);
    Kokkos::fence();
    const cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess) {
      std::printf("%-40s launch failed: %s\n", what, cudaGetErrorString(e));
      return;
    }
    auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), y);
    double m = 0, d = 0;
    for (int i = 0; i < n; ++i) {
      m = std::max(m, std::abs(ref[i]));
      d = std::max(d, std::abs(h(i) - ref[i]));
    }
    std::printf("%-40s %.4f ms  %.3fx of the plan  err %.2g%s\n", what, t, t / t_plan, d / m,
                d / m <= 1e-12 ? "" : "  WRONG");
  };
  if (C.uses_table) {
    tag(launch<4, 256, 0>, "unroll 4, 256, no bounds");
    tag(launch<4, 256, 2>, "unroll 4, 256, bounds 2 blocks");
    tag(launch<4, 256, 3>, "unroll 4, 256, bounds 3 blocks");
    tag(launch<4, 256, 4>, "unroll 4, 256, bounds 4 blocks");
    tag(launch<4, 256, 5>, "unroll 4, 256, bounds 5 blocks");
    tag(launch<4, 128, 8>, "unroll 4, 128, bounds 8 blocks");
    tag(launch<4, 512, 2>, "unroll 4, 512, bounds 2 blocks");
    tag(launch<8, 256, 0>, "unroll 8, 256, no bounds");
    tag(launch<8, 256, 3>, "unroll 8, 256, bounds 3 blocks");
    tag(launch<8, 256, 4>, "unroll 8, 256, bounds 4 blocks");
    tag(launch<2, 256, 4>, "unroll 2, 256, bounds 4 blocks");
    tag(launch<4, 256, 0>, "unroll 4, 256, no bounds (again)");
    tag(launch<4, 256, 4>, "unroll 4, 256, bounds 4 blocks (again)");
  } else {
    tag(launch<-8, 256, 0>, "ahead 8, 256, no bounds");
    tag(launch<-8, 512, 0>, "ahead 8, 512, no bounds");
    tag(launch<-4, 256, 4>, "ahead 4, 256, bounds 4 blocks");
    tag(launch<8, 256, 0>, "plain 8, 256, no bounds");
    tag(launch<8, 256, 4>, "plain 8, 256, bounds 4 blocks");
    tag(launch<2, 256, 0>, "plain 2, 256, no bounds");
    tag(launch<2, 256, 4>, "plain 2, 256, bounds 4 blocks");
  }
  return 0;
}
