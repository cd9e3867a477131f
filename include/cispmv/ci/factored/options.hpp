#pragma once
/// \file ci/factored/options.hpp
/// What a user of the factored Hamiltonian may set (ci::FactoredOptions: the tolerances that decide which terms
/// exist), and the internal switches that the tests and the benchmarks use to run each kernel and each part of a
/// product on its own (impl::FactoredTuning). Every automatic choice of the switches is made in
/// ci/factored/policy.hpp from the backend and the space; docs/performance.md gives the measurements behind them.

namespace cispmv::ci {

/// Options of the factored Hamiltonian.
struct FactoredOptions {
  /// Same-spin string matrix elements (H_alpha, H_beta) below this are not stored, as the assembled
  /// Hamiltonian drops its elements (HamiltonianOptions::drop_tolerance).
  double drop_tolerance = 1e-14;
  /// As HamiltonianOptions::symmetry_noise: when every integral that breaks ORBSYM is at most this
  /// large, symmetry-forbidden integrals are taken as zero and never visited; a negative value visits
  /// every integral.
  double symmetry_noise = 1e-12;
  /// Products only for vectors symmetric under the exchange of alpha and beta strings, c(a, b) = c(b, a): the
  /// singlets (and quintets, ...) of an M_S = 0 space whose alpha and beta strings are the same (PySCF's
  /// direct_spin0). apply() then forms T = H_alpha (x) 1 x + the alpha-beta terms at the pairs (a, b) with b before a
  /// (half of those with b = a) and returns T + T^T, which is H x for such x: half the alpha-beta terms and half the
  /// same-spin terms of a product, for one vector more of memory. CPUs' tile kernel only (on a GPU, for the tests).
  /// ci::SingletHamiltonian multiplies the same vectors packed to their independent half. The constructor throws
  /// std::invalid_argument for a space whose alpha and beta strings differ.
  bool singlet = false;
};

}  // namespace cispmv::ci

namespace cispmv::impl {

/// Internal switches of ci::FactoredHamiltonian, each `automatic` (or 0) by default: what the tests and
/// perf/spmv_bench set to exercise or time one kernel, launch shape or part of the product. Not public API:
/// a product's result does not depend on them, only its speed.
struct FactoredTuning {
  /// The alpha-beta kernel. `scatter`: a team per alpha string that forms the alpha-beta sum at each source beta
  /// string, x in registers and the integrals broadcast from team scratch, and scatters it into the string's row in
  /// team scratch (what GPUs run; on CPUs without AVX2 its lists' walk at batch 8, teams of one thread). `tiles`:
  /// the same sum as small dense products W = A B formed by the CPU's vector unit (FactoredTileKernel; AVX-512 or
  /// AVX2 + FMA where the CPU has them), teams of one thread. `automatic`: `tiles` on CPUs with AVX2 + FMA or
  /// AVX-512, else `scatter`.
  enum class Kernel { automatic, scatter, tiles } kernel = Kernel::automatic;
  /// Threads a team of the scatter kernel (0: 128 on GPUs, 1 on CPUs; at most 256; `tiles`: 0 or 1).
  int team_size = 0;
  /// Teams an alpha string takes, each every parts-th batch and a parts-th of the positions, adding its row into y
  /// atomically (0: automatic, policy.hpp's choose_parts).
  int parts = 0;
  /// `scatter` at a batch of 8: walk each source's own replacements of the class (its lists; the integrals a
  /// gather of the pair's row) rather than every pair of the class (the table; a broadcast). What `automatic`
  /// takes on CPUs without AVX-512.
  bool scatter_lists = false;
  /// Alpha replacements per batch: `scatter` 8 or 16 (0: 16 on GPUs, 8 on CPUs and for the lists' walk),
  /// `tiles` 8.
  int batch = 0;
  /// The terms a product forms: all of H; or, to time a product's parts, only the same-spin terms
  /// H_alpha (x) 1 + 1 (x) H_beta or only the alpha-beta sum (their sum is H x).
  enum class Terms { all, same_spin, alpha_beta } terms = Terms::all;
  /// How the same-spin terms are formed: in the alpha-beta kernel's teams, each position's entries of H_beta and
  /// each entry of H_alpha read for every determinant (`lists`), or as dense products (`gemm`): for each block of
  /// beta strings, the dense block of H_alpha over the alpha strings that pair with it (by irrep where the integrals
  /// obey ORBSYM) times those rows of x, and for each set of alpha strings of one beta range, those rows of x times
  /// the dense blocks of H_beta (GatheredGemmKernel: DMMA on CUDA GPUs of compute capability 8.0 or later). A dense
  /// block does more multiply-adds than its entries (zeros included) but reads each entry once per 64 x 64 tile
  /// instead of once per determinant. `automatic`: `gemm` on GPUs where its dense work is at most 16 times the
  /// lists' terms, its blocks take at most factored_gemm_max_bytes and, unless its launches run beside the
  /// alpha-beta kernel, each launch has tiles enough for 3 teams an SM; else `lists`.
  enum class SameSpinPass { automatic, lists, gemm } same_spin_pass = SameSpinPass::automatic;
  /// With the `gemm` pass: its launches one after the other after the alpha-beta kernel (`serial`), or beside it
  /// (`concurrent`: on CUDA each launch on a stream of its own, every kernel adding its terms into y atomically once
  /// y is scaled by beta; on CPUs the same atomic adds, one launch after the other). `automatic`: `concurrent` on
  /// CUDA. (The side streams are shared by the operator's copies: apply one operator from one host thread at a
  /// time.)
  enum class Launches { automatic, serial, concurrent } launches = Launches::automatic;
  /// Where the scatter kernel's table walk adds its terms on CUDA (level-0 scratch, teams of whole warps): into one
  /// copy of the alpha string's row for the team (`shared`: compare-and-swap adds), or into a copy for each warp
  /// (`per_warp`: plain adds, since in one step of the walk a warp's targets are distinct; the copies summed once the
  /// walk is done). `automatic`: `per_warp` where the copies keep a team's scratch within 32 KB.
  enum class RowCopies { automatic, shared, per_warp } row_copies = RowCopies::automatic;
  /// The order of the teams: string by string (`strings`), or by their estimated work, the largest first
  /// (`largest_first`), so that on a GPU the small teams fill the last partial wave. `automatic`: `largest_first`
  /// on GPUs, `strings` elsewhere (Kokkos' OpenMP team launch is scheduled statically: sorted teams would give the
  /// first threads the largest).
  enum class TaskOrder { automatic, strings, largest_first } task_order = TaskOrder::automatic;
};

}  // namespace cispmv::impl
