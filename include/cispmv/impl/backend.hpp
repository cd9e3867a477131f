#pragma once
// What cispmv needs to know about a Kokkos execution space, in one trait.

#include <Kokkos_Core.hpp>

#include <mutex>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace cispmv::impl {

/// True for execution spaces that run on a GPU (CUDA, HIP, SYCL, OpenMPTarget): those whose
/// default memory space the host cannot access. CUDA is named too, for builds that make CUDA's
/// default memory UVM (host-accessible).
template <class Exec>
inline constexpr bool is_gpu_space_v =
#if defined(KOKKOS_ENABLE_CUDA)
    std::is_same_v<Exec, Kokkos::Cuda> ||
#endif
    !Kokkos::SpaceAccessibility<Kokkos::HostSpace, typename Exec::memory_space>::accessible;

/// The L1 / shared-memory preference of the CUDA kernel that Kokkos launches for
/// `parallel_for(Policy, F)` (TeamCache). Kokkos 3.x sets cudaFuncCachePreferShared on a team
/// kernel's first launch and never again; so the preference is set after that first launch and
/// before any later one whose wish differs (each kernel is one instantiation: one state each).
/// Elsewhere (other backends, Kokkos 4, whose launches size the carve-out themselves) nothing.
template <class Policy, class F>
struct TeamCachePreference {
#if defined(KOKKOS_ENABLE_CUDA) && KOKKOS_VERSION < 40000
  static constexpr bool applies = std::is_same_v<typename Policy::execution_space, Kokkos::Cuda>;
#else
  static constexpr bool applies = false;
#endif
  static void before_launch(bool l1) {
    if constexpr (applies) {
      std::lock_guard<std::mutex> lock(state().mutex);
      if (state().launched && state().l1 != l1) set(l1);
    }
  }
  static void after_launch(bool l1) {
    if constexpr (applies) {
      std::lock_guard<std::mutex> lock(state().mutex);
      if (!state().launched || state().l1 != l1) set(l1);  // the first launch: over Kokkos' choice
      state().launched = true;
    }
  }

 private:
  struct State {
    std::mutex mutex;
    bool launched = false;
    bool l1 = false;
  };
  static State& state() {
    static State s;
    return s;
  }
  static void set(bool l1) {
#if defined(KOKKOS_ENABLE_CUDA) && KOKKOS_VERSION < 40000
    using Driver = Kokkos::Impl::ParallelFor<F, Policy, Kokkos::Cuda>;
    using Kernel =
        Kokkos::Impl::CudaParallelLaunchKernelFunc<Driver, typename Policy::launch_bounds,
                                                   Kokkos::Impl::DeduceCudaLaunchMechanism<Driver>::launch_mechanism>;
    const cudaError_t e =
        cudaFuncSetCacheConfig(Kernel::get_kernel_func(), l1 ? cudaFuncCachePreferL1 : cudaFuncCachePreferShared);
    if (e != cudaSuccess)
      throw std::runtime_error(std::string("cispmv: cudaFuncSetCacheConfig failed: ") + cudaGetErrorString(e));
#endif
    state().l1 = l1;
  }
};

/// Lanes of a GPU's SIMT unit that a vector kernel should fill (CUDA's warp; 64 would suit AMD
/// wavefronts, but Kokkos caps a vector at 32 lanes on every GPU backend we build).
inline constexpr int gpu_max_vector_length = 32;

}  // namespace cispmv::impl
