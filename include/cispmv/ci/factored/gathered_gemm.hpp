#pragma once
/// \file ci/factored/gathered_gemm.hpp
/// Dense products on gathered rows and columns of a vector: for each group g of a set,
///   y[cu(i) + cv(j)] += alpha * sum_s sum_k M_s(i, k) x[bu_s(k) + bv_s(j)],   i < m, j < n,
/// where M_s is a dense block (row-major, leading dimension ld_s, K_s columns) and cu, cv, bu_s, bv_s are
/// lists of offsets. A CI vector is a matrix over (alpha string, beta string) whose rows and columns lie at
/// such offsets, so the same-spin terms of the CI Hamiltonian, H_alpha (x) 1 and 1 (x) H_beta, are products of
/// this kind with dense blocks of the string Hamiltonians (one per irrep of the strings): the factored
/// Hamiltonian's `gemm` same-spin pass (ci/factored.hpp), which reads each list entry once per tile instead of
/// once per determinant.
///
/// A team forms a 64 x 64 tile of one group's output from chunks of 16 of k: the chunk of M and of x staged in
/// team scratch, each of the team's 4 warps a 32 x 32 part of the tile by 8x8x4 products (impl::warp_mma_8x8x4:
/// DMMA on CUDA GPUs of compute capability 8.0 or later; on CPUs one thread holds the 4 warps' lanes and forms the
/// same products in the same fragments, so that the CPU backends test the GPU's indexing). Each output entry
/// belongs to one group and one tile, so the adds into y need no atomics (unless other kernels add into y at the
/// same time: `atomic`); groups whose outputs overlap go to different launches.

#include <Kokkos_Core.hpp>

#include "cispmv/ci/factored/warp_mma.hpp"
#include "cispmv/impl/backend.hpp"
#include "cispmv/impl/convert_helpers.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

// loops over a thread's staged values, tiles and lanes: unrolled on the device (registers), not on CPUs (where a
// thread holds 4 warps' lanes)
#if defined(__CUDA_ARCH__)
#define CISPMV_GATHERED_UNROLL _Pragma("unroll")
#else
#define CISPMV_GATHERED_UNROLL
#endif

namespace cispmv::impl {

/// A set of gathered products on the host (see the file's comment). Group g: rows i < group_m[g] at
/// index[group_cu[g] + i], columns j < group_n[g] at index[group_cv[g] + j], segments
/// [group_seg[g], group_seg[g + 1]). Segment s: M_s(i, k) = mat[seg_mat[s] + i * seg_ld[s] + k] for k < seg_k[s],
/// x's entry (k, j) at index[seg_bu[s] + k] + index[seg_bv[s] + j]; seg_along_k: the entries of consecutive k lie
/// closer together than those of consecutive j (the staging's threads go along k). Tasks: (group, first row,
/// first column) of a tile, launch l the tasks [launch_ptr[l], launch_ptr[l + 1]).
struct GatheredGemmHost {
  std::vector<double> mat;
  std::vector<std::int64_t> index;
  std::vector<std::int32_t> group_m, group_n, group_seg{0};
  std::vector<std::int64_t> group_cu, group_cv;
  std::vector<std::int64_t> seg_mat, seg_bu, seg_bv;
  std::vector<std::int32_t> seg_ld, seg_k;
  std::vector<std::uint8_t> seg_along_k;
  std::vector<std::int32_t> task_group, task_i, task_j;
  std::vector<std::int32_t> launch_ptr{0};
  std::size_t launch_group0 = 0;  ///< the first group of the launch being built
  double flops = 0.0;             ///< 2 m K n summed over the groups' segments: the dense products' work

