#pragma once
/// \file registry.hpp
/// The one list of cispmv's formats: name, what it is, which kernels it has, and how to build it
/// from a host CSR matrix. The command-line program, the benchmarks and the tests enumerate formats
/// only through this list, so adding a format touches its header (formats/), its kernel
/// (impl/kernels/), its entry here (and its line in impl/plan_instances.hpp) and its test.

#include "cispmv/formats/compressed_sell.hpp"
#include "cispmv/formats/compressed_sell_encoder.hpp"
#include "cispmv/formats/csr.hpp"
#include "cispmv/formats/ell.hpp"
#include "cispmv/formats/hybrid.hpp"
#include "cispmv/formats/sliced_ell.hpp"
#include "cispmv/impl/format_types.hpp"
#include "cispmv/impl/kernels/common.hpp"
#include "cispmv/impl/kernels/host_simd.hpp"
#include "cispmv/impl/launch.hpp"
#include "cispmv/impl/plan_instances.hpp"  // every format's products, compiled once in the library
#include "cispmv/options.hpp"

#include <array>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace cispmv {

/// Every format of cispmv.
enum class Format { csr, ell, ellr, sell, sellr, hybrid, hybrid16, csell };

/// How a format is built from CSR: the parameters some formats take.
struct FormatParams {
  int boundary = -1;               ///< BOUNDARY of the hybrid formats; -1: automatic (choose_boundary)
  int slice_height = 32;           ///< rows per slice of the Sliced ELLPACK formats (and csell)
  std::size_t table_size = 65536;  ///< most values in csell's value table (1..65536)
  /// the order of csell's value table; automatic: by where it is built (the host, in build_format)
  ValueTableOrder table_order = ValueTableOrder::automatic;
  /// csell's lanes per row; 0: impl::automatic_row_lanes for a GPU of gpu_threads thread slots
  /// (one lane where there is none)
  int row_lanes = 0;
  long long gpu_threads = 0;  ///< thread slots of the GPU the format is for (0: a CPU)
  /// csell's rows laid out longest first in windows of this many rows (CompressedSellMatrix::row_order;
  /// 0 or 1: in matrix order; -1: impl::automatic_sort_window, wider with values inline)
  int sort_window = -1;
  /// csell keeps a value table only where its sampled values cover at least this share of the
  /// entries; above 1: values always inline (10 bytes per entry, but no table lookup: what several
  /// vectors per read want on GPUs, see impl::block_values_inline, and CPUs whose table lookups are
  /// scalar loads, see impl::host_simd::values_inline_pays)
  double min_table_coverage = 0.5;

  /// The parameters for formats built on the host to run on execution space Exec, for many products
  /// (on a GPU csell's table in co-occurrence order, impl::repeated_products_table_order; on a CPU whose
  /// AVX-512 walk reads a table no faster than its values inline: values inline).
  template <class Exec>
  static FormatParams for_space() {
    FormatParams p;
    p.table_order = impl::repeated_products_table_order<Exec>();
    p.gpu_threads = impl::gpu_thread_slots<Exec>();
    if constexpr (!impl::is_gpu_space_v<Exec>) {
      if (impl::host_simd::values_inline_pays()) p.min_table_coverage = 2;
    }
    return p;
  }

  /// The parameters for csell built for several vectors per product (a block eigensolver) on Exec:
  /// one lane per row (the lane-per-column kernels' layout), rows sorted in the automatic windows, and
  /// values inline on GPUs (impl::block_values_inline).
  template <class Exec>
  static FormatParams for_block_products() {
    FormatParams p = for_space<Exec>();
    p.row_lanes = 1;
    p.sort_window = -1;
    // CPUs: the default table rule. The AVX-512 block walk reads a table (scalar loads) or values inline;
    // which of the two is faster for block products has not been measured (`cispmv ci` on a CPU builds
    // csell with for_space's parameters, and the block ratios of choose_format were measured that way)
    p.min_table_coverage = impl::block_values_inline<Exec> ? 2 : FormatParams{}.min_table_coverage;
    return p;
  }
};

