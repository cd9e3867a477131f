#pragma once
/// \file ci/factored/tile_kernel.hpp
/// The factored Hamiltonian's alpha-beta kernel on CPUs with AVX-512 or AVX2: FactoredTileKernel, the alpha-beta sum
/// as small dense products W = A B (integrals times rows of x) formed by the CPU's vector unit (factored_tile, in
/// portable C++, AVX2 + FMA or AVX-512), taken into the string's row through each position's replacement lists, then
/// the same-spin terms (same_spin.hpp).

#include <Kokkos_Core.hpp>

#include "cispmv/ci/factored/same_spin.hpp"
#include "cispmv/ci/factored/strings.hpp"
#include "cispmv/impl/kernels/host_simd.hpp"

#include <cstddef>
#include <cstdint>

namespace cispmv::impl {

/// The tile kernel's product W = A B for A (rows x k, row-major), B (k x 8) and W (rows x 8) in portable C++,
/// four rows at a time (host_simd::factored_tile_avx2 and factored_tile_avx512 are the same in vector registers).
KOKKOS_INLINE_FUNCTION void factored_tile(const double* A, int rows, int k, const double* B, double* W) {
  int m = 0;
  for (; m + 4 <= rows; m += 4) {
    double acc[4][8] = {};
    for (int c = 0; c < k; ++c) {
      for (int r = 0; r < 4; ++r) {
        const double v = A[(m + r) * k + c];
        for (int j = 0; j < 8; ++j) acc[r][j] += v * B[8 * c + j];
      }
    }
    for (int r = 0; r < 4; ++r)
      for (int j = 0; j < 8; ++j) W[8 * (m + r) + j] = acc[r][j];
  }
  for (; m < rows; ++m) {
    double acc[8] = {};
    for (int c = 0; c < k; ++c)
      for (int j = 0; j < 8; ++j) acc[j] += A[m * k + c] * B[8 * c + j];
    for (int j = 0; j < 8; ++j) W[8 * m + j] = acc[j];
  }
}

/// The instruction set of the tile kernel's W = A B: AVX-512 (a zmm register a row of W), AVX2 with FMA (two ymm
/// registers a row), or portable C++.
enum class TileIsa { portable, avx2, avx512 };

/// The widest tile this CPU runs.
inline TileIsa host_tile_isa() {
#if CISPMV_HOST_SIMD
  if (host_simd::avx512_available()) return TileIsa::avx512;
  if (host_simd::avx2_fma_available()) return TileIsa::avx2;
#endif
  return TileIsa::portable;
}

/// CPUs: the alpha-beta sum as tiles of W = A B, formed by the CPU's vector unit, and taken through the
/// scatter kernel's lists. For alpha string ia and a unit of its replacements of one class (up to
/// factored_tile_batches batches of 8) against the class's pairs (up to 64), a tile of 8 positions q:
/// B's rows x(ja_k, q .. q + 7) (a run of x's row where the 8 positions lie in one block of q, else one
/// value at a time), W = A B (the widest of AVX-512, AVX2 + FMA and portable C++ the CPU runs: TileIsa), and then each
/// position's own replacements of the class (its sliced list: target, sign, pair) take their W(pair, q) into ia's row
/// in team scratch. W is dense over the pairs (about three quarters do not apply to a given q), the price of the vector
/// unit; the lists walk only what applies. With FactoredOptions::singlet only the targets up to the string's own
/// position (half at it), the lists sorted by target: a position's walk stops at its first target past it, and a tile
/// whose positions have none before it is skipped. Then H_alpha's and H_beta's terms as in the scatter kernel. Teams of
/// one thread (on a GPU too, where it runs for the tests only), or `parts` teams an alpha string taking every parts-th
/// unit and adding their rows into y atomically.
template <class Exec, class X, class Y>
struct FactoredTileKernel {
  using Mem = typename Exec::memory_space;
  // (teams handed out as threads come free: an alpha string's work varies with its replacements and, for the
  // singlet, with its own position, up to which its targets reach. 2 cores, H2O/6-31G full CI: the singlet's product
  // 532 -> 325 ms, the whole space's within this machine's spread: 506-681 ms statically, 582-650 as threads come free)
  using Policy = Kokkos::TeamPolicy<Exec, Kokkos::Schedule<Kokkos::Dynamic>>;
  using Member = typename Policy::member_type;
  template <class T>
  using ScratchOf = Kokkos::View<T*, typename Exec::scratch_memory_space, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  using Scratch = ScratchOf<double>;
  static constexpr int K = 8 * factored_tile_batches;  // replacements a unit at most
  FactoredData<Mem> d;
  X x;
  Y y;
  double alpha, beta;
  Kokkos::View<std::int32_t*, Mem> task_ia, task_part, task_parts;
  bool accumulate = false;          // add into y (parts > 1) rather than write it
  int level = 0;                    // scratch level
  TileIsa isa = TileIsa::portable;  // the tile's instruction set (host_tile_isa())
  bool half = false;                // FactoredOptions::singlet: the targets up to the row's own string (its tables)
  FactoredSinglet<Mem> singlet;

