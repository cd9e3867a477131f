#pragma once
// Backend header of the test harness (see CMakeLists.txt): selects Cuda for the test bodies.
#include <gtest/gtest.h>
#include <Kokkos_Core.hpp>

using TEST_EXECSPACE = Kokkos::Cuda;
using TEST_MEMSPACE = TEST_EXECSPACE::memory_space;
#define TEST_CATEGORY cuda
