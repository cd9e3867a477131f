// Experiment (session 22; built as perf/pair_exp.cpp with a CUDA-only target, not committed there):
// csell's block product on a GPU through the library's pair kernel (one pair of X per lane, K/2 lanes per
// row, each decoding the row's entries), beside session 21's raw CUDA kernel (no loop, and in Kokkos's
// grid-stride frame); every result checked against the library's plan to 1e-12.
//  - s22-a, s22-b: this program with launches of experiment tags PairTag<2..9> (walk_lane<-U>: the next
//    group's loads first, U = 2, 4, 6, 8, 12, 16, values inline; 4 and 8 through the table, on a csell
//    built with a table), with and without launch bounds, in place of the launches in run_width below;
//    those tags did not land (the library's PairTag<0> is now walk_lane<-12>, PairTag<1> walk_lane<-4>).
//  - s22-e: iterations 0 (one launch of each, under ncu).
//  - s22-f (this version): the library's PairTag<0> as a RangePolicy (Kokkos's block size) and as teams
//    of 32, 64, 128 and 256 lanes.
//   pair_exp fcidump:FILE:LEVEL[:all-irreps] [iterations (0: one launch of each, for ncu)]
#include <Kokkos_Core.hpp>

#include "cispmv/ci/hamiltonian.hpp"
#include "cispmv/cispmv.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

using namespace cispmv;
using HostCsell = CompressedSellMatrix<double, int, std::size_t, Kokkos::DefaultHostExecutionSpace>;
using DevCsell = CompressedSellMatrix<double, int, std::size_t, Kokkos::Cuda>;

namespace {

struct Raw {
  int nrows;
  const std::size_t* slice_ptr;
  const std::uint16_t* delta;
  const double* val;
  const int* first_col;
  const int* row_length;
  const std::size_t* rest_ptr;
  const int* rest_col;
  const double* rest_val;
  const int* row_order;
};

Raw raw(const DevCsell& A) {
  return Raw{A.num_rows,
             A.slice_ptr.data(),
             A.col_delta.data(),
             A.inline_values.data(),
             A.first_col.data(),
             A.row_length.data(),
             A.rest_row_ptr.data(),
             A.rest_col_idx.data(),
             A.rest_values.data(),
             A.row_order.extent(0) ? A.row_order.data() : nullptr};
}

constexpr std::uint16_t kJump = 65535;
constexpr int kH = 32;  // slice height

/// K/2 lanes per row, each decoding every entry of its row and gathering one pair of X.
template <int K, int U>
__device__ __forceinline__ void dup_body(const Raw& A, const double* __restrict__ X, double* __restrict__ Y,
                                         const long long t);

template <int K, int U>
__global__ void __launch_bounds__(512) blk_dup(const Raw A, const double* __restrict__ X, double* __restrict__ Y) {
  dup_body<K, U>(A, X, Y, static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x);
}

/// The same body in Kokkos's RangePolicy frame: threads along y, a grid-stride loop over 64-bit indices.
template <int K, int U>
__global__ void __launch_bounds__(512)
    blk_dup_gs(const Raw A, const double* __restrict__ X, double* __restrict__ Y, const long long end) {
  const long long stride = static_cast<long long>(blockDim.y) * gridDim.x;
  for (long long t = threadIdx.y + static_cast<long long>(blockDim.y) * blockIdx.x; t < end; t += stride)
    dup_body<K, U>(A, X, Y, t);
}

template <int K, int U>
__device__ __forceinline__ void dup_body(const Raw& A, const double* __restrict__ X, double* __restrict__ Y,
                                         const long long t) {
  constexpr int L = K / 2;
  const int row = static_cast<int>(t / L);
  const int j = static_cast<int>(t % L);
  if (row >= A.nrows) return;
  const int s = row / kH;
  std::size_t idx = A.slice_ptr[s] + static_cast<std::size_t>(row - s * kH);
  const int len = A.row_length[row];
  int col = A.first_col[row];
  double s0 = 0, s1 = 0;
  int k = 0;
  for (; k + U <= len; k += U, idx += U * kH) {
    std::uint16_t d[U];
    double v[U];
    int c[U];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      d[u] = __ldcs(A.delta + idx + u * kH);
      v[u] = __ldcs(A.val + idx + u * kH);
    }
#pragma unroll
    for (int u = 0; u < U; ++u) c[u] = col += d[u];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      if (d[u] != kJump) {
        const double2 x = __ldg(reinterpret_cast<const double2*>(X + static_cast<long long>(c[u]) * K + 2 * j));
        s0 += v[u] * x.x;
        s1 += v[u] * x.y;
      }
    }
  }
  for (; k < len; ++k, idx += kH) {
    const std::uint16_t d = __ldcs(A.delta + idx);
    col += d;
    if (d != kJump) {
      const double v = __ldcs(A.val + idx);
      const double2 x = __ldg(reinterpret_cast<const double2*>(X + static_cast<long long>(col) * K + 2 * j));
      s0 += v * x.x;
      s1 += v * x.y;
    }
  }
  for (std::size_t e = A.rest_ptr[row]; e < A.rest_ptr[row + 1]; ++e) {
    const double v = A.rest_val[e];
    const double2 x = __ldg(reinterpret_cast<const double2*>(X + static_cast<long long>(A.rest_col[e]) * K + 2 * j));
    s0 += v * x.x;
    s1 += v * x.y;
  }
  const int out = A.row_order ? A.row_order[row] : row;
  *reinterpret_cast<double2*>(Y + static_cast<long long>(out) * K + 2 * j) = make_double2(s0, s1);
}

