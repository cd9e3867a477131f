// The factored Hamiltonian on every backend (ci/factored.hpp): its product is the assembled one's, y = beta y +
// alpha H x against the host oracle on the assembled CSR, for each kernel and launch shape, in full, truncated and
// one-irrep spaces, orbitals in energy and in irrep-blocked order, with integrals that obey ORBSYM (pairs of other
// irreps skipped) and with one that breaks it (every pair visited), alpha and beta strings of equal and of different
// lengths; its diagonal is the assembled one's; its two parts add up to the product; the teams' order; the dense
// same-spin products back to back; the switches that do not go together refused; and the warp's 8x8x4 product the
// dense products are made of. Compiled once per backend with TEST_EXECSPACE and TEST_CATEGORY defined
// (backend_<name>.hpp).
#include <gtest/gtest.h>
#include <Kokkos_Core.hpp>

#include "cispmv/ci.hpp"
#include "cispmv/ci/singlet.hpp"
#include "test_utils.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

namespace {

using Tuning = cispmv::impl::FactoredTuning;
using Kernel = Tuning::Kernel;
using Factored = cispmv::ci::FactoredHamiltonian<TEST_EXECSPACE>;
using HostVec = Kokkos::View<double*, Kokkos::HostSpace>;
using DevVec = Kokkos::View<double*, TEST_MEMSPACE>;
constexpr bool gpu = cispmv::impl::is_gpu_space_v<TEST_EXECSPACE>;

// A space of the tests: every range, class and list of the operator is read by one of them.
struct Space {
  const char* file;
  int level;
  bool restrict_to_isym;
  bool break_symmetry;
  int ms2;       // N_alpha - N_beta: 2 and 4 give alpha and beta strings of different lengths
  int isym = 0;  // the space's irrep with restrict_to_isym (0: the FCIDUMP's ISYM)
  std::string name() const {
    return std::string(file) + " level " + std::to_string(level) + (restrict_to_isym ? " one irrep" : " all irreps") +
           (break_symmetry ? " broken symmetry" : "") + " MS2 " + std::to_string(ms2) +
           (isym > 0 ? " ISYM " + std::to_string(isym) : "");
  }
};
const std::vector<Space> spaces{{"lih_sto3g", 4, false, false, 0},       {"h2o_631g_fc", 2, true, false, 0},
                                {"h2o_631g_fc", 3, false, false, 0},     {"h2o_631g_pitzer", 2, true, false, 0},
                                {"h2o_631g_pitzer", 2, false, false, 0}, {"h2o_631g_fc", 2, true, true, 0},
                                {"h2o_631g_fc", 3, false, true, 0},      {"h2_sto3g", 2, false, false, 0},
                                {"lih_sto3g", 4, false, false, 2},       {"h2o_631g_fc", 3, false, false, 2},
                                {"h2o_631g_fc", 2, true, false, 4}};

// A space, its assembled Hamiltonian, x and y, and the oracle: want = 0.5 y + 1.5 H x.
struct Oracle {
  cispmv::ci::FciDump dump;
  cispmv::ci::DeterminantSpace space;
  cispmv::HostCsr H;
  HostVec hx, hy, want;
  double scale = 0.0;  // the largest sum of |H_ij x_j| of a row: the products' error scales with it
  int n = 0;

