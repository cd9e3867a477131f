#pragma once
/// \file solvers/davidson_kernels.hpp
/// The vector kernels of the Davidson eigensolver (solvers/davidson.hpp), on any backend: dot products of many
/// columns in one launch (multi_dot, block_dots), the classical Gram-Schmidt projections (subtract_projection,
/// subtract_block_projection), the Ritz vectors and residuals (combine), a restart's basis in place
/// (combine_in_place), start vectors and rows (start_offers) and the
/// diagonal preconditioner. The basis is a LayoutLeft View (contiguous columns); every sum is formed in a fixed order,
/// so a solve's result does not depend on the thread count. The measurements behind each shape are H200 and 2-core
/// figures of 10 roots of the all-electron H2O/6-31G full CI.

#include <Kokkos_Core.hpp>

#include "cispmv/impl/backend.hpp"
#include "cispmv/impl/hash.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <queue>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace cispmv::solvers::impl {

template <class Exec, class X, class Y>
double dot(const Exec& exec, const X& x, const Y& y) {
  double sum = 0.0;
  Kokkos::parallel_reduce(
      "cispmv::davidson::dot", Kokkos::RangePolicy<Exec>(exec, 0, x.extent(0)),
      KOKKOS_LAMBDA(const std::size_t i, double& s) { s += x(i) * y(i); }, sum);
  return sum;
}

/// Rows of t a CPU thread updates at once in subtract_projection (16 KB of t: it stays in L1).
inline constexpr std::size_t projection_chunk_rows = 2048;

/// CPUs: f(begin, end) for each chunk [begin, end) of projection_chunk_rows rows of [0, n), a thread
/// per chunk: the walk of the Davidson's kernels over the columns of its LayoutLeft blocks on CPUs
/// (each column streams; the chunk's rows of what is written stay in cache).
template <class Exec, class F>
void for_row_chunks(const Exec& exec, const char* label, const std::size_t n, const F& f) {
  Kokkos::parallel_for(
      label, Kokkos::RangePolicy<Exec>(exec, 0, (n + projection_chunk_rows - 1) / projection_chunk_rows),
      KOKKOS_LAMBDA(const std::size_t b) {
        const std::size_t begin = b * projection_chunk_rows;
        f(begin, n - begin < projection_chunk_rows ? n : begin + projection_chunk_rows);
      });
}

/// t -= V(:, 0:m) h: one projection of classical Gram-Schmidt, in a single pass over t. GPUs: a thread
/// per row (consecutive rows of a column are coalesced). CPUs: chunks of rows, column by column, so that
/// each column of the LayoutLeft basis streams contiguously; a row at a time would gather from m
/// columns m pages apart (perf, 2 cores, 10 roots: 32 % of the run, more than the products).
template <class Exec, class Basis, class H, class T>
void subtract_projection(const Exec& exec, const Basis& V, const H& h, const int m, const T& t) {
  if constexpr (cispmv::impl::is_gpu_space_v<Exec>) {
    Kokkos::parallel_for(
        "cispmv::davidson::project_out", Kokkos::RangePolicy<Exec>(exec, 0, t.extent(0)),
        KOKKOS_LAMBDA(const std::size_t i) {
          double s = 0.0;
          for (int j = 0; j < m; ++j) s += V(i, j) * h(j);
          t(i) -= s;
        });
  } else {
    for_row_chunks(
        exec, "cispmv::davidson::project_out", t.extent(0),
        KOKKOS_LAMBDA(const std::size_t begin, const std::size_t end) {
          for (int j = 0; j < m; ++j) {
            const double hj = h(j);
            for (std::size_t i = begin; i < end; ++i) t(i) -= V(i, j) * hj;
          }
        });
  }
}

template <class Exec, class X>
void scale(const Exec& exec, const double alpha, const X& x) {
  Kokkos::parallel_for(
      "cispmv::davidson::scale", Kokkos::RangePolicy<Exec>(exec, 0, x.extent(0)),
      KOKKOS_LAMBDA(const std::size_t i) { x(i) *= alpha; });
}

/// Rows one team of multi_dot sums (a chunk); the chunks' partial sums are added on the host. Small
/// enough that a few columns still make hundreds of teams (H200, ncu, 10 roots of the all-electron full
/// CI: with 65,536 rows a dot over 1-14 columns took ~0.5 ms, a few dozen teams on 132 SMs).
inline constexpr std::size_t dot_chunk_rows = 8192;

/// partial(c, b) = the sum over the rows i of chunk b of P(i, c) * Q(i, c), or of P(i, c) * q(i) when
/// `q_is_vector`: one team per (chunk, column), chunk-major, so that consecutive teams (one host
/// thread's share) reuse the chunk's q in cache. It replaces a single array reduction of up to
/// max_sub values per row, whose per-thread arrays and per-block reduction of 80 values made it the
/// largest cost of a 10-root Davidson on a GPU outside its products.
template <class Exec, class Basis, class Vec, class Partial>
struct ChunkDots {
  using member_type = typename Kokkos::TeamPolicy<Exec>::member_type;
  Basis P, Q;
  Vec q;
  Partial partial;
  bool q_is_vector;
  int count;
  std::size_t rows;

