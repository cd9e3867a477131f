#pragma once
// What every SpMV kernel shares. Each format has one functor (impl/kernels/<format>.hpp), a
// specialisation of SpmvFunctor with up to two launch shapes (Kokkos Kernels SPMV_Functor):
//   operator()(row)    thread per row (RangePolicy): the paper's Algorithms 1-5
//   operator()(team)   vector per row (TeamPolicy): TeamThreadRange over the team's rows,
//                      ThreadVectorRange over the row's entries, parallel_reduce in registers,
//                      one lane writes y(row): the paper's Algorithm 7 and its CSR analogue.
// A functor says what it has: has_vector_kernel, unrolled (takes SpmvOptions::unroll), can_stage_x.
// Launch parameters (vector length, rows per team, team size) are chosen in launch.hpp, never here.

#include <Kokkos_Core.hpp>

#include "cispmv/impl/backend.hpp"

#include <cstdint>
#include <type_traits>
#include <utility>

namespace cispmv::impl {

/// Tag of the host slice shape of a scalar kernel (see SpmvFunctorBase::has_host_slice_kernel).
struct SliceTag {};
/// Tag of a GPU scalar kernel launched as blocks of consecutive rows, a thread per row (see
/// SpmvFunctorBase::has_row_block_launch).
struct RowBlockTag {};
/// Tag of the lane shape of a multi-vector kernel (see SpmvBlockFunctorBase::for_lanes): each lane
/// owns Loads groups of Width adjacent columns of X (Width 1: one value per load; 2: a pair).
template <int Width, int Loads>
struct LaneTag {
  static_assert((Width == 1 || Width == 2) && Loads >= 1, "cispmv: a lane loads one value or a pair at a time");
};

/// Tag of a format's own kernel for the lane shape with one pair per lane (LaneTag<2, 1>'s lanes and
/// columns), compiled apart for each of the format's variants (see SpmvBlockFunctorBase::pair_variant):
/// a kernel holds the registers of its most demanding path, so a variant that would cost the others
/// occupancy gets a kernel of its own.
template <int Variant>
struct PairTag {};

/// How y is updated: compile-time, so the kernels carry no branch on beta (beta == 0 never reads
/// y, so NaN in y is overwritten as BLAS requires).
enum BetaCase : int { beta_zero = 0, beta_one = 1, beta_general = 2 };

/// Formats that may lay their rows out in another order than the matrix's say so with
/// `row_of(layout row)`, the matrix row (csell's row_order): the kernels walk layout rows and the y
/// update writes the matrix row.
template <class Matrix, class = void>
struct has_row_order : std::false_type {};
template <class Matrix>
struct has_row_order<Matrix, std::void_t<decltype(std::declval<const Matrix&>().row_of(0))>> : std::true_type {};

/// What every SpMV functor shares: operands, the y update, and the walk over a team's rows.
template <class Exec, class Matrix, class XView, class YView, int Beta>
struct SpmvFunctorBase {
  /// Kernels with a vector-per-row shape say so.
  static constexpr bool has_vector_kernel = false;
  /// Formats laid out for a vector per row (row-major rows: CSR, the hybrid format) say so; the
  /// ELLPACK families are column-major for thread-per-row coalescing. Kernel::automatic picks the
  /// vector kernel on GPUs only for these.
  static constexpr bool prefers_vector_on_gpu = false;
  /// Kernels that take SpmvOptions::unroll (independent accumulators per lane) say so.
  static constexpr bool unrolled = false;
  /// Vector kernels whose lanes per row are a property of the matrix, not a launch choice (csell's
  /// row_lanes: the layout deals a row's entries to its lanes) say so: the plan takes the matrix's
  /// and prefers the vector shape on GPUs exactly when that is more than one lane.
  static constexpr bool vector_length_from_matrix = false;
  /// Kernels that can stage the reference part of x in team scratch memory say so.
  static constexpr bool can_stage_x = false;
  /// Scalar kernels that take SpmvOptions::unroll (entries decoded together per row) say so, and
  /// give their factor for matrix A where SpmvOptions::unroll is 0 (GPUs).
  static constexpr bool scalar_unrolled = false;
  static int default_scalar_unroll(const Matrix&) { return 1; }
  /// Sliced formats whose scalar kernel has a CPU shape say so: operator()(SliceTag, slice) walks a
  /// whole slice with the loops interchanged (entry k of every row of the slice, then k + 1), so a
  /// CPU thread streams the slice's column-major block once, front to back, instead of striding
  /// through it once per row. The launch uses it for the scalar kernel on host execution spaces.
  static constexpr bool has_host_slice_kernel = false;
  /// Scalar kernels that run on GPUs as teams of SpmvOptions::rows_per_team consecutive rows (one
  /// thread each: operator()(RowBlockTag, team)) say so, so that the warps an SM holds at once work
  /// on neighbouring rows and share their lines of x in L1.
  static constexpr bool has_row_block_launch = false;
  /// Blocks per SM that the row-block launch asks the compiler to fit (Kokkos::LaunchBounds for blocks of at most
  /// gpu_row_block_rows rows: its register budget, and the schedule it makes with it; the plan then caps
  /// SpmvOptions::rows_per_team there), 0 for none.
  static constexpr int row_block_min_blocks = 0;
  /// Unrolled kernels with a second loop for some matrices (csell with values inline: its loads one
  /// group ahead) say so, and which matrices take it. On GPUs the plan launches those as Unroll = -4
  /// or -8 (SpmvOptions::loads_ahead): each instantiation compiles one loop, so one loop's registers
  /// never limit the other's occupancy.
  static constexpr bool has_ahead_loop = false;
  static bool runs_ahead(const Matrix&) { return false; }
  /// Slice kernels with an AVX-512 walk for x86-64 CPUs (impl::host_simd) say so; the plan sets
  /// host_walk (a host_simd::Walk) per launch, 0 for the portable loop.
  static constexpr bool has_host_simd = false;
  using value_type = typename Matrix::value_type;
  using ordinal_type = typename Matrix::ordinal_type;
  using size_type = typename Matrix::size_type;
  using team_member = typename Kokkos::TeamPolicy<Exec>::member_type;
  /// Work items of the CPU slice shape: the matrix's slices (the ELLPACK kernels: blocks of rows).
  static ordinal_type host_slices(const Matrix& A) { return A.num_slices(); }

