#pragma once
/// \file memory_budget.hpp
/// What memory a run may use, on the host and on the device, so that a job that cannot fit stops
/// before it allocates (a clear message instead of swap, the OOM killer or a bare bad_alloc).

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace cispmv {

/// Thrown when an estimate exceeds the budget: the message names what was asked, what is available
/// and what would fit.
class MemoryBudgetError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Parses a size such as "8G", "512M", "1.5T", "64k" or "123456" (bytes; k/M/G/T are powers of 1024).
/// Throws std::invalid_argument naming `what` on anything else.
std::size_t parse_bytes(const std::string& text, const std::string& what);

/// "13.2 GB" (powers of 1000, 3 significant digits).
std::string format_bytes(double bytes);

/// Memory the process can still get on the host: MemAvailable of /proc/meminfo, lowered by the cgroup
/// memory limit, RLIMIT_AS / RLIMIT_DATA and the environment variable CISPMV_MAX_MEMORY (e.g. "8G":
/// a cap for shared machines and tests) when they are set; sysconf's physical pages elsewhere.
std::size_t host_available_bytes();

/// The environment variable CISPMV_MAX_MEMORY (e.g. "8G"), the cap of every memory a run may use, host and device
/// alike; the largest size_t when it is not set.
std::size_t memory_cap();

/// Free memory in the memory space of `Exec`: the device's free memory on a GPU (at most memory_cap()),
/// host_available_bytes() for host spaces.
template <class Exec>
std::size_t available_bytes() {
#ifdef KOKKOS_ENABLE_CUDA
  if constexpr (std::is_same_v<typename Exec::memory_space, Kokkos::CudaSpace> ||
                std::is_same_v<typename Exec::memory_space, Kokkos::CudaUVMSpace>) {
    std::size_t free_bytes = 0, total_bytes = 0;
    if (cudaMemGetInfo(&free_bytes, &total_bytes) == cudaSuccess)
      return free_bytes < memory_cap() ? free_bytes : memory_cap();
    return 0;
  }
#endif
  return host_available_bytes();
}

}  // namespace cispmv
