// cispmv._core: the factored CI Hamiltonian, its Davidson solve and the density matrices, for Python (nanobind).
// Vectors travel as dense (alpha strings x beta strings) NumPy arrays in PySCF's string order
// (ci/string_addressing.hpp), flattened here (the Python layer in cispmv/ reshapes); inside, a vector lives in its
// determinant space's order on Kokkos' default execution space. Kokkos is initialised on import and finalised at exit
// (finalize), after every object still alive has given its device memory back (Live::release).
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include "cispmv/ci.hpp"
#include "cispmv/ci/rdm.hpp"
#include "cispmv/ci/string_addressing.hpp"

#include <Kokkos_Core.hpp>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

namespace nb = nanobind;

namespace {

using Exec = Kokkos::DefaultExecutionSpace;
using Mem = Exec::memory_space;
using In1 = nb::ndarray<const double, nb::ndim<1>, nb::c_contig, nb::device::cpu>;
using In2 = nb::ndarray<const double, nb::ndim<2>, nb::c_contig, nb::device::cpu>;
using Out1 = nb::ndarray<nb::numpy, double, nb::ndim<1>>;
using Out2 = nb::ndarray<nb::numpy, double, nb::ndim<2>>;
using HostIn = Kokkos::View<const double*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged>;
using HostOut = Kokkos::View<double*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged>;

// ------------------------------------------------------------------------------------------------ runtime
/// What holds Kokkos memory: given back (release) before Kokkos is finalised, whatever Python still references.
struct Live {
  virtual ~Live() = default;
  virtual void release() = 0;
};

struct Runtime {
  std::mutex mutex;
  std::vector<std::weak_ptr<Live>> live;
  bool finalized = false;
  static Runtime& get() {
    static Runtime r;
    return r;
  }
  void keep(const std::shared_ptr<Live>& p) {
    std::lock_guard<std::mutex> lock(mutex);
    live.push_back(p);
  }
  void check() const {
    if (finalized) throw std::runtime_error("cispmv: Kokkos has been finalised (the interpreter is exiting)");
  }
};

void initialize() {
  if (!Kokkos::is_initialized() && !Runtime::get().finalized) {
    // unbound threads, libgomp's default, said explicitly (the user's setting is kept): Kokkos' OpenMP backend
    // otherwise warns on every import, and binding threads inside an interpreter that also runs NumPy's and PySCF's
    // is not cispmv's to decide
    setenv("OMP_PROC_BIND", "false", 0);
    int argc = 1;
    char name[] = "cispmv";
    char* argv[] = {name, nullptr};
    Kokkos::initialize(argc, argv);
  }
}

void finalize() {
  Runtime& r = Runtime::get();
  std::lock_guard<std::mutex> lock(r.mutex);
  if (r.finalized) return;
  for (auto& w : r.live)
    if (auto p = w.lock()) p->release();
  r.live.clear();
  r.finalized = true;
  if (Kokkos::is_initialized()) Kokkos::finalize();
}

Out1 new_array(std::size_t n) {
  auto* v = new double[n]();
  nb::capsule owner(v, [](void* p) noexcept { delete[] static_cast<double*>(p); });
  return Out1(v, {n}, owner);
}
Out2 new_array(std::size_t rows, std::size_t cols) {
  auto* v = new double[rows * cols]();
  nb::capsule owner(v, [](void* p) noexcept { delete[] static_cast<double*>(p); });
  return Out2(v, {rows, cols}, owner);
}

// ------------------------------------------------------------------------------------------------ Hamiltonian
struct HamiltonianState final : Live {
  cispmv::ci::FciDump dump;
  cispmv::ci::DeterminantSpace space;
  std::optional<cispmv::ci::FactoredHamiltonian<Exec>> op;
  Kokkos::View<double*, Mem> diagonal;
  Kokkos::View<std::int64_t*, Mem> position;  // each determinant's place in the dense array
  std::vector<std::int64_t> position_host;
  std::int64_t na = 0, nb = 0;  // strings of each spin (the dense array is na x nb)
  // apply's device vectors (the dense array, x and y in the space's order), allocated on its first call and kept:
  // CASSCF's response steps call apply (through contract_2e) dozens of times on one Hamiltonian
  std::mutex work_lock;
  Kokkos::View<double*, Mem> work_dense, work_x, work_y;
  void release() override {
    op.reset();
    diagonal = {};
    position = {};
    work_dense = work_x = work_y = {};
  }
};

/// x(i) = dense(position(i)) and dense(position(i)) = y(i): a vector between its space and the dense layout.
struct Gather {
  Kokkos::View<const double*, Mem> dense;
  Kokkos::View<double*, Mem> x;
  Kokkos::View<const std::int64_t*, Mem> position;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t i) const { x(i) = dense(position(i)); }
};
struct Scatter {
  Kokkos::View<const double*, Mem> y;
  Kokkos::View<double*, Mem> dense;
  Kokkos::View<const std::int64_t*, Mem> position;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t i) const { dense(position(i)) = y(i); }
};
using Rows = Kokkos::RangePolicy<Exec, Kokkos::IndexType<std::int64_t>>;

