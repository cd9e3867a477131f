// Experiment (session 25; built as perf/width_exp.cpp with a target of its own, not committed there; archived here):
// the block Davidson's products run on blocks of a row-major buffer whose width is the block's rounded up to even (6
// for
// `--roots 1` with its guards, 10 for `--roots 5`), so X's rows are 6 or 10 apart and csell's pair kernel, which
// wants them K = 4, 8 or 16 apart (or 2 apart in a 4-column launch), does not apply: the generic walk of two pairs
// per lane runs. This times the library's plan on c columns of buffers of width W, both ways, and checks every
// product against c single-vector products to 1e-12 of max |y|.
//   width_exp fcidump:FILE:LEVEL[:all-irreps] [iterations]
#include <Kokkos_Core.hpp>

#include "cispmv/ci/hamiltonian.hpp"
#include "cispmv/cispmv.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <utility>
#include <vector>

using namespace cispmv;
using Exec = Kokkos::DefaultExecutionSpace;
using Mem = Exec::memory_space;
using HostCsell = CompressedSellMatrix<double, int, std::size_t, Kokkos::DefaultHostExecutionSpace>;
using DevCsell = CompressedSellMatrix<double, int, std::size_t, Exec>;
using Buffer = Kokkos::View<double**, Kokkos::LayoutRight, Mem>;

namespace {

template <class F>
double time_ms(const F& f, int iterations) {
  f();
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

}  // namespace

int main(int argc, char* argv[]) {
  Kokkos::ScopeGuard guard(argc, argv);
  if (argc < 2) return 2;
  const int iterations = argc > 2 ? std::atoi(argv[2]) : 20;
  Kokkos::Timer timer;
  HostCsr H = ci::build_hamiltonian(ci::parse_hamiltonian_spec(argv[1]));
  const int n = H.num_rows;
  const HostCsell C = build_format<Format::csell>(H, FormatParams::for_block_products<Exec>());
  H = HostCsr();
  std::printf("matrix %s: %d rows, %zu nonzeros; block csell: slices of %d, %d lane(s) per row, %s, R %zu (%.1f s)\n",
              argv[1], n, C.nnz(), C.slice_height, C.row_lanes, C.uses_table ? "table" : "values inline", C.rest_nnz(),
              timer.seconds());
  const DevCsell D = to_device<Exec>(C);
  const SpmvPlan<Exec, DevCsell> plan(Exec(), D, SpmvOptions{});
  Kokkos::View<double*, Mem> x1("x1", n), y1("y1", n);
  const double t_single = time_ms([&] { plan.apply(1.0, x1, 0.0, y1); }, iterations);
  std::printf("one vector on this csell: %.4f ms\n", t_single);
  const std::vector<std::pair<int, int>> cases = {{2, 2},   {4, 4},   {6, 6},   {6, 8},   {8, 8},
                                                  {10, 10}, {10, 16}, {12, 12}, {12, 16}, {16, 16}};
  for (const auto& [c, W] : cases) {
    Buffer X("X", n, W), Y("Y", n, W);
    auto hX = Kokkos::create_mirror_view(X);
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < W; ++j) hX(i, j) = std::sin(0.37 * i + 0.1 + 0.7 * j) + 0.01 * ((i * 7919 + j) % 101);
    Kokkos::deep_copy(X, hX);
    const auto x = Kokkos::subview(X, Kokkos::ALL(), Kokkos::make_pair(0, c));
    const auto y = Kokkos::subview(Y, Kokkos::ALL(), Kokkos::make_pair(0, c));
    const double t = time_ms([&] { plan.apply(1.0, x, 0.0, y); }, iterations);
    const auto hY = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), Y);
    double m = 0, d = 0;
    for (int j = 0; j < c; ++j) {
      Kokkos::deep_copy(x1, Kokkos::subview(X, Kokkos::ALL(), j));
      plan.apply(1.0, x1, 0.0, y1);
      const auto h1 = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), y1);
      for (int i = 0; i < n; ++i) {
        m = std::max(m, std::abs(h1(i)));
        d = std::max(d, std::abs(hY(i, j) - h1(i)));
      }
    }
    std::printf("%2d columns of a buffer %2d wide: %.4f ms (%.4f per vector, %.3fx of one vector)  err %.2g\n", c, W, t,
                t / c, t / c / t_single, d / m);
    if (!(d <= 1e-12 * m)) {
      std::fprintf(stderr, "width_exp: %d of %d columns differ from single products: %.3g of max |y|\n", c, W, d / m);
      return 3;
    }
  }
  return 0;
}
