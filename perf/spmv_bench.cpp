// cispmv perf suite (Google Benchmark): every format x kernel of cispmv and the baselines on the same
// matrix, in one executable: Kokkos Kernels spmv (native) and, in CUDA builds, cuSPARSE SpMV (CSR with
// the default algorithm and CSR_ALG2, and its Sliced ELLPACK against ours).
//
//   spmv_bench [--matrix NAME|FILE|fcidump:FILE:LEVEL]... [--space device|host] [--float] [--sweep]
//              [--iterations N] [--repetitions N] [--out-dir DIR] [--vectors K,K,...] [--kokkos3-cache-config]
//              [Google Benchmark flags]
//
// Per benchmark: the median over repetitions of fenced, manually timed runs (Kokkos::Timer around
// one spmv between two fences); counters GB/s (spmv_traffic_bytes: the format's arrays + x + y, see
// include/cispmv/stats.hpp), GFLOP/s (2 nnz), and frac_copy_bw: GB/s over the device copy bandwidth
// measured by this executable at start-up (bytes read + written by a large deep_copy). Each
// benchmark checks its y against the host oracle once before timing (a fast wrong kernel is
// skipped with an error, never reported as fast). --sweep adds the rows-per-team x vector-length x
// unroll study (the paper's block-size study, Tables 6-8) for the CSR and hybrid vector kernels.
// --vectors 1,2,4,8,16 adds the multi-vector products Y = A*X (cispmv's rank-2 plans, Kokkos Kernels'
// rank-2 spmv, cuSPARSE SpMM) with counter ms_per_vector. A matrix fcidump:FILE:LEVEL also gets
// "ci-factored": the same Hamiltonian applied from its integrals and string lists, never assembled
// (ci::FactoredHamiltonian), checked against the assembled matrix's host oracle. On CUDA the baselines run under CUDA's
// default device-wide cache configuration, which Kokkos 3 changes at start-up and this bench puts back
// (set_device_cache_config; --kokkos3-cache-config keeps Kokkos 3's, as every run before session 24).
// Results: the console table, and <out-dir>/<matrix>-<space>.json per matrix.
#include <benchmark/benchmark.h>
#include <Kokkos_Core.hpp>

// Kokkos Kernels 3.4's rank-2 spmv instantiates transpose functors whose copies GCC 12 flags as
// maybe uninitialised (a false positive inside Kokkos Kernels, after inlining into this file)
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#include "cispmv/baselines/kokkos_kernels.hpp"
#include "cispmv/ci/factored.hpp"
#include "cispmv/ci/hamiltonian.hpp"
#include "cispmv/cispmv.hpp"
#include "cispmv/generator.hpp"
#include "cispmv/info.hpp"
#include "cispmv/io.hpp"
#include "cusparse_baseline.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <limits>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace {

using namespace cispmv;

struct Settings {
  std::vector<std::string> matrices;
  std::string space = "device";
  bool single = false;
  bool sweep = false;
  int iterations = 50;
  int repetitions = 5;
  std::string out_dir = ".";
  std::vector<int> vectors;           ///< --vectors: block widths k of the multi-vector benchmarks
  bool kokkos3_cache_config = false;  ///< --kokkos3-cache-config: keep Kokkos 3's device-wide shared-memory preference
};

/// The device-wide L1 / shared-memory preference the baselines run under. Kokkos 3.x's CUDA
/// initialisation calls cudaDeviceSetCacheConfig(cudaFuncCachePreferShared) for the whole device
/// (Kokkos_Cuda_Instance.cpp; Kokkos 4 does not): every kernel that does not set its own preference,
/// cuSPARSE's among them, then runs with the smallest L1, and its gathers of x miss. A cuSPARSE user
/// without Kokkos 3 never sees that, so the bench puts CUDA's default back before anything runs
/// (cudaFuncCachePreferNone); --kokkos3-cache-config keeps Kokkos 3's setting (every run before
/// session 24's fix). Kokkos' own launches (cispmv's kernels, Kokkos Kernels') set a preference per
/// kernel at every launch, so this changes nothing for them. Returns what the runs get, for the report.
std::string set_device_cache_config(bool keep_kokkos3) {
#if defined(KOKKOS_ENABLE_CUDA) && KOKKOS_VERSION < 40000
  if (keep_kokkos3) return "prefer shared (Kokkos 3's device-wide setting, kept by --kokkos3-cache-config)";
  const cudaError_t e = cudaDeviceSetCacheConfig(cudaFuncCachePreferNone);
  if (e != cudaSuccess)
    throw std::runtime_error(std::string("cudaDeviceSetCacheConfig failed: ") + cudaGetErrorString(e));
  return "prefer none (CUDA's default, put back over Kokkos 3's device-wide prefer shared)";
#elif defined(KOKKOS_ENABLE_CUDA)
  (void)keep_kokkos3;
  return "prefer none (CUDA's default: Kokkos 4 sets none device-wide)";
#else
  (void)keep_kokkos3;
  return "";
#endif
}

/// Sends every report to the console and to a JSON file (Google Benchmark's own file reporter is tied
/// to one --benchmark_out file per process; the suite writes one file per matrix).
class TeeReporter : public benchmark::BenchmarkReporter {
 public:
  TeeReporter(benchmark::BenchmarkReporter& a, benchmark::BenchmarkReporter& b) : a_(a), b_(b) {}
  bool ReportContext(const Context& context) override {
    const bool ok = a_.ReportContext(context);
    return b_.ReportContext(context) && ok;
  }
  void ReportRuns(const std::vector<Run>& runs) override {
    a_.ReportRuns(runs);
    b_.ReportRuns(runs);
  }
  void Finalize() override {
    a_.Finalize();
    b_.Finalize();
  }

 private:
  benchmark::BenchmarkReporter& a_;
  benchmark::BenchmarkReporter& b_;
};

