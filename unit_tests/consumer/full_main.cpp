// Consumer of the whole installed package (CiSpmv::cispmv): a two-site Hubbard model as FCIDUMP
// integrals, its full-CI Hamiltonian, and Davidson's lowest eigenvalue compared with the dense
// spectrum; exits non-zero unless they agree.
#include <cispmv/ci.hpp>
#include <cispmv/cispmv.hpp>

#include <cmath>
#include <cstdio>
#include <vector>

int main(int argc, char* argv[]) {
  Kokkos::ScopeGuard kokkos(argc, argv);
  // Hubbard dimer: hopping t = 1 between the two orbitals, on-site repulsion U = 4.
  cispmv::ci::FciDump dump(2, 2);
  dump.set_one(0, 1, -1.0);
  dump.set_two(0, 0, 0, 0, 4.0);
  dump.set_two(1, 1, 1, 1, 4.0);
  const auto space = cispmv::ci::make_determinant_space(dump, 2, false);
  const cispmv::HostCsr H = cispmv::ci::build_hamiltonian(dump, space);
  const auto diagonal = cispmv::ci::csr_diagonal(H);
  using Exec = Kokkos::DefaultExecutionSpace;
  const auto A = cispmv::to_device<Exec>(H);
  const auto d = Kokkos::create_mirror_view_and_copy(Exec::memory_space(), diagonal);
  const auto result = cispmv::solvers::davidson(Exec(), A, d);

  const int n = H.num_rows;
  std::vector<double> dense(static_cast<std::size_t>(n) * n, 0.0);
  for (int r = 0; r < n; ++r) {
    for (std::size_t k = H.row_ptr(r); k < H.row_ptr(r + 1); ++k) dense[r * n + H.col_idx(k)] = H.values(k);
  }
  const double exact = cispmv::solvers::jacobi_eigen(dense, n).values[0];
  // E0 = U/2 - sqrt(U^2/4 + 4 t^2) = 2 - sqrt(8)
  const double analytic = 2.0 - std::sqrt(8.0);
  const bool ok =
      result.converged && std::abs(result.eigenvalues[0] - exact) < 1e-9 && std::abs(exact - analytic) < 1e-12;
  std::printf("%s: consumer of CiSpmv::cispmv, %d determinants, Davidson %.12f, dense %.12f, analytic %.12f\n",
              ok ? "PASS" : "FAIL", n, result.eigenvalues[0], exact, analytic);
  return ok ? 0 : 1;
}
