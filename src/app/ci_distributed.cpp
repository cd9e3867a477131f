// `cispmv ci` under mpirun: the Hamiltonian built in row blocks, one per rank, each on its own GPU
// (or host), Davidson over all ranks, per-rank memory and the split of the products between the
// local SpMV and the exchange of x. Compiled only with MPI (CISPMV_HAVE_MPI).
#include "ci_common.hpp"
#include "commands.hpp"

#include "cispmv/boundary.hpp"
#include "cispmv/choose_format.hpp"
#include "cispmv/ci.hpp"
#include "cispmv/convert.hpp"
#include "cispmv/memory_budget.hpp"
#include "cispmv/mpi.hpp"
#include "cispmv/operator_ref.hpp"
#include "cispmv/registry.hpp"
#include "cispmv/solvers/davidson.hpp"

#include <Kokkos_Core.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <functional>
#include <iomanip>
#include <numeric>
#include <ostream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace cispmv::app {

namespace {

using namespace cispmv::ci;
using Exec = Kokkos::DefaultExecutionSpace;

/// What each rank reports; rank 0 gathers and prints them.
struct RankFigures {
  double rows = 0, nnz = 0, matrix_bytes = 0, vector_bytes = 0, host_peak = 0, device_free = 0;
  double build_seconds = 0, local_seconds = 0, exchange_seconds = 0, received_bytes = 0, product_seconds = 0;
  static constexpr int count = 11;
  std::vector<double> flat() const {
    return {rows,          nnz,           matrix_bytes,     vector_bytes,   host_peak,      device_free,
            build_seconds, local_seconds, exchange_seconds, received_bytes, product_seconds};
  }
};

/// The local matrix type of a solve's operand: a matrix, or the SplitBlock of one.
template <class M>
struct LocalMatrixOf {
  using type = M;
};
template <class M>
struct LocalMatrixOf<mpi::SplitBlock<M>> {
  using type = M;
};

template <class M>
double block_bytes(const M& A) {
  return static_cast<double>(allocated_bytes(A));
}
template <class M>
double block_bytes(const mpi::SplitBlock<M>& A) {
  return static_cast<double>(allocated_bytes(A.own) + allocated_bytes(A.other));
}

/// Peak resident memory of this process (VmHWM), 0 where /proc does not tell.
double host_peak_bytes() {
  std::ifstream status("/proc/self/status");
  std::string key;
  while (status >> key) {
    if (key == "VmHWM:") {
      double kb = 0;
      status >> kb;
      return kb * 1024.0;
    }
    status.ignore(1 << 12, '\n');
  }
  return 0;
}

}  // namespace

