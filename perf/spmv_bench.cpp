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
// (set_device_cache_config; --kokkos3-cache-config keeps Kokkos 3's).
#include <benchmark/benchmark.h>
#include <Kokkos_Core.hpp>

#include "bench/register.hpp"
#include "cispmv/baselines/kokkos_kernels.hpp"
#include "cispmv/ci/hamiltonian.hpp"
#include "cispmv/cispmv.hpp"
#include "cispmv/generator.hpp"
#include "cispmv/info.hpp"
#include "cispmv/io.hpp"

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using namespace cispmv;
using namespace cispmv::bench;

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
      register_formats(suite);
      // double only: the multi-vector suite is for the eigensolver, which runs in double (and each
      // precision doubles what a CUDA build of this file compiles)
      if constexpr (std::is_same_v<Scalar, double>) {
        if (dump) register_factored(suite, dump, space);
        if (!settings.vectors.empty()) register_blocks(suite);
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
