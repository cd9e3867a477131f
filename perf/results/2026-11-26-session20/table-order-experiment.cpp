// Experiment (session 20; built as perf/tbl_exp.cpp with a CUDA-only target, not committed there):
// what csell's frozen core gains on a GPU when a warp step's gathers are spread over the L1's bank pairs
// (l1_gather_probe.cu: a half-warp of 8-byte loads costs as many data-pipe wavefronts as the most distinct words on one
// bank pair, word index mod 16). Two levers, both free of the product's values:
//  - the value table's order: permuted inside its 128-byte lines (each line's 16 values given the
//    16 bank pairs, greedily against the values they share half-warp steps with), or its lines
//    regrouped by co-occurrence first; bit-identical products (y equal to the last bit);
//  - the order of each lane's entries (a raw kernel with signed 16-bit deltas): at each step a lane
//    takes, of its next W entries in column order, the one that adds least to its half-warp's
//    bank-pair loads of x and of the table; products equal up to summation order.
// CUDA only; the library's plan and raw kernels (256 threads per block, prefer L1) in one process.
//   tbl_exp fcidump:FILE:LEVEL[:all-irreps] [iterations (0: one launch of each, for ncu)] [tables: no schedules]
#include <Kokkos_Core.hpp>

#include "cispmv/ci/hamiltonian.hpp"
#include "cispmv/cispmv.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <random>
#include <string>
#include <thread>
#include <vector>

using namespace cispmv;
using HostCsell = CompressedSellMatrix<double, int, std::size_t, Kokkos::DefaultHostExecutionSpace>;
using DevCsell = CompressedSellMatrix<double, int, std::size_t, Kokkos::Cuda>;

