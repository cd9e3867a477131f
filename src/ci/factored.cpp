// The factored CI Hamiltonian's string lists, built on the host (see ci/factored.hpp).
#include "cispmv/ci/factored.hpp"

#include "cispmv/ci/hamiltonian.hpp"
#include "cispmv/ci/slater_condon.hpp"
#include "cispmv/impl/bits.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
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

}  // namespace

FactoredHost factor_hamiltonian(const FciDump& integrals, const DeterminantSpace& space, const FactoredOptions& options,
                                const int batch, const FactoredTable table, const bool same_spin_gemm) {
  const char* who = "cispmv::ci::FactoredHamiltonian";
  const int n = space.num_orbitals;
  if (integrals.num_orbitals != n) {
    throw std::invalid_argument(std::string(who) + ": the integrals have " + std::to_string(integrals.num_orbitals) +
                                " orbitals, the space " + std::to_string(n));
  }
  if (n > max_orbitals) {
    throw std::invalid_argument(std::string(who) + ": more than " + std::to_string(max_orbitals) + " orbitals");
  }
  if (space.beta.size() >= (std::size_t{1} << (32 - factored_position_shift))) {
    throw std::invalid_argument(std::string(who) + ": " + std::to_string(space.beta.size()) +
                                " beta strings; the packed lists address at most " +
                                std::to_string((std::size_t{1} << (32 - factored_position_shift)) - 1));
  }
  if (space.size() > static_cast<std::size_t>(std::numeric_limits<int>::max())) {
    throw std::invalid_argument(std::string(who) + ": " + std::to_string(space.size()) +
                                " determinants; at most 2^31 - 1");
  }
  const SlaterCondon sc(integrals);
  const bool restricted = space.irrep != 0;
  // (ORBSYM all one irrep, or integrals that break it: every pair visited)
  const bool symmetry = std::any_of(space.orbsym.begin(), space.orbsym.end(), [](int g) { return g != 1; }) &&
                        options.symmetry_noise >= 0 &&
                        integrals_obey_symmetry(integrals, space.orbsym, options.symmetry_noise);
  auto orb_irrep = [&](int p) { return static_cast<std::uint32_t>(space.orbsym[static_cast<std::size_t>(p)] - 1); };
  auto cls = [&](int p, int q) { return symmetry ? static_cast<int>(orb_irrep(p) ^ orb_irrep(q)) : 0; };
  const double tol = options.drop_tolerance;

  FactoredHost h;
  h.num_orbitals = n;
  h.num_pairs = n * (n + 1) / 2;
  h.rows = static_cast<std::int64_t>(space.size());
  h.na = static_cast<int>(space.alpha.size());
  h.nb = static_cast<int>(space.beta.size());
  h.nkb = space.beta.max_rank() + 1;
  h.symmetry = symmetry;
  h.batch = batch;
  h.num_classes = symmetry ? 8 : 1;

  // kernel order of the beta strings: (irrep in a space of one irrep, rank, id)
  auto key = [&](std::int32_t id) {
    const auto i = static_cast<std::size_t>(id);
    return std::make_tuple(restricted ? static_cast<int>(space.beta.irrep[i]) : 0, static_cast<int>(space.beta.rank[i]),
                           id);
  };
  std::vector<std::int32_t> id_of(static_cast<std::size_t>(h.nb));
  std::iota(id_of.begin(), id_of.end(), 0);
  std::sort(id_of.begin(), id_of.end(), [&](std::int32_t u, std::int32_t v) { return key(u) < key(v); });
  std::vector<std::int32_t> q_of(static_cast<std::size_t>(h.nb));
  for (int q = 0; q < h.nb; ++q) q_of[static_cast<std::size_t>(id_of[static_cast<std::size_t>(q)])] = q;
  for (int q = 0; q < h.nb; ++q) {
    const auto id = static_cast<std::size_t>(id_of[static_cast<std::size_t>(q)]);
    h.q_rank.push_back(space.beta.rank[id]);
    h.q_position.push_back(space.beta.position[id]);
  }
  // the blocks of equal key but id (irrep in a space of one irrep, rank): their positions are consecutive
  h.q_block_end.resize(static_cast<std::size_t>(h.nb));
  for (int q = h.nb - 1; q >= 0; --q) {
    const auto u = static_cast<std::size_t>(q);
    const bool last = q + 1 == h.nb || std::get<0>(key(id_of[u])) != std::get<0>(key(id_of[u + 1])) ||
                      std::get<1>(key(id_of[u])) != std::get<1>(key(id_of[u + 1]));
    h.q_block_end[u] = last ? q + 1 : h.q_block_end[u + 1];
    if (!last && h.q_position[u + 1] != h.q_position[u] + 1) {
      throw std::logic_error(std::string(who) + ": the positions of a block of beta strings are not consecutive");
    }
  }

  // per alpha string: the range of q it pairs with, and where its determinants lie
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
    const int irrep = restricted ? static_cast<int>((space.irrep - 1) ^ space.alpha.irrep[a]) : 0;
    const int max_rank = std::min(space.beta.max_rank(), space.max_level - ka);
    auto first_at = [&](int rank) {
      return static_cast<int>(std::lower_bound(id_of.begin(), id_of.end(), std::make_tuple(irrep, rank, 0),
                                               [&](std::int32_t u, const auto& k) { return key(u) < k; }) -
                              id_of.begin());
    };
    h.a_lo[a] = first_at(0);
    h.a_hi[a] = max_rank < 0 ? h.a_lo[a] : first_at(max_rank + 1);
    h.max_range = std::max(h.max_range, h.a_hi[a] - h.a_lo[a]);
    covered += h.a_hi[a] - h.a_lo[a];
    for (int q : {h.a_lo[a], h.a_hi[a] - 1}) {  // the ends of the range against the space's own addressing
      if (q < h.a_lo[a] || q >= h.a_hi[a]) continue;
      const auto qi = static_cast<std::size_t>(q);
      const std::int64_t want = space.index_of(ja, id_of[qi]);
      if (want < 0 || want != h.a_rowbase[a * nkb + h.q_rank[qi]] + h.q_position[qi]) {
        throw std::logic_error(std::string(who) + ": the beta range of alpha string " + std::to_string(ja) +
                               " disagrees with the space's addressing");
      }
    }
  }
  if (covered != h.rows) {
    throw std::logic_error(std::string(who) + ": the alpha strings' beta ranges cover " + std::to_string(covered) +
                           " determinants of " + std::to_string(h.rows));
  }

  // same-spin string Hamiltonian: row s of H_alpha (or H_beta), as (target id, value)
  auto same_spin_row = [&](const SpinStrings& S, const std::unordered_map<std::uint64_t, std::int32_t>& ids,
                           std::size_t id, std::vector<std::pair<std::int32_t, double>>& out) {
    out.clear();
    const std::uint64_t s = S.strings[id];
    out.emplace_back(static_cast<std::int32_t>(id), sc.diagonal({s, 0}));
    int occ[64], emp[64], no = 0, ne = 0;
    for (int p = 0; p < n; ++p) ((s >> p) & 1u ? occ[no++] : emp[ne++]) = p;
    auto keep = [&](std::uint64_t t, double v) {
      const auto it = ids.find(t);
      if (it == ids.end() || !(std::abs(v) >= tol)) return;
      if (symmetry && S.irrep[static_cast<std::size_t>(it->second)] != S.irrep[id]) return;
      out.emplace_back(it->second, v);
    };
    for (int x = 0; x < no; ++x) {
      for (int y = 0; y < ne; ++y) keep(s ^ bit(occ[x]) ^ bit(emp[y]), sc.single(s, 0, occ[x], emp[y]));
    }
    for (int x = 0; x < no; ++x) {
      for (int x2 = x + 1; x2 < no; ++x2) {
        for (int y = 0; y < ne; ++y) {
          for (int y2 = y + 1; y2 < ne; ++y2) {
            const std::uint64_t t = s ^ bit(occ[x]) ^ bit(occ[x2]) ^ bit(emp[y]) ^ bit(emp[y2]);
            if (ids.count(t) == 0) continue;
            keep(t, sc.double_same_spin(s, occ[x], occ[x2], emp[y], emp[y2]));
          }
        }
      }
    }
  };
  const auto a_ids = ids_of(space.alpha), b_ids = ids_of(space.beta);
  std::vector<std::pair<std::int32_t, double>> row;
  h.aa_ptr.push_back(0);
  for (std::size_t a = 0; a < space.alpha.size(); ++a) {
    same_spin_row(space.alpha, a_ids, a, row);
    std::sort(row.begin(), row.end());
    for (const auto& [col, v] : row) {
      h.aa_col.push_back(col);
      h.aa_val.push_back(v);
    }
    h.aa_ptr.push_back(static_cast<std::int64_t>(h.aa_col.size()));
  }
  {
    std::vector<std::vector<std::int32_t>> cols(static_cast<std::size_t>(h.nb));
    std::vector<std::vector<double>> vals(static_cast<std::size_t>(h.nb));
    for (int q = 0; q < h.nb; ++q) {
      same_spin_row(space.beta, b_ids, static_cast<std::size_t>(id_of[static_cast<std::size_t>(q)]), row);
      for (auto& e : row) e.first = q_of[static_cast<std::size_t>(e.first)];
      std::sort(row.begin(), row.end());
      for (const auto& [col, v] : row) {
        cols[static_cast<std::size_t>(q)].push_back(col);
        vals[static_cast<std::size_t>(q)].push_back(v);
      }
    }
    std::vector<std::int64_t> ptr2;
    std::vector<std::int32_t> count2;
    slice_lists(cols, std::int32_t{0}, h.bb_ptr, h.bb_count, h.bb_col);
    slice_lists(vals, 0.0, ptr2, count2, h.bb_val);
  }

  // beta replacements per class of their pair: E_rr of each occupied r (class 0), then singles
  {
    const auto npos = static_cast<std::uint32_t>(factored_position_shift);
    std::vector<std::vector<std::vector<std::uint32_t>>> lists(
        static_cast<std::size_t>(h.num_classes),
        std::vector<std::vector<std::uint32_t>>(static_cast<std::size_t>(h.nb)));
    for (int q = 0; q < h.nb; ++q) {
      const std::uint64_t s = space.beta.strings[static_cast<std::size_t>(id_of[static_cast<std::size_t>(q)])];
      const auto uq = static_cast<std::uint32_t>(q);
      for (int r = 0; r < n; ++r) {
        if ((s >> r) & 1u)
          lists[0][static_cast<std::size_t>(q)].push_back(uq << npos | static_cast<std::uint32_t>(pair_of(r, r)));
      }
      for_each_single(s, n, b_ids, [&](std::int32_t id, int r, int b) {
        const auto t = static_cast<std::uint32_t>(q_of[static_cast<std::size_t>(id)]);
        const std::uint32_t negative = excitation_sign(s, r, b) < 0 ? 1u : 0u;
        lists[static_cast<std::size_t>(cls(r, b))][static_cast<std::size_t>(q)].push_back(
            t << npos | negative << factored_pair_bits | static_cast<std::uint32_t>(pair_of(r, b)));
      });
    }
    const std::size_t slices = (static_cast<std::size_t>(h.nb) + 31) / 32;
    for (int c = 0; c < h.num_classes; ++c) {
      std::vector<std::int64_t> ptr;
      std::vector<std::int32_t> count;
      slice_lists(lists[static_cast<std::size_t>(c)], std::uint32_t{0}, ptr, count, h.be_data);
      if (ptr.size() != slices) throw std::logic_error(std::string(who) + ": slices of the beta lists");
      h.be_ptr.insert(h.be_ptr.end(), ptr.begin(), ptr.end());
      h.be_count.insert(h.be_count.end(), count.begin(), count.end());
    }
  }

  // alpha replacements per alpha string, in batches of one class: the diagonal, then singles
  {
    // prefix sums over q of each class's list lengths: the terms a batch costs on a range of q
    std::vector<std::int64_t> prefix(static_cast<std::size_t>(h.num_classes) * (h.nb + 1), 0);
    for (int c = 0; c < h.num_classes; ++c) {
      for (int q = 0; q < h.nb; ++q) {
        const std::size_t at = static_cast<std::size_t>(c) * (h.nb + 1) + q;
        prefix[at + 1] = prefix[at] + h.be_count[static_cast<std::size_t>(c) * h.nb + q];
      }
    }
    h.ab_ptr.push_back(0);
    struct Rep {
      std::int32_t ja, pair;
      double sign;
    };
    for (int ia = 0; ia < h.na; ++ia) {
      const std::uint64_t s = space.alpha.strings[static_cast<std::size_t>(ia)];
      std::vector<std::vector<Rep>> by_class(static_cast<std::size_t>(h.num_classes));
      by_class[0].push_back({ia, h.num_pairs, 1.0});
      for_each_single(s, n, a_ids, [&](std::int32_t id, int i, int a) {
        by_class[static_cast<std::size_t>(cls(i, a))].push_back({id, pair_of(i, a), excitation_sign(s, i, a)});
      });
      const auto ua = static_cast<std::size_t>(ia);
      for (int c = 0; c < h.num_classes; ++c) {
        const auto& reps = by_class[static_cast<std::size_t>(c)];
        const auto per = static_cast<std::size_t>(batch);
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

  // pairs by class, and per pair and source position q the target of the pair's replacement in q's
  // string (the scatter kernel's table; E_rr of an occupied r keeps the string)
  {
    h.cls_ptr.assign(static_cast<std::size_t>(h.num_classes) + 1, 0);
    h.pair_slot.assign(static_cast<std::size_t>(h.num_pairs), 0);
    for (int c = 0; c < h.num_classes; ++c) {
      for (int p = 0; p < n; ++p) {
        for (int q = 0; q <= p; ++q) {
          if (cls(p, q) == c) h.cls_pair.push_back(pair_of(p, q));
        }
      }
      h.cls_ptr[static_cast<std::size_t>(c) + 1] = static_cast<std::int32_t>(h.cls_pair.size());
      for (std::int32_t m = h.cls_ptr[static_cast<std::size_t>(c)]; m < h.cls_ptr[static_cast<std::size_t>(c) + 1];
           ++m) {
        h.pair_slot[static_cast<std::size_t>(h.cls_pair[static_cast<std::size_t>(m)])] =
            m - h.cls_ptr[static_cast<std::size_t>(c)];
      }
      h.max_class_pairs = std::max(h.max_class_pairs,
                                   h.cls_ptr[static_cast<std::size_t>(c) + 1] - h.cls_ptr[static_cast<std::size_t>(c)]);
    }
    std::vector<std::pair<int, int>> orbitals_of(static_cast<std::size_t>(h.num_pairs));
    for (int p = 0; p < n; ++p) {
      for (int q = 0; q <= p; ++q) orbitals_of[static_cast<std::size_t>(pair_of(p, q))] = {p, q};
    }
    const std::size_t tiles = (static_cast<std::size_t>(h.nb) + 7) / 8;
    h.table_tiles = table == FactoredTable::tiles;
    h.table_stride = static_cast<int>(h.table_tiles ? 8 * h.cls_pair.size() : 8 * tiles);
    if (table != FactoredTable::none) h.table.assign(h.cls_pair.size() * 8 * tiles, -1);
    for (std::size_t m = 0; table != FactoredTable::none && m < h.cls_pair.size(); ++m) {
      const auto [r, t] = orbitals_of[static_cast<std::size_t>(h.cls_pair[m])];
      for (int q = 0; q < h.nb; ++q) {
        const std::uint64_t s = space.beta.strings[static_cast<std::size_t>(id_of[static_cast<std::size_t>(q)])];
        std::int32_t e = -1;
        if (r == t) {
          if ((s >> r) & 1u) e = q << 1;
        } else if (((s >> r) & 1u) != ((s >> t) & 1u)) {
          const int from = (s >> r) & 1u ? r : t, to = from == r ? t : r;
          const auto it = b_ids.find(s ^ bit(from) ^ bit(to));
          if (it != b_ids.end()) {
            e = q_of[static_cast<std::size_t>(it->second)] << 1 | (excitation_sign(s, from, to) < 0 ? 1 : 0);
          }
        }
        h.table[static_cast<std::size_t>(
            factored_table_at(h.table_tiles, h.table_stride, static_cast<std::int64_t>(m), q))] = e;
      }
    }
  }

  const auto np = static_cast<std::size_t>(h.num_pairs);
  h.eri.assign((np + static_cast<std::size_t>(h.na)) * np, 0.0);
  for (std::size_t pq = 0; pq < np; ++pq) {
    for (std::size_t rs = 0; rs < np; ++rs) {
      h.eri[pq * np + rs] = integrals.two_electron[pq >= rs ? pq * (pq + 1) / 2 + rs : rs * (rs + 1) / 2 + pq];
    }
  }
  // the diagonal replacement's rows, one an alpha string: the sum over its occupied p of (pp|rs), p ascending
  for (std::size_t a = 0; a < static_cast<std::size_t>(h.na); ++a) {
    double* const row = h.eri.data() + (np + a) * np;
    for (std::uint64_t s = space.alpha.strings[a]; s != 0; s &= s - 1) {
      const auto pp = static_cast<std::size_t>(lowest_bit(s));
      for (std::size_t rs = 0; rs < np; ++rs) row[rs] += h.eri[(pp * (pp + 1) / 2 + pp) * np + rs];
    }
  }
  if (same_spin_gemm) {
    std::vector<std::uint8_t> a_class(static_cast<std::size_t>(h.na), 0), q_class(static_cast<std::size_t>(h.nb), 0);
    for (std::size_t a = 0; symmetry && a < a_class.size(); ++a) a_class[a] = space.alpha.irrep[a];
    for (std::size_t q = 0; symmetry && q < q_class.size(); ++q) {
      q_class[q] = space.beta.irrep[static_cast<std::size_t>(id_of[q])];
    }
    same_spin_products(h, a_class, q_class);
  }
  return h;
}

void same_spin_products(FactoredHost& h, const std::vector<std::uint8_t>& a_class,
                        const std::vector<std::uint8_t>& q_class) {
  GatheredGemmHost& g = h.gemm;
  g = GatheredGemmHost{};
  h.gemm_built = false;
  h.same_spin_terms = 0.0;
  const int nkb = h.nkb;
  auto rowbase = [&](std::int32_t a, int kb) {
    const std::int64_t r = h.a_rowbase[static_cast<std::size_t>(a) * nkb + static_cast<std::size_t>(kb)];
    if (r < 0) throw std::logic_error("cispmv::ci::FactoredHamiltonian: a string pair of a block is off the space");
    return r;
  };
  // dense blocks, one per set of strings (sorted ids of one spin): rows and columns in the set's order
  std::map<std::pair<int, std::vector<std::int32_t>>, std::pair<std::int64_t, double>> dense_of;  // offset, nonzeros
  double nonzeros = 0.0;  // of the last block built or found
  auto too_large = [&](std::size_t more) {
    if (static_cast<double>(g.mat.size() + more) * 8.0 <= factored_gemm_max_bytes) return false;
    h.gemm_why = "its dense blocks would take more than " +
                 std::to_string(static_cast<long long>(factored_gemm_max_bytes / (1024 * 1024))) + " MiB";
    return true;
  };
  // f(row, column, value) for each stored entry of H_alpha's row of alpha id a / H_beta's row of position q
  auto alpha_row = [&](std::int32_t a, auto&& f) {
    for (std::int64_t e = h.aa_ptr[static_cast<std::size_t>(a)]; e < h.aa_ptr[static_cast<std::size_t>(a) + 1]; ++e) {
      f(h.aa_col[static_cast<std::size_t>(e)], h.aa_val[static_cast<std::size_t>(e)]);
    }
  };
  auto beta_row = [&](std::int32_t q, auto&& f) {
    const std::int64_t first = h.bb_ptr[static_cast<std::size_t>(q) / 32];
    for (int k = 0; k < h.bb_count[static_cast<std::size_t>(q)]; ++k) {
      const auto at = static_cast<std::size_t>(first + 32 * static_cast<std::int64_t>(k) + (q & 31));
      f(h.bb_col[at], h.bb_val[at]);
    }
  };
  auto dense = [&](int spin, const std::vector<std::int32_t>& set, auto&& row_of) -> std::int64_t {
    const auto key = std::make_pair(spin, set);
    if (const auto it = dense_of.find(key); it != dense_of.end()) {
      nonzeros = it->second.second;
      return it->second.first;
    }
    const std::size_t n = set.size();
    if (too_large(n * n)) return -1;
    const auto at = static_cast<std::int64_t>(g.mat.size());
    g.mat.resize(g.mat.size() + n * n, 0.0);
    std::unordered_map<std::int32_t, std::size_t> slot;
    for (std::size_t i = 0; i < n; ++i) slot.emplace(set[i], i);
    nonzeros = 0.0;
    for (std::size_t i = 0; i < n; ++i) {
      row_of(set[i], [&](std::int32_t col, double v) {
        const auto it = slot.find(col);
        if (it == slot.end()) return;
        g.mat[static_cast<std::size_t>(at) + i * n + it->second] = v;
        nonzeros += 1.0;
      });
    }
    dense_of.emplace(key, std::make_pair(at, nonzeros));
    return at;
  };
  auto iota_from = [](std::int64_t first, int count) {
    std::vector<std::int64_t> v(static_cast<std::size_t>(count));
    std::iota(v.begin(), v.end(), first);
    return v;
  };

  // H_alpha (x) 1: each block of beta positions (one rank, and irrep in a space of one irrep) against the alpha
  // strings that pair with it, by class: y(a, q) += sum_a' H_alpha(a, a') x(a', q)
  for (int q0 = 0; q0 < h.nb;) {
    const int q1 = h.q_block_end[static_cast<std::size_t>(q0)], kb = h.q_rank[static_cast<std::size_t>(q0)];
    std::map<int, std::vector<std::int32_t>> sets;
    for (std::int32_t a = 0; a < h.na; ++a) {
      if (h.a_lo[static_cast<std::size_t>(a)] <= q0 && q0 < h.a_hi[static_cast<std::size_t>(a)]) {
        sets[a_class[static_cast<std::size_t>(a)]].push_back(a);
      }
    }
    const std::int64_t cols = g.add_index(iota_from(h.q_position[static_cast<std::size_t>(q0)], q1 - q0));
    for (const auto& [c, set] : sets) {
      const std::int64_t at = dense(0, set, alpha_row);
      if (at < 0) return;
      const auto m = static_cast<int>(set.size());
      std::vector<std::int64_t> rows;
      for (const std::int32_t a : set) rows.push_back(rowbase(a, kb));
      const std::int64_t ru = g.add_index(rows);
      g.add_group(m, q1 - q0, ru, cols);
      g.add_segment(at, m, m, ru, cols, false);
      h.same_spin_terms += nonzeros * (q1 - q0);
    }
    q0 = q1;
  }
  g.end_launch();

  // 1 (x) H_beta: the alpha strings of one beta range against the dense blocks of H_beta over the range's positions
  // of each class: y(a, q) += sum_q' H_beta(q, q') x(a, q'), in groups of the output's blocks (one rank), a segment
  // per block of q' (the rows of x of another rank lie elsewhere)
  std::map<std::pair<int, int>, std::vector<std::int32_t>> by_range;
  for (std::int32_t a = 0; a < h.na; ++a) {
    by_range[{h.a_lo[static_cast<std::size_t>(a)], h.a_hi[static_cast<std::size_t>(a)]}].push_back(a);
  }
  for (const auto& [range, alphas] : by_range) {
    const auto [lo, hi] = range;
    std::vector<std::pair<int, int>> blocks;  // [q0, q1) of one rank
    for (int q0 = lo; q0 < hi; q0 = h.q_block_end[static_cast<std::size_t>(q0)]) {
      blocks.emplace_back(q0, std::min(hi, h.q_block_end[static_cast<std::size_t>(q0)]));
    }
    std::map<int, std::int64_t> rows_at;  // per rank: the alpha strings' row bases
    for (const auto& [q0, q1] : blocks) {
      const int kb = h.q_rank[static_cast<std::size_t>(q0)];
      if (rows_at.count(kb) != 0) continue;
      std::vector<std::int64_t> rows;
      for (const std::int32_t a : alphas) rows.push_back(rowbase(a, kb));
      rows_at[kb] = g.add_index(rows);
    }
    std::map<int, std::vector<std::int32_t>> sets;  // per class: the range's positions
    for (int q = lo; q < hi; ++q) sets[q_class[static_cast<std::size_t>(q)]].push_back(q);
    for (const auto& [c, set] : sets) {
      const std::int64_t at = dense(1, set, beta_row);
      if (at < 0) return;
      const auto ld = static_cast<int>(set.size());
      // the set's positions in each block: a run of the set (both in order of q)
      std::vector<std::pair<int, int>> runs;
      std::vector<std::int64_t> offsets;
      for (const auto& [q0, q1] : blocks) {
        const auto first = std::lower_bound(set.begin(), set.end(), q0) - set.begin();
        const auto last = std::lower_bound(set.begin(), set.end(), q1) - set.begin();
        runs.emplace_back(static_cast<int>(first), static_cast<int>(last));
        std::vector<std::int64_t> pos;
        for (auto i = first; i < last; ++i) {
          pos.push_back(h.q_position[static_cast<std::size_t>(set[static_cast<std::size_t>(i)])]);
        }
        offsets.push_back(g.add_index(pos));
      }
      for (std::size_t bo = 0; bo < blocks.size(); ++bo) {
        const auto [r0, r1] = runs[bo];
        if (r0 == r1) continue;
        const int ko = h.q_rank[static_cast<std::size_t>(blocks[bo].first)];
        g.add_group(r1 - r0, static_cast<int>(alphas.size()), offsets[bo], rows_at[ko]);
        for (std::size_t bi = 0; bi < blocks.size(); ++bi) {
          const auto [c0, c1] = runs[bi];
          double used = 0.0;  // the sub-block's nonzeros (none: ranks more than 2 apart)
          for (int i = r0; i < r1; ++i) {
            for (int k = c0; k < c1; ++k) {
              used += g.mat[static_cast<std::size_t>(at) + static_cast<std::size_t>(i) * ld + k] != 0.0 ? 1.0 : 0.0;
            }
          }
          if (used == 0.0) continue;
          const int ki = h.q_rank[static_cast<std::size_t>(blocks[bi].first)];
          g.add_segment(at + static_cast<std::int64_t>(r0) * ld + c0, ld, c1 - c0, offsets[bi], rows_at[ki], true);
          h.same_spin_terms += used * static_cast<double>(alphas.size());
        }
      }
    }
  }
  g.end_launch();
  h.gemm_built = true;
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

namespace cispmv::ci {

std::vector<double> hamiltonian_diagonal(const FciDump& integrals, const DeterminantSpace& space) {
  if (integrals.num_orbitals != space.num_orbitals) {
    throw std::invalid_argument("cispmv::ci::hamiltonian_diagonal: the integrals have " +
                                std::to_string(integrals.num_orbitals) + " orbitals, the space " +
                                std::to_string(space.num_orbitals));
  }
  const SlaterCondon sc(integrals);
  std::vector<double> d(space.size());
  Kokkos::parallel_for("cispmv::ci::hamiltonian_diagonal",
                       Kokkos::RangePolicy<Kokkos::DefaultHostExecutionSpace, Kokkos::IndexType<std::int64_t>>(
                           0, static_cast<std::int64_t>(space.size())),
                       [&](const std::int64_t i) {
                         d[static_cast<std::size_t>(i)] = sc.diagonal(space.determinants[static_cast<std::size_t>(i)]);
                       });
  return d;
}

}  // namespace cispmv::ci
