#pragma once
// One run of `cispmv ci` between its steps (ci_command.cpp reads, plans and reports; ci_factored.cpp and
// ci_assembled.cpp build the operator and solve): what was read, what was planned, and what came out, and the
// Davidson on any operator with its report.
#include "ci_common.hpp"
#include "ci_vectors.hpp"
#include "commands.hpp"

#include "cispmv/ci.hpp"
#include "cispmv/memory_budget.hpp"

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstdint>
#include <iomanip>
#include <new>
#include <ostream>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace cispmv::app {

struct CiTimings {
  double read = 0, reference = 0, space = 0, hamiltonian = 0, convert = 0;
};

/// Bytes one run needs, estimated before anything large is allocated.
struct CiMemoryEstimate {
  double space = 0;      ///< host: determinants, string ids, addressing
  double matrix = 0;     ///< CSR on the execution space
  double converted = 0;  ///< the chosen format, when it is not CSR (built on the host from a host CSR)
  double davidson = 0;   ///< the solver's vectors, on the execution space
};

/// What the run found: the end of the text report and the --json file.
struct CiResult {
  std::string format, plan, device;
  std::vector<double> energies, residuals;
  int iterations = 0, num_spmv = 0, restarts = 0, max_subspace = 0;
  bool converged = false;
  double davidson_seconds = 0, spmv_seconds = 0, projected_seconds = 0;
};

/// The run: its input, its plan and its results, shared by the steps.
struct CiRun {
  using Exec = Kokkos::DefaultExecutionSpace;
  static constexpr bool on_host = Kokkos::SpaceAccessibility<Kokkos::HostSpace, Exec::memory_space>::accessible;

  CiRun(const CiCommandOptions& o, std::ostream& text) : options(o), out(text) {}

  const CiCommandOptions& options;
  std::ostream& out;
  ci::FciDump dump;
  ci::Reference reference;
  ci::DeterminantSpace space;
  int irreps = 1;           ///< irreps of the space's determinants
  int guards = 0;           ///< the Davidson's blocks' guards: the irreps, where several and uncoupled, else 0
  std::vector<int> blocks;  ///< the Davidson's row blocks (irrep of each row), empty where none
  double host_have = 0, device_have = 0;
  CiMemoryEstimate mem;
  CiTimings timings;
  CiResult result;
  bool factored = false;       ///< the factored Hamiltonian, never assembled
  double davidson_budget = 0;  ///< bytes the Davidson's vectors may take where they live (0: no bound)
  bool host_subspace = false;  ///< the Davidson's vectors in host memory, each product's x and y copied
  std::vector<solvers::DavidsonProgress> history;  ///< the solve's iterations (for --json)
  int csell_block_rows = 0;                        ///< > 0: csell built in blocks of rows, never as a whole CSR
  bool csell_values_inline = false;                ///< csell without a value table, for block products
  std::size_t nnz = 0;                             ///< of the assembled matrix (0: factored)
  VectorFile start;                                ///< --start-vectors (count 0: none)

  /// vectors per product at the start of the solve: the roots and, over several irreps, each irrep's guard
  int vectors() const { return options.roots + guards; }
  double have() const { return on_host ? host_have : device_have; }
  std::string where() const { return on_host ? "host" : "device"; }
};

/// "What would fit" after a refusal for lack of memory.
std::string ci_memory_advice(const CiCommandOptions& o, int max_level, double matrix_bytes);

/// Refuses the run for lack of memory `where` ("host" or "device"): a MemoryBudgetError with the need, its parts
/// and the advice.
[[noreturn]] void ci_refuse(const std::string& where, double need, double have, const std::string& parts,
                            const std::string& advice);

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

/// The Davidson's settings for the run: its roots, tolerance, iterations, subspace and memory budget, and blocks.
inline solvers::DavidsonOptions davidson_options(const CiRun& run) {
  solvers::DavidsonOptions dopts;
  dopts.num_roots = run.options.roots;
  dopts.residual_tolerance = run.options.residual_tolerance;
  dopts.max_iterations = run.options.max_iterations;
  dopts.max_subspace = run.options.max_subspace;
  dopts.memory_budget = run.davidson_budget;
  dopts.row_blocks = run.blocks;
  if (run.start.count > 0) {  // a previous solve's vectors: no random vector beside them where they hold every root
    dopts.start_count = static_cast<int>(std::min<std::int64_t>(run.start.count, run.options.roots));
    dopts.start_fill = [file = run.start](int c, double* values) { read_vector(file, c, values); };
    dopts.random_start = run.start.count < run.options.roots;
  }
  return dopts;
}

/// --save-vectors: the solve's Ritz vectors (rows x roots, in `Exec`'s memory) written through a host buffer.
template <class Vectors>
void save_vectors(const CiRun& run, const Vectors& vectors, const std::vector<double>& energies) {
  Kokkos::Timer timer;
  const auto rows = static_cast<std::int64_t>(vectors.extent(0));
  const double bytes = write_vector_file(
      run.options.save_vectors, rows, energies, [&](std::int64_t c, std::int64_t first, std::int64_t n, double* out) {
        const Kokkos::View<double*, Kokkos::LayoutLeft, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>
            chunk(out, static_cast<std::size_t>(n));
        Kokkos::deep_copy(chunk, Kokkos::subview(vectors, std::make_pair(first, first + n), c));
      });
  run.out << "saved " << energies.size() << (energies.size() == 1 ? " vector" : " vectors") << " to "
          << run.options.save_vectors << " (" << format_bytes(bytes) << ") in " << std::fixed << std::setprecision(1)
          << timer.seconds() << " s" << std::defaultfloat << std::endl;
}