/// One prepared kernel: run() does y = A*x (or Y = A*X for `vectors` columns); bytes is what it must
/// move (spmv_traffic_bytes, plus the other columns' x and y); check() (if set) runs it once into a
/// NaN-poisoned result and compares with the host oracle ("" if right).
struct Prepared {
  Prepared() = default;
  Prepared(std::function<void()> run_, double bytes_) : run(std::move(run_)), bytes(bytes_) {}
  std::function<void()> run;
  double bytes = 0;
  int vectors = 1;
  std::function<std::string()> check;
};

template <class Exec>
double measure_copy_bandwidth(std::size_t bytes) {
  const std::size_t n = bytes / sizeof(double);
  Kokkos::View<double*, typename Exec::memory_space> a("copy::a", n), b("copy::b", n);
  Kokkos::deep_copy(a, 1.0);
  std::vector<double> t;
  for (int i = 0; i < 21; ++i) {
    Exec().fence();
    Kokkos::Timer timer;
    if constexpr (impl::is_gpu_space_v<Exec>) {
      Kokkos::deep_copy(Exec(), b, a);  // cudaMemcpy device to device
    } else {
      // STREAM-like copy on all host threads (a host deep_copy may run on one thread)
      Kokkos::parallel_for(
          "copy", Kokkos::RangePolicy<Exec>(0, n), KOKKOS_LAMBDA(const std::size_t j) { b(j) = a(j); });
    }
    Exec().fence();
    if (i > 0) t.push_back(timer.seconds());
  }
  std::sort(t.begin(), t.end());
  return 2.0 * static_cast<double>(n * sizeof(double)) / t[t.size() / 2];  // read + write
}

template <class Exec, class Scalar>
class Suite {
 public:
  using Mem = typename Exec::memory_space;
  using Vec = Kokkos::View<Scalar*, Mem>;

  Suite(std::string name, HostCsrMatrix<Scalar, int, std::size_t> host, double copy_bw, const Settings& settings)
      : name_(std::move(name)), host_(std::move(host)), copy_bw_(copy_bw), settings_(settings) {
    hx_ = Kokkos::View<Scalar*, Kokkos::HostSpace>("x", host_.num_cols);
    for (int i = 0; i < host_.num_cols; ++i) hx_(i) = static_cast<Scalar>(1.0 + ((i * 7919) % 101) / 101.0);
    expected_ = Kokkos::View<Scalar*, Kokkos::HostSpace>("expected", host_.num_rows);
    host_oracle_spmv(Scalar(1), host_, hx_, Scalar(0), expected_);
    tol_ = spmv_tolerance(host_, hx_);
    x_ = Kokkos::create_mirror_view_and_copy(Mem(), hx_);
    y_ = Vec("y", host_.num_rows);
    csr_ = to_device<Exec>(host_);
  }