  static constexpr int tile_m = 64, tile_n = 64;
  std::size_t groups() const { return group_m.size(); }
  std::size_t launches() const { return launch_ptr.size() - 1; }
  /// The tasks of the smallest launch of `launch_ptr` (0 without launches).
  static int smallest_launch(const std::vector<std::int32_t>& launch_ptr) {
    int least = 0;
    for (std::size_t l = 0; l + 1 < launch_ptr.size(); ++l) {
      const int count = launch_ptr[l + 1] - launch_ptr[l];
      least = l == 0 ? count : std::min(least, count);
    }
    return least;
  }
  /// Opens group g of the current launch (rows at cu, columns at cv: offsets into `index`).
  void add_group(int m, int n, std::int64_t cu, std::int64_t cv) {
    if (m <= 0 || n <= 0) throw std::logic_error("cispmv::impl::GatheredGemmHost: a group of no rows or columns");
    group_m.push_back(m);
    group_n.push_back(n);
    group_cu.push_back(cu);
    group_cv.push_back(cv);
    group_seg.push_back(group_seg.back());
  }
  /// Segments a group has at most (the kernel stages a group's segments and their column offsets in team scratch,
  /// within the 40 KB of Kokkos 3.4's level 0 beside its two buffers): the same-spin products' groups have one
  /// (H_alpha) or one per rank within 2 of the output's (H_beta, whose entries move 2 electrons at most).
  static constexpr int max_segments = 5;
  /// A segment of the last group: k >= 1, the group's first segment's along_k, at most max_segments of them
  /// (std::logic_error otherwise).
  void add_segment(std::int64_t at, int ld, int k, std::int64_t bu, std::int64_t bv, bool along_k) {
    const auto count = groups() == 0 ? -1 : group_seg.back() - group_seg[group_seg.size() - 2];
    if (count < 0 || count >= max_segments || k <= 0 || (count > 0 && (seg_along_k.back() != 0) != along_k)) {
      throw std::logic_error(
          "cispmv::impl::GatheredGemmHost: a segment of no k, of another along_k than its group's, "
          "before any group, or past " +
          std::to_string(max_segments) + " in a group");
    }
    seg_mat.push_back(at);
    seg_ld.push_back(ld);
    seg_k.push_back(k);
    seg_bu.push_back(bu);
    seg_bv.push_back(bv);
    seg_along_k.push_back(along_k ? 1 : 0);
    ++group_seg.back();
    flops += 2.0 * group_m.back() * k * group_n.back();
  }
  /// Offsets appended to `index`; returns where they start.
  std::int64_t add_index(const std::vector<std::int64_t>& v) {
    const auto at = static_cast<std::int64_t>(index.size());
    index.insert(index.end(), v.begin(), v.end());
    return at;
  }
  /// Closes the current launch: the tiles of its groups become its tasks.
  void end_launch() {
    for (std::size_t g = launch_group0; g < groups(); ++g) {
      if (group_seg[g] == group_seg[g + 1]) continue;  // (no segment: nothing to add)
      for (int i = 0; i < group_m[g]; i += tile_m) {
        for (int j = 0; j < group_n[g]; j += tile_n) {
          task_group.push_back(static_cast<std::int32_t>(g));
          task_i.push_back(i);
          task_j.push_back(j);
        }
      }
    }
    launch_ptr.push_back(static_cast<std::int32_t>(task_group.size()));
    launch_group0 = groups();
  }
  std::size_t bytes() const {
    return mat.size() * 8 + index.size() * 8 + group_m.size() * 28 + seg_mat.size() * 33 + task_group.size() * 12;
  }
};

/// GatheredGemmHost in the memory space Mem.
template <class Mem>
struct GatheredGemmData {
  Kokkos::View<double*, Mem> mat;
  Kokkos::View<std::int64_t*, Mem> index, group_cu, group_cv, seg_mat, seg_bu, seg_bv;
  Kokkos::View<std::int32_t*, Mem> group_m, group_n, group_seg, seg_ld, seg_k, task_group, task_i, task_j;
  Kokkos::View<std::uint8_t*, Mem> seg_along_k;

