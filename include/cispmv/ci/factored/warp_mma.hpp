#pragma once
/// \file ci/factored/warp_mma.hpp
/// A warp's 8x8x4 product in double, D += A B, as the tensor cores of NVIDIA GPUs from compute
/// capability 8.0 form it (PTX `mma.sync.aligned.m8n8k4.row.col.f64`), with the fragments of PTX:
/// lane l of the warp holds
///   A(l / 4, l % 4)      (A: 8 x 4),
///   B(l % 4, l / 4)      (B: 4 x 8),
///   D(l / 4, 2 (l % 4) + i), i = 0, 1   (D: 8 x 8).
/// A kernel is written once for `Lanes` lanes a thread: 1 on GPUs (a warp's lanes are its threads; the
/// product is the DMMA instruction, or on older GPUs the same sums through warp shuffles), 32 on CPUs
/// (one thread holds a whole warp's fragments, and the product is formed here, the same sums in the
/// same layout), so that the CPU backends run and test the tiling and the fragment indexing of a GPU
/// kernel.

#include <Kokkos_Core.hpp>

#include "cispmv/impl/backend.hpp"

#include <type_traits>

namespace cispmv::impl {

/// Lanes of a warp that one thread of Exec holds (see the file's comment).
template <class Exec>
inline constexpr int warp_lanes = is_gpu_space_v<Exec> ? 1 : 32;

/// Whether warp_mma_8x8x4 runs on Exec: CPUs and CUDA (whose warps are 32 threads); not other GPU backends.
template <class Exec>
inline constexpr bool warp_mma_runs =
#if defined(KOKKOS_ENABLE_CUDA)
    std::is_same_v<Exec, Kokkos::Cuda> ||
#endif
    !is_gpu_space_v<Exec>;

/// The lane of the calling thread in its warp (0 on CPUs, where a thread holds every lane).
KOKKOS_FORCEINLINE_FUNCTION int lane_in_warp() {
#if defined(__CUDA_ARCH__)
  unsigned lane;
  asm volatile("mov.u32 %0, %%laneid;" : "=r"(lane));
  return static_cast<int>(lane);
#else
  return 0;
#endif
}

/// Reconverges the threads of a warp (on CUDA; nothing elsewhere): before warp_mma_8x8x4 where the warp's
/// lanes have taken different branches since their last product.
KOKKOS_FORCEINLINE_FUNCTION void warp_sync() {
#if defined(__CUDA_ARCH__)
  __syncwarp();
#endif
}

/// D += A B on the fragments of `Lanes` lanes (see the file's comment). On a GPU every lane of the warp
/// must call it together (Lanes = 1); on a CPU one thread calls it with all 32.
template <int Lanes>
KOKKOS_FORCEINLINE_FUNCTION void warp_mma_8x8x4(const double (&a)[Lanes], const double (&b)[Lanes],
                                                double (&d)[Lanes][2]) {
#if defined(__CUDA_ARCH__)
  if constexpr (Lanes == 1) {
#if __CUDA_ARCH__ >= 800
    asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0,%1}, {%2}, {%3}, {%0,%1};"
                 : "+d"(d[0][0]), "+d"(d[0][1])
                 : "d"(a[0]), "d"(b[0]));
#else
    // the same sums from the other lanes' values: A(r, k) is lane 4 r + k's, B(k, n) lane 4 n + k's
    const int l = lane_in_warp(), r = l >> 2, n0 = 2 * (l & 3);
    for (int k = 0; k < 4; ++k) {
      const double ark = __shfl_sync(0xffffffffu, a[0], 4 * r + k);
      const double b0 = __shfl_sync(0xffffffffu, b[0], 4 * n0 + k);
      const double b1 = __shfl_sync(0xffffffffu, b[0], 4 * (n0 + 1) + k);
      d[0][0] += ark * b0;
      d[0][1] += ark * b1;
    }
#endif
  } else {
    Kokkos::abort("cispmv::impl::warp_mma_8x8x4: a GPU thread holds one lane");
  }
#else
  if constexpr (Lanes == 32) {
    for (int l = 0; l < 32; ++l) {
      const int r = l >> 2;
      for (int i = 0; i < 2; ++i) {
        const int n = 2 * (l & 3) + i;
        double s = d[l][i];
        for (int k = 0; k < 4; ++k) s += a[4 * r + k] * b[4 * n + k];
        d[l][i] = s;
      }
    }
  } else {
    Kokkos::abort("cispmv::impl::warp_mma_8x8x4: a CPU thread holds the whole warp");
  }
#endif
}

/// *p += v for a double in team scratch of `level` (0: shared memory on CUDA; 1: global memory), where
/// other threads of the team may add to it at the same time (on CUDA's level 0 a reduction in shared
/// memory, without the generic pointer's test of its address space); `alone`: no other thread adds
/// there (a team of one thread), a plain add.
KOKKOS_FORCEINLINE_FUNCTION void scratch_add(double* p, double v, int level, bool alone) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 600
  (void)alone;
  if (level == 0) {
    const auto at = static_cast<unsigned>(__cvta_generic_to_shared(p));
    asm volatile("red.shared.add.f64 [%0], %1;" ::"r"(at), "d"(v) : "memory");
  } else {
    atomicAdd(p, v);
  }