  void register_all() {
    const std::string space = settings_.space;
    // Kokkos Kernels' default algorithm ("native": ETI and TPLs off) and, with 4.x, its merge path
    for (const auto algorithm : {KokkosKernelsAlgorithm::default_algorithm, KokkosKernelsAlgorithm::merge_path}) {
      if (!kokkos_kernels_has(algorithm)) continue;
      const bool merge = algorithm == KokkosKernelsAlgorithm::merge_path;
      add(merge ? "kokkos-kernels/merge-path" : "kokkos-kernels/native", [this, algorithm] {
        auto K = as_kokkos_kernels(csr_);
        using Kk = KokkosKernelsSpmv<Exec, decltype(K), Vec, Vec>;
        auto op = std::make_shared<Kk>(algorithm);
        return Prepared{[K, op, this] { op->apply(Exec(), Scalar(1), K, x_, Scalar(0), y_); },
                        spmv_traffic_bytes(csr_)};
      });
    }
#if defined(KOKKOS_ENABLE_CUDA)
    if constexpr (std::is_same_v<Exec, Kokkos::Cuda>) {
      add_cusparse_csr("cusparse-csr/default", CUSPARSE_SPMV_ALG_DEFAULT);
      add_cusparse_csr("cusparse-csr/alg2", CUSPARSE_SPMV_CSR_ALG2);
      add("cusparse-sell/sell-alg1", [this] {
        auto S = std::make_shared<decltype(to_device<Exec>(to_sliced_ell(host_, 32)))>(
            to_device<Exec>(to_sliced_ell(host_, 32)));
        auto op = std::make_shared<perf::CusparseSpmv<Scalar>>(*S, x_, y_);
        return Prepared{[S, op] { op->run(); }, spmv_traffic_bytes(*S)};
      });
    }
#endif
    // every format of the registry with each of its kernels
    const bool fits_16_bits = host_.num_cols <= 65535 || choose_boundary(host_).reference_width <= 65535;
    // csell's lanes per row for Exec (impl::automatic_row_lanes; 1 on CPUs), and a cache key per lanes
    const FormatParams space_params = FormatParams::for_space<Exec>();
    const int auto_lanes = impl::automatic_row_lanes(host_, space_params.gpu_threads, space_params.slice_height);
    // csell's sort window: -1 automatic (impl::automatic_sort_window, no tag), 1 "/sort:none"
    const auto sort_tag = [](int window) {
      return window < 0 ? std::string() : window <= 1 ? std::string("/sort:none") : "/sort:" + std::to_string(window);
    };
    const auto csell_key = [sort_tag](int lanes, int window = -1) {
      return "csell/lanes:" + std::to_string(lanes) + sort_tag(window);
    };
    const auto csell_with = [this, space_params](int lanes, int window = -1) {
      FormatParams p = space_params;
      p.row_lanes = lanes;
      p.sort_window = window;
      return [this, p] { return build_format<Format::csell>(host_, p); };
    };
    for_each_format([&](auto id) {
      constexpr Format F = decltype(id)::value;
      if (F == Format::hybrid16 && !fits_16_bits) return;
      const std::vector<Kernel> kernels = format_kernels(F);
      add_format(
          format_info(F).name, [this] { return build_format<F>(host_, FormatParams::for_space<Exec>()); }, kernels, {},
          F == Format::csell ? "/lanes:" + std::to_string(auto_lanes) : "",
          F == Format::csell ? csell_key(auto_lanes) : "");
    });
    // csell with its rows in the matrix's order and sorted longest first in windows of each width
    // (FormatParams::sort_window; the automatic one is 64 rows with a table, 1,024 with values inline),
    // the automatic lanes and, on GPUs, one lane; the kernel the plan chooses
    std::vector<int> sorted_lanes{auto_lanes};
    if (auto_lanes != 1 && impl::is_gpu_space_v<Exec>) sorted_lanes.push_back(1);
    for (int lanes : sorted_lanes) {
      for (int window : {1, 64, 256, 1024, 4096}) {
        if (lanes != auto_lanes && window == 1) continue;
        if (window > 1 && window % (space_params.slice_height / lanes) != 0) continue;
        add_format("csell", csell_with(lanes, window), {Kernel::automatic}, {},
                   "/lanes:" + std::to_string(lanes) + sort_tag(window), csell_key(lanes, window));
      }
    }
    // csell with each other number of lanes per row in its vector shape (GPUs: lanes that keep 16 or
    // more entries each; 2-8 where the rows fill the GPU twice), then the automatic lanes and its
    // neighbours with each unroll factor and rows per team
    if (impl::is_gpu_space_v<Exec> && host_.num_rows > 0) {
      const double mean = static_cast<double>(host_.nnz()) / host_.num_rows;
      const bool many_rows = host_.num_rows >= 2 * space_params.gpu_threads;
      for (int lanes = 2; lanes <= (many_rows ? 8 : impl::max_row_lanes); lanes *= 2) {
        if (lanes == auto_lanes || mean / lanes < 16) continue;
        add_format("csell", csell_with(lanes), {Kernel::vector}, {}, "/lanes:" + std::to_string(lanes),
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
              add_format("csell", csell_with(lanes), {Kernel::vector}, o,
                         "/lanes:" + std::to_string(lanes) + "/unroll:" + std::to_string(unroll) +
                             (rows > 0 ? "/rows_per_team:" + std::to_string(rows) : ""),
                         csell_key(lanes));
              if (rows == 0 && unroll >= 4) {  // values inline: the plain loop (SpmvOptions::loads_ahead)
                o.loads_ahead = LoadsAhead::off;
                add_format("csell", csell_with(lanes), {Kernel::vector}, o,
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
        add_format("csell", csell_with(1), {Kernel::scalar}, o, "/lanes:1" + tag, csell_key(1));
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
          add_format(
              format_info(F).name, [this] { return build_format<F>(host_, FormatParams::for_space<Exec>()); },
              {Kernel::vector}, shared, "/team_cache:shared");
        }
      });
    }
    // csell with its value table most frequent first: on GPUs the order of one-off builds
    // (impl::default_table_order), beside the registry's for many products (co-occurrence,
    // FormatParams::for_space); on CPUs the order that is not the default (first use)
    FormatParams other_order;
    other_order.table_order = ValueTableOrder::frequency;
    add_format(
        "csell", [this, other_order] { return build_format<Format::csell>(host_, other_order); }, {Kernel::scalar}, {},
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
          add_format(
              "csell", [this, p] { return build_format<Format::csell>(host_, p); }, {Kernel::scalar}, o,
              values + "/simd:" + host_simd_name(simd), "csell" + values);
        }
      }
    }
    // the paper's Algorithm 7 as written: no unrolling (one load chain per lane), x not staged
    SpmvOptions alg7{Kernel::vector, 0, 0, 1};
    alg7.stage_reference_x = StageReferenceX::off;
    add_format(
        "hybrid", [this] { return to_hybrid(host_); }, {Kernel::vector}, alg7, "/unroll:1/unstaged");
    SpmvOptions unstaged{Kernel::vector};
    unstaged.stage_reference_x = StageReferenceX::off;
    add_format(
        "hybrid", [this] { return to_hybrid(host_); }, {Kernel::vector}, unstaged, "/unstaged");
    if (settings_.sweep) {
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
            add_format(
                "hybrid", [this] { return to_hybrid(host_); }, {Kernel::vector}, unstaged, tag);
            add_format(
                "csr", [this] { return host_; }, {Kernel::vector}, o, tag);
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
              add_format(
                  "hybrid", [this] { return to_hybrid(host_); }, {Kernel::vector}, o, tag);
            }
          }
        }
      }
    }
  }

  /// Several vectors at once (--vectors): Y = A*X for k columns with cispmv's rank-2 plans (CSR, the
  /// hybrid format on GPUs, csell; LayoutRight X and Y), Kokkos Kernels' rank-2 spmv (LayoutLeft, its
  /// multivector layout) and, in CUDA builds, cuSPARSE SpMM (row- and column-major). Column j of X is
  /// (1 + j) x, so column j of Y must be (1 + j) times the host oracle's y. Counter ms_per_vector: the
  /// time of one product over k.
  /// csell with one lane per row (the lane-per-column kernels' layout), rows in the matrix's order, with
  /// its value table (as the eigensolver builds it for several roots on a CPU) or its values inline; on
  /// GPUs the eigensolver's is `csell-inline-sorted` (FormatParams::for_block_products).
  static FormatParams one_lane_csell(bool values_inline = false) {
    FormatParams p = FormatParams::for_space<Exec>();
    p.row_lanes = 1;
    p.sort_window = 1;  // in the matrix's order
    if (values_inline) p.min_table_coverage = 2;
    return p;
  }
  void register_blocks() {
    using Left = Kokkos::View<Scalar**, Kokkos::LayoutLeft, Mem>;
    for (const int k : settings_.vectors) {
      const std::string tag = "block/k:" + std::to_string(k) + "/";
      // CSR and csell in both shapes (a thread per row with k sums, a lane per column) and the plan's
      // automatic one (lanes on GPUs, rows on the host)
      for (const BlockShape shape : {BlockShape::automatic, BlockShape::rows, BlockShape::lanes}) {
        add_block_format(
            tag + "csr", [this] { return host_; }, k, shape);
        add_block_format(
            tag + "csell", [this] { return build_format<Format::csell>(host_, one_lane_csell()); }, k, shape);
      }
      // the lane shape with each of its widths (columns per lane; "lanes" is the automatic width); csell
      // also with its values inline (no table lookup)
      if (impl::is_gpu_space_v<Exec>) {
        for (const int per_lane : {0, 1, 2, 4, 8}) {
          if (per_lane > 0) {
            add_block_format(
                tag + "csr", [this] { return host_; }, k, BlockShape::lanes, per_lane);
            add_block_format(
                tag + "csell", [this] { return build_format<Format::csell>(host_, one_lane_csell()); }, k,
                BlockShape::lanes, per_lane);
          }
          add_block_format(
              tag + "csell-inline", [this] { return build_format<Format::csell>(host_, one_lane_csell(true)); }, k,
              BlockShape::lanes, per_lane);
        }
        // ... and with its rows sorted by length in the automatic windows: FormatParams::for_block_products
        // (the eigensolver's; its automatic width and the two that compete for it: one pair and two pairs)
        for (const int per_lane : {0, 2, 4})
          add_block_format(
              tag + "csell-inline-sorted",
              [this] { return build_format<Format::csell>(host_, FormatParams::for_block_products<Exec>()); }, k,
              BlockShape::lanes, per_lane);
        // ... and in other windows than the automatic one (a slice, 256 rows, the largest), its automatic width
        for (const int window : {32, 256, impl::max_sort_window}) {
          add_block_format(
              tag + "csell-inline-w" + std::to_string(window),
              [this, window] {
                FormatParams p = FormatParams::for_block_products<Exec>();
                p.sort_window = window;
                return build_format<Format::csell>(host_, p);
              },
              k, BlockShape::lanes);
        }
      }
      if (impl::is_gpu_space_v<Exec>)
        add_block_format(
            tag + "hybrid", [this] { return to_hybrid(host_); }, k, BlockShape::automatic);
      add(tag + "kokkos-kernels/native", [this, k] {
        auto K = as_kokkos_kernels(csr_);
        auto X = std::make_shared<Left>(block_x<Left>(k));
        auto Y = std::make_shared<Left>("Y", host_.num_rows, k);
        using Kk = KokkosKernelsSpmv<Exec, decltype(K), Left, Left>;
        auto op = std::make_shared<Kk>();
        return block_prepared([K, op, X, Y] { op->apply(Exec(), Scalar(1), K, *X, Scalar(0), *Y); },
                              spmv_traffic_bytes(csr_), *Y, k);
      });
#if defined(KOKKOS_ENABLE_CUDA)
      if constexpr (std::is_same_v<Exec, Kokkos::Cuda>) {
        using Right = Kokkos::View<Scalar**, Kokkos::LayoutRight, Mem>;
        add_cusparse_spmm<Right>(tag + "cusparse-spmm/row-major", k);
        add_cusparse_spmm<Left>(tag + "cusparse-spmm/column-major", k);
      }
#endif
    }
  }

  /// The CI Hamiltonian in factored form (ci::FactoredHamiltonian: from the integrals and string lists,
  /// never assembled) when the matrix is one, checked against the host oracle of the assembled matrix
  /// like every other benchmark; bytes: its lists and integrals, x and y. Double only.
  void register_factored(const std::shared_ptr<const ci::FciDump>& dump,
                         const std::shared_ptr<const ci::DeterminantSpace>& space) {
    // the automatic kernel and launch; on GPUs also the scatter kernel's other team sizes, parts and
    // batches, and the gathering team kernel (`teams`) with its shapes
    using FK = ci::FactoredOptions::Kernel;
    struct Shape {
      FK kernel;
      int team, slots, batch;  // slots: teams' beta strings per thread, scatter's parts
      bool lists = false;      // scatter: the replacement lists' walk
      ci::FactoredOptions::Terms terms = ci::FactoredOptions::Terms::all;
      ci::FactoredOptions::SameSpinPass pass = ci::FactoredOptions::SameSpinPass::automatic;
      ci::FactoredOptions::Launches launches = ci::FactoredOptions::Launches::automatic;
      ci::FactoredOptions::RowCopies rows = ci::FactoredOptions::RowCopies::automatic;
      ci::FactoredOptions::TaskOrder order = ci::FactoredOptions::TaskOrder::automatic;
    };
    // the automatic kernel's two parts, each timed alone (checked by adding the other's product); on GPUs also the
    // mma kernel's alpha-beta sum alone
    using Terms = ci::FactoredOptions::Terms;
    // the automatic kernel with the other same-spin pass (dense products or the teams' lists), whole and alone
    using Pass = ci::FactoredOptions::SameSpinPass;
    const Pass other = impl::is_gpu_space_v<Exec> ? Pass::lists : Pass::gemm;
    std::vector<Shape> shapes{{FK::automatic, 0, 0, 0},
                              {FK::automatic, 0, 0, 0, false, Terms::same_spin},
                              {FK::automatic, 0, 0, 0, false, Terms::alpha_beta},
                              {FK::automatic, 0, 0, 0, false, Terms::all, other},
                              {FK::automatic, 0, 0, 0, false, Terms::same_spin, other}};
    if (!impl::is_gpu_space_v<Exec>) {  // CPUs: the tile kernel, the rows kernel, the scatter kernel's walks
      shapes.insert(shapes.end(), {{FK::tiles, 0, 1, 0},
                                   {FK::rows, 0, 0, 0},
                                   {FK::scatter, 0, 1, 8, true},
                                   {FK::scatter, 0, 1, 8},
                                   {FK::scatter, 0, 1, 16}});
    }
    if (impl::is_gpu_space_v<Exec>) {
      // the dense products after the alpha-beta kernel and beside it
      using Launches = ci::FactoredOptions::Launches;
      shapes.insert(shapes.end(), {{FK::automatic, 0, 0, 0, false, Terms::all, Pass::gemm, Launches::serial},
                                   {FK::automatic, 0, 0, 0, false, Terms::all, Pass::gemm, Launches::concurrent}});
      // the scatter kernel's row: one copy a team or one a warp, whole and the alpha-beta sum alone; and its parts
      using Rows = ci::FactoredOptions::RowCopies;
      const Pass any = Pass::automatic;
      const Launches launch = Launches::automatic;
      shapes.insert(shapes.end(), {{FK::automatic, 0, 0, 0, false, Terms::all, any, launch, Rows::shared},
                                   {FK::automatic, 0, 0, 0, false, Terms::alpha_beta, any, launch, Rows::shared},
                                   {FK::automatic, 0, 0, 0, false, Terms::all, any, launch, Rows::per_warp},
                                   {FK::automatic, 0, 0, 0, false, Terms::alpha_beta, any, launch, Rows::per_warp},
                                   {FK::scatter, 0, 3, 16},
                                   {FK::scatter, 0, 4, 16},
                                   {FK::scatter, 0, 2, 16, false, Terms::all, any, launch, Rows::shared}});
      // the teams string by string (automatic: largest first), whole, the alpha-beta sum alone, and at 4 parts
      const Rows rows = Rows::automatic;
      const auto strings = ci::FactoredOptions::TaskOrder::strings;
      shapes.insert(shapes.end(), {{FK::automatic, 0, 0, 0, false, Terms::all, any, launch, rows, strings},
                                   {FK::automatic, 0, 0, 0, false, Terms::alpha_beta, any, launch, rows, strings},
                                   {FK::scatter, 0, 4, 16, false, Terms::all, any, launch, rows, strings}});
      shapes.insert(shapes.end(), {{FK::mma, 0, 0, 0},
                                   {FK::mma, 0, 0, 0, false, Terms::alpha_beta},
                                   {FK::mma, 0, 1, 0},
                                   {FK::mma, 0, 2, 0},
                                   {FK::mma, 0, 4, 0},
                                   {FK::mma, 64, 0, 0},
                                   {FK::scatter, 0, 0, 0},
                                   {FK::scatter, 0, 1, 8},
                                   {FK::scatter, 0, 4, 8},
                                   {FK::scatter, 0, 1, 8, true},
                                   {FK::scatter, 0, 4, 8, true},
                                   {FK::scatter, 0, 1, 16},
                                   {FK::scatter, 0, 2, 16},
                                   {FK::scatter, 64, 0, 0},
                                   {FK::scatter, 256, 0, 0},
                                   {FK::teams, 0, 0, 0},
                                   {FK::teams, 256, 4, 2}});
    }
    for (const Shape& shape : shapes) {
      const std::string kernel = shape.kernel == FK::tiles     ? "/tiles"
                                 : shape.kernel == FK::mma     ? "/mma"
                                 : shape.kernel == FK::scatter ? "/scatter"
                                 : shape.kernel == FK::teams   ? "/teams"
                                 : shape.kernel == FK::rows    ? "/rows"
                                                               : "";
      const std::string label =
          "ci-factored" + kernel + (shape.team == 0 ? std::string() : "/team:" + std::to_string(shape.team)) +
          (shape.slots == 0            ? std::string()
           : shape.kernel != FK::teams ? "/parts:" + std::to_string(shape.slots)
                                       : "/slots:" + std::to_string(shape.slots)) +
          (shape.batch == 0 ? std::string() : "/batch:" + std::to_string(shape.batch)) + (shape.lists ? "/lists" : "") +
          (shape.terms == Terms::same_spin    ? "/same-spin"
           : shape.terms == Terms::alpha_beta ? "/alpha-beta"
                                              : "") +
          (shape.pass == Pass::gemm    ? "/ss:gemm"
           : shape.pass == Pass::lists ? "/ss:lists"
                                       : "") +
          (shape.launches == ci::FactoredOptions::Launches::serial       ? "/serial"
           : shape.launches == ci::FactoredOptions::Launches::concurrent ? "/concurrent"
                                                                         : "") +
          (shape.rows == ci::FactoredOptions::RowCopies::shared     ? "/rows:shared"
           : shape.rows == ci::FactoredOptions::RowCopies::per_warp ? "/rows:per-warp"
                                                                    : "") +
          (shape.order == ci::FactoredOptions::TaskOrder::strings         ? "/order:strings"
           : shape.order == ci::FactoredOptions::TaskOrder::largest_first ? "/order:largest-first"
                                                                          : "");
      add(label, [this, dump, space, shape] {
        Kokkos::Timer t;
        ci::FactoredOptions options;
        options.kernel = shape.kernel;
        options.team_size = shape.team;
        options.slots = shape.kernel == FK::teams ? shape.slots : 0;
        options.parts = shape.kernel != FK::teams ? shape.slots : 0;
        options.batch = shape.batch;
        options.scatter_lists = shape.lists;
        options.terms = shape.terms;
        options.same_spin_pass = shape.pass;
        options.launches = shape.launches;
        options.row_copies = shape.rows;
        options.task_order = shape.order;
        auto F = std::make_shared<ci::FactoredHamiltonian<Exec>>(Exec(), *dump, *space, options);
        const FK k = F->kernel();
        std::cerr << "spmv_bench: ci-factored built in " << t.seconds() << " s: " << F->bytes() * 1e-6 << " MB, "
                  << F->alpha_beta_terms() << " alpha-beta terms, symmetry " << (F->uses_symmetry() ? "on" : "off")
                  << ", kernel "
                  << (k == FK::tiles     ? "tiles"
                      : k == FK::mma     ? "mma"
                      : k == FK::scatter ? "scatter"
                      : k == FK::teams   ? "teams"
                                         : "rows")
                  << (F->scatter_lists() ? " lists" : "") << " (team " << F->team_size()
                  << (k == FK::teams  ? ", slots "
                      : k == FK::rows ? ""
                                      : ", parts ")
                  << (k == FK::rows ? std::string() : std::to_string(F->slots())) << ", batch " << F->batch() << ")"
                  << ", same-spin "
                  << (F->same_spin_gemm() ? "gemm (" + std::to_string(F->same_spin_flops() * 1e-9) + " GFLOP, " +
                                                std::to_string(F->same_spin_tiles()) + " tiles" +
                                                (F->concurrent_launches() ? ", beside the alpha-beta kernel)" : ")")
                                          : std::string("lists"))
                  << (F->row_copies() > 1 ? ", a copy of the row a warp" : "")
                  << (F->largest_first() ? ", teams largest first" : "")
                  << (shape.terms == Terms::same_spin    ? ", its same-spin terms alone (GB/s and GFLOP/s as for H)"
                      : shape.terms == Terms::alpha_beta ? ", its alpha-beta sum alone (GB/s and GFLOP/s as for H)"
                                                         : "")
                  << "\n";
        const double bytes = static_cast<double>(F->bytes()) + 2.0 * sizeof(Scalar) * host_.num_rows;
        Prepared p{[F, this] { F->apply(1.0, x_, 0.0, y_); }, bytes};
        if (shape.terms != Terms::all) {  // checked with the other part's product added
          options.terms = shape.terms == Terms::same_spin ? Terms::alpha_beta : Terms::same_spin;
          auto G = std::make_shared<ci::FactoredHamiltonian<Exec>>(Exec(), *dump, *space, options);
          p.check = [F, G, this] {
            return verify([F, G, this] {
              F->apply(1.0, x_, 0.0, y_);
              G->apply(1.0, x_, 1.0, y_);
            });
          };
        }
        return p;
      });
    }
  }

  void run_registered(benchmark::BenchmarkReporter* display) {
    const std::string path = settings_.out_dir + "/" + name_ + "-" + settings_.space + ".json";
    std::error_code ec;
    std::filesystem::create_directories(settings_.out_dir, ec);
    std::ofstream out(path);
    if (!out) throw std::runtime_error("spmv_bench: cannot write " + path + " (--out-dir must be a writable folder)");
    benchmark::JSONReporter json;
    json.SetOutputStream(&out);
    json.SetErrorStream(&std::cerr);
    TeeReporter tee(*display, json);
    benchmark::RunSpecifiedBenchmarks(&tee);
    benchmark::ClearRegisteredBenchmarks();
    current_.reset();
    cached_matrix_.reset();
    cached_key_.clear();
    out.flush();
    if (!out) throw std::runtime_error("spmv_bench: writing " + path + " failed");
    std::cerr << "spmv_bench: wrote " << path << "\n";
  }

 private:
  using Builder = std::function<Prepared()>;

  /// Benchmarks of `format` with each kernel of `kernels`; those given the same non-empty
  /// `cache_key` (and the same make_host) share one device matrix, built once.
  template <class MakeHost>
  void add_format(const std::string& format, MakeHost make_host, const std::vector<Kernel>& kernels,
                  SpmvOptions base = {}, const std::string& tag = "", const std::string& cache_key = "") {
    for (Kernel k : kernels) {
      SpmvOptions o = base;
      o.kernel = k;
      add(format + "/" + kernel_name(k) + tag, [this, make_host, o, cache_key] {
        using DeviceMatrix = decltype(to_device<Exec>(make_host()));
        auto A = cached<DeviceMatrix>(cache_key, [&] { return to_device<Exec>(make_host()); });
        auto plan = std::make_shared<SpmvPlan<Exec, DeviceMatrix>>(Exec(), *A, o);
        return Prepared{[A, plan, this] { plan->apply(Scalar(1), x_, Scalar(0), y_); }, spmv_traffic_bytes(*A)};
      });
    }
  }

  /// X with column j = (1 + j) x, in Exec's memory.
  template <class Block>
  Block block_x(int k) const {
    Block X("X", host_.num_cols, k);
    auto h = Kokkos::create_mirror_view(X);
    for (int i = 0; i < host_.num_cols; ++i) {
      for (int j = 0; j < k; ++j) h(i, j) = hx_(i) * static_cast<Scalar>(1 + j);
    }
    Kokkos::deep_copy(X, h);
    return X;
  }

  /// A prepared block product whose check poisons Y, runs once and compares every column.
  template <class Block>
  Prepared block_prepared(std::function<void()> run, double matrix_traffic, const Block& Y, int k) {
    Prepared p;
    p.run = run;
    p.vectors = k;
    p.bytes = matrix_traffic + (k - 1.0) * (host_.num_rows + host_.num_cols) * sizeof(Scalar);
    p.check = [this, run, Y, k]() -> std::string {
      Kokkos::deep_copy(Y, std::numeric_limits<Scalar>::quiet_NaN());
      run();
      Exec().fence();
      auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), Y);
      for (int j = 0; j < k; ++j) {
        for (int i = 0; i < host_.num_rows; ++i) {
          const double want = static_cast<double>(expected_(i)) * (1 + j);
          if (!(std::abs(static_cast<double>(h(i, j)) - want) <= tol_ * (1 + j))) {
            return "wrong result: Y(" + std::to_string(i) + ", " + std::to_string(j) +
                   ") = " + std::to_string(h(i, j)) + ", host oracle " + std::to_string(want);
          }
        }
      }
      return "";
    };
    return p;
  }

  template <class MakeHost>
  void add_block_format(const std::string& label, MakeHost make_host, int k, BlockShape shape, int lane_columns = 0) {
    using Right = Kokkos::View<Scalar**, Kokkos::LayoutRight, Mem>;
    const std::string width = lane_columns > 0 ? std::to_string(lane_columns) : "";
    add(label + "/" + block_shape_name(shape) + width, [this, make_host, k, shape, lane_columns] {
      using DeviceMatrix = decltype(to_device<Exec>(make_host()));
      auto A = std::make_shared<DeviceMatrix>(to_device<Exec>(make_host()));
      SpmvOptions o;
      o.block_shape = shape;
      o.lane_columns = lane_columns;
      auto plan = std::make_shared<SpmvPlan<Exec, DeviceMatrix>>(Exec(), *A, o);
      auto X = std::make_shared<Right>(block_x<Right>(k));
      auto Y = std::make_shared<Right>("Y", host_.num_rows, k);
      return block_prepared([A, plan, X, Y] { plan->apply(Scalar(1), *X, Scalar(0), *Y); }, spmv_traffic_bytes(*A), *Y,
                            k);
    });
  }

