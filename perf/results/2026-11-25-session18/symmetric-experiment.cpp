// Experiment (session 18, not committed): csell of the strict upper triangle U of a symmetric CI
// Hamiltonian, y = D x + U x + U^T x in one pass (each entry gathers x(c) for its row and scatters
// a * x(row) into y(c) with a RED), against csell of the whole matrix. CUDA only; raw kernels so that
// both run with the same launch (256 threads per block, prefer L1) as the library's row blocks.
//   sym_exp fcidump:FILE:LEVEL[:all-irreps] [iterations]
#include <Kokkos_Core.hpp>

#include "cispmv/ci/hamiltonian.hpp"
#include "cispmv/cispmv.hpp"

#include <algorithm>
#include <cstdio>
#include <vector>

using namespace cispmv;
using HostCsell = CompressedSellMatrix<double, int, std::size_t, Kokkos::DefaultHostExecutionSpace>;
using DevCsell = CompressedSellMatrix<double, int, std::size_t, Kokkos::Cuda>;

struct Raw {
  int nrows, h;
  const std::size_t* slice_ptr;
  const std::uint16_t* delta;
  const std::uint16_t* vidx;
  const int* first_col;
  const int* row_length;
  const double* table;
  const std::size_t* rest_ptr;
  const int* rest_col;
  const double* rest_val;
  const int* row_order;
};

Raw raw(const DevCsell& A) {
  if (!A.uses_table || A.row_lanes != 1) {
    std::fprintf(stderr, "sym_exp: needs a table and one lane per row\n");
    std::exit(2);
  }
  return Raw{A.num_rows,
             A.slice_height,
             A.slice_ptr.data(),
             A.col_delta.data(),
             A.value_index.data(),
             A.first_col.data(),
             A.row_length.data(),
             A.value_table.data(),
             A.rest_row_ptr.data(),
             A.rest_col_idx.data(),
             A.rest_values.data(),
             A.row_order.extent(0) ? A.row_order.data() : nullptr};
}

// Mode 0: the whole matrix, y(row) = sum. 1: U with the transpose scattered (y holds D x before).
// 2: U without the scatter (what the gathers alone cost), y(row) = sum.
template <int Mode>
__global__ void __launch_bounds__(256) csell_rows(const Raw A, const double* __restrict__ x, double* y) {
  const int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= A.nrows) return;
  const int s = row / A.h;
  std::size_t idx = A.slice_ptr[s] + static_cast<std::size_t>(row - s * A.h);
  const int len = A.row_length[row];
  int col = A.first_col[row];
  const int orow = A.row_order ? A.row_order[row] : row;
  const double xr = Mode == 1 ? __ldg(x + orow) : 0.0;
  double sum = 0;
  int k = 0;
  constexpr int U = 4;
  for (; k + U <= len; k += U, idx += U * A.h) {
    std::uint16_t d[U], v[U];
    int c[U];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      d[u] = __ldcs(A.delta + idx + u * A.h);
      v[u] = __ldcs(A.vidx + idx + u * A.h);
    }
#pragma unroll
    for (int u = 0; u < U; ++u) c[u] = col += d[u];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      if (d[u] != 65535) {
        const double a = __ldg(A.table + v[u]);
        sum += a * __ldg(x + c[u]);
        if (Mode == 1) atomicAdd(y + c[u], a * xr);
      }
    }
  }
  for (; k < len; ++k, idx += A.h) {
    const std::uint16_t d = __ldcs(A.delta + idx);
    col += d;
    if (d != 65535) {
      const double a = __ldg(A.table + __ldcs(A.vidx + idx));
      sum += a * __ldg(x + col);
      if (Mode == 1) atomicAdd(y + col, a * xr);
    }
  }
  for (std::size_t e = A.rest_ptr[row]; e < A.rest_ptr[row + 1]; ++e) {
    const double a = A.rest_val[e];
    const int c = A.rest_col[e];
    sum += a * __ldg(x + c);
    if (Mode == 1) atomicAdd(y + c, a * xr);
  }
  if (Mode == 1) {
    atomicAdd(y + orow, sum);
  } else {
    y[orow] = sum;
  }
}

__global__ void diag_times(int n, const double* d, const double* x, double* y) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = d[i] * x[i];
}

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

