// The CI Hamiltonian by the Slater-Condon rules, built string by string on any Kokkos backend.
#include "cispmv/ci/hamiltonian.hpp"
#include "cispmv/ci/slater_condon.hpp"
#include "cispmv/impl/bits.hpp"
#include "cispmv/impl/convert_helpers.hpp"
#include "cispmv/impl/profiling.hpp"

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace cispmv::ci {

namespace {

inline std::uint64_t bit(int p) { return std::uint64_t{1} << p; }

// Replacement lists of one spin on the host: for every string id, its single (or same-spin double)
// excitations to strings of the space, sorted by target id, with the boundaries of each target rank.
// Entries of string id with target rank rank(id) + d - 2 (d = 0..4) and target irrep h (0..7) are
// [rank_ptr[id * 41 + d * 8 + h], rank_ptr[id * 41 + d * 8 + h + 1]); without grouping by irrep all of
// a rank is under h = 0.
constexpr std::size_t list_stride = 41;

struct HostLists {
  std::vector<std::size_t> rank_ptr;  // list_stride boundaries per string, see above
  std::vector<std::int32_t> target;
  std::vector<std::int32_t> pair;  // singles: packed pair index of (i, a)
  std::vector<double> value;       // singles: sign * (h(i,a) + sum_{k in same} [(ia|kk) - (ik|ka)]); doubles: element
  std::vector<double> sign;        // singles: the fermionic sign
};

HostLists make_lists(const SpinStrings& S, const std::vector<std::uint8_t>& irrep, int norb, const SlaterCondon& sc,
                     bool doubles, bool by_irrep) {
  auto group = [&](std::int32_t t) { return by_irrep ? irrep[static_cast<std::size_t>(t)] : std::uint8_t{0}; };
  // id of a string by binary search over the strings sorted by value (host only, once per string)
  std::vector<std::pair<std::uint64_t, std::int32_t>> sorted(S.size());
  for (std::size_t id = 0; id < S.size(); ++id) sorted[id] = {S.strings[id], static_cast<std::int32_t>(id)};
  std::sort(sorted.begin(), sorted.end());
  auto find = [&](std::uint64_t s) -> std::int32_t {
    const auto it = std::lower_bound(sorted.begin(), sorted.end(), std::make_pair(s, std::int32_t{-1}));
    return it != sorted.end() && it->first == s ? it->second : -1;
  };
  struct Entry {
    std::int32_t target;
    std::int32_t pair;
    double value;
    double sign;
  };
  const std::int64_t n = static_cast<std::int64_t>(S.size());
  std::vector<std::vector<Entry>> per(S.size());
  Kokkos::parallel_for(
      "cispmv::build_hamiltonian::lists",
      Kokkos::RangePolicy<Kokkos::DefaultHostExecutionSpace, Kokkos::Schedule<Kokkos::Dynamic>,
                          Kokkos::IndexType<std::int64_t>>(0, n),
      [&](const std::int64_t id) {
        const std::uint64_t s = S.strings[static_cast<std::size_t>(id)];
        std::vector<Entry>& out = per[static_cast<std::size_t>(id)];
        int occ[64], emp[64], no = 0, ne = 0;
        for (int p = 0; p < norb; ++p) ((s >> p) & 1u ? occ[no++] : emp[ne++]) = p;
        if (!doubles) {
          for (int x = 0; x < no; ++x) {
            for (int y = 0; y < ne; ++y) {
              const int i = occ[x], a = emp[y];
              const std::int32_t t = find(s ^ bit(i) ^ bit(a));
              if (t < 0) continue;
              out.push_back({t, static_cast<std::int32_t>(FciDump::pair_index(i, a)), sc.single(s, 0, i, a),
                             excitation_sign(s, i, a)});
            }
          }
        } else {
          for (int x = 0; x < no; ++x) {
            for (int x2 = x + 1; x2 < no; ++x2) {
              for (int y = 0; y < ne; ++y) {
                for (int y2 = y + 1; y2 < ne; ++y2) {
                  const int i = occ[x], j = occ[x2], a = emp[y], b = emp[y2];
                  const std::int32_t t = find(s ^ bit(i) ^ bit(j) ^ bit(a) ^ bit(b));
                  if (t < 0) continue;
                  out.push_back({t, 0, sc.double_same_spin(s, i, j, a, b), 1.0});
                }
              }
            }
          }
        }
        std::sort(out.begin(), out.end(), [&](const Entry& u, const Entry& v) {
          const auto ku = std::make_tuple(S.rank[static_cast<std::size_t>(u.target)], group(u.target), u.target);
          const auto kv = std::make_tuple(S.rank[static_cast<std::size_t>(v.target)], group(v.target), v.target);
          return ku < kv;
        });
      });
  HostLists L;
  L.rank_ptr.assign(S.size() * list_stride, 0);
  std::size_t total = 0;
  for (const auto& v : per) total += v.size();
  L.target.reserve(total);
  L.pair.reserve(total);
  L.value.reserve(total);
  L.sign.reserve(total);
  for (std::size_t id = 0; id < S.size(); ++id) {
    const int r = S.rank[id];
    std::size_t k = 0;
    const auto& v = per[id];
    for (int d = 0; d < 5; ++d) {
      for (int h = 0; h < 8; ++h) {
        L.rank_ptr[id * list_stride + static_cast<std::size_t>(d * 8 + h)] = L.target.size();
        while (k < v.size() && S.rank[static_cast<std::size_t>(v[k].target)] == r + d - 2 && group(v[k].target) == h) {
          L.target.push_back(v[k].target);
          L.pair.push_back(v[k].pair);
          L.value.push_back(v[k].value);
          L.sign.push_back(v[k].sign);
          ++k;
        }
      }
    }
    L.rank_ptr[id * list_stride + 40] = L.target.size();
    if (k != v.size()) throw std::logic_error("cispmv::build_hamiltonian: replacement list out of rank order");
  }
  return L;
}

template <class T, class Mem>
Kokkos::View<T*, Mem> to_view(const std::string& label, const std::vector<T>& v) {
  return impl::view_of<T, Mem>("cispmv::ci_hamiltonian::" + label, v);
}

template <class Mem>
struct Lists {
  Kokkos::View<std::size_t*, Mem> rank_ptr;
  Kokkos::View<std::int32_t*, Mem> target, pair;
  Kokkos::View<double*, Mem> value, sign;
  Lists() = default;
  Lists(const std::string& name, const HostLists& L)
      : rank_ptr(to_view<std::size_t, Mem>(name + "_rank_ptr", L.rank_ptr)),
        target(to_view<std::int32_t, Mem>(name + "_target", L.target)),
        pair(to_view<std::int32_t, Mem>(name + "_pair", L.pair)),
        value(to_view<double, Mem>(name + "_value", L.value)),
        sign(to_view<double, Mem>(name + "_sign", L.sign)) {}
  // [begin, end) of the entries of string `id` whose target has rank rank(id) + delta (and irrep `irrep`
  // in a list grouped by irrep; 0 otherwise)
  KOKKOS_INLINE_FUNCTION void range(std::int32_t id, int delta, std::uint32_t irrep, std::size_t& begin,
                                    std::size_t& end) const {
    if (delta < -2 || delta > 2) {
      begin = end = 0;
      return;
    }
    const std::size_t at = static_cast<std::size_t>(id) * list_stride + static_cast<std::size_t>(delta + 2) * 8 + irrep;
    begin = rank_ptr(at);
    end = rank_ptr(at + 1);
  }
};

struct CountTag {};
struct FillTag {};

// One row of the Hamiltonian per call: its columns in increasing order, each with its value.
template <class Exec>
struct HamiltonianRows {
  using Mem = typename Exec::memory_space;
  int norb = 0;
  int max_level = 0;
  std::size_t num_pairs = 0;  // norb (norb + 1) / 2
  int nka = 0, nkb = 0;       // alpha / beta ranks + 1
  double tolerance = 0.0;
  std::int64_t row_offset = 0;  // the chunk's first row, counted from row_base
  std::int64_t row_base = 0;    // the space's row that is row 0 of the matrix being built (a row block)
  // the column window (HamiltonianOptions::columns): a column c is kept when (window_first <= c <
  // window_end) == window_inside, and stored as c - column_shift
  std::int64_t window_first = 0, window_end = std::numeric_limits<std::int64_t>::max(), column_shift = 0;
  bool window_inside = true;
  Kokkos::View<std::uint64_t*, Mem> a_string, b_string;
  Kokkos::View<std::uint8_t*, Mem> a_rank, a_irrep, b_rank, b_irrep;
  Kokkos::View<std::int32_t*, Mem> b_position, alpha_id, beta_id;
  Kokkos::View<std::int64_t*, Mem> block_start, a_block_position;
  Kokkos::View<double*, Mem> a_energy, b_energy, eri;
  Lists<Mem> a_singles, a_doubles, b_singles, b_doubles;
  Kokkos::View<std::size_t*, Mem> row_ptr;
  Kokkos::View<std::size_t*, Mem> kept;  // fill pass: elements kept per row (the first ones of its slot)
  Kokkos::View<int*, Mem> col_idx;
  Kokkos::View<double*, Mem> values;

  KOKKOS_INLINE_FUNCTION static std::size_t pair_index(int p, int q) {
    return p >= q ? static_cast<std::size_t>(p) * (p + 1) / 2 + q : static_cast<std::size_t>(q) * (q + 1) / 2 + p;
  }
  // (pq|rs) from the square pair x pair table: no branch on which pair is larger (the packed index
  // would mispredict on every other element)
  KOKKOS_INLINE_FUNCTION double two(std::size_t pq, std::size_t rs) const { return eri(pq * num_pairs + rs); }
  // sum over the occupied orbitals r of `other` of (pq|rr): the other spin's part of a single
  KOKKOS_INLINE_FUNCTION double coulomb_sum(std::size_t pq, std::uint64_t other) const {
    double v = 0.0;
    for (; other != 0; other &= other - 1) {
      const int r = impl::lowest_bit(other);
      v += two(pq, pair_index(r, r));
    }
    return v;
  }

  template <bool Fill>
  KOKKOS_INLINE_FUNCTION std::size_t row(const std::int64_t r) const {
    const std::int32_t ia = alpha_id(r), ib = beta_id(r);
    const int ra = a_rank(ia), rb = b_rank(ib);
    const int level = ra + rb;
    const std::uint64_t sa = a_string(ia), sb = b_string(ib);
    const std::uint32_t row_irrep = a_irrep(ia) ^ b_irrep(ib);
    std::size_t out = Fill ? row_ptr(r - row_base) : 0;
    std::size_t count = 0;
    const double tolerance2 = tolerance * tolerance;  // |v| >= tol as v^2 >= tol^2: no branch on the sign
    // The counting pass counts the structurally possible elements of the row and computes no value:
    // it is cheap, and the fill pass (which computes every value, drops the ones below the tolerance
    // and returns how many it kept) is the only one that pays for the Slater-Condon rules. `value` is
    // a callable, so the count pass never evaluates it.
    auto emit = [&](std::int64_t col, const auto& value) {
      if ((col >= window_first && col < window_end) != window_inside) return;
      if constexpr (Fill) {
        const double v = value();
        if (v * v >= tolerance2) {
          col_idx(out) = static_cast<int>(col - column_shift);
          values(out) = v;
          ++out;
          ++count;
        }
      } else {
        ++count;
      }
    };
    // diagonal: one-spin energies plus the Coulomb terms between the spins (always stored)
    auto diagonal = [&] {
      double v = a_energy(ia) + b_energy(ib);
      for (std::uint64_t s = sa; s != 0; s &= s - 1) {
        const int p = impl::lowest_bit(s);
        v += coulomb_sum(pair_index(p, p), sb);
      }
      return v;
    };

    const int lo = level - 2 < 0 ? 0 : level - 2;
    const int hi = level + 2 > max_level ? max_level : level + 2;
    for (int lp = lo; lp <= hi; ++lp) {
      for (int rap = lp - (nkb - 1) < 0 ? 0 : lp - (nkb - 1); rap <= lp && rap < nka; ++rap) {
        const int rbp = lp - rap;
        const int da = rap - ra, db = rbp - rb;
        const int ada = da < 0 ? -da : da, adb = db < 0 ? -db : db;
        if (ada > 2 || adb > 2 || (ada != 0 && adb != 0 && (ada > 1 || adb > 1))) continue;
        const std::int64_t start = block_start(static_cast<std::size_t>(rap) * nkb + rbp);
        // alpha targets of rank rap: ia itself, its singles, its doubles (the latter only with ib)
        std::size_t s_at = 0, s_end = 0, d_at = 0, d_end = 0;
        // singles in id order over all irreps; doubles (which pair with ib only) of ia's irrep alone
        if (ada <= 1) a_singles.range(ia, da, 0, s_at, s_end);
        if (db == 0) a_doubles.range(ia, da, a_irrep(ia), d_at, d_end);
        bool self_pending = da == 0;
        while (self_pending || s_at < s_end || d_at < d_end) {
          const std::int32_t ts = s_at < s_end ? a_singles.target(s_at) : 0x7fffffff;
          const std::int32_t td = d_at < d_end ? a_doubles.target(d_at) : 0x7fffffff;
          const std::int32_t tself = self_pending ? ia : 0x7fffffff;
          int kind;  // 0: ia, 1: single, 2: double
          std::int32_t ja;
          if (tself < ts && tself < td) {
            kind = 0;
            ja = ia;
          } else if (ts < td) {
            kind = 1;
            ja = ts;
          } else {
            kind = 2;
            ja = td;
          }
          const std::int64_t base = start + a_block_position(static_cast<std::size_t>(ja) * nkb + rbp);
          // the beta irrep a partner of ja needs: the row's irrep is conserved (builder's irreps are all
          // 0 when the integrals do not obey ORBSYM and the space is not restricted)
          const std::uint32_t need = a_irrep(ja) ^ row_irrep;
          if (kind == 0) {
            self_pending = false;
            // beta targets of rank rbp: ib (diagonal), its singles, its doubles
            std::size_t bs = 0, bs_end = 0, bd = 0, bd_end = 0;
            b_singles.range(ib, db, need, bs, bs_end);
            b_doubles.range(ib, db, need, bd, bd_end);
            bool bself = db == 0;
            while (bself || bs < bs_end || bd < bd_end) {
              const std::int32_t us = bs < bs_end ? b_singles.target(bs) : 0x7fffffff;
              const std::int32_t ud = bd < bd_end ? b_doubles.target(bd) : 0x7fffffff;
              const std::int32_t uself = bself ? ib : 0x7fffffff;
              if (uself < us && uself < ud) {
                bself = false;
                if ((r >= window_first && r < window_end) == window_inside) {
                  if constexpr (Fill) {
                    col_idx(out) = static_cast<int>(r - column_shift);
                    values(out) = diagonal();
                    ++out;
                  }
                  ++count;
                }
              } else if (us < ud) {
                emit(base + b_position(us), [&] {
                  return b_singles.value(bs) +
                         b_singles.sign(bs) * coulomb_sum(static_cast<std::size_t>(b_singles.pair(bs)), sa);
                });
                ++bs;
              } else {
                emit(base + b_position(ud), [&] { return b_doubles.value(bd); });
                ++bd;
              }
            }
          } else if (kind == 1) {
            const std::size_t pq = static_cast<std::size_t>(a_singles.pair(s_at));
            const double sign_a = a_singles.sign(s_at);
            std::size_t bs = 0, bs_end = 0;
            if (adb <= 1) b_singles.range(ib, db, need, bs, bs_end);
            bool bself = db == 0 && b_irrep(ib) == need;
            while (bself || bs < bs_end) {
              const std::int32_t us = bs < bs_end ? b_singles.target(bs) : 0x7fffffff;
              if (bself && ib < us) {
                bself = false;
                emit(base + b_position(ib), [&] { return a_singles.value(s_at) + sign_a * coulomb_sum(pq, sb); });
              } else {
                emit(base + b_position(us), [&] {
                  return sign_a * b_singles.sign(bs) * two(pq, static_cast<std::size_t>(b_singles.pair(bs)));
                });
                ++bs;
              }
            }
            ++s_at;
          } else {
            emit(base + b_position(ib), [&] { return a_doubles.value(d_at); });  // same irrep as ia: ib is a partner
            ++d_at;
          }
        }
      }
    }
    return count;
  }

  KOKKOS_INLINE_FUNCTION void operator()(CountTag, const std::int64_t i) const {
    const std::int64_t local = row_offset + i;
    row_ptr(local + 1) = row<false>(row_base + local);
  }
  KOKKOS_INLINE_FUNCTION void operator()(FillTag, const std::int64_t i) const {
    const std::int64_t local = row_offset + i;
    kept(local) = row<true>(row_base + local);
  }
};

// Whether the builder skips symmetry-forbidden elements, not computing them: when the space is
// restricted to one irrep (they are outside it) or the integrals obey ORBSYM (they are zero). The one
// rule of both make_rows and irreps_uncoupled.
bool skips_forbidden(const FciDump& integrals, const DeterminantSpace& space, double symmetry_noise,
                     const char* caller) {
  if (integrals.num_orbitals != space.num_orbitals) {
    throw std::invalid_argument(std::string(caller) + ": the integrals have " + std::to_string(integrals.num_orbitals) +
                                " orbitals, the space " + std::to_string(space.num_orbitals));
  }
  return space.irrep != 0 || (symmetry_noise >= 0 && integrals_obey_symmetry(integrals, space.orbsym, symmetry_noise));
}

template <class Exec>
HamiltonianRows<Exec> make_rows(const FciDump& integrals, const DeterminantSpace& space, double tolerance,
                                double symmetry_noise) {
  // (without it every string counts as irrep 0: nothing is skipped)
  const bool use_symmetry = skips_forbidden(integrals, space, symmetry_noise, "cispmv::build_hamiltonian");
  using Mem = typename Exec::memory_space;
  const SlaterCondon sc(integrals);
  HamiltonianRows<Exec> f;
  f.norb = space.num_orbitals;
  f.max_level = space.max_level;
  auto irreps = [&](const SpinStrings& S) { return use_symmetry ? S.irrep : std::vector<std::uint8_t>(S.size(), 0); };
  const std::vector<std::uint8_t> a_irreps = irreps(space.alpha), b_irreps = irreps(space.beta);
  f.nka = space.alpha.max_rank() + 1;
  f.nkb = space.beta.max_rank() + 1;
  f.tolerance = tolerance;
  f.a_string = to_view<std::uint64_t, Mem>("a_string", space.alpha.strings);
  f.b_string = to_view<std::uint64_t, Mem>("b_string", space.beta.strings);
  f.a_rank = to_view<std::uint8_t, Mem>("a_rank", space.alpha.rank);
  f.a_irrep = to_view<std::uint8_t, Mem>("a_irrep", a_irreps);
  f.b_rank = to_view<std::uint8_t, Mem>("b_rank", space.beta.rank);
  f.b_irrep = to_view<std::uint8_t, Mem>("b_irrep", b_irreps);
  f.b_position = to_view<std::int32_t, Mem>("b_position", space.beta.position);
  f.alpha_id = to_view<std::int32_t, Mem>("alpha_id", space.alpha_id);
  f.beta_id = to_view<std::int32_t, Mem>("beta_id", space.beta_id);
  f.block_start = to_view<std::int64_t, Mem>("block_start", space.block_start);
  f.a_block_position = to_view<std::int64_t, Mem>("a_block_position", space.alpha_block_position);
  auto energies = [&](const SpinStrings& S) {  // the one-spin part of the diagonal
    std::vector<double> e(S.size());
    for (std::size_t id = 0; id < S.size(); ++id) e[id] = sc.diagonal({S.strings[id], 0});
    return e;
  };
  f.a_energy = to_view<double, Mem>("a_energy", energies(space.alpha));
  f.b_energy = to_view<double, Mem>("b_energy", energies(space.beta));
  f.num_pairs = static_cast<std::size_t>(f.norb) * (f.norb + 1) / 2;
  std::vector<double> square(f.num_pairs * f.num_pairs);
  for (std::size_t pq = 0; pq < f.num_pairs; ++pq) {
    for (std::size_t rs = 0; rs < f.num_pairs; ++rs) {
      square[pq * f.num_pairs + rs] =
          integrals.two_electron[pq >= rs ? pq * (pq + 1) / 2 + rs : rs * (rs + 1) / 2 + pq];
    }
  }
  f.eri = to_view<double, Mem>("eri", square);
  f.a_singles = Lists<Mem>("a_singles", make_lists(space.alpha, a_irreps, f.norb, sc, false, false));
  f.a_doubles = Lists<Mem>("a_doubles", make_lists(space.alpha, a_irreps, f.norb, sc, true, true));
  f.b_singles = Lists<Mem>("b_singles", make_lists(space.beta, b_irreps, f.norb, sc, false, true));
  f.b_doubles = Lists<Mem>("b_doubles", make_lists(space.beta, b_irreps, f.norb, sc, true, true));
  return f;
}

// Rows in chunks (progress between them), one thread per row; dynamic on the host, where row costs
// differ by orders of magnitude between levels.
template <class Exec, class Tag>
void over_rows(const Exec& exec, HamiltonianRows<Exec> f, std::int64_t n, const char* label, const char* pass,
               const HamiltonianOptions& options) {
  using Policy = Kokkos::RangePolicy<Exec, Tag, Kokkos::Schedule<Kokkos::Dynamic>, Kokkos::IndexType<std::int64_t>>;
  const std::int64_t chunks = options.progress ? 20 : 1;
  const std::int64_t step = std::max<std::int64_t>(1, (n + chunks - 1) / chunks);
  for (std::int64_t begin = 0; begin < n; begin += step) {
    f.row_offset = begin;
    Kokkos::parallel_for(label, Policy(exec, 0, std::min(step, n - begin)), f);
    if (options.progress) {
      exec.fence();
      options.progress(pass, static_cast<double>(std::min(n, begin + step)) / static_cast<double>(n));
    }
  }
}

// Closes the gaps that dropped elements left: row r holds kept(r) elements at the start of its slot
// [row_ptr(r), row_ptr(r+1)); afterwards the rows are packed and row_ptr counts only kept elements.
// Rows move towards the front, in chunks through a buffer (chunk c's new place ends before its old
// place does, so it never overwrites a later chunk's elements): parallel on every backend, with
// extra memory of one chunk rather than a second matrix. Returns the number of kept elements.
template <class Exec>
std::size_t compact_rows(const Exec& exec, Kokkos::View<std::size_t*, typename Exec::memory_space> row_ptr,
                         Kokkos::View<std::size_t*, typename Exec::memory_space> kept,
                         Kokkos::View<int*, typename Exec::memory_space> col_idx,
                         Kokkos::View<double*, typename Exec::memory_space> values, std::size_t buffer_entries) {
  using Mem = typename Exec::memory_space;
  using Policy = Kokkos::RangePolicy<Exec, Kokkos::IndexType<std::int64_t>>;
  const std::int64_t n = static_cast<std::int64_t>(kept.extent(0));
  Kokkos::View<std::size_t*, Mem> new_ptr(Kokkos::view_alloc("cispmv::ci_hamiltonian::packed_row_ptr"),
                                          static_cast<std::size_t>(n) + 1);
  std::size_t total = 0;
  Kokkos::parallel_scan(
      "cispmv::build_hamiltonian::packed_scan", Policy(exec, 0, n),
      KOKKOS_LAMBDA(const std::int64_t r, std::size_t& partial, const bool final) {
        partial += kept(r);
        if (final) new_ptr(r + 1) = partial;
      },
      total);
  exec.fence();
  const auto new_host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), new_ptr);
  std::size_t longest = 0;
  for (std::int64_t r = 0; r < n; ++r) longest = std::max(longest, new_host(r + 1) - new_host(r));
  const std::size_t buffer_size = std::min(total, std::max<std::size_t>({buffer_entries, longest, 1}));
  Kokkos::View<int*, Mem> col_buffer(
      Kokkos::view_alloc("cispmv::ci_hamiltonian::compact_cols", Kokkos::WithoutInitializing), buffer_size);
  Kokkos::View<double*, Mem> value_buffer(
      Kokkos::view_alloc("cispmv::ci_hamiltonian::compact_values", Kokkos::WithoutInitializing), buffer_size);
  for (std::int64_t begin = 0; begin < n;) {
    std::int64_t end = begin + 1;
    while (end < n && new_host(end + 1) - new_host(begin) <= buffer_size) ++end;
    const std::size_t base = new_host(begin);
    Kokkos::parallel_for(
        "cispmv::build_hamiltonian::compact_out", Policy(exec, begin, end), KOKKOS_LAMBDA(const std::int64_t r) {
          for (std::size_t k = 0; k < kept(r); ++k) {
            col_buffer(new_ptr(r) - base + k) = col_idx(row_ptr(r) + k);
            value_buffer(new_ptr(r) - base + k) = values(row_ptr(r) + k);
          }
        });
    Kokkos::parallel_for(
        "cispmv::build_hamiltonian::compact_in",
        Policy(exec, static_cast<std::int64_t>(base), static_cast<std::int64_t>(new_host(end))),
        KOKKOS_LAMBDA(const std::int64_t k) {
          col_idx(k) = col_buffer(static_cast<std::size_t>(k) - base);
          values(k) = value_buffer(static_cast<std::size_t>(k) - base);
        });
    begin = end;
  }
  Kokkos::deep_copy(exec, row_ptr, new_ptr);
  exec.fence();
  return total;
}