  GatheredGemmData() = default;
  explicit GatheredGemmData(const GatheredGemmHost& h)
      : mat(view_of<double, Mem>("cispmv::gathered_gemm::mat", h.mat)),
        index(view_of<std::int64_t, Mem>("cispmv::gathered_gemm::index", h.index)),
        group_cu(view_of<std::int64_t, Mem>("cispmv::gathered_gemm::group_cu", h.group_cu)),
        group_cv(view_of<std::int64_t, Mem>("cispmv::gathered_gemm::group_cv", h.group_cv)),
        seg_mat(view_of<std::int64_t, Mem>("cispmv::gathered_gemm::seg_mat", h.seg_mat)),
        seg_bu(view_of<std::int64_t, Mem>("cispmv::gathered_gemm::seg_bu", h.seg_bu)),
        seg_bv(view_of<std::int64_t, Mem>("cispmv::gathered_gemm::seg_bv", h.seg_bv)),
        group_m(view_of<std::int32_t, Mem>("cispmv::gathered_gemm::group_m", h.group_m)),
        group_n(view_of<std::int32_t, Mem>("cispmv::gathered_gemm::group_n", h.group_n)),
        group_seg(view_of<std::int32_t, Mem>("cispmv::gathered_gemm::group_seg", h.group_seg)),
        seg_ld(view_of<std::int32_t, Mem>("cispmv::gathered_gemm::seg_ld", h.seg_ld)),
        seg_k(view_of<std::int32_t, Mem>("cispmv::gathered_gemm::seg_k", h.seg_k)),
        task_group(view_of<std::int32_t, Mem>("cispmv::gathered_gemm::task_group", h.task_group)),
        task_i(view_of<std::int32_t, Mem>("cispmv::gathered_gemm::task_i", h.task_i)),
        task_j(view_of<std::int32_t, Mem>("cispmv::gathered_gemm::task_j", h.task_j)),
        seg_along_k(view_of<std::uint8_t, Mem>("cispmv::gathered_gemm::seg_along_k", h.seg_along_k)) {}
};

/// The products of one launch: a team per task (a 64 x 64 tile of a group's output), 128 threads on GPUs (4
/// warps), one thread on CPUs. Chunks of 16 of k pass through two buffers in team scratch: while the products of
/// one chunk are formed, the next one's entries of M and x are on their way into the other buffer (on CUDA GPUs of
/// compute capability 8.0 or later asynchronous copies, impl::copy_async_8, which hold no registers; elsewhere
/// copies at once). The offsets that address x are read before they are needed: every segment's column offsets
/// (bv) staged in scratch at the start, each thread's row offset (bu) of the chunk after the next held in a
/// register, so that a chunk's copies wait on no other load (H200: with both offsets read from global
/// memory beside the loads of x, the address arithmetic waiting on them carried most of the stalls: the
/// next chunk held in registers took 168 of them and left 15 % occupancy, its stores into scratch waiting on its
/// loads). x's chunk is staged along k (k = e % 16, j = e / 16) where consecutive k lie closer, else in runs of 8
/// along j (k = e / 8 % 16, j = e % 8 + 8 (e / 128)), so that on a GPU each thread's entries of a chunk share one k.
template <class Exec, class X, class Y>
struct GatheredGemmKernel {
  using Mem = typename Exec::memory_space;
  // (at most 128 registers: the accumulators and the fragments; 4 teams of 41 KB scratch an SM)
  using Policy = Kokkos::TeamPolicy<Exec, Kokkos::LaunchBounds<128, 4>>;
  using Member = typename Policy::member_type;
  template <class T>
  using ScratchOf = Kokkos::View<T*, typename Exec::scratch_memory_space, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  static constexpr int Lanes = warp_lanes<Exec>;
  static constexpr int TM = GatheredGemmHost::tile_m, TN = GatheredGemmHost::tile_n, TK = 16;
  // scratch rows padded so that a half-warp's fragment loads fall on distinct banks (M: rows 160 bytes apart,
  // x: 544)
  static constexpr int LDM = TK + 4, LDX = TN + 4;
  static constexpr int BufM = TM * LDM, BufX = TK * LDX;  // a buffer's entries of M and of x
  static constexpr int LDO = TN + 4;                      // the tile's sums in scratch at the end (in the buffers)
  static constexpr int Team = Lanes == 1 ? 128 : 1;       // threads of a team
  static constexpr int WarpsPerThread = Lanes == 1 ? 1 : 4;
  static constexpr int PerThread = TM * TK / Team;         // staged entries of M (and of x) a thread
  static constexpr int RowsPerThread = Team > 1 ? 1 : TK;  // distinct k of a thread's entries of x in a chunk
  static constexpr int MaxSeg = GatheredGemmHost::max_segments;
  static_assert(TM * TK == TK * TN && TN == 64 && TK == 16, "the staging's maps assume 64 x 16 chunks");
  // (copy() takes the addresses of x's entries: a View whose entries are lvalues in memory, not a RandomAccess one)
  static_assert(std::is_lvalue_reference_v<decltype(std::declval<const X&>()(0))>,
                "cispmv::impl::GatheredGemmKernel: x must be a View whose entries are addressable");
  static_assert(TM * LDO <= 2 * (BufM + BufX) && TM + TN <= GatheredGemmHost::max_segments * TN &&
                    TM * TN % (8 * Team) == 0,
                "the tile's sums fit the buffers, its offsets the column offsets' place, its entries 8 a thread");

