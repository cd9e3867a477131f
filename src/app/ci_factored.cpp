// `cispmv ci` with the factored Hamiltonian (ci/factored.hpp): built from the integrals and string lists on the
// execution space, never assembled, and the Davidson on it.
#include "ci_run.hpp"

#include "cispmv/ci/factored.hpp"
#include "cispmv/impl/convert_helpers.hpp"

#include <algorithm>
#include <iomanip>
#include <string>
#include <vector>

namespace cispmv::app {

int solve_factored(CiRun& run) {
  using Exec = CiRun::Exec;
  Kokkos::Timer timer;
  ci::FactoredOptions fopt;
  fopt.drop_tolerance = run.options.drop_tolerance;
  const auto F = allocating("the factored Hamiltonian's string lists", "",
                            [&] { return ci::FactoredHamiltonian<Exec>(Exec(), run.dump, run.space, fopt); });
  auto host_diagonal = ci::hamiltonian_diagonal(run.dump, run.space);
  using HostView = Kokkos::View<double*, Kokkos::HostSpace>;
  HostView on_host;  // a subspace in host memory: the diagonal there too
  Kokkos::View<double*, Exec::memory_space> diagonal;
  if (run.host_subspace) {
    on_host = HostView(Kokkos::view_alloc("cispmv::ci::diagonal", Kokkos::WithoutInitializing), host_diagonal.size());
    std::copy(host_diagonal.begin(), host_diagonal.end(), on_host.data());
  } else {
    diagonal = allocating("the diagonal (" + format_bytes(8.0 * host_diagonal.size()) + ")", "", [&] {
      return impl::view_of<double, Exec::memory_space>("cispmv::ci::diagonal", host_diagonal);
    });
  }
  std::vector<double>().swap(host_diagonal);
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