  explicit Oracle(const Space& s) {
    dump = cispmv::ci::read_fcidump(std::string(CISPMV_TEST_DATA_DIR) + "/" + s.file + ".fcidump");
    if (s.break_symmetry) dump.set_two(0, 1, 0, 0, 1e-3);  // orbitals 0 and 1 of different irreps
    dump.ms2 = s.ms2;
    if (s.isym > 0) dump.isym = s.isym;
    space = cispmv::ci::make_determinant_space(dump, s.level, s.restrict_to_isym);
    H = cispmv::ci::build_hamiltonian(dump, space, 0.0);
    n = H.num_rows;
    hx = HostVec("x", n);
    hy = HostVec("y", n);
    want = HostVec("want", n);
    cispmv::test::Rng rng(17);
    for (int i = 0; i < n; ++i) {
      hx(i) = rng.uniform() - 0.5;
      hy(i) = rng.uniform() - 0.5;
    }
    for (int r = 0; r < n; ++r) {
      double sum = 0.0, mag = 0.0;
      for (std::size_t k = H.row_ptr(r); k < H.row_ptr(r + 1); ++k) {
        sum += H.values(k) * hx(H.col_idx(k));
        mag += std::abs(H.values(k) * hx(H.col_idx(k)));
      }
      want(r) = 0.5 * hy(r) + 1.5 * sum;
      scale = std::max(scale, mag);
    }
  }
  double hx_product(int r) const { return (want(r) - 0.5 * hy(r)) / 1.5; }  // (H x)(r)
  DevVec device(const HostVec& h) const {  // (not a mirror: that would alias h on the host)
    DevVec d("v", n);
    Kokkos::deep_copy(d, h);
    return d;
  }
  cispmv::ci::FactoredHamiltonian<TEST_EXECSPACE> build(const Tuning& t,
                                                        const cispmv::ci::FciDump* other = nullptr) const {
    return Factored(TEST_EXECSPACE(), other != nullptr ? *other : dump, space, cispmv::ci::FactoredOptions{}, t);
  }
};

// F x with beta 0 over a NaN-poisoned y, on the host.
HostVec product(const Factored& F, const DevVec& x) {
  DevVec y("y", x.extent(0));
  Kokkos::deep_copy(y, std::numeric_limits<double>::quiet_NaN());
  F.apply(1.0, x, 0.0, y);
  return Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), y);
}

// y = 0.5 y + 1.5 F x and F x over NaN, against the oracle.
void expect_products(const Factored& F, const Oracle& o) {
  ASSERT_EQ(F.num_rows(), o.n);
  const DevVec x = o.device(o.hx), y = o.device(o.hy);
  F.apply(1.5, x, 0.5, y);
  const auto got = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), y);
  double worst = 0.0;
  for (int r = 0; r < o.n; ++r) worst = std::max(worst, std::abs(got(r) - o.want(r)));
  EXPECT_LE(worst, 1e-13 * o.scale) << "y = 0.5 y + 1.5 H x";
  const HostVec got0 = product(F, x);
  for (int r = 0; r < o.n; ++r) ASSERT_NEAR(got0(r), o.hx_product(r), 1e-13 * o.scale) << "y = H x over NaN, row " << r;
}

// The test's team size: on GPUs 256, on CPUs teams of 2 threads where the backend runs them (1 on Serial).
int test_team() {
  if (gpu) return 256;
  using K = cispmv::impl::FactoredScatterKernel<TEST_EXECSPACE, DevVec, DevVec, 8, false>;
  return std::min(2, Kokkos::TeamPolicy<TEST_EXECSPACE>(1, 1).team_size_max(K{}, Kokkos::ParallelForTag()));
}

struct Variant {
  Tuning t;
  std::string name;
};

Variant variant(Kernel kernel, int parts, int batch, const std::string& name) {
  Variant v;
  v.t.kernel = kernel;
  v.t.parts = parts;
  v.t.batch = batch;
  v.t.team_size = kernel == Kernel::tiles ? 1 : test_team();
  v.t.same_spin_pass = Tuning::SameSpinPass::lists;
  v.name = name;
  return v;
}

