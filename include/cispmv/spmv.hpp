#pragma once
/// \file spmv.hpp
/// The public SpMV entry point: y = beta*y + alpha*A*x for every cispmv format.

#include <Kokkos_Core.hpp>

#include "cispmv/csr.hpp"
#include "cispmv/ell.hpp"
#include "cispmv/hybrid.hpp"
#include "cispmv/impl/launch.hpp"
#include "cispmv/impl/spmv_functors.hpp"
#include "cispmv/sliced_ell.hpp"

#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>

namespace cispmv {

namespace impl {

template <class Matrix>
constexpr bool prefers_vector_on_gpu() {
  // The ELLPACK families are column-major for thread-per-row coalescing; CSR and the hybrid
  // format are laid out for a vector per row.
  return Matrix::format_name == std::string_view("csr") || is_hybrid_matrix_v<Matrix>;
}

/// Team scratch bytes the vector kernel uses to stage x's reference part (0: not staged).
template <class Functor, class Exec, class Matrix>
std::size_t staged_scratch_bytes(const Matrix& A, const SpmvOptions& opts) {
  if constexpr (Functor::can_stage_x) {
    const std::size_t bytes = Functor::scratch_bytes(A);
    const bool fits = A.ref_width > 0 && bytes <= static_cast<std::size_t>(Kokkos::TeamPolicy<Exec>::scratch_size_max(0));
    if (opts.stage_reference_x == 1 && !fits) {
      throw std::invalid_argument("cispmv::spmv: stage_reference_x = 1, but the reference part of x (" +
                                  std::to_string(bytes) + " bytes) exceeds the team scratch limit (" +
                                  std::to_string(Kokkos::TeamPolicy<Exec>::scratch_size_max(0)) + " bytes)");
    }
    const bool stage = opts.stage_reference_x == 1 || (opts.stage_reference_x < 0 && fits && is_gpu_space_v<Exec>);
    return stage ? bytes : 0;
  } else {
    (void)A;
    (void)opts;
    return 0;
  }
}

template <int Beta, int Unroll, class Exec, class Matrix, class XView, class YView>
void launch_vector(const Exec& exec, typename Matrix::value_type alpha, const Matrix& A, const XView& x,
                   typename Matrix::value_type beta, const YView& y, const SpmvOptions& opts, std::size_t scratch,
                   const std::string& label) {
  using Functor = SpmvFunctor<Exec, Matrix, XView, YView, Beta, Unroll>;
  Functor f(A, x, y, alpha, beta);
  if constexpr (Functor::can_stage_x) f.stage_x = scratch > 0;
  const double mean = A.num_rows > 0 ? static_cast<double>(A.nnz()) / A.num_rows : 0.0;
  const VectorLaunch shape = vector_launch<Exec>(opts, mean, scratch > 0);
  f.rows_per_team = shape.rows_per_team;
  f.vector_length = shape.vector_length;
  const int league =
      static_cast<int>((static_cast<long long>(A.num_rows) + shape.rows_per_team - 1) / shape.rows_per_team);
  Kokkos::TeamPolicy<Exec> policy(exec, league, Kokkos::AUTO, shape.vector_length);
  if (scratch > 0) policy.set_scratch_size(0, Kokkos::PerTeam(scratch));
  // never more threads than the kernel's registers allow
  const int team_size = std::min(shape.team_size, policy.team_size_max(f, Kokkos::ParallelForTag()));
  policy = Kokkos::TeamPolicy<Exec>(exec, league, team_size, shape.vector_length);
  if (scratch > 0) policy.set_scratch_size(0, Kokkos::PerTeam(scratch));
  Kokkos::parallel_for(label, policy, f);
}

template <int Beta, class Exec, class Matrix, class XView, class YView>
void launch_spmv(const Exec& exec, typename Matrix::value_type alpha, const Matrix& A, const XView& x,
                 typename Matrix::value_type beta, const YView& y, const SpmvOptions& opts) {
  using Functor = SpmvFunctor<Exec, Matrix, XView, YView, Beta>;
  using ordinal_type = typename Matrix::ordinal_type;
  const Kernel kernel = resolve_kernel<Exec>(opts.kernel, Functor::has_vector_kernel, prefers_vector_on_gpu<Matrix>());
  const std::string label = std::string("cispmv::spmv[") + Matrix::format_name + "," + kernel_name(kernel) + "]";
  if (kernel == Kernel::vector && !Functor::has_vector_kernel) {
    throw std::invalid_argument(std::string("cispmv::spmv: format '") + Matrix::format_name +
                                "' has no vector kernel (its ELLPACK block is laid out for thread per row); "
                                "use Kernel::scalar");
  }
  Kokkos::Profiling::pushRegion(label);
  if constexpr (Functor::has_vector_kernel) {
    if (kernel == Kernel::vector) {
      const std::size_t scratch = staged_scratch_bytes<Functor, Exec>(A, opts);
      const int unroll = !Functor::unrolled ? 1
                         : opts.unroll > 0  ? opts.unroll
                         : scratch > 0      ? default_staged_unroll
                                            : default_unroll;
      switch (unroll) {
        case 1: launch_vector<Beta, 1>(exec, alpha, A, x, beta, y, opts, scratch, label); break;
        case 2: launch_vector<Beta, 2>(exec, alpha, A, x, beta, y, opts, scratch, label); break;
        case 4: launch_vector<Beta, 4>(exec, alpha, A, x, beta, y, opts, scratch, label); break;
        default: launch_vector<Beta, 8>(exec, alpha, A, x, beta, y, opts, scratch, label); break;
      }
      Kokkos::Profiling::popRegion();
      return;
    }
  }
  Kokkos::parallel_for(
      label,
      Kokkos::RangePolicy<Exec, Kokkos::Schedule<Kokkos::Dynamic>, Kokkos::IndexType<ordinal_type>>(exec, 0,
                                                                                                    A.num_rows),
      Functor(A, x, y, alpha, beta));
  Kokkos::Profiling::popRegion();
}

}  // namespace impl

/// y = beta*y + alpha*A*x on execution space `exec`, for any cispmv format (CsrMatrix, EllMatrix,
/// EllRMatrix, SlicedEllMatrix, SlicedEllRMatrix, HybridMatrix).
///
/// beta == 0 does not read y. `opts.kernel` picks thread per row (scalar) or vector per row; formats
/// without a vector kernel (ELLPACK, Sliced ELLPACK) throw std::invalid_argument when asked for one.
/// Throws std::invalid_argument when x or y does not match A's shape. The call is asynchronous
/// with respect to the host, like any Kokkos kernel on `exec`.
template <class Exec, class Matrix, class XView, class YView>
void spmv(const Exec& exec, typename Matrix::value_type alpha, const Matrix& A, const XView& x,
          typename Matrix::value_type beta, const YView& y, const SpmvOptions& opts = {}) {
  static_assert(Kokkos::is_execution_space<Exec>::value, "cispmv::spmv: first argument must be an execution space");
  static_assert(Kokkos::is_view<XView>::value && Kokkos::is_view<YView>::value,
                "cispmv::spmv: x and y must be Kokkos::Views");
  static_assert(XView::rank == 1 && YView::rank == 1, "cispmv::spmv: x and y must be rank-1 Views");
  static_assert(std::is_same_v<typename YView::value_type, typename YView::non_const_value_type>,
                "cispmv::spmv: y must not be const");
  static_assert(Kokkos::SpaceAccessibility<Exec, typename Matrix::memory_space>::accessible,
                "cispmv::spmv: the matrix's memory space is not accessible from this execution space");
  static_assert(Kokkos::SpaceAccessibility<Exec, typename XView::memory_space>::accessible &&
                    Kokkos::SpaceAccessibility<Exec, typename YView::memory_space>::accessible,
                "cispmv::spmv: x or y is not accessible from this execution space");

  if (x.extent(0) != static_cast<std::size_t>(A.num_cols) || y.extent(0) != static_cast<std::size_t>(A.num_rows)) {
    std::ostringstream os;
    os << "cispmv::spmv: size mismatch: A (" << Matrix::format_name << ") is " << A.num_rows << " x " << A.num_cols
       << ", x has " << x.extent(0) << " entries (expected " << A.num_cols << "), y has " << y.extent(0)
       << " entries (expected " << A.num_rows << ")";
    throw std::invalid_argument(os.str());
  }
  if (opts.vector_length < 0 || (opts.vector_length & (opts.vector_length - 1)) != 0 || opts.vector_length > 32 ||
      opts.rows_per_team < 0 || opts.team_size < 0 || (opts.unroll != 0 && opts.unroll != 1 && opts.unroll != 2 && opts.unroll != 4 &&
                                 opts.unroll != 8)) {
    throw std::invalid_argument("cispmv::spmv: vector_length must be 0 (automatic) or a power of two <= 32, "
                                "rows_per_team >= 0 and unroll 0 (automatic), 1, 2, 4 or 8; got vector_length=" +
                                std::to_string(opts.vector_length) + ", rows_per_team=" +
                                std::to_string(opts.rows_per_team) + ", unroll=" + std::to_string(opts.unroll));
  }
  if (A.num_rows == 0) return;

  // x is only read, at scattered places: a const RandomAccess View lets the backend use its
  // read-only data path (__ldg on CUDA).
  using value_type = typename Matrix::value_type;
  using XRandom = Kokkos::View<const value_type*, typename XView::array_layout, typename XView::device_type,
                               Kokkos::MemoryTraits<Kokkos::RandomAccess>>;
  const XRandom xr = x;

  if (beta == value_type(0)) {
    impl::launch_spmv<impl::beta_zero>(exec, alpha, A, xr, beta, y, opts);
  } else if (beta == value_type(1)) {
    impl::launch_spmv<impl::beta_one>(exec, alpha, A, xr, beta, y, opts);
  } else {
    impl::launch_spmv<impl::beta_general>(exec, alpha, A, xr, beta, y, opts);
  }
}

/// spmv on the matrix's own default execution space instance.
template <class Matrix, class XView, class YView>
void spmv(typename Matrix::value_type alpha, const Matrix& A, const XView& x, typename Matrix::value_type beta,
          const YView& y, const SpmvOptions& opts = {}) {
  spmv(typename Matrix::execution_space(), alpha, A, x, beta, y, opts);
}

}  // namespace cispmv
