// The factored CI Hamiltonian's string tables, built on the host (ci/factored/strings.hpp says what each holds):
// factor_hamiltonian, step by step over one Tables context (the beta strings' kernel order, the alpha strings'
// ranges, the same-spin string Hamiltonians, each spin's replacement lists, the pair table, the integrals), and
// the tile kernel's units (factored_units).
#include "cispmv/ci/factored.hpp"

#include <Kokkos_Core.hpp>

#include "cispmv/ci/hamiltonian.hpp"
#include "cispmv/ci/slater_condon.hpp"
#include "cispmv/impl/bits.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

namespace cispmv::impl {

using namespace cispmv::ci;

namespace {

std::uint64_t bit(int p) { return std::uint64_t{1} << p; }

int pair_of(int p, int q) { return static_cast<int>(FciDump::pair_index(p, q)); }

std::unordered_map<std::uint64_t, std::int32_t> ids_of(const SpinStrings& S) {
  std::unordered_map<std::uint64_t, std::int32_t> m;
  m.reserve(S.size() * 2);
  for (std::size_t id = 0; id < S.size(); ++id) m.emplace(S.strings[id], static_cast<std::int32_t>(id));
  return m;
}

// A list per position q, laid out in slices of 32 positions (FactoredHost): ptr per slice, count per q,
// entry k of q at ptr[q / 32] + 32 k + q % 32; the slice is as long as its longest list, padded with
// `pad`.
template <class T>
void slice_lists(const std::vector<std::vector<T>>& lists, const T& pad, std::vector<std::int64_t>& ptr,
                 std::vector<std::int32_t>& count, std::vector<T>& data) {
  const std::size_t n = lists.size();
  for (std::size_t s = 0; s * 32 < n; ++s) {
    std::size_t width = 0;
    for (std::size_t q = s * 32; q < std::min(n, s * 32 + 32); ++q) width = std::max(width, lists[q].size());
    ptr.push_back(static_cast<std::int64_t>(data.size()));
    const std::size_t base = data.size();
    data.resize(base + 32 * width, pad);
    for (std::size_t q = s * 32; q < std::min(n, s * 32 + 32); ++q) {
      count.push_back(static_cast<std::int32_t>(lists[q].size()));
      for (std::size_t k = 0; k < lists[q].size(); ++k) data[base + 32 * k + q % 32] = lists[q][k];
    }
  }
}

// f(target id, i, a) for every single replacement i -> a (i occupied, a empty) of string s whose
// target is a string of `ids`.
template <class F>
void for_each_single(std::uint64_t s, int n, const std::unordered_map<std::uint64_t, std::int32_t>& ids, F&& f) {
  for (int i = 0; i < n; ++i) {
    if (!((s >> i) & 1u)) continue;
    for (int a = 0; a < n; ++a) {
      if ((s >> a) & 1u) continue;
      const auto it = ids.find(s ^ bit(i) ^ bit(a));
      if (it != ids.end()) f(it->second, i, a);
    }
  }
}

// What the steps of factor_hamiltonian share: the space, the symmetry classes of orbital pairs, each spin's string
// ids by string, and the beta strings' kernel order (id_of: the id at position q; q_of: the position of an id).
struct Tables {
  Tables(const FciDump& i, const DeterminantSpace& s, const FactoredOptions& o) : integrals(i), space(s), options(o) {}
  const FciDump& integrals;
  const DeterminantSpace& space;
  const FactoredOptions& options;
  int n = 0;
  bool symmetry = false;
  std::unordered_map<std::uint64_t, std::int32_t> a_ids, b_ids;
  std::vector<std::int32_t> id_of, q_of;