namespace detail {  // (not in an anonymous namespace: CUDA's extended lambdas need external linkage)

/// The distributed SpMV benchmark (--spmv-repetitions): products y = H c of the lowest root's vector,
/// each fenced and started by all ranks together; per product the slowest rank's time counts. The
/// check: |y - E c| / |c| (over all ranks) within twice the residual norm the solver reported, plus a
/// rounding allowance; a product that is wrong anywhere fails it. Returns 0, or 1 if the check fails.
template <class Plan, class Result>
int time_products(MPI_Comm comm, const Plan& plan, const Result& result, const CiCommandOptions& options,
                  nlohmann::json& j, std::ostream& out) {
  const Exec exec;
  const auto c = Kokkos::subview(result.eigenvectors, Kokkos::ALL(), 0);
  Kokkos::View<double*, Exec::memory_space> y("cispmv::ci::benchmark_y", c.extent(0));
  plan.apply(1.0, c, 0.0, y);  // warm-up
  plan.reset_timing();
  std::vector<double> seconds;
  for (int i = 0; i < options.spmv_repetitions; ++i) {
    MPI_Barrier(comm);
    Kokkos::Timer timer;
    plan.apply(1.0, c, 0.0, y);
    double t = timer.seconds();
    MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, comm);
    seconds.push_back(t);
  }
  const double e = result.eigenvalues[0];
  double sums[3] = {0, 0, 0};  // |y - e c|^2, |c|^2, |y|^2
  const Kokkos::RangePolicy<Exec> rows(exec, 0, c.extent(0));
  Kokkos::parallel_reduce(
      "cispmv::ci::benchmark_check", rows,
      KOKKOS_LAMBDA(const std::size_t i, double& r) { r += (y(i) - e * c(i)) * (y(i) - e * c(i)); }, sums[0]);
  Kokkos::parallel_reduce(
      "cispmv::ci::benchmark_check", rows, KOKKOS_LAMBDA(const std::size_t i, double& r) { r += c(i) * c(i); },
      sums[1]);
  Kokkos::parallel_reduce(
      "cispmv::ci::benchmark_check", rows, KOKKOS_LAMBDA(const std::size_t i, double& r) { r += y(i) * y(i); },
      sums[2]);
  exec.fence();
  MPI_Allreduce(MPI_IN_PLACE, sums, 3, MPI_DOUBLE, MPI_SUM, comm);
  const double residual = std::sqrt(sums[0] / sums[1]);
  const double allowed = 2.0 * result.residual_norms[0] + 1e-10 * std::sqrt(sums[2] / sums[1]);
  const bool ok = residual <= allowed;
  // each rank's split of the products, the slowest rank's reported
  const mpi::DistributedTiming t = plan.timing();
  double per[4] = {t.local_seconds, t.exchange_seconds, t.exposed_exchange_seconds(), t.mpi_seconds};
  MPI_Allreduce(MPI_IN_PLACE, per, 4, MPI_DOUBLE, MPI_MAX, comm);
  const double n = static_cast<double>(seconds.size());
  const double mean = std::accumulate(seconds.begin(), seconds.end(), 0.0) / n;
  const double best = *std::min_element(seconds.begin(), seconds.end());
  out << "spmv benchmark: " << seconds.size() << " products H c, " << std::fixed << std::setprecision(3) << 1e3 * mean
      << " ms mean, " << 1e3 * best << " ms best (slowest rank); per product " << 1e3 * per[0] / n << " ms local SpMV, "
      << 1e3 * per[1] / n << " ms exchange (" << 1e3 * per[3] / n << " ms in MPI), " << 1e3 * per[2] / n
      << " ms exposed" << std::defaultfloat << "; check |Hc - Ec|/|c| = " << std::setprecision(3) << residual
      << (ok ? " <= " : " > ") << allowed << (ok ? " ok" : " FAILED") << std::setprecision(6) << std::endl;
  j["spmv_benchmark"] = {{"products", seconds.size()},
                         {"mean_seconds", mean},
                         {"best_seconds", best},
                         {"local_seconds_per_product", per[0] / n},
                         {"exchange_seconds_per_product", per[1] / n},
                         {"exposed_exchange_seconds_per_product", per[2] / n},
                         {"mpi_seconds_per_product", per[3] / n},
                         {"check_residual", residual},
                         {"check_allowed", allowed},
                         {"check_passed", ok}};
  return ok ? 0 : 1;
}

}  // namespace detail

