#pragma once
/// \file choose_format.hpp
/// The automatic choice of format and kernel for a matrix on an execution space, by a documented
/// model: an SpMV is memory-bound, so its time is the bytes it must move over the fraction of the
/// memory bandwidth its kernel reaches.

#include <Kokkos_Core.hpp>

#include "cispmv/formats/compressed_sell.hpp"
#include "cispmv/formats/compressed_sell_encoder.hpp"
#include "cispmv/formats/csr.hpp"
#include "cispmv/impl/backend.hpp"
#include "cispmv/options.hpp"
#include "cispmv/registry.hpp"

#include <algorithm>
#include <cstddef>
#include <iterator>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace cispmv {

/// One candidate of choose_format: its predicted bytes per product and relative time.
struct FormatEstimate {
  Format format;
  Kernel kernel;
  double bytes = 0;       ///< bytes one y = A*x reads and writes (format arrays, padding, x, y)
  double efficiency = 0;  ///< fraction of the copy bandwidth its kernel reaches (measured, see below)
  double setup = 0;       ///< building it from the CSR, in bytes moved at the copy bandwidth (see below)
  /// One product, in bytes at the copy bandwidth.
  double cost() const { return bytes / efficiency; }
  /// `products` products and the conversion (products == 0: one product, no conversion).
  double cost(double products) const { return products > 0 ? products * cost() + setup : cost(); }
};

/// What choose_format decided, from which estimates, and what deciding cost.
struct FormatChoice {
  Format format = Format::csr;
  Kernel kernel = Kernel::automatic;
  std::vector<FormatEstimate> candidates;  ///< every format considered, the chosen one first
  double products = 0;                     ///< the products the choice was made for (0: per product)
  int vectors = 1;                         ///< vectors per product (block products where > 1)
  double seconds = 0;                      ///< the time the choice took (sampling the values)
  std::string summary() const;
};

