#pragma once
/// \file mpi/distributed_spmv.hpp
/// y = beta*y + alpha*A*x with A's rows cut into blocks over MPI ranks (mpi/partition.hpp), each
/// rank's block a cispmv matrix of any format on its own device, x and y cut like the rows.
///
/// Each product assembles the x the local block reads, then runs the block's SpmvPlan:
/// - Exchange::allgather: every rank receives all of x (MPI_Allgatherv). A CI Hamiltonian's block
///   touches nearly every column, so this moves barely more than a halo would, in one collective.
/// - Exchange::halo: every rank receives only the entries its block reads from other ranks
///   (MPI_Alltoallv of packed entries; the lists are set up once from the block's columns).
/// Buffers live in the execution space's memory. MPI reads and writes them there directly when it
/// is GPU-aware (Open MPI built with CUDA, asked through MPIX_Query_cuda_support); otherwise they
/// are staged through pinned host copies, on a stream of their own, only this rank's part going
/// out and only the other ranks' parts coming back. A host execution space never stages.
///
/// Overlap: a plan made from a SplitBlock (the block cut by columns into the part that reads this
/// rank's own x and the part that reads the others') multiplies the own part while x's other parts
/// are exchanged, then adds the other part: the exchange hides behind the own part's work.

#include <mpi.h>
#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>  // Open MPI's MPIX_CUDA_AWARE_SUPPORT and MPIX_Query_cuda_support
#endif

#include <Kokkos_Core.hpp>