namespace {

/// Davidson over the ranks with `A` (this rank's block, or its SplitBlock) as the local operand.
template <class Operand, class Diagonal>
int solve_distributed(MPI_Comm comm, const mpi::RowPartition& partition, const Operand& A, const Diagonal& diagonal,
                      const std::vector<std::int64_t>& needed, const DeterminantSpace& space, const FciDump& dump,
                      const CiCommandOptions& options, RankFigures& mine, nlohmann::json& j, std::ostream& out) {
  using Matrix = typename LocalMatrixOf<Operand>::type;
  const Exec exec;
  mpi::DistributedOptions dist;
  dist.exchange = options.exchange == "halo" ? mpi::Exchange::halo : mpi::Exchange::allgather;
  dist.staging_pieces = options.staging_pieces;
  mine.matrix_bytes = block_bytes(A);
  const mpi::DistributedSpmvPlan<Exec, Matrix> plan(exec, comm, partition, A, dist, needed);
  solvers::DavidsonOptions dopts;
  dopts.num_roots = options.roots;
  dopts.residual_tolerance = options.residual_tolerance;
  dopts.max_iterations = options.max_iterations;
  // this rank's rows' irreps, where the space has several (see irrep_blocks)
  const int irreps = irrep_count(space);
  dopts.row_blocks =
      irrep_blocks(dump, space, static_cast<std::size_t>(partition.first()), static_cast<std::size_t>(partition.end()));
  out << "davidson: format " << plan.local_plan().description() << " on " << Exec::name() << " per rank, exchange "
      << plan.description() << ", " << options.roots << (options.roots == 1 ? " root" : " roots") << std::endl;
  // behind an OperatorRef: one solver compiled for every format and split, not one per plan type
  const auto result = solvers::davidson(exec, OperatorRef<typename Exec::memory_space, true>(plan), diagonal, dopts);
  mine.local_seconds = plan.timing().local_seconds;
  mine.exchange_seconds = plan.timing().exchange_seconds;
  mine.received_bytes = plan.timing().bytes_received;
  mine.product_seconds = plan.timing().seconds;
  int status = result.converged ? 0 : 1;
  if (options.spmv_repetitions > 0)
    status = std::max(status, detail::time_products(comm, plan, result, options, j, out));
  // this rank's Davidson vectors, and the global x (up to 16 columns) each product assembles
  mine.vector_bytes =
      davidson_vector_bytes(options.roots, static_cast<double>(partition.local_rows()), irreps > 1 ? irreps : 0) +
      static_cast<double>(partition.global_rows) * sizeof(double) * std::min(16, options.roots);
  out << "  iterations " << result.iterations << ", restarts " << result.restarts << ", products " << result.num_spmv
      << ", " << (result.converged ? "converged" : "NOT converged") << "\n";
  if (irreps > 1 && !dopts.row_blocks.empty()) out << "  " << guards_line(result.guards, irreps) << "\n";
  out << "  root       eigenvalue (Eh)     total energy (Eh)   residual\n";
  std::vector<double> energies;
  for (int c = 0; c < options.roots; ++c) {
    out << "  " << std::setw(4) << c + 1 << std::fixed << std::setprecision(10) << std::setw(19)
        << result.eigenvalues[c] << std::setw(22) << result.eigenvalues[c] + dump.core_energy << std::scientific
        << std::setprecision(2) << std::setw(11) << result.residual_norms[c] << std::defaultfloat << "\n";
    energies.push_back(result.eigenvalues[c] + dump.core_energy);
  }
  out << "  davidson " << std::fixed << std::setprecision(3) << result.total_seconds << " s, of which products "
      << result.spmv_seconds << " s (" << result.num_spmv << "), projected eigenproblems " << result.projected_seconds
      << " s" << std::defaultfloat << std::endl;
  j["davidson"] = {{"format", Matrix::format_name},
                   {"plan", plan.local_plan().description()},
                   {"exchange", plan.description()},
                   {"roots", options.roots},
                   {"energies", energies},
                   {"residual_norms", result.residual_norms},
                   {"iterations", result.iterations},
                   {"products", result.num_spmv},
                   {"converged", result.converged},
                   {"seconds", result.total_seconds},
                   {"product_seconds", result.spmv_seconds},
                   {"projected_eigenproblem_seconds", result.projected_seconds}};
  return status;
}

/// `cispmv ci` distributed with each rank's csell built in blocks of rows (its CSR never whole):
/// the block as its own columns and the rest (more than one rank, overlapped products) or whole.
int solve_blocked(MPI_Comm comm, const FciDump& dump, const DeterminantSpace& space, const HamiltonianOptions& hopt,
                  const CiCommandOptions& options, int block_rows, RankFigures& mine, double& nnz_total,
                  double& build_all, nlohmann::json& j, std::ostream& out) {
  using Keep = HamiltonianOptions::ColumnWindow::Keep;
  const int ranks = mpi::size_of(comm);
  const bool split = ranks > 1 && options.overlap, halo = options.exchange == "halo";
  MPI_Barrier(comm);
  Kokkos::Timer timer;
  const mpi::RowPartition partition = mpi::hamiltonian_partition(Exec(), comm, dump, space, hopt);
  const std::int64_t first = partition.first(), rows = partition.local_rows();
  Kokkos::View<double*, Exec::memory_space> diagonal("cispmv::ci::diagonal", static_cast<std::size_t>(rows));
  std::vector<std::uint8_t> read(halo ? static_cast<std::size_t>(partition.global_rows) : 0, 0);
  // one part of the block (Keep::all: the whole block) as csell; the part that holds the diagonal
  // keeps it, the part read from other ranks marks its columns for a halo exchange
  auto part = [&](Keep keep) {
    HamiltonianOptions o = hopt;
    o.columns.keep = keep;
    o.columns.first = first;
    o.columns.end = partition.end();
    std::function<void(const CsrMatrix<double, int, std::size_t, Exec>&)> mark;
    if (halo && keep != Keep::inside) {
      mark = [&](const auto& block) {
        for (const std::int64_t c : mpi::columns_read(block)) read[static_cast<std::size_t>(c)] = 1;
      };
    }
    return build_hamiltonian_csell(Exec(), dump, space, first, partition.end(), block_rows, o,
                                   keep == Keep::outside ? Kokkos::View<double*, Exec::memory_space>() : diagonal,
                                   mark);
  };
  using C = CompressedSellMatrix<double, int, std::size_t, Exec>;
  mpi::SplitBlock<C> parts;
  C whole;
  if (split) {
    parts.own = part(Keep::inside);
    parts.other = part(Keep::outside);
  } else {
    whole = part(Keep::all);
  }
  Exec().fence();
  mine.build_seconds = timer.seconds();
  MPI_Barrier(comm);
  build_all = timer.seconds();
  mine.rows = static_cast<double>(rows);
  mine.nnz = static_cast<double>(split ? parts.own.nnz() + parts.other.nnz() : whole.nnz());
  MPI_Allreduce(&mine.nnz, &nnz_total, 1, MPI_DOUBLE, MPI_SUM, comm);
  out << "hamiltonian: " << static_cast<std::size_t>(nnz_total) << " nonzeros in " << ranks
      << " row blocks balanced by nonzeros, each built as csell in blocks of " << block_rows << " rows"
      << (split ? " (its own columns and the rest)" : "") << ", in " << std::fixed << std::setprecision(3) << build_all
      << " s" << std::defaultfloat << std::endl;
  std::vector<std::int64_t> needed;
  for (std::size_t c = 0; c < read.size(); ++c) {
    if (read[c]) needed.push_back(static_cast<std::int64_t>(c));
  }
  return split ? solve_distributed(comm, partition, parts, diagonal, needed, space, dump, options, mine, j, out)
               : solve_distributed(comm, partition, whole, diagonal, needed, space, dump, options, mine, j, out);
}

}  // namespace