// Each kernel and launch shape: the scatter kernel with one team an alpha string, 3 (a ragged split of the batches
// and positions, y accumulated atomically) or as many as the backend asks for, batches of 8 and 16, its lists' walk,
// one row or a row a warp, both team orders; the tile kernel with one team an alpha string or 2; the dense same-spin
// products after the scatter kernel's parts and the tile kernel's writes, and beside the scatter kernel (on CPUs one
// launch after the other, every add atomic).
std::vector<Variant> variants() {
  using Order = Tuning::TaskOrder;
  using Rows = Tuning::RowCopies;
  const Order flip = gpu ? Order::strings : Order::largest_first;  // the order `automatic` does not take
  std::vector<Variant> v{variant(Kernel::scatter, 1, 0, "scatter, 1 part"),
                         variant(Kernel::scatter, 3, 16, "scatter, 3 parts, batch 16"),
                         variant(Kernel::scatter, 0, 8, "scatter, automatic parts, batch 8"),
                         variant(Kernel::scatter, 2, 8, "scatter lists, 2 parts"),
                         variant(Kernel::tiles, 1, 0, "tiles, 1 part"),
                         variant(Kernel::tiles, 2, 8, "tiles, 2 parts, other order"),
                         variant(Kernel::scatter, 3, 8, "scatter, 3 parts, dense same-spin"),
                         variant(Kernel::tiles, 1, 0, "tiles, dense same-spin"),
                         variant(Kernel::scatter, 1, 8, "scatter, dense same-spin beside it"),
                         variant(Kernel::scatter, 1, 16, "scatter, one shared row, other order"),
                         variant(Kernel::scatter, 3, 16, "scatter, a row a warp, other order")};
  v[3].t.scatter_lists = true;
  v[5].t.task_order = flip;
  for (const int i : {6, 7, 8}) v[static_cast<std::size_t>(i)].t.same_spin_pass = Tuning::SameSpinPass::gemm;
  v[8].t.launches = Tuning::Launches::concurrent;
  v[9].t.row_copies = Rows::shared;
  v[9].t.task_order = flip;
  v[10].t.row_copies = Rows::per_warp;
  v[10].t.task_order = flip;
  if (gpu) {
    v[10].t.team_size = 64;
    v.push_back(variant(Kernel::scatter, 1, 0, "scatter, dense same-spin (automatic launches)"));
    v.back().t.same_spin_pass = Tuning::SameSpinPass::gemm;
    v.push_back(variant(Kernel::scatter, 0, 0, "scatter, dense same-spin after it"));
    v.back().t.same_spin_pass = Tuning::SameSpinPass::gemm;
    v.back().t.launches = Tuning::Launches::serial;
  }
  return v;
}

// What the operator says it chose is what the variant asked for.
void expect_choices(const Factored& F, const Variant& v, const Space& s) {
  const Tuning& t = v.t;
  const bool gemm = t.same_spin_pass == Tuning::SameSpinPass::gemm;
  EXPECT_EQ(F.kernel(), t.kernel);
  EXPECT_EQ(F.scatter_lists(), t.scatter_lists);
  if (t.batch > 0) {
    EXPECT_EQ(F.batch(), t.batch);
  }
  EXPECT_EQ(F.same_spin_gemm(), gemm);
  EXPECT_EQ(F.same_spin_flops() > 0.0, gemm);
  using Launches = Tuning::Launches;
  EXPECT_EQ(F.concurrent_launches(),
            gemm && (t.launches == Launches::concurrent || (t.launches == Launches::automatic && gpu)));
  EXPECT_EQ(F.uses_symmetry(),
            !s.break_symmetry && std::string(s.file) != "lih_sto3g" && std::string(s.file) != "h2_sto3g");
  using Order = Tuning::TaskOrder;
  EXPECT_EQ(F.largest_first(), t.task_order == Order::largest_first || (t.task_order == Order::automatic && gpu));
  // copies of the row: on CUDA only, in the table's walk (automatic: where they fit 32 KB, as in these spaces)
  using Rows = Tuning::RowCopies;
  const bool cuda_walk =
      cispmv::impl::warp_mma_runs<TEST_EXECSPACE> && gpu && t.kernel == Kernel::scatter && !t.scatter_lists;
  if (!cuda_walk || t.row_copies == Rows::shared) {
    EXPECT_EQ(F.row_copies(), 1);
  } else if (t.row_copies == Rows::per_warp) {
    EXPECT_EQ(F.row_copies(), t.team_size / 32);
  } else {
    EXPECT_TRUE(F.row_copies() == 1 || F.row_copies() == t.team_size / 32) << F.row_copies();
  }
}

}  // namespace

