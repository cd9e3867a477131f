// The `cispmv` program: the main job (`run`), the matrix tools (`generate`, `stats`, `convert`) and
// CI Hamiltonians from FCIDUMP files (`ci`).
#include <CLI/CLI.hpp>
#include <Kokkos_Core.hpp>
#include <fmt/format.h>

#include "commands.hpp"
#include "cispmv/ci.hpp"
#include "cispmv/convert.hpp"
#include "cispmv/generator.hpp"
#include "cispmv/io.hpp"
#include "cispmv/stats.hpp"
#include "cispmv/version.hpp"

#include <exception>
#include <iostream>

namespace {

using namespace cispmv;

int stats_command(const std::string& matrix, int boundary_opt) {
  std::string description;
  const HostCsr A = app::load_matrix(matrix, description);
  validate(A);
  const auto choice = choose_boundary(A);
  const int boundary = boundary_opt >= 0 ? boundary_opt : choice.boundary;
  const auto s = compute_stats(A, boundary, choice.reference_width);
  const PaperMemoryModel paper;
  std::cout << "matrix: " << description << "\n";
  std::cout << fmt::format("rows {} cols {} nnz {}\n", s.rows, s.cols, s.nnz);
  std::cout << fmt::format("BOUNDARY {} ({}), reference width {} columns{}\n", boundary,
                           boundary_opt >= 0 ? "given" : "automatic", choice.reference_width,
                           choice.reference_detected ? "" : " (no reference region detected)");
  std::cout << fmt::format("reference nnz {} expansion nnz {} longest row {} (row {}) mean row {:.2f} shortest row {}\n",
                           s.ref_nnz, s.exp_nnz, s.longest_row_length, s.longest_row, s.mean_row_length,
                           s.min_row_length);
  std::cout << fmt::format("sparsity reference {:.6f} expansion {:.6f} total {:.6f}\n", s.ref_sparsity,
                           s.exp_sparsity, s.total_sparsity);
  std::cout << fmt::format("paper memory model (MiB): csr {:.2f} ell {:.2f} hybrid {:.2f}\n",
                           to_mib(paper.csr(s.rows, s.nnz)), to_mib(paper.ell(s.rows, s.longest_row_length)),
                           to_mib(paper.hybrid(s.rows, boundary, s.exp_nnz)));
  return 0;
}

}  // namespace