template <class F>
double time_ms(F&& f, int iterations) {
  if (iterations == 0) {  // profile mode (under ncu): one launch
    f();
    Kokkos::fence();
    return 0;
  }
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

template <class Kernel>
int registers(Kernel k) {
  cudaFuncAttributes a{};
  cudaFuncGetAttributes(&a, k);
  return a.numRegs;
}

using XV = Kokkos::View<double**, Kokkos::LayoutRight, Kokkos::CudaSpace>;
using CXV =
    Kokkos::View<const double**, Kokkos::LayoutRight, Kokkos::CudaSpace, Kokkos::MemoryTraits<Kokkos::RandomAccess>>;

template <int K, int V, int B>
void launch_tag(const DevCsell& D, const CXV& X, const XV& Y) {
  using F = impl::SpmvBlockFunctor<Kokkos::Cuda, DevCsell, CXV, XV, K>;
  F f(D, X, Y, 1.0, 0.0, 0, K);
  while ((1 << f.lane_shift) < K / 2) ++f.lane_shift;
  constexpr bool table = V == 1;
  if (f.pair_variant() != (table ? 1 : 0)) {
    std::fprintf(stderr, "pair_exp: the pair kernel does not apply (variant %d)\n", f.pair_variant());
    std::exit(2);
  }
  using Bounds = std::conditional_t<(B > 0), Kokkos::LaunchBounds<256, B>, Kokkos::LaunchBounds<>>;
  Kokkos::parallel_for("pair_exp",
                       Kokkos::RangePolicy<Kokkos::Cuda, impl::PairTag<V>, Kokkos::IndexType<std::int64_t>, Bounds>(
                           0, static_cast<std::int64_t>(D.num_rows) << f.lane_shift),
                       f);
}

template <int K, int T>
void launch_team(const DevCsell& D, const CXV& X, const XV& Y) {
  using F = impl::SpmvBlockFunctor<Kokkos::Cuda, DevCsell, CXV, XV, K>;
  F f(D, X, Y, 1.0, 0.0, 0, K);
  while ((1 << f.lane_shift) < K / 2) ++f.lane_shift;
  if (f.pair_variant() != 0) std::exit(2);
  const std::int64_t lanes = static_cast<std::int64_t>(D.num_rows) << f.lane_shift;
  using P = Kokkos::TeamPolicy<Kokkos::Cuda, impl::PairTag<0>>;
  const P p(static_cast<int>((lanes + T - 1) / T), T, 1);
  impl::TeamCachePreference<P, F>::before_launch(true);
  Kokkos::parallel_for("pair_exp_team", p, f);
  impl::TeamCachePreference<P, F>::after_launch(true);
}

template <int K>
void run_width(const DevCsell& D, const DevCsell& DT, int n, int iterations, double t_single) {
  XV X("X", n, K), Y("Y", n, K);
  {
    auto h = Kokkos::create_mirror_view(X);
    for (int i = 0; i < n; ++i)
      for (int c = 0; c < K; ++c) h(i, c) = std::sin(0.37 * i + 0.1 + 0.7 * c) + 0.01 * ((i * 7919 + c) % 101);
    Kokkos::deep_copy(X, h);
  }
  const CXV CX = X;
  SpmvPlan<Kokkos::Cuda, DevCsell> plan(Kokkos::Cuda(), D, SpmvOptions{});
  std::vector<double> ref;
  auto check = [&](const char* what) {
    Kokkos::fence();
    const cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess) {
      std::fprintf(stderr, "pair_exp: %s: %s\n", what, cudaGetErrorString(e));
      std::exit(1);
    }
    auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), Y);
    if (ref.empty()) {
      ref.assign(h.data(), h.data() + static_cast<std::size_t>(n) * K);
      return 0.0;
    }
    double m = 0, d = 0;
    for (std::size_t i = 0; i < ref.size(); ++i) {
      m = std::max(m, std::abs(ref[i]));
      d = std::max(d, std::abs(h.data()[i] - ref[i]));
    }
    if (!(d / m <= 1e-12)) {
      std::fprintf(stderr, "pair_exp: K=%d %s differs from the plan: %.3g of max |y|\n", K, what, d / m);
      std::exit(3);
    }
    Kokkos::deep_copy(Y, 0.0);
    return d / m;
  };
  auto report = [&](const std::string& what, double ms, int regs, double err) {
    std::printf("K=%2d %-44s %.4f ms  (%.4f per vector, %.3fx of one vector's %.4f)  regs %3d  err %.2g\n", K,
                what.c_str(), ms, ms / K, ms / K / t_single, t_single, regs, err);
  };
  const double t_lib = time_ms([&] { plan.apply(1.0, X, 0.0, Y); }, iterations);
  check("library");
  report("library plan (automatic)", t_lib, -1, 0);
  auto tag = [&](auto launch, const char* what) {
    const double t = time_ms([&] { launch(D, CX, Y); }, iterations);
    report(what, t, -1, check(what));
  };
  tag(launch_tag<K, 0, 0>, "PairTag<0> RangePolicy (Kokkos's block size)");
  tag(launch_team<K, 32>, "PairTag<0> teams of 32");
  tag(launch_team<K, 64>, "PairTag<0> teams of 64");
  tag(launch_team<K, 128>, "PairTag<0> teams of 128");
  tag(launch_team<K, 256>, "PairTag<0> teams of 256");
  tag(launch_tag<K, 0, 0>, "PairTag<0> RangePolicy (again)");
  constexpr int L = K / 2;
  const long long threads = static_cast<long long>(n) * L;
  const Raw r = raw(D);
  const int blocks = static_cast<int>((threads + 255) / 256);
  cudaFuncSetCacheConfig(blk_dup<K, 4>, cudaFuncCachePreferL1);
  double t = time_ms([&] { blk_dup<K, 4><<<blocks, 256>>>(r, X.data(), Y.data()); }, iterations);
  report("raw dup, unroll 4, no loop", t, registers(blk_dup<K, 4>), check("dup"));
  cudaFuncSetCacheConfig(blk_dup_gs<K, 4>, cudaFuncCachePreferL1);
  t = time_ms([&] { blk_dup_gs<K, 4><<<blocks, dim3(1, 256, 1)>>>(r, X.data(), Y.data(), threads); }, iterations);
  report("raw dup in Kokkos's frame", t, registers(blk_dup_gs<K, 4>), check("dup_gs"));
}

}  // namespace