namespace impl {

/// Fractions of the copy bandwidth each kernel reached in cispmv's benchmarks, with the row count
/// `rows` of the matrix. A thread-per-row kernel has one thread per row, so on a GPU it reaches its
/// bandwidth only with a few hundred thousand rows: H100, Sliced ELLPACK 81 % of copy on the 1.66M-row
/// FCI Hamiltonian, 53 % on 245K rows, 16 % on 32K; csell 50 %, 40 % and 27 % (it also waits on its
/// value-table gathers). The vector-per-row kernels do not depend on it (hybrid 47-62 %, CSR 48-51 %).
/// Host: CSR thread per row reaches ~85 % of a STREAM copy; the column-major sliced layouts walk each
/// row with a stride of a slice (2 cores: Sliced ELLPACK ~0.3 of CSR's bandwidth); csell's host shape
/// streams whole slices and reaches ~0.30 of CSR's bandwidth (2 cores, frozen-core H2O full CI: 430 MB
/// in 39.2-40.6 ms against CSR's 1,201 MB in 32.9 ms): it is waiting on its gathers, not on memory.
/// `values_inline`: csell without a value table (random values) has no table gathers and reaches 68 %
/// of copy on 1M rows (H100, scaled-1048576, 2 entries per step).
/// `lanes` > 1: csell with several lanes per row (impl::automatic_row_lanes, for matrices whose rows
/// leave a GPU's thread slots free), whose vector kernel does not depend on the row count: H200,
/// 70 % of copy with values inline (paper32k-1, 8 lanes), 37 % with a table (frozen-core FCI, 4 lanes).
/// Host with csell's AVX-512 walk (impl::host_simd; frozen-core FCI, against Kokkos Kernels' CSR):
/// values inline stream as CSR does (0.85; Zen 4, 2 cores: 1.0 GB in 36 ms against CSR's 1.2 GB in 59),
/// a table read by gathers 0.5 (Intel Xeon, 16 cores: 0.45 GB in 7.3 ms against 1.2 GB in 11.2), by
/// scalar loads 0.3 (Zen 4: 0.45 GB in 44 ms).
template <class Exec>
double kernel_efficiency(Format f, double rows, bool values_inline = false, int lanes = 1) {
  if constexpr (is_gpu_space_v<Exec>) {
    const double parallel = std::min(1.0, rows / 3.0e5);
    switch (f) {
      case Format::csr: return 0.5;
      case Format::hybrid:
      case Format::hybrid16: return 0.6;
      case Format::sell: return 0.8 * parallel;
      case Format::csell:
        if (lanes > 1) return values_inline ? 0.70 : 0.37;
        return (values_inline ? 0.68 : 0.5) * parallel;
      default: return 0.5;
    }
  } else {
    (void)lanes;
    switch (f) {
      case Format::csr: return 0.85;
      case Format::sell: return 0.3;
      case Format::csell:
        if (!host_simd::avx512_available()) return 0.26;
        return values_inline ? 0.85 : host_simd::table_gathers_pay() ? 0.5 : 0.3;
      default: return 0.5;
    }
  }
}

/// What building a format from a CSR costs on Exec, in CSR reads (the conversion's time over the time
/// one read of the CSR takes at the copy bandwidth), measured: on a GPU csell is encoded where the CSR
/// lives, 124 reads (H100: 0.54 s for the 13.1 GB all-electron FCI Hamiltonian, whose read takes 4.4
/// ms), and the other formats go through a host copy, ~4,600 reads (csell that way took 20.4 s, same
/// results); on the host csell takes ~80 reads (2 cores: 2.2 s for the 1.2 GB frozen-core one, read in
/// 28 ms at the copy bandwidth), and Sliced ELLPACK and the hybrid format, one O(nnz) pass as well, are
/// taken as csell's. CSR costs nothing. On the host csell with its values inline samples nothing and
/// builds no table: 24 reads (2 cores, `cispmv ci` frozen core, convert 0.9-1.06 s against CSR's
/// 0.29-0.32 for a CSR read in ~31 ms at the VM's 38.7 GB/s copy bandwidth).
template <class Exec>
double conversion_reads(Format f, bool values_inline = false) {
  if (f == Format::csr) return 0.0;
  if constexpr (is_gpu_space_v<Exec>) {
    (void)values_inline;
    return f == Format::csell ? 124.0 : 4600.0;
  } else {
    return f == Format::csell && values_inline ? 24.0 : 80.0;
  }
}

/// Several vectors per product on a GPU (a block eigensolver's): fractions of the copy bandwidth, in
/// the matrix's and the vectors' bytes, of the two formats whose block kernels were measured there.
/// H200 (`cispmv ci` H2O/6-31G full CI, 5 roots: 17 block products of 5 vectors): CSR 16.6 ms per
/// product for 13.3 GB (0.19 of a 4.1 TB/s copy); csell as FormatParams::for_block_products builds it
/// (values inline, rows sorted) 6.45 ms for 11.2 GB (0.42). Their bound is L1 throughput (ncu), not
/// bytes: these fractions are measured at 5 vectors and only roughly hold at other counts.
inline constexpr double gpu_block_efficiency_csr = 0.19;
inline constexpr double gpu_block_efficiency_csell = 0.42;
/// Several vectors per product on a CPU: the time of a block product of k vectors over the time of
/// CSR's single-vector product, for the formats with a block kernel, measured on our 2 cores (AMD
/// Zen 4, frozen-core H2O/6-31G full CI, spmv_bench medians: CSR 63.5 / 71.4 / 96.7 / 232 / 538 / 989 ms at
/// k = 1 / 2 / 4 / 8 / 12 / 16, csell with its AVX-512 block walk 35.2 / 117 / 128 / 141 / 185 / 213).
/// CSR's rows gather k-wide rows of X that leave the caches as k grows; csell's walk carries 8 rows'
/// sums in vector registers. csell without the walk (no AVX-512, or float) runs its portable loop:
/// 259 / 376 / ~1,000 ms at k = 4 / 8 / 16, ~1.1x CSR's single product at k = 1, the rest interpolated.
/// Beyond 16 columns a plan launches 16 at a time. Formats without a block kernel multiply the columns
/// one by one (k single products).
struct HostBlockRatio {
  int k;
  double csr, csell_walk, csell_portable;
};
inline constexpr HostBlockRatio host_block_ratios[] = {{1, 1.0, 0.55, 1.1},    {2, 1.12, 1.84, 2.2},
                                                       {4, 1.52, 2.02, 4.3},   {8, 3.65, 2.22, 6.3},
                                                       {12, 8.47, 2.91, 11.5}, {16, 15.6, 3.35, 16.7}};
/// host_block_ratios' `column` at k columns (linear between the measured widths; 16 at a time beyond).
inline double host_block_ratio(double HostBlockRatio::*column, int k) {
  constexpr int widest = 16;
  if (k > widest)
    return (k / widest) * host_block_ratio(column, widest) + (k % widest ? host_block_ratio(column, k % widest) : 0.0);
  const HostBlockRatio* hi = std::begin(host_block_ratios);
  while (hi->k < k) ++hi;
  if (hi->k == k || hi == std::begin(host_block_ratios)) return hi->*column;
  const HostBlockRatio* lo = hi - 1;
  const double t = static_cast<double>(k - lo->k) / static_cast<double>(hi->k - lo->k);
  return lo->*column + t * (hi->*column - lo->*column);
}

/// csell encoded on a GPU with its values inline, in CSR reads: no values sampled, no table (H200,
/// the same run: 0.134 s for the 13.1 GB all-electron Hamiltonian, one read of which takes 3.2 ms).
inline constexpr double gpu_inline_csell_conversion_reads = 42.0;

/// The choice with its candidates cheapest first (for its `products`), the cheapest chosen.
inline FormatChoice cheapest_first(FormatChoice choice, double seconds) {
  const double products = choice.products;
  std::stable_sort(
      choice.candidates.begin(), choice.candidates.end(),
      [products](const FormatEstimate& a, const FormatEstimate& b) { return a.cost(products) < b.cost(products); });
  choice.format = choice.candidates.front().format;
  choice.kernel = choice.candidates.front().kernel;
  choice.seconds = seconds;
  return choice;
}

/// Slots of a sliced layout (Sliced ELLPACK, csell) with `slice_height` rows per slice, from a CSR row
/// map in host memory: the sum over slices of height x the slice's longest row. O(rows). With `lanes`
/// per row (csell's row_lanes) a slice holds slice_height / lanes rows, each dealt to its lanes.
template <class RowPtr>
double padded_slots(const RowPtr& row_ptr, long long num_rows, int slice_height, int lanes = 1) {
  double padded = 0;
  const long long rows_per_slice = std::max(1, slice_height / lanes);
  for (long long first = 0; first < num_rows; first += rows_per_slice) {
    std::size_t width = 0;
    const long long end = std::min<long long>(num_rows, first + rows_per_slice);
    for (long long r = first; r < end; ++r) {
      const std::size_t length = row_ptr(r + 1) - row_ptr(r);
      width = std::max<std::size_t>(width,
                                    (length + static_cast<std::size_t>(lanes) - 1) / static_cast<std::size_t>(lanes));
    }
    padded += static_cast<double>(width) * slice_height;
  }
  return padded;
}

/// The same for a host CSR matrix.
template <class Scalar, class Offset>
double padded_slots(const HostCsrMatrix<Scalar, int, Offset>& A, int slice_height) {
  return padded_slots(A.row_ptr, A.num_rows, slice_height);
}

}  // namespace impl

