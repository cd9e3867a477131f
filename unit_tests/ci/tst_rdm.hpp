// The density matrices on every backend (ci/rdm.hpp) against an oracle that applies the four creation and
// annihilation operators of each element to each determinant (spin orbitals alpha 0..n-1 then beta n..2n-1, signs
// by counting the occupied ones below): random vectors of closed- and open-shell string spaces, batches of one alpha
// string and of all, spins split and summed; the energy of an eigenvector from its density matrices; and a vector of
// the wrong size refused. Compiled once per backend with TEST_EXECSPACE and TEST_CATEGORY defined
// (backend_<name>.hpp).
#include <gtest/gtest.h>
#include <Kokkos_Core.hpp>

#include "cispmv/ci.hpp"
#include "test_utils.hpp"

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace {

using Plan = cispmv::ci::DensityMatrixPlan<TEST_EXECSPACE>;

// a+_k (create) or a_k on a spin-orbital string: false where it gives zero, else the string and sign updated
bool apply_operator(bool create, int k, std::uint64_t& det, double& sign) {
  const std::uint64_t bit = std::uint64_t(1) << k;
  if (create == ((det & bit) != 0)) return false;
  if (__builtin_popcountll(det & (bit - 1)) % 2) sign = -sign;
  det ^= bit;
  return true;
}

// <c| a+_p a+_r a_s a_q |c> over spin orbitals, the determinants of the dense layout (alpha-major, both spins'
// strings in increasing value)
struct SecondQuantised {
  int n;
  std::vector<std::uint64_t> dets;
  std::vector<double> c;
  double element(int p, int r, int s, int q) const {
    double sum = 0.0;
    for (std::size_t i = 0; i < dets.size(); ++i) {
      if (c[i] == 0.0) continue;
      std::uint64_t d = dets[i];
      double sign = 1.0;
      if (!apply_operator(false, q, d, sign) || !apply_operator(false, s, d, sign) ||
          !apply_operator(true, r, d, sign) || !apply_operator(true, p, d, sign)) {
        continue;
      }
      const std::uint64_t a = d & ((std::uint64_t(1) << n) - 1), b = d >> n;
      const auto nb = static_cast<std::int64_t>(cispmv::ci::binomial(n, __builtin_popcountll(b)));
      sum +=
          c[static_cast<std::size_t>(cispmv::ci::string_address(a) * nb + cispmv::ci::string_address(b))] * sign * c[i];
    }
    return sum;
  }
  double one(int p, int q) const {  // <c| a+_p a_q |c>
    double sum = 0.0;
    for (std::size_t i = 0; i < dets.size(); ++i) {
      std::uint64_t d = dets[i];
      double sign = 1.0;
      if (!apply_operator(false, q, d, sign) || !apply_operator(true, p, d, sign)) continue;
      const std::uint64_t a = d & ((std::uint64_t(1) << n) - 1), b = d >> n;
      const auto nb = static_cast<std::int64_t>(cispmv::ci::binomial(n, __builtin_popcountll(b)));
      sum +=
          c[static_cast<std::size_t>(cispmv::ci::string_address(a) * nb + cispmv::ci::string_address(b))] * sign * c[i];
    }
    return sum;
  }
};

SecondQuantised random_state(int n, int na, int nb, unsigned seed) {
  SecondQuantised s{n, {}, {}};
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (const auto a : cispmv::ci::all_strings(n, na))
    for (const auto b : cispmv::ci::all_strings(n, nb)) {
      s.dets.push_back(a | (b << n));
      s.c.push_back(u(gen));
    }
  return s;
}

cispmv::ci::DensityMatrices on_backend(const Plan& plan, const std::vector<double>& c, bool spins) {
  Kokkos::View<double*, TEST_MEMSPACE> v("c", c.size());
  Kokkos::deep_copy(v, Kokkos::View<const double*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged>(c.data(), c.size()));
  return plan.compute(v, spins);
}

}  // namespace

