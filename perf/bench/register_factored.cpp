// spmv_bench on a CI Hamiltonian (--matrix fcidump:FILE:LEVEL): the same Hamiltonian in factored form
// (ci::FactoredHamiltonian: from the integrals and string lists, never assembled), checked against the host oracle of
// the assembled matrix like every other benchmark; bytes: its lists and integrals, x and y. Double only. Beside the
// automatic choice, its two parts alone (the same-spin terms, the alpha-beta sum: each checked with the other's
// product added) and the alternatives the automatic choice weighs (impl::FactoredTuning), so that each rule of
// ci/factored/policy.hpp can be measured again.
#include "register.hpp"

#include "cispmv/ci/factored.hpp"

#include <iostream>

namespace cispmv::bench {

namespace {

using Tuning = impl::FactoredTuning;
using FK = Tuning::Kernel;
using Terms = Tuning::Terms;
using Pass = Tuning::SameSpinPass;
using Launches = Tuning::Launches;
using Rows = Tuning::RowCopies;
using Order = Tuning::TaskOrder;

/// The benchmark's label: ci-factored, then every switch that is not automatic.
std::string factored_label(const Tuning& t) {
  auto pick = [](bool on, const std::string& s) { return on ? s : std::string(); };
  return "ci-factored" + pick(t.kernel == FK::tiles, "/tiles") + pick(t.kernel == FK::scatter, "/scatter") +
         pick(t.team_size > 0, "/team:" + std::to_string(t.team_size)) +
         pick(t.parts > 0, "/parts:" + std::to_string(t.parts)) +
         pick(t.batch > 0, "/batch:" + std::to_string(t.batch)) + pick(t.scatter_lists, "/lists") +
         pick(t.terms == Terms::same_spin, "/same-spin") + pick(t.terms == Terms::alpha_beta, "/alpha-beta") +
         pick(t.same_spin_pass == Pass::gemm, "/ss:gemm") + pick(t.same_spin_pass == Pass::lists, "/ss:lists") +
         pick(t.launches == Launches::serial, "/serial") + pick(t.launches == Launches::concurrent, "/concurrent") +
         pick(t.row_copies == Rows::shared, "/rows:shared") + pick(t.row_copies == Rows::per_warp, "/rows:per-warp") +
         pick(t.task_order == Order::strings, "/order:strings") +
         pick(t.task_order == Order::largest_first, "/order:largest-first");
}

/// What the automatic choices made of a shape, for the log.
template <class Exec>
void describe(const ci::FactoredHamiltonian<Exec>& F, const Tuning& t, double seconds) {
  std::cerr << "spmv_bench: ci-factored built in " << seconds << " s: " << F.bytes() * 1e-6 << " MB, "
            << F.alpha_beta_terms() << " alpha-beta terms, symmetry " << (F.uses_symmetry() ? "on" : "off")
            << ", kernel " << (F.kernel() == FK::tiles ? "tiles" : "scatter") << (F.scatter_lists() ? " lists" : "")
            << " (team " << F.team_size() << ", parts " << F.slots() << ", batch " << F.batch() << "), same-spin "
            << (F.same_spin_gemm() ? "gemm (" + std::to_string(F.same_spin_flops() * 1e-9) + " GFLOP, " +
                                         std::to_string(F.same_spin_tiles()) + " tiles" +
                                         (F.concurrent_launches() ? ", beside the alpha-beta kernel)" : ")")
                                   : std::string("lists"))
            << (F.row_copies() > 1 ? ", a copy of the row a warp" : "")
            << (F.largest_first() ? ", teams largest first" : "")
            << (t.terms == Terms::same_spin    ? ", its same-spin terms alone (GB/s and GFLOP/s as for H)"
                : t.terms == Terms::alpha_beta ? ", its alpha-beta sum alone (GB/s and GFLOP/s as for H)"
                                               : "")
            << "\n";
}

Tuning shape(FK kernel, int parts = 0, int batch = 0, Terms terms = Terms::all, Pass pass = Pass::automatic) {
  Tuning t;
  t.kernel = kernel;
  t.parts = parts;
  t.batch = batch;
  t.terms = terms;
  t.same_spin_pass = pass;
  return t;
}

/// On GPUs: the dense products after and beside the alpha-beta kernel, one row or a row a warp, parts and batches,
/// and the teams string by string.
[[maybe_unused]] void add_gpu_shapes(std::vector<Tuning>& shapes) {
  for (const Launches l : {Launches::serial, Launches::concurrent}) {
    shapes.push_back(shape(FK::automatic, 0, 0, Terms::all, Pass::gemm));
    shapes.back().launches = l;
  }
  for (const Rows r : {Rows::shared, Rows::per_warp}) {
    for (const Terms terms : {Terms::all, Terms::alpha_beta}) {
      shapes.push_back(shape(FK::automatic, 0, 0, terms));
      shapes.back().row_copies = r;
    }
  }
  for (const int parts : {1, 2, 4}) shapes.push_back(shape(FK::scatter, parts, 16));
  for (const int parts : {1, 4}) shapes.push_back(shape(FK::scatter, parts, 8));
  for (const Terms terms : {Terms::all, Terms::alpha_beta}) {
    shapes.push_back(shape(FK::automatic, 0, 0, terms));
    shapes.back().task_order = Order::strings;
  }
}

/// The shapes timed: the automatic one, its two parts, the other same-spin pass (whole and alone); on CPUs the
/// tile kernel and the scatter kernel's walks; on GPUs add_gpu_shapes.
template <class Exec>
std::vector<Tuning> factored_shapes() {
  const Pass other = impl::is_gpu_space_v<Exec> ? Pass::lists : Pass::gemm;
  std::vector<Tuning> shapes{
      shape(FK::automatic), shape(FK::automatic, 0, 0, Terms::same_spin), shape(FK::automatic, 0, 0, Terms::alpha_beta),
      shape(FK::automatic, 0, 0, Terms::all, other), shape(FK::automatic, 0, 0, Terms::same_spin, other)};
  if constexpr (impl::is_gpu_space_v<Exec>) {
    add_gpu_shapes(shapes);
  } else {
    shapes.push_back(shape(FK::tiles, 1));
    shapes.push_back(shape(FK::scatter, 1, 8));
    shapes.back().scatter_lists = true;
    shapes.push_back(shape(FK::scatter, 1, 8));
    shapes.push_back(shape(FK::scatter, 1, 16));
  }
  return shapes;
}

}  // namespace

template <class Exec, class Scalar>
void register_factored(Suite<Exec, Scalar>& s, const std::shared_ptr<const ci::FciDump>& dump,
                       const std::shared_ptr<const ci::DeterminantSpace>& space) {
  for (const Tuning& tuning : factored_shapes<Exec>()) {
    s.add(factored_label(tuning), [&s, dump, space, tuning] {
      Kokkos::Timer t;
      auto F = std::make_shared<ci::FactoredHamiltonian<Exec>>(Exec(), *dump, *space, ci::FactoredOptions{}, tuning);
      describe(*F, tuning, t.seconds());
      const double bytes = static_cast<double>(F->bytes()) + 2.0 * sizeof(Scalar) * s.host().num_rows;
      Prepared p{[F, &s] { F->apply(1.0, s.x(), 0.0, s.y()); }, bytes};
      if (tuning.terms != Terms::all) {  // checked with the other part's product added
        Tuning rest = tuning;
        rest.terms = tuning.terms == Terms::same_spin ? Terms::alpha_beta : Terms::same_spin;
        auto G = std::make_shared<ci::FactoredHamiltonian<Exec>>(Exec(), *dump, *space, ci::FactoredOptions{}, rest);
        p.check = [F, G, &s] {
          return s.verify([F, G, &s] {
            F->apply(1.0, s.x(), 0.0, s.y());
            G->apply(1.0, s.x(), 1.0, s.y());
          });
        };
      }
      return p;
    });
  }
}

CISPMV_BENCH_INSTANTIATE_FACTORED(template void register_factored)

}  // namespace cispmv::bench
