#pragma once
/// \file plan.hpp
/// Set up once, apply many: the launch of y = beta*y + alpha*A*x for one matrix on one execution
/// space, with every automatic choice made once (like kokkos-fft's Plan or Kokkos Kernels'
/// SPMVHandle). An eigensolver calls apply() hundreds of times on the same matrix.

#include <Kokkos_Core.hpp>

#include "cispmv/impl/backend.hpp"
#include "cispmv/impl/kernels/common.hpp"
#include "cispmv/impl/kernels/host_simd.hpp"
#include "cispmv/impl/launch.hpp"
#include "cispmv/impl/profiling.hpp"
#include "cispmv/options.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace cispmv {

namespace impl {

/// The view types a plan's kernels read x from and write y to by default.
template <class Exec, class Matrix>
struct PlanViews {
  using value_type = typename Matrix::value_type;
  // x is only read, at scattered places: a const RandomAccess View lets the backend use its
  // read-only data path (__ldg on CUDA).
  using x_type =
      Kokkos::View<const value_type*, typename Exec::memory_space, Kokkos::MemoryTraits<Kokkos::RandomAccess>>;
  using y_type = Kokkos::View<value_type*, typename Exec::memory_space>;
};

/// Throws std::invalid_argument unless every option is in range.
inline void check_options(const SpmvOptions& opts) {
  const bool vl_ok = opts.vector_length >= 0 && opts.vector_length <= gpu_max_vector_length &&
                     (opts.vector_length & (opts.vector_length - 1)) == 0;
  const bool unroll_ok =
      opts.unroll == 0 || opts.unroll == 1 || opts.unroll == 2 || opts.unroll == 4 || opts.unroll == 8;
  const bool lane_columns_ok = opts.lane_columns == 0 || opts.lane_columns == 1 || opts.lane_columns == 2 ||
                               opts.lane_columns == 4 || opts.lane_columns == 8;
  if (!vl_ok || opts.rows_per_team < 0 || opts.team_size < 0 || !unroll_ok || !lane_columns_ok) {
    throw std::invalid_argument(
        "cispmv::SpmvPlan: vector_length must be 0 (automatic) or a power of two <= 32, rows_per_team and "
        "team_size >= 0, unroll 0 (automatic), 1, 2, 4 or 8, and lane_columns 0 (automatic), 1, 2, 4 or 8; got "
        "vector_length=" +
        std::to_string(opts.vector_length) + ", rows_per_team=" + std::to_string(opts.rows_per_team) +
        ", team_size=" + std::to_string(opts.team_size) + ", unroll=" + std::to_string(opts.unroll) +
        ", lane_columns=" + std::to_string(opts.lane_columns));
  }
}

}  // namespace impl

/// The launch of y = beta*y + alpha*A*x for one matrix `A` (any cispmv format) on execution space
/// `Exec`, planned once.
///
/// The constructor validates the options and resolves every automatic choice: the kernel shape
/// (Kernel::automatic: vector per row on GPUs for CSR, the hybrid format and csell built with several
/// lanes per row, else thread per row),
/// the vector launch shape (rows per team, team size clamped to what the kernel's registers allow,
/// lanes per row), the unroll factor, and whether the hybrid kernel stages x's reference part in team
/// scratch memory (and how many bytes). apply() then only checks the vector sizes and launches.
/// The plan holds a shallow copy of A (Views are reference-counted): A's data must not change shape.
template <class Exec, class Matrix>
class SpmvPlan {
 public:
  using execution_space = Exec;
  using memory_space = typename Matrix::memory_space;
  using matrix_type = Matrix;
  using value_type = typename Matrix::value_type;
  using ordinal_type = typename Matrix::ordinal_type;

  static_assert(Kokkos::is_execution_space<Exec>::value, "cispmv::SpmvPlan: Exec must be a Kokkos execution space");
  static_assert(Kokkos::SpaceAccessibility<Exec, typename Matrix::memory_space>::accessible,
                "cispmv::SpmvPlan: the matrix's memory space is not accessible from this execution space");

  // defined below the class (not inline: impl/plan_instances.hpp instantiates it once per format)
  SpmvPlan(const Exec& exec, const Matrix& A, const SpmvOptions& opts = {});

