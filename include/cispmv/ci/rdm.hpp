#pragma once
/// \file ci/rdm.hpp
/// The one- and two-particle reduced density matrices of a CI vector, formed where the vector lives (a GPU or the
/// host's threads) from the strings' single replacements (ci/string_addressing.hpp), never from anything of
/// determinant-squared size: for a batch of alpha strings, T(K, rs) = <K|E_rs|c> over every determinant K of the
/// batch (RdmReplacements, a thread a determinant), then G += T^T T and d += T^T c (RdmGram, a team per tile of G
/// and stretch of rows). <E_pq E_rs> = sum_K <c|E_pq|K><K|E_rs|c> = G(qp, rs); with T split by spin, G's blocks give
/// the spin-resolved matrices. The vector is the dense (alpha strings x beta strings) array of all strings, in
/// increasing value (PySCF's layout), whatever space it was solved in: a symmetry-restricted vector holds zeros
/// elsewhere.
///
/// Conventions (PySCF's fci.direct_spin1, chemists' order): dm1[p][q] = <a+_q a_p> summed over spins; dm2[p][q][r][s]
/// = sum over spins s1, s2 of <a+_p,s1 a+_r,s2 a_s,s2 a_q,s1>, so that E = sum h[p][q] dm1[q][p] + 1/2 sum (pq|rs)
/// dm2[p][q][r][s]; dm2aa, dm2ab (alpha on p q, beta on r s) and dm2bb alike for one spin each.

#include <Kokkos_Core.hpp>

#include "cispmv/ci/string_addressing.hpp"
#include "cispmv/impl/backend.hpp"

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace cispmv::ci {

/// Density matrices of a vector, each row-major: dm1 n x n, dm2 n^4 (see the file's conventions).
struct DensityMatrices {
  int num_orbitals = 0;
  std::vector<double> dm1a, dm1b;           ///< per spin
  std::vector<double> dm2aa, dm2ab, dm2bb;  ///< per spin pair (empty when only the spin sums were asked for)
  std::vector<double> dm1, dm2;             ///< spin-summed
};

}  // namespace cispmv::ci

namespace cispmv::impl {

/// T(row, w) for the determinants of alpha strings [a0, a0 + rows / nb): w = r n + s for E^alpha_rs, plus n^2 for
/// E^beta_rs when the spins are split (else the two added), and its last column c itself (so that G's last row is
/// the one-particle matrix). A thread a determinant; consecutive threads share an alpha string (coalesced reads of c
/// along beta).
template <class Exec>
struct RdmReplacements {
  using Mem = typename Exec::memory_space;
  Kokkos::View<const double*, Mem> c;
  Kokkos::View<double**, Kokkos::LayoutLeft, Mem> t;
  Kokkos::View<const std::int32_t*, Mem> a_source, b_source;
  Kokkos::View<const std::int16_t*, Mem> a_pair, b_pair;
  Kokkos::View<const std::int8_t*, Mem> a_sign, b_sign;
  std::int64_t a0 = 0, nb = 0;
  int a_links = 0, b_links = 0, width = 0, beta_offset = 0;

  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t row) const {
    const std::int64_t ka = a0 + row / nb, kb = row % nb;
    for (int w = 0; w < width - 1; ++w) t(row, w) = 0.0;
    t(row, width - 1) = c(ka * nb + kb);
    for (int l = 0; l < a_links; ++l) {
      const std::int64_t e = ka * a_links + l;
      t(row, a_pair(e)) += a_sign(e) * c(static_cast<std::int64_t>(a_source(e)) * nb + kb);
    }
    for (int l = 0; l < b_links; ++l) {
      const std::int64_t e = kb * b_links + l;
      t(row, beta_offset + b_pair(e)) += b_sign(e) * c(ka * nb + b_source(e));
    }
  }
};