  // a segment of a group, staged in team scratch for the task (its offsets read from there, not from global
  // memory, on the way to each chunk's copies)
  struct alignas(8) Segment {
    std::int64_t at, bu;  // M's first entry, the row offsets' first
    std::int32_t ld, k;   // M's leading dimension, the segment's k
  };
  // (Kokkos 3.4's level 0 on CUDA is 40 KB: the two buffers, the column offsets and the segments, each view with
  // one element of alignment, must fit; so a larger max_segments fails here, not at run time)
  static_assert(8 * (2 * (BufM + BufX) + 1) + 8 * (MaxSeg * TN + 1) + sizeof(Segment) * (MaxSeg + 1) <= 40 * 1024,
                "the kernel's scratch exceeds 40 KB");

  GatheredGemmData<Mem> g;
  X x;
  Y y;
  double alpha = 1.0;
  int task0 = 0;
  int level = 0;        // scratch level (0 on GPUs)
  bool atomic = false;  // adds into y atomic (other kernels add into the same entries at the same time)

  static int team_size() { return Team; }
  static std::size_t scratch_bytes() {
    return ScratchOf<double>::shmem_size(static_cast<std::size_t>(2 * (BufM + BufX))) +
           ScratchOf<std::int64_t>::shmem_size(static_cast<std::size_t>(MaxSeg * TN)) +
           ScratchOf<Segment>::shmem_size(static_cast<std::size_t>(MaxSeg));
  }

  // x's chunk entry e: its k and j in the chunk
  template <bool AlongK>
  KOKKOS_FORCEINLINE_FUNCTION static int k_of(int e) {
    return AlongK ? e % TK : (e / 8) % TK;
  }
  template <bool AlongK>
  KOKKOS_FORCEINLINE_FUNCTION static int j_of(int e) {
    return AlongK ? e / TK : e % 8 + 8 * (e / 128);
  }