  /// y = beta*y + alpha*A*x on the plan's execution space instance (asynchronous, like any Kokkos
  /// kernel). beta == 0 does not read y. Throws std::invalid_argument when x or y does not match A.
  ///
  /// With rank-2 Views, Y = beta*Y + alpha*A*X for X of num_cols x k and Y of num_rows x k, any k >= 0:
  /// formats with a multi-vector kernel (CSR, hybrid, csell; impl::SpmvBlockFunctor) read the matrix
  /// once per 16 columns, the others once per column. LayoutRight (row-major) X and Y are the fast
  /// layout on GPUs and CPUs alike: the k values an entry gathers from X lie in one or two cache lines.
  /// Other layouts (LayoutLeft, strided subviews) are accepted as they are, at the cost of k lines
  /// per gather.
  template <class XView, class YView>
  void apply(value_type alpha, const XView& x, value_type beta, const YView& y) const {
    static_assert(Kokkos::is_view<XView>::value && Kokkos::is_view<YView>::value,
                  "cispmv::SpmvPlan::apply: x and y must be Kokkos::Views");
    constexpr unsigned rank = XView::rank, y_rank = YView::rank;  // enums of different types in Kokkos 3.4
    static_assert(rank == y_rank && (rank == 1 || rank == 2),
                  "cispmv::SpmvPlan::apply: x and y must both be rank-1 Views (one vector) or rank-2 Views (several)");
    static_assert(std::is_same_v<typename YView::value_type, typename YView::non_const_value_type>,
                  "cispmv::SpmvPlan::apply: y must not be const");
    static_assert(Kokkos::SpaceAccessibility<Exec, typename XView::memory_space>::accessible &&
                      Kokkos::SpaceAccessibility<Exec, typename YView::memory_space>::accessible,
                  "cispmv::SpmvPlan::apply: x or y is not accessible from this execution space");
    const bool columns_match = rank == 1 || x.extent(1) == y.extent(1);
    if (x.extent(0) != static_cast<std::size_t>(A_.num_cols) || y.extent(0) != static_cast<std::size_t>(A_.num_rows) ||
        !columns_match) {
      std::ostringstream os;
      os << "cispmv::spmv: size mismatch: A (" << Matrix::format_name << ") is " << A_.num_rows << " x " << A_.num_cols
         << ", x has " << x.extent(0) << " rows (expected " << A_.num_cols << "), y has " << y.extent(0)
         << " rows (expected " << A_.num_rows << ")";
      if constexpr (rank == 2) os << "; x has " << x.extent(1) << " columns, y " << y.extent(1);
      throw std::invalid_argument(os.str());
    }
    if (A_.num_rows == 0) return;
    if constexpr (rank == 1 && is_contiguous_vector<XView>() && is_contiguous_vector<YView>()) {
      apply_contiguous(alpha, ContiguousX(x), beta, ContiguousY(y));
    } else if constexpr (rank == 1) {
      apply_vector(alpha, x, beta, y);
    } else if constexpr (is_strided_block<XView>() && is_strided_block<YView>()) {
      apply_strided(alpha, StridedConstBlock(x), beta, StridedBlock(y));
    } else {
      apply_block(alpha, x, beta, y);
    }
  }

  /// Whether rank-2 products read the matrix once per 16 columns (else once per column).
  static constexpr bool has_block_kernel() {
    return impl::SpmvBlockFunctor<Exec, Matrix, typename impl::PlanViews<Exec, Matrix>::x_type,
                                  typename impl::PlanViews<Exec, Matrix>::y_type, 1>::available;
  }

  /// Whether rank-2 products can run a lane per column (BlockShape::lanes).
  static constexpr bool has_lane_kernel() {
    using F = impl::SpmvBlockFunctor<Exec, Matrix, typename impl::PlanViews<Exec, Matrix>::x_type,
                                     typename impl::PlanViews<Exec, Matrix>::y_type, 1>;
    if constexpr (F::available) {
      return F::has_lane_kernel;
    } else {
      return false;
    }
  }

  const Matrix& matrix() const { return A_; }
  ordinal_type num_rows() const { return A_.num_rows; }
  ordinal_type num_cols() const { return A_.num_cols; }
  const Exec& execution_space_instance() const { return exec_; }
  const SpmvOptions& options() const { return opts_; }
  /// The kernel shape the plan runs (never Kernel::automatic).
  Kernel kernel() const { return kernel_; }
  /// How rank-2 products spread their columns: rows or lanes as asked for (or resolved on the host);
  /// automatic only on GPUs for formats with the lane shape: lanes from the format's fewest columns
  /// (csell: 2 where X allows pairs; otherwise 8, impl::gpu_lane_min_columns), rows below.
  BlockShape block_shape() const { return block_shape_; }
  /// Vector kernels: rows per team, rows a team works on concurrently, lanes per row; unroll factor
  /// (also csell's thread-per-row kernel on GPUs; 1 where a kernel has none). csell's thread-per-row
  /// kernel, launched on GPUs as blocks of SpmvOptions::rows_per_team rows (0:
  /// impl::gpu_row_block_rows; at most that many for its plain loop, compiled with launch bounds),
  /// says so in description().
  int rows_per_team() const { return shape_.rows_per_team; }
  int team_size() const { return shape_.team_size; }
  int vector_length() const { return shape_.vector_length; }
  int unroll() const { return unroll_; }
  /// Team scratch bytes of the staged hybrid kernel (0: x is not staged).
  std::size_t scratch_bytes() const { return scratch_; }
  /// One line naming the format and every choice, e.g.
  /// "hybrid vector: 4 rows per team, 4 at a time, 32 lanes, unroll 4, x not staged".
  std::string description() const;
  /// csell's slice kernel on CPUs: the AVX-512 walk it runs where x has unit stride (SpmvOptions::host_simd),
  /// none for the portable loop and everywhere else.
  impl::host_simd::Walk host_walk() const { return walk_; }