namespace {

constexpr int kHot = 4096;  // values whose co-occurrences are counted (the most frequent: ~95 % of lookups)

struct Entry {
  int col;
  int vidx;  // table index (original order)
};

/// Each lane's entries of C in column order (jump slots dropped), per slice.
std::vector<std::array<std::vector<Entry>, 32>> lane_entries(const HostCsell& C) {
  std::vector<std::array<std::vector<Entry>, 32>> out(C.num_slices());
  for (int s = 0; s < C.num_slices(); ++s) {
    for (int l = 0; l < 32; ++l) {
      const int lane = s * 32 + l;
      if (lane >= C.num_lanes()) continue;
      int col = C.first_col(lane);
      for (int k = 0; k < C.row_length(lane); ++k) {
        const std::size_t e = C.slice_ptr(s) + static_cast<std::size_t>(k) * 32 + l;
        const auto d = C.col_delta(e);
        col += d;
        if (d != C.jump_delta) out[s][l].push_back({col, C.value_index(e)});
      }
    }
  }
  return out;
}

/// Data-pipe wavefronts of one warp request of 8-byte words (-1: lane off), by the probe's rule.
int wavefronts(const std::array<long long, 32>& w) {
  int wf = 0;
  for (int h = 0; h < 2; ++h) {
    std::array<std::array<long long, 16>, 16> seen;
    std::array<int, 16> n{};
    int mx = 0;
    for (int l = 16 * h; l < 16 * h + 16; ++l) {
      if (w[l] < 0) continue;
      const int b = static_cast<int>(w[l] & 15);
      bool dup = false;
      for (int i = 0; i < n[b]; ++i) dup |= seen[b][i] == w[l];
      if (!dup) seen[b][n[b]++] = w[l];
      mx = std::max(mx, n[b]);
    }
    wf += mx;
  }
  return wf;
}

/// Co-occurrence weights of the kHot most frequent values (table order is frequency order) in the
/// half-warp steps of C's layout.
std::vector<float> cooccurrence(const std::vector<std::array<std::vector<Entry>, 32>>& ent, std::size_t stride = 1) {
  std::vector<float> w(static_cast<std::size_t>(kHot) * kHot, 0.f);
  for (std::size_t si = 0; si < ent.size(); si += stride) {
    const auto& sl = ent[si];
    std::size_t len = 0;
    for (const auto& v : sl) len = std::max(len, v.size());
    for (std::size_t k = 0; k < len; ++k) {
      for (int h = 0; h < 2; ++h) {
        std::array<int, 16> v;
        int m = 0;
        for (int l = 16 * h; l < 16 * h + 16; ++l)
          if (k < sl[l].size() && sl[l][k].vidx < kHot) v[m++] = sl[l][k].vidx;
        std::sort(v.begin(), v.begin() + m);
        m = static_cast<int>(std::unique(v.begin(), v.begin() + m) - v.begin());
        for (int i = 0; i < m; ++i)
          for (int j = i + 1; j < m; ++j) {
            w[static_cast<std::size_t>(v[i]) * kHot + v[j]] += 1;
            w[static_cast<std::size_t>(v[j]) * kHot + v[i]] += 1;
          }
      }
    }
  }
  return w;
}

/// New table positions: each line (16 values, `lines`) gets the 16 bank pairs, heaviest value first,
/// each to the free pair where the values already placed that it shares steps with weigh least.
std::vector<int> colour_lines(const std::vector<std::vector<int>>& lines, const std::vector<float>& w,
                              std::size_t table_size) {
  std::vector<int> pos(table_size);
  std::iota(pos.begin(), pos.end(), 0);
  std::vector<double> cw(static_cast<std::size_t>(kHot) * 16, 0.0);
  for (std::size_t li = 0; li < lines.size(); ++li) {
    auto vals = lines[li];
    std::sort(vals.begin(), vals.end(), [&](int a, int b) {
      double sa = 0, sb = 0;
      for (int c = 0; c < 16; ++c) sa += cw[a * 16 + c], sb += cw[b * 16 + c];
      return sa > sb;
    });
    std::array<bool, 16> used{};
    for (int v : vals) {
      int best = -1;
      for (int c = 0; c < 16; ++c)
        if (!used[c] && (best < 0 || cw[v * 16 + c] < cw[v * 16 + best])) best = c;
      used[best] = true;
      pos[v] = static_cast<int>(li) * 16 + best;
      for (int u = 0; u < kHot; ++u) cw[u * 16 + best] += w[static_cast<std::size_t>(u) * kHot + v];
    }
  }
  return pos;
}

std::vector<std::vector<int>> frequency_lines() {
  std::vector<std::vector<int>> lines(kHot / 16);
  for (int v = 0; v < kHot; ++v) lines[v / 16].push_back(v);
  return lines;
}

/// Lines of 16 by co-occurrence: seed = the most frequent value not yet placed, then the 15 unplaced
/// values that weigh most with the line so far.
std::vector<std::vector<int>> cooccurrence_lines(const std::vector<float>& w) {
  std::vector<int> line_of(kHot, -1);
  std::vector<std::vector<int>> lines;
  std::vector<double> tie(kHot);
  for (int seed = 0; seed < kHot; ++seed) {
    if (line_of[seed] >= 0) continue;
    std::vector<int> mem{seed};
    line_of[seed] = static_cast<int>(lines.size());
    std::fill(tie.begin(), tie.end(), 0.0);
    for (int u = 0; u < kHot; ++u) tie[u] += w[static_cast<std::size_t>(seed) * kHot + u];
    while (mem.size() < 16) {
      int best = -1;
      for (int u = 0; u < kHot; ++u)
        if (line_of[u] < 0 && (best < 0 || tie[u] > tie[best])) best = u;
      if (best < 0) break;
      line_of[best] = line_of[seed];
      mem.push_back(best);
      for (int u = 0; u < kHot; ++u) tie[u] += w[static_cast<std::size_t>(best) * kHot + u];
    }
    lines.push_back(mem);
  }
  return lines;
}

/// C with its table permuted: value v moves to position pos[v].
HostCsell permute_table(const HostCsell& C, const std::vector<int>& pos) {
  HostCsell P = C.map_views<Kokkos::DefaultHostExecutionSpace>([](const auto& v) {
    using V = std::decay_t<decltype(v)>;
    V copy(Kokkos::view_alloc(v.label(), Kokkos::WithoutInitializing), v.layout());
    Kokkos::deep_copy(copy, v);
    return copy;
  });
  for (std::size_t e = 0; e < P.value_index.extent(0); ++e)
    P.value_index(e) = static_cast<std::uint16_t>(pos[C.value_index(e)]);
  for (std::size_t v = 0; v < pos.size(); ++v) P.value_table(pos[v]) = C.value_table(v);
  return P;
}

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

constexpr std::int16_t kJump = -32768;  // signed layout: a slot that adds 32767 to the column, no gather

/// Thread per row, 4 entries per step. Signed: deltas are int16 (kJump: +32767, no gather).
template <bool Signed>
__global__ void __launch_bounds__(256) csell_rows(const Raw A, const double* __restrict__ x, double* y) {
  const int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= A.nrows) return;
  const int s = row / A.h;
  std::size_t idx = A.slice_ptr[s] + static_cast<std::size_t>(row - s * A.h);
  const int len = A.row_length[row];
  int col = A.first_col[row];
  double sum = 0;
  int k = 0;
  constexpr int U = 4;
  auto step = [&](std::uint16_t d, bool& gather) {
    if constexpr (Signed) {
      const int sd = static_cast<std::int16_t>(d);
      gather = sd != kJump;
      col += gather ? sd : 32767;
    } else {
      gather = d != 65535;
      col += d;
    }
  };
  for (; k + U <= len; k += U, idx += U * A.h) {
    std::uint16_t d[U], v[U];
    int c[U];
    bool g[U];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      d[u] = __ldcs(A.delta + idx + u * A.h);
      v[u] = __ldcs(A.vidx + idx + u * A.h);
    }
#pragma unroll
    for (int u = 0; u < U; ++u) {
      step(d[u], g[u]);
      c[u] = col;
    }
#pragma unroll
    for (int u = 0; u < U; ++u)
      if (g[u]) sum += __ldg(A.table + v[u]) * __ldg(x + c[u]);
  }
  for (; k < len; ++k, idx += A.h) {
    bool g;
    step(__ldcs(A.delta + idx), g);
    if (g) sum += __ldg(A.table + __ldcs(A.vidx + idx)) * __ldg(x + col);
  }
  for (std::size_t e = A.rest_ptr[row]; e < A.rest_ptr[row + 1]; ++e) sum += A.rest_val[e] * __ldg(x + A.rest_col[e]);
  y[A.row_order ? A.row_order[row] : row] = sum;
}

