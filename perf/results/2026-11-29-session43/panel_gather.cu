// Session 43's micro-benchmark (issue 14): the one block layout that sessions 38-42 did not exclude, measured before
// anything of it is built. X's rows come from a panel staged in shared memory instead of the L1 and L2.
//
// The model is the all-electron H2O/6-31G full-CI Hamiltonian at k = 8 vectors. Its rows and columns are
// determinants (alpha string a, beta string b), 1,287 x 1,287 of them.
//   - A block (one an SM, 672 threads) takes the 1,287 rows of one alpha string a; each thread holds 2 rows' 8 sums
//     in registers for the whole string.
//   - For each alpha string a' whose block H(a, a') is nonzero (a itself, its 40 single replacements, its doubles of
//     A1 symmetry: 115 on average, 148,023 in all, computed below from the FCIDUMP's ORBSYM), the block stages
//     X(a', :, 0..7) (82 KB) into shared memory with cp.async, double-buffered.
//   - Each row then takes N = 6 entries a panel (1.14e9 in all; the real matrix has 1.09e9). An entry is a 16-bit column
//     within the panel and a value. Its 64-byte row of X is read from the panel as 4 16-byte loads; the rows' chunks
//     are swizzled so that 8 lanes whose columns differ mod 8 touch 8 different bank groups.
//
// Modes (all of them in turn; the command line's third argument, B:C, runs one):
//   cols: random (uniform in the panel) or balanced (the 8 lanes of a quarter-warp get distinct columns mod 8, which
//         a format could arrange by ordering each row's entries);
//   C:    l2   (the entries of the first 128 panels' slots, reused: C's bytes nearly free),
//         inline (16-bit column + 8-byte value, 10 bytes an entry, from DRAM),
//         dict (16-bit column + 16-bit index into a 512-value table in shared memory, 4 bytes an entry),
//         words-l2 and words (`s43-b`: column | index << 16 in one 32-bit word, a panel's words loaded before its
//         barrier; from the window and from DRAM).
// Every mode's result is checked against a host computation of 2 alpha strings' rows (all 8 columns).
//
// Build: nvcc -O3 -std=c++17 -arch=sm_90 -o panel_gather panel_gather.cu   (`s43-c`: also -DSINGLES_ONLY)
// Run:   panel_gather FCIDUMP [repetitions] [B:C]   (B:C: only that mode, B 0 random / 1 balanced, C 0 l2 / 1 inline /
//        2 dict / 3 words-l2 / 4 words)
#include <cuda_pipeline.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#define CHECK(x)                                                                              \
  do {                                                                                        \
    cudaError_t e_ = (x);                                                                     \
    if (e_ != cudaSuccess) {                                                                  \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      std::exit(1);                                                                           \
    }                                                                                         \
  } while (0)

constexpr int K = 8;     // vectors
constexpr int T = 672;   // threads a block (21 warps; 2 rows a thread cover 1,344 >= 1,287)
// entries a row a panel; -DSINGLES_ONLY (`s43-c`): the panels of a and its singles only (the same-spin doubles left to
// dense products, as the factored Hamiltonian does), 12 entries a row a panel (the rest of the matrix's ~510 a row)
#ifdef SINGLES_ONLY
constexpr int N = 12;
constexpr bool singles_only = true;
constexpr double scale_to = 9.47261205e8;  // the factored Hamiltonian's alpha-beta terms a product (s43-a)
#else
constexpr int N = 6;
constexpr bool singles_only = false;
constexpr double scale_to = 1.0907e9;  // the all-electron matrix's entries
#endif
constexpr int DICT = 512;
constexpr int WINDOW = 128;  // panels' entries the l2 mode reuses (128 x 6 x 1,287 entries, 9.9 MB)

