#pragma once
// The subcommands of the `cispmv` program.

#include "cispmv/io.hpp"

#include <ostream>
#include <string>
#include <vector>

namespace cispmv::app {

struct RunOptions {
  std::string matrix = "paper32k-1";  ///< a .mtx / .cispmv file or a suite name
  std::vector<std::string> formats;   ///< empty: all
  std::vector<std::string> kernels;   ///< empty: all
  int boundary = -1;                  ///< -1: automatic (choose_boundary)
  int rows_per_team = 0;              ///< 0: the launch-parameter default
  int slice_height = 32;
  int repetitions = 20;
  bool baseline = true;  ///< time Kokkos Kernels spmv too
  bool single_precision = false;
  std::string json;  ///< file for machine-readable output ("-" = stdout)
};

/// A .mtx / .cispmv file, or a suite matrix generated on the fly; `description` says which.
HostCsr load_matrix(const std::string& name_or_path, std::string& description);

/// `cispmv run`; returns the process exit code (1 if any kernel's check failed).
int run_command(const RunOptions& options, std::ostream& out);

}  // namespace cispmv::app
