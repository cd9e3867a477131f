#pragma once
/// \file ci/factored.hpp
/// The CI Hamiltonian of a determinant space applied in factored form, never assembled: ci::FactoredHamiltonian,
/// an operator for the eigensolver (cispmv/operator.hpp), and the diagonal its preconditioner needs.
///
/// A determinant is a pair of alpha and beta occupation strings, and the spin-free Hamiltonian (without
/// its core energy) splits into
///   H = H_alpha (x) 1 + 1 (x) H_beta + sum_{pq,rs} (pq|rs) E^alpha_pq (x) E^beta_rs,
/// where H_alpha (H_beta) is the Hamiltonian of the alpha (beta) electrons alone: a sparse matrix over
/// strings, thousands of rows where H has millions, and the last term couples the two spins through
/// single replacements in each string (E_pp included: the Coulomb terms between the spins) weighted by
/// a two-electron integral. y = H x then costs three passes over strings, not over the nonzeros of H:
///   y(a, b) += sum_a' H_alpha(a, a') x(a', b)                                 (rows of x, coalesced)
///   y(a, b) += sum_b' H_beta(b, b') x(a, b')                                  (x's row a in fast memory)
///   y(a, b) += sum_{a' = E_pq a} s_pq sum_{b' = E_rs b} s_rs (pq|rs) x(a', b') (rows a' in fast memory)
/// The matrix's values are never stored: a product reads the vectors, the string lists (kilobytes to
/// megabytes) and the integrals, so its memory is O(strings x replacements) instead of O(nonzeros), and
/// on a GPU its sums are formed in team scratch (shared memory) instead of gathered through the L1 and L2 that
/// bound every sparse format's product. With ORBSYM and integrals that obey it, (pq|rs) is used only where the
/// irreps of pq and rs agree (the others are zero), which skips about three quarters of the pairs in C2v.
/// docs/factored_hamiltonian.md gives the algebra and maps these names to PySCF's fci module.
///
/// Any space of cispmv::ci::DeterminantSpace: full CI, truncated CI (the pairs a truncation leaves out
/// read as zero) and a space of one irrep; the result is the product with the Hamiltonian that
/// build_hamiltonian assembles (the same sums in another order; that one also drops elements below
/// its tolerance, 1e-14). In double precision on every backend.
///
/// The pieces, in ci/factored/: options.hpp (the options and the internal switches), strings.hpp (the string
/// tables and their Views), scatter_kernel.hpp and tile_kernel.hpp (the alpha-beta kernels of GPUs and of CPUs with
/// AVX-512), same_spin.hpp (the same-spin terms every team ends with), gathered_gemm.hpp and warp_mma.hpp (the
/// same-spin terms as dense products on the tensor cores), policy.hpp (every automatic choice), diagonal.hpp (the
/// diagonal, formed where the vectors live); the tables are built in src/ci/factored/. With FactoredOptions::singlet,
/// products for vectors with c(a, b) = c(b, a) from half the terms (ci/singlet.hpp packs such vectors).

#include <Kokkos_Core.hpp>