__host__ __device__ inline std::uint64_t mix(std::uint64_t z) {
  z += 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
__host__ __device__ inline double x_of(long long i) {  // X's values in [-1, 1)
  return static_cast<double>(mix(0x1234 + i) >> 11) * (2.0 / 9007199254740992.0) - 1.0;
}
// entry e's column (row r of the 1,287; `balanced`: its quarter-warp's 8 rows get distinct columns mod 8)
__host__ __device__ inline int col_of(long long e, int r, int nb, bool balanced) {
  const std::uint64_t h = mix(e);
  if (!balanced) return static_cast<int>((h >> 16) % static_cast<std::uint64_t>(nb));
  const std::uint64_t q = mix((e - r) * 131 + (r >> 3));  // the same for the quarter-warp's rows (e - r: its slot)
  const int low = static_cast<int>(((r & 7) + q) & 7);
  return 8 * static_cast<int>((h >> 16) % static_cast<std::uint64_t>(nb / 8)) + low;
}
__host__ __device__ inline int vidx_of(long long e) { return static_cast<int>((mix(e ^ 0x55) >> 40) % DICT); }

__global__ void fill(std::uint16_t* col, double* val, std::uint16_t* vidx, std::uint32_t* pk, const double* dict,
                     long long count, int nb, bool balanced) {
  for (long long e = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; e < count;
       e += static_cast<long long>(gridDim.x) * blockDim.x) {
    const int r = static_cast<int>(e % nb);
    const int c = col_of(e, r, nb, balanced);
    col[e] = static_cast<std::uint16_t>(c);
    const int v = vidx_of(e);
    pk[e] = static_cast<std::uint32_t>(c) | static_cast<std::uint32_t>(v) << 16;
    vidx[e] = static_cast<std::uint16_t>(v);
    val[e] = dict[v];
  }
}
__global__ void fill_x(double* x, long long count) {
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<long long>(gridDim.x) * blockDim.x)
    x[i] = x_of(i);
}

// CM: 0 entries from a window (l2), 1 inline values, 2 dictionary indices; 3 and 4 (`s43-b`): an entry one 32-bit word
// (column | dictionary index << 16), a panel's 12 words a thread loaded before the panel's wait (3 from the window, 4
// from DRAM)
template <int CM>
__global__ void __launch_bounds__(T, 1)
    staged(const double* __restrict__ X, const int* __restrict__ pptr, const int* __restrict__ plist,
           const std::uint16_t* __restrict__ col, const double* __restrict__ val,
           const std::uint16_t* __restrict__ vidx, const std::uint32_t* __restrict__ pk, const double* __restrict__ dict,
           double* __restrict__ Y, int nb) {
  extern __shared__ __align__(16) double sh[];
  double* const buf0 = sh;
  double* const buf1 = sh + static_cast<std::size_t>(nb) * K;
  double* const sd = sh + 2 * static_cast<std::size_t>(nb) * K;
  const int t = threadIdx.x;
  if (CM >= 2)
    for (int i = t; i < DICT; i += T) sd[i] = dict[i];
  const int chunks = nb * (K / 2);  // 16-byte chunks of a panel
  auto issue = [&](int ap, double* dst) {
    const double* src = X + static_cast<std::size_t>(ap) * nb * K;
    for (int g = t; g < chunks; g += T) {
      const int c = g >> 2, j = g & 3;
      __pipeline_memcpy_async(dst + 2 * (4 * c + (j ^ ((c >> 1) & 3))), src + 2 * g, 16);
    }
    __pipeline_commit();
  };
  const int r0 = t, r1 = t + T;
  for (int a = blockIdx.x; a < nb; a += gridDim.x) {
    double acc0[K], acc1[K];
#pragma unroll
    for (int k = 0; k < K; ++k) acc0[k] = acc1[k] = 0.0;
    const int p0 = pptr[a], p1 = pptr[a + 1];
    issue(plist[p0], buf0);
    for (int p = p0; p < p1; ++p) {
      if (p + 1 < p1)
        issue(plist[p + 1], ((p + 1 - p0) & 1) ? buf1 : buf0);
      else
        __pipeline_commit();
      const long long slot = static_cast<long long>(CM == 0 || CM == 3 ? p % WINDOW : p) * N;
      std::uint32_t w0[N], w1[N];  // (CM >= 3) the panel's words of both rows, loaded before the wait
      if constexpr (CM >= 3) {
#pragma unroll
        for (int j = 0; j < N; ++j) {
          w0[j] = pk[(slot + j) * nb + r0];
          w1[j] = r1 < nb ? pk[(slot + j) * nb + r1] : 0u;
        }
      }
      __pipeline_wait_prior(1);
      __syncthreads();
      const double* cur = ((p - p0) & 1) ? buf1 : buf0;
      auto add = [&](double(&acc)[K], const int c, const double v) {
        const double2* xr = reinterpret_cast<const double2*>(cur + static_cast<std::size_t>(c) * K);
        const int s = (c >> 1) & 3;
#pragma unroll
        for (int i = 0; i < 4; ++i) {
          const double2 x = xr[i ^ s];
          acc[2 * i] += v * x.x;
          acc[2 * i + 1] += v * x.y;
        }
      };
      if constexpr (CM >= 3) {
#pragma unroll
        for (int j = 0; j < N; ++j) add(acc0, static_cast<int>(w0[j] & 0xffffu), sd[w0[j] >> 16]);
        if (r1 < nb) {
#pragma unroll
          for (int j = 0; j < N; ++j) add(acc1, static_cast<int>(w1[j] & 0xffffu), sd[w1[j] >> 16]);
        }
      } else {
        auto gather = [&](double(&acc)[K], int r) {
#pragma unroll 2
          for (int j = 0; j < N; ++j) {
            const long long e = (slot + j) * nb + r;
            add(acc, col[e], CM == 2 ? sd[vidx[e]] : val[e]);
          }
        };
        gather(acc0, r0);
        if (r1 < nb) gather(acc1, r1);
      }
      __syncthreads();
    }
    double2* y0 = reinterpret_cast<double2*>(Y + (static_cast<std::size_t>(a) * nb + r0) * K);
#pragma unroll
    for (int i = 0; i < 4; ++i) y0[i] = make_double2(acc0[2 * i], acc0[2 * i + 1]);
    if (r1 < nb) {
      double2* y1 = reinterpret_cast<double2*>(Y + (static_cast<std::size_t>(a) * nb + r1) * K);
#pragma unroll
      for (int i = 0; i < 4; ++i) y1[i] = make_double2(acc1[2 * i], acc1[2 * i + 1]);
    }
  }
}