#if defined(KOKKOS_ENABLE_CUDA)
  template <class Block>
  void add_cusparse_spmm(const std::string& label, int k) {
    add(label, [this, k] {
      auto X = std::make_shared<Block>(block_x<Block>(k));
      auto Y = std::make_shared<Block>("Y", host_.num_rows, k);
      auto op = std::make_shared<perf::CusparseSpmm<Scalar>>(csr_, *X, *Y);
      return block_prepared([X, Y, op] { op->run(); }, spmv_traffic_bytes(csr_), *Y, k);
    });
  }

  void add_cusparse_csr(const std::string& label, cusparseSpMVAlg_t alg) {
    add(label, [this, alg] {
      auto op = std::make_shared<perf::CusparseSpmv<Scalar>>(csr_, x_, y_, alg);
      return Prepared{[op] { op->run(); }, spmv_traffic_bytes(csr_)};
    });
  }
#endif

  /// make() as a shared matrix; with a key, the one made last for that key (any other key's matrix
  /// is freed first, so at most one cached matrix lives beside the benchmark's own).
  template <class M, class Make>
  std::shared_ptr<M> cached(const std::string& key, const Make& make) {
    if (key.empty()) return std::make_shared<M>(make());
    if (cached_key_ == key) return std::static_pointer_cast<M>(cached_matrix_);
    cached_matrix_.reset();
    cached_key_.clear();
    auto A = std::make_shared<M>(make());
    cached_matrix_ = A;
    cached_key_ = key;
    return A;
  }

  void add(const std::string& label, Builder build) {
    const std::string full = name_ + "/" + settings_.space + "/" + label;
    benchmark::RegisterBenchmark(full.c_str(),
                                 [this, full, build](benchmark::State& state) { bench(state, full, build); })
        ->UseManualTime()
        ->Iterations(settings_.iterations)
        ->Repetitions(settings_.repetitions)
        ->ComputeStatistics("min", [](const std::vector<double>& v) { return *std::min_element(v.begin(), v.end()); })
        ->ReportAggregatesOnly(true)
        ->Unit(benchmark::kMillisecond);
  }

  /// Builds the benchmark's matrix once (the previous one is freed first), checks y once, times.
  void bench(benchmark::State& state, const std::string& key, const Builder& build) {
    if (current_key_ != key) {
      current_.reset();
      current_key_ = key;
      try {
        current_ = std::make_unique<Prepared>(build());
      } catch (const std::exception& e) {
        current_error_ = std::string("could not prepare: ") + e.what();
        current_.reset();
      }
      if (current_) current_error_ = current_->check ? current_->check() : verify();
    }
    if (!current_) {
      state.SkipWithError(current_error_.c_str());
      return;
    }
    if (!current_error_.empty()) {
      state.SkipWithError(current_error_.c_str());
      return;
    }
    for (auto _ : state) {
      Exec().fence();
      Kokkos::Timer timer;
      current_->run();
      Exec().fence();
      state.SetIterationTime(timer.seconds());
    }
    const double bytes = current_->bytes;
    state.counters["GB/s"] = benchmark::Counter(bytes * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
    state.counters["GFLOP/s"] =
        benchmark::Counter(2.0 * host_.nnz() * current_->vectors * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
    state.counters["frac_copy_bw"] =
        benchmark::Counter(bytes / copy_bw_, benchmark::Counter::kIsIterationInvariantRate);
    state.counters["MB"] = benchmark::Counter(bytes * 1e-6);
    if (current_->vectors > 1 || key.find("/block/") != std::string::npos) {
      state.counters["vectors"] = current_->vectors;
      state.counters["ms_per_vector"] = benchmark::Counter(
          current_->vectors * 1e-3, benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
    }
  }

  /// Runs once (the benchmark's product, or `run`) into a NaN-poisoned y and compares with the host oracle;
  /// "" if right.
  std::string verify(const std::function<void()>& run = {}) {
    Kokkos::deep_copy(y_, std::numeric_limits<Scalar>::quiet_NaN());
    if (run) {
      run();
    } else {
      current_->run();
    }
    Exec().fence();
    auto hy = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), y_);
    for (int i = 0; i < host_.num_rows; ++i) {
      const double d = std::abs(static_cast<double>(hy(i)) - static_cast<double>(expected_(i)));
      if (!(d <= tol_)) {
        return "wrong result: y(" + std::to_string(i) + ") = " + std::to_string(hy(i)) + ", host oracle " +
               std::to_string(expected_(i));
      }
    }
    return "";
  }

  std::string name_;
  HostCsrMatrix<Scalar, int, std::size_t> host_;
  double copy_bw_;
  const Settings& settings_;
  Kokkos::View<Scalar*, Kokkos::HostSpace> hx_, expected_;
  double tol_ = 0;
  Vec x_, y_;
  CsrMatrix<Scalar, int, std::size_t, Exec> csr_;
  std::string current_key_, current_error_;
  std::unique_ptr<Prepared> current_;
  std::string cached_key_;
  std::shared_ptr<void> cached_matrix_;
};

