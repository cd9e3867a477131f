// Printing and JSON of `cispmv run` (the measurements are taken in run.cpp).
#include "run_report.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cispmv/memory_model.hpp"

#include <fstream>
#include <iostream>
#include <stdexcept>

namespace cispmv::app {

namespace {

void print_stats(std::ostream& out, const RunReport& r) {
  const MatrixStats& s = r.stats;
  const auto& choice = r.automatic_boundary;
  out << "\nStatistics (paper Tables 3-4)\n";
  out << fmt::format("  {:<30} {} x {}\n", "rows x columns", s.rows, s.cols);
  out << fmt::format("  {:<30} {}\n", "nonzeros", s.nnz);
  out << fmt::format(
      "  {:<30} {}{}\n", "BOUNDARY", s.boundary,
      r.boundary_is_automatic
          ? (choice.reference_detected
                 ? fmt::format(" (automatic: reference region = first {} columns)", choice.reference_width)
                 : std::string(" (automatic: shortest row; no reference region detected)"))
          : std::string(" (given)"));
  out << fmt::format("  {:<30} {}\n", "reference-region nonzeros", s.reference_nnz);
  out << fmt::format("  {:<30} {}\n", "expansion-region nonzeros", s.expansion_nnz);
  out << fmt::format("  {:<30} {} (row {})\n", "longest row", s.longest_row_length, s.longest_row);
  out << fmt::format("  {:<30} {:.1f} / {}\n", "mean / shortest row", s.mean_row_length, s.min_row_length);
  out << fmt::format("  {:<30} {} / {}\n", "rows past BOUNDARY / empty", s.rows_over_boundary, s.empty_rows);
  out << fmt::format("  {:<30} {:.6f} / {:.6f} / {:.6f}  (reference width {:g} columns)\n",
                     "sparsity reference/exp./total", s.reference_sparsity, s.expansion_sparsity, s.total_sparsity,
                     s.reference_width);
}

void print_memory(std::ostream& out, const RunReport& r) {
  out << "\nMemory (paper Table 5; MiB = 2^20 bytes)\n";
  out << fmt::format("  {:<8} {:>14} {:>14}  {}\n", "format", "paper formula", "allocated", "why they differ");
  for (const auto& m : r.memory) {
    out << fmt::format("  {:<8} {:>14.2f} {:>14.2f}  {}\n", m.format, to_mib(m.paper_bytes), to_mib(m.allocated),
                       m.paper_bytes == m.allocated ? std::string("-") : m.note);
  }
}

void print_timings(std::ostream& out, const RunReport& r) {
  out << fmt::format("\nSpMV y = A*x on {} ({}; median of {} runs; paper Table 9)\n", r.execution_space,
                     r.single_precision ? "float" : "double", r.repetitions);
  out << fmt::format("  {:<16} {:<7} {:>10} {:>9} {:>9} {:>8}  {}\n", "format", "kernel", "time (ms)", "GB/s",
                     "GFLOP/s", "vs KK", "check against the host oracle");
  for (const auto& k : r.kernels) {
    out << fmt::format("  {:<16} {:<7} {:>10.4f} {:>9.1f} {:>9.2f} {:>7.2f}x  {} (max |error| {:.2e}, tol {:.2e})\n",
                       k.format, k.kernel, k.median_ms, k.gbytes_per_s, k.gflops, k.speedup_vs_kk,
                       k.pass ? "PASS" : "FAIL", k.max_abs_error, k.tolerance);
  }
  out << "  GB/s counts each format's arrays + x + y once (spmv_traffic_bytes in include/cispmv/stats.hpp)\n";
  out << "automatic choice: " << r.automatic_choice << "\n";
  double best = 0, chosen = 0;
  std::string best_name;
  for (const auto& k : r.kernels) {
    if (k.format == "kokkos-kernels") continue;
    if (best == 0 || k.median_ms < best) best = k.median_ms, best_name = k.format + " " + k.kernel;
    if (k.format == r.automatic_format && k.kernel == r.automatic_kernel) chosen = k.median_ms;
  }
  if (chosen > 0) {
    out << fmt::format("  the choice ran in {:.4f} ms; the fastest here, {}, in {:.4f} ms ({:.1f} % slower)\n", chosen,
                       best_name, best, 100.0 * (chosen / best - 1.0));
  }
  for (const auto& why : r.skipped) out << "skipped: " << why << "\n";
  out << (r.all_pass() ? "all kernels PASS" : "some kernels FAIL")
      << (r.skipped.empty() ? "" : " (" + std::to_string(r.skipped.size()) + " format(s) skipped)") << "\n";
}

}  // namespace

bool RunReport::all_pass() const {
  for (const auto& k : kernels) {
    if (!k.pass) return false;
  }
  return true;
}

void print_report(std::ostream& out, const RunReport& r) {
  out << r.configuration << "\n"
      << "device: " << r.device << "\n";
  out << "matrix: " << r.description << "\n";
  print_stats(out, r);
  print_memory(out, r);
  print_timings(out, r);
}

void write_json(const std::string& path, const RunReport& r) {
  const MatrixStats& s = r.stats;
  nlohmann::json j;
  j["configuration"] = r.configuration;
  j["device"] = r.device;
  j["matrix"] = r.matrix;
  j["precision"] = r.single_precision ? "float" : "double";
  j["repetitions"] = r.repetitions;
  j["automatic_choice"] = {
      {"format", r.automatic_format}, {"kernel", r.automatic_kernel}, {"summary", r.automatic_choice}};
  j["stats"] = {{"rows", s.rows},
                {"cols", s.cols},
                {"nnz", s.nnz},
                {"boundary", s.boundary},
                {"reference_nnz", s.reference_nnz},
                {"expansion_nnz", s.expansion_nnz},
                {"longest_row_length", s.longest_row_length},
                {"longest_row", s.longest_row},
                {"mean_row_length", s.mean_row_length},
                {"min_row_length", s.min_row_length},
                {"reference_width", s.reference_width},
                {"reference_sparsity", s.reference_sparsity},
                {"expansion_sparsity", s.expansion_sparsity},
                {"total_sparsity", s.total_sparsity}};
  j["skipped"] = r.skipped;
  for (const auto& m : r.memory) {
    j["memory"].push_back({{"format", m.format}, {"paper_bytes", m.paper_bytes}, {"allocated_bytes", m.allocated}});
  }
  for (const auto& k : r.kernels) {
    j["kernels"].push_back({{"format", k.format},
                            {"kernel", k.kernel},
                            {"plan", k.plan},
                            {"median_ms", k.median_ms},
                            {"min_ms", k.min_ms},
                            {"gbytes_per_s", k.gbytes_per_s},
                            {"gflops", k.gflops},
                            {"speedup_vs_kokkos_kernels", k.speedup_vs_kk},
                            {"max_abs_error", k.max_abs_error},
                            {"tolerance", k.tolerance},
                            {"pass", k.pass}});
  }
  if (path == "-") {
    std::cout << j.dump(2) << "\n";
    return;
  }
  std::ofstream f(path);
  if (!(f << j.dump(2) << "\n")) throw std::runtime_error("cannot write " + path);
}

}  // namespace cispmv::app