#include "cispmv/formats/csr.hpp"
#include "cispmv/impl/backend.hpp"
#include "cispmv/mpi/partition.hpp"
#include "cispmv/plan.hpp"

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace cispmv::mpi {

/// How a distributed product assembles the x its block reads (see the file comment).
enum class Exchange { allgather, halo };
/// Where MPI reads and writes the exchanged vectors of a GPU execution space.
enum class Staging {
  automatic,  ///< device memory if the MPI library says it is GPU-aware, else host staging
  device,     ///< device memory (the MPI library must be GPU-aware)
  host        ///< host copies (also asked of a host space: its vectors then go through the staging
              ///< buffers, which is how the tests run the staging code without a GPU)
};

inline const char* exchange_name(Exchange e) { return e == Exchange::halo ? "halo" : "allgather"; }

/// Whether the MPI library handles CUDA device memory: compiled with it (MPIX_CUDA_AWARE_SUPPORT)
/// and, at run time, MPIX_Query_cuda_support(). CISPMV_MPI_GPU_AWARE=0 or 1 in the environment
/// overrides both (for MPI libraries that cannot say, e.g. MPICH builds with GPU support).
inline bool mpi_is_gpu_aware() {
  if (const char* env = std::getenv("CISPMV_MPI_GPU_AWARE")) return std::strcmp(env, "0") != 0;
#if defined(MPIX_CUDA_AWARE_SUPPORT) && MPIX_CUDA_AWARE_SUPPORT
  return MPIX_Query_cuda_support() == 1;
#else
  return false;
#endif
}

/// Settings of a DistributedSpmvPlan.
struct DistributedOptions {
  Exchange exchange = Exchange::allgather;
  Staging staging = Staging::automatic;
  /// Host staging of the allgather: every rank's part travels in this many pieces, so that the
  /// copies to and from the GPU overlap MPI's (0: automatic, one piece: on an H200 with Open MPI's
  /// shared memory, 4 and 8 pieces were no faster).
  int staging_pieces = 0;
  SpmvOptions spmv = {};  ///< the local block's plan
};

/// Time and traffic of a plan's products so far (fenced: each product waits for the last one).
struct DistributedTiming {
  int products = 0;               ///< applies (a block of k vectors counts once)
  double seconds = 0.0;           ///< the products, start to end (wall clock)
  double exchange_seconds = 0.0;  ///< assembling x: packing, staging copies, MPI (wall clock)
  double mpi_seconds = 0.0;       ///< of which inside MPI's collectives
  double local_seconds = 0.0;     ///< the local block's SpMV kernels, as the device timed them
  double bytes_received = 0.0;    ///< entries of x this rank received from other ranks, in bytes
  /// The part of the products that was communication and not hidden behind local work.
  double exposed_exchange_seconds() const { return seconds > local_seconds ? seconds - local_seconds : 0.0; }
};

namespace impl {

/// ptr(r + 1) holds row r's count; afterwards the offsets (ptr(0) stays 0). Returns the total.
template <class Exec, class Ptr>
typename Ptr::non_const_value_type counts_to_offsets(const Ptr& ptr) {
  using Off = typename Ptr::non_const_value_type;
  Off total = 0;
  Kokkos::parallel_scan(
      "cispmv::mpi::split_scan",
      Kokkos::RangePolicy<Exec, Kokkos::IndexType<std::int64_t>>(0, static_cast<std::int64_t>(ptr.extent(0)) - 1),
      KOKKOS_LAMBDA(const std::int64_t r, Off& partial, const bool final) {
        partial += ptr(r + 1);
        if (final) ptr(r + 1) = partial;
      },
      total);
  Kokkos::fence();
  return total;
}

}  // namespace impl

/// A rank's row block of A cut by columns, for products that overlap the exchange of x with work:
/// `own` holds the entries in this rank's columns [first, end), renumbered from 0 (local_rows x
/// local_rows), `other` every other entry (local_rows x global_rows, columns numbered as in A).
template <class Matrix>
struct SplitBlock {
  Matrix own, other;
};

/// The SplitBlock of a CSR row block whose own columns are [first, end), on the block's execution
/// space (count, prefix sums, copy; the block is left as it is, so for a moment both exist: a CI
/// Hamiltonian's block is better built in its two parts, mpi::build_split_hamiltonian).
template <class S, class O, class Off, class Device>
SplitBlock<CsrMatrix<S, O, Off, Device>> split_columns(const CsrMatrix<S, O, Off, Device>& A, std::int64_t first,
                                                       std::int64_t end) {
  using Exec = typename Device::execution_space;
  using Matrix = CsrMatrix<S, O, Off, Device>;
  if (first < 0 || first > end || end > static_cast<std::int64_t>(A.num_cols) || end - first != A.num_rows) {
    throw std::invalid_argument("cispmv::mpi::split_columns: own columns [" + std::to_string(first) + ", " +
                                std::to_string(end) + ") do not fit a block of " + std::to_string(A.num_rows) +
                                " rows and " + std::to_string(A.num_cols) + " columns");
  }
  const auto row_ptr = A.row_ptr;
  const auto col_idx = A.col_idx;
  const auto values = A.values;
  const std::int64_t n = A.num_rows;
  using Policy = Kokkos::RangePolicy<Exec, Kokkos::IndexType<std::int64_t>>;
  SplitBlock<Matrix> out;
  typename Matrix::row_map_type own_ptr("cispmv::mpi::split_own::row_ptr", static_cast<std::size_t>(n) + 1),
      other_ptr("cispmv::mpi::split_other::row_ptr", static_cast<std::size_t>(n) + 1);
  Kokkos::parallel_for(
      "cispmv::mpi::split_count", Policy(0, n), KOKKOS_LAMBDA(const std::int64_t r) {
        Off inside = 0;
        for (Off k = row_ptr(r); k < row_ptr(r + 1); ++k) inside += col_idx(k) >= first && col_idx(k) < end;
        own_ptr(r + 1) = inside;
        other_ptr(r + 1) = row_ptr(r + 1) - row_ptr(r) - inside;
      });
  const Off own_nnz = impl::counts_to_offsets<Exec>(own_ptr), other_nnz = impl::counts_to_offsets<Exec>(other_ptr);
  out.own = Matrix("cispmv::mpi::split_own", A.num_rows, A.num_rows, own_nnz);
  out.other = Matrix("cispmv::mpi::split_other", A.num_rows, A.num_cols, other_nnz);
  out.own.row_ptr = own_ptr;
  out.other.row_ptr = other_ptr;
  const auto own_cols = out.own.col_idx, other_cols = out.other.col_idx;
  const auto own_values = out.own.values, other_values = out.other.values;
  Kokkos::parallel_for(
      "cispmv::mpi::split_copy", Policy(0, n), KOKKOS_LAMBDA(const std::int64_t r) {
        Off a = own_ptr(r), b = other_ptr(r);
        for (Off k = row_ptr(r); k < row_ptr(r + 1); ++k) {
          if (col_idx(k) >= first && col_idx(k) < end) {
            own_cols(a) = static_cast<O>(col_idx(k) - first);
            own_values(a++) = values(k);
          } else {
            other_cols(b) = col_idx(k);
            other_values(b++) = values(k);
          }
        }
      });
  Kokkos::fence();
  return out;
}

/// The global columns a CSR row block reads (sorted, each once): what a halo exchange must bring.
/// Runs on the block's execution space; only a bitmap of the columns crosses to the host.
template <class S, class O, class Off, class Device>
std::vector<std::int64_t> columns_read(const CsrMatrix<S, O, Off, Device>& A) {
  using Exec = typename Device::execution_space;
  using Mem = typename Device::memory_space;
  const std::size_t words = (static_cast<std::size_t>(A.num_cols) + 31) / 32;
  Kokkos::View<unsigned*, Mem> marks("cispmv::mpi::columns_read", words);
  const auto col_idx = A.col_idx;
  Kokkos::parallel_for(
      "cispmv::mpi::mark_columns", Kokkos::RangePolicy<Exec, Kokkos::IndexType<std::int64_t>>(0, A.nnz()),
      KOKKOS_LAMBDA(const std::int64_t k) {
        const auto c = static_cast<std::size_t>(col_idx(k));
        Kokkos::atomic_fetch_or(&marks(c / 32), 1u << (c % 32));
      });
  const auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), marks);
  std::vector<std::int64_t> cols;
  for (std::size_t w = 0; w < words; ++w) {
    for (unsigned bits = h(w); bits != 0; bits &= bits - 1) {
      int b = 0;
      while (!((bits >> b) & 1u)) ++b;
      cols.push_back(static_cast<std::int64_t>(w * 32 + static_cast<std::size_t>(b)));
    }
  }
  return cols;
}

