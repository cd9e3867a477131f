// `cispmv ci` with the factored Hamiltonian (ci/factored.hpp): built from the integrals and string lists on the
// execution space, never assembled, and the Davidson on it; with --singlet on the packed vectors of ci/singlet.hpp.
#include "ci_run.hpp"

#include "cispmv/ci/factored.hpp"
#include "cispmv/ci/singlet.hpp"

#include <algorithm>
#include <iomanip>
#include <string>
#include <utility>
#include <vector>

namespace cispmv::app {

namespace {

// the factored Hamiltonian's options from the run's
ci::FactoredOptions factored_options(const CiRun& run) {
  ci::FactoredOptions o;
  o.drop_tolerance = run.options.drop_tolerance;
  return o;
}

// --singlet: the factored Hamiltonian on the packed vectors (ci::SingletHamiltonian), the diagonal and the irreps'
// blocks at their rows
int solve_singlet(CiRun& run) {
  using Exec = CiRun::Exec;
  Kokkos::Timer timer;
  const auto P = allocating("the singlet's factored Hamiltonian and packing", "", [&] {
    return ci::SingletHamiltonian<Exec>(Exec(), run.dump, run.space, factored_options(run));
  });
  const auto n = static_cast<std::size_t>(P.num_rows());
  const std::string what = "the diagonal (" + format_bytes(8.0 * static_cast<double>(run.space.size())) + ")";
  Kokkos::View<double*, Exec::memory_space> diagonal(Kokkos::view_alloc(Kokkos::WithoutInitializing, "diagonal"), n);
  {
    const auto full = allocating(what, "", [&] { return ci::hamiltonian_diagonal(Exec(), run.dump, run.space); });
    P.gather(full, diagonal);
  }
  if (!run.blocks.empty()) {  // each packed row in the irrep of its determinants (a determinant's transpose shares it)
    const std::vector<std::int32_t> rep = P.representatives();
    std::vector<int> blocks(n);
    for (std::size_t k = 0; k < n; ++k) blocks[k] = run.blocks[static_cast<std::size_t>(rep[k])];
    run.blocks = std::move(blocks);
  }
  Kokkos::fence();
  run.timings.hamiltonian = timer.seconds();
  const auto& F = P.factored();
  run.out << "hamiltonian: factored, never assembled, singlet: " << format_bytes(static_cast<double>(P.bytes()))
          << " of string lists, integrals and the space's three vectors on " << Exec::name() << ", built in "
          << std::fixed << std::setprecision(3) << run.timings.hamiltonian << " s (diagonal included); "
          << std::defaultfloat << n << " packed rows (a determinant and its transpose a row) of " << run.space.size()
          << " determinants; half of " << F.alpha_beta_terms() << " alpha-beta terms a product, pairs of other irreps "
          << (F.uses_symmetry() ? "skipped" : "visited") << std::endl;
  if (run.host_subspace) {
    const auto on_host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), diagonal);
    return solve_and_report<Kokkos::DefaultHostExecutionSpace>(run, P, "factored Hamiltonian, singlet", "factored",
                                                               on_host);
  }
  return solve_and_report(run, P, "factored Hamiltonian, singlet", "factored", diagonal);
}

}  // namespace

int solve_factored(CiRun& run) {
  if (run.options.singlet) return solve_singlet(run);
  using Exec = CiRun::Exec;
  Kokkos::Timer timer;
  const auto F = allocating("the factored Hamiltonian's string lists", "", [&] {
    return ci::FactoredHamiltonian<Exec>(Exec(), run.dump, run.space, factored_options(run));
  });
  // the diagonal where the Davidson keeps its vectors (a subspace in host memory: there), formed in place
  using HostView = Kokkos::View<double*, Kokkos::HostSpace>;
  HostView on_host;
  Kokkos::View<double*, Exec::memory_space> diagonal;
  const std::string what = "the diagonal (" + format_bytes(8.0 * static_cast<double>(run.space.size())) + ")";
  if (run.host_subspace) {
    on_host = allocating(
        what, "", [&] { return ci::hamiltonian_diagonal(Kokkos::DefaultHostExecutionSpace(), run.dump, run.space); });
  } else {
    diagonal = allocating(what, "", [&] { return ci::hamiltonian_diagonal(Exec(), run.dump, run.space); });
  }
  Kokkos::fence();
  run.timings.hamiltonian = timer.seconds();
  run.out << "hamiltonian: factored, never assembled (H_alpha, H_beta and the alpha-beta couplings from the "
             "integrals): "
          << format_bytes(static_cast<double>(F.bytes())) << " of string lists and integrals on " << Exec::name()
          << ", built in " << std::fixed << std::setprecision(3) << run.timings.hamiltonian
          << " s (diagonal included); " << std::defaultfloat << F.alpha_beta_terms()
          << " alpha-beta terms per product, pairs of other irreps " << (F.uses_symmetry() ? "skipped" : "visited")
          << ", same-spin terms "
          << (F.same_spin_gemm() ? "as dense products (" + std::to_string(F.same_spin_flops() * 1e-9) + " GFLOP" +
                                       (F.concurrent_launches() ? ", beside the alpha-beta sum)" : ")")
                                 : std::string("from the lists"))
          << std::endl;
  if (run.host_subspace) {
    return solve_and_report<Kokkos::DefaultHostExecutionSpace>(run, F, "factored Hamiltonian", "factored", on_host);
  }
  return solve_and_report(run, F, "factored Hamiltonian", "factored", diagonal);
}

}  // namespace cispmv::app