 private:
  // Every contiguous vector goes through one pair of View types, and every strided block through another: one
  // instantiation of the kernels for all callers, which impl/plan_instances.hpp declares `extern` for the default
  // execution space's formats (compiled once in the SpMV library, not in every unit that multiplies). They are
  // assigned from the callers' Views, not made from pointers: a Kokkos-allocated x keeps its allocation record
  // (Kokkos 3's CUDA const random-access Views read through a texture object made from it).
  using ContiguousX =
      Kokkos::View<const value_type*, Kokkos::LayoutLeft, memory_space, Kokkos::MemoryTraits<Kokkos::RandomAccess>>;
  using ContiguousY = Kokkos::View<value_type*, Kokkos::LayoutLeft, memory_space>;
  using StridedConstBlock = Kokkos::View<const value_type**, Kokkos::LayoutStride, memory_space>;
  using StridedBlock = Kokkos::View<value_type**, Kokkos::LayoutStride, memory_space>;

  /// Rank-1 LayoutLeft or LayoutRight Views in the plan's memory space: contiguous, so ContiguousX/Y hold them.
  template <class View>
  static constexpr bool is_contiguous_vector() {
    using Layout = typename View::array_layout;
    return View::rank == 1 && std::is_same_v<typename View::memory_space, memory_space> &&
           (std::is_same_v<Layout, Kokkos::LayoutLeft> || std::is_same_v<Layout, Kokkos::LayoutRight>);
  }

  /// Rank-2 LayoutStride Views in the plan's memory space (OperatorRef's blocks, a distributed plan's, subviews).
  template <class View>
  static constexpr bool is_strided_block() {
    return View::rank == 2 && std::is_same_v<typename View::memory_space, memory_space> &&
           std::is_same_v<typename View::array_layout, Kokkos::LayoutStride>;
  }

  // defined below the class, not inline: impl/plan_instances.hpp's explicit instantiations hold them
  void apply_contiguous(value_type alpha, const ContiguousX& x, value_type beta, const ContiguousY& y) const;
  void apply_strided(value_type alpha, const StridedConstBlock& x, value_type beta, const StridedBlock& y) const;

  /// One vector of any other layout (a strided column).
  template <class XView, class YView>
  void apply_vector(value_type alpha, const XView& x, value_type beta, const YView& y) const {
    using XRandom = Kokkos::View<const value_type*, typename XView::array_layout, typename XView::device_type,
                                 Kokkos::MemoryTraits<Kokkos::RandomAccess>>;
    const XRandom xr = x;
    launch_beta(alpha, xr, beta, y);
  }

  template <class XView, class YView>
  void launch_beta(value_type alpha, const XView& x, value_type beta, const YView& y) const {
    const impl::ProfilingRegion region(label_);
    if (beta == value_type(0)) {
      launch<impl::beta_zero>(alpha, x, beta, y);
    } else if (beta == value_type(1)) {
      launch<impl::beta_one>(alpha, x, beta, y);
    } else {
      launch<impl::beta_general>(alpha, x, beta, y);
    }
  }

  template <int Unroll, int Beta = impl::beta_general, class XView = typename impl::PlanViews<Exec, Matrix>::x_type,
            class YView = typename impl::PlanViews<Exec, Matrix>::y_type>
  using Functor = impl::SpmvFunctor<Exec, Matrix, XView, YView, Beta, Unroll>;

  bool prefers_vector_on_gpu() const {
    if constexpr (Functor<1>::vector_length_from_matrix) {
      return matrix_lanes() > 1;
    } else {
      return Functor<1>::prefers_vector_on_gpu;
    }
  }
  /// Lanes per row the matrix's layout fixes (vector_length_from_matrix), else 0.
  int matrix_lanes() const {
    if constexpr (Functor<1>::vector_length_from_matrix) {
      return static_cast<int>(A_.row_lanes);
    } else {
      return 0;
    }
  }
  /// Whether the scalar kernel runs its CPU slice shape (sliced and ELLPACK formats on host spaces), not thread per
  /// row.
  static constexpr bool scalar_runs_slices() {
    return !impl::is_gpu_space_v<Exec> && Functor<1>::has_host_slice_kernel;
  }

  void plan_vector_launch() {
    if constexpr (Functor<1>::has_vector_kernel) {  // a team launch needs the team operator()
      scratch_ = staged_scratch_bytes();
      unroll_ = impl::resolve_unroll(opts_, Functor<1>::unrolled, scratch_ > 0);
      const double mean = A_.num_rows > 0 ? static_cast<double>(A_.nnz()) / A_.num_rows : 0.0;
      SpmvOptions o = opts_;
      if (const int lanes = matrix_lanes(); lanes > 0) {  // the layout's lanes per row
        if (o.vector_length > 0 && o.vector_length != lanes) {
          throw std::invalid_argument(
              std::string("cispmv::SpmvPlan: format '") + Matrix::format_name + "' was built with " +
              std::to_string(lanes) + " lanes per row; its vector kernel runs that many, not " +
              std::to_string(o.vector_length) + " (set vector_length 0 or " + std::to_string(lanes) + ")");
        }
        o.vector_length = lanes;
        // entries decoded together per lane: by the number of lanes (impl::default_lanes_unroll)
        if (opts_.unroll <= 0) unroll_ = impl::default_lanes_unroll(exec_, static_cast<long long>(A_.num_rows) * lanes);
      }
      decide_ahead();
      shape_ = impl::vector_launch<Exec>(o, mean, scratch_ > 0);
      league_ = teams_of(shape_.rows_per_team);
      // never more threads than the kernel's registers allow
      with_unroll([&](auto u) { clamp_team_size<decltype(u)::value>(); });
    }
  }

