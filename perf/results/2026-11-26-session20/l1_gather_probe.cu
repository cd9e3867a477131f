// Session 20: what a warp's gathers cost the L1 of a Hopper GPU, by address pattern (issue 10).
// Raw CUDA, not part of the library. Build: nvcc -O3 -arch=sm_90 -o l1_gather_probe l1_gather_probe.cu
// Each kernel: 8 blocks of 256 threads per SM, every warp repeats one gather pattern (a lane's
// offset from a base, in elements) `iters` times over an array that stays in L1 (96 KB, L1
// preferred); the base moves by 2 KB per step (lines and banks of the pattern unchanged). It
// reports SM cycles per warp request (clock64 per block; all blocks of an SM run at once), so
// with the L1 as the limit this is wavefronts per request. Run it under ncu for the counters.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>
#include <cuda_runtime.h>

#define CHECK(x)                                                                           \
  do {                                                                                     \
    cudaError_t e = (x);                                                                   \
    if (e != cudaSuccess) {                                                                \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e)); \
      std::exit(1);                                                                        \
    }                                                                                      \
  } while (0)

constexpr int kArrayBytes = 96 * 1024;
constexpr int kBaseBytes = 64 * 1024;  // bases cycle over the first 64 KB, patterns span <= 32 KB

template <class T, bool Ldg>
__global__ void __launch_bounds__(256) gather(const T* __restrict__ a, const int* __restrict__ patterns, int npat,
                                              int iters, double* sink, long long* cycles) {
  const int lane = threadIdx.x & 31;
  const int warp = (blockIdx.x * blockDim.x + threadIdx.x) >> 5;
  const int off = patterns[(warp % npat) * 32 + lane];
  constexpr int base_step = 2048 / sizeof(T);
  constexpr int base_mask = kBaseBytes / sizeof(T) - 1;
  double sum = 0;
  __syncthreads();
  long long t0 = clock64();
#pragma unroll 8
  for (int it = 0; it < iters; ++it) {
    const int i = ((it * base_step) & base_mask) + off;
    T v;
    if constexpr (Ldg)
      v = __ldg(a + i);
    else
      v = a[i];
    if constexpr (sizeof(T) == 16)
      sum += reinterpret_cast<double2&>(v).x + reinterpret_cast<double2&>(v).y;
    else
      sum += static_cast<double>(v);
  }
  __syncthreads();
  long long t1 = clock64();
  if (threadIdx.x == 0) cycles[blockIdx.x] = t1 - t0;
  if (sum == 12345.678) sink[0] = sum;  // never true; keeps the loads
}

struct Pattern {
  std::string name;
  int elem_bytes;                // 8: double, 16: double2, 4: float, 2: ushort
  std::vector<int> offsets;      // npat x 32, in elements
  std::string model;             // what each model predicts
};

