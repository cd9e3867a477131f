#pragma once
// What `cispmv run` measured, and how it is printed (text) and written (JSON).

#include "commands.hpp"

#include "cispmv/boundary.hpp"
#include "cispmv/stats.hpp"

#include <cstddef>
#include <ostream>
#include <string>
#include <vector>

namespace cispmv::app {

/// One kernel's timing and check against the host oracle.
struct KernelResult {
  std::string format, kernel;
  std::string plan;  ///< the plan's description of the launch
  double median_ms = 0, min_ms = 0, gbytes_per_s = 0, gflops = 0, speedup_vs_kk = 0;
  double max_abs_error = 0, tolerance = 0;
  bool pass = false;
};

/// One format's memory: the paper's formula against the real allocation (Table 5).
struct MemoryRow {
  std::string format;
  std::size_t paper_bytes = 0, allocated = 0;
  std::string note;
};

/// Everything `cispmv run` reports.
struct RunReport {
  std::string configuration, device, execution_space, matrix, description;
  bool single_precision = false;
  int repetitions = 0;
  MatrixStats stats;
  BoundaryChoice<int> automatic_boundary;
  bool boundary_is_automatic = true;
  std::vector<MemoryRow> memory;
  std::vector<KernelResult> kernels;
  std::string automatic_choice;  ///< choose_format's summary
  std::string automatic_format, automatic_kernel;
  /// Formats not timed, each with why (e.g. ELLPACK's padding to the longest row does not fit).
  std::vector<std::string> skipped;
  bool all_pass() const;
};

/// The text report: statistics (Tables 3-4), memory (Table 5), timings (Table 9).
void print_report(std::ostream& out, const RunReport& report);
/// The same as JSON, to `path` ("-": standard output).
void write_json(const std::string& path, const RunReport& report);

}  // namespace cispmv::app