  static std::size_t scratch_bytes(const FactoredData<Mem>& d) {
    const auto pairs = static_cast<std::size_t>(d.max_unit_pairs);
    return 2 * Scratch::shmem_size(static_cast<std::size_t>(d.max_range)) + Scratch::shmem_size(pairs * K) +
           Scratch::shmem_size(8 * K) + Scratch::shmem_size(8 * pairs);
  }
  std::size_t team_scratch_bytes(const FactoredData<Mem>& d) const { return scratch_bytes(d); }

  KOKKOS_INLINE_FUNCTION void operator()(const Member& m) const {
    const int task = m.league_rank();
    const std::int32_t ia = task_ia(task);
    const int part = task_part(task), parts = task_parts(task);
    const int lo_a = d.a_lo(ia), len_a = d.a_hi(ia) - lo_a;
    const Scratch ys(m.team_scratch(level), static_cast<std::size_t>(d.max_range));
    const Scratch row(m.team_scratch(level), static_cast<std::size_t>(d.max_range));  // x's row ia
    const Scratch a(m.team_scratch(level), static_cast<std::size_t>(d.max_unit_pairs) * K);
    const Scratch b(m.team_scratch(level), 8 * K);
    const Scratch w(m.team_scratch(level), 8 * static_cast<std::size_t>(d.max_unit_pairs));
    for (int k = 0; k < len_a; ++k) ys(k) = 0.0;
    // FactoredOptions::singlet: the alpha-beta terms only at targets up to the string's own position (half there)
    const int self = half ? singlet.a_self(ia) : d.nb;

    for (std::int64_t u = d.mu_ptr(ia) + part; u < (d.alpha_beta ? d.mu_ptr(ia + 1) : d.mu_ptr(ia)); u += parts) {
      const std::int64_t b0 = d.mu_batch(u);
      const int k_n = 8 * d.mu_ksteps(u), pairs = d.mu_pairs(u), m0 = d.mu_pair(u);
      const int cls = d.ab_class(b0);
      const std::int64_t first_pair = d.cls_ptr(cls) + m0;
      // A(r, k) = s_k (pq_k|rs_r), row after row
      for (int r = 0; r < pairs; ++r) {
        const int rs = d.cls_pair(first_pair + r);
        for (int k = 0; k < k_n; ++k) {
          const double sign = d.ab_sign(b0 * 8 + k);
          a(r * k_n + k) = sign == 0.0 ? 0.0 : sign * d.weight(ia, d.ab_pair(b0 * 8 + k), rs);
        }
      }
      const int q_end = d.mu_lo(u) + d.mu_len(u);
      const std::int64_t be_cls = static_cast<std::int64_t>(cls) * d.slices;
      for (int q0 = d.mu_lo(u) & ~7; q0 < q_end; q0 += 8) {
        if (half && !reaches(be_cls + (q0 >> 5), cls, q0, d.mu_lo(u), q_end, self)) continue;
        // B(k, j) = x(ja_k, q0 + j), 0 where the string does not pair with the position
        const bool one_block = q0 + 8 <= d.nb && d.q_block_end(q0) >= q0 + 8;
        for (int k = 0; k < k_n; ++k) {
          const std::int32_t ja = d.ab_ja(b0 * 8 + k);
          const int lo = ja < 0 ? 0 : d.a_lo(ja), len = ja < 0 ? 0 : d.a_hi(ja) - lo;
          if (one_block && q0 >= lo && q0 + 8 <= lo + len) {
            const std::int64_t at = d.index(ja, q0);
            for (int j = 0; j < 8; ++j) b(8 * k + j) = x(at + j);
          } else {
            for (int j = 0; j < 8; ++j) {
              const int q = q0 + j;
              b(8 * k + j) = static_cast<unsigned>(q - lo) < static_cast<unsigned>(len) ? x(d.index(ja, q)) : 0.0;
            }
          }
        }
        tile(a.data(), pairs, k_n, b.data(), w.data());
        // each position's replacements of the class whose pair is the unit's
        for (int j = 0; j < 8; ++j) {
          const int q = q0 + j;
          if (q < d.mu_lo(u) || q >= q_end) continue;
          const std::int64_t be = d.be_ptr(be_cls + (q >> 5));
          const int count = d.be_count(static_cast<std::int64_t>(cls) * d.nb + q);
          for (int i = 0; i < count; ++i) {
            const std::uint32_t e = d.be_data(FactoredData<Mem>::sliced(be, q, i));
            const int target = static_cast<int>(e >> factored_position_shift);
            if (target > self) break;  // (singlet: the list sorted by target)
            const int r = d.pair_slot(static_cast<std::int32_t>(e & ((1u << factored_pair_bits) - 1))) - m0;
            const int idx = target - lo_a;
            if (static_cast<unsigned>(r) < static_cast<unsigned>(pairs) &&
                static_cast<unsigned>(idx) < static_cast<unsigned>(len_a)) {
              const double v = target == self ? 0.5 * w(8 * r + j) : w(8 * r + j);
              ys(idx) += (e >> factored_pair_bits) & 1u ? -v : v;
            }
          }
        }
      }
    }
    m.team_barrier();
    factored_same_spin_and_write(m, d, x, y, ys, row, ia, part, parts, alpha, beta, accumulate);
  }

