// The distributed layer (CiSpmv::mpi) on the ranks of MPI_COMM_WORLD, against single-process
// results: ctest runs this executable under mpiexec with 1, 2 and 3 ranks (on the default execution
// space: OpenMP on the host, or one GPU shared by the ranks in a CUDA build).
#include <gtest/gtest.h>
#include <mpi.h>

#include <Kokkos_Core.hpp>

#include "cispmv/ci.hpp"
#include "cispmv/convert.hpp"
#include "cispmv/host_oracle.hpp"
#include "cispmv/mpi.hpp"
#include "cispmv/registry.hpp"
#include "cispmv/solvers/davidson.hpp"
#include "test_utils.hpp"

#include <cmath>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

using namespace cispmv;
using Exec = Kokkos::DefaultExecutionSpace;
using Mem = Exec::memory_space;
const MPI_Comm world = MPI_COMM_WORLD;

/// Rows [first, end) of A, all its columns.
HostCsr row_block(const HostCsr& A, std::int64_t first, std::int64_t end) {
  HostCsr B;
  B.num_rows = static_cast<int>(end - first);
  B.num_cols = A.num_cols;
  const std::size_t begin = A.row_ptr(static_cast<std::size_t>(first)), stop = A.row_ptr(static_cast<std::size_t>(end));
  B.row_ptr = decltype(B.row_ptr)("row_ptr", static_cast<std::size_t>(B.num_rows) + 1);
  B.col_idx = decltype(B.col_idx)("col_idx", stop - begin);
  B.values = decltype(B.values)("values", stop - begin);
  for (int i = 0; i <= B.num_rows; ++i) B.row_ptr(i) = A.row_ptr(static_cast<std::size_t>(first + i)) - begin;
  for (std::size_t k = begin; k < stop; ++k) {
    B.col_idx(k - begin) = A.col_idx(k);
    B.values(k - begin) = A.values(k);
  }
  return B;
}

/// y of this rank's rows against the host oracle's, within 1e-12 of each row's sum of |terms|.
void expect_rows_match(const Kokkos::View<double**, Kokkos::LayoutRight, Kokkos::HostSpace>& got, const HostCsr& A,
                       const Kokkos::View<double**, Kokkos::LayoutRight, Kokkos::HostSpace>& x,
                       const Kokkos::View<double**, Kokkos::LayoutRight, Kokkos::HostSpace>& y0, double alpha,
                       double beta, std::int64_t first) {
  for (std::size_t i = 0; i < got.extent(0); ++i) {
    const std::size_t r = static_cast<std::size_t>(first) + i;
    for (std::size_t j = 0; j < got.extent(1); ++j) {
      double want = beta * y0(r, j), scale = std::abs(beta * y0(r, j));
      for (std::size_t k = A.row_ptr(r); k < A.row_ptr(r + 1); ++k) {
        want += alpha * A.values(k) * x(static_cast<std::size_t>(A.col_idx(k)), j);
        scale += std::abs(alpha * A.values(k) * x(static_cast<std::size_t>(A.col_idx(k)), j));
      }
      ASSERT_LE(std::abs(got(i, j) - want), 1e-12 * (1 + scale)) << "row " << r << ", column " << j;
    }
  }
}