  Matrix A;
  XView x;
  YView y;
  value_type alpha;
  value_type beta;
  ordinal_type rows_per_team = 1;
  int vector_length = 1;  ///< lanes per row in the vector kernels (the team's vector length)
  int host_walk = 0;      ///< the slice kernel's AVX-512 walk (has_host_simd; host_simd::Walk), 0: none

  SpmvFunctorBase(const Matrix& A_, const XView& x_, const YView& y_, value_type alpha_, value_type beta_)
      : A(A_), x(x_), y(y_), alpha(alpha_), beta(beta_) {}

  /// The row of y that the kernels' row `row` (a row of the format's layout) is.
  KOKKOS_FORCEINLINE_FUNCTION ordinal_type out_row(const ordinal_type row) const {
    if constexpr (has_row_order<Matrix>::value) {
      return A.row_of(row);
    } else {
      return row;
    }
  }

  /// y(out_row(layout_row)) from the row's sum.
  KOKKOS_FORCEINLINE_FUNCTION void update(const ordinal_type layout_row, const value_type sum) const {
    const ordinal_type row = out_row(layout_row);
    if constexpr (Beta == beta_zero) {
      y(row) = alpha * sum;
    } else if constexpr (Beta == beta_one) {
      y(row) += alpha * sum;
    } else {
      y(row) = beta * y(row) + alpha * sum;
    }
  }

  /// Vector shape: each thread (a vector of lanes) of the team takes one of the team's rows;
  /// row_sum(row, sum) reduces the row over ThreadVectorRange; one lane writes y(row).
  template <class RowSum>
  KOKKOS_INLINE_FUNCTION void for_team_rows(const team_member& team, const RowSum& row_sum) const {
    const ordinal_type first = static_cast<ordinal_type>(team.league_rank()) * rows_per_team;
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, rows_per_team), [&](const ordinal_type i) {
      const ordinal_type row = first + i;
      if (row >= A.num_rows) return;
      value_type sum = 0;
      row_sum(row, sum);
      Kokkos::single(Kokkos::PerThread(team), [&]() { update(row, sum); });
    });
  }
};

/// Reads matrix data that each SpMV uses exactly once. On CUDA this is a cache-streaming load
/// (__ldcs: evict-first), so the stream of matrix values and indices does not push the gathered
/// entries of x out of L1/L2; elsewhere a plain load.
template <class T>
KOKKOS_FORCEINLINE_FUNCTION T load_once(const T& ref) {
#if defined(__CUDA_ARCH__)
  return __ldcs(&ref);
#else
  return ref;
#endif
}