int main(int argc, char* argv[]) {
  Kokkos::ScopeGuard kokkos(argc, argv);
  CLI::App cli{"cispmv " CISPMV_VERSION_STRING
               ": SpMV for Configuration Interaction matrices (Mahmoud, Hoffmann, Reza 2018) on Kokkos"};
  cli.require_subcommand(1);

  app::RunOptions run;
  auto* run_cmd = cli.add_subcommand("run", "main job: every format and kernel on one matrix, with the paper's reports");
  run_cmd->add_option("matrix", run.matrix, "a .mtx or .cispmv file, or a suite name (default paper32k-1)");
  run_cmd->add_option("--formats", run.formats, "formats to run: csr ell ellr sell sellr hybrid (default: all)")
      ->check(CLI::IsMember({"csr", "ell", "ellr", "sell", "sellr", "hybrid"}))
      ->delimiter(',');
  run_cmd->add_option("--kernels", run.kernels, "kernels: scalar vector (default: both)")
      ->check(CLI::IsMember({"scalar", "vector"}))
      ->delimiter(',');
  run_cmd->add_option("--boundary", run.boundary, "BOUNDARY of the hybrid format (default: automatic)")
      ->check(CLI::NonNegativeNumber);
  run_cmd->add_option("--rows-per-team", run.rows_per_team, "rows per team of the vector kernels (default: tuned)")
      ->check(CLI::PositiveNumber);
  run_cmd->add_option("--slice-height", run.slice_height, "slice height of Sliced ELLPACK(-R)")
      ->check(CLI::PositiveNumber);
  run_cmd->add_option("--repetitions", run.repetitions, "timed repetitions per kernel (median reported)")
      ->check(CLI::PositiveNumber);
  run_cmd->add_flag("!--no-baseline", run.baseline, "do not time Kokkos Kernels spmv");
  run_cmd->add_flag("--float", run.single_precision, "single precision (default double)");
  run_cmd->add_option("--json", run.json, "also write the results as JSON to this file ('-' = stdout)");

  std::string gen_name, gen_out;
  bool gen_list = false;
  auto* gen_cmd = cli.add_subcommand("generate", "generate a suite matrix into a .mtx or .cispmv file");
  gen_cmd->add_option("name", gen_name, "suite name: paper32k-1..paper32k-10, scaled-<rows>");
  gen_cmd->add_option("-o,--output", gen_out, "output file (.mtx or .cispmv)");
  gen_cmd->add_flag("--list", gen_list, "list the suite names");

  std::string stats_matrix;
  int stats_boundary = -1;
  auto* stats_cmd = cli.add_subcommand("stats", "print the paper's statistics of a matrix (Tables 3-5)");
  stats_cmd->add_option("matrix", stats_matrix, "a .mtx or .cispmv file, or a suite name")->required();
  stats_cmd->add_option("--boundary", stats_boundary, "BOUNDARY (default: automatic)")->check(CLI::NonNegativeNumber);

  std::string conv_in, conv_out;
  auto* conv_cmd = cli.add_subcommand("convert", "convert between .mtx and .cispmv (binary) files");
  conv_cmd->add_option("input", conv_in, "a .mtx or .cispmv file, or a suite name")->required();
  conv_cmd->add_option("output", conv_out, "a .mtx or .cispmv file")->required();

  CiCommandOptions ci;
  auto* ci_cmd = cli.add_subcommand("ci", "CI Hamiltonian from an FCIDUMP: determinant space, matrix, Davidson energies");
  ci_cmd->add_option("fcidump", ci.fcidump, "FCIDUMP file (Knowles-Handy format)")->required()->check(CLI::ExistingFile);
  ci_cmd->add_option("--level", ci.level, "maximum excitation level (1 CIS, 2 CISD, ...; >= electrons: full CI)")
      ->check(CLI::PositiveNumber);
  ci_cmd->add_option("--roots", ci.roots, "lowest eigenvalues to compute")->check(CLI::PositiveNumber);
  ci_cmd->add_option("--format", ci.format, "format of the Davidson SpMV")
      ->check(CLI::IsMember({"csr", "ell", "ellr", "sell", "sellr", "hybrid"}));
  ci_cmd->add_option("--write-mtx", ci.write_mtx, "write the Hamiltonian as a symmetric Matrix Market file");
  ci_cmd->add_option("--tolerance", ci.residual_tolerance, "Davidson residual norm tolerance");
  ci_cmd->add_option("--max-iterations", ci.max_iterations, "Davidson iterations")->check(CLI::PositiveNumber);
  ci_cmd->add_flag("!--all-irreps", ci.restrict_to_isym, "keep determinants of every irreducible representation");

  CLI11_PARSE(cli, argc, argv);
  try {
    if (*run_cmd) return app::run_command(run, std::cout);
    if (*gen_cmd) {
      if (gen_list) {
        for (const auto& n : suite_names()) std::cout << n << "\n";
        return 0;
      }
      if (gen_name.empty() || gen_out.empty()) throw std::invalid_argument("generate needs a name and -o FILE");
      const HostCsr A = generate_suite_matrix(gen_name, true);
      write_matrix(gen_out, A);
      std::cout << fmt::format("wrote {} ({} x {}, {} nonzeros)\n", gen_out, A.num_rows, A.num_cols, A.nnz());
      return 0;
    }
    if (*stats_cmd) return stats_command(stats_matrix, stats_boundary);
    if (*ci_cmd) return run_ci_command(ci, std::cout);
    if (*conv_cmd) {
      std::string description;
      const HostCsr A = app::load_matrix(conv_in, description);
      write_matrix(conv_out, A);
      std::cout << fmt::format("wrote {} from {} ({} nonzeros)\n", conv_out, description, A.nnz());
      return 0;
    }
  } catch (const std::exception& e) {
    std::cerr << "cispmv: error: " << e.what() << "\n";
    return 2;
  }
  return 0;
}
