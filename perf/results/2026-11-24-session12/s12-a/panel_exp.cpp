// experiment (not committed): csell and CSR in column panels (x of a panel small enough for a
// core's L2 / an SM's L1); the panels run one after the other, y accumulated (beta = 1 after the first)
#include <Kokkos_Core.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>
#include "cispmv/ci.hpp"
#include "cispmv/cispmv.hpp"
using namespace cispmv;
template <class F>
double med_ms(F f, int reps) {
  f();
  Kokkos::fence();
  std::vector<double> t;
  for (int r = 0; r < reps; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    f();
    Kokkos::fence();
    t.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}
HostCsr panel(const HostCsr& A, int c0, int c1) {
  std::vector<std::size_t> rp(A.num_rows + 1, 0);
  for (int r = 0; r < A.num_rows; ++r) {
    std::size_t n = 0;
    for (auto k = A.row_ptr(r); k < A.row_ptr(r + 1); ++k) n += (A.col_idx(k) >= c0 && A.col_idx(k) < c1);
    rp[r + 1] = rp[r] + n;
  }
  HostCsr P("panel", A.num_rows, A.num_cols, rp.back());
  for (int r = 0; r <= A.num_rows; ++r) P.row_ptr(r) = rp[r];
  for (int r = 0; r < A.num_rows; ++r) {
    auto o = rp[r];
    for (auto k = A.row_ptr(r); k < A.row_ptr(r + 1); ++k)
      if (A.col_idx(k) >= c0 && A.col_idx(k) < c1) {
        P.col_idx(o) = A.col_idx(k);
        P.values(o) = A.values(k);
        ++o;
      }
  }
  return P;
}
template <class Exec>
void experiment(const HostCsr& A, const char* name, int reps, std::vector<int> panels, bool with_csr) {
  using Dev = typename Exec::device_type;
  const int n = A.num_rows;
  Kokkos::View<double*, Dev> x("x", n), y("y", n), y0("y0", n);
  auto xh = Kokkos::create_mirror_view(x);
  for (int i = 0; i < n; ++i) xh(i) = 1.0 + (i % 7) * 0.1;
  Kokkos::deep_copy(x, xh);
  SpmvOptions o;
  const bool gpu = !std::is_same_v<typename Exec::memory_space, Kokkos::HostSpace>;
  const auto order = gpu ? ValueTableOrder::frequency : ValueTableOrder::first_use;
  auto enc = [&](const HostCsr& B) {
    return to_device<Dev>(to_compressed_sell(B, 32, 65536, 0.5, std::size_t(1) << 22, order, 1, 64));
  };
  auto full = enc(A);
  SpmvPlan<Exec, decltype(full)> pf(Exec(), full, o);
  std::printf("%s csell P=1: %.4f ms\n", name, med_ms([&] { pf.apply(1.0, x, 0.0, y0); }, reps));
  if (with_csr) {
    auto Ad = to_device<Dev>(A);
    SpmvPlan<Exec, decltype(Ad)> pc(Exec(), Ad, o);
    std::printf("%s csr P=1: %.4f ms\n", name, med_ms([&] { pc.apply(1.0, x, 0.0, y); }, reps));
  }
  auto y0h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), y0);
  for (int P : panels) {
    std::vector<decltype(full)> cs;
    std::vector<decltype(to_device<Dev>(A))> cr;
    for (int p = 0; p < P; ++p) {
      int c0 = (long)n * p / P, c1 = (long)n * (p + 1) / P;
      auto B = panel(A, c0, c1);
      cs.push_back(enc(B));
      if (with_csr) cr.push_back(to_device<Dev>(B));
    }
    std::vector<SpmvPlan<Exec, decltype(full)>> ps;
    for (int p = 0; p < P; ++p) ps.emplace_back(Exec(), cs[p], o);
    double ts = med_ms(
        [&] {
          for (int p = 0; p < P; ++p) ps[p].apply(1.0, x, p ? 1.0 : 0.0, y);
        },
        reps);
    auto yh = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), y);
    double err = 0;
    for (int i = 0; i < n; ++i) err = std::max(err, std::abs(yh(i) - y0h(i)));
    std::printf("%s csell P=%d: %.4f ms (max diff %.1e)", name, P, ts, err);
    if (with_csr) {
      std::vector<SpmvPlan<Exec, typename decltype(cr)::value_type>> pcs;
      for (int p = 0; p < P; ++p) pcs.emplace_back(Exec(), cr[p], o);
      std::printf("  csr %.4f ms", med_ms(
                                       [&] {
                                         for (int p = 0; p < P; ++p) pcs[p].apply(1.0, x, p ? 1.0 : 0.0, y);
                                       },
                                       reps));
    }
    std::printf("\n");
  }
}
int main(int argc, char** argv) {
  Kokkos::ScopeGuard g(argc, argv);
  setvbuf(stdout, nullptr, _IONBF, 0);
  const std::string spec = argc > 1 ? argv[1] : "fcidump:unit_tests/data/h2o_631g_fc.fcidump:8:all-irreps";
  const std::string where = argc > 2 ? argv[2] : "host";
  HostCsr A = ci::build_hamiltonian(ci::parse_hamiltonian_spec(spec));
  std::printf("rows %d nnz %zu host threads %d\n", A.num_rows, (size_t)A.nnz(),
              Kokkos::DefaultHostExecutionSpace().concurrency());
  if (where == "host")
    experiment<Kokkos::DefaultHostExecutionSpace>(A, "host", 10, {2, 4, 8, 16}, true);
  else
    experiment<Kokkos::DefaultExecutionSpace>(A, "device", 50, {2, 4, 8, 16, 32}, false);
}