TEST(TEST_CATEGORY, FactoredProductIsTheAssembledProductForEveryKernel) {
  for (const Space& s : spaces) {
    SCOPED_TRACE(s.name());
    const Oracle o(s);
    for (const Variant& v : variants()) {
      SCOPED_TRACE(v.name);
      const Factored F = o.build(v.t);
      expect_choices(F, v, s);
      expect_products(F, o);
    }
  }
}

// The diagonal formed on the backend (ci::hamiltonian_diagonal) is the assembled Hamiltonian's, entry by entry, in
// every space of the tests (full, truncated, one irrep, broken symmetry, strings of different lengths), and a space
// whose integrals have other orbitals is refused.
TEST(TEST_CATEGORY, FactoredDiagonalIsTheAssembledDiagonal) {
  for (const Space& s : spaces) {
    SCOPED_TRACE(s.name());
    const Oracle o(s);
    const auto d = Kokkos::create_mirror_view_and_copy(
        Kokkos::HostSpace(), cispmv::ci::hamiltonian_diagonal(TEST_EXECSPACE(), o.dump, o.space));
    ASSERT_EQ(d.extent(0), static_cast<std::size_t>(o.n));
    for (int r = 0; r < o.n; ++r) {
      double want = std::numeric_limits<double>::quiet_NaN();
      for (std::size_t k = o.H.row_ptr(r); k < o.H.row_ptr(r + 1); ++k) {
        if (o.H.col_idx(k) == r) want = o.H.values(k);
      }
      ASSERT_NEAR(d(r), want, 1e-12 * std::max(1.0, std::abs(want))) << "row " << r;
    }
  }
  cispmv::ci::FciDump other = cispmv::ci::read_fcidump(std::string(CISPMV_TEST_DATA_DIR) + "/h2_sto3g.fcidump");
  const Oracle o(spaces[0]);
  EXPECT_THROW((void)cispmv::ci::hamiltonian_diagonal(TEST_EXECSPACE(), other, o.space), std::invalid_argument);
}