TEST(TEST_CATEGORY, DensityMatricesAreTheOperatorsExpectationValues) {
  struct Case {
    int n, na, nb;
    double batch_bytes;  // 1: a batch of one alpha string
  };
  for (const Case& k : {Case{5, 2, 2, 1.0}, Case{5, 3, 1, 256e6}, Case{6, 3, 2, 1.0}, Case{4, 4, 0, 256e6}}) {
    const std::string what = std::to_string(k.na) + "+" + std::to_string(k.nb) + " in " + std::to_string(k.n);
    const SecondQuantised s = random_state(k.n, k.na, k.nb, 11u + static_cast<unsigned>(k.n * 7 + k.na));
    const Plan plan(TEST_EXECSPACE(), k.n, k.na, k.nb, k.batch_bytes);
    ASSERT_EQ(plan.size(), static_cast<std::int64_t>(s.c.size()));
    const auto d = on_backend(plan, s.c, true);
    const auto summed = on_backend(plan, s.c, false);
    const int n = k.n;
    auto at2 = [n](int p, int q, int r, int t) { return static_cast<std::size_t>(((p * n + q) * n + r) * n + t); };
    for (int p = 0; p < n; ++p) {
      for (int q = 0; q < n; ++q) {
        const auto pq = static_cast<std::size_t>(p * n + q);
        EXPECT_NEAR(d.dm1a[pq], s.one(q, p), 1e-12) << what;
        EXPECT_NEAR(d.dm1b[pq], s.one(n + q, n + p), 1e-12) << what;
        EXPECT_NEAR(summed.dm1[pq], d.dm1a[pq] + d.dm1b[pq], 1e-12) << what;
        for (int r = 0; r < n; ++r) {
          for (int t = 0; t < n; ++t) {
            const double aa = s.element(p, r, t, q), bb = s.element(n + p, n + r, n + t, n + q);
            const double ab = s.element(p, n + r, n + t, q), ba = s.element(n + p, r, t, n + q);
            EXPECT_NEAR(d.dm2aa[at2(p, q, r, t)], aa, 1e-12) << what;
            EXPECT_NEAR(d.dm2bb[at2(p, q, r, t)], bb, 1e-12) << what;
            EXPECT_NEAR(d.dm2ab[at2(p, q, r, t)], ab, 1e-12) << what;
            EXPECT_NEAR(d.dm2[at2(p, q, r, t)], aa + ab + ba + bb, 1e-11) << what;
            EXPECT_NEAR(summed.dm2[at2(p, q, r, t)], aa + ab + ba + bb, 1e-11) << what;
          }
        }
      }
    }
  }
}

TEST(TEST_CATEGORY, DensityMatricesGiveAnEigenvectorsEnergy) {
  // LiH/STO-3G full CI: E = sum h_pq dm1_qp + 1/2 sum (pq|rs) dm2_pqrs for its lowest eigenvector
  const auto dump = cispmv::ci::read_fcidump(std::string(CISPMV_TEST_DATA_DIR) + "/lih_sto3g.fcidump");
  const int n = dump.num_orbitals, na = (dump.num_electrons + dump.ms2) / 2, nb = dump.num_electrons - na;
  const auto space = cispmv::ci::make_determinant_space(dump, n, false);
  const cispmv::ci::FactoredHamiltonian<TEST_EXECSPACE> H(TEST_EXECSPACE(), dump, space);
  const auto diagonal = cispmv::ci::hamiltonian_diagonal(TEST_EXECSPACE(), dump, space);
  cispmv::solvers::DavidsonOptions opts;
  opts.residual_tolerance = 1e-10;
  const auto res = cispmv::solvers::davidson(TEST_EXECSPACE(), H, diagonal, opts);
  ASSERT_TRUE(res.converged);
  const auto x = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), res.eigenvectors);
  const Plan plan(TEST_EXECSPACE(), n, na, nb);
  std::vector<double> c(static_cast<std::size_t>(plan.size()), 0.0);
  const auto position = cispmv::ci::dense_positions(space);
  for (std::size_t i = 0; i < position.size(); ++i) c[static_cast<std::size_t>(position[i])] = x(i, 0);
  const auto d = on_backend(plan, c, false);
  double e = 0.0;
  for (int p = 0; p < n; ++p)
    for (int q = 0; q < n; ++q) {
      e += dump.one(p, q) * d.dm1[static_cast<std::size_t>(q * n + p)];
      for (int r = 0; r < n; ++r)
        for (int t = 0; t < n; ++t)
          e += 0.5 * dump.two(p, q, r, t) * d.dm2[static_cast<std::size_t>(((p * n + q) * n + r) * n + t)];
    }
  EXPECT_NEAR(e, res.eigenvalues[0], 1e-10);
}

TEST(TEST_CATEGORY, DensityMatricesRefuseAVectorOfTheWrongSize) {
  const Plan plan(TEST_EXECSPACE(), 4, 2, 2);
  Kokkos::View<double*, TEST_MEMSPACE> v("c", 35);
  EXPECT_THROW(plan.compute(v, false), std::invalid_argument);
}