/// v[0], v[1] = p[0], p[1] in one load where the backend has one (a 16-byte __ldg of a double2 on
/// CUDA; p must be aligned to 2 * sizeof(S)); elsewhere two loads.
template <class S>
KOKKOS_FORCEINLINE_FUNCTION void load_pair(const S* p, S* v) {
#if defined(__CUDA_ARCH__)
  if constexpr (std::is_same_v<S, double>) {
    const double2 d = __ldg(reinterpret_cast<const double2*>(p));
    v[0] = d.x;
    v[1] = d.y;
  } else if constexpr (std::is_same_v<S, float>) {
    const float2 f = __ldg(reinterpret_cast<const float2*>(p));
    v[0] = f.x;
    v[1] = f.y;
  } else {
    v[0] = p[0];
    v[1] = p[1];
  }
#else
  v[0] = p[0];
  v[1] = p[1];
#endif
}

/// One lane's share of a row in the vector kernels: entries begin + lane, begin + lane + V, ... of
/// [begin, end), V = vector length, so the V lanes of a row read V consecutive entries at a time
/// (coalesced). Unroll > 1 keeps that many independent accumulators and issues that many strided
/// loads before their first use: more bytes in flight per lane, the limit of a memory-bound kernel
/// whose x loads depend on the column loads. Unroll = 1 is the plain loop of Algorithm 7.
template <int Unroll, class Index, class Entry>
KOKKOS_FORCEINLINE_FUNCTION auto strided_row_sum(const Index begin, const Index end, const int lane, const int V,
                                                 const Entry& entry) -> decltype(entry(begin)) {
  using S = decltype(entry(begin));
  S acc[Unroll];
  for (int u = 0; u < Unroll; ++u) acc[u] = S(0);
  const Index stride = static_cast<Index>(V);
  Index k = begin + static_cast<Index>(lane);
  if constexpr (Unroll > 1) {
    for (; k + static_cast<Index>(Unroll - 1) * stride < end; k += static_cast<Index>(Unroll) * stride) {
      for (int u = 0; u < Unroll; ++u) acc[u] += entry(k + static_cast<Index>(u) * stride);
    }
  }
  for (; k < end; k += stride) acc[0] += entry(k);
  S sum = acc[0];
  for (int u = 1; u < Unroll; ++u) sum += acc[u];
  return sum;
}

template <class Exec, class Matrix, class XView, class YView, int Beta, int Unroll = 1>
struct SpmvFunctor;  // one specialisation per format, in impl/kernels/<format>.hpp

// ------------------------------------------------------------------------------ several vectors
/// Fewest columns of a multi-vector product for which BlockShape::automatic takes the lane shape with
/// one column per lane on a GPU. H100: per vector at 8 and 16 columns the lanes win (frozen-core FCI
/// csell 0.251 against 0.299 ms, 0.232 against 0.383; all-electron 2.66 against 2.62, 2.51 against
/// 3.64 ms); at 2 and 4 columns the all-electron matrix's rows win (2.67 against 3.09, 2.17 against
/// 2.85 ms). Formats whose lanes load pairs of columns set their own
/// (SpmvBlockFunctorBase::automatic_lane_min_columns).
inline constexpr int gpu_lane_min_columns = 8;

/// Widest block of columns one multi-vector launch carries (its K); wider X are done in blocks of it.
inline constexpr int max_block_columns = 16;

/// The K a plan compiles for a launch of `columns` columns (SpmvPlan::launch_block: the narrowest of 1, 4,
/// 8 and 16 that holds them).
constexpr int block_width_for(const int columns) {
  return columns <= 1 ? 1 : columns <= 4 ? 4 : columns <= 8 ? 8 : max_block_columns;
}

/// Row stride of a row-major buffer whose first `columns` (2 to max_block_columns) columns a caller
/// multiplies as one block on Exec, as the block Davidson does. On GPUs the compiled width
/// (block_width_for; 2 for two columns): formats' pair kernels want X's rows K apart (or 2 apart in a
/// 4-column launch, SpmvBlockFunctorBase::pair_variant), and on a buffer as wide as its block's columns
/// rounded up to even the Davidson's products never got them. H200, csell as for_block_products builds
/// it, ms per product of c columns of a W-wide buffer: frozen-core FCI 6 of 6 / 6 of 8: 0.712 / 0.568,
/// 10 of 10 / 10 of 16: 1.123 / 0.941, 12 of 12 / 12 of 16: 1.130 / 0.933; all-electron 6.84 / 6.60,
/// 12.24 / 11.30, 12.70 / 11.38. Elsewhere `columns` rounded up to even (pairs aligned): the CPUs' block
/// walk reads X's rows whole, and wider ones cost it (our 2 cores: 6 of 8 1.26x the time of 6 of 6).
template <class Exec>
int block_buffer_stride(const int columns) {
  const int even = columns + columns % 2;
  if constexpr (is_gpu_space_v<Exec>) return even == 2 ? 2 : block_width_for(even);
  return even;
}