/// G(i, j) += sum over rows of T(row, i) T(row, j) for the tiles i <= j (G symmetric: the lower tiles
/// are mirrored on the host): a team a tile and stretch of rows, `depth` rows of the tile's two column blocks at a
/// time in scratch (padded: no bank conflicts), added into G atomically at the end. On GPUs (OneThread false) teams
/// of 256 threads, 16 x 16, each a 4 x 4 block of a 64 x 64 tile (entries 16 apart: a warp reads two values of A and 16
/// of B a step, 8 loads for 16 fused multiply-adds); on CPUs a team of one, a 32 x 32 tile by rank-1 updates vectorised
/// along j.
template <class Exec, bool OneThread>
struct RdmGram {
  // (CPUs: 32 x 32, whose 8 KB of sums stay in L1)
  static constexpr int tile = OneThread ? 32 : 64, depth = 32, team = OneThread ? 1 : 256;
  using Mem = typename Exec::memory_space;
  using Policy = Kokkos::TeamPolicy<Exec>;
  using Member = typename Policy::member_type;
  using Scratch = Kokkos::View<double**, Kokkos::LayoutRight, typename Exec::scratch_memory_space,
                               Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  Kokkos::View<const double**, Kokkos::LayoutLeft, Mem> t;
  Kokkos::View<double**, Kokkos::LayoutRight, Mem> g;
  Kokkos::View<const std::int32_t*, Mem> tile_i, tile_j;  ///< the upper tiles
  std::int64_t rows = 0, stretch = 0;
  int width = 0;

  static std::size_t scratch_bytes() { return 2 * Scratch::shmem_size(depth, tile + 1); }

  KOKKOS_INLINE_FUNCTION void operator()(const Member& m) const {
    const int pairs = static_cast<int>(tile_i.extent(0));
    const int u = m.league_rank() % pairs;
    const std::int64_t part = m.league_rank() / pairs;
    const int i0 = tile_i(u) * tile, j0 = tile_j(u) * tile;
    const std::int64_t lo = part * stretch, hi = lo + stretch < rows ? lo + stretch : rows;  // (no std::min on GPUs)
    const Scratch A(m.team_scratch(0), depth, tile + 1), B(m.team_scratch(0), depth, tile + 1);
    constexpr int per = OneThread ? tile * tile : 16;
    double acc[per];
    for (int e = 0; e < per; ++e) acc[e] = 0.0;
    const int tx = m.team_rank() % 16, ty = m.team_rank() / 16;
    for (std::int64_t r0 = lo; r0 < hi; r0 += depth) {
      // the stretch's next rows of T's columns i0.. and j0.. (zero beyond the rows and the width)
      Kokkos::parallel_for(Kokkos::TeamThreadRange(m, depth * tile), [&](const int e) {
        const int k = e % depth, col = e / depth;
        const std::int64_t row = r0 + k;
        A(k, col) = row < hi && i0 + col < width ? t(row, i0 + col) : 0.0;
        B(k, col) = row < hi && j0 + col < width ? t(row, j0 + col) : 0.0;
      });
      m.team_barrier();
      if constexpr (OneThread) {
        for (int k = 0; k < depth; ++k) {
          for (int i = 0; i < tile; ++i) {
            const double a = A(k, i);
            for (int j = 0; j < tile; ++j) acc[i * tile + j] += a * B(k, j);
          }
        }
      } else {
        for (int k = 0; k < depth; ++k) {
          double a[4], b[4];
          for (int x = 0; x < 4; ++x) {
            a[x] = A(k, ty + 16 * x);
            b[x] = B(k, tx + 16 * x);
          }
          for (int x = 0; x < 4; ++x)
            for (int y = 0; y < 4; ++y) acc[4 * x + y] += a[x] * b[y];
        }
      }
      m.team_barrier();
    }
    for (int e = 0; e < per; ++e) {
      const int i = i0 + (OneThread ? e / tile : ty + 16 * (e / 4)),
                j = j0 + (OneThread ? e % tile : tx + 16 * (e % 4));
      if (i < width && j < width && acc[e] != 0.0) Kokkos::atomic_add(&g(i, j), acc[e]);
    }
  }
};

}  // namespace cispmv::impl

namespace cispmv::ci {

/// The density matrices of vectors of one string space (n orbitals, na alpha and nb beta electrons): its link tables
/// on Exec once, then any number of vectors (a plan object). compute() takes the dense vector (C(n, na) x C(n, nb),
/// alpha-major, all strings in increasing value) in Exec's memory.
template <class Exec = Kokkos::DefaultExecutionSpace>
class DensityMatrixPlan {
 public:
  using memory_space = typename Exec::memory_space;

  /// `batch_bytes`: what T may take (a batch of alpha strings' determinants times its columns), at least one alpha
  /// string's worth.
  DensityMatrixPlan(const Exec& exec, int n, int na, int nb, double batch_bytes = 256e6)
      : exec_(exec), n_(n), na_(na), nb_(nb), batch_bytes_(batch_bytes) {
    const StringLinks a = string_links(n, na), b = string_links(n, nb);
    rows_a_ = a.num_strings;
    rows_b_ = b.num_strings;
    a_links_ = a.per_string;
    b_links_ = b.per_string;
    a_source_ = to_device("a_source", a.source);
    a_pair_ = to_device("a_pair", a.pair);
    a_sign_ = to_device("a_sign", a.sign);
    b_source_ = to_device("b_source", b.source);
    b_pair_ = to_device("b_pair", b.pair);
    b_sign_ = to_device("b_sign", b.sign);
  }