  int cls(int p, int q) const {
    return symmetry ? static_cast<int>(static_cast<std::uint32_t>(space.orbsym[static_cast<std::size_t>(p)] - 1) ^
                                       static_cast<std::uint32_t>(space.orbsym[static_cast<std::size_t>(q)] - 1))
                    : 0;
  }
  std::uint64_t beta_string(int q) const {
    return space.beta.strings[static_cast<std::size_t>(id_of[static_cast<std::size_t>(q)])];
  }
  // the kernel order's key of beta string id: (irrep in a space of one irrep, rank, id)
  std::tuple<int, int, std::int32_t> key(std::int32_t id) const {
    const auto i = static_cast<std::size_t>(id);
    return {space.irrep != 0 ? static_cast<int>(space.beta.irrep[i]) : 0, static_cast<int>(space.beta.rank[i]), id};
  }
};

void check_space(const FciDump& integrals, const DeterminantSpace& space) {
  const std::string who = "cispmv::ci::FactoredHamiltonian: ";
  const int n = space.num_orbitals;
  if (integrals.num_orbitals != n) {
    throw std::invalid_argument(who + "the integrals have " + std::to_string(integrals.num_orbitals) +
                                " orbitals, the space " + std::to_string(n));
  }
  if (n > max_orbitals) throw std::invalid_argument(who + "more than " + std::to_string(max_orbitals) + " orbitals");
  if (space.beta.size() >= (std::size_t{1} << (32 - factored_position_shift))) {
    throw std::invalid_argument(who + std::to_string(space.beta.size()) +
                                " beta strings; the packed lists address at most " +
                                std::to_string((std::size_t{1} << (32 - factored_position_shift)) - 1));
  }
  if (space.size() > static_cast<std::size_t>(std::numeric_limits<int>::max())) {
    throw std::invalid_argument(who + std::to_string(space.size()) + " determinants; at most 2^31 - 1");
  }
}

// The beta strings in kernel order, and the blocks of equal key but id (irrep in a space of one irrep, rank):
// their positions are consecutive.
void order_beta_strings(Tables& t, FactoredHost& h) {
  t.id_of.resize(static_cast<std::size_t>(h.nb));
  std::iota(t.id_of.begin(), t.id_of.end(), 0);
  std::sort(t.id_of.begin(), t.id_of.end(), [&](std::int32_t u, std::int32_t v) { return t.key(u) < t.key(v); });
  t.q_of.resize(static_cast<std::size_t>(h.nb));
  for (int q = 0; q < h.nb; ++q) {
    const auto id = static_cast<std::size_t>(t.id_of[static_cast<std::size_t>(q)]);
    t.q_of[id] = q;
    h.q_rank.push_back(t.space.beta.rank[id]);
    h.q_position.push_back(t.space.beta.position[id]);
  }
  h.q_block_end.resize(static_cast<std::size_t>(h.nb));
  for (int q = h.nb - 1; q >= 0; --q) {
    const auto u = static_cast<std::size_t>(q);
    const bool last = q + 1 == h.nb || std::get<0>(t.key(t.id_of[u])) != std::get<0>(t.key(t.id_of[u + 1])) ||
                      std::get<1>(t.key(t.id_of[u])) != std::get<1>(t.key(t.id_of[u + 1]));
    h.q_block_end[u] = last ? q + 1 : h.q_block_end[u + 1];
    if (!last && h.q_position[u + 1] != h.q_position[u] + 1) {
      throw std::logic_error(
          "cispmv::ci::FactoredHamiltonian: the positions of a block of beta strings are not "
          "consecutive");
    }
  }
}

// Per alpha string: the range of q it pairs with, and where its determinants lie (checked at the ends of each
// range against the space's own addressing).
void alpha_ranges(const Tables& t, FactoredHost& h) {
  const DeterminantSpace& space = t.space;
  const int nkb = h.nkb;
  h.a_rowbase.assign(static_cast<std::size_t>(h.na) * nkb, -1);
  h.a_lo.resize(static_cast<std::size_t>(h.na));
  h.a_hi.resize(static_cast<std::size_t>(h.na));
  std::int64_t covered = 0;
  for (int ja = 0; ja < h.na; ++ja) {
    const auto a = static_cast<std::size_t>(ja);
    const int ka = space.alpha.rank[a];
    for (int kb = 0; kb < nkb; ++kb) {
      const std::int64_t start = space.block_start[static_cast<std::size_t>(ka) * nkb + kb];
      if (start >= 0) {
        h.a_rowbase[a * nkb + kb] = start + space.alpha_block_position[a * nkb + static_cast<std::size_t>(kb)];
      }
    }
    const int irrep = space.irrep != 0 ? static_cast<int>((space.irrep - 1) ^ space.alpha.irrep[a]) : 0;
    const int max_rank = std::min(space.beta.max_rank(), space.max_level - ka);
    auto first_at = [&](int rank) {
      return static_cast<int>(std::lower_bound(t.id_of.begin(), t.id_of.end(), std::make_tuple(irrep, rank, 0),
                                               [&](std::int32_t u, const auto& k) { return t.key(u) < k; }) -
                              t.id_of.begin());
    };
    h.a_lo[a] = first_at(0);
    h.a_hi[a] = max_rank < 0 ? h.a_lo[a] : first_at(max_rank + 1);
    h.max_range = std::max(h.max_range, h.a_hi[a] - h.a_lo[a]);
    covered += h.a_hi[a] - h.a_lo[a];
    for (int q : {h.a_lo[a], h.a_hi[a] - 1}) {
      if (q < h.a_lo[a] || q >= h.a_hi[a]) continue;
      const auto qi = static_cast<std::size_t>(q);
      const std::int64_t want = space.index_of(ja, t.id_of[qi]);
      if (want < 0 || want != h.a_rowbase[a * nkb + h.q_rank[qi]] + h.q_position[qi]) {
        throw std::logic_error("cispmv::ci::FactoredHamiltonian: the beta range of alpha string " + std::to_string(ja) +
                               " disagrees with the space's addressing");
      }
    }
  }
  if (covered != h.rows) {
    throw std::logic_error("cispmv::ci::FactoredHamiltonian: the alpha strings' beta ranges cover " +
                           std::to_string(covered) + " determinants of " + std::to_string(h.rows));
  }
}

// Row `id` of the same-spin string Hamiltonian of S (H_alpha or H_beta) as (target id, value): the diagonal, the
// singles and the same-spin doubles whose targets are strings of S (of the same irrep where symmetry is used).
void same_spin_row(const Tables& t, const SlaterCondon& sc, const SpinStrings& S,
                   const std::unordered_map<std::uint64_t, std::int32_t>& ids, std::size_t id,
                   std::vector<std::pair<std::int32_t, double>>& out) {
  out.clear();
  const std::uint64_t s = S.strings[id];
  out.emplace_back(static_cast<std::int32_t>(id), sc.diagonal({s, 0}));
  int occ[64], emp[64], no = 0, ne = 0;
  for (int p = 0; p < t.n; ++p) ((s >> p) & 1u ? occ[no++] : emp[ne++]) = p;
  // a replacement that changes the string's irrep has no element where symmetry is used: skipped before its
  // lookup and its integrals (7 of 8 same-spin doubles of a C2v space)
  auto keep = [&](std::uint64_t target, auto value) {
    const auto it = ids.find(target);
    if (it == ids.end()) return;
    const double v = value();
    if (std::abs(v) >= t.options.drop_tolerance) out.emplace_back(it->second, v);
  };
  for (int x = 0; x < no; ++x) {
    for (int y = 0; y < ne; ++y) {
      if (t.cls(occ[x], emp[y]) != 0) continue;
      keep(s ^ bit(occ[x]) ^ bit(emp[y]), [&] { return sc.single(s, 0, occ[x], emp[y]); });
    }
  }
  for (int x = 0; x < no; ++x) {
    for (int x2 = x + 1; x2 < no; ++x2) {
      for (int y = 0; y < ne; ++y) {
        const int c = t.cls(occ[x], emp[y]);
        for (int y2 = y + 1; y2 < ne; ++y2) {
          if ((c ^ t.cls(occ[x2], emp[y2])) != 0) continue;
          const std::uint64_t target = s ^ bit(occ[x]) ^ bit(occ[x2]) ^ bit(emp[y]) ^ bit(emp[y2]);
          keep(target, [&] { return sc.double_same_spin(s, occ[x], occ[x2], emp[y], emp[y2]); });
        }
      }
    }
  }
}

// rows[s] = row s of the same-spin string Hamiltonian of S, sorted by target (its targets through `renumber`: the
// alpha ids as they are, the beta strings' kernel positions), row s being string id_of(s): a thread a string.
template <class IdOf, class Renumber>
std::vector<std::vector<std::pair<std::int32_t, double>>> same_spin_rows(
    const Tables& t, const SlaterCondon& sc, const SpinStrings& S,
    const std::unordered_map<std::uint64_t, std::int32_t>& ids, IdOf&& id_of, Renumber&& renumber) {
  std::vector<std::vector<std::pair<std::int32_t, double>>> rows(S.size());
  Kokkos::parallel_for(
      "cispmv::ci::factored::same_spin_rows",
      Kokkos::RangePolicy<Kokkos::DefaultHostExecutionSpace, Kokkos::Schedule<Kokkos::Dynamic>>(0, S.size()),
      [&](const std::size_t r) {
        auto& row = rows[r];
        same_spin_row(t, sc, S, ids, id_of(r), row);
        for (auto& e : row) e.first = renumber(e.first);
        std::sort(row.begin(), row.end());
      });
  return rows;
}

// H_alpha as CSR over alpha ids; H_beta over kernel positions, sliced.
void same_spin_lists(const Tables& t, FactoredHost& h) {
  const SlaterCondon sc(t.integrals);
  const auto alpha = same_spin_rows(
      t, sc, t.space.alpha, t.a_ids, [](std::size_t a) { return a; }, [](std::int32_t id) { return id; });
  // the rows' offsets, then their entries copied a thread a row
  h.aa_ptr.assign(alpha.size() + 1, 0);
  for (std::size_t r = 0; r < alpha.size(); ++r) {
    h.aa_ptr[r + 1] = h.aa_ptr[r] + static_cast<std::int64_t>(alpha[r].size());
  }
  h.aa_col.resize(static_cast<std::size_t>(h.aa_ptr.back()));
  h.aa_val.resize(h.aa_col.size());
  Kokkos::parallel_for("cispmv::ci::factored::alpha_rows",
                       Kokkos::RangePolicy<Kokkos::DefaultHostExecutionSpace>(0, alpha.size()),
                       [&](const std::size_t r) {
                         auto k = static_cast<std::size_t>(h.aa_ptr[r]);
                         for (const auto& [col, v] : alpha[r]) {
                           h.aa_col[k] = col;
                           h.aa_val[k++] = v;
                         }
                       });
  // (singlet: no H_beta, whose terms are the transpose of H_alpha's; its lists empty)
  const auto beta = t.options.singlet ? std::vector<std::vector<std::pair<std::int32_t, double>>>(h.nb)
                                      : same_spin_rows(
                                            t, sc, t.space.beta, t.b_ids,
                                            [&](std::size_t q) { return static_cast<std::size_t>(t.id_of[q]); },
                                            [&](std::int32_t id) { return t.q_of[static_cast<std::size_t>(id)]; });
  std::vector<std::vector<std::int32_t>> cols(static_cast<std::size_t>(h.nb));
  std::vector<std::vector<double>> vals(static_cast<std::size_t>(h.nb));
  Kokkos::parallel_for("cispmv::ci::factored::beta_rows",
                       Kokkos::RangePolicy<Kokkos::DefaultHostExecutionSpace>(0, beta.size()),
                       [&](const std::size_t q) {
                         cols[q].reserve(beta[q].size());
                         vals[q].reserve(beta[q].size());
                         for (const auto& [col, v] : beta[q]) {
                           cols[q].push_back(col);
                           vals[q].push_back(v);
                         }
                       });
  std::vector<std::int64_t> ptr2;
  std::vector<std::int32_t> count2;
  slice_lists(cols, std::int32_t{0}, h.bb_ptr, h.bb_count, h.bb_col);
  slice_lists(vals, 0.0, ptr2, count2, h.bb_val);
}

// FactoredOptions::singlet: each alpha string's kernel position as a beta string and each position's alpha id; the
// two spins' strings must be the same, and every determinant's transpose must lie in the space (a truncated space of
// an open-shell reference, as one of an irrep other than A1 has, holds determinants whose transpose it leaves out).
void singlet_tables(const Tables& t, FactoredHost& h) {
  const std::string who = "cispmv::ci::FactoredHamiltonian, singlet: ";
  if (h.na != h.nb) {
    throw std::invalid_argument(who + std::to_string(h.na) + " alpha strings and " + std::to_string(h.nb) +
                                " beta strings: the exchange of alpha and beta strings needs M_S = 0 and the same "
                                "strings for both spins");
  }
  h.a_self.assign(static_cast<std::size_t>(h.na), -1);
  h.q_alpha.assign(static_cast<std::size_t>(h.nb), -1);
  for (std::size_t a = 0; a < static_cast<std::size_t>(h.na); ++a) {
    const auto it = t.b_ids.find(t.space.alpha.strings[a]);
    if (it == t.b_ids.end()) {
      throw std::invalid_argument(who + "alpha string " + std::to_string(a) + " is not a beta string of the space");
    }
    const std::int32_t q = t.q_of[static_cast<std::size_t>(it->second)];
    h.a_self[a] = q;
    h.q_alpha[static_cast<std::size_t>(q)] = static_cast<std::int32_t>(a);
  }
  // every determinant (a, q): its transpose (q's string as alpha, a's as beta) in the space
  int outside = 0;
  Kokkos::parallel_reduce(
      "cispmv::ci::factored::singlet_check", Kokkos::RangePolicy<Kokkos::DefaultHostExecutionSpace>(0, h.na),
      [&](const int a, int& bad) {
        const int self = h.a_self[static_cast<std::size_t>(a)];
        for (int q = h.a_lo[static_cast<std::size_t>(a)]; q < h.a_hi[static_cast<std::size_t>(a)]; ++q) {
          const auto ja = static_cast<std::size_t>(h.q_alpha[static_cast<std::size_t>(q)]);
          bad += self < h.a_lo[ja] || self >= h.a_hi[ja];
        }
      },
      outside);
  if (outside > 0) {
    throw std::invalid_argument(who + std::to_string(outside) +
                                " determinants whose alpha and beta strings exchanged lie outside the space (a "
                                "truncated space of an open-shell reference)");
  }
}

// Beta replacements per class of their pair, sliced: E_rr of each occupied r (class 0), then singles.
void beta_replacements(const Tables& t, FactoredHost& h) {
  const auto npos = static_cast<std::uint32_t>(factored_position_shift);
  std::vector<std::vector<std::vector<std::uint32_t>>> lists(
      static_cast<std::size_t>(h.num_classes), std::vector<std::vector<std::uint32_t>>(static_cast<std::size_t>(h.nb)));
  for (int q = 0; q < h.nb; ++q) {
    const std::uint64_t s = t.beta_string(q);
    const auto uq = static_cast<std::uint32_t>(q);
    for (int r = 0; r < t.n; ++r) {
      if ((s >> r) & 1u)
        lists[0][static_cast<std::size_t>(q)].push_back(uq << npos | static_cast<std::uint32_t>(pair_of(r, r)));
    }
    for_each_single(s, t.n, t.b_ids, [&](std::int32_t id, int r, int b) {
      const auto target = static_cast<std::uint32_t>(t.q_of[static_cast<std::size_t>(id)]);
      const std::uint32_t negative = excitation_sign(s, r, b) < 0 ? 1u : 0u;
      lists[static_cast<std::size_t>(t.cls(r, b))][static_cast<std::size_t>(q)].push_back(
          target << npos | negative << factored_pair_bits | static_cast<std::uint32_t>(pair_of(r, b)));
    });
  }
  if (t.options.singlet) {  // by target (the high bits), so that the tile kernel's walk stops past its last target
    for (auto& by_position : lists)
      for (auto& list : by_position) std::sort(list.begin(), list.end());
  }
  const std::size_t slices = (static_cast<std::size_t>(h.nb) + 31) / 32;
  for (int c = 0; c < h.num_classes; ++c) {
    std::vector<std::int64_t> ptr;
    std::vector<std::int32_t> count;
    slice_lists(lists[static_cast<std::size_t>(c)], std::uint32_t{0}, ptr, count, h.be_data);
    if (ptr.size() != slices) throw std::logic_error("cispmv::ci::FactoredHamiltonian: slices of the beta lists");
    h.be_ptr.insert(h.be_ptr.end(), ptr.begin(), ptr.end());
    h.be_count.insert(h.be_count.end(), count.begin(), count.end());
  }
}

// Alpha replacements per alpha string in batches of one class (the diagonal first, pair index num_pairs; padding:
// ja -1, sign 0), with each batch's union of ranges and walked length, and the alpha-beta terms a product visits.
void alpha_batches(const Tables& t, FactoredHost& h) {
  // prefix sums over q of each class's list lengths: the terms a batch costs on a range of q
  std::vector<std::int64_t> prefix(static_cast<std::size_t>(h.num_classes) * (h.nb + 1), 0);
  for (int c = 0; c < h.num_classes; ++c) {
    for (int q = 0; q < h.nb; ++q) {
      const std::size_t at = static_cast<std::size_t>(c) * (h.nb + 1) + q;
      prefix[at + 1] = prefix[at] + h.be_count[static_cast<std::size_t>(c) * h.nb + q];
    }
  }
  struct Rep {
    std::int32_t ja, pair;
    double sign;
  };
  const auto per = static_cast<std::size_t>(h.batch);
  h.ab_ptr.push_back(0);
  for (int ia = 0; ia < h.na; ++ia) {
    const std::uint64_t s = t.space.alpha.strings[static_cast<std::size_t>(ia)];
    std::vector<std::vector<Rep>> by_class(static_cast<std::size_t>(h.num_classes));
    by_class[0].push_back({ia, h.num_pairs, 1.0});
    for_each_single(s, t.n, t.a_ids, [&](std::int32_t id, int i, int a) {
      by_class[static_cast<std::size_t>(t.cls(i, a))].push_back({id, pair_of(i, a), excitation_sign(s, i, a)});
    });
    const auto ua = static_cast<std::size_t>(ia);
    for (int c = 0; c < h.num_classes; ++c) {
      const auto& reps = by_class[static_cast<std::size_t>(c)];
      for (std::size_t k = 0; k < reps.size(); k += per) {
        h.ab_class.push_back(static_cast<std::uint8_t>(c));
        int lo = std::numeric_limits<int>::max(), hi = 0, live = 0;
        for (std::size_t r = k; r < k + per; ++r) {
          const Rep rep = r < reps.size() ? reps[r] : Rep{-1, 0, 0.0};
          h.ab_ja.push_back(rep.ja);
          h.ab_pair.push_back(rep.pair);
          h.ab_sign.push_back(rep.sign);
          if (rep.ja >= 0 && h.a_hi[static_cast<std::size_t>(rep.ja)] > h.a_lo[static_cast<std::size_t>(rep.ja)]) {
            lo = std::min(lo, h.a_lo[static_cast<std::size_t>(rep.ja)]);
            hi = std::max(hi, h.a_hi[static_cast<std::size_t>(rep.ja)]);
            live = static_cast<int>(r - k) + 1;
          }
        }
        h.ab_walked.push_back(static_cast<std::uint8_t>((live + 1) / 2 * 2));
        if (hi == 0) lo = 0;  // no string of the batch pairs with any beta string
        h.ab_lo.push_back(lo);
        h.ab_len.push_back(hi - lo);
        h.max_batch_range = std::max(h.max_batch_range, hi - lo);
        const std::size_t base = static_cast<std::size_t>(c) * (h.nb + 1);
        h.alpha_beta_terms += static_cast<std::size_t>(prefix[base + static_cast<std::size_t>(h.a_hi[ua])] -
                                                       prefix[base + static_cast<std::size_t>(h.a_lo[ua])]) *
                              std::min<std::size_t>(per, reps.size() - k);
      }
    }
    h.ab_ptr.push_back(static_cast<std::int64_t>(h.ab_class.size()));
  }
}

// Pairs by class, and (with `table`) per pair and source position q the target of the pair's replacement in q's
// string (the scatter kernel's table; E_rr of an occupied r keeps the string).
void pair_table(const Tables& t, FactoredHost& h, FactoredTable table) {
  h.cls_ptr.assign(static_cast<std::size_t>(h.num_classes) + 1, 0);
  h.pair_slot.assign(static_cast<std::size_t>(h.num_pairs), 0);
  for (int c = 0; c < h.num_classes; ++c) {
    for (int p = 0; p < t.n; ++p) {
      for (int q = 0; q <= p; ++q) {
        if (t.cls(p, q) == c) h.cls_pair.push_back(pair_of(p, q));
      }
    }
    const auto first = h.cls_ptr[static_cast<std::size_t>(c)];
    h.cls_ptr[static_cast<std::size_t>(c) + 1] = static_cast<std::int32_t>(h.cls_pair.size());
    for (std::int32_t m = first; m < h.cls_ptr[static_cast<std::size_t>(c) + 1]; ++m) {
      h.pair_slot[static_cast<std::size_t>(h.cls_pair[static_cast<std::size_t>(m)])] = m - first;
    }
    h.max_class_pairs = std::max(h.max_class_pairs, h.cls_ptr[static_cast<std::size_t>(c) + 1] - first);
  }
  std::vector<std::pair<int, int>> orbitals_of(static_cast<std::size_t>(h.num_pairs));
  for (int p = 0; p < t.n; ++p) {
    for (int q = 0; q <= p; ++q) orbitals_of[static_cast<std::size_t>(pair_of(p, q))] = {p, q};
  }
  const std::size_t tiles = (static_cast<std::size_t>(h.nb) + 7) / 8;
  h.table_stride = static_cast<int>(8 * tiles);
  if (table == FactoredTable::none) return;
  h.table.assign(h.cls_pair.size() * 8 * tiles, -1);
  // a thread a pair: its row of the table
  Kokkos::parallel_for(
      "cispmv::ci::factored::pair_table", Kokkos::RangePolicy<Kokkos::DefaultHostExecutionSpace>(0, h.cls_pair.size()),
      [&](const std::size_t m) {
        const auto [r, u] = orbitals_of[static_cast<std::size_t>(h.cls_pair[m])];
        for (int q = 0; q < h.nb; ++q) {
          const std::uint64_t s = t.beta_string(q);
          std::int32_t e = -1;
          if (r == u) {
            if ((s >> r) & 1u) e = q << 1;
          } else if (((s >> r) & 1u) != ((s >> u) & 1u)) {
            const int from = (s >> r) & 1u ? r : u, to = from == r ? u : r;
            const auto it = t.b_ids.find(s ^ bit(from) ^ bit(to));
            if (it != t.b_ids.end()) {
              e = t.q_of[static_cast<std::size_t>(it->second)] << 1 | (excitation_sign(s, from, to) < 0 ? 1 : 0);
            }
          }
          h.table[m * static_cast<std::size_t>(h.table_stride) + static_cast<std::size_t>(q)] = e;
        }
      });
}

// (pq|rs) as a num_pairs x num_pairs square, then a row per alpha string: the diagonal replacement's sum over its
// occupied p of (pp|rs), p ascending.
void integral_rows(const Tables& t, FactoredHost& h) {
  const auto np = static_cast<std::size_t>(h.num_pairs);
  h.eri.assign((np + static_cast<std::size_t>(h.na)) * np, 0.0);
  const std::vector<double>& two = t.integrals.two_electron;
  for (std::size_t pq = 0; pq < np; ++pq) {
    for (std::size_t rs = 0; rs < np; ++rs) {
      h.eri[pq * np + rs] = two[pq >= rs ? pq * (pq + 1) / 2 + rs : rs * (rs + 1) / 2 + pq];
    }
  }
  for (std::size_t a = 0; a < static_cast<std::size_t>(h.na); ++a) {
    double* const row = h.eri.data() + (np + a) * np;
    for (std::uint64_t s = t.space.alpha.strings[a]; s != 0; s &= s - 1) {
      const auto pp = static_cast<std::size_t>(lowest_bit(s));
      for (std::size_t rs = 0; rs < np; ++rs) row[rs] += h.eri[(pp * (pp + 1) / 2 + pp) * np + rs];
    }
  }
}

}  // namespace

FactoredHost factor_hamiltonian(const FciDump& integrals, const DeterminantSpace& space, const FactoredOptions& options,
                                const int batch, const FactoredTable table, const bool same_spin_gemm) {
  check_space(integrals, space);
  Tables t(integrals, space, options);
  t.n = space.num_orbitals;
  // (ORBSYM all one irrep, or integrals that break it: every pair visited)
  t.symmetry = std::any_of(space.orbsym.begin(), space.orbsym.end(), [](int g) { return g != 1; }) &&
               options.symmetry_noise >= 0 && integrals_obey_symmetry(integrals, space.orbsym, options.symmetry_noise);
  t.a_ids = ids_of(space.alpha);
  t.b_ids = ids_of(space.beta);

  FactoredHost h;
  h.num_orbitals = t.n;
  h.num_pairs = t.n * (t.n + 1) / 2;
  h.rows = static_cast<std::int64_t>(space.size());
  h.na = static_cast<int>(space.alpha.size());
  h.nb = static_cast<int>(space.beta.size());
  h.nkb = space.beta.max_rank() + 1;
  h.symmetry = t.symmetry;
  h.batch = batch;
  h.num_classes = t.symmetry ? 8 : 1;
  order_beta_strings(t, h);
  alpha_ranges(t, h);
  if (options.singlet) singlet_tables(t, h);
  same_spin_lists(t, h);
  beta_replacements(t, h);
  alpha_batches(t, h);
  pair_table(t, h, table);
  integral_rows(t, h);
  if (same_spin_gemm) {
    std::vector<std::uint8_t> a_class(static_cast<std::size_t>(h.na), 0), q_class(static_cast<std::size_t>(h.nb), 0);
    for (std::size_t a = 0; t.symmetry && a < a_class.size(); ++a) a_class[a] = space.alpha.irrep[a];
    for (std::size_t q = 0; t.symmetry && q < q_class.size(); ++q) {
      q_class[q] = space.beta.irrep[static_cast<std::size_t>(t.id_of[q])];
    }
    same_spin_products(h, a_class, q_class);
  }
  return h;
}

void factored_units(FactoredHost& h, const int max_batches, const int max_pairs) {
  h.mu_ptr.assign(1, 0);
  h.mu_batch.clear();
  h.mu_ksteps.clear();
  h.mu_pair.clear();
  h.mu_pairs.clear();
  h.mu_lo.clear();
  h.mu_len.clear();
  h.max_unit_pairs = h.max_unit_batches = 0;
  for (int ia = 0; ia < h.na; ++ia) {
    const auto first = static_cast<std::size_t>(h.ab_ptr[static_cast<std::size_t>(ia)]);
    const auto last = static_cast<std::size_t>(h.ab_ptr[static_cast<std::size_t>(ia) + 1]);
    for (std::size_t b = first; b < last;) {
      const int c = h.ab_class[b];
      std::size_t run = b;
      while (run < last && h.ab_class[run] == c && run - b < static_cast<std::size_t>(max_batches)) ++run;
      int lo = std::numeric_limits<int>::max(), hi = 0;
      for (std::size_t k = b; k < run; ++k) {
        if (h.ab_len[k] > 0) {
          lo = std::min(lo, h.ab_lo[k]);
          hi = std::max(hi, h.ab_lo[k] + h.ab_len[k]);
        }
      }
      const int pairs = h.cls_ptr[static_cast<std::size_t>(c) + 1] - h.cls_ptr[static_cast<std::size_t>(c)];
      for (int m0 = 0; hi > 0 && m0 < pairs; m0 += max_pairs) {
        const int mp = std::min(max_pairs, pairs - m0);
        h.mu_batch.push_back(static_cast<std::int64_t>(b));
        h.mu_ksteps.push_back(static_cast<std::int32_t>(run - b));
        h.mu_pair.push_back(m0);
        h.mu_pairs.push_back(mp);
        h.mu_lo.push_back(lo);
        h.mu_len.push_back(hi - lo);
        h.max_unit_pairs = std::max(h.max_unit_pairs, mp);
        h.max_unit_batches = std::max(h.max_unit_batches, static_cast<int>(run - b));
      }
      b = run;
    }
    h.mu_ptr.push_back(static_cast<std::int64_t>(h.mu_batch.size()));
  }
}

}  // namespace cispmv::impl
