#pragma once
// Backend header of the test harness (see CMakeLists.txt): selects OpenMP for the test bodies.
#include <gtest/gtest.h>
#include <Kokkos_Core.hpp>

using TEST_EXECSPACE = Kokkos::OpenMP;
using TEST_MEMSPACE = TEST_EXECSPACE::memory_space;
#define TEST_CATEGORY openmp
