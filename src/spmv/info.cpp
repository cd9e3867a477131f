#include "cispmv/info.hpp"

#include <Kokkos_Core.hpp>

#include "cispmv/version.hpp"

#include <cstdlib>
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

std::string missing_device() {
#if defined(KOKKOS_ENABLE_CUDA)
  int devices = 0;
  const cudaError_t e = cudaGetDeviceCount(&devices);
  if (e == cudaSuccess && devices > 0) return "";
  const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
  std::ostringstream os;
  os << "no CUDA GPU is visible (" << (e == cudaSuccess ? "no device" : cudaGetErrorString(e))
     << (visible != nullptr ? std::string(", CUDA_VISIBLE_DEVICES=\"") + visible + "\"" : std::string())
     << "): this cispmv " << CISPMV_VERSION_STRING << " is a CUDA build (Kokkos " << KOKKOS_VERSION / 10000 << "."
     << (KOKKOS_VERSION / 100) % 100 << "." << KOKKOS_VERSION % 100
     << ", default execution space Cuda) and runs on a GPU; on a machine without one use a build of the openmp "
        "preset";
  return os.str();
#else
  return "";
#endif
}

}  // namespace cispmv
