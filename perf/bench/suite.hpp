#pragma once
// spmv_bench's suite (perf/spmv_bench.cpp says what the program does): one matrix's benchmarks, each built once,
// checked once against the host oracle into a NaN-poisoned result, then timed between fences; the registration
// API that perf/bench/register_*.cpp use; the JSON report per matrix.
#include <benchmark/benchmark.h>
#include <Kokkos_Core.hpp>

#include "cispmv/cispmv.hpp"
#include "cusparse_baseline.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace cispmv::bench {

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
/// (cudaFuncCachePreferNone); --kokkos3-cache-config keeps Kokkos 3's setting. Kokkos' own launches (cispmv's kernels,
/// Kokkos Kernels') set a preference per kernel at every launch, so this changes nothing for them. Returns what the
/// runs get, for the report.
inline std::string set_device_cache_config(bool keep_kokkos3) {
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

  // The registration API of the register_* functions (perf/bench/register_*.cpp).
  using Builder = std::function<Prepared()>;
  using HostMatrix = HostCsrMatrix<Scalar, int, std::size_t>;
  const HostMatrix& host() const { return host_; }
  const Settings& settings() const { return settings_; }
  const Vec& x() const { return x_; }
  const Vec& y() const { return y_; }
  const CsrMatrix<Scalar, int, std::size_t, Exec>& csr() const { return csr_; }

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

 private:
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

}  // namespace cispmv::bench