  // the thread-per-row kernel's unroll factor (csell: entries decoded together per row; the host
  // runs csell's slice shape, which has none)
  void plan_scalar_launch() {
    if constexpr (Functor<1>::scalar_unrolled && !scalar_runs_slices())
      unroll_ = opts_.unroll > 0 ? opts_.unroll : Functor<1>::default_scalar_unroll(A_);
    decide_ahead();
    if constexpr (Functor<1>::has_row_block_launch && impl::is_gpu_space_v<Exec>) {
      if (opts_.rows_per_team > impl::gpu_max_team_threads) {
        throw std::invalid_argument("cispmv::SpmvPlan: rows_per_team of " + std::string(Matrix::format_name) +
                                    "'s thread-per-row kernel is one block of threads, at most " +
                                    std::to_string(impl::gpu_max_team_threads) + "; got " +
                                    std::to_string(opts_.rows_per_team));
      }
      row_block_ = opts_.rows_per_team > 0 ? opts_.rows_per_team : impl::gpu_row_block_rows;
      // never more threads than the kernel's registers allow (the loop ahead: csell with values inline,
      // unroll 8, double: 512 on an H200) or its launch bounds (the plain loop: 256)
      with_unroll([&](auto u) { clamp_row_block<decltype(u)::value>(); });
      league_ = teams_of(row_block_);
    }
  }

  /// Whether the kernel runs the format's second loop for this matrix (has_ahead_loop, runs_ahead;
  /// SpmvOptions::loads_ahead): GPUs only (the host's slice shape has its own loop), unroll 4 or 8
  /// (the only factors compiled for it).
  void decide_ahead() {
    bool can = false;
    if constexpr (Functor<1>::has_ahead_loop && impl::is_gpu_space_v<Exec>)
      can = Functor<1>::runs_ahead(A_) && unroll_ >= 4;
    if (opts_.loads_ahead == LoadsAhead::on && !can) {
      throw std::invalid_argument(std::string("cispmv::SpmvPlan: loads_ahead = on, but format '") +
                                  Matrix::format_name + "' on this execution space with unroll " +
                                  std::to_string(unroll_) +
                                  " has no loop with its loads ahead (csell with values inline on a GPU, unroll 4 "
                                  "or 8)");
    }
    ahead_ = can && opts_.loads_ahead != LoadsAhead::off;
  }

  /// Which AVX-512 walk csell's slice kernel runs (SpmvOptions::host_simd): values inline, or the table
  /// by gathers or by loads (automatic: impl::host_simd::table_gathers_pay), where the CPU and the types allow.
  void decide_host_walk() {
    const bool asked = opts_.host_simd == HostSimd::gather || opts_.host_simd == HostSimd::loads;
    if constexpr (scalar_runs_slices() && Functor<1>::has_host_simd) {
      if (kernel_ == Kernel::scalar && impl::host_simd::avx512_available()) {
        using impl::host_simd::Walk;
        if (opts_.host_simd == HostSimd::off) return;
        if (!A_.uses_table) {
          walk_ = Walk::inline_values;
        } else if (opts_.host_simd == HostSimd::automatic) {
          walk_ = impl::host_simd::table_gathers_pay() ? Walk::table_gather : Walk::table_loads;
        } else {
          walk_ = opts_.host_simd == HostSimd::gather ? Walk::table_gather : Walk::table_loads;
        }
        return;
      }
    }
    if (asked) {
      throw std::invalid_argument(std::string("cispmv::SpmvPlan: host_simd = ") + host_simd_name(opts_.host_simd) +
                                  ", but format '" + Matrix::format_name + "' with kernel " + kernel_name(kernel_) +
                                  " on this execution space has no AVX-512 walk (csell's scalar (slice) kernel on an " +
                                  "x86-64 CPU with AVX-512F and VL, double or float values, 32-bit columns)");
    }
  }

  /// fn(std::integral_constant<int, U>{}) for the kernel's unroll factor: U = unroll_ (1, 2, 4, 8), or
  /// -unroll_ where the format runs its second loop for this matrix (decide_ahead).
  template <class Fn>
  void with_unroll(Fn&& fn) const {
    if constexpr (Functor<1>::has_ahead_loop && impl::is_gpu_space_v<Exec>) {
      if (ahead_) {
        if (unroll_ == 4) {
          fn(std::integral_constant<int, -4>{});
        } else {
          fn(std::integral_constant<int, -8>{});
        }
        return;
      }
    }
    switch (unroll_) {
      case 1: fn(std::integral_constant<int, 1>{}); break;
      case 2: fn(std::integral_constant<int, 2>{}); break;
      case 4: fn(std::integral_constant<int, 4>{}); break;
      default: fn(std::integral_constant<int, 8>{}); break;
    }
  }