  KOKKOS_INLINE_FUNCTION void operator()(const member_type& team) const {
    const int c = team.league_rank() % count;
    const int b = team.league_rank() / count;
    const std::size_t begin = static_cast<std::size_t>(b) * dot_chunk_rows;
    const std::size_t end = rows - begin < dot_chunk_rows ? rows : begin + dot_chunk_rows;
    double s = 0.0;
    Kokkos::parallel_reduce(
        Kokkos::TeamThreadRange(team, begin, end),
        [&](const std::size_t i, double& acc) { acc += P(i, c) * (q_is_vector ? q(i) : Q(i, c)); }, s);
    Kokkos::single(Kokkos::PerTeam(team), [&]() { partial(c, b) = s; });
  }
};

/// out[c] = sum_i P(i, c) * Q(i, c) for c < count when `q_is_vector` is false, else sum_i P(i, c) *
/// q(i): all the dot products one step needs (a row of V^T A V, V^T t, the residual norms) in one
/// kernel (ChunkDots); `partial` (>= count x chunks, device) and its host mirror are the caller's
/// workspace. The chunks are added in order: the result does not depend on the thread count.
template <class Exec, class Basis, class Vec, class Partial>
std::vector<double> multi_dot(const Exec& exec, const Basis& P, const Basis& Q, const Vec& q, int count,
                              bool q_is_vector, const Partial& partial, const typename Partial::HostMirror& host) {
  std::vector<double> out(static_cast<std::size_t>(count), 0.0);
  const std::size_t rows = P.extent(0);
  const int chunks = static_cast<int>((rows + dot_chunk_rows - 1) / dot_chunk_rows);
  if (count == 0 || chunks == 0) return out;
  Kokkos::parallel_for("cispmv::davidson::multi_dot", Kokkos::TeamPolicy<Exec>(exec, count * chunks, Kokkos::AUTO),
                       ChunkDots<Exec, Basis, Vec, Partial>{P, Q, q, partial, q_is_vector, count, rows});
  // the rows of the sums asked for, not the whole workspace (max_sub rows of a chunk per 8,192 rows: 6.6 MB for 15
  // columns of 451M rows)
  const auto used = Kokkos::make_pair(0, count);
  Kokkos::deep_copy(exec, Kokkos::subview(host, used, Kokkos::ALL()), Kokkos::subview(partial, used, Kokkos::ALL()));
  exec.fence();
  for (int c = 0; c < count; ++c) {
    for (int b = 0; b < chunks; ++b) out[static_cast<std::size_t>(c)] += host(c, b);
  }
  return out;
}

/// Columns of Q one launch of block_dots (and of subtract_block_projection) takes: their sums stay in
/// registers.
inline constexpr int block_dot_columns = 16;

/// Rows of one chunk of block_dots: a GPU team per (chunk, 4 columns of P), a CPU thread per chunk. Fixed,
/// so the sums do not depend on the thread count; small enough that on a GPU the chunks of Q that the
/// resident teams read (16 columns x 64 KB each) stay in L2, where each team re-reads its chunk's.
inline constexpr std::size_t block_dot_chunk_rows = 8192;

/// Columns of P one GPU team of block_dots takes: each Q(i, c) it loads feeds that many sums.
inline constexpr int block_dot_p_columns_per_team = 4;

/// CUDA: threads per team of block_dots (a multiple of the warp: the warp butterfly of BlockDotsTeam).
inline constexpr int block_dot_team_size = 256;

/// GPUs: the sums of block_dots over chunk league_rank / groups for columns 4g .. 4g + 3 of P (g =
/// league_rank % groups): each thread keeps 4 x `columns` sums over its rows (Q(i, c) loaded once for
/// the 4 columns of P), then the team adds them up. Every loop over the sums has constant bounds and is
/// unrolled: an index known only at run time puts the whole array in local memory (ptxas: a 512-byte
/// stack frame, which cost 40 % of the kernel). On CUDA (`warp_sums`, teams of block_dot_team_size
/// threads, vector length 1) the 64 sums are added over each warp in 62 shuffles (a butterfly that halves
/// the values each lane keeps at every step, so lane l ends with the warp's sums 2l and 2l + 1), then over
/// the warps through 4 KB of team scratch after one barrier. Elsewhere: 64 team reductions, each with its
/// barriers. H200, ncu, 10 roots of the all-electron full CI, per call: 3.8 ms with the stack frame, 2.3
/// with 64 team reductions, 1.4-1.5 with the butterfly. What remains is the row loop: ~200 registers leave
/// one team of 8 warps per SM, waiting on its loads; two rows per step (more loads in flight) took 2.3.
template <class Exec, class PView, class QView, class Partial>
struct BlockDotsTeam {
  using member_type = typename Kokkos::TeamPolicy<Exec>::member_type;
  static constexpr int J = block_dot_p_columns_per_team;
  static constexpr int S = J * block_dot_columns;  // sums per thread
  static constexpr int warp = 32;
  using Scratch = Kokkos::View<double**, Kokkos::LayoutRight, typename Exec::scratch_memory_space,
                               Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  PView P;
  QView Q;
  Partial partial;
  int count, columns, groups;
  std::size_t rows, chunk;
  bool warp_sums = false;

#if defined(__CUDA_ARCH__)
  /// One step of the butterfly: of v[0 .. 2 Half), a lane keeps the lower half if its bit Half / 2 (the
  /// partner lane's distance, Half * warp / S) is clear, else the upper half, and adds the partner's
  /// copy of the same half; the result lands in v[0 .. Half). Constant indices: v stays in registers.
  template <int Half>
  __device__ static void butterfly_step(double* v, const int lane) {
    constexpr int offset = Half * warp / S;
    const bool upper = (lane & offset) != 0;
#pragma unroll
    for (int k = 0; k < Half; ++k) {
      const double send = upper ? v[k] : v[k + Half];
      const double keep = upper ? v[k + Half] : v[k];
      v[k] = keep + __shfl_xor_sync(0xffffffffu, send, offset);
    }
  }
#endif