void check_row_range(const DeterminantSpace& space, std::int64_t first, std::int64_t end) {
  if (first < 0 || first > end || end > static_cast<std::int64_t>(space.size())) {
    throw std::invalid_argument("cispmv::build_hamiltonian_rows: rows [" + std::to_string(first) + ", " +
                                std::to_string(end) + ") are not a range of the space's " +
                                std::to_string(space.size()) + " determinants");
  }
}

}  // namespace

bool integrals_obey_symmetry(const FciDump& d, const std::vector<int>& orbsym, double noise) {
  const int n = d.num_orbitals;
  auto sym = [&](int p) { return orbsym[static_cast<std::size_t>(p)] - 1; };
  for (int p = 0; p < n; ++p) {
    for (int q = 0; q <= p; ++q) {
      if ((sym(p) ^ sym(q)) != 0 && !(std::abs(d.one(p, q)) <= noise)) return false;
    }
  }
  for (int p = 0; p < n; ++p) {
    for (int q = 0; q <= p; ++q) {
      for (int r = 0; r < n; ++r) {
        for (int s = 0; s <= r; ++s) {
          if ((sym(p) ^ sym(q) ^ sym(r) ^ sym(s)) != 0 && !(std::abs(d.two(p, q, r, s)) <= noise)) return false;
        }
      }
    }
  }
  return true;
}

