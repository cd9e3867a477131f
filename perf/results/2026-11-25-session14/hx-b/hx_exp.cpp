// experiment (not committed): csell's host slice kernel, scalar (library) vs AVX-512 by hand
#include <immintrin.h>
#include <omp.h>
#include <Kokkos_Core.hpp>
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <vector>
#include "cispmv/baselines/kokkos_kernels.hpp"
#include "cispmv/ci.hpp"
#include "cispmv/cispmv.hpp"
using namespace cispmv;
using Exec = Kokkos::DefaultHostExecutionSpace;
template <class F>
double med_ms(F f, int reps = 15) {
  f();
  std::vector<double> t;
  for (int r = 0; r < reps; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    f();
    t.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}
struct M {
  int nlanes, h, nslices;
  const std::size_t* sp;
  const uint16_t* d;
  const uint16_t* vi;
  const double* iv;
  const int* fc;
  const int* len;
  const double* tab;
  const std::size_t* rp;
  const int* rc;
  const double* rv;
  const int* order;
};
inline void finish(const M& m, int r, double t, const double* x, double* y) {
  for (auto q = m.rp[r]; q < m.rp[r + 1]; ++q) t += m.rv[q] * x[m.rc[q]];
  y[m.order ? m.order[r] : r] = t;
}
inline void scalar_rows(const M& m, int s, int l0, int nn, const double* x, double* y, bool table) {
  const int first = s * m.h;
  for (int i = 0; i < nn; ++i) {
    const int r = first + l0 + i;
    double t = 0;
    int c = m.fc[r];
    for (int q = 0; q < m.len[r]; ++q) {
      const std::size_t ra = m.sp[s] + l0 + (std::size_t)q * m.h + i;
      c += m.d[ra];
      if (m.d[ra] != 65535) t += (table ? m.tab[m.vi[ra]] : m.iv[ra]) * x[c];
    }
    finish(m, r, t, x, y);
  }
}
void scalar_all(const M& m, const double* x, double* y, bool table) {
#pragma omp parallel for schedule(static)
  for (int s = 0; s < m.nslices; ++s) scalar_rows(m, s, 0, std::min(m.h, m.nlanes - s * m.h), x, y, table);
}
// G groups of 8 rows at once; TM: table by gather (0) or by scalar loads (1); U: k steps per iteration
template <bool Table, int G, int TM = 0, int U = 1>
__attribute__((target("avx512f,avx512vl,avx512bw"))) void run512(const M& m, const double* x, double* y) {
#pragma omp parallel for schedule(static)
  for (int s = 0; s < m.nslices; ++s) {
    const int first = s * m.h;
    const int rows = std::min(m.h, m.nlanes - first);
    for (int l0 = 0; l0 < rows; l0 += 8 * G) {
      if (rows - l0 < 8 * G) {
        scalar_rows(m, s, l0, rows - l0, x, y, Table);
        continue;
      }
      __m256i col[G], len[G];
      __m512d sum[U][G];
      int width = 0;
      for (int g = 0; g < G; ++g) {
        col[g] = _mm256_loadu_si256((const __m256i*)(m.fc + first + l0 + 8 * g));
        len[g] = _mm256_loadu_si256((const __m256i*)(m.len + first + l0 + 8 * g));
        for (int u = 0; u < U; ++u) sum[u][g] = _mm512_setzero_pd();
        for (int i = 0; i < 8; ++i) width = std::max(width, m.len[first + l0 + 8 * g + i]);
      }
      const __m256i jump = _mm256_set1_epi32(65535);
      const std::size_t at = m.sp[s] + l0;
      int k = 0;
      for (; k < width; k += U) {
        for (int u = 0; u < U; ++u) {
          const int kk = k + u;
          if (U > 1 && kk >= width) break;
          const std::size_t ra = at + (std::size_t)kk * m.h;
          const __m256i kv = _mm256_set1_epi32(kk);
          for (int g = 0; g < G; ++g) {
            const __m256i d = _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i*)(m.d + ra + 8 * g)));
            col[g] = _mm256_add_epi32(col[g], d);
            const __mmask8 mk = _mm256_cmpgt_epi32_mask(len[g], kv) & _mm256_cmpneq_epi32_mask(d, jump);
            __m512d xv;
            if (TM < 2) {
              xv = _mm512_mask_i32gather_pd(_mm512_setzero_pd(), mk, col[g], x, 8);
            } else {
              alignas(32) int c8[8];
              _mm256_store_si256((__m256i*)c8, col[g]);
              xv = _mm512_maskz_mov_pd(
                  mk, _mm512_set_pd(x[c8[7]], x[c8[6]], x[c8[5]], x[c8[4]], x[c8[3]], x[c8[2]], x[c8[1]], x[c8[0]]));
            }
            __m512d v;
            if (Table) {
              if (TM == 0 || TM == 3) {
                const __m256i vi = _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i*)(m.vi + ra + 8 * g)));
                v = _mm512_mask_i32gather_pd(_mm512_setzero_pd(), mk, vi, m.tab, 8);
              } else {
                const uint16_t* p = m.vi + ra + 8 * g;
                v = _mm512_maskz_mov_pd(mk, _mm512_set_pd(m.tab[p[7]], m.tab[p[6]], m.tab[p[5]], m.tab[p[4]],
                                                          m.tab[p[3]], m.tab[p[2]], m.tab[p[1]], m.tab[p[0]]));
              }
            } else {
              v = _mm512_maskz_loadu_pd(mk, m.iv + ra + 8 * g);
            }
            sum[u][g] = _mm512_fmadd_pd(v, xv, sum[u][g]);
          }
        }
      }
      for (int g = 0; g < G; ++g) {
        __m512d t = sum[0][g];
        for (int u = 1; u < U; ++u) t = _mm512_add_pd(t, sum[u][g]);
        alignas(64) double tt[8];
        _mm512_store_pd(tt, t);
        for (int i = 0; i < 8; ++i) finish(m, first + l0 + 8 * g + i, tt[i], x, y);
      }
    }
  }
}
// AVX2: 4 rows per group
template <bool Table, int G>
__attribute__((target("avx2,fma"))) void run256(const M& m, const double* x, double* y) {
#pragma omp parallel for schedule(static)
  for (int s = 0; s < m.nslices; ++s) {
    const int first = s * m.h;
    const int rows = std::min(m.h, m.nlanes - first);
    for (int l0 = 0; l0 < rows; l0 += 4 * G) {
      if (rows - l0 < 4 * G) {
        scalar_rows(m, s, l0, rows - l0, x, y, Table);
        continue;
      }
      __m128i col[G], len[G];
      __m256d sum[G];
      int width = 0;
      for (int g = 0; g < G; ++g) {
        col[g] = _mm_loadu_si128((const __m128i*)(m.fc + first + l0 + 4 * g));
        len[g] = _mm_loadu_si128((const __m128i*)(m.len + first + l0 + 4 * g));
        sum[g] = _mm256_setzero_pd();
        for (int i = 0; i < 4; ++i) width = std::max(width, m.len[first + l0 + 4 * g + i]);
      }
      const __m128i jump = _mm_set1_epi32(65535);
      const std::size_t at = m.sp[s] + l0;
      for (int k = 0; k < width; ++k) {
        const std::size_t ra = at + (std::size_t)k * m.h;
        const __m128i kv = _mm_set1_epi32(k);
        for (int g = 0; g < G; ++g) {
          const __m128i d = _mm_cvtepu16_epi32(_mm_loadl_epi64((const __m128i*)(m.d + ra + 4 * g)));
          col[g] = _mm_add_epi32(col[g], d);
          const __m128i ok = _mm_andnot_si128(_mm_cmpeq_epi32(d, jump), _mm_cmpgt_epi32(len[g], kv));
          const __m256d mk = _mm256_castsi256_pd(_mm256_cvtepi32_epi64(ok));
          const __m256d xv = _mm256_mask_i32gather_pd(_mm256_setzero_pd(), x, col[g], mk, 8);
          __m256d v;
          if (Table) {
            const __m128i vi = _mm_cvtepu16_epi32(_mm_loadl_epi64((const __m128i*)(m.vi + ra + 4 * g)));
            v = _mm256_mask_i32gather_pd(_mm256_setzero_pd(), m.tab, vi, mk, 8);
          } else {
            v = _mm256_and_pd(_mm256_loadu_pd(m.iv + ra + 4 * g), mk);
          }
          sum[g] = _mm256_fmadd_pd(v, xv, sum[g]);
        }
      }
      for (int g = 0; g < G; ++g) {
        alignas(32) double t[4];
        _mm256_store_pd(t, sum[g]);
        for (int i = 0; i < 4; ++i) finish(m, first + l0 + 4 * g + i, t[i], x, y);
      }
    }
  }
}
int main(int argc, char** argv) {
  Kokkos::ScopeGuard guard(argc, argv);
  setvbuf(stdout, nullptr, _IONBF, 0);
  const char* spec = argc > 1 ? argv[1] : "fcidump:unit_tests/data/h2o_631g_fc.fcidump:8:all-irreps";
  HostCsr A = ci::build_hamiltonian(ci::parse_hamiltonian_spec(spec));
  const int n = A.num_rows;
  std::printf("rows %d nnz %zu threads %d avx512 %d\n", n, (size_t)A.nnz(), omp_get_max_threads(),
              __builtin_cpu_supports("avx512f"));
  Kokkos::View<double*, Kokkos::HostSpace> x("x", n), y("y", n), y0("y0", n);
  for (int i = 0; i < n; ++i) x(i) = 1.0 + (i % 7) * 0.1 + 1e-3 * ((i * 2654435761u) % 1000);
  {
    const std::size_t N = std::size_t(1) << 27;  // 1 GiB each
    std::vector<double> a(N), b(N);
#pragma omp parallel for schedule(static)
    for (std::size_t i = 0; i < N; ++i) a[i] = 1.0 * i, b[i] = 0;
    double ms = med_ms(
        [&] {
#pragma omp parallel for schedule(static)
          for (std::size_t i = 0; i < N; ++i) b[i] = a[i];
        },
        5);
    std::printf("copy: %.1f GB/s (read + write of 1 GiB)\n", 2.0 * N * 8 / ms / 1e6);
  }
  {
    auto K = as_kokkos_kernels(A);
    KokkosKernelsSpmv<Exec, decltype(K), decltype(x), decltype(y)> kk;
    std::printf("kokkos kernels: %.2f ms\n", med_ms([&] {
                  kk.apply(Exec(), 1.0, K, x, 0.0, y0);
                  Exec().fence();
                }));
  }
  for (auto [cov, ts] : {std::pair<double, std::size_t>{0.5, 65536}, {0.5, 4096}, {2.0, 65536}}) {
    auto C = to_compressed_sell(A, 32, ts, cov, std::size_t(1) << 22, ValueTableOrder::automatic, 1, -1);
    const bool table = C.uses_table;
    SpmvPlan<Exec, decltype(C)> pf(Exec(), C, SpmvOptions{});
    std::printf("%s %zu: library %.2f ms\n", table ? "table" : "inline", C.value_table.extent(0), med_ms([&] {
                  pf.apply(1.0, x, 0.0, y0);
                  Exec().fence();
                }));
    M m{C.num_lanes(),
        C.slice_height,
        C.num_slices(),
        C.slice_ptr.data(),
        C.col_delta.data(),
        table ? C.value_index.data() : nullptr,
        table ? nullptr : C.inline_values.data(),
        C.first_col.data(),
        C.row_length.data(),
        table ? C.value_table.data() : nullptr,
        C.rest_row_ptr.data(),
        C.rest_col_idx.data(),
        C.rest_values.data(),
        C.row_order.extent(0) ? C.row_order.data() : nullptr};
    auto chk = [&] {
      double e = 0, r = 0;
      for (int i = 0; i < n; ++i) e = std::max(e, std::abs(y(i) - y0(i))), r = std::max(r, std::abs(y0(i)));
      return e / r;
    };
#define T(name, call)                                            \
  {                                                              \
    Kokkos::deep_copy(y, -7.0);                                  \
    double ms_ = med_ms([&] { call; });                          \
    std::printf("  %-14s %.2f ms err %.1e\n", name, ms_, chk()); \
  }
    T("scalar", (scalar_all(m, x.data(), y.data(), table)));
    {
      int bad = 0;
      for (int i = 0; i < n && bad < 5; ++i)
        if (std::abs(y(i) - y0(i)) > 1e-9 * std::abs(y0(i)) + 1e-12) {
          std::printf("row %d: %g vs %g\n", i, y(i), y0(i));
          ++bad;
        }
    }
    if (table) {
      T("avx512 G2", (run512<true, 2>(m, x.data(), y.data())));
      T("avx512 G4", (run512<true, 4>(m, x.data(), y.data())));
      T("avx512 G4 U2", (run512<true, 4, 0, 2>(m, x.data(), y.data())));
      T("avx512 G2 U2", (run512<true, 2, 0, 2>(m, x.data(), y.data())));
      T("avx512 G4 TS", (run512<true, 4, 1>(m, x.data(), y.data())));
      T("avx512 G2 TS", (run512<true, 2, 1>(m, x.data(), y.data())));
      T("avx512 G4 TS U2", (run512<true, 4, 1, 2>(m, x.data(), y.data())));
      T("avx512 G4 TS XS", (run512<true, 4, 2>(m, x.data(), y.data())));
      T("avx512 G4 XS", (run512<true, 4, 3>(m, x.data(), y.data())));
      T("avx2 G4", (run256<true, 4>(m, x.data(), y.data())));
    } else {
      T("avx512 G4 XS", (run512<false, 4, 2>(m, x.data(), y.data())));
      T("avx512 G2", (run512<false, 2>(m, x.data(), y.data())));
      T("avx512 G4", (run512<false, 4>(m, x.data(), y.data())));
      T("avx512 G4 U2", (run512<false, 4, 0, 2>(m, x.data(), y.data())));
      T("avx512 G2 U2", (run512<false, 2, 0, 2>(m, x.data(), y.data())));
      T("avx2 G4", (run256<false, 4>(m, x.data(), y.data())));
    }
  }
}
