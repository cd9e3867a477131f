// `cispmv run`: the main job. Builds every format of one matrix, prints the paper's reports
// (Tables 3-5 style), times every kernel on the default execution space against Kokkos Kernels
// (Table 9 style) and checks every result against the host reference.
#include "commands.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cispmv/cispmv.hpp"
#include "cispmv/generator.hpp"
#include "cispmv/info.hpp"
#include "cispmv/io.hpp"

#include <algorithm>
#include <chrono>
#include <fstream>
#include <iostream>
#include <optional>
#include <stdexcept>
#include <vector>

namespace cispmv::app {

namespace {

using Exec = Kokkos::DefaultExecutionSpace;

struct KernelResult {
  std::string format, kernel;
  double median_ms = 0, min_ms = 0, gbytes_per_s = 0, gflops = 0, speedup_vs_kk = 0;
  double max_abs_error = 0, tolerance = 0;
  bool pass = false;
};

struct MemoryRow {
  std::string format;
  std::size_t paper_bytes = 0, allocated = 0;
  std::string note;
};

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

/// Median (and minimum) wall time of `fn` in ms over `reps` fenced runs, after one warm-up run.
template <class F>
std::pair<double, double> time_median_ms(const Exec& exec, int reps, F&& fn) {
  fn();
  exec.fence();
  std::vector<double> t(reps);
  for (int i = 0; i < reps; ++i) {
    exec.fence();
    Kokkos::Timer timer;
    fn();
    exec.fence();
    t[i] = timer.seconds() * 1e3;
  }
  std::sort(t.begin(), t.end());
  return {t[reps / 2], t.front()};
}

template <class Scalar>
struct Runner {
  const RunOptions& opt;
  HostCsrMatrix<Scalar, int, std::size_t> host;
  Kokkos::View<Scalar*, Kokkos::HostSpace> hx, expected;
  Kokkos::View<Scalar*, Exec::memory_space> x, y;
  double tol = 0;
  double kk_ms = 0;
  std::vector<KernelResult> results;
  std::vector<MemoryRow> memory;

  void prepare() {
    hx = Kokkos::View<Scalar*, Kokkos::HostSpace>("x", host.num_cols);
    for (int i = 0; i < host.num_cols; ++i) hx(i) = static_cast<Scalar>(1.0 + ((i * 7919) % 101) / 101.0);
    expected = Kokkos::View<Scalar*, Kokkos::HostSpace>("expected", host.num_rows);
    reference_spmv(Scalar(1), host, hx, Scalar(0), expected);
    tol = spmv_tolerance(host, hx);
    x = Kokkos::create_mirror_view_and_copy(Exec::memory_space(), hx);
    y = Kokkos::View<Scalar*, Exec::memory_space>("y", host.num_rows);
  }

  void check(KernelResult& r) {
    auto hy = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), y);
    double err = 0;
    bool finite = true;
    for (int i = 0; i < host.num_rows; ++i) {
      const double d = std::abs(static_cast<double>(hy(i)) - static_cast<double>(expected(i)));
      finite = finite && std::isfinite(d);
      err = std::max(err, d);
    }
    r.max_abs_error = err;
    r.tolerance = tol;
    r.pass = finite && err <= tol;
  }

  template <class DeviceMatrix, class Fn>
  void time_kernel(const std::string& format, const std::string& kernel, const DeviceMatrix& A, Fn&& fn) {
    KernelResult r;
    r.format = format;
    r.kernel = kernel;
    Kokkos::deep_copy(y, std::numeric_limits<Scalar>::quiet_NaN());  // every row must be written
    fn();
    Exec().fence();
    check(r);
    const auto [median, best] = time_median_ms(Exec(), opt.repetitions, fn);
    r.median_ms = median;
    r.min_ms = best;
    r.gbytes_per_s = spmv_traffic_bytes(A) / (median * 1e-3) / 1e9;
    r.gflops = 2.0 * static_cast<double>(host.nnz()) / (median * 1e-3) / 1e9;
    if (format == "kokkos-kernels") kk_ms = median;
    r.speedup_vs_kk = kk_ms > 0 ? kk_ms / median : 0;
    std::cerr << fmt::format("  {:<16} {:<7} {:>10.4f} ms  {}\n", format, kernel, median, r.pass ? "PASS" : "FAIL");
    results.push_back(r);
  }

  bool wants(const std::string& format) const {
    return opt.formats.empty() || std::find(opt.formats.begin(), opt.formats.end(), format) != opt.formats.end();
  }
  bool wants_kernel(Kernel k) const {
    return opt.kernels.empty() ||
           std::find(opt.kernels.begin(), opt.kernels.end(), std::string(kernel_name(k))) != opt.kernels.end();
  }

