// `cispmv run`: the main job. Builds every format of one matrix (through the format registry), times
// every kernel on the default execution space against Kokkos Kernels (Table 9 style) and checks every
// result against the host oracle; run_report.cpp prints the paper's reports (Tables 3-5 style).
#include "commands.hpp"
#include "run_report.hpp"

#include <fmt/format.h>

#include "cispmv/choose_format.hpp"
#include "cispmv/cispmv.hpp"
#include "cispmv/memory_budget.hpp"
#if defined(CISPMV_HAS_KOKKOS_KERNELS)
#include "cispmv/baselines/kokkos_kernels.hpp"
#endif

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iostream>
#include <limits>
#include <new>
#include <sstream>
#include <stdexcept>
#include <vector>

namespace cispmv::app {

namespace {

using Exec = Kokkos::DefaultExecutionSpace;

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

/// Times every format and kernel of one matrix in precision Scalar.
template <class Scalar>
class Runner {
 public:
  Runner(const RunOptions& opt, HostCsrMatrix<Scalar, int, std::size_t> host) : opt_(opt), host_(std::move(host)) {
    hx_ = Kokkos::View<Scalar*, Kokkos::HostSpace>("x", host_.num_cols);
    for (int i = 0; i < host_.num_cols; ++i) hx_(i) = static_cast<Scalar>(1.0 + ((i * 7919) % 101) / 101.0);
    expected_ = Kokkos::View<Scalar*, Kokkos::HostSpace>("expected", host_.num_rows);
    host_oracle_spmv(Scalar(1), host_, hx_, Scalar(0), expected_);
    tol_ = spmv_tolerance(host_, hx_);
    x_ = Kokkos::create_mirror_view_and_copy(Exec::memory_space(), hx_);
    y_ = Kokkos::View<Scalar*, Exec::memory_space>("y", host_.num_rows);
    for (int r = 0; r < host_.num_rows; ++r)
      longest_row_ = std::max(longest_row_, host_.row_ptr(r + 1) - host_.row_ptr(r));
  }

  void run_all(int boundary, RunReport& report) {
    std::cerr << "timing on " << Exec::name() << " (" << opt_.repetitions << " repetitions each):\n";
    if (opt_.baseline) time_kokkos_kernels(report);
    auto params = FormatParams::for_space<Exec>();
    params.boundary = boundary;
    params.slice_height = opt_.slice_height;
    for (const FormatInfo& info : format_registry) {
      if (!wants(info.name)) continue;
      // a format whose padding does not fit is skipped with the reason, before it is built; the
      // others still run (one dense row makes ELLPACK rows x longest row x 12 bytes)
      const double need = estimated_bytes(info.format, params);
      const double host_have = static_cast<double>(host_available_bytes());
      const double device_have = static_cast<double>(available_bytes<Exec>());
      const bool on_host = Kokkos::SpaceAccessibility<Kokkos::HostSpace, Exec::memory_space>::accessible;
      if (need > 0.8 * host_have || (!on_host && need > 0.9 * device_have)) {
        const std::string why = fmt::format("{}: needs ~{} (padding to the longest row, {} nonzeros), {} available",
                                            info.name, format_bytes(need), longest_row_,
                                            format_bytes(on_host ? host_have : std::min(host_have, device_have)));
        std::cerr << "  skipped " << why << "\n";
        report.skipped.push_back(why);
        continue;
      }
      try {
        with_host_format(info.format, host_, params,
                         [&](const auto& host_format) { run_format(info, host_format, report); });
      } catch (const std::bad_alloc&) {
        const std::string why =
            fmt::format("{}: out of host memory while building it (~{})", info.name, format_bytes(need));
        std::cerr << "  skipped " << why << "\n";
        report.skipped.push_back(why);
      } catch (const std::invalid_argument& e) {  // a format that cannot hold this matrix, e.g. hybrid16's
        const std::string why = fmt::format("{}: {}", info.name, e.what());  // columns beyond 16 bits
        std::cerr << "  skipped " << why << "\n";
        report.skipped.push_back(why);
      }
    }
  }

  /// Bytes of a format of host_ before it is built: exact padding for the ELLPACK families (from
  /// the row lengths), nonzeros for the others (CSR, hybrid; csell stores fewer).
  double estimated_bytes(Format f, const FormatParams& params) const {
    const double rows = host_.num_rows, nnz = static_cast<double>(host_.nnz());
    const double entry = sizeof(Scalar) + sizeof(int);
    switch (f) {
      case Format::ell:
      case Format::ellr: return rows * static_cast<double>(longest_row_) * entry + rows * sizeof(int);
      case Format::sell:
      case Format::sellr:
      case Format::csell:
        return impl::padded_slots(host_, params.slice_height > 0 ? params.slice_height : 32) * entry +
               rows * 2 * sizeof(int);
      case Format::hybrid:
      case Format::hybrid16:  // the reference region pads every row to BOUNDARY (automatic: no padding)
        return (params.boundary > 0 ? rows * params.boundary * entry : 0.0) + nnz * entry + 3 * rows * sizeof(int);
      default: return nnz * entry + (rows + 1) * sizeof(std::size_t);
    }
  }