int main(int argc, char** argv) {
  const int iters = argc > 1 ? std::atoi(argv[1]) : 4096;
  int dev = 0, sms = 0;
  CHECK(cudaGetDevice(&dev));
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  std::vector<Pattern> pats;
  auto one = [](auto f) {
    std::vector<int> o(32);
    for (int l = 0; l < 32; ++l) o[l] = f(l);
    return o;
  };
  // doubles: a line is 16 doubles, bank pair of double i is i % 16
  pats.push_back({"f64 coalesced (2 lines)", 8, one([](int l) { return l; }), "banks 2, lines/4 1"});
  pats.push_back({"f64 broadcast (1 word)", 8, one([](int) { return 0; }), "banks 1, lines/4 1"});
  pats.push_back({"f64 32 lines, 16 bank pairs x2", 8, one([](int l) { return 16 * l + (l % 16); }), "banks 2, lines/4 8"});
  pats.push_back({"f64 32 lines, 1 bank pair", 8, one([](int l) { return 16 * l; }), "banks 32, lines/4 8"});
  pats.push_back({"f64 16 lines, 1 bank pair, pairs share", 8, one([](int l) { return 16 * (l % 16); }), "banks 16, lines/4 4"});
  pats.push_back({"f64 8 lines, 4 lanes each, bank pairs x2", 8,
                  one([](int l) { return 16 * (l / 4) + (l % 4) + 4 * ((l / 4) % 4); }), "banks 2, lines/4 2"});
  pats.push_back({"f64 4 lines, 8 lanes each, bank pairs x2", 8,
                  one([](int l) { return 16 * (l / 8) + (l % 8) + 8 * ((l / 8) % 2); }), "banks 2, lines/4 1"});
  pats.push_back({"f64 32 lines, 4 lanes per sector pos", 8, one([](int l) { return 16 * l + 4 * (l % 4); }), "banks 8, lines/4 8"});
  pats.push_back({"f64 16 lines, 2 words each, 16 bank pairs x2", 8,
                  one([](int l) { return 16 * (l / 2) + (l % 16); }), "banks 2, lines/4 4"});
  std::mt19937 rng(20261126);
  for (int span : {512, 4096}) {  // doubles: 4 KB and 32 KB
    Pattern p{"f64 random in " + std::to_string(span * 8 / 1024) + " KB (64 patterns)", 8, {}, "banks ~5-6"};
    std::uniform_int_distribution<int> u(0, span - 1);
    for (int k = 0; k < 64 * 32; ++k) p.offsets.push_back(u(rng));
    pats.push_back(p);
  }
  {  // random lines, but each bank pair used exactly twice
    Pattern p{"f64 random lines in 32 KB, bank pairs x2 (64 patterns)", 8, {}, "banks 2"};
    std::uniform_int_distribution<int> u(0, 255);
    for (int k = 0; k < 64; ++k)
      for (int l = 0; l < 32; ++l) p.offsets.push_back(16 * u(rng) + (l % 16));
    pats.push_back(p);
  }
  {  // random lines, each bank pair used at most 4 times (8 bank pairs used)
    Pattern p{"f64 random lines in 32 KB, 8 bank pairs x4 (64 patterns)", 8, {}, "banks 4"};
    std::uniform_int_distribution<int> u(0, 255);
    for (int k = 0; k < 64; ++k)
      for (int l = 0; l < 32; ++l) p.offsets.push_back(16 * u(rng) + (l % 8));
    pats.push_back(p);
  }
  // double2 (16 bytes): a line holds 8
  pats.push_back({"f64x2 coalesced (4 lines)", 16, one([](int l) { return l; }), "banks 4, lines/4 1"});
  pats.push_back({"f64x2 32 lines, 8 positions x4", 16, one([](int l) { return 8 * l + (l % 8); }), "banks 4, lines/4 8"});
  pats.push_back({"f64x2 8 lines, 4 lanes each (64 B runs)", 16, one([](int l) { return 8 * 3 * (l / 4) + (l % 4) + 4 * ((l / 4) % 2); }), "banks 4, lines/4 2"});
  {
    Pattern p{"f64x2 random in 32 KB (64 patterns)", 16, {}, "banks ~6-8"};
    std::uniform_int_distribution<int> u(0, 2047);
    for (int k = 0; k < 64 * 32; ++k) p.offsets.push_back(u(rng));
    pats.push_back(p);
  }
  // 16-bit words, coalesced (csell's streams)
  pats.push_back({"u16 coalesced (64 B)", 2, one([](int l) { return l; }), "banks 1"});

  void* a;
  CHECK(cudaMalloc(&a, kArrayBytes));
  CHECK(cudaMemset(a, 0, kArrayBytes));
  double* sink;
  CHECK(cudaMalloc(&sink, 8));
  const int blocks = sms * 8;
  long long* cyc;
  CHECK(cudaMalloc(&cyc, blocks * sizeof(long long)));
  int* dpat;
  CHECK(cudaMalloc(&dpat, 64 * 32 * sizeof(int)));
  auto setup = [&](auto kernel) { CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout, 0)); };
  setup(gather<double, false>);
  setup(gather<double, true>);
  setup(gather<double2, false>);
  setup(gather<double2, true>);
  setup(gather<unsigned short, false>);
  cudaEvent_t e0, e1;
  CHECK(cudaEventCreate(&e0));
  CHECK(cudaEventCreate(&e1));
  std::printf("%-58s %-4s %9s %12s  %s\n", "pattern", "path", "ms", "cyc/request", "models");
  for (const Pattern& p : pats) {
    const int npat = static_cast<int>(p.offsets.size() / 32);
    CHECK(cudaMemcpy(dpat, p.offsets.data(), p.offsets.size() * sizeof(int), cudaMemcpyHostToDevice));
    for (int ldg = 0; ldg < 2; ++ldg) {
      if (p.elem_bytes == 2 && ldg) continue;
      auto launch = [&]() {
        if (p.elem_bytes == 8 && !ldg) gather<double, false><<<blocks, 256>>>((const double*)a, dpat, npat, iters, sink, cyc);
        if (p.elem_bytes == 8 && ldg) gather<double, true><<<blocks, 256>>>((const double*)a, dpat, npat, iters, sink, cyc);
        if (p.elem_bytes == 16 && !ldg) gather<double2, false><<<blocks, 256>>>((const double2*)a, dpat, npat, iters, sink, cyc);
        if (p.elem_bytes == 16 && ldg) gather<double2, true><<<blocks, 256>>>((const double2*)a, dpat, npat, iters, sink, cyc);
        if (p.elem_bytes == 2) gather<unsigned short, false><<<blocks, 256>>>((const unsigned short*)a, dpat, npat, iters, sink, cyc);
      };
      launch();  // warm
      CHECK(cudaEventRecord(e0));
      launch();
      CHECK(cudaEventRecord(e1));
      CHECK(cudaEventSynchronize(e1));
      CHECK(cudaGetLastError());
      float ms = 0;
      CHECK(cudaEventElapsedTime(&ms, e0, e1));
      std::vector<long long> c(blocks);
      CHECK(cudaMemcpy(c.data(), cyc, blocks * sizeof(long long), cudaMemcpyDeviceToHost));
      double mean = 0;
      for (long long v : c) mean += static_cast<double>(v) / blocks;
      const double per_request = mean / (64.0 * iters);  // 64 warps per SM at once
      std::printf("%-58s %-4s %9.3f %12.2f  %s\n", p.name.c_str(), ldg ? "ldg" : "ld", ms, per_request, p.model.c_str());
    }
  }
  return 0;
}
