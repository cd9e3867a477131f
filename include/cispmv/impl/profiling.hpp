#pragma once
// A Kokkos profiling region that closes itself, so that an exception cannot leave one open.

#include <Kokkos_Core.hpp>

#include <string>

namespace cispmv::impl {

class ProfilingRegion {
 public:
  explicit ProfilingRegion(const std::string& name) { Kokkos::Profiling::pushRegion(name); }
  ~ProfilingRegion() { Kokkos::Profiling::popRegion(); }
  ProfilingRegion(const ProfilingRegion&) = delete;
  ProfilingRegion& operator=(const ProfilingRegion&) = delete;
};

}  // namespace cispmv::impl