static std::vector<int> orbsym_of(const std::string& path, int& norb, int& nelec) {
  std::ifstream in(path);
  if (!in) {
    std::fprintf(stderr, "panel_gather: cannot open %s\n", path.c_str());
    std::exit(2);
  }
  std::string head, line;
  while (std::getline(in, line)) {
    head += line + " ";
    if (line.find("&END") != std::string::npos || line.find('/') != std::string::npos) break;
  }
  for (char& ch : head)
    if (ch == ',' || ch == '=') ch = ' ';
  std::istringstream ss(head);
  std::string w;
  std::vector<int> sym;
  norb = nelec = 0;
  while (ss >> w) {
    if (w == "NORB") ss >> norb;
    if (w == "NELEC") ss >> nelec;
    if (w == "ORBSYM")
      for (int i = 0; i < norb; ++i) {
        int s = 0;
        ss >> s;
        sym.push_back(s - 1);
      }
  }
  if (norb <= 0 || nelec <= 0 || static_cast<int>(sym.size()) != norb) {
    std::fprintf(stderr, "panel_gather: %s: no NORB, NELEC and ORBSYM in its header\n", path.c_str());
    std::exit(2);
  }
  return sym;
}

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: panel_gather FCIDUMP [repetitions] [B:C]\n");
    return 2;
  }
  const int reps = argc > 2 ? std::atoi(argv[2]) : 5;
  int only_b = -1, only_c = -1;
  if (argc > 3 && (std::sscanf(argv[3], "%d:%d", &only_b, &only_c) != 2 || only_b < 0 || only_b > 1 || only_c < 0 ||
                   only_c > 4)) {
    std::fprintf(stderr, "panel_gather: mode '%s' is not B:C (B 0 or 1, C 0 to 4)\n", argv[3]);
    return 2;
  }
  if (reps < 1 || reps > 1000) {
    std::fprintf(stderr, "panel_gather: repetitions '%s' not in 1..1000\n", argv[2]);
    return 2;
  }
  int norb = 0, nelec = 0;
  const std::vector<int> sym = orbsym_of(argv[1], norb, nelec);
  const int na = nelec / 2;
  std::vector<int> strs, index(1 << norb, -1);
  for (int m = 0; m < (1 << norb); ++m)
    if (__builtin_popcount(m) == na) {
      index[m] = static_cast<int>(strs.size());
      strs.push_back(m);
    }
  const int nb = static_cast<int>(strs.size());
  if (nb > 65535) {
    std::fprintf(stderr, "panel_gather: %d strings do not fit 16-bit columns\n", nb);
    return 2;
  }
  // the nonzero blocks H(a, a'): a, its singles, its doubles of A1 symmetry; in increasing a'
  std::vector<int> pptr(1, 0), plist;
  for (int a = 0; a < nb; ++a) {
    const int m = strs[a];
    std::vector<int> l{a};
    for (int i = 0; i < norb; ++i)
      for (int k = 0; k < norb; ++k)
        if ((m >> i & 1) && !(m >> k & 1)) l.push_back(index[m ^ (1 << i) ^ (1 << k)]);
    for (int i = 0; i < norb && !singles_only; ++i)
      for (int j = i + 1; j < norb; ++j)
        for (int k = 0; k < norb; ++k)
          for (int q = k + 1; q < norb; ++q)
            if ((m >> i & 1) && (m >> j & 1) && !(m >> k & 1) && !(m >> q & 1) &&
                (sym[i] ^ sym[j] ^ sym[k] ^ sym[q]) == 0)
              l.push_back(index[m ^ (1 << i) ^ (1 << j) ^ (1 << k) ^ (1 << q)]);
    std::sort(l.begin(), l.end());
    plist.insert(plist.end(), l.begin(), l.end());
    pptr.push_back(static_cast<int>(plist.size()));
  }
  const long long panels = static_cast<long long>(plist.size());
  const long long entries = panels * N * nb;
  std::printf("strings %d, panels %lld (%.1f a string), entries %lld, panel bytes %.2f GB, X %.1f MB\n", nb, panels,
              static_cast<double>(panels) / nb, entries, panels * nb * K * 8.0 / 1e9, 1.0 * nb * nb * K * 8 / 1e6);

  std::vector<double> hdict(DICT);
  for (int i = 0; i < DICT; ++i) hdict[i] = x_of(7777777 + i) * 0.1;
  int *dptr, *dlist;
  double *X, *Y, *dict, *val;
  std::uint16_t *col, *vidx;
  std::uint32_t* pk;
  const long long xs = static_cast<long long>(nb) * nb * K;
  CHECK(cudaMalloc(&dptr, pptr.size() * sizeof(int)));
  CHECK(cudaMalloc(&dlist, plist.size() * sizeof(int)));
  CHECK(cudaMalloc(&X, xs * sizeof(double)));
  CHECK(cudaMalloc(&Y, xs * sizeof(double)));
  CHECK(cudaMalloc(&dict, DICT * sizeof(double)));
  CHECK(cudaMalloc(&val, entries * sizeof(double)));
  CHECK(cudaMalloc(&col, entries * sizeof(std::uint16_t)));
  CHECK(cudaMalloc(&vidx, entries * sizeof(std::uint16_t)));
  CHECK(cudaMalloc(&pk, entries * sizeof(std::uint32_t)));
  CHECK(cudaMemcpy(dptr, pptr.data(), pptr.size() * sizeof(int), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(dlist, plist.data(), plist.size() * sizeof(int), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(dict, hdict.data(), DICT * sizeof(double), cudaMemcpyHostToDevice));
  fill_x<<<1024, 256>>>(X, xs);
  int sms = 0;
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  const std::size_t shmem = (2 * static_cast<std::size_t>(nb) * K + DICT) * sizeof(double);
  CHECK(cudaFuncSetAttribute(staged<0>, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(shmem)));
  CHECK(cudaFuncSetAttribute(staged<1>, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(shmem)));
  CHECK(cudaFuncSetAttribute(staged<2>, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(shmem)));
  CHECK(cudaFuncSetAttribute(staged<3>, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(shmem)));
  CHECK(cudaFuncSetAttribute(staged<4>, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(shmem)));
  cudaEvent_t e0, e1;
  CHECK(cudaEventCreate(&e0));
  CHECK(cudaEventCreate(&e1));
  const char* cnames[5] = {"l2", "inline", "dict", "words-l2", "words"};
  int failures = 0;
  for (int balanced = 0; balanced < 2; ++balanced) {
    if (only_b >= 0 && balanced != only_b) continue;
    fill<<<4096, 256>>>(col, val, vidx, pk, dict, entries, nb, balanced != 0);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    for (int cm = 0; cm < 5; ++cm) {
      if (only_c >= 0 && cm != only_c) continue;
      auto launch = [&] {
        if (cm == 0) staged<0><<<sms, T, shmem>>>(X, dptr, dlist, col, val, vidx, pk, dict, Y, nb);
        if (cm == 1) staged<1><<<sms, T, shmem>>>(X, dptr, dlist, col, val, vidx, pk, dict, Y, nb);
        if (cm == 2) staged<2><<<sms, T, shmem>>>(X, dptr, dlist, col, val, vidx, pk, dict, Y, nb);
        if (cm == 3) staged<3><<<sms, T, shmem>>>(X, dptr, dlist, col, val, vidx, pk, dict, Y, nb);
        if (cm == 4) staged<4><<<sms, T, shmem>>>(X, dptr, dlist, col, val, vidx, pk, dict, Y, nb);
      };
      CHECK(cudaMemset(Y, 0, xs * sizeof(double)));
      launch();
      CHECK(cudaGetLastError());
      CHECK(cudaDeviceSynchronize());
      std::vector<float> ms;
      for (int rep = 0; rep < reps; ++rep) {
        CHECK(cudaEventRecord(e0));
        launch();
        CHECK(cudaEventRecord(e1));
        CHECK(cudaEventSynchronize(e1));
        float t = 0;
        CHECK(cudaEventElapsedTime(&t, e0, e1));
        ms.push_back(t);
      }
      // check 2 strings' rows against the host
      double worst = 0.0;
      for (int a : {0, nb - 1}) {
        std::vector<double> y(static_cast<std::size_t>(nb) * K);
        CHECK(cudaMemcpy(y.data(), Y + static_cast<std::size_t>(a) * nb * K, y.size() * sizeof(double),
                         cudaMemcpyDeviceToHost));
        for (int r = 0; r < nb; ++r)
          for (int k = 0; k < K; ++k) {
            double ref = 0.0;
            for (int p = pptr[a]; p < pptr[a + 1]; ++p)
              for (int j = 0; j < N; ++j) {
                const long long e = (static_cast<long long>(cm == 0 || cm == 3 ? p % WINDOW : p) * N + j) * nb + r;
                const int c = col_of(e, static_cast<int>(e % nb), nb, balanced != 0);
                ref += hdict[vidx_of(e)] * x_of((static_cast<long long>(plist[p]) * nb + c) * K + k);
              }
            worst = std::max(worst, std::fabs(y[static_cast<std::size_t>(r) * K + k] - ref));
          }
      }
      std::sort(ms.begin(), ms.end());
      const double scale = scale_to / static_cast<double>(entries);
      const bool ok = worst < 1e-9;
      failures += !ok;
      std::printf(
          "cols %-8s C %-6s  min %.3f ms  median %.3f ms  (per %.4g entries: min %.3f ms)  check %s (max |diff| "
          "%.2e)\n",
          balanced ? "balanced" : "random", cnames[cm], ms.front(), ms[ms.size() / 2], scale_to, ms.front() * scale,
          ok ? "passed" : "FAILED", worst);
      std::fflush(stdout);
    }
  }
  return failures == 0 ? 0 : 1;
}
