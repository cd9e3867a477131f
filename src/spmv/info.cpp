#include "cispmv/info.hpp"

#include <Kokkos_Core.hpp>

#include "cispmv/version.hpp"

#include <sstream>
#include <thread>

#if defined(KOKKOS_ENABLE_CUDA)
#include <cuda_runtime.h>
#endif

namespace cispmv {

std::string configuration_string() {
  std::ostringstream os;
  os << "cispmv " << CISPMV_VERSION_STRING << ", Kokkos " << KOKKOS_VERSION / 10000 << "."
     << (KOKKOS_VERSION / 100) % 100 << "." << KOKKOS_VERSION % 100 << ", backends:";
#if defined(KOKKOS_ENABLE_SERIAL)
  os << " Serial";
#endif
#if defined(KOKKOS_ENABLE_OPENMP)
  os << " OpenMP(" << Kokkos::OpenMP::concurrency() << " threads)";
#endif
#if defined(KOKKOS_ENABLE_CUDA)
  os << " Cuda";
#endif
  os << ", default: " << Kokkos::DefaultExecutionSpace::name();
  return os.str();
}

std::string device_name() {
#if defined(KOKKOS_ENABLE_CUDA)
  cudaDeviceProp prop;
  if (cudaGetDeviceProperties(&prop, Kokkos::Cuda().cuda_device()) == cudaSuccess) {
    std::ostringstream os;
    os << prop.name << " (sm_" << prop.major << prop.minor << ", " << prop.multiProcessorCount << " SMs, "
       << prop.totalGlobalMem / (1024 * 1024) << " MiB)";
    return os.str();
  }
  return "CUDA device (properties unavailable)";
#else
  std::ostringstream os;
  os << "host CPU (" << std::thread::hardware_concurrency() << " hardware threads)";
  return os.str();
#endif
}

}  // namespace cispmv
