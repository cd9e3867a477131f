// The `cispmv` program: the main job (`run`), the matrix tools (`generate`, `stats`, `convert`) and
// CI Hamiltonians from FCIDUMP files (`ci`).
#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <Kokkos_Core.hpp>

#include "cispmv/info.hpp"
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

namespace {

/// Kokkos' own arguments (--kokkos-*) go to Kokkos, every other to cispmv's command line: so `--help` is cispmv's
/// alone (Kokkos prints its own help and banner for it), and Kokkos starts only once the command line parsed.
void split_arguments(int argc, char* argv[], std::vector<char*>& kokkos, std::vector<char*>& commands) {
  kokkos = {argv[0]};
  commands = {argv[0]};
  for (int i = 1; i < argc; ++i) {
    (std::string(argv[i]).rfind("--kokkos-", 0) == 0 ? kokkos : commands).push_back(argv[i]);
  }
}

/// The subcommands and what their options fill.
struct Commands {
  app::RunOptions run;
  std::string gen_name, gen_out, stats_matrix, conv_in, conv_out;
  bool gen_list = false;
  int stats_boundary = -1;
  app::CiCommandOptions ci;
  CLI::App *run_cmd = nullptr, *gen_cmd = nullptr, *stats_cmd = nullptr, *conv_cmd = nullptr, *ci_cmd = nullptr;
};

/// The registry's format names, space-separated.
std::string format_list() {
  std::string list;
  for (const auto& f : format_names()) list += (list.empty() ? "" : " ") + f;
  return list;
}

/// `run`, `generate`, `stats` and `convert`: the paper's job and the matrix tools.
void add_matrix_commands(CLI::App& cli, Commands& c) {
  c.run_cmd = cli.add_subcommand("run", "main job: every format and kernel on one matrix, with the paper's reports");
  c.run_cmd->add_option("matrix", c.run.matrix, "a .mtx or .cispmv file, or a suite name (default paper32k-1)");
  const std::vector<std::string> formats = format_names();  // the registry's names
  c.run_cmd->add_option("--formats", c.run.formats, "formats to run: " + format_list() + " (default: all)")
      ->check(CLI::IsMember(formats))
      ->delimiter(',');
  c.run_cmd->add_option("--kernels", c.run.kernels, "kernels: scalar vector (default: both)")
      ->check(CLI::IsMember({"scalar", "vector"}))
      ->delimiter(',');
  // integer ranges (CLI11's NonNegativeNumber would print its bound as a 300-digit double)
  c.run_cmd->add_option("--boundary", c.run.boundary, "BOUNDARY of the hybrid format (default: automatic)")
      ->check(CLI::Range(0, 2147483647));
  c.run_cmd->add_option("--rows-per-team", c.run.rows_per_team, "rows per team of the vector kernels (default: tuned)")
      ->check(CLI::Range(1, app::max_rows_per_team));
  c.run_cmd->add_option("--slice-height", c.run.slice_height, "slice height of Sliced ELLPACK(-R)")
      ->check(CLI::Range(1, app::max_slice_height));
  c.run_cmd->add_option("--repetitions", c.run.repetitions, "timed repetitions per kernel (median reported)")
      ->check(CLI::Range(1, app::max_repetitions));
  c.run_cmd->add_flag("!--no-baseline", c.run.baseline, "do not time Kokkos Kernels spmv");
  c.run_cmd->add_flag("--float", c.run.single_precision, "single precision (default double)");
  c.run_cmd->add_option("--json", c.run.json, "also write the results as JSON to this file ('-' = stdout)");

  c.gen_cmd = cli.add_subcommand("generate", "generate a suite matrix into a .mtx or .cispmv file");
  c.gen_cmd->add_option("name", c.gen_name, "suite name: paper32k-1..paper32k-10, scaled-<rows>");
  c.gen_cmd->add_option("-o,--output", c.gen_out, "output file (.mtx or .cispmv)");
  c.gen_cmd->add_flag("--list", c.gen_list, "list the suite names");

  c.stats_cmd = cli.add_subcommand("stats", "print the paper's statistics of a matrix (Tables 3-5)");
  c.stats_cmd->add_option("matrix", c.stats_matrix, "a .mtx or .cispmv file, or a suite name")->required();
  c.stats_cmd->add_option("--boundary", c.stats_boundary, "BOUNDARY (default: automatic)")
      ->check(CLI::Range(0, 2147483647));

  c.conv_cmd = cli.add_subcommand("convert", "convert between .mtx and .cispmv (binary) files");
  c.conv_cmd->add_option("input", c.conv_in, "a .mtx or .cispmv file, or a suite name")->required();
  c.conv_cmd->add_option("output", c.conv_out, "a .mtx or .cispmv file")->required();
}

/// `ci`: CI Hamiltonians from FCIDUMP files.
void add_ci_command(CLI::App& cli, Commands& c) {
  const std::vector<std::string> formats = format_names();
  c.ci_cmd = cli.add_subcommand("ci", "CI Hamiltonian from an FCIDUMP: determinant space, matrix, Davidson energies");
  c.ci_cmd->add_option("fcidump", c.ci.fcidump, "FCIDUMP file (Knowles-Handy format)")
      ->required()
      ->check(CLI::ExistingFile);
  c.ci_cmd->add_option("--level", c.ci.level, "maximum excitation level (1 CIS, 2 CISD, ...; >= electrons: full CI)")
      ->check(CLI::Range(1, 128));
  c.ci_cmd->add_option("--roots", c.ci.roots, "lowest eigenvalues to compute")->check(CLI::Range(1, 1000));
  std::vector<std::string> ci_formats = formats;
  ci_formats.insert(ci_formats.begin(), "auto");
  ci_formats.push_back("factored");
  c.ci_cmd
      ->add_option(
          "--format", c.ci.format,
          "format of the Davidson SpMV: auto (the model of choose_format; the factored Hamiltonian for full CI "
          "up to 5 roots and where the matrix would not fit), " +
              format_list() +
              ", or factored (the Hamiltonian never assembled: applied from its integrals and string lists) "
              "(default auto)")
      ->check(CLI::IsMember(ci_formats));
  c.ci_cmd->add_option("--write-mtx", c.ci.write_mtx, "write the Hamiltonian as a symmetric Matrix Market file");
  c.ci_cmd->add_option("--tolerance", c.ci.residual_tolerance, "Davidson residual norm tolerance")
      ->check(CLI::Range(1e-14, 1.0));
  c.ci_cmd->add_option("--max-iterations", c.ci.max_iterations, "Davidson iterations")->check(CLI::Range(1, 100000));
  c.ci_cmd->add_flag("!--all-irreps", c.ci.restrict_to_isym, "keep determinants of every irreducible representation");
  c.ci_cmd->add_flag("--singlet", c.ci.singlet,
                     "only states whose vector is symmetric under the exchange of alpha and beta strings (singlets, "
                     "quintets, ...; no triplets), as PySCF's direct_spin0: M_S = 0 and a closed-shell reference; "
                     "the factored Hamiltonian on half-length vectors, half its terms a product");
  c.ci_cmd->add_option("--alpha", c.ci.occupied_alpha,
                       "reference: occupied alpha orbitals, 1-based, e.g. 1-4,6 (with --beta; default: aufbau)");
  c.ci_cmd->add_option("--beta", c.ci.occupied_beta, "reference: occupied beta orbitals, 1-based");
  c.ci_cmd->add_option("--docc", c.ci.docc, "reference: doubly occupied orbitals per irrep (Psi4 DOCC), e.g. 3,0,1,1");
  c.ci_cmd->add_option("--socc", c.ci.socc, "reference: singly occupied (alpha) orbitals per irrep (Psi4 SOCC)");
  c.ci_cmd->add_option("--max-memory", c.ci.max_memory,
                       "memory the run may use on the host and on the device, e.g. 8G (default: what is free)");
  c.ci_cmd->add_option("--json", c.ci.json,
                       "also write the results as JSON to this file ('-': stdout, no text report)");
  c.ci_cmd->add_flag("!--no-progress", c.ci.progress,
                     "no progress lines (the Hamiltonian's passes, and an iteration a line of solves longer than a few "
                     "seconds)");
  c.ci_cmd
      ->add_option("--max-subspace", c.ci.max_subspace,
                   "Davidson basis size that triggers a restart (default: max(24, 8 x (roots + irreps' guards)), "
                   "or what the memory holds)")
      ->check(CLI::Range(2, 10000));
  c.ci_cmd
      ->add_option("--subspace", c.ci.subspace,
                   "where the Davidson's vectors live: device (the execution space's memory), host (host memory, "
                   "each product's x and y copied; for spaces whose vectors the GPU cannot hold), or auto: the "
                   "device where its smallest subspace fits (default auto)")
      ->check(CLI::IsMember({"auto", "device", "host"}));
  c.ci_cmd
      ->add_option("--orbsym", c.ci.orbsym,
                   "the FCIDUMP's ORBSYM numbering: molpro (1..8), pyscf (PySCF's own irrep ids, 0..7: its "
                   "default, molpro_orbsym=False), or auto: pyscf where an ORBSYM value is 0, else molpro "
                   "(default auto)")
      ->check(CLI::IsMember({"auto", "molpro", "pyscf"}));
  c.ci_cmd->add_option("--save-vectors", c.ci.save_vectors,
                       "after the solve, converged or not, write the roots' vectors to this file (a later run "
                       "continues from it with --start-vectors)");
  c.ci_cmd->add_option("--start-vectors", c.ci.start_vectors,
                       "start the Davidson from the vectors of this file (written by --save-vectors for the same "
                       "space)");

  c.ci_cmd
      ->add_option("--exchange", c.ci.exchange,
                   "under mpirun: how the distributed products exchange x: allgather (default) or halo")
      ->check(CLI::IsMember({"allgather", "halo"}));
  c.ci_cmd->add_flag("!--no-overlap", c.ci.overlap,
                     "under mpirun: keep each rank's block whole and exchange x before the product, rather than "
                     "multiply the block's own columns while x's other parts travel");
  c.ci_cmd
      ->add_option("--staging-pieces", c.ci.staging_pieces,
                   "under mpirun, where x goes through the host: the pieces its exchange is cut into, so that copies "
                   "overlap MPI (default 1: in one piece)")
      ->check(CLI::Range(0, 64));
  c.ci_cmd->add_flag("--distributed", c.ci.distributed,
                     "under mpirun: take the distributed code path on one rank too (the one-GPU point of a scaling "
                     "study)");
  c.ci_cmd
      ->add_option("--spmv-repetitions", c.ci.spmv_repetitions,
                   "under mpirun: after the solve, time this many distributed products H c of the lowest root's "
                   "vector (fenced, all ranks started together) and check |Hc - Ec| against the solver's residual")
      ->check(CLI::Range(0, 100000));
}

}  // namespace