bool irreps_uncoupled(const FciDump& integrals, const DeterminantSpace& space, const HamiltonianOptions& options) {
  return skips_forbidden(integrals, space, options.symmetry_noise, "cispmv::irreps_uncoupled");
}

template <class Exec>
CsrMatrix<double, int, std::size_t, Exec> build_hamiltonian(const Exec& exec, const FciDump& integrals,
                                                            const DeterminantSpace& space,
                                                            const HamiltonianOptions& options) {
  return build_hamiltonian_rows(exec, integrals, space, 0, static_cast<std::int64_t>(space.size()), options);
}

template <class Exec>
std::vector<std::uint64_t> hamiltonian_row_counts(const Exec& exec, const FciDump& integrals,
                                                  const DeterminantSpace& space, std::int64_t first, std::int64_t end,
                                                  const HamiltonianOptions& options) {
  check_row_range(space, first, end);
  HamiltonianRows<Exec> f = make_rows<Exec>(integrals, space, options.drop_tolerance, options.symmetry_noise);
  const std::int64_t n = end - first;
  f.row_base = first;
  f.row_ptr = Kokkos::View<std::size_t*, typename Exec::memory_space>("cispmv::hamiltonian_row_counts",
                                                                      static_cast<std::size_t>(n) + 1);
  HamiltonianOptions quiet = options;
  quiet.progress = nullptr;
  over_rows<Exec, CountTag>(exec, f, n, "cispmv::hamiltonian_row_counts", "count", quiet);
  exec.fence();
  const auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), f.row_ptr);
  return std::vector<std::uint64_t>(h.data() + 1, h.data() + h.extent(0));
}