TEST(Mpi, RowPartitionsCoverTheRowsAndBalanceTheirWeights) {
  const int rank = mpi::rank_of(world), ranks = mpi::size_of(world);
  const std::int64_t n = 1001;
  const auto even = mpi::RowPartition::even(n, ranks, rank);
  EXPECT_EQ(even.offsets.front(), 0);
  EXPECT_EQ(even.offsets.back(), n);
  // skewed weights: the first rows are 50x heavier (a CI matrix's low excitation levels are denser)
  auto weight = [](std::int64_t g) -> std::uint64_t { return g < 100 ? 500 : 10 + static_cast<std::uint64_t>(g % 7); };
  std::vector<std::uint64_t> mine;
  for (std::int64_t g = even.first(); g < even.end(); ++g) mine.push_back(weight(g));
  const auto balanced = mpi::balanced_partition(world, even, mine);
  ASSERT_EQ(balanced.ranks(), ranks);
  EXPECT_EQ(balanced.offsets.front(), 0);
  EXPECT_EQ(balanced.offsets.back(), n);
  std::uint64_t total = 0;
  for (std::int64_t g = 0; g < n; ++g) total += weight(g);
  for (int r = 0; r < ranks; ++r) {
    ASSERT_LE(balanced.offsets[static_cast<std::size_t>(r)], balanced.offsets[static_cast<std::size_t>(r) + 1]);
    std::uint64_t block = 0;
    for (std::int64_t g = balanced.offsets[static_cast<std::size_t>(r)];
         g < balanced.offsets[static_cast<std::size_t>(r) + 1]; ++g)
      block += weight(g);
    EXPECT_LE(static_cast<double>(block), static_cast<double>(total) / ranks + 500.0) << "block of rank " << r;
  }
  // every rank computed the same partition
  std::vector<long long> offsets(balanced.offsets.begin(), balanced.offsets.end()), root = offsets;
  MPI_Bcast(root.data(), static_cast<int>(root.size()), MPI_LONG_LONG, 0, world);
  EXPECT_EQ(offsets, root);
  for (std::int64_t g : {std::int64_t{0}, n / 2, n - 1}) {
    const int owner = balanced.owner(g);
    EXPECT_TRUE(g >= balanced.offsets[static_cast<std::size_t>(owner)] &&
                g < balanced.offsets[static_cast<std::size_t>(owner) + 1]);
  }
  EXPECT_THROW(mpi::balanced_partition(world, even, std::vector<std::uint64_t>(mine.size() + 1)),
               std::invalid_argument);
}

/// One product y = 1.5 A x - 0.5 y of k vectors through `plan` (this rank's rows of A), checked
/// against the host oracle; and the plan's bookkeeping.
template <class Plan>
void check_distributed_product(const Plan& plan, const HostCsr& A, const mpi::RowPartition& part, int k) {
  const int ranks = part.ranks();
  using HostBlock = Kokkos::View<double**, Kokkos::LayoutRight, Kokkos::HostSpace>;
  HostBlock x("x", static_cast<std::size_t>(A.num_cols), static_cast<std::size_t>(k)),
      y0("y0", static_cast<std::size_t>(A.num_rows), static_cast<std::size_t>(k));
  for (int j = 0; j < k; ++j) {
    const auto xj = cispmv::test::random_vector<double>(static_cast<std::size_t>(A.num_cols), 5 + 2 * j);
    const auto yj = cispmv::test::random_vector<double>(static_cast<std::size_t>(A.num_rows), 6 + 2 * j);
    for (int i = 0; i < A.num_cols; ++i) x(i, j) = xj(i);
    for (int i = 0; i < A.num_rows; ++i) y0(i, j) = yj(i);
  }
  const auto rows = std::make_pair(static_cast<std::size_t>(part.first()), static_cast<std::size_t>(part.end()));
  HostBlock got("got", static_cast<std::size_t>(part.local_rows()), static_cast<std::size_t>(k));
  if (k == 1) {
    Kokkos::View<double*, Mem> xl("xl", rows.second - rows.first), yl("yl", rows.second - rows.first);
    const auto hx = Kokkos::create_mirror_view(xl);
    const auto hy = Kokkos::create_mirror_view(yl);
    for (std::size_t i = 0; i < hx.extent(0); ++i) {
      hx(i) = x(rows.first + i, 0);
      hy(i) = y0(rows.first + i, 0);
    }
    Kokkos::deep_copy(xl, hx);
    Kokkos::deep_copy(yl, hy);
    plan.apply(1.5, xl, -0.5, yl);
    Kokkos::deep_copy(hy, yl);
    for (std::size_t i = 0; i < hy.extent(0); ++i) got(i, 0) = hy(i);
  } else {
    Kokkos::View<double**, Kokkos::LayoutRight, Mem> xl("xl", rows.second - rows.first, k),
        yl("yl", rows.second - rows.first, k);
    const auto hx = Kokkos::create_mirror_view(xl);
    const auto hy = Kokkos::create_mirror_view(yl);
    for (std::size_t i = 0; i < hx.extent(0); ++i) {
      for (int j = 0; j < k; ++j) {
        hx(i, j) = x(rows.first + i, j);
        hy(i, j) = y0(rows.first + i, j);
      }
    }
    Kokkos::deep_copy(xl, hx);
    Kokkos::deep_copy(yl, hy);
    plan.apply(1.5, xl, -0.5, yl);
    Kokkos::deep_copy(hy, yl);
    Kokkos::deep_copy(got, hy);
  }
  expect_rows_match(got, A, x, y0, 1.5, -0.5, part.first());
  const auto& t = plan.timing();
  EXPECT_EQ(t.products, 1);
  EXPECT_GT(t.seconds, 0.0);
  EXPECT_GE(t.seconds, t.exposed_exchange_seconds());
  if (ranks > 1) {
    EXPECT_GT(t.bytes_received, 0.0);
  }
  if (plan.exchange() == mpi::Exchange::halo) {
    EXPECT_LE(plan.received_per_vector(), A.num_rows - part.local_rows());
  } else {
    EXPECT_EQ(plan.received_per_vector(), A.num_rows - part.local_rows());
  }
}