  // a chunk of k: segment s (of the task's group, in scratch), first k
  struct Chunk {
    int s, k;
  };
  KOKKOS_FORCEINLINE_FUNCTION static Chunk next(Chunk c, const Segment* segs) {
    c.k += TK;
    if (c.k >= segs[c.s].k) {
      ++c.s;
      c.k = 0;
    }
    return c;
  }
  // this thread's row offsets bu of chunk c (k = k_of of its entries; the segment's last past its k, unused), read
  // without a branch on the segment's k, so that the warp does not wait for it here
  template <bool AlongK>
  KOKKOS_FORCEINLINE_FUNCTION void row_offsets(Chunk c, int ns, int t, const Segment* segs,
                                               std::int64_t (&u)[RowsPerThread]) const {
    if (c.s >= ns) return;
    const std::int64_t bu = segs[c.s].bu;
    const int last = segs[c.s].k - 1;
    CISPMV_GATHERED_UNROLL
    for (int q = 0; q < RowsPerThread; ++q) {
      const int k = c.k + (Team > 1 ? k_of<AlongK>(t) : q);
      u[q] = g.index(bu + (k < last ? k : last));
    }
  }
  // this thread's entries of chunk c copied into the buffer (ms, xs): M's (row e / TK, column e % TK) and x's
  // (k_of(e), j_of(e)) for e = t + Team r, 0 past the segment's k or the group's rows and columns; x's through its
  // row offsets u and the segment's column offsets vs. In a team of 128 threads (GPUs) a thread's entries lie in
  // one column of M's chunk (t % 16) and in one row of x's (k_of(t)), 8 rows (columns) apart: their validity and
  // addresses are formed once a chunk and stepped (the general form took most of the kernel's instructions)
  template <bool AlongK>
  KOKKOS_FORCEINLINE_FUNCTION void copy(Chunk c, int i0, int j0, int m, int n, int t, const Segment* segs,
                                        const std::int64_t (&u)[RowsPerThread], const std::int64_t* vs, double* ms,
                                        double* xs) const {
    const std::int64_t at = segs[c.s].at;
    const int ld = segs[c.s].ld, K = segs[c.s].k;
    const std::int64_t* const v = vs + c.s * TN;
    const double* const m0 = g.mat.data();
    if constexpr (Team == 128) {
      // rows of M between a thread's entries (Team / TK), and columns of x (along k: Team / TK; else the 8 of
      // j_of's 8 (e / 128), one a step of r)
      constexpr int Step = 8;
      static_assert(Team / TK == Step, "a thread's entries 8 rows and 8 columns apart");
      const int i = t / TK, k = t % TK, kx = k_of<AlongK>(t), jx = j_of<AlongK>(t);
      const bool k_in = c.k + k < K, kx_in = c.k + kx < K;
      const double* const pm = m0 + at + static_cast<std::int64_t>(i0 + i) * ld + c.k + k;
      double* const dm = ms + i * LDM + k;
      double* const dx = xs + kx * LDX + jx;
      CISPMV_GATHERED_UNROLL
      for (int r = 0; r < PerThread; ++r) {
        const bool in_m = k_in && i0 + i + Step * r < m;
        copy_async_8(dm + Step * r * LDM, in_m ? pm + static_cast<std::int64_t>(Step * r) * ld : m0, in_m);
        const bool in_x = kx_in && j0 + jx + Step * r < n;
        copy_async_8(dx + Step * r, in_x ? &x(u[0] + v[jx + Step * r]) : m0, in_x);
      }
    } else {
      CISPMV_GATHERED_UNROLL
      for (int r = 0; r < PerThread; ++r) {
        const int e = t + Team * r;
        const int i = e / TK, k = e % TK;
        const bool in_m = i0 + i < m && c.k + k < K;
        copy_async_8(ms + i * LDM + k, in_m ? &g.mat(at + static_cast<std::int64_t>(i0 + i) * ld + c.k + k) : m0, in_m);
        const int kx = k_of<AlongK>(e), jx = j_of<AlongK>(e);
        const bool in_x = c.k + kx < K && j0 + jx < n;
        copy_async_8(xs + kx * LDX + jx, in_x ? &x(u[Team > 1 ? 0 : kx] + v[jx]) : m0, in_x);
      }
    }
    copy_async_commit();
  }
  // a warp's 32 x 32 part of the tile (rows wi.., columns wj..) += its chunk's products: the 8 x 8 tiles within
  // rows_left and cols_left (every one where Full: no test between the products, which the compiler then need not
  // reconverge: a WARPSYNC before each DMMA)
  template <bool Full>
  KOKKOS_FORCEINLINE_FUNCTION static void multiply(const double* ms, const double* xs, int lane0, int wi, int wj,
                                                   int rows_left, int cols_left, double (&acc)[4][4][Lanes][2]) {
    CISPMV_GATHERED_UNROLL
    for (int kk = 0; kk < TK; kk += 4) {
      // A(l / 4, l % 4) of each of the warp's 4 row tiles, B(l % 4, l / 4) of each of its 4 column tiles
      double fa[4][Lanes], fb[4][Lanes];
      CISPMV_GATHERED_UNROLL
      for (int a = 0; a < 4; ++a) {
        CISPMV_GATHERED_UNROLL
        for (int l = 0; l < Lanes; ++l) {
          const int lane = lane0 + l;
          fa[a][l] = ms[(wi + 8 * a + lane / 4) * LDM + kk + lane % 4];
          fb[a][l] = xs[(kk + lane % 4) * LDX + wj + 8 * a + lane / 4];
        }
      }
      CISPMV_GATHERED_UNROLL
      for (int a = 0; a < 4; ++a) {
        CISPMV_GATHERED_UNROLL
        for (int bb = 0; bb < 4; ++bb) {
          if (Full || (8 * a < rows_left && 8 * bb < cols_left)) warp_mma_8x8x4(fa[a], fb[bb], acc[a][bb]);
        }
      }
    }
  }