template <class Exec>
CsrMatrix<double, int, std::size_t, Exec> build_hamiltonian_rows(const Exec& exec, const FciDump& integrals,
                                                                 const DeterminantSpace& space, std::int64_t first,
                                                                 std::int64_t end, const HamiltonianOptions& options) {
  const impl::ProfilingRegion region("cispmv::build_hamiltonian");
  check_row_range(space, first, end);
  using Matrix = CsrMatrix<double, int, std::size_t, Exec>;
  HamiltonianRows<Exec> f = make_rows<Exec>(integrals, space, options.drop_tolerance, options.symmetry_noise);
  const std::int64_t n = end - first;
  f.row_base = first;
  Matrix H;
  H.num_rows = static_cast<int>(n);
  H.num_cols = static_cast<int>(space.size());
  if (options.columns.keep != HamiltonianOptions::ColumnWindow::Keep::all) {
    const auto& w = options.columns;
    if (w.first < 0 || w.first > w.end || w.end > static_cast<std::int64_t>(space.size())) {
      throw std::invalid_argument("cispmv::build_hamiltonian_rows: the column window [" + std::to_string(w.first) +
                                  ", " + std::to_string(w.end) + ") is not a range of the space's " +
                                  std::to_string(space.size()) + " determinants");
    }
    f.window_first = w.first;
    f.window_end = w.end;
    f.window_inside = w.keep == HamiltonianOptions::ColumnWindow::Keep::inside;
    if (f.window_inside) {
      f.column_shift = w.first;
      H.num_cols = static_cast<int>(w.end - w.first);
    }
  }
  H.row_ptr = typename Matrix::row_map_type("cispmv::ci_hamiltonian::row_ptr", static_cast<std::size_t>(n) + 1);
  f.row_ptr = H.row_ptr;
  over_rows<Exec, CountTag>(exec, f, n, "cispmv::build_hamiltonian::count", "count", options);
  const auto row_ptr = H.row_ptr;
  std::size_t nnz = 0;
  Kokkos::parallel_scan(
      "cispmv::build_hamiltonian::scan", Kokkos::RangePolicy<Exec, Kokkos::IndexType<std::int64_t>>(exec, 0, n),
      KOKKOS_LAMBDA(const std::int64_t r, std::size_t& partial, const bool final) {
        partial += row_ptr(r + 1);
        if (final) row_ptr(r + 1) = partial;
      },
      nnz);
  exec.fence();
  H.col_idx = typename Matrix::index_type(
      Kokkos::view_alloc("cispmv::ci_hamiltonian::col_idx", Kokkos::WithoutInitializing), nnz);
  H.values = typename Matrix::values_type(
      Kokkos::view_alloc("cispmv::ci_hamiltonian::values", Kokkos::WithoutInitializing), nnz);
  f.col_idx = H.col_idx;
  f.values = H.values;
  f.kept = Kokkos::View<std::size_t*, typename Exec::memory_space>(
      Kokkos::view_alloc("cispmv::ci_hamiltonian::kept", Kokkos::WithoutInitializing), static_cast<std::size_t>(n));
  over_rows<Exec, FillTag>(exec, f, n, "cispmv::build_hamiltonian::fill", "fill", options);
  std::size_t kept_total = 0;
  const auto kept = f.kept;
  Kokkos::parallel_reduce(
      "cispmv::build_hamiltonian::kept", Kokkos::RangePolicy<Exec, Kokkos::IndexType<std::int64_t>>(exec, 0, n),
      KOKKOS_LAMBDA(const std::int64_t r, std::size_t& sum) { sum += kept(r); }, kept_total);
  exec.fence();
  if (kept_total != nnz) {  // elements below the drop tolerance: pack the rows, keep the first kept_total
    compact_rows(exec, H.row_ptr, f.kept, H.col_idx, H.values, options.compaction_buffer);
    H.col_idx = Kokkos::subview(H.col_idx, std::make_pair(std::size_t{0}, kept_total));
    H.values = Kokkos::subview(H.values, std::make_pair(std::size_t{0}, kept_total));
  }
  return H;
}