/// The signed layout of C's entries rescheduled with window W (W = 1: column order), table positions
/// `pos`. Returns the device arrays (slice_ptr, delta, vidx, row_length; first_col, table and R as C's).
struct Signed {
  Kokkos::View<std::size_t*, Kokkos::CudaSpace> slice_ptr;
  Kokkos::View<std::uint16_t*, Kokkos::CudaSpace> delta, vidx;
  Kokkos::View<int*, Kokkos::CudaSpace> row_length, first_col;
  double x_wf = 0, t_wf = 0, requests = 0;  // by the probe's rule, per warp request
};

Signed schedule(const std::vector<std::array<std::vector<Entry>, 32>>& ent, const HostCsell& C,
                const std::vector<int>& pos, int W) {
  const int ns = static_cast<int>(ent.size());
  std::vector<std::array<std::vector<std::pair<std::int16_t, std::uint16_t>>, 32>> out(ns);
  std::vector<std::array<int, 32>> first(ns);
  std::vector<double> xwf(ns, 0), twf(ns, 0), req(ns, 0);
  auto work = [&](int s0, int s1) {
    for (int s = s0; s < s1; ++s) {
      const auto& sl = ent[s];
      std::array<std::vector<char>, 32> done;
      std::array<std::size_t, 32> head{};
      std::array<long long, 32> cur{};
      std::array<bool, 32> started{};
      std::size_t remaining = 0;
      for (int l = 0; l < 32; ++l) {
        done[l].assign(sl[l].size(), 0);
        remaining += sl[l].size();
        first[s][l] = sl[l].empty() ? 0 : sl[l][0].col;
        cur[l] = first[s][l];
      }
      while (remaining > 0) {
        std::array<long long, 32> wx, wt;
        for (int h = 0; h < 2; ++h) {
          std::array<std::vector<long long>, 16> bx, bt;
          for (int l = 16 * h; l < 16 * h + 16; ++l) {
            wx[l] = wt[l] = -1;
            while (head[l] < sl[l].size() && done[l][head[l]]) ++head[l];
            if (head[l] >= sl[l].size()) continue;
            const long long hc = sl[l][head[l]].col;
            if (cur[l] < hc && hc - cur[l] > 32767) {  // a forward jump slot first
              out[s][l].push_back({kJump, 0});
              cur[l] += 32767;
              continue;
            }
            std::size_t best = head[l];
            int bestc = 1 << 30;
            int seen = 0;
            for (std::size_t j = head[l]; j < sl[l].size() && seen < W; ++j) {
              if (done[l][j]) continue;
              if (sl[l][j].col - hc > 32767 || sl[l][j].col - cur[l] > 32767) break;
              ++seen;
              const long long cx = sl[l][j].col, ct = pos[sl[l][j].vidx];
              auto cost = [](const std::vector<long long>& b, long long w) {
                for (long long v : b)
                  if (v == w) return 0;
                return static_cast<int>(b.size());
              };
              const int c = cost(bx[cx & 15], cx) + cost(bt[ct & 15], ct);
              if (c < bestc) bestc = c, best = j;
              if (c == 0) break;
            }
            done[l][best] = 1;
            --remaining;
            const long long col = sl[l][best].col;
            const long long d = started[l] ? col - cur[l] : 0;
            if (!started[l]) first[s][l] = static_cast<int>(col);  // the first slot's column
            started[l] = true;
            out[s][l].push_back({static_cast<std::int16_t>(d), static_cast<std::uint16_t>(pos[sl[l][best].vidx])});
            cur[l] = col;
            wx[l] = col;
            wt[l] = pos[sl[l][best].vidx];
            auto add = [](std::vector<long long>& b, long long w) {
              for (long long v : b)
                if (v == w) return;
              b.push_back(w);
            };
            add(bx[col & 15], col);
            add(bt[wt[l] & 15], wt[l]);
          }
        }
        xwf[s] += wavefronts(wx);
        twf[s] += wavefronts(wt);
        req[s] += 1;
      }
    }
  };
  const int nt = std::max(1u, std::thread::hardware_concurrency());
  std::vector<std::thread> th;
  for (int t = 0; t < nt; ++t)
    th.emplace_back(work, static_cast<int>(static_cast<long long>(ns) * t / nt),
                    static_cast<int>(static_cast<long long>(ns) * (t + 1) / nt));
  for (auto& t : th) t.join();
  Signed S;
  std::vector<std::size_t> sp(ns + 1, 0);
  for (int s = 0; s < ns; ++s) {
    std::size_t len = 0;
    for (int l = 0; l < 32; ++l) len = std::max(len, out[s][l].size());
    sp[s + 1] = sp[s] + 32 * len;
    S.x_wf += xwf[s];
    S.t_wf += twf[s];
    S.requests += req[s];
  }
  Kokkos::View<std::size_t*, Kokkos::HostSpace> hsp("sp", ns + 1);
  Kokkos::View<std::uint16_t*, Kokkos::HostSpace> hd("d", sp[ns]), hv("v", sp[ns]);
  Kokkos::View<int*, Kokkos::HostSpace> hl("len", C.num_lanes()), hf("first", C.num_lanes());
  for (int s = 0; s <= ns; ++s) hsp(s) = sp[s];
  for (int s = 0; s < ns; ++s)
    for (int l = 0; l < 32; ++l) {
      const int lane = s * 32 + l;
      if (lane >= C.num_lanes()) continue;
      hl(lane) = static_cast<int>(out[s][l].size());
      hf(lane) = first[s][l];
      for (std::size_t k = 0; k < out[s][l].size(); ++k) {
        hd(sp[s] + 32 * k + l) = static_cast<std::uint16_t>(out[s][l][k].first);
        hv(sp[s] + 32 * k + l) = out[s][l][k].second;
      }
    }
  // host check: each lane's signed slots decode to the same multiset of (column, table position)
  for (int s = 0; s < ns; ++s)
    for (int l = 0; l < 32; ++l) {
      const int lane = s * 32 + l;
      if (lane >= C.num_lanes()) continue;
      std::vector<std::pair<int, int>> a, b;
      for (const Entry& e : ent[s][l]) a.push_back({e.col, pos[e.vidx]});
      int col = hf(lane);
      for (int k = 0; k < hl(lane); ++k) {
        const int sd = static_cast<std::int16_t>(hd(sp[s] + 32 * k + l));
        if (sd == kJump) {
          col += 32767;
          continue;
        }
        col += sd;
        b.push_back({col, hv(sp[s] + 32 * k + l)});
      }
      std::sort(a.begin(), a.end());
      std::sort(b.begin(), b.end());
      if (a != b) {
        std::fprintf(stderr, "tbl_exp: schedule W=%d: slice %d lane %d decodes to other entries (%zu against %zu)\n", W,
                     s, l, b.size(), a.size());
        std::exit(4);
      }
    }
  S.slice_ptr = Kokkos::create_mirror_view_and_copy(Kokkos::CudaSpace(), hsp);
  S.delta = Kokkos::create_mirror_view_and_copy(Kokkos::CudaSpace(), hd);
  S.vidx = Kokkos::create_mirror_view_and_copy(Kokkos::CudaSpace(), hv);
  S.row_length = Kokkos::create_mirror_view_and_copy(Kokkos::CudaSpace(), hl);
  S.first_col = Kokkos::create_mirror_view_and_copy(Kokkos::CudaSpace(), hf);
  return S;
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

}  // namespace