/// What every multi-vector SpMV functor shares: Y(:, first .. first+columns) = beta*Y + alpha*A*X(:,
/// the same columns) for columns <= K, the matrix read once for all of them. Each row keeps K sums in
/// registers (K a compile-time 1, 4, 8 or 16; columns .. K-1 are masked); beta is a run-time case (a
/// uniform branch per row: compiling three beta cases per width would cost a GPU build more than a
/// memory-bound kernel could gain). X and Y are rank-2 Views of any layout: LayoutRight (row-major)
/// is the fast one, since the K values of X a matrix entry gathers then lie in one or two cache lines
/// (LayoutLeft: K lines, n apart). Operands, launch shape and traits are the single-vector base's.
template <class Exec, class Matrix, class XView, class YView, int K>
struct SpmvBlockFunctorBase : SpmvFunctorBase<Exec, Matrix, XView, YView, beta_general> {
  using Base = SpmvFunctorBase<Exec, Matrix, XView, YView, beta_general>;
  using typename Base::ordinal_type;
  using typename Base::team_member;
  using typename Base::value_type;
  static constexpr bool available = true;
  /// Kernels with the lane shape (operator()(LaneTag<Width, Loads>, index), see for_lanes) say so,
  /// with the columns per lane their automatic lane shape takes for this launch's matrix and X where X
  /// allows pairs (SpmvOptions::lane_columns) and the fewest columns for which BlockShape::automatic
  /// takes the lane shape on a GPU (with pairs; one column per lane: impl::gpu_lane_min_columns).
  static constexpr bool has_lane_kernel = false;
  int automatic_lane_columns() const { return 1; }
  static constexpr int automatic_lane_min_columns = gpu_lane_min_columns;
  /// Formats with their own kernels for one pair per lane (operator()(PairTag<V>, index) for V <
  /// pair_variants) say so; pair_variant() is the one for this launch's matrix and X, or -1: the
  /// generic LaneTag<2, 1>.
  static constexpr int pair_variants = 0;
  int pair_variant() const { return -1; }

  int first = 0;       ///< first column of X and Y of this launch
  int columns = K;     ///< columns of this launch (<= K)
  int lane_shift = 0;  ///< lane shape: log2 of the lanes per row

  SpmvBlockFunctorBase(const Matrix& A_, const XView& x_, const YView& y_, value_type alpha_, value_type beta_,
                       int first_, int columns_)
      : Base(A_, x_, y_, alpha_, beta_), first(first_), columns(columns_) {}

  /// sum[j] += v * X(col, j) for the launch's columns.
  KOKKOS_FORCEINLINE_FUNCTION void add(value_type* sum, const value_type v, const ordinal_type col) const {
    for (int j = 0; j < K; ++j) {
      if (j < columns) sum[j] += v * this->x(col, first + j);
    }
  }

  /// beta == 0 does not read Y (NaN there is overwritten, as BLAS requires).
  KOKKOS_FORCEINLINE_FUNCTION void update(const ordinal_type layout_row, const value_type* sum) const {
    const ordinal_type row = this->out_row(layout_row);
    for (int j = 0; j < K; ++j) {
      if (j >= columns) continue;
      auto& yj = this->y(row, first + j);
      yj = this->beta == value_type(0) ? this->alpha * sum[j] : this->beta * yj + this->alpha * sum[j];
    }
  }

  /// beta == 0 does not read Y. Column j of the launch (j < columns).
  KOKKOS_FORCEINLINE_FUNCTION void update_column(const ordinal_type layout_row, const int j,
                                                 const value_type sum) const {
    auto& yj = this->y(this->out_row(layout_row), first + j);
    yj = this->beta == value_type(0) ? this->alpha * sum : this->beta * yj + this->alpha * sum;
  }

