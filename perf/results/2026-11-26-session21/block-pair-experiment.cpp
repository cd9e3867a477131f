// Experiment (session 21; built as perf/blk_exp.cpp with a CUDA-only target, not committed there):
// csell's block product (K = 8 or 16 columns of X, row-major) on a GPU: the library's lane shape (each
// row's 2 (K = 8) or 4 (K = 16) lanes decode the same entry, each lane gathers 2 pairs of X, a warp
// holds 16 / 8 rows) against two raw shapes:
//  - dup:  K/2 lanes per row, each decoding the same entry and gathering one 16-byte pair, so one load
//          instruction reads each of its rows' K values of X in one contiguous run (32 / (K/2) rows);
//  - shfl: one lane per row decodes (a warp is a slice of 32 rows: its deltas and values in two
//          coalesced loads, no decode repeated), then K/2 sub-steps hand each entry's (column, value)
//          by warp shuffles to the K/2 lanes that gather that row's run of X in one load.
// All read the eigensolver's csell (FormatParams::for_block_products: values inline, rows sorted in
// windows, slices of 32, one lane per row). Results checked against the library's plan.
//   blk_exp fcidump:FILE:LEVEL[:all-irreps] [iterations (0: one launch of each, for ncu)]
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

/// Threads along y without the loop; the loop with threads along x.
template <int K, int U>
__global__ void __launch_bounds__(512) blk_dup_y(const Raw A, const double* __restrict__ X, double* __restrict__ Y) {
  dup_body<K, U>(A, X, Y, static_cast<long long>(blockIdx.x) * blockDim.y + threadIdx.y);
}
template <int K, int U>
__global__ void __launch_bounds__(512)
    blk_dup_gsx(const Raw A, const double* __restrict__ X, double* __restrict__ Y, const long long end) {
  const long long stride = static_cast<long long>(blockDim.x) * gridDim.x;
  for (long long t = threadIdx.x + static_cast<long long>(blockDim.x) * blockIdx.x; t < end; t += stride)
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

/// One lane per row decodes; K/2 sub-steps hand each decoded entry to the K/2 lanes that gather its row of X.
template <int K, int U>
__global__ void __launch_bounds__(256) blk_shfl(const Raw A, const double* __restrict__ X, double* __restrict__ Y) {
  constexpr int L = K / 2;     // lanes per row in a gather
  constexpr int R = 32 / L;    // rows per gather instruction
  constexpr int SUB = 32 / R;  // sub-steps (= L)
  constexpr unsigned full = 0xffffffffu;
  const int warp = static_cast<int>((static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x) / 32);
  const int lane = threadIdx.x & 31;
  const int first = warp * kH;
  if (first >= A.nrows) return;  // whole warps only
  const int row = first + lane;
  const bool valid = row < A.nrows;
  const int len = valid ? A.row_length[row] : 0;
  int col = valid ? A.first_col[row] : 0;
  const int width = __reduce_max_sync(full, len);
  std::size_t idx = A.slice_ptr[warp] + static_cast<std::size_t>(lane);
  const int j = lane % L;
  const int rsub = lane / L;
  double acc[SUB][2];
#pragma unroll
  for (int q = 0; q < SUB; ++q) acc[q][0] = acc[q][1] = 0;
  for (int k = 0; k < width; k += U, idx += U * kH) {
    int c[U];
    double v[U];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const bool live = k + u < len;
      const std::uint16_t d = live ? __ldcs(A.delta + idx + u * kH) : std::uint16_t(0);
      v[u] = live ? __ldcs(A.val + idx + u * kH) : 0.0;
      col += d;
      c[u] = live && d != kJump ? col : -1;
    }
#pragma unroll
    for (int u = 0; u < U; ++u) {
#pragma unroll
      for (int q = 0; q < SUB; ++q) {
        const int src = q * R + rsub;
        const int cc = __shfl_sync(full, c[u], src);
        const double vv = __shfl_sync(full, v[u], src);
        if (cc >= 0) {
          const double2 x = __ldg(reinterpret_cast<const double2*>(X + static_cast<long long>(cc) * K + 2 * j));
          acc[q][0] += vv * x.x;
          acc[q][1] += vv * x.y;
        }
      }
    }
  }
  // R: the warp's rows' entries of the rest, one per row per step, handed out the same way
  const std::size_t r0 = valid ? A.rest_ptr[row] : 0;
  const int rlen = valid ? static_cast<int>(A.rest_ptr[row + 1] - r0) : 0;
  const int rwidth = __reduce_max_sync(full, rlen);
  for (int k = 0; k < rwidth; ++k) {
    const int c = k < rlen ? A.rest_col[r0 + k] : -1;
    const double v = k < rlen ? A.rest_val[r0 + k] : 0.0;
#pragma unroll
    for (int q = 0; q < SUB; ++q) {
      const int src = q * R + rsub;
      const int cc = __shfl_sync(full, c, src);
      const double vv = __shfl_sync(full, v, src);
      if (cc >= 0) {
        const double2 x = __ldg(reinterpret_cast<const double2*>(X + static_cast<long long>(cc) * K + 2 * j));
        acc[q][0] += vv * x.x;
        acc[q][1] += vv * x.y;
      }
    }
  }
#pragma unroll
  for (int q = 0; q < SUB; ++q) {
    const int r = first + q * R + rsub;
    if (r < A.nrows) {
      const int out = A.row_order ? A.row_order[r] : r;
      *reinterpret_cast<double2*>(Y + static_cast<long long>(out) * K + 2 * j) = make_double2(acc[q][0], acc[q][1]);
    }
  }
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

template <int K>
void run_width(const DevCsell& D, int n, int iterations, double t_single) {
  using XV = Kokkos::View<double**, Kokkos::LayoutRight, Kokkos::CudaSpace>;
  XV X("X", n, K), Y("Y", n, K);
  {
    auto h = Kokkos::create_mirror_view(X);
    for (int i = 0; i < n; ++i)
      for (int c = 0; c < K; ++c) h(i, c) = std::sin(0.37 * i + 0.1 + 0.7 * c) + 0.01 * ((i * 7919 + c) % 101);
    Kokkos::deep_copy(X, h);
  }
  SpmvPlan<Kokkos::Cuda, DevCsell> plan(Kokkos::Cuda(), D, SpmvOptions{});
  std::vector<double> ref;
  auto check = [&](const char* what) {
    Kokkos::fence();
    const cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess) {
      std::fprintf(stderr, "blk_exp: %s: %s\n", what, cudaGetErrorString(e));
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
      std::fprintf(stderr, "blk_exp: K=%d %s differs from the plan: %.3g of max |y|\n", K, what, d / m);
      std::exit(3);
    }
    Kokkos::deep_copy(Y, 0.0);
    return d / m;
  };
  const Raw r = raw(D);
  auto report = [&](const std::string& what, double ms, int regs, double err) {
    std::printf("K=%2d %-40s %.4f ms  (%.4f per vector, %.3fx of one vector's %.4f)  regs %3d  err %.2g\n", K,
                what.c_str(), ms, ms / K, ms / K / t_single, t_single, regs, err);
  };
  const double t_lib = time_ms([&] { plan.apply(1.0, X, 0.0, Y); }, iterations);
  check("library");
  report("library plan (lanes, automatic)", t_lib, -1, 0);
  for (int lc : {4, 1}) {
    if (lc == 1 && K > 8) continue;
    SpmvOptions o;
    o.lane_columns = lc;
    SpmvPlan<Kokkos::Cuda, DevCsell> p(Kokkos::Cuda(), D, o);
    const double t = time_ms([&] { p.apply(1.0, X, 0.0, Y); }, iterations);
    report("library plan, lane_columns " + std::to_string(lc), t, -1, check("library lane_columns"));
  }
  constexpr int L = K / 2;
  const long long threads = static_cast<long long>(n) * L;
  auto dup = [&](auto kernel, int block, const char* what) {
    cudaFuncSetCacheConfig(kernel, cudaFuncCachePreferL1);
    const int blocks = static_cast<int>((threads + block - 1) / block);
    const double t = time_ms([&] { kernel<<<blocks, block>>>(r, X.data(), Y.data()); }, iterations);
    report(std::string(what) + ", blocks of " + std::to_string(block), t, registers(kernel), check(what));
  };
  dup(blk_dup<K, 2>, 256, "dup, unroll 2");
  dup(blk_dup<K, 4>, 256, "dup, unroll 4");
  dup(blk_dup<K, 8>, 256, "dup, unroll 8");
  dup(blk_dup<K, 4>, 128, "dup, unroll 4");
  dup(blk_dup<K, 4>, 512, "dup, unroll 4");
  {
    cudaFuncSetCacheConfig(blk_dup_gs<K, 4>, cudaFuncCachePreferL1);
    const int blocks = static_cast<int>((threads + 255) / 256);
    const double t =
        time_ms([&] { blk_dup_gs<K, 4><<<blocks, dim3(1, 256, 1)>>>(r, X.data(), Y.data(), threads); }, iterations);
    report("dup in Kokkos's frame, blocks of 256", t, registers(blk_dup_gs<K, 4>), check("dup_gs"));
  }
  {
    const int blocks = static_cast<int>((threads + 255) / 256);
    cudaFuncSetCacheConfig(blk_dup_y<K, 4>, cudaFuncCachePreferL1);
    cudaFuncSetCacheConfig(blk_dup_gsx<K, 4>, cudaFuncCachePreferL1);
    double t = time_ms([&] { blk_dup_y<K, 4><<<blocks, dim3(1, 256, 1)>>>(r, X.data(), Y.data()); }, iterations);
    report("dup, threads along y, no loop", t, registers(blk_dup_y<K, 4>), check("dup_y"));
    t = time_ms([&] { blk_dup_gsx<K, 4><<<blocks, 256>>>(r, X.data(), Y.data(), threads); }, iterations);
    report("dup, threads along x, in a loop", t, registers(blk_dup_gsx<K, 4>), check("dup_gsx"));
  }
  if (K == 8) {
    const int warps = (n + 31) / 32;
    const int blocks_shfl = (warps * 32 + 255) / 256;
    cudaFuncSetCacheConfig(blk_shfl<K, 4>, cudaFuncCachePreferL1);
    const double t = time_ms([&] { blk_shfl<K, 4><<<blocks_shfl, 256>>>(r, X.data(), Y.data()); }, iterations);
    report("shfl (unroll 4)", t, registers(blk_shfl<K, 4>), check("shfl4"));
  }
}

}  // namespace