namespace impl {

// The kernels of DistributedSpmvPlan, as free functions (CUDA allows no extended lambda in a
// private member function).

/// x(i, j), or x(i) for a rank-1 x.
template <class XView>
KOKKOS_INLINE_FUNCTION typename XView::value_type entry(const XView& x, std::size_t i, std::size_t j) {
  if constexpr (XView::rank == 1) {
    (void)j;
    return x(i);
  } else {
    return x(i, j);
  }
}

/// own(i, j) = x(i, first + j) for j < width (x rank-1: own(i, 0) = x(i)), on exec.
template <class Exec, class XView, class Own>
void copy_columns(const Exec& exec, const XView& x, const Own& own, std::size_t first, std::size_t width) {
  Kokkos::parallel_for(
      "cispmv::mpi::own_part", Kokkos::RangePolicy<Exec>(exec, 0, own.extent(0)), KOKKOS_LAMBDA(const std::size_t i) {
        for (std::size_t j = 0; j < width; ++j) own(i, j) = entry(x, i, first + j);
      });
}

/// out(i, :) = full(rows(i) + offset, :): the entries other ranks asked for, packed.
template <class Exec, class Full, class Rows, class Out>
void gather_rows(const Exec& exec, const Full& full, const Rows& rows, std::int64_t offset, const Out& out) {
  Kokkos::parallel_for(
      "cispmv::mpi::halo_pack", Kokkos::RangePolicy<Exec>(exec, 0, out.extent(0)), KOKKOS_LAMBDA(const std::size_t i) {
        for (std::size_t j = 0; j < out.extent(1); ++j) out(i, j) = full(static_cast<std::size_t>(rows(i) + offset), j);
      });
}

/// full(rows(i), :) = in(i, :): the received entries, in place.
template <class Exec, class In, class Rows, class Full>
void scatter_rows(const Exec& exec, const In& in, const Rows& rows, const Full& full) {
  Kokkos::parallel_for(
      "cispmv::mpi::halo_unpack", Kokkos::RangePolicy<Exec>(exec, 0, in.extent(0)), KOKKOS_LAMBDA(const std::size_t i) {
        for (std::size_t j = 0; j < in.extent(1); ++j) full(static_cast<std::size_t>(rows(i)), j) = in(i, j);
      });
}

}  // namespace impl

/// The distributed product y = beta*y + alpha*A*x on `comm`, planned once: A's rows are cut by
/// `partition` and this rank holds rows [partition.first(), partition.end()) of A, either whole as
/// `local` (a cispmv matrix of local_rows x global_rows, in any format) or cut by columns as a
/// SplitBlock (the own part multiplied while x's other parts travel). x and y are this rank's parts
/// of the vectors (rank-1 Views of local_rows entries, or rank-2 Views of local_rows x k: several
/// vectors at once, the local block read once per 16 of them, as SpmvPlan does).
///
/// It is also an operator for solvers::davidson: num_rows() is the local rows, num_cols() the
/// global ones, and sum_over_ranks / gather_from_ranks make the solver's reductions global.
/// Every method that communicates is collective: all ranks call it in the same order.
template <class Exec, class LocalMatrix>
class DistributedSpmvPlan {
 public:
  using execution_space = Exec;
  using memory_space = typename Exec::memory_space;
  using value_type = typename LocalMatrix::value_type;
  using ordinal_type = typename LocalMatrix::ordinal_type;
  using local_plan_type = SpmvPlan<Exec, LocalMatrix>;
  static_assert(std::is_same_v<value_type, double> || std::is_same_v<value_type, float>,
                "cispmv::mpi::DistributedSpmvPlan: double or float matrices");

  /// `needed` (Exchange::halo only): the global columns `local` reads, sorted (columns_read() of
  /// the block's CSR); ignored by the allgather.
  DistributedSpmvPlan(const Exec& exec, MPI_Comm comm, const RowPartition& partition, const LocalMatrix& local,
                      const DistributedOptions& opts = {}, const std::vector<std::int64_t>& needed = {})
      : exec_(exec), side_(exec), comm_(comm), part_(partition), plan_(exec, local, opts.spmv), opts_(opts) {
    check_shape(local, part_.global_rows, "block");
    set_up(needed);
  }