  /// Blocks per SM the thread-per-row kernel's row blocks are compiled for (launch bounds for blocks of at most
  /// gpu_row_block_rows: the functor's row_block_min_blocks), 0 where it is launched without bounds.
  int row_block_bounds() const {
    int blocks = 0;
    if constexpr (Functor<1>::has_row_block_launch && impl::is_gpu_space_v<Exec>) {
      if (row_block_ > 0) with_unroll([&](auto u) { blocks = Functor<decltype(u)::value>::row_block_min_blocks; });
    }
    return blocks;
  }

  /// Teams of `rows` rows each that cover the matrix.
  int teams_of(int rows) const { return static_cast<int>((static_cast<long long>(A_.num_rows) + rows - 1) / rows); }

  /// The kernel's functor on empty vectors, for team_size_max (the threads its registers allow).
  template <int Unroll>
  Functor<Unroll> probe() const {
    const typename impl::PlanViews<Exec, Matrix>::x_type x;
    const typename impl::PlanViews<Exec, Matrix>::y_type y;
    return Functor<Unroll>(A_, x, y, value_type(1), value_type(0));
  }

  template <int Unroll>
  void clamp_row_block() {
    if constexpr (Functor<Unroll>::row_block_min_blocks > 0) {  // compiled for blocks of at most this many rows
      row_block_ = std::max(1, std::min(row_block_, impl::gpu_row_block_rows));
    } else {
      const Kokkos::TeamPolicy<Exec, impl::RowBlockTag> automatic(exec_, 1, Kokkos::AUTO, 1);
      row_block_ =
          std::max(1, std::min(row_block_, automatic.team_size_max(probe<Unroll>(), Kokkos::ParallelForTag())));
    }
  }

  template <int Unroll>
  void clamp_team_size() {
    Kokkos::TeamPolicy<Exec> automatic(exec_, league_, Kokkos::AUTO, shape_.vector_length);
    if (scratch_ > 0) automatic.set_scratch_size(0, Kokkos::PerTeam(scratch_));
    const int max_team = automatic.team_size_max(probe<Unroll>(), Kokkos::ParallelForTag());
    shape_.team_size = std::max(1, std::min(shape_.team_size, max_team));
  }

  /// Team scratch bytes the vector kernel uses to stage x's reference part (0: not staged).
  std::size_t staged_scratch_bytes() const {
    if constexpr (Functor<1>::can_stage_x) {
      const std::size_t bytes = Functor<1>::scratch_bytes(A_);
      const std::size_t limit = static_cast<std::size_t>(Kokkos::TeamPolicy<Exec>::scratch_size_max(0));
      const bool fits = bytes > 0 && bytes <= limit;
      if (opts_.stage_reference_x == StageReferenceX::on && !fits) {
        throw std::invalid_argument("cispmv::SpmvPlan: stage_reference_x = on, but the reference part of x (" +
                                    std::to_string(bytes) + " bytes) is empty or exceeds the team scratch limit (" +
                                    std::to_string(limit) + " bytes)");
      }
      return opts_.stage_reference_x == StageReferenceX::on ? bytes : 0;  // automatic: off (StageReferenceX)
    } else {
      return 0;
    }
  }

  Kokkos::TeamPolicy<Exec> policy(int team_size) const {
    Kokkos::TeamPolicy<Exec> p(exec_, league_, team_size, shape_.vector_length);
    if (scratch_ > 0) p.set_scratch_size(0, Kokkos::PerTeam(scratch_));
    return p;
  }

  template <int Beta, class XView, class YView>
  void launch(value_type alpha, const XView& x, value_type beta, const YView& y) const {
    if (kernel_ == Kernel::vector) {
      if constexpr (Functor<1>::has_vector_kernel) {
        with_unroll([&](auto u) { launch_vector<Beta, decltype(u)::value>(alpha, x, beta, y); });
        return;
      }
    }
    using F = Functor<1, Beta, XView, YView>;
    if constexpr (scalar_runs_slices()) {  // CPUs: a slice per work item
      F f(A_, x, y, alpha, beta);
      if (walk_ != impl::host_simd::Walk::none && x.stride(0) == 1) f.host_walk = static_cast<int>(walk_);
      Kokkos::parallel_for(
          label_,
          Kokkos::RangePolicy<Exec, impl::SliceTag, Kokkos::Schedule<Kokkos::Dynamic>, Kokkos::IndexType<ordinal_type>>(
              exec_, 0, F::host_slices(A_)),
          f);
      return;
    }
    if constexpr (F::scalar_unrolled) {
      with_unroll([&](auto u) { launch_scalar<Beta, decltype(u)::value>(alpha, x, beta, y); });
    } else {
      launch_scalar<Beta, 1>(alpha, x, beta, y);
    }
  }