  /// Team scratch of the warp sums (launches with warp_sums).
  static std::size_t scratch_bytes(const int team_size) { return Scratch::shmem_size(team_size / warp, S); }

  KOKKOS_INLINE_FUNCTION void operator()(const member_type& team) const {
    const int j0 = (team.league_rank() % groups) * J;
    const int nj = count - j0 < J ? count - j0 : J;
    const std::size_t b = static_cast<std::size_t>(team.league_rank() / groups);
    const std::size_t begin = b * chunk;
    const std::size_t end = rows - begin < chunk ? rows : begin + chunk;
    double s[J][block_dot_columns];
    for (int jj = 0; jj < J; ++jj) {
      for (int c = 0; c < block_dot_columns; ++c) s[jj][c] = 0.0;
    }
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, begin, end), [&](const std::size_t i) {
      double p[J];
      for (int jj = 0; jj < J; ++jj) p[jj] = jj < nj ? P(i, j0 + jj) : 0.0;
      for (int c = 0; c < block_dot_columns; ++c) {
        if (c < columns) {
          const double q = Q(i, c);
          for (int jj = 0; jj < J; ++jj) s[jj][c] += p[jj] * q;
        }
      }
    });
#if defined(__CUDA_ARCH__)
    if (warp_sums) {  // uniform over the launch
      static_assert(S == 2 * warp, "the butterfly leaves each lane two of the 64 sums");
      double v[S];
#pragma unroll
      for (int k = 0; k < S; ++k) v[k] = s[k / block_dot_columns][k % block_dot_columns];
      const int lane = team.team_rank() % warp;  // vector length 1: a team's threads fill its warps in order
      butterfly_step<S / 2>(v, lane);            // 64 values -> 32: lanes 16 apart add halves
      butterfly_step<S / 4>(v, lane);
      butterfly_step<S / 8>(v, lane);
      butterfly_step<S / 16>(v, lane);
      butterfly_step<S / 32>(v, lane);  // 2 values: the warp's sums 2 lane, 2 lane + 1
      const Scratch w(team.team_scratch(0), team.team_size() / warp, S);
      w(team.team_rank() / warp, 2 * lane) = v[0];
      w(team.team_rank() / warp, 2 * lane + 1) = v[1];
      team.team_barrier();
      const int k = team.team_rank();
      if (k < S && k / block_dot_columns < nj && k % block_dot_columns < columns) {
        double sum = 0.0;
        for (int r = 0; r < team.team_size() / warp; ++r) sum += w(r, k);
        partial(b, (j0 + k / block_dot_columns) * block_dot_columns + k % block_dot_columns) = sum;
      }
      return;
    }
#endif
    // Every loop over s has constant bounds and is unrolled (with its barriers the compiler would not
    // unroll the reductions' loop by itself): an index known only at run time puts the whole array in
    // local memory.
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
#pragma unroll
#endif
    for (int jj = 0; jj < J; ++jj) {
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
#pragma unroll
#endif
      for (int c = 0; c < block_dot_columns; ++c) {
        if (jj < nj && c < columns) {  // uniform over the team
          double v = s[jj][c];         // a reducer holds a reference: of s itself, it would put s in local memory
          team.team_reduce(Kokkos::Sum<double>(v));
          s[jj][c] = v;
        }
      }
    }
    Kokkos::single(Kokkos::PerTeam(team), [&]() {
      for (int jj = 0; jj < J; ++jj) {  // constant bounds: s stays in registers (see above)
        for (int c = 0; c < block_dot_columns; ++c) {
          if (jj < nj && c < columns) partial(b, (j0 + jj) * block_dot_columns + c) = s[jj][c];
        }
      }
    });
  }
};

