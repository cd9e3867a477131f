// Micro-benchmark (session 34): the scatter kernel's table walk with the integrals read (a) as broadcasts from
// shared memory (LDS.128, as FactoredScatterKernel does) or (b) from constant memory (LDC, uniform addresses).
// One class of P pairs, B = 16 replacements a batch, Q positions, the table by rows, adds into a row in shared memory.
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cuda_runtime.h>
constexpr int B = 16, P = 34, Q = 495, NP = 78;
__constant__ double c_eri[NP * NP];
struct alignas(16) Two { double a, b; };
__device__ __forceinline__ void add_shared(double* p, double v) { atomicAdd(p, v); }
template <int MODE>  // 0 shared, 1 constant, 2 constant with the row offsets packed two to a register, 3 shared with a row per warp (no atomics)
__global__ void __launch_bounds__(128, 6) walk(const double* __restrict__ x, const int* __restrict__ table,
                                               const int* __restrict__ rows, const double* __restrict__ eri,
                                               double* __restrict__ y, int strings) {
  __shared__ double ysw[MODE == 3 ? 4 * Q : Q];
  double* const ys = MODE == 3 ? ysw + (threadIdx.x / 32) * Q : ysw;
  __shared__ Two g[P * (B + 2) / 2];
  __shared__ int roff[B];
  const int ia = blockIdx.x % strings, t = threadIdx.x;
  for (int k = t; k < (MODE == 3 ? 4 * Q : Q); k += blockDim.x) ysw[k] = 0.0;
  const int* myrows = rows + (blockIdx.x % 97) * B;  // pq_k of this batch (pairs of one class, as slots 0..P-1)
  if (MODE == 0 || MODE == 3) {
    for (int i = t; i < P * B; i += blockDim.x) {
      const int m = i / B, k = i % B;
      Two& two = g[m * ((B + 2) / 2) + k / 2];
      (k % 2 == 0 ? two.a : two.b) = eri[myrows[k] * NP + m];
    }
  } else {
    for (int k = t; k < B; k += blockDim.x) roff[k] = myrows[k] * NP;
  }
  __syncthreads();
  int ro[B];
  unsigned rp[B / 2];
  if (MODE == 1) {
#pragma unroll
    for (int k = 0; k < B; ++k) ro[k] = roff[k];
  }
  if (MODE == 2) {
#pragma unroll
    for (int k = 0; k < B / 2; ++k) rp[k] = static_cast<unsigned>(roff[2 * k]) | static_cast<unsigned>(roff[2 * k + 1]) << 16;
  }
  // every lane of a warp runs every iteration (mode 3's __syncwarp needs them all), lanes past Q with nothing to add
  for (int q0 = t - t % 32; q0 < Q; q0 += blockDim.x) {
    const int q = q0 + t % 32;
    const bool on = q < Q;
    double z[B];
#pragma unroll
    for (int k = 0; k < B; ++k) z[k] = on ? x[(static_cast<long>((ia + 13 * k) % strings)) * Q + q] : 0.0;
    for (int m = 0; m < P; m += 2) {
      int e[2];
#pragma unroll
      for (int u = 0; u < 2; ++u) e[u] = on ? table[(m + u) * 512 + q] : -1;
#pragma unroll
      for (int u = 0; u < 2; ++u) {
        double w0 = 0, w1 = 0;
        if (MODE == 0 || MODE == 3) {
          const Two* gr = g + (m + u) * ((B + 2) / 2);
#pragma unroll
          for (int k = 0; k < B / 2; ++k) {
            const Two v = gr[k];
            w0 += v.a * z[2 * k];
            w1 += v.b * z[2 * k + 1];
          }
        } else if (MODE == 2) {
#pragma unroll
          for (int k = 0; k < B / 2; ++k) {
            w0 += c_eri[(rp[k] & 0xffffu) + m + u] * z[2 * k];
            w1 += c_eri[(rp[k] >> 16) + m + u] * z[2 * k + 1];
          }
        } else {
#pragma unroll
          for (int k = 0; k < B / 2; ++k) {
            w0 += c_eri[ro[2 * k] + m + u] * z[2 * k];
            w1 += c_eri[ro[2 * k + 1] + m + u] * z[2 * k + 1];
          }
        }
        const double w = w0 + w1;
        const int idx = e[u] >> 1;
        if (MODE == 3) {
          if (e[u] >= 0) ys[idx] += e[u] & 1 ? -w : w;
          __syncwarp();
        } else if (e[u] >= 0) {
          add_shared(&ys[idx], e[u] & 1 ? -w : w);
        }
      }
    }
  }
  __syncthreads();
  for (int k = t; k < Q; k += blockDim.x) {
    double v = ysw[k];
    if (MODE == 3) v += ysw[Q + k] + ysw[2 * Q + k] + ysw[3 * Q + k];
    atomicAdd(&y[static_cast<long>(ia) * Q + k], v);
  }
}
int main(int argc, char** argv) {
  const int strings = 495, teams = argc > 1 ? atoi(argv[1]) : 990;
  std::vector<double> hx(static_cast<size_t>(strings) * Q), he(NP * NP);
  for (size_t i = 0; i < hx.size(); ++i) hx[i] = (i % 1000) * 1e-3 - 0.5;
  for (int i = 0; i < NP * NP; ++i) he[i] = ((i * 37) % 101) * 1e-2;
  std::vector<int> ht(P * 512), hr(97 * B);
  srand(7);
  for (int m = 0; m < P; ++m) {  // a permutation of Q per pair, half the entries -1
    std::vector<int> perm(Q);
    for (int q = 0; q < Q; ++q) perm[q] = q;
    for (int q = Q - 1; q > 0; --q) std::swap(perm[q], perm[rand() % (q + 1)]);
    for (int q = 0; q < 512; ++q) ht[m * 512 + q] = q < Q && (rand() % 2) ? (perm[q] << 1 | (rand() & 1)) : -1;
  }
  for (auto& r : hr) r = rand() % P;
  double *x, *y, *eri;
  int *table, *rows;
  cudaMalloc(&x, hx.size() * 8); cudaMalloc(&y, hx.size() * 8); cudaMalloc(&eri, NP * NP * 8);
  cudaMalloc(&table, ht.size() * 4); cudaMalloc(&rows, hr.size() * 4);
  cudaMemcpy(x, hx.data(), hx.size() * 8, cudaMemcpyHostToDevice);
  cudaMemcpy(eri, he.data(), NP * NP * 8, cudaMemcpyHostToDevice);
  cudaMemcpy(table, ht.data(), ht.size() * 4, cudaMemcpyHostToDevice);
  cudaMemcpy(rows, hr.data(), hr.size() * 4, cudaMemcpyHostToDevice);
  cudaMemcpyToSymbol(c_eri, he.data(), NP * NP * 8);
  cudaEvent_t a, b;
  cudaEventCreate(&a); cudaEventCreate(&b);
  double sums[4];
  for (int mode = 0; mode < 4; ++mode) {
    float best = 1e9;
    for (int rep = 0; rep < 30; ++rep) {
      cudaMemset(y, 0, hx.size() * 8);
      cudaEventRecord(a);
      if (mode == 0) walk<0><<<teams, 128>>>(x, table, rows, eri, y, strings);
      else if (mode == 1) walk<1><<<teams, 128>>>(x, table, rows, eri, y, strings);
      else if (mode == 2) walk<2><<<teams, 128>>>(x, table, rows, eri, y, strings);
      else walk<3><<<teams, 128>>>(x, table, rows, eri, y, strings);
      cudaEventRecord(b);
      cudaEventSynchronize(b);
      float ms; cudaEventElapsedTime(&ms, a, b);
      if (ms < best) best = ms;
    }
    std::vector<double> hy(hx.size());
    cudaMemcpy(hy.data(), y, hy.size() * 8, cudaMemcpyDeviceToHost);
    double s = 0; for (double v : hy) s += v * v;
    sums[mode] = s;
    printf("mode %s teams %d: best %.4f ms (checksum %.10e) %s\n", mode == 0 ? "shared  " : mode == 1 ? "constant" : mode == 2 ? "const16 " : "warprows", teams, best, s,
           cudaGetErrorString(cudaGetLastError()));
  }
  printf("checksums agree to %.2e %.2e %.2e\n", (sums[0] - sums[1]) / sums[0], (sums[0] - sums[2]) / sums[0], (sums[0] - sums[3]) / sums[0]);
}