 private:
  void time_kokkos_kernels(RunReport& report) {
#if defined(CISPMV_HAS_KOKKOS_KERNELS)
    const auto A = to_device<Exec>(host_);
    const auto K = as_kokkos_kernels(A);
    time_kernel("kokkos-kernels", "native", "KokkosSparse::spmv", A, report,
                [&] { kokkos_kernels_spmv(Exec(), Scalar(1), K, x_, Scalar(0), y_); });
#else
    (void)report;
    std::cerr << "  (Kokkos Kernels baseline not built: CISPMV_ENABLE_KOKKOS_KERNELS=OFF)\n";
#endif
  }

  /// Builds one format on the host, moves it to the device, times its kernels, frees it.
  template <class HostFormat>
  void run_format(const FormatInfo& info, const HostFormat& hf, RunReport& report) {
    const MemoryRow m{info.name, paper_model_bytes(hf), allocated_bytes(hf), info.memory_note};
    report.memory.push_back(m);
    decltype(to_device<Exec>(hf)) A;
    try {
      A = to_device<Exec>(hf);
    } catch (const std::runtime_error& e) {
      throw std::runtime_error(fmt::format("cannot put the {} format ({:.1f} MiB) on {}: {}", info.name,
                                           to_mib(m.allocated), Exec::name(), e.what()));
    }
    for (Kernel k : format_kernels(info.format)) {
      if (!wants_kernel(k)) continue;
      SpmvOptions o;
      o.kernel = k;
      o.rows_per_team = opt_.rows_per_team;
      const auto plan = make_spmv_plan(Exec(), A, o);
      time_kernel(info.name, kernel_name(k), plan.description(), A, report,
                  [&] { plan.apply(Scalar(1), x_, Scalar(0), y_); });
    }
  }

  template <class DeviceMatrix, class Fn>
  void time_kernel(const std::string& format, const std::string& kernel, const std::string& plan, const DeviceMatrix& A,
                   RunReport& report, Fn&& fn) {
    KernelResult r;
    r.format = format;
    r.kernel = kernel;
    r.plan = plan;
    Kokkos::deep_copy(y_, std::numeric_limits<Scalar>::quiet_NaN());  // every row must be written
    fn();
    Exec().fence();
    check(r);
    const auto [median, best] = time_median_ms(Exec(), opt_.repetitions, fn);
    r.median_ms = median;
    r.min_ms = best;
    r.gbytes_per_s = spmv_traffic_bytes(A) / (median * 1e-3) / 1e9;
    r.gflops = 2.0 * static_cast<double>(host_.nnz()) / (median * 1e-3) / 1e9;
    if (format == "kokkos-kernels") kk_ms_ = median;
    r.speedup_vs_kk = kk_ms_ > 0 ? kk_ms_ / median : 0;
    std::cerr << fmt::format("  {:<16} {:<7} {:>10.4f} ms  {}\n", format, kernel, median, r.pass ? "PASS" : "FAIL");
    report.kernels.push_back(r);
  }

  void check(KernelResult& r) const {
    auto hy = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), y_);
    double err = 0;
    bool finite = true;
    for (int i = 0; i < host_.num_rows; ++i) {
      const double d = std::abs(static_cast<double>(hy(i)) - static_cast<double>(expected_(i)));
      finite = finite && std::isfinite(d);
      err = std::max(err, d);
    }
    r.max_abs_error = err;
    r.tolerance = tol_;
    r.pass = finite && err <= tol_;
  }

  bool wants(const std::string& format) const {
    return opt_.formats.empty() || std::find(opt_.formats.begin(), opt_.formats.end(), format) != opt_.formats.end();
  }
  bool wants_kernel(Kernel k) const {
    return opt_.kernels.empty() ||
           std::find(opt_.kernels.begin(), opt_.kernels.end(), std::string(kernel_name(k))) != opt_.kernels.end();
  }

  const RunOptions& opt_;
  HostCsrMatrix<Scalar, int, std::size_t> host_;
  Kokkos::View<Scalar*, Kokkos::HostSpace> hx_, expected_;
  Kokkos::View<Scalar*, Exec::memory_space> x_, y_;
  double tol_ = 0;
  double kk_ms_ = 0;
  std::size_t longest_row_ = 0;
};

}  // namespace