/// out[j * columns + c] = sum_i P(i, j) * Q(i, c) for j < count, c < columns (<= block_dot_columns): the
/// projections of a block of vectors on a basis (block Gram-Schmidt, the new columns of V^T A V), P read
/// once for all columns of Q. GPUs: BlockDotsTeam (a team per chunk and 4 columns of P). CPUs: a thread per chunk of
/// rows, in pieces of projection_chunk_rows whose columns of Q stay in cache; four columns of Q at a time, each with
/// two independent sums, so that the loop is not held by one chain of dependent additions. `partial`
/// (>= chunks x count * block_dot_columns, LayoutRight) and its host mirror are the caller's workspace;
/// the chunks are added in order on the host. P and Q are LayoutLeft (contiguous columns).
/// block_dots' partial sums added over the chunks into row 0, for the sums of `count` columns of P and `columns` of
/// Q, in a fixed order. GPUs: a team of 256 per sum, thread r adding chunks r, r + 256, ... in turn, then thread 0
/// the 256 results in order (one thread a sum waited on its loads: 6.4 ms for 55,137 chunks on an H200). CPUs: a
/// thread per sum, the chunks in order.
template <class Exec, class Partial>
void add_chunks(const Exec& exec, const Partial& partial, const int count, const int columns,
                const std::size_t chunks) {
  if constexpr (cispmv::impl::is_gpu_space_v<Exec>) {
    constexpr int team = 256;
    using Policy = Kokkos::TeamPolicy<Exec>;
    using Scratch = Kokkos::View<double*, typename Exec::scratch_memory_space, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
    Kokkos::parallel_for(
        "cispmv::davidson::block_dots_chunks",
        Policy(exec, count * columns, team).set_scratch_size(0, Kokkos::PerTeam(Scratch::shmem_size(team))),
        KOKKOS_LAMBDA(const typename Policy::member_type& m) {
          const int t = m.league_rank();
          const int key = (t / columns) * block_dot_columns + t % columns;
          const Scratch part(m.team_scratch(0), team);
          const int r = m.team_rank();
          double sum = 0.0;
          for (std::size_t b = static_cast<std::size_t>(r); b < chunks; b += team) sum += partial(b, key);
          part(r) = sum;
          m.team_barrier();
          if (r == 0) {
            double total = 0.0;
            for (int k = 0; k < team; ++k) total += part(k);
            partial(0, key) = total;
          }
        });
  } else {
    Kokkos::parallel_for(
        "cispmv::davidson::block_dots_chunks", Kokkos::RangePolicy<Exec>(exec, 0, count * columns),
        KOKKOS_LAMBDA(const int t) {
          const int key = (t / columns) * block_dot_columns + t % columns;
          double sum = 0.0;
          for (std::size_t b = 0; b < chunks; ++b) sum += partial(b, key);
          partial(0, key) = sum;
        });
  }
}

template <class Exec, class PView, class QView, class Partial>
std::vector<double> block_dots(const Exec& exec, const PView& P, const QView& Q, const int count, const int columns,
                               const Partial& partial, const typename Partial::HostMirror& host) {
  static_assert(std::is_same_v<typename PView::array_layout, Kokkos::LayoutLeft> &&
                    std::is_same_v<typename QView::array_layout, Kokkos::LayoutLeft>,
                "block_dots: the columns must be contiguous");
  std::vector<double> out(static_cast<std::size_t>(count) * static_cast<std::size_t>(columns), 0.0);
  const std::size_t rows = P.extent(0);
  constexpr std::size_t chunk = block_dot_chunk_rows;
  const std::size_t chunks = (rows + chunk - 1) / chunk;
  if (count == 0 || columns == 0 || chunks == 0) return out;
  if (columns > block_dot_columns || chunks > partial.extent(0) ||
      static_cast<std::size_t>(count) * block_dot_columns > partial.extent(1)) {
    throw std::logic_error("cispmv::davidson::block_dots: the workspace is too small");
  }
  if constexpr (cispmv::impl::is_gpu_space_v<Exec>) {
    const int groups = (count + block_dot_p_columns_per_team - 1) / block_dot_p_columns_per_team;
    using Functor = BlockDotsTeam<Exec, PView, QView, Partial>;
    Functor f{P, Q, partial, count, columns, groups, rows, chunk};
    const int league = static_cast<int>(chunks) * groups;
#if defined(KOKKOS_ENABLE_CUDA)
    f.warp_sums = std::is_same_v<Exec, Kokkos::Cuda>;  // the warp butterfly (see BlockDotsTeam)
#endif
    if (f.warp_sums) {
      Kokkos::parallel_for("cispmv::davidson::block_dots",
                           Kokkos::TeamPolicy<Exec>(exec, league, block_dot_team_size, 1)
                               .set_scratch_size(0, Kokkos::PerTeam(Functor::scratch_bytes(block_dot_team_size))),
                           f);
    } else {
      Kokkos::parallel_for("cispmv::davidson::block_dots", Kokkos::TeamPolicy<Exec>(exec, league, Kokkos::AUTO), f);
    }
  } else {
    Kokkos::parallel_for(
        "cispmv::davidson::block_dots", Kokkos::RangePolicy<Exec>(exec, 0, chunks), KOKKOS_LAMBDA(const std::size_t b) {
          const std::size_t begin = b * chunk;
          const std::size_t end = rows - begin < chunk ? rows : begin + chunk;
          for (int j = 0; j < count; ++j) {
            for (int c = 0; c < columns; ++c) partial(b, j * block_dot_columns + c) = 0.0;
          }
          for (std::size_t piece = begin; piece < end; piece += projection_chunk_rows) {
            const std::size_t len = end - piece < projection_chunk_rows ? end - piece : projection_chunk_rows;
            for (int j = 0; j < count; ++j) {
              const double* p = &P(piece, j);
              for (int c0 = 0; c0 < columns; c0 += 4) {
                const int nc = columns - c0 < 4 ? columns - c0 : 4;
                const double* q[4];
                for (int c = 0; c < 4; ++c) q[c] = &Q(piece, c0 + (c < nc ? c : 0));
                double s[4][2] = {{0.0, 0.0}, {0.0, 0.0}, {0.0, 0.0}, {0.0, 0.0}};
                std::size_t i = 0;
                for (; i + 2 <= len; i += 2) {
                  for (int c = 0; c < 4; ++c) {
                    s[c][0] += p[i] * q[c][i];
                    s[c][1] += p[i + 1] * q[c][i + 1];
                  }
                }
                for (; i < len; ++i) {
                  for (int c = 0; c < 4; ++c) s[c][0] += p[i] * q[c][i];
                }
                for (int c = 0; c < nc; ++c) partial(b, j * block_dot_columns + c0 + c) += s[c][0] + s[c][1];
              }
            }
          }
        });
  }
  // the chunks added where the partial sums are (add_chunks), into row 0; only that row travels to the host.
  // Copying the chunks' sums and adding them on the host read the whole workspace and gathered a column of it:
  // 106 MB a call for 15 columns of 451M rows (H200), three calls an iteration.
  add_chunks(exec, partial, count, columns, chunks);
  const auto row = Kokkos::make_pair(0, 1);
  Kokkos::deep_copy(exec, Kokkos::subview(host, row, Kokkos::ALL()), Kokkos::subview(partial, row, Kokkos::ALL()));
  exec.fence();
  for (int j = 0; j < count; ++j) {
    for (int c = 0; c < columns; ++c) {
      out[static_cast<std::size_t>(j) * columns + c] = host(0, j * block_dot_columns + c);
    }
  }
  return out;
}

