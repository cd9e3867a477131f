#pragma once
/// \file ci/factored/scatter_kernel.hpp
/// The factored Hamiltonian's alpha-beta kernel on GPUs (and, as its lists' walk, on CPUs without AVX2):
/// FactoredScatterKernel, a team per alpha string (or part of one) that forms the alpha-beta sum at each source
/// position and scatters it into the string's row in team scratch, then ends with the same-spin terms
/// (same_spin.hpp). Its launch shape, scratch level and row copies are chosen in policy.hpp.

#include <Kokkos_Core.hpp>

#include "cispmv/ci/factored/same_spin.hpp"
#include "cispmv/ci/factored/strings.hpp"
#include "cispmv/ci/factored/warp_mma.hpp"

#include <cstddef>
#include <cstdint>

namespace cispmv::impl {

/// GPUs: a team per alpha string ia (or per part of its work, `parts` teams an alpha string), its
/// row of the result accumulated in team scratch. The alpha-beta sum is formed at the source: for a batch
/// of B alpha replacements (ja_k, pq_k, s_k) of one class, a thread takes a source position q, holds
/// x(ja_k, q) for the B of them in registers (rows of x, coalesced), and walks the class's pairs rs in
/// step with the other threads: w = sum_k s_k (pq_k|rs) x(ja_k, q), the integrals a broadcast from
/// scratch, is added to the target E_rs q of the table (an atomic add in scratch: on CUDA's level 0 a step's four old
/// values read at once, then one compare-and-swap each, impl::scratch_add_shared; in one step the targets of a warp
/// are distinct). No gathers of x or of integrals: B fused multiply-adds per pair
/// and position at most (a batch is walked up to its last live replacement: FactoredHost::ab_walked), where a
/// kernel that gathers rows of x from scratch pays two scratch gathers per term. With Lists, a thread walks
/// its source's own replacements of the class instead (half the pairs, no table; the integral rows a
/// gather). Then each thread adds
/// H_alpha's and H_beta's terms of its own positions (x's row ia staged in scratch) and writes them.
/// With parts > 1, a team takes every parts-th batch and a parts-th of the positions and adds its row
/// into y atomically (y scaled by beta beforehand). With ys_rows > 1
/// (CUDA, level 0: FactoredTuning::RowCopies::per_warp) each warp adds into its own copy of the row, without
/// atomics, and the copies are summed after the walk. Sums in an order that varies from run to run.
template <class Exec, class X, class Y, int B, bool Lists>
struct FactoredScatterKernel {
  using Mem = typename Exec::memory_space;
  using Policy =
      Kokkos::TeamPolicy<Exec, Kokkos::LaunchBounds<256, 3>>;  // 80 registers, no spills at B = 8 (4: 64 and spills)
  using Member = typename Policy::member_type;
  template <class T>
  using ScratchOf = Kokkos::View<T*, typename Exec::scratch_memory_space, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  using Scratch = ScratchOf<double>;
  /// Two integrals of a row, loaded at once (rows of B + 2 values: 16-byte aligned, and rows that start
  /// on different banks where lanes gather them).
  struct alignas(16) Two {
    double a, b;
  };
  static constexpr int row_twos = (B + 2) / 2;
  FactoredData<Mem> d;
  X x;
  Y y;
  double alpha, beta;
  Kokkos::View<std::int32_t*, Mem> task_ia, task_part, task_parts;
  bool accumulate = false;  // add into y (parts > 1) rather than write it
  int level = 0;            // scratch level
  int ys_rows = 1;          // copies of the string's row: 1, or one a warp (CUDA, level 0, teams of whole warps)

  // rows of integrals: one per pair of a class (the table's walk), or per pair (the lists' walk)
  KOKKOS_INLINE_FUNCTION static std::size_t integral_rows(const FactoredData<Mem>& d) {
    return static_cast<std::size_t>(Lists ? d.num_pairs : d.max_class_pairs);
  }
  static std::size_t scratch_bytes(const FactoredData<Mem>& d, int rows = 1) {
    return Scratch::shmem_size(static_cast<std::size_t>(rows) * static_cast<std::size_t>(d.max_range)) +
           Scratch::shmem_size(static_cast<std::size_t>(d.max_range)) +
           ScratchOf<Two>::shmem_size(integral_rows(d) * row_twos) + ScratchOf<std::int64_t>::shmem_size(3 * B);
  }
  std::size_t team_scratch_bytes(const FactoredData<Mem>& d) const { return scratch_bytes(d, ys_rows); }