class Hamiltonian {
 public:
  Hamiltonian(In2 h1e, In1 eri, int norb, int neleca, int nelecb, double ecore, std::vector<int> orbsym, int wfnsym) {
    Runtime::get().check();
    using cispmv::ci::FciDump;
    if (norb < 1 || norb > cispmv::ci::max_orbitals) {
      throw std::invalid_argument("cispmv.Hamiltonian: norb = " + std::to_string(norb) + " (1 to 64)");
    }
    if (neleca < 0 || nelecb < 0 || neleca > norb || nelecb > norb) {
      throw std::invalid_argument("cispmv.Hamiltonian: nelec = (" + std::to_string(neleca) + ", " +
                                  std::to_string(nelecb) + ") in " + std::to_string(norb) + " orbitals");
    }
    const auto n = static_cast<std::size_t>(norb);
    if (h1e.shape(0) != n || h1e.shape(1) != n) {
      throw std::invalid_argument("cispmv.Hamiltonian: h1e is " + std::to_string(h1e.shape(0)) + " x " +
                                  std::to_string(h1e.shape(1)) + " for " + std::to_string(norb) + " orbitals");
    }
    auto s = std::make_shared<HamiltonianState>();
    s->dump = FciDump(norb, neleca + nelecb, neleca - nelecb);
    const std::size_t pairs = n * (n + 1) / 2;
    if (eri.shape(0) != pairs * (pairs + 1) / 2) {
      throw std::invalid_argument("cispmv.Hamiltonian: eri has " + std::to_string(eri.shape(0)) +
                                  " values; 8-fold packed integrals of " + std::to_string(norb) + " orbitals have " +
                                  std::to_string(pairs * (pairs + 1) / 2));
    }
    s->dump.one_electron.assign(h1e.data(), h1e.data() + n * n);
    s->dump.two_electron.assign(eri.data(), eri.data() + eri.shape(0));
    s->dump.core_energy = ecore;
    s->dump.has_core_energy = true;
    int irrep = 0;
    std::vector<int> sym;
    if (!orbsym.empty()) {
      if (orbsym.size() != n) {
        throw std::invalid_argument("cispmv.Hamiltonian: orbsym has " + std::to_string(orbsym.size()) +
                                    " entries for " + std::to_string(norb) + " orbitals");
      }
      for (const int g : orbsym) {
        if (g < 0 || g > 7) {
          throw std::invalid_argument("cispmv.Hamiltonian: orbsym value " + std::to_string(g) +
                                      " is not a D2h-subgroup irrep id 0..7 (PySCF's numbering, modulo 10)");
        }
        sym.push_back(g + 1);
      }
      s->dump.orbsym = sym;
      if (wfnsym >= 0) {
        if (wfnsym > 7) throw std::invalid_argument("cispmv.Hamiltonian: wfnsym " + std::to_string(wfnsym) + " > 7");
        irrep = wfnsym + 1;
      }
    } else if (wfnsym >= 0) {
      throw std::invalid_argument("cispmv.Hamiltonian: wfnsym without orbsym");
    }
    const cispmv::ci::Determinant aufbau{neleca ? (~0ull >> (64 - neleca)) : 0, nelecb ? (~0ull >> (64 - nelecb)) : 0};
    {
      nb::gil_scoped_release unlocked;
      s->space = cispmv::ci::make_determinant_space(norb, neleca, nelecb, neleca + nelecb, sym, irrep, aufbau,
                                                    cispmv::ci::SpaceListing::strings);
      if (s->space.size() == 0) {
        throw std::invalid_argument("cispmv.Hamiltonian: no determinant of (" + std::to_string(neleca) + ", " +
                                    std::to_string(nelecb) + ") electrons in " + std::to_string(norb) +
                                    " orbitals has irrep " + std::to_string(wfnsym));
      }
      s->na = cispmv::ci::binomial(norb, neleca);
      s->nb = cispmv::ci::binomial(norb, nelecb);
      s->op.emplace(Exec(), s->dump, s->space);
      s->diagonal = cispmv::ci::hamiltonian_diagonal(Exec(), s->dump, s->space);
      s->position_host = cispmv::ci::dense_positions(s->space);
      s->position = Kokkos::View<std::int64_t*, Mem>("cispmv::python::position", s->position_host.size());
      Kokkos::deep_copy(s->position, Kokkos::View<const std::int64_t*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged>(
                                         s->position_host.data(), s->position_host.size()));
    }
    Runtime::get().keep(s);
    s_ = std::move(s);
  }

