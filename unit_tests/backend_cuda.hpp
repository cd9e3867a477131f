#pragma once
// Backend header of the test harness (see CMakeLists.txt): selects Cuda for the test bodies.
#include <Kokkos_Core.hpp>
#include <gtest/gtest.h>

using TEST_EXECSPACE = Kokkos::Cuda;
using TEST_MEMSPACE = TEST_EXECSPACE::memory_space;
#define TEST_CATEGORY cuda