/// Chooses the format (CSR, the hybrid format and hybrid16 on GPUs, Sliced ELLPACK or Compressed Sliced ELLPACK)
/// and kernel for y = A*x on
/// execution space Exec, by the model time = bytes moved / kernel efficiency (impl::kernel_efficiency).
/// Bytes are exact for CSR and Sliced ELLPACK (from the row lengths, O(rows)) and estimated for csell
/// from its slice widths and the value table's coverage on a sample of at most 2^20 values. ELLPACK(-R)
/// is never a candidate (its padding to the longest row only adds bytes to Sliced ELLPACK's).
///
/// `products` > 0: the choice for that many products of a matrix that is now a CSR, conversion included
/// (impl::conversion_reads): what a solver wants (`cispmv ci` asks for 15 per root, Davidson's usual
/// count); 0 (the default): the fastest product alone, what a benchmark or a long-lived plan wants.
///
/// `vectors` > 1: the products are block products of that many vectors per read of the matrix (a block
/// eigensolver's). On a GPU the candidates are CSR and csell as FormatParams::for_block_products builds it
/// (values inline: 10 bytes per entry, encoded without sampling), with their block kernels' efficiencies
/// (impl::gpu_block_efficiency_csr, impl::gpu_block_efficiency_csell). On a CPU the candidates are the
/// single-vector ones, each product costing CSR's single-vector product times the measured ratio of the
/// format's block kernel (impl::host_block_ratios; k single products for Sliced ELLPACK): the candidates'
/// bytes then include the k vectors, and their efficiencies are what the ratios imply.
template <class Exec, class Scalar, class Offset, class Device>
FormatChoice choose_format(const CsrMatrix<Scalar, int, Offset, Device>& A, int slice_height = 32, double products = 0,
                           int vectors = 1) {
  if (slice_height <= 0) {
    throw std::invalid_argument("cispmv::choose_format: slice_height must be positive, got " +
                                std::to_string(slice_height));
  }
  if (vectors < 1) {
    throw std::invalid_argument("cispmv::choose_format: vectors must be at least 1, got " + std::to_string(vectors));
  }
  Kokkos::Timer timer;
  const double rows = A.num_rows, nnz = static_cast<double>(A.nnz());
  if (A.num_rows == 0 || A.nnz() == 0) {  // nothing to model: CSR moves nothing either
    FormatChoice empty;
    empty.kernel = Kernel::scalar;
    empty.candidates.push_back({Format::csr, Kernel::scalar, 0.0, 1.0});
    empty.seconds = timer.seconds();
    return empty;
  }
  const double vector_bytes = sizeof(Scalar) * (static_cast<double>(A.num_cols) + rows);
  const auto row_ptr = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), A.row_ptr);  // A may be on a GPU
  const double padded = impl::padded_slots(row_ptr, A.num_rows, slice_height);
  const double csr = nnz * (sizeof(Scalar) + sizeof(int)) + (rows + 1) * sizeof(Offset);
  if (impl::is_gpu_space_v<Exec> && vectors > 1) {  // block products: nothing to sample
    FormatChoice block;
    block.products = products;
    block.vectors = vectors;
    const double moved = vectors * vector_bytes;
    block.candidates.push_back({Format::csr, Kernel::vector, csr + moved, impl::gpu_block_efficiency_csr, 0.0});
    block.candidates.push_back({Format::csell, Kernel::scalar, padded * (2.0 + sizeof(Scalar)) + rows * 16.0 + moved,
                                impl::gpu_block_efficiency_csell, impl::gpu_inline_csell_conversion_reads * csr});
    return impl::cheapest_first(std::move(block), timer.seconds());
  }
  double coverage = 0;
  const auto table =
      impl::frequent_values(A, CompressedSellMatrix<Scalar>::max_table_size, &coverage, std::size_t(1) << 20);
  const bool uses_table = coverage >= FormatParams::for_space<Exec>().min_table_coverage;
  // csell's lanes per row on this space (what build_format's automatic lanes give it)
  const int lanes =
      impl::automatic_row_lanes(A.num_rows, nnz, impl::gpu_thread_slots<Exec>(), slice_height, !uses_table);
  const double csell_padded = lanes > 1 ? impl::padded_slots(row_ptr, A.num_rows, slice_height, lanes) : padded;
  const double entry = uses_table ? 4.0 : 2.0 + sizeof(Scalar);
  const double kept = uses_table ? coverage : 1.0;
  const double csell = csell_padded * kept * entry + (1 - kept) * nnz * (sizeof(Scalar) + sizeof(int)) +
                       rows * 8 * (1 + lanes) + (uses_table ? table.size() * sizeof(Scalar) : 0.0);

  FormatChoice choice;
  choice.products = products;
  choice.vectors = vectors;
  auto add = [&](Format f, Kernel k, double bytes) {
    choice.candidates.push_back(
        {f, k, bytes + vector_bytes,
         impl::kernel_efficiency<Exec>(f, rows, f == Format::csell && !uses_table, f == Format::csell ? lanes : 1),
         impl::conversion_reads<Exec>(f, f == Format::csell && !uses_table) * csr});
  };
  add(Format::csr, impl::is_gpu_space_v<Exec> ? Kernel::vector : Kernel::scalar, csr);
  // the hybrid format stores the same entries (BOUNDARY <= the shortest row pads nothing); with fewer
  // than 65,535 columns its reference region's columns fit 16 bits (hybrid16): 2 bytes less for each
  // of at least rows x the shortest row's entries (the automatic BOUNDARY)
  if (impl::is_gpu_space_v<Exec>) {
    add(Format::hybrid, Kernel::vector, csr + rows * sizeof(int));
    if (A.num_cols < 65535) {
      std::size_t shortest = row_ptr(1) - row_ptr(0);
      for (int r = 1; r < A.num_rows; ++r) shortest = std::min<std::size_t>(shortest, row_ptr(r + 1) - row_ptr(r));
      add(Format::hybrid16, Kernel::vector, csr + rows * sizeof(int) - 2.0 * rows * static_cast<double>(shortest));
    }
  }
  add(Format::sell, Kernel::scalar,
      padded * (sizeof(Scalar) + sizeof(int)) + (padded / slice_height + 1) * sizeof(Offset));
  add(Format::csell, lanes > 1 ? Kernel::vector : Kernel::scalar, csell);
  if (!impl::is_gpu_space_v<Exec> && vectors > 1) {               // block products on a CPU (impl::host_block_ratios)
    const double csr_product = choice.candidates.front().cost();  // CSR's single-vector product
    const bool walk = impl::host_simd::supports_block<Scalar, int> && impl::host_simd::avx512_available();
    for (auto& c : choice.candidates) {
      const double single = c.cost();
      const double cost = c.format == Format::csr
                              ? csr_product * impl::host_block_ratio(&impl::HostBlockRatio::csr, vectors)
                          : c.format == Format::csell
                              ? csr_product * impl::host_block_ratio(walk ? &impl::HostBlockRatio::csell_walk
                                                                          : &impl::HostBlockRatio::csell_portable,
                                                                     vectors)
                              : single * vectors;  // no block kernel: the columns one by one
      c.bytes += (vectors - 1) * vector_bytes;
      c.efficiency = c.bytes / cost;
    }
  }
  return impl::cheapest_first(std::move(choice), timer.seconds());
}

inline std::string FormatChoice::summary() const {
  std::string s = std::string(format_info(format).name) + " " + kernel_name(kernel) + " (model: bytes / efficiency";
  if (products > 0) s += ", " + std::to_string(static_cast<long long>(products)) + " products + conversion";
  if (vectors > 1) s += ", " + std::to_string(vectors) + " vectors per product";
  s += ";";
  for (const auto& c : candidates) {
    s += " " + std::string(format_info(c.format).name) + " " + std::to_string(c.bytes / 1e6).substr(0, 8) + " MB / " +
         std::to_string(c.efficiency).substr(0, 4);
    if (products > 0 && c.setup > 0) s += " + " + std::to_string(c.setup / 1e9).substr(0, 6) + " GB to convert";
    s += ";";
  }
  s += " chosen in " + std::to_string(seconds).substr(0, 6) + " s)";
  return s;
}

}  // namespace cispmv