TEST(Mpi, SplitColumnsCutsABlockIntoItsOwnAndOtherColumns) {
  const HostCsr A = cispmv::test::random_irregular<double>(40, 97, 9, 12);
  const auto s = mpi::split_columns(A, 30, 70);
  ASSERT_EQ(s.own.num_rows, 40);
  ASSERT_EQ(s.own.num_cols, 40);
  ASSERT_EQ(s.other.num_cols, 97);
  EXPECT_EQ(s.own.nnz() + s.other.nnz(), A.nnz());
  for (int r = 0; r < A.num_rows; ++r) {
    std::size_t a = s.own.row_ptr(r), b = s.other.row_ptr(r);
    for (std::size_t k = A.row_ptr(r); k < A.row_ptr(r + 1); ++k) {  // in order, each entry in one part
      if (A.col_idx(k) >= 30 && A.col_idx(k) < 70) {
        ASSERT_LT(a, s.own.row_ptr(r + 1));
        EXPECT_EQ(s.own.col_idx(a), A.col_idx(k) - 30);
        EXPECT_EQ(s.own.values(a++), A.values(k));
      } else {
        ASSERT_LT(b, s.other.row_ptr(r + 1));
        EXPECT_EQ(s.other.col_idx(b), A.col_idx(k));
        EXPECT_EQ(s.other.values(b++), A.values(k));
      }
    }
    EXPECT_EQ(a, s.own.row_ptr(r + 1));
    EXPECT_EQ(b, s.other.row_ptr(r + 1));
  }
  EXPECT_THROW(mpi::split_columns(A, 30, 60), std::invalid_argument);  // not as wide as the block is tall
}