/// T(:, c) -= V(:, 0:m) H(:, c) for c < columns (<= block_dot_columns): one projection of block classical
/// Gram-Schmidt, V read once for all the columns of T. GPUs: a thread per two rows (i and i + half:
/// both coalesced), the columns' sums in registers, each h(j, c) loaded once for the two (the loads of
/// h, not V's bytes, held a thread per row: 1.17 ms per call under ncu for 10 roots of the all-electron
/// full CI, against ~0.4 for reading V). CPUs: chunks of projection_chunk_rows rows, V's column by column, each
/// column's chunk (in L1) subtracted from every column of T's chunk (in L2).
template <class Exec, class Basis, class H, class T>
void subtract_block_projection(const Exec& exec, const Basis& V, const H& h, const int m, const int columns,
                               const T& t) {
  if (columns > block_dot_columns) throw std::logic_error("cispmv::davidson: too many columns for one projection");
  const std::size_t n = t.extent(0);
  if constexpr (cispmv::impl::is_gpu_space_v<Exec>) {
    if (columns == 1) {  // one root's correction: one sum a row, few registers, full blocks (H200, ncu, 6 columns of
                         // 451M rows: the general kernel's 32 sums a thread ran blocks of 32 threads at 1.5 TB/s)
      Kokkos::parallel_for(
          "cispmv::davidson::project_out", Kokkos::RangePolicy<Exec>(exec, 0, n), KOKKOS_LAMBDA(const std::size_t i) {
            double s = 0.0;
            for (int j = 0; j < m; ++j) s += V(i, j) * h(j, 0);
            t(i, 0) -= s;
          });
      return;
    }
    const std::size_t half = (n + 1) / 2;
    Kokkos::parallel_for(
        "cispmv::davidson::project_out_block", Kokkos::RangePolicy<Exec>(exec, 0, half),
        KOKKOS_LAMBDA(const std::size_t i) {
          const std::size_t i2 = i + half;
          const bool second = i2 < n;
          double s[block_dot_columns], s2[block_dot_columns];
          for (int c = 0; c < block_dot_columns; ++c) s[c] = s2[c] = 0.0;
          for (int j = 0; j < m; ++j) {
            const double v = V(i, j);
            const double v2 = second ? V(i2, j) : 0.0;
            for (int c = 0; c < block_dot_columns; ++c) {
              if (c < columns) {
                const double hjc = h(j, c);
                s[c] += v * hjc;
                s2[c] += v2 * hjc;
              }
            }
          }
          for (int c = 0; c < block_dot_columns; ++c) {  // constant bounds: s and s2 stay in registers
            if (c < columns) {
              t(i, c) -= s[c];
              if (second) t(i2, c) -= s2[c];
            }
          }
        });
  } else {
    for_row_chunks(
        exec, "cispmv::davidson::project_out_block", n, KOKKOS_LAMBDA(const std::size_t begin, const std::size_t end) {
          for (int j = 0; j < m; ++j) {
            for (int c = 0; c < columns; ++c) {
              const double hjc = h(j, c);
              for (std::size_t i = begin; i < end; ++i) t(i, c) -= V(i, j) * hjc;
            }
          }
        });
  }
}

/// Columns of `out` one pass of combine computes together on GPUs (their sums in registers). Each pass
/// reads the m columns of P (and Q) once, yet 16 per pass was slower (H200, 10 roots of the all-electron
/// full CI: 3.9 ms per call against 3.0; 126 registers, and the kernel waits on latency, not bytes).
inline constexpr int combine_columns = 8;