// The singlet's products (FactoredOptions::singlet, ci::SingletHamiltonian): for a vector with c(a, b) = c(b, a),
// unpacked from a random packed one, the half product's T + T^T is the assembled H c, exactly symmetric; the packed
// product is S^T H c (y = 0.5 y + 1.5 S^T H S p); the packing keeps norms. In the M_S = 0 spaces of the tests (full,
// truncated, one irrep (A1, and a full CI of B1, where no determinant is its own transpose), broken symmetry); spaces
// of M_S != 0, a truncated space of an open-shell reference (B2's) and the switches of other kernels are refused.
TEST(TEST_CATEGORY, SingletProductIsTheProductOfSymmetricVectors) {
  std::vector<Space> singlet_spaces;
  for (const Space& s : spaces)
    if (s.ms2 == 0) singlet_spaces.push_back(s);
  singlet_spaces.push_back({"h2o_631g_fc", 8, true, false, 0, 2});
  for (const Space& s : singlet_spaces) {
    SCOPED_TRACE(s.name());
    const Oracle o(s);
    const cispmv::ci::SingletHamiltonian<TEST_EXECSPACE> P(TEST_EXECSPACE(), o.dump, o.space);
    const int np = P.num_rows();
    ASSERT_EQ(P.space_rows(), o.n);
    ASSERT_GE(2 * np, o.n);
    HostVec hp("p", np), hq("q", np);
    cispmv::test::Rng rng(29);
    for (int k = 0; k < np; ++k) {
      hp(k) = rng.uniform() - 0.5;
      hq(k) = rng.uniform() - 0.5;
    }
    DevVec p("p", np), c("c", o.n);
    Kokkos::deep_copy(p, hp);
    Kokkos::deep_copy(c, std::numeric_limits<double>::quiet_NaN());
    P.unpack(p, c);
    const auto hc = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), c);
    double norm_p = 0.0, norm_c = 0.0;
    for (int k = 0; k < np; ++k) norm_p += hp(k) * hp(k);
    for (int r = 0; r < o.n; ++r) norm_c += hc(r) * hc(r);
    EXPECT_NEAR(norm_c, norm_p, 1e-12 * norm_p) << "the packing is an isometry";
    // H c on the host, and c symmetric: each determinant's transpose holds its value
    HostVec want("want", o.n);
    double scale = 0.0;
    for (int r = 0; r < o.n; ++r) {
      double sum = 0.0, mag = 0.0;
      for (std::size_t k = o.H.row_ptr(r); k < o.H.row_ptr(r + 1); ++k) {
        sum += o.H.values(k) * hc(o.H.col_idx(k));
        mag += std::abs(o.H.values(k) * hc(o.H.col_idx(k)));
      }
      want(r) = sum;
      scale = std::max(scale, mag);
    }
    const HostVec got = product(P.factored(), c);
    for (int r = 0; r < o.n; ++r) ASSERT_NEAR(got(r), want(r), 1e-13 * scale) << "T + T^T = H c, row " << r;
    const DevVec y = o.device(o.hy);  // y = 0.5 y + 1.5 H c
    P.factored().apply(1.5, c, 0.5, y);
    const auto gy = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), y);
    for (int r = 0; r < o.n; ++r) ASSERT_NEAR(gy(r), 0.5 * o.hy(r) + 1.5 * want(r), 2e-13 * scale) << "row " << r;
    const std::vector<std::int32_t> rep = P.representatives(), partner = P.partners();
    const DevVec q("q", np);
    Kokkos::deep_copy(q, hq);
    P.apply(1.5, p, 0.5, q);
    EXPECT_THROW(P.apply(1.0, c, 0.0, q), std::invalid_argument) << "a vector of the space is not a packed one";
    const auto gq = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), q);
    for (int k = 0; k < np; ++k) {
      const std::size_t i = static_cast<std::size_t>(rep[static_cast<std::size_t>(k)]);
      const double weight =
          rep[static_cast<std::size_t>(k)] == partner[static_cast<std::size_t>(k)] ? 1.0 : std::sqrt(2.0);
      ASSERT_EQ(hc(i), hc(static_cast<std::size_t>(partner[static_cast<std::size_t>(k)]))) << "c symmetric";
      ASSERT_NEAR(gq(k), 0.5 * hq(k) + 1.5 * weight * want(i), 1e-13 * scale * 2) << "packed row " << k;
    }
  }
  for (const Space& s : {spaces[8], Space{"h2o_631g_fc", 3, true, false, 0, 4}}) {
    SCOPED_TRACE(s.name());  // MS2 2: alpha and beta strings of different lengths; B2's open-shell reference
    const Oracle refused(s);
    EXPECT_THROW(cispmv::ci::SingletHamiltonian<TEST_EXECSPACE>(TEST_EXECSPACE(), refused.dump, refused.space),
                 std::invalid_argument);
  }
  const Oracle o(spaces[0]);
  Tuning scatter;
  scatter.kernel = Kernel::scatter;
  cispmv::ci::FactoredOptions singlet;
  singlet.singlet = true;
  EXPECT_THROW(Factored(TEST_EXECSPACE(), o.dump, o.space, singlet, scatter), std::invalid_argument);
}

