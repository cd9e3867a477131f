// `cispmv ci` with the Hamiltonian assembled: as csell in blocks of rows where its CSR does not fit beside it, else
// as CSR on the execution space, kept there (CSR, csell) or converted on the host to the chosen format; then the
// Davidson on it through an SpmvPlan.
#include "ci_run.hpp"

#include "cispmv/boundary.hpp"
#include "cispmv/choose_format.hpp"
#include "cispmv/convert.hpp"
#include "cispmv/io.hpp"
#include "cispmv/operator_ref.hpp"
#include "cispmv/plan.hpp"
#include "cispmv/registry.hpp"
#include "cispmv/stats.hpp"

#include <iomanip>
#include <string>

namespace cispmv::app {

namespace {

using Exec = CiRun::Exec;
using ExecMemory = Exec::memory_space;

/// The Davidson on matrix A through a plan made once. The plan goes behind an OperatorRef, so that the solver is
/// compiled once for every format (it was most of this file's compile time), not once per format.
template <class Matrix, class Diagonal>
int solve_matrix(CiRun& run, const Matrix& A, const Diagonal& diagonal) {
  const SpmvPlan<Exec, Matrix> plan(Exec(), A, solvers::DavidsonOptions().spmv);
  return solve_and_report(run, OperatorRef<ExecMemory>(plan), plan.description(), Matrix::format_name, diagonal);
}

/// The space, the matrix and its structure over the excitation levels.
void print_space_report(const CiRun& run, const HostCsr& H, const BoundaryChoice<int>& boundary) {
  std::ostream& out = run.out;
  const ci::DeterminantSpace& space = run.space;
  const ci::StructureStats st = ci::structure_stats(H, space);
  out << "nonzeros: " << st.nnz << " (both triangles, diagonal always stored, |H_ij| < " << std::scientific
      << std::setprecision(0) << run.options.drop_tolerance << std::defaultfloat << " dropped), "
      << std::setprecision(4)
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

ci::HamiltonianOptions hamiltonian_options(const CiRun& run) {
  ci::HamiltonianOptions hopt;
  hopt.drop_tolerance = run.options.drop_tolerance;
  if (run.options.progress) {
    hopt.progress = [&out = run.out, last = -1](const char* pass, double fraction) mutable {
      const int percent = static_cast<int>(100 * fraction);
      if (percent / 25 != last / 25 || percent == 100) {
        out << "  hamiltonian " << pass << " pass: " << percent << "%" << std::endl;
        last = percent;
      }
      if (percent == 100) last = -1;
    };
  }
  return hopt;
}

/// Every block built as CSR, encoded into the csell and freed (twice: count, fill), its diagonal kept.
int solve_csell_in_blocks(CiRun& run) {
  Kokkos::Timer timer;
  const auto n = static_cast<std::int64_t>(run.space.size());
  Kokkos::View<double*, ExecMemory> diagonal("cispmv::ci::diagonal", run.space.size());
  const auto hopt = hamiltonian_options(run);
  const auto C = allocating(
      "Compressed Sliced ELLPACK (estimated " + format_bytes(0.45 * run.mem.matrix) + "), built in blocks of rows",
      ci_memory_advice(run.options, run.space.max_level, run.mem.matrix), [&] {
        return ci::build_hamiltonian_csell(Exec(), run.dump, run.space, 0, n, run.csell_block_rows, hopt, diagonal);
      });
  run.timings.hamiltonian = timer.seconds();
  run.out << "nonzeros: " << C.nnz() << " (both triangles, diagonal always stored, |H_ij| < " << std::scientific
          << std::setprecision(0) << run.options.drop_tolerance << std::defaultfloat << " dropped), built on "
          << Exec::name() << " as csell in blocks of rows in " << std::fixed << std::setprecision(3)
          << run.timings.hamiltonian << " s: " << format_bytes(static_cast<double>(allocated_bytes(C))) << " ("
          << std::setprecision(2) << static_cast<double>(allocated_bytes(C)) / run.mem.matrix << "x of its CSR), "
          << C.rest_nnz() << " entries outside the value table" << std::defaultfloat << std::endl;
  run.nnz = C.nnz();
  return solve_matrix(run, C, diagonal);
}

/// CSR as built on the execution space, or csell encoded there: no host copy of the matrix at all.
int solve_on_device(CiRun& run, CsrMatrix<double, int, std::size_t, Exec> H, Format format) {
  const auto diagonal = ci::csr_diagonal(Exec(), H);
  if (format == Format::csr) return solve_matrix(run, H, diagonal);
  Kokkos::Timer timer;
  const FormatParams block_params = FormatParams::for_block_products<Exec>();
  const auto C = allocating(
      "Compressed Sliced ELLPACK (estimated " + format_bytes(run.mem.converted) + ") beside the CSR Hamiltonian",
      ci_memory_advice(run.options, run.space.max_level, run.mem.matrix), [&] {
        // one vector per product (one root of one irrep): lanes per row where the rows leave the GPU's thread
        // slots free, rows sorted in the automatic windows; several: block_params
        const bool one_root = run.vectors() == 1;
        const int lanes =
            one_root ? impl::automatic_row_lanes(H, impl::gpu_thread_slots<Exec>()) : block_params.row_lanes;
        const double coverage =
            run.csell_values_inline ? block_params.min_table_coverage : FormatParams{}.min_table_coverage;
        return to_compressed_sell(H, 32, 65536, coverage, std::size_t(1) << 22, ValueTableOrder::automatic, lanes,
                                  one_root ? -1 : block_params.sort_window);
      });
  const double csr_bytes = static_cast<double>(allocated_bytes(H));
  H = {};
  run.timings.convert = timer.seconds();
  run.out << "converted to csell on " << Exec::name() << " in " << std::fixed << std::setprecision(3)
          << run.timings.convert << " s: " << format_bytes(static_cast<double>(allocated_bytes(C))) << " ("
          << std::setprecision(2) << static_cast<double>(allocated_bytes(C)) / csr_bytes << "x of CSR), "
          << (C.uses_table ? std::to_string(C.rest_nnz()) + " entries outside the value table"
                           : std::string("values inline (for block products)"))
          << (C.row_lanes > 1 ? ", " + std::to_string(C.row_lanes) + " lanes per row" : std::string())
          << std::defaultfloat << std::endl;
  return solve_matrix(run, C, diagonal);
}

/// Other formats (and --write-mtx) from a host CSR: the same Views on a host build, a copy of a device-built matrix.
int solve_from_host(CiRun& run, CsrMatrix<double, int, std::size_t, Exec> H_exec, Format format) {
  if (!CiRun::on_host) {
    const double need = run.mem.space + 2.0 * run.mem.matrix;
    if (need > 0.9 * run.host_have) {
      ci_refuse("host", need, run.host_have,
                "a host copy of the matrix (" + format_bytes(run.mem.matrix) + ") to convert it to " +
                    format_info(format).name + ", and the converted copy",
                "--format csr or csell stay on the device. " +
                    ci_memory_advice(run.options, run.space.max_level, run.mem.matrix));
    }
  }
  Kokkos::Timer timer;
  HostCsr H = H_exec.template map_views<Kokkos::DefaultHostExecutionSpace>(
      [](const auto& v) { return Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), v); });
  if (!CiRun::on_host) H_exec = {};
  const auto boundary = choose_boundary(H);
  print_space_report(run, H, boundary);
  if (!run.options.write_mtx.empty()) {
    write_matrix_market(run.options.write_mtx, H, true);
    run.out << "wrote " << run.options.write_mtx << " (Matrix Market, symmetric; values without the core energy)\n";
  }
  auto params = FormatParams::for_space<Exec>();
  params.table_order = impl::default_table_order<Exec>();  // a Davidson's few dozen products: no ordering pass
  params.boundary = boundary.boundary;
  const auto diagonal = Kokkos::create_mirror_view_and_copy(ExecMemory(), ci::csr_diagonal(H));
  return with_host_format(format, H, params, [&](const auto& host_format) {
    const auto A = to_device<Exec>(host_format);
    Kokkos::fence();
    run.timings.convert = timer.seconds();
    return solve_matrix(run, A, diagonal);
  });
}

}  // namespace

