// The `cispmv ci` command: FCIDUMP -> determinant space -> CI matrix -> Davidson, with a report.
#include "commands.hpp"

#include "cispmv/boundary.hpp"
#include "cispmv/choose_format.hpp"
#include "cispmv/ci.hpp"
#include "cispmv/convert.hpp"
#include "cispmv/io.hpp"
#include "cispmv/plan.hpp"
#include "cispmv/registry.hpp"
#include "cispmv/stats.hpp"

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <iomanip>
#include <ostream>
#include <sstream>
#include <stdexcept>
#include <string>

namespace cispmv::app {

namespace {

using namespace cispmv::ci;

std::string method_name(const DeterminantSpace& space) {
  const int full = std::min(space.num_alpha, space.num_orbitals - space.num_alpha) +
                   std::min(space.num_beta, space.num_orbitals - space.num_beta);
  if (space.max_level >= full) return "full CI";
  static const char* names[] = {"HF (reference only)", "CIS", "CISD", "CISDT", "CISDTQ"};
  if (space.max_level <= 4) return names[space.max_level];
  return "CI up to excitation level " + std::to_string(space.max_level);
}

struct Timings {
  double read = 0, space = 0, hamiltonian = 0, convert = 0;
};

template <class Matrix>
int solve_and_report(const Matrix& A, const HostCsr& H, const FciDump& dump, const CiCommandOptions& options,
                     const Timings& timings, std::ostream& out) {
  using Exec = Kokkos::DefaultExecutionSpace;
  const Exec exec;
  const auto diagonal = Kokkos::create_mirror_view_and_copy(typename Matrix::memory_space(), csr_diagonal(H));

  solvers::DavidsonOptions dopts;
  dopts.num_roots = options.roots;
  dopts.residual_tolerance = options.residual_tolerance;
  dopts.max_iterations = options.max_iterations;
  const SpmvPlan<Exec, Matrix> plan(exec, A, dopts.spmv);
  const auto result = solvers::davidson(exec, plan, diagonal, dopts);

  out << "davidson: format " << plan.description() << " on " << Exec::name() << ", " << options.roots
      << (options.roots == 1 ? " root" : " roots") << ", residual tolerance " << std::scientific << std::setprecision(1)
      << options.residual_tolerance << std::defaultfloat << "\n";
  out << "  iterations " << result.iterations << ", restarts " << result.restarts << ", SpMVs " << result.num_spmv
      << ", final subspace " << result.subspace_size << ", " << (result.converged ? "converged" : "NOT converged")
      << "\n";
  out << "  root       eigenvalue (Eh)     total energy (Eh)   residual\n";
  for (int c = 0; c < options.roots; ++c) {
    out << "  " << std::setw(4) << c + 1 << std::fixed << std::setprecision(10) << std::setw(19)
        << result.eigenvalues[c] << std::setw(22) << result.eigenvalues[c] + dump.core_energy << std::scientific
        << std::setprecision(2) << std::setw(11) << result.residual_norms[c] << std::defaultfloat << "\n";
  }
  out << "  core energy " << std::fixed << std::setprecision(10) << dump.core_energy << std::defaultfloat << "\n";
  out << "timings (s): read " << std::fixed << std::setprecision(3) << timings.read << ", space " << timings.space
      << ", hamiltonian " << timings.hamiltonian << ", convert+copy " << timings.convert << ", davidson "
      << result.total_seconds << " of which spmv " << result.spmv_seconds << " (" << std::setprecision(1)
      << 100.0 * result.spmv_share() << "%, " << result.num_spmv << " calls, " << std::setprecision(3)
      << (result.num_spmv > 0 ? 1e3 * result.spmv_seconds / result.num_spmv : 0.0) << " ms each)" << std::defaultfloat
      << "\n";
  return result.converged ? 0 : 1;
}

/// The space, the matrix and its structure over the excitation levels.
void print_space_report(const CiCommandOptions& options, const FciDump& dump, const DeterminantSpace& space,
                        const HostCsr& H, const BoundaryChoice<int>& boundary, std::ostream& out) {
  const StructureStats st = structure_stats(H, space);
  out << "cispmv ci: " << options.fcidump << "\n";
  out << "  orbitals " << dump.num_orbitals << ", electrons " << dump.num_electrons << " (alpha " << space.num_alpha
      << ", beta " << space.num_beta << "), MS2 " << dump.ms2 << ", ISYM " << dump.isym << "\n";
  out << "  space: " << method_name(space) << " (excitation level <= " << space.max_level << "), irrep "
      << (space.irrep == 0 ? std::string("unrestricted") : std::to_string(space.irrep) + " only") << "\n";
  out << "determinants: " << st.rows << "\n";
  out << "nonzeros: " << st.nnz << " (both triangles, diagonal always stored, |H_ij| < " << std::scientific
      << std::setprecision(0) << options.drop_tolerance << std::defaultfloat << " dropped), " << std::setprecision(4)
      << 100.0 * static_cast<double>(st.nnz) / (static_cast<double>(st.rows) * static_cast<double>(st.rows))
      << "% dense\n";
  out << "row length: min " << st.min_row_length << ", mean " << std::fixed << std::setprecision(1)
      << st.mean_row_length << std::defaultfloat << ", max " << st.max_row_length << " (row " << st.max_row << ")\n";
  out << "  level  determinants      nonzeros  mean row   nonzeros by column level 0..." << space.max_level << "\n";
  for (int l = 0; l <= space.max_level; ++l) {
    out << "  " << std::setw(5) << l << std::setw(14) << st.level_rows[l] << std::setw(14) << st.level_nnz[l]
        << std::fixed << std::setprecision(1) << std::setw(10)
        << (st.level_rows[l] ? static_cast<double>(st.level_nnz[l]) / static_cast<double>(st.level_rows[l]) : 0.0)
        << std::defaultfloat << "  ";
    for (int c = 0; c <= space.max_level; ++c) out << " " << st.level_block_nnz[l][c];
    out << "\n";
  }
  out << "leading block (levels 0-1: " << st.leading_block_rows << " rows x columns): " << st.leading_block_nnz
      << " nonzeros; rest: " << st.rest_nnz << "\n";
  const MatrixStats ms = compute_stats(H, boundary.boundary, static_cast<double>(boundary.reference_width));
  out << "hybrid split (automatic BOUNDARY " << boundary.boundary << ", reference region "
      << (boundary.reference_detected ? std::to_string(boundary.reference_width) + " columns"
                                      : std::string("not detected"))
      << "): " << ms.reference_nnz << " nonzeros in the reference region (ELLPACK), " << ms.expansion_nnz
      << " in the expansion region (CSR)\n";
}

}  // namespace

int ci_command(const CiCommandOptions& options, std::ostream& out) {
  if (options.roots < 1) throw std::invalid_argument("cispmv ci: --roots must be at least 1");
  if (options.level < 0) throw std::invalid_argument("cispmv ci: --level must be >= 0");
  Timings timings;
  Kokkos::Timer timer;
  const FciDump dump = read_fcidump(options.fcidump);
  timings.read = timer.seconds();

  timer.reset();
  const DeterminantSpace space = make_determinant_space(dump, options.level, options.restrict_to_isym);
  timings.space = timer.seconds();
  if (static_cast<std::size_t>(options.roots) > space.size()) {
    throw std::invalid_argument("cispmv ci: " + std::to_string(options.roots) + " roots asked for but the space has " +
                                std::to_string(space.size()) + " determinants");
  }

  timer.reset();
  const HostCsr H = build_hamiltonian(dump, space, options.drop_tolerance);
  timings.hamiltonian = timer.seconds();

  const auto boundary = choose_boundary(H);
  print_space_report(options, dump, space, H, boundary, out);

  if (!options.write_mtx.empty()) {
    write_matrix_market(options.write_mtx, H, true);
    out << "wrote " << options.write_mtx << " (Matrix Market, symmetric; values without the core energy)\n";
  }

  // every format takes the same path: build on the host (registry), move to the device, solve
  timer.reset();
  FormatParams params;
  params.boundary = boundary.boundary;
  Format format = Format::csr;
  if (options.format == "auto") {
    const FormatChoice choice = choose_format<Kokkos::DefaultExecutionSpace>(H);
    format = choice.format;
    out << "automatic format choice: " << choice.summary() << "\n";
  } else {
    format = parse_format(options.format);
  }
  return with_host_format(format, H, params, [&](const auto& host_format) {
    const auto A = to_device<Kokkos::DefaultExecutionSpace>(host_format);
    Kokkos::fence();
    timings.convert = timer.seconds();
    return solve_and_report(A, H, dump, options, timings, out);
  });
}

}  // namespace cispmv::app