int main(int argc, char* argv[]) {
  Kokkos::ScopeGuard guard(argc, argv);
  if (argc < 2) return 2;
  const int iterations = argc > 2 ? std::atoi(argv[2]) : 20;
  Kokkos::Timer t;
  HostCsr H = ci::build_hamiltonian(ci::parse_hamiltonian_spec(argv[1]));
  const int n = H.num_rows;
  HostCsell C = build_format<Format::csell>(H, FormatParams::for_block_products<Kokkos::Cuda>());
  HostCsell C1 = iterations > 0 ? build_format<Format::csell>(H, FormatParams::for_space<Kokkos::Cuda>()) : HostCsell{};
  H = HostCsr();
  std::printf(
      "matrix %s: %d rows, %zu nonzeros; block csell: slices of %d, %d lane(s) per row, %s, R %zu, %s (%.1f s)\n",
      argv[1], n, C.nnz(), C.slice_height, C.row_lanes, C.uses_table ? "table" : "values inline", C.rest_nnz(),
      C.row_order.extent(0) ? "rows sorted" : "matrix order", t.seconds());
  if (C.slice_height != kH || C.row_lanes != 1 || C.uses_table) {
    std::fprintf(stderr, "blk_exp: needs slices of 32, one lane per row, values inline\n");
    return 2;
  }
  const DevCsell D = to_device<Kokkos::Cuda>(C);
  double t_single = 1;
  if (iterations > 0) {
    const DevCsell D1 = to_device<Kokkos::Cuda>(C1);
    Kokkos::View<double*, Kokkos::CudaSpace> x("x", n), y("y", n);
    Kokkos::deep_copy(x, 1.0);
    SpmvPlan<Kokkos::Cuda, DevCsell> plan1(Kokkos::Cuda(), D1, SpmvOptions{});
    t_single = time_ms([&] { plan1.apply(1.0, x, 0.0, y); }, iterations);
    std::printf("one vector: the library's plan on csell (for_space) %.4f ms\n", t_single);
  }
  run_width<4>(D, n, iterations, t_single);
  run_width<8>(D, n, iterations, t_single);
  run_width<16>(D, n, iterations, t_single);
  return 0;
}