  /// The overlapping plan: `block.own` is local_rows x local_rows, `block.other` local_rows x
  /// global_rows with no entry in this rank's columns; `needed` (halo only): the global columns
  /// `block.other` reads, sorted (columns_read() of its CSR).
  DistributedSpmvPlan(const Exec& exec, MPI_Comm comm, const RowPartition& partition,
                      const SplitBlock<LocalMatrix>& block, const DistributedOptions& opts = {},
                      const std::vector<std::int64_t>& needed = {})
      : exec_(exec),
        side_(exec),
        comm_(comm),
        part_(partition),
        plan_(exec, block.own, opts.spmv),
        other_plan_(std::make_shared<const local_plan_type>(exec, block.other, opts.spmv)),
        opts_(opts) {
    check_shape(block.own, part_.local_rows(), "own part");
    check_shape(block.other, part_.global_rows, "other part");
    set_up(needed);
  }

  // ------------------------------------------------------------------ the operator interface
  ordinal_type num_rows() const { return static_cast<ordinal_type>(part_.local_rows()); }
  ordinal_type num_cols() const { return static_cast<ordinal_type>(part_.global_rows); }
  std::int64_t global_rows() const { return part_.global_rows; }
  std::int64_t first_row() const { return part_.first(); }
  const RowPartition& partition() const { return part_; }
  MPI_Comm communicator() const { return comm_; }
  static constexpr bool has_block_kernel() { return local_plan_type::has_block_kernel(); }

  /// values[0..count) summed over the ranks, in place (MPI_Allreduce).
  void sum_over_ranks(double* values, int count) const {
    check(MPI_Allreduce(MPI_IN_PLACE, values, count, MPI_DOUBLE, MPI_SUM, comm_), "MPI_Allreduce");
  }
  /// Every rank's `mine` (the same length on every rank), concatenated in rank order (MPI_Allgather).
  std::vector<double> gather_from_ranks(const std::vector<double>& mine) const {
    std::vector<double> all(mine.size() * static_cast<std::size_t>(part_.ranks()));
    check(MPI_Allgather(mine.data(), static_cast<int>(mine.size()), MPI_DOUBLE, all.data(),
                        static_cast<int>(mine.size()), MPI_DOUBLE, comm_),
          "MPI_Allgather");
    return all;
  }

  /// y = beta*y + alpha*A*x for this rank's parts (see the class comment). Collective.
  template <class XView, class YView>
  void apply(value_type alpha, const XView& x, value_type beta, const YView& y) const {
    static_assert(Kokkos::is_view<XView>::value && Kokkos::is_view<YView>::value,
                  "cispmv::mpi::DistributedSpmvPlan::apply: x and y must be Kokkos::Views");
    constexpr unsigned rank = XView::rank;
    const std::size_t k = rank == 1 ? 1 : x.extent(1);
    if (x.extent(0) != static_cast<std::size_t>(part_.local_rows())) {
      throw std::invalid_argument("cispmv::mpi::DistributedSpmvPlan::apply: x has " + std::to_string(x.extent(0)) +
                                  " rows, rank " + std::to_string(part_.rank) + " owns " +
                                  std::to_string(part_.local_rows()));
    }
    if (k == 0) return;
    exec_.fence();
    Kokkos::Timer product;
    for (std::size_t first = 0; first < k; first += max_block_columns) {
      const std::size_t width = std::min<std::size_t>(max_block_columns, k - first);
      if constexpr (rank == 1) {
        apply_columns(alpha, x, beta, y, first, width);
      } else {
        apply_columns(alpha, x, beta, Kokkos::subview(y, Kokkos::ALL(), Kokkos::make_pair(first, first + width)), first,
                      width);
      }
    }
    timing_.seconds += product.seconds();
    ++timing_.products;
  }

  /// The plan of the local block (of its own part, for a plan made from a SplitBlock).
  const local_plan_type& local_plan() const { return plan_; }
  const DistributedTiming& timing() const { return timing_; }
  void reset_timing() const { timing_ = {}; }
  Exchange exchange() const { return opts_.exchange; }
  /// True when MPI exchanges the vectors in the execution space's memory (or that memory is the host's).
  bool exchanges_in_place() const { return gpu_aware_; }
  /// True for a plan made from a SplitBlock on more than one rank: products overlap the exchange.
  bool overlaps() const { return other_plan_ != nullptr && part_.ranks() > 1; }
  /// "allgather, host staging, overlapped" / "halo, GPU-aware MPI" / "allgather, host memory".
  std::string description() const {
    return std::string(exchange_name(opts_.exchange)) +
           (host_memory && gpu_aware_ ? std::string(", host memory")
            : gpu_aware_              ? std::string(", GPU-aware MPI")
                                      : ", host staging" + (opts_.exchange == Exchange::allgather
                                                                ? " in " + std::to_string(staging_pieces()) + " pieces"
                                                                : std::string())) +
           (overlaps() ? ", overlapped" : "");
  }
  /// Entries of x per product (one vector) this rank receives from the others.
  std::int64_t received_per_vector() const {
    return opts_.exchange == Exchange::halo ? static_cast<std::int64_t>(recv_rows_.extent(0))
                                            : part_.global_rows - part_.local_rows();
  }