  KOKKOS_INLINE_FUNCTION void operator()(const Member& member) const {
    const int task = task0 + member.league_rank();
    const int grp = g.task_group(task);
    const int t = member.team_rank();
    const ScratchOf<double> buf_view(member.team_scratch(level), static_cast<std::size_t>(2 * (BufM + BufX)));
    const ScratchOf<std::int64_t> vs_view(member.team_scratch(level), static_cast<std::size_t>(MaxSeg * TN));
    const ScratchOf<Segment> segs_view(member.team_scratch(level), static_cast<std::size_t>(MaxSeg));
    // (the staging's map is the same for every segment of a group)
    if (g.seg_along_k(g.group_seg(grp)) != 0) {
      run<true>(member, task, grp, t, in_shared(buf_view.data()), in_shared(vs_view.data()),
                in_shared(segs_view.data()));
    } else {
      run<false>(member, task, grp, t, in_shared(buf_view.data()), in_shared(vs_view.data()),
                 in_shared(segs_view.data()));
    }
  }

  // the task's tile, with buffer b at buf + b (BufM + BufX) (M, then x after it), every segment's column offsets in vs
  // and the segments in segs
  template <bool AlongK>
  KOKKOS_FORCEINLINE_FUNCTION void run(const Member& member, int task, int grp, int t, double* const buf,
                                       std::int64_t* const vs, Segment* const segs) const {
    const int i0 = g.task_i(task), j0 = g.task_j(task);
    const int m = g.group_m(grp), n = g.group_n(grp);
    const int lane0 = Lanes == 1 ? t % 32 : 0;
    const int warp0 = Lanes == 1 ? t / 32 : 0;  // the first of this thread's warps (2 x 2 warps: 32 x 32 each)
    const int s0 = g.group_seg(grp), ns = g.group_seg(grp + 1) - s0;
    for (int s = t; s < ns; s += Team) {
      segs[s] = Segment{g.seg_mat(s0 + s), g.seg_bu(s0 + s), g.seg_ld(s0 + s), g.seg_k(s0 + s)};
    }
    // every segment's column offsets (0 past the group's columns)
    for (int e = t; e < ns * TN; e += Team) {
      const int j = e % TN;
      vs[e] = j0 + j < n ? g.index(g.seg_bv(s0 + e / TN) + j0 + j) : 0;
    }

    double acc[WarpsPerThread][4][4][Lanes][2];
    CISPMV_GATHERED_UNROLL
    for (int w = 0; w < WarpsPerThread; ++w) {
      CISPMV_GATHERED_UNROLL
      for (int a = 0; a < 4; ++a) {
        CISPMV_GATHERED_UNROLL
        for (int b = 0; b < 4; ++b) {
          CISPMV_GATHERED_UNROLL
          for (int l = 0; l < Lanes; ++l) acc[w][a][b][l][0] = acc[w][a][b][l][1] = 0.0;
        }
      }
    }
    member.team_barrier();  // (the segments and column offsets in scratch)
    // current: the chunk whose products are formed, in buffer b; ahead: the one after it, being copied into the
    // other buffer; u: the row offsets of the chunk after that
    Chunk current{0, 0};
    std::int64_t u[RowsPerThread] = {};
    row_offsets<AlongK>(current, ns, t, segs, u);
    copy<AlongK>(current, i0, j0, m, n, t, segs, u, vs, buf, buf + BufM);
    Chunk ahead = next(current, segs);
    row_offsets<AlongK>(ahead, ns, t, segs, u);
    int b = 0;
    while (current.s < ns) {
      double* const other = buf + (b ^ 1) * (BufM + BufX);
      if (ahead.s < ns) {
        copy<AlongK>(ahead, i0, j0, m, n, t, segs, u, vs, other, other + BufM);
        const Chunk after = next(ahead, segs);
        row_offsets<AlongK>(after, ns, t, segs, u);
        copy_async_wait<1>();  // (the current chunk's copies are in; the ahead one's may still be on their way)
      } else {
        copy_async_wait<0>();
      }
      member.team_barrier();  // (every thread's copies of the current chunk are in scratch)
      const double* const ms = buf + b * (BufM + BufX);
      const double* const xs = ms + BufM;
      CISPMV_GATHERED_UNROLL
      for (int w = 0; w < WarpsPerThread; ++w) {
        const int warp = warp0 + w, wi = 32 * (warp / 2), wj = 32 * (warp % 2);
        // the warp's 8 x 8 tiles past the group's rows or columns are not formed (the same for every lane: the
        // small groups of a launch cost their own tiles, not 64 x 64)
        const int rows_left = m - i0 - wi, cols_left = n - j0 - wj;
        if (rows_left >= 32 && cols_left >= 32) {
          warp_sync();
          multiply<true>(ms, xs, lane0, wi, wj, rows_left, cols_left, acc[w]);
        } else if (rows_left > 0 && cols_left > 0) {
          warp_sync();
          multiply<false>(ms, xs, lane0, wi, wj, rows_left, cols_left, acc[w]);
        }
      }
      member.team_barrier();  // (the products have read buffer b before the next round copies into it)
      current = ahead;
      if (ahead.s < ns) ahead = next(ahead, segs);
      b ^= 1;
    }
    // the tile's sums into scratch (the buffers are free: the last round's barrier has passed), D(l / 4, 2 (l % 4) + c)
    // of each 8 x 8 product at its row and column; its rows' and columns' offsets beside them (where the column
    // offsets were)
    double* const out = buf;
    CISPMV_GATHERED_UNROLL
    for (int w = 0; w < WarpsPerThread; ++w) {
      const int warp = warp0 + w, wi = 32 * (warp / 2), wj = 32 * (warp % 2);
      CISPMV_GATHERED_UNROLL
      for (int a = 0; a < 4; ++a) {
        CISPMV_GATHERED_UNROLL
        for (int bb = 0; bb < 4; ++bb) {
          CISPMV_GATHERED_UNROLL
          for (int l = 0; l < Lanes; ++l) {
            const int lane = lane0 + l;
            CISPMV_GATHERED_UNROLL
            for (int c = 0; c < 2; ++c) {
              out[(wi + 8 * a + lane / 4) * LDO + wj + 8 * bb + 2 * (lane % 4) + c] = acc[w][a][bb][l][c];
            }
          }
        }
      }
    }
    const std::int64_t cu = g.group_cu(grp), cv = g.group_cv(grp);
    std::int64_t* const rows = vs;
    std::int64_t* const cols = vs + TM;
    for (int e = t; e < TM + TN; e += Team) {
      if (e < TM) {
        rows[e] = i0 + e < m ? g.index(cu + i0 + e) : -1;
      } else {
        cols[e - TM] = j0 + e - TM < n ? g.index(cv + j0 + e - TM) : -1;
      }
    }
    member.team_barrier();
    if (atomic) {  // y += alpha * the tile by atomic adds (a reduction each: no old value waited for)
      for (int r = 0; r < TM * TN / Team; ++r) {
        const int e = t + Team * r;
        const std::int64_t row = rows[e / TN], col = cols[e % TN];
        if (row >= 0 && col >= 0) Kokkos::atomic_add(&y(row + col), alpha * out[(e / TN) * LDO + e % TN]);
      }
      return;
    }
    // y += alpha * the tile, a thread's entries (row e / TN, column e % TN for e = t + Team r) eight at a time: their
    // old values read before the first of their stores (the stores could alias later loads of y, so the compiler
    // keeps them in order: the adds one after the other, each waiting on its load, carried a fifth of the
    // stalls); consecutive threads at consecutive columns, which lie next to each other in y within a block of strings
    for (int r0 = 0; r0 < TM * TN / Team; r0 += 8) {
      std::int64_t at[8];
      double old[8];
      CISPMV_GATHERED_UNROLL
      for (int q = 0; q < 8; ++q) {
        const int e = t + Team * (r0 + q);
        const std::int64_t row = rows[e / TN], col = cols[e % TN];
        at[q] = row < 0 || col < 0 ? -1 : row + col;
        old[q] = at[q] >= 0 ? y(at[q]) : 0.0;
      }
      CISPMV_GATHERED_UNROLL
      for (int q = 0; q < 8; ++q) {
        const int e = t + Team * (r0 + q);
        if (at[q] >= 0) y(at[q]) = old[q] + alpha * out[(e / TN) * LDO + e % TN];
      }
    }
  }
};

/// The tasks [first, first + count) of the set g (one launch of GatheredGemmHost::launch_ptr), on exec: y[...] +=
/// alpha * their products (see the file's comment), atomically where `atomic` (other kernels may add into the same
/// entries of y at the same time). CUDA and CPUs (impl::warp_mma_runs).
template <class Exec, class X, class Y>
void gathered_gemm(const Exec& exec, const GatheredGemmData<typename Exec::memory_space>& g, int first, int count,
                   double alpha, const X& x, const Y& y, bool atomic = false) {
  static_assert(warp_mma_runs<Exec>, "cispmv::impl::gathered_gemm: CUDA GPUs and CPUs");
  using K = GatheredGemmKernel<Exec, X, Y>;
  if (count == 0) return;
  typename K::Policy policy(exec, count, K::team_size());
  // level 0 on GPUs (shared memory: the copies into it are asynchronous); on CPUs, whose level 0 is smaller (32 KB
  // under Kokkos 3.4), either
  const bool fits = K::scratch_bytes() <= static_cast<std::size_t>(K::Policy::scratch_size_max(0));
  if (!fits && is_gpu_space_v<Exec>) {
    throw std::logic_error("cispmv::impl::gathered_gemm: the kernel's " + std::to_string(K::scratch_bytes()) +
                           " bytes of team scratch exceed level 0's " + std::to_string(K::Policy::scratch_size_max(0)));
  }
  const int level = fits ? 0 : 1;
  Kokkos::parallel_for("cispmv::gathered_gemm",
                       light_launch(policy.set_scratch_size(level, Kokkos::PerTeam(K::scratch_bytes()))),
                       K{g, x, y, alpha, first, level, atomic});
}

}  // namespace cispmv::impl

#undef CISPMV_GATHERED_UNROLL