  std::int64_t size() const { return static_cast<std::int64_t>(state().space.size()); }
  std::tuple<std::int64_t, std::int64_t> shape() const { return {state().na, state().nb}; }
  double ecore() const { return state().dump.core_energy; }

  /// H c for each row of `c` (rows of na * nb values): the electronic Hamiltonian, no core energy; zero outside the
  /// space (and components of c outside it are not read).
  Out2 apply(In2 c) const {
    HamiltonianState& s = state();
    const std::size_t dense = static_cast<std::size_t>(s.na * s.nb);
    if (c.shape(1) != dense) {
      throw std::invalid_argument("cispmv.Hamiltonian.apply: vectors of " + std::to_string(c.shape(1)) +
                                  " values for a " + std::to_string(s.na) + " x " + std::to_string(s.nb) + " space");
    }
    Out2 out = new_array(c.shape(0), dense);
    double* o = out.data();
    {
      nb::gil_scoped_release unlocked;
      const std::lock_guard<std::mutex> hold(s.work_lock);
      if (s.work_dense.extent(0) != dense) {
        s.work_dense = Kokkos::View<double*, Mem>("cispmv::python::dense", dense);
        s.work_x = Kokkos::View<double*, Mem>("cispmv::python::x", s.space.size());
        s.work_y = Kokkos::View<double*, Mem>("cispmv::python::y", s.space.size());
      }
      const auto &d = s.work_dense, &x = s.work_x, &y = s.work_y;
      for (std::size_t k = 0; k < c.shape(0); ++k) {
        Kokkos::deep_copy(d, HostIn(c.data() + k * dense, dense));
        Kokkos::parallel_for("cispmv::python::gather", Rows(0, x.extent(0)), Gather{d, x, s.position});
        s.op->apply(1.0, x, 0.0, y);
        Kokkos::deep_copy(d, 0.0);
        Kokkos::parallel_for("cispmv::python::scatter", Rows(0, y.extent(0)), Scatter{y, d, s.position});
        Kokkos::deep_copy(HostOut(o + k * dense, dense), d);
      }
    }
    return out;
  }

  /// The Hamiltonian's diagonal in the dense layout (zero outside the space).
  Out1 diagonal() const {
    const HamiltonianState& s = state();
    const auto dense = static_cast<std::size_t>(s.na * s.nb);
    Out1 out = new_array(dense);
    Kokkos::View<double*, Mem> d("cispmv::python::dense", dense);
    Kokkos::parallel_for("cispmv::python::scatter", Rows(0, s.diagonal.extent(0)), Scatter{s.diagonal, d, s.position});
    Kokkos::deep_copy(HostOut(out.data(), dense), d);
    return out;
  }