// The same-spin terms and the alpha-beta sum (FactoredTuning::terms) add up to the product, and neither is the
// whole; without two-electron integrals the alpha-beta sum is zero and the one-electron terms are same-spin terms
// (the parts are not swapped). For each kernel: the scatter kernel's table and lists' walks, the tile kernel.
TEST(TEST_CATEGORY, FactoredPartsAddUpToTheProduct) {
  using Terms = Tuning::Terms;
  for (const Space& s : spaces) {
    SCOPED_TRACE(s.name());
    const Oracle o(s);
    const DevVec x = o.device(o.hx);
    cispmv::ci::FciDump one_body = o.dump;
    std::fill(one_body.two_electron.begin(), one_body.two_electron.end(), 0.0);
    for (int k : {0, 3, 4}) {
      Variant v = variants()[static_cast<std::size_t>(k)];
      SCOPED_TRACE(v.name);
      v.t.terms = Terms::same_spin;
      const HostVec same = product(o.build(v.t), x), same1 = product(o.build(v.t, &one_body), x);
      v.t.terms = Terms::alpha_beta;
      const HostVec ab = product(o.build(v.t), x), ab1 = product(o.build(v.t, &one_body), x);
      double sum_off = 0.0, off_same = 0.0, off_ab = 0.0, ab_one_body = 0.0, same_one_body = 0.0;
      for (int r = 0; r < o.n; ++r) {
        sum_off = std::max(sum_off, std::abs(same(r) + ab(r) - o.hx_product(r)));
        off_same = std::max(off_same, std::abs(same(r) - o.hx_product(r)));
        off_ab = std::max(off_ab, std::abs(ab(r) - o.hx_product(r)));
        ab_one_body = std::max(ab_one_body, std::abs(ab1(r)));
        same_one_body = std::max(same_one_body, std::abs(same1(r)));
      }
      EXPECT_LE(sum_off, 1e-13 * o.scale) << "same-spin + alpha-beta terms";
      EXPECT_GT(off_same, 1e-6 * o.scale) << "the same-spin terms alone are the product";
      EXPECT_GT(off_ab, 1e-6 * o.scale) << "the alpha-beta terms alone are the product";
      EXPECT_EQ(ab_one_body, 0.0) << "alpha-beta terms without two-electron integrals";
      EXPECT_GT(same_one_body, 1e-6 * o.scale) << "same-spin terms without two-electron integrals";
    }
  }
}

// Each team's estimated work, in launch order: largest first where asked, and the same teams as string by string
// (the products above check that no team is lost or repeated).
TEST(TEST_CATEGORY, FactoredTeamsRunLargestFirstWhereAsked) {
  for (const Space& s : {spaces[1], spaces[2], spaces[9]}) {
    SCOPED_TRACE(s.name());
    const Oracle o(s);
    for (int k : {1, 3, 4}) {
      Variant v = variants()[static_cast<std::size_t>(k)];
      SCOPED_TRACE(v.name);
      v.t.task_order = Tuning::TaskOrder::largest_first;
      const std::vector<double> work = o.build(v.t).team_work();
      v.t.task_order = Tuning::TaskOrder::strings;
      std::vector<double> other = o.build(v.t).team_work();
      ASSERT_FALSE(work.empty());
      EXPECT_TRUE(std::is_sorted(work.begin(), work.end(), std::greater<double>()));
      std::sort(other.begin(), other.end(), std::greater<double>());
      EXPECT_EQ(other, work);
    }
  }
}