int main(int argc, char* argv[]) {
#if defined(CISPMV_HAVE_MPI)
  app::MpiSession mpi(argc, argv);  // before Kokkos (it may choose the rank's GPU), finalised after it
#endif
  std::vector<char*> kokkos_args, command_args;
  split_arguments(argc, argv, kokkos_args, command_args);
  CLI::App cli{"cispmv " CISPMV_VERSION_STRING
               ": SpMV for Configuration Interaction matrices (Mahmoud, Hoffmann, Reza 2018) on Kokkos"};
  cli.require_subcommand(1);
  Commands c;
  add_matrix_commands(cli, c);
  add_ci_command(cli, c);

  try {
    cli.parse(static_cast<int>(command_args.size()), command_args.data());
  } catch (const CLI::ParseError& e) {
    return cli.exit(e);
  }
  // a GPU build where no GPU is visible: say so before Kokkos' initialisation aborts
  if (const std::string missing = missing_device(); !missing.empty()) {
    std::cerr << "cispmv: error: " << missing << "\n";
    return 2;
  }
  int kokkos_argc = static_cast<int>(kokkos_args.size());
  kokkos_args.push_back(nullptr);
  char** kokkos_argv = kokkos_args.data();
  Kokkos::ScopeGuard kokkos(kokkos_argc, kokkos_argv);
  try {
#if defined(CISPMV_HAVE_MPI)
    if (const int ranks = app::mpi_world_size(); ranks > 1 && !*c.ci_cmd) {
      throw std::invalid_argument("only 'cispmv ci' runs distributed; under mpirun with " + std::to_string(ranks) +
                                  " ranks this command would repeat the same work on every rank");
    }
#endif
    if (*c.run_cmd) return app::run_command(c.run, std::cout);
    if (*c.gen_cmd) return app::generate_command(c.gen_name, c.gen_out, c.gen_list, std::cout);
    if (*c.stats_cmd) return app::stats_command(c.stats_matrix, c.stats_boundary, std::cout);
    if (*c.ci_cmd) return app::ci_command(c.ci, std::cout);
    if (*c.conv_cmd) return app::convert_command(c.conv_in, c.conv_out, std::cout);
  } catch (const std::exception& e) {
    std::cerr << "cispmv: error: " << e.what() << "\n";
#if defined(CISPMV_HAVE_MPI)
    mpi.abort_if_distributed(2);
#endif
    return 2;
  }
  return 0;
}