  template <int Beta, int Unroll, class XView, class YView>
  void launch_scalar(value_type alpha, const XView& x, value_type beta, const YView& y) const {
    using F = Functor<Unroll, Beta, XView, YView>;
    if constexpr (F::has_row_block_launch && impl::is_gpu_space_v<Exec>) {
      if (row_block_ > 0) {
        // blocks of at most gpu_row_block_rows where the functor asks for launch bounds (clamp_row_block)
        constexpr int min_blocks = F::row_block_min_blocks;
        using Bounds = std::conditional_t<(min_blocks > 0), Kokkos::LaunchBounds<impl::gpu_row_block_rows, min_blocks>,
                                          Kokkos::LaunchBounds<>>;
        team_launch(label_, Kokkos::TeamPolicy<Exec, impl::RowBlockTag, Bounds>(exec_, league_, row_block_, 1),
                    F(A_, x, y, alpha, beta));
        return;
      }
    }
    Kokkos::parallel_for(label_,
                         Kokkos::RangePolicy<Exec, Kokkos::Schedule<Kokkos::Dynamic>, Kokkos::IndexType<ordinal_type>>(
                             exec_, 0, A_.num_rows),
                         Functor<Unroll, Beta, XView, YView>(A_, x, y, alpha, beta));
  }

  template <int Beta, int Unroll, class XView, class YView>
  void launch_vector(value_type alpha, const XView& x, value_type beta, const YView& y) const {
    using F = Functor<Unroll, Beta, XView, YView>;
    F f(A_, x, y, alpha, beta);
    if constexpr (F::can_stage_x) f.stage_x = scratch_ > 0;
    f.rows_per_team = shape_.rows_per_team;
    f.vector_length = shape_.vector_length;
    team_launch(label_, policy(shape_.team_size), f);
  }

  /// A team kernel with the plan's L1 / shared-memory preference (SpmvOptions::team_cache).
  template <class Policy, class F>
  void team_launch(const std::string& label, const Policy& policy, const F& f) const {
    const bool l1 = opts_.team_cache == TeamCache::l1 || (opts_.team_cache == TeamCache::automatic && scratch_ == 0);
    impl::TeamCachePreference<Policy, F>::before_launch(l1);
    Kokkos::parallel_for(label, policy, f);
    impl::TeamCachePreference<Policy, F>::after_launch(l1);
  }

  template <class XView, class YView>
  void apply_block(value_type alpha, const XView& x, value_type beta, const YView& y) const {
    const int k = static_cast<int>(x.extent(1));
    if (k == 1 && x.span_is_contiguous() && y.span_is_contiguous()) {  // one vector: the single-vector kernel
      const Kokkos::View<const value_type*, memory_space> x1(x.data(), x.extent(0));
      const Kokkos::View<value_type*, memory_space> y1(y.data(), y.extent(0));
      apply(alpha, x1, beta, y1);
      return;
    }
    if constexpr (has_block_kernel()) {
      using XRandom = Kokkos::View<const value_type**, typename XView::array_layout, typename XView::device_type,
                                   Kokkos::MemoryTraits<Kokkos::RandomAccess>>;
      const XRandom xr = x;
      const impl::ProfilingRegion region(block_label_);
      for (int first = 0; first < k; first += impl::max_block_columns) {
        const int columns = std::min(impl::max_block_columns, k - first);
        launch_block(alpha, xr, beta, y, first, columns);
      }
    } else {
      for (int j = 0; j < k; ++j)
        apply(alpha, Kokkos::subview(x, Kokkos::ALL(), j), beta, Kokkos::subview(y, Kokkos::ALL(), j));
    }
  }

  // the narrowest compiled block width that holds `columns` (impl::block_width_for, which callers' buffer
  // strides follow: impl::block_buffer_stride); the rest are masked
  template <class XView, class YView>
  void launch_block(value_type alpha, const XView& x, value_type beta, const YView& y, int first, int columns) const {
    switch (impl::block_width_for(columns)) {
      case 1: launch_block_width<1>(alpha, x, beta, y, first, columns); break;
      case 4: launch_block_width<4>(alpha, x, beta, y, first, columns); break;
      case 8: launch_block_width<8>(alpha, x, beta, y, first, columns); break;
      default:
        static_assert(impl::block_width_for(impl::max_block_columns) == impl::max_block_columns);
        launch_block_width<impl::max_block_columns>(alpha, x, beta, y, first, columns);
        break;
    }
  }