#include "cispmv/ci/determinants.hpp"
#include "cispmv/ci/factored/diagonal.hpp"
#include "cispmv/ci/factored/gathered_gemm.hpp"
#include "cispmv/ci/factored/options.hpp"
#include "cispmv/ci/factored/policy.hpp"
#include "cispmv/ci/factored/same_spin.hpp"
#include "cispmv/ci/factored/scatter_kernel.hpp"
#include "cispmv/ci/factored/strings.hpp"
#include "cispmv/ci/factored/tile_kernel.hpp"
#include "cispmv/ci/fcidump.hpp"
#include "cispmv/impl/backend.hpp"

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace cispmv::ci {

/// The Hamiltonian of a determinant space in factored form (see the file's comment), in the memory of
/// Exec: an operator for the Davidson (cispmv/operator.hpp) and the benchmarks.
template <class Exec>
class FactoredHamiltonian {
 public:
  using execution_space = Exec;
  using memory_space = typename Exec::memory_space;
  using value_type = double;
  using Kernel = impl::FactoredTuning::Kernel;

  /// Builds the string lists on the host (O(strings x replacements)) and copies them to Exec's memory.
  /// Throws std::invalid_argument when the integrals and the space disagree, or the space is beyond
  /// what the packed lists address (2^19 beta strings or more). `tuning`: internal switches (tests, benchmarks).
  FactoredHamiltonian(const Exec& exec, const FciDump& integrals, const DeterminantSpace& space,
                      const FactoredOptions& options = {}, const impl::FactoredTuning& tuning = {})
      : FactoredHamiltonian(exec, integrals, space, options, singlet_tuning(options, tuning), 0) {}

  int num_rows() const { return static_cast<int>(rows_); }
  int num_cols() const { return static_cast<int>(rows_); }
  /// Bytes of the lists and integrals in Exec's memory (the assembled matrix's would be ~12 per nonzero).
  std::size_t bytes() const { return bytes_; }
  /// Beta entries one product visits in the alpha-beta sum (times the alpha replacements they serve).
  std::size_t alpha_beta_terms() const { return terms_; }
  /// Whether pairs of orbitals of different irreps are skipped (ORBSYM obeyed by the integrals).
  bool uses_symmetry() const { return symmetry_; }
  /// Whether products are the singlet's (FactoredOptions::singlet: for vectors with c(a, b) = c(b, a) only).
  bool singlet() const { return half_.extent(0) > 0; }
  /// The tables the kernels read (the string ranges and addresses, in Exec's memory), and the singlet's.
  const impl::FactoredData<memory_space>& tables() const { return d_; }
  const impl::FactoredSinglet<memory_space>& singlet_tables() const { return singlet_; }
  /// Alpha replacements per batch (FactoredTuning::batch).
  int batch() const { return d_.batch; }
  /// The alpha-beta kernel products run (never `automatic`), and whether `scatter` walks the replacement lists.
  Kernel kernel() const { return layout_.kernel; }
  bool scatter_lists() const { return layout_.lists; }
  /// The team size of the alpha-beta kernel, and the most teams an alpha string takes.
  int team_size() const { return launch_.team_size; }
  int slots() const { return launch_.slots; }
  /// Whether the same-spin terms are dense products (FactoredTuning::SameSpinPass::gemm), and those products'
  /// floating-point operations in one product (2 m k n over the dense blocks; 0 without them).
  bool same_spin_gemm() const { return launch_.gemm; }
  double same_spin_flops() const { return same_spin_flops_; }
  /// The dense products' tiles (teams) in the smaller of their two launches (0 without them).
  int same_spin_tiles() const { return impl::GatheredGemmHost::smallest_launch(gemm_launches_); }
  /// Whether the dense products run beside the alpha-beta kernel (FactoredTuning::Launches::concurrent).
  bool concurrent_launches() const { return launch_.concurrent; }
  /// Copies of an alpha string's row the scatter kernel's teams add into: 1, or one for each warp.
  int row_copies() const { return launch_.row_copies; }
  /// Whether the teams run largest first (FactoredTuning::TaskOrder), and their estimated work in launch order.
  bool largest_first() const { return launch_.largest_first; }
  const std::vector<double>& team_work() const { return launch_.task_work; }

  /// y = beta * y + alpha * H x (x and y: rank-1 Views of num_rows() entries in memory_space; y may not
  /// alias x).
  template <class XView, class YView>
  void apply(double alpha, const XView& x, double beta, const YView& y) const {
    if (static_cast<std::int64_t>(x.extent(0)) != rows_ || static_cast<std::int64_t>(y.extent(0)) != rows_) {
      throw std::invalid_argument("cispmv::ci::FactoredHamiltonian::apply: x has " + std::to_string(x.extent(0)) +
                                  " entries and y " + std::to_string(y.extent(0)) + ", the space " +
                                  std::to_string(rows_) + " determinants");
    }
    // teams that add their terms into y (scaled by beta first): several teams an alpha string, or kernels at once
    const bool adds = launch_.slots > 1 || launch_.concurrent;
    if (singlet()) {  // T into half_, then y = beta y + alpha (T + T^T)
      if (adds) scale(0.0, half_);
      launch(1.0, x, 0.0, half_, adds);
      Kokkos::parallel_for(
          "cispmv::ci::factored_singlet", Kokkos::RangePolicy<Exec>(exec_, 0, na_),
          impl::FactoredSymmetrize<memory_space, decltype(half_), YView>{d_, singlet_, half_, y, alpha, beta});
      return;
    }
    if ((launch_.gemm && !d_.alpha_beta) || adds) scale(beta, y);
    try {
      launch(alpha, x, beta, y, adds);
    } catch (...) {
      for (const auto& side : side_) side.join(exec_);  // (what the side streams took still comes before later work)
      throw;
    }
    for (const auto& side : side_) side.join(exec_);
  }

 private:
  static constexpr bool gpu = impl::is_gpu_space_v<Exec>;

  // the constructor, once singlet_tuning has set the switches
  FactoredHamiltonian(const Exec& exec, const FciDump& integrals, const DeterminantSpace& space,
                      const FactoredOptions& options, const impl::FactoredTuning& tuning, int)
      : exec_(exec) {
    layout_ = impl::choose_factored_layout<Exec>(tuning);
    impl::FactoredHost h =
        impl::factor_hamiltonian(integrals, space, options, layout_.batch, layout_.table, layout_.want_gemm);
    using Pass = impl::FactoredTuning::SameSpinPass;
    if (tuning.same_spin_pass == Pass::gemm && layout_.want_gemm && !h.gemm_built) {
      throw std::invalid_argument("cispmv::ci::FactoredHamiltonian: the same-spin pass `gemm`: " + h.gemm_why);
    }
    // with the launches concurrent (CUDA) a small dense launch no longer leaves the GPU idle: it runs beside the
    // alpha-beta kernel
    const bool concurrent = tuning.launches == impl::FactoredTuning::Launches::concurrent ||
                            (tuning.launches == impl::FactoredTuning::Launches::automatic && gpu);
    launch_.gemm = impl::use_same_spin_gemm(exec, h, tuning, concurrent);
    if (layout_.kernel == Kernel::tiles)
      impl::factored_units(h, impl::factored_tile_batches, impl::factored_tile_pairs);
    rows_ = h.rows;
    terms_ = h.alpha_beta_terms;
    symmetry_ = h.symmetry;
    bytes_ = vector_bytes(h);
    d_ = impl::FactoredData<memory_space>(h);
    d_.same_spin = tuning.terms != impl::FactoredTuning::Terms::alpha_beta && !launch_.gemm;
    d_.alpha_beta = tuning.terms != impl::FactoredTuning::Terms::same_spin;
    if (launch_.gemm) {
      gemm_ = impl::GatheredGemmData<memory_space>(h.gemm);
      gemm_launches_ = h.gemm.launch_ptr;
      same_spin_flops_ = h.gemm.flops;
      bytes_ += h.gemm.bytes();
      launch_.concurrent = concurrent && d_.alpha_beta;
      for (std::size_t l = 0; launch_.concurrent && l + 1 < gemm_launches_.size(); ++l) side_.emplace_back(exec);
    }
    launch_.team_size = layout_.kernel == Kernel::tiles ? 1 : tuning.team_size > 0 ? tuning.team_size : gpu ? 128 : 1;
    launch_.row_copies = impl::choose_row_copies<Exec>(d_, layout_, launch_.team_size, tuning);
    launch_.largest_first = tuning.task_order == impl::FactoredTuning::TaskOrder::largest_first ||
                            (tuning.task_order == impl::FactoredTuning::TaskOrder::automatic && gpu);
    impl::plan_factored_tasks(h, layout_, impl::choose_parts<Exec>(h, layout_, tuning, d_.same_spin), d_.alpha_beta,
                              d_.same_spin, launch_);
    task_ia_ = impl::factored_view<std::int32_t, memory_space>("task_ia", launch_.task_ia);
    task_part_ = impl::factored_view<std::int32_t, memory_space>("task_part", launch_.task_part);
    task_parts_ = impl::factored_view<std::int32_t, memory_space>("task_parts", launch_.task_parts);
    bytes_ += 12 * launch_.task_ia.size();
    if (options.singlet) {
      singlet_ = impl::FactoredSinglet<memory_space>(h);
      half_ = Kokkos::View<double*, memory_space>(Kokkos::view_alloc(exec_, "cispmv::factored::singlet_half"),
                                                  static_cast<std::size_t>(rows_));
      bytes_ += sizeof(double) * static_cast<std::size_t>(rows_);
    }
    na_ = h.na;
  }

  // FactoredOptions::singlet: the tile kernel and the same-spin lists (the half product is theirs); throws on switches
  // that ask for others
  static impl::FactoredTuning singlet_tuning(const FactoredOptions& options, impl::FactoredTuning tuning) {
    if (!options.singlet) return tuning;
    if (tuning.kernel == Kernel::scatter || tuning.same_spin_pass == impl::FactoredTuning::SameSpinPass::gemm) {
      throw std::invalid_argument(
          "cispmv::ci::FactoredHamiltonian: the singlet's products are the tile kernel's with the same-spin lists");
    }
    tuning.kernel = Kernel::tiles;
    tuning.same_spin_pass = impl::FactoredTuning::SameSpinPass::lists;
    return tuning;
  }

  // apply's launches once y is scaled where `adds` (the teams add into y)
  template <class XView, class YView>
  void launch(double alpha, const XView& x, double beta, const YView& y, bool adds) const {
    if constexpr (impl::warp_mma_runs<Exec>) {  // (never built elsewhere)
      // the dense products beside the alpha-beta kernel, each launch on its own instance once y is scaled
      for (std::size_t l = 0; launch_.concurrent && l < side_.size(); ++l) {
        side_[l].follow(exec_);
        impl::gathered_gemm(side_[l].get(), gemm_, gemm_launches_[l], gemm_launches_[l + 1] - gemm_launches_[l], alpha,
                            x, y, true);
      }
    }
    const auto tasks = [&](auto f) {
      f.d = d_;
      f.x = x;
      f.y = y;
      f.alpha = alpha;
      f.beta = beta;
      f.task_ia = task_ia_;
      f.task_part = task_part_;
      f.task_parts = task_parts_;
      f.accumulate = adds;
      return f;
    };
    if (launch_.gemm && !d_.alpha_beta) {
      // (the same-spin terms alone: nothing for the alpha-beta kernel to add)
    } else if (layout_.kernel == Kernel::tiles) {
      auto f = tasks(impl::FactoredTileKernel<Exec, XView, YView>{});
      f.isa = impl::host_tile_isa();
      f.half = singlet();
      f.singlet = singlet_;
      launch_teams(f);
    } else if (d_.batch == 16) {
      auto f = tasks(impl::FactoredScatterKernel<Exec, XView, YView, 16, false>{});
      f.ys_rows = launch_.row_copies;
      launch_teams(f);
    } else if (layout_.lists) {
      launch_teams(tasks(impl::FactoredScatterKernel<Exec, XView, YView, 8, true>{}));
    } else {
      auto f = tasks(impl::FactoredScatterKernel<Exec, XView, YView, 8, false>{});
      f.ys_rows = launch_.row_copies;
      launch_teams(f);
    }
    if constexpr (impl::warp_mma_runs<Exec>) {  // (never built elsewhere)
      // H_alpha (x) 1, then 1 (x) H_beta: their outputs overlap, so one launch after the other (or, concurrent, the
      // caller's later work waits for each)
      for (std::size_t l = 0; launch_.gemm && !launch_.concurrent && l + 1 < gemm_launches_.size(); ++l) {
        impl::gathered_gemm(exec_, gemm_, gemm_launches_[l], gemm_launches_[l + 1] - gemm_launches_[l], alpha, x, y);
      }
    }
  }

  // a team kernel f (FactoredScatterKernel or FactoredTileKernel: its Policy, scratch bytes and level) with a team
  // per task, in level-0 scratch where it fits, else level 1
  template <class F>
  void launch_teams(F f) const {
    const std::size_t scratch = f.team_scratch_bytes(d_);
    typename F::Policy policy(exec_, static_cast<int>(task_ia_.extent(0)), launch_.team_size);
    f.level = scratch <= static_cast<std::size_t>(F::Policy::scratch_size_max(0)) ? 0 : 1;
    if (f.level != 0 && launch_.row_copies > 1) {  // (choose_row_copies takes copies only where they fit level 0)
      throw std::logic_error("cispmv::ci::FactoredHamiltonian: the row's copies do not fit level-0 scratch");
    }
    // (Kokkos' own launch, not impl::light_launch: a functor passed as the kernel's argument has no address, and the
    // same-spin pass takes FactoredData by reference, so each thread copied the 1 KB functor to its stack: on an
    // H200, 1,416 bytes of stack, the frozen core's alpha-beta sum 0.161 -> 0.214 ms. Through Kokkos' constant-memory
    // buffer the launch waits on the host for the previous kernel launched through that buffer, on any stream.)
    Kokkos::parallel_for("cispmv::ci::factored", policy.set_scratch_size(f.level, Kokkos::PerTeam(scratch)), f);
  }
  // y = beta y (0 where beta is 0), before teams add their parts of a row into it
  template <class YView>
  void scale(double beta, const YView& y) const {
    Kokkos::parallel_for("cispmv::ci::factored_scale",
                         Kokkos::RangePolicy<Exec, Kokkos::IndexType<std::int64_t>>(exec_, 0, rows_),
                         impl::FactoredScale<YView>{y, beta});
  }

  static std::size_t vector_bytes(const impl::FactoredHost& h) {
    auto b = [](const auto& v) { return v.size() * sizeof(v[0]); };
    return b(h.a_rowbase) + b(h.a_lo) + b(h.a_hi) + b(h.q_rank) + b(h.q_position) + b(h.q_block_end) + b(h.aa_ptr) +
           b(h.aa_col) + b(h.aa_val) + b(h.bb_ptr) + b(h.bb_count) + b(h.bb_col) + b(h.bb_val) + b(h.be_ptr) +
           b(h.be_count) + b(h.be_data) + b(h.ab_ptr) + b(h.ab_class) + b(h.ab_ja) + b(h.ab_pair) + b(h.ab_sign) +
           b(h.ab_lo) + b(h.ab_len) + b(h.ab_walked) + b(h.eri) + b(h.cls_ptr) + b(h.cls_pair) + b(h.pair_slot) +
           b(h.table) + b(h.mu_ptr) + b(h.mu_batch) + b(h.mu_ksteps) + b(h.mu_pair) + b(h.mu_pairs) + b(h.mu_lo) +
           b(h.mu_len) + b(h.a_self) + b(h.q_alpha);
  }

  Exec exec_;
  impl::FactoredLayout layout_;
  impl::FactoredLaunch launch_;
  impl::FactoredData<memory_space> d_;
  impl::GatheredGemmData<memory_space> gemm_;
  std::vector<std::int32_t> gemm_launches_;     // the dense products' launches (GatheredGemmHost::launch_ptr)
  std::vector<impl::SideInstance<Exec>> side_;  // their instances, one a launch (launch_.concurrent)
  double same_spin_flops_ = 0.0;
  Kokkos::View<std::int32_t*, memory_space> task_ia_, task_part_, task_parts_;
  impl::FactoredSinglet<memory_space> singlet_;  // FactoredOptions::singlet: its tables,
  Kokkos::View<double*, memory_space> half_;     // and T
  std::int64_t rows_ = 0;
  int na_ = 0;
  std::size_t terms_ = 0, bytes_ = 0;
  bool symmetry_ = false;
};

}  // namespace cispmv::ci
