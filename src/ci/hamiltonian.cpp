// CI Hamiltonian by the Slater-Condon rules, assembled into CSR on the host execution space.
#include "cispmv/ci/hamiltonian.hpp"
#include "cispmv/ci/slater_condon.hpp"

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace cispmv::ci {

namespace {

// Orbital lists of one spin string, split the way the truncation needs them. The excitation level
// counts the electrons in ref-virtual orbitals, so moving one from i to a changes it by
// [a ref-virtual] - [i ref-virtual]: the holes are picked first, each hole in a ref-virtual orbital
// adds one to the budget, and each ref-virtual particle spends one. Because the reference occupies
// the lowest orbitals, `empty` lists the empty ref-occupied orbitals first (num_empty_occ of them),
// then the empty ref-virtual ones, so the particles a budget allows are a prefix of `empty`.
struct StringOrbitals {
  int occ[64];
  int num_occ = 0;
  int empty[64];
  int num_empty = 0;
  int num_empty_occ = 0;

  StringOrbitals(std::uint64_t s, int norb, int nref) {
    for (int p = 0; p < norb; ++p) {
      if ((s >> p) & 1u) {
        occ[num_occ++] = p;
      } else {
        empty[num_empty++] = p;
        if (p < nref) ++num_empty_occ;
      }
    }
  }
};

// Number of particle orbitals (a prefix of `empty`) reachable with `budget` more levels: ref-virtual
// targets only while the budget allows.
inline int particle_limit(const StringOrbitals& s, int budget) { return budget >= 1 ? s.num_empty : s.num_empty_occ; }

inline std::uint64_t bit(int p) { return std::uint64_t{1} << p; }

// Calls emit(column, value) for every stored element of row `row` (the diagonal first, then the
// connected determinants in generation order). Candidates are generated only when their excitation
// level stays within the truncation and (with an irrep restriction) the excitation is totally
// symmetric, so every candidate is a member of the space: the counting pass (Lookup = false) needs
// no lookup at all and emits column -1; the filling pass looks each one up and counts in `missing`
// any that is not found (a bug, reported by build_hamiltonian).
template <bool Lookup, class Emit>
void for_each_row_element(const SlaterCondon& sc, const DeterminantSpace& space, const DeterminantIndex& index,
                          const std::vector<std::uint32_t>& sym, double tol, std::int64_t row,
                          std::atomic<long>& missing, Emit&& emit) {
  const Determinant d = space.determinants[static_cast<std::size_t>(row)];
  const int norb = space.num_orbitals;
  const int na = space.num_alpha;
  const int nb = space.num_beta;
  const bool restricted = space.irrep != 0;
  const int budget = space.max_level - excitation_level(space.reference, d);
  const StringOrbitals A(d.alpha, norb, na);
  const StringOrbitals B(d.beta, norb, nb);

  emit(static_cast<int>(row), sc.diagonal(d));

  auto lookup_emit = [&](const Determinant& c, double value) {
    if (std::abs(value) < tol) return;
    if constexpr (!Lookup) {
      emit(-1, value);
      return;
    }
    const std::int64_t col = index.find(c);
    if (col < 0) {
      missing.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    emit(static_cast<int>(col), value);
  };

  // Singles and same-spin doubles of one spin; `same` is excited, `other` is a spectator.
  auto same_spin = [&](const StringOrbitals& S, std::uint64_t same, std::uint64_t other, int nref, bool is_alpha) {
    auto make = [&](std::uint64_t s) { return is_alpha ? Determinant{s, other} : Determinant{other, s}; };
    for (int x = 0; x < S.num_occ; ++x) {
      const int i = S.occ[x];
      const int bi = budget + (i >= nref ? 1 : 0);
      const int a_lim = particle_limit(S, bi);
      for (int y = 0; y < a_lim; ++y) {
        const int a = S.empty[y];
        if (restricted && sym[i] != sym[a]) continue;
        const std::uint64_t s = same ^ bit(i) ^ bit(a);
        // Look up only after the value passes the drop test: most of the cost is the lookup.
        lookup_emit(make(s), sc.single(same, other, i, a));
      }
    }
    for (int x = 0; x < S.num_occ; ++x) {
      for (int x2 = x + 1; x2 < S.num_occ; ++x2) {
        const int i = S.occ[x];
        const int j = S.occ[x2];
        const int bij = budget + (i >= nref ? 1 : 0) + (j >= nref ? 1 : 0);
        if (bij < 0) continue;
        // The second particle may be ref-virtual only if the first leaves budget for it.
        const int first_lim = particle_limit(S, bij);
        for (int y = 0; y < first_lim; ++y) {
          const int a = S.empty[y];
          const int second_lim = particle_limit(S, bij - (y >= S.num_empty_occ ? 1 : 0));
          for (int y2 = y + 1; y2 < second_lim; ++y2) {
            const int b = S.empty[y2];
            if (restricted && (sym[i] ^ sym[j] ^ sym[a] ^ sym[b]) != 0) continue;
            const std::uint64_t s = same ^ bit(i) ^ bit(j) ^ bit(a) ^ bit(b);
            lookup_emit(make(s), sc.double_same_spin(same, i, j, a, b));
          }
        }
      }
    }
  };
  same_spin(A, d.alpha, d.beta, na, true);
  same_spin(B, d.beta, d.alpha, nb, false);

  // Opposite-spin doubles: alpha i -> a, beta j -> b. Both holes first: a hole in a ref-virtual
  // orbital lowers the level and so pays for a ref-virtual particle of either spin.
  for (int x = 0; x < A.num_occ; ++x) {
    const int i = A.occ[x];
    for (int x2 = 0; x2 < B.num_occ; ++x2) {
      const int j = B.occ[x2];
      const int bij = budget + (i >= na ? 1 : 0) + (j >= nb ? 1 : 0);
      const int a_lim = particle_limit(A, bij);
      for (int y = 0; y < a_lim; ++y) {
        const int a = A.empty[y];
        const std::uint64_t sa = d.alpha ^ bit(i) ^ bit(a);
        const std::uint32_t sym_ia = sym[i] ^ sym[a];
        const int b_lim = particle_limit(B, bij - (a >= na ? 1 : 0));
        for (int y2 = 0; y2 < b_lim; ++y2) {
          const int b = B.empty[y2];
          if (restricted && (sym[j] ^ sym[b]) != sym_ia) continue;
          const std::uint64_t sb = d.beta ^ bit(j) ^ bit(b);
          lookup_emit(Determinant{sa, sb}, sc.double_opposite_spin(d.alpha, d.beta, i, a, j, b));
        }
      }
    }
  }
}

}  // namespace

HostCsr build_hamiltonian(const FciDump& integrals, const DeterminantSpace& space, double drop_tolerance) {
  if (integrals.num_orbitals != space.num_orbitals) {
    throw std::invalid_argument("cispmv::build_hamiltonian: the integrals have " +
                                std::to_string(integrals.num_orbitals) + " orbitals, the space " +
                                std::to_string(space.num_orbitals));
  }
  using Matrix = HostCsr;
  using Exec = Kokkos::DefaultHostExecutionSpace;
  // Row costs vary by orders of magnitude between levels: schedule dynamically.
  using Policy = Kokkos::RangePolicy<Exec, Kokkos::Schedule<Kokkos::Dynamic>, Kokkos::IndexType<std::int64_t>>;

  const std::int64_t n = static_cast<std::int64_t>(space.size());
  const SlaterCondon sc(integrals);
  const DeterminantIndex index(space.determinants);
  std::vector<std::uint32_t> sym(space.orbsym.size());
  for (std::size_t p = 0; p < sym.size(); ++p) sym[p] = static_cast<std::uint32_t>(space.orbsym[p] - 1);
  std::atomic<long> missing{0};

  Matrix H("cispmv::ci_hamiltonian", static_cast<int>(n), static_cast<int>(n), 0);
  auto row_ptr = H.row_ptr;

  // Pass 1: nonzeros per row, into row_ptr(row + 1).
  Kokkos::parallel_for("cispmv::build_hamiltonian::count", Policy(0, n), [&](const std::int64_t row) {
    std::size_t count = 0;
    for_each_row_element<false>(sc, space, index, sym, drop_tolerance, row, missing, [&](int, double) { ++count; });
    row_ptr(static_cast<std::size_t>(row) + 1) = count;
  });
  Exec().fence();

  // Prefix sum: row_ptr(row + 1) becomes the end of row `row`.
  Kokkos::parallel_scan("cispmv::build_hamiltonian::scan",
                        Kokkos::RangePolicy<Exec, Kokkos::IndexType<std::int64_t>>(0, n),
                        [&](const std::int64_t row, std::size_t& partial, const bool final) {
                          partial += row_ptr(static_cast<std::size_t>(row) + 1);
                          if (final) row_ptr(static_cast<std::size_t>(row) + 1) = partial;
                        });
  Exec().fence();
  const std::size_t nnz = n == 0 ? 0 : row_ptr(static_cast<std::size_t>(n));
  H.col_idx =
      Matrix::index_type(Kokkos::view_alloc("cispmv::ci_hamiltonian::col_idx", Kokkos::WithoutInitializing), nnz);
  H.values =
      Matrix::values_type(Kokkos::view_alloc("cispmv::ci_hamiltonian::values", Kokkos::WithoutInitializing), nnz);
  auto col_idx = H.col_idx;
  auto values = H.values;

  // Pass 2: fill each row, then sort it by column.
  Kokkos::parallel_for("cispmv::build_hamiltonian::fill", Policy(0, n), [&](const std::int64_t row) {
    thread_local std::vector<std::pair<int, double>> entries;
    entries.clear();
    for_each_row_element<true>(sc, space, index, sym, drop_tolerance, row, missing,
                               [&](int col, double value) { entries.emplace_back(col, value); });
    if (entries.size() != row_ptr(static_cast<std::size_t>(row) + 1) - row_ptr(static_cast<std::size_t>(row))) {
      missing.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    std::sort(entries.begin(), entries.end(),
              [](const std::pair<int, double>& x, const std::pair<int, double>& y) { return x.first < y.first; });
    std::size_t k = row_ptr(static_cast<std::size_t>(row));
    for (const auto& e : entries) {
      col_idx(k) = e.first;
      values(k) = e.second;
      ++k;
    }
  });
  Exec().fence();
  if (missing.load() != 0) {
    throw std::logic_error("cispmv::build_hamiltonian: " + std::to_string(missing.load()) +
                           " generated determinants were not in the space (internal error)");
  }
  return H;
}

Kokkos::View<double*, Kokkos::HostSpace> csr_diagonal(const HostCsr& A) {
  Kokkos::View<double*, Kokkos::HostSpace> d("cispmv::csr_diagonal", static_cast<std::size_t>(A.num_rows));
  for (int r = 0; r < A.num_rows; ++r) {
    for (std::size_t k = A.row_ptr(r); k < A.row_ptr(r + 1); ++k) {
      if (A.col_idx(k) == r) d(r) += A.values(k);
    }
  }
  return d;
}

bool is_hamiltonian_spec(const std::string& text) { return text.rfind("fcidump:", 0) == 0; }

HamiltonianSpec parse_hamiltonian_spec(const std::string& text) {
  auto fail = [&](const std::string& what) {
    throw std::invalid_argument("'" + text.substr(0, 200) + "': " + what +
                                " (expected fcidump:FILE:LEVEL[:all-irreps], e.g. fcidump:h2o.fcidump:2 for CISD)");
  };
  if (!is_hamiltonian_spec(text)) fail("does not start with 'fcidump:'");
  std::string rest = text.substr(8);
  HamiltonianSpec spec;
  const std::string all = ":all-irreps";
  if (rest.size() > all.size() && rest.compare(rest.size() - all.size(), all.size(), all) == 0) {
    spec.restrict_to_isym = false;
    rest.resize(rest.size() - all.size());
  }
  const std::size_t colon = rest.rfind(':');
  if (colon == std::string::npos) fail("no ':LEVEL' after the file name");
  spec.fcidump = rest.substr(0, colon);
  const std::string level = rest.substr(colon + 1);
  if (spec.fcidump.empty()) fail("no FCIDUMP file name");
  if (level.empty() || level.size() > 4 || level.find_first_not_of("0123456789") != std::string::npos) {
    fail("the excitation level '" + level.substr(0, 20) + "' is not an integer in 1..9999");
  }
  spec.level = std::stoi(level);
  if (spec.level < 1) fail("the excitation level must be at least 1");
  return spec;
}

HostCsr build_hamiltonian(const HamiltonianSpec& spec) {
  const FciDump dump = read_fcidump(spec.fcidump);
  const DeterminantSpace space = make_determinant_space(dump, spec.level, spec.restrict_to_isym);
  return build_hamiltonian(dump, space);
}

}  // namespace cispmv::ci