  template <int K, class XView, class YView>
  void launch_block_width(value_type alpha, const XView& x, value_type beta, const YView& y, int first,
                          int columns) const {
    using F = impl::SpmvBlockFunctor<Exec, Matrix, XView, YView, K>;
    F f(A_, x, y, alpha, beta, first, columns);
    if constexpr (F::has_lane_kernel) {
      const int per_lane = lane_columns(f, x, first, columns);
      const int min_columns = per_lane > 1 ? F::automatic_lane_min_columns : impl::gpu_lane_min_columns;
      if (block_shape_ == BlockShape::lanes || (block_shape_ == BlockShape::automatic && columns >= min_columns)) {
        const int groups = (columns + per_lane - 1) / per_lane;  // a lane's columns: 1 or 1, 2, 4 pairs
        while ((1 << f.lane_shift) < groups) ++f.lane_shift;     // lanes per row: a power of two
        switch (per_lane) {
          case 1: launch_lanes<impl::LaneTag<1, 1>>(f); break;
          case 2: launch_pairs(f); break;
          case 4: launch_lanes<impl::LaneTag<2, 2>>(f); break;
          default: launch_lanes<impl::LaneTag<2, 4>>(f); break;
        }
        return;
      }
    }
    if constexpr (F::has_vector_kernel) {
      if (kernel_ == Kernel::vector) {  // the plan's shape; fewer rows at a time if K sums need more registers
        f.rows_per_team = shape_.rows_per_team;
        f.vector_length = shape_.vector_length;
        const Kokkos::TeamPolicy<Exec> automatic(exec_, league_, Kokkos::AUTO, shape_.vector_length);
        const int team = std::max(1, std::min(shape_.team_size, automatic.team_size_max(f, Kokkos::ParallelForTag())));
        team_launch(block_label_, Kokkos::TeamPolicy<Exec>(exec_, league_, team, shape_.vector_length), f);
        return;
      }
    }
    if constexpr (!impl::is_gpu_space_v<Exec> && F::has_host_slice_kernel) {
      // csell, 2-16 columns: the AVX-512 walk where the CPU has it and X's rows are contiguous
      // (SpmvOptions::host_simd off: the portable loop)
      if constexpr (F::has_host_simd)
        f.host_walk = opts_.host_simd != HostSimd::off && x.stride(1) == 1 && impl::host_simd::avx512_available();
      Kokkos::parallel_for(
          block_label_,
          Kokkos::RangePolicy<Exec, impl::SliceTag, Kokkos::Schedule<Kokkos::Dynamic>, Kokkos::IndexType<ordinal_type>>(
              exec_, 0, A_.num_slices()),
          f);
      return;
    }
    Kokkos::parallel_for(block_label_,
                         Kokkos::RangePolicy<Exec, Kokkos::Schedule<Kokkos::Dynamic>, Kokkos::IndexType<ordinal_type>>(
                             exec_, 0, A_.num_rows),
                         f);
  }

  template <class Tag, class F>
  void launch_lanes(const F& f) const {
    Kokkos::parallel_for(block_label_,
                         Kokkos::RangePolicy<Exec, Tag, Kokkos::IndexType<std::int64_t>>(
                             exec_, 0, static_cast<std::int64_t>(A_.num_rows) << f.lane_shift),
                         f);
  }

  // one pair per lane: the format's own kernel for this matrix and X where it has one (pair_variant)
  template <class F>
  void launch_pairs(const F& f) const {
    static_assert(F::pair_variants <= 4, "cispmv: launch_pairs launches variants 0 to 3");
    const int variant = f.pair_variant();
    if constexpr (F::pair_variants > 0) {
      if (variant == 0) return launch_pair_kernel<impl::PairTag<0>>(f);
    }
    if constexpr (F::pair_variants > 1) {
      if (variant == 1) return launch_pair_kernel<impl::PairTag<1>>(f);
    }
    if constexpr (F::pair_variants > 2) {
      if (variant == 2) return launch_pair_kernel<impl::PairTag<2>>(f);
    }
    if constexpr (F::pair_variants > 3) {
      if (variant == 3) return launch_pair_kernel<impl::PairTag<3>>(f);
    }
    launch_lanes<impl::LaneTag<2, 1>>(f);
  }

  // a format's pair kernel: on GPUs in teams of F::pair_team_size consecutive lanes (their rows share rows of X in
  // one SM's L1), elsewhere as the lane shape
  template <class Tag, class F>
  void launch_pair_kernel(const F& f) const {
    if constexpr (impl::is_gpu_space_v<Exec>) {
      constexpr int team = F::pair_team_size;
      const std::int64_t lanes = static_cast<std::int64_t>(A_.num_rows) << f.lane_shift;
      team_launch(block_label_,
                  Kokkos::TeamPolicy<Exec, Tag>(exec_, static_cast<int>((lanes + team - 1) / team), team, 1), f);
    } else {
      launch_lanes<Tag>(f);
    }
  }

  // columns of X per lane of the lane shape for this launch: the option's (automatic: the format's),
  // but 1 unless the launch's columns are even and X's rows contiguous with every pair aligned
  template <class F, class XView>
  int lane_columns(const F& f, const XView& x, int first, int columns) const {
    const int wanted = opts_.lane_columns > 0 ? opts_.lane_columns : f.automatic_lane_columns();
    if (wanted == 1 || columns % 2 != 0) return 1;
    using Layout = typename XView::array_layout;
    if constexpr (std::is_same_v<Layout, Kokkos::LayoutRight> || std::is_same_v<Layout, Kokkos::LayoutStride>) {
      const auto at = reinterpret_cast<std::uintptr_t>(x.data() + first);
      const bool pairs = x.stride(1) == 1 && x.stride(0) % 2 == 0 && at % (2 * sizeof(value_type)) == 0;
      return pairs ? wanted : 1;
    } else {
      (void)x;
      (void)first;
      return 1;
    }
  }