 private:
  static constexpr bool host_memory = Kokkos::SpaceAccessibility<Kokkos::HostSpace, memory_space>::accessible;
  static constexpr std::size_t max_block_columns = 16;  // the columns one exchange carries
  static constexpr int default_staging_pieces = 1, max_staging_pieces = 64;
  using Unmanaged = Kokkos::MemoryTraits<Kokkos::Unmanaged>;
  using StagingMemory = typename cispmv::impl::StagingSpace<Exec>::type;
  /// The global x of a product: global_rows x width, row-major, over buffer_ (rank-1 products: width 1).
  using Full = Kokkos::View<value_type**, Kokkos::LayoutRight, memory_space, Unmanaged>;
  using Vector = Kokkos::View<value_type*, memory_space, Unmanaged>;
  using HostFull = Kokkos::View<value_type**, Kokkos::LayoutRight, StagingMemory, Unmanaged>;
  using Buffer = Kokkos::View<value_type*, memory_space>;
  using HostBuffer = Kokkos::View<value_type*, StagingMemory>;
  using Index = Kokkos::View<std::int64_t*, memory_space>;
  using Rows = std::pair<std::size_t, std::size_t>;

  template <class M>
  void check_shape(const M& m, std::int64_t cols, const char* what) const {
    if (static_cast<std::int64_t>(m.num_rows) != part_.local_rows() || static_cast<std::int64_t>(m.num_cols) != cols) {
      throw std::invalid_argument("cispmv::mpi::DistributedSpmvPlan: rank " + std::to_string(part_.rank) + "'s " +
                                  what + " is " + std::to_string(m.num_rows) + " x " + std::to_string(m.num_cols) +
                                  ", the partition gives it " + std::to_string(part_.local_rows()) + " x " +
                                  std::to_string(cols));
    }
  }

  void set_up(const std::vector<std::int64_t>& needed) {
    if (part_.ranks() != size_of(comm_) || part_.rank != rank_of(comm_)) {
      throw std::invalid_argument("cispmv::mpi::DistributedSpmvPlan: the partition is for rank " +
                                  std::to_string(part_.rank) + " of " + std::to_string(part_.ranks()) +
                                  ", the communicator has rank " + std::to_string(rank_of(comm_)) + " of " +
                                  std::to_string(size_of(comm_)));
    }
    if constexpr (host_memory) {
      gpu_aware_ = opts_.staging != Staging::host;  // host memory is what any MPI reads (staged only if asked)
    } else {
      gpu_aware_ = opts_.staging == Staging::device || (opts_.staging == Staging::automatic && mpi_is_gpu_aware());
    }
    for (int r = 0; r < part_.ranks(); ++r) {
      counts_.push_back(static_cast<int>(part_.rows_of(r)));
      displs_.push_back(static_cast<int>(part_.offsets[static_cast<std::size_t>(r)]));
    }
    if (part_.global_rows > static_cast<std::int64_t>(std::numeric_limits<int>::max() / max_block_columns)) {
      throw std::invalid_argument("cispmv::mpi::DistributedSpmvPlan: " + std::to_string(part_.global_rows) +
                                  " rows: MPI counts of 16 vectors would overflow int");
    }
    if (opts_.exchange == Exchange::halo) set_up_halo(needed);
    // the buffers of one-vector products, allocated now rather than inside the first product
    reserve(buffer_, static_cast<std::size_t>(part_.global_rows), "cispmv::mpi::x_full");
    if (overlaps()) reserve(own_buffer_, static_cast<std::size_t>(part_.local_rows()), "cispmv::mpi::x_own");
    if (!gpu_aware_ && part_.ranks() > 1) {
      if (opts_.exchange == Exchange::halo) {
        reserve(host_send_, send_rows_.extent(0), "cispmv::mpi::halo_send_host");
        reserve(host_recv_, recv_rows_.extent(0), "cispmv::mpi::halo_recv_host");
      } else {
        reserve(host_buffer_, static_cast<std::size_t>(part_.global_rows), "cispmv::mpi::x_host");
      }
    }
  }