int run_command(const RunOptions& opt, std::ostream& text_out) {
  if (opt.repetitions < 1 || opt.repetitions > max_repetitions) {
    throw std::invalid_argument(fmt::format("--repetitions must be in 1..{}", max_repetitions));
  }
  if (opt.rows_per_team > max_rows_per_team) {
    throw std::invalid_argument(fmt::format("--rows-per-team must be in 1..{}", max_rows_per_team));
  }
  if (opt.slice_height < 1 || opt.slice_height > max_slice_height) {
    throw std::invalid_argument(fmt::format("--slice-height must be in 1..{}", max_slice_height));
  }
  for (const auto& f : opt.formats) parse_format(f);  // unknown names throw, listing the known ones
  // something to time: a format asked for without any of the kernels asked for is an error, not a
  // silent "all kernels PASS"
  for (const auto& info : format_registry) {
    if (!opt.formats.empty() && std::find(opt.formats.begin(), opt.formats.end(), info.name) == opt.formats.end()) {
      continue;
    }
    bool any = opt.kernels.empty();
    for (Kernel k : format_kernels(info.format)) {
      any = any || std::find(opt.kernels.begin(), opt.kernels.end(), kernel_name(k)) != opt.kernels.end();
    }
    if (!any && !opt.formats.empty()) {
      std::string have;
      for (Kernel k : format_kernels(info.format)) have += (have.empty() ? "" : ", ") + std::string(kernel_name(k));
      throw std::invalid_argument(
          fmt::format("format '{}' has none of the kernels asked for (it has: {})", info.name, have));
    }
  }
  // --json: a file that cannot be written fails now, not after the run; '-' sends the JSON alone to
  // stdout (the text report is then not printed, so that stdout stays valid JSON)
  if (!opt.json.empty() && opt.json != "-") {
    std::ofstream probe(opt.json, std::ios::app);
    if (!probe) throw std::runtime_error("cannot write the --json file " + opt.json);
  }
  std::ostringstream discard;
  std::ostream& out = opt.json == "-" ? static_cast<std::ostream&>(discard) : text_out;
  RunReport report;
  HostCsr A = load_matrix(opt.matrix, report.description);
  validate(A);
  // x, y and the oracle's vectors before they are allocated (a 104-byte file may announce 2^31 columns)
  {
    const double scalar = opt.single_precision ? sizeof(float) : sizeof(double);
    const double vectors = 2.0 * (static_cast<double>(A.num_cols) + 2.0 * A.num_rows) * scalar;
    const double have = static_cast<double>(std::min(host_available_bytes(), available_bytes<Exec>()));
    if (vectors > 0.8 * have) {
      throw std::invalid_argument(fmt::format("{}: {} x {}: the vectors x and y alone need {}, {} are available",
                                              opt.matrix, A.num_rows, A.num_cols, format_bytes(vectors),
                                              format_bytes(have)));
    }
  }
  // --float: values beyond float's range would become infinities; refused up front
  if (opt.single_precision) {
    for (std::size_t k = 0; k < A.nnz(); ++k) {
      if (std::abs(A.values(k)) > static_cast<double>(std::numeric_limits<float>::max())) {
        throw std::invalid_argument(fmt::format(
            "--float: the value {} of {} is beyond the range of float; run in double", A.values(k), opt.matrix));
      }
    }
  }

  report.automatic_boundary = choose_boundary(A);
  report.boundary_is_automatic = opt.boundary < 0;
  const int boundary = opt.boundary >= 0 ? opt.boundary : report.automatic_boundary.boundary;
  check_boundary(boundary, A);
  report.stats = compute_stats(A, boundary, report.automatic_boundary.reference_width);
  const FormatChoice choice = choose_format<Exec>(A, opt.slice_height);
  report.automatic_choice = choice.summary();
  report.automatic_format = format_info(choice.format).name;
  report.automatic_kernel = kernel_name(choice.kernel);
  report.configuration = configuration_string();
  report.device = device_name();
  report.execution_space = Exec::name();
  report.matrix = opt.matrix;
  report.single_precision = opt.single_precision;
  report.repetitions = opt.repetitions;

  if (opt.single_precision) {
    Runner<float>(opt, cast_values<float>(A)).run_all(boundary, report);
  } else {
    Runner<double>(opt, A).run_all(boundary, report);
  }
  print_report(out, report);
  if (!opt.json.empty()) write_json(opt.json, report);
  return report.all_pass() ? 0 : 1;
}

}  // namespace cispmv::app