  Exec exec_;
  Matrix A_;
  SpmvOptions opts_;
  Kernel kernel_ = Kernel::scalar;
  BlockShape block_shape_ = BlockShape::rows;
  std::string label_, block_label_;
  impl::VectorLaunch shape_{1, 1, 1};
  int row_block_ = 0;  ///< csell's thread-per-row kernel on GPUs: rows per block (0 elsewhere: a RangePolicy)
  int unroll_ = 1;
  bool ahead_ = false;  ///< decide_ahead(): the kernel is launched as Unroll = -unroll_
  impl::host_simd::Walk walk_ = impl::host_simd::Walk::none;  ///< decide_host_walk()
  int league_ = 0;
  std::size_t scratch_ = 0;
};

template <class Exec, class Matrix>
SpmvPlan<Exec, Matrix>::SpmvPlan(const Exec& exec, const Matrix& A, const SpmvOptions& opts)
    : exec_(exec), A_(A), opts_(opts) {
  impl::check_options(opts);
  kernel_ = impl::resolve_kernel<Exec>(opts.kernel, Functor<1>::has_vector_kernel, prefers_vector_on_gpu());
  if (kernel_ == Kernel::vector && !Functor<1>::has_vector_kernel) {
    throw std::invalid_argument(std::string("cispmv::SpmvPlan: format '") + Matrix::format_name +
                                "' has no vector kernel (its ELLPACK block is laid out for thread per row); "
                                "use Kernel::scalar");
  }
  label_ = std::string("cispmv::spmv[") + Matrix::format_name + "," + kernel_name(kernel_) + "]";
  if (kernel_ == Kernel::vector) {
    plan_vector_launch();
  } else {
    plan_scalar_launch();
  }
  decide_host_walk();
  block_shape_ = opts.block_shape;
  if (block_shape_ == BlockShape::automatic && !(impl::is_gpu_space_v<Exec> && has_lane_kernel()))
    block_shape_ = BlockShape::rows;
  if (block_shape_ == BlockShape::lanes && !has_lane_kernel()) {
    throw std::invalid_argument(std::string("cispmv::SpmvPlan: format '") + Matrix::format_name +
                                "' has no lane shape for several vectors (CSR and csell have); use "
                                "BlockShape::rows or automatic");
  }
  block_label_ = std::string("cispmv::spmv_block[") + Matrix::format_name + "," +
                 (block_shape_ == BlockShape::rows ? kernel_name(kernel_) : block_shape_name(block_shape_)) + "]";
}

template <class Exec, class Matrix>
std::string SpmvPlan<Exec, Matrix>::description() const {
  std::ostringstream os;
  os << Matrix::format_name << " " << kernel_name(kernel_);
  if (kernel_ == Kernel::vector) {
    os << ": " << shape_.rows_per_team << " rows per team, " << shape_.team_size << " at a time, "
       << shape_.vector_length << (shape_.vector_length == 1 ? " lane" : " lanes") << ", unroll " << unroll_
       << (ahead_ ? ", loads ahead" : "");
    if (Functor<1>::can_stage_x) {
      os << (scratch_ > 0 ? ", x's reference part staged (" + std::to_string(scratch_) + " bytes)" : ", x not staged");
    }
  } else {
    if (unroll_ > 1) os << ": unroll " << unroll_ << (ahead_ ? ", loads ahead" : "");
    if (row_block_ > 0) os << (unroll_ > 1 ? ", " : ": ") << row_block_ << " rows per block";
    if (const int b = row_block_bounds(); b > 0) os << " (launch bounds: " << b << " blocks per SM)";
    if (walk_ != impl::host_simd::Walk::none) os << ": " << impl::host_simd::walk_name(walk_);
  }
  return os.str();
}

template <class Exec, class Matrix>
void SpmvPlan<Exec, Matrix>::apply_contiguous(value_type alpha, const ContiguousX& x, value_type beta,
                                              const ContiguousY& y) const {
  launch_beta(alpha, x, beta, y);
}

template <class Exec, class Matrix>
void SpmvPlan<Exec, Matrix>::apply_strided(value_type alpha, const StridedConstBlock& x, value_type beta,
                                           const StridedBlock& y) const {
  apply_block(alpha, x, beta, y);
}

/// A plan with its types deduced: `auto plan = cispmv::make_spmv_plan(exec, A, opts);`.
template <class Exec, class Matrix>
SpmvPlan<Exec, Matrix> make_spmv_plan(const Exec& exec, const Matrix& A, const SpmvOptions& opts = {}) {
  return SpmvPlan<Exec, Matrix>(exec, A, opts);
}

}  // namespace cispmv
