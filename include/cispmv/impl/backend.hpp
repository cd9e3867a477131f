#pragma once
// What cispmv needs to know about a Kokkos execution space, in one trait.

#include <Kokkos_Core.hpp>

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

/// Lanes of a GPU's SIMT unit that a vector kernel should fill (CUDA's warp; 64 would suit AMD
/// wavefronts, but Kokkos caps a vector at 32 lanes on every GPU backend we build).
inline constexpr int gpu_max_vector_length = 32;

}  // namespace cispmv::impl
