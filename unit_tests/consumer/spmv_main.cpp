// Consumer of the installed SpMV library (CiSpmv::spmv) alone: hybrid SpMV of the paper's 6x5 example on the default
// execution space; exits non-zero unless y equals the hand-computed result.
#include <cispmv/cispmv.hpp>

#include <cstdio>

int main(int argc, char* argv[]) {
  Kokkos::ScopeGuard kokkos(argc, argv);
  cispmv::CooMatrix<double, int> coo;
  coo.num_rows = 6;
  coo.num_cols = 5;
  coo.row_idx = {0, 1, 1, 2, 2, 3, 4, 5};
  coo.col_idx = {0, 2, 4, 1, 4, 2, 3, 4};
  coo.values = {1, 2, 3, 4, 5, 6, 7, 8};
  const auto A = cispmv::to_device<Kokkos::DefaultExecutionSpace>(cispmv::to_hybrid(cispmv::from_coo(coo), 1));
  Kokkos::View<double*> x("x", 5), y("y", 6);
  auto hx = Kokkos::create_mirror_view(x);
  for (int i = 0; i < 5; ++i) hx(i) = i + 1;
  Kokkos::deep_copy(x, hx);
  cispmv::spmv(Kokkos::DefaultExecutionSpace(), 1.0, A, x, 0.0, y);
  auto hy = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), y);
  const double expected[6] = {1, 21, 33, 18, 28, 40};
  int wrong = 0;
  for (int r = 0; r < 6; ++r) wrong += hy(r) != expected[r];
  std::printf("%s: consumer of CiSpmv::spmv, y = [%g %g %g %g %g %g]\n", wrong ? "FAIL" : "PASS", hy(0), hy(1), hy(2),
              hy(3), hy(4), hy(5));
  return wrong ? 1 : 0;
}
