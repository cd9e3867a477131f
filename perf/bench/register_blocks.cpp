// spmv_bench --vectors: several vectors at once, Y = A*X for k columns, with cispmv's rank-2 plans (CSR, the hybrid
// format on GPUs, csell; LayoutRight X and Y), Kokkos Kernels' rank-2 spmv (LayoutLeft, its multivector layout) and,
// in CUDA builds, cuSPARSE SpMM (row- and column-major). Column j of X is (1 + j) x, so column j of Y must be (1 + j)
// times the host oracle's y. Counter ms_per_vector: the time of one product over k.
#include "register.hpp"

// Kokkos Kernels 3.4's spmv instantiates transpose functors whose copies GCC 12 flags as maybe uninitialised (a
// false positive inside Kokkos Kernels, after inlining into this file)
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#include "cispmv/baselines/kokkos_kernels.hpp"

namespace cispmv::bench {

namespace {

/// csell with one lane per row (the lane-per-column kernels' layout), rows in the matrix's order, with
/// its value table (as the eigensolver builds it for several roots on a CPU) or its values inline; on
/// GPUs the eigensolver's is `csell-inline-sorted` (FormatParams::for_block_products).
template <class Exec>
FormatParams one_lane_csell(bool values_inline = false) {
  FormatParams p = FormatParams::for_space<Exec>();
  p.row_lanes = 1;
  p.sort_window = 1;  // in the matrix's order
  if (values_inline) p.min_table_coverage = 2;
  return p;
}

}  // namespace

template <class Exec, class Scalar>
void register_blocks(Suite<Exec, Scalar>& s) {
  using Mem = typename Exec::memory_space;
  using Left = Kokkos::View<Scalar**, Kokkos::LayoutLeft, Mem>;
  for (const int k : s.settings().vectors) {
    const std::string tag = "block/k:" + std::to_string(k) + "/";
    // CSR and csell in both shapes (a thread per row with k sums, a lane per column) and the plan's
    // automatic one (lanes on GPUs, rows on the host)
    for (const BlockShape shape : {BlockShape::automatic, BlockShape::rows, BlockShape::lanes}) {
      s.add_block_format(
          tag + "csr", [&s] { return s.host(); }, k, shape);
      s.add_block_format(
          tag + "csell", [&s] { return build_format<Format::csell>(s.host(), one_lane_csell<Exec>()); }, k, shape);
    }
    // the lane shape with each of its widths (columns per lane; "lanes" is the automatic width); csell
    // also with its values inline (no table lookup)
    if (impl::is_gpu_space_v<Exec>) {
      for (const int per_lane : {0, 1, 2, 4, 8}) {
        if (per_lane > 0) {
          s.add_block_format(
              tag + "csr", [&s] { return s.host(); }, k, BlockShape::lanes, per_lane);
          s.add_block_format(
              tag + "csell", [&s] { return build_format<Format::csell>(s.host(), one_lane_csell<Exec>()); }, k,
              BlockShape::lanes, per_lane);
        }
        s.add_block_format(
            tag + "csell-inline", [&s] { return build_format<Format::csell>(s.host(), one_lane_csell<Exec>(true)); }, k,
            BlockShape::lanes, per_lane);
      }
      // ... and with its rows sorted by length in the automatic windows: FormatParams::for_block_products
      // (the eigensolver's; its automatic width and the two that compete for it: one pair and two pairs)
      for (const int per_lane : {0, 2, 4})
        s.add_block_format(
            tag + "csell-inline-sorted",
            [&s] { return build_format<Format::csell>(s.host(), FormatParams::for_block_products<Exec>()); }, k,
            BlockShape::lanes, per_lane);
      // ... and in other windows than the automatic one (a slice, 256 rows, the largest), its automatic width
      for (const int window : {32, 256, impl::max_sort_window}) {
        s.add_block_format(
            tag + "csell-inline-w" + std::to_string(window),
            [&s, window] {
              FormatParams p = FormatParams::for_block_products<Exec>();
              p.sort_window = window;
              return build_format<Format::csell>(s.host(), p);
            },
            k, BlockShape::lanes);
      }
    }
    if (impl::is_gpu_space_v<Exec>)
      s.add_block_format(
          tag + "hybrid", [&s] { return to_hybrid(s.host()); }, k, BlockShape::automatic);
    s.add(tag + "kokkos-kernels/native", [&s, k] {
      auto K = as_kokkos_kernels(s.csr());
      auto X = std::make_shared<Left>(s.template block_x<Left>(k));
      auto Y = std::make_shared<Left>("Y", s.host().num_rows, k);
      using Kk = KokkosKernelsSpmv<Exec, decltype(K), Left, Left>;
      auto op = std::make_shared<Kk>();
      return s.block_prepared([K, op, X, Y] { op->apply(Exec(), Scalar(1), K, *X, Scalar(0), *Y); },
                              spmv_traffic_bytes(s.csr()), *Y, k);
    });
#if defined(KOKKOS_ENABLE_CUDA)
    if constexpr (std::is_same_v<Exec, Kokkos::Cuda>) {
      using Right = Kokkos::View<Scalar**, Kokkos::LayoutRight, Mem>;
      s.template add_cusparse_spmm<Right>(tag + "cusparse-spmm/row-major", k);
      s.template add_cusparse_spmm<Left>(tag + "cusparse-spmm/column-major", k);
    }
#endif
  }
}

CISPMV_BENCH_INSTANTIATE(template void register_blocks, double)

}  // namespace cispmv::bench