namespace impl {
/// Does the kernel of format `HostFormat` have a vector-per-row shape?
template <class HostFormat>
inline constexpr bool has_vector_kernel_v =
    SpmvFunctor<HostExecSpace, HostFormat, Kokkos::View<const typename HostFormat::value_type*>,
                Kokkos::View<typename HostFormat::value_type*>, beta_zero>::has_vector_kernel;
template <class S>
using HostHybrid16 = HybridMatrix<S, int, std::size_t, HostExecSpace, std::uint16_t>;
}  // namespace impl

/// One entry of the registry.
struct FormatInfo {
  Format format;
  const char* name;         ///< what the command line and the reports call it
  const char* description;  ///< a line for help texts
  bool has_vector_kernel;   ///< besides thread per row (every format has that)
  const char* memory_note;  ///< why its allocation differs from the paper's formula (Table 5)
};

/// The registry, in the order the reports list formats.
inline constexpr std::array<FormatInfo, 8> format_registry{{
    {Format::csr, "csr", "CSR (paper 3.1)", impl::has_vector_kernel_v<HostCsrMatrix<double>>,
     "8-byte row offsets (paper: 4)"},
    {Format::ell, "ell", "ELLPACK (paper 3.2)", impl::has_vector_kernel_v<EllMatrix<double, int, HostExecSpace>>,
     "same as paper"},
    {Format::ellr, "ellr", "ELLPACK-R (paper 3.3)", impl::has_vector_kernel_v<EllRMatrix<double, int, HostExecSpace>>,
     "+ row lengths (not in the ELL formula)"},
    {Format::sell, "sell", "Sliced ELLPACK (paper 3.4)",
     impl::has_vector_kernel_v<SlicedEllMatrix<double, int, std::size_t, HostExecSpace>>, "+ slice offsets"},
    {Format::sellr, "sellr", "Sliced ELLPACK-R (paper 3.5)",
     impl::has_vector_kernel_v<SlicedEllRMatrix<double, int, std::size_t, HostExecSpace>>,
     "+ slice offsets, row lengths"},
    {Format::hybrid, "hybrid", "hybrid ELLPACK + CSR (paper 4.1, Algorithms 6-7)",
     impl::has_vector_kernel_v<HybridMatrix<double, int, std::size_t, HostExecSpace>>,
     "2 per-row arrays (paper: 3); 8-byte row offsets (paper: 4)"},
    {Format::hybrid16, "hybrid16", "hybrid with 16-bit reference-region columns",
     impl::has_vector_kernel_v<impl::HostHybrid16<double>>,
     "16-bit reference columns (paper: 4 bytes); 2 per-row arrays (paper: 3)"},
    {Format::csell, "csell", "Compressed Sliced ELLPACK: 16-bit column deltas and value-table indices (cispmv)",
     impl::has_vector_kernel_v<CompressedSellMatrix<double, int, std::size_t, HostExecSpace>>,
     "not in the paper: both columns show the allocation"},
}};

/// The registry entry of `f`.
inline const FormatInfo& format_info(Format f) {
  for (const auto& info : format_registry) {
    if (info.format == f) return info;
  }
  throw std::invalid_argument("cispmv::format_info: unknown format");
}

/// The format called `name`, or nothing.
inline std::optional<Format> find_format(std::string_view name) {
  for (const auto& info : format_registry) {
    if (name == info.name) return info.format;
  }
  return std::nullopt;
}

/// Every format name, in registry order.
inline std::vector<std::string> format_names() {
  std::vector<std::string> names;
  for (const auto& info : format_registry) names.emplace_back(info.name);
  return names;
}

/// The format called `name`; std::invalid_argument listing the names for anything else.
inline Format parse_format(std::string_view name) {
  if (auto f = find_format(name)) return *f;
  std::string all;
  for (const auto& n : format_names()) all += (all.empty() ? "" : ", ") + n;
  throw std::invalid_argument("unknown format '" + std::string(name) + "' (formats: " + all + ")");
}