int main(int argc, char* argv[]) {
  Kokkos::ScopeGuard guard(argc, argv);
  if (argc < 2) return 2;
  const int iterations = argc > 2 ? std::atoi(argv[2]) : 20;
  Kokkos::Timer t;
  HostCsr H = ci::build_hamiltonian(ci::parse_hamiltonian_spec(argv[1]));
  const int n = H.num_rows;
  std::printf("matrix %s: %d rows, %zu nonzeros (%.1f s)\n", argv[1], n, H.nnz(), t.seconds());
  // U (strict upper), D; and how far H is from symmetric (by value, at the mirrored entries found by search)
  auto rp = Kokkos::create_mirror_view(H.row_ptr);
  auto ci_ = Kokkos::create_mirror_view(H.col_idx);
  auto va = Kokkos::create_mirror_view(H.values);
  Kokkos::deep_copy(rp, H.row_ptr);
  Kokkos::deep_copy(ci_, H.col_idx);
  Kokkos::deep_copy(va, H.values);
  std::vector<std::size_t> urp(n + 1, 0);
  std::vector<double> diag(n, 0.0);
  for (int r = 0; r < n; ++r) {
    std::size_t c = 0;
    for (std::size_t e = rp(r); e < rp(r + 1); ++e) {
      if (ci_(e) > r) ++c;
      if (ci_(e) == r) diag[r] = va(e);
    }
    urp[r + 1] = urp[r] + c;
  }
  HostCsr Ucsr("upper", n, n, urp[n]);
  {
    auto p = Ucsr.row_ptr;
    auto cc = Ucsr.col_idx;
    auto vv = Ucsr.values;
    double asym = 0;
    Kokkos::parallel_for("upper", Kokkos::RangePolicy<Kokkos::DefaultHostExecutionSpace>(0, n), [&](const int r) {
      p(r + 1) = urp[r + 1];
      std::size_t o = urp[r];
      for (std::size_t e = rp(r); e < rp(r + 1); ++e) {
        if (ci_(e) > r) {
          cc(o) = ci_(e);
          vv(o) = va(e);
          ++o;
        }
      }
    });
    Kokkos::fence();
    p(0) = 0;
    for (int r = 0; r < n; r += 997) {  // spot check of symmetry
      for (std::size_t e = rp(r); e < rp(r + 1); ++e) {
        const int c = ci_(e);
        const int* b = &ci_(rp(c));
        const int* end = b + (rp(c + 1) - rp(c));
        const int* f = std::lower_bound(b, end, r);
        const double m = (f != end && *f == r) ? va(rp(c) + (f - b)) : 1e300;
        asym = std::max(asym, std::abs(m - va(e)));
      }
    }
    std::printf("upper triangle: %zu entries; largest |H(r,c) - H(c,r)| in a sample of rows: %.3g\n", urp[n], asym);
  }
  FormatParams params = FormatParams::for_space<Kokkos::Cuda>();
  params.row_lanes = 1;
  t.reset();
  DevCsell Cf = to_device<Kokkos::Cuda>(build_format<Format::csell>(H, params));
  const double tf = t.seconds();
  t.reset();
  DevCsell Cu = to_device<Kokkos::Cuda>(build_format<Format::csell>(Ucsr, params));
  std::printf(
      "csell: whole %zu bytes (%.1f s to build), upper %zu bytes (%.1f s); table %zu / %zu values, R %zu / %zu\n",
      allocated_bytes(Cf), tf, allocated_bytes(Cu), t.seconds(), Cf.value_table.extent(0), Cu.value_table.extent(0),
      Cf.rest_values.extent(0), Cu.rest_values.extent(0));
  H = HostCsr();
  Ucsr = HostCsr();
  Kokkos::View<double*, Kokkos::CudaSpace> x("x", n), y0("y0", n), y1("y1", n), y2("y2", n), d("d", n);
  {
    auto hx = Kokkos::create_mirror_view(x);
    auto hd = Kokkos::create_mirror_view(d);
    for (int i = 0; i < n; ++i) {
      hx(i) = std::sin(0.37 * i + 0.1) + 0.01 * ((i * 7919) % 101);
      hd(i) = diag[i];
    }
    Kokkos::deep_copy(x, hx);
    Kokkos::deep_copy(d, hd);
  }
  const Raw rf = raw(Cf), ru = raw(Cu);
  cudaFuncSetCacheConfig(csell_rows<0>, cudaFuncCachePreferL1);
  cudaFuncSetCacheConfig(csell_rows<1>, cudaFuncCachePreferL1);
  cudaFuncSetCacheConfig(csell_rows<2>, cudaFuncCachePreferL1);
  const int blocks = (n + 255) / 256;
  SpmvPlan<Kokkos::Cuda, DevCsell> plan(Kokkos::Cuda(), Cf, SpmvOptions{});
  const double t_lib = time_ms([&] { plan.apply(1.0, x, 0.0, y0); }, iterations);
  const double t_full = time_ms([&] { csell_rows<0><<<blocks, 256>>>(rf, x.data(), y1.data()); }, iterations);
  const double t_sym = time_ms(
      [&] {
        diag_times<<<blocks, 256>>>(n, d.data(), x.data(), y2.data());
        csell_rows<1><<<blocks, 256>>>(ru, x.data(), y2.data());
      },
      iterations);
  Kokkos::View<double*, Kokkos::CudaSpace> y3("y3", n);
  const double t_gather = time_ms([&] { csell_rows<2><<<blocks, 256>>>(ru, x.data(), y3.data()); }, iterations);
  const double t_diag = time_ms([&] { diag_times<<<blocks, 256>>>(n, d.data(), x.data(), y3.data()); }, iterations);
  // the results
  plan.apply(1.0, x, 0.0, y0);
  csell_rows<0><<<blocks, 256>>>(rf, x.data(), y1.data());
  diag_times<<<blocks, 256>>>(n, d.data(), x.data(), y2.data());
  csell_rows<1><<<blocks, 256>>>(ru, x.data(), y2.data());
  Kokkos::fence();
  const cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess) {
    std::fprintf(stderr, "sym_exp: %s\n", cudaGetErrorString(e));
    return 1;
  }
  auto h0 = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), y0);
  auto h1 = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), y1);
  auto h2 = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), y2);
  double m = 0, e1 = 0, e2 = 0;
  for (int i = 0; i < n; ++i) {
    m = std::max(m, std::abs(h0(i)));
    e1 = std::max(e1, std::abs(h1(i) - h0(i)));
    e2 = std::max(e2, std::abs(h2(i) - h0(i)));
  }
  std::printf(
      "ms per product (median of 5 x %d): library plan %.4f, raw whole %.4f, raw symmetric %.4f "
      "(of which diagonal %.4f; upper gathers without the scatter %.4f)\n",
      iterations, t_lib, t_full, t_sym, t_diag, t_gather);
  std::printf("largest |y - y_library| / largest |y|: raw whole %.3g, symmetric %.3g\n", e1 / m, e2 / m);
  return (e1 / m < 1e-12 && e2 / m < 1e-12) ? 0 : 3;
}
