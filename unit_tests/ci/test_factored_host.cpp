// The factored Hamiltonian's host pieces: the tile kernel's product W = A B, and the dense same-spin
// products' set of groups and segments.
#include <gtest/gtest.h>

#include "ci/ci_fixtures.hpp"
#include "cispmv/ci.hpp"
#include "cispmv/convert.hpp"
#include "cispmv/io.hpp"
#include "cispmv/memory_budget.hpp"
#include "commands.hpp"
#include "test_utils.hpp"

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace {
using cispmv::ci::Determinant;
using cispmv::ci::FciDump;
using namespace cispmv::test;
}  // namespace

// The tile kernel's product W = A B (8 columns), in portable C++ and, where the CPU has them, in AVX2 + FMA and
// AVX-512, against the sums written out, for row counts around its groups of 4.
TEST(Factored, TileIsTheProduct) {
  cispmv::test::Rng rng(11);
  for (const int rows : {1, 3, 4, 7, 41, 64}) {
    for (const int k : {8, 24}) {
      std::vector<double> A(static_cast<std::size_t>(rows) * k), B(8 * static_cast<std::size_t>(k)), want(8 * rows);
      for (double& v : A) v = rng.uniform() - 0.5;
      for (double& v : B) v = rng.uniform() - 0.5;
      for (int r = 0; r < rows; ++r) {
        for (int j = 0; j < 8; ++j) {
          double s = 0.0;
          for (int c = 0; c < k; ++c) s += A[r * k + c] * B[8 * c + j];
          want[8 * r + j] = s;
        }
      }
      std::vector<double> W(8 * rows, std::numeric_limits<double>::quiet_NaN());
      cispmv::impl::factored_tile(A.data(), rows, k, B.data(), W.data());
      for (int i = 0; i < 8 * rows; ++i) ASSERT_NEAR(W[i], want[i], 1e-14) << "portable, rows " << rows << " k " << k;
#if CISPMV_HOST_SIMD
      if (cispmv::impl::host_simd::avx512_available()) {
        std::fill(W.begin(), W.end(), std::numeric_limits<double>::quiet_NaN());
        cispmv::impl::host_simd::factored_tile_avx512(A.data(), rows, k, B.data(), W.data());
        for (int i = 0; i < 8 * rows; ++i) ASSERT_NEAR(W[i], want[i], 1e-14) << "AVX-512, rows " << rows << " k " << k;
      }
      if (cispmv::impl::host_simd::avx2_fma_available()) {
        std::fill(W.begin(), W.end(), std::numeric_limits<double>::quiet_NaN());
        cispmv::impl::host_simd::factored_tile_avx2(A.data(), rows, k, B.data(), W.data());
        for (int i = 0; i < 8 * rows; ++i) ASSERT_NEAR(W[i], want[i], 1e-14) << "AVX2, rows " << rows << " k " << k;
      }
#endif
    }
  }
}

// The dense products' set keeps the kernel's invariants: every segment has some k and the direction of its group's
// first, a group has at most max_segments of them and none comes before a group; a launch's tasks tile its groups.
TEST(Factored, GatheredGemmSetRefusesWhatTheKernelCannotRun) {
  cispmv::impl::GatheredGemmHost g;
  EXPECT_THROW(g.add_segment(0, 1, 1, 0, 0, false), std::logic_error);  // no group yet
  EXPECT_THROW(g.add_group(0, 5, 0, 0), std::logic_error);
  g.add_group(70, 130, 0, 0);
  EXPECT_THROW(g.add_segment(0, 1, 0, 0, 0, false), std::logic_error);  // no k
  g.add_segment(0, 20, 20, 0, 0, false);
  EXPECT_THROW(g.add_segment(0, 20, 20, 0, 0, true), std::logic_error);  // another direction
  for (int s = 1; s < cispmv::impl::GatheredGemmHost::max_segments; ++s) g.add_segment(0, 20, 20, 0, 0, false);
  EXPECT_THROW(g.add_segment(0, 20, 20, 0, 0, false), std::logic_error);  // past max_segments
  EXPECT_DOUBLE_EQ(g.flops, 2.0 * 70 * 20 * 130 * cispmv::impl::GatheredGemmHost::max_segments);
  g.end_launch();
  ASSERT_EQ(g.launches(), 1u);
  EXPECT_EQ(g.launch_ptr[1], 2 * 3);  // 70 rows and 130 columns in tiles of 64: 2 x 3
  EXPECT_EQ(g.task_i.back(), 64);
  EXPECT_EQ(g.task_j.back(), 128);
  g.add_group(10, 10, 0, 0);
  g.add_segment(0, 10, 10, 0, 0, true);
  g.end_launch();
  EXPECT_EQ(cispmv::impl::GatheredGemmHost::smallest_launch(g.launch_ptr), 1);
  EXPECT_EQ(cispmv::impl::GatheredGemmHost::smallest_launch({0}), 0);
}