int solve_assembled(CiRun& run) {
  if (run.csell_block_rows > 0) return solve_csell_in_blocks(run);
  Kokkos::Timer timer;
  const auto hopt = hamiltonian_options(run);
  CsrMatrix<double, int, std::size_t, Exec> H =
      allocating("the Hamiltonian (estimated " + format_bytes(run.mem.matrix) + ")", "",
                 [&] { return ci::build_hamiltonian(Exec(), run.dump, run.space, hopt); });
  run.timings.hamiltonian = timer.seconds();
  run.nnz = H.nnz();
  run.out << "nonzeros: " << run.nnz << " (both triangles, diagonal always stored, |H_ij| < " << std::scientific
          << std::setprecision(0) << run.options.drop_tolerance << std::defaultfloat << " dropped), built on "
          << Exec::name() << " in " << std::fixed << std::setprecision(3) << run.timings.hamiltonian << " s"
          << std::defaultfloat << std::endl;
  Format format = Format::csr;
  if (run.options.format == "auto") {
    // for Davidson's reads of the matrix, conversion included (from the row lengths and sampled values): the block
    // Davidson reads it once per iteration whatever the roots (H2O/6-31G full CI: 14, 17 and 20 reads for 1, 5 and
    // 10 roots); several vectors per product (roots, or irreps' guards) by the block model (choose_format's
    // `vectors`): on a CPU always, on a GPU where csell's values inline fit
    const FormatChoice choice =
        choose_format<Exec>(H, 32, davidson_reads, (CiRun::on_host || run.csell_values_inline) ? run.vectors() : 1);
    format = choice.format;
    run.out << "automatic format choice: " << choice.summary() << "\n";
  } else {
    format = parse_format(run.options.format);
  }
  const bool stays_on_device =
      !CiRun::on_host && run.options.write_mtx.empty() && (format == Format::csr || format == Format::csell);
  return stays_on_device ? solve_on_device(run, std::move(H), format) : solve_from_host(run, std::move(H), format);
}

}  // namespace cispmv::app