TEST(Mpi, DistributedProductsEqualTheSingleProcessOnesInEveryFormat) {
  const int rank = mpi::rank_of(world), ranks = mpi::size_of(world);
  const HostCsr A = cispmv::test::random_irregular<double>(211, 211, 77, 60);  // the same on every rank
  const auto part = mpi::RowPartition::even(A.num_rows, ranks, rank);
  const HostCsr block = row_block(A, part.first(), part.end());
  const auto split = mpi::split_columns(block, part.first(), part.end());
  const auto needed = mpi::columns_read(block), other_needed = mpi::columns_read(split.other);
  FormatParams params;
  params.boundary = 6;
  for (const FormatInfo& info : format_registry) {
    with_host_format(info.format, block, params, [&](const auto& host_format) {
      const auto local = to_device<Exec>(host_format);
      using Local = std::remove_const_t<decltype(local)>;
      // the same format for the block cut by columns: the overlapped plan
      mpi::SplitBlock<Local> parts;
      with_host_format(info.format, split.own, params, [&](const auto& own) {
        if constexpr (std::is_same_v<std::decay_t<decltype(own)>, std::decay_t<decltype(host_format)>>) {
          parts.own = to_device<Exec>(own);
        }
      });
      with_host_format(info.format, split.other, params, [&](const auto& other) {
        if constexpr (std::is_same_v<std::decay_t<decltype(other)>, std::decay_t<decltype(host_format)>>) {
          parts.other = to_device<Exec>(other);
        }
      });
      for (const mpi::Exchange exchange : {mpi::Exchange::allgather, mpi::Exchange::halo}) {
        for (const int k : {1, 3, 17}) {  // one vector, a block, more than one block of 16
          SCOPED_TRACE(std::string(info.name) + ", " + mpi::exchange_name(exchange) + ", k " + std::to_string(k));
          mpi::DistributedOptions opts;
          opts.exchange = exchange;
          const mpi::DistributedSpmvPlan<Exec, Local> whole(Exec(), world, part, local, opts, needed);
          EXPECT_FALSE(whole.overlaps());
          check_distributed_product(whole, A, part, k);
          const mpi::DistributedSpmvPlan<Exec, Local> overlapped(Exec(), world, part, parts, opts, other_needed);
          EXPECT_EQ(overlapped.overlaps(), ranks > 1);
          check_distributed_product(overlapped, A, part, k);
        }
      }
    });
  }
  // the host-staged exchange, in pieces (what a GPU without GPU-aware MPI does), whole and overlapped
  {
    const auto local = to_device<Exec>(block);
    using Local = std::remove_const_t<decltype(local)>;
    mpi::SplitBlock<Local> parts{to_device<Exec>(split.own), to_device<Exec>(split.other)};
    for (const int pieces : {1, 3, 64}) {
      for (const int k : {1, 17}) {
        SCOPED_TRACE("host staging in " + std::to_string(pieces) + " pieces, k " + std::to_string(k));
        mpi::DistributedOptions opts;
        opts.staging = mpi::Staging::host;
        opts.staging_pieces = pieces;
        const mpi::DistributedSpmvPlan<Exec, Local> whole(Exec(), world, part, local, opts);
        EXPECT_FALSE(whole.exchanges_in_place());
        EXPECT_NE(whole.description().find("host staging in " + std::to_string(pieces) + " pieces"), std::string::npos)
            << whole.description();
        check_distributed_product(whole, A, part, k);
        const mpi::DistributedSpmvPlan<Exec, Local> overlapped(Exec(), world, part, parts, opts);
        check_distributed_product(overlapped, A, part, k);
      }
    }
  }
  // a block that is not the partition's, and a halo without the columns' list, are refused
  const auto local = to_device<Exec>(block);
  const auto wrong = mpi::RowPartition::even(A.num_rows + 1, ranks, rank);
  EXPECT_THROW((mpi::DistributedSpmvPlan<Exec, std::remove_const_t<decltype(local)>>(Exec(), world, wrong, local)),
               std::invalid_argument);
  mpi::DistributedOptions halo;
  halo.exchange = mpi::Exchange::halo;
  std::vector<std::int64_t> unsorted{5, 3};
  EXPECT_THROW((mpi::DistributedSpmvPlan<Exec, std::remove_const_t<decltype(local)>>(Exec(), world, part, local, halo,
                                                                                     unsorted)),
               std::invalid_argument);
}