  /// Builds one format on the host, moves it to the device, times its kernels, frees it.
  template <class HostFormat>
  void run_format(const HostFormat& hf, const std::string& note, std::initializer_list<Kernel> kernels) {
    const std::string name = HostFormat::format_name;
    MemoryRow m{name, paper_model_bytes(hf), allocated_bytes(hf), note};
    memory.push_back(m);
    decltype(to_device<Exec>(hf)) A;
    try {
      A = to_device<Exec>(hf);
    } catch (const std::runtime_error& e) {
      throw std::runtime_error(fmt::format("cannot put the {} format ({:.1f} MiB) on {}: {}", name,
                                           to_mib(m.allocated), Exec::name(), e.what()));
    }
    for (Kernel k : kernels) {
      if (!wants_kernel(k)) continue;
      SpmvOptions o;
      o.kernel = k;
      o.rows_per_team = opt.rows_per_team;
      time_kernel(name, kernel_name(k), A, [&] { spmv(Exec(), Scalar(1), A, x, Scalar(0), y, o); });
    }
  }

  void run_all(int boundary) {
    const std::string off = fmt::format("offsets {}-byte (paper: 4)", sizeof(std::size_t));
    if (opt.baseline) {
      const auto A = to_device<Exec>(host);
      const auto K = as_kokkos_kernels(A);
      time_kernel("kokkos-kernels", "native", A, [&] { kokkos_kernels_spmv(Exec(), Scalar(1), K, x, Scalar(0), y); });
    }
    if (wants("csr")) run_format(host, off, {Kernel::scalar, Kernel::vector});
    if (wants("ell")) run_format(to_ell(host), "same as paper", {Kernel::scalar});
    if (wants("ellr")) run_format(to_ellr(host), "+ row lengths (not in the ELL formula)", {Kernel::scalar, Kernel::vector});
    if (wants("sell")) {
      run_format(to_sliced_ell(host, opt.slice_height), "+ slice offsets", {Kernel::scalar});
    }
    if (wants("sellr")) {
      run_format(to_sliced_ellr(host, opt.slice_height), "+ slice offsets, row lengths", {Kernel::scalar, Kernel::vector});
    }
    if (wants("hybrid")) {
      run_format(to_hybrid(host, boundary), "2 per-row arrays (paper: 3); " + off, {Kernel::scalar, Kernel::vector});
    }
  }
};

void print_stats(std::ostream& out, const MatrixStats& s, const BoundaryChoice<int>& auto_choice, bool automatic) {
  out << "\nStatistics (paper Tables 3-4)\n";
  out << fmt::format("  {:<30} {} x {}\n", "rows x columns", s.rows, s.cols);
  out << fmt::format("  {:<30} {}\n", "nonzeros", s.nnz);
  out << fmt::format("  {:<30} {}{}\n", "BOUNDARY", s.boundary,
                     automatic ? (auto_choice.reference_detected
                                      ? fmt::format(" (automatic: reference region = first {} columns)",
                                                    auto_choice.reference_width)
                                      : std::string(" (automatic: shortest row; no reference region detected)"))
                               : std::string(" (given)"));
  out << fmt::format("  {:<30} {}\n", "reference-region nonzeros", s.ref_nnz);
  out << fmt::format("  {:<30} {}\n", "expansion-region nonzeros", s.exp_nnz);
  out << fmt::format("  {:<30} {} (row {})\n", "longest row", s.longest_row_length, s.longest_row);
  out << fmt::format("  {:<30} {:.1f} / {}\n", "mean / shortest row", s.mean_row_length, s.min_row_length);
  out << fmt::format("  {:<30} {} / {}\n", "rows past BOUNDARY / empty", s.rows_over_boundary, s.empty_rows);
  out << fmt::format("  {:<30} {:.6f} / {:.6f} / {:.6f}  (reference width {:g} columns)\n",
                     "sparsity reference/exp./total", s.ref_sparsity, s.exp_sparsity, s.total_sparsity,
                     s.reference_width);
}

}  // namespace

HostCsr load_matrix(const std::string& name_or_path, std::string& description) {
  const auto t0 = std::chrono::steady_clock::now();
  std::ifstream probe(name_or_path);
  if (probe.good()) {
    probe.close();
    HostCsr A = read_matrix(name_or_path);
    description = fmt::format("{} (read in {:.1f} s)", name_or_path, seconds_since(t0));
    return A;
  }
  const auto names = suite_names();
  const bool looks_like_suite = name_or_path.rfind("paper32k-", 0) == 0 || name_or_path.rfind("scaled-", 0) == 0;
  if (!looks_like_suite) {
    throw std::invalid_argument("'" + name_or_path + "' is neither a readable file nor a suite matrix (" +
                                "paper32k-1..paper32k-10, scaled-<rows>; `cispmv generate --list`)");
  }
  HostCsr A = generate_suite_matrix(name_or_path, true);
  description = fmt::format("{} (generated in {:.1f} s)", name_or_path, seconds_since(t0));
  return A;
}