  // two chains of fused multiply-adds (a multiply, a fused one and an add for each two integrals before s30) over the
  // batch's first G replacements (the others padding: walk_batch)
  template <int G>
  KOKKOS_INLINE_FUNCTION static double dot(const Two* g, const double (&z)[B]) {
    static_assert(G % 2 == 0 && G <= B, "a dot over pairs of the batch's replacements");
    double w0 = 0.0, w1 = 0.0;
    CISPMV_FACTORED_UNROLL
    for (int k = 0; k < G / 2; ++k) {
      const Two v = g[k];
      w0 += v.a * z[2 * k];
      w1 += v.b * z[2 * k + 1];
    }
    return w0 + w1;
  }
  // w (negated where `negative`) added to ys (in scratch of `level`) at target - lo where that lies in [0, len)
  // (a team of one thread, the CPUs' launch, adds without an atomic; CUDA's level 0 without the generic
  // pointer's test of its address space: impl::scratch_add)
  KOKKOS_INLINE_FUNCTION static void scatter(const Scratch& ys, int idx, int len, bool negative, double w, int level,
                                             bool alone) {
    if (static_cast<unsigned>(idx) < static_cast<unsigned>(len)) scratch_add(&ys(idx), negative ? -w : w, level, alone);
  }

  // x(ja_k, q) of the batch's first G strings (in scratch: range and row base each) into z, 0 where q is off a string's
  // range and past the G; whether any is on
  template <int G, class Strings>
  KOKKOS_INLINE_FUNCTION bool load_sources(const Strings& strings, int q, double (&z)[B]) const {
    const int kb = d.q_rank(q), pos = d.q_position(q);
    bool any = false;
    CISPMV_FACTORED_UNROLL
    for (int k = 0; k < B; ++k) {
      const bool in = k < G && static_cast<std::uint64_t>(q - strings(k)) < static_cast<std::uint64_t>(strings(B + k));
      z[k] = in ? x(d.a_rowbase(strings(2 * B + k) + kb) + pos) : 0.0;
      any = any || in;
    }
    return any;
  }

  // The table's walk for source position q: every pair of the class (pairs m0.. m0 + mc - 1) in steps of 4, the
  // integrals g a broadcast: their table entries (target << 1 | negative, or -1) loaded first (from L2: four loads in
  // flight), then the four sums, then their adds into ys (ia's row; targets less lo_a, len_a of them). Shared: ys and
  // g reached through in_shared (level 0 on CUDA: their loads LDS), the four adds by scratch_add_shared.
  // (the table by rows: FactoredTable::rows, as the constructor builds it for this kernel)
  // Rows: ys is this warp's copy of the row, the lanes of `mask` walk together (`live` false: nothing to add) and the
  // adds are impl::warp_row_add's plain ones.
  template <int G, bool Shared, bool Rows = false>
  KOKKOS_INLINE_FUNCTION void walk_table(double* ys, const Two* g, const double (&z)[B], int q, int m0, int mc,
                                         int lo_a, int len_a, bool alone, bool live = true,
                                         unsigned mask = 0xffffffffu) const {
    const std::int64_t stride = d.table_stride;
    const std::int32_t* tab = d.table.data() + static_cast<std::int64_t>(m0) * stride + q;
    int ml = 0;
    for (; ml + 4 <= mc; ml += 4, tab += 4 * stride) {
      std::int32_t e[4];
      CISPMV_FACTORED_UNROLL
      for (int u = 0; u < 4; ++u) e[u] = tab[u * stride];
      double* p[4];
      double w[4];
      bool on[4];
      CISPMV_FACTORED_UNROLL
      for (int u = 0; u < 4; ++u) {
        const int idx = (e[u] >> 1) - lo_a;  // ((-1 >> 1) - lo_a < 0)
        on[u] = live && static_cast<unsigned>(idx) < static_cast<unsigned>(len_a);
        p[u] = ys + (on[u] ? idx : 0);
        const double v = dot<G>(g + static_cast<std::ptrdiff_t>(ml + u) * row_twos, z);
        w[u] = e[u] & 1 ? -v : v;
      }
      if (Rows) {
        warp_row_add(p, w, on, mask);
      } else if (Shared) {
        scratch_add_shared(p, w, on, alone);
      } else {
        CISPMV_FACTORED_UNROLL
        for (int u = 0; u < 4; ++u) {
          if (on[u]) scratch_add(p[u], w[u], 1, alone);
        }
      }
    }
    for (; ml < mc; ++ml, tab += stride) {
      const int idx = (*tab >> 1) - lo_a;
      const bool in = live && static_cast<unsigned>(idx) < static_cast<unsigned>(len_a);
      if (Rows) {  // (every lane to the add: it orders the warp)
        const double v = dot<G>(g + static_cast<std::ptrdiff_t>(ml) * row_twos, z);
        double* const p[1] = {ys + (in ? idx : 0)};
        const double w[1] = {*tab & 1 ? -v : v};
        const bool on[1] = {in};
        warp_row_add(p, w, on, mask);
        continue;
      }
      if (!in) continue;
      const double v = dot<G>(g + static_cast<std::ptrdiff_t>(ml) * row_twos, z);
      double* const p[1] = {ys + idx};
      const double w[1] = {*tab & 1 ? -v : v};
      const bool on[1] = {true};
      if (Shared) {
        scratch_add_shared(p, w, on, alone);
      } else {
        scratch_add(p[0], w[0], 1, alone);
      }
    }
  }