/// The Davidson on `op` (an operator the solver takes: a plan of a format, or the factored Hamiltonian) with the
/// run's roots, tolerance and blocks, its report (`description` names the operator) and its results in run.result;
/// returns 0 when it converged, else 1. Exec: where the solver's vectors live (the host's space for a subspace in
/// host memory).
template <class Exec = CiRun::Exec, class Operator, class Diagonal>
int solve_and_report(CiRun& run, const Operator& op, const std::string& description, const std::string& format_name,
                     const Diagonal& diagonal) {
  const Exec exec;
  const CiCommandOptions& options = run.options;
  std::ostream& out = run.out;
  solvers::DavidsonOptions dopts = davidson_options(run);
  // an iteration a line once the solve has taken a few seconds (a line for each iteration from then on)
  bool reporting = false;
  dopts.on_iteration = [&](const solvers::DavidsonProgress& p) {
    if (!options.progress || (!reporting && p.seconds < 3.0)) return;
    if (!reporting) out << "  iteration       energy (Eh)    residual   subspace  restarts   products   seconds\n";
    reporting = true;
    out << "  " << std::setw(9) << p.iteration << std::fixed << std::setprecision(10) << std::setw(18)
        << (p.eigenvalues.empty() ? 0.0 : p.eigenvalues[0] + run.dump.core_energy) << std::scientific
        << std::setprecision(2) << std::setw(12) << p.max_residual << std::defaultfloat << std::setw(11) << p.subspace
        << std::setw(10) << p.restarts << std::setw(11) << p.num_spmv << std::fixed << std::setprecision(1)
        << std::setw(10) << p.seconds << std::defaultfloat << std::endl;
  };
  out << "davidson: format " << description << " on " << CiRun::Exec::name()
      << (std::is_same_v<Exec, CiRun::Exec> ? std::string() : std::string(", its vectors on ") + Exec::name()) << ", "
      << options.roots << (options.roots == 1 ? " root" : " roots") << ", residual tolerance " << std::scientific
      << std::setprecision(1) << options.residual_tolerance << std::defaultfloat << std::endl;
  const auto result = allocating(
      "the Davidson vectors (" + std::to_string(options.roots) + (options.roots == 1 ? " root, " : " roots, ") +
          std::to_string(op.num_rows()) + " rows)",
      "Fewer --roots, or a smaller space, would fit.", [&] { return solvers::davidson(exec, op, diagonal, dopts); });

  out << "  iterations " << result.iterations << ", restarts " << result.restarts << ", SpMVs " << result.num_spmv
      << ", subspace at most " << result.max_subspace << ", final " << result.subspace_size << ", "
      << (result.converged ? "converged" : "NOT converged") << "\n";
  if (!run.blocks.empty()) out << "  " << guards_line(result.guards, run.irreps) << "\n";
  out << "  root       eigenvalue (Eh)     total energy (Eh)   residual\n";
  for (int c = 0; c < options.roots; ++c) {
    out << "  " << std::setw(4) << c + 1 << std::fixed << std::setprecision(10) << std::setw(19)
        << result.eigenvalues[c] << std::setw(22) << result.eigenvalues[c] + run.dump.core_energy << std::scientific
        << std::setprecision(2) << std::setw(11) << result.residual_norms[c] << std::defaultfloat << "\n";
  }
  out << "  core energy " << std::fixed << std::setprecision(10) << run.dump.core_energy << std::defaultfloat << "\n";
  const CiTimings& t = run.timings;
  out << "timings (s): read " << std::fixed << std::setprecision(3) << t.read << ", reference " << t.reference
      << ", space " << t.space << ", hamiltonian " << t.hamiltonian << ", convert+copy " << t.convert << ", davidson "
      << result.total_seconds << " of which spmv " << result.spmv_seconds << " (" << std::setprecision(1)
      << 100.0 * result.spmv_share() << "%, " << result.num_spmv << " calls, " << std::setprecision(3)
      << (result.num_spmv > 0 ? 1e3 * result.spmv_seconds / result.num_spmv : 0.0)
      << " ms each), projected eigenproblems " << result.projected_seconds << std::defaultfloat << std::endl;
  CiResult& res = run.result;
  res.format = format_name;
  res.plan = description;
  res.device = Exec::name();
  for (int c = 0; c < options.roots; ++c) {
    res.energies.push_back(result.eigenvalues[c] + run.dump.core_energy);
    res.residuals.push_back(result.residual_norms[c]);
  }
  if (!options.save_vectors.empty()) save_vectors(run, result.eigenvectors, res.energies);
  run.history = result.history;
  res.iterations = result.iterations;
  res.restarts = result.restarts;
  res.max_subspace = result.max_subspace;
  res.num_spmv = result.num_spmv;
  res.converged = result.converged;
  res.davidson_seconds = result.total_seconds;
  res.spmv_seconds = result.spmv_seconds;
  res.projected_seconds = result.projected_seconds;
  return result.converged ? 0 : 1;
}

/// The factored Hamiltonian built on the execution space, and the Davidson on it (ci_factored.cpp).
int solve_factored(CiRun& run);
/// The Hamiltonian assembled on the execution space (as csell in blocks of rows where planned, else as CSR, then
/// converted to the chosen format), and the Davidson on it (ci_assembled.cpp).
int solve_assembled(CiRun& run);

}  // namespace cispmv::app