// Two products back to back, the second reading the first's result, no fence between them: on CUDA the dense
// same-spin products' side streams must have added into y before the second product reads it, and the second's
// scale (beta 0 over NaN) must come before its own side streams add into z. z = H (H x) against the host oracle.
TEST(TEST_CATEGORY, FactoredDenseSameSpinProductsBackToBack) {
  for (const Space& s : {spaces[1], spaces[2], spaces[6], spaces[9]}) {
    SCOPED_TRACE(s.name());
    const Oracle o(s);
    for (const Variant& v : variants()) {
      if (v.t.same_spin_pass != Tuning::SameSpinPass::gemm) continue;
      SCOPED_TRACE(v.name);
      const Factored F = o.build(v.t);
      const DevVec x = o.device(o.hx);
      DevVec y("y", o.n), z("z", o.n);
      Kokkos::deep_copy(y, std::numeric_limits<double>::quiet_NaN());
      Kokkos::deep_copy(z, std::numeric_limits<double>::quiet_NaN());
      F.apply(1.0, x, 0.0, y);
      F.apply(1.0, y, 0.0, z);
      const auto gz = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), z);
      double worst = 0.0, scale = 0.0;
      int not_finite = 0;
      for (int r = 0; r < o.n; ++r) {
        not_finite += std::isfinite(gz(r)) ? 0 : 1;
        double sum = 0.0, mag = 0.0;
        for (std::size_t k = o.H.row_ptr(r); k < o.H.row_ptr(r + 1); ++k) {
          const double hx = o.hx_product(o.H.col_idx(k));
          sum += o.H.values(k) * hx;
          mag += std::abs(o.H.values(k)) * (std::abs(hx) + o.scale);  // (the first product's error carried too)
        }
        if (std::isfinite(gz(r))) worst = std::max(worst, std::abs(gz(r) - sum));
        scale = std::max(scale, mag);
      }
      EXPECT_EQ(not_finite, 0) << "a NaN of y or z left";
      EXPECT_LE(worst, 1e-12 * scale);
    }
  }
}

// A vector of the wrong length is refused; so are switches that do not go together; `automatic` with the scatter
// kernel's switches takes that kernel.
TEST(TEST_CATEGORY, FactoredHamiltonianRefusesSwitchesThatDoNotGoTogether) {
  const auto dump = cispmv::ci::read_fcidump(std::string(CISPMV_TEST_DATA_DIR) + "/h2_sto3g.fcidump");
  const auto space = cispmv::ci::make_determinant_space(dump, 2, false);
  const Factored F(TEST_EXECSPACE(), dump, space);
  DevVec x("x", space.size() + 1), y("y", space.size());
  EXPECT_THROW(F.apply(1.0, x, 0.0, y), std::invalid_argument);
  auto with = [](Kernel k, int batch, int team, bool lists) {
    Tuning t;
    t.kernel = k;
    t.batch = batch;
    t.team_size = team;
    t.scatter_lists = lists;
    return t;
  };
  auto build = [&](const Tuning& t) { return Factored(TEST_EXECSPACE(), dump, space, {}, t); };
  EXPECT_THROW(build(with(Kernel::tiles, 4, 0, false)), std::invalid_argument);
  EXPECT_THROW(build(with(Kernel::tiles, 0, 2, false)), std::invalid_argument);
  EXPECT_THROW(build(with(Kernel::scatter, 4, 0, false)), std::invalid_argument);
  EXPECT_THROW(build(with(Kernel::scatter, 16, 0, true)), std::invalid_argument);
  EXPECT_THROW(build(with(Kernel::tiles, 8, 0, true)), std::invalid_argument);
  EXPECT_THROW(build(with(Kernel::scatter, 0, 300, false)), std::invalid_argument);
  // the automatic same-spin pass: in the kernel's teams on CPUs
  if (!gpu) {
    EXPECT_FALSE(build(with(Kernel::scatter, 0, 0, false)).same_spin_gemm());
  }
  if (gpu) {
    // copies of the row a warp need teams of whole warps (CUDA)
    auto t = with(Kernel::scatter, 16, 48, false);
    t.row_copies = Tuning::RowCopies::per_warp;
    if (cispmv::impl::warp_mma_runs<TEST_EXECSPACE>) {
      EXPECT_THROW(build(t), std::invalid_argument);
    }
    t.team_size = 64;
    EXPECT_EQ(build(t).row_copies(), cispmv::impl::warp_mma_runs<TEST_EXECSPACE> ? 2 : 1);
  }
  EXPECT_EQ(build(with(Kernel::automatic, 16, 0, false)).kernel(), Kernel::scatter);
  EXPECT_EQ(build(with(Kernel::automatic, 0, 0, true)).kernel(), Kernel::scatter);
  EXPECT_EQ(build(with(Kernel::automatic, 0, 0, false)).kernel(),
            !gpu && cispmv::impl::host_tile_isa() != cispmv::impl::TileIsa::portable ? Kernel::tiles : Kernel::scatter);
}