int main(int argc, char* argv[]) {
  Kokkos::ScopeGuard guard(argc, argv);
  if (argc < 2) return 2;
  const int iterations = argc > 2 ? std::atoi(argv[2]) : 20;
  Kokkos::Timer timer;
  HostCsr H = ci::build_hamiltonian(ci::parse_hamiltonian_spec(argv[1]));
  const int n = H.num_rows;
  HostCsell C = build_format<Format::csell>(H, FormatParams::for_block_products<Kokkos::Cuda>());
  HostCsell C1 = iterations > 0 ? build_format<Format::csell>(H, FormatParams::for_space<Kokkos::Cuda>()) : HostCsell{};
  FormatParams table_params = FormatParams::for_block_products<Kokkos::Cuda>();
  table_params.min_table_coverage = FormatParams{}.min_table_coverage;
  const HostCsell CT = build_format<Format::csell>(H, table_params);
  std::printf("block csell with a table: %s, %zu values, R %zu, %s\n", CT.uses_table ? "table" : "values inline",
              CT.value_table.extent(0), CT.rest_nnz(), CT.row_order.extent(0) ? "rows sorted" : "matrix order");
  H = HostCsr();
  std::printf(
      "matrix %s: %d rows, %zu nonzeros; block csell: slices of %d, %d lane(s) per row, %s, R %zu, %s (%.1f s)\n",
      argv[1], n, C.nnz(), C.slice_height, C.row_lanes, C.uses_table ? "table" : "values inline", C.rest_nnz(),
      C.row_order.extent(0) ? "rows sorted" : "matrix order", timer.seconds());
  if (C.slice_height != kH || C.row_lanes != 1 || C.uses_table) {
    std::fprintf(stderr, "pair_exp: needs slices of 32, one lane per row, values inline\n");
    return 2;
  }
  const DevCsell D = to_device<Kokkos::Cuda>(C);
  const DevCsell DT = to_device<Kokkos::Cuda>(CT);
  double t_single = 1;
  if (iterations > 0) {
    const DevCsell D1 = to_device<Kokkos::Cuda>(C1);
    Kokkos::View<double*, Kokkos::CudaSpace> x("x", n), y("y", n);
    Kokkos::deep_copy(x, 1.0);
    SpmvPlan<Kokkos::Cuda, DevCsell> plan1(Kokkos::Cuda(), D1, SpmvOptions{});
    t_single = time_ms([&] { plan1.apply(1.0, x, 0.0, y); }, iterations);
    std::printf("one vector: the library's plan on csell (for_space) %.4f ms\n", t_single);
  }
  run_width<4>(D, DT, n, iterations, t_single);
  run_width<8>(D, DT, n, iterations, t_single);
  run_width<16>(D, DT, n, iterations, t_single);
  return 0;
}