int run_command(const RunOptions& opt, std::ostream& out) {
  if (opt.repetitions < 1) throw std::invalid_argument("--repetitions must be >= 1");
  std::string description;
  HostCsr A = load_matrix(opt.matrix, description);
  validate(A);

  const auto auto_choice = choose_boundary(A);
  const int boundary = opt.boundary >= 0 ? opt.boundary : auto_choice.boundary;
  if (boundary > A.num_cols) {
    throw std::invalid_argument(fmt::format("BOUNDARY = {} is outside [0, {}] (the number of columns)", boundary,
                                            A.num_cols));
  }
  const double ref_width = auto_choice.reference_width;
  const MatrixStats stats = compute_stats(A, boundary, ref_width);

  out << configuration_string() << "\n" << "device: " << device_name() << "\n";
  out << "matrix: " << description << "\n";
  print_stats(out, stats, auto_choice, opt.boundary < 0);

  std::vector<KernelResult> results;
  std::vector<MemoryRow> memory;
  auto go = [&](auto runner) {
    runner.prepare();
    std::cerr << "timing on " << Exec::name() << " (" << opt.repetitions << " repetitions each):\n";
    runner.run_all(boundary);
    results = runner.results;
    memory = runner.memory;
  };
  if (opt.single_precision) {
    go(Runner<float>{opt, cast_values<float>(A)});
  } else {
    go(Runner<double>{opt, A});
  }

  out << "\nMemory (paper Table 5; MiB = 2^20 bytes)\n";
  out << fmt::format("  {:<8} {:>14} {:>14}  {}\n", "format", "paper formula", "allocated", "why they differ");
  for (const auto& m : memory) {
    out << fmt::format("  {:<8} {:>14.2f} {:>14.2f}  {}\n", m.format, to_mib(m.paper_bytes), to_mib(m.allocated),
                       m.paper_bytes == m.allocated ? std::string("-") : m.note);
  }

  out << fmt::format("\nSpMV y = A*x on {} ({}; median of {} runs; paper Table 9)\n", Exec::name(),
                     opt.single_precision ? "float" : "double", opt.repetitions);
  out << fmt::format("  {:<16} {:<7} {:>10} {:>9} {:>9} {:>8}  {}\n", "format", "kernel", "time (ms)", "GB/s",
                     "GFLOP/s", "vs KK", "check against the host reference");
  bool all_pass = true;
  for (const auto& r : results) {
    all_pass = all_pass && r.pass;
    out << fmt::format("  {:<16} {:<7} {:>10.4f} {:>9.1f} {:>9.2f} {:>7.2f}x  {} (max |error| {:.2e}, tol {:.2e})\n",
                       r.format, r.kernel, r.median_ms, r.gbytes_per_s, r.gflops, r.speedup_vs_kk,
                       r.pass ? "PASS" : "FAIL", r.max_abs_error, r.tolerance);
  }
  out << "  GB/s counts each format's arrays + x + y once (spmv_traffic_bytes in include/cispmv/stats.hpp)\n";
  out << (all_pass ? "all kernels PASS\n" : "some kernels FAIL\n");

  if (!opt.json.empty()) {
    nlohmann::json j;
    j["configuration"] = configuration_string();
    j["device"] = device_name();
    j["matrix"] = opt.matrix;
    j["precision"] = opt.single_precision ? "float" : "double";
    j["repetitions"] = opt.repetitions;
    j["stats"] = {{"rows", stats.rows}, {"cols", stats.cols}, {"nnz", stats.nnz}, {"boundary", stats.boundary},
                  {"ref_nnz", stats.ref_nnz}, {"exp_nnz", stats.exp_nnz},
                  {"longest_row_length", stats.longest_row_length}, {"longest_row", stats.longest_row},
                  {"mean_row_length", stats.mean_row_length}, {"min_row_length", stats.min_row_length},
                  {"reference_width", stats.reference_width}, {"ref_sparsity", stats.ref_sparsity},
                  {"exp_sparsity", stats.exp_sparsity}, {"total_sparsity", stats.total_sparsity}};
    for (const auto& m : memory) {
      j["memory"].push_back({{"format", m.format}, {"paper_bytes", m.paper_bytes}, {"allocated_bytes", m.allocated}});
    }
    for (const auto& r : results) {
      j["kernels"].push_back({{"format", r.format}, {"kernel", r.kernel}, {"median_ms", r.median_ms},
                              {"min_ms", r.min_ms}, {"gbytes_per_s", r.gbytes_per_s}, {"gflops", r.gflops},
                              {"speedup_vs_kokkos_kernels", r.speedup_vs_kk}, {"max_abs_error", r.max_abs_error},
                              {"tolerance", r.tolerance}, {"pass", r.pass}});
    }
    if (opt.json == "-") {
      std::cout << j.dump(2) << "\n";
    } else {
      std::ofstream f(opt.json);
      if (!(f << j.dump(2) << "\n")) throw std::runtime_error("cannot write " + opt.json);
    }
  }
  return all_pass ? 0 : 1;
}

}  // namespace cispmv::app