bool mpi_running() {
  int initialised = 0, finalised = 0;
  MPI_Initialized(&initialised);
  MPI_Finalized(&finalised);
  return initialised && !finalised;
}

int mpi_world_size() {
  int size = 1;
  if (mpi_running()) MPI_Comm_size(MPI_COMM_WORLD, &size);
  return size;
}

namespace {

/// Each rank's block of the matrix, estimated from sampled rows before anything large is allocated: 0 where it fits
/// as CSR beside its csell, else the rows of the blocks its csell is built in (a block whose CSR does not fit beside
/// its csell: on every rank, so that all ranks hold the same format); refused where not even that fits.
int plan_distributed(MPI_Comm comm, const DeterminantSpace& space, const FciDump& dump, const HamiltonianOptions& hopt,
                     const CiCommandOptions& options, std::ostream& out) {
  const int rank = mpi::rank_of(comm), ranks = mpi::size_of(comm);
  int blocked_rows = 0;
  {
    const std::size_t n = space.size(), samples = std::min<std::size_t>(n, 4096);
    std::vector<std::int64_t> rows(samples);
    for (std::size_t i = 0; i < samples; ++i) rows[i] = static_cast<std::int64_t>(i * n / samples);
    double sum = 0;
    for (std::size_t l : hamiltonian_row_lengths(dump, space, rows, hopt)) sum += static_cast<double>(l);
    const double per_rank = sum / static_cast<double>(samples) * static_cast<double>(n) * 12.0 / ranks;
    const double have = static_cast<double>(available_bytes<Exec>());
    out << "memory estimate: ~" << format_bytes(per_rank) << " of CSR per rank" << std::endl;
    // a block whose CSR does not fit beside its csell: csell built in blocks of rows (on every rank,
    // so that all ranks hold the same format), where the csell fits
    const int irreps = irrep_count(space);
    const double vectors =
        davidson_vector_bytes(options.roots, static_cast<double>(n) / ranks, irreps > 1 ? irreps : 0) +
        static_cast<double>(n) * sizeof(double) * std::min(16, options.roots);
    const double piece = std::min(8e9, 0.15 * have);
    int needs_blocks = per_rank * 1.45 + vectors > 0.95 * have ? 1 : 0;
    MPI_Allreduce(MPI_IN_PLACE, &needs_blocks, 1, MPI_INT, MPI_MAX, comm);
    const bool csell_allowed = options.format == "auto" || options.format == "csell";
    if (needs_blocks && csell_allowed && per_rank * 0.45 + piece + vectors <= 0.95 * have) {
      const double row_bytes = per_rank / (static_cast<double>(n) / ranks);
      blocked_rows = hamiltonian_block_rows(row_bytes, piece);
      out << "a block's CSR does not fit beside its csell: csell is built in blocks of " << blocked_rows
          << " rows on each rank" << std::endl;
    } else if (per_rank > 0.95 * have || (needs_blocks && csell_allowed)) {
      throw MemoryBudgetError("cispmv ci: rank " + std::to_string(rank) + ": its block of the matrix needs about " +
                              format_bytes(per_rank) + " in CSR (~" + format_bytes(0.45 * per_rank) + " in csell), " +
                              format_bytes(have) + " are available on " + Exec::name() +
                              ". More ranks (GPUs), a lower --level or a smaller space would fit.");
    }
  }

  return blocked_rows;
}

/// Each rank's block built whole (or, overlapped products on several ranks, cut by columns into the part that reads
/// its own x and the rest), in the format asked for or rank 0's automatic choice, and the distributed Davidson on it.
int solve_whole(MPI_Comm comm, const DeterminantSpace& space, const FciDump& dump, const HamiltonianOptions& hopt,
                const CiCommandOptions& options, RankFigures& mine, double& nnz_total, double& build_all,
                nlohmann::json& j, std::ostream& out) {
  const int rank = mpi::rank_of(comm), ranks = mpi::size_of(comm);
  constexpr bool on_host = Kokkos::SpaceAccessibility<Kokkos::HostSpace, Exec::memory_space>::accessible;
  int status = 0;
  MPI_Barrier(comm);
  Kokkos::Timer timer;
  // each rank's block, whole or (overlapped products, more than one rank) cut by columns into the
  // part that reads its own x and the rest: built in those two parts, never whole
  const bool split = ranks > 1 && options.overlap;
  mpi::DistributedHamiltonian<Exec> H;
  mpi::SplitHamiltonian<Exec> S;
  if (split) {
    S = mpi::build_split_hamiltonian(Exec(), comm, dump, space, hopt);
  } else {
    H = mpi::build_distributed_hamiltonian(Exec(), comm, dump, space, hopt);
  }
  Exec().fence();
  mine.build_seconds = timer.seconds();
  MPI_Barrier(comm);
  build_all = timer.seconds();
  const mpi::RowPartition partition = split ? S.partition : H.partition;
  mine.rows = static_cast<double>(partition.local_rows());
  mine.nnz = static_cast<double>(split ? S.block.own.nnz() + S.block.other.nnz() : H.local.nnz());
  MPI_Allreduce(&mine.nnz, &nnz_total, 1, MPI_DOUBLE, MPI_SUM, comm);
  out << "hamiltonian: " << static_cast<std::size_t>(nnz_total) << " nonzeros in " << ranks
      << " row blocks balanced by nonzeros" << (split ? ", each cut into its own columns and the rest" : "")
      << ", built in " << std::fixed << std::setprecision(3) << build_all << " s" << std::defaultfloat << std::endl;
  const auto& chosen_on = split ? S.block.own : H.local;  // what the automatic choice looks at

  // one format for all ranks: rank 0's automatic choice for its block, or the one asked for
  int format_id = 0;
  if (options.format == "auto") {
    if (rank == 0) {
      const FormatChoice choice = choose_format<Exec>(chosen_on, 32, davidson_reads);
      format_id = static_cast<int>(choice.format);
      out << "automatic format choice (rank 0's block" << (split ? ", its own columns" : "")
          << "): " << choice.summary() << "\n";
    }
    MPI_Bcast(&format_id, 1, MPI_INT, 0, comm);
  } else {
    format_id = static_cast<int>(parse_format(options.format));
  }
  const Format format = static_cast<Format>(format_id);
  const auto diagonal = split ? csr_diagonal(Exec(), S.block.own) : csr_diagonal(Exec(), H.local, partition.first());
  std::vector<std::int64_t> needed;
  if (options.exchange == "halo") needed = mpi::columns_read(split ? S.block.other : H.local);

  auto solve = [&](const auto& operand) {
    return solve_distributed(comm, partition, operand, diagonal, needed, space, dump, options, mine, j, out);
  };
  if (format == Format::csr) {
    status = split ? solve(S.block) : solve(H.local);
  } else if (format == Format::csell) {  // encoded on the device, each CSR freed once encoded
    if (split) {
      mpi::SplitBlock<std::decay_t<decltype(to_compressed_sell(S.block.own))>> C;
      C.own = to_compressed_sell(S.block.own);
      S.block.own = {};
      C.other = to_compressed_sell(S.block.other);
      S.block.other = {};
      status = solve(C);
    } else {
      const auto C = to_compressed_sell(H.local);
      H.local = {};
      status = solve(C);
    }
  } else {  // the other formats are converted from host copies
    auto host_copy = [&](auto& A) {
      const HostCsr h = A.template map_views<Kokkos::DefaultHostExecutionSpace>(
          [](const auto& v) { return Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), v); });
      if (!on_host) A = {};
      return h;
    };
    auto params = FormatParams::for_space<Exec>();
    params.table_order = impl::default_table_order<Exec>();  // a Davidson's few dozen products: no ordering pass
    if (split) {
      const HostCsr own = host_copy(S.block.own), other = host_copy(S.block.other);
      auto other_params = params;
      params.boundary = choose_boundary(own).boundary;
      other_params.boundary = choose_boundary(other).boundary;
      status = with_host_format(format, own, params, [&](const auto& own_format) {
        return with_host_format(format, other, other_params, [&](const auto& other_format) {
          using Own = std::decay_t<decltype(own_format)>;
          if constexpr (std::is_same_v<Own, std::decay_t<decltype(other_format)>>) {
            mpi::SplitBlock<std::decay_t<decltype(to_device<Exec>(own_format))>> A;
            A.own = to_device<Exec>(own_format);
            A.other = to_device<Exec>(other_format);
            return solve(A);
          } else {
            return 1;  // never: both parts are converted to the same format
          }
        });
      });
    } else {
      const HostCsr host = host_copy(H.local);
      params.boundary = choose_boundary(host).boundary;
      status = with_host_format(format, host, params,
                                [&](const auto& host_format) { return solve(to_device<Exec>(host_format)); });
    }
  }
  return status;
}

