#pragma once
/// \file info.hpp
/// What this build of cispmv runs on.

#include <string>

namespace cispmv {

/// One line naming the cispmv version, the Kokkos version, its enabled backends and the default
/// execution space (recorded with every benchmark and printed by the command-line program).
std::string configuration_string();

/// The name of the device the default execution space runs on (GPU name on CUDA, "host" else).
std::string device_name();

}  // namespace cispmv