TEST(Mpi, DistributedHamiltonianBlocksAreTheRowsOfTheWholeMatrix) {
  const int ranks = mpi::size_of(world);
  const auto dump = ci::read_fcidump(std::string(CISPMV_TEST_DATA_DIR) + "/h2o_631g_fc.fcidump");
  const auto reference = ci::choose_reference(dump, true, {});
  const auto space = ci::make_determinant_space(dump, 4, true, reference.determinant);
  const HostCsr whole = ci::build_hamiltonian(dump, space);
  const auto H = mpi::build_distributed_hamiltonian(Exec(), world, dump, space);
  ASSERT_EQ(H.partition.global_rows, static_cast<std::int64_t>(space.size()));
  ASSERT_EQ(H.local.num_rows, H.partition.local_rows());
  ASSERT_EQ(H.local.num_cols, whole.num_cols);
  const HostCsr mine = H.local.template map_views<Kokkos::DefaultHostExecutionSpace>(
      [](const auto& v) { return Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), v); });
  const std::size_t base = whole.row_ptr(static_cast<std::size_t>(H.partition.first()));
  for (int i = 0; i <= mine.num_rows; ++i) {
    ASSERT_EQ(mine.row_ptr(i), whole.row_ptr(static_cast<std::size_t>(H.partition.first() + i)) - base) << i;
  }
  for (std::size_t k = 0; k < mine.nnz(); ++k) {
    ASSERT_EQ(mine.col_idx(k), whole.col_idx(base + k));
    ASSERT_EQ(mine.values(k), whole.values(base + k));
  }
  // blocks balanced by nonzeros: none more than the longest row above the mean
  std::size_t longest = 0;
  for (int r = 0; r < whole.num_rows; ++r) longest = std::max(longest, whole.row_ptr(r + 1) - whole.row_ptr(r));
  EXPECT_LE(static_cast<double>(mine.nnz()), static_cast<double>(whole.nnz()) / ranks + static_cast<double>(longest));
  // the block's diagonal is the whole matrix's
  const auto d =
      Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), ci::csr_diagonal(Exec(), H.local, H.partition.first()));
  const auto d_whole = ci::csr_diagonal(whole);
  for (int i = 0; i < mine.num_rows; ++i) ASSERT_EQ(d(i), d_whole(static_cast<std::size_t>(H.partition.first() + i)));

  // built in two parts (the builder's column window), or whole and then cut: exactly the block cut
  // by columns
  const auto want = mpi::split_columns(mine, H.partition.first(), H.partition.end());
  auto expect_same = [](const auto& got_device, const HostCsr& expected, const char* what) {
    SCOPED_TRACE(what);
    const HostCsr got = got_device.template map_views<Kokkos::DefaultHostExecutionSpace>(
        [](const auto& v) { return Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), v); });
    ASSERT_EQ(got.num_rows, expected.num_rows);
    ASSERT_EQ(got.num_cols, expected.num_cols);
    ASSERT_EQ(got.nnz(), expected.nnz());
    for (int i = 0; i <= got.num_rows; ++i) ASSERT_EQ(got.row_ptr(i), expected.row_ptr(i)) << i;
    for (std::size_t k = 0; k < got.nnz(); ++k) {
      ASSERT_EQ(got.col_idx(k), expected.col_idx(k)) << k;
      ASSERT_EQ(got.values(k), expected.values(k)) << k;
    }
  };
  for (const auto how : {mpi::SplitBuild::in_two_parts, mpi::SplitBuild::whole_then_cut, mpi::SplitBuild::automatic}) {
    const auto S = mpi::build_split_hamiltonian(Exec(), world, dump, space, {}, how);
    ASSERT_EQ(S.partition.offsets, H.partition.offsets);
    expect_same(S.block.own, want.own, "own columns");
    expect_same(S.block.other, want.other, "other columns");
    if (ranks > 1) {
      EXPECT_GT(S.block.other.nnz(), 0u);
    }
  }
  // a window outside the space is refused
  ci::HamiltonianOptions outside;
  outside.columns.keep = ci::HamiltonianOptions::ColumnWindow::Keep::inside;
  outside.columns.first = 0;
  outside.columns.end = static_cast<std::int64_t>(space.size()) + 1;
  EXPECT_THROW(ci::build_hamiltonian_rows(Exec(), dump, space, 0, 1, outside), std::invalid_argument);
}

/// Total energies of a ci_references.txt line.
std::vector<double> reference_energies(const std::string& name) {
  std::ifstream in(std::string(CISPMV_TEST_DATA_DIR) + "/ci_references.txt");
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream s(line);
    std::string n, file, method;
    int level = 0, restrict_to_isym = 0, roots = 0;
    std::size_t dets = 0;
    if (!(s >> n) || n != name) continue;
    s >> file >> level >> restrict_to_isym >> method >> dets >> roots;
    std::vector<double> e(static_cast<std::size_t>(roots));
    for (double& v : e) s >> v;
    return e;
  }
  ADD_FAILURE() << "no reference " << name;
  return {};
}

template <class Local>
std::vector<double> distributed_energies(const mpi::DistributedHamiltonian<Exec>& H, const Local& local,
                                         mpi::Exchange exchange, int roots, double core) {
  mpi::DistributedOptions opts;
  opts.exchange = exchange;
  const auto needed = exchange == mpi::Exchange::halo ? mpi::columns_read(H.local) : std::vector<std::int64_t>{};
  const mpi::DistributedSpmvPlan<Exec, Local> plan(Exec(), world, H.partition, local, opts, needed);
  solvers::DavidsonOptions d;
  d.num_roots = roots;
  d.residual_tolerance = 1e-6;
  const auto result = solvers::davidson(Exec(), plan, ci::csr_diagonal(Exec(), H.local, H.partition.first()), d);
  EXPECT_TRUE(result.converged);
  EXPECT_EQ(result.eigenvectors.extent(0), static_cast<std::size_t>(H.partition.local_rows()));
  std::vector<double> e;
  for (double v : result.eigenvalues) e.push_back(v + core);
  // every rank got the same eigenvalues
  std::vector<double> root = e;
  MPI_Bcast(root.data(), static_cast<int>(root.size()), MPI_DOUBLE, 0, world);
  EXPECT_EQ(e, root);
  return e;
}