  Rows own_rows() const { return {static_cast<std::size_t>(part_.first()), static_cast<std::size_t>(part_.end())}; }

  /// One exchange and product for columns first .. first+width of x (y: those columns, or rank-1).
  template <class XView, class YView>
  void apply_columns(value_type alpha, const XView& x, value_type beta, const YView& y, std::size_t first,
                     std::size_t width) const {
    const std::size_t n = static_cast<std::size_t>(part_.global_rows), m = static_cast<std::size_t>(part_.local_rows());
    reserve(buffer_, n * width, "cispmv::mpi::x_full");
    const Full full(buffer_.data(), n, width);
    Kokkos::Timer timer;
    if (!overlaps()) {
      // this rank's columns into their place in the global x, the others exchanged, one product
      const auto own = Kokkos::subview(full, own_rows(), Kokkos::ALL());
      impl::copy_columns(exec_, x, own, first, width);
      exec_.fence();
      if (part_.ranks() > 1) exchange(own, full, true);
      timing_.exchange_seconds += timer.seconds();
      local_product(plan_, alpha, full, beta, y, width);
      return;
    }
    // overlapped: the own part multiplies this rank's columns while the others travel
    reserve(own_buffer_, m * width, "cispmv::mpi::x_own");
    const Full own(own_buffer_.data(), m, width);
    impl::copy_columns(exec_, x, own, first, width);
    exec_.fence();
    own_clock_.start(exec_);
    launch(plan_, alpha, own, beta, y, width);
    own_clock_.stop(exec_);
    timer.reset();  // (a host space's own part has run by now; a GPU's runs on)
    exchange(own, full, false);
    timing_.exchange_seconds += timer.seconds();
    local_product(*other_plan_, alpha, full, value_type(1), y, width);
    timing_.local_seconds += own_clock_.seconds();
  }

  /// plan.apply on x (rows x width, row-major; a vector when width is 1 and y is rank-1).
  template <class YView>
  static void launch(const local_plan_type& plan, value_type alpha, const Full& x, value_type beta, const YView& y,
                     std::size_t width) {
    if constexpr (YView::rank == 1) {
      (void)width;
      plan.apply(alpha, Vector(x.data(), x.extent(0)), beta, y);
    } else {
      // as a strided block, like OperatorRef's blocks: the plan's products of those are compiled once
      // (cispmv/impl/plan_instances.hpp)
      using Strided = Kokkos::View<const value_type**, Kokkos::LayoutStride, memory_space, Unmanaged>;
      plan.apply(alpha, Strided(x.data(), Kokkos::LayoutStride(x.extent(0), x.stride(0), x.extent(1), 1)), beta, y);
    }
  }
  /// A product timed by the device, waited for.
  template <class YView>
  void local_product(const local_plan_type& plan, value_type alpha, const Full& x, value_type beta, const YView& y,
                     std::size_t width) const {
    clock_.start(exec_);
    launch(plan, alpha, x, beta, y, width);
    clock_.stop(exec_);
    exec_.fence();
    timing_.local_seconds += clock_.seconds();
  }

  /// `full` (global_rows x width) receives, from the other ranks, every entry of x the block reads
  /// from them; `own` is this rank's part (local_rows x width, on the device), also in `full`'s own
  /// rows when `own_in_full`. Copies run on the side stream, so a kernel launched before may still run.
  template <class Own>
  void exchange(const Own& own, const Full& full, bool own_in_full) const {
    if (opts_.exchange == Exchange::halo) {
      halo(own, full);
    } else {
      allgather(own, full, own_in_full);
    }
  }