template <class Exec, class Scalar>
int run_space(const Settings& settings) {
  const std::size_t copy_bytes =
      std::is_same_v<Exec, Kokkos::DefaultHostExecutionSpace> ? (std::size_t(1) << 29) : (std::size_t(1) << 31);
  const double copy_bw = measure_copy_bandwidth<Exec>(copy_bytes);
  benchmark::AddCustomContext("cispmv", configuration_string());
  benchmark::AddCustomContext("kokkos_kernels", kokkos_kernels_version());
  benchmark::AddCustomContext("device", std::is_same_v<Exec, Kokkos::DefaultHostExecutionSpace>
                                            ? std::string("host: ") + Exec::name()
                                            : device_name());
  benchmark::AddCustomContext("copy_bandwidth_GBps", std::to_string(copy_bw * 1e-9));
  benchmark::AddCustomContext("precision", settings.single ? "float" : "double");
  if (impl::is_gpu_space_v<Exec>) {
    const std::string cache = set_device_cache_config(settings.kokkos3_cache_config);
    if (!cache.empty()) {
      benchmark::AddCustomContext("cuda_device_cache_config", cache);
      std::cerr << "spmv_bench: CUDA device cache configuration: " << cache << "\n";
    }
  }
  std::cerr << "spmv_bench: " << configuration_string() << "\nspmv_bench: space " << Exec::name() << ", copy bandwidth "
            << copy_bw * 1e-9 << " GB/s (read + write of " << (copy_bytes >> 20) << " MiB)\n";
  if constexpr (!impl::is_gpu_space_v<Exec>) {  // csell's CPU walk (impl::host_simd) and how it reads a table here
    const auto t = impl::host_simd::table_read_times();
    std::cerr << "spmv_bench: csell's AVX-512 walk: "
              << (impl::host_simd::avx512_available()
                      ? "runs; table read by " +
                            std::string(impl::host_simd::table_gathers_pay() ? "gathers" : "loads") +
                            " (trial: gathers " + std::to_string(t.gather * 1e6) + " us, loads " +
                            std::to_string(t.loads * 1e6) + " us); values " +
                            (impl::host_simd::values_inline_pays() ? "inline" : "in a table") + " by default"
                      : std::string("not on this CPU (the portable loop)"))
              << "\n";
  }
  benchmark::ConsoleReporter console;
  for (const auto& m : settings.matrices) {
    std::string description;
    Kokkos::Timer t;
    HostCsr A;
    std::ifstream probe(m);
    std::shared_ptr<const ci::FciDump> dump;  // a CI Hamiltonian's integrals and space (for ci-factored)
    std::shared_ptr<const ci::DeterminantSpace> space;
    if (ci::is_hamiltonian_spec(m)) {  // a real CI Hamiltonian, built here
      const auto spec = ci::parse_hamiltonian_spec(m);
      dump = std::make_shared<const ci::FciDump>(ci::read_fcidump(spec.fcidump));
      space = std::make_shared<const ci::DeterminantSpace>(
          ci::make_determinant_space(*dump, spec.level, spec.restrict_to_isym));
      A = ci::build_hamiltonian(*dump, *space);
    } else if (probe.good()) {
      A = read_matrix(m);
    } else {
      A = generate_suite_matrix(m, true);
    }
    std::cerr << "spmv_bench: matrix " << m << ": " << A.num_rows << " rows, " << A.nnz() << " nonzeros ("
              << t.seconds() << " s)\n";
    std::string name = m.substr(m.find_last_of('/') + 1);
    if (ci::is_hamiltonian_spec(m)) {  // fcidump:dir/h2o.fcidump:10 -> h2o.fcidump-10
      const auto spec = ci::parse_hamiltonian_spec(m);
      name = spec.fcidump.substr(spec.fcidump.find_last_of('/') + 1) + "-" + std::to_string(spec.level) +
             (spec.restrict_to_isym ? "" : "-all-irreps");
    }
    {
      Suite<Exec, Scalar> suite(
          name,
          [&] {
            if constexpr (std::is_same_v<Scalar, double>) {
              return A;
            } else {
              return cast_values<float>(A);
            }
          }(),
          copy_bw, settings);
      A = HostCsr();  // free the double copy before building formats
      suite.register_all();
      // double only: the multi-vector suite is for the eigensolver, which runs in double (and each
      // precision doubles what a CUDA build of this file compiles)
      if constexpr (std::is_same_v<Scalar, double>) {
        if (dump) suite.register_factored(dump, space);
        if (!settings.vectors.empty()) suite.register_blocks();
      } else if (!settings.vectors.empty()) {
        std::cerr << "spmv_bench: --vectors runs in double only; ignored with --float\n";
      }
      suite.run_registered(&console);
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char* argv[]) {
  Kokkos::ScopeGuard kokkos(argc, argv);
  Settings settings;
  std::vector<char*> rest{argv[0]};
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::cerr << "spmv_bench: " << a << " needs a value\n";
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--matrix")
      settings.matrices.push_back(value());
    else if (a == "--space")
      settings.space = value();
    else if (a == "--float")
      settings.single = true;
    else if (a == "--sweep")
      settings.sweep = true;
    else if (a == "--iterations")
      settings.iterations = std::stoi(value());
    else if (a == "--repetitions")
      settings.repetitions = std::stoi(value());
    else if (a == "--out-dir")
      settings.out_dir = value();
    else if (a == "--kokkos3-cache-config")
      settings.kokkos3_cache_config = true;
    else if (a == "--vectors") {
      std::stringstream list(value());
      for (std::string k; std::getline(list, k, ',');) {
        const int v = std::atoi(k.c_str());
        if (v < 1 || v > 256) {
          std::cerr << "spmv_bench: --vectors takes block widths 1..256 separated by commas, got '" << k << "'\n";
          return 2;
        }
        settings.vectors.push_back(v);
      }
    } else
      rest.push_back(argv[i]);
  }
  if (settings.matrices.empty()) settings.matrices.push_back("paper32k-1");
  if (settings.space != "device" && settings.space != "host") {
    std::cerr << "spmv_bench: --space is device or host\n";
    return 2;
  }
  int rest_argc = static_cast<int>(rest.size());
  benchmark::Initialize(&rest_argc, rest.data());
  if (benchmark::ReportUnrecognizedArguments(rest_argc, rest.data())) return 2;
  try {
    if (settings.space == "host") {
      return settings.single ? run_space<Kokkos::DefaultHostExecutionSpace, float>(settings)
                             : run_space<Kokkos::DefaultHostExecutionSpace, double>(settings);
    }
    return settings.single ? run_space<Kokkos::DefaultExecutionSpace, float>(settings)
                           : run_space<Kokkos::DefaultExecutionSpace, double>(settings);
  } catch (const std::exception& e) {
    std::cerr << "spmv_bench: error: " << e.what() << "\n";
    return 1;
  }
}