#else  // CPUs, and GPUs without a double add of their own
  (void)level;
  if (alone) {
    *p += v;
  } else {
    Kokkos::atomic_add(p, v);
  }
#endif
}

/// *dst = *src (8 bytes), or 0 where !valid (src is then not read, but must be a valid address): on CUDA GPUs of
/// compute capability 8.0 or later an asynchronous copy from global into shared memory (PTX `cp.async`, dst in
/// level-0 team scratch), which completes at copy_async_wait of its group (copy_async_commit closes a group) and
/// holds no register meanwhile; elsewhere a copy at once.
KOKKOS_FORCEINLINE_FUNCTION void copy_async_8(double* dst, const double* src, bool valid) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  const unsigned to = static_cast<unsigned>(__cvta_generic_to_shared(dst));
  asm volatile("cp.async.ca.shared.global [%0], [%1], 8, %2;\n" ::"r"(to), "l"(src), "r"(valid ? 8 : 0) : "memory");
#else
  *dst = valid ? *src : 0.0;
#endif
}
/// Closes the calling thread's group of copy_async_8 copies (on CUDA; nothing elsewhere).
KOKKOS_FORCEINLINE_FUNCTION void copy_async_commit() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.commit_group;\n" ::: "memory");
#endif
}
/// Waits until at most Pending of the calling thread's latest groups are still in flight (its older copies are in
/// shared memory; other threads' copies are visible after a team barrier).
template <int Pending>
KOKKOS_FORCEINLINE_FUNCTION void copy_async_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.wait_group %0;\n" ::"n"(Pending) : "memory");
#endif
}

/// p, a pointer into team scratch of level 0, as a pointer the compiler knows to be in shared memory on CUDA (the
/// same address, reached from a __shared__ array through an offset nothing folds away), so that loads through it
/// are LDS on the short scoreboard, not generic loads on the long one (the scatter kernel's integrals, read
/// through Kokkos' generic scratch pointer, were `LD.E.128`, and the adds that wait on them 37 % of its stalls).
/// Elsewhere p itself. The compiler may take the result and Kokkos' own pointer to the same scratch as unrelated: a
/// kernel that writes through one and reads through the other keeps a team barrier between them (the scatter
/// kernel's walk reads and adds only through in_shared, between barriers).
template <class T>
KOKKOS_FORCEINLINE_FUNCTION T* in_shared(T* p) {
#if defined(__CUDA_ARCH__)
  extern __shared__ double2 cispmv_dynamic_shared[];  // the dynamic shared memory Kokkos' level-0 scratch lies in
  char* const base = reinterpret_cast<char*>(cispmv_dynamic_shared);
  return reinterpret_cast<T*>(base + (__cvta_generic_to_shared(p) - __cvta_generic_to_shared(base)));
#else
  return p;
#endif
}

/// *p[u] += v[u] for the N adds with on[u], each into a double in team scratch that other threads may add to at the
/// same time (p[u] may repeat). On CUDA, with p from in_shared: the N values read first, then each added by one
/// compare-and-swap, and only where that fails (another add came between) by the reduction's loop; so the N adds
/// wait on one round of loads, where N reductions (a load, the add and a compare-and-swap each, ATOMS.CAST.SPIN)
/// wait on N (the compare-and-swap's wait 20 % of the scatter kernel's stalls). Elsewhere scratch_add.
template <int N>
KOKKOS_FORCEINLINE_FUNCTION void scratch_add_shared(double* const (&p)[N], const double (&v)[N], const bool (&on)[N],
                                                    bool alone) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 600
  (void)alone;
  double old[N];
#pragma unroll
  for (int u = 0; u < N; ++u) old[u] = on[u] ? *static_cast<volatile double*>(p[u]) : 0.0;
#pragma unroll
  for (int u = 0; u < N; ++u) {
    if (on[u]) {
      auto* const at = reinterpret_cast<unsigned long long*>(p[u]);
      const unsigned long long seen = __double_as_longlong(old[u]);
      if (atomicCAS(at, seen, __double_as_longlong(old[u] + v[u])) != seen) atomicAdd(p[u], v[u]);
    }
  }
#else
  for (int u = 0; u < N; ++u) {
    if (on[u]) scratch_add(p[u], v[u], 0, alone);
  }
#endif
}

/// *p[u] += v[u] for the N adds with on[u], into a copy of a row that only this warp adds to, where in each u the
/// targets of the lanes in `mask` are distinct (one step of a walk): plain loads and stores, u after u, with those
/// lanes ordered between them (__syncwarp(mask): a lane's target in step u may be another lane's in step u + 1). On
/// CUDA every lane of `mask` calls it, and no other lane of the warp adds to the copy meanwhile; elsewhere a team of
/// one thread adds in order.
template <int N>
KOKKOS_FORCEINLINE_FUNCTION void warp_row_add(double* const (&p)[N], const double (&v)[N], const bool (&on)[N],
                                              unsigned mask) {
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
  for (int u = 0; u < N; ++u) {
    if (on[u]) *p[u] += v[u];
#if defined(__CUDA_ARCH__)
    __syncwarp(mask);
#else
    (void)mask;
#endif
  }
}

}  // namespace cispmv::impl