  /// Lane shape (LaneTag<Width, Loads>, a flat RangePolicy over rows x lanes): index t is lane
  /// j = t % lanes of row t / lanes (lanes = 1 << lane_shift, a power of two). Lane j owns the column
  /// groups j, j + lanes, .., (Loads of them) of Width adjacent columns each: columns
  /// (j + p * lanes) * Width + w, w < Width; groups beyond `columns` idle. Width 2 loads a pair of
  /// values of X at once (load_pair; the plan launches it only for an even number of columns in rows
  /// of X that are contiguous, with every pair aligned: a branch per load for a cut last pair cost
  /// 25 % on an H100). On CUDA a warp then holds 32 / lanes consecutive rows: their lanes read the
  /// same matrix entry at once (one broadcast load per row) and each of their loads of X covers a
  /// contiguous run of the row's values (one coalesced load). Each decoded entry feeds Width * Loads
  /// sums; no reduction over lanes. A RangePolicy (Kokkos launched team kernels preferring shared memory
  /// over L1, where the gathers of X and the csell value table live, until the plan's team_launch set the
  /// L1; this walk has not been timed as teams since). Formats' own pair kernels run as teams of
  /// consecutive lanes (SpmvPlan::launch_pair_kernel).
  /// walk(row, visit) calls visit(value, column) for each entry of row `row`.
  template <int Width, int Loads, class Walk>
  KOKKOS_FORCEINLINE_FUNCTION void for_lanes(const std::int64_t t, const Walk& walk) const {
    const auto row = static_cast<ordinal_type>(t >> lane_shift);
    const int lanes = 1 << lane_shift;
    const int j = static_cast<int>(t & (lanes - 1));
    if (row >= this->A.num_rows || j * Width >= columns) return;
    int c0[Loads];  // first column (of the launch) of each group
    bool live[Loads];
    for (int p = 0; p < Loads; ++p) {
      c0[p] = (j + p * lanes) * Width;
      live[p] = c0[p] < columns;
    }
    value_type sum[Width * Loads];
    for (int i = 0; i < Width * Loads; ++i) sum[i] = 0;
    walk(row, [&](const value_type v, const ordinal_type col) {
      for (int p = 0; p < Loads; ++p) {
        if (!live[p]) continue;
        value_type xv[Width];
        if constexpr (Width == 1) {
          xv[0] = this->x(col, first + c0[p]);
        } else {
          load_pair(this->x.data() + static_cast<std::int64_t>(col) * static_cast<std::int64_t>(this->x.stride(0)) +
                        (first + c0[p]),
                    xv);
        }
        for (int w = 0; w < Width; ++w) sum[p * Width + w] += v * xv[w];
      }
    });
    for (int p = 0; p < Loads; ++p) {
      if (!live[p]) continue;
      for (int w = 0; w < Width; ++w) update_column(row, c0[p] + w, sum[p * Width + w]);
    }
  }

  /// Vector shape: each thread (a vector of lanes) of the team takes one of the team's rows; the
  /// lanes accumulate their strided share, partial(row, lane, sums); then each column's sums are
  /// reduced over the lanes (ThreadVectorRange hands lane i the index i) and one lane writes the row.
  template <class RowPartial>
  KOKKOS_INLINE_FUNCTION void for_team_rows(const team_member& team, const RowPartial& partial) const {
    const ordinal_type first_row = static_cast<ordinal_type>(team.league_rank()) * this->rows_per_team;
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, this->rows_per_team), [&](const ordinal_type i) {
      const ordinal_type row = first_row + i;
      if (row >= this->A.num_rows) return;
      value_type part[K];
      for (int j = 0; j < K; ++j) part[j] = 0;
      Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, this->vector_length),
                           [&](const int lane) { partial(row, lane, part); });
      value_type total[K];
      for (int j = 0; j < K; ++j) {
        value_type t = 0;
        if (j < columns) {
          Kokkos::parallel_reduce(
              Kokkos::ThreadVectorRange(team, this->vector_length), [&](const int, value_type& s) { s += part[j]; }, t);
        }
        total[j] = t;
      }
      Kokkos::single(Kokkos::PerThread(team), [&]() { update(row, total); });
    });
  }
};

/// The multi-vector kernel of a format: specialised in impl/kernels/<format>.hpp where the format
/// has one (CSR, hybrid, csell); elsewhere `available` is false and a plan multiplies the columns
/// one by one.
template <class Exec, class Matrix, class XView, class YView, int K>
struct SpmvBlockFunctor {
  static constexpr bool available = false;
};

}  // namespace cispmv::impl
