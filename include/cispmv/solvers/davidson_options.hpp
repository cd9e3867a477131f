#pragma once
/// \file solvers/davidson_options.hpp
/// What a Davidson solve (solvers/davidson.hpp) is told and what it returns: its settings (DavidsonOptions), one
/// line of progress per iteration (DavidsonProgress), the result (DavidsonResult), and the memory plan that sizes
/// its subspace from a memory budget (davidson_memory_plan): the basis V and its products AV, the residuals (which
/// hold the eigenvectors at the end), a large restart's scratch and the block products' buffers, each a vector of
/// the operator's rows.

#include <Kokkos_Core.hpp>

#include "cispmv/impl/kernels/common.hpp"
#include "cispmv/impl/launch.hpp"
#include "cispmv/options.hpp"
#include "cispmv/solvers/davidson_kernels.hpp"

#include <algorithm>
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace cispmv::solvers {

/// One iteration of a solve, as DavidsonOptions::on_iteration and DavidsonResult::history report it.
struct DavidsonProgress {
  int iteration = 0;                ///< subspace expansions done so far (0: the start vectors)
  std::vector<double> eigenvalues;  ///< the roots' Ritz values, ascending
  double max_residual = 0.0;        ///< the largest residual norm of the roots
  double seconds = 0.0;             ///< since the solve began
  int subspace = 0;                 ///< basis size
  int restarts = 0;                 ///< so far
  int num_spmv = 0;                 ///< products so far
};

/// Settings of davidson().
///
/// Convergence: a root is converged when its residual ||A x - theta x||_2 (x normalised) is below
/// `residual_tolerance`. The eigenvalue error is then about residual^2 / gap, so the default 1e-6
/// gives energies to ~1e-11 Eh for gaps of 0.1 Eh; 1e-5 suffices for 1e-8 Eh.
struct DavidsonOptions {
  int num_roots = 1;                 ///< lowest eigenvalues wanted
  double residual_tolerance = 1e-6;  ///< on the 2-norm of every root's residual
  int max_iterations = 200;          ///< subspace expansions (each one correction per unconverged root)
  int max_subspace = 0;              ///< basis size that triggers a restart; 0: max(24, 8 * (roots + guards))
  int restart_size = 0;              ///< vectors kept at a restart (thick restart); 0: 2 * (roots + guards)
  /// A restart keeps, beside the Ritz vectors of the pairs that must converge, their Ritz vectors of the iteration
  /// before (GD+k: the step the last iteration took, as LOBPCG keeps it) where restart_size leaves room, and more
  /// Ritz vectors only after them; false: the lowest restart_size Ritz vectors. With the smallest subspace that holds
  /// them (3 per pair) the solve converges nearly as fast as an unbounded one (tst_ci.hpp's bounded test).
  bool keep_previous = true;
  /// Bytes the solver's vectors may take in the memory of its execution space (0: no bound). The subspace is
  /// then the largest up to max_subspace whose vectors fit (davidson_memory_plan), down to one Ritz vector and one
  /// correction per pair that must converge (a restart every iteration); a budget that holds not even that is
  /// refused with std::invalid_argument before anything is allocated.
  double memory_budget = 0.0;
  /// Start vectors: unit vectors on this many smallest diagonal entries (0: num_roots; at least
  /// num_roots, at most max_subspace). More of them guard against missing a root whose eigenvector
  /// is (nearly) orthogonal to the first guesses, e.g. in a block the guesses do not couple to.
  int num_guesses = 0;
  /// Start vectors the caller gives (a previous solve's eigenvectors, as an outer loop such as CASSCF's passes them
  /// back): start_count of them, start_fill(c, values) writing vector c's num_rows() values (this process's rows) to
  /// host memory. Each is orthonormalised against those before it and dropped where (nearly) dependent on them;
  /// the unit vectors then only fill up to max(num_roots, num_guesses) start vectors (none where the given ones
  /// suffice), random_start as set.
  int start_count = 0;
  std::function<void(int, double*)> start_fill;
  /// One more start vector, dense and pseudo-random, so that no block of the matrix is out of the
  /// solver's reach (see initial_guesses); false: unit vectors only. H2O/6-31G frozen-core full CI,
  /// all irreducible representations, 5 roots: with unit vectors only the fifth root came out as the
  /// seventh eigenvalue (-75.7155 Eh against PySCF's -75.7441), converged.
  bool random_start = true;
  /// Blocks of rows the operator never couples, where the caller knows them (a CI Hamiltonian's
  /// irreducible representations): row_blocks[i] in [0, 32) is the block of row i (of this process's
  /// rows, for a distributed operator); empty: none known. Unit guesses and Davidson's corrections never
  /// leave the blocks they start in, and a random start vector's Ritz value is too high for the solver
  /// to improve it, so a solve can converge with a lower root of some block missing (H2O/6-31G
  /// all-electron full CI, all irreps, 5 roots: the 7th eigenvalue came out as the 5th, random start or
  /// not). With blocks: the start holds each block's lowest diagonal row beside the num_guesses lowest
  /// rows (and, with random_start, one random vector per block); every correction stays in its Ritz
  /// vector's block; and in every block the lowest Ritz pair that is not a wanted root (the block's
  /// guard) must converge too. A converged guard above the last wanted root shows that its block holds
  /// no lower root the solve missed (as far as Davidson finds a block's lowest root: symmetries inside
  /// a block that the blocks do not name, e.g. the spin parity of M_S = 0 determinants, are not guarded).
  std::vector<int> row_blocks;
  double denominator_guard = 1e-4;   ///< |theta - D_i| is raised to at least this in (D - theta)^-1
  double linear_dependence = 1e-10;  ///< a correction whose norm drops below this (relative) is discarded
  SpmvOptions spmv = {};             ///< the plan's options when davidson() is given a matrix
  /// Keep the solver's vectors in the memory of its execution space and copy each product's x to the operator's
  /// memory and its y back, also where that execution space reaches the operator's memory (where it does not,
  /// davidson() always does so): what a subspace in host memory does, tried on any backend.
  bool stage_products = false;
  /// Called after every iteration with its progress (long solves report it as they go). Empty: not called.
  std::function<void(const DavidsonProgress&)> on_iteration;
};

/// Result of davidson(): eigenpairs, convergence and the time split.
template <class MemorySpace>
struct DavidsonResult {
  std::vector<double> eigenvalues;           ///< num_roots lowest Ritz values, ascending
  std::vector<double> residual_norms;        ///< final ||A x - theta x|| per root
  std::vector<double> max_residual_history;  ///< largest residual of the wanted roots, per iteration
  std::vector<DavidsonProgress> history;     ///< every iteration's progress
  /// num_rows x num_roots Ritz vectors (orthonormal columns), in the memory of the solver's execution space.
  Kokkos::View<double**, Kokkos::LayoutLeft, MemorySpace> eigenvectors;
  bool converged = false;
  int iterations = 0;  ///< subspace expansions done
  int restarts = 0;
  int guards = 0;              ///< blocks (DavidsonOptions::row_blocks) whose guard pair converged with the roots
  int num_spmv = 0;            ///< reads of the matrix: products with one vector, or with a block of them
  int subspace_size = 0;       ///< basis size at the end
  int max_subspace = 0;        ///< the basis size that triggered a restart (davidson_memory_plan)
  double total_seconds = 0.0;  ///< the whole solve, fenced
  double spmv_seconds = 0.0;   ///< inside the operator's apply, fenced before and after each call
  /// the host's small eigenproblems of the projected matrix (Rayleigh-Ritz), one per iteration
  double projected_seconds = 0.0;
  double spmv_share() const { return total_seconds > 0 ? spmv_seconds / total_seconds : 0.0; }
};

/// The vectors a Davidson solve allocates, each of the operator's (this process's) rows.
struct DavidsonMemoryPlan {
  int active = 0;        ///< pairs that must converge: the roots and the blocks' guards
  int max_subspace = 0;  ///< basis size that triggers a restart
  int restart_size = 0;  ///< vectors kept at a restart
  int basis = 0;         ///< columns of V and AV: 2 max_subspace
  /// the residuals (the eigenvectors at the end): active; and a restart's scratch, max(active, keep), where that is
  /// more than impl::in_place_columns (a restart forms fewer in place)
  int work = 0;
  int blocks = 0;             ///< the row-major buffers of block products (operators with a block apply)
  int staged = 0;             ///< x and y of the products in the operator's memory, where it is not the solver's (2)
  double vector_bytes = 0.0;  ///< one vector
  double bytes = 0.0;         ///< all of V, AV, the work columns and the blocks (and the rows' blocks), in its memory
  bool bounded = false;       ///< the budget made the subspace smaller than asked for
  bool fits = true;           ///< false: not even the smallest subspace fits the budget
  int vectors() const { return basis + work + blocks; }
  /// "V and AV 2 x 16, work 4: 36 vectors of 3.61 GB, 130 GB" (bytes formatted by the caller's `gb`).
  std::string describe(const std::function<std::string(double)>& gb) const {
    return "V and AV 2 x " + std::to_string(max_subspace) + ", restart to " + std::to_string(restart_size) + ", work " +
           std::to_string(work) + (blocks > 0 ? ", block buffers " + std::to_string(blocks) : "") + ": " +
           std::to_string(vectors()) + " vectors of " + gb(vector_bytes) + ", " + gb(bytes) +
           (staged > 0 ? " (+ " + std::to_string(staged) + " vectors in the operator's memory)" : "");
  }
};

/// The subspace of a solve of `rows` rows (of `global_rows` in all; 0: the same) with `guards` blocks' guards
/// (DavidsonOptions::row_blocks: the blocks that hold rows, where there are several), in the memory of Exec:
/// max_subspace and restart_size as `opts` ask (0: max(24, 8 active) and 2 active), shrunk to the largest basis
/// whose vectors fit opts.memory_budget, but never below one Ritz vector and one correction per active pair
/// (`fits` false where even that does not fit). `block_products`: the operator reads itself once for a block of
/// vectors (has_block_apply), whose buffers count too; `staged`: the operator's memory is not the solver's, its x
/// and y are copied (counted apart).
template <class Exec>
DavidsonMemoryPlan davidson_memory_plan(std::size_t rows, const DavidsonOptions& opts, int guards, bool block_products,
                                        bool staged = false, std::size_t global_rows = 0) {
  DavidsonMemoryPlan p;
  const std::size_t N = global_rows > 0 ? global_rows : rows;
  const int k = opts.num_roots;
  p.active = k + guards;
  p.vector_bytes = static_cast<double>(rows) * sizeof(double);
  p.staged = staged ? 2 : 0;
  int blocks = 0;
  if (block_products && !staged) {  // the widest block of the start (unit and random vectors per block)
    const int start = std::max(k, opts.num_guesses) + 2 * guards;
    const int width = std::min(std::max(p.active, start), 16);
    if (width > 1) blocks = 2 * cispmv::impl::block_buffer_stride<Exec>(width);
  }
  const std::size_t wanted =
      static_cast<std::size_t>(opts.max_subspace > 0 ? opts.max_subspace : std::max(24, 8 * p.active));
  const int most = static_cast<int>(std::min(N, wanted));
  const auto plan_for = [&](int m) {
    p.max_subspace = m;
    p.restart_size =
        std::min(m - p.active, std::max(p.active, opts.restart_size > 0 ? opts.restart_size : 2 * p.active));
    p.basis = 2 * m;
    const int kept = std::max(p.active, p.restart_size);  // at most what a restart keeps (the solver's W, if any)
    p.work = p.active + (kept > impl::in_place_columns ? kept : 0);
    p.blocks = blocks;
    p.bytes = p.vector_bytes * p.vectors() + (guards > 0 ? static_cast<double>(rows) * sizeof(int) : 0.0);
  };
  plan_for(most);
  if (opts.memory_budget <= 0.0 || p.bytes <= opts.memory_budget) return p;
  const int least = std::min(most, 2 * p.active);
  for (int m = most - 1; m >= least; --m) {
    plan_for(m);
    if (p.bytes <= opts.memory_budget) {
      p.bounded = true;
      return p;
    }
  }
  p.fits = false;
  return p;
}

}  // namespace cispmv::solvers