int main(int argc, char* argv[]) {
  Kokkos::ScopeGuard guard(argc, argv);
  if (argc < 2) return 2;
  const int iterations = argc > 2 ? std::atoi(argv[2]) : 20;
  Kokkos::Timer t;
  HostCsr H = ci::build_hamiltonian(ci::parse_hamiltonian_spec(argv[1]));
  const int n = H.num_rows;
  FormatParams params = FormatParams::for_space<Kokkos::Cuda>();
  params.row_lanes = 1;
  HostCsell C = build_format<Format::csell>(H, params);
  H = HostCsr();
  std::printf("matrix %s: %d rows, %zu nonzeros; csell table %zu values, R %zu, window %s (%.1f s)\n", argv[1], n,
              C.nnz(), C.value_table.extent(0), C.rest_nnz(), C.row_order.extent(0) ? "sorted" : "none", t.seconds());
  if (!C.uses_table || C.value_table.extent(0) < static_cast<std::size_t>(kHot)) {
    std::fprintf(stderr, "tbl_exp: needs a table of at least %d values\n", kHot);
    return 2;
  }
  t.reset();
  const auto ent = lane_entries(C);
  const auto w = cooccurrence(ent);
  const std::size_t T = C.value_table.extent(0);
  std::vector<int> ident(T);
  std::iota(ident.begin(), ident.end(), 0);
  std::vector<int> random_pos = ident;
  std::shuffle(random_pos.begin(), random_pos.begin() + kHot, std::mt19937(20261126));
  const auto in_lines = colour_lines(frequency_lines(), w, T);
  const auto by_cooc = colour_lines(cooccurrence_lines(w), w, T);
  const auto w16 = cooccurrence(ent, 16);
  const auto by_cooc16 = colour_lines(cooccurrence_lines(w16), w16, T);
  const bool schedules = argc <= 3 || std::string(argv[3]) != "tables";
  std::printf("co-occurrence and table orders: %.1f s\n", t.seconds());

  Kokkos::View<double*, Kokkos::CudaSpace> x("x", n), y0("y0", n), y1("y1", n);
  {
    auto hx = Kokkos::create_mirror_view(x);
    for (int i = 0; i < n; ++i) hx(i) = std::sin(0.37 * i + 0.1) + 0.01 * ((i * 7919) % 101);
    Kokkos::deep_copy(x, hx);
  }
  const int blocks = (n + 255) / 256;
  cudaFuncSetCacheConfig(csell_rows<false>, cudaFuncCachePreferL1);
  cudaFuncSetCacheConfig(csell_rows<true>, cudaFuncCachePreferL1);
  std::vector<double> ref_lib, ref_raw;
  auto check = [&](const char* what, std::vector<double>& reference, bool exact) {
    Kokkos::fence();
    const cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess) {
      std::fprintf(stderr, "tbl_exp: %s: %s\n", what, cudaGetErrorString(e));
      std::exit(1);
    }
    auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), y1);
    if (reference.empty()) {
      reference.assign(h.data(), h.data() + n);
      return 0.0;
    }
    double m = 0, d = 0;
    for (int i = 0; i < n; ++i) {
      m = std::max(m, std::abs(reference[i]));
      d = std::max(d, std::abs(h(i) - reference[i]));
    }
    if ((exact && d != 0) || d / m > 1e-12) {
      std::fprintf(stderr, "tbl_exp: %s differs from the reference: %.3g of max |y|\n", what, d / m);
      std::exit(3);
    }
    return d / m;
  };
  struct Variant {
    const char* name;
    const std::vector<int>* pos;
  };
  const Variant tables[] = {{"frequency (the library's)", &ident},
                            {"random hot positions", &random_pos},
                            {"coloured inside lines", &in_lines},
                            {"lines by co-occurrence, coloured", &by_cooc},
                            {"the same from 1/16 of the slices", &by_cooc16}};
  for (const Variant& v : tables) {
    DevCsell D = to_device<Kokkos::Cuda>(permute_table(C, *v.pos));
    SpmvPlan<Kokkos::Cuda, DevCsell> plan(Kokkos::Cuda(), D, SpmvOptions{});
    const Raw r = raw(D);
    const double t_lib = time_ms([&] { plan.apply(1.0, x, 0.0, y1); }, iterations);
    check(v.name, ref_lib, true);
    const double t_raw = time_ms([&] { csell_rows<false><<<blocks, 256>>>(r, x.data(), y1.data()); }, iterations);
    check(v.name, ref_raw, true);
    const double e = check(v.name, ref_lib, false);
    std::printf("table %-34s library plan %.4f ms, raw %.4f ms (raw against the plan: %.2g of max |y|)\n", v.name,
                t_lib, t_raw, e);
  }
  DevCsell Dc = schedules ? to_device<Kokkos::Cuda>(permute_table(C, by_cooc)) : DevCsell{};
  for (int W : {1, 8, 16, 32}) {
    if (!schedules) break;
    t.reset();
    Signed S = schedule(ent, C, by_cooc, W);
    const double ts = t.seconds();
    Raw r = raw(Dc);
    r.slice_ptr = S.slice_ptr.data();
    r.delta = S.delta.data();
    r.vidx = S.vidx.data();
    r.row_length = S.row_length.data();
    r.first_col = S.first_col.data();
    const double t_raw = time_ms([&] { csell_rows<true><<<blocks, 256>>>(r, x.data(), y1.data()); }, iterations);
    check("scheduled", ref_raw, W == 1);
    const double err = check("scheduled", ref_lib, false);
    std::printf(
        "signed, lines by co-occurrence, window %2d: raw %.4f ms (%zu slots; model per request: x %.2f, table %.2f "
        "wavefronts; %.1f s to schedule; |y - y_ref| %.2g of max)\n",
        W, t_raw, S.delta.extent(0), S.x_wf / S.requests, S.t_wf / S.requests, ts, err);
  }
  return 0;
}