/// out(:, c) = sum_{j < m} (P(:, j) - shift[c] * Q(:, j)) * Y(j, c) for c < ncols: the Ritz vectors
/// (shift 0, Q unused) and the residuals AV y - theta V y of the projected solution. GPUs: a thread per
/// row reads its P(i, j) and Q(i, j) once per 8 columns of out (once per column re-read all of V and AV
/// from memory: 21 GB per call for 10 roots of a 1.66M-row problem). CPUs: chunks of
/// projection_chunk_rows rows, P's and Q's columns streamed once each into every column of out's chunk
/// (in cache); a row at a time would gather from m columns m pages apart (perf, our 2 cores, 10 roots:
/// 15 % of the run).
template <class Exec, class Basis, class Small, class Shift>
void combine(const Exec& exec, const Basis& P, const Basis& Q, const Small& Y, const Shift& shift, int m, int ncols,
             const Basis& out, bool use_q) {
  if constexpr (cispmv::impl::is_gpu_space_v<Exec>) {
    if (ncols == 1) {  // one root: one sum a row (as subtract_block_projection's single column)
      Kokkos::parallel_for(
          "cispmv::davidson::combine", Kokkos::RangePolicy<Exec>(exec, 0, P.extent(0)),
          KOKKOS_LAMBDA(const std::size_t i) {
            double sum = 0.0;
            for (int j = 0; j < m; ++j) sum += (use_q ? P(i, j) - shift(0) * Q(i, j) : P(i, j)) * Y(j, 0);
            out(i, 0) = sum;
          });
      return;
    }
    Kokkos::parallel_for(
        "cispmv::davidson::combine", Kokkos::RangePolicy<Exec>(exec, 0, P.extent(0)),
        KOKKOS_LAMBDA(const std::size_t i) {
          for (int c0 = 0; c0 < ncols; c0 += combine_columns) {
            const int nc = ncols - c0 < combine_columns ? ncols - c0 : combine_columns;
            double sum[combine_columns];
            for (int c = 0; c < combine_columns; ++c) sum[c] = 0.0;
            for (int j = 0; j < m; ++j) {
              const double p = P(i, j);
              const double q = use_q ? Q(i, j) : 0.0;
              for (int c = 0; c < combine_columns; ++c) {
                if (c < nc) sum[c] += (use_q ? p - shift(c0 + c) * q : p) * Y(j, c0 + c);
              }
            }
            for (int c = 0; c < combine_columns; ++c) {  // constant bounds: sum stays in registers
              if (c < nc) out(i, c0 + c) = sum[c];
            }
          }
        });
  } else {
    for_row_chunks(
        exec, "cispmv::davidson::combine", P.extent(0), KOKKOS_LAMBDA(const std::size_t begin, const std::size_t end) {
          for (int c = 0; c < ncols; ++c) {
            for (std::size_t i = begin; i < end; ++i) out(i, c) = 0.0;
          }
          for (int j = 0; j < m; ++j) {
            for (int c = 0; c < ncols; ++c) {
              const double y = Y(j, c);
              if (use_q) {
                const double s = shift(c);
                for (std::size_t i = begin; i < end; ++i) out(i, c) += (P(i, j) - s * Q(i, j)) * y;
              } else {
                for (std::size_t i = begin; i < end; ++i) out(i, c) += P(i, j) * y;
              }
            }
          }
        });
  }
}

/// Columns a restart forms in place (combine_in_place): each row's new values wait in registers (GPUs) or in a
/// stack block of rows (CPUs) until all are summed. A restart keeping more Ritz vectors goes through a scratch block.
inline constexpr int in_place_columns = 32;

/// P(:, c) = sum_{j < m} P(:, j) Y(j, c) for c < ncols <= in_place_columns, in place: a restart's new basis (V Y
/// and AV Y) without a scratch vector per kept column (a 1.8e9-row space holds 14.5 GB a vector). Every row is
/// independent: GPUs a thread per row, CPUs blocks of 64 rows of a chunk, P's columns streamed into the block.
template <class Exec, class Basis, class Small>
void combine_in_place(const Exec& exec, const Basis& P, const Small& Y, int m, int ncols) {
  if (ncols > in_place_columns) {
    throw std::logic_error("cispmv::davidson::combine_in_place: " + std::to_string(ncols) + " columns, at most " +
                           std::to_string(in_place_columns));
  }
  if constexpr (cispmv::impl::is_gpu_space_v<Exec>) {
    Kokkos::parallel_for(
        "cispmv::davidson::combine_in_place", Kokkos::RangePolicy<Exec>(exec, 0, P.extent(0)),
        KOKKOS_LAMBDA(const std::size_t i) {
          double sum[in_place_columns];
          for (int c = 0; c < in_place_columns; ++c) sum[c] = 0.0;
          for (int j = 0; j < m; ++j) {
            const double p = P(i, j);
            for (int c = 0; c < in_place_columns; ++c) {
              if (c < ncols) sum[c] += p * Y(j, c);
            }
          }
          for (int c = 0; c < in_place_columns; ++c) {
            if (c < ncols) P(i, c) = sum[c];
          }
        });
  } else {
    constexpr std::size_t rows = 64;
    for_row_chunks(
        exec, "cispmv::davidson::combine_in_place", P.extent(0),
        KOKKOS_LAMBDA(const std::size_t begin, const std::size_t end) {
          double sum[rows * in_place_columns];
          for (std::size_t b = begin; b < end; b += rows) {
            const std::size_t e = end - b < rows ? end : b + rows;
            for (int c = 0; c < ncols; ++c) {
              for (std::size_t i = b; i < e; ++i) sum[c * rows + (i - b)] = 0.0;
            }
            for (int j = 0; j < m; ++j) {
              for (int c = 0; c < ncols; ++c) {
                const double y = Y(j, c);
                for (std::size_t i = b; i < e; ++i) sum[c * rows + (i - b)] += P(i, j) * y;
              }
            }
            for (int c = 0; c < ncols; ++c) {
              for (std::size_t i = b; i < e; ++i) P(i, c) = sum[c * rows + (i - b)];
            }
          }
        });
  }
}