 private:
  // singlet: whether some position of the tile q0 .. q0 + 7 (inside [lo, end)) has a replacement of class cls whose
  // target lies at or before `self` (each list sorted by target: its first entry); be: the class's slice of q0
  KOKKOS_INLINE_FUNCTION bool reaches(std::int64_t be_slice, int cls, int q0, int lo, int end, int self) const {
    const std::int64_t be = d.be_ptr(be_slice);
    for (int j = 0; j < 8; ++j) {
      const int q = q0 + j;
      if (q < lo || q >= end || d.be_count(static_cast<std::int64_t>(cls) * d.nb + q) == 0) continue;
      if (static_cast<int>(d.be_data(FactoredData<Mem>::sliced(be, q, 0)) >> factored_position_shift) <= self) {
        return true;
      }
    }
    return false;
  }
  KOKKOS_INLINE_FUNCTION void tile(const double* A, int rows, int k, const double* B, double* W) const {
#if CISPMV_HOST_SIMD
    if (isa == TileIsa::avx512) {
      host_simd::factored_tile_avx512(A, rows, k, B, W);
      return;
    }
    if (isa == TileIsa::avx2) {
      host_simd::factored_tile_avx2(A, rows, k, B, W);
      return;
    }
#endif
    factored_tile(A, rows, k, B, W);
  }
};

}  // namespace cispmv::impl