namespace {
// out = c + a b by impl::warp_mma_8x8x4, each lane's fragments read and written where PTX's layout puts them
// (a warp of 32 threads on GPUs, one thread holding the 32 lanes on CPUs)
template <class A, class B, class C>
void warp_mma_of(const A& a, const B& b, const C& c, const C& out) {
  constexpr int Lanes = cispmv::impl::warp_lanes<TEST_EXECSPACE>;
  using Policy = Kokkos::TeamPolicy<TEST_EXECSPACE>;
  Kokkos::parallel_for(
      "warp_mma", Policy(1, Lanes == 1 ? 32 : 1), KOKKOS_LAMBDA(const typename Policy::member_type& m) {
        double fa[Lanes], fb[Lanes], fd[Lanes][2];
        const int lane0 = Lanes == 1 ? m.team_rank() : 0;
        for (int j = 0; j < Lanes; ++j) {
          const int l = lane0 + j;
          fa[j] = a(l / 4, l % 4);
          fb[j] = b(l % 4, l / 4);
          for (int i = 0; i < 2; ++i) fd[j][i] = c(l / 4, 2 * (l % 4) + i);
        }
        cispmv::impl::warp_mma_8x8x4(fa, fb, fd);
        for (int j = 0; j < Lanes; ++j) {
          const int l = lane0 + j;
          for (int i = 0; i < 2; ++i) out(l / 4, 2 * (l % 4) + i) = fd[j][i];
        }
      });
}
}  // namespace

// A warp's 8x8x4 product in the fragments of PTX (on a GPU of compute capability 8.0 or later the DMMA
// instruction, before it the same sums through shuffles; on CPUs one thread forming the warp's product):
// D = C + A B entry by entry, every lane's two entries written where the layout says.
TEST(TEST_CATEGORY, WarpMmaIsTheProductInPtxFragments) {
  Kokkos::View<double**, Kokkos::LayoutRight, Kokkos::HostSpace> ha("a", 8, 4);
  Kokkos::View<double**, Kokkos::LayoutRight, Kokkos::HostSpace> hb("b", 4, 8);
  Kokkos::View<double**, Kokkos::LayoutRight, Kokkos::HostSpace> hc("c", 8, 8);
  cispmv::test::Rng rng(5);
  for (int r = 0; r < 8; ++r) {
    for (int k = 0; k < 4; ++k) ha(r, k) = rng.uniform() - 0.5;
    for (int n = 0; n < 8; ++n) hc(r, n) = rng.uniform() - 0.5;
  }
  for (int k = 0; k < 4; ++k) {
    for (int n = 0; n < 8; ++n) hb(k, n) = rng.uniform() - 0.5;
  }
  Kokkos::View<double**, Kokkos::LayoutRight, TEST_MEMSPACE> a("a", 8, 4);
  Kokkos::View<double**, Kokkos::LayoutRight, TEST_MEMSPACE> b("b", 4, 8);
  Kokkos::View<double**, Kokkos::LayoutRight, TEST_MEMSPACE> c("c", 8, 8), out("out", 8, 8);
  Kokkos::deep_copy(a, ha);
  Kokkos::deep_copy(b, hb);
  Kokkos::deep_copy(c, hc);
  Kokkos::deep_copy(out, std::numeric_limits<double>::quiet_NaN());
  warp_mma_of(a, b, c, out);
  const auto got = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), out);
  for (int r = 0; r < 8; ++r) {
    for (int n = 0; n < 8; ++n) {
      double want = hc(r, n);
      for (int k = 0; k < 4; ++k) want += ha(r, k) * hb(k, n);
      EXPECT_NEAR(got(r, n), want, 1e-14) << "D(" << r << ", " << n << ")";
    }
  }
}