  template <class Own>
  void allgather(const Own& own, const Full& full, bool own_in_full) const {
    const std::size_t width = full.extent(1);
    const auto& side = side_.get();
    std::vector<int> counts(counts_.size()), displs(displs_.size());
    for (std::size_t r = 0; r < counts_.size(); ++r) {
      counts[r] = counts_[r] * static_cast<int>(width);
      displs[r] = displs_[r] * static_cast<int>(width);
    }
    timing_.bytes_received +=
        static_cast<double>(part_.global_rows - part_.local_rows()) * static_cast<double>(width * sizeof(value_type));
    if (gpu_aware_) {  // MPI reads and writes `full` itself (a host space's, or a GPU's with GPU-aware MPI)
      if (!own_in_full) {
        Kokkos::deep_copy(side, Kokkos::subview(full, own_rows(), Kokkos::ALL()), own);
        side.fence();
      }
      const Kokkos::Timer in_mpi;
      check(MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, full.data(), counts.data(), displs.data(), mpi_type(),
                           comm_),
            "MPI_Allgatherv");
      timing_.mpi_seconds += in_mpi.seconds();
      return;
    }
    // host staging: this rank's part out, the collective in pinned host memory, the others' parts back,
    // in pieces: piece c of every rank's part is gathered once its copy out is done, and comes back
    // while the next piece is gathered
    reserve(host_buffer_, full.size(), "cispmv::mpi::x_host");
    const HostFull host(host_buffer_.data(), full.extent(0), width);
    const int pieces = staging_pieces();
    auto piece = [&](int r, int c) {  // rows of rank r's piece c, global
      const auto off = static_cast<std::size_t>(part_.offsets[static_cast<std::size_t>(r)]);
      const auto len = static_cast<std::size_t>(part_.rows_of(r));
      return Rows{off + len * static_cast<std::size_t>(c) / static_cast<std::size_t>(pieces),
                  off + len * static_cast<std::size_t>(c + 1) / static_cast<std::size_t>(pieces)};
    };
    const std::size_t first = static_cast<std::size_t>(part_.first());
    for (int c = 0; c < pieces; ++c) {
      const Rows mine = piece(part_.rank, c);
      Kokkos::deep_copy(side, Kokkos::subview(host, mine, Kokkos::ALL()),
                        Kokkos::subview(own, Rows{mine.first - first, mine.second - first}, Kokkos::ALL()));
      marks_.record(side, c);
    }
    for (int c = 0; c < pieces; ++c) {
      for (int r = 0; r < part_.ranks(); ++r) {
        const Rows rows = piece(r, c);
        counts[static_cast<std::size_t>(r)] = static_cast<int>((rows.second - rows.first) * width);
        displs[static_cast<std::size_t>(r)] = static_cast<int>(rows.first * width);
      }
      marks_.wait(c);
      const Kokkos::Timer in_mpi;
      check(MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, host.data(), counts.data(), displs.data(), mpi_type(),
                           comm_),
            "MPI_Allgatherv");
      timing_.mpi_seconds += in_mpi.seconds();
      for (int r = 0; r < part_.ranks(); ++r) {
        const Rows rows = piece(r, c);
        if (r == part_.rank || rows.second == rows.first) continue;
        Kokkos::deep_copy(side, Kokkos::subview(full, rows, Kokkos::ALL()), Kokkos::subview(host, rows, Kokkos::ALL()));
      }
    }
    side.fence();
  }

  /// The pieces of a staged allgather (DistributedOptions::staging_pieces).
  int staging_pieces() const {
    return opts_.staging_pieces > 0 ? std::min(opts_.staging_pieces, max_staging_pieces) : default_staging_pieces;
  }

  // ------------------------------------------------------------------ halo exchange
  /// From the sorted global columns the block reads: which entries to ask each rank for, and (one
  /// MPI_Alltoall + MPI_Alltoallv) which of this rank's rows each other rank asks for.
  void set_up_halo(const std::vector<std::int64_t>& needed) {
    const int ranks = part_.ranks();
    std::vector<std::int64_t> asks;  // the needed columns owned by other ranks, grouped by owner (sorted)
    recv_counts_.assign(static_cast<std::size_t>(ranks), 0);
    for (std::size_t i = 0; i < needed.size(); ++i) {
      const std::int64_t c = needed[i];
      if (c < 0 || c >= part_.global_rows || (i > 0 && c <= needed[i - 1])) {
        throw std::invalid_argument(
            "cispmv::mpi::DistributedSpmvPlan: the halo exchange needs the block's columns sorted, each once, in [0, " +
            std::to_string(part_.global_rows) + ") (columns_read() of its CSR); got " + std::to_string(c) +
            " at position " + std::to_string(i));
      }
      const int owner = part_.owner(c);
      if (owner == part_.rank) continue;
      asks.push_back(c);
      ++recv_counts_[static_cast<std::size_t>(owner)];
    }
    send_counts_.assign(static_cast<std::size_t>(ranks), 0);
    check(MPI_Alltoall(recv_counts_.data(), 1, MPI_INT, send_counts_.data(), 1, MPI_INT, comm_), "MPI_Alltoall");
    recv_displs_ = displacements(recv_counts_);
    send_displs_ = displacements(send_counts_);
    std::vector<std::int64_t> sends(static_cast<std::size_t>(send_displs_.back() + send_counts_.back()));
    check(MPI_Alltoallv(asks.data(), recv_counts_.data(), recv_displs_.data(), MPI_INT64_T, sends.data(),
                        send_counts_.data(), send_displs_.data(), MPI_INT64_T, comm_),
          "MPI_Alltoallv");
    for (auto& s : sends) s -= part_.first();  // global rows asked of this rank -> its local rows
    recv_rows_ = to_index(asks, "cispmv::mpi::halo_recv_rows");
    send_rows_ = to_index(sends, "cispmv::mpi::halo_send_rows");
  }

  static std::vector<int> displacements(const std::vector<int>& counts) {
    std::vector<int> d(counts.size(), 0);
    for (std::size_t r = 1; r < counts.size(); ++r) d[r] = d[r - 1] + counts[r - 1];
    return d;
  }
  Index to_index(const std::vector<std::int64_t>& v, const char* label) const {
    Index out(Kokkos::view_alloc(std::string(label), Kokkos::WithoutInitializing), v.size());
    Kokkos::deep_copy(
        out, Kokkos::View<const std::int64_t*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged>(v.data(), v.size()));
    return out;
  }

  /// Pack the asked rows of this rank's part, exchange, unpack the received ones into `full`; on the
  /// side stream.
  template <class Own>
  void halo(const Own& own, const Full& full) const {
    const std::size_t width = full.extent(1);
    const auto& side = side_.get();
    const std::size_t nsend = send_rows_.extent(0), nrecv = recv_rows_.extent(0);
    reserve(send_buf_, nsend * width, "cispmv::mpi::halo_send");
    reserve(recv_buf_, nrecv * width, "cispmv::mpi::halo_recv");
    const Full send(send_buf_.data(), nsend, width), recv(recv_buf_.data(), nrecv, width);
    impl::gather_rows(side, own, send_rows_, 0, send);
    std::vector<int> sc(send_counts_), sd(send_displs_), rc(recv_counts_), rd(recv_displs_);
    for (auto* v : {&sc, &sd, &rc, &rd}) {
      for (int& c : *v) c *= static_cast<int>(width);
    }
    timing_.bytes_received += static_cast<double>(nrecv * width * sizeof(value_type));
    if (gpu_aware_) {
      side.fence();
      const Kokkos::Timer in_mpi;
      check(MPI_Alltoallv(send.data(), sc.data(), sd.data(), mpi_type(), recv.data(), rc.data(), rd.data(), mpi_type(),
                          comm_),
            "MPI_Alltoallv");
      timing_.mpi_seconds += in_mpi.seconds();
    } else {
      reserve(host_send_, nsend * width, "cispmv::mpi::halo_send_host");
      reserve(host_recv_, nrecv * width, "cispmv::mpi::halo_recv_host");
      const HostFull hs(host_send_.data(), nsend, width), hr(host_recv_.data(), nrecv, width);
      Kokkos::deep_copy(side, hs, send);
      side.fence();
      const Kokkos::Timer in_mpi;
      check(MPI_Alltoallv(hs.data(), sc.data(), sd.data(), mpi_type(), hr.data(), rc.data(), rd.data(), mpi_type(),
                          comm_),
            "MPI_Alltoallv");
      timing_.mpi_seconds += in_mpi.seconds();
      Kokkos::deep_copy(side, recv, hr);
    }
    impl::scatter_rows(side, recv, recv_rows_, full);
    side.fence();
  }

  /// b holds at least n entries afterwards: buffers grow and are kept (a solve's products alternate
  /// between one vector and a block of them; nothing is allocated per product once the widest came).
  template <class B>
  static void reserve(B& b, std::size_t n, const char* label) {
    if (b.extent(0) >= n) return;
    b = B();  // the old one goes first
    b = B(Kokkos::view_alloc(std::string(label), Kokkos::WithoutInitializing), n);
  }

  static MPI_Datatype mpi_type() { return std::is_same_v<value_type, double> ? MPI_DOUBLE : MPI_FLOAT; }

  Exec exec_;
  cispmv::impl::SideInstance<Exec> side_;  // copies (staging, halo packing) beside exec_'s kernels
  MPI_Comm comm_;
  RowPartition part_;
  local_plan_type plan_;                               // the block, or its own part
  std::shared_ptr<const local_plan_type> other_plan_;  // a SplitBlock's other part
  DistributedOptions opts_;
  bool gpu_aware_ = false;
  std::vector<int> counts_, displs_;                                        // rows per rank, first rows
  std::vector<int> send_counts_, send_displs_, recv_counts_, recv_displs_;  // halo, in entries per vector
  Index send_rows_, recv_rows_;               // halo: local rows to send (grouped by rank), global rows received
  mutable Buffer buffer_;                     // the global x of a product (see apply_columns)
  mutable Buffer own_buffer_;                 // overlapped products: this rank's columns of x
  mutable HostBuffer host_buffer_;            // the global x in host memory, when staging
  mutable Buffer send_buf_, recv_buf_;        // halo: packed entries
  mutable HostBuffer host_send_, host_recv_;  // their host copies, when staging
  mutable cispmv::impl::StreamClock<Exec> clock_, own_clock_;
  cispmv::impl::StreamMarks<Exec> marks_{max_staging_pieces};  // a staged allgather's pieces, out
  mutable DistributedTiming timing_;
};

}  // namespace cispmv::mpi