/// The kernel shapes format `f` has: scalar, and vector where it has one.
inline std::vector<Kernel> format_kernels(Format f) {
  std::vector<Kernel> k{Kernel::scalar};
  if (format_info(f).has_vector_kernel) k.push_back(Kernel::vector);
  return k;
}

/// Format `F` of the host CSR matrix `A`, built on the host (CSR itself is shared, not copied).
template <Format F, class Scalar, class Offset>
auto build_format(const HostCsrMatrix<Scalar, int, Offset>& A, const FormatParams& params) {
  if constexpr (F == Format::csr) {
    return A;
  } else if constexpr (F == Format::ell) {
    return to_ell(A);
  } else if constexpr (F == Format::ellr) {
    return to_ellr(A);
  } else if constexpr (F == Format::sell) {
    return to_sliced_ell(A, params.slice_height);
  } else if constexpr (F == Format::sellr) {
    return to_sliced_ellr(A, params.slice_height);
  } else if constexpr (F == Format::hybrid) {
    return params.boundary < 0 ? to_hybrid(A) : to_hybrid(A, params.boundary);
  } else if constexpr (F == Format::hybrid16) {
    return params.boundary < 0 ? to_hybrid<std::uint16_t>(A) : to_hybrid<std::uint16_t>(A, params.boundary);
  } else {
    static_assert(F == Format::csell, "cispmv::build_format: a format of the registry has no builder");
    const int lanes =
        params.row_lanes > 0 ? params.row_lanes : impl::automatic_row_lanes(A, params.gpu_threads, params.slice_height);
    const int window =
        params.sort_window >= 0 ? params.sort_window : -1;  // -1: automatic, once the encoder knows its values
    return to_compressed_sell(A, params.slice_height, params.table_size, params.min_table_coverage,
                              std::size_t(1) << 22, params.table_order, lanes, window);
  }
}

/// Calls `fn(std::integral_constant<Format, F>{})` for every format F of the registry, in order:
/// for code that needs each format's type at compile time (benchmarks that build lazily).
template <class Fn>
void for_each_format(Fn&& fn) {
  fn(std::integral_constant<Format, Format::csr>{});
  fn(std::integral_constant<Format, Format::ell>{});
  fn(std::integral_constant<Format, Format::ellr>{});
  fn(std::integral_constant<Format, Format::sell>{});
  fn(std::integral_constant<Format, Format::sellr>{});
  fn(std::integral_constant<Format, Format::hybrid>{});
  fn(std::integral_constant<Format, Format::hybrid16>{});
  fn(std::integral_constant<Format, Format::csell>{});
}

/// Builds format `f` of the host CSR matrix `A` on the host and calls `fn(host_format)` with it
/// (a CsrMatrix, EllMatrix, ..., HybridMatrix in host memory); returns what fn returns, which must
/// be the same type for every format. The built matrix lives only during the call.
template <class Scalar, class Offset, class Fn>
decltype(auto) with_host_format(Format f, const HostCsrMatrix<Scalar, int, Offset>& A, const FormatParams& params,
                                Fn&& fn) {
  switch (f) {
    case Format::csr: return fn(A);
    case Format::ell: return fn(build_format<Format::ell>(A, params));
    case Format::ellr: return fn(build_format<Format::ellr>(A, params));
    case Format::sell: return fn(build_format<Format::sell>(A, params));
    case Format::sellr: return fn(build_format<Format::sellr>(A, params));
    case Format::hybrid: return fn(build_format<Format::hybrid>(A, params));
    case Format::hybrid16: return fn(build_format<Format::hybrid16>(A, params));
    case Format::csell: return fn(build_format<Format::csell>(A, params));
  }
  throw std::invalid_argument("cispmv::with_host_format: unknown format");
}

}  // namespace cispmv
