#include <Kokkos_Core.hpp>
#include <algorithm>
#include <cstdio>
#include <vector>
#include "cispmv/cispmv.hpp"
using namespace cispmv;
int main(int argc, char** argv) {
  Kokkos::ScopeGuard g(argc, argv);
  HostCsr A = generate_suite_matrix(argc > 1 ? argv[1] : "paper32k-1");
  int n = A.num_rows;
  std::vector<long> len(n);
  for (int r = 0; r < n; ++r) len[r] = A.row_ptr(r + 1) - A.row_ptr(r);
  auto s = len;
  std::sort(s.begin(), s.end());
  double avg = double(A.nnz()) / n;
  std::printf("rows %d avg %.1f min %ld p10 %ld p50 %ld p90 %ld p99 %ld max %ld\n", n, avg, s[0], s[n / 10], s[n / 2],
              s[9 * n / 10], s[99 * n / 100], s[n - 1]);
  // warp of 8 rows (4 lanes): steps = max over its rows of ceil(len/4); in windows of W sorted descending
  for (int W : {1, 1024, 4096, n}) {
    std::vector<long> l = len;
    if (W > 1)
      for (int w = 0; w < n; w += W) std::sort(l.begin() + w, l.begin() + std::min(n, w + W), std::greater<long>());
    double work = 0, warps = 0;
    long maxw = 0;
    for (int r = 0; r < n; r += 8) {
      long m = 0;
      for (int i = r; i < std::min(n, r + 8); ++i) m = std::max(m, (l[i] + 3) / 4);
      work += m;
      maxw = std::max(maxw, m);
      warps++;
    }
    std::printf("window %d: mean warp steps %.1f, max %ld (max/mean %.2f), useful/total %.3f\n", W, work / warps, maxw,
                maxw / (work / warps), (A.nnz() / 4.0) / (work));
  }
}
