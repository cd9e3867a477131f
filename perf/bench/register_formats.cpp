// spmv_bench's single-vector benchmarks: the baselines (Kokkos Kernels; cuSPARSE CSR and Sliced ELLPACK in CUDA
// builds), every format of the registry with each of its kernels, csell's launch shapes (lanes, unroll factors,
// rows per team, sort windows, value-table orders, the CPU walk's AVX-512 variants) and the paper's hybrid kernel
// as written; --sweep adds the paper's block-size study.
#include "register.hpp"

// Kokkos Kernels 3.4's spmv instantiates transpose functors whose copies GCC 12 flags as maybe uninitialised (a
// false positive inside Kokkos Kernels, after inlining into this file)
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#include "cispmv/baselines/kokkos_kernels.hpp"

namespace cispmv::bench {

namespace {

// csell's lanes per row for Exec (impl::automatic_row_lanes; 1 on CPUs), the benchmark tag of a sort window (-1
// automatic, no tag; 1 "/sort:none"), the cache key of a csell shape and a builder of it.
template <class Exec, class Scalar>
struct CsellShapes {
  const Suite<Exec, Scalar>& s;
  FormatParams params = FormatParams::for_space<Exec>();
  int auto_lanes = impl::automatic_row_lanes(s.host(), params.gpu_threads, params.slice_height);