/// How many entries of d are at most t.
template <class Exec, class Diag>
std::size_t count_at_most(const Exec& exec, const Diag& d, const double t) {
  std::size_t c = 0;
  Kokkos::parallel_reduce(
      "cispmv::davidson::count_at_most",
      Kokkos::RangePolicy<Exec, Kokkos::IndexType<std::size_t>>(exec, 0, d.extent(0)),
      KOKKOS_LAMBDA(const std::size_t i, std::size_t& sum) { sum += d(i) <= t ? 1 : 0; }, c);
  return c;
}

/// The rows of `diagonal` (with their entries) whose entries are at most a threshold that leaves at least `count`
/// of them, copied to the host: where the diagonal lives on a GPU, its smallest entries are found there instead of
/// in a host copy (a 451M-row diagonal is 3.6 GB, its copy and one pass over it ~3 s). The threshold comes from a
/// bisection on the value, one count over the diagonal a step, until at most max(4 count, 1024) rows remain (or
/// the values allow no finer cut: ties are all kept). Every row with an entry below the threshold is returned,
/// so the `count` smallest (entry, row) pairs are among them. Empty where the entries are not all numbers.
template <class Exec, class Diag>
std::vector<std::pair<double, std::size_t>> smallest_candidates(const Exec& exec, const Diag& d, std::size_t count) {
  const std::size_t n = d.extent(0);
  std::vector<std::pair<double, std::size_t>> out;
  if (n == 0 || count == 0) return out;
  using Policy = Kokkos::RangePolicy<Exec, Kokkos::IndexType<std::size_t>>;
  Kokkos::MinMaxScalar<double> range;
  Kokkos::parallel_reduce(
      "cispmv::davidson::diagonal_range", Policy(exec, 0, n),
      KOKKOS_LAMBDA(const std::size_t i, Kokkos::MinMaxScalar<double>& r) {
        const double v = d(i);
        if (v < r.min_val) r.min_val = v;
        if (v > r.max_val) r.max_val = v;
      },
      Kokkos::MinMax<double>(range));
  double lo = range.min_val, hi = range.max_val;
  std::size_t kept = count_at_most(exec, d, hi);
  if (kept != n) return out;  // a NaN entry: the caller's path over every row decides
  const std::size_t cap = std::max<std::size_t>(4 * count, 1024);
  for (int step = 0; step < 128 && kept > cap; ++step) {
    const double mid = lo + 0.5 * (hi - lo);
    if (!(mid > lo && mid < hi)) break;  // adjacent doubles: ties
    const std::size_t c = count_at_most(exec, d, mid);
    if (c >= count) {
      hi = mid;
      kept = c;
    } else {
      lo = mid;
    }
  }
  Kokkos::View<std::size_t*, typename Diag::memory_space> rows(
      Kokkos::view_alloc(exec, "cispmv::davidson::candidate_rows", Kokkos::WithoutInitializing), kept);
  Kokkos::View<double*, typename Diag::memory_space> values(
      Kokkos::view_alloc(exec, "cispmv::davidson::candidate_values", Kokkos::WithoutInitializing), kept);
  const double t = hi;
  Kokkos::parallel_scan(
      "cispmv::davidson::candidates", Policy(exec, 0, n),
      KOKKOS_LAMBDA(const std::size_t i, std::size_t& at, const bool final) {
        if (d(i) <= t) {
          if (final) {
            rows(at) = i;
            values(at) = d(i);
          }
          ++at;
        }
      });
  const auto rows_host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), rows);
  const auto values_host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), values);
  out.reserve(kept);
  for (std::size_t j = 0; j < kept; ++j) out.emplace_back(values_host(j), rows_host(j));
  return out;
}

/// V(:, c) = e_{rows(c)} for c < count: unit start vectors (local row i is global row first + i).
template <class Exec, class Basis, class Rows>
void start_columns(const Exec& exec, const Basis& V, const Rows& rows, int count, std::size_t first) {
  Kokkos::parallel_for(
      "cispmv::davidson::guess", Kokkos::RangePolicy<Exec>(exec, 0, V.extent(0)), KOKKOS_LAMBDA(const std::size_t i) {
        for (int c = 0; c < count; ++c) V(i, c) = i + first == rows(c) ? 1.0 : 0.0;
      });
}