  /// Determinants of the dense layout: C(n, na) C(n, nb).
  std::int64_t size() const { return rows_a_ * rows_b_; }
  std::int64_t alpha_strings() const { return rows_a_; }
  std::int64_t beta_strings() const { return rows_b_; }

  /// The matrices of `c` (size() values in Exec's memory); with `spins`, also per spin (four times the work of the
  /// spin sums alone). std::invalid_argument where c's size is not size().
  template <class CView>
  DensityMatrices compute(const CView& c, bool spins) const {
    if (static_cast<std::int64_t>(c.extent(0)) != size()) {
      throw std::invalid_argument("cispmv::ci::DensityMatrixPlan: a vector of " + std::to_string(c.extent(0)) +
                                  " values for a space of " + std::to_string(size()) + " determinants");
    }
    const int nn = n_ * n_;
    const int width = (spins ? 2 * nn : nn) + 1;
    const std::int64_t per_alpha = rows_b_ * width * static_cast<std::int64_t>(sizeof(double));
    const std::int64_t batch =
        std::clamp<std::int64_t>(static_cast<std::int64_t>(batch_bytes_ / static_cast<double>(per_alpha)), 1, rows_a_);
    // T kept between calls (its allocation, ~0.26 GB, is the plan's largest cost after the first)
    if (t_.extent(0) != static_cast<std::size_t>(batch * rows_b_) || t_.extent(1) != static_cast<std::size_t>(width)) {
      t_ = {};
      t_ = TMatrix(Kokkos::view_alloc(Kokkos::WithoutInitializing, "cispmv::rdm::T"), batch * rows_b_, width);
    }
    const TMatrix t = t_;
    Kokkos::View<double**, Kokkos::LayoutRight, memory_space> g("cispmv::rdm::G", width, width);
    for (std::int64_t a0 = 0; a0 < rows_a_; a0 += batch) {
      const std::int64_t rows = std::min(batch, rows_a_ - a0) * rows_b_;
      impl::RdmReplacements<Exec> f{c,       t,  a_source_, b_source_, a_pair_,  b_pair_, a_sign_,
                                    b_sign_, a0, rows_b_,   a_links_,  b_links_, width,   spins ? nn : 0};
      Kokkos::parallel_for("cispmv::rdm::replacements",
                           Kokkos::RangePolicy<Exec, Kokkos::IndexType<std::int64_t>>(exec_, 0, rows), f);
      gram(t, g, rows, width);
    }
    auto gh = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), g);
    return assemble(gh, spins);
  }

 private:
  template <class T>
  Kokkos::View<const T*, memory_space> to_device(const std::string& name, const std::vector<T>& v) const {
    Kokkos::View<T*, memory_space> d(Kokkos::view_alloc(Kokkos::WithoutInitializing, "cispmv::rdm::" + name), v.size());
    Kokkos::deep_copy(exec_, d, Kokkos::View<const T*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged>(v.data(), v.size()));
    exec_.fence();
    return d;
  }

  // G += T^T T over the batch's rows (RdmGram: teams of 256 on GPUs, of one on CPUs); stretches of rows
  // enough to give every GPU slot or CPU thread a few teams
  template <class TView, class GView>
  void gram(const TView& t, const GView& g, std::int64_t rows, int width) const {
    using Gram = impl::RdmGram<Exec, !impl::is_gpu_space_v<Exec>>;
    const int tiles = (width + Gram::tile - 1) / Gram::tile;
    std::vector<std::int32_t> ti, tj;
    for (int i = 0; i < tiles; ++i) {
      for (int j = i; j < tiles; ++j) {
        ti.push_back(i);
        tj.push_back(j);
      }
    }
    const auto tile_i = to_device("tile_i", ti), tile_j = to_device("tile_j", tj);
    const auto pairs = static_cast<std::int64_t>(ti.size());
    const std::int64_t want = 2 * static_cast<std::int64_t>(exec_.concurrency()) / Gram::team;
    const std::int64_t parts = std::clamp<std::int64_t>(want / pairs, 1, std::max<std::int64_t>(1, rows / 256));
    const std::int64_t stretch = (rows + parts - 1) / parts;
    const Gram f{t, g, tile_i, tile_j, rows, stretch, width};
    typename Gram::Policy policy(exec_, static_cast<int>(pairs * parts), Gram::team);
    Kokkos::parallel_for("cispmv::rdm::gram", policy.set_scratch_size(0, Kokkos::PerTeam(Gram::scratch_bytes())), f);
  }

  // G (upper tiles) to the conventions of the file's header
  template <class GHost>
  DensityMatrices assemble(const GHost& g, bool spins) const {
    const int n = n_, nn = n * n, width = static_cast<int>(g.extent(0)), last = width - 1;
    auto G = [&](int i, int j) { return i <= j ? g(i, j) : g(j, i); };
    auto at2 = [&](int p, int q, int r, int s) {
      return ((static_cast<std::size_t>(p) * n + q) * n + r) * n + static_cast<std::size_t>(s);
    };
    DensityMatrices d;
    d.num_orbitals = n;
    const std::size_t n2 = static_cast<std::size_t>(nn), n4 = n2 * n2;
    d.dm1.assign(n2, 0.0);
    d.dm2.assign(n4, 0.0);
    if (spins) {
      d.dm1a.assign(n2, 0.0);
      d.dm1b.assign(n2, 0.0);
      d.dm2aa.assign(n4, 0.0);
      d.dm2ab.assign(n4, 0.0);
      d.dm2bb.assign(n4, 0.0);
    }
    // <E_rs> at G(last, r n + s); dm1[p][q] = <E_qp>
    for (int p = 0; p < n; ++p) {
      for (int q = 0; q < n; ++q) {
        const std::size_t pq = static_cast<std::size_t>(p * n + q);
        if (spins) {
          d.dm1a[pq] = G(last, q * n + p);
          d.dm1b[pq] = G(last, nn + q * n + p);
          d.dm1[pq] = d.dm1a[pq] + d.dm1b[pq];
        } else {
          d.dm1[pq] = G(last, q * n + p);
        }
      }
    }
    // dm2[p][q][r][s] = <E_pq E_rs> - delta_qr <E_ps> = G(q n + p, r n + s) - delta_qr dm1[s][p], then averaged with
    // its (pq) <-> (rs) partner (equal in exact arithmetic), as PySCF's reorder_rdm does; dm2ab has no delta term
    auto raw = [&](int off, const std::vector<double>& dm, int p, int q, int r, int s) {
      return G(off + q * n + p, off + r * n + s) - (q == r ? dm[static_cast<std::size_t>(s * n + p)] : 0.0);
    };
    for (int p = 0; p < n; ++p) {
      for (int q = 0; q < n; ++q) {
        for (int r = 0; r < n; ++r) {
          for (int s = 0; s < n; ++s) {
            const std::size_t at = at2(p, q, r, s);
            if (spins) {
              d.dm2aa[at] = 0.5 * (raw(0, d.dm1a, p, q, r, s) + raw(0, d.dm1a, r, s, p, q));
              d.dm2bb[at] = 0.5 * (raw(nn, d.dm1b, p, q, r, s) + raw(nn, d.dm1b, r, s, p, q));
              d.dm2ab[at] = G(q * n + p, nn + r * n + s);
            } else {
              d.dm2[at] = 0.5 * (raw(0, d.dm1, p, q, r, s) + raw(0, d.dm1, r, s, p, q));
            }
          }
        }
      }
    }
    if (spins) {  // dm2 = aa + ab + ab^T(2,3,0,1) + bb
      for (int p = 0; p < n; ++p) {
        for (int q = 0; q < n; ++q) {
          for (int r = 0; r < n; ++r) {
            for (int s = 0; s < n; ++s) {
              const std::size_t at = at2(p, q, r, s);
              d.dm2[at] = d.dm2aa[at] + d.dm2ab[at] + d.dm2ab[at2(r, s, p, q)] + d.dm2bb[at];
            }
          }
        }
      }
    }
    return d;
  }

  Exec exec_;
  int n_ = 0, na_ = 0, nb_ = 0;
  double batch_bytes_ = 0;
  std::int64_t rows_a_ = 0, rows_b_ = 0;
  int a_links_ = 0, b_links_ = 0;
  Kokkos::View<const std::int32_t*, memory_space> a_source_, b_source_;
  Kokkos::View<const std::int16_t*, memory_space> a_pair_, b_pair_;
  Kokkos::View<const std::int8_t*, memory_space> a_sign_, b_sign_;
  using TMatrix = Kokkos::View<double**, Kokkos::LayoutLeft, memory_space>;
  mutable TMatrix t_;  ///< T of the last call (compute() is const: a plan is used from one thread at a time)
};

}  // namespace cispmv::ci