  static std::string sort_tag(int window) {
    return window < 0 ? std::string() : window <= 1 ? std::string("/sort:none") : "/sort:" + std::to_string(window);
  }
  static std::string key(int lanes, int window = -1) {
    return "csell/lanes:" + std::to_string(lanes) + sort_tag(window);
  }
  auto with(int lanes, int window = -1) const {
    FormatParams p = params;
    p.row_lanes = lanes;
    p.sort_window = window;
    const Suite<Exec, Scalar>* suite = &s;
    return [suite, p] { return build_format<Format::csell>(suite->host(), p); };
  }
};

template <class Exec, class Scalar>
void register_baselines(Suite<Exec, Scalar>& s) {
  using Vec = typename Suite<Exec, Scalar>::Vec;
  // Kokkos Kernels' default algorithm ("native": ETI and TPLs off) and, with 4.x, its merge path
  for (const auto algorithm : {KokkosKernelsAlgorithm::default_algorithm, KokkosKernelsAlgorithm::merge_path}) {
    if (!kokkos_kernels_has(algorithm)) continue;
    const bool merge = algorithm == KokkosKernelsAlgorithm::merge_path;
    s.add(merge ? "kokkos-kernels/merge-path" : "kokkos-kernels/native", [&s, algorithm] {
      auto K = as_kokkos_kernels(s.csr());
      using Kk = KokkosKernelsSpmv<Exec, decltype(K), Vec, Vec>;
      auto op = std::make_shared<Kk>(algorithm);
      return Prepared{[K, op, &s] { op->apply(Exec(), Scalar(1), K, s.x(), Scalar(0), s.y()); },
                      spmv_traffic_bytes(s.csr())};
    });
  }
#if defined(KOKKOS_ENABLE_CUDA)
  if constexpr (std::is_same_v<Exec, Kokkos::Cuda>) {
    s.add_cusparse_csr("cusparse-csr/default", CUSPARSE_SPMV_ALG_DEFAULT);
    s.add_cusparse_csr("cusparse-csr/alg2", CUSPARSE_SPMV_CSR_ALG2);
    s.add("cusparse-sell/sell-alg1", [&s] {
      auto S = std::make_shared<decltype(to_device<Exec>(to_sliced_ell(s.host(), 32)))>(
          to_device<Exec>(to_sliced_ell(s.host(), 32)));
      auto op = std::make_shared<perf::CusparseSpmv<Scalar>>(*S, s.x(), s.y());
      return Prepared{[S, op] { op->run(); }, spmv_traffic_bytes(*S)};
    });
  }
#endif
}

// Every format of the registry with each of its kernels, and csell in each sort window.
template <class Exec, class Scalar>
void register_registry(Suite<Exec, Scalar>& s) {
  const bool fits_16_bits = s.host().num_cols <= 65535 || choose_boundary(s.host()).reference_width <= 65535;
  const CsellShapes<Exec, Scalar> shapes{s};
  const int auto_lanes = shapes.auto_lanes;
  for_each_format([&](auto id) {
    constexpr Format F = decltype(id)::value;
    if (F == Format::hybrid16 && !fits_16_bits) return;
    s.add_format(
        format_info(F).name, [&s] { return build_format<F>(s.host(), FormatParams::for_space<Exec>()); },
        format_kernels(F), {}, F == Format::csell ? "/lanes:" + std::to_string(auto_lanes) : "",
        F == Format::csell ? shapes.key(auto_lanes) : "");
  });
  // csell with its rows in the matrix's order and sorted longest first in windows of each width
  // (FormatParams::sort_window; the automatic one is 64 rows with a table, 1,024 with values inline),
  // the automatic lanes and, on GPUs, one lane; the kernel the plan chooses
  std::vector<int> sorted_lanes{auto_lanes};
  if (auto_lanes != 1 && impl::is_gpu_space_v<Exec>) sorted_lanes.push_back(1);
  for (int lanes : sorted_lanes) {
    for (int window : {1, 64, 256, 1024, 4096}) {
      if (lanes != auto_lanes && window == 1) continue;
      if (window > 1 && window % (shapes.params.slice_height / lanes) != 0) continue;
      s.add_format("csell", shapes.with(lanes, window), {Kernel::automatic}, {},
                   "/lanes:" + std::to_string(lanes) + shapes.sort_tag(window), shapes.key(lanes, window));
    }
  }
}

// GPUs: csell's lanes per row, unroll factors, rows per team and block, and the team kernels with Kokkos' own L1 /
// shared-memory split.
template <class Exec, class Scalar>
void register_gpu_shapes(Suite<Exec, Scalar>& s) {
  if (!impl::is_gpu_space_v<Exec> || s.host().num_rows == 0) return;
  const CsellShapes<Exec, Scalar> shapes{s};
  const int auto_lanes = shapes.auto_lanes;
  const FormatParams& space_params = shapes.params;
  const auto csell_with = [&](int lanes) { return shapes.with(lanes); };
  const auto csell_key = [&](int lanes) { return shapes.key(lanes); };
  const bool fits_16_bits = s.host().num_cols <= 65535 || choose_boundary(s.host()).reference_width <= 65535;
  // csell with each other number of lanes per row in its vector shape (GPUs: lanes that keep 16 or
  // more entries each; 2-8 where the rows fill the GPU twice), then the automatic lanes and its
  // neighbours with each unroll factor and rows per team
  if (impl::is_gpu_space_v<Exec> && s.host().num_rows > 0) {
    const double mean = static_cast<double>(s.host().nnz()) / s.host().num_rows;
    const bool many_rows = s.host().num_rows >= 2 * space_params.gpu_threads;
    for (int lanes = 2; lanes <= (many_rows ? 8 : impl::max_row_lanes); lanes *= 2) {
      if (lanes == auto_lanes || mean / lanes < 16) continue;
      s.add_format("csell", csell_with(lanes), {Kernel::vector}, {}, "/lanes:" + std::to_string(lanes),
                   csell_key(lanes));
    }
    if (auto_lanes > 1) {
      for (int lanes : {auto_lanes / 2, auto_lanes, 2 * auto_lanes}) {
        if (lanes < 2 || lanes > impl::max_row_lanes) continue;
        for (int unroll : {2, 4, 8}) {
          for (int rows : {0, 8, 16, 32, 64}) {
            if (rows * lanes > impl::gpu_max_team_threads) continue;
            SpmvOptions o{Kernel::vector};
            o.unroll = unroll;
            o.rows_per_team = rows;
            s.add_format("csell", csell_with(lanes), {Kernel::vector}, o,
                         "/lanes:" + std::to_string(lanes) + "/unroll:" + std::to_string(unroll) +
                             (rows > 0 ? "/rows_per_team:" + std::to_string(rows) : ""),
                         csell_key(lanes));
            if (rows == 0 && unroll >= 4) {  // values inline: the plain loop (SpmvOptions::loads_ahead)
              o.loads_ahead = LoadsAhead::off;
              s.add_format("csell", csell_with(lanes), {Kernel::vector}, o,
                           "/lanes:" + std::to_string(lanes) + "/unroll:" + std::to_string(unroll) + "/ahead:off",
                           csell_key(lanes));
            }
          }
        }
      }
    }
  }
  // csell's thread-per-row kernel (one lane per row) with each unroll factor (GPUs; 4 is the
  // default), one csell matrix for all of them
  if (impl::is_gpu_space_v<Exec>) {
    const auto add_csell = [&](const SpmvOptions& o, const std::string& tag) {
      s.add_format("csell", csell_with(1), {Kernel::scalar}, o, "/lanes:1" + tag, csell_key(1));
    };
    for (int unroll : {1, 2, 4, 8}) {
      SpmvOptions o{Kernel::scalar};
      o.unroll = unroll;
      add_csell(o, "/unroll:" + std::to_string(unroll));
      if (unroll >= 4) {  // values inline: the plain loop (SpmvOptions::loads_ahead; a table: the same kernel)
        o.loads_ahead = LoadsAhead::off;
        add_csell(o, "/unroll:" + std::to_string(unroll) + "/ahead:off");
      }
    }
    // ... and as blocks of consecutive rows (SpmvOptions::rows_per_team; automatic: a RangePolicy)
    for (int rows : {128, 256, 512, 1024}) {
      SpmvOptions o{Kernel::scalar};
      o.rows_per_team = rows;
      add_csell(o, "/rows_per_block:" + std::to_string(rows));
    }
    // team kernels with Kokkos' own L1 / shared-memory split (the plans prefer L1 by default)
    SpmvOptions shared{Kernel::scalar};
    shared.team_cache = TeamCache::shared;
    shared.rows_per_team = 1024;
    add_csell(shared, "/rows_per_block:1024/team_cache:shared");
    shared.rows_per_team = 0;
    for_each_format([&](auto id) {
      constexpr Format F = decltype(id)::value;
      if constexpr (F == Format::csr || F == Format::hybrid || F == Format::hybrid16) {
        if (F == Format::hybrid16 && !fits_16_bits) return;
        s.add_format(
            format_info(F).name, [&s] { return build_format<F>(s.host(), FormatParams::for_space<Exec>()); },
            {Kernel::vector}, shared, "/team_cache:shared");
      }
    });
  }
}

// csell's value table in the order the registry does not take, and on CPUs its AVX-512 walk against the portable
// loop.
template <class Exec, class Scalar>
void register_csell_variants(Suite<Exec, Scalar>& s) {
  const FormatParams space_params = FormatParams::for_space<Exec>();
  // csell with its value table most frequent first: on GPUs the order of one-off builds
  // (impl::default_table_order), beside the registry's for many products (co-occurrence,
  // FormatParams::for_space); on CPUs the order that is not the default (first use)
  FormatParams other_order;
  other_order.table_order = ValueTableOrder::frequency;
  s.add_format(
      "csell", [&s, other_order] { return build_format<Format::csell>(s.host(), other_order); }, {Kernel::scalar}, {},
      "/table:frequency", "csell-other-order");
  // csell's CPU slice kernel: its AVX-512 walk (SpmvOptions::host_simd; the table read by gathers or
  // by loads) against the portable loop, with a value table and with values inline (FormatParams::
  // for_space takes one of them by impl::host_simd::values_inline_pays)
  if constexpr (!impl::is_gpu_space_v<Exec>) {
    for (const double coverage : {0.5, 2.0}) {
      FormatParams p = space_params;
      p.min_table_coverage = coverage;
      const std::string values = coverage > 1 ? "/values:inline" : "/values:table";
      for (const HostSimd simd : {HostSimd::automatic, HostSimd::off, HostSimd::gather, HostSimd::loads}) {
        const bool table_read = simd == HostSimd::gather || simd == HostSimd::loads;
        if (table_read && (coverage > 1 || !impl::host_simd::avx512_available())) continue;
        SpmvOptions o{Kernel::scalar};
        o.host_simd = simd;
        s.add_format(
            "csell", [&s, p] { return build_format<Format::csell>(s.host(), p); }, {Kernel::scalar}, o,
            values + "/simd:" + host_simd_name(simd), "csell" + values);
      }
    }
  }
}

// The paper's hybrid kernel as written (Algorithm 7), and with --sweep the paper's block-size study.
template <class Exec, class Scalar>
void register_hybrid_variants(Suite<Exec, Scalar>& s) {
  // the paper's Algorithm 7 as written: no unrolling (one load chain per lane), x not staged
  SpmvOptions alg7{Kernel::vector, 0, 0, 1};
  alg7.stage_reference_x = StageReferenceX::off;
  s.add_format(
      "hybrid", [&s] { return to_hybrid(s.host()); }, {Kernel::vector}, alg7, "/unroll:1/unstaged");
  SpmvOptions unstaged{Kernel::vector};
  unstaged.stage_reference_x = StageReferenceX::off;
  s.add_format(
      "hybrid", [&s] { return to_hybrid(s.host()); }, {Kernel::vector}, unstaged, "/unstaged");
  if (s.settings().sweep) {
    // lanes per row only exist on GPUs; the host kernels use one lane per row
    const std::vector<int> lanes = impl::is_gpu_space_v<Exec> ? std::vector<int>{8, 16, 32} : std::vector<int>{1};
    for (int vl : lanes) {
      for (int rpt : {1, 2, 4, 8, 16}) {
        for (int unroll : {1, 2, 4, 8}) {
          const SpmvOptions o{Kernel::vector, rpt, vl, unroll};
          const std::string tag =
              "/sweep/rpt:" + std::to_string(rpt) + "/vl:" + std::to_string(vl) + "/unroll:" + std::to_string(unroll);
          SpmvOptions unstaged = o;
          unstaged.stage_reference_x = StageReferenceX::off;
          s.add_format(
              "hybrid", [&s] { return to_hybrid(s.host()); }, {Kernel::vector}, unstaged, tag);
          s.add_format(
              "csr", [&s] { return s.host(); }, {Kernel::vector}, o, tag);
        }
      }
    }
    // x's reference part staged in team scratch: rows per team x rows at a time x unroll
    if (impl::is_gpu_space_v<Exec>) {
      for (int rpt : {16, 32, 64, 128, 256}) {
        for (int team : {4, 8, 16, 32}) {
          for (int unroll : {2, 4, 8}) {
            if (team > rpt) continue;
            SpmvOptions o{Kernel::vector, rpt, 32, unroll};
            o.team_size = team;
            o.stage_reference_x = StageReferenceX::on;
            const std::string tag = "/sweep/staged/rpt:" + std::to_string(rpt) + "/team:" + std::to_string(team) +
                                    "/unroll:" + std::to_string(unroll);
            s.add_format(
                "hybrid", [&s] { return to_hybrid(s.host()); }, {Kernel::vector}, o, tag);
          }
        }
      }
    }
  }
}

}  // namespace

template <class Exec, class Scalar>
void register_formats(Suite<Exec, Scalar>& s) {
  register_baselines(s);
  register_registry(s);
  register_gpu_shapes(s);
  register_csell_variants(s);
  register_hybrid_variants(s);
}

CISPMV_BENCH_INSTANTIATE(template void register_formats, double)
CISPMV_BENCH_INSTANTIATE(template void register_formats, float)

}  // namespace cispmv::bench
