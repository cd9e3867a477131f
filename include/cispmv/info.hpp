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

/// Why this build cannot run here ("" when it can): a GPU build (Kokkos' CUDA backend) where no GPU is visible
/// (none installed, or CUDA_VISIBLE_DEVICES hides them all), said before Kokkos' initialisation aborts on it.
/// Needs no Kokkos runtime.
std::string missing_device();

}  // namespace cispmv