/// The same through overlapped products: each rank's block built in its two parts, csell-encoded.
std::vector<double> overlapped_energies(const ci::FciDump& dump, const ci::DeterminantSpace& space, int roots) {
  const auto S = mpi::build_split_hamiltonian(Exec(), world, dump, space);
  using C = std::decay_t<decltype(to_compressed_sell(S.block.own))>;
  mpi::SplitBlock<C> parts{to_compressed_sell(S.block.own), to_compressed_sell(S.block.other)};
  const mpi::DistributedSpmvPlan<Exec, C> plan(Exec(), world, S.partition, parts);
  EXPECT_EQ(plan.overlaps(), mpi::size_of(world) > 1);
  solvers::DavidsonOptions d;
  d.num_roots = roots;
  d.residual_tolerance = 1e-6;
  const auto result = solvers::davidson(Exec(), plan, ci::csr_diagonal(Exec(), S.block.own), d);
  EXPECT_TRUE(result.converged);
  EXPECT_GT(plan.timing().products, 0);
  std::vector<double> e;
  for (double v : result.eigenvalues) e.push_back(v + dump.core_energy);
  return e;
}

TEST(Mpi, DistributedDavidsonGivesPySCFsEnergies) {
  {  // LiH full CI, 5 roots (a degenerate pair among them), CSR blocks, halo exchange; and one process
    const auto dump = ci::read_fcidump(std::string(CISPMV_TEST_DATA_DIR) + "/lih_sto3g.fcidump");
    const auto reference = ci::choose_reference(dump, false, {});
    const auto space = ci::make_determinant_space(dump, 99, false, reference.determinant);
    const auto H = mpi::build_distributed_hamiltonian(Exec(), world, dump, space);
    const auto e = distributed_energies(H, H.local, mpi::Exchange::halo, 5, dump.core_energy);
    const auto want = reference_energies("lih_sto3g_5roots");
    ASSERT_EQ(e.size(), want.size());
    for (std::size_t c = 0; c < e.size(); ++c) EXPECT_NEAR(e[c], want[c], 1e-8) << "root " << c;
    const auto whole = to_device<Exec>(ci::build_hamiltonian(dump, space));
    solvers::DavidsonOptions d;
    d.num_roots = 5;
    const auto single = solvers::davidson(Exec(), whole, ci::csr_diagonal(Exec(), whole), d);
    for (std::size_t c = 0; c < e.size(); ++c) EXPECT_NEAR(e[c], single.eigenvalues[c] + dump.core_energy, 1e-10);
    const auto overlapped = overlapped_energies(dump, space, 5);
    ASSERT_EQ(overlapped.size(), want.size());
    for (std::size_t c = 0; c < e.size(); ++c) EXPECT_NEAR(overlapped[c], want[c], 1e-8) << "root " << c;
  }
  {  // H2O/6-31G(d) CISD, all irreps (6,861 determinants), csell blocks, allgather (the 61,441-determinant
     // frozen-core full CI takes 20 s under the sanitizers; its 5 roots are checked single-process)
    const auto dump = ci::read_fcidump(std::string(CISPMV_TEST_DATA_DIR) + "/h2o_631gd.fcidump");
    const auto reference = ci::choose_reference(dump, false, {});
    const auto space = ci::make_determinant_space(dump, 2, false, reference.determinant);
    const auto H = mpi::build_distributed_hamiltonian(Exec(), world, dump, space);
    const auto C = to_compressed_sell(H.local);
    const auto e = distributed_energies(H, C, mpi::Exchange::allgather, 1, dump.core_energy);
    const auto want = reference_energies("h2o_631gd_cisd");
    ASSERT_EQ(e.size(), want.size());
    for (std::size_t c = 0; c < e.size(); ++c) EXPECT_NEAR(e[c], want[c], 1e-8) << "root " << c;
  }
}

}  // namespace

int main(int argc, char* argv[]) {
  MPI_Init(&argc, &argv);
  int result = 0;
  {
    Kokkos::ScopeGuard kokkos(argc, argv);
    ::testing::InitGoogleTest(&argc, argv);
    result = RUN_ALL_TESTS();
  }
  MPI_Finalize();
  return result;
}