HostCsr build_hamiltonian(const FciDump& integrals, const DeterminantSpace& space, double drop_tolerance) {
  HamiltonianOptions options;
  options.drop_tolerance = drop_tolerance;
  return build_hamiltonian(Kokkos::DefaultHostExecutionSpace(), integrals, space, options);
}

std::vector<std::size_t> hamiltonian_row_lengths(const FciDump& integrals, const DeterminantSpace& space,
                                                 const std::vector<std::int64_t>& rows,
                                                 const HamiltonianOptions& options) {
  using Exec = Kokkos::DefaultHostExecutionSpace;
  const HamiltonianRows<Exec> f = make_rows<Exec>(integrals, space, options.drop_tolerance, options.symmetry_noise);
  std::vector<std::size_t> lengths(rows.size());
  Kokkos::parallel_for("cispmv::hamiltonian_row_lengths",
                       Kokkos::RangePolicy<Exec, Kokkos::Schedule<Kokkos::Dynamic>, Kokkos::IndexType<std::int64_t>>(
                           0, static_cast<std::int64_t>(rows.size())),
                       [&](const std::int64_t i) {
                         const std::int64_t r = rows[static_cast<std::size_t>(i)];
                         if (r < 0 || static_cast<std::size_t>(r) >= space.size()) {
                           lengths[static_cast<std::size_t>(i)] = 0;
                           return;
                         }
                         lengths[static_cast<std::size_t>(i)] = f.template row<false>(r);
                       });
  return lengths;
}