  /// The nroots lowest eigenpairs by Davidson: (total energies, vectors as rows of the dense layout, residual norms,
  /// converged, iterations). ci0: start vectors (rows of the dense layout; none: unit vectors on the lowest diagonal
  /// entries and a random one).
  std::tuple<std::vector<double>, Out2, std::vector<double>, bool, int> solve(int nroots, double tolerance,
                                                                              int max_cycle, int max_space,
                                                                              std::optional<In2> ci0) const {
    const HamiltonianState& s = state();
    const std::size_t dense = static_cast<std::size_t>(s.na * s.nb);
    if (nroots < 1 || static_cast<std::size_t>(nroots) > s.space.size()) {
      throw std::invalid_argument("cispmv.Hamiltonian.solve: nroots = " + std::to_string(nroots) + " for a space of " +
                                  std::to_string(s.space.size()) + " determinants");
    }
    if (!(tolerance > 0.0)) throw std::invalid_argument("cispmv.Hamiltonian.solve: tolerance must be positive");
    if (max_cycle < 1) throw std::invalid_argument("cispmv.Hamiltonian.solve: max_cycle must be at least 1");
    cispmv::solvers::DavidsonOptions o;
    o.num_roots = nroots;
    o.residual_tolerance = tolerance;
    o.max_iterations = max_cycle;
    o.max_subspace = max_space;
    if (ci0 && ci0->shape(0) > 0) {
      if (ci0->shape(1) != dense) {
        throw std::invalid_argument("cispmv.Hamiltonian.solve: ci0 rows of " + std::to_string(ci0->shape(1)) +
                                    " values for a " + std::to_string(s.na) + " x " + std::to_string(s.nb) + " space");
      }
      const double* start = ci0->data();
      o.start_count = static_cast<int>(ci0->shape(0));
      o.start_fill = [&s, start, dense](int c, double* values) {
        const double* v = start + static_cast<std::size_t>(c) * dense;
        for (std::size_t i = 0; i < s.position_host.size(); ++i) values[i] = v[s.position_host[i]];
      };
      o.random_start = false;
    }
    std::vector<double> energies, residuals;
    Out2 out = new_array(static_cast<std::size_t>(nroots), dense);
    bool converged = false;
    int iterations = 0;
    {
      nb::gil_scoped_release unlocked;
      const auto r = cispmv::solvers::davidson(Exec(), *s.op, s.diagonal, o);
      Kokkos::View<double*, Mem> d("cispmv::python::dense", dense);
      for (int k = 0; k < nroots; ++k) {
        energies.push_back(r.eigenvalues[static_cast<std::size_t>(k)] + s.dump.core_energy);
        residuals.push_back(r.residual_norms[static_cast<std::size_t>(k)]);
        const Kokkos::View<const double*, Mem> col = Kokkos::subview(r.eigenvectors, Kokkos::ALL, k);
        Kokkos::parallel_for("cispmv::python::scatter", Rows(0, col.extent(0)), Scatter{col, d, s.position});
        Kokkos::deep_copy(HostOut(out.data() + static_cast<std::size_t>(k) * dense, dense), d);
      }
      converged = r.converged;
      iterations = r.iterations;
    }
    return {energies, out, residuals, converged, iterations};
  }

 private:
  HamiltonianState& state() const {  // the state is shared; apply keeps its workspace there
    Runtime::get().check();
    return *s_;
  }
  std::shared_ptr<HamiltonianState> s_;
};

// ------------------------------------------------------------------------------------------------ density matrices
struct RdmState final : Live {
  std::optional<cispmv::ci::DensityMatrixPlan<Exec>> plan;
  void release() override { plan.reset(); }
};

