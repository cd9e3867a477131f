// experiment (not committed): variants of csell's host slice kernel on raw arrays
#include <omp.h>
#include <Kokkos_Core.hpp>
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <vector>
#include "cispmv/ci.hpp"
#include "cispmv/cispmv.hpp"
using namespace cispmv;
using Exec = Kokkos::DefaultHostExecutionSpace;
template <class F>
double best_ms(F f, int reps = 10) {
  f();
  double best = 1e30;
  for (int r = 0; r < reps; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    f();
    best = std::min(best, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  return best;
}
constexpr int L = 8;
struct M {
  int nlanes, h, nslices;
  const std::size_t* sp;
  const uint16_t* d;
  const uint16_t* vi;
  const int* fc;
  const int* len;
  const double* tab;
  const std::size_t* rp;
  const int* rc;
  const double* rv;
  const int* order;
};
// Variant: MASKLEN: mask k<len for every k (0) or only past the shortest (1); JUMP: test jumps (1) or not (0)
inline std::size_t at0(const M& m, int s, int l0) { return m.sp[s] + l0; }
template <int Mode, bool Jump>
void run(const M& m, const double* x, double* y) {
#pragma omp parallel for schedule(static)
  for (int s = 0; s < m.nslices; ++s) {
    const int first = s * m.h;
    const int rows = std::min(m.h, m.nlanes - first);
    for (int l0 = 0; l0 < rows; l0 += L) {
      int col[L], len[L];
      double sum[L];
      int width = 0, minw = 1 << 30;
      const int nn = std::min(L, rows - l0);
      for (int i = 0; i < L; ++i) {
        col[i] = i < nn ? m.fc[first + l0 + i] : 0;
        len[i] = i < nn ? m.len[first + l0 + i] : 0;
        sum[i] = 0;
        width = std::max(width, len[i]);
        if (i < nn) minw = std::min(minw, len[i]);
      }
      if (nn < L) { /* tail: scalar */
        for (int i = 0; i < nn; ++i) {
          const int r = first + l0 + i;
          double t = 0;
          int c = col[i];
          for (int q = 0; q < len[i]; ++q) {
            const std::size_t ra = at0(m, s, l0) + (std::size_t)q * m.h + i;
            c += m.d[ra];
            if (m.d[ra] != 65535) t += m.tab[m.vi[ra]] * x[c];
          }
          for (auto q = m.rp[r]; q < m.rp[r + 1]; ++q) t += m.rv[q] * x[m.rc[q]];
          y[m.order ? m.order[r] : r] = t;
        }
        continue;
      }
      const std::size_t at = m.sp[s] + l0;
      int k = 0;
      if (Mode == 1) {
        for (; k < minw; ++k) {
          const std::size_t ra = at + (std::size_t)k * m.h;
          for (int i = 0; i < L; ++i) {
            const uint16_t d = m.d[ra + i];
            col[i] += d;
            const double p = m.tab[m.vi[ra + i]] * x[col[i]];
            if (Jump)
              sum[i] += d != 65535 ? p : 0.0;
            else
              sum[i] += p;
          }
        }
      }
      for (; k < width; ++k) {
        const std::size_t ra = at + (std::size_t)k * m.h;
        for (int i = 0; i < L; ++i) {
          const uint16_t d = m.d[ra + i];
          col[i] += d;
          const double p = m.tab[m.vi[ra + i]] * x[col[i]];
          sum[i] += (k < len[i] && (!Jump || d != 65535)) ? p : 0.0;
        }
      }
      for (int i = 0; i < L; ++i) {
        const int r = first + l0 + i;
        double t = sum[i];
        for (auto q = m.rp[r]; q < m.rp[r + 1]; ++q) t += m.rv[q] * x[m.rc[q]];
        y[m.order ? m.order[r] : r] = t;
      }
    }
  }
}
int main(int argc, char** argv) {
  Kokkos::ScopeGuard g(argc, argv);
  setvbuf(stdout, nullptr, _IONBF, 0);
  const char* spec = argc > 1 ? argv[1] : "fcidump:unit_tests/data/h2o_631g_fc.fcidump:8:all-irreps";
  HostCsr A = ci::build_hamiltonian(ci::parse_hamiltonian_spec(spec));
  const int n = A.num_rows;
  Kokkos::View<double*, Kokkos::HostSpace> x("x", n), y("y", n), y0("y0", n);
  for (int i = 0; i < n; ++i) x(i) = 1.0 + (i % 7) * 0.1;
  for (int win : {64})
    for (std::size_t ts : {65536, 4096}) {
      auto C = to_compressed_sell(A, 32, ts, 0.5, std::size_t(1) << 22, ValueTableOrder::automatic, 1, win);
      if (C.num_lanes() % 32) {
        std::printf("lanes not multiple of 32\n");
      }
      std::size_t jumps = 0;
      for (std::size_t i = 0; i < C.col_delta.extent(0); ++i) jumps += C.col_delta(i) == 65535;
      std::printf("window %d ts %zu: table %zu, rest %zu, slots %zu, jump slots %zu\n", win, ts,
                  C.value_table.extent(0), C.rest_nnz(), C.col_delta.extent(0), jumps);
      SpmvPlan<Exec, decltype(C)> pf(Exec(), C, SpmvOptions{});
      std::printf("  library: %.2f ms\n", best_ms([&] { pf.apply(1.0, x, 0.0, y0); }));
      M m{C.num_lanes(),
          C.slice_height,
          C.num_slices(),
          C.slice_ptr.data(),
          C.col_delta.data(),
          C.value_index.data(),
          C.first_col.data(),
          C.row_length.data(),
          C.value_table.data(),
          C.rest_row_ptr.data(),
          C.rest_col_idx.data(),
          C.rest_values.data(),
          C.row_order.extent(0) ? C.row_order.data() : nullptr};
      auto chk = [&] {
        double e = 0;
        for (int i = 0; i < n; ++i) e = std::max(e, std::abs(y(i) - y0(i)));
        return e;
      };

      std::printf("  min-len split, jump test: %.2f ms err %.1e\n",
                  best_ms([&] { run<1, true>(m, x.data(), y.data()); }), chk());
      std::printf("  min-len split, no jump test: %.2f ms err %.1e\n",
                  best_ms([&] { run<1, false>(m, x.data(), y.data()); }), chk());
    }
}
