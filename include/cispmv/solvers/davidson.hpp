#pragma once
/// \file solvers/davidson.hpp
/// Davidson's eigensolver for the lowest roots of a real symmetric operator: any cispmv matrix (its
/// products through an SpmvPlan made once) or any object with the operator interface below. The
/// inner loop of CI (Mahmoud et al. 2018, section 2).

#include <Kokkos_Core.hpp>

#include "cispmv/impl/hash.hpp"
#include "cispmv/impl/profiling.hpp"
#include "cispmv/options.hpp"
#include "cispmv/plan.hpp"
#include "cispmv/solvers/symmetric_eigen.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

namespace cispmv::solvers {

/// Settings of davidson().
///
/// Convergence: a root is converged when its residual ||A x - theta x||_2 (x normalised) is below
/// `residual_tolerance`. The eigenvalue error is then about residual^2 / gap, so the default 1e-6
/// gives energies to ~1e-11 Eh for gaps of 0.1 Eh; 1e-5 suffices for 1e-8 Eh.
struct DavidsonOptions {
  int num_roots = 1;                 ///< lowest eigenvalues wanted
  double residual_tolerance = 1e-6;  ///< on the 2-norm of every root's residual
  int max_iterations = 200;          ///< subspace expansions (each one correction per unconverged root)
  int max_subspace = 0;              ///< basis size that triggers a restart; 0: max(24, 8 * num_roots)
  int restart_size = 0;              ///< Ritz vectors kept at a restart; 0: 2 * num_roots
  /// Start vectors: unit vectors on this many smallest diagonal entries (0: num_roots; at least
  /// num_roots, at most max_subspace). More of them guard against missing a root whose eigenvector
  /// is (nearly) orthogonal to the first guesses, e.g. in a block the guesses do not couple to.
  int num_guesses = 0;
  /// One more start vector, dense and pseudo-random, so that no block of the matrix is out of the
  /// solver's reach (see initial_guesses); false: unit vectors only. H2O/6-31G frozen-core full CI,
  /// all irreducible representations, 5 roots: with unit vectors only the fifth root came out as the
  /// seventh eigenvalue (-75.7155 Eh against PySCF's -75.7441), converged.
  bool random_start = true;
  /// Blocks of rows the operator never couples, where the caller knows them (a CI Hamiltonian's
  /// irreducible representations): row_blocks[i] in [0, 32) is the block of row i (of this process's
  /// rows, for a distributed operator); empty: none known. Unit guesses and Davidson's corrections never
  /// leave the blocks they start in, and a random start vector's Ritz value is too high for the solver
  /// to improve it, so a solve can converge with a lower root of some block missing (H2O/6-31G
  /// all-electron full CI, all irreps, 5 roots: the 7th eigenvalue came out as the 5th, random start or
  /// not). With blocks: the start holds each block's lowest diagonal row beside the num_guesses lowest
  /// rows (and, with random_start, one random vector per block); every correction stays in its Ritz
  /// vector's block; and in every block the lowest Ritz pair that is not a wanted root (the block's
  /// guard) must converge too. A converged guard above the last wanted root shows that its block holds
  /// no lower root the solve missed (as far as Davidson finds a block's lowest root: symmetries inside
  /// a block that the blocks do not name, e.g. the spin parity of M_S = 0 determinants, are not guarded).
  std::vector<int> row_blocks;
  double denominator_guard = 1e-4;   ///< |theta - D_i| is raised to at least this in (D - theta)^-1
  double linear_dependence = 1e-10;  ///< a correction whose norm drops below this (relative) is discarded
  SpmvOptions spmv = {};             ///< the plan's options when davidson() is given a matrix
};

/// Result of davidson(): eigenpairs, convergence and the time split.
template <class MemorySpace>
struct DavidsonResult {
  std::vector<double> eigenvalues;           ///< num_roots lowest Ritz values, ascending
  std::vector<double> residual_norms;        ///< final ||A x - theta x|| per root
  std::vector<double> max_residual_history;  ///< largest residual of the wanted roots, per iteration
  /// num_rows x num_roots Ritz vectors (orthonormal columns), in the operator's memory space.
  Kokkos::View<double**, Kokkos::LayoutLeft, MemorySpace> eigenvectors;
  bool converged = false;
  int iterations = 0;  ///< subspace expansions done
  int restarts = 0;
  int guards = 0;              ///< blocks (DavidsonOptions::row_blocks) whose guard pair converged with the roots
  int num_spmv = 0;            ///< reads of the matrix: products with one vector, or with a block of them
  int subspace_size = 0;       ///< basis size at the end
  double total_seconds = 0.0;  ///< the whole solve, fenced
  double spmv_seconds = 0.0;   ///< inside the operator's apply, fenced before and after each call
  /// the host's small eigenproblems of the projected matrix (Rayleigh-Ritz), one per iteration
  double projected_seconds = 0.0;
  double spmv_share() const { return total_seconds > 0 ? spmv_seconds / total_seconds : 0.0; }
};

namespace impl {

template <class T, class = void>
struct is_cispmv_format : std::false_type {};
template <class T>
struct is_cispmv_format<T, std::void_t<decltype(T::format_name)>> : std::true_type {};

/// Operators whose rank-2 apply reads the matrix once for several vectors (an SpmvPlan of a format
/// with a multi-vector kernel): Davidson multiplies its new basis vectors together through them.
template <class T, class = void>
struct has_block_apply : std::false_type {};
template <class T>
struct has_block_apply<T, std::void_t<decltype(T::has_block_kernel())>>
    : std::integral_constant<bool, T::has_block_kernel()> {};

/// Operators distributed over processes (mpi::DistributedSpmvPlan): num_rows() is this process's
/// rows, global_rows() all of them, and the solver's reductions go through sum_over_ranks and
/// gather_from_ranks. Davidson keeps its vectors cut like the rows and G on every process.
template <class T, class = void>
struct is_distributed_operator : std::false_type {};
template <class T>
struct is_distributed_operator<
    T, std::void_t<decltype(std::declval<const T&>().sum_over_ranks(std::declval<double*>(), 0)),
                   decltype(std::declval<const T&>().first_row())>> : std::true_type {};

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
  Kokkos::deep_copy(exec, host, partial);
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
  Kokkos::deep_copy(exec, host, partial);
  exec.fence();
  for (int j = 0; j < count; ++j) {
    for (int c = 0; c < columns; ++c) {
      double sum = 0.0;
      for (std::size_t b = 0; b < chunks; ++b) sum += host(b, j * block_dot_columns + c);
      out[static_cast<std::size_t>(j) * columns + c] = sum;
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

/// The state of one Davidson solve (see davidson()): the basis V, its products AV = A V, the
/// projected matrix G = V^T A V on the host, and the Ritz coefficients Y.
template <class Exec, class Operator>
class Davidson {
 public:
  using memory_space = typename Operator::memory_space;
  using Basis = Kokkos::View<double**, Kokkos::LayoutLeft, memory_space>;
  using Vec = Kokkos::View<double*, memory_space>;
  using Result = DavidsonResult<memory_space>;

  static constexpr bool distributed = is_distributed_operator<Operator>::value;

  Davidson(const Exec& exec, const Operator& op, const DavidsonOptions& opts)
      : exec_(exec), op_(op), opts_(opts), n_(static_cast<std::size_t>(op.num_rows())), k_(opts.num_roots) {
    if constexpr (distributed) {
      N_ = static_cast<std::size_t>(op.global_rows());
      first_ = static_cast<std::size_t>(op.first_row());
    } else {
      N_ = n_;
    }
    check_arguments();
    count_blocks();
    const int active = k_ + guards_;  // wanted roots and the blocks' guards: the pairs that must converge
    const std::size_t wanted =
        static_cast<std::size_t>(opts.max_subspace > 0 ? opts.max_subspace : std::max(24, 8 * active));
    max_sub_ = static_cast<int>(std::min(N_, wanted));
    keep_ = std::min(max_sub_ - active, std::max(active, opts.restart_size > 0 ? opts.restart_size : 2 * active));
    // A restart keeps at least the pairs that must converge and leaves room for one correction per
    // pair, unless the basis may grow to span the whole space.
    if (static_cast<std::size_t>(max_sub_) < N_ && keep_ < active) {
      throw std::invalid_argument(
          "cispmv::davidson: max_subspace = " + std::to_string(max_sub_) + " is too small for " + std::to_string(k_) +
          " roots" + (guards_ > 0 ? " and " + std::to_string(guards_) + " blocks' guards" : std::string()) +
          " (need >= 2 * (roots + guards))");
    }
    allocate();
  }

  template <class DiagView>
  Result solve(const DiagView& diagonal) {
    Kokkos::Timer total;
    m_ = initial_guesses(diagonal);
    extend_projection(0, m_);
    std::vector<double> residual(static_cast<std::size_t>(k_ + guards_), 0.0);
    while (true) {
      const SymmetricEigen eig = ritz_pairs();
      const double worst = residual_norms(residual);
      res_.max_residual_history.push_back(worst);
      int unconverged = 0;
      for (int c = 0; c < active_; ++c) unconverged += !settled(c, residual);
      const bool done = worst < opts_.residual_tolerance && unconverged == 0;
      // A full basis spans the space: its Ritz pairs are exact, nothing to add.
      if (done || res_.iterations >= opts_.max_iterations || static_cast<std::size_t>(m_) == N_) {
        // a NaN residual (NaN in the matrix or the start) is never convergence, not even of a full basis
        res_.converged = !std::isnan(worst) && (done || static_cast<std::size_t>(m_) == N_);
        break;
      }
      const int nvec = std::min(m_, std::max(active_, keep_));
      if (m_ + unconverged > max_sub_ && m_ > nvec) restart(eig, nvec);
      const int first = m_;
      add_corrections(residual, diagonal);
      if (m_ == first) break;  // every correction lay in the span: the solve has stagnated
      extend_projection(first, m_);
      ++res_.iterations;
    }
    finish(residual);
    res_.total_seconds = total.seconds();
    return res_;
  }

 private:
  void check_arguments() const {
    if (N_ != static_cast<std::size_t>(op_.num_cols())) {
      throw std::invalid_argument("cispmv::davidson: the operator is " + std::to_string(N_) + " x " +
                                  std::to_string(op_.num_cols()) + ", not square");
    }
    if (k_ < 1 || static_cast<std::size_t>(k_) > N_) {
      throw std::invalid_argument("cispmv::davidson: num_roots = " + std::to_string(k_) + " for an operator of " +
                                  std::to_string(N_) + " rows");
    }
  }

  /// The blocks of DavidsonOptions::row_blocks: checked, copied to the operator's memory space, and
  /// counted over every process (a distributed solve gathers them even where no process has blocks,
  /// so that all processes take part). One block needs no guard: guards_ is 0 then.
  void count_blocks() {
    static_assert(max_blocks <= 52, "the blocks' bit mask travels between processes as a double");
    const std::vector<int>& b = opts_.row_blocks;
    if (!b.empty() && b.size() != n_) {
      throw std::invalid_argument("cispmv::davidson: row_blocks has " + std::to_string(b.size()) + " entries for " +
                                  std::to_string(n_) + " rows");
    }
    std::uint64_t present = 0;
    for (std::size_t i = 0; i < b.size(); ++i) {
      if (b[i] < 0 || b[i] >= max_blocks) {
        throw std::invalid_argument("cispmv::davidson: row_blocks[" + std::to_string(i) + "] = " +
                                    std::to_string(b[i]) + " is outside [0, " + std::to_string(max_blocks) + ")");
      }
      present |= std::uint64_t(1) << b[i];
    }
    if constexpr (distributed) {
      for (const double mask : op_.gather_from_ranks(std::vector<double>{static_cast<double>(present)}))
        present |= static_cast<std::uint64_t>(mask);
    }
    num_blocks_ = 0;
    for (std::uint64_t p = present; p != 0; p >>= 1) ++num_blocks_;  // 1 + the largest block
    int count = 0;
    for (std::uint64_t p = present; p != 0; p &= p - 1) ++count;
    guards_ = count > 1 ? count : 0;
    if (guards_ > 0) {
      blocks_ = Blocks(alloc("cispmv::davidson::row_blocks"), n_);
      const Kokkos::View<const int*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>> host(b.data(),
                                                                                                      b.size());
      if (n_ > 0) Kokkos::deep_copy(exec_, blocks_, host);
      exec_.fence();
    }
  }

  /// Sums of this process's rows made global (distributed operators; nothing to do otherwise).
  void reduce(std::vector<double>& partial) const {
    if constexpr (distributed) op_.sum_over_ranks(partial.data(), static_cast<int>(partial.size()));
  }
  template <class X>
  double global_dot(const X& x, const X& y) const {
    std::vector<double> s{dot(exec_, x, y)};
    reduce(s);
    return s[0];
  }
  template <class Column>
  std::vector<double> global_multi_dot(const Basis& P, const Basis& Q, const Column& q, int count, bool q_is_vector) {
    std::vector<double> s = multi_dot(exec_, P, Q, q, count, q_is_vector, partial_, partial_host_);
    reduce(s);
    return s;
  }

  template <class PView, class QView>
  std::vector<double> global_block_dots(const PView& P, const QView& Q, int count, int columns) {
    std::vector<double> s = block_dots(exec_, P, Q, count, columns, block_partial_, block_partial_host_);
    reduce(s);
    return s;
  }

  // Every allocation is left uninitialised (each entry is written before it is read) and bound to
  // `exec`, so that nothing runs on another execution space behind the caller's back.
  auto alloc(const char* label) const {
    return Kokkos::view_alloc(exec_, std::string(label), Kokkos::WithoutInitializing);
  }

  void allocate() {
    const int ncols = std::max(k_ + guards_, keep_);
    V_ = Basis(alloc("cispmv::davidson::V"), n_, max_sub_);
    AV_ = Basis(alloc("cispmv::davidson::AV"), n_, max_sub_);
    R_ = Basis(alloc("cispmv::davidson::R"), n_, ncols);        // residuals
    W_ = Basis(alloc("cispmv::davidson::W"), n_, ncols);        // scratch of the restart
    Y_ = Basis(alloc("cispmv::davidson::Y"), max_sub_, ncols);  // Ritz coefficients, copied from the host
    theta_ = Vec(alloc("cispmv::davidson::theta"), ncols);
    h_ = Vec(alloc("cispmv::davidson::h"), max_sub_);  // Gram-Schmidt coefficients
    const std::size_t chunks = std::max<std::size_t>(1, (n_ + dot_chunk_rows - 1) / dot_chunk_rows);
    partial_ = Partial(alloc("cispmv::davidson::partial_dots"), static_cast<std::size_t>(max_sub_), chunks);
    partial_host_ = Kokkos::create_mirror_view(partial_);
    const std::size_t block_chunks = std::max<std::size_t>(1, (n_ + block_dot_chunk_rows - 1) / block_dot_chunk_rows);
    block_partial_ = Partial(alloc("cispmv::davidson::block_dots"), block_chunks,
                             static_cast<std::size_t>(max_sub_) * block_dot_columns);
    block_partial_host_ = Kokkos::create_mirror_view(block_partial_);
    H_ = Small(alloc("cispmv::davidson::H"), max_sub_, block_dot_columns);  // block Gram-Schmidt coefficients
    H_host_ = Kokkos::create_mirror_view(H_);
    h_host_ = Kokkos::create_mirror_view(h_);
    if constexpr (has_block_apply<Operator>::value) {                   // row-major blocks of the products (see apply)
      const int start = std::max(k_, opts_.num_guesses) + 2 * guards_;  // unit and random vectors per block
      const int width = std::min(std::max(k_ + guards_, start), 16);
      if (width > 1) {  // room for the widest block; each block is laid out at its own row stride (apply)
        const int stride = cispmv::impl::block_buffer_stride<Exec>(width);
        X_ = Block(alloc("cispmv::davidson::X"), n_, stride);
        Y_block_ = Block(alloc("cispmv::davidson::AX"), n_, stride);
      }
    }
    Y_host_ = Kokkos::create_mirror_view(Y_);
    theta_host_ = Kokkos::create_mirror_view(theta_);
    G_.assign(static_cast<std::size_t>(max_sub_) * max_sub_, 0.0);
    col_block_.assign(static_cast<std::size_t>(max_sub_), -1);
  }

  double& g(int i, int j) { return G_[static_cast<std::size_t>(i) * max_sub_ + j]; }
  static auto column(const Basis& B, int j) { return Kokkos::subview(B, Kokkos::ALL(), j); }
  /// Columns [begin, end) of B.
  static Basis columns(const Basis& B, int begin, int end) {
    return Kokkos::subview(B, Kokkos::ALL(), Kokkos::make_pair(begin, end));
  }

  /// AV(:, first:m) = A V(:, first:m): one product per column, or (operators with a block apply) one
  /// per block of columns, which reads the matrix once for all of them. The block goes through
  /// row-major copies (the layout whose gathers touch one or two cache lines per entry), made outside
  /// the timed products, with rows impl::block_buffer_stride apart (on GPUs the width the launch
  /// compiles, which the formats' pair kernels want, whatever the block's width); num_spmv counts
  /// matrix reads.
  void apply(int first, int m) {
    if constexpr (has_block_apply<Operator>::value) {
      const int room = static_cast<int>(X_.extent(1));
      for (int begin = first; begin < m;) {
        const int width = std::max(1, std::min(m - begin, room));
        if (width == 1) {
          timed([&] { op_.apply(1.0, column(V_, begin), 0.0, column(AV_, begin)); });
        } else {  // an odd block runs with one more column, zeroed, so that the lane shape can load
                  // X in pairs (the extra column costs that shape nothing; its products are dropped)
          const int even = std::min(width + width % 2, room);
          const int stride = std::min(cispmv::impl::block_buffer_stride<Exec>(even), room);
          const Block X(X_.data(), n_, stride), Y(Y_block_.data(), n_, stride);  // views of the buffers
          const auto cols = Kokkos::make_pair(begin, begin + width);
          const auto x = Kokkos::subview(X, Kokkos::ALL(), Kokkos::make_pair(0, width));
          const auto y = Kokkos::subview(Y, Kokkos::ALL(), Kokkos::make_pair(0, width));
          if (even > width) Kokkos::deep_copy(exec_, Kokkos::subview(X, Kokkos::ALL(), width), 0.0);
          Kokkos::deep_copy(exec_, x, Kokkos::subview(V_, Kokkos::ALL(), cols));
          timed([&] {
            op_.apply(1.0, Kokkos::subview(X, Kokkos::ALL(), Kokkos::make_pair(0, even)), 0.0,
                      Kokkos::subview(Y, Kokkos::ALL(), Kokkos::make_pair(0, even)));
          });
          Kokkos::deep_copy(exec_, Kokkos::subview(AV_, Kokkos::ALL(), cols), y);
        }
        begin += width;
      }
    } else {
      for (int j = first; j < m; ++j) timed([&] { op_.apply(1.0, column(V_, j), 0.0, column(AV_, j)); });
    }
  }

  /// One product, fenced before and after, its time and count added to the result.
  template <class Product>
  void timed(const Product& product) {
    exec_.fence();
    Kokkos::Timer t;
    product();
    exec_.fence();
    res_.spmv_seconds += t.seconds();
    ++res_.num_spmv;
  }

  /// Start vectors: unit vectors on the smallest diagonal entries (ties by row, for determinism), with
  /// blocks (DavidsonOptions::row_blocks) each block's smallest too, and, with random_start, dense
  /// pseudo-random vectors orthogonalised against them: one, or one per block on that block's rows.
  /// Unit vectors alone span only the blocks of the matrix their rows belong to (a CI Hamiltonian's
  /// irreducible representations): a root of another block is never found, and the solve still
  /// converges, to the wrong roots. The random vector reaches every block; the blocks' guesses and
  /// guards (ritz_pairs) make sure each block's lowest roots are found. Distributed: each process
  /// offers its smallest ones, all processes pick the same from all offers.
  template <class DiagView>
  int initial_guesses(const DiagView& diagonal) {
    const int guesses = std::min(max_sub_, std::max(k_, opts_.num_guesses));
    auto d_host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), diagonal);
    using Offer = std::tuple<double, std::size_t, int>;  // (diagonal, global row, block or -1)
    std::vector<Offer> offers(n_);
    for (std::size_t i = 0; i < n_; ++i) offers[i] = {d_host(i), first_ + i, guards_ > 0 ? opts_.row_blocks[i] : -1};
    const std::size_t mine = std::min<std::size_t>(n_, static_cast<std::size_t>(guesses));
    std::partial_sort(offers.begin(), offers.begin() + static_cast<std::ptrdiff_t>(mine), offers.end());
    std::vector<Offer> lowest(static_cast<std::size_t>(guards_ > 0 ? num_blocks_ : 0),
                              {std::numeric_limits<double>::infinity(), std::size_t(0), -1});
    for (std::size_t i = mine; i < n_ && guards_ > 0; ++i) {  // each block's smallest of the rest
      Offer& best = lowest[static_cast<std::size_t>(std::get<2>(offers[i]))];
      if (std::get<2>(best) < 0 || offers[i] < best) best = offers[i];
    }
    offers.resize(mine);
    for (const Offer& o : lowest) {
      if (std::get<2>(o) >= 0) offers.push_back(o);
    }
    if constexpr (distributed) {  // every process offers guesses + guards triples, padded with +inf
      const std::size_t slots = static_cast<std::size_t>(guesses + guards_);
      std::vector<double> flat(3 * slots, std::numeric_limits<double>::infinity());
      for (std::size_t i = 0; i < offers.size(); ++i) {
        flat[3 * i] = std::get<0>(offers[i]);
        flat[3 * i + 1] = static_cast<double>(std::get<1>(offers[i]));  // exact below 2^53 rows
        flat[3 * i + 2] = static_cast<double>(std::get<2>(offers[i]));
      }
      const std::vector<double> all = op_.gather_from_ranks(flat);
      offers.clear();
      for (std::size_t i = 0; i + 2 < all.size(); i += 3) {
        if (std::isfinite(all[i + 1]))
          offers.emplace_back(all[i], static_cast<std::size_t>(all[i + 1]), static_cast<int>(all[i + 2]));
      }
    }
    std::sort(offers.begin(), offers.end());
    // the smallest overall, then the smallest of every block that has none among them
    std::vector<Offer> picks(
        offers.begin(), offers.begin() + std::min<std::ptrdiff_t>(guesses, static_cast<std::ptrdiff_t>(offers.size())));
    for (int b = 0; b < (guards_ > 0 ? num_blocks_ : 0); ++b) {
      const auto in = [b](const Offer& o) { return std::get<2>(o) == b; };
      if (std::none_of(picks.begin(), picks.end(), in)) {
        const auto o = std::find_if(offers.begin(), offers.end(), in);
        if (o != offers.end() && static_cast<int>(picks.size()) < max_sub_) picks.push_back(*o);
      }
    }
    const int units = static_cast<int>(picks.size());
    Kokkos::View<std::size_t*, memory_space> rows(alloc("cispmv::davidson::guess_rows"), units);
    auto rows_host = Kokkos::create_mirror_view(rows);
    std::vector<bool> seeded(static_cast<std::size_t>(std::max(1, num_blocks_)), false);
    for (int c = 0; c < units; ++c) {
      rows_host(c) = std::get<1>(picks[static_cast<std::size_t>(c)]);
      col_block_[static_cast<std::size_t>(c)] = std::get<2>(picks[static_cast<std::size_t>(c)]);
      if (guards_ > 0) seeded[static_cast<std::size_t>(col_block_[static_cast<std::size_t>(c)])] = true;
    }
    Kokkos::deep_copy(exec_, rows, rows_host);
    start_columns(exec_, V_, rows, units, first_);
    exec_.fence();
    int m = units;
    if (opts_.random_start) {
      // one random vector, or one per block that holds a guess
      for (int b = guards_ > 0 ? 0 : -1; b < (guards_ > 0 ? num_blocks_ : 0); ++b) {
        if (m >= max_sub_ || static_cast<std::size_t>(m) >= N_) break;
        if (b >= 0 && !seeded[static_cast<std::size_t>(b)]) continue;
        random_column(exec_, V_, m, first_, blocks_, b);
        if (orthonormalise(m)) col_block_[static_cast<std::size_t>(m++)] = b;
      }
    }
    return m;
  }

  /// Orthonormalises column m of V against columns 0..m-1 (project_column); false when it is linearly
  /// dependent on them.
  bool orthonormalise(int m) {
    auto t = column(V_, m);
    const double norm0 = std::sqrt(global_dot(t, t));
    if (!(norm0 > 0.0) || !std::isfinite(norm0)) return false;
    project_column(m, 0);
    const double norm = std::sqrt(global_dot(t, t));
    if (!(norm > opts_.linear_dependence * norm0)) return false;
    scale(exec_, 1.0 / norm, t);
    return true;
  }

  /// Column col of V minus its projection on columns [from, col), by classical Gram-Schmidt applied
  /// twice (CGS2: "twice is enough" keeps it as orthogonal as modified Gram-Schmidt, Giraud et al.
  /// 2005). Each pass is two kernels, h = V^T t (one reduction of col - from values) and t -= V h,
  /// where modified Gram-Schmidt needs col - from dependent reductions.
  void project_column(int col, int from) {
    if (col <= from) return;
    auto t = column(V_, col);
    const Basis P = columns(V_, from, col);
    for (int pass = 0; pass < 2; ++pass) {
      const std::vector<double> h = global_multi_dot(P, P, t, col - from, true);
      for (int j = 0; j < col - from; ++j) h_host_(j) = h[static_cast<std::size_t>(j)];
      Kokkos::deep_copy(exec_, h_, h_host_);
      subtract_projection(exec_, P, h_, col - from, t);
      exec_.fence();  // h_host_ is rewritten by the next pass
    }
  }

  /// Orthonormalises columns [m, m + count) of V, an iteration's corrections (blocks[c]: the block of
  /// correction c), against columns 0..m-1 and each other; returns how many were kept, moved down to
  /// [m, m + kept) in order, col_block_ set. Block CGS2 against the basis first: H = V^T T and T -= V H
  /// for up to block_dot_columns corrections at once, twice, so that V is read four times per
  /// iteration instead of four times per correction. Then each correction by CGS2 against the kept
  /// ones before it (project_column); one that loses more than half its norm there (cancellation: what
  /// is left of its error along V grows relative to it) is projected against the whole basis once
  /// more. A correction is dropped as linearly dependent when its norm falls below
  /// linear_dependence times its norm before any projection, or when that norm is 0 or not finite.
  int orthonormalise_block(int m, int count, const std::vector<int>& blocks) {
    if (count == 0) return 0;
    const std::vector<double> norm2 =
        global_multi_dot(columns(V_, m, m + count), columns(V_, m, m + count), column(V_, m), count, false);
    if (m > 0) {
      const Basis P = columns(V_, 0, m);
      for (int pass = 0; pass < 2; ++pass) {
        for (int c0 = 0; c0 < count; c0 += block_dot_columns) {
          const int pc = std::min(block_dot_columns, count - c0);
          const Basis T = columns(V_, m + c0, m + c0 + pc);
          const std::vector<double> h = global_block_dots(P, T, m, pc);
          for (int j = 0; j < m; ++j) {
            for (int c = 0; c < pc; ++c) H_host_(j, c) = h[static_cast<std::size_t>(j) * pc + c];
          }
          Kokkos::deep_copy(exec_, H_, H_host_);
          subtract_block_projection(exec_, P, H_, m, pc, T);
          exec_.fence();  // H_host_ is rewritten by the next block
        }
      }
    }
    int kept = 0;
    for (int c = 0; c < count; ++c) {
      const double norm0 = std::sqrt(norm2[static_cast<std::size_t>(c)]);
      if (!(norm0 > 0.0) || !std::isfinite(norm0)) continue;
      const int col = m + kept;
      if (col != m + c) Kokkos::deep_copy(exec_, column(V_, col), column(V_, m + c));
      auto t = column(V_, col);
      const double before = std::sqrt(global_dot(t, t));
      project_column(col, m);
      double norm = std::sqrt(global_dot(t, t));
      if (kept > 0 && norm < 0.5 * before) {
        project_column(col, 0);
        norm = std::sqrt(global_dot(t, t));
      }
      if (!(norm > opts_.linear_dependence * norm0)) continue;
      scale(exec_, 1.0 / norm, t);
      col_block_[static_cast<std::size_t>(col)] = blocks[static_cast<std::size_t>(c)];
      ++kept;
    }
    exec_.fence();
    return kept;
  }

  /// Adds A V(:, j) and the new row/column of G for the columns [first, m).
  void extend_projection(int first, int m) {
    apply(first, m);
    const Basis P = columns(V_, 0, m);
    for (int c0 = first; c0 < m; c0 += block_dot_columns) {  // V read once per block_dot_columns new columns
      const int pc = std::min(block_dot_columns, m - c0);
      const std::vector<double> d = global_block_dots(P, columns(AV_, c0, c0 + pc), m, pc);
      for (int c = 0; c < pc; ++c) {
        const int j = c0 + c;
        for (int i = 0; i <= j; ++i) g(i, j) = g(j, i) = d[static_cast<std::size_t>(i) * pc + c];
      }
    }
  }

  /// Eigenpairs of the projected matrix Gm (m_ x m_, row-major), ascending. With blocks, G couples no
  /// two of them (each basis vector lies in one block and the operator maps a block into itself, so the
  /// dots between blocks are sums of exact zeros), and blockwise_eigen solves each block's part alone
  /// (all-electron H2O, 10 roots, 4 irreps: m up to 112, blocks of ~28); a G that does couple two
  /// blocks is solved whole.
  SymmetricEigen projected_eigen(std::vector<double> Gm) const {
    if (guards_ == 0) return jacobi_eigen(std::move(Gm), m_);
    return blockwise_eigen(std::move(Gm), m_, std::vector<int>(col_block_.begin(), col_block_.begin() + m_));
  }

  /// Ritz pairs of the projected problem; the coefficients and values of those a restart would keep go
  /// to Y and theta, in order_: first the active ones (the num_roots lowest, then, with blocks, each
  /// block's guard: its lowest pair that is not among them), then the lowest others.
  SymmetricEigen ritz_pairs() {
    std::vector<double> Gm(static_cast<std::size_t>(m_) * m_);
    for (int i = 0; i < m_; ++i) {
      for (int j = 0; j < m_; ++j) Gm[static_cast<std::size_t>(i) * m_ + j] = g(i, j);
    }
    Kokkos::Timer timer;
    SymmetricEigen eig = projected_eigen(std::move(Gm));
    res_.projected_seconds += timer.seconds();
    // a Ritz vector's block: that of its largest coefficient (the basis vectors each lie in one block,
    // and G couples no two blocks, so the Ritz vectors do not mix them)
    std::vector<int> block(static_cast<std::size_t>(m_), -1);
    for (int i = 0; i < m_ && guards_ > 0; ++i) {
      int best = 0;
      for (int j = 1; j < m_; ++j) {
        if (std::abs(eig.vectors[static_cast<std::size_t>(i) * m_ + j]) >
            std::abs(eig.vectors[static_cast<std::size_t>(i) * m_ + best]))
          best = j;
      }
      block[static_cast<std::size_t>(i)] = col_block_[static_cast<std::size_t>(best)];
    }
    order_.clear();
    for (int i = 0; i < std::min(k_, m_); ++i) order_.push_back(i);
    for (int b = 0; b < (guards_ > 0 ? num_blocks_ : 0); ++b) {
      for (int i = k_; i < m_; ++i) {
        if (block[static_cast<std::size_t>(i)] == b) {
          order_.push_back(i);
          break;
        }
      }
    }
    active_ = static_cast<int>(order_.size());
    const int nvec = std::min(m_, std::max(active_, keep_));
    for (int i = 0; i < m_ && static_cast<int>(order_.size()) < nvec; ++i) {
      if (std::find(order_.begin(), order_.end(), i) == order_.end()) order_.push_back(i);
    }
    order_block_.assign(order_.size(), -1);
    for (std::size_t c = 0; c < order_.size(); ++c) {
      const int i = order_[c];
      order_block_[c] = block[static_cast<std::size_t>(i)];
      theta_host_(c) = eig.values[static_cast<std::size_t>(i)];
      for (int j = 0; j < m_; ++j) Y_host_(j, c) = eig.vectors[static_cast<std::size_t>(i) * m_ + j];
    }
    Kokkos::deep_copy(exec_, Y_, Y_host_);
    Kokkos::deep_copy(exec_, theta_, theta_host_);
    exec_.fence();  // the host mirrors are rewritten later in this iteration
    return eig;
  }

  /// Whether active pair c needs no more corrections: its residual is below the tolerance, or it is a
  /// block's guard whose Ritz value minus its residual norm lies above the last root's Ritz value (an
  /// eigenvalue lies within the residual norm of a Ritz value: that block's next one is above the
  /// wanted roots, and converging it further would change nothing).
  bool settled(int c, const std::vector<double>& residual) const {
    const double r = residual[static_cast<std::size_t>(c)];
    if (r < opts_.residual_tolerance) return true;
    return c >= k_ && theta_host_(c) - r > theta_host_(k_ - 1);
  }

  /// Residuals r_c = (AV - theta_c V) y_c of the active pairs (the wanted roots and the blocks' guards)
  /// into R; their norms into `residual`; returns the largest of the roots'. A NaN residual is the
  /// largest (never "converged").
  double residual_norms(std::vector<double>& residual) {
    combine(exec_, AV_, V_, Y_, theta_, m_, active_, R_, true);
    const std::vector<double> r2 = global_multi_dot(R_, R_, column(R_, 0), active_, false);
    double worst = 0.0;
    bool not_a_number = false;
    for (int c = 0; c < active_; ++c) {
      residual[c] = std::sqrt(r2[c]);
      not_a_number = not_a_number || std::isnan(residual[c]);
      if (c < k_) worst = std::max(worst, residual[c]);
    }
    return not_a_number ? std::numeric_limits<double>::quiet_NaN() : worst;
  }

  /// V <- V Y(:, 0:nvec), AV <- AV Y(:, 0:nvec), G <- diag(theta): no extra product with A.
  void restart(const SymmetricEigen& eig, int nvec) {
    const auto first_nvec = Kokkos::make_pair(0, nvec);
    combine(exec_, V_, V_, Y_, theta_, m_, nvec, W_, false);
    Kokkos::deep_copy(exec_, Kokkos::subview(V_, Kokkos::ALL(), first_nvec),
                      Kokkos::subview(W_, Kokkos::ALL(), first_nvec));
    combine(exec_, AV_, AV_, Y_, theta_, m_, nvec, W_, false);
    Kokkos::deep_copy(exec_, Kokkos::subview(AV_, Kokkos::ALL(), first_nvec),
                      Kokkos::subview(W_, Kokkos::ALL(), first_nvec));
    std::fill(G_.begin(), G_.end(), 0.0);
    for (int c = 0; c < nvec; ++c) {
      g(c, c) = eig.values[static_cast<std::size_t>(order_[static_cast<std::size_t>(c)])];
      col_block_[static_cast<std::size_t>(c)] = order_block_[static_cast<std::size_t>(c)];
    }
    for (int c = 0; c < nvec; ++c) {
      for (int j = 0; j < nvec; ++j) Y_host_(j, c) = j == c ? 1.0 : 0.0;
    }
    Kokkos::deep_copy(exec_, Y_, Y_host_);
    exec_.fence();
    m_ = nvec;
    ++res_.restarts;
  }

  /// Preconditioned corrections t = (D - theta)^-1 r for the unconverged active pairs (each in its
  /// pair's block), appended to V and orthonormalised together (orthonormalise_block).
  template <class DiagView>
  void add_corrections(const std::vector<double>& residual, const DiagView& diagonal) {
    std::vector<int> blocks;
    for (int c = 0; c < active_; ++c) {
      if (settled(c, residual)) continue;
      const int col = m_ + static_cast<int>(blocks.size());
      if (col == max_sub_) break;  // only when max_sub == n < 2 * num_roots: no room for more
      const int block = order_block_[static_cast<std::size_t>(c)];
      precondition(exec_, diagonal, theta_host_(c), opts_.denominator_guard, column(R_, c), column(V_, col), blocks_,
                   block);
      blocks.push_back(block);
    }
    m_ += orthonormalise_block(m_, static_cast<int>(blocks.size()), blocks);
  }

  /// Ritz vectors of the wanted roots and the final figures.
  void finish(const std::vector<double>& residual) {
    res_.eigenvalues.assign(theta_host_.data(), theta_host_.data() + k_);
    res_.residual_norms.assign(residual.begin(), residual.begin() + k_);
    res_.guards = 0;
    for (int c = k_; c < active_; ++c) res_.guards += settled(c, residual);
    res_.subspace_size = m_;
    res_.eigenvectors = Basis(alloc("cispmv::davidson::eigenvectors"), n_, k_);
    combine(exec_, V_, V_, Y_, theta_, m_, k_, res_.eigenvectors, false);
    exec_.fence();
  }

  Exec exec_;
  const Operator& op_;
  DavidsonOptions opts_;
  std::size_t n_;          ///< rows of the vectors here (this process's, for a distributed operator)
  std::size_t N_ = 0;      ///< rows of the operator
  std::size_t first_ = 0;  ///< global index of row 0 here
  int k_;
  int max_sub_ = 0;
  int keep_ = 0;
  int m_ = 0;  ///< basis size
  static constexpr int max_blocks = 32;
  int num_blocks_ = 0;            ///< 1 + the largest of DavidsonOptions::row_blocks over all processes
  int guards_ = 0;                ///< the blocks that hold rows, when there are several, else 0
  int active_ = 0;                ///< pairs that must converge: the roots, then the guards (order_)
  std::vector<int> order_;        ///< Ritz pairs in Y's column order (see ritz_pairs)
  std::vector<int> order_block_;  ///< their blocks (-1: no blocks)
  std::vector<int> col_block_;    ///< the block of each basis vector (-1: no blocks, or a random start)
  using Blocks = Kokkos::View<int*, memory_space>;
  Blocks blocks_;  ///< DavidsonOptions::row_blocks on the device (empty without guards)
  Basis V_, AV_, R_, W_, Y_;
  using Block = Kokkos::View<double**, Kokkos::LayoutRight, memory_space>;
  Block X_, Y_block_;  ///< row-major copies of the columns one block product takes and gives
  Vec theta_;
  typename Basis::HostMirror Y_host_;
  typename Vec::HostMirror theta_host_;
  Vec h_;
  typename Vec::HostMirror h_host_;
  using Partial = Kokkos::View<double**, Kokkos::LayoutRight, memory_space>;
  Partial partial_;  ///< multi_dot's per-chunk sums (max_sub x chunks)
  typename Partial::HostMirror partial_host_;
  Partial block_partial_;  ///< block_dots' per-chunk sums (chunks x max_sub * block_dot_columns)
  typename Partial::HostMirror block_partial_host_;
  using Small = Kokkos::View<double**, Kokkos::LayoutLeft, memory_space>;
  Small H_;  ///< block Gram-Schmidt coefficients (max_sub x block_dot_columns)
  typename Small::HostMirror H_host_;
  std::vector<double> G_;  ///< V^T A V, row-major on the host
  Result res_;
};

}  // namespace impl

/// Lowest `opts.num_roots` eigenpairs of the symmetric operator `op` by Davidson's method with the
/// diagonal preconditioner t = (D - theta)^-1 r.
///
/// `op` is either a cispmv matrix in any format (then its products run through one SpmvPlan made
/// with `opts.spmv`), or an operator: an object with `memory_space`, `num_rows()`, `num_cols()` and
/// `apply(alpha, x, beta, y)` computing y = beta*y + alpha*A*x on rank-1 Views of that memory space
/// (an SpmvPlan is one). `diagonal` holds A's diagonal in a memory space `exec` can access.
///
/// A distributed operator (mpi::DistributedSpmvPlan: num_rows() this process's rows, global_rows(),
/// first_row(), sum_over_ranks(), gather_from_ranks()) is solved the same way by every process of
/// its communicator together: vectors, diagonal and eigenvectors are cut like the rows, every
/// reduction is summed over the processes, and each process solves the same small G, so all of them
/// take the same steps and return the same eigenvalues.
///
/// The basis V and the products AV = A V are LayoutLeft Views of num_rows x max_subspace in the
/// operator's memory space; every operation runs on `exec`, only the projected matrix G = V^T A V
/// lives on the host, where jacobi_eigen solves it (per block with DavidsonOptions::row_blocks: blockwise_eigen).
/// Start: unit vectors on the smallest diagonal entries. Each iteration: Ritz pairs of G, residuals, stop if all wanted
/// residuals are below the tolerance, else one preconditioned correction per unconverged root, all of them
/// orthogonalised against V together by block classical Gram-Schmidt applied twice, then against each other
/// (orthonormalise_block), discarded when (nearly) linearly dependent, normalised and appended. The new vectors of an
/// iteration (one per unconverged root: a block Davidson) are multiplied together: with an SpmvPlan of CSR, the hybrid
/// format or csell the matrix is read once for up to 16 of them (SpmvPlan::apply on rank-2 Views), otherwise once per
/// vector. When the basis would exceed max_subspace it restarts from the lowest restart_size Ritz vectors (AV is
/// combined the same way: no extra product). Like any Krylov-type method it cannot leave an invariant subspace that
/// holds all its start vectors (a block of the matrix they do not couple to, e.g. another symmetry): a dense random
/// start vector beside the unit ones is there for that (DavidsonOptions::random_start; more unit guesses:
/// DavidsonOptions::num_guesses). A NaN in the residuals stops the solve as not converged. Throws std::invalid_argument
/// on a non-square operator, a diagonal of the wrong size or impossible options.
template <class Exec, class Operator, class DiagView>
auto davidson(const Exec& exec, const Operator& op, const DiagView& diagonal, const DavidsonOptions& opts = {}) {
  if constexpr (impl::is_cispmv_format<Operator>::value) {
    const SpmvPlan<Exec, Operator> plan(exec, op, opts.spmv);
    return davidson(exec, plan, diagonal, opts);
  } else {
    using memory_space = typename Operator::memory_space;
    static_assert(Kokkos::SpaceAccessibility<Exec, memory_space>::accessible,
                  "cispmv::davidson: the operator's memory space is not accessible from this execution space");
    static_assert(Kokkos::SpaceAccessibility<Exec, typename DiagView::memory_space>::accessible,
                  "cispmv::davidson: the diagonal is not accessible from this execution space");
    static_assert(std::is_same_v<typename Operator::value_type, double>, "cispmv::davidson: double operators only");
    if (diagonal.extent(0) != static_cast<std::size_t>(op.num_rows())) {
      throw std::invalid_argument("cispmv::davidson: the diagonal has " + std::to_string(diagonal.extent(0)) +
                                  " entries for " + std::to_string(op.num_rows()) + " rows");
    }
    const cispmv::impl::ProfilingRegion region("cispmv::davidson");
    impl::Davidson<Exec, Operator> solver(exec, op, opts);
    return solver.solve(diagonal);
  }
}

}  // namespace cispmv::solvers