/// The per-rank figures, gathered on rank 0 and printed as a table; their JSON.
nlohmann::json report_ranks(MPI_Comm comm, const RankFigures& mine, std::ostream& out) {
  const int ranks = mpi::size_of(comm);
  const std::vector<double> flat = mine.flat();
  std::vector<double> all(static_cast<std::size_t>(RankFigures::count) * static_cast<std::size_t>(ranks));
  MPI_Gather(flat.data(), RankFigures::count, MPI_DOUBLE, all.data(), RankFigures::count, MPI_DOUBLE, 0, comm);
  nlohmann::json per_rank = nlohmann::json::array();
  out << "  rank       rows      nonzeros    matrix   vectors  host peak  build s  products s  local SpMV s  "
         "exchange s  exposed s  received\n";
  for (int r = 0; r < ranks; ++r) {
    const double* f = all.data() + static_cast<std::size_t>(r) * RankFigures::count;
    out << "  " << std::setw(4) << r << std::setw(11) << static_cast<long long>(f[0]) << std::setw(14)
        << static_cast<long long>(f[1]) << std::setw(10) << format_bytes(f[2]) << std::setw(10) << format_bytes(f[3])
        << std::setw(11) << format_bytes(f[4]) << std::fixed << std::setprecision(3) << std::setw(9) << f[6]
        << std::setw(12) << f[10] << std::setw(14) << f[7] << std::setw(12) << f[8] << std::setw(11)
        << std::max(0.0, f[10] - f[7]) << std::defaultfloat << std::setw(10) << format_bytes(f[9]) << "\n";
    per_rank.push_back({{"rank", r},
                        {"rows", f[0]},
                        {"nonzeros", f[1]},
                        {"matrix_bytes", f[2]},
                        {"vector_bytes", f[3]},
                        {"host_peak_bytes", f[4]},
                        {"device_free_bytes", f[5]},
                        {"build_seconds", f[6]},
                        {"product_seconds", f[10]},
                        {"local_spmv_seconds", f[7]},
                        {"exchange_seconds", f[8]},
                        {"exposed_exchange_seconds", std::max(0.0, f[10] - f[7])},
                        {"received_bytes", f[9]}});
  }
  return per_rank;
}

}  // namespace