/// V(:, col) gets entries uniform in [-1, 1) from a hash of the global row (the same on every process
/// of a distributed solve, whatever its rows); with block >= 0 only on the rows of that block.
template <class Exec, class Basis, class Blocks>
void random_column(const Exec& exec, const Basis& V, int col, std::size_t first, const Blocks& blocks, int block) {
  Kokkos::parallel_for(
      "cispmv::davidson::random_guess", Kokkos::RangePolicy<Exec>(exec, 0, V.extent(0)),
      KOKKOS_LAMBDA(const std::size_t i) {
        const std::uint64_t h = cispmv::impl::splitmix64_mix(static_cast<std::uint64_t>(i + first) + 1);
        const double x = static_cast<double>(h >> 11) * (2.0 / 9007199254740992.0) - 1.0;
        V(i, col) = block < 0 || blocks(i) == block ? x : 0.0;
      });
}

/// V(:, to) += V(:, from): a column added to another whose rows are disjoint from it (a packed product's sum).
template <class Exec, class Basis>
void add_column(const Exec& exec, const Basis& V, int from, int to) {
  Kokkos::parallel_for(
      "cispmv::davidson::pack", Kokkos::RangePolicy<Exec>(exec, 0, V.extent(0)),
      KOKKOS_LAMBDA(const std::size_t i) { V(i, to) += V(i, from); });
}

/// B(:, to) = the rows of block `block` of B(:, from), 0 elsewhere (`to` may be `from`): a packed product's share.
template <class Exec, class Basis, class Blocks>
void keep_block(const Exec& exec, const Basis& B, int from, int to, const Blocks& blocks, int block) {
  Kokkos::parallel_for(
      "cispmv::davidson::unpack", Kokkos::RangePolicy<Exec>(exec, 0, B.extent(0)),
      KOKKOS_LAMBDA(const std::size_t i) { B(i, to) = blocks(i) == block ? B(i, from) : 0.0; });
}

/// t = (D - theta)^-1 r, with |D_i - theta| raised to at least `guard`: Davidson's correction; with
/// block >= 0, zero outside the rows of that block (the block of the Ritz vector it corrects).
template <class Exec, class Diag, class R, class T, class Blocks>
void precondition(const Exec& exec, const Diag& diagonal, const double theta, const double guard, const R& r,
                  const T& t, const Blocks& blocks, const int block) {
  Kokkos::parallel_for(
      "cispmv::davidson::precondition", Kokkos::RangePolicy<Exec>(exec, 0, t.extent(0)),
      KOKKOS_LAMBDA(const std::size_t i) {
        double den = diagonal(i) - theta;
        if (den < guard && den > -guard) den = den < 0 ? -guard : guard;
        t(i) = block < 0 || blocks(i) == block ? r(i) / den : 0.0;
      });
}

/// A start row: (diagonal, global row, block or -1).
using Offer = std::tuple<double, std::size_t, int>;

/// This process's offers of start rows from its n diagonal entries d (global rows first, first + 1, ...): its `count`
/// smallest and, with `blocks` (each row's block, 0 <= block < num_blocks; nullptr: none), each block's smallest
/// among the rest. One pass over the rows with bounded heaps (each block's count + 1 smallest hold its smallest that
/// is not among the `count`), so that a space of billions of rows takes no copy of them.
template <class HostDiag>
std::vector<Offer> start_offers(const HostDiag& d, const std::size_t n, const std::size_t first,
                                const std::size_t count, const int* blocks, const int num_blocks) {
  const auto push = [](std::priority_queue<Offer>& heap, const Offer& o, std::size_t most) {
    if (heap.size() < most) {
      heap.push(o);
    } else if (most > 0 && o < heap.top()) {
      heap.pop();
      heap.push(o);
    }
  };
  std::priority_queue<Offer> lowest;  // the largest on top
  std::vector<std::priority_queue<Offer>> per_block(static_cast<std::size_t>(blocks != nullptr ? num_blocks : 0));
  for (std::size_t i = 0; i < n; ++i) {
    const Offer o{d(i), first + i, blocks != nullptr ? blocks[i] : -1};
    push(lowest, o, count);
    if (blocks != nullptr) push(per_block[static_cast<std::size_t>(std::get<2>(o))], o, count + 1);
  }
  std::vector<Offer> offers;
  for (; !lowest.empty(); lowest.pop()) offers.push_back(lowest.top());
  const std::size_t taken = offers.size();
  for (auto& heap : per_block) {
    std::vector<Offer> block;
    for (; !heap.empty(); heap.pop()) block.push_back(heap.top());
    std::sort(block.begin(), block.end());
    for (const Offer& o : block) {
      if (std::find(offers.begin(), offers.begin() + static_cast<std::ptrdiff_t>(taken), o) ==
          offers.begin() + static_cast<std::ptrdiff_t>(taken)) {
        offers.push_back(o);
        break;
      }
    }
  }
  return offers;
}

}  // namespace cispmv::solvers::impl