  // A batch's products at its source positions lo_b + [0, len_b), over its first G replacements: into this warp's copy
  // of the row (`mine`, ys_rows > 1), else into ys
  template <int G>
  KOKKOS_INLINE_FUNCTION void walk_batch(const Scratch& ys, double* const mine, const ScratchOf<std::int64_t>& strings,
                                         const Two* const g, const int t, const int T, const int lane, const int cls,
                                         const int m0, const int mc, const int lo_b, const int len_b, const int lo_a,
                                         const int len_a) const {
    if (mine != nullptr) {
      // copies: the lanes of a warp that take a position in this round (`mask`: those before the range's end) walk
      // together, the adds ordering them (a loop in which every lane ran every round, lanes past the range with
      // nothing to add, made the walk ~20 % slower)
      for (int k0 = t; k0 < len_b; k0 += T) {
        const int q = lo_b + k0;
        double z[B];
        const bool any = load_sources<G>(strings, q, z);
        const int left = len_b - (k0 - lane);  // positions from the warp's first lane's on
        const unsigned mask = left >= 32 ? 0xffffffffu : (1u << left) - 1u;
        walk_table<G, true, true>(mine, in_shared(g), z, q, m0, mc, lo_a, len_a, false, any, mask);
      }
      return;
    }
    for (int k0 = t; k0 < len_b; k0 += T) {
      const int q = lo_b + k0;
      double z[B];
      if (!load_sources<G>(strings, q, z)) continue;
      if (Lists) {
        // q's replacements of the class (target, sign, pair), each read one ahead; the integrals a
        // gather of the pair's row
        const std::int64_t be = d.be_ptr(static_cast<std::int64_t>(cls) * d.slices + (q >> 5));
        const int count = d.be_count(static_cast<std::int64_t>(cls) * d.nb + q);
        std::uint32_t next = count > 0 ? d.be_data(FactoredData<Mem>::sliced(be, q, 0)) : 0u;
        for (int i = 0; i < count; ++i) {
          const std::uint32_t e = next;
          if (i + 1 < count) next = d.be_data(FactoredData<Mem>::sliced(be, q, i + 1));
          const double w = dot<G>(g + static_cast<std::ptrdiff_t>(e & ((1u << factored_pair_bits) - 1)) * row_twos, z);
          scatter(ys, static_cast<int>(e >> factored_position_shift) - lo_a, len_a, (e >> factored_pair_bits) & 1u, w,
                  level, T == 1);
        }
      } else if (level == 0) {
        walk_table<G, true>(in_shared(ys.data()), in_shared(g), z, q, m0, mc, lo_a, len_a, T == 1);
      } else {
        walk_table<G, false>(ys.data(), g, z, q, m0, mc, lo_a, len_a, T == 1);
      }
    }
  }