int ci_distributed(const CiCommandOptions& options, std::ostream& text_out, MPI_Comm comm) {
  const int rank = mpi::rank_of(comm), ranks = mpi::size_of(comm);
  if (!options.write_mtx.empty()) {
    throw std::invalid_argument("cispmv ci: --write-mtx needs the whole matrix in one process; run without mpirun");
  }
  if (options.format == "factored") {
    throw std::invalid_argument(
        "cispmv ci: --format factored runs in one process (the distributed solver multiplies row blocks of the "
        "assembled matrix); run without mpirun, or with another --format");
  }
  if (options.exchange != "allgather" && options.exchange != "halo") {
    throw std::invalid_argument("cispmv ci: --exchange must be allgather or halo, got '" + options.exchange + "'");
  }
  std::ostringstream discard;
  std::ostream& out = rank == 0 && options.json != "-" ? text_out : static_cast<std::ostream&>(discard);
  Kokkos::Timer total;
  const FciDump dump = read_fcidump(options.fcidump, orbsym_numbering(options));
  out << "cispmv ci: " << options.fcidump << " on " << ranks << " MPI ranks\n";
  const Reference reference = choose_reference(dump, options.restrict_to_isym, reference_request(options));
  out << "reference: " << describe_determinant(reference.determinant, dump.num_orbitals, dump.orbsym) << ", energy "
      << std::fixed << std::setprecision(10) << reference.energy + dump.core_energy << " Eh" << std::defaultfloat
      << "\n";
  const DeterminantSpace space =
      make_determinant_space(dump, options.level, options.restrict_to_isym, reference.determinant);
  if (space.size() == 0 || static_cast<std::size_t>(options.roots) > space.size()) {
    throw std::invalid_argument(options.fcidump + ": the space has " + std::to_string(space.size()) +
                                " determinants for " + std::to_string(options.roots) + " roots");
  }
  out << "  space: " << method_name(space) << ", " << space.size() << " determinants" << std::endl;

  HamiltonianOptions hopt;
  hopt.drop_tolerance = options.drop_tolerance;
  const int blocked_rows = plan_distributed(comm, space, dump, hopt, options, out);
  RankFigures mine;
  nlohmann::json j;
  double nnz_total = 0, build_all = 0;
  const int status =
      blocked_rows > 0
          ? solve_blocked(comm, dump, space, hopt, options, blocked_rows, mine, nnz_total, build_all, j, out)
          : solve_whole(comm, space, dump, hopt, options, mine, nnz_total, build_all, j, out);
  constexpr bool on_host = Kokkos::SpaceAccessibility<Kokkos::HostSpace, Exec::memory_space>::accessible;
  mine.host_peak = host_peak_bytes();
  mine.device_free = on_host ? 0.0 : static_cast<double>(available_bytes<Exec>());
  const nlohmann::json per_rank = report_ranks(comm, mine, out);
  MPI_Barrier(comm);
  const double seconds = total.seconds();
  out << "total " << std::fixed << std::setprecision(3) << seconds << " s" << std::defaultfloat << std::endl;
  if (rank == 0 && !options.json.empty()) {
    j["fcidump"] = options.fcidump;
    j["ranks"] = ranks;
    j["space"] = {{"method", method_name(space)}, {"determinants", space.size()}};
    j["matrix"] = {{"nonzeros", nnz_total}, {"built_on", Exec::name()}, {"build_seconds", build_all}};
    j["per_rank"] = per_rank;
    j["timings_s"] = {{"total", seconds}};
    write_ci_json(j, options.json, text_out);
  }
  return status;
}

}  // namespace cispmv::app