/// One plan per (orbitals, alpha, beta): the link tables stay on the device between calls.
const cispmv::ci::DensityMatrixPlan<Exec>& rdm_plan(int n, int na, int nb) {
  static std::map<std::tuple<int, int, int>, std::shared_ptr<RdmState>> plans;
  static std::mutex mutex;
  std::lock_guard<std::mutex> lock(mutex);
  auto& p = plans[{n, na, nb}];
  if (!p || !p->plan) {
    p = std::make_shared<RdmState>();
    p->plan.emplace(Exec(), n, na, nb);
    Runtime::get().keep(p);
  }
  return *p->plan;
}

nb::dict density_matrices(In1 c, int norb, int neleca, int nelecb, bool spins) {
  Runtime::get().check();
  if (norb < 1 || norb > 64 || neleca < 0 || nelecb < 0 || neleca > norb || nelecb > norb) {
    throw std::invalid_argument("cispmv: nelec = (" + std::to_string(neleca) + ", " + std::to_string(nelecb) + ") in " +
                                std::to_string(norb) + " orbitals");
  }
  cispmv::ci::DensityMatrices d;
  {
    nb::gil_scoped_release unlocked;
    const auto& plan = rdm_plan(norb, neleca, nelecb);
    if (static_cast<std::int64_t>(c.shape(0)) != plan.size()) {
      throw std::invalid_argument("cispmv: a vector of " + std::to_string(c.shape(0)) + " values for " +
                                  std::to_string(plan.alpha_strings()) + " x " + std::to_string(plan.beta_strings()) +
                                  " determinants");
    }
    Kokkos::View<double*, Mem> v("cispmv::python::c", c.shape(0));
    Kokkos::deep_copy(v, HostIn(c.data(), c.shape(0)));
    d = plan.compute(v, spins);
  }
  nb::dict out;
  const auto put = [&](const char* name, const std::vector<double>& v) {
    if (v.empty()) return;
    Out1 a = new_array(v.size());
    std::copy(v.begin(), v.end(), a.data());
    out[name] = a;
  };
  put("dm1", d.dm1);
  put("dm2", d.dm2);
  put("dm1a", d.dm1a);
  put("dm1b", d.dm1b);
  put("dm2aa", d.dm2aa);
  put("dm2ab", d.dm2ab);
  put("dm2bb", d.dm2bb);
  return out;
}

}  // namespace

NB_MODULE(_core, m) {
  m.doc() = "cispmv's factored CI Hamiltonian, Davidson solver and density matrices on Kokkos";
  initialize();
  m.def("finalize", &finalize, "Gives every object's Kokkos memory back and finalises Kokkos (at exit).");
  m.def(
      "backend", [] { return std::string(Exec::name()); }, "Kokkos' default execution space.");
  m.def("density_matrices", &density_matrices, nb::arg("c"), nb::arg("norb"), nb::arg("neleca"), nb::arg("nelecb"),
        nb::arg("spins"),
        "One- and two-particle density matrices of a dense CI vector (flattened), PySCF's conventions: a dict of "
        "flat arrays dm1, dm2 and, with spins, dm1a, dm1b, dm2aa, dm2ab, dm2bb.");
  m.def(
      "num_strings", [](int n, int k) { return cispmv::ci::binomial(n, k); }, nb::arg("norb"), nb::arg("nelec"));
  nb::class_<Hamiltonian>(m, "Hamiltonian")
      .def(nb::init<In2, In1, int, int, int, double, std::vector<int>, int>(), nb::arg("h1e"), nb::arg("eri"),
           nb::arg("norb"), nb::arg("neleca"), nb::arg("nelecb"), nb::arg("ecore"), nb::arg("orbsym"),
           nb::arg("wfnsym"))
      .def_prop_ro("size", &Hamiltonian::size)
      .def_prop_ro("shape", &Hamiltonian::shape)
      .def_prop_ro("ecore", &Hamiltonian::ecore)
      .def("apply", &Hamiltonian::apply, nb::arg("c"))
      .def("diagonal", &Hamiltonian::diagonal)
      .def("solve", &Hamiltonian::solve, nb::arg("nroots"), nb::arg("tolerance"), nb::arg("max_cycle"),
           nb::arg("max_space"), nb::arg("ci0").none());
}