  // walk_batch over the batch's first `walked` replacements (even, G to B): an instantiation for each
  template <int G, class... Args>
  KOKKOS_INLINE_FUNCTION void walk_upto(const int walked, const Args&... args) const {
    if constexpr (G < B) {
      if (walked > G) return walk_upto<G + 2>(walked, args...);
    }
    walk_batch<G>(args...);
  }

  KOKKOS_INLINE_FUNCTION void operator()(const Member& m) const {
    const int task = m.league_rank();
    const std::int32_t ia = task_ia(task);
    const int part = task_part(task), parts = task_parts(task);
    const int T = m.team_size(), t = m.team_rank();
    const int lo_a = d.a_lo(ia), len_a = d.a_hi(ia) - lo_a;
    // the string's row: one copy, or one a warp (ys_rows > 1: CUDA's level 0, warps of 32 consecutive ranks as
    // Kokkos' teams of vector length 1 have them), this warp's at `mine`
    const int rows = ys_rows;
    const std::size_t stride = static_cast<std::size_t>(d.max_range);
    const Scratch ys(m.team_scratch(level), static_cast<std::size_t>(rows) * stride);
    const Scratch row(m.team_scratch(level), stride);  // x's row ia
    const ScratchOf<Two> integrals(m.team_scratch(level), integral_rows(d) * row_twos);
    const ScratchOf<std::int64_t> strings(m.team_scratch(level), 3 * B);
    for (int r = 0; r < rows; ++r) {
      for (int k = t; k < len_a; k += T) ys(r * stride + k) = 0.0;
    }
    const int lane = rows > 1 ? t % 32 : 0;
    double* const mine = rows > 1 ? in_shared(ys.data()) + (t / 32) * stride : nullptr;

    // alpha-beta, formed at the source positions and scattered to their targets
    const std::int64_t ab_end = d.alpha_beta ? d.ab_ptr(ia + 1) : d.ab_ptr(ia);
    for (std::int64_t b = d.ab_ptr(ia) + part; b < ab_end; b += parts) {
      // the batch's replacements up to its last live one, in pairs: those past it are padding (or strings that pair
      // with no position) whose x and integrals add nothing, so neither their integrals are staged nor their products
      // walked (s36: the frozen core's batches are 62 % live at B = 16, 96 % so)
      const int walked = d.ab_walked(b);
      if (walked == 0) continue;  // (the team's threads alike)
      const int cls = d.ab_class(b);
      const int m0 = d.cls_ptr(cls), mc = d.cls_ptr(cls + 1) - m0;
      const int lo_b = d.ab_lo(b), len_b = d.ab_len(b);
      m.team_barrier();  // (the previous batch's integrals are read)
      for (int i = t; i < mc * B; i += T) {
        if (i % B >= walked) continue;
        const std::int64_t r = b * B + i % B;
        const int pair = d.cls_pair(m0 + i / B);
        Two& two = integrals((Lists ? pair : i / B) * row_twos + (i % B) / 2);
        // (padding within the walked: sign 0, pair 0)
        (i % 2 == 0 ? two.a : two.b) = d.ab_sign(r) * d.weight(ia, d.ab_pair(r), pair);
      }
      // the batch's strings: range of q and where their rows start, in scratch (registers are kept for
      // x's values)
      for (int k = t; k < B; k += T) {
        const std::int32_t ja = d.ab_ja(b * B + k);
        strings(k) = ja < 0 ? 0 : d.a_lo(ja);
        strings(B + k) = ja < 0 ? 0 : d.a_hi(ja) - d.a_lo(ja);
        strings(2 * B + k) = ja < 0 ? 0 : static_cast<std::int64_t>(ja) * d.nkb;
      }
      m.team_barrier();
      walk_upto<2>(walked, ys, mine, strings, integrals.data(), t, T, lane, cls, m0, mc, lo_b, len_b, lo_a, len_a);
    }
    m.team_barrier();
    for (int k = t; rows > 1 && k < len_a; k += T) {  // the warps' copies into the first (ordered before any other
      double v = ys(k);                               // thread's use by the barrier the same-spin pass begins with)
      for (int r = 1; r < rows; ++r) v += ys(r * stride + k);
      ys(k) = v;
    }
    factored_same_spin_and_write(m, d, x, y, ys, row, ia, part, parts, alpha, beta, accumulate);
  }
};

}  // namespace cispmv::impl
