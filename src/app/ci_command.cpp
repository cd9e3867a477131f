// The `cispmv ci` command: FCIDUMP -> determinant space -> CI matrix -> Davidson, with a report.
#include "ci_common.hpp"
#include "commands.hpp"

#include "cispmv/boundary.hpp"
#include "cispmv/choose_format.hpp"
#include "cispmv/ci.hpp"
#include "cispmv/convert.hpp"
#include "cispmv/io.hpp"
#include "cispmv/memory_budget.hpp"
#include "cispmv/plan.hpp"
#include "cispmv/registry.hpp"
#include "cispmv/stats.hpp"

#include <Kokkos_Core.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>
#include <iomanip>
#include <limits>
#include <new>
#include <ostream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace cispmv::app {

namespace {

using namespace cispmv::ci;

struct Timings {
  double read = 0, reference = 0, space = 0, hamiltonian = 0, convert = 0;
};

/// What the run found: the end of the text report and the --json file.
struct CiResult {
  std::string format, plan, device;
  std::vector<double> energies, residuals;
  int iterations = 0, num_spmv = 0;
  bool converged = false;
  double davidson_seconds = 0, spmv_seconds = 0, projected_seconds = 0;
};

/// step(), with an allocation failure on the execution space (Kokkos's RawMemoryAllocationFailure, a
/// std::bad_alloc, or a CUDA error Kokkos reports as a std::runtime_error) turned into a
/// MemoryBudgetError "cispmv ci: allocating WHAT on SPACE failed: REASON. ADVICE".
template <class Step>
auto allocating(const std::string& what, const std::string& hint, Step&& step) -> decltype(step()) {
  auto fail = [&](const std::exception& e) {
    return MemoryBudgetError("cispmv ci: allocating " + what + " on " + Kokkos::DefaultExecutionSpace::name() +
                             " failed: " + e.what() + (hint.empty() ? std::string() : ". " + hint));
  };
  try {
    return step();
  } catch (const MemoryBudgetError&) {
    throw;
  } catch (const std::bad_alloc& e) {
    throw fail(e);
  } catch (const std::runtime_error& e) {
    throw fail(e);
  }
}

/// The Davidson on `op` (an operator the solver takes: a plan of a format, or the factored Hamiltonian),
/// `description` naming it in the report, `format_name` in the --json file.
template <class Operator, class Diagonal>
int solve_operator_and_report(const Operator& op, const std::string& description, const std::string& format_name,
                              const Diagonal& diagonal, const std::vector<int>& blocks, int irreps, const FciDump& dump,
                              const CiCommandOptions& options, const Timings& timings, CiResult& res,
                              std::ostream& out) {
  using Exec = Kokkos::DefaultExecutionSpace;
  const Exec exec;
  solvers::DavidsonOptions dopts;
  dopts.num_roots = options.roots;
  dopts.residual_tolerance = options.residual_tolerance;
  dopts.max_iterations = options.max_iterations;
  dopts.row_blocks = blocks;
  out << "davidson: format " << description << " on " << Exec::name() << ", " << options.roots
      << (options.roots == 1 ? " root" : " roots") << ", residual tolerance " << std::scientific << std::setprecision(1)
      << options.residual_tolerance << std::defaultfloat << std::endl;
  const auto result = allocating(
      "the Davidson vectors (" + std::to_string(options.roots) + (options.roots == 1 ? " root, " : " roots, ") +
          std::to_string(op.num_rows()) + " rows)",
      "Fewer --roots, or a smaller space, would fit.", [&] { return solvers::davidson(exec, op, diagonal, dopts); });

  out << "  iterations " << result.iterations << ", restarts " << result.restarts << ", SpMVs " << result.num_spmv
      << ", final subspace " << result.subspace_size << ", " << (result.converged ? "converged" : "NOT converged")
      << "\n";
  if (!blocks.empty()) out << "  " << guards_line(result.guards, irreps) << "\n";
  out << "  root       eigenvalue (Eh)     total energy (Eh)   residual\n";
  for (int c = 0; c < options.roots; ++c) {
    out << "  " << std::setw(4) << c + 1 << std::fixed << std::setprecision(10) << std::setw(19)
        << result.eigenvalues[c] << std::setw(22) << result.eigenvalues[c] + dump.core_energy << std::scientific
        << std::setprecision(2) << std::setw(11) << result.residual_norms[c] << std::defaultfloat << "\n";
  }
  out << "  core energy " << std::fixed << std::setprecision(10) << dump.core_energy << std::defaultfloat << "\n";
  out << "timings (s): read " << std::fixed << std::setprecision(3) << timings.read << ", reference "
      << timings.reference << ", space " << timings.space << ", hamiltonian " << timings.hamiltonian
      << ", convert+copy " << timings.convert << ", davidson " << result.total_seconds << " of which spmv "
      << result.spmv_seconds << " (" << std::setprecision(1) << 100.0 * result.spmv_share() << "%, " << result.num_spmv
      << " calls, " << std::setprecision(3) << (result.num_spmv > 0 ? 1e3 * result.spmv_seconds / result.num_spmv : 0.0)
      << " ms each), projected eigenproblems " << result.projected_seconds << std::defaultfloat << std::endl;
  res.format = format_name;
  res.plan = description;
  res.device = Exec::name();
  for (int c = 0; c < options.roots; ++c) {
    res.energies.push_back(result.eigenvalues[c] + dump.core_energy);
    res.residuals.push_back(result.residual_norms[c]);
  }
  res.iterations = result.iterations;
  res.num_spmv = result.num_spmv;
  res.converged = result.converged;
  res.davidson_seconds = result.total_seconds;
  res.spmv_seconds = result.spmv_seconds;
  res.projected_seconds = result.projected_seconds;
  return result.converged ? 0 : 1;
}

template <class Matrix, class Diagonal>
int solve_and_report(const Matrix& A, const Diagonal& diagonal, const std::vector<int>& blocks, int irreps,
                     const FciDump& dump, const CiCommandOptions& options, const Timings& timings, CiResult& res,
                     std::ostream& out) {
  using Exec = Kokkos::DefaultExecutionSpace;
  const SpmvPlan<Exec, Matrix> plan(Exec(), A, solvers::DavidsonOptions().spmv);
  return solve_operator_and_report(plan, plan.description(), Matrix::format_name, diagonal, blocks, irreps, dump,
                                   options, timings, res, out);
}

/// The space, the matrix and its structure over the excitation levels.
void print_space_report(const CiCommandOptions& options, const DeterminantSpace& space, const HostCsr& H,
                        const BoundaryChoice<int>& boundary, std::ostream& out) {
  const StructureStats st = structure_stats(H, space);
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

/// Bytes one run needs, estimated before anything large is allocated.
struct MemoryEstimate {
  double space = 0;      ///< host: determinants, string ids, addressing
  double matrix = 0;     ///< CSR on the execution space
  double converted = 0;  ///< the chosen format, when it is not CSR (built on the host from a host CSR)
  double davidson = 0;   ///< the solver's vectors, on the execution space
};

[[noreturn]] void refuse(const std::string& where, double need, double have, const std::string& parts,
                         const std::string& advice) {
  throw MemoryBudgetError("cispmv ci: not enough " + where + " memory: the run needs about " + format_bytes(need) +
                          " (" + parts + "), " + format_bytes(have) + " are available. " + advice);
}

std::string advice(const CiCommandOptions& o, int max_level, double matrix_bytes) {
  std::string s = "What would fit: ";
  if (o.format != "csell") {
    s += "--format csell stores the matrix in ~" + format_bytes(matrix_bytes * 0.4) + " on a GPU; ";
  }
  if (o.roots > 1) s += "fewer --roots; ";
  if (!o.restrict_to_isym) s += "dropping --all-irreps keeps only irrep ISYM (~1/4 of the space in C2v); ";
  s += "a lower --level (now " + std::to_string(max_level) +
       "), or fewer orbitals (frozen core, a smaller basis) in the FCIDUMP.";
  return s;
}

}  // namespace

int ci_command(const CiCommandOptions& options, std::ostream& text_out) {
#if defined(CISPMV_HAVE_MPI)
  if (options.distributed || options.spmv_repetitions > 0) {
    if (!mpi_running()) {
      throw std::invalid_argument(
          "cispmv ci: --distributed and --spmv-repetitions take the distributed code path: start cispmv under "
          "mpirun (one rank is fine)");
    }
    return ci_distributed(options, text_out, MPI_COMM_WORLD);
  }
  if (const int ranks = mpi_world_size(); ranks > 1) return ci_distributed(options, text_out, MPI_COMM_WORLD);
#else
  if (options.distributed || options.spmv_repetitions > 0) {
    throw std::invalid_argument(
        "cispmv ci: --distributed and --spmv-repetitions need MPI; this cispmv was built without it "
        "(CISPMV_ENABLE_MPI)");
  }
#endif
  using Exec = Kokkos::DefaultExecutionSpace;
  using ExecMemory = Exec::memory_space;
  constexpr bool on_host = Kokkos::SpaceAccessibility<Kokkos::HostSpace, ExecMemory>::accessible;
  // On a GPU, CSR and csell are built where they are used; other formats (and --write-mtx) go through
  // a host copy of the CSR Hamiltonian.
  auto stays_on_device = [&](Format f) {
    return !on_host && options.write_mtx.empty() && (f == Format::csr || f == Format::csell);
  };
  // --format factored: the Hamiltonian never assembled (ci::FactoredHamiltonian); --format auto takes it
  // when the assembled matrix would not fit
  bool factored = options.format == "factored";
  if (factored && !options.write_mtx.empty()) {
    throw std::invalid_argument(
        "cispmv ci: --write-mtx writes the assembled matrix; --format factored never builds it");
  }
  const bool may_stay_on_device = options.format == "auto" || factored || stays_on_device(parse_format(options.format));
  if (options.roots < 1) throw std::invalid_argument("cispmv ci: --roots must be at least 1");
  if (options.level < 0) throw std::invalid_argument("cispmv ci: --level must be >= 0");
  if (!(options.drop_tolerance >= 0)) throw std::invalid_argument("cispmv ci: the drop tolerance must be >= 0");
  if (options.format != "auto" && !factored) (void)parse_format(options.format);
  std::size_t budget = std::numeric_limits<std::size_t>::max();
  if (!options.max_memory.empty()) budget = parse_bytes(options.max_memory, "--max-memory");
  // --json: check the file can be written before the run, not after it
  if (!options.json.empty() && options.json != "-") {
    std::ofstream probe(options.json, std::ios::app);
    if (!probe) throw std::runtime_error("cispmv ci: cannot write the --json file " + options.json);
  }
  std::ostringstream discard;
  std::ostream& out = options.json == "-" ? static_cast<std::ostream&>(discard) : text_out;
  Timings timings;
  Kokkos::Timer timer;
  Kokkos::Timer total_timer;

  const FciDump dump = read_fcidump(options.fcidump);
  timings.read = timer.seconds();
  out << "cispmv ci: " << options.fcidump << "\n";
  out << "  orbitals " << dump.num_orbitals << ", electrons " << dump.num_electrons << ", MS2 " << dump.ms2 << ", ISYM "
      << dump.isym << ", core energy " << std::fixed << std::setprecision(10) << dump.core_energy << std::defaultfloat
      << std::endl;
  if (!dump.has_core_energy) {
    out << "warning: " << options.fcidump
        << " has no core-energy line ('value 0 0 0 0'): the total energies below exclude the nuclear repulsion"
        << std::endl;
  }

  // errors of the libraries about this input name the file they come from
  auto in_file = [&](auto&& step) -> decltype(step()) {
    try {
      return step();
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(options.fcidump + ": " + e.what());
    }
  };
  timer.reset();
  const Reference reference =
      in_file([&] { return choose_reference(dump, options.restrict_to_isym, reference_request(options)); });
  timings.reference = timer.seconds();
  out << "reference: " << describe_determinant(reference.determinant, dump.num_orbitals, dump.orbsym) << "\n";
  out << "  chosen by " << reference.method << "; energy " << std::fixed << std::setprecision(10)
      << reference.energy + dump.core_energy << " Eh" << std::defaultfloat << std::endl;

  // The space: counted before it is built, checked against the host's memory.
  const int nalpha = (dump.num_electrons + dump.ms2) / 2, nbeta = (dump.num_electrons - dump.ms2) / 2;
  const double count = count_determinants(dump.num_orbitals, nalpha, nbeta, options.level, dump.orbsym,
                                          options.restrict_to_isym ? dump.isym : 0, reference.determinant);
  const double host_have = static_cast<double>(std::min(budget, host_available_bytes()));
  const double device_have = static_cast<double>(std::min(budget, available_bytes<Exec>()));
  MemoryEstimate mem;
  mem.space = count * (sizeof(Determinant) + 2 * sizeof(std::int32_t));
  if (mem.space > 0.9 * host_have) {
    refuse("host", mem.space, host_have,
           format_bytes(mem.space) + " for " + std::to_string(count).substr(0, 12) + " determinants alone",
           "Use a lower --level or fewer orbitals.");
  }
  // Whether the factored Hamiltonian (the fallback of --format auto where the matrix does not fit) fits:
  // its lists take megabytes, the Davidson's vectors are what is large (with a guard per irrep of the
  // space: `guards`, or before the space is built the irreps the orbitals' irreps can make).
  // On a GPU add the scatter kernel's table, 4 bytes per orbital pair and beta string, and the diagonal
  // replacement's integrals, 8 bytes per orbital pair and alpha string (at most all strings of N_beta, N_alpha
  // electrons).
  const double factored_table = [&] {
    if (on_host) return 0.0;
    auto strings = [&](int k) {
      double c = 1.0;
      for (int i = 0; i < k; ++i) c = c * (dump.num_orbitals - i) / (i + 1);
      return c;
    };
    const double pairs = dump.num_orbitals * (dump.num_orbitals + 1) / 2.0;
    return (4.0 * strings((dump.num_electrons - dump.ms2) / 2) + 8.0 * strings((dump.num_electrons + dump.ms2) / 2)) *
           pairs;
  }();
  auto factored_fits = [&](double determinants, int guards) {
    const double need =
        davidson_vector_bytes(options.roots, determinants, guards) + (on_host ? mem.space : factored_table);
    return need <= 0.9 * (on_host ? host_have : device_have);
  };
  int possible_irreps = 1;
  if (!options.restrict_to_isym) {
    std::uint32_t reach = 1;  // irreps (bit h: irrep h, 0-based) that products of the orbitals' irreps reach
    for (int g : dump.orbsym) {
      for (int h = 0; h < 8; ++h) {
        if ((reach >> h) & 1u) reach |= 1u << (h ^ (g - 1));
      }
    }
    possible_irreps = __builtin_popcount(reach);
  }
  const bool may_fall_back = options.format == "auto" && options.write_mtx.empty();
  // --format auto takes the factored Hamiltonian for full CI wherever its Davidson vectors fit. On a GPU its
  // products are as fast as csell's or faster (s27-g2, H200: all-electron H2O/6-31G 1.93 ms against 2.11,
  // frozen core 0.273 against 0.269, its A1 0.105 against 0.137) and there is no matrix to build (s26-f3: 0.73 s
  // end to end against 1.03 with csell, when its products were 2.4x slower). On CPUs (session 28, our 2 cores,
  // the tile kernel) the all-electron H2O/6-31G full CI took 11.6 s and 0.96 GB against the assembled matrix's
  // 38.9 s and 13.9 GB, the frozen core 1.13 s against 2.86, and its 5 roots 4.06 s against csell's block products'
  // 5.56. Truncated spaces keep the model's choice (the factored walk visits the replacements a truncation leaves
  // out), and so do more than 5 roots (the factored Hamiltonian multiplies one vector at a time; s26-f3:
  // --roots 5 factored 1.19 s, about what csell's block products take on a GPU).
  if (may_fall_back && options.level >= dump.num_electrons && options.roots <= 5 &&
      factored_fits(count, possible_irreps > 1 ? possible_irreps : 0)) {
    factored = true;
    out << "automatic format choice: full CI on " << Exec::name()
        << ": the factored Hamiltonian, never assembled (its products are as fast as the assembled matrix's or "
           "faster, and no matrix is built)"
        << std::endl;
  }
  // A first look at the matrix before the space is built (which takes seconds and gigabytes for a
  // space far too large): the reference's row has one entry per determinant of the space within two
  // excitations of it and of its own irrep (the others couple only through integrals that break the
  // symmetry), counted like the space; rows of a level-ordered CI space are about as long (H2O/6-31G
  // full CI: 679 against a mean of 659). Refused here only when even half of that estimate does not
  // fit; the exact estimate below decides every closer case.
  {
    const int reference_irrep = static_cast<int>(string_irrep(reference.determinant.alpha, dump.orbsym) ^
                                                 string_irrep(reference.determinant.beta, dump.orbsym)) +
                                1;
    const double reference_row = count_determinants(dump.num_orbitals, nalpha, nbeta, std::min(options.level, 2),
                                                    dump.orbsym, reference_irrep, reference.determinant);
    const double matrix = count * reference_row * (sizeof(double) + sizeof(int));
    const double have = on_host ? host_have : device_have;
    if (0.5 * matrix > have && !factored && may_fall_back &&
        factored_fits(count, possible_irreps > 1 ? possible_irreps : 0)) {
      factored = true;
      out << "automatic format choice: the matrix (~" << format_bytes(matrix) << " in CSR, estimated) does not fit in "
          << format_bytes(have) << " on " << Exec::name() << ": the factored Hamiltonian, never assembled" << std::endl;
    } else if (0.5 * matrix > have && !factored) {
      refuse(on_host ? "host" : "device", matrix, have,
             "matrix ~" + format_bytes(matrix) + " in CSR for " + std::to_string(static_cast<long long>(count)) +
                 " determinants with ~" + std::to_string(static_cast<long long>(reference_row)) +
                 " nonzeros per row, estimated before building the space",
             advice(options, std::min(options.level, dump.num_electrons), matrix));
    }
  }
  timer.reset();
  const DeterminantSpace space = in_file(
      [&] { return make_determinant_space(dump, options.level, options.restrict_to_isym, reference.determinant); });
  timings.space = timer.seconds();
  if (space.size() == 0) {
    throw std::invalid_argument(
        options.fcidump + ": the space is empty: no determinant of " + std::to_string(dump.num_electrons) +
        " electrons (MS2 = " + std::to_string(dump.ms2) + ") in " + std::to_string(dump.num_orbitals) +
        " orbitals has irrep ISYM = " + std::to_string(dump.isym) + " of the ORBSYM within excitation level " +
        std::to_string(options.level) + "; check ISYM, or keep every irrep (--all-irreps)");
  }
  out << "  space: " << method_name(space) << " (excitation level <= " << space.max_level
      << " from the reference), irrep "
      << (space.irrep == 0 ? std::string("unrestricted") : std::to_string(space.irrep) + " only") << "\n";
  out << "determinants: " << space.size() << std::endl;
  // every irrep's rows named to the Davidson (its guesses and guards; see DavidsonOptions::row_blocks)
  const int irreps = irrep_count(space);
  const std::vector<int> blocks = irrep_blocks(dump, space, 0, space.size());
  if (irreps > 1 && blocks.empty())
    out << "  the integrals break ORBSYM (they couple the irreps): the Davidson searches the space as one" << std::endl;
  // vectors per product at the start of the solve: the roots and, over several irreps, each irrep's guard
  const int vectors = options.roots + (irreps > 1 ? irreps : 0);
  if (static_cast<std::size_t>(options.roots) > space.size()) {
    throw std::invalid_argument("cispmv ci: " + std::to_string(options.roots) + " roots asked for but the space has " +
                                std::to_string(space.size()) + " determinants");
  }

  // The matrix: its nonzeros estimated from the exact lengths of up to 4096 rows spread over the space.
  // (The factored Hamiltonian needs no such estimate: its lists take megabytes.)
  int csell_block_rows = 0;          // > 0: csell built in blocks of rows, never as a whole CSR
  bool csell_values_inline = false;  // csell without a value table, for block products
  // block products (several roots, or irreps) take csell as FormatParams::for_block_products builds it (one lane,
  // rows sorted in windows, values inline on a GPU), with its value table where the values inline
  // would not fit
  const FormatParams block_params = FormatParams::for_block_products<Exec>();
  if (!factored) {
    const std::size_t n = space.size();
    const std::size_t samples = std::min<std::size_t>(n, 4096);
    std::vector<std::int64_t> rows(samples);
    for (std::size_t i = 0; i < samples; ++i) rows[i] = static_cast<std::int64_t>(i * n / samples);
    HamiltonianOptions hopt;
    hopt.drop_tolerance = options.drop_tolerance;
    const auto lengths = hamiltonian_row_lengths(dump, space, rows, hopt);
    double sum = 0;
    for (std::size_t l : lengths) sum += static_cast<double>(l);
    const double nnz = samples ? sum / static_cast<double>(samples) * static_cast<double>(n) : 0.0;
    const double rows_d = static_cast<double>(n);
    mem.matrix = nnz * (sizeof(double) + sizeof(int)) + (rows_d + 1) * sizeof(std::size_t);
    const bool converts = options.format != "csr";
    const bool to_csell = options.format == "csell" || options.format == "auto";
    // a format of the same order (auto may keep CSR); csell ~0.4x of CSR on a CI Hamiltonian, ~0.85x
    // with its values inline (block products on a GPU, impl::block_values_inline, where that fits)
    const auto converted_bytes = [&] {
      return !converts ? 0.0 : to_csell ? (csell_values_inline ? 0.85 : 0.45) * mem.matrix : mem.matrix;
    };
    csell_values_inline = to_csell && vectors > 1 && block_params.min_table_coverage > 1.0;
    mem.converted = converted_bytes();
    mem.davidson = davidson_vector_bytes(options.roots, rows_d, irreps > 1 ? irreps : 0);
    out << "memory estimate: matrix " << format_bytes(mem.matrix) << " in CSR (~" << std::setprecision(3) << nnz / 1e6
        << std::defaultfloat << "M nonzeros), solver " << format_bytes(mem.davidson) << "; available: host "
        << format_bytes(host_have) << (on_host ? "" : ", device " + format_bytes(device_have)) << std::endl;
    const std::string parts = "matrix " + format_bytes(mem.matrix) +
                              (converts ? ", converted copy " + format_bytes(mem.converted) : std::string()) +
                              ", Davidson vectors " + format_bytes(mem.davidson) + ", space " + format_bytes(mem.space);
    // csell (asked for, or the automatic choice's only way) is built in blocks of rows when its CSR
    // does not fit beside it: one block's CSR at a time (to_compressed_sell_by_blocks)
    const bool csell_allowed = options.write_mtx.empty() && (options.format == "auto" || options.format == "csell");
    const double have = on_host ? host_have : device_have, fill = on_host ? 0.9 : 0.95;
    const double csell_block = std::min(8e9, 0.15 * have);
    const auto need_for = [&] {
      return (on_host ? mem.space + mem.matrix + mem.converted
                      : mem.matrix + (may_stay_on_device ? mem.converted : 0.0)) +
             mem.davidson;
    };
    if (csell_values_inline && need_for() > fill * have) {  // the value table's 4 bytes per entry, then
      csell_values_inline = false;
      mem.converted = converted_bytes();
      out << "csell's values inline (faster block products) do not fit beside the CSR on " << Exec::name()
          << ": csell keeps its value table" << std::endl;
    }
    const double need = need_for();
    if (need > fill * have && csell_allowed && nnz > 0 &&
        (on_host ? mem.space : 0.0) + 0.45 * mem.matrix + csell_block + mem.davidson <= fill * have) {
      const double row_bytes = mem.matrix / static_cast<double>(n);
      csell_block_rows = hamiltonian_block_rows(row_bytes, csell_block);
      out << "the CSR (" << format_bytes(mem.matrix) << ") does not fit beside its csell on " << Exec::name()
          << ": csell is built in blocks of " << csell_block_rows << " rows (~"
          << format_bytes(static_cast<double>(csell_block_rows) * row_bytes) << " of CSR at a time)" << std::endl;
    } else if (need > fill * have && may_fall_back && factored_fits(rows_d, irreps > 1 ? irreps : 0)) {
      factored = true;
      out << "automatic format choice: the matrix does not fit (" << parts << " against " << format_bytes(have)
          << " on " << Exec::name() << "): the factored Hamiltonian, never assembled" << std::endl;
    } else if (need > fill * have) {
      refuse(on_host ? "host" : "device", need, have, parts, advice(options, space.max_level, mem.matrix));
    }
    if (!on_host && !factored) {
      const double host_need =
          mem.space + (may_stay_on_device || csell_block_rows > 0 ? 0.0 : mem.matrix + mem.converted);
      if (host_need > 0.9 * host_have)
        refuse("host", host_need, host_have, parts, advice(options, space.max_level, mem.matrix));
    }
  }

  // The Hamiltonian, built on the execution space the solver runs on.
  timer.reset();
  HamiltonianOptions hopt;
  hopt.drop_tolerance = options.drop_tolerance;
  if (options.progress) {
    hopt.progress = [&out, last = -1](const char* pass, double fraction) mutable {
      const int percent = static_cast<int>(100 * fraction);
      if (percent / 25 != last / 25 || percent == 100) {
        out << "  hamiltonian " << pass << " pass: " << percent << "%" << std::endl;
        last = percent;
      }
      if (percent == 100) last = -1;
    };
  }
  CiResult res;
  int status = 0;
  std::size_t nnz = 0;
  if (factored) {
    // the Hamiltonian applied from its integrals and string lists (ci/factored.hpp): the Davidson's
    // vectors are what is large
    const std::size_t n = space.size();
    mem.davidson = davidson_vector_bytes(options.roots, static_cast<double>(n), irreps > 1 ? irreps : 0);
    const double have = on_host ? host_have : device_have;
    if (mem.davidson + (on_host ? mem.space : factored_table) > 0.95 * have) {
      refuse(on_host ? "host" : "device", mem.davidson + (on_host ? mem.space : factored_table), have,
             "Davidson vectors " + format_bytes(mem.davidson) + " for " + std::to_string(n) + " determinants" +
                 (on_host ? std::string()
                          : ", the factored Hamiltonian's table and integrals " + format_bytes(factored_table)),
             "Fewer --roots, a lower --level or fewer orbitals would fit.");
    }
    FactoredOptions fopt;
    fopt.drop_tolerance = options.drop_tolerance;
    const auto F = allocating("the factored Hamiltonian's string lists", "",
                              [&] { return FactoredHamiltonian<Exec>(Exec(), dump, space, fopt); });
    const auto host_diagonal = hamiltonian_diagonal(dump, space);
    const auto diagonal = impl::view_of<double, ExecMemory>("cispmv::ci::diagonal", host_diagonal);
    Kokkos::fence();
    timings.hamiltonian = timer.seconds();
    out << "hamiltonian: factored, never assembled (H_alpha, H_beta and the alpha-beta couplings from the "
           "integrals): "
        << format_bytes(static_cast<double>(F.bytes())) << " of string lists and integrals on " << Exec::name()
        << ", built in " << std::fixed << std::setprecision(3) << timings.hamiltonian << " s (diagonal included); "
        << std::defaultfloat << F.alpha_beta_terms() << " alpha-beta terms per product, pairs of other irreps "
        << (F.uses_symmetry() ? "skipped" : "visited") << ", same-spin terms "
        << (F.same_spin_gemm() ? "as dense products (" + std::to_string(F.same_spin_flops() * 1e-9) + " GFLOP" +
                                     (F.concurrent_launches() ? ", beside the alpha-beta sum)" : ")")
                               : std::string("from the lists"))
        << std::endl;
    status = solve_operator_and_report(F, "factored Hamiltonian", "factored", diagonal, blocks, irreps, dump, options,
                                       timings, res, out);
  } else if (csell_block_rows > 0) {
    // every block built as CSR, encoded into the csell and freed (twice: count, fill), its diagonal kept
    const std::int64_t n = static_cast<std::int64_t>(space.size());
    Kokkos::View<double*, ExecMemory> diagonal("cispmv::ci::diagonal", space.size());
    const auto C = allocating(
        "Compressed Sliced ELLPACK (estimated " + format_bytes(0.45 * mem.matrix) + "), built in blocks of rows",
        advice(options, space.max_level, mem.matrix),
        [&] { return build_hamiltonian_csell(Exec(), dump, space, 0, n, csell_block_rows, hopt, diagonal); });
    timings.hamiltonian = timer.seconds();
    out << "nonzeros: " << C.nnz() << " (both triangles, diagonal always stored, |H_ij| < " << std::scientific
        << std::setprecision(0) << options.drop_tolerance << std::defaultfloat << " dropped), built on " << Exec::name()
        << " as csell in blocks of rows in " << std::fixed << std::setprecision(3) << timings.hamiltonian
        << " s: " << format_bytes(static_cast<double>(allocated_bytes(C))) << " (" << std::setprecision(2)
        << static_cast<double>(allocated_bytes(C)) / mem.matrix << "x of its CSR), " << C.rest_nnz()
        << " entries outside the value table" << std::defaultfloat << std::endl;
    nnz = C.nnz();
    status = solve_and_report(C, diagonal, blocks, irreps, dump, options, timings, res, out);
  } else {
    CsrMatrix<double, int, std::size_t, Exec> H_exec =
        allocating("the Hamiltonian (estimated " + format_bytes(mem.matrix) + ")", "",
                   [&] { return build_hamiltonian(Exec(), dump, space, hopt); });
    timings.hamiltonian = timer.seconds();
    nnz = H_exec.nnz();
    out << "nonzeros: " << nnz << " (both triangles, diagonal always stored, |H_ij| < " << std::scientific
        << std::setprecision(0) << options.drop_tolerance << std::defaultfloat << " dropped), built on " << Exec::name()
        << " in " << std::fixed << std::setprecision(3) << timings.hamiltonian << " s" << std::defaultfloat
        << std::endl;

    Format format = Format::csr;
    if (options.format == "auto") {
      // for Davidson's reads of the matrix, conversion included (from the row lengths and sampled values):
      // the block Davidson reads it once per iteration whatever the roots (H2O/6-31G full CI: 14, 17 and
      // 20 reads for 1, 5 and 10 roots); several vectors per product (roots, or irreps' guards) by the
      // block model (choose_format's `vectors`): on a CPU always, on a GPU where csell's values inline fit
      const FormatChoice choice =
          choose_format<Exec>(H_exec, 32, davidson_reads, (on_host || csell_values_inline) ? vectors : 1);
      format = choice.format;
      out << "automatic format choice: " << choice.summary() << "\n";
    } else {
      format = parse_format(options.format);
    }
    if (stays_on_device(format)) {
      // CSR stays where it was built and csell is encoded there: no host copy of the matrix at all
      const auto diagonal = csr_diagonal(Exec(), H_exec);
      if (format == Format::csr) {
        status = solve_and_report(H_exec, diagonal, blocks, irreps, dump, options, timings, res, out);
      } else {
        timer.reset();
        const auto C = allocating(
            "Compressed Sliced ELLPACK (estimated " + format_bytes(mem.converted) + ") beside the CSR Hamiltonian",
            advice(options, space.max_level, mem.matrix), [&] {
              // one vector per product (one root of one irrep): lanes per row where the rows leave
              // the GPU's thread slots free, rows sorted in the automatic windows; several: block_params
              const bool one_root = vectors == 1;
              const int lanes =
                  one_root ? impl::automatic_row_lanes(H_exec, impl::gpu_thread_slots<Exec>()) : block_params.row_lanes;
              const double coverage =
                  csell_values_inline ? block_params.min_table_coverage : FormatParams{}.min_table_coverage;
              return to_compressed_sell(H_exec, 32, 65536, coverage, std::size_t(1) << 22, ValueTableOrder::automatic,
                                        lanes, one_root ? -1 : block_params.sort_window);
            });
        const double csr_bytes = static_cast<double>(allocated_bytes(H_exec));
        H_exec = {};
        timings.convert = timer.seconds();
        out << "converted to csell on " << Exec::name() << " in " << std::fixed << std::setprecision(3)
            << timings.convert << " s: " << format_bytes(static_cast<double>(allocated_bytes(C))) << " ("
            << std::setprecision(2) << static_cast<double>(allocated_bytes(C)) / csr_bytes << "x of CSR), "
            << (C.uses_table ? std::to_string(C.rest_nnz()) + " entries outside the value table"
                             : std::string("values inline (for block products)"))
            << (C.row_lanes > 1 ? ", " + std::to_string(C.row_lanes) + " lanes per row" : std::string())
            << std::defaultfloat << std::endl;
        status = solve_and_report(C, diagonal, blocks, irreps, dump, options, timings, res, out);
      }
    } else {
      // other formats are converted from a host CSR (the host copy of a device-built matrix)
      if (!on_host) {
        const double need = mem.space + 2.0 * mem.matrix;
        if (need > 0.9 * host_have) {
          refuse("host", need, host_have,
                 "a host copy of the matrix (" + format_bytes(mem.matrix) + ") to convert it to " +
                     format_info(format).name + ", and the converted copy",
                 "--format csr or csell stay on the device. " + advice(options, space.max_level, mem.matrix));
        }
      }
      timer.reset();
      // the same Views on a host build; a copy of a device-built matrix, whose device copy then goes
      HostCsr H = H_exec.template map_views<Kokkos::DefaultHostExecutionSpace>(
          [](const auto& v) { return Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), v); });
      if (!on_host) H_exec = {};
      const auto boundary = choose_boundary(H);
      print_space_report(options, space, H, boundary, out);
      if (!options.write_mtx.empty()) {
        write_matrix_market(options.write_mtx, H, true);
        out << "wrote " << options.write_mtx << " (Matrix Market, symmetric; values without the core energy)\n";
      }
      auto params = FormatParams::for_space<Exec>();
      params.table_order = impl::default_table_order<Exec>();  // a Davidson's few dozen products: no ordering pass
      params.boundary = boundary.boundary;
      const auto diagonal = Kokkos::create_mirror_view_and_copy(ExecMemory(), csr_diagonal(H));
      status = with_host_format(format, H, params, [&](const auto& host_format) {
        const auto A = to_device<Exec>(host_format);
        Kokkos::fence();
        timings.convert = timer.seconds();
        return solve_and_report(A, diagonal, blocks, irreps, dump, options, timings, res, out);
      });
    }
  }
  out << "total " << std::fixed << std::setprecision(3) << total_timer.seconds() << " s" << std::defaultfloat
      << std::endl;

  if (!options.json.empty()) {
    nlohmann::json j;
    j["fcidump"] = options.fcidump;
    j["orbitals"] = dump.num_orbitals;
    j["electrons"] = dump.num_electrons;
    j["ms2"] = dump.ms2;
    j["isym"] = dump.isym;
    j["core_energy"] = dump.core_energy;
    j["reference"] = {{"occupation", describe_determinant(reference.determinant, dump.num_orbitals, dump.orbsym)},
                      {"method", reference.method},
                      {"energy", reference.energy + dump.core_energy}};
    j["space"] = {{"method", method_name(space)},
                  {"max_level", space.max_level},
                  {"irrep", space.irrep},
                  {"determinants", space.size()}};
    std::vector<std::size_t> per_level;
    for (int l = 0; l <= space.max_level; ++l) per_level.push_back(space.level_size(l));
    j["space"]["determinants_per_level"] = per_level;
    // (factored: never assembled, no nonzeros stored)
    j["matrix"] = {{"nonzeros", nnz}, {"built_on", Exec::name()}, {"assembled", !factored}};
    j["davidson"] = {{"format", res.format},         {"plan", res.plan},           {"device", res.device},
                     {"roots", options.roots},       {"energies", res.energies},   {"residual_norms", res.residuals},
                     {"iterations", res.iterations}, {"spmv_calls", res.num_spmv}, {"converged", res.converged}};
    j["timings_s"] = {{"read", timings.read},          {"reference", timings.reference},
                      {"space", timings.space},        {"hamiltonian", timings.hamiltonian},
                      {"convert", timings.convert},    {"davidson", res.davidson_seconds},
                      {"spmv", res.spmv_seconds},      {"projected_eigenproblems", res.projected_seconds},
                      {"total", total_timer.seconds()}};
    write_ci_json(j, options.json, text_out);
  }
  return status;
}

}  // namespace cispmv::app