#define CISPMV_INSTANTIATE_BUILD_HAMILTONIAN(EXEC)                                                                  \
  template CsrMatrix<double, int, std::size_t, EXEC> build_hamiltonian<EXEC>(                                       \
      const EXEC&, const FciDump&, const DeterminantSpace&, const HamiltonianOptions&);                             \
  template CsrMatrix<double, int, std::size_t, EXEC> build_hamiltonian_rows<EXEC>(                                  \
      const EXEC&, const FciDump&, const DeterminantSpace&, std::int64_t, std::int64_t, const HamiltonianOptions&); \
  template std::vector<std::uint64_t> hamiltonian_row_counts<EXEC>(                                                 \
      const EXEC&, const FciDump&, const DeterminantSpace&, std::int64_t, std::int64_t, const HamiltonianOptions&);
#ifdef KOKKOS_ENABLE_SERIAL
CISPMV_INSTANTIATE_BUILD_HAMILTONIAN(Kokkos::Serial)
#endif
#ifdef KOKKOS_ENABLE_OPENMP
CISPMV_INSTANTIATE_BUILD_HAMILTONIAN(Kokkos::OpenMP)
#endif
#ifdef KOKKOS_ENABLE_THREADS
CISPMV_INSTANTIATE_BUILD_HAMILTONIAN(Kokkos::Threads)
#endif
#ifdef KOKKOS_ENABLE_CUDA
CISPMV_INSTANTIATE_BUILD_HAMILTONIAN(Kokkos::Cuda)
#endif
#ifdef KOKKOS_ENABLE_HIP
CISPMV_INSTANTIATE_BUILD_HAMILTONIAN(Kokkos::Experimental::HIP)
#endif
#undef CISPMV_INSTANTIATE_BUILD_HAMILTONIAN

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
