// The `cispmv` program: the main job (`run`), the matrix tools (`generate`, `stats`, `convert`) and
// CI Hamiltonians from FCIDUMP files (`ci`).
#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <Kokkos_Core.hpp>

#include "cispmv/registry.hpp"
#include "cispmv/version.hpp"
#include "commands.hpp"
#if defined(CISPMV_HAVE_MPI)
#include "mpi_session.hpp"
#endif

#include <exception>
#include <iostream>
#include <string>
#include <vector>

using namespace cispmv;

int main(int argc, char* argv[]) {
#if defined(CISPMV_HAVE_MPI)
  app::MpiSession mpi(argc, argv);  // before Kokkos (it may choose the rank's GPU), finalised after it
#endif
  Kokkos::ScopeGuard kokkos(argc, argv);
  CLI::App cli{"cispmv " CISPMV_VERSION_STRING
               ": SpMV for Configuration Interaction matrices (Mahmoud, Hoffmann, Reza 2018) on Kokkos"};
  cli.require_subcommand(1);

  app::RunOptions run;
  auto* run_cmd =
      cli.add_subcommand("run", "main job: every format and kernel on one matrix, with the paper's reports");
  run_cmd->add_option("matrix", run.matrix, "a .mtx or .cispmv file, or a suite name (default paper32k-1)");
  const std::vector<std::string> formats = format_names();  // the registry's names
  std::string format_list;
  for (const auto& f : formats) format_list += (format_list.empty() ? "" : " ") + f;
  run_cmd->add_option("--formats", run.formats, "formats to run: " + format_list + " (default: all)")
      ->check(CLI::IsMember(formats))
      ->delimiter(',');
  run_cmd->add_option("--kernels", run.kernels, "kernels: scalar vector (default: both)")
      ->check(CLI::IsMember({"scalar", "vector"}))
      ->delimiter(',');
  // integer ranges (CLI11's NonNegativeNumber would print its bound as a 300-digit double)
  run_cmd->add_option("--boundary", run.boundary, "BOUNDARY of the hybrid format (default: automatic)")
      ->check(CLI::Range(0, 2147483647));
  run_cmd->add_option("--rows-per-team", run.rows_per_team, "rows per team of the vector kernels (default: tuned)")
      ->check(CLI::Range(1, app::max_rows_per_team));
  run_cmd->add_option("--slice-height", run.slice_height, "slice height of Sliced ELLPACK(-R)")
      ->check(CLI::Range(1, app::max_slice_height));
  run_cmd->add_option("--repetitions", run.repetitions, "timed repetitions per kernel (median reported)")
      ->check(CLI::Range(1, app::max_repetitions));
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
  stats_cmd->add_option("--boundary", stats_boundary, "BOUNDARY (default: automatic)")
      ->check(CLI::Range(0, 2147483647));

  std::string conv_in, conv_out;
  auto* conv_cmd = cli.add_subcommand("convert", "convert between .mtx and .cispmv (binary) files");
  conv_cmd->add_option("input", conv_in, "a .mtx or .cispmv file, or a suite name")->required();
  conv_cmd->add_option("output", conv_out, "a .mtx or .cispmv file")->required();

  app::CiCommandOptions ci;
  auto* ci_cmd =
      cli.add_subcommand("ci", "CI Hamiltonian from an FCIDUMP: determinant space, matrix, Davidson energies");
  ci_cmd->add_option("fcidump", ci.fcidump, "FCIDUMP file (Knowles-Handy format)")
      ->required()
      ->check(CLI::ExistingFile);
  ci_cmd->add_option("--level", ci.level, "maximum excitation level (1 CIS, 2 CISD, ...; >= electrons: full CI)")
      ->check(CLI::Range(1, 128));
  ci_cmd->add_option("--roots", ci.roots, "lowest eigenvalues to compute")->check(CLI::Range(1, 1000));
  std::vector<std::string> ci_formats = formats;
  ci_formats.insert(ci_formats.begin(), "auto");
  ci_formats.push_back("factored");
  ci_cmd
      ->add_option(
          "--format", ci.format,
          "format of the Davidson SpMV: auto (the model of choose_format; the factored Hamiltonian for full CI "
          "up to 5 roots and where the matrix would not fit), " +
              format_list +
              ", or factored (the Hamiltonian never assembled: applied from its integrals and string lists) "
              "(default auto)")
      ->check(CLI::IsMember(ci_formats));
  ci_cmd->add_option("--write-mtx", ci.write_mtx, "write the Hamiltonian as a symmetric Matrix Market file");
  ci_cmd->add_option("--tolerance", ci.residual_tolerance, "Davidson residual norm tolerance")
      ->check(CLI::Range(1e-14, 1.0));
  ci_cmd->add_option("--max-iterations", ci.max_iterations, "Davidson iterations")->check(CLI::Range(1, 100000));
  ci_cmd->add_flag("!--all-irreps", ci.restrict_to_isym, "keep determinants of every irreducible representation");
  ci_cmd->add_option("--alpha", ci.occupied_alpha,
                     "reference: occupied alpha orbitals, 1-based, e.g. 1-4,6 (with --beta; default: aufbau)");
  ci_cmd->add_option("--beta", ci.occupied_beta, "reference: occupied beta orbitals, 1-based");
  ci_cmd->add_option("--docc", ci.docc, "reference: doubly occupied orbitals per irrep (Psi4 DOCC), e.g. 3,0,1,1");
  ci_cmd->add_option("--socc", ci.socc, "reference: singly occupied (alpha) orbitals per irrep (Psi4 SOCC)");
  ci_cmd->add_option("--max-memory", ci.max_memory,
                     "memory the run may use on the host and on the device, e.g. 8G (default: what is free)");
  ci_cmd->add_option("--json", ci.json, "also write the results as JSON to this file ('-': stdout, no text report)");
  ci_cmd->add_flag("!--no-progress", ci.progress, "no progress lines for the Hamiltonian passes");

  ci_cmd
      ->add_option("--exchange", ci.exchange,
                   "under mpirun: how the distributed products exchange x: allgather (default) or halo")
      ->check(CLI::IsMember({"allgather", "halo"}));
  ci_cmd->add_flag("!--no-overlap", ci.overlap,
                   "under mpirun: keep each rank's block whole and exchange x before the product, rather than "
                   "multiply the block's own columns while x's other parts travel");
  ci_cmd
      ->add_option("--staging-pieces", ci.staging_pieces,
                   "under mpirun, where x goes through the host: the pieces its exchange is cut into, so that copies "
                   "overlap MPI (default 1: in one piece)")
      ->check(CLI::Range(0, 64));
  ci_cmd->add_flag("--distributed", ci.distributed,
                   "under mpirun: take the distributed code path on one rank too (the one-GPU point of a scaling "
                   "study)");
  ci_cmd
      ->add_option("--spmv-repetitions", ci.spmv_repetitions,
                   "under mpirun: after the solve, time this many distributed products H c of the lowest root's "
                   "vector (fenced, all ranks started together) and check |Hc - Ec| against the solver's residual")
      ->check(CLI::Range(0, 100000));

  CLI11_PARSE(cli, argc, argv);
  try {
#if defined(CISPMV_HAVE_MPI)
    if (const int ranks = app::mpi_world_size(); ranks > 1 && !*ci_cmd) {
      throw std::invalid_argument("only 'cispmv ci' runs distributed; under mpirun with " + std::to_string(ranks) +
                                  " ranks this command would repeat the same work on every rank");
    }
#endif
    if (*run_cmd) return app::run_command(run, std::cout);
    if (*gen_cmd) return app::generate_command(gen_name, gen_out, gen_list, std::cout);
    if (*stats_cmd) return app::stats_command(stats_matrix, stats_boundary, std::cout);
    if (*ci_cmd) return app::ci_command(ci, std::cout);
    if (*conv_cmd) return app::convert_command(conv_in, conv_out, std::cout);
  } catch (const std::exception& e) {
    std::cerr << "cispmv: error: " << e.what() << "\n";
#if defined(CISPMV_HAVE_MPI)
    mpi.abort_if_distributed(2);
#endif
    return 2;
  }
  return 0;
}
